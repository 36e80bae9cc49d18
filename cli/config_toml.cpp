// [tool.wheelgate] in pyproject.toml, read with toml++ (Debian's libtomlplusplus-dev): the
// only C++ in wheelgate, because no maintained C TOML reader is packaged. It only moves
// strings into the C config. Built as a private module (wheelgate-toml.so) that cli/config.c
// dlopens when a pyproject.toml is read, so that libstdc++ and toml++ are loaded only then.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>
#include <cstring>
#include <new>
#include <string_view>
#include <toml++/toml.h>

#include "config.h"

// The text (len bytes, read by config.c) of the file at path; cfg_add's callers' contract.
extern "C" __attribute__((visibility("default"))) int
wg_toml_read_pyproject_v1(cli_config *cfg, const char *path, const char *text, size_t len,
			  int *found, char *err, size_t errlen,
			  int (*add)(cli_config *, const char *, const char *))
{
	*found = 0;
	try {
		toml::table doc;
		try {
			doc = toml::parse(std::string_view(text, len), std::string_view(path));
		} catch (const toml::parse_error &e) {
			std::snprintf(err, errlen, "%s:%u:%u: %s", path,
				      (unsigned)e.source().begin.line, (unsigned)e.source().begin.column,
				      std::string(e.description()).c_str());
			return -1;
		}
		const toml::table *wg = doc["tool"]["wheelgate"].as_table();
		if (!wg)
			return 0; // a pyproject.toml without our section configures nothing
		*found = 1;
		for (auto &&[k, v] : *wg) {
			std::string key(k.str());
			int rc = 0;
			if (auto s = v.value<std::string>()) {
				rc = add(cfg, key.c_str(), s->c_str());
			} else if (const toml::array *a = v.as_array()) {
				for (auto &&item : *a) {
					auto s2 = item.value<std::string>();
					rc = s2 ? add(cfg, key.c_str(), s2->c_str()) : -1;
					if (rc)
						break;
				}
			} else {
				rc = -1;
			}
			if (rc) {
				std::snprintf(err, errlen, "%s:%u:%u: [tool.wheelgate] '%s': unknown option "
					      "or not a string/list (options: rules, disable, enable, gpu, "
					      "target, fail-on, format)", path, (unsigned)v.source().begin.line,
					      (unsigned)v.source().begin.column, key.c_str());
				return -1;
			}
		}
		return 0;
	} catch (const std::bad_alloc &) {
		std::snprintf(err, errlen, "%s: out of memory", path);
	} catch (...) {
		std::snprintf(err, errlen, "%s: cannot be read as TOML", path);
	}
	*found = 0;
	return -1;
}

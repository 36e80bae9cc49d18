// [tool.wheelgate] in pyproject.toml, read with toml++ (Debian's libtomlplusplus-dev): the
// only C++ in wheelgate, because no maintained C TOML reader is packaged. It only moves
// strings into the C config.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <toml++/toml.h>

#include "config.h"

extern "C" int cfg_read_pyproject(cli_config *cfg, const char *path, int *found, char *err,
				  size_t errlen)
{
	*found = 0;
	{
		std::ifstream probe(path);
		if (!probe.good())
			return 0;
	}
	toml::table doc;
	try {
		doc = toml::parse_file(path);
	} catch (const toml::parse_error &e) {
		std::snprintf(err, errlen, "%s:%u:%u: %s", path, (unsigned)e.source().begin.line,
			      (unsigned)e.source().begin.column, std::string(e.description()).c_str());
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
			rc = cfg_add(cfg, key.c_str(), s->c_str());
		} else if (const toml::array *a = v.as_array()) {
			for (auto &&item : *a) {
				auto s2 = item.value<std::string>();
				rc = s2 ? cfg_add(cfg, key.c_str(), s2->c_str()) : -1;
				if (rc)
					break;
			}
		} else {
			rc = -1;
		}
		if (rc) {
			std::snprintf(err, errlen, "%s:%u:%u: [tool.wheelgate] '%s': unknown option or "
				      "not a string/list (options: rules, disable, enable, gpu, target, "
				      "fail-on, format)", path, (unsigned)v.source().begin.line,
				      (unsigned)v.source().begin.column, key.c_str());
			return -1;
		}
	}
	cfg->source = strdup(path);
	return 0;
}

// [tool.wheelgate] in pyproject.toml, read with toml++ (Debian's libtomlplusplus-dev): the
// only C++ in wheelgate, because no maintained C TOML reader is packaged. It only moves
// strings into the C config. Built as a private module (wheelgate-toml.so) that cli/config.c
// dlopens when a pyproject.toml is read, so that libstdc++ and toml++ are loaded only then.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <toml++/toml.h>

#include "config.h"
#include "lock.h"

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
			if (key == "ignore") {
				// [[tool.wheelgate.ignore]] path = GLOB, rules = [RULE...]: one string
				// "GLOB\nRULE,RULE" per entry, as cfg_add takes it.
				const toml::array *a = v.as_array();
				rc = a ? 0 : -1;
				for (size_t i = 0; a && i < a->size() && !rc; i++) {
					const toml::table *t = a->get(i)->as_table();
					auto glob = t ? (*t)["path"].value<std::string>() : std::nullopt;
					std::string entry = glob ? *glob + "\n" : std::string();
					size_t n = 0;
					if (auto one = t ? (*t)["rules"].value<std::string>() : std::nullopt) {
						entry += *one;
						n = 1;
					} else if (const toml::array *r = t ? (*t)["rules"].as_array() : nullptr) {
						for (auto &&item : *r) {
							auto s2 = item.value<std::string>();
							if (!s2) {
								n = 0;
								break;
							}
							entry += (n++ ? "," : "") + *s2;
						}
					}
					rc = glob && n && t->size() == 2 ? add(cfg, "ignore", entry.c_str()) : -1;
				}
			} else if (auto s = v.value<std::string>()) {
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
					      "target, fail-on, format, profile, baseline; ignore: "
					      "[[tool.wheelgate.ignore]] with path and rules)", path, (unsigned)v.source().begin.line,
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

// A PEP 751 lock file (pylock.toml): lock-version checked (1.x), then each [[packages]] entry
// and its wheels handed to sink as plain C strings. Nothing is fetched or chosen here.
static const char *str_or_null(const toml::node_view<const toml::node> &v, std::string &keep)
{
	if (auto s = v.value<std::string>()) {
		keep = *s;
		return keep.c_str();
	}
	return nullptr;
}

extern "C" __attribute__((visibility("default"))) int
wg_toml_read_lock_v1(const char *path, const char *text, size_t len, const lock_sink *sink,
		     char *err, size_t errlen)
{
	try {
		toml::table doc;
		try {
			doc = toml::parse(std::string_view(text, len), std::string_view(path));
		} catch (const toml::parse_error &e) {
			std::snprintf(err, errlen, "%s:%u:%u: not TOML: %s", path,
				      (unsigned)e.source().begin.line, (unsigned)e.source().begin.column,
				      std::string(e.description()).c_str());
			return -1;
		}
		const toml::node *lv = doc.get("lock-version");
		auto ver = lv ? lv->value<std::string>() : std::nullopt;
		if (!ver) {
			std::snprintf(err, errlen, "%s: no lock-version string: not a PEP 751 lock file",
				      path);
			return -1;
		}
		if (ver->rfind("1.", 0) != 0 && *ver != "1") {
			std::snprintf(err, errlen, "%s:%u: lock-version \"%s\": only lock-version 1.x "
				      "(PEP 751) is read", path, (unsigned)lv->source().begin.line,
				      ver->c_str());
			return -1;
		}
		const toml::node *pk = doc.get("packages");
		const toml::array *pkgs = pk ? pk->as_array() : nullptr;
		if (pk && !pkgs) {
			std::snprintf(err, errlen, "%s:%u: packages is not an array of tables", path,
				      (unsigned)pk->source().begin.line);
			return -1;
		}
		if (!pkgs)
			return 0;
		for (auto &&item : *pkgs) {
			const toml::table *p = item.as_table();
			unsigned line = (unsigned)item.source().begin.line;
			std::string name, version, marker;
			const char *n = p ? str_or_null((*p)["name"], name) : nullptr;
			if (!n) {
				std::snprintf(err, errlen, "%s:%u: a [[packages]] entry without a name",
					      path, line);
				return -1;
			}
			const char *source = nullptr;
			for (const char *k : {"sdist", "vcs", "directory", "archive"})
				if (!source && p->contains(k))
					source = k;
			if (sink->package(sink->ctx, n, str_or_null((*p)["version"], version),
					  str_or_null((*p)["marker"], marker), source, line) < 0) {
				std::snprintf(err, errlen, "%s: out of memory", path);
				return -1;
			}
			const toml::node *wn = p->get("wheels");
			if (!wn)
				continue;
			const toml::array *wheels = wn->as_array();
			if (!wheels) {
				std::snprintf(err, errlen, "%s:%u: %s: wheels is not an array", path,
					      (unsigned)wn->source().begin.line, n);
				return -1;
			}
			for (auto &&w : *wheels) {
				const toml::table *wt = w.as_table();
				unsigned wl = (unsigned)w.source().begin.line;
				if (!wt) {
					std::snprintf(err, errlen, "%s:%u: %s: a wheel that is not a table",
						      path, wl, n);
					return -1;
				}
				std::string wname, url, wpath, sha;
				long long size = -1;
				if (auto sz = (*wt)["size"].value<int64_t>())
					size = *sz;
				if (sink->wheel(sink->ctx, str_or_null((*wt)["name"], wname),
						str_or_null((*wt)["url"], url),
						str_or_null((*wt)["path"], wpath), size,
						str_or_null((*wt)["hashes"]["sha256"], sha), wl) < 0) {
					std::snprintf(err, errlen, "%s: out of memory", path);
					return -1;
				}
			}
		}
		return 0;
	} catch (const std::bad_alloc &) {
		std::snprintf(err, errlen, "%s: out of memory", path);
	} catch (...) {
		std::snprintf(err, errlen, "%s: cannot be read as TOML", path);
	}
	return -1;
}

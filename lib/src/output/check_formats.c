/*
 * Reports as documents: JSON ("wheelgate.check/1", docs/check-json.md and
 * docs/schema/check.schema.json), SARIF 2.1.0 (as GitHub code scanning reads it) and GitHub
 * workflow commands (docs/ci.md), for
 * several inputs at once, some of which may not have been readable.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/output.h"

/* Every string from an input goes through wg_json_str: invalid UTF-8 is escaped, never the
 * finding dropped (a count would then disagree with the list). */
static json_t *nstr(const char *s)
{
	return s ? wg_json_str(s) : json_null();
}

static json_t *not_applied_json(const wg_report *r)
{
	json_t *a = json_array();
	for (size_t i = 0; a && r && i < r->not_applied.len; i++) {
		const wg_not_applied *na = wg_vec_at(&r->not_applied, i);
		json_t *lacks = json_array();
		char keys[128];
		snprintf(keys, sizeof(keys), "%s", na->lacks);
		for (char *save = NULL, *k = strtok_r(keys, ",", &save); lacks && k;
		     k = strtok_r(NULL, ",", &save))
			json_array_append_new(lacks, json_string(k));
		json_array_append_new(a, json_pack("{s:s, s:o, s:s}", "rule", na->rule, "lacks",
						   lacks ? lacks : json_array(), "message",
						   na->message));
	}
	return a;
}

/* The findings counted past a bound (wg_options.max_rule_findings, max_findings): one item
 * per rule, so that a count never disagrees with what the list stands for. */
static json_t *more_json(const wg_report *r)
{
	json_t *a = json_array();
	for (size_t i = 0; a && r && i < r->more.len; i++) {
		const wg_more *m = wg_vec_at(&r->more, i);
		json_array_append_new(a, json_pack("{s:s, s:I, s:{s:I, s:I, s:I}}", "rule", m->rule,
			"count", (json_int_t)m->count, "counts", "error", (json_int_t)m->severity[2],
			"warning", (json_int_t)m->severity[1], "info", (json_int_t)m->severity[0]));
	}
	return a;
}

/* Adds the counted findings of r to c[3] (by severity). */
static void add_more(size_t c[3], const wg_report *r)
{
	for (size_t i = 0; r && i < r->more.len; i++) {
		const wg_more *m = wg_vec_at(&r->more, i);
		for (int s = 0; s < 3; s++)
			c[s] += m->severity[s];
	}
}

static json_t *target_json(const wg_target *t)
{
	char buf[32];
	json_t *gpus = json_array();
	for (size_t i = 0; t && i < t->ngpus; i++) {
		snprintf(buf, sizeof(buf), "%u.%u", t->gpus[i].cc_major, t->gpus[i].cc_minor);
		json_array_append_new(gpus, json_pack("{s:o, s:s}", "name", nstr(t->gpus[i].name),
						      "cc", buf));
	}
	json_t *j = json_pack("{s:o, s:o, s:o, s:o, s:o}", "python", json_null(), "torch",
			      json_null(), "cxx11abi", json_null(), "cuda", json_null(), "gpus", gpus);
	if (!j)
		return j;
	/* The C/C++ runtime the system rules judged against, and where it comes from. */
	char sys[256];
	const char *source = NULL;
	wg_target_system(t, sys, sizeof(sys), &source);
	json_t *vers = json_array();
	for (char *save = NULL, *tok = strtok_r(sys, " ", &save); vers && tok;
	     tok = strtok_r(NULL, " ", &save))
		json_array_append_new(vers, json_string(tok));
	json_object_set_new(j, "system", json_pack("{s:s, s:o}", "source", source, "versions",
						   vers ? vers : json_array()));
	if (!t)
		return j;
	if (t->python_major) {
		snprintf(buf, sizeof(buf), "%u.%u", t->python_major, t->python_minor);
		json_object_set_new(j, "python", json_string(buf));
	}
	if (t->torch[0])
		json_object_set_new(j, "torch", json_string(t->torch));
	if (t->cxx11abi >= 0)
		json_object_set_new(j, "cxx11abi", json_boolean(t->cxx11abi));
	if (t->cuda_major) {
		snprintf(buf, sizeof(buf), "%u.%u", t->cuda_major, t->cuda_minor);
		json_object_set_new(j, "cuda", json_string(buf));
	}
	/* --gpu auto: what it found on this machine, and why nothing when nothing. */
	if (t->gpu_auto)
		json_object_set_new(j, "gpu_auto", json_pack("{s:I, s:o}", "found",
			(json_int_t)t->gpu_auto_found, "none", t->gpu_auto_none[0]
				? json_string(t->gpu_auto_none) : json_null()));
	return j;
}

json_t *wg_check_json(const wg_target *target, const char *const *paths,
		      const wg_report *const *reports, const char *const *errors, size_t n,
		      wg_severity fail_on)
{
	json_t *inputs = json_array();
	size_t passed = 0, failed = 0, unreadable = 0, counts[3] = {0};
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			unreadable++;
			json_array_append_new(inputs, json_pack("{s:o, s:s, s:o, s:{s:i, s:i, s:i}, s:[], s:[]}",
				"path", nstr(paths[i]), "verdict", "error", "error",
				nstr(errors && errors[i] ? errors[i] : "unreadable"), "counts", "error", 0,
				"warning", 0, "info", 0, "findings", "not_applied"));
			continue;
		}
		json_t *fs = json_array();
		size_t c[3] = {0};
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			c[f->severity]++;
			json_t *line = f->line ? json_integer(f->line) : json_null();
			json_array_append_new(fs, json_pack(
				"{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "rule", f->rule,
				"severity", wg_severity_name(f->severity), "title", nstr(f->title),
				"message", nstr(f->message), "fix", nstr(f->fix), "member", nstr(f->member),
				"symbol",
				nstr(f->symbol), "file", nstr(f->file), "line", line));
		}
		add_more(c, r);
		bool fails = false;
		for (int s = fail_on; s <= WG_SEV_ERROR; s++)
			fails = fails || c[s];
		if (fails)
			failed++;
		else
			passed++;
		for (int s = 0; s < 3; s++)
			counts[s] += c[s];
		json_array_append_new(inputs, json_pack("{s:o, s:s, s:o, s:{s:I, s:I, s:I}, s:o, s:o, s:o}",
			"path", nstr(paths[i]), "verdict", fails ? "fail" : "pass", "error", json_null(),
			"counts", "error", (json_int_t)c[2], "warning", (json_int_t)c[1], "info",
			(json_int_t)c[0], "findings", fs, "more", more_json(r), "not_applied",
			not_applied_json(r)));
	}
	return json_pack("{s:s, s:s, s:s, s:o, s:s, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
			 "schema", "wheelgate.check/1", "wheelgate_version", wg_version_string(),
			 "profile", wg_profile_name(wg_target_profile(target)),
			 "target", target_json(target), "fail_on", wg_severity_name(fail_on),
			 "inputs", inputs, "summary", "inputs", (json_int_t)n, "passed",
			 (json_int_t)passed, "failed", (json_int_t)failed, "unreadable",
			 (json_int_t)unreadable, "errors", (json_int_t)counts[2], "warnings",
			 (json_int_t)counts[1], "infos", (json_int_t)counts[0]);
}

/* A relative URI reference for a path: unreserved characters and '/' as they are. */
static char *uri_of(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	char *out = malloc(3 * n + 1), *o = out;
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/+!$&'()*,;=:@", *p)) {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}

static char *summary(const wg_target *target, const wg_report *const *reports, size_t n,
		     wg_severity fail_on);

static const char *sarif_level(wg_severity s)
{
	return s == WG_SEV_ERROR ? "error" : s == WG_SEV_WARNING ? "warning" : "note";
}

#ifndef WG_DOCS_URL
#define WG_DOCS_URL "https://github.com/wheelgate/wheelgate/blob/main/docs"
#endif

/* A rule's template as documentation: "{module}" becomes "<module>", "{{" a brace; what a
 * finding fills in is named, never shown as a raw placeholder. */
static void describe(wg_buf *b, const char *tpl)
{
	for (const char *p = tpl ? tpl : ""; *p;) {
		const char *e = p[0] == '{' && p[1] != '{' ? strchr(p, '}') : NULL;
		if (p[0] == '{' && p[1] == '{') {
			wg_buf_append(b, "{", 1);
			p += 2;
		} else if (e) {
			wg_buf_append(b, "<", 1);
			wg_buf_append(b, p + 1, (size_t)(e - p - 1));
			wg_buf_append(b, ">", 1);
			p = e + 1;
		} else {
			wg_buf_append(b, p, 1);
			p++;
		}
	}
	if (!b->s)
		wg_buf_append(b, "", 0);
}

/* "WG-ABI-001" -> "abi", the rule's family (a tag). */
static void rule_family(char *out, size_t n, const char *id)
{
	const char *a = strchr(id, '-'), *z = a ? strchr(a + 1, '-') : NULL;
	size_t len = a && z ? (size_t)(z - a - 1) : 0, i = 0;
	for (; i < len && i + 1 < n; i++)
		out[i] = (char)((a[1 + i] >= 'A' && a[1 + i] <= 'Z') ? a[1 + i] + 32 : a[1 + i]);
	out[n ? i : 0] = '\0';
}

/* GitHub ranks the alerts of rules tagged `security` by security-severity (> 9 critical,
 * 7-8.9 high, 4-6.9 medium, below low): an error high, a warning medium, an info low. Only
 * the rules about integrity and tampering carry it (`security: true` in their file); a
 * correctness rule (a tag that does not match, a library missing) is no security alert. */
static const char *security_severity(wg_severity s)
{
	return s == WG_SEV_ERROR ? "8.0" : s == WG_SEV_WARNING ? "5.0" : "2.0";
}

static json_t *sarif_rule(const wg_rule *r, wg_profile profile)
{
	wg_severity sev = r->sev[profile] >= 0 ? (wg_severity)r->sev[profile] : r->severity;
	/* docs/rules.md documents the shipped rules; a rule of the user's files has no page */
	bool shipped = r->source && !strncmp(r->source, "rules/default/", 14);
	char family[32], uri[512];
	rule_family(family, sizeof(family), r->id);
	size_t u = (size_t)snprintf(uri, sizeof(uri), "%s/rules.md#", WG_DOCS_URL);
	for (const char *c = r->id; *c && u + 1 < sizeof(uri); c++)
		uri[u++] = (char)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c);
	uri[u < sizeof(uri) ? u : sizeof(uri) - 1] = '\0';
	wg_buf title = {0}, msg = {0}, fix = {0}, help = {0}, md = {0};
	describe(&title, r->title);
	describe(&msg, r->message);
	describe(&fix, r->fix);
	const char *parts[] = {msg.s, "\n\nFix: ", fix.s};
	for (size_t i = 0; i < 3; i++)
		wg_buf_append(&help, parts[i] ? parts[i] : "", parts[i] ? strlen(parts[i]) : 0);
	const char *mparts[] = {"**", title.s, "** (", r->id, ", `", r->check, "`)\n\n", msg.s,
				"\n\n**Fix:** ", fix.s, "\n\n[", r->id, " in docs/rules.md](", uri,
				")"};
	size_t nmd = shipped ? WG_ARRAY_LEN(mparts) : 10;
	for (size_t i = 0; i < nmd; i++)
		wg_buf_append(&md, mparts[i] ? mparts[i] : "", mparts[i] ? strlen(mparts[i]) : 0);
	json_t *tags = json_array();
	if (family[0])
		json_array_append_new(tags, json_string(family));
	json_array_append_new(tags, json_string(r->check));
	if (r->security)
		json_array_append_new(tags, json_string("security"));
	json_t *j = json_pack("{s:s, s:s, s:{s:o}, s:{s:o}, s:{s:o, s:o}, s:{s:s, s:b}, "
			      "s:{s:o, s:s, s:s}}",
			      "id", r->id, "name", r->check, "shortDescription", "text",
			      nstr(title.s), "fullDescription", "text", nstr(msg.s), "help", "text",
			      nstr(help.s), "markdown", nstr(md.s), "defaultConfiguration", "level",
			      sarif_level(sev), "enabled", r->enabled && r->sev[profile] >= 0,
			      "properties", "tags", tags, "precision", "high", "source",
			      r->source ? r->source : "");
	if (j && shipped)
		json_object_set_new(j, "helpUri", json_string(uri));
	if (j && r->security)
		json_object_set_new(json_object_get(j, "properties"), "security-severity",
				    json_string(security_severity(sev)));
	wg_buf_free(&title);
	wg_buf_free(&msg);
	wg_buf_free(&fix);
	wg_buf_free(&help);
	wg_buf_free(&md);
	return j;
}

/* Where the URIs start. Every artifactLocation is a relative reference with a uriBaseId
 * declared in originalUriBaseIds (SARIF 2.1.0 3.4.4, 3.14.14): "%SRCROOT%", the directory
 * wheelgate ran in (GitHub resolves it to the checkout), or for an input outside it a base
 * of its own directory ("INPUTDIR1", ...). Paths are made canonical first (3.10.2: no "."
 * or ".." segments, symbolic links of the directories resolved). Every artifact a result
 * names is listed in run.artifacts; a member of a wheel is a nested artifact there
 * (parentIndex: the wheel, its uri the member's path), named by index. */
#define SRCROOT "%SRCROOT%"

typedef struct {
	char cwd[4096];
	size_t cwdlen;
	json_t *bases;     /* originalUriBaseIds */
	json_t *dirs;      /* canonical directory -> its base id */
	json_t *artifacts; /* run.artifacts */
	json_t *index;     /* "parent\nbase\nuri" -> index into artifacts */
} sarif_base;

static void base_init(sarif_base *b)
{
	if (!getcwd(b->cwd, sizeof(b->cwd)) || b->cwd[0] != '/')
		b->cwd[0] = '\0';
	b->cwdlen = strlen(b->cwd);
	b->bases = json_object();
	b->dirs = json_object();
	b->artifacts = json_array();
	b->index = json_object();
}

static void base_free(sarif_base *b)
{
	json_decref(b->bases);
	json_decref(b->dirs);
	json_decref(b->artifacts);
	json_decref(b->index);
}

/* "file://" and the URI of an absolute path, with a trailing '/' when dir. */
static char *file_uri(const char *abs, bool dir)
{
	char *uri = uri_of(abs);
	wg_buf u = {0};
	wg_buf_append(&u, "file://", 7);
	wg_buf_append(&u, uri ? uri : "", uri ? strlen(uri) : 0);
	if (dir && (!u.s || u.s[u.len - 1] != '/'))
		wg_buf_append(&u, "/", 1);
	free(uri);
	return u.s;
}

/* The absolute path of path without ".", ".." or empty segments, read as text (a path that
 * does not exist: an unreadable input, a name given to stdin). */
static char *lexical(const char *cwd, const char *path)
{
	wg_buf in = {0}, out = {0};
	if (path[0] != '/') {
		wg_buf_append(&in, cwd, strlen(cwd));
		wg_buf_append(&in, "/", 1);
	}
	wg_buf_append(&in, path, strlen(path));
	if (!in.s)
		return NULL;
	for (char *save = NULL, *seg = strtok_r(in.s, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (!strcmp(seg, "."))
			continue;
		if (!strcmp(seg, "..")) {
			char *slash = out.s ? strrchr(out.s, '/') : NULL;
			if (slash) {
				out.len = (size_t)(slash - out.s);
				out.s[out.len] = '\0';
			}
			continue;
		}
		wg_buf_append(&out, "/", 1);
		wg_buf_append(&out, seg, strlen(seg));
	}
	wg_buf_free(&in);
	if (!out.s || !out.len) {
		wg_buf_free(&out);
		return strdup("/");
	}
	return out.s;
}

/* The canonical absolute path of path: its directory resolved (symbolic links too) where it
 * exists, its last component as given (the file the user named). NULL when out of memory. */
static char *canonical(const sarif_base *b, const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	char *p = strndup(path, n);
	if (!p)
		return NULL;
	char *slash = strrchr(p, '/'), *name = slash ? slash + 1 : p;
	char *dir = NULL, *out = NULL;
	if (strcmp(name, ".") && strcmp(name, "..") && *name) {
		if (slash == p)
			dir = realpath("/", NULL);
		else if (slash) {
			*slash = '\0';
			dir = realpath(p, NULL);
		} else {
			dir = realpath(".", NULL);
		}
		if (dir) {
			size_t m = strlen(dir) + strlen(name) + 2;
			if ((out = malloc(m)))
				snprintf(out, m, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
			free(dir);
			free(p);
			return out;
		}
		if (slash)
			*slash = '/';
	} else if ((out = realpath(p, NULL))) {
		free(p);
		return out;
	}
	out = lexical(b->cwd[0] ? b->cwd : "/", p);
	free(p);
	return out;
}

/* The artifact at path (a top-level one, parent -1) or at the member path inside artifact
 * parent: its index in run.artifacts, added with role when new; -1 when out of memory. */
static long artifact(sarif_base *b, const char *path, long parent, const char *role)
{
	json_t *loc = NULL;
	if (parent >= 0) {
		/* a member's path as the archive names it, never a leading '/' (3.4.3) */
		while (*path == '/')
			path++;
		char *uri = uri_of(path);
		loc = json_pack("{s:o}", "uri", nstr(uri ? uri : ""));
		free(uri);
	} else {
		char *abs = canonical(b, path), *rel = NULL, *uri = NULL;
		const char *id = SRCROOT;
		if (!abs)
			return -1;
		char *slash = strrchr(abs, '/');
		bool inside = b->cwdlen && !strncmp(abs, b->cwd, b->cwdlen) &&
			      (abs[b->cwdlen] == '/' || b->cwdlen == 1);
		if (!strcmp(path, "-") || !*path) {
			rel = strdup(path);
		} else if (!b->cwd[0] && path[0] != '/') {
			/* relative to a working directory that cannot be named: as given, made
			 * canonical as text (%SRCROOT% is declared without a uri) */
			char *t = lexical("", path);
			rel = t ? strdup(t + 1) : NULL;
			free(t);
		} else if (inside) {
			rel = strdup(abs + b->cwdlen + (b->cwdlen > 1));
		} else {
			/* outside the working directory: a base for the input's own directory */
			*slash = '\0';
			const char *dir = abs[0] ? abs : "/";
			id = json_string_value(json_object_get(b->dirs, dir));
			if (!id) {
				char name[32];
				snprintf(name, sizeof(name), "INPUTDIR%zu", json_object_size(b->dirs) + 1);
				char *du = file_uri(dir, true);
				json_object_set_new(b->bases, name, json_pack("{s:o, s:{s:s}}", "uri",
					nstr(du ? du : "file:///"), "description", "text",
					"the directory of an input outside the working directory"));
				free(du);
				json_object_set_new(b->dirs, dir, json_string(name));
				id = json_string_value(json_object_get(b->dirs, dir));
			}
			rel = strdup(slash + 1);
		}
		uri = rel ? uri_of(rel) : NULL;
		loc = json_pack("{s:o, s:s}", "uri", nstr(uri ? uri : ""), "uriBaseId", id ? id : SRCROOT);
		free(uri);
		free(rel);
		free(abs);
	}
	if (!loc)
		return -1;
	wg_buf key = {0};
	char num[32];
	snprintf(num, sizeof(num), "%ld\n", parent);
	const char *id = json_string_value(json_object_get(loc, "uriBaseId"));
	const char *uri = json_string_value(json_object_get(loc, "uri"));
	wg_buf_append(&key, num, strlen(num));
	wg_buf_append(&key, id ? id : "", id ? strlen(id) : 0);
	wg_buf_append(&key, "\n", 1);
	wg_buf_append(&key, uri ? uri : "", uri ? strlen(uri) : 0);
	json_t *known = key.s ? json_object_get(b->index, key.s) : NULL;
	long idx = known ? (long)json_integer_value(known) : -1;
	if (!known && key.s) {
		idx = (long)json_array_size(b->artifacts);
		json_t *a = json_pack("{s:O, s:[s]}", "location", loc, "roles", role);
		if (a && parent >= 0)
			json_object_set_new(a, "parentIndex", json_integer(parent));
		if (!a || json_array_append_new(b->artifacts, a) ||
		    json_object_set_new(b->index, key.s, json_integer(idx)))
			idx = -1;
	}
	json_decref(loc);
	wg_buf_free(&key);
	return idx;
}

/* An artifactLocation naming artifact idx: its uri (and uriBaseId) and its index. */
static json_t *artifact_ref(const sarif_base *b, long idx)
{
	json_t *a = idx >= 0 ? json_array_get(b->artifacts, (size_t)idx) : NULL;
	json_t *loc = a ? json_deep_copy(json_object_get(a, "location")) : NULL;
	if (!loc)
		return json_pack("{s:s}", "uri", "");
	json_object_set_new(loc, "index", json_integer(idx));
	return loc;
}

/* A finding's file as a file on disk: in an input directory, or beside an installed
 * distribution's .dist-info (its files are relative to the site directory); never a member
 * inside an archive. NULL when there is none. */
static char *disk_file(const char *path, const wg_finding *f)
{
	struct stat st;
	if (!f || !f->file || !f->line || f->file[0] == '/' || stat(path, &st) || !S_ISDIR(st.st_mode))
		return NULL;
	size_t plen = strlen(path), n = plen + strlen(f->file) + 3;
	while (plen > 1 && path[plen - 1] == '/')
		plen--;
	char *p = malloc(n);
	if (!p)
		return NULL;
	snprintf(p, n, "%.*s/%s", (int)plen, path, f->file);
	if (!stat(p, &st) && S_ISREG(st.st_mode))
		return p;
	const char *slash = memrchr(path, '/', plen);
	if (plen > 10 && !strncmp(path + plen - 10, ".dist-info", 10)) {
		if (slash)
			snprintf(p, n, "%.*s/%s", (int)(slash - path), path, f->file);
		else
			snprintf(p, n, "%s", f->file);
		if (!stat(p, &st) && S_ISREG(st.st_mode))
			return p;
	}
	free(p);
	return NULL;
}

/* A result's location: a file on disk (an installed distribution's) with its line; a
 * member of an archive with a line (a Python import) as the nested artifact with that line;
 * else the input. *where: 0 the input, 1 a file on disk, 2 a member (its line in a region). */
static json_t *sarif_location(sarif_base *b, const char *path, const wg_finding *f, int *where)
{
	char *file = disk_file(path, f);
	struct stat st;
	bool member = !file && f && f->file && f->line && f->file[0] &&
		      (stat(path, &st) || !S_ISDIR(st.st_mode));
	long idx = file ? artifact(b, file, -1, "resultFile") : artifact(b, path, -1, "analysisTarget");
	if (member)
		idx = idx >= 0 ? artifact(b, f->file, idx, "resultFile") : -1;
	json_t *phys = json_pack("{s:o}", "artifactLocation", artifact_ref(b, idx));
	if ((file || member) && phys)
		json_object_set_new(phys, "region", json_pack("{s:i}", "startLine", (int)f->line));
	if (where)
		*where = file ? 1 : member ? 2 : 0;
	free(file);
	json_t *loc = json_pack("{s:o}", "physicalLocation", phys);
	if (f && (f->member || f->symbol)) {
		wg_buf fq = {0};
		const char *m = f->member ? f->member : "", *y = f->symbol ? f->symbol : "";
		if (wg_buf_append(&fq, m, strlen(m)) == WG_OK &&
		    wg_buf_append(&fq, "!", f->member && f->symbol ? 1 : 0) == WG_OK)
			wg_buf_append(&fq, y, strlen(y));
		json_object_set_new(loc, "logicalLocations",
				    json_pack("[{s:o, s:s}]", "fullyQualifiedName",
					      nstr(fq.s ? fq.s : ""), "kind",
					      f->symbol ? "function" : "module"));
		wg_buf_free(&fq);
	}
	return loc;
}

/* The input's name as a fingerprint sees it: the basename, and of a wheel its name and tags
 * without the version ("pkg-1.2+cu12-cp312-cp312-linux_x86_64.whl" is
 * "pkg-cp312-cp312-linux_x86_64.whl"): an alert stays the same alert across releases and
 * wherever the wheel was built. */
static void fp_input(wg_buf *b, const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	const char *dash = strchr(base, '-');
	if (n > 4 && !strcmp(base + n - 4, ".whl") && dash) {
		/* name-version[-build]-py-abi-plat.whl: keep the name and the last three parts */
		const char *p = base + n, *tags = NULL;
		for (int k = 0; k < 3 && p > dash; k++) {
			do
				p--;
			while (p > dash && *p != '-');
		}
		tags = p;
		if (tags > dash) {
			wg_buf_append(b, base, (size_t)(dash - base));
			wg_buf_append(b, tags, strlen(tags));
			return;
		}
	}
	wg_buf_append(b, base, n);
}

/* A member path without the version its .dist-info or .data directory carries. */
static void fp_member(wg_buf *b, const char *m)
{
	const char *slash = strchr(m, '/'), *dash = strchr(m, '-');
	size_t first = slash ? (size_t)(slash - m) : strlen(m);
	bool versioned = dash && (size_t)(dash - m) < first &&
			 ((first > 10 && !strncmp(m + first - 10, ".dist-info", 10)) ||
			  (first > 5 && !strncmp(m + first - 5, ".data", 5)));
	if (versioned) {
		wg_buf_append(b, m, (size_t)(dash - m));
		const char *dot = m + first - (strncmp(m + first - 5, ".data", 5) ? 10 : 5);
		wg_buf_append(b, dot, strlen(dot));
		return;
	}
	wg_buf_append(b, m, strlen(m));
}

/* partialFingerprints["wheelgate/v1"]: sha256 of the rule id, the input's name, the member,
 * the symbol and the file (never the message, whose sizes and counts change), the first 16
 * bytes in hex, then ":" and which occurrence of that key it is (as GitHub's own hashes). */
static json_t *fingerprint(json_t *seen, const char *path, const wg_finding *f)
{
	wg_buf key = {0};
	const char *parts[] = {f->rule, f->symbol, f->file};
	wg_buf_append(&key, parts[0], strlen(parts[0]) + 1);
	fp_input(&key, path);
	wg_buf_append(&key, "\n", 1);
	if (f->member)
		fp_member(&key, f->member);
	wg_buf_append(&key, "\n", 1);
	for (size_t i = 1; i < 3; i++) {
		wg_buf_append(&key, parts[i] ? parts[i] : "", parts[i] ? strlen(parts[i]) : 0);
		wg_buf_append(&key, "\n", 1);
	}
	uint8_t md[32];
	wg_sha256 *h = wg_sha256_new();
	if (!h || !key.s) {
		wg_buf_free(&key);
		return json_object();
	}
	wg_sha256_update(h, key.s, key.len);
	wg_sha256_final(h, md);
	wg_sha256_free(h);
	wg_buf_free(&key);
	char hex[33 + 24];
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	json_int_t nth = json_integer_value(json_object_get(seen, hex)) + 1;
	json_object_set_new(seen, hex, json_integer(nth));
	snprintf(hex + 32, sizeof(hex) - 32, ":%lld", (long long)nth);
	return json_pack("{s:s}", "wheelgate/v1", hex);
}

/* The result's text: the member (and the file and line inside an archive) where the message
 * does not name them, the message, the fix. */
static char *result_text(const wg_finding *f, bool region)
{
	wg_buf t = {0};
	const char *msg = f->message ? f->message : "", *fix = f->fix ? f->fix : "";
	if (f->member && !strstr(msg, f->member)) {
		wg_buf_append(&t, f->member, strlen(f->member));
		wg_buf_append(&t, ": ", 2);
	}
	if (f->file && !region && !strstr(msg, f->file)) {
		char line[32];
		snprintf(line, sizeof(line), ":%u: ", f->line);
		wg_buf_append(&t, f->file, strlen(f->file));
		wg_buf_append(&t, line, f->line ? strlen(line) : 0);
		wg_buf_append(&t, ": ", f->line ? 0 : 2);
	}
	wg_buf_append(&t, msg, strlen(msg));
	wg_buf_append(&t, " Fix: ", 6);
	wg_buf_append(&t, fix, strlen(fix));
	return t.s;
}

static size_t rule_index(const wg_ruleset *rs, const char *id)
{
	for (size_t j = 0; rs && id && j < rs->rules.len; j++)
		if (!strcmp(((const wg_rule *)wg_vec_at(&rs->rules, j))->id, id))
			return j;
	return 0;
}

/* The exit status `wheelgate check` gives these reports: 2 with an unreadable input, 1 with
 * a failing one, else 0. */
static int exit_code(const wg_report *const *reports, size_t n, wg_severity fail_on)
{
	bool unreadable = false, failed = false;
	for (size_t i = 0; i < n; i++) {
		unreadable = unreadable || !reports[i];
		failed = failed || (reports[i] && wg_report_worst(reports[i]) >= (int)fail_on);
	}
	return unreadable ? 2 : failed ? 1 : 0;
}

static json_t *sarif(const wg_ruleset *rs, const wg_target *target, const char *const *paths,
		     const wg_report *const *reports, const char *const *errors, size_t n,
		     wg_severity fail_on)
{
	wg_profile profile = wg_target_profile(target);
	json_t *rules = json_array(), *results = json_array(), *notes = json_array();
	json_t *config = json_array(), *seen = json_object();
	sarif_base base;
	size_t more_total = 0, suppressed_total = 0;
	base_init(&base);
	for (size_t i = 0; rs && i < rs->rules.len; i++)
		json_array_append_new(rules, sarif_rule(wg_vec_at(&rs->rules, i), profile));
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			json_array_append_new(notes, json_pack("{s:s, s:{s:o}, s:[o]}", "level", "error",
				"message", "text", nstr(errors && errors[i] ? errors[i] : "unreadable"),
				"locations", sarif_location(&base, paths[i], NULL, NULL)));
			continue;
		}
		/* Rules a missing fact left out: configuration notifications naming the rule. */
		json_t *na = not_applied_json(r);
		for (size_t k = 0; na && k < json_array_size(na); k++) {
			json_t *x = json_array_get(na, k);
			const char *id = json_string_value(json_object_get(x, "rule"));
			char text[1024];
			snprintf(text, sizeof(text), "%s not applied: %s", id,
				 json_string_value(json_object_get(x, "message")));
			json_array_append_new(config, json_pack("{s:s, s:{s:o}, s:{s:s, s:I}, s:[o], s:{s:O}}",
				"level", "note", "message", "text", nstr(text), "associatedRule", "id", id,
				"index", (json_int_t)rule_index(rs, id), "locations",
				sarif_location(&base, paths[i], NULL, NULL), "properties", "lacks",
				json_object_get(x, "lacks")));
		}
		json_decref(na);
		/* Findings counted past a bound: a notification per rule with the count, so that
		 * the results a viewer shows are known to stand for more. */
		for (size_t k = 0; k < r->more.len; k++) {
			const wg_more *m = wg_vec_at(&r->more, k);
			char text[256];
			snprintf(text, sizeof(text), "%s: %zu more finding%s of this rule on this input "
				 "counted, not listed (--max-rule-findings, --max-findings)", m->rule,
				 m->count, m->count == 1 ? "" : "s");
			json_array_append_new(config, json_pack("{s:s, s:{s:s}, s:{s:s, s:I}, s:[o], s:{s:I, s:{s:I, s:I, s:I}}}",
				"level", m->severity[2] ? "error" : m->severity[1] ? "warning" : "note",
				"message", "text", text, "associatedRule", "id", m->rule, "index",
				(json_int_t)rule_index(rs, m->rule), "locations",
				sarif_location(&base, paths[i], NULL, NULL), "properties", "more",
				(json_int_t)m->count, "counts", "error", (json_int_t)m->severity[2],
				"warning", (json_int_t)m->severity[1], "info", (json_int_t)m->severity[0]));
			more_total += m->count;
		}
		/* The findings, then those a baseline knows: kept, marked suppressed (they do not
		 * fail the run). A baseline matches what the fingerprint's key holds and more
		 * coarsely, so every finding of one key is suppressed or none is, and the order
		 * does not change a fingerprint's occurrence number. */
		for (size_t s = 0; s < 2; s++) {
			const wg_vec *v = s ? &r->suppressed : &r->findings;
			for (size_t k = 0; k < v->len; k++) {
				const wg_finding *f = wg_vec_at(v, k);
				int where = 0;
				json_t *loc = sarif_location(&base, paths[i], f, &where);
				/* the whole message, however long (a cut could split a character); a
				 * member's file and line stay in it (a viewer may not open the wheel) */
				char *text = result_text(f, where == 1);
				json_t *res = json_pack("{s:o, s:I, s:s, s:{s:o}, s:[o], s:o}",
					"ruleId", nstr(f->rule), "ruleIndex",
					(json_int_t)rule_index(rs, f->rule), "level", sarif_level(f->severity),
					"message", "text", nstr(text ? text : ""), "locations", loc,
					"partialFingerprints", fingerprint(seen, paths[i], f));
				if (res && s)
					json_object_set_new(res, "suppressions", json_pack("[{s:s, s:s, s:o}]",
						"kind", "external", "status", "accepted", "justification",
						nstr(f->suppressed ? f->suppressed : "")));
				json_array_append_new(results, res);
				free(text);
				suppressed_total += s;
			}
		}
	}
	json_decref(seen);
	json_t *run = json_pack("{s:{s:{s:s, s:s, s:s, s:s, s:o}}, s:o, s:[{s:b, s:i, s:o, s:o}]}",
		"tool", "driver", "name", "wheelgate", "version", wg_version_string(),
		"semanticVersion", wg_version_string(), "informationUri", WG_DOCS_URL "/ci.md",
		"rules", rules, "results", results, "invocations", "executionSuccessful",
		json_array_size(notes) == 0, "exitCode", exit_code(reports, n, fail_on),
		"toolExecutionNotifications", notes, "toolConfigurationNotifications", config);
	/* %SRCROOT% first, declared even when the working directory is unknown (a top-level
	 * base may have no uri, 3.4.3); then the inputs' own directories */
	json_t *roots = json_object();
	char *cwd = base.cwd[0] ? file_uri(base.cwd, true) : NULL;
	json_object_set_new(roots, SRCROOT, cwd ? json_pack("{s:s, s:{s:s}}", "uri", cwd,
		"description", "text", "the directory wheelgate ran in") : json_pack("{s:{s:s}}",
		"description", "text", "the directory wheelgate ran in (unknown)"));
	free(cwd);
	json_object_update(roots, base.bases);
	json_object_set_new(run, "originalUriBaseIds", roots);
	json_object_set(run, "artifacts", base.artifacts);
	base_free(&base);
	json_object_set_new(run, "properties", json_pack("{s:s, s:I, s:I}", "profile",
		wg_profile_name(profile), "more", (json_int_t)more_total, "suppressed",
		(json_int_t)suppressed_total));
	return json_pack("{s:s, s:s, s:[o]}", "$schema", "https://json.schemastore.org/sarif-2.1.0.json",
			 "version", "2.1.0", "runs", run);
}

/* GitHub workflow commands: the message's %, CR and LF escaped, a property's also ':' and
 * ','; the text first made safe for a terminal (controls and invalid UTF-8 escaped). */
static void gh_put(wg_buf *b, const char *s, bool property)
{
	wg_buf safe = {0};
	wg_buf_escape(&safe, s ? s : "", WG_ESCAPE_UTF8 | WG_ESCAPE_CONTROL);
	for (const char *p = safe.s ? safe.s : ""; *p; p++) {
		const char *e = *p == '%' ? "%25" : *p == '\r' ? "%0D" : *p == '\n' ? "%0A"
			: property && *p == ':' ? "%3A" : property && *p == ',' ? "%2C" : NULL;
		wg_buf_append(b, e ? e : p, e ? 3 : 1);
	}
	wg_buf_free(&safe);
}

static char *github(const wg_target *target, const char *const *paths,
		    const wg_report *const *reports, const char *const *errors, size_t n,
		    wg_severity fail_on)
{
	wg_buf b = {0};
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			wg_buf_append(&b, "::error file=", 13);
			gh_put(&b, paths[i], true);
			wg_buf_append(&b, ",title=", 7);
			gh_put(&b, "wheelgate: unreadable input", true);
			wg_buf_append(&b, "::", 2);
			gh_put(&b, errors && errors[i] ? errors[i] : "unreadable", false);
			wg_buf_append(&b, "\n", 1);
			continue;
		}
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			const char *cmd = f->severity == WG_SEV_ERROR ? "::error file="
					  : f->severity == WG_SEV_WARNING ? "::warning file=" : "::notice file=";
			char *file = disk_file(paths[i], f);
			wg_buf_append(&b, cmd, strlen(cmd));
			gh_put(&b, file ? file : paths[i], true);
			if (file) {
				char line[32];
				snprintf(line, sizeof(line), ",line=%u", f->line);
				wg_buf_append(&b, line, strlen(line));
			}
			wg_buf_append(&b, ",title=", 7);
			wg_buf t = {0};
			wg_buf_append(&t, f->rule, strlen(f->rule));
			wg_buf_append(&t, " ", 1);
			wg_buf_append(&t, f->title ? f->title : "", f->title ? strlen(f->title) : 0);
			gh_put(&b, t.s, true);
			wg_buf_free(&t);
			wg_buf_append(&b, "::", 2);
			char *text = result_text(f, file != NULL);
			gh_put(&b, text, false);
			free(text);
			free(file);
			wg_buf_append(&b, "\n", 1);
		}
		for (size_t k = 0; k < r->more.len; k++) {
			const wg_more *m = wg_vec_at(&r->more, k);
			char text[256];
			const char *cmd = m->severity[2] ? "::error file=" : m->severity[1]
					  ? "::warning file=" : "::notice file=";
			wg_buf_append(&b, cmd, strlen(cmd));
			gh_put(&b, paths[i], true);
			snprintf(text, sizeof(text), ",title=%s::and %zu more like this (%s: counted, not "
				 "listed)\n", m->rule, m->count, m->rule);
			wg_buf_append(&b, text, strlen(text));
		}
	}
	/* the summary as a notice: it shows on the run's summary page */
	char *sum = summary(target, reports, n, fail_on);
	if (sum) {
		sum[strcspn(sum, "\n")] = '\0';
		wg_buf_append(&b, "::notice title=wheelgate::", 26);
		gh_put(&b, sum, false);
		wg_buf_append(&b, "\n", 1); /* a line as every other: the runner reads lines */
	}
	free(sum);
	if (!b.s)
		wg_buf_append(&b, "", 0);
	return b.s;
}

/* Appends a literal piece, or (for text from an input) the text with control characters and
 * invalid UTF-8 escaped: a wheel's names must not drive the terminal. */
static void put(wg_buf *b, const char *s)
{
	wg_buf_append(b, s, strlen(s));
}

static void put_esc(wg_buf *b, const char *s)
{
	wg_buf_escape(b, s, WG_ESCAPE_UTF8 | WG_ESCAPE_CONTROL);
}

/* "  not applied: WG-ABI-001, WG-ABI-002 (no target ...); WG-GPU-002 (no target GPU (--gpu))":
 * rules grouped by what they lack, in rule order. */
static void text_not_applied(wg_buf *b, const wg_report *r, const char *dim, const char *off)
{
	size_t n = r->not_applied.len;
	if (!n)
		return;
	bool *done = calloc(n, sizeof(*done));
	if (!done)
		return;
	put(b, "  ");
	put(b, dim);
	put(b, "not applied:");
	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		const wg_not_applied *g = wg_vec_at(&r->not_applied, i);
		put(b, i ? "; " : " ");
		for (size_t j = i, first = 1; j < n; j++) {
			const wg_not_applied *x = wg_vec_at(&r->not_applied, j);
			if (done[j] || strcmp(x->message, g->message))
				continue;
			done[j] = true;
			put(b, first ? "" : ", ");
			put(b, x->rule);
			first = 0;
		}
		put(b, " (");
		put_esc(b, g->message);
		put(b, ")");
	}
	put(b, off);
	put(b, "\n");
	free(done);
}

/* "and 68,950 more like this": the number with thousands separators, whatever the locale. */
static void text_more(wg_buf *b, const wg_more *m, const char *dim, const char *off)
{
	char num[32], grouped[48];
	int n = snprintf(num, sizeof(num), "%zu", m->count), o = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			grouped[o++] = ',';
		grouped[o++] = num[i];
	}
	grouped[o] = '\0';
	put(b, "  ");
	put(b, dim);
	put(b, "... and ");
	put(b, grouped);
	put(b, " more like this [");
	put(b, m->rule);
	put(b, "] (counted, not listed: --max-rule-findings, --max-findings)");
	put(b, off);
	put(b, "\n");
}

/* The text of `wheelgate check`: PASS/FAIL/ERROR per input, each finding with its fix, and
 * the rules not applied. */
static char *text(const char *const *paths, const wg_report *const *reports,
		  const char *const *errors, size_t n, wg_severity fail_on, bool color)
{
	const char *red = color ? "\033[31m" : "", *green = color ? "\033[32m" : "",
		   *yellow = color ? "\033[33m" : "", *dim = color ? "\033[2m" : "",
		   *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
	wg_buf b = {0};
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			put(&b, red);
			put(&b, "ERROR");
			put(&b, off);
			put(&b, " ");
			put_esc(&b, paths[i]);
			put(&b, "\n      ");
			put_esc(&b, errors && errors[i] ? errors[i] : "unreadable");
			put(&b, "\n");
			continue;
		}
		bool fails = wg_report_worst(r) >= (int)fail_on;
		put(&b, fails ? red : green);
		put(&b, fails ? "FAIL" : "PASS");
		put(&b, off);
		put(&b, " ");
		put_esc(&b, paths[i]);
		put(&b, "\n");
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			const char *c = f->severity == WG_SEV_ERROR ? red
					: f->severity == WG_SEV_WARNING ? yellow : dim;
			put(&b, "  ");
			put(&b, c);
			put(&b, wg_severity_name(f->severity));
			put(&b, off);
			put(&b, "[");
			put_esc(&b, f->rule);
			put(&b, "] ");
			put(&b, bold);
			put_esc(&b, f->title);
			put(&b, off);
			put(&b, "\n      ");
			put_esc(&b, f->message);
			put(&b, "\n      ");
			put(&b, dim);
			put(&b, "fix:");
			put(&b, off);
			put(&b, " ");
			put_esc(&b, f->fix);
			put(&b, "\n");
			/* after the last kept finding of a rule: the ones counted past the bound */
			const wg_finding *next = k + 1 < r->findings.len ? wg_vec_at(&r->findings, k + 1)
									 : NULL;
			const wg_more *m = !next || strcmp(next->rule, f->rule)
						   ? wg_report_more_of(r, f->rule) : NULL;
			if (m)
				text_more(&b, m, dim, off);
		}
		/* a rule with none kept (max_findings reached before it) */
		for (size_t k = 0; k < r->more.len; k++) {
			const wg_more *m = wg_vec_at(&r->more, k);
			bool kept = false;
			for (size_t j = 0; j < r->findings.len && !kept; j++)
				kept = !strcmp(((const wg_finding *)wg_vec_at(&r->findings, j))->rule, m->rule);
			if (!kept)
				text_more(&b, m, dim, off);
		}
		text_not_applied(&b, r, dim, off);
	}
	if (!b.s)
		wg_buf_append(&b, "", 0);
	return b.s;
}

/* The line that closes `wheelgate check`: inputs, verdicts and findings counted. */
static char *summary(const wg_target *target, const wg_report *const *reports, size_t n,
		     wg_severity fail_on)
{
	size_t passed = 0, failed = 0, unreadable = 0, sev[3] = {0};
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			unreadable++;
			continue;
		}
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			if ((unsigned)f->severity < 3)
				sev[f->severity]++;
		}
		add_more(sev, r);
		if (wg_report_worst(r) >= (int)fail_on)
			failed++;
		else
			passed++;
	}
	char line[512];
	snprintf(line, sizeof(line), "%zu input%s: %zu passed, %zu failed, %zu unreadable; "
		 "%zu error%s, %zu warning%s, %zu info (profile: %s, fail-on: %s)\n", n,
		 n == 1 ? "" : "s", passed, failed, unreadable, sev[2], sev[2] == 1 ? "" : "s",
		 sev[1], sev[1] == 1 ? "" : "s", sev[0], wg_profile_name(wg_target_profile(target)),
		 wg_severity_name(fail_on));
	return strdup(line);
}

WG_API int wg_target_to_json(char **out, const wg_target *t)
{
	if (!out || !t) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_target_to_json: no %s", out ? "target" : "place for it");
		return WG_EINVAL;
	}
	json_t *j = target_json(t);
	*out = j ? wg_json_dump(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(j);
	if (*out)
		return WG_OK;
	wg_set_error(WG_ERROR_CLASS_INVALID, WG_ENOMEM, "out of memory");
	return WG_ENOMEM;
}

WG_API int wg_reports_format(char **out, wg_format format, const wg_ruleset *rs,
			     const wg_target *target, const char *const *paths,
			     const wg_report *const *reports, const char *const *errors, size_t n,
			     wg_severity fail_on)
{
	if (!out || (n && (!paths || !reports))) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_reports_format: no %s", out ? "paths or reports"
										: "place for the document");
		return WG_EINVAL;
	}
	*out = NULL;
	if (format == WG_FORMAT_JSON_COMPACT) /* report_doc.c */
		return wg_reports_format_doc(out, &(wg_reports_doc){WG_REPORTS_DOC_VERSION, format, rs,
			target, paths, reports, errors, n, fail_on, NULL, NULL, NULL, 0, NULL, NULL, 0});
	if (format == WG_FORMAT_TEXT || format == WG_FORMAT_TEXT_COLOR || format == WG_FORMAT_SUMMARY ||
	    format == WG_FORMAT_GITHUB) {
		*out = format == WG_FORMAT_SUMMARY ? summary(target, reports, n, fail_on)
		       : format == WG_FORMAT_GITHUB ? github(target, paths, reports, errors, n, fail_on)
		       : text(paths, reports, errors, n, fail_on, format == WG_FORMAT_TEXT_COLOR);
		if (*out)
			return WG_OK;
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	json_t *doc = format == WG_FORMAT_SARIF ? sarif(rs, target, paths, reports, errors, n, fail_on)
		      : format == WG_FORMAT_JSON ? wg_check_json(target, paths, reports, errors, n, fail_on)
						 : NULL;
	if (!doc && format != WG_FORMAT_SARIF && format != WG_FORMAT_JSON) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_reports_format: no format %d", (int)format);
		return WG_EINVAL;
	}
	*out = doc ? wg_json_dump(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(doc);
	if (*out)
		return WG_OK;
	wg_set_error(WG_ERROR_CLASS_INVALID, WG_ENOMEM, "out of memory");
	return WG_ENOMEM;
}

/*
 * Rule files: the shipped rules (the YAML files of rules/default, compiled in) and the user's files or
 * directories, read with libyaml and validated whole: ids, check kinds, severities, message
 * placeholders, target conditions, PCRE2 patterns (compiled once) and their examples. A
 * user's rule with a shipped id replaces it. Every error says file:line:col.
 * Here: files and directories read, rules selected, the rule set's public calls; one rule
 * parsed and validated: rulefile_rule.c.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_RULES /* wg_seterr: what fails here */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/data.h"
#include "rules/rulefile_internal.h"

static int load_text(wg_ruleset *rs, const char *file, const char *text, size_t len, bool shipped,
		     wg_err *err)
{
	char where[512];
	wg_yaml_doc *doc = NULL;
	int rc = wg_yaml_parse(&doc, file, text, len, err);
	if (rc < 0)
		return rc;
	const wg_yaml_node *root = wg_yaml_root(doc);
	const char *kind = wg_yaml_scalar(wg_yaml_get(root, "kind"));
	const wg_yaml_node *rules = wg_yaml_get(root, "rules");
	if (!wg_yaml_is_map(root) || !kind || strcmp(kind, "rules")) {
		rc = wg_seterr(err, WG_EDATA, "%s: a rule file starts with 'kind: rules'",
			       wg_yaml_where(root, where, sizeof(where)));
	} else if (!wg_yaml_is_seq(rules)) {
		rc = wg_seterr(err, WG_EDATA, "%s: 'rules' must be a list of rules",
			       wg_yaml_where(rules ? rules : root, where, sizeof(where)));
	} else {
		for (size_t i = 0; i < wg_yaml_len(rules) && rc == WG_OK; i++)
			rc = wg_rulefile_load_rule(rs, wg_yaml_item(rules, i), file, shipped, err);
	}
	wg_yaml_free(doc);
	return rc;
}

/* A file named by the user opened for reading only when it is a regular file: a FIFO or a
 * device in its place is refused, never waited on or read forever. */
static FILE *fopen_regular(const char *path, int *error)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	FILE *f = NULL;
	*error = 0;
	if (fd < 0) {
		*error = errno;
		return NULL;
	}
	if (fstat(fd, &st) != 0)
		*error = errno;
	else if (!S_ISREG(st.st_mode))
		*error = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	else if (!(f = fdopen(fd, "rb")))
		*error = errno;
	if (!f)
		close(fd);
	return f;
}

static int load_file(wg_ruleset *rs, const char *path, uint64_t max, wg_err *err)
{
	int why;
	FILE *f = fopen_regular(path, &why);
	if (!f)
		return wg_seterr(err, WG_EIO, "%s: %s", path,
				 why == EINVAL ? "not a regular file" : strerror(why));
	/* At most max bytes are ever held: the buffer is the file's size, checked first. */
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || (uint64_t)st.st_size > max) {
		fclose(f);
		return wg_seterr(err, WG_ELIMIT, "%s: a rule file of %lld bytes, more than the limit "
				 "of %llu (max_rule_file)", path, (long long)st.st_size,
				 (unsigned long long)max);
	}
	size_t cap = (size_t)st.st_size + 1;
	char *buf = malloc(cap);
	size_t n = buf ? fread(buf, 1, cap, f) : 0;
	int bad = ferror(f);
	fclose(f);
	if (!buf)
		return WG_ENOMEM;
	int rc;
	if (bad)
		rc = wg_seterr(err, WG_EIO, "%s: read error", path);
	else if (n == cap)
		rc = wg_seterr(err, WG_EIO, "%s: the file grew while it was read", path);
	else
		rc = load_text(rs, path, buf, n, false, err);
	free(buf);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_path(wg_ruleset *rs, const char *path, uint64_t max, wg_err *err)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return wg_seterr(err, WG_EIO, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return load_file(rs, path, max, err);
	DIR *d = opendir(path);
	if (!d)
		return wg_seterr(err, WG_EIO, "%s: %s", path, strerror(errno));
	/* A rule directory is a person's handful of files: more than this is a wrong directory,
	 * said so rather than loading some of it. */
	enum { MAX_RULE_FILES = 512 };
	char *names[MAX_RULE_FILES];
	size_t n = 0;
	int rc = WG_OK;
	struct dirent *e;
	while (rc == WG_OK && (e = readdir(d)))
		if (wg_has_suffix(e->d_name, ".yaml") || wg_has_suffix(e->d_name, ".yml")) {
			if (n == MAX_RULE_FILES)
				rc = wg_seterr(err, WG_ELIMIT, "%s: more than %d rule files (*.yaml): "
					       "not a rule directory?", path, MAX_RULE_FILES);
			else if (!(names[n++] = strdup(e->d_name)))
				rc = wg_seterr(err, WG_ENOMEM, "out of memory");
		}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (rc == WG_OK && names[i]) {
			char full[4096];
			snprintf(full, sizeof(full), "%s/%s", path, names[i]);
			rc = load_file(rs, full, max, err);
		}
		free(names[i]);
	}
	return rc;
}

/* Whether selector sel picks rule r: its id, an id prefix ending at a '-' (WG-SYS), its name
 * (the check kind, '_' for '-' allowed) or a glob of either, all ignoring case. */
static bool selects(const char *sel, const wg_rule *r)
{
	char name[128];
	size_t i;
	for (i = 0; r->check[i] && i + 1 < sizeof(name); i++)
		name[i] = r->check[i];
	name[i] = '\0';
	if (strpbrk(sel, "*?["))
		return fnmatch(sel, r->id, FNM_CASEFOLD) == 0 || fnmatch(sel, name, FNM_CASEFOLD) == 0;
	size_t n = strlen(sel);
	if (!strcasecmp(sel, r->id) || (n && !strncasecmp(sel, r->id, n) && r->id[n] == '-'))
		return true;
	if (strlen(name) != n)
		return false;
	for (i = 0; i < n; i++) {
		char a = (char)tolower((unsigned char)sel[i]), b = name[i];
		if (a != b && !(a == '_' && b == '-'))
			return false;
	}
	return true;
}

/* The error for a selector that picks no rule: naming it, and the nearest id, prefix or name. */
static int no_match(const wg_ruleset *rs, const char *opt, const char *sel, wg_err *err);

/* Applies one selector of --enable/--disable to every rule it picks. */
static int select_rules(wg_ruleset *rs, const char *opt, const char *sel, bool on, wg_err *err)
{
	size_t hits = 0;
	for (size_t i = 0; i < rs->rules.len; i++) {
		wg_rule *r = wg_vec_at(&rs->rules, i);
		if (selects(sel, r)) {
			r->enabled = on;
			hits++;
		}
	}
	return hits ? WG_OK : no_match(rs, opt, sel, err);
}

static int no_match(const wg_ruleset *rs, const char *opt, const char *sel, wg_err *err)
{
	/* Candidates: every id, every id prefix (up to each '-') and every name. */
	size_t max = rs->rules.len * 4, n = 0;
	const char **names = calloc(max ? max : 1, sizeof(*names));
	char (*prefixes)[64] = calloc(max ? max : 1, sizeof(*prefixes));
	const char *best = NULL;
	char hint[160] = "";
	if (names && prefixes) {
		for (size_t i = 0; i < rs->rules.len; i++) {
			const wg_rule *r = wg_vec_at(&rs->rules, i);
			names[n++] = r->id;
			names[n++] = r->check;
			size_t k = 0;
			for (const char *d = strchr(r->id, '-'); d && k < 2; d = strchr(d + 1, '-'), k++) {
				size_t len = (size_t)(d - r->id);
				if (len >= sizeof(prefixes[0]))
					break;
				memcpy(prefixes[n], r->id, len);
				prefixes[n][len] = '\0';
				names[n] = prefixes[n];
				n++;
			}
		}
		if ((best = wg_suggest(sel, names, n)))
			snprintf(hint, sizeof(hint), "; did you mean '%s'?", best);
	}
	int rc = wg_seterr(err, WG_EINVAL, "%s: no rule '%s' (no rule id, id prefix, name or glob "
			   "matches it%s)", opt, sel, hint);
	free(names);
	free(prefixes);
	return rc;
}

WG_API int wg_ruleset_new(wg_ruleset **out, const wg_context *ctx, const wg_ruleset_options *o)
{
	wg_err err = {0};
	int rc = WG_OK;
	wg_ruleset_options def = WG_RULESET_OPTIONS_INIT;
	/* Without a context: the default limit. */
	wg_options defaults = WG_OPTIONS_INIT;
	uint64_t max_rule_file = ctx ? ctx->opts.max_rule_file : defaults.max_rule_file;
	if (!out)
		return wg_null_arg("wg_ruleset_new");
	*out = NULL;
	if (!o)
		o = &def;
	if (wg_struct_version("wg_ruleset_options", o->version, WG_RULESET_OPTIONS_VERSION) < 0)
		return WG_EINVAL;
	wg_ruleset *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return WG_ENOMEM;
	wg_vec_init(&rs->rules, sizeof(wg_rule));
	wg_vec_init(&rs->regexes, sizeof(wg_regex *));
	if (!o->no_default_rules)
		for (const wg_data_file *f = wg_data_files; f->path && rc == WG_OK; f++)
			if (wg_has_prefix(f->path, "default/")) {
				char name[256];
				snprintf(name, sizeof(name), "rules/%s", f->path);
				rc = load_text(rs, name, f->text, f->len, true, &err);
			}
	for (size_t i = 0; i < o->nrule_paths && rc == WG_OK; i++)
		rc = load_path(rs, o->rule_paths[i], max_rule_file, &err);
	for (size_t i = 0; i < o->nenable && rc == WG_OK; i++)
		rc = o->enable[i] ? select_rules(rs, "--enable", o->enable[i], true, &err)
				  : wg_seterr(&err, WG_EINVAL, "--enable: a NULL selector");
	for (size_t i = 0; i < o->ndisable && rc == WG_OK; i++)
		rc = o->disable[i] ? select_rules(rs, "--disable", o->disable[i], false, &err)
				   : wg_seterr(&err, WG_EINVAL, "--disable: a NULL selector");
	if (rc < 0) {
		wg_set_error(WG_ERROR_CLASS_RULES, rc,
			     "%s", err.msg[0] ? err.msg : wg_strerror(rc));
		wg_ruleset_free(rs);
		return rc;
	}
	*out = rs;
	return WG_OK;
}

WG_API int wg_ruleset_selects(const wg_ruleset *rs, const char *selector, const char *rule_id)
{
	wg_err err = {0};
	if (!rs || !selector || !rule_id)
		return wg_null_arg("wg_ruleset_selects");
	bool any = false;
	for (size_t i = 0; i < rs->rules.len; i++) {
		const wg_rule *r = wg_vec_at(&rs->rules, i);
		if (selects(selector, r)) {
			if (!strcmp(r->id, rule_id))
				return 1;
			any = true;
		}
	}
	if (any)
		return 0;
	int rc = no_match(rs, "rule selector", selector, &err);
	wg_set_error(WG_ERROR_CLASS_RULES, rc, "%s", err.msg);
	return rc;
}

WG_API void wg_ruleset_free(wg_ruleset *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->regexes.len; i++)
		wg_regex_free(*(wg_regex **)wg_vec_at(&rs->regexes, i));
	wg_vec_free(&rs->regexes);
	wg_vec_free(&rs->rules);
	wg_arena_free(&rs->arena);
	free(rs);
}

WG_API size_t wg_ruleset_count(const wg_ruleset *rs)
{
	return rs ? rs->rules.len : 0;
}

WG_API const char *wg_severity_name(wg_severity s)
{
	return s == WG_SEV_ERROR ? "error" : s == WG_SEV_WARNING ? "warning" : "info";
}

WG_API int wg_ruleset_rule(wg_rule_info *out, const wg_ruleset *rs, size_t i)
{
	if (!out || !rs)
		return wg_null_arg("wg_ruleset_rule");
	if (wg_struct_version("wg_rule_info", out->version, WG_RULE_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_rule *r = wg_vec_at(&rs->rules, i);
	if (!r)
		return WG_ENOTFOUND;
	out->id = r->id;
	out->check = r->check;
	out->title = r->title;
	out->fix = r->fix;
	out->source = r->source;
	out->severity = r->severity;
	out->enabled = r->enabled;
	if (out->version >= 2) {
		out->install = r->sev[WG_PROFILE_INSTALL];
		out->publish = r->sev[WG_PROFILE_PUBLISH];
	}
	if (out->version >= 3)
		out->security = r->security;
	if (out->version >= 4) {
		out->message = r->message;
		out->looks_at = r->looks_at;
		out->why = r->why;
		out->example_fails = r->ex_fails;
		out->example_passes = r->ex_passes;
		out->npattern_lists = r->nlists;
	}
	return WG_OK;
}

WG_API int wg_ruleset_rule_patterns(wg_rule_patterns_info *out, const wg_ruleset *rs, size_t i,
				    size_t j)
{
	if (!out || !rs)
		return wg_null_arg("wg_ruleset_rule_patterns");
	if (wg_struct_version("wg_rule_patterns_info", out->version,
			      WG_RULE_PATTERNS_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_rule *r = wg_vec_at(&rs->rules, i);
	if (!r || j >= r->nlists)
		return WG_ENOTFOUND;
	const wg_pattern_list *l = &r->lists[j];
	out->name = l->name;
	out->npatterns = l->n;
	out->match = l->match;
	out->nmatch = l->nmatch;
	out->no_match = l->no_match;
	out->nno_match = l->nno_match;
	return WG_OK;
}

WG_API int wg_ruleset_self_test(const wg_ruleset *rs, char **report)
{
	wg_buf b = {0};
	int failures = 0;
	if (report)
		*report = NULL;
	if (!rs)
		return wg_null_arg("wg_ruleset_self_test");
	wg_rmatch *md = wg_rmatch_new();
	if (!md)
		return WG_ENOMEM;
	for (size_t i = 0; i < rs->rules.len; i++) {
		const wg_rule *r = wg_vec_at(&rs->rules, i);
		for (size_t j = 0; j < r->nlists; j++) {
			const wg_pattern_list *l = &r->lists[j];
			for (int want = 1; want >= 0; want--) {
				const char **ex = want ? l->match : l->no_match;
				size_t nex = want ? l->nmatch : l->nno_match;
				for (size_t k = 0; k < nex; k++) {
					bool got = false;
					for (size_t m = 0; m < l->n && !got; m++)
						got = wg_regex_match(l->re[m], md, ex[k], strlen(ex[k]), NULL, 0) == 1;
					if (got == (bool)want)
						continue;
					char line[1024];
					int n = snprintf(line, sizeof(line), "%s (%s): %s: example '%s' %s\n",
							 r->id, r->source, l->name, ex[k],
							 want ? "does not match" : "matches, but must not");
					wg_buf_append(&b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
					failures++;
				}
			}
		}
	}
	wg_rmatch_free(md);
	if (report)
		*report = b.s;
	else
		wg_buf_free(&b);
	return failures ? WG_EDATA : WG_OK;
}

/*
 * One rule of a rule file parsed and validated whole: its id, check kind (or the `match:`
 * of a generic pattern rule), severities per profile, message and fix placeholders, target
 * conditions (`when`), PCRE2 patterns compiled once, and their examples.
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

/* The keys of `when`: the target's facts, and the kind of input judged (always known). */
static const char *const target_keys[] = {"python", "torch", "cuda", "cxx11abi", "gpu", "input",
					  NULL};
static const char *const input_kinds[] = {"known", "wheel", "installed", "object", "directory",
					  NULL};
static const char *const common_vars[] = {"wheel", "path", "rule", "target.python",
					  "target.torch", "target.cuda", "target.cxx11abi",
					  "target.abi", "target.gpus", NULL};

static bool in_list(const char *const *l, const char *s, size_t n)
{
	for (; l && *l; l++)
		if (strlen(*l) == n && !strncmp(*l, s, n))
			return true;
	return false;
}

/* Every {placeholder} of a template must be one the check kind (for check: match, its fact
 * list) or the target provides. */
static int check_placeholders(const wg_check_kind *k, const char *facts, const char *tpl,
			      const wg_yaml_node *n, const char *what, wg_err *err)
{
	const char *const *vars = facts ? wg_match_fact_vars(facts, NULL) : k->vars;
	char where[512];
	for (const char *p = tpl; (p = strchr(p, '{'));) {
		if (p[1] == '{') {
			p += 2;
			continue;
		}
		const char *e = strchr(p, '}');
		if (!e)
			return wg_seterr(err, WG_EDATA, "%s: %s: '{' without a closing '}'",
					 wg_yaml_where(n, where, sizeof(where)), what);
		size_t len = (size_t)(e - p - 1);
		if (!facts && !in_list(vars, p + 1, len) && !in_list(common_vars, p + 1, len))
			return wg_seterr(err, WG_EDATA, "%s: %s: unknown placeholder {%.*s} for check "
					 "'%s' (it provides: %s...)", wg_yaml_where(n, where, sizeof(where)),
					 what, (int)len, p + 1, k->name, k->vars && k->vars[0] ? k->vars[0] : "");
		if (!in_list(vars, p + 1, len) && !in_list(common_vars, p + 1, len)) {
			char have[512] = "";
			for (size_t i = 0, o = 0; vars && vars[i] && o < sizeof(have); i++)
				o += (size_t)snprintf(have + o, sizeof(have) - o, "%s{%s}", i ? ", " : "",
						      vars[i]);
			return wg_seterr(err, WG_EDATA, "%s: %s: unknown placeholder {%.*s} for facts "
					 "'%s' (it provides: %s)", wg_yaml_where(n, where, sizeof(where)),
					 what, (int)len, p + 1, facts, have);
		}
		p = e + 1;
	}
	return WG_OK;
}

static const char *req_str(const wg_yaml_node *rule, const char *key, wg_err *err, int *rc)
{
	char where[512];
	const wg_yaml_node *n = wg_yaml_get(rule, key);
	const char *s = wg_yaml_scalar(n);
	if (!s || !*s) {
		*rc = wg_seterr(err, WG_EDATA, "%s: rule needs '%s' (a non-empty string)",
				wg_yaml_where(n ? n : rule, where, sizeof(where)), key);
		return NULL;
	}
	return s;
}

static int str_list(const char ***out, size_t *n, wg_arena *a, const wg_yaml_node *seq,
		    const char *what, wg_err *err)
{
	char where[512];
	*out = NULL;
	*n = 0;
	if (!seq)
		return WG_OK;
	if (!wg_yaml_is_seq(seq))
		return wg_seterr(err, WG_EDATA, "%s: '%s' must be a list of strings",
				 wg_yaml_where(seq, where, sizeof(where)), what);
	size_t len = wg_yaml_len(seq);
	const char **v = wg_arena_alloc(a, (len + 1) * sizeof(*v));
	if (!v)
		return WG_ENOMEM;
	for (size_t i = 0; i < len; i++) {
		const wg_yaml_node *it = wg_yaml_item(seq, i);
		if (!wg_yaml_scalar(it))
			return wg_seterr(err, WG_EDATA, "%s: items of '%s' must be strings",
					 wg_yaml_where(it, where, sizeof(where)), what);
		v[i] = wg_arena_strdup(a, wg_yaml_scalar(it));
	}
	*out = v;
	*n = len;
	return WG_OK;
}

static int compile(wg_ruleset *rs, wg_regex **out, const char *pat, const wg_yaml_node *n,
		   wg_err *err)
{
	char where[512], msg[256];
	size_t off = 0;
	if (wg_regex_new(out, pat, 0, msg, sizeof(msg), &off) < 0)
		return wg_seterr(err, WG_EDATA, "%s: bad pattern at offset %zu: %s",
				 wg_yaml_where(n, where, sizeof(where)), off, msg);
	wg_regex **slot = wg_vec_push(&rs->regexes);
	if (!slot) {
		wg_regex_free(*out);
		return WG_ENOMEM;
	}
	*slot = *out;
	return WG_OK;
}

/* The C kinds that became check: match over a fact list: a rule file naming one still loads,
 * as that fact list under that name (its pattern list `list`, if any, is the match list). */
static const struct legacy {
	const char *name, *facts, *list;
} legacy[] = {
	{"elf-sections-lie", "sections_lie", NULL},
	{"unsafe-member", "unsafe_members", NULL},
	{"unreadable", "unreadable", NULL},
	{"imports-partial", "python_partial", NULL},
	{"record-missing", "record_missing", NULL},
	{"record-absent", "record_absent", NULL},
	{"ld-not-read", "ld_not_read", NULL},
	{"ld-python-assumed", "ld_python_assumed", NULL},
	{"ld-missing-version", "ld_missing_version", NULL},
	{"ld-missing-library", "ld_missing_library", "libraries"},
};

static const struct legacy *legacy_find(const char *name)
{
	for (size_t i = 0; name && i < WG_ARRAY_LEN(legacy); i++)
		if (!strcmp(legacy[i].name, name))
			return &legacy[i];
	return NULL;
}

static bool has_match_list(const wg_rule *r)
{
	for (size_t j = 0; j < r->nlists; j++)
		if (!strcmp(r->lists[j].name, "match"))
			return true;
	return false;
}

static int load_patterns(wg_ruleset *rs, wg_rule *r, const wg_yaml_node *rule, wg_err *err)
{
	char where[512];
	int rc;
	const wg_yaml_node *pats = wg_yaml_get(rule, "patterns");
	const wg_yaml_node *ex = wg_yaml_get(rule, "examples");
	if (pats && !wg_yaml_is_map(pats))
		return wg_seterr(err, WG_EDATA, "%s: 'patterns' must map list names to lists of "
				 "PCRE2 patterns", wg_yaml_where(pats, where, sizeof(where)));
	if (ex && !wg_yaml_is_map(ex))
		return wg_seterr(err, WG_EDATA, "%s: 'examples' must map pattern list names to "
				 "{match: [...], no_match: [...]}", wg_yaml_where(ex, where, sizeof(where)));
	r->nlists = wg_yaml_len(pats);
	r->lists = wg_arena_alloc(&rs->arena, (r->nlists + 1) * sizeof(*r->lists));
	if (!r->lists)
		return WG_ENOMEM;
	for (size_t i = 0; i < r->nlists; i++) {
		wg_pattern_list *l = &r->lists[i];
		memset(l, 0, sizeof(*l));
		l->name = wg_arena_strdup(&rs->arena, wg_yaml_key(pats, i));
		const wg_yaml_node *seq = wg_yaml_value(pats, i);
		if (!wg_yaml_is_seq(seq) || !wg_yaml_len(seq))
			return wg_seterr(err, WG_EDATA, "%s: pattern list '%s' must be a non-empty list",
					 wg_yaml_where(seq, where, sizeof(where)), l->name);
		l->n = wg_yaml_len(seq);
		l->re = wg_arena_alloc(&rs->arena, l->n * sizeof(*l->re));
		if (!l->re)
			return WG_ENOMEM;
		for (size_t j = 0; j < l->n; j++) {
			const wg_yaml_node *it = wg_yaml_item(seq, j);
			if (!wg_yaml_scalar(it))
				return wg_seterr(err, WG_EDATA, "%s: a pattern must be a string",
						 wg_yaml_where(it, where, sizeof(where)));
			if ((rc = compile(rs, &l->re[j], wg_yaml_scalar(it), it, err)) < 0)
				return rc;
		}
		const wg_yaml_node *e = wg_yaml_get(ex, l->name);
		if (e && !wg_yaml_is_map(e))
			return wg_seterr(err, WG_EDATA, "%s: examples of '%s' must be {match: [...], "
					 "no_match: [...]}", wg_yaml_where(e, where, sizeof(where)), l->name);
		if ((rc = str_list(&l->match, &l->nmatch, &rs->arena, wg_yaml_get(e, "match"), "match",
				   err)) < 0 ||
		    (rc = str_list(&l->no_match, &l->nno_match, &rs->arena, wg_yaml_get(e, "no_match"),
				   "no_match", err)) < 0)
			return rc;
		if (!l->nmatch || !l->nno_match)
			return wg_seterr(err, WG_EDATA, "%s: rule %s: pattern list '%s' needs examples "
					 "that must match and that must not (examples: {%s: {match: [...], "
					 "no_match: [...]}})", wg_yaml_where(seq, where, sizeof(where)), r->id,
					 l->name, l->name);
	}
	for (size_t i = 0; i < wg_yaml_len(ex); i++) {
		const char *name = wg_yaml_key(ex, i);
		bool found = false;
		for (size_t j = 0; j < r->nlists && !found; j++)
			found = !strcmp(r->lists[j].name, name);
		if (!found)
			return wg_seterr(err, WG_EDATA, "%s: examples for '%s', which is no pattern list",
					 wg_yaml_where(wg_yaml_value(ex, i), where, sizeof(where)), name);
	}
	const struct legacy *lg = r->facts ? legacy_find(r->check) : NULL;
	for (size_t j = 0; lg && lg->list && j < r->nlists; j++)
		if (!strcmp(r->lists[j].name, lg->list))
			r->lists[j].name = "match";
	if (lg && lg->list && !has_match_list(r))
		return wg_seterr(err, WG_EDATA, "%s: rule %s: check '%s' needs a pattern list '%s'",
				 wg_yaml_where(pats ? pats : rule, where, sizeof(where)), r->id,
				 lg->name, lg->list);
	/* check: match reads its `match` and `unless` lists: another name is a typo that would
	 * select every item. */
	for (size_t j = 0; r->facts && j < r->nlists; j++)
		if (strcmp(r->lists[j].name, "match") && strcmp(r->lists[j].name, "unless"))
			return wg_seterr(err, WG_EDATA, "%s: rule %s: check: match's pattern lists are "
					 "'match' and 'unless', not '%s'", wg_yaml_where(pats, where,
					 sizeof(where)), r->id, r->lists[j].name);
	for (const char *const *need = r->kind->patterns; need && *need; need++) {
		bool found = false;
		for (size_t j = 0; j < r->nlists && !found; j++)
			found = !strcmp(r->lists[j].name, *need);
		if (!found)
			return wg_seterr(err, WG_EDATA, "%s: rule %s: check '%s' needs a pattern list "
					 "'%s'", wg_yaml_where(pats ? pats : rule, where, sizeof(where)), r->id,
					 r->kind->name, *need);
	}
	return WG_OK;
}

/* "error" | "warning" | "info" (and "off" where allowed) -> severity, -1 for off. */
static int parse_severity(const char *s, bool off_ok)
{
	if (!s)
		return -2;
	if (!strcmp(s, "error"))
		return WG_SEV_ERROR;
	if (!strcmp(s, "warning"))
		return WG_SEV_WARNING;
	if (!strcmp(s, "info"))
		return WG_SEV_INFO;
	if (off_ok && !strcmp(s, "off"))
		return -1;
	return -2;
}

/*
 * The rule's severity in each profile: `severity: S` applies in both; `profiles: {install: S,
 * publish: S|off}` says it per profile (a profile left out is off); both given: profiles win
 * and severity is the one shown where no profile is named.
 */
static int load_severity(wg_rule *r, const wg_yaml_node *n, const char *id, const char *sev,
			 const wg_yaml_node *profiles, wg_err *err)
{
	char where[512];
	int def = sev ? parse_severity(sev, false) : -1;
	if (sev && def < 0)
		return wg_seterr(err, WG_EDATA, "%s: rule %s: severity must be error, warning or "
				 "info, not '%s'", wg_yaml_where(wg_yaml_get(n, "severity"), where,
								  sizeof(where)), id, sev);
	r->sev[WG_PROFILE_INSTALL] = r->sev[WG_PROFILE_PUBLISH] = def;
	if (profiles) {
		if (!wg_yaml_is_map(profiles) || !wg_yaml_len(profiles))
			return wg_seterr(err, WG_EDATA, "%s: rule %s: 'profiles' must map install and/or "
					 "publish to error, warning, info or off",
					 wg_yaml_where(profiles, where, sizeof(where)), id);
		r->sev[WG_PROFILE_INSTALL] = r->sev[WG_PROFILE_PUBLISH] = -1;
		for (size_t i = 0; i < wg_yaml_len(profiles); i++) {
			const char *k = wg_yaml_key(profiles, i);
			const char *v = wg_yaml_scalar(wg_yaml_value(profiles, i));
			int p = !k ? -1 : !strcmp(k, "install") ? WG_PROFILE_INSTALL
				  : !strcmp(k, "publish") ? WG_PROFILE_PUBLISH : -1;
			if (p < 0)
				return wg_seterr(err, WG_EDATA, "%s: rule %s: unknown profile '%s' (known: "
						 "install, publish)", wg_yaml_where(wg_yaml_value(profiles, i),
						 where, sizeof(where)), id, k ? k : "?");
			int s = parse_severity(v, true);
			if (s < -1)
				return wg_seterr(err, WG_EDATA, "%s: rule %s: profile %s: severity must be "
						 "error, warning, info or off, not '%s'",
						 wg_yaml_where(wg_yaml_value(profiles, i), where, sizeof(where)),
						 id, k, v ? v : "(not a scalar)");
			r->sev[p] = s;
		}
	}
	/* What is shown where no profile is named: the given severity, else install's, else
	 * publish's. */
	r->severity = (wg_severity)(def >= 0 ? def
				    : r->sev[WG_PROFILE_INSTALL] >= 0 ? r->sev[WG_PROFILE_INSTALL]
				    : r->sev[WG_PROFILE_PUBLISH] >= 0 ? r->sev[WG_PROFILE_PUBLISH]
				    : WG_SEV_INFO);
	return WG_OK;
}

/* check: match's `facts` (a fact list it knows) and `condition` (any, all, none); other kinds
 * take neither. */
static int load_match(wg_ruleset *rs, wg_rule *r, const wg_yaml_node *n, wg_err *err)
{
	char where[512];
	const wg_yaml_node *fn = wg_yaml_get(n, "facts"), *cn = wg_yaml_get(n, "condition");
	const wg_yaml_node *nn = wg_yaml_get(n, "name");
	const char *facts = wg_yaml_scalar(fn), *cond = wg_yaml_scalar(cn), *name = wg_yaml_scalar(nn);
	bool match = !strcmp(r->kind->name, "match") && !r->facts;
	if (r->facts) { /* a legacy kind's name (legacy[]): nothing of match's to give */
		if (fn || cn || nn)
			return wg_seterr(err, WG_EDATA, "%s: rule %s: '%s' is for check: match only",
					 wg_yaml_where(fn ? fn : cn ? cn : nn, where, sizeof(where)), r->id,
					 fn ? "facts" : cn ? "condition" : "name");
		return wg_match_fact_vars(r->facts, &r->needs) ? WG_OK : WG_EINVAL;
	}
	if (!match && (fn || cn || nn))
		return wg_seterr(err, WG_EDATA, "%s: rule %s: '%s' is for check: match only",
				 wg_yaml_where(fn ? fn : cn ? cn : nn, where, sizeof(where)), r->id,
				 fn ? "facts" : cn ? "condition" : "name");
	if (!match)
		return WG_OK;
	if (!facts || !wg_match_fact_vars(facts, &r->needs)) {
		char names[1024];
		wg_match_fact_names(names, sizeof(names));
		return wg_seterr(err, WG_EDATA, "%s: rule %s: check: match needs 'facts', one of: %s%s%s",
				 wg_yaml_where(fn ? fn : n, where, sizeof(where)), r->id, names,
				 facts ? "; not " : "", facts ? facts : "");
	}
	if (cn && (!cond || (strcmp(cond, "any") && strcmp(cond, "all") && strcmp(cond, "none"))))
		return wg_seterr(err, WG_EDATA, "%s: rule %s: condition must be any, all or none",
				 wg_yaml_where(cn, where, sizeof(where)), r->id);
	/* The rule's name where a kind's would be (--disable NAME, --list-rules, SARIF): a rule
	 * that was a C kind keeps that kind's name. */
	bool name_ok = name && *name && strlen(name) < 64;
	for (const char *p = name; name_ok && *p; p++)
		name_ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-';
	if (nn && !name_ok)
		return wg_seterr(err, WG_EDATA, "%s: rule %s: 'name' must use a-z, 0-9 and '-' (at "
				 "most 63)", wg_yaml_where(nn, where, sizeof(where)), r->id);
	if (name && !(r->check = wg_arena_strdup(&rs->arena, name)))
		return WG_ENOMEM;
	r->facts = wg_arena_strdup(&rs->arena, facts);
	r->condition = cond ? wg_arena_strdup(&rs->arena, cond) : NULL;
	return r->facts && (!cond || r->condition) ? WG_OK : WG_ENOMEM;
}

/* An optional text of the rule (why, looks_at, example's fails and passes): a non-empty string
 * when given; required of a shipped rule. */
static int explain_text(const char **out, wg_arena *a, const wg_yaml_node *parent, const char *key,
			const char *what, const char *id, bool required, wg_err *err)
{
	/* a key of the rule (required of shipped rules), or of its example (required there) */
	const char *who = wg_yaml_get(parent, "id") ? "a shipped rule needs" : "'example' needs";
	char where[512];
	const wg_yaml_node *v = wg_yaml_get(parent, key);
	const char *s = wg_yaml_scalar(v);
	*out = NULL;
	if (!v && !required)
		return WG_OK;
	if (!s || !*s)
		return wg_seterr(err, WG_EDATA, "%s: rule %s: %s '%s' (a non-empty string: %s)",
				 wg_yaml_where(v ? v : parent, where, sizeof(where)), id,
				 v ? "needs a text in" : who, key, what);
	return (*out = wg_arena_strdup(a, s)) ? WG_OK : WG_ENOMEM;
}

/* What `wheelgate explain` says beyond title, message and fix: `why` (what breaks, with the
 * error users see), `looks_at` (the facts the rule reads) and `example: {fails, passes}`. */
static int load_explain(wg_ruleset *rs, wg_rule *r, const wg_yaml_node *n, bool shipped,
			wg_err *err)
{
	char where[512];
	int rc;
	const wg_yaml_node *ex = wg_yaml_get(n, "example");
	if (ex && !wg_yaml_is_map(ex))
		return wg_seterr(err, WG_EDATA, "%s: rule %s: 'example' must be {fails: TEXT, passes: "
				 "TEXT}", wg_yaml_where(ex, where, sizeof(where)), r->id);
	for (size_t i = 0; ex && i < wg_yaml_len(ex); i++) {
		const char *k = wg_yaml_key(ex, i);
		if (!k || (strcmp(k, "fails") && strcmp(k, "passes")))
			return wg_seterr(err, WG_EDATA, "%s: rule %s: unknown example field '%s' (known: "
					 "fails, passes)", wg_yaml_where(wg_yaml_value(ex, i), where,
					 sizeof(where)), r->id, k ? k : "?");
	}
	if (!ex && shipped)
		return wg_seterr(err, WG_EDATA, "%s: rule %s: a shipped rule needs 'example: {fails: "
				 "TEXT, passes: TEXT}'", wg_yaml_where(n, where, sizeof(where)), r->id);
	if ((rc = explain_text(&r->why, &rs->arena, n, "why", "what breaks and the error users see",
			       r->id, shipped, err)) < 0 ||
	    (rc = explain_text(&r->looks_at, &rs->arena, n, "looks_at", "the facts the rule reads",
			       r->id, shipped, err)) < 0 ||
	    (ex && (rc = explain_text(&r->ex_fails, &rs->arena, ex, "fails", "an input the rule "
				      "flags", r->id, true, err)) < 0) ||
	    (ex && (rc = explain_text(&r->ex_passes, &rs->arena, ex, "passes", "an input it lets "
				      "pass", r->id, true, err)) < 0))
		return rc;
	return WG_OK;
}

int wg_rulefile_load_rule(wg_ruleset *rs, const wg_yaml_node *n, const char *file, bool shipped,
			  wg_err *err)
{
	char where[512];
	int rc = WG_OK;
	if (!wg_yaml_is_map(n))
		return wg_seterr(err, WG_EDATA, "%s: a rule must be a mapping",
				 wg_yaml_where(n, where, sizeof(where)));
	static const char *const known[] = {"id", "check", "severity", "profiles", "title",
					    "message", "fix", "patterns", "examples", "scope", "when",
					    "enabled", "security", "facts", "condition", "name", "why",
					    "looks_at", "example", NULL};
	for (size_t i = 0; i < wg_yaml_len(n); i++) {
		const char *k = wg_yaml_key(n, i);
		if (!k || !in_list(known, k, strlen(k)))
			return wg_seterr(err, WG_EDATA, "%s: unknown rule field '%s' (known: id, check, "
					 "severity, profiles, title, message, fix, patterns, examples, "
					 "scope, when, enabled, security, facts, condition, name, why, "
					 "looks_at, example)",
					 wg_yaml_where(wg_yaml_value(n, i), where, sizeof(where)), k ? k : "?");
	}
	wg_rule r;
	memset(&r, 0, sizeof(r));
	const char *id = req_str(n, "id", err, &rc), *check = id ? req_str(n, "check", err, &rc) : NULL;
	/* The severity: one for every profile (severity:), or per profile (profiles:). */
	const wg_yaml_node *profiles = check ? wg_yaml_get(n, "profiles") : NULL;
	const char *sev = check && !profiles ? req_str(n, "severity", err, &rc)
			  : wg_yaml_scalar(wg_yaml_get(n, "severity"));
	if (check && !profiles && !sev)
		return rc;
	const char *title = check ? req_str(n, "title", err, &rc) : NULL;
	const char *msg = title ? req_str(n, "message", err, &rc) : NULL;
	const char *fix = msg ? req_str(n, "fix", err, &rc) : NULL;
	if (!fix)
		return rc;
	/* Ids look like WG-ABI-001 (users may use their own prefix: ACME-GPU-7). */
	for (const char *p = id; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			return wg_seterr(err, WG_EDATA, "%s: rule id '%s' must use A-Z, 0-9, '-' and '_'",
					 wg_yaml_where(wg_yaml_get(n, "id"), where, sizeof(where)), id);
	/* The kinds that became check: match data keep their names for rule files. */
	const struct legacy *lg = legacy_find(check);
	if (lg) {
		r.facts = lg->facts;
		check = "match";
	}
	if (!(r.kind = wg_check_kind_find(check)))
		return wg_seterr(err, WG_EDATA, "%s: rule %s: unknown check '%s'",
				 wg_yaml_where(wg_yaml_get(n, "check"), where, sizeof(where)), id, check);
	if ((rc = load_severity(&r, n, id, sev, profiles, err)) < 0)
		return rc;
	const char *en = wg_yaml_scalar(wg_yaml_get(n, "enabled"));
	r.enabled = !en || !strcmp(en, "true");
	if (en && strcmp(en, "true") && strcmp(en, "false"))
		return wg_seterr(err, WG_EDATA, "%s: 'enabled' must be true or false",
				 wg_yaml_where(wg_yaml_get(n, "enabled"), where, sizeof(where)));
	const char *sec = wg_yaml_scalar(wg_yaml_get(n, "security"));
	r.security = sec && !strcmp(sec, "true");
	if ((sec && strcmp(sec, "true") && strcmp(sec, "false")) ||
	    (!sec && wg_yaml_get(n, "security")))
		return wg_seterr(err, WG_EDATA, "%s: 'security' must be true or false",
				 wg_yaml_where(wg_yaml_get(n, "security"), where, sizeof(where)));
	r.id = wg_arena_strdup(&rs->arena, id);
	r.check = lg ? lg->name : r.kind->name;
	r.title = wg_arena_strdup(&rs->arena, title);
	r.message = wg_arena_strdup(&rs->arena, msg);
	r.fix = wg_arena_strdup(&rs->arena, fix);
	(void)file;
	r.source = wg_arena_strdup(&rs->arena, wg_yaml_where(n, where, sizeof(where)));
	if ((rc = load_match(rs, &r, n, err)) < 0 ||
	    (rc = load_explain(rs, &r, n, shipped, err)) < 0)
		return rc;
	if ((rc = check_placeholders(r.kind, r.facts, msg, wg_yaml_get(n, "message"), "message",
				     err)) < 0 ||
	    (rc = check_placeholders(r.kind, r.facts, fix, wg_yaml_get(n, "fix"), "fix", err)) < 0 ||
	    (rc = check_placeholders(r.kind, r.facts, title, wg_yaml_get(n, "title"), "title",
				     err)) < 0)
		return rc;
	const wg_yaml_node *scope = wg_yaml_get(n, "scope");
	if (scope) {
		if (!wg_yaml_is_map(scope))
			return wg_seterr(err, WG_EDATA, "%s: 'scope' must be {objects: PATTERN, members: "
					 "PATTERN}", wg_yaml_where(scope, where, sizeof(where)));
		for (size_t i = 0; i < wg_yaml_len(scope); i++) {
			const char *k = wg_yaml_key(scope, i);
			const wg_yaml_node *v = wg_yaml_value(scope, i);
			wg_regex **dst = !strcmp(k, "objects") ? &r.scope_objects
					 : !strcmp(k, "members") ? &r.scope_members : NULL;
			if (!dst || !wg_yaml_scalar(v))
				return wg_seterr(err, WG_EDATA, "%s: scope '%s': expected objects or members "
						 "with a pattern", wg_yaml_where(v, where, sizeof(where)), k);
			if ((rc = compile(rs, dst, wg_yaml_scalar(v), v, err)) < 0)
				return rc;
		}
	}
	const wg_yaml_node *when = wg_yaml_get(n, "when");
	if (when) {
		if (!wg_yaml_is_map(when))
			return wg_seterr(err, WG_EDATA, "%s: 'when' must map target facts (python, torch, "
					 "cuda, cxx11abi, gpu) or input to 'known' or a value",
					 wg_yaml_where(when, where, sizeof(where)));
		r.nwhen = wg_yaml_len(when);
		r.when = wg_arena_alloc(&rs->arena, (r.nwhen + 1) * sizeof(*r.when));
		if (!r.when)
			return WG_ENOMEM;
		for (size_t i = 0; i < r.nwhen; i++) {
			const char *k = wg_yaml_key(when, i), *v = wg_yaml_scalar(wg_yaml_value(when, i));
			if (!k || !in_list(target_keys, k, strlen(k)) || !v)
				return wg_seterr(err, WG_EDATA, "%s: when: '%s' is not a target fact (python, "
						 "torch, cuda, cxx11abi, gpu) or input with a value",
						 wg_yaml_where(wg_yaml_value(when, i), where, sizeof(where)),
						 k ? k : "?");
			if (!strcmp(k, "input") && !in_list(input_kinds, v, strlen(v)))
				return wg_seterr(err, WG_EDATA, "%s: when: input '%s' is none of wheel, "
						 "installed, object, directory",
						 wg_yaml_where(wg_yaml_value(when, i), where, sizeof(where)), v);
			r.when[i].key = wg_arena_strdup(&rs->arena, k);
			r.when[i].value = wg_arena_strdup(&rs->arena, v);
		}
	}
	if ((rc = load_patterns(rs, &r, n, err)) < 0)
		return rc;
	/* A rule with an id already loaded replaces it (user rules override shipped ones). */
	for (size_t i = 0; i < rs->rules.len; i++) {
		wg_rule *old = wg_vec_at(&rs->rules, i);
		if (!strcmp(old->id, r.id)) {
			*old = r;
			return WG_OK;
		}
	}
	wg_rule *slot = wg_vec_push(&rs->rules);
	if (!slot)
		return WG_ENOMEM;
	*slot = r;
	return WG_OK;
}

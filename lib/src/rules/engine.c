/*
 * Running rules: which rules apply to a target and to the input, the dispatch to the check
 * kinds (checks/list.h), and the report they fill. What the kinds call to emit findings with
 * their message and fix templates expanded: engine_emit.c; the helpers they share:
 * engine_checks.c; the report read through the public accessors: engine_report.c.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_RULES /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules/checks/check.h"

#define WG_CHECK(n) extern const wg_check_kind wg_check_##n;
#include "checks/list.h"
#undef WG_CHECK

static const wg_check_kind *const kinds[] = {
#define WG_CHECK(n) &wg_check_##n,
#include "checks/list.h"
#undef WG_CHECK
};

const wg_check_kind *wg_check_kind_find(const char *name)
{
	for (size_t i = 0; i < WG_ARRAY_LEN(kinds); i++)
		if (!strcmp(kinds[i]->name, name))
			return kinds[i];
	return NULL;
}


/* The facts a rule needs, what each is called, and what gives it: `what` when nothing was
 * given, `env` when an environment was (its own words, never suggesting --env again). */
static const struct {
	unsigned fact;
	const char *key, *what, *env;
} facts[] = {
	{WG_FACT_PYTHON, "python", "no target Python: --target python= or --env",
	 "no target Python (the environment did not say): --target python="},
	{WG_FACT_TORCH, "torch", "no target torch: --target torch= or --env",
	 "no target torch (none in the environment): --target torch="},
	{WG_FACT_CUDA, "cuda", "no target CUDA: --target cuda= or --env",
	 "no target CUDA (no CUDA torch in the environment): --target cuda="},
	{WG_FACT_CXX11ABI, "cxx11abi", "no target torch C++ ABI: --target cxx11abi= or --env",
	 "no target torch C++ ABI (no torch in the environment): --target cxx11abi="},
	{WG_FACT_GPU, "gpu", "no target GPU: --gpu", "no target GPU: --gpu"},
	{WG_FACT_ENV, "env", "no Python environment to load the objects in: --env", NULL},
	{WG_FACT_FILENAME, "filename",
	 "no wheel filename for its name, version and tags: --stdin-filename NAME for stdin", NULL},
	{WG_FACT_INSTALL, "install",
	 "not judged as an install into the environment (check --env, the pip gate): what it "
	 "would break among the installed distributions is not known",
	 "not part of the install judged: what it would break among the installed "
	 "distributions is not known"},
};

static unsigned fact_of_key(const char *k)
{
	for (size_t i = 0; i < WG_ARRAY_LEN(facts); i++)
		if (!strcmp(facts[i].key, k))
			return facts[i].fact;
	return 0;
}

/* The facts of what the rule needs that are unknown for this target and input: its `when`
 * keys and its kind's needs. The filename is a fact of wheels only. */
static unsigned lacking(const wg_rule *r, const wg_target *t, const wg_scan *scan)
{
	unsigned need = r->kind->needs | r->needs, known = 0;
	for (size_t i = 0; i < r->nwhen; i++)
		need |= fact_of_key(r->when[i].key);
	known |= t->python_major ? WG_FACT_PYTHON : 0;
	known |= t->torch[0] ? WG_FACT_TORCH : 0;
	known |= t->cuda_major ? WG_FACT_CUDA : 0;
	known |= t->cxx11abi >= 0 ? WG_FACT_CXX11ABI : 0;
	known |= t->ngpus ? WG_FACT_GPU : 0;
	known |= t->env ? WG_FACT_ENV : 0;
	/* A wheel's filename is known when it parses; an installed distribution keeps none;
	 * a loose object has no wheel facts for those rules to read. */
	known |= scan->kind == WG_SCAN_INSTALLED ? 0
		 : scan->kind != WG_SCAN_WHEEL || !scan->fields[WG_WHEEL_FILENAME_ERROR]
			 ? WG_FACT_FILENAME : 0;
	/* What an install breaks: known for a wheel of the environment's install plan; other
	 * inputs replace nothing. */
	known |= scan->kind != WG_SCAN_WHEEL || (t->env && wg_plan_has(t->env, scan->path))
			 ? WG_FACT_INSTALL : 0;
	/* Without an environment, that is the fact missing (an install needs one). */
	if (!t->env)
		known |= WG_FACT_INSTALL;
	return need & ~known;
}

static int add_not_applied(wg_report *r, const wg_rule *rule, const wg_target *t,
			   const wg_scan *scan, unsigned lacks)
{
	wg_buf keys = {0}, what = {0};
	int rc = WG_OK;
	/* --gpu auto that found none: not "give --gpu", but what the machine said. */
	char none[320];
	snprintf(none, sizeof(none), "no GPU found by --gpu auto (%.255s)", t->gpu_auto_none);
	for (size_t i = 0; i < WG_ARRAY_LEN(facts) && rc == WG_OK; i++) {
		if (!(lacks & facts[i].fact))
			continue;
		const char *w = facts[i].fact == WG_FACT_GPU && t->gpu_auto && t->gpu_auto_none[0]
					? none : t->env && facts[i].env ? facts[i].env : facts[i].what;
		/* An installed distribution keeps no filename, and nothing can give it one. */
		if (facts[i].fact == WG_FACT_FILENAME && scan->kind == WG_SCAN_INSTALLED)
			w = "an installed distribution keeps no wheel filename (its name, version and "
			    "tags)";
		/* A wheel file (not stdin) whose name does not parse: its name is the problem. */
		if (facts[i].fact == WG_FACT_FILENAME && scan->kind == WG_SCAN_WHEEL &&
		    scan->fields[WG_WHEEL_FILENAME_ERROR] && scan->path && strcmp(scan->path, "-") &&
		    strcmp(scan->path, "<stdin>"))
			w = "its filename does not parse as NAME-VERSION-TAGS.whl: no name, version "
			    "and tags";
		if (keys.len && (rc = wg_buf_append(&keys, ",", 1)) == WG_OK)
			rc = wg_buf_append(&what, " and ", 5);
		if (rc == WG_OK && (rc = wg_buf_append(&keys, facts[i].key, strlen(facts[i].key))) == WG_OK)
			rc = wg_buf_append(&what, w, strlen(w));
	}
	wg_not_applied *na = rc == WG_OK ? wg_vec_push(&r->not_applied) : NULL;
	if (na) {
		na->rule = rule->id;
		na->lacks = wg_arena_strdup(&r->arena, keys.s ? keys.s : "");
		na->message = wg_arena_strdup(&r->arena, what.s ? what.s : "");
	}
	wg_buf_free(&keys);
	wg_buf_free(&what);
	return na && na->lacks && na->message ? WG_OK : WG_ENOMEM;
}

/* What `when: {input: ...}` names each kind of input. */
static const char *input_kind_name(wg_scan_kind k)
{
	return k == WG_SCAN_WHEEL ? "wheel" : k == WG_SCAN_INSTALLED ? "installed"
	       : k == WG_SCAN_OBJECT ? "object" : k == WG_SCAN_DIRECTORY ? "directory" : "";
}

/* Whether the rule's `when: {input: ...}` admits the input. Its kind is always known: a rule
 * for another kind of input is not part of this input's question, neither run nor "not
 * applied" (whatever else it lacks), as WG-REC-001 for a wheel and WG-REC-004 for an
 * installed copy. */
static bool for_input(const wg_rule *r, const wg_scan *scan)
{
	for (size_t i = 0; i < r->nwhen; i++)
		if (!strcmp(r->when[i].key, "input") && strcmp(r->when[i].value, "known") &&
		    strcmp(r->when[i].value, input_kind_name(scan->kind)))
			return false;
	return true;
}

/* Whether the target satisfies the rule's `when` conditions (input: for_input's). */
static bool applies(const wg_rule *r, const wg_target *t)
{
	for (size_t i = 0; i < r->nwhen; i++) {
		const char *k = r->when[i].key, *v = r->when[i].value;
		if (!strcmp(k, "input"))
			continue;
		bool known = !strcmp(k, "python") ? t->python_major != 0
			     : !strcmp(k, "torch") ? t->torch[0] != 0
			     : !strcmp(k, "cuda") ? t->cuda_major != 0
			     : !strcmp(k, "cxx11abi") ? t->cxx11abi >= 0
			     : !strcmp(k, "gpu") ? t->ngpus > 0 : false;
		if (!known)
			return false;
		if (!strcmp(v, "known"))
			continue;
		char have[64];
		if (!strcmp(k, "cxx11abi"))
			snprintf(have, sizeof(have), "%d", t->cxx11abi);
		else if (!strcmp(k, "python"))
			snprintf(have, sizeof(have), "%u.%u", t->python_major, t->python_minor);
		else if (!strcmp(k, "cuda"))
			snprintf(have, sizeof(have), "%u", t->cuda_major);
		else if (!strcmp(k, "torch"))
			snprintf(have, sizeof(have), "%s", t->torch);
		else
			snprintf(have, sizeof(have), "%zu", t->ngpus);
		if (strcmp(have, v))
			return false;
	}
	return true;
}

static int wg_check_impl(wg_report **out, wg_scanner *sc, const wg_ruleset *rs, const wg_scan *scan,
		    const wg_target *target)
{
	wg_target none;
	if (!out || !sc || !rs || !scan)
		return wg_null_arg("wg_check");
	*out = NULL;
	if (!target) {
		wg_target_clear(&none);
		target = &none;
	}
	wg_report *r = calloc(1, sizeof(*r));
	wg_rmatch *md = wg_rmatch_new();
	wg_analysis *an = NULL;
	if (!r || !md || wg_analysis_new(&an, scan, target) < 0) {
		free(r);
		wg_rmatch_free(md);
		return wg_seterr(&sc->err, WG_ENOMEM, "out of memory");
	}
	wg_vec_init(&r->findings, sizeof(wg_finding));
	wg_vec_init(&r->suppressed, sizeof(wg_finding));
	wg_vec_init(&r->not_applied, sizeof(wg_not_applied));
	wg_vec_init(&r->more, sizeof(wg_more));
	r->path = wg_arena_strdup(&r->arena, scan->path);
	r->profile = wg_target_profile(target);
	wg_check_ctx cc;
	memset(&cc, 0, sizeof(cc));
	cc.scan = scan;
	cc.target = target;
	cc.md = md;
	cc.report = r;
	cc.profile = r->profile;
	cc.an = an;
	cc.max_rule = sc->ctx->opts.max_rule_findings;
	cc.max_all = sc->ctx->opts.max_findings;
	wg_vec_init(&cc.ld_issues, sizeof(wg_ld_issue));
	int rc = WG_OK;
	for (size_t i = 0; i < rs->rules.len && rc == WG_OK; i++) {
		const wg_rule *rule = wg_vec_at(&rs->rules, i);
		/* Rules outside this profile are not part of the question asked. */
		if (!rule->enabled || rule->sev[r->profile] < 0 || !for_input(rule, scan))
			continue;
		unsigned lacks = lacking(rule, target, scan);
		if (lacks) {
			/* Not silently: the report says which rules a missing fact left out, where
			 * they could have found something (cause.c: a loader rule in an input with
			 * ELF objects, a GPU rule with CUDA code...). */
			unsigned about = 0;
			wg_rule_cause(rule, &about);
			if (!wg_input_holds(scan, about))
				continue;
			rc = add_not_applied(r, rule, target, scan, lacks);
			continue;
		}
		if (!applies(rule, target))
			continue;
		cc.rule = rule;
		cc.severity = (wg_severity)rule->sev[r->profile];
		cc.rule_kept = 0;
		cc.rule_more = SIZE_MAX;
		rc = rule->kind->run(&cc);
		if (rc == WG_OK && cc.limit_list) {
			rc = WG_ELIMIT;
			break;
		}
	}
	wg_rmatch_free(md);
	wg_vec_free(&cc.ld_issues);
	wg_analysis_free(an);
	if (rc == WG_OK)
		rc = wg_report_order(r, rs); /* causes first (cause.c) */
	if (rc == WG_ELIMIT && cc.limit_list) {
		wg_report_free(r);
		return wg_seterr(&sc->err, rc, "%s: rule %s not decided: its '%s' pattern ran past the "
				 "regular-expression match limit on \"%s\" (the rule: %s)", scan->path,
				 cc.rule->id, cc.limit_list, cc.limit_subject, cc.rule->source);
	}
	if (rc < 0) {
		wg_report_free(r);
		return wg_seterr(&sc->err, rc, "%s: checking failed: %s", scan->path, wg_strerror(rc));
	}
	*out = r;
	return WG_OK;
}

/* The scanner keeps the message; a failure also fills this thread's error record. */
WG_API int wg_check(wg_report **out, wg_scanner *sc, const wg_ruleset *rs, const wg_scan *scan,
		    const wg_target *target)
{
	if (sc)
		sc->err.msg[0] = '\0';
	return wg_error_from(sc ? &sc->err : NULL, wg_check_impl(out, sc, rs, scan, target));
}

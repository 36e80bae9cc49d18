/*
 * Running rules: which rules apply to a target, the dispatch to the check kinds
 * (checks/list.h), and findings with their message and fix templates expanded. Reports are
 * read through the public accessors.
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

void wg_vars_set(wg_vars *vs, const char *key, const char *value)
{
	for (int i = 0; i < vs->n; i++)
		if (!strcmp(vs->v[i].key, key)) {
			vs->v[i].value = value;
			return;
		}
	if (vs->n < WG_MAX_VARS) {
		vs->v[vs->n].key = key;
		vs->v[vs->n].value = value;
		vs->n++;
	}
}

void wg_abi_name_for(char *buf, size_t n, int cxx11abi)
{
	snprintf(buf, n, "%s", cxx11abi == 1 ? "new (C++11, _GLIBCXX_USE_CXX11_ABI=1)"
			       : cxx11abi == 0 ? "old (pre-C++11, _GLIBCXX_USE_CXX11_ABI=0)" : "unknown");
}

char *wg_check_printf(wg_check_ctx *cc, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return wg_arena_strdup(&cc->report->arena, buf);
}

/* A match that hit PCRE2's limits: remembered (the first one) so that the check fails. */
static void limit_hit(wg_check_ctx *cc, const char *list, const char *subject, size_t len)
{
	if (cc->limit_list)
		return;
	cc->limit_list = list;
	size_t n = len < sizeof(cc->limit_subject) - 1 ? len : sizeof(cc->limit_subject) - 1;
	for (size_t i = 0; i < n; i++) /* only printable ASCII: the subject is input text */
		cc->limit_subject[i] = subject[i] >= 0x20 && subject[i] < 0x7f ? subject[i] : '?';
	cc->limit_subject[n] = '\0';
}

bool wg_rule_matches_n(wg_check_ctx *cc, const char *list, const char *subject, size_t len,
		       size_t *caps, int ncaps)
{
	for (size_t i = 0; i < cc->rule->nlists; i++) {
		const wg_pattern_list *l = &cc->rule->lists[i];
		if (strcmp(l->name, list))
			continue;
		for (size_t j = 0; j < l->n; j++) {
			int rc = wg_regex_match(l->re[j], cc->md, subject, len, caps, ncaps);
			if (rc == 1)
				return true;
			if (rc == WG_ELIMIT)
				limit_hit(cc, list, subject, len);
		}
	}
	return false;
}

bool wg_rule_matches(wg_check_ctx *cc, const char *list, const char *subject, size_t *caps,
		     int ncaps)
{
	return wg_rule_matches_n(cc, list, subject, strlen(subject), caps, ncaps);
}

bool wg_rule_in_scope(wg_check_ctx *cc, bool object, const char *subject)
{
	wg_regex *re = object ? cc->rule->scope_objects : cc->rule->scope_members;
	if (!re)
		return true;
	int rc = wg_regex_match(re, cc->md, subject, strlen(subject), NULL, 0);
	if (rc == WG_ELIMIT)
		limit_hit(cc, "scope", subject, strlen(subject));
	return rc == 1;
}

const wg_object *wg_check_next_object(wg_check_ctx *cc, size_t *i)
{
	const wg_vec *objects = &cc->scan->objects;
	while (*i < objects->len) {
		const wg_object *o = *(wg_object **)wg_vec_at(objects, (*i)++);
		if (!o->error && wg_rule_in_scope(cc, true, o->path))
			return o;
	}
	return NULL;
}

static const char *target_var(wg_check_ctx *cc, const char *key, char *buf, size_t n)
{
	const wg_target *t = cc->target;
	if (!strcmp(key, "target.python"))
		snprintf(buf, n, "%u.%u", t->python_major, t->python_minor);
	else if (!strcmp(key, "target.torch"))
		snprintf(buf, n, "%s", t->torch);
	else if (!strcmp(key, "target.cuda"))
		snprintf(buf, n, "%u.%u", t->cuda_major, t->cuda_minor);
	else if (!strcmp(key, "target.cxx11abi"))
		snprintf(buf, n, "%d", t->cxx11abi);
	else if (!strcmp(key, "target.abi"))
		wg_abi_name_for(buf, n, t->cxx11abi);
	else if (!strcmp(key, "target.gpus")) {
		size_t o = 0;
		buf[0] = '\0';
		for (size_t i = 0; i < t->ngpus && o < n; i++)
			o += (size_t)snprintf(buf + o, n - o, "%s%s%ssm_%u%u%s", i ? ", " : "",
					      t->gpus[i].name ? t->gpus[i].name : "",
					      t->gpus[i].name ? " (" : "", t->gpus[i].cc_major,
					      t->gpus[i].cc_minor, t->gpus[i].name ? ")" : "");
	} else
		return NULL;
	return buf;
}

/* Expands {key} from vars, the common keys and the target; {{ is a literal brace. */
static char *expand(wg_check_ctx *cc, const char *tpl, const wg_vars *vars)
{
	wg_buf b = {0};
	for (const char *p = tpl; *p;) {
		if (p[0] == '{' && p[1] == '{') {
			wg_buf_append(&b, "{", 1);
			p += 2;
			continue;
		}
		const char *e = p[0] == '{' ? strchr(p, '}') : NULL;
		if (!e) {
			const char *next = strchr(p + 1, '{');
			size_t n = next ? (size_t)(next - p) : strlen(p);
			wg_buf_append(&b, p, n);
			p += n;
			continue;
		}
		char key[64], tmp[512];
		snprintf(key, sizeof(key), "%.*s", (int)(e - p - 1), p + 1);
		const char *val = NULL;
		for (int i = 0; i < vars->n && !val; i++)
			if (!strcmp(vars->v[i].key, key))
				val = vars->v[i].value;
		if (!val && !strcmp(key, "wheel"))
			val = cc->scan->path;
		if (!val && !strcmp(key, "path"))
			val = cc->scan->path;
		if (!val && !strcmp(key, "rule"))
			val = cc->rule->id;
		if (!val)
			val = target_var(cc, key, tmp, sizeof(tmp));
		if (!val)
			val = "?";
		wg_buf_append(&b, val, strlen(val));
		p = e + 1;
	}
	char *s = wg_arena_strdup(&cc->report->arena, b.s ? b.s : "");
	wg_buf_free(&b);
	return s;
}

int wg_emit(wg_check_ctx *cc, const wg_vars *vars, const char *member, const char *symbol,
	    const char *file, unsigned line)
{
	return wg_emit_sev(cc, cc->severity, vars, member, symbol, file, line);
}

int wg_emit_count(wg_check_ctx *cc, wg_severity sev, size_t n)
{
	if (!n)
		return WG_OK;
	if (sev > cc->severity)
		sev = cc->severity;
	wg_vec *more = &cc->report->more;
	if (cc->rule_more == SIZE_MAX) {
		wg_more *m = wg_vec_push(more);
		if (!m)
			return WG_ENOMEM;
		memset(m, 0, sizeof(*m));
		m->rule = cc->rule->id;
		cc->rule_more = more->len - 1;
	}
	wg_more *m = wg_vec_at(more, cc->rule_more);
	m->count += n;
	m->severity[(unsigned)sev < 3 ? sev : 2] += n;
	return WG_OK;
}

bool wg_emit_counted(wg_check_ctx *cc, wg_severity sev, int *rc)
{
	*rc = WG_OK;
	if ((!cc->max_rule || cc->rule_kept < cc->max_rule) &&
	    (!cc->max_all || cc->report->findings.len < cc->max_all))
		return false;
	*rc = wg_emit_count(cc, sev, 1);
	return true;
}

int wg_emit_sev(wg_check_ctx *cc, wg_severity sev, const wg_vars *vars, const char *member,
		const char *symbol, const char *file, unsigned line)
{
	if (sev > cc->severity)
		sev = cc->severity;
	int rc;
	if (wg_emit_counted(cc, sev, &rc))
		return rc;
	cc->rule_kept++;
	wg_finding *f = wg_vec_push(&cc->report->findings);
	if (!f)
		return WG_ENOMEM;
	wg_arena *a = &cc->report->arena;
	f->rule = cc->rule->id;
	f->severity = sev;
	f->title = expand(cc, cc->rule->title, vars);
	f->message = expand(cc, cc->rule->message, vars);
	f->fix = expand(cc, cc->rule->fix, vars);
	f->path = cc->report->path;
	f->member = member ? wg_arena_strdup(a, member) : NULL;
	f->symbol = symbol ? wg_arena_strdup(a, symbol) : NULL;
	f->file = file ? wg_arena_strdup(a, file) : NULL;
	f->line = line;
	return f->message ? WG_OK : WG_ENOMEM;
}

/* The facts a rule needs, what each is called, and what gives it. */
static const struct {
	unsigned fact;
	const char *key, *what;
} facts[] = {
	{WG_FACT_PYTHON, "python", "no target Python: --target python= or --env"},
	{WG_FACT_TORCH, "torch", "no target torch: --target torch= or --env"},
	{WG_FACT_CUDA, "cuda", "no target CUDA: --target cuda= or --env"},
	{WG_FACT_CXX11ABI, "cxx11abi", "no target torch C++ ABI: --target cxx11abi= or --env"},
	{WG_FACT_GPU, "gpu", "no target GPU: --gpu"},
	{WG_FACT_ENV, "env", "no Python environment to load the objects in: --env"},
	{WG_FACT_FILENAME, "filename",
	 "no wheel filename for its name, version and tags: --stdin-filename NAME for stdin"},
	{WG_FACT_INSTALL, "install",
	 "not judged as an install into the environment (check --env, the pip gate): what it "
	 "would break among the installed distributions is not known"},
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
			   unsigned lacks)
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
					? none : facts[i].what;
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
			/* Not silently: the report says which rules a missing fact left out. */
			rc = add_not_applied(r, rule, target, lacks);
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

WG_API void wg_report_free(wg_report *r)
{
	if (!r)
		return;
	wg_vec_free(&r->findings);
	wg_vec_free(&r->suppressed);
	wg_vec_free(&r->not_applied);
	wg_vec_free(&r->more);
	wg_arena_free(&r->arena);
	free(r);
}

WG_API size_t wg_report_count(const wg_report *r)
{
	return r ? r->findings.len : 0;
}

WG_API int wg_report_remove(wg_report *r, size_t i)
{
	if (!r)
		return wg_null_arg("wg_report_remove");
	if (i >= r->findings.len)
		return WG_ENOTFOUND;
	char *base = r->findings.items;
	size_t sz = r->findings.item_size;
	memmove(base + i * sz, base + (i + 1) * sz, (r->findings.len - i - 1) * sz);
	r->findings.len--;
	return WG_OK;
}

WG_API int wg_report_suppress(wg_report *r, size_t i, const char *justification)
{
	if (!r)
		return wg_null_arg("wg_report_suppress");
	if (i >= r->findings.len)
		return WG_ENOTFOUND;
	wg_finding *to = wg_vec_push(&r->suppressed);
	const char *why = wg_arena_strdup(&r->arena, justification ? justification : "");
	if (!to || !why) {
		if (to)
			r->suppressed.len--;
		wg_set_error(WG_ERROR_CLASS_RULES, WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	*to = *(const wg_finding *)wg_vec_at(&r->findings, i);
	to->suppressed = why;
	return wg_report_remove(r, i);
}

WG_API size_t wg_report_suppressed_count(const wg_report *r)
{
	return r ? r->suppressed.len : 0;
}

static void finding_info(wg_finding_info *out, const wg_finding *f)
{
	out->rule = f->rule;
	out->title = f->title;
	out->message = f->message;
	out->fix = f->fix;
	out->severity = f->severity;
	out->path = f->path;
	out->member = f->member;
	out->symbol = f->symbol;
	out->file = f->file;
	out->line = f->line;
	if (out->version >= 2)
		out->suppressed = f->suppressed;
}

WG_API int wg_report_suppressed(wg_finding_info *out, const wg_report *r, size_t i)
{
	if (!out || !r)
		return wg_null_arg("wg_report_suppressed");
	if (wg_struct_version("wg_finding_info", out->version, WG_FINDING_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_finding *f = wg_vec_at(&r->suppressed, i);
	if (!f)
		return WG_ENOTFOUND;
	finding_info(out, f);
	return WG_OK;
}

WG_API int wg_report_finding(wg_finding_info *out, const wg_report *r, size_t i)
{
	if (!out || !r)
		return wg_null_arg("wg_report_finding");
	if (wg_struct_version("wg_finding_info", out->version, WG_FINDING_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_finding *f = wg_vec_at(&r->findings, i);
	if (!f)
		return WG_ENOTFOUND;
	finding_info(out, f);
	return WG_OK;
}

WG_API wg_profile wg_report_profile(const wg_report *r)
{
	return r ? r->profile : WG_PROFILE_PUBLISH;
}

WG_API size_t wg_report_not_applied_count(const wg_report *r)
{
	return r ? r->not_applied.len : 0;
}

WG_API int wg_report_not_applied(wg_not_applied_info *out, const wg_report *r, size_t i)
{
	if (!out || !r)
		return wg_null_arg("wg_report_not_applied");
	if (wg_struct_version("wg_not_applied_info", out->version, WG_NOT_APPLIED_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_not_applied *na = wg_vec_at(&r->not_applied, i);
	if (!na)
		return WG_ENOTFOUND;
	out->rule = na->rule;
	out->lacks = na->lacks;
	out->message = na->message;
	return WG_OK;
}

WG_API int wg_report_worst(const wg_report *r)
{
	int worst = -1;
	for (size_t i = 0; r && i < r->findings.len; i++) {
		const wg_finding *f = wg_vec_at(&r->findings, i);
		if ((int)f->severity > worst)
			worst = (int)f->severity;
	}
	/* Those counted past a bound weigh the same as those kept. */
	for (size_t i = 0; r && i < r->more.len; i++) {
		const wg_more *m = wg_vec_at(&r->more, i);
		for (int s = 2; s > worst; s--)
			if (m->severity[s])
				worst = s;
	}
	return worst;
}

const wg_more *wg_report_more_of(const wg_report *r, const char *rule)
{
	for (size_t i = 0; r && i < r->more.len; i++) {
		const wg_more *m = wg_vec_at(&r->more, i);
		if (!strcmp(m->rule, rule))
			return m;
	}
	return NULL;
}

WG_API size_t wg_report_more_count(const wg_report *r)
{
	return r ? r->more.len : 0;
}

WG_API int wg_report_more(wg_more_info *out, const wg_report *r, size_t i)
{
	if (!out || !r)
		return wg_null_arg("wg_report_more");
	if (wg_struct_version("wg_more_info", out->version, WG_MORE_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_more *m = wg_vec_at(&r->more, i);
	if (!m)
		return WG_ENOTFOUND;
	out->rule = m->rule;
	out->count = m->count;
	memcpy(out->severity, m->severity, sizeof(out->severity));
	return WG_OK;
}

WG_API int wg_report_more_remove(wg_report *r, size_t i)
{
	if (!r)
		return wg_null_arg("wg_report_more_remove");
	if (i >= r->more.len)
		return WG_ENOTFOUND;
	char *base = r->more.items;
	size_t sz = r->more.item_size;
	memmove(base + i * sz, base + (i + 1) * sz, (r->more.len - i - 1) * sz);
	r->more.len--;
	return WG_OK;
}

WG_API size_t wg_report_total(const wg_report *r)
{
	size_t n = r ? r->findings.len : 0;
	for (size_t i = 0; r && i < r->more.len; i++)
		n += ((const wg_more *)wg_vec_at(&r->more, i))->count;
	return n;
}

/* ---- helpers for the check kinds ---- */

const char *wg_object_member(const wg_scan *scan, const wg_object *o)
{
	(void)scan;
	return o->path;
}

static bool pep_word(const char *s, const char *punct)
{
	size_t n = strlen(s);
	if (!n || n > 200)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr(punct, *s)))
			return false;
	return true;
}

const char *wg_check_distribution(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const char *n = s->fields[WG_WHEEL_META_NAME], *v = s->fields[WG_WHEEL_META_VERSION];
	if (!n)
		n = s->fields[WG_WHEEL_NAME];
	if (!v)
		v = s->fields[WG_WHEEL_VERSION];
	/* It is text a reader may paste into a shell: only a name and a version as PEP 508 and
	 * PEP 440 spell them, never quotes or spaces from a hostile METADATA. */
	if (!n || !pep_word(n, "._-") || (v && !pep_word(v, "._+!-")))
		return "NAME==VERSION";
	return v ? wg_arena_printf(&cc->report->arena, "%s==%s", n, v) : n;
}

const char *wg_check_member_file(wg_check_ctx *cc, const char *member)
{
	const wg_scan *s = cc->scan;
	if (s->kind != WG_SCAN_INSTALLED)
		return member;
	/* The site directory is the one holding the .dist-info (input/installed.c). */
	size_t n = strlen(s->path);
	while (n > 1 && s->path[n - 1] == '/')
		n--;
	size_t site = n;
	while (site && s->path[site - 1] != '/')
		site--;
	if (!site)
		return member; /* `x-1.0.dist-info`: the site is the current directory */
	site = site > 1 ? site - 1 : 1; /* without its last '/', but "/" stays */
	return wg_arena_printf(&cc->report->arena, "%.*s%s%s", (int)site, s->path,
			       s->path[site - 1] == '/' ? "" : "/", member);
}

/* Whether o needs a copy of torch's libraries of its own rather than the target's: a
 * library of the input named by a DT_NEEDED entry (its SONAME, else its file name) that
 * defines c10/at/torch/caffe2 symbols, as auditwheel repair grafts them renamed
 * (libc10-1a2b3c4d.so); or, outside the input, a library named like one of torch's that the
 * rule's `libraries` do not match, whose symbols cannot be seen. */
static bool needs_own_torch(const wg_scan *scan, const wg_object *o)
{
	for (size_t j = 0; j < o->needed.n; j++) {
		const char *n = o->needed.v[j];
		bool in_input = false;
		for (size_t i = 0; i < scan->objects.len; i++) {
			const wg_object *p = *(wg_object **)wg_vec_at(&scan->objects, i);
			const char *slash = strrchr(p->path, '/');
			if (p == o || p->error ||
			    strcmp(p->soname ? p->soname : slash ? slash + 1 : p->path, n))
				continue;
			in_input = true;
			for (size_t k = 0; k < p->nsyms; k++)
				if (p->syms[k].defined && p->syms[k].torch)
					return true;
		}
		if (!in_input && (wg_has_prefix(n, "libc10") || wg_has_prefix(n, "libtorch")))
			return true;
	}
	return false;
}

bool wg_check_faces_torch(wg_check_ctx *cc, const wg_object *o, const char **lib)
{
	*lib = NULL;
	for (size_t j = 0; j < o->needed.n; j++)
		if (wg_rule_matches(cc, "libraries", o->needed.v[j], NULL, 0)) {
			*lib = o->needed.v[j];
			return true;
		}
	/* No torch library in DT_NEEDED (linked -Wl,--as-needed against a stub, or not at all):
	 * the c10/at/torch/caffe2 symbols it imports still have to come from torch, with its
	 * ABI, unless it brings a copy of its own. */
	bool imports = false;
	for (size_t j = 0; j < o->nsyms && !imports; j++)
		imports = !o->syms[j].defined && o->syms[j].torch;
	return imports && !needs_own_torch(cc->scan, o);
}

const wg_sym *wg_check_abi_import(wg_check_ctx *cc, const wg_object *o, unsigned wrong,
				  unsigned *count)
{
	*count = 0;
	const char *lib;
	if (!wg_check_faces_torch(cc, o, &lib))
		return NULL;
	const wg_sym *first = NULL;
	for (size_t j = 0; j < o->nsyms; j++) {
		const wg_sym *y = &o->syms[j];
		if (!y->defined && y->torch && (y->string_abi & wrong) && (*count)++ == 0)
			first = y;
	}
	return first;
}

int wg_check_need_from(wg_check_ctx *cc, size_t i, const char *soname, wg_need_from *from,
		       const char **why)
{
	*why = NULL;
	*from = WG_NEED_LOADER;
	if (wg_provided_loader(soname))
		return WG_OK;
	bool ships = false;
	int rc = wg_analysis_ships_library(cc->an, i, soname, &ships);
	*from = WG_NEED_SHIPPED;
	if (rc < 0 || ships)
		return rc;
	*from = WG_NEED_DRIVER;
	if ((*why = wg_provided_driver(soname)) != NULL)
		return WG_OK;
	char by[256];
	*from = WG_NEED_REQUIRED;
	/* the requirements as a set built once per input: a lookup per library, however many
	 * requirements (10,000 Requires-Dist lines x 10,000 DT_NEEDED entries stay linear) */
	const wg_strmap *req = wg_analysis_requires(cc->an);
	if (!req)
		return WG_ENOMEM;
	if (wg_provided_by(soname, req, by, sizeof(by))) {
		*why = wg_check_printf(cc, "%s", by);
		return *why ? WG_OK : WG_ENOMEM;
	}
	*from = WG_NEED_SYSTEM;
	return WG_OK;
}

bool wg_object_is_cuda(const wg_object *o)
{
	return o->fatbin_containers.len > 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static bool loadable(const wg_object *o)
{
	return !o->error && o->type && !strcmp(o->type, "dyn");
}

int wg_check_roles(wg_check_ctx *cc)
{
	if (!cc->roles)
		cc->roles = wg_analysis_roles(cc->an);
	return cc->roles ? WG_OK : WG_ENOMEM;
}

wg_severity wg_load_severity(wg_check_ctx *cc, const char *member, const char **why)
{
	*why = "";
	if (wg_check_roles(cc) < 0 || !member)
		return cc->severity;
	const wg_scan *s = cc->scan;
	const wg_role *r = NULL;
	const wg_object *o = NULL;
	for (size_t i = 0; i < s->objects.len && !r; i++) {
		o = *(wg_object **)wg_vec_at(&s->objects, i);
		if (!strcmp(o->path, member))
			r = &cc->roles[i];
	}
	if (!r || r->how == WG_IMPORT_REQUIRED)
		return cc->severity;
	const char *pkg = r->module ? r->module : "";
	/* What the user imports: the outermost package of the module that is a regular package
	 * (has an __init__.py in the wheel); namespace packages (cuda/) are passed over. */
	char top[256];
	snprintf(top, sizeof(top), "%.*s", (int)strcspn(pkg, "."), pkg);
	for (size_t len = strcspn(pkg, "."); pkg[len] == '.'; len += 1 + strcspn(pkg + len + 1, ".")) {
		char init[512];
		snprintf(init, sizeof(init), "%.*s/__init__.py", (int)len, pkg);
		for (char *c = init; *c && c < init + len; c++)
			if (*c == '.')
				*c = '/';
		bool found = false;
		for (size_t k = 0; k < s->sources.len && !found; k++) {
			const wg_source *src = wg_vec_at(&s->sources, k);
			size_t nl = strlen(src->name), il = strlen(init);
			/* "a/__init__.py", or under ".data/purelib/" */
			found = wg_has_suffix(src->name, init) && (nl == il || src->name[nl - il - 1] == '/');
		}
		if (found) {
			snprintf(top, sizeof(top), "%.*s", (int)len, pkg);
			break;
		}
	}
	if (r->how == WG_ROLE_ALONE && r->via)
		*why = wg_check_printf(cc, " (loaded by %s, which nothing in the wheel loads through "
				       "DT_NEEDED: a plugin loaded with ctypes/dlopen or by another "
				       "package; the package imports without them, and only what loads "
				       "them fails)", base_name(r->via));
	else if (r->how == WG_ROLE_ALONE)
		*why = wg_check_printf(cc, " (nothing in the wheel loads %s through DT_NEEDED: a "
				       "plugin loaded with ctypes/dlopen or by another package; the "
				       "package imports without it, and only what loads it fails)",
				       base_name(member));
	else if (r->how == WG_IMPORT_NONE)
		*why = wg_check_printf(cc, " (%s is never imported by the package's own code: `import "
				       "%s` works without it, and only code that imports %s fails)",
				       pkg, top, pkg);
	else
		*why = wg_check_printf(cc, " (optional: %s is %s, at %s:%u: `import %s` works without "
				       "it, and the feature it provides fails when used)", pkg,
				       wg_import_how_name(r->how), r->file ? r->file : "?", r->line, top);
	return WG_SEV_WARNING < cc->severity ? WG_SEV_WARNING : cc->severity;
}

/*
 * Whether the package's import runs `import torch` first (its code imports torch, it requires
 * torch, it links torch's libraries, or it is torch): then its objects load into the state
 * torch leaves; otherwise into the interpreter's alone. Loose objects,
 * with no package to read, are judged as they always were, after `import torch`.
 */
static bool imports_torch(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_scan_is_dist(s))
		return true;
	const char *name = s->fields[WG_WHEEL_NAME];
	if (name && !strcmp(name, "torch"))
		return true;
	/* a requirement without an extra marker (`; extra == ...` ones are optional) */
	const wg_strmap *req = wg_analysis_requires(cc->an);
	if (req && wg_strmap_get(req, "torch") != SIZE_MAX)
		return true;
	/* An extension linked against torch's libraries is a torch extension: used after
	 * `import torch` (without it, the loader cannot even find libc10.so). So is one that
	 * imports torch's symbols without listing its libraries (linked -Wl,--as-needed
	 * against a stub): nothing but torch defines them. */
	for (size_t i = 0; i < s->objects.len; i++) {
		const wg_object *o = *(wg_object **)wg_vec_at(&s->objects, i);
		for (size_t k = 0; !o->error && k < o->needed.n; k++)
			if (wg_has_prefix(o->needed.v[k], "libc10") || wg_has_prefix(o->needed.v[k], "libtorch"))
				return true;
		for (size_t k = 0; !o->error && k < o->nsyms; k++)
			if (!o->syms[k].defined && o->syms[k].torch)
				return true;
	}
	return wg_pyimports_mentions(wg_analysis_imports(cc->an), "torch");
}

int wg_check_ld(wg_check_ctx *cc)
{
	if (cc->ld_done)
		return WG_OK;
	cc->ld_done = true;
	if (!cc->target->env)
		return WG_OK;
	int rc = wg_check_roles(cc);
	bool with_torch = rc == WG_OK && imports_torch(cc);
	/* The records of the input's objects, built once for every load resolved. */
	wg_lib *const *libs = NULL;
	const wg_vec *all = NULL;
	if (rc == WG_OK)
		rc = wg_analysis_libs(cc->an, &libs, &all);
	for (size_t i = 0; i < cc->scan->objects.len && rc == WG_OK; i++) {
		const wg_object *o = *(wg_object **)wg_vec_at(&cc->scan->objects, i);
		/* A library another object of the wheel loads is judged inside that load. */
		if (!loadable(o) || !cc->roles[i].root)
			continue;
		rc = wg_resolve(cc->target->env, cc->scan, o, libs[i], all, &cc->report->arena,
				&cc->ld_issues, &cc->python_assumed, with_torch);
	}
	return rc;
}

wg_severity wg_ld_severity(wg_check_ctx *cc, const char *object, int kind, const char **why)
{
	wg_severity best = WG_SEV_INFO;
	bool any = false;
	*why = "";
	for (size_t i = 0; i < cc->ld_issues.len; i++) {
		const wg_ld_issue *x = wg_vec_at(&cc->ld_issues, i);
		if ((int)x->kind != kind || strcmp(x->object, object))
			continue;
		const char *w;
		wg_severity sv = wg_load_severity(cc, x->root, &w);
		if (!any || sv > best) {
			best = sv;
			*why = w;
			any = true;
		}
	}
	return any ? best : cc->severity;
}

bool wg_ld_seen_before(wg_check_ctx *cc, size_t i, bool version)
{
	const wg_ld_issue *x = wg_vec_at(&cc->ld_issues, i);
	for (size_t k = 0; x && k < i; k++) {
		const wg_ld_issue *y = wg_vec_at(&cc->ld_issues, k);
		if (y->kind == x->kind && y->system == x->system && !strcmp(y->object, x->object) &&
		    !strcmp(y->library, x->library) &&
		    (!version || (y->version && x->version && !strcmp(y->version, x->version))))
			return true;
	}
	return false;
}

/*
 * check: match, the generic kind of rules written as data (docs/rules.md, "Rules as data"):
 * the rule names a fact list (`facts:`), its `match` patterns select items of that list and
 * its `unless` patterns take items out again, and its `condition` says when that is a
 * finding: `any` (each item selected is one), `all` (every item of a scope selected, and at
 * least one), `none` (no item of a scope selected). A scope is the input for the lists of the
 * wheel (members, tags, METADATA fields) and each object in the rule's `objects:` scope for
 * the lists of an ELF object (NEEDED, RPATH, symbols, versions needed, fatbin architectures).
 * Every match runs under PCRE2's match and depth limits (core/regex.c): a pattern past them
 * fails the check with the rule and the subject named, never a silent non-match.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

/* One item of a fact list: what the patterns match (value), the finding's member and symbol,
 * and the placeholders it fills besides {value}. */
typedef struct {
	const char *value, *member, *symbol;
	wg_vars vars;
	int sev; /* a wg_severity lower than the rule's for this item, or -1 */
} item;

#define ITEM(v, m, y) {(v), (m), (y), {{{0}}, 0}, -1}

typedef struct walk walk;
typedef int (*fact_fn)(walk *w);

struct walk {
	wg_check_ctx *cc;
	int condition; /* MATCH_* */
	const wg_object *o; /* the object of an object list's scope, else NULL */
	size_t total, selected;
	item first; /* the first item selected (condition all) */
};

enum { MATCH_ANY, MATCH_ALL, MATCH_NONE };

static bool has_list(const wg_rule *r, const char *name)
{
	for (size_t i = 0; i < r->nlists; i++)
		if (!strcmp(r->lists[i].name, name))
			return true;
	return false;
}

/* The scope's own placeholders: the object (object lists) and the counts. */
static void scope_vars(walk *w, wg_vars *v)
{
	if (w->o) {
		wg_vars_set(v, "object", w->o->path);
		wg_vars_set(v, "module", w->o->module ? w->o->module : w->o->path);
	}
}

static int visit(walk *w, item *it)
{
	wg_check_ctx *cc = w->cc;
	if (cc->limit_list)
		return WG_OK; /* a pattern ran past its limits: the rule decides nothing */
	w->total++;
	const char *v = it->value ? it->value : "";
	bool sel = !has_list(cc->rule, "match") || wg_rule_matches(cc, "match", v, NULL, 0);
	if (sel && has_list(cc->rule, "unless") && wg_rule_matches(cc, "unless", v, NULL, 0))
		sel = false;
	if (!sel)
		return WG_OK;
	if (w->selected++ == 0)
		w->first = *it;
	if (w->condition != MATCH_ANY)
		return WG_OK;
	scope_vars(w, &it->vars);
	wg_vars_set(&it->vars, "value", v);
	return wg_emit_sev(cc, it->sev >= 0 ? (wg_severity)it->sev : cc->severity, &it->vars,
			   it->member, it->symbol, NULL, 0);
}

/* After a scope's items: the finding of condition all or none. */
static int scope_end(walk *w)
{
	wg_check_ctx *cc = w->cc;
	bool hit = w->condition == MATCH_ALL ? w->total && w->selected == w->total
		   : w->condition == MATCH_NONE ? !w->selected : false;
	if (!hit)
		return WG_OK;
	wg_vars v = {0};
	const char *member = NULL, *symbol = NULL;
	if (w->condition == MATCH_ALL) {
		v = w->first.vars;
		member = w->first.member;
		symbol = w->first.symbol;
	} else if (w->o && wg_scan_is_dist(cc->scan)) {
		member = w->o->path;
	}
	scope_vars(w, &v);
	wg_vars_set(&v, "value", w->condition == MATCH_ALL && w->first.value ? w->first.value : "");
	wg_vars_set(&v, "count", wg_check_printf(cc, "%zu", w->total));
	return wg_emit(cc, &v, member, symbol, NULL, 0);
}

static int one(walk *w, const char *value, const char *member, const char *symbol)
{
	item it = ITEM(value, member, symbol);
	return visit(w, &it);
}

/* ---- the lists of the wheel ---- */

static int members_of(walk *w, bool absent_only)
{
	wg_check_ctx *cc = w->cc;
	const wg_scan *s = cc->scan;
	const char *dist = NULL;
	int rc = WG_OK;
	for (size_t i = 0; i < s->members.len && rc == WG_OK; i++) {
		const wg_member *m = wg_vec_at(&s->members, i);
		if ((absent_only && m->record != WG_RECORD_ABSENT) || !wg_rule_in_scope(cc, false, m->name))
			continue;
		if (!dist && !(dist = wg_check_distribution(cc)))
			return WG_ENOMEM;
		const char *file = wg_check_member_file(cc, m->name);
		if (!file)
			return WG_ENOMEM;
		item it = ITEM(m->name, m->name, NULL);
		wg_vars_set(&it.vars, "member", m->name);
		wg_vars_set(&it.vars, "file", file);
		wg_vars_set(&it.vars, "distribution", dist);
		rc = visit(w, &it);
	}
	return rc;
}

static int f_members(walk *w) { return members_of(w, false); }
static int f_record_absent(walk *w) { return members_of(w, true); }

/* Problems of the scan with code WG_EUNSAFE (unsafe member names), and those counted past
 * max_problems. */
static int f_unsafe(walk *w)
{
	wg_check_ctx *cc = w->cc;
	const wg_scan *s = cc->scan;
	int rc = WG_OK;
	for (size_t i = 0; i < s->problems.len && rc == WG_OK; i++) {
		const wg_problem *p = wg_vec_at(&s->problems, i);
		if (p->code != WG_EUNSAFE)
			continue;
		item it = ITEM(p->message, p->where, NULL);
		wg_vars_set(&it.vars, "member", p->where ? p->where : "?");
		wg_vars_set(&it.vars, "problem", p->message);
		rc = visit(w, &it);
	}
	if (rc == WG_OK && w->condition == MATCH_ANY && !has_list(cc->rule, "match") &&
	    !has_list(cc->rule, "unless"))
		rc = wg_emit_count(cc, cc->severity, wg_scan_problems_more_of(s, WG_EUNSAFE));
	return rc;
}

/* The member where the import checks stopped reading the Python sources (a limit). */
static int f_python_partial(walk *w)
{
	const wg_scan *s = w->cc->scan;
	if (!wg_scan_is_dist(s) || !s->python_partial)
		return WG_OK;
	item it = ITEM(s->python_partial, s->python_partial, NULL);
	wg_vars_set(&it.vars, "member", s->python_partial);
	wg_vars_set(&it.vars, "limit", s->python_partial_why ? s->python_partial_why
				       : "and what follows were not read (a limit)");
	return visit(w, &it);
}

static int strlist(walk *w, const wg_strlist *l)
{
	int rc = WG_OK;
	for (size_t i = 0; i < l->n && rc == WG_OK; i++)
		rc = one(w, l->v[i], NULL, NULL);
	return rc;
}

#define WHEEL_LIST(fn, list)                                                              \
	static int fn(walk *w)                                                             \
	{                                                                                  \
		return wg_scan_is_dist(w->cc->scan) ? strlist(w, &w->cc->scan->lists[list]) : WG_OK; \
	}
WHEEL_LIST(f_python_tags, WG_LIST_PYTHON_TAGS)
WHEEL_LIST(f_abi_tags, WG_LIST_ABI_TAGS)
WHEEL_LIST(f_platform_tags, WG_LIST_PLATFORM_TAGS)
WHEEL_LIST(f_wheel_tags, WG_LIST_WHEEL_TAGS)
WHEEL_LIST(f_requires_dist, WG_LIST_REQUIRES_DIST)
WHEEL_LIST(f_top_level, WG_LIST_TOP_LEVEL)

/* A METADATA or WHEEL field: one item when the input has it, none otherwise. */
static int field(walk *w, wg_wheel_field f)
{
	const wg_scan *s = w->cc->scan;
	if (!wg_scan_is_dist(s) || !s->fields[f])
		return WG_OK;
	const char *di = s->fields[WG_WHEEL_DIST_INFO];
	const char *file = f == WG_WHEEL_GENERATOR || f == WG_WHEEL_ROOT_IS_PURELIB ? "WHEEL"
			   : "METADATA";
	return one(w, s->fields[f], di ? wg_check_printf(w->cc, "%s/%s", di, file) : NULL, NULL);
}

#define WHEEL_FIELD(fn, f) \
	static int fn(walk *w) { return field(w, f); }
WHEEL_FIELD(f_metadata_name, WG_WHEEL_META_NAME)
WHEEL_FIELD(f_metadata_version, WG_WHEEL_META_VERSION)
WHEEL_FIELD(f_requires_python, WG_WHEEL_REQUIRES_PYTHON)
WHEEL_FIELD(f_generator, WG_WHEEL_GENERATOR)
WHEEL_FIELD(f_root_is_purelib, WG_WHEEL_ROOT_IS_PURELIB)

/* ---- the lists of an ELF object ---- */

static const char *object_member(walk *w)
{
	return wg_scan_is_dist(w->cc->scan) ? w->o->path : NULL;
}

static int f_needed(walk *w)
{
	int rc = WG_OK;
	for (size_t i = 0; i < w->o->needed.n && rc == WG_OK; i++)
		rc = one(w, w->o->needed.v[i], object_member(w), NULL);
	return rc;
}

static int f_soname(walk *w)
{
	return w->o->soname ? one(w, w->o->soname, object_member(w), NULL) : WG_OK;
}

/* The entries of a DT_RPATH or DT_RUNPATH, each directory one item. */
static int path_list(walk *w, const char *p)
{
	int rc = WG_OK;
	while (p && rc == WG_OK) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		rc = one(w, wg_check_printf(w->cc, "%.*s", (int)n, p), object_member(w), NULL);
		p = e ? e + 1 : NULL;
	}
	return rc;
}

static int f_rpath(walk *w) { return path_list(w, w->o->rpath); }
static int f_runpath(walk *w) { return path_list(w, w->o->runpath); }

/* Dynamic symbols: imported (undefined) or exported (defined, not hidden), mangled or
 * demangled (the mangled name where it demangles to nothing else). */
static int symbols(walk *w, bool defined, bool demangled)
{
	int rc = WG_OK;
	for (size_t i = 0; i < w->o->nsyms && rc == WG_OK; i++) {
		const wg_sym *y = &w->o->syms[i];
		if (!y->name || !*y->name || (bool)y->defined != defined || (defined && y->hidden))
			continue;
		const char *v = demangled && y->demangled ? y->demangled : y->name;
		item it = ITEM(v, object_member(w), y->name);
		wg_vars_set(&it.vars, "symbol", y->name);
		wg_vars_set(&it.vars, "demangled", y->demangled ? y->demangled : y->name);
		rc = visit(w, &it);
	}
	return rc;
}

static int f_imports(walk *w) { return symbols(w, false, false); }
static int f_exports(walk *w) { return symbols(w, true, false); }
static int f_imports_demangled(walk *w) { return symbols(w, false, true); }
static int f_exports_demangled(walk *w) { return symbols(w, true, true); }

static int f_versions_needed(walk *w)
{
	int rc = WG_OK;
	for (size_t i = 0; i < w->o->verneeds.len && rc == WG_OK; i++) {
		const wg_verneed *vn = wg_vec_at(&w->o->verneeds, i);
		item it = ITEM(vn->version, object_member(w), NULL);
		wg_vars_set(&it.vars, "library", vn->file ? vn->file : "?");
		rc = visit(w, &it);
	}
	return rc;
}

/* The architectures of the object's CUDA fatbin entries as nvcc names them (sm_90a,
 * compute_80, lto_90), each once. */
static int f_fatbin_archs(walk *w)
{
	enum { SEEN = 256 };
	uint64_t seen[SEEN];
	size_t nseen = 0;
	int rc = WG_OK;
	for (size_t i = 0; i < w->o->fatbin_entries.len && rc == WG_OK; i++) {
		const wg_fatbin_entry *e = wg_vec_at(&w->o->fatbin_entries, i);
		uint64_t key = (uint64_t)e->arch << 24 | (uint64_t)e->kind << 8 | (uint8_t)e->variant;
		bool dup = false;
		for (size_t k = 0; k < nseen && !dup; k++)
			dup = seen[k] == key;
		if (dup)
			continue;
		if (nseen < SEEN)
			seen[nseen++] = key;
		char name[32];
		wg_fatbin_arch_name(name, sizeof(name), e->kind, e->arch, e->variant);
		rc = one(w, wg_check_printf(w->cc, "%s", name), object_member(w), NULL);
	}
	return rc;
}

/* How the object's section headers disagree with its dynamic segment (WG-ELF-001). */
static int f_sections_lie(walk *w)
{
	if (!w->o->sections_lie)
		return WG_OK;
	item it = ITEM(w->o->sections_lie, object_member(w), NULL);
	wg_vars_set(&it.vars, "lie", w->o->sections_lie);
	wg_vars_set(&it.vars, "symbols", wg_check_printf(w->cc, "%zu", w->o->nsyms));
	return visit(w, &it);
}

/* Problems of the scan that are not the record-* and unsafe-member rules' (WG_EUNSAFE,
 * WG_EINTEGRITY): what could not be read or was refused, in the rule's members: scope; and
 * those counted past max_problems. */
static int f_unreadable(walk *w)
{
	wg_check_ctx *cc = w->cc;
	const wg_scan *s = cc->scan;
	int rc = WG_OK;
	for (size_t i = 0; i < s->problems.len && rc == WG_OK; i++) {
		const wg_problem *p = wg_vec_at(&s->problems, i);
		if (p->code == WG_EUNSAFE || p->code == WG_EINTEGRITY ||
		    (p->where && !wg_rule_in_scope(cc, false, p->where)))
			continue;
		item it = ITEM(p->message, p->where, NULL);
		wg_vars_set(&it.vars, "member", p->where ? p->where : s->path);
		wg_vars_set(&it.vars, "problem", p->message);
		wg_vars_set(&it.vars, "code", wg_error_name(p->code));
		rc = visit(w, &it);
	}
	if (rc != WG_OK || w->condition != MATCH_ANY || has_list(cc->rule, "match") ||
	    has_list(cc->rule, "unless"))
		return rc;
	size_t more = 0;
	for (int code = 0; code > -WG_PROBLEM_CODES; code--)
		if (code != WG_EUNSAFE && code != WG_EINTEGRITY)
			more += wg_scan_problems_more_of(s, code);
	return wg_emit_count(cc, cc->severity, more);
}

/* A wheel's (or installed distribution's) missing RECORD: one item, its .dist-info. A RECORD
 * that is there but was not read (too large, corrupt) is not missing: `unreadable` says why. */
static int f_record_missing(walk *w)
{
	const wg_scan *s = w->cc->scan;
	if (!wg_scan_is_dist(s) || s->has_record)
		return WG_OK;
	const char *di = s->fields[WG_WHEEL_DIST_INFO];
	size_t dl = di ? strlen(di) : 0;
	for (size_t i = 0; di && i < s->members.len; i++) {
		const wg_member *m = wg_vec_at(&s->members, i);
		if (!strncmp(m->name, di, dl) && !strcmp(m->name + dl, "/RECORD"))
			return WG_OK;
	}
	item it = ITEM(di ? di : "(no .dist-info)", NULL, NULL);
	wg_vars_set(&it.vars, "dist_info", it.value);
	return visit(w, &it);
}

/* ---- the loader's verdicts in the environment (--env) ---- */

/* No interpreter found for --env: the Python C API was taken as provided; one item, the
 * environment. */
static int f_ld_python_assumed(walk *w)
{
	int rc = wg_check_ld(w->cc);
	if (rc < 0 || !w->cc->python_assumed)
		return rc;
	item it = ITEM(w->cc->target->env->site, NULL, NULL);
	wg_vars_set(&it.vars, "env", w->cc->target->env->site);
	return visit(w, &it);
}

/* The loader's issues of one kind, each object (in the rule's objects: scope) and library
 * once (and version, for versions); the item is the library (versions: the version), its
 * severity at most a warning where only an optional import fails (wg_ld_severity). */
static int ld_issues(walk *w, int kind)
{
	wg_check_ctx *cc = w->cc;
	int rc = wg_check_ld(cc);
	bool version = kind == WG_LD_MISSING_VERSION;
	for (size_t i = 0; i < cc->ld_issues.len && rc == WG_OK; i++) {
		const wg_ld_issue *x = wg_vec_at(&cc->ld_issues, i);
		if ((int)x->kind != kind || (version && x->system) ||
		    !wg_rule_in_scope(cc, true, x->object) || wg_ld_seen_before(cc, i, version))
			continue;
		item it = ITEM(version ? x->version : x->library, x->object, NULL);
		wg_vars_set(&it.vars, "object", x->object);
		wg_vars_set(&it.vars, "library", x->library);
		if (kind == WG_LD_NOT_READ) {
			wg_vars_set(&it.vars, "detail", x->detail ? x->detail : "");
		} else {
			const char *why;
			it.sev = (int)wg_ld_severity(cc, x->object, x->kind, &why);
			wg_vars_set(&it.vars, "scope", why);
		}
		if (version)
			wg_vars_set(&it.vars, "version", x->version);
		if (kind == WG_LD_MISSING_LIBRARY) {
			/* Where the search ended: nowhere, or at a file that is not a library. */
			char *where = x->detail ? wg_check_printf(cc, "%s", x->detail)
				: wg_check_printf(cc, "is not loaded by torch, not on its RPATH/RUNPATH "
						  "and not in the system's library directories: importing it "
						  "fails with \"%s: cannot open shared object file\"",
						  x->library);
			if (!where)
				return WG_ENOMEM;
			wg_vars_set(&it.vars, "why", where);
		}
		rc = visit(w, &it);
	}
	return rc;
}

static int f_ld_not_read(walk *w) { return ld_issues(w, WG_LD_NOT_READ); }
static int f_ld_missing_library(walk *w) { return ld_issues(w, WG_LD_MISSING_LIBRARY); }
static int f_ld_missing_version(walk *w) { return ld_issues(w, WG_LD_MISSING_VERSION); }

/* ---- the table ---- */

#define COMMON "value", "count"
#define OBJ COMMON, "object", "module"
static const char *const v_wheel[] = {COMMON, NULL};
static const char *const v_members[] = {COMMON, "member", "file", "distribution", NULL};
static const char *const v_unsafe[] = {COMMON, "member", "problem", NULL};
static const char *const v_partial[] = {COMMON, "member", "limit", NULL};
static const char *const v_object[] = {OBJ, NULL};
static const char *const v_symbols[] = {OBJ, "symbol", "demangled", NULL};
static const char *const v_versions[] = {OBJ, "library", NULL};
static const char *const v_lie[] = {OBJ, "lie", "symbols", NULL};
static const char *const v_unreadable[] = {COMMON, "member", "problem", "code", NULL};
static const char *const v_record_missing[] = {COMMON, "dist_info", NULL};
static const char *const v_env[] = {COMMON, "env", NULL};
static const char *const v_not_read[] = {COMMON, "object", "library", "detail", NULL};
static const char *const v_missing_library[] = {COMMON, "object", "library", "scope", "why",
						NULL};
static const char *const v_missing_version[] = {COMMON, "object", "library", "version",
						"scope", NULL};

static const struct fact {
	const char *name;
	bool object; /* a list of each object, else of the input */
	fact_fn fn;
	const char *const *vars;
	unsigned needs; /* WG_FACT_*: the rule is not applied without them */
} facts[] = {
	{"members", false, f_members, v_members, 0},
	{"record_absent", false, f_record_absent, v_members, 0},
	{"unsafe_members", false, f_unsafe, v_unsafe, 0},
	{"python_partial", false, f_python_partial, v_partial, 0},
	{"python_tags", false, f_python_tags, v_wheel, 0},
	{"abi_tags", false, f_abi_tags, v_wheel, 0},
	{"platform_tags", false, f_platform_tags, v_wheel, 0},
	{"wheel_tags", false, f_wheel_tags, v_wheel, 0},
	{"requires_dist", false, f_requires_dist, v_wheel, 0},
	{"top_level", false, f_top_level, v_wheel, 0},
	{"metadata_name", false, f_metadata_name, v_wheel, 0},
	{"metadata_version", false, f_metadata_version, v_wheel, 0},
	{"requires_python", false, f_requires_python, v_wheel, 0},
	{"generator", false, f_generator, v_wheel, 0},
	{"root_is_purelib", false, f_root_is_purelib, v_wheel, 0},
	{"needed", true, f_needed, v_object, 0},
	{"soname", true, f_soname, v_object, 0},
	{"rpath", true, f_rpath, v_object, 0},
	{"runpath", true, f_runpath, v_object, 0},
	{"imports", true, f_imports, v_symbols, 0},
	{"exports", true, f_exports, v_symbols, 0},
	{"imports_demangled", true, f_imports_demangled, v_symbols, 0},
	{"exports_demangled", true, f_exports_demangled, v_symbols, 0},
	{"versions_needed", true, f_versions_needed, v_versions, 0},
	{"fatbin_archs", true, f_fatbin_archs, v_object, 0},
	{"sections_lie", true, f_sections_lie, v_lie, 0},
	{"unreadable", false, f_unreadable, v_unreadable, 0},
	{"record_missing", false, f_record_missing, v_record_missing, 0},
	{"ld_python_assumed", false, f_ld_python_assumed, v_env, WG_FACT_ENV},
	{"ld_not_read", false, f_ld_not_read, v_not_read, WG_FACT_ENV},
	{"ld_missing_library", false, f_ld_missing_library, v_missing_library, WG_FACT_ENV},
	{"ld_missing_version", false, f_ld_missing_version, v_missing_version, WG_FACT_ENV},
};

static const struct fact *fact_find(const char *name)
{
	for (size_t i = 0; name && i < WG_ARRAY_LEN(facts); i++)
		if (!strcmp(facts[i].name, name))
			return &facts[i];
	return NULL;
}

const char *const *wg_match_fact_vars(const char *name, unsigned *needs)
{
	const struct fact *f = fact_find(name);
	if (needs)
		*needs = f ? f->needs : 0;
	return f ? f->vars : NULL;
}

bool wg_match_fact_info(const char *name, bool *object, bool *wheel)
{
	const struct fact *f = fact_find(name);
	*object = f && f->object;
	*wheel = f && f->vars == v_wheel;
	return f != NULL;
}

size_t wg_match_fact_names(char *buf, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < WG_ARRAY_LEN(facts) && n; i++) {
		int k = snprintf(buf + o, n - o, "%s%s", i ? ", " : "", facts[i].name);
		if (k < 0 || (size_t)k >= n - o)
			break;
		o += (size_t)k;
	}
	return o;
}

static int run(wg_check_ctx *cc)
{
	const struct fact *f = fact_find(cc->rule->facts);
	if (!f)
		return WG_EINVAL; /* the rule file's loader refused it already */
	walk w;
	memset(&w, 0, sizeof(w));
	w.cc = cc;
	w.condition = !cc->rule->condition || !strcmp(cc->rule->condition, "any") ? MATCH_ANY
		      : !strcmp(cc->rule->condition, "all") ? MATCH_ALL : MATCH_NONE;
	int rc = WG_OK;
	if (!f->object)
		return (rc = f->fn(&w)) == WG_OK ? scope_end(&w) : rc;
	const wg_object *o;
	wg_for_each_object(cc, o) {
		w.o = o;
		w.total = w.selected = 0;
		if ((rc = f->fn(&w)) == WG_OK)
			rc = scope_end(&w);
		if (rc != WG_OK || cc->limit_list)
			break;
	}
	return rc;
}

static const char *const all_vars[] = {"value", "count", "object", "module", "member", "file",
				       "distribution", "problem", "limit", "symbol", "demangled",
				       "library", "lie", "symbols", "code", "dist_info", "env",
				       "detail", "scope", "why", "version", NULL};
const wg_check_kind wg_check_match = {"match", run, NULL, all_vars, 0};

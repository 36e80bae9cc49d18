/*
 * hollow-wheel: the wheel's Python code imports a module that is not there: the Python wrapper
 * without the compiled module it imports (`No module named 'flash_attn_2_cuda'`), `from .
 * import _C` in a package that has no _C, or any other import that cannot succeed.
 *
 * The decision is the import model's (facts/pyimports.c), never a name's look:
 *  - `from M import X` imports the submodule M.X only when M is a package of the wheel and
 *    X is not bound in M's __init__ (def, class, assignment, import, __all__, star import, a
 *    module __getattr__ or other dynamic binding: then nothing is claimed); from a module
 *    (M.py) X is an attribute, never a module;
 *  - a missing submodule of a regular package of the wheel is missing for certain (unless
 *    the package opens its __path__, writes sys.modules or the wheel installs an import hook);
 *    a namespace package's may come from another distribution: nothing is claimed;
 *  - a top-level module the wheel does not ship is present when it is the standard library's
 *    (the rule's `stdlib` patterns), the environment's (--env: its site directories, .pth
 *    directories, the user site), another wheel's of the same install, or a declared
 *    dependency's (Requires-Dist without an extra, by its name); it is missing when nothing
 *    else could bring it: every declared dependency is known (installed or in the install)
 *    and does not have it, or it is named after this distribution (its name or one of its
 *    top-level packages followed by `_`: flash_attn_2_cuda of flash_attn); otherwise
 *    nothing is claimed (whatever else is installed may have it).
 * Severity by reachability: an import at module level, outside try/except ImportError,
 * functions and conditions, in a module that `import <top-level package>` runs is an error;
 * elsewhere (a submodule the package import does not load, tests, a condition) at most a
 * warning that says where, and only for what belongs to the wheel (its own packages' modules,
 * a module named after it): another distribution's module imported by an optional feature is
 * that feature's need (an extra's). The rule's `compiled` patterns only add a hint to the message.
 * Linear in the statements: each import statement is resolved once, module lookups are hash
 * lookups.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

enum { PRESENT, MISSING, UNKNOWN };

typedef struct {
	wg_check_ctx *cc;
	wg_pyimports *im;
	wg_env *env;
	wg_arena *a;        /* this check's own, freed when it ends: findings copy what they keep */
	const char **deps;  /* normalised names of the runtime requirements */
	size_t ndeps;
	size_t unknown_deps; /* of them, neither installed nor in the install */
	const char **extras; /* requirements behind an extra: "name\0extra" pairs */
	size_t nextras;
	/* hash lookups, so that each import statement costs the same however many
	 * requirements and top-level names the wheel has */
	wg_strmap depset, extraset, ownset;
	wg_strmap memo;     /* top-level name -> index in memov */
	wg_vec memov;       /* memo_entry */
} ctx;

typedef struct {
	int status;
	const char *why;
} memo_entry;

/* Requires-Dist without an extra marker: what pip installs with the wheel. */
static int read_deps(ctx *c)
{
	const wg_strlist *req = &c->cc->scan->lists[WG_LIST_REQUIRES_DIST];
	c->deps = wg_arena_alloc(c->a, (req->n + 1) * sizeof(*c->deps));
	c->extras = wg_arena_alloc(c->a, (2 * req->n + 1) * sizeof(*c->extras));
	if (!c->deps || !c->extras)
		return WG_ENOMEM;
	for (size_t i = 0; i < req->n; i++) {
		const char *r = req->v[i];
		size_t n = strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");
		const char *semi = strchr(r, ';');
		if (!n)
			continue;
		char *name = wg_arena_strndup(c->a, r, n);
		const char *norm = name ? wg_normalize_name(c->a, name) : NULL;
		if (!norm)
			return WG_ENOMEM;
		const char *x = semi ? strstr(semi, "extra") : NULL;
		if (x) {
			/* `; extra == "gpu"`: the extra's name, for the message */
			const char *q = x + strcspn(x, "'\"");
			size_t qn = *q ? strcspn(q + 1, "'\"") : 0;
			c->extras[2 * c->nextras] = norm;
			c->extras[2 * c->nextras + 1] = qn ? wg_arena_strndup(c->a, q + 1, qn) : "?";
			if (wg_strmap_put(&c->extraset, norm, c->nextras) == SIZE_MAX - 1)
				return WG_ENOMEM;
			c->nextras++;
			continue;
		}
		if (wg_strmap_put(&c->depset, norm, c->ndeps) == SIZE_MAX - 1)
			return WG_ENOMEM;
		c->deps[c->ndeps++] = norm;
		if (!c->env || (!wg_env_has_dist(c->env, norm) && !wg_plan_installs(c->env, norm)))
			c->unknown_deps++;
	}
	return WG_OK;
}

/* `yaml` is not `pyyaml`, but `typing_extensions` is `typing-extensions`. */
static bool dep_named(const ctx *c, const char *norm)
{
	return norm && wg_strmap_get(&c->depset, norm) != SIZE_MAX;
}

/* Named after this distribution: its name (flash_attn) or a top-level package of it
 * (wgdemo), alone or followed by `_` (flash_attn_2_cuda, wgdemo_cuda). */
static bool own_name(const ctx *c, const char *top)
{
	char buf[256];
	size_t len = strlen(top);
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, top, len + 1);
	for (size_t n = 2; n <= len; n++) {
		if (top[n] != '\0' && top[n] != '_')
			continue;
		buf[n] = '\0';
		bool hit = wg_strmap_get(&c->ownset, buf) != SIZE_MAX;
		buf[n] = top[n];
		if (hit)
			return true;
	}
	return false;
}

static int top_status_of(ctx *c, const char *top, const char **why)
{
	if (wg_pyimports_kind(c->im, top) != WG_PYMOD_NONE)
		return PRESENT;
	if (wg_rule_matches(c->cc, "stdlib", top, NULL, 0))
		return PRESENT;
	if (c->env) {
		int has = wg_env_has_module(c->env, top);
		if (has != 0 || wg_plan_provides(c->env, top))
			return has < 0 ? UNKNOWN : PRESENT;
	}
	char nbuf[256];
	const char *norm = wg_name_normalize(nbuf, sizeof(nbuf), top, strlen(top)) >= 0 ? nbuf
											  : NULL;
	if (dep_named(c, norm))
		return PRESENT;
	bool own = own_name(c, top);
	/* The wheel's code puts directories on sys.path (setuptools its _vendor/): a module of
	 * that name anywhere in it, or anything outside it, may be what is found. */
	if (wg_pyimports_syspath(c->im) && (!own || wg_pyimports_anywhere(c->im, top)))
		return UNKNOWN;
	/* Without an environment, a module an extra's distribution provides may be installed
	 * all the same (hypothesis' pytest plugin and pytest): only the environment can say. */
	size_t i = norm && c->env ? wg_strmap_get(&c->extraset, norm) : SIZE_MAX;
	if (i != SIZE_MAX) {
		*why = wg_arena_printf(c->a, "is %s's, a distribution this wheel requires only with "
				       "its extra '%s' (pip does not install it by default), and the "
				       "environment does not have",
				       c->extras[2 * i], c->extras[2 * i + 1]);
		return *why ? MISSING : UNKNOWN;
	}
	if (c->env) {
		if (c->unknown_deps && !own)
			return UNKNOWN; /* a dependency pip would install may bring it */
		*why = own ? "is named after this distribution, which does not contain it, and the "
			     "environment does not have it"
			   : "neither this wheel, the environment nor the distributions installed "
			     "with it provide";
		return MISSING;
	}
	if (own) {
		*why = "is named after this distribution, which does not contain it";
		return MISSING;
	}
	return UNKNOWN; /* whatever else is installed may have it */
}

/* top_status_of, once per top-level name */
static int top_status(ctx *c, const char *top, const char **why)
{
	size_t at = wg_strmap_get(&c->memo, top);
	if (at != SIZE_MAX) {
		const memo_entry *m = wg_vec_at(&c->memov, at);
		*why = m->why;
		return m->status;
	}
	*why = NULL;
	int st = top_status_of(c, top, why);
	char *k = wg_arena_strdup(c->a, top);
	memo_entry *m = k ? wg_vec_push(&c->memov) : NULL;
	if (m) {
		m->status = st;
		m->why = *why;
		if (wg_strmap_put(&c->memo, k, c->memov.len - 1) == SIZE_MAX - 1)
			c->memov.len--;
	}
	return st;
}

/* Whether the dotted module name (each package above it first) can be imported. */
#define MODULE_MAX 1024

/* missing: MODULE_MAX bytes, the first module on module's path that is missing */
static int module_status(ctx *c, const char *module, char *missing, const char **why)
{
	char buf[MODULE_MAX];
	if (strlen(module) >= sizeof(buf))
		return UNKNOWN; /* no module has such a name */
	memcpy(buf, module, strlen(module) + 1);
	for (char *q = buf;; q++) {
		char ch = *q;
		if (ch != '.' && ch != '\0')
			continue;
		*q = '\0';
		int st;
		if (!strchr(buf, '.')) {
			st = top_status(c, buf, why);
		} else {
			char *dot = strrchr(buf, '.');
			*dot = '\0';
			int parent = wg_pyimports_kind(c->im, buf);
			bool open = parent == WG_PYMOD_PACKAGE && wg_pyimports_open_package(c->im, buf);
			*dot = '.';
			if (wg_pyimports_kind(c->im, buf) != WG_PYMOD_NONE)
				st = PRESENT;
			else if (parent != WG_PYMOD_PACKAGE || open)
				st = UNKNOWN; /* another distribution's, a namespace, or made up */
			else if (c->env && wg_env_has_submodule(c->env, buf))
				st = UNKNOWN; /* on disk there, though no RECORD lists it (cuda-core's
					       * _context.so, put in place at install): it stays */
			else {
				st = MISSING;
				*why = "this wheel's package does not contain";
			}
		}
		if (st != PRESENT) {
			if (st == MISSING)
				snprintf(missing, MODULE_MAX, "%s", buf);
			return st;
		}
		*q = ch;
		if (!ch)
			return PRESENT;
	}
}

/* the error Python raises: No module named 'module'; cannot import name e->name from
 * e->target (partially initialized or not) */
enum { ERR_NO_MODULE, ERR_NO_NAME, ERR_NO_NAME_PARTIAL };

typedef struct {
	const char *module, *why;
	int error;          /* ERR_* */
	wg_pyedge e;
	wg_severity sev;
} finding;

/* The findings, one per missing module: the first ones kept in full (as many as the engine
 * keeps of one rule, wg_options.max_rule_findings), the others only by name and severity,
 * counted as past the bound when the check ends. A wheel of a million failing imports of
 * distinct modules copies its module names once, never a finding per statement. */
typedef struct {
	wg_vec kept;      /* finding */
	wg_strmap seen;   /* module -> index: < kept.len a kept finding, else in extra_sev */
	wg_vec extra_sev; /* wg_severity of each module past the bound */
	size_t cap;       /* findings kept in full; SIZE_MAX: all */
} findings;

/* Keeps or counts the finding for module (copied only once per module). */
static int note(ctx *c, findings *fs, const char *module, int error, const char *why,
		const wg_pyedge *e)
{
	wg_check_ctx *cc = c->cc;
	bool reached = e->ctx == WG_IMPORT_REQUIRED && wg_pyimports_reached(c->im, e->from);
	wg_severity sev = reached ? cc->severity : WG_SEV_WARNING < cc->severity ? WG_SEV_WARNING
										  : cc->severity;
	size_t at = wg_strmap_get(&fs->seen, module);
	if (at != SIZE_MAX && at < fs->kept.len) {
		finding *f = wg_vec_at(&fs->kept, at);
		if (sev > f->sev)
			*f = (finding){f->module, why, error, *e, sev};
		return WG_OK;
	}
	if (at != SIZE_MAX) {
		wg_severity *x = wg_vec_at(&fs->extra_sev, at - fs->kept.len);
		if (x && sev > *x)
			*x = sev;
		return WG_OK;
	}
	const char *k = wg_arena_strdup(c->a, module);
	if (!k)
		return WG_ENOMEM;
	if (fs->kept.len < fs->cap) {
		finding *f = wg_vec_push(&fs->kept);
		if (!f)
			return WG_ENOMEM;
		*f = (finding){k, why, error, *e, sev};
		return wg_strmap_put(&fs->seen, k, fs->kept.len - 1) == SIZE_MAX - 1 ? WG_ENOMEM
										      : WG_OK;
	}
	/* past the bound: kept.len no longer grows, so kept.len + i indexes extra_sev[i] */
	wg_severity *x = wg_vec_push(&fs->extra_sev);
	if (!x)
		return WG_ENOMEM;
	*x = sev;
	return wg_strmap_put(&fs->seen, k, fs->kept.len + fs->extra_sev.len - 1) == SIZE_MAX - 1
		       ? WG_ENOMEM : WG_OK;
}

static int emit(ctx *c, const finding *f)
{
	wg_check_ctx *cc = c->cc;
	const wg_pyedge *e = &f->e;
	const char *last = strrchr(f->module, '.');
	last = last ? last + 1 : f->module;
	const char *hint = wg_rule_matches(cc, "compiled", f->module, NULL, 0) ||
				   wg_rule_matches(cc, "compiled", last, NULL, 0)
			   ? wg_check_printf(cc, " (%s is, by its name, a compiled extension module: a "
					     "build that skipped it?)", last) : "";
	/* what the user imports to run it: the first regular package or module on its path
	 * (cuda.core, not the namespace cuda) */
	char top[256];
	size_t n = 0;
	do {
		n += strcspn(e->from + n + (n ? 1 : 0), ".") + (n ? 1 : 0);
		snprintf(top, sizeof(top), "%.*s", (int)n, e->from);
	} while (e->from[n] && wg_pyimports_kind(c->im, top) == WG_PYMOD_NAMESPACE);
	const char *when;
	if (f->sev == cc->severity && e->ctx == WG_IMPORT_REQUIRED &&
	    wg_pyimports_reached(c->im, e->from))
		when = wg_check_printf(cc, "`import %s` fails with", top);
	else if (e->ctx == WG_IMPORT_CONDITIONAL)
		when = wg_check_printf(cc, "when the condition around it holds, importing %s fails "
				       "with", e->from);
	else
		when = wg_check_printf(cc, "importing %s (which `import %s` does not run) fails with",
				       e->from, top);
	wg_vars v = {0};
	wg_vars_set(&v, "module", f->module);
	wg_vars_set(&v, "file", e->file);
	wg_vars_set(&v, "line", wg_check_printf(cc, "%u", e->line));
	wg_vars_set(&v, "objects", wg_check_printf(cc, "%zu", cc->scan->objects.len));
	wg_vars_set(&v, "why", f->why);
	wg_vars_set(&v, "when", when);
	const char *error =
		f->error == ERR_NO_MODULE
			? wg_check_printf(cc, "ModuleNotFoundError: No module named '%s'", f->module)
		: f->error == ERR_NO_NAME_PARTIAL
			? wg_check_printf(cc, "ImportError: cannot import name '%s' from partially "
					  "initialized module '%s'", e->name, e->target)
			: wg_check_printf(cc, "ImportError: cannot import name '%s' from '%s'", e->name,
					  e->target);
	wg_vars_set(&v, "error", error);
	wg_vars_set(&v, "hint", hint);
	wg_vars_set(&v, "importer", e->from);
	return wg_emit_sev(cc, f->sev, &v, e->file, NULL, e->file, e->line);
}

static int judge(ctx *c);

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_scan_is_dist(s))
		return WG_OK;
	wg_pyimports *im = wg_analysis_imports(cc->an);
	if (!im)
		return s->sources.len ? WG_ENOMEM : WG_OK;
	wg_arena scratch = {0};
	ctx c = {.cc = cc, .im = im, .env = cc->target->env, .a = &scratch};
	wg_vec_init(&c.memov, sizeof(memo_entry));
	int rc = wg_strmap_init(&c.depset, 16) && wg_strmap_init(&c.extraset, 16) &&
			 wg_strmap_init(&c.ownset, 16) && wg_strmap_init(&c.memo, 64)
		 ? read_deps(&c) : WG_ENOMEM;
	if (rc == WG_OK)
		rc = judge(&c);
	wg_strmap_free(&c.depset);
	wg_strmap_free(&c.extraset);
	wg_strmap_free(&c.ownset);
	wg_strmap_free(&c.memo);
	wg_vec_free(&c.memov);
	wg_arena_free(&scratch);
	return rc;
}

static int judge(ctx *c)
{
	wg_check_ctx *cc = c->cc;
	const wg_scan *s = cc->scan;
	wg_pyimports *im = c->im;
	int rc = WG_OK;
	/* what the user imports: the top-level names, less those the rule says are not an API
	 * (setup.py, conftest.py, tests/ shipped by mistake) */
	const wg_strlist *tops = wg_pyimports_tops(im);
	wg_strlist api = {0};
	if ((rc = wg_pyimports_roots(im, c->a, &api)) < 0) {
		wg_strlist_free(&api);
		return rc;
	}
	const char **roots = wg_arena_alloc(c->a, (api.n + 1) * sizeof(*roots));
	size_t nroots = 0;
	for (size_t i = 0; roots && i < api.n; i++) {
		/* each namespace directory above it, and the top-level name */
		bool api_name = true;
		for (const char *p = api.v[i]; api_name && strchr(p, '.'); p = strchr(p, '.') + 1) {
			char part[256];
			snprintf(part, sizeof(part), "%.*s", (int)strcspn(p, "."), p);
			api_name = !wg_rule_matches(cc, "not_api", part, NULL, 0);
		}
		char top[256];
		snprintf(top, sizeof(top), "%.*s", (int)strcspn(api.v[i], "."), api.v[i]);
		if (api_name && !wg_rule_matches(cc, "not_api", top, NULL, 0))
			roots[nroots++] = api.v[i];
	}
	wg_strlist_free(&api);
	if (!roots)
		return WG_ENOMEM;
	for (size_t i = 0; i < tops->n; i++)
		if (wg_pyimports_kind(im, tops->v[i]) == WG_PYMOD_PACKAGE &&
		    wg_strmap_put(&c->ownset, tops->v[i], 0) == SIZE_MAX - 1)
			return WG_ENOMEM;
	const char *dist = s->fields[WG_WHEEL_NAME] ? s->fields[WG_WHEEL_NAME]
						    : s->fields[WG_WHEEL_META_NAME];
	if (dist) {
		char *m = wg_arena_strdup(c->a, dist);
		for (char *q = m; q && *q; q++)
			*q = *q == '-' || *q == '.' ? '_' : (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
		if (!m || wg_strmap_put(&c->ownset, m, 0) == SIZE_MAX - 1)
			return WG_ENOMEM;
	}
	if ((rc = wg_pyimports_reach(im, roots, nroots)) < 0)
		return rc;
	findings fs = {.cap = cc->max_rule ? cc->max_rule : SIZE_MAX};
	wg_vec_init(&fs.kept, sizeof(finding));
	wg_vec_init(&fs.extra_sev, sizeof(wg_severity));
	if (!wg_strmap_init(&fs.seen, 64))
		return WG_ENOMEM;
	wg_buf sub = {0}; /* M.X of `from M import X` */
	for (size_t i = 0; i < wg_pyimports_count(im) && rc == WG_OK; i++) {
		wg_pyedge ev;
		wg_pyimports_edge(im, i, &ev);
		const wg_pyedge *e = &ev;
		if (e->ctx == WG_IMPORT_NONE || e->ctx == WG_IMPORT_LAZY || e->ctx == WG_IMPORT_GUARDED)
			continue;
		if (!wg_rule_in_scope(cc, false, e->file))
			continue;
		char missing[MODULE_MAX];
		const char *why = NULL;
		int st = module_status(c, e->target, missing, &why);
		if (st == MISSING) {
			/* Outside what `import <package>` runs, only what belongs to the wheel counts:
			 * its own package's modules, a module named after it. Another distribution's
			 * module imported by an optional feature (fsspec.implementations.sftp needs
			 * paramiko, which the extra `sftp` brings) is that feature's need. */
			bool reached = e->ctx == WG_IMPORT_REQUIRED && wg_pyimports_reached(im, e->from);
			if (!reached && !strchr(missing, '.') && !own_name(c, missing))
				continue;
			rc = note(c, &fs, missing, ERR_NO_MODULE, why, e);
			continue;
		}
		if (st != PRESENT || e->kind != WG_PYEDGE_FROM || !e->name)
			continue;
		/* __file__, __version__, __path__...: set by the import system or by code we do
		 * not model; never claimed */
		size_t nl = strlen(e->name);
		if (nl > 4 && !strncmp(e->name, "__", 2) && !strcmp(e->name + nl - 2, "__"))
			continue;
		/* from M import X: X an attribute of M, or the submodule M.X */
		if (wg_pyimports_kind(im, e->target) != WG_PYMOD_PACKAGE ||
		    wg_pyimports_open_package(im, e->target))
			continue;
		sub.len = 0;
		if (wg_buf_append(&sub, e->target, strlen(e->target)) < 0 ||
		    wg_buf_append(&sub, ".", 1) < 0 || wg_buf_append(&sub, e->name, nl) < 0) {
			rc = WG_ENOMEM;
			break;
		}
		if (wg_pyimports_kind(im, sub.s) != WG_PYMOD_NONE)
			continue;
		const char *init = wg_pyimports_file(im, e->target);
		unsigned before = init && !strcmp(init, e->file) ? e->line : 0;
		/* run while the package's __init__ is: its own file, or a module of the package
		 * that the package import runs */
		size_t tl = strlen(e->target);
		bool initializing = before || (wg_pyimports_reached(im, e->from) &&
					       !strncmp(e->from, e->target, tl) && e->from[tl] == '.');
		if (wg_pyimports_binds(im, e->target, e->name, before) != 0)
			continue;
		rc = note(c, &fs, sub.s, initializing ? ERR_NO_NAME_PARTIAL : ERR_NO_NAME,
			  before ? "this wheel's package neither contains nor defines before that line"
				 : "this wheel's package neither contains nor defines",
			  e);
	}
	wg_buf_free(&sub);
	for (size_t i = 0; i < fs.kept.len && rc == WG_OK; i++)
		rc = emit(c, wg_vec_at(&fs.kept, i));
	/* the modules past the bound: counted by the engine, with their severities */
	size_t by[3] = {0};
	for (size_t i = 0; i < fs.extra_sev.len; i++)
		by[*(wg_severity *)wg_vec_at(&fs.extra_sev, i)]++;
	for (int sv = 0; sv < 3 && rc == WG_OK; sv++)
		rc = wg_emit_count(cc, (wg_severity)sv, by[sv]);
	wg_vec_free(&fs.kept);
	wg_vec_free(&fs.extra_sev);
	wg_strmap_free(&fs.seen);
	return rc;
}

static const char *const patterns[] = {"compiled", "stdlib", "not_api", NULL};
static const char *const vars[] = {"module", "file", "line", "objects", "why", "when", "error",
				   "hint", "importer", NULL};
const wg_check_kind wg_check_hollow_wheel = {"hollow-wheel", run, patterns, vars, 0};

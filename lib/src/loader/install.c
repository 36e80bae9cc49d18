/*
 * An install judged before it happens: the environment as it will be after installing a set
 * of wheels (each in place of the installed distribution of its name, as pip and uv replace
 * it), seen by the simulated loader, and what that install breaks among the distributions
 * already there.
 *
 * The loader's view: an active plan answers first for the paths its wheels install (their ELF
 * objects, read from the scans), and hides the files of the distributions they replace (the
 * files their RECORD lists) that no wheel installs again; `import torch` is built from the
 * torch the plan leaves. What it breaks: every installed distribution that stays is resolved
 * twice, as the environment is and as the plan leaves it; a load problem that only the second
 * has is the install's doing. It is pinned on the wheel that replaced what the object used (the
 * library that defined the symbol, shipped the library, or defined the version), with that as
 * evidence ("defined by torch 2.11.0 but not by 2.12.0"). Only objects whose load reaches a
 * file the plan removes or replaces, or needs a library name a wheel installs, are resolved the
 * second time: nothing else can change.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ENV /* wg_seterr: what fails here */
#include <dirent.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"

/* ---- making a plan ---- */

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static bool so_like(const char *name)
{
	const char *b = base_of(name);
	return wg_has_suffix(b, ".so") || strstr(b, ".so.") != NULL;
}

/* "flash_attn-2.8.3.dist-info" (a path) -> name "flash_attn", version "2.8.3". */
static void dist_name(wg_arena *a, const char *dist_info, const char **name, const char **version)
{
	const char *b = base_of(dist_info);
	size_t len = strlen(b);
	if (wg_has_suffix(b, ".dist-info"))
		len -= strlen(".dist-info");
	const char *dash = memchr(b, '-', len);
	*name = wg_arena_strndup(a, b, dash ? (size_t)(dash - b) : len);
	*version = dash ? wg_arena_strndup(a, dash + 1, len - (size_t)(dash + 1 - b)) : "";
}

static int oom(wg_scanner *sc)
{
	return wg_seterr(&sc->err, WG_ENOMEM, "out of memory");
}

/* The installed distribution of the normalised name norm that the install replaces, or NULL:
 * one in the site directory the wheels go to. One elsewhere (Debian's /usr/lib/python3/
 * dist-packages under /usr/local's, a venv's system site) is not removed by pip or uv: its
 * files stay where other packages' RUNPATHs find them. */
static const char *installed_dist(const wg_env *e, const wg_plan *p, wg_arena *a, const char *norm)
{
	for (size_t i = 0; i < e->dists.n; i++) {
		const char *name, *version, *d = e->dists.v[i];
		dist_name(a, d, &name, &version);
		const char *n = name ? wg_normalize_name(a, name) : NULL;
		const char *slash = strrchr(d, '/');
		size_t dl = slash ? (size_t)(slash - d) : 0;
		bool here = (strlen(p->site_real) == dl && !strncmp(d, p->site_real, dl)) ||
			    (strlen(p->site) == dl && !strncmp(d, p->site, dl));
		if (n && here && !strcmp(n, norm))
			return d;
	}
	return NULL;
}

/* The files of the distribution a wheel replaces: hidden from the plan's view (their real
 * paths), and its ELF files kept (as the environment has them) for the evidence. */
static int remove_dist(wg_env *e, wg_plan *p, plan_wheel *w)
{
	wg_installed *d = NULL;
	wg_err err = {0};
	if (wg_installed_open(&d, w->dist_info, e->sc->ctx->opts.max_members, &err) < 0)
		return wg_seterr(&e->sc->err, err.code ? err.code : WG_EIO,
				 "the installed distribution %s that %s replaces: %s", w->dist_info,
				 w->path, err.msg);
	bool regular;
	const char *f;
	int rc = WG_OK;
	for (size_t i = 0; rc == WG_OK && (f = wg_installed_file(d, i, &regular)); i++) {
		char full[PATH_MAX], real[PATH_MAX];
		snprintf(full, sizeof(full), "%s/%s", wg_installed_site(d), f);
		if (!regular || !realpath(full, real))
			continue;
		char *k = wg_arena_strdup(&p->arena, real);
		if (!k || wg_strmap_put(&p->removed, k, 0) == SIZE_MAX - 1) {
			rc = oom(e->sc);
			break;
		}
		if (!so_like(f))
			continue;
		const wg_lib *l = wg_env_load(e, real);
		const wg_lib **slot = l ? wg_vec_push(&w->old_libs) : NULL;
		if (slot)
			*slot = l;
	}
	wg_installed_close(d);
	return rc;
}

static int add_wheel(wg_env *e, wg_plan *p, const wg_scan *scan)
{
	wg_arena *a = &p->arena;
	const char *name = scan->fields[WG_WHEEL_NAME] ? scan->fields[WG_WHEEL_NAME]
						       : scan->fields[WG_WHEEL_META_NAME];
	const char *version = scan->fields[WG_WHEEL_VERSION] ? scan->fields[WG_WHEEL_VERSION]
							     : scan->fields[WG_WHEEL_META_VERSION];
	if (!name)
		return WG_OK; /* no name: it replaces nothing that can be known; still installed */
	plan_wheel *w = wg_vec_push(&p->wheels);
	if (!w)
		return oom(e->sc);
	wg_vec_init(&w->old_libs, sizeof(const wg_lib *));
	w->path = wg_arena_strdup(a, scan->path);
	w->name = wg_arena_strdup(a, name);
	w->norm = wg_normalize_name(a, name);
	w->version = wg_arena_strdup(a, version ? version : "");
	if (!w->path || !w->name || !w->norm || !w->version)
		return oom(e->sc);
	for (size_t i = 0; i + 1 < p->wheels.len; i++)
		if (!strcmp(((plan_wheel *)wg_vec_at(&p->wheels, i))->norm, w->norm))
			return wg_seterr(&e->sc->err, WG_EINVAL, "%s and %s are both %s: one install "
					 "takes one wheel of a distribution",
					 ((plan_wheel *)wg_vec_at(&p->wheels, i))->path, w->path, w->name);
	if ((w->dist_info = installed_dist(e, p, a, w->norm))) {
		const char *n;
		dist_name(a, w->dist_info, &n, &w->old_version);
		int rc = remove_dist(e, p, w);
		if (rc < 0)
			return rc;
	}
	size_t wi = p->wheels.len - 1;
	for (size_t i = 0; i < scan->members.len; i++) {
		const wg_member *m = wg_vec_at(&scan->members, i);
		if (!strcmp(m->name, "torch/__init__.py"))
			p->torch_dir = wg_arena_printf(a, "%s/torch", e->site);
		/* the top-level name `import X` finds of what it installs */
		char *where = wg_install_path("", a, m->name);
		const char *rel = where ? where + 1 : NULL;
		size_t n = rel ? strcspn(rel, "/") : 0;
		if (!rel || !n || !strncmp(rel, "..", 2) || (rel[n] != '/' && !strchr(rel, '.')))
			continue;
		if (rel[n] != '/')
			n = strcspn(rel, "."); /* a module file: X.py, X.cpython-312-x86_64-linux-gnu.so */
		char *top = wg_arena_strndup(a, rel, n);
		if (!top || wg_strmap_put(&p->tops, top, 0) == SIZE_MAX - 1)
			return oom(e->sc);
	}
	for (size_t i = 0; i < scan->objects.len; i++) {
		const wg_object *o = *(wg_object **)wg_vec_at(&scan->objects, i);
		if (o->error || !o->type || strcmp(o->type, "dyn"))
			continue;
		char *where = wg_install_path(e->site, a, o->path);
		char key[PATH_MAX];
		if (!where)
			return oom(e->sc);
		wg_plan_key(p, key, sizeof(key), where);
		char *k = wg_arena_strdup(a, key);
		plan_lib *l = k ? wg_vec_push(&p->libs) : NULL;
		if (!l || !(l->lib = wg_lib_from_object(o, k)))
			return oom(e->sc);
		l->path = k;
		l->wheel = wi;
		size_t at = wg_strmap_put(&p->by_path, k, p->libs.len - 1);
		if (at == SIZE_MAX - 1)
			return oom(e->sc);
		/* Two wheels installing one path: the first answers (pip would fail or overwrite;
		 * wheelgate does not guess which). */
		if (wg_strmap_put(&p->names, l->lib->soname, 0) == SIZE_MAX - 1 ||
		    wg_strmap_put(&p->names, base_of(k), 0) == SIZE_MAX - 1)
			return oom(e->sc);
	}
	return WG_OK;
}

/* ---- what the install breaks ---- */

typedef struct {
	const char *dist, *dist_version, *path, *shown;
	wg_vec issues; /* wg_ld_issue, the environment as it is */
} dependent;

static bool same_issue(const wg_ld_issue *x, const wg_ld_issue *y)
{
	return x->kind == y->kind && !strcmp(x->object, y->object) &&
	       !strcmp(x->library ? x->library : "", y->library ? y->library : "") &&
	       !strcmp(x->symbol ? x->symbol : "", y->symbol ? y->symbol : "") &&
	       !strcmp(x->version ? x->version : "", y->version ? y->version : "");
}

/* Whether the load of a library in scope can come out otherwise under the plan. */
static bool touched(const wg_plan *p, const wg_vec *scope)
{
	for (size_t i = 0; i < scope->len; i++) {
		const wg_lib *l = *(const wg_lib **)wg_vec_at(scope, i);
		if (wg_strmap_get(&p->removed, l->path) != SIZE_MAX)
			return true;
		for (size_t k = 0; k < l->needed.n; k++)
			if (wg_strmap_get(&p->names, l->needed.v[k]) != SIZE_MAX)
				return true;
	}
	return false;
}

/* The wheel whose replacement made x happen, and the evidence. */
static size_t blame(wg_plan *p, const wg_ld_issue *x, const char **evidence)
{
	*evidence = "";
	for (size_t w = 0; w < p->wheels.len; w++) {
		plan_wheel *pw = wg_vec_at(&p->wheels, w);
		for (size_t i = 0; i < pw->old_libs.len; i++) {
			const wg_lib *l = *(const wg_lib **)wg_vec_at(&pw->old_libs, i);
			bool named = x->library && (!strcmp(l->soname, x->library) ||
						    !strcmp(base_of(l->path), x->library));
			const char *what = NULL;
			if (x->kind == WG_LD_UNRESOLVED && wg_lib_lookup(l, x->symbol, x->version))
				what = "defined by";
			else if (x->kind == WG_LD_MISSING_LIBRARY && named)
				what = "shipped by";
			else if (x->kind == WG_LD_MISSING_VERSION && named)
				for (size_t v = 0; v < l->verdefs.n && !what; v++)
					if (!strcmp(l->verdefs.v[v], x->version))
						what = "defined by";
			if (what) {
				*evidence = wg_arena_printf(&p->arena, ", %s %s %s but not by %s", what,
							    pw->name, pw->old_version, pw->version);
				return w;
			}
		}
	}
	/* A library of the install answers the name (found before the installed one). */
	for (size_t i = 0; x->library && i < p->libs.len; i++) {
		const plan_lib *l = wg_vec_at(&p->libs, i);
		if (strcmp(l->lib->soname, x->library) && strcmp(base_of(l->path), x->library))
			continue;
		const plan_wheel *pw = wg_vec_at(&p->wheels, l->wheel);
		*evidence = wg_arena_printf(&p->arena, ", with %s of %s %s loaded in place of the "
					    "installed one", x->library, pw->name, pw->version);
		return l->wheel;
	}
	/* Nothing the replaced distributions had explains it: the first wheel that replaces
	 * one (or the first), without evidence. */
	for (size_t w = 0; w < p->wheels.len; w++)
		if (((plan_wheel *)wg_vec_at(&p->wheels, w))->dist_info)
			return w;
	return 0;
}

static int compute_breaks(wg_env *e, wg_plan *p, wg_arena *a)
{
	wg_vec deps, cands;
	wg_vec_init(&deps, sizeof(dependent));
	wg_vec_init(&cands, sizeof(dependent));
	int rc = WG_OK;
	bool with_torch = e->torch_dir || p->torch_dir;
	/* The shared objects of the distributions that stay, from their RECORDs (nothing read
	 * yet); whether one has a name a library of the install answers (it may be found first). */
	bool shadow = false;
	for (size_t i = 0; i < e->dists.n && rc == WG_OK; i++) {
		const char *name, *version;
		dist_name(a, e->dists.v[i], &name, &version);
		const char *norm = name ? wg_normalize_name(a, name) : NULL;
		bool replaced = false;
		for (size_t w = 0; norm && w < p->wheels.len && !replaced; w++) {
			const plan_wheel *pw = wg_vec_at(&p->wheels, w);
			replaced = !strcmp(pw->norm, norm) && pw->dist_info &&
				   !strcmp(pw->dist_info, e->dists.v[i]);
		}
		if (!norm || replaced)
			continue;
		wg_installed *d = NULL;
		wg_err err = {0};
		if (wg_installed_open(&d, e->dists.v[i], e->sc->ctx->opts.max_members, &err) < 0)
			continue; /* what cannot be read is not judged here (audit says why) */
		p->dists++;
		bool regular;
		const char *f;
		for (size_t k = 0; rc == WG_OK && (f = wg_installed_file(d, k, &regular)); k++) {
			if (!regular || !so_like(f))
				continue;
			dependent *c = wg_vec_push(&cands);
			if (!c) {
				rc = oom(e->sc);
				break;
			}
			*c = (dependent){name, version, wg_arena_printf(a, "%s/%s", wg_installed_site(d), f),
					 wg_arena_strdup(a, f), {0}};
			if (!c->path || !c->shown)
				rc = oom(e->sc);
			shadow = shadow || wg_strmap_get(&p->names, base_of(f)) != SIZE_MAX;
		}
		wg_installed_close(d);
	}
	/* Nothing removed and no name shadowed: every load comes out as before. */
	if (rc < 0 || (!p->removed.n && !shadow))
		goto done;
	/* The environment as it is. */
	p->active = false;
	wg_env_unload(e);
	for (size_t i = 0; i < cands.len && rc == WG_OK; i++) {
		const dependent *c = wg_vec_at(&cands, i);
		const wg_lib *l = wg_env_load(e, c->path);
		if (!l)
			continue;
		p->roots++;
		dependent *dep = wg_vec_push(&deps);
		if (!dep) {
			rc = oom(e->sc);
			break;
		}
		*dep = *c;
		wg_vec_init(&dep->issues, sizeof(wg_ld_issue));
		/* The libraries its load reaches first (cheap); the symbols only when the plan
		 * changes one of them. */
		wg_vec scope = {0};
		bool assumed = false;
		rc = wg_resolve_lib(e, l, dep->shown, a, &dep->issues, &assumed, with_torch, &scope,
				    true);
		bool moved = rc == WG_OK && touched(p, &scope);
		wg_vec_free(&scope);
		dep->issues.len = 0;
		if (moved)
			rc = wg_resolve_lib(e, l, dep->shown, a, &dep->issues, &assumed, with_torch,
					    NULL, false);
		if (!moved) {
			wg_vec_free(&dep->issues);
			deps.len--;
		}
	}
	/* As the plan leaves it. */
	p->active = true;
	wg_env_unload(e);
	for (size_t i = 0; i < deps.len && rc == WG_OK; i++) {
		dependent *dep = wg_vec_at(&deps, i);
		const wg_lib *l = wg_env_load(e, dep->path);
		if (!l)
			continue;
		p->rechecked++;
		wg_vec after;
		wg_vec_init(&after, sizeof(wg_ld_issue));
		bool assumed = false;
		rc = wg_resolve_lib(e, l, dep->shown, a, &after, &assumed, with_torch, NULL, false);
		for (size_t k = 0; k < after.len && rc == WG_OK; k++) {
			const wg_ld_issue *x = wg_vec_at(&after, k);
			if (x->kind == WG_LD_NOT_READ)
				continue; /* not known to fail: never blamed on the install */
			bool before = false;
			for (size_t j = 0; j < dep->issues.len && !before; j++)
				before = same_issue(x, wg_vec_at(&dep->issues, j));
			if (before)
				continue;
			wg_plan_break *b = wg_vec_push(&p->breaks);
			if (!b) {
				rc = oom(e->sc);
				break;
			}
			size_t w = blame(p, x, &b->evidence);
			b->wheel = ((plan_wheel *)wg_vec_at(&p->wheels, w))->path;
			b->dist = wg_arena_strdup(&p->arena, dep->dist);
			b->dist_version = wg_arena_strdup(&p->arena, dep->dist_version);
			b->object = wg_arena_strdup(&p->arena, x->object);
			b->kind = x->kind;
			b->symbol = x->symbol ? wg_arena_strdup(&p->arena, x->symbol) : NULL;
			b->version = x->version ? wg_arena_strdup(&p->arena, x->version) : NULL;
			b->library = x->library ? wg_arena_strdup(&p->arena, x->library) : NULL;
			b->torch = x->torch;
		}
		wg_vec_free(&after);
	}
done:
	for (size_t i = 0; i < deps.len; i++)
		wg_vec_free(&((dependent *)wg_vec_at(&deps, i))->issues);
	wg_vec_free(&deps);
	wg_vec_free(&cands);
	wg_env_unload(e);
	return rc;
}

static int wg_env_set_install_impl(wg_env *env, wg_scanner *sc, const wg_scan *const *scans, size_t n)
{
	if (!env || !sc || (n && !scans)) {
		if (sc)
			return wg_seterr(&sc->err, WG_EINVAL, "wg_env_set_install: no environment");
		return WG_EINVAL;
	}
	/* What `import torch` loaded may be the plan's libraries: forgotten before they go. */
	wg_env_unload(env);
	wg_plan_free(env->plan);
	env->plan = NULL;
	if (n == 0)
		return WG_OK;
	wg_plan *p = calloc(1, sizeof(*p));
	if (!p)
		return oom(sc);
	wg_scanner *keep = env->sc;
	env->sc = sc;
	wg_vec_init(&p->wheels, sizeof(plan_wheel));
	wg_vec_init(&p->libs, sizeof(plan_lib));
	wg_vec_init(&p->breaks, sizeof(wg_plan_break));
	char real[PATH_MAX];
	p->site = wg_arena_strdup(&p->arena, env->site);
	p->site_real = realpath(env->site, real) ? wg_arena_strdup(&p->arena, real) : p->site;
	int rc = p->site && p->site_real && wg_strmap_init(&p->by_path, 64) &&
			 wg_strmap_init(&p->removed, 256) && wg_strmap_init(&p->names, 64) &&
			 wg_strmap_init(&p->tops, 64)
		 ? WG_OK : oom(sc);
	for (size_t i = 0; i < n && rc == WG_OK; i++)
		if (scans[i] && scans[i]->kind == WG_SCAN_WHEEL)
			rc = add_wheel(env, p, scans[i]);
	env->plan = p;
	if (rc == WG_OK) {
		/* Scratch for the resolutions: the breaks keep copies in the plan's arena. */
		wg_arena scratch = {0};
		rc = compute_breaks(env, p, &scratch);
		wg_arena_free(&scratch);
	}
	env->sc = keep;
	if (rc < 0) {
		wg_env_unload(env);
		env->plan = NULL;
		wg_plan_free(p);
		return rc;
	}
	p->active = true;
	return WG_OK;
}

/* The scanner keeps the message; a failure also fills this thread's error record. */
WG_API int wg_env_set_install(wg_env *env, wg_scanner *sc, const wg_scan *const *scans, size_t n)
{
	if (sc)
		sc->err.msg[0] = '\0';
	return wg_error_from(sc ? &sc->err : NULL, wg_env_set_install_impl(env, sc, scans, n));
}

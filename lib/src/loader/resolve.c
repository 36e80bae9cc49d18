/*
 * The loader, simulated: what happens when an extension is imported after `import torch`.
 * The interpreter and its libraries, and what torch loads RTLD_GLOBAL
 * (libtorch_global_deps.so), are the global scope; torch's other libraries are loaded and
 * found again by SONAME; everything else is searched as ld.so does (DT_RPATH unless there is
 * a DT_RUNPATH, DT_RUNPATH, then the system directories), with $ORIGIN expanded to where the
 * wheel installs each object. Python imports extensions with RTLD_NOW, so every symbol and
 * version need of every newly loaded object must be met.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h"

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

const wg_lib *wg_env_load_note(wg_env *e, const char *path, wg_ld_note *note)
{
	char real[PATH_MAX];
	struct stat st;
	/* The environment as an install plan leaves it: its wheels' objects, not the files of
	 * the distributions they replace. */
	const wg_lib *planned = wg_plan_lookup(e, path);
	if (planned)
		return planned;
	if (!realpath(path, real)) {
		if (errno == EACCES)
			wg_ld_note_set(note, true, false, "%s: unreadable (permission denied)", path);
		return NULL;
	}
	if (wg_plan_removes(e, real))
		return NULL;
	for (size_t i = 0; i < e->libs.len; i++) {
		wg_lib *l = *(wg_lib **)wg_vec_at(&e->libs, i);
		if (!strcmp(l->path, real))
			return l;
	}
	/* Opened once, and its header read, before the cache is asked: what is not an ELF
	 * library of this machine, or is not a regular file, is never read (nor hashed). */
	int fd = wg_lib_open(real, e->sc->ctx->opts.max_member_size, &st, note);
	if (fd < 0)
		return NULL;
	wg_lib *l = wg_cache_get(e, real, (uint64_t)st.st_size, (uint64_t)st.st_mtime);
	if (l) {
		e->cache_hits++;
	} else {
		l = wg_read_library(fd, real, (uint64_t)st.st_size, e->sc->matcher,
				    e->sc->ctx->opts.max_symbols);
		if (!l) {
			wg_ld_note_set(note, true, true, "%s: not a readable ELF object", real);
			close(fd);
			return NULL;
		}
		l->size = (uint64_t)st.st_size;
		l->mtime = (uint64_t)st.st_mtime;
		wg_cache_put(e, l);
	}
	close(fd);
	wg_lib **slot = wg_vec_push(&e->libs);
	if (!slot) {
		wg_lib_free(l);
		return NULL;
	}
	*slot = l;
	return l;
}

const wg_lib *wg_env_load(wg_env *e, const char *path)
{
	return wg_env_load_note(e, path, NULL);
}

/* One resolution: the objects of the wheel at their install paths, and the new loads. */
typedef struct {
	wg_env *e;
	const wg_vec *vlibs; /* wg_lib*: the wheel's own ELF objects, installed */
	wg_vec scope;    /* const wg_lib*: the local scope, in breadth-first order */
	wg_vec fresh;    /* const wg_lib*: objects this import loads */
	char input[PATH_MAX]; /* a lone object's directory, a scanned directory: "" for a wheel */
} rctx;

static bool below(const char *dir, const char *root)
{
	size_t n = strlen(root);
	return n && !strncmp(dir, root, n) && (dir[n] == '\0' || dir[n] == '/');
}

/* What the current resolution sees of the preloaded state. */
static size_t nloaded(const wg_env *e)
{
	return e->limit < e->loaded.len ? e->limit : e->loaded.len;
}

static bool is_loaded(wg_env *e, const wg_lib *l)
{
	for (size_t i = 0; i < nloaded(e); i++)
		if (*(const wg_lib **)wg_vec_at(&e->loaded, i) == l)
			return true;
	return false;
}

static bool in_vec(const wg_vec *v, const wg_lib *l)
{
	for (size_t i = 0; i < v->len; i++)
		if (*(const wg_lib **)wg_vec_at(v, i) == l)
			return true;
	return false;
}

static const wg_lib *already(wg_env *e, const wg_vec *extra, const char *name)
{
	for (size_t i = 0; i < nloaded(e); i++) {
		const wg_lib *l = *(const wg_lib **)wg_vec_at(&e->loaded, i);
		if (!strcmp(l->soname, name) || !strcmp(base_of(l->path), name))
			return l;
	}
	for (size_t i = 0; extra && i < extra->len; i++) {
		const wg_lib *l = *(const wg_lib **)wg_vec_at(extra, i);
		if (!strcmp(l->soname, name) || !strcmp(base_of(l->path), name))
			return l;
	}
	return NULL;
}

static const wg_lib *try_dir(rctx *r, const char *dir, const char *name, wg_ld_note *note)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (size_t i = 0; r->vlibs && i < r->vlibs->len; i++) {
		const wg_lib *l = *(const wg_lib **)wg_vec_at(r->vlibs, i);
		if (!strcmp(l->path, path))
			return l;
	}
	const wg_lib *planned = wg_plan_lookup(r->e, path);
	if (planned)
		return planned;
	/* A directory that is not there holds nothing, for ld.so as for wheelgate. One outside
	 * the environment and the system's directories is not searched, and that is said. */
	char real[PATH_MAX];
	if (!realpath(dir, real)) {
		if (errno == EACCES)
			wg_ld_note_set(note, true, false, "%s: unreadable (permission denied)", dir);
		return NULL;
	}
	if (!wg_env_allows(r->e, real) && !below(real, r->input)) {
		wg_ld_note_set(note, true, false, "%s is outside the environment and the system's "
			       "library directories: not searched", dir);
		return NULL;
	}
	struct stat st;
	if (lstat(path, &st) != 0) {
		if (errno == EACCES)
			wg_ld_note_set(note, true, false, "%s: unreadable (permission denied)", path);
		return NULL;
	}
	return wg_env_load_note(r->e, path, note);
}

bool wg_env_allows(const wg_env *e, const char *dir)
{
	for (size_t i = 0; i < e->roots.n; i++) {
		const char *r = e->roots.v[i];
		size_t n = strlen(r);
		if (!strncmp(dir, r, n) && (dir[n] == '\0' || dir[n] == '/' || (n == 1 && r[0] == '/')))
			return true;
	}
	return false;
}

/* Searches a DT_RPATH/DT_RUNPATH list, $ORIGIN being the requester's directory. */
static const wg_lib *try_path(rctx *r, const char *list, const char *origin, const char *name,
			      wg_ld_note *note)
{
	char buf[8192];
	snprintf(buf, sizeof(buf), "%s", list);
	char *save = NULL;
	for (char *d = strtok_r(buf, ":", &save); d && !note->stop; d = strtok_r(NULL, ":", &save)) {
		char dir[PATH_MAX];
		const char *o = strstr(d, "$ORIGIN"), *ob = strstr(d, "${ORIGIN}");
		if (o)
			snprintf(dir, sizeof(dir), "%.*s%s%s", (int)(o - d), d, origin, o + 7);
		else if (ob)
			snprintf(dir, sizeof(dir), "%.*s%s%s", (int)(ob - d), d, origin, ob + 9);
		else
			snprintf(dir, sizeof(dir), "%s", d);
		const wg_lib *l = try_dir(r, dir, name, note);
		if (l)
			return l;
	}
	return NULL;
}

/* The library a DT_NEEDED name loads, searched as ld.so does; NULL (and why, in note, when a
 * candidate was not searched or not read) when none. */
static const wg_lib *find_needed(rctx *r, const wg_lib *req, const char *name, wg_ld_note *note)
{
	const wg_lib *l = already(r->e, &r->fresh, name);
	if (l)
		return l;
	if (strchr(name, '/')) {
		/* A path: only where a search could have led. */
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%.*s", (int)(base_of(name) - name), name);
		if (name[0] != '/') {
			wg_ld_note_set(note, true, false, "%s is a relative path, found from the working "
				       "directory of the import: not searched", name);
			return NULL;
		}
		return try_dir(r, dir[0] ? dir : "/", base_of(name), note);
	}
	char origin[PATH_MAX];
	snprintf(origin, sizeof(origin), "%.*s", (int)(base_of(req->path) - req->path - 1), req->path);
	if (req->rpath && !req->runpath && (l = try_path(r, req->rpath, origin, name, note)))
		return l;
	if (req->runpath && !note->stop && (l = try_path(r, req->runpath, origin, name, note)))
		return l;
	for (size_t i = 0; i < r->e->system_dirs.n && !note->stop; i++)
		if ((l = try_dir(r, r->e->system_dirs.v[i], name, note)))
			return l;
	return NULL;
}

/* Loads lib and everything it needs into e->loaded (the `import torch` state). */
static void preload_tree(wg_env *e, const wg_lib *root, bool global)
{
	rctx r = {e, NULL, {0}, {0}, ""};
	wg_vec queue;
	wg_vec_init(&queue, sizeof(const wg_lib *));
	wg_vec_init(&r.fresh, sizeof(const wg_lib *));
	const wg_lib **q = wg_vec_push(&queue);
	if (q)
		*q = root;
	for (size_t i = 0; i < queue.len; i++) {
		const wg_lib *l = *(const wg_lib **)wg_vec_at(&queue, i);
		if (is_loaded(e, l))
			continue;
		((wg_lib *)l)->global = ((wg_lib *)l)->global || global;
		const wg_lib **slot = wg_vec_push(&e->loaded);
		if (slot)
			*slot = l;
		for (size_t k = 0; k < l->needed.n; k++) {
			wg_ld_note note = {0};
			const wg_lib *d = find_needed(&r, l, l->needed.v[k], &note);
			if (d && !is_loaded(e, d) && (q = wg_vec_push(&queue)))
				*q = d;
		}
	}
	wg_vec_free(&queue);
	wg_vec_free(&r.fresh);
}

/* Resets what `import torch` loaded: the next resolution builds it again (after an install
 * plan is switched on or off). */
void wg_env_unload(wg_env *e)
{
	if (!e->preloaded)
		return;
	for (size_t i = 0; i < e->loaded.len; i++)
		(*(wg_lib **)wg_vec_at(&e->loaded, i))->global = false;
	wg_vec_free(&e->loaded);
	e->preloaded = false;
	e->npython = 0;
}

static void preload(wg_env *e)
{
	if (e->preloaded)
		return;
	e->preloaded = true;
	e->limit = SIZE_MAX;
	wg_vec_init(&e->loaded, sizeof(const wg_lib *));
	const wg_lib *py = e->python ? wg_env_load(e, e->python) : NULL;
	if (py)
		preload_tree(e, py, true);
	e->npython = e->loaded.len;
	const char *torch_dir = wg_plan_torch_dir(e);
	if (!torch_dir)
		return;
	char dir[PATH_MAX], path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/lib/libtorch_global_deps.so", torch_dir);
	const wg_lib *gd = wg_env_load(e, path);
	if (gd)
		preload_tree(e, gd, true);
	/* torch/_C*.so and what it needs (RTLD_LOCAL); without it, every library in torch/lib. */
	wg_strlist found = {0};
	wg_arena scratch = {0};
	snprintf(dir, sizeof(dir), "%s", torch_dir);
	wg_plan_glob(e, &scratch, dir, "_C*.so", &found);
	const wg_lib *c = found.n ? wg_env_load(e, found.v[0]) : NULL;
	if (c) {
		preload_tree(e, c, false);
	} else {
		wg_strlist_free(&found);
		found = (wg_strlist){0};
		snprintf(dir, sizeof(dir), "%s/lib", torch_dir);
		wg_plan_glob(e, &scratch, dir, "*.so*", &found);
		for (size_t i = 0; i < found.n; i++) {
			const wg_lib *l = wg_env_load(e, found.v[i]);
			if (l)
				preload_tree(e, l, false);
		}
	}
	wg_strlist_free(&found);
	wg_arena_free(&scratch);
}

/* torch's libraries, by SONAME or file name: libc10.so, libc10_cuda.so, libtorch_cpu.so... */
static bool is_torch_lib(const char *name)
{
	return wg_has_prefix(name, "libc10") || wg_has_prefix(name, "libtorch");
}

static const char *display(const wg_lib *l, const char *shown, const wg_lib *root)
{
	return l == root ? shown : l->path;
}

static int add_issue(wg_vec *issues, wg_arena *a, wg_ld_kind kind, const char *object,
		     const char *library, const wg_libsym *s, const char *root)
{
	wg_ld_issue *x = wg_vec_push(issues);
	if (!x)
		return WG_ENOMEM;
	x->kind = kind;
	x->root = root;
	x->object = wg_arena_strdup(a, object);
	x->library = library ? wg_arena_strdup(a, library) : NULL;
	if (s) {
		x->symbol = wg_arena_strdup(a, s->name);
		x->version = s->version ? wg_arena_strdup(a, s->version) : NULL;
		x->string_abi = s->string_abi;
		x->torch = s->torch;
	}
	return WG_OK;
}

static bool version_missing(const wg_vec *issues, const char *object, const char *version)
{
	for (size_t i = 0; i < issues->len; i++) {
		const wg_ld_issue *x = wg_vec_at(issues, i);
		if (x->kind == WG_LD_MISSING_VERSION && !strcmp(x->object, object) &&
		    !strcmp(x->version, version))
			return true;
	}
	return false;
}

/* The resolution of root, named shown in the issues; input: a directory the user pointed at
 * ("" for none); scope_out (may be NULL): every library in the load's scope, root first. */
static int resolve(wg_env *e, const wg_lib *root, const char *shown, const char *input,
		   const wg_vec *vlibs, wg_arena *a, wg_vec *issues, bool *python_assumed,
		   bool with_torch, wg_vec *scope_out, bool scope_only)
{
	preload(e);
	e->limit = with_torch ? SIZE_MAX : e->npython;
	size_t first_issue = issues->len;
	rctx r = {e, vlibs, {0}, {0}, ""};
	snprintf(r.input, sizeof(r.input), "%s", input);
	wg_vec_init(&r.scope, sizeof(const wg_lib *));
	wg_vec_init(&r.fresh, sizeof(const wg_lib *));
	int rc = WG_OK;
	if (!root)
		goto done;
	/* Breadth first, as ld.so loads: the root, what it needs, what those need... */
	const wg_lib **slot = wg_vec_push(&r.scope);
	if (!slot) {
		rc = WG_ENOMEM;
		goto done;
	}
	*slot = root;
	const wg_lib **f = wg_vec_push(&r.fresh);
	if (f)
		*f = root;
	for (size_t i = 0; i < r.scope.len && rc == WG_OK; i++) {
		const wg_lib *l = *(const wg_lib **)wg_vec_at(&r.scope, i);
		bool old = is_loaded(e, l);
		for (size_t k = 0; k < l->needed.n && rc == WG_OK; k++) {
			/* What `import torch` loaded brought its own dependencies: they are in the
			 * scope, but a library it could not find is torch's problem, not this one's. */
			wg_ld_note note = {0};
			const wg_lib *d = old ? already(e, NULL, l->needed.v[k])
					      : find_needed(&r, l, l->needed.v[k], &note);
			if (!d && old)
				continue;
			if (!d) {
				/* Not found where it was looked for, or a candidate not searched or not
				 * read: then whether it loads is not known, and said as such. */
				rc = add_issue(issues, a, note.uncertain ? WG_LD_NOT_READ
								 : WG_LD_MISSING_LIBRARY,
					       display(l, shown, root), l->needed.v[k], NULL, shown);
				if (rc == WG_OK && (note.uncertain || note.certain_stop))
					((wg_ld_issue *)wg_vec_at(issues, issues->len - 1))->detail =
						wg_arena_strdup(a, note.text);
				continue;
			}
			if (in_vec(&r.scope, d))
				continue;
			if ((slot = wg_vec_push(&r.scope)))
				*slot = d;
			if (!is_loaded(e, d) && !in_vec(&r.fresh, d) && (f = wg_vec_push(&r.fresh)))
				*f = d;
		}
	}
	if (scope_only)
		goto done;
	/* ld.so stops at the first library it cannot find: no symbol is looked up then (nor
	 * when a library was not read: what it would define is not known). */
	for (size_t i = first_issue; i < issues->len; i++) {
		wg_ld_kind k = ((wg_ld_issue *)wg_vec_at(issues, i))->kind;
		if (k == WG_LD_MISSING_LIBRARY || k == WG_LD_NOT_READ)
			goto done;
	}
	/* Every newly loaded object's version needs and symbols (RTLD_NOW). */
	for (size_t i = 0; i < r.fresh.len && rc == WG_OK; i++) {
		const wg_lib *l = *(const wg_lib **)wg_vec_at(&r.fresh, i);
		for (size_t k = 0; k < l->verneeds.len && rc == WG_OK; k++) {
			const wg_verneed *v = wg_vec_at(&l->verneeds, k);
			const wg_lib *p = already(e, &r.scope, v->file);
			if (!p || v->weak)
				continue;
			bool have = false;
			for (size_t j = 0; j < p->verdefs.n && !have; j++)
				have = !strcmp(p->verdefs.v[j], v->version);
			if (!have) {
				wg_libsym s = {"", v->version, 0, 0, 0, 0};
				rc = add_issue(issues, a, WG_LD_MISSING_VERSION, display(l, shown, root),
					       v->file, &s, shown);
				/* The wheel's own objects' C/C++ runtime needs are judged against the
				 * target system by WG-SYS-001; the loader still stops there. */
				char fam[16];
				wg_ld_issue *x = rc == WG_OK ? wg_vec_at(issues, issues->len - 1) : NULL;
				if (x && in_vec(vlibs, l) &&
				    wg_sysver_family(v->file, v->version, fam, sizeof(fam)))
					x->system = true;
			}
		}
		for (size_t k = 0; k < l->nundefs && rc == WG_OK; k++) {
			const wg_libsym *u = &l->undefs[k];
			if (u->weak)
				continue;
			if (u->version && version_missing(issues, display(l, shown, root), u->version))
				continue; /* the loader stops at the version: reported as such */
			bool found = false;
			for (size_t j = 0; j < nloaded(e) && !found; j++) {
				const wg_lib *g = *(const wg_lib **)wg_vec_at(&e->loaded, j);
				found = g->global && wg_lib_lookup(g, u->name, u->version);
			}
			for (size_t j = 0; j < r.scope.len && !found; j++)
				found = wg_lib_lookup(*(const wg_lib **)wg_vec_at(&r.scope, j), u->name,
						      u->version) != NULL;
			if (found)
				continue;
			if (!e->python && (wg_has_prefix(u->name, "Py") || wg_has_prefix(u->name, "_Py"))) {
				*python_assumed = true; /* no interpreter to read: taken as provided */
				continue;
			}
			/* The library it was expected from: the version's file, or for torch's
			 * symbols the first torch library the object needs. */
			const char *from = NULL;
			for (size_t j = 0; u->version && j < l->verneeds.len && !from; j++) {
				const wg_verneed *v = wg_vec_at(&l->verneeds, j);
				if (!strcmp(v->version, u->version))
					from = v->file;
			}
			for (size_t j = 0; !from && u->torch && j < l->needed.n; j++)
				if (is_torch_lib(l->needed.v[j]))
					from = l->needed.v[j];
			/* A torch symbol the load cannot see: torch's libraries are loaded
			 * RTLD_LOCAL, so only a load that brings one of them (a DT_NEEDED entry of
			 * one of its objects) searches them. Which of them defines it, if any. */
			bool torch_in_load = false;
			const char *local_def = NULL;
			for (size_t j = 0; u->torch && j < r.scope.len && !torch_in_load; j++) {
				const wg_lib *g = *(const wg_lib **)wg_vec_at(&r.scope, j);
				torch_in_load = is_torch_lib(g->soname ? g->soname : base_of(g->path));
			}
			for (size_t j = 0; u->torch && !torch_in_load && j < nloaded(e) && !local_def;
			     j++) {
				const wg_lib *g = *(const wg_lib **)wg_vec_at(&e->loaded, j);
				if (!g->global && wg_lib_lookup(g, u->name, u->version))
					local_def = g->soname ? g->soname : base_of(g->path);
			}
			rc = add_issue(issues, a, WG_LD_UNRESOLVED, display(l, shown, root),
				       from ? from : local_def, u, shown);
			wg_ld_issue *x = rc == WG_OK ? wg_vec_at(issues, issues->len - 1) : NULL;
			if (x) {
				x->torch_in_load = torch_in_load;
				x->local_def = local_def ? wg_arena_strdup(a, local_def) : NULL;
			}
		}
	}
done:
	if (scope_out) {
		*scope_out = r.scope;
		r.scope = (wg_vec){0};
	}
	wg_vec_free(&r.scope);
	wg_vec_free(&r.fresh);
	return rc;
}

int wg_resolve(wg_env *e, const wg_scan *scan, const wg_object *obj, const wg_lib *root,
	       const wg_vec *vlibs, wg_arena *a, wg_vec *issues, bool *python_assumed,
	       bool with_torch)
{
	/* What the user pointed at, outside a wheel, is read where it lies: its directory too. */
	char input[PATH_MAX] = "";
	struct stat st;
	if (wg_scan_is_dist(scan) || !realpath(scan->path, input) || stat(input, &st) != 0) {
		input[0] = '\0';
	} else if (!S_ISDIR(st.st_mode)) {
		char *slash = strrchr(input, '/');
		if (slash)
			slash[slash == input] = '\0';
	}
	return resolve(e, root, obj->path, input, vlibs, a, issues, python_assumed, with_torch,
		       NULL, false);
}

int wg_resolve_lib(wg_env *e, const wg_lib *root, const char *shown, wg_arena *a,
		   wg_vec *issues, bool *python_assumed, bool with_torch, wg_vec *scope,
		   bool scope_only)
{
	return resolve(e, root, shown, "", NULL, a, issues, python_assumed, with_torch, scope,
		       scope_only);
}

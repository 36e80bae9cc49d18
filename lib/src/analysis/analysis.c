/*
 * The analysis step: facts derived from the facts of one input, each computed once per input
 * on first use (analysis.h). Linear in the objects and members of the input: objects are
 * found by the name they answer DT_NEEDED entries with through a sorted index, modules in a
 * hash set, and the loader's records of the objects are built once for every load.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

typedef struct {
	bool done;
	size_t n;
	wg_sysneed need[WG_SYS_FAMILIES];
} sysneeds;

typedef struct {
	bool done;
	wg_gpu_verdict v;
} verdict;

/* An object by the name it answers a DT_NEEDED entry with (its SONAME, else its file name). */
typedef struct {
	const char *name;
	size_t i;
} by_name;

struct wg_analysis {
	wg_arena arena; /* scratch: everything below that is not malloc'd */
	const wg_scan *scan;
	const wg_target *target;
	size_t n;       /* objects */
	/* load roles */
	bool roles_done, imports_done;
	int roles_rc;
	wg_role *roles;
	wg_pyimports *imports;
	by_name *names; /* sorted by name, then object */
	/* the loader's records, installed */
	bool libs_done;
	int libs_rc;
	wg_lib **libs;  /* per object */
	wg_vec all;     /* wg_lib*: the ones that exist */
	/* system needs, GPU verdicts */
	sysneeds *needs;
	verdict *verdicts; /* n * target->ngpus */
	/* where the members are installed (relative to the site directory), sorted */
	bool paths_done;
	int paths_rc;
	const char **paths;
	size_t npaths;
	/* Requires-Dist without an extra, normalised: a hash set */
	bool requires_done;
	wg_strmap requires;
	/* shipped modules: open addressing, NULL empty */
	bool ships_done;
	int ships_rc;
	const char **set;
	size_t set_cap, set_len;
};

int wg_analysis_new(wg_analysis **out, const wg_scan *scan, const wg_target *target)
{
	*out = NULL;
	wg_analysis *an = calloc(1, sizeof(*an));
	if (!an)
		return WG_ENOMEM;
	an->scan = scan;
	an->target = target;
	an->n = scan->objects.len;
	wg_vec_init(&an->all, sizeof(wg_lib *));
	size_t n = an->n ? an->n : 1, ngpus = target->ngpus ? target->ngpus : 1;
	an->needs = calloc(n, sizeof(*an->needs));
	an->verdicts = n <= SIZE_MAX / sizeof(*an->verdicts) / ngpus
			       ? calloc(n * ngpus, sizeof(*an->verdicts)) : NULL;
	if (!an->needs || !an->verdicts) {
		wg_analysis_free(an);
		return WG_ENOMEM;
	}
	*out = an;
	return WG_OK;
}

void wg_analysis_free(wg_analysis *an)
{
	if (!an)
		return;
	for (size_t i = 0; an->libs && i < an->n; i++)
		wg_lib_free(an->libs[i]);
	free(an->libs);
	wg_vec_free(&an->all);
	free(an->roles);
	free(an->names);
	free(an->needs);
	free(an->verdicts);
	free(an->set);
	free(an->paths);
	wg_strmap_free(&an->requires);
	wg_pyimports_free(an->imports);
	wg_arena_free(&an->arena);
	free(an);
}

static const wg_object *object_at(const wg_analysis *an, size_t i)
{
	return *(wg_object **)wg_vec_at(&an->scan->objects, i);
}

/* ---- load roles ---- */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static bool loadable(const wg_object *o)
{
	return !o->error && o->type && !strcmp(o->type, "dyn");
}

static int cmp_name(const void *a, const void *b)
{
	const by_name *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/* The first entry of the objects answering name, in object order; *count how many. */
static const by_name *answering(const wg_analysis *an, const char *name, size_t *count)
{
	size_t lo = 0, hi = an->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(an->names[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t e = lo;
	while (e < an->n && !strcmp(an->names[e].name, name))
		e++;
	*count = e - lo;
	return an->names + lo;
}

wg_pyimports *wg_analysis_imports(wg_analysis *an)
{
	if (!an->imports_done) {
		an->imports_done = true;
		if (wg_scan_is_dist(an->scan) && wg_pyimports_build(&an->imports, an->scan) < 0)
			an->imports = NULL;
	}
	return an->imports;
}

/* The index of the objects by the name they answer DT_NEEDED entries with, once. */
static int build_names(wg_analysis *an)
{
	if (an->names)
		return WG_OK;
	an->names = calloc(an->n ? an->n : 1, sizeof(*an->names));
	if (!an->names)
		return WG_ENOMEM;
	for (size_t i = 0; i < an->n; i++) {
		const wg_object *o = object_at(an, i);
		an->names[i] = (by_name){o->soname ? o->soname : base_name(o->path), i};
	}
	qsort(an->names, an->n, sizeof(*an->names), cmp_name);
	return WG_OK;
}

static int build_roles(wg_analysis *an)
{
	const wg_scan *s = an->scan;
	size_t n = an->n;
	bool wheel = wg_scan_is_dist(s);
	an->roles = calloc(n ? n : 1, sizeof(*an->roles));
	bool *needed = calloc(n ? n : 1, sizeof(*needed));
	if (!an->roles || !needed || build_names(an) < 0) {
		free(needed);
		return WG_ENOMEM;
	}
	if (wheel && !wg_analysis_imports(an)) {
		free(needed);
		return WG_ENOMEM;
	}
	/* Which objects another loadable object of the input needs through DT_NEEDED. */
	for (size_t k = 0; k < n; k++) {
		const wg_object *o = object_at(an, k);
		for (size_t j = 0; loadable(o) && j < o->needed.n; j++) {
			size_t c;
			const by_name *b = answering(an, o->needed.v[j], &c);
			for (size_t x = 0; x < c; x++)
				if (b[x].i != k)
					needed[b[x].i] = true;
		}
	}
	/* Roots: extension modules (imported by their name), and libraries nothing in the wheel
	 * loads through DT_NEEDED (plugins, or libraries other packages load). */
	for (size_t i = 0; i < n; i++) {
		const wg_object *o = object_at(an, i);
		wg_role *r = &an->roles[i];
		r->how = WG_IMPORT_NONE;
		if (o->is_extension) {
			r->root = true;
			r->module = o->module;
			/* Outside a wheel there is no package to read: the object is what is loaded. */
			r->how = wheel ? wg_pyimports_how(an->imports, o->module, &r->file, &r->line)
				       : WG_IMPORT_REQUIRED;
			continue;
		}
		r->root = !needed[i];
		r->how = !needed[i] && wheel ? WG_ROLE_ALONE
			 : !needed[i] ? WG_IMPORT_REQUIRED : WG_ROLE_UNSET;
	}
	free(needed);
	/* A library is loaded as strongly as the strongest load that brings it in. */
	for (size_t round = 0; round < n; round++) {
		bool changed = false;
		for (size_t k = 0; k < n; k++) {
			const wg_object *o = object_at(an, k);
			const wg_role *from = &an->roles[k];
			if (!loadable(o))
				continue;
			for (size_t j = 0; j < o->needed.n; j++) {
				size_t c;
				const by_name *b = answering(an, o->needed.v[j], &c);
				for (size_t x = 0; x < c; x++) {
					wg_role *r = &an->roles[b[x].i];
					if (b[x].i == k || r->root || from->how <= r->how)
						continue;
					r->how = from->how;
					r->module = from->module;
					r->file = from->file;
					r->line = from->line;
					r->via = from->root ? o->path : from->via;
					changed = true;
				}
			}
		}
		if (!changed)
			break;
	}
	/* A library only in a DT_NEEDED cycle that nothing else reaches is loaded on its own:
	 * judge it as a root. */
	for (size_t i = 0; i < n; i++)
		if (an->roles[i].how == WG_ROLE_UNSET) {
			an->roles[i].root = true;
			an->roles[i].how = wheel ? WG_ROLE_ALONE : WG_IMPORT_REQUIRED;
		}
	return WG_OK;
}

const wg_role *wg_analysis_roles(wg_analysis *an)
{
	if (!an->roles_done) {
		an->roles_done = true;
		an->roles_rc = build_roles(an);
	}
	return an->roles_rc == WG_OK ? an->roles : NULL;
}

/* ---- the loader's records of the input's objects ---- */

static int build_libs(wg_analysis *an)
{
	const wg_env *e = an->target->env;
	if (!e)
		return WG_EINVAL;
	an->libs = calloc(an->n ? an->n : 1, sizeof(*an->libs));
	if (!an->libs)
		return WG_ENOMEM;
	/* The input's ELF objects, where pip installs them; a lone file stays where it is. */
	for (size_t i = 0; i < an->n; i++) {
		const wg_object *o = object_at(an, i);
		if (o->error)
			continue;
		char *where = wg_scan_is_dist(an->scan) ? wg_install_path(e->site, &an->arena, o->path)
							      : wg_arena_strdup(&an->arena, o->path);
		an->libs[i] = where ? wg_lib_from_object(o, where) : NULL;
		wg_lib **slot = an->libs[i] ? wg_vec_push(&an->all) : NULL;
		if (!slot)
			return WG_ENOMEM;
		*slot = an->libs[i];
	}
	return WG_OK;
}

int wg_analysis_libs(wg_analysis *an, wg_lib *const **libs, const wg_vec **all)
{
	if (!an->libs_done) {
		an->libs_done = true;
		an->libs_rc = build_libs(an);
	}
	*libs = an->libs;
	*all = &an->all;
	return an->libs_rc;
}

/* ---- system needs, GPU verdicts ---- */

size_t wg_analysis_sysneeds(wg_analysis *an, size_t i, const wg_sysneed **out)
{
	if (i >= an->n) {
		*out = NULL;
		return 0;
	}
	sysneeds *s = &an->needs[i];
	if (!s->done) {
		s->n = wg_object_sysneeds(object_at(an, i), s->need);
		s->done = true;
	}
	*out = s->need;
	return s->n;
}

const wg_gpu_verdict *wg_analysis_gpu_verdict(wg_analysis *an, size_t i, size_t g)
{
	size_t ngpus = an->target->ngpus;
	if (i >= an->n || g >= ngpus)
		return NULL;
	verdict *v = &an->verdicts[i * ngpus + g];
	if (!v->done) {
		v->v = (wg_gpu_verdict)WG_GPU_VERDICT_INIT;
		wg_object_gpu_verdict(&v->v, object_at(an, i), &an->target->gpus[g]);
		v->done = true;
	}
	return &v->v;
}

/* ---- shipped modules ---- */

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

/* The slot of s[0..n) in the set: where it is, or the empty one where it goes. */
static size_t slot_of(const wg_analysis *an, const char *s, size_t n)
{
	size_t k = fnv(s, n) & (an->set_cap - 1);
	while (an->set[k] && (strncmp(an->set[k], s, n) || an->set[k][n]))
		k = (k + 1) & (an->set_cap - 1);
	return k;
}

static int set_add(wg_analysis *an, const char *s, size_t n)
{
	if ((an->set_len + 1) * 2 > an->set_cap) {
		size_t cap = an->set_cap ? an->set_cap * 2 : 1024;
		const char **old = an->set;
		size_t oldcap = an->set_cap;
		if (!(an->set = calloc(cap, sizeof(*an->set)))) {
			an->set = old;
			return WG_ENOMEM;
		}
		an->set_cap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i])
				an->set[slot_of(an, old[i], strlen(old[i]))] = old[i];
		free(old);
	}
	size_t k = slot_of(an, s, n);
	if (an->set[k])
		return WG_OK;
	if (!(an->set[k] = wg_arena_strndup(&an->arena, s, n)))
		return WG_ENOMEM;
	an->set_len++;
	return WG_OK;
}

/*
 * A member ships its module and every package above it: "a/b/c.py" gives a.b.c, a.b and a.
 * Directories and data files still make packages of their path ("a/b/x.so" -> a.b.x.so, and
 * every prefix that ends before a dot).
 */
static int build_ships(wg_analysis *an)
{
	const wg_scan *s = an->scan;
	int rc = WG_OK;
	for (size_t i = 0; i < s->members.len && rc == WG_OK; i++) {
		const wg_member *mem = wg_vec_at(&s->members, i);
		bool init;
		char *mod = wg_py_module_of(&an->arena, mem->name, &init);
		if (!mod) {
			mod = wg_arena_strdup(&an->arena, mem->name);
			for (char *q = mod; q && *q; q++)
				if (*q == '/')
					*q = '.';
		}
		if (!mod)
			return WG_ENOMEM;
		for (const char *d = strchr(mod, '.'); d && rc == WG_OK; d = strchr(d + 1, '.'))
			rc = set_add(an, mod, (size_t)(d - mod));
		if (rc == WG_OK)
			rc = set_add(an, mod, strlen(mod));
	}
	for (size_t i = 0; i < an->n && rc == WG_OK; i++) {
		const wg_object *o = object_at(an, i);
		if (o->module)
			rc = set_add(an, o->module, strlen(o->module));
	}
	return rc;
}

int wg_analysis_ships(wg_analysis *an, const char *m, bool *ships)
{
	*ships = false;
	if (!an->ships_done) {
		an->ships_done = true;
		an->ships_rc = build_ships(an);
	}
	if (an->ships_rc < 0)
		return an->ships_rc;
	*ships = an->set_cap && an->set[slot_of(an, m, strlen(m))] != NULL;
	return WG_OK;
}

/* ---- the libraries the input ships ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int build_paths(wg_analysis *an)
{
	const wg_vec *m = &an->scan->members;
	an->paths = calloc(m->len ? m->len : 1, sizeof(*an->paths));
	if (!an->paths)
		return WG_ENOMEM;
	for (size_t i = 0; i < m->len; i++) {
		const wg_member *x = wg_vec_at(m, i);
		if (x->is_dir)
			continue;
		/* where pip puts it: below the site directory (wg_install_path's "/" removed) */
		char *p = wg_scan_is_dist(an->scan) ? wg_install_path("", &an->arena, x->name) : NULL;
		if (!p && wg_scan_is_dist(an->scan))
			return WG_ENOMEM;
		an->paths[an->npaths++] = p ? p + 1 : x->name;
	}
	qsort(an->paths, an->npaths, sizeof(*an->paths), cmp_str);
	return WG_OK;
}

/* dir/name with "." and "x/.." taken out, into out; false when it climbs above the top (out
 * of the input) or does not fit. */
static bool join_inside(char *out, size_t n, const char *dir, size_t dlen, const char *name)
{
	char buf[4096];
	int len = snprintf(buf, sizeof(buf), "%.*s/%s", (int)dlen, dir, name);
	if (len < 0 || (size_t)len >= sizeof(buf) || !n)
		return false;
	size_t o = 0, marks[512], depth = 0;
	for (char *s = buf; *s;) {
		while (*s == '/')
			s++;
		size_t k = strcspn(s, "/");
		if (!k)
			break;
		if (k == 2 && s[0] == '.' && s[1] == '.') {
			if (!depth)
				return false;
			o = marks[--depth];
		} else if (!(k == 1 && s[0] == '.')) {
			if (depth == WG_ARRAY_LEN(marks) || o + k + 2 > n)
				return false;
			marks[depth++] = o;
			if (o)
				out[o++] = '/';
			memcpy(out + o, s, k);
			o += k;
		}
		s += k;
	}
	out[o] = '\0';
	return o > 0;
}

/* Whether a member is installed at path (relative to the site directory). */
static bool has_path(const wg_analysis *an, const char *path)
{
	return an->npaths &&
	       bsearch(&path, an->paths, an->npaths, sizeof(*an->paths), cmp_str) != NULL;
}

/* A member named soname in a directory of list (an RPATH or RUNPATH) given relative to
 * $ORIGIN, the directory origin (olen bytes; "" at the top of the site directory). */
#define WG_ORIGIN_DIRS 64 /* $ORIGIN entries looked at per RPATH or RUNPATH (work bound) */

static bool found_through(const wg_analysis *an, const char *list, const char *soname,
			  const char *origin, size_t olen)
{
	size_t n = 0;
	for (const char *p = list; p && *p && n < WG_ORIGIN_DIRS;) {
		size_t k = strcspn(p, ":");
		const char *rest = NULL;
		if (k >= 7 && !strncmp(p, "$ORIGIN", 7))
			rest = p + 7;
		else if (k >= 9 && !strncmp(p, "${ORIGIN}", 9))
			rest = p + 9;
		char dir[4096], file[4096];
		int dl = rest && (rest == p + k || *rest == '/')
				 ? snprintf(dir, sizeof(dir), "%.*s%.*s", (int)olen, origin,
					    (int)(p + k - rest), rest) : -1;
		if (dl >= 0 && (size_t)dl < sizeof(dir) && ++n &&
		    join_inside(file, sizeof(file), dir, (size_t)dl, soname) && has_path(an, file))
			return true;
		p += k;
		if (*p == ':')
			p++;
	}
	return false;
}

int wg_analysis_ships_library(wg_analysis *an, size_t i, const char *soname, bool *ships)
{
	*ships = false;
	if (i >= an->n)
		return WG_EINVAL;
	int rc = build_names(an);
	if (rc < 0)
		return rc;
	size_t c;
	answering(an, soname, &c);
	if (c) {
		*ships = true;
		return WG_OK;
	}
	if (!an->paths_done) {
		an->paths_done = true;
		an->paths_rc = build_paths(an);
	}
	if (an->paths_rc < 0)
		return an->paths_rc;
	const wg_object *o = object_at(an, i);
	if (!wg_scan_is_dist(an->scan) || strchr(soname, '/'))
		return WG_OK;
	char *where = wg_install_path("", &an->arena, o->path);
	if (!where)
		return WG_ENOMEM;
	const char *origin = where + 1, *slash = strrchr(origin, '/');
	size_t olen = slash ? (size_t)(slash - origin) : 0;
	*ships = found_through(an, o->runpath, soname, origin, olen) ||
		 found_through(an, o->rpath, soname, origin, olen);
	return WG_OK;
}

const wg_strmap *wg_analysis_requires(wg_analysis *an)
{
	if (!an->requires_done) {
		an->requires_done = true;
		if (wg_requires_set(&an->requires, &an->arena,
				    &an->scan->lists[WG_LIST_REQUIRES_DIST]) < 0)
			return NULL;
	}
	return an->requires.keys ? &an->requires : NULL;
}

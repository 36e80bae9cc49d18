/*
 * The analysis step: facts derived from the facts of one input, each computed once per input
 * on first use (analysis.h). Linear in the objects and members of the input: objects are
 * found by the name they answer DT_NEEDED entries with through a sorted index, modules in a
 * hash set, and the loader's records of the objects are built once for every load.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
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

static int build_roles(wg_analysis *an)
{
	const wg_scan *s = an->scan;
	size_t n = an->n;
	bool wheel = wg_scan_is_dist(s);
	an->roles = calloc(n ? n : 1, sizeof(*an->roles));
	an->names = calloc(n ? n : 1, sizeof(*an->names));
	bool *needed = calloc(n ? n : 1, sizeof(*needed));
	if (!an->roles || !an->names || !needed) {
		free(needed);
		return WG_ENOMEM;
	}
	if (wheel && !wg_analysis_imports(an)) {
		free(needed);
		return WG_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const wg_object *o = object_at(an, i);
		an->names[i] = (by_name){o->soname ? o->soname : base_name(o->path), i};
	}
	qsort(an->names, n, sizeof(*an->names), cmp_name);
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

/*
 * The library index: what the loader needs of a shared library (SONAME, needs, search paths,
 * versions, exported and imported symbols), with a hash table over its exports.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "loader/loader.h"

/* A string's hash, eight bytes at a step (strlen is vectorized): the index of
 * libtorch_cpu.so's 78k names was a third of a warm `--env` run hashed a byte at a time. */
static uint64_t str_hash(const char *s)
{
	size_t n = strlen(s);
	uint64_t h = 0x243f6a8885a308d3ull ^ n, w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 32);
}

/*
 * The table has one slot per distinct key, so that it stays linear however many definitions
 * share a name (200,000 of one name made the probing quadratic: issue 12). Keys:
 *  - (name, version): the first definition of that exact pair (unversioned: the last one,
 *    which is the one an unversioned or unmatched reference binds to);
 *  - (name, default): the first versioned definition that is not hidden, what an unversioned
 *    reference binds to; marked by the top bit of the slot.
 * nh is str_hash(name), computed once per name.
 */
#define DEFAULT_KEY 0x80000000u

static uint64_t key_hash(uint64_t nh, const char *version, bool dflt)
{
	if (dflt)
		return nh ^ 0x9e3779b97f4a7c15ull;
	if (version)
		return (nh ^ str_hash(version)) * 0xff51afd7ed558ccdull;
	return nh;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The slot of key (name, version | default), or of the empty slot where it would go. */
static size_t find_slot(const wg_lib *l, const char *name, uint64_t nh, const char *version,
			bool dflt)
{
	size_t k = (size_t)key_hash(nh, version, dflt) & (l->hcap - 1);
	for (; l->hash[k]; k = (k + 1) & (l->hcap - 1)) {
		uint32_t v = l->hash[k];
		const wg_libsym *d = &l->defs[(v & ~DEFAULT_KEY) - 1];
		if (!(v & DEFAULT_KEY) != !dflt || strcmp(d->name, name))
			continue;
		if (dflt || same_str(d->version, version))
			return k;
	}
	return k;
}

void wg_lib_index(wg_lib *l)
{
	l->hcap = 16;
	/* at most two keys per definition, at most half full */
	while (l->hcap < l->ndefs * 4 + 1)
		l->hcap *= 2;
	l->hash = wg_arena_alloc(&l->arena, l->hcap * sizeof(*l->hash));
	if (!l->hash || l->ndefs >= DEFAULT_KEY - 1) {
		l->hcap = 0;
		return;
	}
	memset(l->hash, 0, l->hcap * sizeof(*l->hash));
	for (size_t i = 0; i < l->ndefs; i++) {
		const wg_libsym *d = &l->defs[i];
		uint64_t nh = str_hash(d->name);
		size_t k = find_slot(l, d->name, nh, d->version, false);
		if (!l->hash[k] || !d->version)
			l->hash[k] = (uint32_t)i + 1; /* first of a version; last unversioned */
		if (d->version && !d->hidden) {
			k = find_slot(l, d->name, nh, NULL, true);
			if (!l->hash[k])
				l->hash[k] = ((uint32_t)i + 1) | DEFAULT_KEY;
		}
	}
}

const wg_libsym *wg_lib_lookup(const wg_lib *l, const char *name, const char *version)
{
	if (!l->hcap)
		return NULL;
	uint64_t nh = str_hash(name);
	size_t k = find_slot(l, name, nh, version, version == NULL);
	if (l->hash[k])
		return &l->defs[(l->hash[k] & ~DEFAULT_KEY) - 1];
	k = find_slot(l, name, nh, NULL, false);
	return l->hash[k] ? &l->defs[l->hash[k] - 1] : NULL;
}

wg_lib *wg_lib_from_object(const wg_object *o, const char *path)
{
	wg_lib *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	wg_arena *a = &l->arena;
	wg_vec_init(&l->verneeds, sizeof(wg_verneed));
	const char *base = strrchr(path, '/');
	l->path = wg_arena_strdup(a, path);
	l->soname = wg_arena_strdup(a, o->soname ? o->soname : base ? base + 1 : path);
	l->rpath = o->rpath ? wg_arena_strdup(a, o->rpath) : NULL;
	l->runpath = o->runpath ? wg_arena_strdup(a, o->runpath) : NULL;
	l->torch_abi = o->torch_abi;
	for (size_t i = 0; i < o->needed.n; i++)
		wg_strlist_add(&l->needed, a, o->needed.v[i]);
	for (size_t i = 0; i < o->verdefs.n; i++)
		wg_strlist_add(&l->verdefs, a, o->verdefs.v[i]);
	for (size_t i = 0; i < o->verneeds.len; i++) {
		const wg_verneed *v = wg_vec_at(&o->verneeds, i);
		wg_verneed *x = wg_vec_push(&l->verneeds);
		if (x) {
			x->file = wg_arena_strdup(a, v->file);
			x->version = wg_arena_strdup(a, v->version);
			x->weak = v->weak;
		}
	}
	l->defs = wg_arena_alloc(a, (o->ndefined + 1) * sizeof(wg_libsym));
	l->undefs = wg_arena_alloc(a, (o->nundefined + 1) * sizeof(wg_libsym));
	if (!l->defs || !l->undefs) {
		wg_lib_free(l);
		return NULL;
	}
	for (size_t i = 0; i < o->nsyms; i++) {
		const wg_sym *y = &o->syms[i];
		wg_libsym s = {y->name, y->symver, y->binding == WG_BIND_WEAK, y->hidden, y->torch,
			       y->string_abi};
		if (y->defined && y->binding != WG_BIND_LOCAL && l->ndefs < o->ndefined + 1)
			l->defs[l->ndefs++] = s;
		else if (!y->defined && l->nundefs < o->nundefined + 1)
			l->undefs[l->nundefs++] = s;
	}
	/* The strings live in the scan's arena: copy them into the library's. */
	for (size_t i = 0; i < l->ndefs; i++) {
		l->defs[i].name = wg_arena_strdup(a, l->defs[i].name);
		if (l->defs[i].version)
			l->defs[i].version = wg_arena_strdup(a, l->defs[i].version);
	}
	for (size_t i = 0; i < l->nundefs; i++) {
		l->undefs[i].name = wg_arena_strdup(a, l->undefs[i].name);
		if (l->undefs[i].version)
			l->undefs[i].version = wg_arena_strdup(a, l->undefs[i].version);
	}
	wg_lib_index(l);
	return l;
}

void wg_lib_free(wg_lib *l)
{
	if (!l)
		return;
	wg_strlist_free(&l->needed);
	wg_strlist_free(&l->verdefs);
	wg_vec_free(&l->verneeds);
	wg_arena_free(&l->arena);
	if (l->map)
		munmap(l->map, l->map_len);
	free(l);
}

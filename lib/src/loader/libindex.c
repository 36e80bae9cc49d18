/*
 * The library index: what the loader needs of a shared library (SONAME, needs, search paths,
 * versions, exported and imported symbols), with a hash table over its exports.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"

static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

void wg_lib_index(wg_lib *l)
{
	l->hcap = 16;
	while (l->hcap < l->ndefs * 2 + 1)
		l->hcap *= 2;
	l->hash = wg_arena_alloc(&l->arena, l->hcap * sizeof(*l->hash));
	if (!l->hash) {
		l->hcap = 0;
		return;
	}
	memset(l->hash, 0, l->hcap * sizeof(*l->hash));
	for (size_t i = 0; i < l->ndefs; i++) {
		size_t k = fnv(l->defs[i].name) & (l->hcap - 1);
		while (l->hash[k])
			k = (k + 1) & (l->hcap - 1);
		l->hash[k] = (uint32_t)i + 1;
	}
}

const wg_libsym *wg_lib_lookup(const wg_lib *l, const char *name, const char *version)
{
	if (!l->hcap)
		return NULL;
	const wg_libsym *unversioned = NULL;
	for (size_t k = fnv(name) & (l->hcap - 1); l->hash[k]; k = (k + 1) & (l->hcap - 1)) {
		const wg_libsym *d = &l->defs[l->hash[k] - 1];
		if (strcmp(d->name, name))
			continue;
		if (!d->version) {
			unversioned = d; /* binds to any reference */
			continue;
		}
		if (version ? !strcmp(d->version, version) : !d->hidden)
			return d; /* the named version, or the default one for an unversioned ref */
	}
	return unversioned;
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
	free(l);
}

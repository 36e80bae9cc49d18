/*
 * The import model's answers over the whole wheel: which modules are reached from the roots
 * (what runs when they are imported), and how an extension module is imported (at module
 * level, lazily, guarded, conditionally: the loader checks' severity).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/pyimports_internal.h"

/* ---- reachability ---- */

static int reach_add(wg_pyimports *im, wg_vec *queue, const char *name, size_t n)
{
	char *k = wg_arena_strndup(&im->arena, name, n);
	if (!k)
		return WG_ENOMEM;
	size_t r = wg_strmap_put(&im->reached, k, 0);
	if (r == SIZE_MAX - 1)
		return WG_ENOMEM;
	if (r != SIZE_MAX)
		return WG_OK; /* there already */
	const char **q = wg_vec_push(queue);
	if (!q)
		return WG_ENOMEM;
	*q = k;
	return WG_OK;
}

/* name and every package above it */
static int reach_path(wg_pyimports *im, wg_vec *queue, const char *name)
{
	int rc = WG_OK;
	for (const char *d = strchr(name, '.'); d && rc == WG_OK; d = strchr(d + 1, '.'))
		rc = reach_add(im, queue, name, (size_t)(d - name));
	return rc == WG_OK ? reach_add(im, queue, name, strlen(name)) : rc;
}

/* The first position in by_from of module's edges. */
static size_t first_from(const wg_pyimports *im, const char *module)
{
	size_t lo = 0, hi = im->edges.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(wg_pyi_edge_from(im, im->by_from[mid]), module) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int wg_pyimports_reach(wg_pyimports *im, const char *const *roots, size_t n)
{
	if (!im)
		return WG_OK;
	if (im->reach_done)
		wg_strmap_free(&im->reached);
	im->reach_done = true;
	if (!wg_strmap_init(&im->reached, 64))
		return WG_ENOMEM;
	wg_vec queue;
	wg_vec_init(&queue, sizeof(const char *));
	int rc = WG_OK;
	for (size_t i = 0; i < n && rc == WG_OK; i++)
		rc = reach_path(im, &queue, roots[i]);
	/* each reached module's edges once: linear in the edges */
	for (size_t q = 0; q < queue.len && rc == WG_OK; q++) {
		const char *mod = *(const char **)wg_vec_at(&queue, q);
		for (size_t k = first_from(im, mod); k < im->edges.len && rc == WG_OK; k++) {
			wg_pyedge ev;
			wg_pyi_edge_view(im, im->by_from[k], &ev);
			const wg_pyedge *e = &ev;
			if (strcmp(e->from, mod))
				break;
			if (e->ctx != WG_IMPORT_REQUIRED)
				continue;
			rc = reach_path(im, &queue, e->target);
			if (rc == WG_OK && e->kind == WG_PYEDGE_FROM && e->name) {
				char *sub = wg_arena_printf(&im->arena, "%s.%s", e->target, e->name);
				if (!sub)
					rc = WG_ENOMEM;
				else if (wg_pyimports_kind(im, sub) != WG_PYMOD_NONE)
					rc = reach_add(im, &queue, sub, strlen(sub));
			}
		}
	}
	wg_vec_free(&queue);
	return rc;
}

bool wg_pyimports_reached(const wg_pyimports *im, const char *module)
{
	return im && im->reach_done && wg_strmap_get(&im->reached, module) != SIZE_MAX;
}

/* ---- how an extension module is imported (the loader checks' severity) ---- */

/* What an edge imports as a module: its target, or target.name for `from target import name`
 * where the wheel has that submodule. */
static const char *imported(wg_pyimports *im, const wg_pyedge *e, char *buf, size_t n)
{
	if (e->kind == WG_PYEDGE_FROM && e->name) {
		snprintf(buf, n, "%s.%s", e->target, e->name);
		if (wg_pyimports_kind(im, buf) != WG_PYMOD_NONE)
			return buf;
	}
	return e->target;
}

int wg_pyimports_how(wg_pyimports *im, const char *module, const char **file, unsigned *line)
{
	*file = NULL;
	*line = 0;
	if (!im || !module)
		return WG_IMPORT_NONE;
	/* A top-level module is what the user imports: nothing else decides for it; and when
	 * part of the sources was not examined (WG-WHL-003) an unseen import may be required. */
	if (!strchr(module, '.') || im->partial)
		return WG_IMPORT_REQUIRED;
	/* What `import <package>` runs, from each package above the module. */
	char top[1024];
	snprintf(top, sizeof(top), "%.*s", (int)strcspn(module, "."), module);
	wg_strmap saved = im->reached;
	bool saved_done = im->reach_done;
	im->reached = (wg_strmap){0};
	im->reach_done = false;
	const char *roots[1] = {top};
	int rc = wg_pyimports_reach(im, roots, 1);
	bool required = false;
	char buf[2048];
	/* the first statement in the wheel's order, in a reached module, that imports it */
	for (size_t k = 0; rc == WG_OK && k < im->edges.len && !required; k++) {
		wg_pyedge ev;
		wg_pyi_edge_view(im, k, &ev);
		const wg_pyedge *e = &ev;
		if (e->ctx != WG_IMPORT_REQUIRED || !wg_pyimports_reached(im, e->from))
			continue;
		const char *t = imported(im, e, buf, sizeof(buf));
		if (!strcmp(t, module) || (wg_has_prefix(t, module) && t[strlen(module)] == '.')) {
			required = true;
			*file = e->file;
			*line = e->line;
		}
	}
	wg_strmap_free(&im->reached);
	im->reached = saved;
	im->reach_done = saved_done;
	if (rc < 0 || required)
		return WG_IMPORT_REQUIRED; /* out of memory: the strictest reading */
	/* Not at package import: the most direct way anything in the wheel imports it. */
	int best = WG_IMPORT_NONE;
	for (size_t k = 0; k < im->edges.len; k++) {
		wg_pyedge ev;
		wg_pyi_edge_view(im, k, &ev);
		const wg_pyedge *e = &ev;
		const char *t = imported(im, e, buf, sizeof(buf));
		if (strcmp(t, module))
			continue;
		int how = e->ctx == WG_IMPORT_REQUIRED ? WG_IMPORT_INDIRECT : e->ctx;
		if (how > best) {
			best = how;
			*file = e->file;
			*line = e->line;
		}
	}
	return best;
}

const char *wg_import_how_name(int how)
{
	switch (how) {
	case WG_IMPORT_REQUIRED: return "imported when the package is imported";
	case WG_IMPORT_INDIRECT: return "imported by a module the package itself does not import";
	case WG_IMPORT_CONDITIONAL: return "imported only under a condition";
	case WG_IMPORT_GUARDED: return "imported only under try/except";
	case WG_IMPORT_LAZY: return "imported lazily, inside a function";
	default: return "never imported by the package's own code";
	}
}

bool wg_pyimports_mentions(const wg_pyimports *im, const char *top)
{
	size_t n = strlen(top);
	for (size_t k = 0; im && k < im->edges.len; k++) {
		wg_pyedge ev;
		wg_pyi_edge_view(im, k, &ev);
		const wg_pyedge *e = &ev;
		if (e->ctx == WG_IMPORT_NONE)
			continue;
		if (!strncmp(e->target, top, n) && (e->target[n] == '\0' || e->target[n] == '.'))
			return true;
	}
	return false;
}

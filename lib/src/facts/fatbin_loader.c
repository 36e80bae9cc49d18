/*
 * Objects whose section table cannot say where the registered fatbins are (none, or one that
 * lies: rule WG-ELF-001): read as the loader and the CUDA runtime read them, the
 * .nvFatBinSegment wrappers found in the PT_LOAD segments and mapped through them.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_FATBIN /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/fatbin_internal.h"

/*
 * Whether the section table is usable for the registered fatbins: there is one, and the
 * sections that hold them are there unless it is known to lie (rule WG-ELF-001). Without it
 * the fatbins are read as the CUDA runtime finds them, through the wrappers (loader_read).
 */
bool wg_fb_sections_usable(const wg_object *o)
{
	if (!o->nsections)
		return false;
	if (!o->sections_lie)
		return true;
	return wg_fb_section_named(o, ".nvFatBinSegment") &&
	       (wg_fb_section_named(o, ".nv_fatbin") || wg_fb_section_named(o, "__nv_relfatbin"));
}

typedef struct {
	uint64_t target, at; /* the container its data pointer maps to; the wrapper's offset */
	int version;
} wrapper_hit;

static int cmp_hit(const void *a, const void *b)
{
	const wrapper_hit *x = a, *y = b;
	if (x->target != y->target)
		return x->target < y->target ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

typedef struct {
	size_t run;      /* containers found back to back share a run */
	bool tentative;  /* kept only if its run is registered (the strict checks failed) */
} found_info;

/*
 * The wrappers as the CUDA runtime gets them (its registration code holds their addresses):
 * every 8-aligned offset of the PT_LOAD file ranges (merged, so each byte is looked at once)
 * is tried for the 24-byte wrapper {magic, version 1 or 2, data, ...}; one counts only if its
 * data pointer maps, through the segments, to a container header.
 */
static int find_wrappers(const wg_object *obj, const span *s, const addrmap *map, wg_vec *hits)
{
	size_t n = 0;
	uint64_t *r = malloc((2 * obj->nsegments + 2) * sizeof(*r));
	if (!r)
		return WG_ENOMEM;
	for (size_t i = 0; i < obj->nsegments; i++) {
		const wg_segment *g = &obj->segments[i];
		if (g->offset >= s->len || !g->filesz)
			continue;
		r[n++] = g->offset;
		r[n++] = g->filesz > s->len - g->offset ? s->len : g->offset + g->filesz;
	}
	qsort(r, n / 2, 2 * sizeof(uint64_t), cmp_u64);
	size_t m = 0; /* merged ranges */
	for (size_t i = 0; i < n; i += 2) {
		if (m && r[i] <= r[m - 1]) {
			if (r[i + 1] > r[m - 1])
				r[m - 1] = r[i + 1];
		} else {
			r[m++] = r[i];
			r[m++] = r[i + 1];
		}
	}
	for (size_t i = 0; i < m; i += 2) {
		for (uint64_t p = (r[i] + 7) & ~7ull; p < r[i + 1] && r[i + 1] - p >= 24; p += 8) {
			const uint8_t *w = s->d + p;
			uint32_t ver = le32(w + 4);
			if (le32(w) != WRAPPER_MAGIC || (ver != 1 && ver != 2))
				continue;
			uint64_t t = wg_fb_va_to_offset(map, le64(w + 8));
			if (t == UINT64_MAX || t % 8 || !rd(s, t, CONTAINER_HEADER) ||
			    le32(s->d + t) != FATBIN_MAGIC)
				continue;
			wrapper_hit *h = wg_vec_push(hits);
			if (!h) {
				free(r);
				return WG_ENOMEM;
			}
			*h = (wrapper_hit){t, p, (int)ver};
		}
	}
	free(r);
	if (hits->len)
		qsort(hits->items, hits->len, sizeof(wrapper_hit), cmp_hit);
	return WG_OK;
}

/*
 * Keeps the registered containers and the driver-loaded ones that passed the strict
 * checks, registered ones first (in file order, as the sections list them), and renumbers
 * the entries to match. Linear but for one sort-free pass per list.
 */
static int settle(wg_object *obj, const found_info *info, const bool *reg)
{
	size_t n = obj->fatbin_containers.len, k = 0;
	wg_fatbin_container *c = obj->fatbin_containers.items;
	wg_fatbin_container *out = malloc((n ? n : 1) * sizeof(*out));
	wg_vec ents;
	wg_vec_init(&ents, sizeof(wg_fatbin_entry));
	if (!out)
		return WG_ENOMEM;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			if (pass == 0 ? !reg[i] : reg[i] || info[i].tentative)
				continue;
			out[k] = c[i];
			out[k].registered = reg[i];
			out[k].first_entry = ents.len;
			for (size_t e = 0; e < c[i].entry_count; e++) {
				wg_fatbin_entry *x = wg_vec_push(&ents);
				if (!x) {
					free(out);
					wg_vec_free(&ents);
					return WG_ENOMEM;
				}
				*x = *(wg_fatbin_entry *)wg_vec_at(&obj->fatbin_entries,
								    c[i].first_entry + e);
				x->container = k;
			}
			k++;
		}
	if (k)
		memcpy(c, out, k * sizeof(*out));
	obj->fatbin_containers.len = k;
	wg_vec_free(&obj->fatbin_entries);
	obj->fatbin_entries = ents;
	free(out);
	return WG_OK;
}

/*
 * The fatbins of an object without a usable section table, as the loader and the CUDA runtime
 * see them. One scan of the whole file at 8-aligned offsets for container headers, as for the
 * driver-loaded ones; a header that a wrapper points at, or that follows the previous
 * container back to back (the containers of .nv_fatbin and __nv_relfatbin lie so), is read
 * with the checks of a registered section; the strict checks' rejects (an empty device-link
 * container) are kept only if they turn out registered: a wrapper points at them, or at a
 * container after them in their run.
 */
int wg_fb_loader_read(wg_object *obj, wg_arena *a, const span *s, const addrmap *map,
		       wg_scan_problem_fn problem, void *payload)
{
	wg_vec hits, info;
	wg_vec_init(&hits, sizeof(wrapper_hit));
	wg_vec_init(&info, sizeof(found_info));
	bool *reg = NULL;
	int rc = find_wrappers(obj, s, map, &hits);
	const wrapper_hit *h = hits.items;
	const uint64_t pattern = 0x00100001BA55ED50ull; /* 50 ED 55 BA 01 00 10 00 */
	uint64_t p = 0, prev_end = UINT64_MAX;
	size_t hi = 0, runs = 0;
	wg_err err = {0};
	while (rc == WG_OK && s->len >= CONTAINER_HEADER && p <= s->len - CONTAINER_HEADER) {
		const uint8_t *d = s->d + p;
		uint64_t v;
		memcpy(&v, d, 8);
		if (le32(d) != FATBIN_MAGIC || le16(d + 4) != 1) {
			p += 8;
			continue;
		}
		while (hi < hits.len && h[hi].target < p)
			hi++;
		bool wrapped = hi < hits.len && h[hi].target == p;
		bool adjacent = prev_end != UINT64_MAX && p >= prev_end && p - prev_end < 8;
		for (uint64_t i = prev_end; adjacent && i < p; i++)
			adjacent = s->d[i] == 0;
		bool tentative = false;
		if (wrapped) {
			rc = wg_fb_add_container(obj, a, s, p, wg_fb_section_at(obj, p), true, false, &err);
		} else {
			rc = v == pattern ? wg_fb_add_container(obj, a, s, p, wg_fb_section_at(obj, p), false, true,
							  &err)
					  : WG_EFORMAT;
			if (rc != WG_OK && rc != WG_ENOMEM && (adjacent || v == pattern)) {
				tentative = true;
				rc = wg_fb_add_container(obj, a, s, p, wg_fb_section_at(obj, p), true, false, &err);
			}
		}
		if (rc == WG_ENOMEM)
			break;
		if (rc < 0) {
			if (wrapped) /* the runtime would hand this to the driver: say so */
				problem(payload, rc, "%s", err.msg);
			rc = WG_OK;
			p += 8; /* chance bytes, not a container */
			continue;
		}
		wg_fatbin_container *c = wg_vec_at(&obj->fatbin_containers,
						   obj->fatbin_containers.len - 1);
		/* A reject of the strict checks may not swallow a container a wrapper points at,
		 * nor be more than an empty one unless it follows another. */
		size_t next = hi + (wrapped ? 1 : 0);
		while (next < hits.len && h[next].target <= p)
			next++;
		if (tentative && ((next < hits.len && h[next].target < p + c->size) ||
				  (!adjacent && c->size != CONTAINER_HEADER))) {
			obj->fatbin_entries.len = c->first_entry;
			obj->fatbin_containers.len--;
			p += 8;
			continue;
		}
		found_info *f = wg_vec_push(&info);
		if (!f) {
			rc = WG_ENOMEM;
			break;
		}
		f->run = adjacent ? runs - 1 : runs++;
		f->tentative = tentative;
		c->registered = false;
		prev_end = p + c->size;
		p = (p + c->size + 7) & ~7ull;
	}
	size_t n = obj->fatbin_containers.len;
	if (rc == WG_OK && !(reg = calloc(n ? n : 1, sizeof(*reg))))
		rc = WG_ENOMEM;
	/* The wrappers that point at a container found: counted, and the container registered. */
	for (size_t i = 0, j = 0; rc == WG_OK && i < hits.len; i++) {
		while (j < n && ((wg_fatbin_container *)wg_vec_at(&obj->fatbin_containers, j))
					->offset < h[i].target)
			j++;
		wg_fatbin_container *c = j < n ? wg_vec_at(&obj->fatbin_containers, j) : NULL;
		if (!c || c->offset != h[i].target)
			continue;
		obj->fatbin_wrappers++;
		c->wrapper_version = h[i].version; /* the last wrapper wins, as in the section */
		reg[j] = true;
	}
	/*
	 * An unwrapped container lying back to back before a wrapped one is registered too: the
	 * device-link fatbin of a plain build sits first in .nv_fatbin with no wrapper. One after
	 * the last wrapped container of its run is not: a section of driver-loaded containers may
	 * follow .nv_fatbin directly (libcublasLt's .cask_resource does).
	 */
	const found_info *fi = info.items;
	for (size_t i = n, later = 0; rc == WG_OK && i-- > 0;) {
		if (i + 1 < n && fi[i + 1].run == fi[i].run && reg[i + 1])
			later = 1;
		else if (i + 1 >= n || fi[i + 1].run != fi[i].run)
			later = 0;
		reg[i] = reg[i] || later;
	}
	if (rc == WG_OK)
		rc = settle(obj, info.items, reg);
	free(reg);
	wg_vec_free(&hits);
	wg_vec_free(&info);
	return rc;
}

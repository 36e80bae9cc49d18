/*
 * The CUDA fatbinary reader (docs: ../shared/docs/fatbin-format.md). Walks every container in
 * the registered sections (.nv_fatbin, __nv_relfatbin), links them to their
 * .nvFatBinSegment wrappers, and finds containers kept elsewhere (cuFFT's .ldata) by a
 * validated scan of the whole object (or, for an object read as it streamed, of the offsets
 * where sparse.c saw the container magic: the same hits without reading the bytes again). An object whose section table is gone or lies is read as
 * the loader and the CUDA runtime read it (loader_read): wrappers found in the PT_LOAD
 * segments and mapped through them. Every header and size read from the file goes through
 * rd() against the object's bounds; entry walks always advance, so they cannot loop.
 * Payloads are decompressed only to read a PTX entry's .version/.target, into a small buffer.
 * Here: the registered sections walked, wrappers linked, the entry points and accessors; a
 * container parsed: fatbin_container.c; loader_read: fatbin_loader.c (fatbin_internal.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_FATBIN /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/fatbin_internal.h"

static int cmp_seg(const void *a, const void *b)
{
	uint64_t x = ((const wg_segment *)a)->vaddr, y = ((const wg_segment *)b)->vaddr;
	return x < y ? -1 : x > y;
}

static int addrmap_init(addrmap *m, const wg_object *o)
{
	*m = (addrmap){o, NULL, 0};
	if (!o->nsegments || !o->segments)
		return WG_OK;
	if (!(m->seg = malloc(o->nsegments * sizeof(*m->seg))))
		return WG_ENOMEM;
	for (size_t i = 0; i < o->nsegments; i++)
		if (o->segments[i].filesz)
			m->seg[m->n++] = o->segments[i];
	qsort(m->seg, m->n, sizeof(*m->seg), cmp_seg);
	return WG_OK;
}

/* The containers of a registered section, back to back, with up to 8 bytes of zero padding. */
static int walk_section(wg_object *obj, wg_arena *a, const span *s, const wg_section *sec,
			wg_scan_problem_fn problem, void *payload)
{
	wg_err err = {0};
	if (!rd(s, sec->offset, sec->size)) {
		problem(payload, WG_EFORMAT, "%s: section %s (offset %#llx, %llu bytes) extends past "
			"the end of the file", obj->path, sec->name, (unsigned long long)sec->offset,
			(unsigned long long)sec->size);
		return WG_OK;
	}
	uint64_t p = sec->offset, end = sec->offset + sec->size;
	while (p < end) {
		uint64_t skip = 0;
		const uint8_t *z = fb_at(s, p, end - p < 8 ? end - p : 8, NULL);
		while (p + skip < end && skip < 8 && z[skip] == 0)
			skip++;
		if (p + skip == end)
			break;
		if (skip == 8) {
			problem(payload, WG_EFORMAT, "%s: section %s: offset %#llx: zero bytes where a "
				"fatbin container should start", obj->path, sec->name,
				(unsigned long long)p);
			break;
		}
		p += skip;
		span within = {s->d, (size_t)end, s->sp}; /* a container may not leave its section */
		int rc = wg_fb_add_container(obj, a, &within, p, sec, true, false, &err);
		if (rc == WG_ENOMEM)
			return rc;
		if (rc < 0) {
			problem(payload, rc, "%s", err.msg);
			break; /* the next container's start is unknown */
		}
		const wg_fatbin_container *c = wg_vec_at(&obj->fatbin_containers,
							 obj->fatbin_containers.len - 1);
		p += c->size;
	}
	return WG_OK;
}

typedef struct {
	uint64_t offset;
	size_t index;
} by_offset;

static int cmp_by_offset(const void *a, const void *b)
{
	uint64_t x = ((const by_offset *)a)->offset, y = ((const by_offset *)b)->offset;
	return x < y ? -1 : x > y;
}

/* .nvFatBinSegment: 24-byte wrappers {magic, version, data, filename_or_fatbins}. */
static int link_wrappers(wg_object *obj, const span *s, const addrmap *map,
			 wg_scan_problem_fn problem, void *payload)
{
	const wg_section *seg = wg_fb_section_named(obj, ".nvFatBinSegment");
	size_t n = obj->fatbin_containers.len;
	if (!seg || !rd(s, seg->offset, seg->size) || !n)
		return WG_OK;
	/* Thousands of wrappers in the large libraries: look containers up by offset. */
	by_offset *idx = malloc(n * sizeof(*idx));
	if (!idx)
		return WG_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const wg_fatbin_container *c = wg_vec_at(&obj->fatbin_containers, i);
		idx[i] = (by_offset){c->offset, i};
	}
	qsort(idx, n, sizeof(*idx), cmp_by_offset);
	for (uint64_t p = seg->offset; p + 24 <= seg->offset + seg->size; p += 24) {
		const uint8_t *w = s->d + p;
		if (le32(w) != WRAPPER_MAGIC) {
			problem(payload, WG_EFORMAT, "%s: section .nvFatBinSegment: offset %#llx: wrapper "
				"magic %#x, expected %#x", obj->path, (unsigned long long)p, le32(w),
				WRAPPER_MAGIC);
			break;
		}
		obj->fatbin_wrappers++;
		by_offset key = {wg_fb_va_to_offset(map, le64(w + 8)), 0};
		by_offset *hit = bsearch(&key, idx, n, sizeof(*idx), cmp_by_offset);
		if (hit)
			((wg_fatbin_container *)wg_vec_at(&obj->fatbin_containers, hit->index))
				->wrapper_version = (int)le32(w + 4);
	}
	free(idx);
	return WG_OK;
}
typedef struct {
	const uint64_t *at; /* NULL: scan the bytes */
	size_t n;
	wg_sparse *sp;
} magics;

static int fatbin_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		       const magics *mg, wg_scan_problem_fn problem, void *payload);

int wg_fatbin_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		   wg_scan_problem_fn problem, void *payload)
{
	return wg_fatbin_read_max(obj, a, data, len, SIZE_MAX, problem, payload);
}

int wg_fatbin_read_max(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		       size_t max, wg_scan_problem_fn problem, void *payload)
{
	return wg_fatbin_read_sparse(obj, a, data, len, max, NULL, problem, payload);
}

int wg_fatbin_read_sparse(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
			  size_t max, wg_sparse *sp, wg_scan_problem_fn problem,
			  void *payload)
{
	magics mg = {NULL, 0, sp};
	if (sp)
		mg.at = wg_sparse_fatbin_magics(sp, &mg.n);
	if (sp && !mg.at)
		wg_sparse_read_all(sp); /* the scan reads every byte: no page is anyone else's */
	obj->fatbin_entries_max = max;
	obj->fatbin_entries_more = 0;
	int rc = fatbin_read(obj, a, data, len, &mg, problem, payload);
	obj->fatbin_entries_max = SIZE_MAX;
	if (rc == WG_OK && obj->fatbin_entries_more)
		problem(payload, WG_ELIMIT, "%s: %zu fatbin entries past the first %zu "
			"(max_fatbin_entries; --limit max_fatbin_entries=N reads more) were counted, "
			"not read: the GPUs they are for are not known", obj->path, obj->fatbin_entries_more, max);
	return rc;
}

static void clamp_containers(wg_object *o, size_t keep)
{
	for (size_t i = 0; i < o->fatbin_containers.len; i++) {
		wg_fatbin_container *c = wg_vec_at(&o->fatbin_containers, i);
		if (c->first_entry >= keep) {
			c->first_entry = keep;
			c->entry_count = 0;
		} else if (c->entry_count > keep - c->first_entry) {
			c->entry_count = keep - c->first_entry;
		}
	}
}

void wg_fatbin_budget(wg_scan *scan, wg_object *o)
{
	uint32_t max = scan->ctx ? scan->ctx->opts.max_fatbin_entries : 0;
	size_t n = o->fatbin_entries.len;
	if (max && n > max - (scan->fatbin_entries_kept < max ? scan->fatbin_entries_kept : max)) {
		size_t keep = scan->fatbin_entries_kept < max ? max - scan->fatbin_entries_kept : 0;
		o->fatbin_entries_more += n - keep;
		o->fatbin_entries.len = keep;
		clamp_containers(o, keep);
		wg_scan_add_problem(scan, WG_ELIMIT, o->path, "%s: %s: %zu fatbin entries past the "
				    "input's first %u (max_fatbin_entries, all objects together; --limit "
				    "max_fatbin_entries=N reads more) were counted, not read: the GPUs "
				    "they are for are not known",
				    scan->path, o->path, n - keep, max);
		n = keep;
	}
	scan->fatbin_entries_kept += n;
}

/* The next offset at or after p where the container magic is, below end: from the magics
 * found as the member streamed (k: the first not yet passed), or by reading the bytes. */
static uint64_t next_magic(const uint8_t *data, const magics *mg, size_t *k, uint64_t p,
			   uint64_t end)
{
	const uint64_t pattern = 0x00100001BA55ED50ull; /* 50 ED 55 BA 01 00 10 00, little-endian */
	if (mg->at) {
		while (*k < mg->n && mg->at[*k] < p)
			(*k)++;
		return *k < mg->n && mg->at[*k] + CONTAINER_HEADER <= end ? mg->at[*k] : UINT64_MAX;
	}
	for (; p + CONTAINER_HEADER <= end; p += 8) {
		uint64_t v;
		memcpy(&v, data + p, 8);
		if (v == pattern)
			return p;
	}
	return UINT64_MAX;
}

static int fatbin_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		       const magics *mg, wg_scan_problem_fn problem, void *payload)
{
	span s = {data, len, mg->sp};
	int rc;
	addrmap map;
	wg_vec_init(&obj->fatbin_containers, sizeof(wg_fatbin_container));
	wg_vec_init(&obj->fatbin_entries, sizeof(wg_fatbin_entry));
	obj->fatbin_wrappers = 0;
	if ((rc = addrmap_init(&map, obj)) < 0)
		return rc;
	if (!wg_fb_sections_usable(obj) && obj->nsegments) {
		if (mg->sp)
			wg_sparse_read_all(mg->sp); /* the loader's scan reads the segments' bytes */
		rc = wg_fb_loader_read(obj, a, &s, &map, problem, payload);
		free(map.seg);
		return rc;
	}
	static const char *const registered[] = {".nv_fatbin", "__nv_relfatbin"};
	for (size_t i = 0; i < WG_ARRAY_LEN(registered); i++) {
		const wg_section *sec = wg_fb_section_named(obj, registered[i]);
		if (sec && (rc = walk_section(obj, a, &s, sec, problem, payload)) < 0) {
			free(map.seg);
			return rc;
		}
	}
	rc = link_wrappers(obj, &s, &map, problem, payload);
	free(map.seg);
	if (rc < 0)
		return rc;

	/*
	 * Containers outside the registered sections, loaded through the driver API: a scan of
	 * every 8-aligned offset for the container header (magic, version 1, header size 16),
	 * each hit then parsed strictly. Registered sections and machine code (.text, .plt...)
	 * are skipped; the scan runs over the gaps between them with one aligned 8-byte load per
	 * step, at memory speed.
	 */
	uint64_t *ranges = malloc((2 * obj->nsections + 2) * sizeof(*ranges));
	size_t nr = 0;
	if (!ranges)
		return WG_ENOMEM;
	for (size_t i = 0; i < obj->nsections; i++) {
		const wg_section *sec = &obj->sections[i];
		bool reg = !strcmp(sec->name, registered[0]) || !strcmp(sec->name, registered[1]);
		if (sec->has_contents && sec->size && (reg || sec->code) && rd(&s, sec->offset, sec->size)) {
			ranges[nr++] = sec->offset;
			ranges[nr++] = sec->offset + sec->size;
		}
	}
	qsort(ranges, nr / 2, 2 * sizeof(uint64_t), cmp_u64);
	ranges[nr++] = len; /* the last gap ends at the end of the file */
	ranges[nr++] = len;
	wg_err err = {0};
	uint64_t p = 0;
	size_t k = 0;
	for (size_t r = 0; r < nr; r += 2) {
		uint64_t gap_end = ranges[r] < len ? ranges[r] : len;
		for (;;) {
			uint64_t at = next_magic(data, mg, &k, p, gap_end);
			if (at == UINT64_MAX)
				break;
			p = at;
			rc = wg_fb_add_container(obj, a, &s, p, wg_fb_section_at(obj, p), false, true, &err);
			if (rc == WG_ENOMEM) {
				free(ranges);
				return rc;
			}
			if (rc < 0) {
				p += 8; /* chance bytes, not a container */
				continue;
			}
			const wg_fatbin_container *c = wg_vec_at(&obj->fatbin_containers,
								 obj->fatbin_containers.len - 1);
			p = (p + c->size + 7) & ~7ull;
		}
		if (ranges[r + 1] > p)
			p = (ranges[r + 1] + 7) & ~7ull;
	}
	free(ranges);
	return WG_OK;
}

WG_API const char *wg_fatbin_kind_str(wg_fatbin_kind kind)
{
	return wg_fatbin_kind_name(kind);
}

WG_API const char *wg_fatbin_compression_str(wg_fatbin_compression c)
{
	return wg_fatbin_compression_name(c);
}

WG_API size_t wg_object_fatbin_container_count(const wg_object *o)
{
	return o ? o->fatbin_containers.len : 0;
}

WG_API int wg_object_fatbin_container(wg_fatbin_container_info *out, const wg_object *o, size_t i)
{
	if (!out || !o)
		return wg_null_arg("wg_object_fatbin_container");
	if (wg_struct_version("wg_fatbin_container_info", out->version, WG_FATBIN_CONTAINER_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_fatbin_container *c = wg_vec_at(&o->fatbin_containers, i);
	if (!c)
		return WG_ENOTFOUND;
	out->offset = c->offset;
	out->size = c->size;
	out->section = c->section;
	out->registered = c->registered;
	out->wrapper_version = c->wrapper_version;
	out->first_entry = c->first_entry;
	out->entry_count = c->entry_count;
	return WG_OK;
}

WG_API size_t wg_object_fatbin_entry_count(const wg_object *o)
{
	return o ? o->fatbin_entries.len : 0;
}

WG_API size_t wg_object_fatbin_entries_more(const wg_object *o)
{
	return o ? o->fatbin_entries_more : 0;
}

WG_API int wg_object_fatbin_entry(wg_fatbin_entry_info *out, const wg_object *o, size_t i)
{
	if (!out || !o)
		return wg_null_arg("wg_object_fatbin_entry");
	if (wg_struct_version("wg_fatbin_entry_info", out->version, WG_FATBIN_ENTRY_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_fatbin_entry *e = wg_vec_at(&o->fatbin_entries, i);
	if (!e)
		return WG_ENOTFOUND;
	out->kind = (wg_fatbin_kind)e->kind;
	out->arch = e->arch;
	out->variant = e->variant;
	wg_fatbin_arch_name(out->arch_name, sizeof(out->arch_name), e->kind, e->arch, e->variant);
	out->major = e->major;
	out->minor = e->minor;
	out->flags = e->flags;
	out->debug = e->debug;
	out->compression = (wg_fatbin_compression)e->compression;
	out->offset = e->offset;
	out->payload_size = e->payload_size;
	out->compressed_size = e->compressed_size;
	out->uncompressed_size = e->uncompressed_size;
	out->container = e->container;
	out->ptx_version = e->ptx_version;
	out->ptx_target = e->ptx_target;
	return WG_OK;
}

/*
 * The CUDA fatbinary reader (docs: ../shared/docs/fatbin-format.md). Walks every container in
 * the registered sections (.nv_fatbin, __nv_relfatbin), links them to their
 * .nvFatBinSegment wrappers, and finds containers kept elsewhere (cuFFT's .ldata) by a
 * validated scan of the whole object. An object whose section table is gone or lies is read as
 * the loader and the CUDA runtime read it (loader_read): wrappers found in the PT_LOAD
 * segments and mapped through them. Every header and size read from the file goes through
 * rd() against the object's bounds; entry walks always advance, so they cannot loop.
 * Payloads are decompressed only to read a PTX entry's .version/.target, into a small buffer.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_FATBIN /* wg_seterr: what fails here */
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "facts/facts.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define WRAPPER_MAGIC 0x466243B1u
#define CONTAINER_HEADER 16
#define ENTRY_HEADER_MIN 64
#define PTX_HEAD 4096 /* bytes of PTX text decompressed to read .version and .target */

/* flags (fatbin-format.md, section 3) */
#define FB_DEBUG 0x2ull
#define FB_COMPRESS_LEGACY 0x1000ull
#define FB_LZ4 0x2000ull
#define FB_ZSTD 0x8000ull
#define FB_OBFUSCATED 0x10000ull
#define FB_ARCH_A 0x100000ull
#define FB_ARCH_F 0x200000ull

typedef struct {
	const uint8_t *d;
	size_t len;
} span;

static bool rd(const span *s, uint64_t off, uint64_t n)
{
	return off <= s->len && n <= s->len - off;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

const char *wg_fatbin_kind_name(int kind)
{
	switch (kind) {
	case WG_FATBIN_PTX: return "ptx";
	case WG_FATBIN_SASS: return "sass";
	case WG_FATBIN_LTOIR: return "lto-ir";
	case 4: return "old-cubin";
	default: return "unknown";
	}
}

const char *wg_fatbin_compression_name(int c)
{
	switch (c) {
	case WG_FATBIN_COMP_NONE: return "none";
	case WG_FATBIN_COMP_LZ4: return "lz4";
	case WG_FATBIN_COMP_ZSTD: return "zstd";
	case WG_FATBIN_COMP_LEGACY: return "legacy";
	default: return "unknown";
	}
}

/* "sm_90a", "compute_100f", "lto_90": the names nvcc's -gencode uses. */
void wg_fatbin_arch_name(char *buf, size_t n, int kind, unsigned arch, char variant)
{
	const char *p = kind == WG_FATBIN_PTX ? "compute" : kind == WG_FATBIN_LTOIR ? "lto" : "sm";
	if (variant)
		snprintf(buf, n, "%s_%u%c", p, arch, variant);
	else
		snprintf(buf, n, "%s_%u", p, arch);
}

/* The first bytes of a PTX payload, decompressed if need be; returns the text length. */
static size_t ptx_head(const uint8_t *payload, size_t avail, const wg_fatbin_entry *e, char *out,
		       size_t cap)
{
	size_t n = 0;
	if (e->compression == WG_FATBIN_COMP_NONE) {
		n = avail < cap - 1 ? avail : cap - 1;
		memcpy(out, payload, n);
	} else if (e->compression == WG_FATBIN_COMP_LZ4) {
		int r = LZ4_decompress_safe_partial((const char *)payload, out, (int)e->compressed_size,
						    (int)(cap - 1), (int)(cap - 1));
		n = r > 0 ? (size_t)r : 0;
	} else if (e->compression == WG_FATBIN_COMP_ZSTD) {
		ZSTD_DStream *z = ZSTD_createDStream();
		if (!z)
			return 0;
		ZSTD_inBuffer in = {payload, e->compressed_size, 0};
		ZSTD_outBuffer o = {out, cap - 1, 0};
		/* Stop as soon as the small output buffer is full: nothing more is needed. */
		while (o.pos < o.size && in.pos < in.size) {
			size_t r = ZSTD_decompressStream(z, &o, &in);
			if (ZSTD_isError(r) || r == 0)
				break;
		}
		n = o.pos;
		ZSTD_freeDStream(z);
	}
	out[n] = '\0';
	return n;
}

/* Copies the value of a PTX directive (".target sm_90a" -> "sm_90a") into the arena. */
static const char *ptx_directive(wg_arena *a, const char *text, const char *dir)
{
	size_t dl = strlen(dir);
	for (const char *p = text; (p = strstr(p, dir)); p += dl) {
		if (p != text && p[-1] != '\n')
			continue;
		const char *v = p + dl;
		while (*v == ' ' || *v == '\t')
			v++;
		size_t n = strcspn(v, "\r\n/");
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		return n ? wg_arena_strndup(a, v, n) : NULL;
	}
	return NULL;
}

/*
 * Parses the entries of the container at off. strict: the stricter checks of the whole-file
 * scan, where a match of the magic may be chance. Returns 0, or a negative code with err set.
 */
static int parse_container(wg_object *obj, wg_arena *a, const span *s, uint64_t off, bool strict,
			   const char *where, wg_fatbin_container *c, wg_vec *entries, wg_err *err)
{
	if (!rd(s, off, CONTAINER_HEADER))
		return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin container at offset %#llx: header "
				 "truncated", obj->path, where, (unsigned long long)off);
	const uint8_t *h = s->d + off;
	uint16_t version = le16(h + 4), hsize = le16(h + 6);
	uint64_t fat = le64(h + 8);
	if (le32(h) != FATBIN_MAGIC || version != 1)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: offset %#llx: not a fatbin container "
				 "(magic %#x, version %u)", obj->path, where, (unsigned long long)off,
				 le32(h), version);
	if (hsize < CONTAINER_HEADER || !rd(s, off, hsize) || !rd(s, off + hsize, fat))
		return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin container at offset %#llx: header "
				 "size %u + %llu bytes of entries run past the end of the data (%zu bytes)",
				 obj->path, where, (unsigned long long)off, hsize,
				 (unsigned long long)fat, s->len);
	if (strict && (fat == 0 || fat % 8 || hsize != CONTAINER_HEADER))
		return WG_EFORMAT;
	c->offset = off;
	c->size = hsize + fat;
	c->first_entry = entries->len;
	uint64_t p = off + hsize, end = off + hsize + fat;
	while (p < end) {
		if (end - p < ENTRY_HEADER_MIN) {
			/* Zero padding up to 8 bytes is tolerated; anything else is not. */
			bool zero = true;
			for (uint64_t i = p; i < end; i++)
				zero = zero && s->d[i] == 0;
			if (zero && end - p < 8 && !strict)
				break;
			return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin entry at offset %#llx: %llu "
					 "bytes left, less than an entry header", obj->path, where,
					 (unsigned long long)p, (unsigned long long)(end - p));
		}
		const uint8_t *e = s->d + p;
		uint16_t kind = le16(e), ever = le16(e + 2);
		uint32_t ehs = le32(e + 4);
		uint64_t psize = le64(e + 8);
		uint32_t csize = le32(e + 16);
		uint64_t flags = le64(e + 0x28), usize = le64(e + 0x38);
		if (ehs < ENTRY_HEADER_MIN || ehs % 8 || ehs > end - p)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin entry at offset %#llx: header "
					 "size %u is invalid (at least 64, a multiple of 8, within the "
					 "container)", obj->path, where, (unsigned long long)p, ehs);
		if (psize > end - p - ehs)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin entry at offset %#llx: payload "
					 "of %llu bytes runs past the container's end at %#llx", obj->path,
					 where, (unsigned long long)p, (unsigned long long)psize,
					 (unsigned long long)end);
		if (csize > psize)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin entry at offset %#llx: "
					 "compressed size %u exceeds its payload of %llu bytes", obj->path,
					 where, (unsigned long long)p, csize, (unsigned long long)psize);
		if (strict && ((kind != 1 && kind != 2 && kind != 8) || ever != 0x0101 || psize % 8 ||
			       le32(e + 0x1c) == 0 || le32(e + 0x1c) > 2000))
			return WG_EFORMAT;
		if (entries->len >= obj->fatbin_entries_max) {
			/* past the bound: checked and counted, not kept */
			obj->fatbin_entries_more++;
			p += (uint64_t)ehs + psize;
			continue;
		}
		wg_fatbin_entry *x = wg_vec_push(entries);
		if (!x)
			return wg_seterr(err, WG_ENOMEM, "out of memory");
		x->offset = p;
		x->container = obj->fatbin_containers.len;
		x->kind = kind;
		x->arch = le32(e + 0x1c);
		x->variant = flags & FB_ARCH_A ? 'a' : flags & FB_ARCH_F ? 'f' : 0;
		x->minor = le16(e + 0x18);
		x->major = le16(e + 0x1a);
		x->flags = flags;
		x->header_size = ehs;
		x->payload_size = psize;
		x->compressed_size = csize;
		x->uncompressed_size = usize;
		x->debug = (flags & FB_DEBUG) != 0;
		x->compression = !csize && !(flags & (FB_LZ4 | FB_ZSTD | FB_COMPRESS_LEGACY))
					 ? WG_FATBIN_COMP_NONE
				 : flags & FB_ZSTD ? WG_FATBIN_COMP_ZSTD
				 : flags & FB_LZ4  ? WG_FATBIN_COMP_LZ4
						   : WG_FATBIN_COMP_LEGACY;
		if (x->compression != WG_FATBIN_COMP_NONE && !csize)
			x->compressed_size = (uint32_t)psize; /* flagged but sizes not recorded */
		if (kind == WG_FATBIN_PTX && !(flags & FB_OBFUSCATED)) {
			char head[PTX_HEAD];
			uint64_t avail = x->compression == WG_FATBIN_COMP_NONE ? psize : x->compressed_size;
			if (ptx_head(e + ehs, (size_t)avail, x, head, sizeof(head))) {
				x->ptx_version = ptx_directive(a, head, ".version");
				x->ptx_target = ptx_directive(a, head, ".target");
			}
		}
		p += (uint64_t)ehs + psize; /* ehs >= 64: always advances */
	}
	c->entry_count = entries->len - c->first_entry;
	return WG_OK;
}

static const wg_section *section_named(const wg_object *o, const char *name)
{
	for (size_t i = 0; i < o->nsections; i++)
		if (!strcmp(o->sections[i].name, name))
			return &o->sections[i];
	return NULL;
}

static const wg_section *section_at(const wg_object *o, uint64_t off)
{
	for (size_t i = 0; i < o->nsections; i++) {
		const wg_section *sec = &o->sections[i];
		if (sec->has_contents && off >= sec->offset && off - sec->offset < sec->size)
			return sec;
	}
	return NULL;
}

/*
 * Virtual addresses to file offsets, as the loader maps them: through the PT_LOAD segments
 * (sorted by address once, then a binary search: thousands of wrappers in the large
 * libraries, and a hostile object may have 65,535 segments), or the loaded sections for an
 * object without program headers. Segments that overlap (which the ELF specification does
 * not allow) resolve to the nearest one below the address, looking back at most 8.
 */
typedef struct {
	const wg_object *o;
	wg_segment *seg; /* sorted by vaddr, empty ones left out; NULL: use the sections */
	size_t n;
} addrmap;

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

/* File offset of virtual address va; UINT64_MAX if it maps to none. */
static uint64_t va_to_offset(const addrmap *m, uint64_t va)
{
	if (m->seg) {
		size_t lo = 0, hi = m->n; /* first segment above va */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (m->seg[mid].vaddr <= va)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = 0; k < 8 && lo > k; k++) {
			const wg_segment *g = &m->seg[lo - 1 - k];
			if (va - g->vaddr < g->filesz && g->offset <= UINT64_MAX - (va - g->vaddr))
				return g->offset + (va - g->vaddr);
		}
		return UINT64_MAX;
	}
	const wg_object *o = m->o;
	for (size_t i = 0; i < o->nsections; i++) {
		const wg_section *sec = &o->sections[i];
		if (sec->has_contents && sec->vma && va >= sec->vma && va - sec->vma < sec->size)
			return sec->offset + (va - sec->vma);
	}
	return UINT64_MAX;
}

static int add_container(wg_object *obj, wg_arena *a, const span *s, uint64_t off,
			 const wg_section *sec, bool registered, bool strict, wg_err *err)
{
	wg_fatbin_container c = {0};
	wg_vec *entries = &obj->fatbin_entries;
	size_t before = entries->len, more_before = obj->fatbin_entries_more;
	char where[128];
	snprintf(where, sizeof(where), "section %s", sec ? sec->name : "(none)");
	int rc = parse_container(obj, a, s, off, strict, where, &c, entries, err);
	if (rc < 0) {
		entries->len = before; /* drop what a failed container left */
		obj->fatbin_entries_more = more_before;
		return rc;
	}
	c.section = sec ? sec->name : NULL;
	c.registered = registered;
	wg_fatbin_container *slot = wg_vec_push(&obj->fatbin_containers);
	if (!slot)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	*slot = c;
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
		while (p + skip < end && skip < 8 && s->d[p + skip] == 0)
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
		span within = {s->d, (size_t)end}; /* a container may not leave its section */
		int rc = add_container(obj, a, &within, p, sec, true, false, &err);
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
	const wg_section *seg = section_named(obj, ".nvFatBinSegment");
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
		by_offset key = {va_to_offset(map, le64(w + 8)), 0};
		by_offset *hit = bsearch(&key, idx, n, sizeof(*idx), cmp_by_offset);
		if (hit)
			((wg_fatbin_container *)wg_vec_at(&obj->fatbin_containers, hit->index))
				->wrapper_version = (int)le32(w + 4);
	}
	free(idx);
	return WG_OK;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int fatbin_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		       wg_scan_problem_fn problem, void *payload);

int wg_fatbin_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		   wg_scan_problem_fn problem, void *payload)
{
	return wg_fatbin_read_max(obj, a, data, len, SIZE_MAX, problem, payload);
}

int wg_fatbin_read_max(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		       size_t max, wg_scan_problem_fn problem, void *payload)
{
	obj->fatbin_entries_max = max;
	obj->fatbin_entries_more = 0;
	int rc = fatbin_read(obj, a, data, len, problem, payload);
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

/* ---- objects whose section table cannot say where the registered fatbins are ---- */

/*
 * Whether the section table is usable for the registered fatbins: there is one, and the
 * sections that hold them are there unless it is known to lie (rule WG-ELF-001). Without it
 * the fatbins are read as the CUDA runtime finds them, through the wrappers (loader_read).
 */
static bool sections_usable(const wg_object *o)
{
	if (!o->nsections)
		return false;
	if (!o->sections_lie)
		return true;
	return section_named(o, ".nvFatBinSegment") &&
	       (section_named(o, ".nv_fatbin") || section_named(o, "__nv_relfatbin"));
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
			uint64_t t = va_to_offset(map, le64(w + 8));
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
static int loader_read(wg_object *obj, wg_arena *a, const span *s, const addrmap *map,
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
			rc = add_container(obj, a, s, p, section_at(obj, p), true, false, &err);
		} else {
			rc = v == pattern ? add_container(obj, a, s, p, section_at(obj, p), false, true,
							  &err)
					  : WG_EFORMAT;
			if (rc != WG_OK && rc != WG_ENOMEM && (adjacent || v == pattern)) {
				tentative = true;
				rc = add_container(obj, a, s, p, section_at(obj, p), true, false, &err);
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

static int fatbin_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		       wg_scan_problem_fn problem, void *payload)
{
	span s = {data, len};
	int rc;
	addrmap map;
	wg_vec_init(&obj->fatbin_containers, sizeof(wg_fatbin_container));
	wg_vec_init(&obj->fatbin_entries, sizeof(wg_fatbin_entry));
	obj->fatbin_wrappers = 0;
	if ((rc = addrmap_init(&map, obj)) < 0)
		return rc;
	if (!sections_usable(obj) && obj->nsegments) {
		rc = loader_read(obj, a, &s, &map, problem, payload);
		free(map.seg);
		return rc;
	}
	static const char *const registered[] = {".nv_fatbin", "__nv_relfatbin"};
	for (size_t i = 0; i < WG_ARRAY_LEN(registered); i++) {
		const wg_section *sec = section_named(obj, registered[i]);
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
	const uint64_t pattern = 0x00100001BA55ED50ull; /* 50 ED 55 BA 01 00 10 00, little-endian */
	wg_err err = {0};
	uint64_t p = 0;
	for (size_t r = 0; r < nr; r += 2) {
		uint64_t gap_end = ranges[r] < len ? ranges[r] : len;
		while (p + CONTAINER_HEADER <= gap_end) {
			uint64_t v;
			memcpy(&v, data + p, 8);
			if (v != pattern) {
				p += 8;
				continue;
			}
			rc = add_container(obj, a, &s, p, section_at(obj, p), false, true, &err);
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

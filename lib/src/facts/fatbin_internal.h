/*
 * Private to the CUDA fatbinary reader's files: fatbin.c (the registered sections walked,
 * wrappers linked, the entry points and accessors), fatbin_container.c (one container and its
 * entries parsed) and fatbin_loader.c (objects whose section table cannot say where the
 * registered fatbins are: read through the wrappers, as the CUDA runtime finds them).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_FACTS_FATBIN_INTERNAL_H
#define WG_FACTS_FATBIN_INTERNAL_H

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
	const wg_sparse *sp; /* an object read sparsely: headers and heads are in its records */
} span;

/* The bytes [off, off + n) of the object (rd() checked): from the records of an object read
 * sparsely where they are there, else in place. *got: how many of them follow off there. */
static inline const uint8_t *fb_at(const span *s, uint64_t off, uint64_t n, uint64_t *got)
{
	const uint8_t *p = s->sp ? wg_sparse_at(s->sp, off, n, got) : NULL;
	if (!p && got)
		*got = s->len - off;
	return p ? p : s->d + off;
}

static inline bool rd(const span *s, uint64_t off, uint64_t n)
{
	return off <= s->len && n <= s->len - off;
}

static inline uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}


static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
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

/* ---- fatbin.c ---- */

const wg_section *wg_fb_section_named(const wg_object *o, const char *name);
const wg_section *wg_fb_section_at(const wg_object *o, uint64_t off);
/* File offset of virtual address va; UINT64_MAX if it maps to none. */
uint64_t wg_fb_va_to_offset(const addrmap *m, uint64_t va);
/* Adds the container at off (in section sec, or NULL), its entries parsed. */
int wg_fb_add_container(wg_object *obj, wg_arena *a, const span *s, uint64_t off,
			const wg_section *sec, bool registered, bool strict, wg_err *err);

/* ---- fatbin_container.c ---- */

/* Parses the entries of the container at off (strict: the whole-file scan's checks, where a
 * match of the magic may be chance). Returns 0, or a negative code with err set. */
int wg_fb_parse_container(wg_object *obj, wg_arena *a, const span *s, uint64_t off, bool strict,
			  const char *where, wg_fatbin_container *c, wg_vec *entries, wg_err *err);

/* ---- fatbin_loader.c ---- */

/* Whether the section table is usable for the registered fatbins. */
bool wg_fb_sections_usable(const wg_object *o);
/* The fatbins read as the CUDA runtime finds them: through the wrappers in the segments. */
int wg_fb_loader_read(wg_object *obj, wg_arena *a, const span *s, const addrmap *map,
		      wg_scan_problem_fn problem, void *payload);

#endif

/*
 * Private to sparse.c (the image, its pages, ranges and records, the passes after the first)
 * and sparse_scan.c (what the first pass looks for as the bytes go by: the ELF header, the
 * segments, the dynamic tables still to come, .shstrtab, fatbin containers and wrappers).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_FACTS_SPARSE_INTERNAL_H
#define WG_FACTS_SPARSE_INTERNAL_H

#include "facts/facts.h"

#define PG 4096u
#ifndef WG_SPARSE_SMALL
#define FRONT_MIN (1u << 20)  /* kept before the program headers are known */
#define FRONT_MAX (16u << 20) /* the first segment kept at most this far */
#define SEGMENT_MAX (1u << 20) /* a PT_DYNAMIC, PT_NOTE... kept when at most this large */
#define TAIL_BEFORE (64u << 10) /* bytes kept before the section header table */
#else /* tests/fuzz/fuzz_sparse.c: members of a few pages read sparsely, most pages missed */
#define FRONT_MIN 4096u
#define FRONT_MAX 8192u
#define SEGMENT_MAX 4096u
#define TAIL_BEFORE 256u
#endif
#define MAGICS_MAX (1u << 20) /* container magics remembered (8 MiB); past it, fatbin.c scans */
#define PREV (16u << 10) /* bytes before the current block a range added now can still get */
#define SHSTRTAB_AROUND (8u << 10) /* kept around a ".shstrtab" met outside the segments */
#define GAP_HEAD (64u << 10) /* kept after each segment: .comment, the notes libbfd reads */
#define MAX_LOADS 64
/* Containers walked and zstd heads read at once: every block visits each, so a crafted object
 * with millions of them must not make the pass quadratic. Past it, a container is not walked
 * as it passes; the readers then miss its pages and another pass fetches them. */
#define MAX_WALKERS 4096
#define TABLE_MAX (64u << 20) /* a dynamic table still to come, kept at most this far */
#define FATBIN_MAGIC 0xBA55ED50u
#define WRAPPER_MAGIC 0x466243B1u
/* A PTX head's .version and .target are in its first few hundred bytes: fatbin_container.c reads
 * up to 4095 bytes of text, but takes what a shorter prefix decides (ptx_directive). */
#define PTX_HEAD_KEEP 1024u
#define LZ4_HEAD_KEEP 2048u   /* LZ4 reads little more input than the text it makes */
#define ZSTD_FRAME_HEAD 32u /* a zstd frame's header and its first block's: then the block */

typedef struct {
	uint64_t lo, hi, done; /* [lo, hi), copied from lo up to done */
	size_t rec;            /* a record's range: its index + 1 (its bytes go there); 0: pages */
} range;

/* Bytes of the member kept apart from the image, in the blob: [off, off + len). */
typedef struct {
	uint64_t off;
	size_t at, len;
	bool whole; /* all of them arrived */
} record;

typedef struct {
	uint64_t at, end; /* the next header to read; the container's end */
	bool entries;     /* false: the container's header is next */
	bool zstd;        /* a zstd PTX head at `at` (end: its payload's end) */
} walker;

struct wg_sparse {
	uint8_t *img;
	uint64_t len, npages, mapped;
	uint64_t *kept; /* a bit per page that holds the member's bytes, all of them */
	uint64_t *unused; /* a bit per page whose bytes no fact depends on (debug_heads) */
	uint64_t kept_pages;
	/* pass 1 */
	uint64_t have;  /* bytes that have passed */
	uint8_t prev[PREV]; /* the last bytes before the current block (prev_n of them) */
	size_t prev_n;
	bool segments_known; /* the program headers have been read (or there are none) */
	/* The PT_LOAD segments (the first MAX_LOADS), and PT_DYNAMIC: read once it has passed
	 * for the tables it points at that are still to come (patchelf moves them to the end) */
	struct {
		uint64_t off, vaddr, filesz;
	} loads[MAX_LOADS];
	unsigned nloads;
	uint64_t dyn_off, dyn_size;
	bool dyn_done;
	wg_vec records;   /* record; sorted by offset once the first pass is over */
	uint8_t *blob;
	size_t blob_len, blob_cap;
	bool planned, elf_ok, is64, little;
	uint64_t plan_at; /* the program headers end here: planned once it has passed */
	wg_vec ranges, walkers, heads, magics; /* heads: zstd PTX heads being read */
	bool magics_full;
	uint8_t carry[8];
	unsigned ncarry;
	/* the passes after the first */
	wg_vec miss; /* range: pages to fetch */
	uint64_t miss_end;
	wg_sparse_stats st;
};

bool wg_sp_is_kept(const wg_sparse *sp, uint64_t page);
/* Keeps [lo, hi) of the member in the image, in whole pages, as it passes (data, n: the
 * current block at off). */
int wg_sp_keep(wg_sparse *sp, uint64_t lo, uint64_t hi, const uint8_t *data, size_t n,
	       uint64_t off);
/* Keeps [lo, lo + n) as a record of its own bytes; *at: them, when all are here now. */
int wg_sp_record(wg_sparse *sp, uint64_t lo, uint64_t n, const uint8_t *data, size_t dn,
		 uint64_t off, const uint8_t **at);
bool wg_sp_kept_range(const wg_sparse *sp, uint64_t off, uint64_t n);
void wg_sp_copy_pending(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off);
void wg_sp_remember(wg_sparse *sp, const uint8_t *data, size_t n);

static inline uint64_t wg_sp_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline uint64_t wg_sp_rd(const wg_sparse *sp, uint64_t at, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)sp->img[at + (sp->little ? i : n - 1 - i)] << (8 * i);
	return v;
}

#endif

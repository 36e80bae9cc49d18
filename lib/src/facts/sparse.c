/*
 * An ELF member read without holding it (issue 30). As its bytes stream past, only the ranges
 * the fact readers need are copied into an image of the member's size that is address space
 * only (an anonymous mapping; a page is backed once something is written to it):
 *  - the front of the file up to the end of its first segment (the dynamic tables and the
 *    relocations; with older linkers the code too), at most FRONT_MAX;
 *  - what the program headers point at, except the loadable segments: PT_DYNAMIC, notes,
 *    PT_INTERP (the loader's and libbfd's reads);
 *  - the section header table and the bytes before it (.shstrtab is 4-427 bytes before it in
 *    every object measured, docs/stream-touchmap.md);
 *  - every CUDA fatbin container met, found by its magic at an 8-aligned offset wherever it
 *    is: its header, each entry's header and a PTX entry's head, walked as they pass, kept as
 *    records of their own bytes (wg_sparse_at: a page per entry would hold 4 KiB for 64 bytes,
 *    145 MB for cuFFT's); a zstd PTX head in whole pages; and the 24-byte .nvFatBinSegment
 *    wrappers, found by theirs.
 * The offsets of the container magics are the fatbin reader's scan for containers outside the
 * registered sections, made here as the bytes pass (fatbin.c takes them instead of reading
 * the whole file).
 *
 * The readers then run on the image unchanged. A page they read that was not kept is the
 * kernel's zero page, and mincore(2) reports it resident: after a run, the resident pages that
 * were not kept are exactly those it read and did not have. They are fetched in another pass
 * over the member (stopped after the last of them), and the readers run again on a fresh
 * object; only a run that read nothing missing is kept. The facts are those of the whole
 * member whatever a reader reads; what is kept only decides how often another pass is needed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ELF /* wg_seterr: what fails here */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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
	uint64_t nonalloc; /* UINT64_MAX until the program headers are read */
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

static bool is_kept(const wg_sparse *sp, uint64_t page)
{
	return sp->kept[page / 64] >> (page % 64) & 1;
}

static void mark(wg_sparse *sp, uint64_t from, uint64_t to)
{
	/* The pages wholly in [from, to): from is a page start; the member's last page counts
	 * as whole when to is the member's end. */
	uint64_t p = from / PG, q = to == sp->len ? (to + PG - 1) / PG : to / PG;
	for (; p < q; p++)
		if (!is_kept(sp, p)) {
			sp->kept[p / 64] |= 1ull << (p % 64);
			sp->kept_pages++;
		}
}

/* Copies what of r is in [off, off + n) and moves r->done on. Ranges are copied without gaps
 * from their start, so every page below done is whole. */
static void copy_range(wg_sparse *sp, range *r, const uint8_t *data, size_t n, uint64_t off)
{
	uint64_t from = r->done > off ? r->done : off, to = off + n < r->hi ? off + n : r->hi;
	if (from < r->done || from >= to || from != r->done)
		return; /* nothing here, or a gap: the rest of r waits */
	if (r->rec) {
		record *c = wg_vec_at(&sp->records, r->rec - 1);
		memcpy(sp->blob + c->at + (from - r->lo), data + (from - off), (size_t)(to - from));
		r->done = to;
		c->whole = to == r->hi;
		return;
	}
	memcpy(sp->img + from, data + (from - off), (size_t)(to - from));
	uint64_t start = r->done & ~(uint64_t)(PG - 1);
	r->done = to;
	mark(sp, start < r->lo ? r->lo : start, to);
}

/* Keeps [lo, hi) (widened to whole pages): what of it is here now is copied from the current
 * block (data, n at off) and the page the block started in; the rest as it passes. Bytes
 * before that page are gone: a page of them is not kept, and a run that reads it fetches it. */
static int keep(wg_sparse *sp, uint64_t lo, uint64_t hi, const uint8_t *data, size_t n,
		uint64_t off)
{
	if (lo >= sp->len || hi <= lo)
		return WG_OK;
	lo &= ~(uint64_t)(PG - 1);
	hi = hi >= sp->len ? sp->len : (hi + PG - 1) & ~(uint64_t)(PG - 1);
	if (hi > sp->len)
		hi = sp->len;
	/* The whole pages of what `prev` holds: [page0, off) */
	uint64_t page0 = (off - sp->prev_n + PG - 1) & ~(uint64_t)(PG - 1);
	if (hi <= page0)
		return WG_OK; /* gone */
	range r = {lo < page0 ? page0 : lo, hi, lo < page0 ? page0 : lo, 0};
	if (r.lo < off) {
		uint64_t to = off < hi ? off : hi;
		memcpy(sp->img + r.lo, sp->prev + sp->prev_n - (off - r.lo), (size_t)(to - r.lo));
		r.done = to;
	}
	if (data)
		copy_range(sp, &r, data, n, off);
	if (r.done < r.hi) {
		range *slot = wg_vec_push(&sp->ranges);
		if (!slot)
			return WG_ENOMEM;
		*slot = r;
	}
	if (r.done > r.lo)
		mark(sp, r.lo, r.done);
	return WG_OK;
}

static int blob_room(wg_sparse *sp, size_t n)
{
	if (n <= sp->blob_cap - sp->blob_len)
		return WG_OK;
	size_t cap = sp->blob_cap ? sp->blob_cap : 64 << 10;
	while (cap - sp->blob_len < n)
		cap *= 2;
	uint8_t *b = realloc(sp->blob, cap);
	if (!b)
		return WG_ENOMEM;
	sp->blob = b;
	sp->blob_cap = cap;
	return WG_OK;
}

/* A record of [lo, lo + n): the bytes here now (the current block, and the PREV before it) are
 * copied at once, the rest as it passes. *at: where they are in the blob (valid until the next
 * record). Bytes that are gone leave the record not whole: wg_sparse_at does not give it. */
static int record_bytes(wg_sparse *sp, uint64_t lo, uint64_t n, const uint8_t *data, size_t dn,
			uint64_t off, const uint8_t **at)
{
	*at = NULL;
	if (lo >= sp->len || !n)
		return WG_OK;
	if (n > sp->len - lo)
		n = sp->len - lo;
	int rc = blob_room(sp, (size_t)n);
	record *c = rc < 0 ? NULL : wg_vec_push(&sp->records);
	if (!c)
		return WG_ENOMEM;
	*c = (record){lo, sp->blob_len, (size_t)n, false};
	sp->blob_len += (size_t)n;
	range r = {lo, lo + n, lo, sp->records.len};
	if (lo < off) {
		if (lo < off - sp->prev_n)
			return WG_OK; /* gone: never whole */
		uint64_t to = off < r.hi ? off : r.hi;
		memcpy(sp->blob + c->at, sp->prev + sp->prev_n - (off - lo), (size_t)(to - lo));
		r.done = to;
		c->whole = to == r.hi;
	}
	if (data)
		copy_range(sp, &r, data, dn, off);
	if (r.done < r.hi) {
		range *slot = wg_vec_push(&sp->ranges);
		if (!slot)
			return WG_ENOMEM;
		*slot = r;
	} else {
		*at = sp->blob + ((record *)wg_vec_at(&sp->records, r.rec - 1))->at;
	}
	return WG_OK;
}

int wg_sparse_new(wg_sparse **out, uint64_t len)
{
	*out = NULL;
	if (!len || len > SIZE_MAX - PG)
		return WG_EINVAL;
	wg_sparse *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return WG_ENOMEM;
	sp->len = len;
	sp->npages = (len + PG - 1) / PG;
	sp->mapped = sp->npages * PG;
	sp->img = mmap(NULL, (size_t)sp->mapped, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (sp->img == MAP_FAILED) {
		free(sp);
		return WG_ENOMEM;
	}
	/* A huge page would back 2 MiB for a 24-byte wrapper. */
	madvise(sp->img, (size_t)sp->mapped, MADV_NOHUGEPAGE);
	if (!(sp->kept = calloc((size_t)((sp->npages + 63) / 64), sizeof(uint64_t)))) {
		wg_sparse_free(sp);
		return WG_ENOMEM;
	}
	wg_vec_init(&sp->ranges, sizeof(range));
	wg_vec_init(&sp->walkers, sizeof(walker));
	wg_vec_init(&sp->heads, sizeof(walker));
	wg_vec_init(&sp->magics, sizeof(uint64_t));
	wg_vec_init(&sp->miss, sizeof(range));
	wg_vec_init(&sp->records, sizeof(record));
	sp->st.size = len;
	sp->nonalloc = UINT64_MAX; /* known from the program headers */
	*out = sp;
	return keep(sp, 0, FRONT_MIN, NULL, 0, 0);
}

void wg_sparse_free(wg_sparse *sp)
{
	if (!sp)
		return;
	if (sp->img)
		munmap(sp->img, (size_t)sp->mapped);
	free(sp->kept);
	free(sp->unused);
	wg_vec_free(&sp->ranges);
	wg_vec_free(&sp->walkers);
	wg_vec_free(&sp->heads);
	wg_vec_free(&sp->magics);
	wg_vec_free(&sp->miss);
	wg_vec_free(&sp->records);
	free(sp->blob);
	free(sp);
}

const uint8_t *wg_sparse_image(const wg_sparse *sp)
{
	return sp->img;
}

bool wg_sparse_page_kept(const wg_sparse *sp, uint64_t page)
{
	return page < sp->npages && is_kept(sp, page);
}

const uint64_t *wg_sparse_fatbin_magics(const wg_sparse *sp, size_t *n)
{
	static const uint64_t none[1];
	*n = sp->magics.len;
	if (sp->magics_full)
		return NULL;
	return sp->magics.len ? (const uint64_t *)sp->magics.items : none; /* none found */
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint64_t rd_n(const wg_sparse *sp, uint64_t at, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)sp->img[at + (sp->little ? i : n - 1 - i)] << (8 * i);
	return v;
}

/* The ELF header has passed (the front is kept): what to keep from the program headers, once
 * they have passed too, and from the section header table. */
static int plan_header(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	const uint8_t *d = sp->img;
	sp->planned = true;
	if (sp->len < 52 || memcmp(d, "\177ELF", 4) || (d[4] != 1 && d[4] != 2) ||
	    (d[5] != 1 && d[5] != 2) || (d[4] == 2 && sp->len < 64))
		return WG_OK; /* the reader says what is wrong: the front is what it reads */
	sp->elf_ok = true;
	sp->is64 = d[4] == 2;
	sp->little = d[5] == 1;
	bool w = sp->is64;
	uint64_t phoff = rd_n(sp, w ? 0x20 : 0x1c, w ? 8 : 4);
	uint64_t shoff = rd_n(sp, w ? 0x28 : 0x20, w ? 8 : 4);
	uint64_t phentsize = rd_n(sp, w ? 0x36 : 0x2a, 2), phnum = rd_n(sp, w ? 0x38 : 0x2c, 2);
	uint64_t shentsize = rd_n(sp, w ? 0x3a : 0x2e, 2), shnum = rd_n(sp, w ? 0x3c : 0x30, 2);
	int rc;
	if (shoff && shoff < sp->len) {
		uint64_t lo = shoff > TAIL_BEFORE ? shoff - TAIL_BEFORE : 0;
		uint64_t size = shentsize * (shnum ? shnum : 1);
		if ((rc = keep(sp, lo, shoff + (size < sp->len ? size : sp->len), data, n, off)) < 0)
			return rc;
	}
	if (!phnum)
		sp->nonalloc = 0; /* no segments: every byte may be a section's */
	if (phnum && phentsize >= (w ? 56u : 32u) && phoff < sp->len &&
	    phentsize * phnum <= sp->len - phoff) {
		sp->plan_at = phoff + phentsize * phnum;
		if ((rc = keep(sp, phoff, sp->plan_at, data, n, off)) < 0)
			return rc;
	}
	return WG_OK;
}

/* The program headers have passed: the front up to the end of the first segment, and the
 * small segments the loader and libbfd read by their headers. */
static int plan_segments(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	bool w = sp->is64;
	uint64_t phoff = rd_n(sp, w ? 0x20 : 0x1c, w ? 8 : 4);
	uint64_t phentsize = rd_n(sp, w ? 0x36 : 0x2a, 2), phnum = rd_n(sp, w ? 0x38 : 0x2c, 2);
	bool first = true;
	int rc;
	sp->plan_at = 0;
	sp->nonalloc = 0;
	sp->nloads = 0;
	for (uint64_t i = 0; i < phnum; i++) {
		uint64_t h = phoff + i * phentsize;
		uint64_t type = rd_n(sp, h, 4);
		uint64_t o = rd_n(sp, h + (w ? 8 : 4), w ? 8 : 4);
		uint64_t fsz = rd_n(sp, h + (w ? 32 : 16), w ? 8 : 4);
		if (o >= sp->len)
			continue;
		if (fsz > sp->len - o)
			fsz = sp->len - o;
		if (type == 1 /* PT_LOAD */ && o + fsz > sp->nonalloc)
			sp->nonalloc = o + fsz;
		if (type == 1 /* PT_LOAD */ && sp->nloads < MAX_LOADS) {
			sp->loads[sp->nloads].off = o;
			sp->loads[sp->nloads].vaddr = rd_n(sp, h + (w ? 16 : 8), w ? 8 : 4);
			sp->loads[sp->nloads++].filesz = fsz;
		}
		if (type == 2 /* PT_DYNAMIC */ && !sp->dyn_size && fsz) {
			sp->dyn_off = o;
			sp->dyn_size = fsz;
		}
		/* What follows a segment in the file: .comment and the notes no loader maps, which
		 * libbfd reads (annobin's .gnu.build.attributes: RHEL's toolchains, manylinux). */
		if (type == 1 && (rc = keep(sp, o + fsz, o + fsz + GAP_HEAD, data, n, off)) < 0)
			return rc;
		if (type == 1 /* PT_LOAD */) {
			/* Executable or not (older linkers put the tables and the code in one). */
			if (first && o == 0 &&
			    (rc = keep(sp, 0, fsz < FRONT_MAX ? fsz : FRONT_MAX, data, n, off)) < 0)
				return rc;
			/* A small one after it: patchelf puts the tables it moves in one at the end. */
			if (!first && fsz <= SEGMENT_MAX && (rc = keep(sp, o, o + fsz, data, n, off)) < 0)
				return rc;
			first = false;
		} else if (fsz <= SEGMENT_MAX && (rc = keep(sp, o, o + fsz, data, n, off)) < 0) {
			return rc;
		}
	}
	return WG_OK;
}

static bool kept_range(const wg_sparse *sp, uint64_t off, uint64_t n);

/* The file offset of virtual address va, and where its segment's bytes end; false if none. */
static bool va_to_off(const wg_sparse *sp, uint64_t va, uint64_t *off, uint64_t *end)
{
	for (unsigned i = 0; i < sp->nloads; i++) {
		uint64_t v = sp->loads[i].vaddr;
		if (va >= v && va - v < sp->loads[i].filesz) {
			*off = sp->loads[i].off + (va - v);
			*end = sp->loads[i].off + sp->loads[i].filesz;
			return true;
		}
	}
	return false;
}

/*
 * PT_DYNAMIC has passed: the tables it points at that are still to come (patchelf and
 * auditwheel move .dynstr, .dynsym and the hashes to a segment at the end: torch's libraries,
 * openblas) are kept as they pass, each to its size where the array says it (DT_STRSZ,
 * DT_RELASZ...) and else up to the next table or the end of its segment, at most TABLE_MAX.
 */
static int plan_dynamic(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	enum { STR, SYM, HASH, GNUHASH, VERSYM, VERNEED, VERDEF, RELA, REL, JMPREL, NT };
	uint64_t at[NT] = {0}, size[NT] = {0};
	bool have[NT] = {false};
	bool w = sp->is64;
	size_t ent = w ? 16 : 8;
	sp->dyn_done = true;
	if (!kept_range(sp, sp->dyn_off, sp->dyn_size))
		return WG_OK;
	bool more = true;
	for (uint64_t p = sp->dyn_off; more && p + ent <= sp->dyn_off + sp->dyn_size; p += ent) {
		uint64_t tag = rd_n(sp, p, w ? 8 : 4), val = rd_n(sp, p + ent / 2, w ? 8 : 4);
		int t = -1;
		switch (tag) {
		case 0: more = false; continue; /* DT_NULL: the end */
		case 5: t = STR; break;
		case 10: size[STR] = val; continue; /* DT_STRSZ */
		case 6: t = SYM; break;
		case 4: t = HASH; break;
		case 0x6ffffef5: t = GNUHASH; break;
		case 0x6ffffff0: t = VERSYM; break;
		case 0x6ffffffe: t = VERNEED; break;
		case 0x6ffffffc: t = VERDEF; break;
		case 7: t = RELA; break;
		case 8: size[RELA] = val; continue; /* DT_RELASZ */
		case 17: t = REL; break;
		case 18: size[REL] = val; continue; /* DT_RELSZ */
		case 23: t = JMPREL; break;
		case 2: size[JMPREL] = val; continue; /* DT_PLTRELSZ */
		default: continue;
		}
		at[t] = val;
		have[t] = true;
	}
	uint64_t fo[NT], seg_end[NT];
	for (int t = 0; t < NT; t++)
		have[t] = have[t] && va_to_off(sp, at[t], &fo[t], &seg_end[t]);
	for (int t = 0; t < NT; t++) {
		if (!have[t] || fo[t] + 1 <= sp->have)
			continue; /* passed: the front or a segment kept it, or a run will miss it */
		uint64_t end = seg_end[t];
		if (size[t] && size[t] < end - fo[t]) {
			end = fo[t] + size[t];
		} else {
			for (int u = 0; u < NT; u++)
				if (have[u] && fo[u] > fo[t] && fo[u] < end)
					end = fo[u];
		}
		if (end - fo[t] > TABLE_MAX)
			end = fo[t] + TABLE_MAX;
		int rc = keep(sp, fo[t], end, data, n, off);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

/* A container's walk, as far as the bytes that have passed allow (fatbin_container.c's). */
static int walk(wg_sparse *sp, walker *k, const uint8_t *data, size_t n, uint64_t off)
{
	int rc;
	if (k->zstd) {
		/* The decoder reads the frame header, then the first block whole (at most 128 KiB):
		 * its size is in its 3-byte header. */
		if (k->at + ZSTD_FRAME_HEAD > sp->have && k->end > sp->have)
			return WG_OK;
		uint64_t p = k->at, end = k->end;
		k->at = k->end = 0; /* done, whatever follows */
		if (end - p < 6 || rd_n(sp, p, 4) != 0xFD2FB528u)
			return WG_OK;
		unsigned fhd = sp->img[p + 4];
		unsigned did = (unsigned[]){0, 1, 2, 4}[fhd & 3], fcs = (unsigned[]){0, 2, 4, 8}[fhd >> 6];
		if (!fcs && (fhd & 0x20))
			fcs = 1;
		uint64_t b = p + 5 + !(fhd & 0x20) + did + fcs; /* the first block's header */
		if (b + 3 > end || b + 3 > sp->have)
			return keep(sp, p, end < p + (132u << 10) ? end : p + (132u << 10), data, n, off);
		uint64_t bh = rd_n(sp, b, 3), type = bh >> 1 & 3, size = bh >> 3;
		uint64_t last = b + 3 + (type == 1 ? 1 : size) + 3; /* and the next block's header */
		return keep(sp, p, last < end ? last : end, data, n, off);
	}
	const uint8_t *h;
	for (;;) {
		if (!k->entries) {
			if (k->at + 16 > sp->have)
				return WG_OK;
			uint64_t c = k->at;
			if ((rc = record_bytes(sp, c, 16, data, n, off, &h)) < 0)
				return rc;
			uint64_t hsize = h ? le(h + 6, 2) : 0, fat = h ? le(h + 8, 8) : 0;
			if (!h || le(h, 4) != FATBIN_MAGIC || le(h + 4, 2) != 1 || hsize < 16 ||
			    hsize > sp->len - c || fat > sp->len - c - hsize) {
				k->at = k->end = 0;
				return WG_OK;
			}
			k->entries = true;
			k->at = c + hsize;
			k->end = c + hsize + fat;
			continue;
		}
		if (k->at >= k->end) /* and the bytes after it: zero padding, or the next one */
			return record_bytes(sp, k->end, 8, data, n, off, &h);
		if (k->end - k->at < 64) { /* the zero padding the walk reads */
			rc = record_bytes(sp, k->at, k->end - k->at, data, n, off, &h);
			k->at = k->end;
			return rc;
		}
		if (k->at + 64 > sp->have)
			return WG_OK;
		uint64_t e = k->at;
		if ((rc = record_bytes(sp, e, 64, data, n, off, &h)) < 0)
			return rc;
		if (!h) {
			k->at = k->end;
			return WG_OK;
		}
		uint64_t kind = le(h, 2), ehs = le(h + 4, 4), psize = le(h + 8, 8);
		uint64_t csize = le(h + 16, 4), flags = le(h + 0x28, 8);
		if (ehs < 64 || ehs % 8 || ehs > k->end - e || psize > k->end - e - ehs) {
			k->at = k->end;
			return WG_OK;
		}
		if (kind == 1 /* PTX */ && !(flags & 0x10000ull /* obfuscated */)) {
			bool none = !csize && !(flags & (0x1000ull | 0x2000ull | 0x8000ull));
			uint64_t avail = none ? psize : csize ? csize : psize;
			uint64_t head = none ? PTX_HEAD_KEEP : flags & 0x8000ull ? ZSTD_FRAME_HEAD
					: flags & 0x2000ull ? LZ4_HEAD_KEEP : 0;
			if (head > avail)
				head = avail;
			if (head && !none && (flags & 0x8000ull)) {
				/* zstd: in pages, the block the decoder reads found from its header */
				walker *z = wg_vec_push(&sp->heads);
				if (!z || (rc = keep(sp, e + ehs, e + ehs + head, data, n, off)) < 0)
					return z ? rc : WG_ENOMEM;
				*z = (walker){e + ehs, e + ehs + avail, false, true};
			} else if (head && (rc = record_bytes(sp, e + ehs, head, data, n, off, &h)) < 0) {
				return rc;
			}
		}
		k->at = e + ehs + psize;
	}
}

/* An 8-aligned word of the member at `at`: a container's or a wrapper's magic. */
static int word(wg_sparse *sp, uint64_t v, uint64_t at, const uint8_t *data, size_t n,
		uint64_t off)
{
	if ((uint32_t)v == WRAPPER_MAGIC)
		return keep(sp, at, at + 24, data, n, off);
	if (v != 0x00100001BA55ED50ull) /* 50 ED 55 BA 01 00 10 00 */
		return WG_OK;
	if (!sp->magics_full) {
		uint64_t *slot = sp->magics.len < MAGICS_MAX ? wg_vec_push(&sp->magics) : NULL;
		if (slot)
			*slot = at;
		else
			sp->magics_full = true; /* fatbin.c scans the image: every page is missed */
	}
	walker *k = wg_vec_push(&sp->walkers);
	if (!k)
		return WG_ENOMEM;
	*k = (walker){at, 0, false, false};
	return WG_OK;
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/*
 * How many bytes of p (n, a multiple of 64) pass the magic filter: the offset of the first
 * 64-byte piece with a 32-bit half equal to either magic, or n. AVX2 where the CPU has it (the
 * scan reads every byte of every streamed object: 21 ms of SSE2 for cuBLASLt's 541 MB), SSE2
 * on any x86-64, plain words elsewhere.
 */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static size_t skip_avx2(const uint8_t *p, size_t n)
{
	const __m256i fm = _mm256_set1_epi32((int)FATBIN_MAGIC), wm = _mm256_set1_epi32((int)WRAPPER_MAGIC);
	size_t i = 0;
	for (; i < n; i += 64) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
		__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 32));
		__m256i hit = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi32(a, fm), _mm256_cmpeq_epi32(a, wm)),
					      _mm256_or_si256(_mm256_cmpeq_epi32(b, fm), _mm256_cmpeq_epi32(b, wm)));
		if (!_mm256_testz_si256(hit, hit))
			break;
	}
	return i;
}
#endif

static size_t skip_plain(const uint8_t *p, size_t n)
{
	size_t i = 0;
	for (; i < n; i += 64) {
#ifdef __SSE2__
		const __m128i fm = _mm_set1_epi32((int)FATBIN_MAGIC), wm = _mm_set1_epi32((int)WRAPPER_MAGIC);
		__m128i hit = _mm_setzero_si128();
		for (int k = 0; k < 4; k++) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 16 * k));
			hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi32(v, fm), _mm_cmpeq_epi32(v, wm)));
		}
		if (_mm_movemask_epi8(hit))
			break;
#else
		bool hit = false;
		for (int k = 0; k < 16; k++) {
			uint32_t v;
			memcpy(&v, p + i + 4 * k, 4);
			hit |= (v == FATBIN_MAGIC) | (v == WRAPPER_MAGIC);
		}
		if (hit)
			break;
#endif
	}
	return i;
}

static size_t skip(const uint8_t *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
	static int avx2 = -1; /* every thread finds the same answer: relaxed is enough */
	int have = __atomic_load_n(&avx2, __ATOMIC_RELAXED);
	if (have < 0) {
		have = __builtin_cpu_supports("avx2") ? 1 : 0;
		__atomic_store_n(&avx2, have, __ATOMIC_RELAXED);
	}
	if (have)
		return skip_avx2(p, n);
#endif
	return skip_plain(p, n);
}

/* Every 8-aligned word of the block; one that straddles blocks is carried. */
static int scan_words(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	size_t i = 0;
	int rc;
	if (sp->ncarry) {
		while (sp->ncarry < 8 && i < n)
			sp->carry[sp->ncarry++] = data[i++];
		if (sp->ncarry < 8)
			return WG_OK;
		sp->ncarry = 0;
		uint64_t v = load64(sp->carry);
		if ((rc = word(sp, v, off + i - 8, data, n, off)) < 0)
			return rc;
	} else if (off % 8) {
		return WG_OK; /* cannot happen: words are carried from the first block on */
	}
	/* Whole 64-byte pieces by the fastest filter there is; a piece where any 32-bit half
	 * equals either magic goes to word(), which decides (a hit is a container's start). */
	while (i + 64 <= n) {
		i += skip(data + i, (n - i) & ~(size_t)63);
		if (i + 64 > n)
			break;
		for (int k = 0; k < 8; k++)
			if ((rc = word(sp, load64(data + i + 8 * k), off + i + 8 * k, data, n, off)) < 0)
				return rc;
		i += 64;
	}
	for (; i + 8 <= n; i += 8)
		if ((rc = word(sp, load64(data + i), off + i, data, n, off)) < 0)
			return rc;
	while (i < n)
		sp->carry[sp->ncarry++] = data[i++];
	return WG_OK;
}

/*
 * .shstrtab names every section, its own name too: wherever a linker put it (lld: between
 * .symtab and .strtab, megabytes before the section header table), ".shstrtab" is in it, and
 * the bytes around it are kept. Looked for only past the segments, where the sections no
 * loader maps are.
 */
static bool in_load(const wg_sparse *sp, uint64_t at, uint64_t *end)
{
	for (unsigned i = 0; i < sp->nloads; i++)
		if (at >= sp->loads[i].off && at - sp->loads[i].off < sp->loads[i].filesz) {
			*end = sp->loads[i].off + sp->loads[i].filesz;
			return true;
		}
	return false;
}

static int find_in(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off, uint64_t from,
		   uint64_t to);

static int find_shstrtab(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	if (sp->nonalloc == UINT64_MAX)
		return WG_OK; /* the segments are not known yet */
	/* The runs of the block that no segment maps: every step moves at forward. */
	for (uint64_t at = off, end = off + n, stop; at < end;) {
		if (in_load(sp, at, &stop)) {
			at = stop;
			continue;
		}
		uint64_t to = end;
		for (unsigned i = 0; i < sp->nloads; i++)
			if (sp->loads[i].off > at && sp->loads[i].off < to)
				to = sp->loads[i].off;
		int rc = find_in(sp, data, n, off, at, to);
		if (rc < 0)
			return rc;
		at = to;
	}
	return WG_OK;
}

/* ".shstrtab" in [from, to) of the block, and across its start from the bytes before it. */
static int find_in(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off, uint64_t from,
		   uint64_t to)
{
	static const char name[] = ".shstrtab";
	const size_t k = sizeof(name); /* with its NUL */
	int rc;
	(void)n;
	if (from == off && sp->prev_n >= k - 1) {
		/* a name cut by the block boundary */
		uint8_t seam[2 * sizeof(name)];
		size_t m = n < k - 1 ? n : k - 1;
		memcpy(seam, sp->prev + sp->prev_n - (k - 1), k - 1);
		memcpy(seam + k - 1, data, m);
		const uint8_t *q = memmem(seam, k - 1 + m, name, k);
		if (q && (rc = keep(sp, off - (k - 1) + (uint64_t)(q - seam) - SHSTRTAB_AROUND,
				    off + SHSTRTAB_AROUND, data, n, off)) < 0)
			return rc;
	}
	const uint8_t *p = data + (from - off), *end = data + (to - off);
	for (const uint8_t *q; p < end && (q = memmem(p, (size_t)(end - p), name, k)); p = q + 1) {
		uint64_t at = off + (uint64_t)(q - data);
		if ((rc = keep(sp, at > SHSTRTAB_AROUND ? at - SHSTRTAB_AROUND : 0,
			       at + SHSTRTAB_AROUND, data, n, off)) < 0)
			return rc;
	}
	return WG_OK;
}

int wg_sparse_take(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	int rc;
	if (!n)
		return WG_OK;
	sp->have = off + n;
	/* The ranges that were waiting for these bytes. */
	for (size_t i = 0; i < sp->ranges.len;) {
		range *r = wg_vec_at(&sp->ranges, i);
		copy_range(sp, r, data, n, off);
		if (r->done >= r->hi || r->hi <= off + n) {
			*r = *(range *)wg_vec_at(&sp->ranges, sp->ranges.len - 1);
			sp->ranges.len--;
		} else {
			i++;
		}
	}
	if (!sp->planned && sp->have >= (sp->len < 64 ? sp->len : 64) &&
	    (rc = plan_header(sp, data, n, off)) < 0)
		return rc;
	if (sp->plan_at && sp->have >= sp->plan_at && (rc = plan_segments(sp, data, n, off)) < 0)
		return rc;
	if (!sp->dyn_done && sp->dyn_size && sp->have >= sp->dyn_off + sp->dyn_size &&
	    (rc = plan_dynamic(sp, data, n, off)) < 0)
		return rc;
	if ((rc = scan_words(sp, data, n, off)) < 0 || (rc = find_shstrtab(sp, data, n, off)) < 0)
		return rc;
	for (size_t i = 0; i < sp->walkers.len;) {
		walker *k = wg_vec_at(&sp->walkers, i);
		if ((rc = walk(sp, k, data, n, off)) < 0)
			return rc;
		if (k->entries ? k->at >= k->end : !k->end && k->at + 16 <= sp->have) {
			*k = *(walker *)wg_vec_at(&sp->walkers, sp->walkers.len - 1);
			sp->walkers.len--;
		} else {
			i++;
		}
	}
	for (size_t i = 0; i < sp->heads.len;) {
		walker *k = wg_vec_at(&sp->heads, i);
		if ((rc = walk(sp, k, data, n, off)) < 0)
			return rc;
		if (!k->end) {
			*k = *(walker *)wg_vec_at(&sp->heads, sp->heads.len - 1);
			sp->heads.len--;
		} else {
			i++;
		}
	}
	/* The bytes before the next block, as many as prev holds. */
	if (n >= sizeof(sp->prev)) {
		memcpy(sp->prev, data + n - sizeof(sp->prev), sizeof(sp->prev));
		sp->prev_n = sizeof(sp->prev);
	} else {
		size_t keep_old = sp->prev_n + n > sizeof(sp->prev) ? sizeof(sp->prev) - n : sp->prev_n;
		memmove(sp->prev, sp->prev + sp->prev_n - keep_old, keep_old);
		memcpy(sp->prev + keep_old, data, n);
		sp->prev_n = keep_old + n;
	}
	return WG_OK;
}

/*
 * libbfd reads the first 12-24 bytes of every DWARF section (SEC_DEBUGGING: .debug_*,
 * .zdebug_*) to learn whether it is compressed, and acts on the answer only for a bfd opened
 * with BFD_DECOMPRESS or BFD_COMPRESS, never set here (binutils 2.40, elf.c,
 * _bfd_elf_make_section_from_shdr): those bytes are no fact's. A page read for that alone, one
 * wholly inside DWARF sections, is not fetched: the sections lie at the end, after everything
 * else, and a pass for them would stream nearly the whole member again. The section table
 * and its names are read from the tail kept; without them, nothing is left out.
 */
static bool dwarf_name(const char *s)
{
	return !strncmp(s, ".debug_", 7) || !strncmp(s, ".zdebug_", 8) ||
	       !strncmp(s, ".gnu.debuglto_.debug_", 21);
}

static bool kept_range(const wg_sparse *sp, uint64_t off, uint64_t n)
{
	if (off > sp->len || n > sp->len - off)
		return false;
	for (uint64_t p = off / PG; n && p <= (off + n - 1) / PG; p++)
		if (!is_kept(sp, p))
			return false;
	return true;
}

static int cmp_range(const void *a, const void *b)
{
	uint64_t x = ((const range *)a)->lo, y = ((const range *)b)->lo;
	return x < y ? -1 : x > y;
}

static int cmp_record(const void *a, const void *b)
{
	uint64_t x = ((const record *)a)->off, y = ((const record *)b)->off;
	return x < y ? -1 : x > y;
}

const uint8_t *wg_sparse_at(const wg_sparse *sp, uint64_t off, uint64_t n, uint64_t *got)
{
	const record *r = sp->records.items;
	size_t lo = 0, hi = sp->records.len; /* the first record past off */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Records may overlap (two walks over the same bytes): a few before are looked at. */
	for (size_t k = 0; k < 8 && lo > k; k++) {
		const record *c = &r[lo - 1 - k];
		if (c->whole && off - c->off < c->len && n <= c->len - (off - c->off)) {
			if (got)
				*got = c->len - (off - c->off);
			return sp->blob + c->at + (off - c->off);
		}
	}
	return NULL;
}

static int debug_heads(wg_sparse *sp);

void wg_sparse_read_all(wg_sparse *sp)
{
	free(sp->unused);
	sp->unused = NULL;
}

int wg_sparse_end_pass(wg_sparse *sp)
{
	if (sp->records.len) /* none: items is NULL, which qsort may not be given */
		qsort(sp->records.items, sp->records.len, sizeof(record), cmp_record);
	sp->walkers.len = sp->heads.len = sp->ranges.len = 0;
	return debug_heads(sp);
}

static int debug_heads(wg_sparse *sp)
{
	if (!sp->elf_ok)
		return WG_OK;
	bool w = sp->is64;
	uint64_t shoff = rd_n(sp, w ? 0x28 : 0x20, w ? 8 : 4);
	uint64_t shentsize = rd_n(sp, w ? 0x3a : 0x2e, 2), shnum = rd_n(sp, w ? 0x3c : 0x30, 2);
	uint64_t shstrndx = rd_n(sp, w ? 0x3e : 0x32, 2);
	if (!shoff || !shnum || shentsize != (w ? 64u : 40u) || shstrndx >= shnum ||
	    !kept_range(sp, shoff, shnum * shentsize))
		return WG_OK;
	uint64_t h = shoff + shstrndx * shentsize;
	uint64_t noff = rd_n(sp, h + (w ? 0x18 : 0x10), w ? 8 : 4);
	uint64_t nlen = rd_n(sp, h + (w ? 0x20 : 0x14), w ? 8 : 4);
	if (!kept_range(sp, noff, nlen))
		return WG_OK;
	range *dw = calloc((size_t)shnum, sizeof(*dw));
	if (!dw)
		return WG_ENOMEM;
	size_t n = 0;
	for (uint64_t i = 0; i < shnum; i++) {
		h = shoff + i * shentsize;
		uint64_t name = rd_n(sp, h, 4), type = rd_n(sp, h + 4, 4);
		uint64_t flags = rd_n(sp, h + 8, w ? 8 : 4);
		uint64_t off = rd_n(sp, h + (w ? 0x18 : 0x10), w ? 8 : 4);
		uint64_t size = rd_n(sp, h + (w ? 0x20 : 0x14), w ? 8 : 4);
		if (type != 1 /* SHT_PROGBITS */ || (flags & 2 /* SHF_ALLOC */) || !size ||
		    off >= sp->len || size > sp->len - off || name >= nlen ||
		    !memchr(sp->img + noff + name, '\0', (size_t)(nlen - name)) ||
		    !dwarf_name((const char *)sp->img + noff + name))
			continue;
		dw[n++] = (range){off, off + size, off, 0};
	}
	qsort(dw, n, sizeof(*dw), cmp_range);
	if (n && !(sp->unused = calloc((size_t)((sp->npages + 63) / 64), sizeof(uint64_t)))) {
		free(dw);
		return WG_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		/* The pages of this section's head, each wholly inside the DWARF sections. */
		uint64_t head_end = dw[i].lo + (dw[i].hi - dw[i].lo < 64 ? dw[i].hi - dw[i].lo : 64);
		for (uint64_t p = dw[i].lo / PG; p <= (head_end - 1) / PG; p++) {
			uint64_t lo = p * PG, hi = lo + PG < sp->len ? lo + PG : sp->len, at = lo;
			for (size_t j = 0; j < n && at < hi; j++)
				if (dw[j].lo <= at && dw[j].hi > at)
					at = dw[j].hi;
			if (at >= hi)
				sp->unused[p / 64] |= 1ull << (p % 64);
		}
	}
	free(dw);
	return WG_OK;
}

/* After a run of the readers: the pages they read that were not kept. */
int64_t wg_sparse_missing(wg_sparse *sp, bool all)
{
	sp->miss.len = 0;
	sp->miss_end = 0;
	unsigned char *vec = NULL;
	if (!all) {
		if (!(vec = malloc((size_t)sp->npages)))
			return WG_ENOMEM;
		if (mincore(sp->img, (size_t)sp->mapped, vec) < 0)
			all = true; /* cannot say which: fetch every page not kept */
	}
	uint64_t bytes = 0;
	for (uint64_t p = 0; p < sp->npages; p++) {
		if (is_kept(sp, p) || (!all && !(vec[p] & 1)) ||
		    (!all && sp->unused && sp->unused[p / 64] >> (p % 64) & 1))
			continue;
		uint64_t lo = p * PG, hi = lo + PG < sp->len ? lo + PG : sp->len;
		range *last = sp->miss.len ? wg_vec_at(&sp->miss, sp->miss.len - 1) : NULL;
		if (last && last->hi == lo) {
			last->hi = hi;
		} else {
			range *r = wg_vec_push(&sp->miss);
			if (!r) {
				free(vec);
				return WG_ENOMEM;
			}
			*r = (range){lo, hi, lo, 0};
		}
		bytes += hi - lo;
		sp->miss_end = hi;
	}
	free(vec);
	return (int64_t)bytes;
}

int wg_sparse_refill(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	for (size_t i = 0; i < sp->miss.len; i++)
		copy_range(sp, wg_vec_at(&sp->miss, i), data, n, off);
	if (off + n >= sp->miss_end) {
		sp->st.refetched += sp->miss_end;
		return WG_SPARSE_DONE;
	}
	return WG_OK;
}

void wg_sparse_pass(wg_sparse *sp)
{
	sp->st.passes++;
}

void wg_sparse_stats_get(const wg_sparse *sp, wg_sparse_stats *out)
{
	*out = sp->st;
	out->kept = (sp->kept_pages * PG < sp->len ? sp->kept_pages * PG : sp->len) + sp->blob_len;
}

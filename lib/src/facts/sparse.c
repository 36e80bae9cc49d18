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

#include "facts/sparse_internal.h"

bool wg_sp_is_kept(const wg_sparse *sp, uint64_t page)
{
	return sp->kept[page / 64] >> (page % 64) & 1;
}

static void mark(wg_sparse *sp, uint64_t from, uint64_t to)
{
	/* The pages wholly in [from, to): from is a page start; the member's last page counts
	 * as whole when to is the member's end. */
	uint64_t p = from / PG, q = to == sp->len ? (to + PG - 1) / PG : to / PG;
	for (; p < q; p++)
		if (!wg_sp_is_kept(sp, p)) {
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
int wg_sp_keep(wg_sparse *sp, uint64_t lo, uint64_t hi, const uint8_t *data, size_t n,
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
int wg_sp_record(wg_sparse *sp, uint64_t lo, uint64_t n, const uint8_t *data, size_t dn,
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
	*out = sp;
	return wg_sp_keep(sp, 0, FRONT_MIN, NULL, 0, 0);
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
	return page < sp->npages && wg_sp_is_kept(sp, page);
}

const uint64_t *wg_sparse_fatbin_magics(const wg_sparse *sp, size_t *n)
{
	static const uint64_t none[1];
	*n = sp->magics.len;
	if (sp->magics_full)
		return NULL;
	return sp->magics.len ? (const uint64_t *)sp->magics.items : none; /* none found */
}

/* The first pass's ranges that were waiting for these bytes. */
void wg_sp_copy_pending(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
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
}

/* The bytes before the next block, as many as prev holds. */
void wg_sp_remember(wg_sparse *sp, const uint8_t *data, size_t n)
{
	if (n >= sizeof(sp->prev)) {
		memcpy(sp->prev, data + n - sizeof(sp->prev), sizeof(sp->prev));
		sp->prev_n = sizeof(sp->prev);
	} else {
		size_t keep_old = sp->prev_n + n > sizeof(sp->prev) ? sizeof(sp->prev) - n : sp->prev_n;
		memmove(sp->prev, sp->prev + sp->prev_n - keep_old, keep_old);
		memcpy(sp->prev + keep_old, data, n);
		sp->prev_n = keep_old + n;
	}
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

bool wg_sp_kept_range(const wg_sparse *sp, uint64_t off, uint64_t n)
{
	if (off > sp->len || n > sp->len - off)
		return false;
	for (uint64_t p = off / PG; n && p <= (off + n - 1) / PG; p++)
		if (!wg_sp_is_kept(sp, p))
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
	uint64_t shoff = wg_sp_rd(sp, w ? 0x28 : 0x20, w ? 8 : 4);
	uint64_t shentsize = wg_sp_rd(sp, w ? 0x3a : 0x2e, 2), shnum = wg_sp_rd(sp, w ? 0x3c : 0x30, 2);
	uint64_t shstrndx = wg_sp_rd(sp, w ? 0x3e : 0x32, 2);
	if (!shoff || !shnum || shentsize != (w ? 64u : 40u) || shstrndx >= shnum ||
	    !wg_sp_kept_range(sp, shoff, shnum * shentsize))
		return WG_OK;
	uint64_t h = shoff + shstrndx * shentsize;
	uint64_t noff = wg_sp_rd(sp, h + (w ? 0x18 : 0x10), w ? 8 : 4);
	uint64_t nlen = wg_sp_rd(sp, h + (w ? 0x20 : 0x14), w ? 8 : 4);
	if (!wg_sp_kept_range(sp, noff, nlen))
		return WG_OK;
	range *dw = calloc((size_t)shnum, sizeof(*dw));
	if (!dw)
		return WG_ENOMEM;
	size_t n = 0;
	for (uint64_t i = 0; i < shnum; i++) {
		h = shoff + i * shentsize;
		uint64_t name = wg_sp_rd(sp, h, 4), type = wg_sp_rd(sp, h + 4, 4);
		uint64_t flags = wg_sp_rd(sp, h + 8, w ? 8 : 4);
		uint64_t off = wg_sp_rd(sp, h + (w ? 0x18 : 0x10), w ? 8 : 4);
		uint64_t size = wg_sp_rd(sp, h + (w ? 0x20 : 0x14), w ? 8 : 4);
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
		if (wg_sp_is_kept(sp, p) || (!all && !(vec[p] & 1)) ||
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

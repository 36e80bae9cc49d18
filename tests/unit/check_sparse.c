/*
 * An ELF member read sparsely (facts/sparse.c, issue 30), on a synthetic ELF64 image written
 * here byte by byte: a first PT_LOAD at 0, a PT_DYNAMIC far ahead, section headers at the end
 * (with .shstrtab in the tail kept before them and .debug_* sections in the middle), CUDA
 * fatbin containers at 8-aligned offsets (one straddling a 64 KiB boundary, with entries whose
 * headers lie far apart and a PTX head), a __fatBinC_Wrapper_t, and decoys: the magic at an
 * unaligned offset and a container header of another version.
 *  - wg_sparse_take in blocks of 1, 7, 8, 4095, 4096, 4097, 65539 bytes and whole: every kept
 *    page holds the source's bytes, every other page is zeros, the bytes the readers need are
 *    kept (in pages or as records, wg_sparse_at), most pages are not, and the magics listed are exactly the 8-aligned offsets of the magic;
 *  - a page read that was not kept is found by wg_sparse_missing and fetched by a refill pass;
 *  - wg_sparse_end_pass: a DWARF section's head page read is not fetched, unless the page
 *    is shared with a section that is not DWARF.
 * Each block is handed over in a buffer of exactly its size, so that a read past it is
 * AddressSanitizer's to see.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/facts.h"
#include "test_util.h"

#define PG 4096u
#define SHNUM 6u
#define SHOFF 0x2F04D0u
#define IMG_LEN (SHOFF + SHNUM * 64u) /* 0x2F0650: the last page is partial */
#define DYN_OFF 0x180000u
#define DYN_SIZE 0x200u
#define MAGIC64 0x00100001BA55ED50ull
/* The sections: .debug_info wholly DWARF for three pages, .debug_str sharing its page with
 * .comment, .shstrtab in the tail kept before the section headers. */
#define DBG_INFO 0x200000u
#define DBG_INFO_SIZE 0x3000u
#define DBG_STR 0x203000u
#define DBG_STR_SIZE 0x800u
#define COMMENT 0x203800u
#define SHSTRTAB (SHOFF - 0x100u)

typedef struct {
	uint8_t *d;
	uint64_t need[64][2]; /* byte ranges the readers need: their pages must be kept */
	unsigned nneed;
	uint64_t magics[8]; /* where the container magics were put */
	unsigned nmagics;
} image;

static void put16(uint8_t *p, uint64_t v) { for (int i = 0; i < 2; i++) p[i] = (uint8_t)(v >> 8 * i); }
static void put32(uint8_t *p, uint64_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i); }

static void need(image *im, uint64_t lo, uint64_t hi)
{
	ck_assert_uint_lt(im->nneed, 64);
	im->need[im->nneed][0] = lo;
	im->need[im->nneed++][1] = hi;
}

typedef struct {
	unsigned kind;
	uint64_t psize;
} entry;

/* A container at c (8-aligned) with its entries, then pad zero bytes inside its size.
 * Returns its end. */
static uint64_t container(image *im, uint64_t c, const entry *e, size_t n, uint64_t pad)
{
	uint64_t fat = pad;
	for (size_t i = 0; i < n; i++)
		fat += 64 + e[i].psize;
	put32(im->d + c, 0xBA55ED50u);
	put16(im->d + c + 4, 1);
	put16(im->d + c + 6, 16);
	put64(im->d + c + 8, fat);
	im->magics[im->nmagics++] = c;
	need(im, c, c + 16);
	uint64_t at = c + 16;
	for (size_t i = 0; i < n; i++) {
		uint8_t *h = im->d + at;
		put16(h, e[i].kind);
		put16(h + 2, 0x0101);
		put32(h + 4, 64);
		put64(h + 8, e[i].psize);
		put32(h + 16, 0); /* not compressed */
		put32(h + 0x1c, e[i].kind == 2 ? 90 : 80); /* sm_90 SASS, compute_80 PTX */
		put64(h + 0x28, 0x1); /* 64-bit, nothing compressed */
		need(im, at, at + 64);
		/* The payload: bytes that are not zero, so that a page kept wrong shows. */
		for (uint64_t j = 0; j < e[i].psize; j++)
			h[64 + j] = e[i].kind == 1 ? (uint8_t)(" .version 8.0\n"[j % 14])
						   : (uint8_t)(0x11 + j * 7);
		if (e[i].kind == 1) /* the head of the PTX text, where .version and .target are */
			need(im, at + 64, at + 64 + (e[i].psize < 256 ? e[i].psize : 256));
		at += 64 + e[i].psize;
	}
	if (pad)
		need(im, at, at + pad);
	return at + pad;
}

static void section(image *im, unsigned i, unsigned name, unsigned type, uint64_t flags,
		    uint64_t off, uint64_t size)
{
	uint8_t *h = im->d + SHOFF + i * 64u;
	put32(h, name);
	put32(h + 4, type);
	put64(h + 8, flags);
	put64(h + 0x18, off);
	put64(h + 0x20, size);
	put64(h + 0x30, 1);
}

static void build(image *im)
{
	memset(im, 0, sizeof(*im));
	im->d = calloc(1, IMG_LEN);
	ck_assert_ptr_nonnull(im->d);
	uint8_t *d = im->d;
	/* Filler that is not zero everywhere nothing else is written. */
	for (uint64_t i = 0; i < IMG_LEN; i++)
		d[i] = (uint8_t)(i * 131 + (i >> 12));
	/* The ELF header. */
	memset(d, 0, 64);
	memcpy(d, "\177ELF", 4);
	d[4] = 2; /* ELFCLASS64 */
	d[5] = 1; /* little-endian */
	d[6] = 1;
	put16(d + 0x10, 3);  /* ET_DYN */
	put16(d + 0x12, 62); /* x86-64 */
	put32(d + 0x14, 1);
	put64(d + 0x20, 64);    /* e_phoff */
	put64(d + 0x28, SHOFF); /* e_shoff */
	put16(d + 0x34, 64);
	put16(d + 0x36, 56); /* e_phentsize */
	put16(d + 0x38, 3);  /* e_phnum */
	put16(d + 0x3a, 64); /* e_shentsize */
	put16(d + 0x3c, SHNUM);
	put16(d + 0x3e, 5); /* e_shstrndx */
	need(im, 0, 64 + 3 * 56);
	/* Program headers: PT_LOAD [0, 0x4000), PT_DYNAMIC far ahead, PT_LOAD at 0x2C0000. */
	uint8_t *ph = d + 64;
	memset(ph, 0, 3 * 56);
	put32(ph, 1);
	put32(ph + 4, 5);
	put64(ph + 32, 0x4000);
	put64(ph + 40, 0x4000);
	need(im, 0, 0x4000);
	ph += 56;
	put32(ph, 2); /* PT_DYNAMIC */
	put64(ph + 8, DYN_OFF);
	put64(ph + 32, DYN_SIZE);
	need(im, DYN_OFF, DYN_OFF + DYN_SIZE);
	ph += 56;
	put32(ph, 1); /* a large PT_LOAD after the first: not kept whole */
	put64(ph + 8, 0x100000);
	put64(ph + 32, 0x1C0000);
	/* Containers: one in the front; one whose header straddles 0x110000 (a 64 KiB and page
	 * boundary) with entry headers pages apart and a PTX head; one with zero padding. */
	container(im, 0x8000, (entry[]){{2, 0x100}, {2, 0x80}}, 2, 0);
	container(im, 0x10FFF8, (entry[]){{2, 0x5000}, {1, 0x3000}, {2, 0x20}}, 3, 0);
	container(im, 0x250000, (entry[]){{2, 0x100}}, 1, 16);
	/* Decoys: the whole magic word at an unaligned offset, a header of version 2. */
	put64(d + 0x260004, MAGIC64);
	put32(d + 0x260010, 0xBA55ED50u);
	put16(d + 0x260014, 2);
	put16(d + 0x260016, 16);
	/* A __fatBinC_Wrapper_t: magic, version, pointer to the container, 0. */
	put32(d + 0x270000, 0x466243B1u);
	put32(d + 0x270004, 1);
	put64(d + 0x270008, 0x250000);
	put64(d + 0x270010, 0);
	need(im, 0x270000, 0x270018);
	/* Sections and their names. */
	static const char names[] = "\0.text\0.debug_info\0.debug_str\0.comment\0.shstrtab";
	memcpy(d + SHSTRTAB, names, sizeof(names));
	memset(d + SHOFF, 0, SHNUM * 64u);
	section(im, 1, 1, 1, 6, 0x1000, 0x2000);                   /* .text */
	section(im, 2, 7, 1, 0, DBG_INFO, DBG_INFO_SIZE);          /* .debug_info */
	section(im, 3, 19, 1, 0, DBG_STR, DBG_STR_SIZE);           /* .debug_str */
	section(im, 4, 30, 1, 0x30, COMMENT, 0x100);               /* .comment */
	section(im, 5, 39, 3, 0, SHSTRTAB, sizeof(names));        /* .shstrtab */
	need(im, SHSTRTAB, IMG_LEN);
	ck_assert_uint_eq(im->nmagics, 3);
}

/* The first pass over src in blocks of bs bytes (0: whole), each in a buffer of its size. */
static wg_sparse *first_pass(const image *im, size_t bs)
{
	wg_sparse *sp = NULL;
	ck_assert_int_eq(wg_sparse_new(&sp, IMG_LEN), WG_OK);
	if (!bs)
		bs = IMG_LEN;
	uint8_t *buf = malloc(bs);
	ck_assert_ptr_nonnull(buf);
	for (uint64_t off = 0; off < IMG_LEN; off += bs) {
		size_t n = IMG_LEN - off < bs ? (size_t)(IMG_LEN - off) : bs;
		memcpy(buf, im->d + off, n);
		ck_assert_int_eq(wg_sparse_take(sp, buf, n, off), WG_OK);
		memset(buf, 0xA5, n); /* bytes the reader should have copied by now */
	}
	free(buf);
	ck_assert_int_eq(wg_sparse_end_pass(sp), WG_OK);
	return sp;
}

static const size_t blocks[] = {1, 7, 8, 4095, 4096, 4097, 65536 + 3, 0};
#define NPAGES ((IMG_LEN + PG - 1) / PG)

static uint64_t page_len(uint64_t p)
{
	return (p + 1) * PG <= IMG_LEN ? PG : IMG_LEN - p * PG;
}

START_TEST(test_take_blocks)
{
	image im;
	build(&im);
	size_t bs = blocks[_i];
	wg_sparse *sp = first_pass(&im, bs);
	const uint8_t *img = wg_sparse_image(sp);
	uint64_t kept = 0;
	static const uint8_t zero[PG];
	for (uint64_t p = 0; p < NPAGES; p++) {
		uint64_t n = page_len(p);
		if (wg_sparse_page_kept(sp, p)) {
			kept++;
			ck_assert_msg(!memcmp(img + p * PG, im.d + p * PG, n),
				      "blocks of %zu: page 0x%llx is kept but differs from the member", bs,
				      (unsigned long long)p);
		} else {
			ck_assert_msg(!memcmp(img + p * PG, zero, n),
				      "blocks of %zu: page 0x%llx is not kept but is not zeros", bs,
				      (unsigned long long)p);
		}
	}
	wg_sparse_stats st;
	wg_sparse_stats_get(sp, &st);
	ck_assert_uint_eq(st.size, IMG_LEN);
	uint64_t kept_bytes = kept * PG < IMG_LEN ? kept * PG : IMG_LEN;
	/* st.kept: the kept pages and the records' bytes (a few hundred here) */
	ck_assert_uint_ge(st.kept, kept_bytes);
	ck_assert_uint_lt(st.kept - kept_bytes, 16384);
	ck_assert_uint_eq(st.passes, 0);
	/* Sparse: a third of this member is kept (1 MiB of front, the tail, a few pages). */
	ck_assert_msg(st.kept < IMG_LEN / 2, "blocks of %zu: %llu of %u bytes kept", bs,
		      (unsigned long long)st.kept, IMG_LEN);
	ck_assert(!wg_sparse_page_kept(sp, 0x140)); /* inside the second PT_LOAD: no reader's */
	ck_assert(!wg_sparse_page_kept(sp, DBG_INFO / PG + 1));
	/* What the readers read is kept, whatever the blocks: in kept pages, or as a record of
	 * its own bytes (fatbin headers and PTX heads, wg_sparse_at) that are the member's. */
	for (unsigned i = 0; i < im.nneed; i++) {
		uint64_t lo = im.need[i][0], hi = im.need[i][1];
		bool pages = true;
		for (uint64_t p = lo / PG; p <= (hi - 1) / PG; p++)
			pages &= wg_sparse_page_kept(sp, p);
		const uint8_t *rec = pages ? NULL : wg_sparse_at(sp, lo, hi - lo, NULL);
		ck_assert_msg(pages || rec, "blocks of %zu: [0x%llx, 0x%llx) not kept", bs,
			      (unsigned long long)lo, (unsigned long long)hi);
		ck_assert_msg(pages || !memcmp(rec, im.d + lo, hi - lo),
			      "blocks of %zu: the record of [0x%llx, 0x%llx) differs from the member",
			      bs, (unsigned long long)lo, (unsigned long long)hi);
	}
	/* The magics: exactly the 8-aligned offsets of the word, in order. */
	uint64_t want[16];
	size_t nwant = 0;
	for (uint64_t at = 0; at + 8 <= IMG_LEN; at += 8) {
		uint64_t v = 0;
		for (int k = 7; k >= 0; k--)
			v = v << 8 | im.d[at + (unsigned)k];
		if (v == MAGIC64) {
			ck_assert_uint_lt(nwant, 16);
			want[nwant++] = at;
		}
	}
	ck_assert_uint_eq(nwant, im.nmagics);
	for (size_t i = 0; i < nwant; i++)
		ck_assert_uint_eq(want[i], im.magics[i]);
	size_t n = 99;
	const uint64_t *got = wg_sparse_fatbin_magics(sp, &n);
	ck_assert_ptr_nonnull(got);
	ck_assert_msg(n == nwant, "blocks of %zu: %zu magics listed, %zu in the member", bs, n,
		      nwant);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "blocks of %zu: magic %zu at 0x%llx, not 0x%llx", bs,
			      i, (unsigned long long)got[i], (unsigned long long)want[i]);
	wg_sparse_free(sp);
	free(im.d);
}
END_TEST

/* A refill pass over src in blocks of bs until it has everything it missed. */
static void refill(wg_sparse *sp, const image *im, size_t bs)
{
	wg_sparse_pass(sp);
	uint8_t *buf = malloc(bs);
	ck_assert_ptr_nonnull(buf);
	int rc = WG_OK;
	for (uint64_t off = 0; off < IMG_LEN && rc != WG_SPARSE_DONE; off += bs) {
		size_t n = IMG_LEN - off < bs ? (size_t)(IMG_LEN - off) : bs;
		memcpy(buf, im->d + off, n);
		rc = wg_sparse_refill(sp, buf, n, off);
		ck_assert(rc == WG_OK || rc == WG_SPARSE_DONE);
	}
	ck_assert_int_eq(rc, WG_SPARSE_DONE);
	free(buf);
}

static uint8_t touch(const wg_sparse *sp, uint64_t at)
{
	return ((const volatile uint8_t *)wg_sparse_image(sp))[at];
}

START_TEST(test_miss_and_refill)
{
	image im;
	build(&im);
	size_t bs = blocks[_i] ? blocks[_i] : IMG_LEN;
	if (bs == 1)
		bs = 3; /* the refill's blocks need not be the first pass's */
	wg_sparse *sp = first_pass(&im, blocks[_i]);
	/* Nothing read yet: nothing missing. */
	ck_assert_int_eq(wg_sparse_missing(sp, false), 0);
	/* Every page not kept, without reading any. */
	uint64_t not_kept = 0;
	for (uint64_t p = 0; p < NPAGES; p++)
		if (!wg_sparse_page_kept(sp, p))
			not_kept += page_len(p);
	ck_assert_uint_gt(not_kept, 0);
	/* (st.kept counts whole pages: the member's last, partial page as 4096 bytes) */
	wg_sparse_stats st;
	wg_sparse_stats_get(sp, &st);
	uint64_t kept0 = st.kept;
	ck_assert_int_eq(wg_sparse_missing(sp, true), (int64_t)not_kept);
	/* A reader reads a byte of a page that was not kept: it reads zero, and the page is found. */
	const uint64_t page = 0x150, at = page * PG + 1234;
	ck_assert(!wg_sparse_page_kept(sp, page));
	ck_assert_uint_eq(touch(sp, at), 0);
	ck_assert_uint_ne(im.d[at], 0);
	ck_assert_int_eq(wg_sparse_missing(sp, false), PG);
	refill(sp, &im, bs);
	ck_assert(wg_sparse_page_kept(sp, page));
	ck_assert_uint_eq(touch(sp, at), im.d[at]);
	ck_assert(!memcmp(wg_sparse_image(sp) + page * PG, im.d + page * PG, PG));
	wg_sparse_stats_get(sp, &st);
	ck_assert_uint_eq(st.passes, 1);
	ck_assert_uint_eq(st.refetched, (page + 1) * PG); /* the pass stopped after the page */
	ck_assert_uint_eq(st.kept, kept0 + PG);
	ck_assert(!wg_sparse_page_kept(sp, page + 1));
	/* The next run reads the same: nothing is missing. */
	ck_assert_int_eq(wg_sparse_missing(sp, false), 0);
	/* Two more pages read, apart (the last byte of one): both found, both fetched. */
	ck_assert_uint_eq(touch(sp, 0x160 * PG), 0);
	ck_assert_uint_eq(touch(sp, 0x1A0 * PG + PG - 1), 0);
	ck_assert_int_eq(wg_sparse_missing(sp, false), 2 * PG);
	refill(sp, &im, bs);
	ck_assert_uint_eq(touch(sp, 0x160 * PG), im.d[0x160 * PG]);
	ck_assert_uint_eq(touch(sp, 0x1A0 * PG + PG - 1), im.d[0x1A0 * PG + PG - 1]);
	ck_assert_int_eq(wg_sparse_missing(sp, false), 0);
	/* all: every page still not kept, then fetched: the whole member. */
	ck_assert_int_eq(wg_sparse_missing(sp, true), (int64_t)(not_kept - 3 * PG));
	refill(sp, &im, bs);
	ck_assert(!memcmp(wg_sparse_image(sp), im.d, IMG_LEN));
	ck_assert_int_eq(wg_sparse_missing(sp, true), 0);
	wg_sparse_stats_get(sp, &st);
	ck_assert_uint_eq(st.passes, 3);
	ck_assert_uint_ge(st.kept, IMG_LEN);
	wg_sparse_free(sp);
	free(im.d);
}
END_TEST

START_TEST(test_debug_heads)
{
	image im;
	build(&im);
	/* .debug_info as it is, then renamed .xebug_info: no longer DWARF, its head is fetched. */
	for (int dwarf = 1; dwarf >= 0; dwarf--) {
		im.d[SHSTRTAB + 7 + 1] = dwarf ? 'd' : 'x';
		wg_sparse *sp = first_pass(&im, 65536 + 3); /* wg_sparse_end_pass: the heads */
		ck_assert(wg_sparse_page_kept(sp, SHSTRTAB / PG)); /* the names are in the tail */
		for (uint64_t p = DBG_INFO / PG; p <= COMMENT / PG; p++)
			ck_assert(!wg_sparse_page_kept(sp, p));
		/* libbfd reads the head of .debug_info: a page wholly inside it. */
		touch(sp, DBG_INFO + 12);
		ck_assert_int_eq(wg_sparse_missing(sp, false), dwarf ? 0 : PG);
		/* The head of .debug_str: its page holds .comment too, which a reader may need. */
		touch(sp, DBG_STR + 12);
		ck_assert_int_eq(wg_sparse_missing(sp, false), dwarf ? PG : 2 * PG);
		/* A page of .debug_info that is not its head: someone read it for its bytes. */
		touch(sp, DBG_INFO + PG + 8);
		ck_assert_int_eq(wg_sparse_missing(sp, false), dwarf ? 2 * PG : 3 * PG);
		/* all: every page not kept, the heads too. */
		uint64_t not_kept = 0;
		for (uint64_t p = 0; p < NPAGES; p++)
			if (!wg_sparse_page_kept(sp, p))
				not_kept += page_len(p);
		ck_assert_int_eq(wg_sparse_missing(sp, true), (int64_t)not_kept);
		wg_sparse_free(sp);
	}
	/* Without .shstrtab in what is kept, nothing is left out. */
	im.d[SHSTRTAB + 7 + 1] = 'd';
	put64(im.d + SHOFF + 5 * 64 + 0x18, 0x150000); /* .shstrtab moved to a page not kept */
	memcpy(im.d + 0x150000, im.d + SHSTRTAB, 0x40);
	wg_sparse *sp = first_pass(&im, 4096);
	ck_assert(!wg_sparse_page_kept(sp, 0x150));
	touch(sp, DBG_INFO + 12);
	ck_assert_int_eq(wg_sparse_missing(sp, false), PG);
	wg_sparse_free(sp);
	free(im.d);
}
END_TEST

Suite *suite_sparse(void)
{
	Suite *s = suite_create("sparse");
	TCase *tc = tcase_create("sparse");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_take_blocks, 0, (int)WG_ARRAY_LEN(blocks));
	tcase_add_loop_test(tc, test_miss_and_refill, 0, (int)WG_ARRAY_LEN(blocks));
	tcase_add_test(tc, test_debug_heads);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * An ELF member read sparsely (facts/sparse.c, issue 30) against the same bytes read whole.
 * Input: two bytes that choose the block size (below 8: 1, 7, 8, 4095, 4096, 4097, 65539 or
 * the whole member; else that many bytes), then the object without its magic (prepended, as
 * fuzz_elf does). The member is read as facts/wheel_stream.c reads a streamed one: a first
 * pass of wg_sparse_take over the blocks (each in a buffer of its size), wg_sparse_end_pass,
 * then runs of the readers on the image, each followed by wg_sparse_missing and a refill pass
 * while a run read a page that was not kept, every page after the fourth run. The harness is
 * built with its own copy of sparse.c made small (WG_SPARSE_SMALL: a front of one page, a tail
 * of 256 bytes, small segments of one page), so that on inputs of a few pages most pages are
 * not kept and runs miss them. Aborts when the facts differ from wg_scan_add_elf's on the whole
 * buffer (the scan's JSON with WG_JSON_FACTS, byte for byte), when a kept page differs from
 * the member, when the magics listed are not the 8-aligned offsets of the container magic,
 * or when the runs do not end. WG_FUZZ_SPARSE_SHOW=1 prints, per input, the runs, the passes
 * again and the bytes kept.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>

#include "facts/facts.h"
#include "fuzz_common.h"

#define MAX_RUNS 4 /* wheel_stream.c's */
#define NAME "fuzz.cpython-312-x86_64-linux-gnu.so"

static void fail(const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz_sparse: %s\n", what);
	if (a && b) {
		size_t i = 0;
		while (a[i] && a[i] == b[i])
			i++;
		fprintf(stderr, "first difference at byte %zu\nsparse: %.300s\nwhole:  %.300s\n", i,
			a + (i > 100 ? i - 100 : 0), b + (i > 100 ? i - 100 : 0));
	}
	abort();
}

/* One pass over the member in blocks of bs: the first (take) or a refill. */
static int pass(wg_sparse *sp, const uint8_t *m, size_t len, size_t bs, bool refill)
{
	uint8_t *buf = malloc(bs);
	if (!buf)
		return WG_ENOMEM;
	int rc = WG_OK;
	for (size_t off = 0; off < len; off += bs) {
		size_t n = len - off < bs ? len - off : bs;
		memcpy(buf, m + off, n);
		rc = refill ? wg_sparse_refill(sp, buf, n, off) : wg_sparse_take(sp, buf, n, off);
		if (rc != WG_OK)
			break;
	}
	free(buf);
	if (refill && rc != WG_SPARSE_DONE)
		fail("a refill pass reached the end without what it was missing", NULL, NULL);
	return rc == WG_SPARSE_DONE ? WG_OK : rc;
}

static char *facts(wg_scan *scan, int rc)
{
	char *doc = NULL;
	if (wg_scan_to_json(&doc, scan, WG_JSON_FACTS) < 0)
		return NULL;
	size_t n = strlen(doc);
	char *out = malloc(n + 16);
	if (out)
		snprintf(out, n + 16, "%d %s", rc, doc);
	wg_free(doc);
	return out;
}

static void check_image(const wg_sparse *sp, const uint8_t *m, size_t len)
{
	const uint8_t *img = wg_sparse_image(sp);
	for (uint64_t p = 0; p * 4096 < len; p++) {
		size_t n = len - p * 4096 < 4096 ? len - p * 4096 : 4096;
		if (wg_sparse_page_kept(sp, p) && memcmp(img + p * 4096, m + p * 4096, n))
			fail("a kept page differs from the member", NULL, NULL);
	}
	size_t nmagics = 0, k = 0;
	const uint64_t *at = wg_sparse_fatbin_magics(sp, &nmagics);
	if (!at)
		return; /* more than it keeps: fatbin.c scans the image */
	for (size_t p = 0; p + 8 <= len; p += 8) {
		uint64_t v;
		memcpy(&v, m + p, 8);
		if (v != 0x00100001BA55ED50ull)
			continue;
		if (k >= nmagics || at[k] != p)
			fail("a container magic is not listed where it is", NULL, NULL);
		k++;
	}
	if (k != nmagics)
		fail("a container magic is listed where there is none", NULL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t table[] = {1, 7, 8, 4095, 4096, 4097, 65539, 0};
	fz_init();
	if (size < 2)
		return 0;
	unsigned v = data[0] | (unsigned)data[1] << 8;
	size_t len = size - 2 + 4;
	size_t bs = v < 8 ? table[v] : v;
	if (!bs)
		bs = len;
	uint8_t *m = malloc(len);
	if (!m)
		return 0;
	memcpy(m, "\x7f" "ELF", 4);
	memcpy(m + 4, data + 2, size - 2);

	wg_scanner *s = fz_sc;
	wg_scan *whole = wg_scan_new(WG_SCAN_OBJECT, NAME, fz_ctx);
	wg_sparse *sp = NULL;
	if (!whole || wg_sparse_new(&sp, len) < 0 || pass(sp, m, len, bs, false) < 0 ||
	    wg_sparse_end_pass(sp) < 0)
		goto out;
	int rc_whole = wg_scan_add_elf(whole, s, NAME, NAME, m, len);
	char *want = facts(whole, rc_whole);
	if (!want)
		goto out;
	for (int run = 1;; run++) {
		if (run > MAX_RUNS + 1)
			fail("a run still misses pages after every page was fetched", NULL, NULL);
		wg_scan *sub = wg_scan_new(WG_SCAN_OBJECT, NAME, fz_ctx);
		if (!sub)
			break;
		int rc = wg_scan_add_elf_sparse(sub, s, NAME, NAME, sp, len);
		int64_t missing = rc == WG_ENOMEM ? 0 : wg_sparse_missing(sp, false);
		if (missing > 0 && run >= MAX_RUNS)
			missing = wg_sparse_missing(sp, true);
		if (missing < 0) {
			wg_scan_free(sub);
			break;
		}
		if (missing == 0) {
			char *got = rc == WG_ENOMEM ? NULL : facts(sub, rc);
			if (got && strcmp(got, want))
				fail("the facts read sparsely differ from those read whole", got, want);
			free(got);
			wg_scan_free(sub);
			check_image(sp, m, len);
			if (getenv("WG_FUZZ_SPARSE_SHOW")) {
				wg_sparse_stats st;
				wg_sparse_stats_get(sp, &st);
				fprintf(stderr, "fuzz_sparse: %zu bytes in blocks of %zu: %d runs, %u "
					"passes again (%llu bytes), %llu bytes kept\n", len, bs, run, st.passes,
					(unsigned long long)st.refetched, (unsigned long long)st.kept);
			}
			break;
		}
		wg_scan_free(sub);
		wg_sparse_pass(sp);
		if (pass(sp, m, len, bs, true) < 0)
			break;
	}
	free(want);
out:
	wg_sparse_free(sp);
	wg_scan_free(whole);
	free(m);
	return 0;
}

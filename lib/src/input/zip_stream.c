/*
 * A zip archive's members streamed in constant memory: a stored member handed on in blocks
 * from its bytes in place, a deflated one inflated by ISA-L's igzip block by block into the
 * worker's buffer (1 MiB by default), reused from member to member. CRC-32 (ISA-L's folded
 * CRC) and SHA-256 read each block while it is in the cache; at the end the size and CRC are
 * checked against the central directory. Output is bounded by the declared size (the inflate
 * is given room for one byte past it: a bomb stops there), work by the compressed bytes (a
 * call that consumes nothing and produces nothing ends the stream: never a hang). Like the
 * views of zip_read.c, no libzip state is touched: workers stream members in parallel.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ZIP /* wg_seterr: what fails here */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

#include "input/zip_internal.h"

/* The compressed bytes are handed to ISA-L in pieces (it counts in 32 bits); the pages of a
 * piece it has consumed leave the process (a mapped archive of 760 MB is never all held). */
#define IN_PIECE (8u << 20)

struct wg_zstream {
	uint8_t *buf;
	size_t block;
	wg_sha256 *sha;
	struct inflate_state st; /* about 40 KB: kept, not made per member */
};

wg_zstream *wg_zstream_new(size_t block)
{
	if (!block)
		block = WG_ZSTREAM_BLOCK;
	if (block > UINT32_MAX)
		block = UINT32_MAX; /* ISA-L's avail_out */
	wg_zstream *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->block = block;
	if (!(s->buf = malloc(block)) || !(s->sha = wg_sha256_new())) {
		wg_zstream_free(s);
		return NULL;
	}
	return s;
}

void wg_zstream_free(wg_zstream *s)
{
	if (!s)
		return;
	free(s->buf);
	if (s->sha)
		wg_sha256_free(s->sha);
	free(s);
}

size_t wg_zstream_block(const wg_zstream *s)
{
	return s->block;
}

size_t wg_span_take(uint8_t *dst, uint64_t from, uint64_t len, const uint8_t *data, size_t n,
		    uint64_t off)
{
	/* [lo, hi): the overlap of the block with the range, in member offsets */
	uint64_t end = off + n, to = from + len < from ? UINT64_MAX : from + len;
	uint64_t lo = off > from ? off : from, hi = end < to ? end : to;
	if (lo >= hi)
		return 0;
	memcpy(dst + (lo - from), data + (lo - off), (size_t)(hi - lo));
	return (size_t)(hi - lo);
}

/* One block on: CRC, hash, the caller. */
static int pass(wg_zstream *s, const uint8_t *p, size_t n, uint64_t off, uint32_t *crc,
		wg_block_cb cb, void *payload)
{
	*crc = crc32_gzip_refl(*crc, p, n);
	wg_sha256_update(s->sha, p, n);
	return cb ? cb(p, n, off, payload) : WG_OK;
}

/* Drops the pages of the mapping in [from, to) of member zm's data, widened down by a page
 * (the one a piece before left) but never into a neighbour's: it keeps its pages, and one
 * dropped is read again from the page cache. */
static void drop(wg_zip *z, const zmember *zm, uint64_t from, uint64_t to)
{
	if (!z->mapped)
		return;
	from += zm->off;
	to += zm->off;
	from = from > zm->off + 4095 ? from - 4095 : zm->off;
	from = (from + 4095) & ~(uint64_t)4095;
	to &= ~(uint64_t)4095;
	if (to > from)
		madvise((void *)(uintptr_t)(z->src.base + from), (size_t)(to - from), MADV_DONTNEED);
}

static int longer(wg_zip *z, const char *name, uint64_t declared, wg_err *err)
{
	return wg_seterr(err, WG_EFORMAT, "%s: %s: member data is longer than the %llu bytes its "
			 "directory entry declares", z->name, name, (unsigned long long)declared);
}

static int stored(wg_zip *z, const zmember *zm, const char *name, uint64_t declared,
		  wg_zstream *s, wg_block_cb cb, void *payload, uint32_t *crc, uint64_t *got,
		  wg_err *err)
{
	if (zm->csize > declared)
		return longer(z, name, declared, err);
	const uint8_t *in = z->src.base + zm->off;
	uint64_t released = 0;
	for (uint64_t at = 0; at < zm->csize;) {
		size_t n = zm->csize - at < s->block ? (size_t)(zm->csize - at) : s->block;
		int rc = pass(s, in + at, n, at, crc, cb, payload);
		if (rc != WG_OK)
			return rc;
		at += n;
		if (at - released >= IN_PIECE) {
			drop(z, zm, released, at);
			released = at;
		}
	}
	*got = zm->csize;
	return WG_OK;
}

static int inflated(wg_zip *z, const zmember *zm, const char *name, uint64_t declared,
		    wg_zstream *s, wg_block_cb cb, void *payload, uint32_t *crc, uint64_t *got,
		    wg_err *err)
{
	struct inflate_state *st = &s->st;
	isal_inflate_init(st);
	st->crc_flag = ISAL_DEFLATE; /* raw deflate: the CRC is ours, over what is handed on */
	/* ISA-L reads the input and never writes it. */
	uint8_t *in = (uint8_t *)(uintptr_t)(z->src.base + zm->off);
	uint64_t in_left = zm->csize, total = 0;
	for (;;) {
		if (!st->avail_in && in_left) {
			uint64_t used = zm->csize - in_left; /* the pieces before: consumed */
			if (used)
				drop(z, zm, used - IN_PIECE, used);
			uint32_t k = in_left < IN_PIECE ? (uint32_t)in_left : IN_PIECE;
			st->next_in = in;
			st->avail_in = k;
			in += k;
			in_left -= k;
		}
		/* Room for one byte past the declared size: a longer stream is caught there. */
		uint64_t left = declared - total;
		size_t room = left < s->block ? (size_t)left + 1 : s->block;
		uint64_t before = in_left + st->avail_in;
		st->next_out = s->buf;
		st->avail_out = (uint32_t)room;
		int r = isal_inflate(st);
		size_t n = room - st->avail_out;
		if (r < 0)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member data: not a valid "
					 "deflate stream", z->name, name);
		if (n > left)
			return longer(z, name, declared, err);
		if (n) {
			int rc = pass(s, s->buf, n, total, crc, cb, payload);
			if (rc != WG_OK)
				return rc;
			total += n;
		}
		if (st->block_state == ISAL_BLOCK_FINISH)
			break;
		if (!n && in_left + st->avail_in == before)
			/* Nothing consumed, nothing produced: the input ended inside the stream. */
			return wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member data: not a valid "
					 "deflate stream (it ends after %llu of the %llu bytes its "
					 "directory entry declares)", z->name, name,
					 (unsigned long long)total, (unsigned long long)declared);
	}
	*got = total;
	return WG_OK;
}

int wg_zip_stream(wg_zip *z, uint64_t i, uint64_t declared, wg_zstream *s, wg_block_cb cb,
		  void *payload, wg_zstream_sum *sum, wg_err *err)
{
	if (!z->src.base || i >= z->ninfo || !z->info[i].viewable)
		return 1;
	const zmember *zm = &z->info[i];
	if (zm->method == ZIP_CM_DEFLATE && !zm->csize)
		return 1; /* not a deflate stream at all: libzip says what it makes of it */
	const char *name = zm->name ? zm->name : "?";
	uint32_t crc = 0;
	uint64_t got = 0;
	wg_sha256_reset(s->sha);
	int rc = zm->method == ZIP_CM_STORE
			 ? stored(z, zm, name, declared, s, cb, payload, &crc, &got, err)
			 : inflated(z, zm, name, declared, s, cb, payload, &crc, &got, err);
	if (rc != WG_OK)
		return rc < 0 || rc == WG_ZSTREAM_STOP ? rc : WG_ZSTREAM_STOP;
	if (got != declared)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: member data ends after %llu of the %llu "
				 "bytes its directory entry declares", z->name, name,
				 (unsigned long long)got, (unsigned long long)declared);
	if (crc != zm->crc)
		/* as zip_read.c words it */
		return wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member data at byte %llu: CRC "
				 "error", z->name, name, (unsigned long long)got);
	if (sum) {
		sum->size = got;
		sum->crc = crc;
		wg_sha256_final(s->sha, sum->sha256);
	}
	return WG_OK;
}

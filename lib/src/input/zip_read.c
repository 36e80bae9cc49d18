/*
 * A zip archive's members read once: as views (a stored member in place in the mapping, a
 * deflated one inflated whole by libdeflate into the caller's buffer, its CRC-32 checked in
 * the pass that hands its blocks on; no libzip state, so from any thread), or streamed
 * through libzip and zlib, one at a time.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ZIP /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libdeflate.h>

#include "input/zip_internal.h"

#define CHUNK (256 * 1024)
/* A deflated member up to WHOLE_MAX bytes is inflated whole; a larger one only when it is an
 * ELF object, which the reader holds whole anyway. A larger data file streams (held whole, a
 * 4 GiB member would cost 4 GiB of memory for nothing). */
#define WHOLE_MAX (64u << 20)
/* The blocks a view is handed over in: CRC-32 and the caller's hash read each block while it
 * is in the cache. */
#define BLOCK (256u * 1024)
/* ---- views ---- */

void wg_zbuf_free(wg_zbuf *b)
{
	if (b->mapped)
		munmap(b->out, b->cap);
	else
		free(b->out);
	libdeflate_free_decompressor(b->dec);
	memset(b, 0, sizeof(*b));
}

/* b holds at least n bytes (its old content is not kept); false when out of memory. Large
 * buffers are mapped whole (and unmapped whole, never kept by malloc's arenas). Not with huge
 * pages: where they must be compacted first (THP defrag "madvise"), a 541 MB buffer took 1.4 s
 * to fault in instead of 0.4 s. */
static bool zbuf_grow(wg_zbuf *b, uint64_t n)
{
	if (n <= b->cap)
		return true;
	if (n > SIZE_MAX - 4096)
		return false;
	if (b->mapped)
		munmap(b->out, b->cap);
	else
		free(b->out);
	b->out = NULL;
	b->cap = 0;
	b->mapped = false;
	if (n >= (4u << 20)) {
		size_t len = ((size_t)n + 4095) & ~(size_t)4095;
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return false;
		b->out = p;
		b->cap = len;
		b->mapped = true;
		return true;
	}
	if (!(b->out = malloc((size_t)n)))
		return false;
	b->cap = (size_t)n;
	return true;
}

/* The first bytes of a member, through libzip (under the lock): whether a member too large to
 * hold for nothing, or one that cannot be read whole, is an ELF object. */
static bool starts_as_elf(wg_zip *z, uint64_t i)
{
	uint8_t head[4];
	pthread_mutex_lock(&z->lock);
	zip_file_t *f = zip_fopen_index(z->za, i, 0);
	zip_int64_t n = f ? zip_fread(f, head, sizeof(head)) : -1;
	if (f)
		zip_fclose(f);
	pthread_mutex_unlock(&z->lock);
	return n == 4 && !memcmp(head, "\x7f" "ELF", 4);
}

bool wg_zip_starts_as_elf(wg_zip *z, uint64_t i)
{
	return z && i < z->ninfo && starts_as_elf(z, i);
}

bool wg_zip_inflates_whole(wg_zip *z, uint64_t i, uint64_t declared)
{
	if (i >= z->ninfo || !z->info[i].viewable || z->info[i].method != ZIP_CM_DEFLATE ||
	    !z->info[i].csize)
		return false;
	if (declared <= WHOLE_MAX)
		return true;
	/* Asked once per member (wg_zip_stat's thread, or the view's): the answer is kept. */
	zmember *zm = &z->info[i];
	int8_t elf = __atomic_load_n(&zm->elf, __ATOMIC_ACQUIRE);
	if (elf < 0) {
		elf = starts_as_elf(z, i) ? 1 : 0;
		__atomic_store_n(&zm->elf, elf, __ATOMIC_RELEASE);
	}
	return elf == 1;
}

void wg_zbuf_prefault(const uint8_t *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t page = pg > 0 ? (uintptr_t)pg : 4096;
	uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t to = ((uintptr_t)p + len) & ~(page - 1);
	/* Faults the pages in as if written, without writing them: safe beside the thread that
	 * is filling the buffer (a page it wrote is left as it is). Before Linux 5.14: EINVAL,
	 * and nothing is done. */
	if (to > from)
		madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}

bool wg_zbuf_reserve(wg_zbuf *b, uint64_t n)
{
	return zbuf_grow(b, n);
}

int wg_zip_view(wg_zip *z, uint64_t i, uint64_t declared, wg_zbuf *b, wg_chunk_cb cb,
		void *payload, const uint8_t **data, wg_err *err)
{
	*data = NULL;
	if (i >= z->ninfo || !z->info[i].viewable)
		return 1;
	const zmember *zm = &z->info[i];
	const char *name = zm->name ? zm->name : "?";
	const uint8_t *in = zm->csize ? z->src.base + zm->off : (const uint8_t *)"";
	const uint8_t *out;
	uint64_t got;
	if (zm->method == ZIP_CM_STORE) {
		if (zm->csize > declared)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: member data is longer than the %llu "
					 "bytes its directory entry declares", z->name, name,
					 (unsigned long long)declared);
		out = in;
		got = zm->csize;
	} else {
		/* Deflate grows incompressible data by 5 bytes a 64 KiB block: more is a lie, left
		 * to the streaming path (and libzip's checks) to refuse. */
		if (zm->csize == 0 || zm->csize > declared + declared / 1024 + 1024)
			return 1;
		if (declared > WHOLE_MAX && !wg_zip_inflates_whole(z, i, declared))
			return 1;
		if (!zbuf_grow(b, declared ? declared : 1) ||
		    (!b->dec && !(b->dec = libdeflate_alloc_decompressor())))
			return wg_seterr(err, WG_ENOMEM, "%s: out of memory for %s (%llu bytes)",
					 z->name, name, (unsigned long long)declared);
		size_t n = 0;
		enum libdeflate_result r = libdeflate_deflate_decompress(
			b->dec, in, (size_t)zm->csize, b->out, (size_t)declared, &n);
		if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: member data is longer than the %llu "
					 "bytes its directory entry declares", z->name, name,
					 (unsigned long long)declared);
		if (r != LIBDEFLATE_SUCCESS)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member data: not a valid "
					 "deflate stream", z->name, name);
		out = b->out;
		got = n;
	}
	if (got != declared)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: member data ends after %llu of the %llu "
				 "bytes its directory entry declares", z->name, name,
				 (unsigned long long)got, (unsigned long long)declared);
	/* One pass: each block's CRC, then the caller's hash of the same block. */
	uint32_t crc = 0;
	for (uint64_t at = 0; at < got;) {
		size_t n = got - at < BLOCK ? (size_t)(got - at) : BLOCK;
		crc = libdeflate_crc32(crc, out + at, n);
		int rc = cb(out + at, n, payload);
		if (rc < 0)
			return rc;
		at += n;
	}
	if (crc != zm->crc)
		/* as libzip words it on the streaming path */
		return wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member data at byte %llu: CRC "
				 "error", z->name, name, (unsigned long long)got);
	*data = out;
	return WG_OK;
}

void wg_zip_release(wg_zip *z, uint64_t i)
{
	if (!z->mapped || i >= z->ninfo || !z->info[i].viewable || !z->info[i].csize)
		return;
	/* The pages wholly inside the member's data: a neighbour being read keeps its own (and
	 * a dropped page of a mapped file is only read again from the page cache if touched). */
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t page = pg > 0 ? (uint64_t)pg : 4096;
	uint64_t from = (z->info[i].off + page - 1) / page * page;
	uint64_t to = (z->info[i].off + z->info[i].csize) / page * page;
	if (to > from)
		madvise((void *)(z->src.base + from), (size_t)(to - from), MADV_DONTNEED);
}

/* ---- streaming, through libzip ---- */

static int stream(wg_zip *z, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
		  wg_err *err)
{
	const char *name = zip_get_name(z->za, i, 0);
	int rc = WG_OK;
	if (!name)
		name = "?";
	zip_file_t *f = zip_fopen_index(z->za, i, 0);
	if (!f)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: cannot open member: %s", z->name, name,
				 zip_strerror(z->za));
	if (!z->chunk && !(z->chunk = malloc(CHUNK))) {
		zip_fclose(f);
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	}
	uint8_t *buf = z->chunk;
	uint64_t total = 0;
	for (;;) {
		/* Ask for one byte past the declared size so that a longer stream is caught. */
		uint64_t left = declared - total + 1;
		zip_int64_t n = zip_fread(f, buf, left < CHUNK ? left : CHUNK);
		if (n < 0) {
			rc = wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member data at byte %llu: %s",
				       z->name, name, (unsigned long long)total,
				       zip_error_strerror(zip_file_get_error(f)));
			break;
		}
		if (n == 0)
			break;
		if ((uint64_t)n > declared - total) {
			rc = wg_seterr(err, WG_EFORMAT,
				       "%s: %s: member data is longer than the %llu bytes its directory "
				       "entry declares", z->name, name, (unsigned long long)declared);
			break;
		}
		total += (uint64_t)n;
		if ((rc = cb(buf, (size_t)n, payload)) < 0)
			break;
	}
	if (rc == WG_OK && total != declared)
		rc = wg_seterr(err, WG_EFORMAT,
			       "%s: %s: member data ends after %llu of the %llu bytes its directory "
			       "entry declares", z->name, name, (unsigned long long)total,
			       (unsigned long long)declared);
	if (zip_fclose(f) != 0 && rc == WG_OK)
		rc = wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member (CRC mismatch)", z->name, name);
	return rc;
}

int wg_zip_read(wg_zip *z, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
		wg_err *err)
{
	pthread_mutex_lock(&z->lock);
	int rc = stream(z, i, declared, cb, payload, err);
	pthread_mutex_unlock(&z->lock);
	return rc;
}

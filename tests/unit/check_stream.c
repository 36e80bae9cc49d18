/*
 * Members streamed through ISA-L (input/zip_stream.c): the same bytes, size, CRC-32 and
 * SHA-256 as the views of zip_read.c, libzip's streaming path and Python's zipfile; every lie
 * and corruption refused on one line naming the file and the member; a 1 GiB member streamed
 * in the worker's one buffer, under an address-space limit a whole-member inflate would break.
 * The archives are written here byte by byte, so that each field can lie.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <openssl/evp.h>

#include "input/input.h"
#include "test_util.h"

#define MiB (1u << 20)
#define ZIPNAME "streamed.whl"

/* ---- an archive written field by field ---- */

typedef struct {
	uint8_t *p;
	size_t len, cap;
	uint8_t cd[4096];
	size_t cdlen;
	unsigned count;
} zw;

static void put(zw *w, const void *d, size_t n)
{
	if (w->len + n > w->cap) {
		w->cap = (w->len + n) * 2;
		w->p = realloc(w->p, w->cap);
		ck_assert_ptr_nonnull(w->p);
	}
	memcpy(w->p + w->len, d, n);
	w->len += n;
}

static void le_put(uint8_t *b, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

/* A member: raw (compressed or stored) bytes; the directory says crc, csize = rawlen, size. */
static void zw_add(zw *w, const char *name, int method, const uint8_t *raw, size_t rawlen,
		   uint64_t size, uint32_t crc)
{
	uint8_t h[30];
	size_t nl = strlen(name);
	le_put(h, 0x04034b50, 4);
	le_put(h + 4, 20, 2);
	le_put(h + 6, 0, 2);
	le_put(h + 8, (uint64_t)method, 2);
	le_put(h + 10, 0, 2);
	le_put(h + 12, 0x21, 2); /* 1980-01-01 */
	le_put(h + 14, crc, 4);
	le_put(h + 18, rawlen, 4);
	le_put(h + 22, size, 4);
	le_put(h + 26, nl, 2);
	le_put(h + 28, 0, 2);
	uint64_t off = w->len;
	put(w, h, 30);
	put(w, name, nl);
	put(w, raw, rawlen);
	uint8_t *c = w->cd + w->cdlen;
	ck_assert_uint_lt(w->cdlen + 46 + nl, sizeof(w->cd));
	le_put(c, 0x02014b50, 4);
	le_put(c + 4, 0x031e, 2);
	memcpy(c + 6, h + 4, 26); /* version needed .. name length, as the local header */
	le_put(c + 32, 0, 2);  /* comment */
	le_put(c + 34, 0, 2);  /* disk */
	le_put(c + 36, 0, 2);  /* internal attributes */
	le_put(c + 38, 0100644u << 16, 4);
	le_put(c + 42, off, 4);
	memcpy(c + 46, name, nl);
	w->cdlen += 46 + nl;
	w->count++;
}

static void zw_end(zw *w)
{
	uint8_t e[22];
	uint64_t cd_off = w->len;
	put(w, w->cd, w->cdlen);
	le_put(e, 0x06054b50, 4);
	le_put(e + 4, 0, 4);
	le_put(e + 8, w->count, 2);
	le_put(e + 10, w->count, 2);
	le_put(e + 12, w->cdlen, 4);
	le_put(e + 16, cd_off, 4);
	le_put(e + 20, 0, 2);
	put(w, e, 22);
}

/* Data that compresses some but not all: runs, text and noise, as an ELF object is. */
static uint8_t *make_data(size_t n, unsigned seed)
{
	uint8_t *d = malloc(n ? n : 1);
	ck_assert_ptr_nonnull(d);
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		size_t zone = (i / 4096) % 3;
		d[i] = zone == 0 ? 0 : zone == 1 ? (uint8_t)("_ZN4cuda6kernelEv"[i % 17]) : (uint8_t)(x >> 16);
	}
	return d;
}

static uint8_t *deflate_all(const uint8_t *d, size_t n, size_t *out_len)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
	ck_assert_ptr_nonnull(c);
	size_t cap = libdeflate_deflate_compress_bound(c, n);
	uint8_t *out = malloc(cap);
	ck_assert_ptr_nonnull(out);
	*out_len = libdeflate_deflate_compress(c, d, n, out, cap);
	ck_assert_uint_gt(*out_len, 0);
	libdeflate_free_compressor(c);
	return out;
}

static uint32_t crc_of(const uint8_t *d, size_t n)
{
	return libdeflate_crc32(0, d, n);
}

static void sha_of(const uint8_t *d, size_t n, uint8_t out[32])
{
	unsigned int len = 32;
	ck_assert_int_eq(EVP_Digest(d, n, out, &len, EVP_sha256(), NULL), 1);
}

/* What a stream handed on, checked as it passes: contiguous offsets, blocks within bounds. */
typedef struct {
	uint8_t *got;   /* a copy of what passed (NULL: not kept) */
	uint64_t cap, next, blocks, maxn;
	size_t block;
	const uint8_t *first; /* the first block's address, and whether every block had it */
	bool same;
	int stop_at; /* a negative return at this block (0: never) */
} sink;

static int collect(const uint8_t *data, size_t n, uint64_t off, void *payload)
{
	sink *k = payload;
	ck_assert_uint_eq(off, k->next);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_le(n, k->block);
	if (!k->blocks)
		k->first = data;
	k->same = k->same && data == k->first;
	k->blocks++;
	if (n > k->maxn)
		k->maxn = n;
	if (k->got) {
		ck_assert_uint_le(off + n, k->cap);
		memcpy(k->got + off, data, n);
	}
	k->next += n;
	if (k->stop_at && k->blocks == (uint64_t)k->stop_at)
		return WG_ELIMIT;
	return 0;
}

static wg_zip *open_zw(zw *w)
{
	wg_zip *z = NULL;
	wg_err err = {0};
	int rc = wg_zip_open_buffer(&z, w->p, w->len, ZIPNAME, 1000, &err);
	ck_assert_msg(rc == WG_OK, "open: %s", err.msg);
	return z;
}

static uint64_t stat_size(wg_zip *z, uint64_t i)
{
	wg_zip_entry e;
	wg_err err = {0};
	ck_assert_int_eq(wg_zip_stat(&e, z, i, &err), WG_OK);
	return e.size;
}

/* ---- the bytes: stored and deflated, sizes around the block ---- */

static const size_t sizes[] = {0, 1, MiB - 1, MiB, MiB + 1, 3 * MiB + 17};

static int append_view(const uint8_t *data, size_t n, void *payload)
{
	(void)data;
	*(uint64_t *)payload += n;
	return 0;
}

static int append_read(const uint8_t *data, size_t n, void *payload)
{
	sink *k = payload;
	memcpy(k->got + k->next, data, n);
	k->next += n;
	return 0;
}

START_TEST(test_sizes)
{
	size_t n = sizes[_i / 2];
	bool deflated = _i % 2;
	uint8_t *d = make_data(n, (unsigned)_i);
	size_t rawlen = n;
	uint8_t *raw = deflated ? deflate_all(d, n, &rawlen) : d;
	zw w = {0};
	zw_add(&w, "pkg/lib.so", deflated ? 8 : 0, raw, rawlen, n, crc_of(d, n));
	zw_end(&w);
	wg_zip *z = open_zw(&w);
	uint64_t declared = stat_size(z, 0);
	ck_assert_uint_eq(declared, n);

	wg_zstream *s = wg_zstream_new(0);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(wg_zstream_block(s), WG_ZSTREAM_BLOCK);
	sink k = {.got = malloc(n + 1), .cap = n, .block = WG_ZSTREAM_BLOCK, .same = true};
	wg_zstream_sum sum;
	wg_err err = {0};
	int rc = wg_zip_stream(z, 0, declared, s, collect, &k, &sum, &err);
	ck_assert_msg(rc == WG_OK, "stream: %d %s", rc, err.msg);
	ck_assert_uint_eq(k.next, n);
	ck_assert_uint_eq(k.blocks, (n + MiB - 1) / MiB);
	ck_assert(n == 0 || !memcmp(k.got, d, n));
	ck_assert_uint_eq(sum.size, n);
	ck_assert_uint_eq(sum.crc, crc_of(d, n));
	uint8_t sha[32];
	sha_of(d, n, sha);
	ck_assert(!memcmp(sum.sha256, sha, 32));
	if (deflated && n)
		ck_assert(k.same); /* one buffer, the worker's */

	/* zip_read.c today: the view (libdeflate whole, or in place) and libzip's stream */
	wg_zbuf b = {0};
	const uint8_t *view = NULL;
	uint64_t seen = 0;
	ck_assert_int_eq(wg_zip_view(z, 0, declared, &b, append_view, &seen, &view, &err), WG_OK);
	ck_assert_uint_eq(seen, n);
	ck_assert(n == 0 || !memcmp(view, k.got, n));
	sink r = {.got = malloc(n + 1)};
	ck_assert_int_eq(wg_zip_read(z, 0, declared, append_read, &r, &err), WG_OK);
	ck_assert_uint_eq(r.next, n);
	ck_assert(n == 0 || !memcmp(r.got, k.got, n));

	/* a block that does not divide anything here: boundaries everywhere else */
	wg_zstream *small = wg_zstream_new(4099);
	sink k2 = {.got = malloc(n + 1), .cap = n, .block = 4099, .same = true};
	ck_assert_int_eq(wg_zip_stream(z, 0, declared, small, collect, &k2, &sum, &err), WG_OK);
	ck_assert_uint_eq(k2.blocks, (n + 4098) / 4099);
	ck_assert(n == 0 || !memcmp(k2.got, d, n));
	ck_assert(!memcmp(sum.sha256, sha, 32));
	wg_zstream_free(small);

	free(r.got);
	free(k2.got);
	wg_zbuf_free(&b);
	free(k.got);
	wg_zstream_free(s);
	wg_zip_close(z);
	free(w.p);
	if (raw != d)
		free(raw);
	free(d);
}
END_TEST

/* ---- Python's zipfile wrote it; hashlib says what each member holds ---- */

static const char *py_make =
	"import hashlib, sys, zipfile\n"
	"sizes = [0, 1, 4095, 1 << 20, (1 << 20) + 1, (5 << 20) + 3]\n"
	"with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
	"    for i, n in enumerate(sizes):\n"
	"        data = (bytes(range(256)) * (n // 256 + 1))[:n]\n"
	"        data = bytes(b ^ ((k * 7919) >> 9 & 0xff) for k, b in enumerate(data))\n"
	"        for m, kind in ((zipfile.ZIP_STORED, 's'), (zipfile.ZIP_DEFLATED, 'd')):\n"
	"            z.writestr('m%d%s' % (i, kind), data, compress_type=m)\n"
	"with zipfile.ZipFile(sys.argv[1]) as z:\n"
	"    for info in z.infolist():\n"
	"        print(info.filename, hashlib.sha256(z.read(info)).hexdigest())\n";

START_TEST(test_python_zipfile)
{
	if (t_skip_unless("/usr/bin/python3", "Debian's python3 writes the archive"))
		return;
	char dir[] = "/tmp/wg-stream-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[64], script[64], cmd[256];
	snprintf(path, sizeof(path), "%s/py.whl", dir);
	snprintf(script, sizeof(script), "%s/make.py", dir);
	FILE *f = fopen(script, "w");
	ck_assert_ptr_nonnull(f);
	fputs(py_make, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s", script, path);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	FILE *zf = NULL;
	wg_zip *z = NULL;
	wg_err err = {0};
	wg_zstream *s = wg_zstream_new(0);
	char line[256];
	int members = 0;
	while (fgets(line, sizeof(line), p)) {
		char name[64], hex[65];
		ck_assert_int_eq(sscanf(line, "%63s %64s", name, hex), 2);
		if (!z) {
			zf = fopen(path, "rb");
			ck_assert_ptr_nonnull(zf);
			ck_assert_msg(wg_zip_open_fd(&z, fileno(zf), path, 1000, &err) == WG_OK, "%s",
				      err.msg);
		}
		ck_assert_int_lt(members, wg_zip_count(z));
		wg_zip_entry e;
		ck_assert_int_eq(wg_zip_stat(&e, z, (uint64_t)members, &err), WG_OK);
		ck_assert_str_eq(e.name, name);
		wg_zstream_sum sum;
		int rc = wg_zip_stream(z, (uint64_t)members, e.size, s, NULL, NULL, &sum, &err);
		ck_assert_msg(rc == WG_OK, "%s: %d %s", name, rc, err.msg);
		char ours[65];
		for (int k = 0; k < 32; k++)
			snprintf(ours + 2 * k, 3, "%02x", sum.sha256[k]);
		ck_assert_str_eq(ours, hex);
		ck_assert_uint_eq(sum.size, e.size);
		members++;
	}
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_int_eq(members, 12);
	wg_zstream_free(s);
	wg_zip_close(z);
	fclose(zf);
	unlink(path);
	unlink(script);
	rmdir(dir);
}
END_TEST

/* ---- refused: each on one line naming the file and the member ---- */

enum lie { CORRUPT, TRUNCATED, CRC_DEFLATED, CRC_STORED, LARGER, SMALLER, STORED_SHORT };

static const struct {
	enum lie lie;
	const char *says;
} lies[] = {
	{CORRUPT, "corrupt member data: not a valid deflate stream"},
	{TRUNCATED, "not a valid deflate stream (it ends after "},
	{CRC_DEFLATED, "corrupt member data at byte 2097152: CRC error"},
	{CRC_STORED, "corrupt member data at byte 2097152: CRC error"},
	/* the directory declares more than the stream holds, or less */
	{LARGER, "member data ends after 2097152 of the 2097153 bytes its directory entry declares"},
	{SMALLER, "member data is longer than the 2097151 bytes its directory entry declares"},
	{STORED_SHORT, "member data is longer than the 2097151 bytes its directory entry declares"},
};

START_TEST(test_refused)
{
	const size_t n = 2 * MiB;
	uint8_t *d = make_data(n, 7);
	size_t clen;
	uint8_t *c = deflate_all(d, n, &clen);
	zw w = {0};
	uint32_t crc = crc_of(d, n);
	switch (lies[_i].lie) {
	case CORRUPT:
		memset(c + 8, 0xff, 64); /* past the first block's header: codes that do not exist */
		zw_add(&w, "pkg/bad.so", 8, c, clen, n, crc);
		break;
	case TRUNCATED:
		zw_add(&w, "pkg/bad.so", 8, c, clen / 2, n, crc);
		break;
	case CRC_DEFLATED:
		zw_add(&w, "pkg/bad.so", 8, c, clen, n, crc ^ 1);
		break;
	case CRC_STORED:
		zw_add(&w, "pkg/bad.so", 0, d, n, n, crc ^ 0x80000000u);
		break;
	case LARGER:
		zw_add(&w, "pkg/bad.so", 8, c, clen, n + 1, crc);
		break;
	case SMALLER:
		zw_add(&w, "pkg/bad.so", 8, c, clen, n - 1, crc);
		break;
	case STORED_SHORT:
		zw_add(&w, "pkg/bad.so", 0, d, n, n - 1, crc);
		break;
	}
	zw_end(&w);
	wg_zip *z = NULL;
	wg_err err = {0};
	int rc = wg_zip_open_buffer(&z, w.p, w.len, ZIPNAME, 1000, &err);
	if (rc == WG_OK) {
		wg_zstream *s = wg_zstream_new(0);
		sink k = {.block = WG_ZSTREAM_BLOCK, .same = true};
		wg_zstream_sum sum = {.size = 12345};
		rc = wg_zip_stream(z, 0, stat_size(z, 0), s, collect, &k, &sum, &err);
		ck_assert_uint_eq(sum.size, 12345); /* not filled */
		/* a bomb or a lie stops at the declared size: nothing past it was handed on */
		ck_assert_uint_le(k.next, stat_size(z, 0));
		wg_zstream_free(s);
		wg_zip_close(z);
	}
	ck_assert_int_eq(rc, WG_EFORMAT);
	ck_assert_msg(strstr(err.msg, ZIPNAME ": pkg/bad.so: ") == err.msg, "%s", err.msg);
	ck_assert_msg(strstr(err.msg, lies[_i].says), "%s", err.msg);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	free(w.p);
	free(c);
	free(d);
}
END_TEST

/* ---- a caller that stops, and one that keeps a range ---- */

typedef struct {
	uint8_t head[64], mid[40];
	size_t got_head, got_mid;
} ranges;

static int keep(const uint8_t *data, size_t n, uint64_t off, void *payload)
{
	ranges *r = payload;
	r->got_head += wg_span_take(r->head, 0, sizeof(r->head), data, n, off);
	r->got_mid += wg_span_take(r->mid, MiB - 20, sizeof(r->mid), data, n, off);
	return 0;
}

START_TEST(test_stop_and_ranges)
{
	const size_t n = 3 * MiB;
	uint8_t *d = make_data(n, 3);
	memcpy(d, "\x7f" "ELF", 4);
	size_t clen;
	uint8_t *c = deflate_all(d, n, &clen);
	zw w = {0};
	zw_add(&w, "pkg/a.so", 8, c, clen, n, crc_of(d, n));
	zw_end(&w);
	wg_zip *z = open_zw(&w);
	wg_zstream *s = wg_zstream_new(0);
	wg_err err = {0};
	sink k = {.block = WG_ZSTREAM_BLOCK, .same = true, .stop_at = 2};
	ck_assert_int_eq(wg_zip_stream(z, 0, stat_size(z, 0), s, collect, &k, NULL, &err),
			 WG_ELIMIT);
	ck_assert_uint_eq(k.blocks, 2);
	ranges r = {0};
	ck_assert_int_eq(wg_zip_stream(z, 0, n, s, keep, &r, NULL, &err), WG_OK);
	ck_assert_uint_eq(r.got_head, 64);
	ck_assert_uint_eq(r.got_mid, 40); /* across the first block boundary */
	ck_assert(!memcmp(r.head, d, 64));
	ck_assert(!memcmp(r.mid, d + MiB - 20, 40));
	wg_zstream_free(s);
	wg_zip_close(z);
	free(w.p);
	free(c);
	free(d);
}
END_TEST

/* ---- a bomb: 1 GiB of zeros, declared honestly, then declared as 1 MiB ---- */

#define BOMB ((uint64_t)1 << 30)

static uint8_t *deflate_zeros(uint64_t n, size_t *out_len)
{
	static uint8_t zeros[MiB];
	size_t cap = 8 * MiB, len = 0;
	uint8_t *out = malloc(cap);
	ck_assert_ptr_nonnull(out);
	struct isal_zstream zs;
	isal_deflate_init(&zs);
	zs.level = 0;
	for (uint64_t fed = 0;;) {
		if (!zs.avail_in && fed < n) {
			zs.next_in = zeros;
			zs.avail_in = MiB;
			fed += MiB;
			zs.end_of_stream = fed >= n;
		}
		if (len + MiB > cap) {
			cap *= 2;
			ck_assert_ptr_nonnull(out = realloc(out, cap));
		}
		zs.next_out = out + len;
		zs.avail_out = MiB;
		ck_assert_int_eq(isal_deflate(&zs), COMP_OK);
		len += MiB - zs.avail_out;
		if (zs.internal_state.state == ZSTATE_END)
			break;
	}
	*out_len = len;
	return out;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define T_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define T_SANITIZED 1
#endif
#endif

/* From here the process may not grow its address space by 256 MiB: a whole-member inflate
 * (1 GiB) cannot run, and the limit is shown to hold; the limit it had goes to *old. Not under
 * sanitizers, which reserve terabytes of address space up front, nor without Check's fork per
 * test (the limit would outlive the test): false, and only the buffer checks hold the line. */
static bool limit_growth(struct rlimit *old)
{
#ifdef T_SANITIZED
	(void)old;
	return false;
#else
	const char *fork_env = getenv("CK_FORK");
	if (fork_env && !strcmp(fork_env, "no"))
		return false;
	FILE *st = fopen("/proc/self/status", "r");
	ck_assert_ptr_nonnull(st);
	char line[128];
	unsigned long vm_kb = 0;
	while (fgets(line, sizeof(line), st))
		sscanf(line, "VmSize: %lu kB", &vm_kb);
	fclose(st);
	ck_assert_uint_gt(vm_kb, 0);
	ck_assert_int_eq(getrlimit(RLIMIT_AS, old), 0);
	struct rlimit rl = {(rlim_t)vm_kb * 1024 + 256 * MiB, old->rlim_max};
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
	void *whole = malloc((size_t)BOMB);
	ck_assert_ptr_null(whole);
	return true;
#endif
}

START_TEST(test_bomb_constant_memory)
{
	size_t clen;
	uint8_t *c = deflate_zeros(BOMB, &clen);
	ck_assert_uint_lt(clen, BOMB / 64);
	uint32_t crc = 0;
	uint8_t *zeros = calloc(1, MiB);
	for (uint64_t at = 0; at < BOMB; at += MiB)
		crc = libdeflate_crc32(crc, zeros, MiB);
	free(zeros);
	zw w = {0};
	zw_add(&w, "pkg/zeros.bin", 8, c, clen, BOMB, crc);
	zw_add(&w, "pkg/liar.bin", 8, c, clen, MiB, crc);
	zw_end(&w);
	free(c);
	wg_zip *z = open_zw(&w);
	wg_zstream *s = wg_zstream_new(0);
	ck_assert_ptr_nonnull(s);
	stat_size(z, 1);
	struct rlimit old;
	bool limited = limit_growth(&old);
	sink k = {.block = WG_ZSTREAM_BLOCK, .same = true};
	wg_zstream_sum sum;
	wg_err err = {0};
	int rc = wg_zip_stream(z, 0, stat_size(z, 0), s, collect, &k, &sum, &err);
	ck_assert_msg(rc == WG_OK, "%s", err.msg);
	ck_assert_uint_eq(sum.size, BOMB);
	ck_assert_uint_eq(k.next, BOMB);
	ck_assert(k.same);                          /* every block in the one buffer ... */
	ck_assert_uint_le(k.maxn, WG_ZSTREAM_BLOCK); /* ... of 1 MiB */
	ck_assert_uint_ge(k.blocks, BOMB / WG_ZSTREAM_BLOCK);

	/* declared as 1 MiB: refused at the byte past it, having handed on no more */
	sink k2 = {.block = WG_ZSTREAM_BLOCK, .same = true};
	rc = wg_zip_stream(z, 1, MiB, s, collect, &k2, &sum, &err);
	ck_assert_int_eq(rc, WG_EFORMAT);
	ck_assert_msg(strstr(err.msg, "pkg/liar.bin: member data is longer than the 1048576 bytes"),
		      "%s", err.msg);
	ck_assert_uint_le(k2.next, MiB);
	if (limited)
		ck_assert_int_eq(setrlimit(RLIMIT_AS, &old), 0);
	wg_zstream_free(s);
	wg_zip_close(z);
	free(w.p);
}
END_TEST

Suite *suite_stream(void)
{
	Suite *s = suite_create("stream");
	TCase *tc = tcase_create("stream");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_sizes, 0, (int)(2 * WG_ARRAY_LEN(sizes)));
	tcase_add_test(tc, test_python_zipfile);
	tcase_add_loop_test(tc, test_refused, 0, (int)WG_ARRAY_LEN(lies));
	tcase_add_test(tc, test_stop_and_ranges);
	tcase_add_test(tc, test_bomb_constant_memory);
	suite_add_tcase(s, tc);
	return s;
}

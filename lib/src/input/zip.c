/*
 * The only user of libzip: opens a wheel from a file descriptor or memory with libzip's
 * consistency checks, lists members, and streams each member's data exactly once through a
 * callback, refusing data longer or shorter than the central directory declares. A deflated
 * member of a middle size is inflated whole by libdeflate from its raw bytes (2-3x faster
 * than zlib's streaming inflate, and its CRC-32 is folded), then checked against the
 * directory's CRC; others stream through libzip and zlib.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libdeflate.h>
#include <zip.h>

#include "input/input.h"

struct wg_zip {
	zip_t *za;
	char *name;
	/* read_whole's buffers and decompressor, grown as needed and kept for the next member */
	uint8_t *in, *out;
	size_t in_cap, out_cap;
	struct libdeflate_decompressor *dec;
};

#define CHUNK (256 * 1024)
/* Deflated members from WHOLE_MIN to WHOLE_MAX bytes are inflated whole (both buffers held at
 * once: WHOLE_MAX bounds that); smaller ones gain nothing, larger ones stream. */
#define WHOLE_MIN (256u * 1024)
#define WHOLE_MAX (64u << 20)

static int open_error(int ze, const char *name, wg_err *err)
{
	zip_error_t e;
	zip_error_init_with_code(&e, ze);
	int code = ze == ZIP_ER_MEMORY ? WG_ENOMEM : ze == ZIP_ER_READ || ze == ZIP_ER_OPEN ? WG_EIO
										     : WG_EFORMAT;
	const char *why = zip_error_strerror(&e);
	if (ze == ZIP_ER_NOZIP)
		why = "no end-of-central-directory record (the file is truncated, or not a zip)";
	else if (ze == ZIP_ER_INCONS)
		why = "inconsistent archive: the central directory disagrees with the member "
		      "headers (sizes, offsets or names lie)";
	wg_seterr(err, code, "%s: not a readable zip archive: %s", name, why);
	zip_error_fini(&e);
	return code;
}

static int finish_open(wg_zip **out, zip_t *za, const char *name, wg_err *err)
{
	wg_zip *z = calloc(1, sizeof(*z));
	if (!z || !(z->name = strdup(name))) {
		free(z);
		zip_discard(za);
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	}
	z->za = za;
	*out = z;
	return WG_OK;
}

/* ---- before libzip: the member count, and the name of a duplicate ---- */

typedef int (*tail_read)(const void *src, uint64_t off, uint8_t *buf, size_t n);

static int fd_read(const void *src, uint64_t off, uint8_t *buf, size_t n)
{
	ssize_t r = pread(*(const int *)src, buf, n, (off_t)off);
	return r == (ssize_t)n ? 0 : -1;
}

typedef struct {
	const uint8_t *data;
	size_t len;
} membuf;

static int mem_read(const void *src, uint64_t off, uint8_t *buf, size_t n)
{
	const membuf *m = src;
	if (off > m->len || n > m->len - off)
		return -1;
	memcpy(buf, m->data + off, n);
	return 0;
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The member count the end-of-central-directory record (or its ZIP64 record) declares, read
 * from the file's last 64 KiB: a bound check before libzip parses the whole directory, not a
 * zip reader (libzip still reads everything). -1 when there is no such record. */
static int64_t declared_members(tail_read rd, const void *src, uint64_t size)
{
	size_t n = size < 65557 ? (size_t)size : 65557;
	uint8_t *t = n >= 22 ? malloc(n) : NULL;
	int64_t count = -1;
	if (!t || rd(src, size - n, t, n) != 0)
		goto out;
	for (size_t i = n - 22 + 1; i-- > 0;) {
		if (le(t + i, 4) != 0x06054b50 || i + 22 + le(t + i + 20, 2) > n)
			continue;
		count = (int64_t)le(t + i + 10, 2);
		uint8_t z[56];
		uint64_t eocd = size - n + i;
		/* ZIP64: the locator right before the record points at the ZIP64 record. */
		if (i >= 20 && le(t + i - 20, 4) == 0x07064b50 &&
		    rd(src, le(t + i - 20 + 8, 8), z, sizeof(z)) == 0 && le(z, 4) == 0x06064b50 &&
		    le(t + i - 20 + 8, 8) < eocd)
			count = le(z + 32, 8) > INT64_MAX ? INT64_MAX : (int64_t)le(z + 32, 8);
		break;
	}
out:
	free(t);
	return count;
}

static int too_many(tail_read rd, const void *src, uint64_t size, uint32_t max, const char *name,
		    wg_err *err)
{
	int64_t n = declared_members(rd, src, size);
	if (n > (int64_t)max)
		return wg_seterr(err, WG_ELIMIT, "%s: %lld members, more than the limit of %u "
				 "(max_members); the zip directory was not read", name, (long long)n,
				 max);
	return WG_OK;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* libzip refuses two members of one name (ZIP_ER_EXISTS) without naming it: opened again
 * without the consistency checks, the archive says which. */
static int duplicate_error(zip_t *za, const char *name, wg_err *err)
{
	zip_int64_t n = za ? zip_get_num_entries(za, 0) : 0;
	const char **v = n > 0 ? malloc((size_t)n * sizeof(*v)) : NULL;
	const char *dup = NULL;
	size_t k = 0;
	for (zip_int64_t i = 0; v && i < n; i++)
		if ((v[k] = zip_get_name(za, (zip_uint64_t)i, ZIP_FL_ENC_RAW)))
			k++;
	if (v)
		qsort(v, k, sizeof(*v), cmp_name);
	for (size_t i = 1; v && i < k && !dup; i++)
		if (!strcmp(v[i], v[i - 1]))
			dup = v[i];
	if (dup)
		wg_seterr(err, WG_EFORMAT, "%s: not a readable zip archive: member %s appears more "
			  "than once (duplicate names: one would overwrite the other)", name, dup);
	else
		wg_seterr(err, WG_EFORMAT, "%s: not a readable zip archive: two members have the "
			  "same name", name);
	free(v);
	if (za)
		zip_discard(za);
	return WG_EFORMAT;
}

int wg_zip_open_fd(wg_zip **out, int fd, const char *name, uint32_t max_members, wg_err *err)
{
	int ze = 0;
	*out = NULL;
	off_t end = lseek(fd, 0, SEEK_END);
	if (end > 0 && too_many(fd_read, &fd, (uint64_t)end, max_members, name, err) < 0)
		return err->code;
	int dupfd = dup(fd); /* zip_fdopen takes ownership of the descriptor it is given */
	if (dupfd < 0)
		return wg_seterr(err, WG_EIO, "%s: cannot duplicate file descriptor", name);
	if (lseek(dupfd, 0, SEEK_SET) < 0) {
		close(dupfd);
		return wg_seterr(err, WG_EIO, "%s: not seekable (a wheel must be a regular file)",
				 name);
	}
	zip_t *za = zip_fdopen(dupfd, ZIP_CHECKCONS, &ze);
	if (!za) {
		close(dupfd);
		if (ze == ZIP_ER_EXISTS && (dupfd = dup(fd)) >= 0) {
			zip_t *lax = lseek(dupfd, 0, SEEK_SET) == 0 ? zip_fdopen(dupfd, 0, &ze) : NULL;
			if (!lax)
				close(dupfd);
			return duplicate_error(lax, name, err);
		}
		return open_error(ze, name, err);
	}
	return finish_open(out, za, name, err);
}

static zip_t *open_buffer(const void *data, size_t len, int flags, int *ze)
{
	zip_error_t e;
	zip_error_init(&e);
	zip_source_t *src = zip_source_buffer_create(data, len, 0, &e);
	zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY | flags, &e) : NULL;
	*ze = src ? zip_error_code_zip(&e) : ZIP_ER_MEMORY;
	if (src && !za)
		zip_source_free(src);
	zip_error_fini(&e);
	return za;
}

int wg_zip_open_buffer(wg_zip **out, const void *data, size_t len, const char *name,
		       uint32_t max_members, wg_err *err)
{
	int ze = 0;
	*out = NULL;
	membuf m = {data, len};
	if (too_many(mem_read, &m, len, max_members, name, err) < 0)
		return err->code;
	zip_t *za = open_buffer(data, len, ZIP_CHECKCONS, &ze);
	if (!za && ze == ZIP_ER_EXISTS)
		return duplicate_error(open_buffer(data, len, 0, &ze), name, err);
	if (!za)
		return open_error(ze, name, err);
	return finish_open(out, za, name, err);
}

void wg_zip_close(wg_zip *z)
{
	if (!z)
		return;
	zip_discard(z->za);
	free(z->in);
	free(z->out);
	libdeflate_free_decompressor(z->dec);
	free(z->name);
	free(z);
}

int64_t wg_zip_count(wg_zip *z)
{
	return zip_get_num_entries(z->za, 0);
}

static const char *method_name(int32_t m)
{
	switch (m) {
	case ZIP_CM_STORE: return "store";
	case ZIP_CM_DEFLATE: return "deflate";
	case ZIP_CM_DEFLATE64: return "deflate64";
	case ZIP_CM_BZIP2: return "bzip2";
	case ZIP_CM_LZMA: return "lzma";
	case ZIP_CM_XZ: return "xz";
	case 93: return "zstd";
	default: return "unknown";
	}
}

int wg_zip_stat(wg_zip_entry *out, wg_zip *z, uint64_t i, wg_err *err)
{
	zip_stat_t st;
	zip_stat_init(&st);
	if (zip_stat_index(z->za, i, 0, &st) != 0)
		return wg_seterr(err, WG_EFORMAT, "%s: member #%llu: %s", z->name,
				 (unsigned long long)i, zip_strerror(z->za));
	const uint64_t need = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
			      ZIP_STAT_COMP_METHOD;
	if ((st.valid & need) != need)
		return wg_seterr(err, WG_EFORMAT, "%s: member #%llu: incomplete directory entry",
				 z->name, (unsigned long long)i);
	out->name = st.name;
	out->size = st.size;
	out->csize = st.comp_size;
	out->method = method_name(st.comp_method);
	out->encrypted = (st.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
			 st.encryption_method != ZIP_EM_NONE;
	return WG_OK;
}

/* *buf holds at least n bytes (its old content is not kept); false when out of memory. */
static bool grow(uint8_t **buf, size_t *cap, size_t n)
{
	if (n <= *cap)
		return true;
	free(*buf);
	*cap = 0;
	if (!(*buf = malloc(n)))
		return false;
	*cap = n;
	return true;
}

/* A deflated member inflated whole with libdeflate: 1 when done (rc in *rc), 0 when the
 * member is not one for this path (the streaming path reads it). */
static int read_whole(wg_zip *z, uint64_t i, const char *name, uint64_t declared,
		      wg_chunk_cb cb, void *payload, int *rc, wg_err *err)
{
	if (declared < WHOLE_MIN || declared > WHOLE_MAX)
		return 0;
	zip_stat_t st;
	zip_stat_init(&st);
	if (zip_stat_index(z->za, i, 0, &st) != 0)
		return 0;
	const uint64_t need = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD | ZIP_STAT_CRC;
	if ((st.valid & need) != need || st.comp_method != ZIP_CM_DEFLATE || st.size != declared ||
	    ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE))
		return 0;
	/* Deflate grows incompressible data by 5 bytes a 64 KiB block: more is a lie, left to
	 * the streaming path (and libzip's checks) to refuse. */
	if (st.comp_size == 0 || st.comp_size > declared + declared / 1024 + 1024)
		return 0;
	zip_file_t *f = zip_fopen_index(z->za, i, ZIP_FL_COMPRESSED);
	if (!f)
		return 0;
	if (!grow(&z->in, &z->in_cap, (size_t)st.comp_size) ||
	    !grow(&z->out, &z->out_cap, (size_t)declared) ||
	    (!z->dec && !(z->dec = libdeflate_alloc_decompressor()))) {
		*rc = wg_seterr(err, WG_ENOMEM, "out of memory");
		goto done;
	}
	uint8_t *in = z->in, *out = z->out;
	struct libdeflate_decompressor *d = z->dec;
	zip_int64_t n = zip_fread(f, in, st.comp_size);
	if (n < 0 || (uint64_t)n != st.comp_size) {
		*rc = wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member data: %llu of its %llu "
				"compressed bytes could be read%s%s", z->name, name,
				(unsigned long long)(n < 0 ? 0 : n),
				(unsigned long long)st.comp_size, n < 0 ? ": " : "",
				n < 0 ? zip_error_strerror(zip_file_get_error(f)) : "");
		goto done;
	}
	size_t got = 0;
	enum libdeflate_result r = libdeflate_deflate_decompress(d, in, (size_t)n, out,
								 (size_t)declared, &got);
	if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
		*rc = wg_seterr(err, WG_EFORMAT,
				"%s: %s: member data is longer than the %llu bytes its directory "
				"entry declares", z->name, name, (unsigned long long)declared);
	else if (r != LIBDEFLATE_SUCCESS)
		*rc = wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member data: not a valid deflate "
				"stream", z->name, name);
	else if (got != declared)
		*rc = wg_seterr(err, WG_EFORMAT,
				"%s: %s: member data ends after %llu of the %llu bytes its directory "
				"entry declares", z->name, name, (unsigned long long)got,
				(unsigned long long)declared);
	else if (libdeflate_crc32(0, out, got) != st.crc)
		/* as libzip words it on the streaming path */
		*rc = wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member data at byte %llu: CRC "
				"error", z->name, name, (unsigned long long)got);
	else
		*rc = cb(out, got, payload);
done:
	zip_fclose(f);
	return 1;
}

int wg_zip_read(wg_zip *z, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
		wg_err *err)
{
	const char *name = zip_get_name(z->za, i, 0);
	int rc = WG_OK;
	if (!name)
		name = "?";
	if (read_whole(z, i, name, declared, cb, payload, &rc, err))
		return rc;
	zip_file_t *f = zip_fopen_index(z->za, i, 0);
	if (!f)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: cannot open member: %s", z->name, name,
				 zip_strerror(z->za));
	uint8_t *buf = malloc(CHUNK);
	if (!buf) {
		zip_fclose(f);
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	}
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
	free(buf);
	if (zip_fclose(f) != 0 && rc == WG_OK)
		rc = wg_seterr(err, WG_EFORMAT, "%s: %s: corrupt member (CRC mismatch)", z->name, name);
	return rc;
}

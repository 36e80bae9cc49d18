/*
 * The only user of libzip: opens a wheel from a file descriptor or memory with libzip's
 * consistency checks, lists members, and streams each member's data exactly once through a
 * callback, refusing data longer or shorter than the central directory declares.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "input/input.h"

struct wg_zip {
	zip_t *za;
	char *name;
};

#define CHUNK (256 * 1024)

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

int wg_zip_open_fd(wg_zip **out, int fd, const char *name, wg_err *err)
{
	int ze = 0;
	*out = NULL;
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
		return open_error(ze, name, err);
	}
	return finish_open(out, za, name, err);
}

int wg_zip_open_buffer(wg_zip **out, const void *data, size_t len, const char *name, wg_err *err)
{
	zip_error_t e;
	*out = NULL;
	zip_error_init(&e);
	zip_source_t *src = zip_source_buffer_create(data, len, 0, &e);
	if (!src) {
		zip_error_fini(&e);
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	}
	zip_t *za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &e);
	if (!za) {
		int ze = zip_error_code_zip(&e);
		zip_source_free(src);
		zip_error_fini(&e);
		return open_error(ze, name, err);
	}
	zip_error_fini(&e);
	return finish_open(out, za, name, err);
}

void wg_zip_close(wg_zip *z)
{
	if (!z)
		return;
	zip_discard(z->za);
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

int wg_zip_read(wg_zip *z, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
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

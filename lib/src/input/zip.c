/*
 * The only user of libzip: opens a wheel from a file (mapped into memory) or from memory with
 * libzip's consistency checks (every local header must agree with the central directory, as
 * pip's zipfile requires), lists members and gives each member's bytes exactly once.
 *
 * libzip reads the directory and says where each member's data starts (wg_zip_stat notes the
 * first read libzip makes when the member is opened raw, and checks the bytes it got against
 * the mapping); from then on a member is a view: a stored member is its bytes in place in the
 * mapping, never copied; a deflated one is inflated whole by libdeflate from its raw bytes into
 * the caller's buffer, reused from member to member. Each view's CRC-32 (libdeflate's folded
 * CRC) is checked against the directory in the same pass that hands its blocks to the caller
 * (who hashes them). Views touch no libzip state, so workers read members in parallel. Members
 * that are not views (other methods, a deflated non-ELF member over WHOLE_MAX that is better
 * streamed than held, an archive that could not be mapped) stream through libzip and zlib,
 * one at a time.
 *
 * Here: the archive opened and closed; its layout and directory entries: zip_layout.c; its
 * members read: zip_read.c (zip_internal.h is theirs).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ZIP /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/zip_internal.h"

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


/* The member count the end-of-central-directory record (or its ZIP64 record) declares, read
 * from the file's last 64 KiB: a bound check before libzip parses the whole directory, not a
 * zip reader (libzip still reads everything). -1 when there is no such record. *cd_off (when
 * not NULL): where the record says the central directory starts (NO_CD when not told). */
static int64_t declared_members_at(tail_read rd, const void *src, uint64_t size, uint64_t *cd_off)
{
	if (cd_off)
		*cd_off = NO_CD;
	size_t n = size < 65557 ? (size_t)size : 65557;
	uint8_t *t = n >= 22 ? malloc(n) : NULL;
	int64_t count = -1;
	if (!t || rd(src, size - n, t, n) != 0)
		goto out;
	for (size_t i = n - 22 + 1; i-- > 0;) {
		if (le(t + i, 4) != 0x06054b50 || i + 22 + le(t + i + 20, 2) > n)
			continue;
		count = (int64_t)le(t + i + 10, 2);
		if (cd_off)
			*cd_off = le(t + i + 16, 4);
		uint8_t z[56];
		uint64_t eocd = size - n + i;
		/* ZIP64: the locator right before the record points at the ZIP64 record. */
		if (i >= 20 && le(t + i - 20, 4) == 0x07064b50 &&
		    rd(src, le(t + i - 20 + 8, 8), z, sizeof(z)) == 0 && le(z, 4) == 0x06064b50 &&
		    le(t + i - 20 + 8, 8) < eocd) {
			count = le(z + 32, 8) > INT64_MAX ? INT64_MAX : (int64_t)le(z + 32, 8);
			if (cd_off)
				*cd_off = le(z + 48, 8);
		}
		break;
	}
out:
	free(t);
	return count;
}

static int64_t declared_members(tail_read rd, const void *src, uint64_t size)
{
	return declared_members_at(rd, src, size, NULL);
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

/* ---- the archive's bytes as a libzip source ---- */

static zip_int64_t mem_source(void *ud, void *data, zip_uint64_t n, zip_source_cmd_t cmd)
{
	memsrc *m = ud;
	switch (cmd) {
	case ZIP_SOURCE_OPEN:
		m->pos = 0;
		return 0;
	case ZIP_SOURCE_READ: {
		if (m->armed && m->first_read == NO_OFF)
			m->first_read = m->pos;
		uint64_t k = m->pos < m->len ? m->len - m->pos : 0;
		if (n < k)
			k = n;
		memcpy(data, m->base + m->pos, (size_t)k);
		m->pos += k;
		return (zip_int64_t)k;
	}
	case ZIP_SOURCE_CLOSE:
	case ZIP_SOURCE_FREE:
		return 0;
	case ZIP_SOURCE_STAT: {
		if (n < sizeof(zip_stat_t)) {
			zip_error_set(&m->err, ZIP_ER_INVAL, 0);
			return -1;
		}
		zip_stat_t *st = data;
		zip_stat_init(st);
		st->size = m->len;
		st->comp_size = m->len;
		st->comp_method = ZIP_CM_STORE;
		st->encryption_method = ZIP_EM_NONE;
		st->valid = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD |
			    ZIP_STAT_ENCRYPTION_METHOD;
		return sizeof(*st);
	}
	case ZIP_SOURCE_ERROR:
		return zip_error_to_data(&m->err, data, n);
	case ZIP_SOURCE_SEEK: {
		zip_int64_t at = zip_source_seek_compute_offset(m->pos, m->len, data, n, &m->err);
		if (at < 0)
			return -1;
		if (m->armed && m->first_seek == NO_OFF)
			m->first_seek = (uint64_t)at;
		m->pos = (uint64_t)at;
		return 0;
	}
	case ZIP_SOURCE_TELL:
		return (zip_int64_t)m->pos;
	case ZIP_SOURCE_SUPPORTS:
		return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ,
						      ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
						      ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE,
						      ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL,
						      ZIP_SOURCE_SUPPORTS, -1);
	default:
		zip_error_set(&m->err, ZIP_ER_OPNOTSUPP, 0);
		return -1;
	}
}

static wg_zip *new_zip(const char *name)
{
	wg_zip *z = calloc(1, sizeof(*z));
	if (!z || !(z->name = strdup(name))) {
		free(z);
		return NULL;
	}
	zip_error_init(&z->src.err);
	pthread_mutex_init(&z->lock, NULL);
	return z;
}

static int set_archive(wg_zip *z, zip_t *za, wg_err *err)
{
	z->za = za;
	zip_int64_t n = zip_get_num_entries(za, 0);
	z->ninfo = n > 0 ? (uint64_t)n : 0;
	if (z->ninfo && !(z->info = calloc((size_t)z->ninfo, sizeof(*z->info))))
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	for (uint64_t i = 0; i < z->ninfo; i++)
		z->info[i].off = NO_OFF;
	return WG_OK;
}

/* libzip over the bytes at base: 0, or the libzip error code (ZIP_ER_*). */
static int open_memory(wg_zip *z, const void *base, size_t len, int flags, zip_t **za)
{
	zip_error_t e;
	zip_error_init(&e);
	z->src.base = base;
	z->src.len = len;
	z->src.first_read = NO_OFF;
	zip_source_t *src = zip_source_function_create(mem_source, &z->src, &e);
	*za = src ? zip_open_from_source(src, ZIP_RDONLY | flags, &e) : NULL;
	int ze = src ? zip_error_code_zip(&e) : ZIP_ER_MEMORY;
	if (src && !*za)
		zip_source_free(src);
	zip_error_fini(&e);
	return *za ? 0 : ze ? ze : ZIP_ER_INTERNAL;
}

/* z with libzip's archive za, into *out; z is closed on failure. */
static int finish_open(wg_zip **out, wg_zip *z, zip_t *za, wg_err *err)
{
	int rc = set_archive(z, za, err);
	if (rc < 0) {
		wg_zip_close(z);
		return rc;
	}
	*out = z;
	return WG_OK;
}

/* Opens the bytes at base (the caller's, or our mapping of the file): the count bound, libzip
 * with its consistency checks, the duplicate's name when that is what it refused, then the
 * layout libzip does not check (wg_zip_check_layout). */
static int open_bytes(wg_zip **out, wg_zip *z, const void *base, size_t len, const char *name,
		      uint32_t max_members, wg_err *err)
{
	membuf m = {base, len};
	zip_t *za = NULL;
	if (too_many(mem_read, &m, len, max_members, name, err) < 0) {
		wg_zip_close(z);
		return err->code;
	}
	int ze = open_memory(z, base, len, ZIP_CHECKCONS, &za);
	if (!za && ze == ZIP_ER_EXISTS) {
		/* The lax archive reads through z's source: it is discarded (by duplicate_error)
		 * before z is closed. */
		zip_t *lax = NULL;
		open_memory(z, base, len, 0, &lax);
		int rc = duplicate_error(lax, name, err);
		wg_zip_close(z);
		return rc;
	}
	if (!za && ze == ZIP_ER_INCONS) {
		/* libzip does not say which member or field: opened without its checks, the
		 * layout check names them (else libzip's word stands). */
		zip_t *lax = NULL;
		uint64_t cd_off;
		declared_members_at(mem_read, &m, len, &cd_off);
		if (open_memory(z, base, len, 0, &lax) == 0 && set_archive(z, lax, err) == WG_OK &&
		    wg_zip_check_layout(z, cd_off, err) < 0) {
			wg_zip_close(z);
			return err->code;
		}
		/* z owns lax now (closed with it) */
		wg_zip_close(z);
		return open_error(ze, name, err);
	}
	if (!za) {
		wg_zip_close(z);
		return open_error(ze, name, err);
	}
	uint64_t cd_off;
	declared_members_at(mem_read, &m, len, &cd_off);
	int rc = set_archive(z, za, err);
	if (rc == WG_OK)
		rc = wg_zip_check_layout(z, cd_off, err);
	if (rc < 0) {
		wg_zip_close(z);
		return rc;
	}
	*out = z;
	return WG_OK;
}

int wg_zip_open_fd(wg_zip **out, int fd, const char *name, uint32_t max_members, wg_err *err)
{
	*out = NULL;
	wg_zip *z = new_zip(name);
	if (!z)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			/* No MADV_WILLNEED: on a wheel already in the page cache it walks every page
			 * of it first (the stored 1 GB wheel's 2-thread floor: 0.66 s with it, 0.36 s
			 * without). The mapping is z's from here: wg_zip_close unmaps it whatever
			 * open_bytes decides. */
			z->mapped = true;
			z->src.base = p;
			z->src.len = (uint64_t)st.st_size;
			return open_bytes(out, z, p, (size_t)st.st_size, name, max_members, err);
		}
	}
	/* Not mappable: libzip reads the descriptor, every member streams. */
	int ze = 0;
	off_t end = lseek(fd, 0, SEEK_END);
	if (end > 0 && too_many(fd_read, &fd, (uint64_t)end, max_members, name, err) < 0) {
		wg_zip_close(z);
		return err->code;
	}
	int dupfd = dup(fd); /* zip_fdopen takes ownership of the descriptor it is given */
	if (dupfd < 0) {
		wg_zip_close(z);
		return wg_seterr(err, WG_EIO, "%s: cannot duplicate file descriptor", name);
	}
	if (lseek(dupfd, 0, SEEK_SET) < 0) {
		close(dupfd);
		wg_zip_close(z);
		return wg_seterr(err, WG_EIO, "%s: not seekable (a wheel must be a regular file)",
				 name);
	}
	zip_t *za = zip_fdopen(dupfd, ZIP_CHECKCONS, &ze);
	if (!za) {
		close(dupfd);
		wg_zip_close(z);
		if (ze == ZIP_ER_EXISTS && (dupfd = dup(fd)) >= 0) {
			zip_t *lax = lseek(dupfd, 0, SEEK_SET) == 0 ? zip_fdopen(dupfd, 0, &ze) : NULL;
			if (!lax)
				close(dupfd);
			return duplicate_error(lax, name, err);
		}
		return open_error(ze, name, err);
	}
	return finish_open(out, z, za, err);
}

int wg_zip_open_buffer(wg_zip **out, const void *data, size_t len, const char *name,
		       uint32_t max_members, wg_err *err)
{
	*out = NULL;
	wg_zip *z = new_zip(name);
	if (!z)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	return open_bytes(out, z, data, len, name, max_members, err);
}

void wg_zip_close(wg_zip *z)
{
	if (!z)
		return;
	if (z->za)
		zip_discard(z->za);
	if (z->mapped)
		munmap((void *)z->src.base, (size_t)z->src.len);
	zip_error_fini(&z->src.err);
	pthread_mutex_destroy(&z->lock);
	free(z->info);
	free(z->chunk);
	free(z->name);
	free(z);
}

int64_t wg_zip_count(wg_zip *z)
{
	return zip_get_num_entries(z->za, 0);
}

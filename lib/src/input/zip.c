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
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ZIP /* wg_seterr: what fails here */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdeflate.h>
#include <zip.h>

#include "input/input.h"

/* What libzip's directory says of a member, kept from wg_zip_stat for the views, which then
 * read it without libzip (and so from any thread). */
typedef struct {
	const char *name; /* libzip's, valid while the archive is open */
	uint64_t off;  /* where its data starts in the archive's bytes; NO_OFF when unknown */
	bool nul;      /* its name holds a NUL byte: libzip's (a C string) ends there */
	uint64_t csize;
	uint32_t crc;
	int32_t method;
	bool viewable; /* stored or deflated, not encrypted, data located and checked */
	int8_t elf;    /* a deflated member over WHOLE_MAX: -1 not known yet, else starts as ELF */
} zmember;

#define NO_OFF UINT64_MAX

/* The archive's bytes as a libzip source, and what that source was last asked to read: the
 * first read after `armed` is set is where a member's data starts (libzip's window over the
 * archive seeks there after reading the local header). */
typedef struct {
	const uint8_t *base;
	uint64_t len, pos;
	bool armed;
	uint64_t first_read, first_seek;
	zip_error_t err;
} memsrc;

struct wg_zip {
	zip_t *za;
	char *name;
	memsrc src;      /* base NULL: opened from the descriptor (no views) */
	bool mapped;     /* base is our mapping of the file */
	zmember *info;   /* per member, from wg_zip_stat */
	uint64_t ninfo;
	pthread_mutex_t lock; /* libzip is not thread-safe: the streaming reads take turns */
	uint8_t *chunk;       /* the streaming reads' buffer (under lock) */
};

#define CHUNK (256 * 1024)
/* A deflated member up to WHOLE_MAX bytes is inflated whole; a larger one only when it is an
 * ELF object, which the reader holds whole anyway. A larger data file streams (held whole, a
 * 4 GiB member would cost 4 GiB of memory for nothing). */
#define WHOLE_MAX (64u << 20)
/* The blocks a view is handed over in: CRC-32 and the caller's hash read each block while it
 * is in the cache. */
#define BLOCK (256u * 1024)

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

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The member count the end-of-central-directory record (or its ZIP64 record) declares, read
 * from the file's last 64 KiB: a bound check before libzip parses the whole directory, not a
 * zip reader (libzip still reads everything). -1 when there is no such record. *cd_off (when
 * not NULL): where the record says the central directory starts (NO_CD when not told). */
#define NO_CD UINT64_MAX
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

static int check_layout(wg_zip *z, uint64_t cd_off, wg_err *err);

/* Opens the bytes at base (the caller's, or our mapping of the file): the count bound, libzip
 * with its consistency checks, the duplicate's name when that is what it refused, then the
 * layout libzip does not check (check_layout). */
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
		    check_layout(z, cd_off, err) < 0) {
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
		rc = check_layout(z, cd_off, err);
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

/* ---- the layout: what libzip's consistency check leaves out ---- */

/* ZIP_CHECKCONS compares each local header with its directory entry (name, method, time, CRC
 * and sizes, zeros allowed where a data descriptor follows) and bounds each member by the
 * central directory's start. It does not see members that share bytes (Fifield's overlapping
 * zip bomb: a 548 KB file whose 256 members each inflate the same 64 MiB deflate stream, a
 * directory every check of libzip's accepts), the flags of the two headers, or the data
 * descriptor itself; a reader that streams the local headers (uv's) and one that follows the
 * directory (pip's) may then install different files. So, once per archive and before any
 * member is inflated: libzip is asked where each local header is (opening a member raw, it
 * reads the header first: the read is noted), the fixed 30 bytes there are compared with the
 * directory, and the members' stretches [local header, end of data and descriptor) sorted by
 * offset must not overlap and must end before the central directory. */

typedef struct {
	uint64_t from, to, i;
} span;

static int by_from(const void *a, const void *b)
{
	const span *x = a, *y = b;
	return x->from < y->from ? -1 : x->from > y->from;
}

static const char *member_name(const wg_zip *z, uint64_t i)
{
	return i < z->ninfo && z->info[i].name ? z->info[i].name : "?";
}

static bool non_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return true;
	return false;
}

/* Where the local header is that libzip went to open a member: it seeks there and reads the
 * header whole or from its name length on (1.7: 26 bytes in); whichever it was, the
 * signature must be there. NO_OFF when neither. */
static uint64_t noted_header(const memsrc *m)
{
	const uint64_t at[] = {m->first_seek, m->first_read,
			       m->first_read != NO_OFF && m->first_read >= 26 ? m->first_read - 26
									  : NO_OFF};
	for (size_t k = 0; k < 3; k++)
		if (at[k] != NO_OFF && at[k] <= m->len && m->len - at[k] >= 30 &&
		    le(m->base + at[k], 4) == 0x04034b50)
			return at[k];
	return NO_OFF;
}

/* Member i's local header against its directory entry; *sp its stretch of the archive. */
static int check_member(wg_zip *z, uint64_t i, uint64_t cd_off, span *sp, wg_err *err)
{
	zmember *zm = &z->info[i];
	const uint8_t *base = z->src.base;
	uint64_t len = z->src.len;
	zip_stat_t st;
	zip_stat_init(&st);
	if (zip_stat_index(z->za, i, 0, &st) != 0 || !(st.valid & ZIP_STAT_COMP_SIZE) ||
	    !(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_CRC))
		return wg_seterr(err, WG_EFORMAT, "%s: member #%llu: incomplete directory entry",
				 z->name, (unsigned long long)i);
	zm->name = st.name;
	const char *name = member_name(z, i);
	const char *raw = zip_get_name(z->za, i, ZIP_FL_ENC_RAW);
	if (!raw)
		return wg_seterr(err, WG_EFORMAT, "%s: member #%llu has no name", z->name,
				 (unsigned long long)i);
	/* Where libzip reads the local header, then the data. */
	uint8_t head[16];
	size_t want = st.comp_size < sizeof(head) ? (size_t)st.comp_size : sizeof(head);
	z->src.armed = true;
	z->src.first_read = z->src.first_seek = NO_OFF;
	zip_file_t *f = zip_fopen_index(z->za, i, ZIP_FL_COMPRESSED);
	uint64_t hp = noted_header(&z->src);
	z->src.first_read = NO_OFF;
	zip_int64_t got = f && want ? zip_fread(f, head, want) : 0;
	uint64_t dp = z->src.first_read;
	bool cenc = (st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE;
	if (!f && cenc && !zip_encryption_method_supported(st.encryption_method, 0)) {
		/* Strong encryption or a method libzip does not know: opening it with a password
		 * leaks libzip's source chain (libzip 1.7.3), and nothing of it can be read. */
		z->src.armed = false;
		return wg_seterr(err, WG_EFORMAT, "%s: %s: encrypted with a method that cannot be "
				 "read (encryption method %u)", z->name, name,
				 (unsigned)st.encryption_method);
	}
	if (!f && cenc) {
		/* Encrypted: libzip opens it only with a password, and seeks to the local header
		 * before it finds the password wrong. The data is not read (never viewed). */
		z->src.first_read = z->src.first_seek = NO_OFF;
		zip_file_t *g = zip_fopen_index_encrypted(z->za, i, ZIP_FL_COMPRESSED, "wheelgate");
		if (g)
			zip_fclose(g);
		hp = noted_header(&z->src);
		want = 0;
	}
	z->src.armed = false;
	if (f)
		zip_fclose(f);
	if (f && hp == NO_OFF && st.comp_size == 0) {
		/* An empty member is opened without a read: no data to share or inflate, and its
		 * local header was compared with the directory by libzip's check at open. */
		sp->from = sp->to = NO_OFF;
		return WG_OK;
	}
	if (hp == NO_OFF || hp > len || len - hp < 30 || le(base + hp, 4) != 0x04034b50)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: no local file header where the central "
				 "directory says it is", z->name, name);
	const uint8_t *h = base + hp;
	uint32_t flags = (uint32_t)le(h + 6, 2), lcrc = (uint32_t)le(h + 14, 4);
	uint64_t lcs = le(h + 18, 4), lus = le(h + 22, 4), nl = le(h + 26, 2), xl = le(h + 28, 2);
	uint64_t data = hp + 30 + nl + xl;
	if (data > len || st.comp_size > len - data)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: member data runs past the end of the "
				 "archive", z->name, name);
	if (want && (got != (zip_int64_t)want || dp != data || memcmp(base + data, head, want)))
		return wg_seterr(err, WG_EFORMAT, "%s: %s: the member's data is not where its local "
				 "header says", z->name, name);
	/* The name, byte for byte. libzip reads a NUL in a name as a space; Python's zipfile
	 * ends the name there (pip installs "a.py" for "a.py\0.txt"); uv keeps it. */
	size_t rl = strlen(raw);
	bool same = nl == rl;
	for (size_t k = 0; same && k < rl; k++) {
		if (h[30 + k] == 0 && raw[k] == ' ')
			zm->nul = true;
		else if (h[30 + k] != (uint8_t)raw[k])
			same = false;
	}
	if (!same)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: the local file header names the member "
				 "differently (installers that read the local headers and those that "
				 "read the central directory would install different files)",
				 z->name, name);
	if ((uint32_t)le(h + 8, 2) != (uint32_t)st.comp_method)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: the local file header says compression "
				 "method %u, the central directory %u", z->name, name,
				 (unsigned)le(h + 8, 2), (unsigned)st.comp_method);
	/* The flags that change what the bytes are: encryption, and the name's encoding. */
	if (cenc != ((flags & 1) != 0))
		return wg_seterr(err, WG_EFORMAT, "%s: %s: the local file header says the member "
				 "is %sencrypted, the central directory that it is %s", z->name, name,
				 cenc ? "not " : "", cenc ? "encrypted" : "not");
	if (non_ascii(raw)) {
		const char *strict = zip_get_name(z->za, i, ZIP_FL_ENC_STRICT);
		bool cutf8 = strict && !strcmp(strict, raw);
		if (cutf8 != ((flags & 0x800) != 0))
			return wg_seterr(err, WG_EFORMAT, "%s: %s: the name is %s in the local file "
					 "header and %s in the central directory (installers would "
					 "name the file differently)", z->name, name,
					 cutf8 ? "CP437" : "UTF-8", cutf8 ? "UTF-8" : "CP437");
	}
	/* Sizes and CRC: libzip compared them; a data descriptor (flag 3) is compared here. */
	uint64_t dd = 0;
	if (flags & 8) {
		uint64_t e = data + st.comp_size;
		bool z64 = st.comp_size >= 0xffffffffu || st.size >= 0xffffffffu ||
			   lcs == 0xffffffffu || lus == 0xffffffffu;
		uint64_t w = z64 ? 8 : 4, sig = len - e >= 4 && le(base + e, 4) == 0x08074b50 ? 4 : 0;
		dd = sig + 4 + 2 * w;
		if (len - e < dd)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: the data descriptor its local header "
					 "announces is missing", z->name, name);
		const uint8_t *d = base + e + sig;
		if (le(d, 4) != st.crc || le(d + 4, (int)w) != st.comp_size ||
		    le(d + 4 + w, (int)w) != st.size)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: the data descriptor says CRC %08llx, "
					 "%llu bytes compressed, %llu uncompressed; the central "
					 "directory %08x, %llu, %llu", z->name, name,
					 (unsigned long long)le(d, 4),
					 (unsigned long long)le(d + 4, (int)w),
					 (unsigned long long)le(d + 4 + w, (int)w), st.crc,
					 (unsigned long long)st.comp_size, (unsigned long long)st.size);
	} else if (lcrc != st.crc || (lcs != 0xffffffffu && lcs != st.comp_size) ||
		   (lus != 0xffffffffu && lus != st.size)) {
		return wg_seterr(err, WG_EFORMAT, "%s: %s: the local file header says CRC %08x, "
				 "%llu bytes compressed, %llu uncompressed; the central directory "
				 "%08x, %llu, %llu", z->name, name, lcrc, (unsigned long long)lcs,
				 (unsigned long long)lus, st.crc, (unsigned long long)st.comp_size,
				 (unsigned long long)st.size);
	}
	sp->from = hp;
	sp->to = data + st.comp_size + dd;
	sp->i = i;
	if (cd_off != NO_CD && sp->to > cd_off)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: member data runs into the central "
				 "directory", z->name, name);
	if (st.comp_size)
		zm->off = data;
	return WG_OK;
}

static int check_layout(wg_zip *z, uint64_t cd_off, wg_err *err)
{
	if (!z->src.base || !z->ninfo)
		return WG_OK; /* read from a descriptor: every member streams through libzip */
	span *sp = malloc((size_t)z->ninfo * sizeof(*sp));
	if (!sp)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	int rc = WG_OK;
	uint64_t n = 0;
	for (uint64_t i = 0; i < z->ninfo && rc == WG_OK; i++)
		if ((rc = check_member(z, i, cd_off, &sp[n], err)) == WG_OK && sp[n].from != NO_OFF)
			n++;
	if (rc == WG_OK && n > 1) {
		qsort(sp, (size_t)n, sizeof(*sp), by_from);
		/* Sorted by start: a stretch overlaps an earlier one exactly when it starts before
		 * the farthest end so far. */
		uint64_t far = 0;
		for (uint64_t k = 1; k < n; k++) {
			if (sp[k].from < sp[far].to) {
				const span *a = &sp[far], *b = &sp[k];
				uint64_t to = a->to < b->to ? a->to : b->to;
				rc = wg_seterr(err, WG_EFORMAT, "%s: members %s and %s overlap (bytes "
					       "%llu to %llu of the archive are both's): members that "
					       "share compressed data are a zip bomb (one stream "
					       "inflated once per member); the archive is refused",
					       z->name, member_name(z, a->i), member_name(z, b->i),
					       (unsigned long long)b->from, (unsigned long long)to);
				break;
			}
			if (sp[k].to > sp[far].to)
				far = k;
		}
	}
	free(sp);
	return rc;
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
	out->absent = false;
	zip_uint8_t opsys = 0;
	zip_uint32_t attr = 0;
	out->symlink = zip_file_get_external_attributes(z->za, i, 0, &opsys, &attr) == 0 &&
		       opsys == ZIP_OPSYS_UNIX && ((attr >> 16) & 0170000) == 0120000;
	out->nul_in_name = false;
	if (i < z->ninfo) {
		/* Where the data is (off) was found, and checked, when the archive was opened. */
		zmember *zm = &z->info[i];
		zm->name = st.name;
		zm->elf = -1;
		zm->csize = st.comp_size;
		zm->method = st.comp_method;
		zm->crc = st.crc;
		out->nul_in_name = zm->nul;
		bool plain = !out->encrypted && (st.valid & ZIP_STAT_CRC) &&
			     (st.comp_method == ZIP_CM_STORE || st.comp_method == ZIP_CM_DEFLATE);
		zm->viewable = plain && (st.comp_size == 0 || zm->off != NO_OFF);
	}
	return WG_OK;
}

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

/*
 * input/: bytes in. The zip reader (zip.c), the member sources (installed.c: a zip archive or
 * an installed distribution's RECORD), RECORD's CSV (record_csv.c), files mapped into memory
 * (map.c) and the directory walk (walk.c). Nothing here knows what the bytes mean: the scan
 * dispatch of api/scan.c sniffs them and hands them to the readers of facts/.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_INPUT_H
#define WG_INPUT_H

#include "core/core.h"

/* ---- zip (zip.c, the only user of libzip) ---- */

typedef struct wg_zip wg_zip;
typedef struct {
	const char *name;
	uint64_t size, csize;
	const char *method;
	bool encrypted;
	/* an installed distribution's file that RECORD lists and that is not there: nothing
	 * to read (a zip member is never absent) */
	bool absent;
	bool symlink;     /* Unix external attributes say S_IFLNK */
	bool nul_in_name; /* the name holds a NUL byte: `name` is what precedes it */
} wg_zip_entry;

/* Both refuse an archive whose end-of-central-directory record declares more than
 * max_members members before libzip parses its directory, and name a duplicate member.
 * Opened from bytes in memory (a mapped file, a buffer), an archive is also refused when two
 * members share bytes (an overlapping zip bomb) or a local file header disagrees with the
 * central directory (name, encryption or name-encoding flag, sizes, CRC, data descriptor). */
int wg_zip_open_fd(wg_zip **out, int fd, const char *name, uint32_t max_members, wg_err *err);
int wg_zip_open_buffer(wg_zip **out, const void *data, size_t len, const char *name,
		       uint32_t max_members, wg_err *err);
void wg_zip_close(wg_zip *z);
int64_t wg_zip_count(wg_zip *z);
int wg_zip_stat(wg_zip_entry *out, wg_zip *z, uint64_t i, wg_err *err);
/**
 * Streams member i through cb in chunks (one member at a time per archive: they take turns);
 * fails when the data is longer or shorter than
 * declared, or the CRC or the compressed stream is bad.
 */
/** What a callback returns to end a read before its end (nothing more is wanted of it), and
 * then what the reader returns (wg_zip_stream: without a size, CRC or hash). */
#define WG_ZSTREAM_STOP 2
/* A callback returns WG_OK to go on, a negative code to fail the read, or WG_ZSTREAM_STOP
 * (below) when it wants no more: the reader may stop there and return it. */
typedef int (*wg_chunk_cb)(const uint8_t *data, size_t n, void *payload);
int wg_zip_read(wg_zip *z, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
		wg_err *err);

/** A worker's buffer for views of deflated members (grown as needed, kept from member to
 * member) and its decompressor; zero-initialised before first use. */
typedef struct wg_zbuf {
	uint8_t *out;
	size_t cap;
	bool mapped;
	struct libdeflate_decompressor *dec;
} wg_zbuf;
void wg_zbuf_free(wg_zbuf *b);
/** b holds at least n bytes (mapped, not touched yet: faulted in as it is written). */
bool wg_zbuf_reserve(wg_zbuf *b, uint64_t n);
/** Faults in [p, p + len) of a buffer another thread may be writing, without changing a byte:
 * the kernel's cost of fresh pages (a quarter of a 541 MB inflate here) moved to an idle core. */
void wg_zbuf_prefault(const uint8_t *p, size_t len);
/** Whether member i's first 4 bytes (inflated if need be, through libzip, under the archive's
 * lock) are ELF's magic: bounded work, whatever is wrong further on in the member. */
bool wg_zip_starts_as_elf(wg_zip *z, uint64_t i);
/** Whether wg_zip_view inflates member i whole into a wg_zbuf of `declared` bytes. */
bool wg_zip_inflates_whole(wg_zip *z, uint64_t i, uint64_t declared);
/**
 * Member i whole, in one pass: hands it to cb in blocks (after each block's CRC-32) and checks
 * the CRC against the directory; then *data points at its declared bytes: in place in the
 * archive (stored) or in b (deflated), valid until b is used again or the archive is closed.
 * Returns 1 when the member is not one to view (read it with wg_zip_read). Needs wg_zip_stat
 * of member i first; views of different members may run at once on different threads, each
 * with its own b.
 */
int wg_zip_view(wg_zip *z, uint64_t i, uint64_t declared, wg_zbuf *b, wg_chunk_cb cb,
		void *payload, const uint8_t **data, wg_err *err);
/** Done with member i's view: the pages of the archive it alone occupies leave the process's
 * memory (a mapped archive of 760 MB is not all held at the end). */
void wg_zip_release(wg_zip *z, uint64_t i);

/* ---- members streamed (zip_stream.c: ISA-L) ---- */

/** A worker's state for streamed members, made once and reused member to member: its block
 * buffer, ISA-L's inflate state and a SHA-256 context. Nothing else is allocated while a
 * member streams, whatever its size. */
typedef struct wg_zstream wg_zstream;
#define WG_ZSTREAM_BLOCK (1u << 20) /* the default block buffer */
/** block: the buffer's size in bytes (0: WG_ZSTREAM_BLOCK); NULL when out of memory. */
wg_zstream *wg_zstream_new(size_t block);
void wg_zstream_free(wg_zstream *s);
/** The size of s's block buffer: no block handed on is longer. */
size_t wg_zstream_block(const wg_zstream *s);
/** The member's bytes [off, off + n), in order; valid during the call only. A negative return
 * stops the stream and is returned. */
typedef int (*wg_block_cb)(const uint8_t *data, size_t n, uint64_t off, void *payload);

/** A member streamed to its end: its size, CRC-32 (both as the directory says) and SHA-256. */
typedef struct {
	uint64_t size;
	uint32_t crc;
	uint8_t sha256[32];
} wg_zstream_sum;
/**
 * Member i in one pass, in blocks of at most wg_zstream_block(s) bytes handed to cb (cb may
 * be NULL): a stored member from the archive's bytes in place, a deflated one inflated by
 * ISA-L into s's buffer; CRC-32 and SHA-256 read each block. Fails (one line naming the file
 * and member) on a corrupt or truncated deflate stream, data longer than `declared` (found at
 * its first byte past it: a bomb stops there) or shorter, or a CRC that differs from the
 * directory's; then *sum is not filled. Work is bounded by the member's compressed bytes.
 * Returns 1 when the member is not one to stream (not stored or deflated, encrypted, not
 * located, an archive read from a descriptor, an empty deflated member): read it with
 * wg_zip_read. Needs wg_zip_stat of member i first; members may stream at once on different
 * threads, each with its own s.
 */
int wg_zip_stream(wg_zip *z, uint64_t i, uint64_t declared, wg_zstream *s, wg_block_cb cb,
		  void *payload, wg_zstream_sum *sum, wg_err *err);
/** For a wg_block_cb that keeps a range of a member as it passes: copies the bytes of the
 * block [off, off + n) that fall in [from, from + len) to dst + (their offset - from); returns
 * how many. */
size_t wg_span_take(uint8_t *dst, uint64_t from, uint64_t len, const uint8_t *data, size_t n,
		    uint64_t off);

/* ---- member sources (installed.c): what the wheel reader reads members from ---- */

/** A zip archive or an installed distribution, read the same way. */
typedef struct wg_members {
	void *self;
	int64_t (*count)(void *self);
	int (*stat)(wg_zip_entry *out, void *self, uint64_t i, wg_err *err);
	int (*read)(void *self, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
		    wg_err *err);
	/* wg_zip_view's contract; NULL when members are only read (an installed distribution) */
	int (*view)(void *self, uint64_t i, uint64_t declared, wg_zbuf *b, wg_chunk_cb cb,
		    void *payload, const uint8_t **data, wg_err *err);
	void (*release)(void *self, uint64_t i); /* done with a view (may be NULL) */
	/* wg_zip_stream's contract, the source's stream state given (NULL: members are read) */
	int (*stream)(void *self, uint64_t i, uint64_t declared, wg_zstream *s, wg_block_cb cb,
		      void *payload, wg_zstream_sum *sum, wg_err *err);
	/* wg_zip_inflates_whole's contract (NULL: never) */
	bool (*inflates_whole)(void *self, uint64_t i, uint64_t declared);
	/* wg_zip_starts_as_elf's contract (NULL: not known without reading) */
	bool (*starts_as_elf)(void *self, uint64_t i);
	bool installed; /* an installed distribution: no filename, no zip limits to apply */
	const char *installer; /* its INSTALLER's first line, or NULL */
	bool repackaged; /* installed by no wheel installer (wg_scan_is_repackaged) */
} wg_members;
void wg_members_zip(wg_members *m, wg_zip *z);

/** An installed distribution: the files a `*.dist-info`'s RECORD lists under its site
 * directory (paths leaving it, such as `../../bin/x`, are not members). */
typedef struct wg_installed wg_installed;
int wg_installed_open(wg_installed **out, const char *dist_info, uint32_t max_members,
		      wg_err *err);
void wg_installed_close(wg_installed *d);
/** RECORD paths outside the site directory, left out. */
size_t wg_installed_skipped(const wg_installed *d);
void wg_members_installed(wg_members *m, wg_installed *d);
/** The site directory holding the distribution, and its i-th file (a RECORD path under it;
 * NULL past the last): *regular when it is a regular file there. */
const char *wg_installed_site(const wg_installed *d);
const char *wg_installed_file(const wg_installed *d, size_t i, bool *regular);
/** Whether path names a `*.dist-info` directory. */
bool wg_is_dist_info(const char *path);

/* ---- RECORD's CSV (record_csv.c: libcsv) ---- */

typedef struct {
	const char *path, *algo, *digest;
	int64_t size; /* -1 when empty */
	bool used;
} wg_record_row;

int wg_record_parse(wg_vec *rows, wg_arena *a, const char *text, size_t len, wg_err *err);
/** wg_record_parse that stops (WG_ELIMIT) at more than max_rows rows. */
int wg_record_parse_max(wg_vec *rows, wg_arena *a, const char *text, size_t len, size_t max_rows,
			wg_err *err);

/* ---- files (map.c) and directories (walk.c) ---- */

/** A regular file mapped into memory (an empty one is an empty image). */
typedef struct {
	const uint8_t *data;
	size_t len;
	bool mapped;
} wg_file_image;
int wg_file_map(wg_file_image *img, int fd, const char *name, uint64_t size, wg_err *err);
void wg_file_unmap(wg_file_image *img);
/** What the directory walk hands on, and to whom. A callback's negative return stops the
 * walk, and wg_dir_walk returns it. */
typedef struct wg_walk {
	wg_arena *arena; /* the paths handed on are made here */
	const char *root; /* the input, named when the file count runs out */
	uint32_t max_files; /* past it, a WG_ELIMIT problem and the walk stops */
	void *payload;
	/** a problem met on the way: unreadable, nested too deeply, too many files */
	void (*problem)(void *payload, int code, const char *path, const char *msg);
	/** a directory: 1 when it is an input of its own (listed by the callback, not walked
	 * into), 0 to walk into it */
	int (*dir)(void *payload, const char *full, const char *name);
	/** a regular file named *.whl: an input of its own */
	int (*wheel)(void *payload, const char *full);
	/** whether a regular file of at least 4 bytes starting with head is to be handed on */
	bool (*wanted)(const uint8_t head[4]);
	/** a wanted file, mapped (full: its path; rel: under the walked directory) */
	int (*file)(void *payload, const char *full, const char *rel, const uint8_t *data,
		    size_t len);
} wg_walk;
/** Walks the directory path in sorted order, links skipped, 64 levels deep at most; WG_OK,
 * WG_ELIMIT past max_files, WG_ENOMEM, or a callback's negative return. */
int wg_dir_walk(const wg_walk *w, const char *path);

#endif

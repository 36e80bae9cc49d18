/*
 * input/: bytes in. The zip reader, files mapped into memory and the directory walk. The
 * sources (a path, an fd, a buffer with a name, a directory: source.c, walk.c) sniff what they
 * opened and hand it to the readers of facts/, so those two files include facts/facts.h.
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
} wg_zip_entry;

/* Both refuse an archive whose end-of-central-directory record declares more than
 * max_members members before libzip parses its directory, and name a duplicate member. */
int wg_zip_open_fd(wg_zip **out, int fd, const char *name, uint32_t max_members, wg_err *err);
int wg_zip_open_buffer(wg_zip **out, const void *data, size_t len, const char *name,
		       uint32_t max_members, wg_err *err);
void wg_zip_close(wg_zip *z);
int64_t wg_zip_count(wg_zip *z);
int wg_zip_stat(wg_zip_entry *out, wg_zip *z, uint64_t i, wg_err *err);
/**
 * Streams member i through cb in chunks; fails when the data is longer or shorter than
 * declared, or the CRC or the compressed stream is bad.
 */
typedef int (*wg_chunk_cb)(const uint8_t *data, size_t n, void *payload);
int wg_zip_read(wg_zip *z, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
		wg_err *err);

/* ---- member sources (installed.c): what the wheel reader reads members from ---- */

/** A zip archive or an installed distribution, read the same way. */
typedef struct wg_members {
	void *self;
	int64_t (*count)(void *self);
	int (*stat)(wg_zip_entry *out, void *self, uint64_t i, wg_err *err);
	int (*read)(void *self, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
		    wg_err *err);
	bool installed; /* an installed distribution: no filename, no zip limits to apply */
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
/** Whether path names a `*.dist-info` directory. */
bool wg_is_dist_info(const char *path);

/* ---- sources (source.c, walk.c) ---- */

/** A regular file mapped into memory (an empty one is an empty image). */
typedef struct {
	const uint8_t *data;
	size_t len;
	bool mapped;
} wg_file_image;
int wg_file_map(wg_file_image *img, int fd, const char *name, uint64_t size, wg_err *err);
void wg_file_unmap(wg_file_image *img);
/** Walks the directory path into scan; WG_ENOMEM when it had to stop. */
int wg_dir_walk(wg_scan *scan, wg_scanner *s, const char *path);

#endif

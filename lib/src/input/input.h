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

int wg_zip_open_fd(wg_zip **out, int fd, const char *name, wg_err *err);
int wg_zip_open_buffer(wg_zip **out, const void *data, size_t len, const char *name, wg_err *err);
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

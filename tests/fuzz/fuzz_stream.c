/*
 * A zip archive from a stranger, its members streamed through ISA-L (input/zip_stream.c) in
 * blocks of an odd size, and held to what the stream promises and to the views of zip_read.c
 * (libdeflate, whole): offsets follow each other, no block is longer than the buffer or goes
 * past the declared size, a stream that succeeds produced exactly the declared size, a refusal
 * is one line naming the archive; where both readers read a member whole (the CRC checked by
 * each), they agree byte for byte. Aborts otherwise.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "input/input.h"

#define NAME "fuzz.whl"
#define BLOCK 4099
/* Members up to this size are also kept and read as views (larger ones only streamed). */
#define KEEP (16u << 20)
#define MAX_MEMBERS 64

typedef struct {
	uint8_t *copy; /* NULL: not kept */
	uint64_t declared, next;
} seen;

static int take(const uint8_t *data, size_t n, uint64_t off, void *payload)
{
	seen *k = payload;
	if (off != k->next || n == 0 || n > BLOCK || n > k->declared - off)
		abort();
	if (k->copy)
		memcpy(k->copy + off, data, n);
	k->next += n;
	return 0;
}

static int nothing(const uint8_t *data, size_t n, void *payload)
{
	(void)data;
	(void)n;
	(void)payload;
	return 0;
}

static void refusal(const wg_err *err)
{
	if (!err->msg[0] || strchr(err->msg, '\n') || strncmp(err->msg, NAME ": ", strlen(NAME) + 2))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static wg_zstream *s;
	if (!s && !(s = wg_zstream_new(BLOCK)))
		abort();
	wg_zip *z = NULL;
	wg_err err = {0};
	if (wg_zip_open_buffer(&z, data, size, NAME, 1000, &err) < 0)
		return 0;
	int64_t count = wg_zip_count(z);
	for (int64_t i = 0; i < count && i < MAX_MEMBERS; i++) {
		wg_zip_entry e;
		if (wg_zip_stat(&e, z, (uint64_t)i, &err) < 0)
			continue;
		seen k = {NULL, e.size, 0};
		if (e.size <= KEEP && !(k.copy = malloc(e.size ? e.size : 1)))
			abort();
		wg_zstream_sum sum;
		memset(&err, 0, sizeof(err));
		int rc = wg_zip_stream(z, (uint64_t)i, e.size, s, take, &k, &sum, &err);
		if (rc < 0)
			refusal(&err);
		if (rc == WG_OK && (sum.size != e.size || k.next != e.size))
			abort();
		if (k.copy) {
			wg_zbuf b = {0};
			const uint8_t *v = NULL;
			wg_err verr = {0};
			int vr = wg_zip_view(z, (uint64_t)i, e.size, &b, nothing, NULL, &v, &verr);
			if (vr < 0)
				refusal(&verr);
			/* Both read it whole: the same verdict, the same bytes. */
			if (vr == WG_OK && rc != 1 && (rc != WG_OK || memcmp(v, k.copy, e.size)))
				abort();
			if (rc == WG_OK && vr < 0)
				abort();
			wg_zbuf_free(&b);
			free(k.copy);
		}
	}
	wg_zip_close(z);
	return 0;
}

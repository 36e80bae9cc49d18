/*
 * Private to the zip reader's files, the only users of libzip: zip.c (the archive opened:
 * its bounds checked before libzip, libzip over the mapped bytes), zip_layout.c (the layout
 * libzip does not check, and each member's directory entry) and zip_read.c (members read:
 * views inflated by libdeflate, or streamed through libzip) and zip_stream.c (members streamed
 * through ISA-L in constant memory).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_INPUT_ZIP_INTERNAL_H
#define WG_INPUT_ZIP_INTERNAL_H

#include <pthread.h>

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
/* Where the end-of-central-directory record says the central directory starts: not told. */
#define NO_CD UINT64_MAX

/* A little-endian field of n bytes. */
static inline uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* zip_layout.c: the layout that libzip's consistency check leaves out (overlapping members,
 * the local headers' flags, data descriptors), checked once per archive as it is opened;
 * cd_off: where the central directory starts, or NO_CD. */
int wg_zip_check_layout(wg_zip *z, uint64_t cd_off, wg_err *err);

#endif

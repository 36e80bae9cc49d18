/*
 * The zip archive's layout and directory: what libzip's consistency check leaves out
 * (members that share bytes, the local headers' flags, data descriptors), checked once as the
 * archive is opened, and each member's directory entry (wg_zip_stat), kept for the views.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ZIP /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/zip_internal.h"

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

int wg_zip_check_layout(wg_zip *z, uint64_t cd_off, wg_err *err)
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

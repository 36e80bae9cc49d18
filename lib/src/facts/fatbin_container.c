/*
 * One CUDA fatbin container and its entries parsed (fatbin-format.md): the container header,
 * each entry's header (kind, architecture, flags, sizes, compression), and for PTX the
 * .version and .target read from the head of its text, decompressed (LZ4, zstd) into a small
 * buffer. Every read goes through rd() against the object's bounds; entry walks advance.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_FATBIN /* wg_seterr: what fails here */
#include <lz4.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "facts/fatbin_internal.h"

const char *wg_fatbin_kind_name(int kind)
{
	switch (kind) {
	case WG_FATBIN_PTX: return "ptx";
	case WG_FATBIN_SASS: return "sass";
	case WG_FATBIN_LTOIR: return "lto-ir";
	case 4: return "old-cubin";
	default: return "unknown";
	}
}

const char *wg_fatbin_compression_name(int c)
{
	switch (c) {
	case WG_FATBIN_COMP_NONE: return "none";
	case WG_FATBIN_COMP_LZ4: return "lz4";
	case WG_FATBIN_COMP_ZSTD: return "zstd";
	case WG_FATBIN_COMP_LEGACY: return "legacy";
	default: return "unknown";
	}
}

/* "sm_90a", "compute_100f", "lto_90": the names nvcc's -gencode uses. */
void wg_fatbin_arch_name(char *buf, size_t n, int kind, unsigned arch, char variant)
{
	const char *p = kind == WG_FATBIN_PTX ? "compute" : kind == WG_FATBIN_LTOIR ? "lto" : "sm";
	if (variant)
		snprintf(buf, n, "%s_%u%c", p, arch, variant);
	else
		snprintf(buf, n, "%s_%u", p, arch);
}

/* A zstd stream per thread, kept: made and freed for every PTX head, its window buffer (up to
 * the frame's window, megabytes) was fresh memory faulted in for 4 KiB of text, 2% of a check
 * of cuBLASLt. Freed when the thread ends. */
static pthread_key_t zkey;
static pthread_once_t zonce = PTHREAD_ONCE_INIT;

static void zfree(void *z)
{
	ZSTD_freeDStream(z);
}

static void zkey_make(void)
{
	if (pthread_key_create(&zkey, zfree) != 0)
		zkey = (pthread_key_t)-1;
}

static ZSTD_DStream *thread_zstd(bool *owned)
{
	pthread_once(&zonce, zkey_make);
	ZSTD_DStream *z = zkey != (pthread_key_t)-1 ? pthread_getspecific(zkey) : NULL;
	*owned = false;
	if (z) {
		ZSTD_DCtx_reset(z, ZSTD_reset_session_only);
		return z;
	}
	if (!(z = ZSTD_createDStream()))
		return NULL;
	if (zkey == (pthread_key_t)-1 || pthread_setspecific(zkey, z) != 0)
		*owned = true; /* no key: the caller frees it */
	return z;
}

/* The first bytes of a PTX payload (avail of them readable), decompressed if need be; returns
 * the text length. */
static size_t ptx_head(const uint8_t *payload, size_t avail, const wg_fatbin_entry *e, char *out,
		       size_t cap)
{
	size_t n = 0;
	if (e->compression == WG_FATBIN_COMP_NONE) {
		n = avail < cap - 1 ? avail : cap - 1;
		memcpy(out, payload, n);
	} else if (e->compression == WG_FATBIN_COMP_LZ4) {
		int r = LZ4_decompress_safe_partial((const char *)payload, out, (int)avail,
						    (int)(cap - 1), (int)(cap - 1));
		n = r > 0 ? (size_t)r : 0;
	} else if (e->compression == WG_FATBIN_COMP_ZSTD) {
		bool owned;
		ZSTD_DStream *z = thread_zstd(&owned);
		if (!z)
			return 0;
		ZSTD_inBuffer in = {payload, avail, 0};
		ZSTD_outBuffer o = {out, cap - 1, 0};
		/* Stop as soon as the small output buffer is full: nothing more is needed. */
		while (o.pos < o.size && in.pos < in.size) {
			size_t r = ZSTD_decompressStream(z, &o, &in);
			if (ZSTD_isError(r) || r == 0)
				break;
		}
		n = o.pos;
		if (owned)
			ZSTD_freeDStream(z);
	}
	out[n] = '\0';
	return n;
}

/*
 * The value of a PTX directive (".target sm_90a" -> "sm_90a") in the head text (len bytes, NUL
 * after them), copied into the arena. all: the text is the whole head (PTX_HEAD - 1 bytes, or
 * the payload when it is shorter). Of a shorter prefix (an object read sparsely keeps less)
 * the answer is the whole head's only when the directive and its value end inside it, or the
 * text stops at a NUL before its end: else returns false, nothing decided.
 */
static bool ptx_directive(wg_arena *a, const char *text, size_t len, bool all, const char *dir,
			  const char **out)
{
	size_t dl = strlen(dir);
	*out = NULL;
	for (const char *p = text; (p = strstr(p, dir)); p += dl) {
		if (p != text && p[-1] != '\n')
			continue;
		const char *v = p + dl;
		while (*v == ' ' || *v == '\t')
			v++;
		size_t n = strcspn(v, "\r\n/");
		if (!all && v + n == text + len)
			return false; /* the value may go on past the prefix */
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		*out = n ? wg_arena_strndup(a, v, n) : NULL;
		return true;
	}
	/* Not found: in the whole head, or in a prefix the search stopped in at a NUL. A match
	 * cut by the prefix's end would not have been found either: undecided. */
	return all || strlen(text) < len;
}

/*
 * Parses the entries of the container at off. strict: the stricter checks of the whole-file
 * scan, where a match of the magic may be chance. Returns 0, or a negative code with err set.
 */
int wg_fb_parse_container(wg_object *obj, wg_arena *a, const span *s, uint64_t off, bool strict,
			   const char *where, wg_fatbin_container *c, wg_vec *entries, wg_err *err)
{
	if (!rd(s, off, CONTAINER_HEADER))
		return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin container at offset %#llx: header "
				 "truncated", obj->path, where, (unsigned long long)off);
	const uint8_t *h = fb_at(s, off, CONTAINER_HEADER, NULL);
	uint16_t version = le16(h + 4), hsize = le16(h + 6);
	uint64_t fat = le64(h + 8);
	if (le32(h) != FATBIN_MAGIC || version != 1)
		return wg_seterr(err, WG_EFORMAT, "%s: %s: offset %#llx: not a fatbin container "
				 "(magic %#x, version %u)", obj->path, where, (unsigned long long)off,
				 le32(h), version);
	if (hsize < CONTAINER_HEADER || !rd(s, off, hsize) || !rd(s, off + hsize, fat))
		return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin container at offset %#llx: header "
				 "size %u + %llu bytes of entries run past the end of the data (%zu bytes)",
				 obj->path, where, (unsigned long long)off, hsize,
				 (unsigned long long)fat, s->len);
	if (strict && (fat == 0 || fat % 8 || hsize != CONTAINER_HEADER))
		return WG_EFORMAT;
	c->offset = off;
	c->size = hsize + fat;
	c->first_entry = entries->len;
	uint64_t p = off + hsize, end = off + hsize + fat;
	while (p < end) {
		if (end - p < ENTRY_HEADER_MIN) {
			/* Zero padding up to 8 bytes is tolerated; anything else is not. */
			bool zero = true;
			const uint8_t *z = fb_at(s, p, end - p, NULL);
			for (uint64_t i = 0; i < end - p; i++)
				zero = zero && z[i] == 0;
			if (zero && end - p < 8 && !strict)
				break;
			return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin entry at offset %#llx: %llu "
					 "bytes left, less than an entry header", obj->path, where,
					 (unsigned long long)p, (unsigned long long)(end - p));
		}
		const uint8_t *e = fb_at(s, p, ENTRY_HEADER_MIN, NULL);
		uint16_t kind = le16(e), ever = le16(e + 2);
		uint32_t ehs = le32(e + 4);
		uint64_t psize = le64(e + 8);
		uint32_t csize = le32(e + 16);
		uint64_t flags = le64(e + 0x28), usize = le64(e + 0x38);
		if (ehs < ENTRY_HEADER_MIN || ehs % 8 || ehs > end - p)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin entry at offset %#llx: header "
					 "size %u is invalid (at least 64, a multiple of 8, within the "
					 "container)", obj->path, where, (unsigned long long)p, ehs);
		if (psize > end - p - ehs)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin entry at offset %#llx: payload "
					 "of %llu bytes runs past the container's end at %#llx", obj->path,
					 where, (unsigned long long)p, (unsigned long long)psize,
					 (unsigned long long)end);
		if (csize > psize)
			return wg_seterr(err, WG_EFORMAT, "%s: %s: fatbin entry at offset %#llx: "
					 "compressed size %u exceeds its payload of %llu bytes", obj->path,
					 where, (unsigned long long)p, csize, (unsigned long long)psize);
		if (strict && ((kind != 1 && kind != 2 && kind != 8) || ever != 0x0101 || psize % 8 ||
			       le32(e + 0x1c) == 0 || le32(e + 0x1c) > 2000))
			return WG_EFORMAT;
		if (entries->len >= obj->fatbin_entries_max) {
			/* past the bound: checked and counted, not kept */
			obj->fatbin_entries_more++;
			p += (uint64_t)ehs + psize;
			continue;
		}
		wg_fatbin_entry *x = wg_vec_push(entries);
		if (!x)
			return wg_seterr(err, WG_ENOMEM, "out of memory");
		x->offset = p;
		x->container = obj->fatbin_containers.len;
		x->kind = kind;
		x->arch = le32(e + 0x1c);
		x->variant = flags & FB_ARCH_A ? 'a' : flags & FB_ARCH_F ? 'f' : 0;
		x->minor = le16(e + 0x18);
		x->major = le16(e + 0x1a);
		x->flags = flags;
		x->header_size = ehs;
		x->payload_size = psize;
		x->compressed_size = csize;
		x->uncompressed_size = usize;
		x->debug = (flags & FB_DEBUG) != 0;
		x->compression = !csize && !(flags & (FB_LZ4 | FB_ZSTD | FB_COMPRESS_LEGACY))
					 ? WG_FATBIN_COMP_NONE
				 : flags & FB_ZSTD ? WG_FATBIN_COMP_ZSTD
				 : flags & FB_LZ4  ? WG_FATBIN_COMP_LZ4
						   : WG_FATBIN_COMP_LEGACY;
		if (x->compression != WG_FATBIN_COMP_NONE && !csize)
			x->compressed_size = (uint32_t)psize; /* flagged but sizes not recorded */
		if (kind == WG_FATBIN_PTX && !(flags & FB_OBFUSCATED)) {
			char head[PTX_HEAD];
			uint64_t avail = x->compression == WG_FATBIN_COMP_NONE ? psize : x->compressed_size;
			/* A head kept apart (an object read sparsely) may hold less than the payload:
			 * what it gives is used only when that was enough (a full head, or all of it). */
			uint64_t got = 0;
			const uint8_t *src = fb_at(s, p + ehs, 1, &got);
			size_t hn = ptx_head(src, (size_t)(got < avail ? got : avail), x, head, sizeof(head));
			bool all = got >= avail || hn == sizeof(head) - 1;
			if (!ptx_directive(a, head, hn, all, ".version", &x->ptx_version) ||
			    !ptx_directive(a, head, hn, all, ".target", &x->ptx_target)) {
				hn = ptx_head(s->d + p + ehs, (size_t)avail, x, head, sizeof(head));
				ptx_directive(a, head, hn, true, ".version", &x->ptx_version);
				ptx_directive(a, head, hn, true, ".target", &x->ptx_target);
			}
			if (!hn)
				x->ptx_version = x->ptx_target = NULL;
		}
		p += (uint64_t)ehs + psize; /* ehs >= 64: always advances */
	}
	c->entry_count = entries->len - c->first_entry;
	return WG_OK;
}

/* Sections by name and by offset, virtual addresses to file offsets, a container added to
 * the object: what the walk here and loader_read (fatbin_loader.c) share. */
const wg_section *wg_fb_section_named(const wg_object *o, const char *name)
{
	for (size_t i = 0; i < o->nsections; i++)
		if (!strcmp(o->sections[i].name, name))
			return &o->sections[i];
	return NULL;
}

const wg_section *wg_fb_section_at(const wg_object *o, uint64_t off)
{
	for (size_t i = 0; i < o->nsections; i++) {
		const wg_section *sec = &o->sections[i];
		if (sec->has_contents && off >= sec->offset && off - sec->offset < sec->size)
			return sec;
	}
	return NULL;
}

/* File offset of virtual address va; UINT64_MAX if it maps to none. */
uint64_t wg_fb_va_to_offset(const addrmap *m, uint64_t va)
{
	if (m->seg) {
		size_t lo = 0, hi = m->n; /* first segment above va */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (m->seg[mid].vaddr <= va)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = 0; k < 8 && lo > k; k++) {
			const wg_segment *g = &m->seg[lo - 1 - k];
			if (va - g->vaddr < g->filesz && g->offset <= UINT64_MAX - (va - g->vaddr))
				return g->offset + (va - g->vaddr);
		}
		return UINT64_MAX;
	}
	const wg_object *o = m->o;
	for (size_t i = 0; i < o->nsections; i++) {
		const wg_section *sec = &o->sections[i];
		if (sec->has_contents && sec->vma && va >= sec->vma && va - sec->vma < sec->size)
			return sec->offset + (va - sec->vma);
	}
	return UINT64_MAX;
}

int wg_fb_add_container(wg_object *obj, wg_arena *a, const span *s, uint64_t off,
			 const wg_section *sec, bool registered, bool strict, wg_err *err)
{
	wg_fatbin_container c = {0};
	wg_vec *entries = &obj->fatbin_entries;
	size_t before = entries->len, more_before = obj->fatbin_entries_more;
	char where[128];
	snprintf(where, sizeof(where), "section %s", sec ? sec->name : "(none)");
	int rc = wg_fb_parse_container(obj, a, s, off, strict, where, &c, entries, err);
	if (rc < 0) {
		entries->len = before; /* drop what a failed container left */
		obj->fatbin_entries_more = more_before;
		return rc;
	}
	c.section = sec ? sec->name : NULL;
	c.registered = registered;
	wg_fatbin_container *slot = wg_vec_push(&obj->fatbin_containers);
	if (!slot)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	*slot = c;
	return WG_OK;
}

/*
 * The on-disk cache of the library index ($XDG_CACHE_HOME/wheelgate/libs/<sha256 of the
 * path>.wgl): a library's facts are reused while its path, size and mtime are the same. An
 * entry is one binary file, mapped and checked whole (magic, format version, CRC-32 of the
 * payload, every count, length and string offset) before any fact is used; its strings are
 * used in place, from the mapping the library keeps. Files are written to a temporary name
 * and renamed into place, so concurrent runs see a whole entry or none; an unreadable or
 * inconsistent entry is ignored and rewritten.
 *
 * An entry (native byte order and alignment: the cache is this machine's):
 *   header   "WGLIBIDX", u32 version, u32 crc32 of the payload, u64 payload length
 *   payload  u64 size, u64 mtime; u32 path, soname, rpath, runpath (string offsets);
 *            u32 torch_abi, nneeded, nverdefs, nverneeds, ndefs, nundefs, strtab length;
 *            u32 needed[nneeded], verdefs[nverdefs]; {u32 file, version, weak}[nverneeds];
 *            {u32 name, version, flags}[ndefs + nundefs]; strtab (NUL-terminated strings,
 *            shared; its last byte is NUL)
 * A string offset is below the strtab length, or NO_STR for none (where none is allowed).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h"

/* 3: binary entries, mapped (issue 14); 2 and before were JSON (<hash>.json: removed when
 * the entry is rewritten). */
#define CACHE_MAGIC "WGLIBIDX"
#define CACHE_VERSION 3u
#define CACHE_HEADER 24u
#define CACHE_FIXED 60u /* the payload's fixed part: 2 u64, 11 u32 */
#define NO_STR 0xffffffffu

static int mkdirs(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0700) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int wg_env_cache_open(wg_env *e, const char *dir)
{
	char buf[4096];
	if (dir && !*dir)
		return WG_OK; /* caching off */
	if (!dir) {
		const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
		if (xdg && *xdg == '/')
			snprintf(buf, sizeof(buf), "%s/wheelgate/libs", xdg);
		else if (home && *home)
			snprintf(buf, sizeof(buf), "%s/.cache/wheelgate/libs", home);
		else
			return WG_OK;
	} else {
		snprintf(buf, sizeof(buf), "%s/libs", dir);
	}
	if (mkdirs(buf) != 0)
		return WG_OK; /* no cache, not an error: everything is read from the files */
	e->cache_dir = strdup(buf);
	return WG_OK;
}

void wg_env_cache_close(wg_env *e)
{
	free(e->cache_dir);
	e->cache_dir = NULL;
}

static void entry_path(char *out, size_t n, const wg_env *e, const char *lib, const char *ext)
{
	uint8_t d[32];
	char hex[65];
	wg_sha256 *h = wg_sha256_new();
	if (!h) {
		snprintf(out, n, "%s/none", e->cache_dir);
		return;
	}
	wg_sha256_update(h, lib, strlen(lib));
	wg_sha256_final(h, d);
	wg_sha256_free(h);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	snprintf(out, n, "%s/%s.%s", e->cache_dir, hex, ext);
}

void wg_cache_entry_path(char *out, size_t n, const wg_env *e, const char *lib)
{
	entry_path(out, n, e, lib, "wgl");
}

/* ---- writing ---- */

/* The entry being built: the records (u32 words) and the string table, each strings stored
 * once (a hash of offsets over the table). A failed allocation marks it failed: an entry is
 * written whole or not at all. */
typedef struct {
	uint32_t *w;
	size_t nw, capw;
	char *s;
	size_t ns, caps;
	uint32_t *h; /* offset + 1, 0 empty */
	size_t hcap, hn;
	bool failed;
} builder;

static bool grow(void **p, size_t *cap, size_t need, size_t item)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap : 256;
	while (c < need)
		c *= 2;
	void *q = c < SIZE_MAX / item ? realloc(*p, c * item) : NULL;
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

static void put_word(builder *b, uint32_t v)
{
	if (b->failed || !grow((void **)&b->w, &b->capw, b->nw + 1, sizeof(*b->w))) {
		b->failed = true;
		return;
	}
	b->w[b->nw++] = v;
}

static uint32_t str_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static bool rehash(builder *b)
{
	size_t cap = b->hcap ? b->hcap * 2 : 1024;
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return false;
	for (size_t i = 0; i < b->hcap; i++)
		if (b->h[i]) {
			size_t k = str_hash(b->s + b->h[i] - 1) & (cap - 1);
			while (h[k])
				k = (k + 1) & (cap - 1);
			h[k] = b->h[i];
		}
	free(b->h);
	b->h = h;
	b->hcap = cap;
	return true;
}

/* The offset of s in the string table (added when new), NO_STR for NULL. */
static uint32_t str_off(builder *b, const char *s)
{
	if (!s || b->failed)
		return NO_STR;
	if ((b->hn + 1) * 2 > b->hcap && !rehash(b)) {
		b->failed = true;
		return NO_STR;
	}
	size_t k = str_hash(s) & (b->hcap - 1);
	for (; b->h[k]; k = (k + 1) & (b->hcap - 1))
		if (!strcmp(b->s + b->h[k] - 1, s))
			return b->h[k] - 1;
	size_t n = strlen(s) + 1;
	if (b->ns + n >= NO_STR - 1 || !grow((void **)&b->s, &b->caps, b->ns + n, 1)) {
		b->failed = true;
		return NO_STR;
	}
	memcpy(b->s + b->ns, s, n);
	uint32_t off = (uint32_t)b->ns;
	b->ns += n;
	b->h[k] = off + 1;
	b->hn++;
	return off;
}

static uint32_t sym_flags(const wg_libsym *s)
{
	return (uint32_t)((s->weak & 1) | (s->hidden & 1) << 1 | (s->torch & 1) << 2 |
			  (s->string_abi & 3) << 3);
}

static bool write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		c += k;
		n -= (size_t)k;
	}
	return true;
}

/* Packs l into one buffer (header and payload), or NULL; *len its length. */
static uint8_t *pack(const wg_lib *l, size_t *len)
{
	builder b = {0};
	uint32_t ints[11] = {
		str_off(&b, l->path), str_off(&b, l->soname), str_off(&b, l->rpath),
		str_off(&b, l->runpath), (uint32_t)l->torch_abi, (uint32_t)l->needed.n,
		(uint32_t)l->verdefs.n, (uint32_t)l->verneeds.len, (uint32_t)l->ndefs,
		(uint32_t)l->nundefs, 0};
	if (l->needed.n > UINT32_MAX || l->verdefs.n > UINT32_MAX ||
	    l->verneeds.len > UINT32_MAX || l->ndefs > UINT32_MAX || l->nundefs > UINT32_MAX)
		b.failed = true;
	for (size_t i = 0; i < l->needed.n; i++)
		put_word(&b, str_off(&b, l->needed.v[i]));
	for (size_t i = 0; i < l->verdefs.n; i++)
		put_word(&b, str_off(&b, l->verdefs.v[i]));
	for (size_t i = 0; i < l->verneeds.len; i++) {
		const wg_verneed *v = wg_vec_at(&l->verneeds, i);
		put_word(&b, str_off(&b, v->file));
		put_word(&b, str_off(&b, v->version));
		put_word(&b, v->weak ? 1 : 0);
	}
	for (int pass = 0; pass < 2; pass++) {
		const wg_libsym *s = pass ? l->undefs : l->defs;
		for (size_t i = 0, n = pass ? l->nundefs : l->ndefs; i < n; i++) {
			put_word(&b, str_off(&b, s[i].name));
			put_word(&b, str_off(&b, s[i].version));
			put_word(&b, sym_flags(&s[i]));
		}
	}
	if (!b.ns) /* an empty table: one NUL, so that its last byte is NUL */
		str_off(&b, "");
	ints[10] = (uint32_t)b.ns;
	size_t payload = CACHE_FIXED + b.nw * 4 + b.ns;
	uint8_t *out = b.failed ? NULL : malloc(CACHE_HEADER + payload);
	if (out) {
		uint8_t *p = out + CACHE_HEADER;
		uint64_t sm[2] = {l->size, l->mtime};
		memcpy(p, sm, 16);
		memcpy(p + 16, ints, sizeof(ints));
		memcpy(p + CACHE_FIXED, b.w, b.nw * 4);
		memcpy(p + CACHE_FIXED + b.nw * 4, b.s, b.ns);
		uint32_t ver = CACHE_VERSION, crc = libdeflate_crc32(0, p, payload);
		uint64_t plen = payload;
		memcpy(out, CACHE_MAGIC, 8);
		memcpy(out + 8, &ver, 4);
		memcpy(out + 12, &crc, 4);
		memcpy(out + 16, &plen, 8);
		*len = CACHE_HEADER + payload;
	}
	free(b.w);
	free(b.s);
	free(b.h);
	return out;
}

void wg_cache_put(wg_env *e, const wg_lib *l)
{
	if (!e->cache_dir)
		return;
	size_t len = 0;
	uint8_t *buf = pack(l, &len);
	if (!buf)
		return;
	char final[4200], tmp[4300];
	wg_cache_entry_path(final, sizeof(final), e, l->path);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", final);
	int fd = mkstemp(tmp);
	if (fd >= 0) {
		bool ok = write_all(fd, buf, len);
		ok = (close(fd) == 0) && ok;
		if (!ok || rename(tmp, final) != 0)
			unlink(tmp);
		else {
			/* the JSON entry of format 2, if any, is stale for good */
			entry_path(final, sizeof(final), e, l->path, "json");
			unlink(final);
		}
	}
	free(buf);
}

/* ---- reading ---- */

/* The string at offset o of the table (validated: o < ns, the table ends with NUL). */
static bool str_at(const char *tab, uint32_t ns, uint32_t o, bool may_be_none, const char **out)
{
	if (o == NO_STR) {
		*out = NULL;
		return may_be_none;
	}
	if (o >= ns)
		return false;
	*out = tab + o;
	return true;
}

static bool load_syms(wg_lib *l, const uint32_t *w, uint32_t n, const char *tab, uint32_t ns,
		      wg_libsym **out, size_t *count)
{
	*out = wg_arena_alloc(&l->arena, ((size_t)n + 1) * sizeof(wg_libsym));
	if (!*out)
		return false;
	for (uint32_t i = 0; i < n; i++, w += 3) {
		wg_libsym *s = &(*out)[i];
		if (!str_at(tab, ns, w[0], false, &s->name) ||
		    !str_at(tab, ns, w[1], true, &s->version) || w[2] > 31)
			return false;
		s->weak = w[2] & 1;
		s->hidden = (w[2] >> 1) & 1;
		s->torch = (w[2] >> 2) & 1;
		s->string_abi = (uint8_t)((w[2] >> 3) & 3);
	}
	*count = n;
	return true;
}

static bool load_strs(const uint32_t *w, uint32_t n, const char *tab, uint32_t ns,
		      wg_strlist *out)
{
	if (!n)
		return true;
	out->v = malloc((size_t)n * sizeof(*out->v));
	if (!out->v)
		return false;
	out->cap = n;
	for (uint32_t i = 0; i < n; i++)
		if (!str_at(tab, ns, w[i], false, &out->v[out->n++]))
			return false;
	return true;
}

/*
 * The library an entry of len bytes at map describes, when it is whole, of this format and
 * of the library at path with this size and mtime; else NULL. The strings point into map,
 * which the caller keeps (l->map) as long as the library.
 */
static wg_lib *parse(const uint8_t *map, size_t len, const char *path, uint64_t size,
		     uint64_t mtime, uint32_t max_symbols)
{
	uint32_t ver, crc;
	uint64_t plen;
	if (len < CACHE_HEADER + CACHE_FIXED || memcmp(map, CACHE_MAGIC, 8))
		return NULL;
	memcpy(&ver, map + 8, 4);
	memcpy(&crc, map + 12, 4);
	memcpy(&plen, map + 16, 8);
	if (ver != CACHE_VERSION || plen != len - CACHE_HEADER)
		return NULL;
	const uint8_t *p = map + CACHE_HEADER;
	uint64_t sm[2];
	uint32_t f[11];
	memcpy(sm, p, 16);
	memcpy(f, p + 16, sizeof(f));
	if (sm[0] != size || sm[1] != mtime)
		return NULL; /* stale: checked before the checksum, which reads it all */
	uint32_t nneeded = f[5], nverdefs = f[6], nvn = f[7], ndefs = f[8], nundefs = f[9];
	uint32_t ns = f[10];
	if (ndefs > max_symbols || nundefs > max_symbols || f[4] > WG_ABI_MIXED)
		return NULL; /* more than an object may have (max_symbols): rebuilt */
	/* u64 arithmetic from u32 counts: no overflow */
	uint64_t words = (uint64_t)nneeded + nverdefs + 3ull * nvn + 3ull * ndefs + 3ull * nundefs;
	if (CACHE_FIXED + words * 4 + ns != plen || !ns)
		return NULL;
	const uint32_t *w = (const uint32_t *)(p + CACHE_FIXED); /* the header is 24, 8-aligned */
	const char *tab = (const char *)(p + CACHE_FIXED + words * 4);
	if (tab[ns - 1] != '\0' || libdeflate_crc32(0, p, (size_t)plen) != crc)
		return NULL;
	const char *ep, *so;
	if (!str_at(tab, ns, f[0], false, &ep) || strcmp(ep, path) ||
	    !str_at(tab, ns, f[1], false, &so))
		return NULL;
	wg_lib *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	wg_vec_init(&l->verneeds, sizeof(wg_verneed));
	l->path = ep;
	l->soname = so;
	l->size = size;
	l->mtime = mtime;
	l->torch_abi = (wg_string_abi)f[4];
	bool ok = str_at(tab, ns, f[2], true, &l->rpath) && str_at(tab, ns, f[3], true, &l->runpath) &&
		  load_strs(w, nneeded, tab, ns, &l->needed) &&
		  load_strs(w + nneeded, nverdefs, tab, ns, &l->verdefs);
	w += (size_t)nneeded + nverdefs;
	for (uint32_t i = 0; ok && i < nvn; i++, w += 3) {
		wg_verneed *x = wg_vec_push(&l->verneeds);
		ok = x && str_at(tab, ns, w[0], false, &x->file) &&
		     str_at(tab, ns, w[1], false, &x->version) && w[2] <= 1;
		if (ok)
			x->weak = w[2];
	}
	ok = ok && load_syms(l, w, ndefs, tab, ns, &l->defs, &l->ndefs) &&
	     load_syms(l, w + 3ull * ndefs, nundefs, tab, ns, &l->undefs, &l->nundefs);
	if (!ok) {
		wg_lib_free(l);
		return NULL;
	}
	return l;
}

wg_lib *wg_cache_get(wg_env *e, const char *path, uint64_t size, uint64_t mtime)
{
	if (!e->cache_dir)
		return NULL;
	char file[4200];
	wg_cache_entry_path(file, sizeof(file), e, path);
	/* Only a regular file is a cache entry: a FIFO or device put there is never waited on
	 * (O_NONBLOCK, fstat), and an entry is bounded by what a library's index can hold. */
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	/* An entry over max_cache_entry is not read but rebuilt from the library. */
	const wg_options *o = &e->sc->ctx->opts;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > o->max_cache_entry ||
	    (uint64_t)st.st_size < CACHE_HEADER + CACHE_FIXED) {
		close(fd);
		return NULL; /* rebuilt from the library and written over */
	}
	size_t len = (size_t)st.st_size;
	void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	wg_lib *l = parse(map, len, path, size, mtime, o->max_symbols);
	if (!l) {
		munmap(map, len); /* corrupt or stale: read the library again (and rewrite it) */
		return NULL;
	}
	l->map = map;
	l->map_len = len;
	wg_lib_index(l);
	return l;
}

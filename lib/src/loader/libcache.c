/*
 * The on-disk cache of the library index ($XDG_CACHE_HOME/wheelgate/libs/<sha256 of the
 * path>.json, jansson): a library's facts are reused while its path, size and mtime are the
 * same. Files are written to a temporary name and renamed into place, so concurrent runs see
 * a whole entry or none; an unreadable or inconsistent entry is ignored and rewritten.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h"


/* 2: ELF facts read through PT_LOAD (issue 10): entries of the section-range reader are stale;
 * names that are not UTF-8 kept as hex. */
#define CACHE_FORMAT "wheelgate.libindex/2"

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

void wg_cache_entry_path(char *out, size_t n, const wg_env *e, const char *lib)
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
	snprintf(out, n, "%s/%s.json", e->cache_dir, hex);
}

/*
 * Names in an object are bytes, not necessarily UTF-8, and JSON strings must be UTF-8: such a
 * name is kept as {"hex": "..."}, so that a warm run reads back exactly what a cold one read.
 * (jansson refuses the bytes as a string; dropping them made warm and cold runs disagree.)
 */
static json_t *bytes_json(const char *s)
{
	if (!s)
		return json_null();
	if (wg_utf8_valid(s))
		return json_string(s);
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(s);
	char *h = malloc(2 * n + 1);
	if (!h)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		h[2 * i] = hex[(unsigned char)s[i] >> 4];
		h[2 * i + 1] = hex[(unsigned char)s[i] & 15];
	}
	h[2 * n] = '\0';
	json_t *j = json_pack("{s:s}", "hex", h);
	free(h);
	return j;
}

/* The bytes of a bytes_json value in l's arena, or NULL (not a string, or malformed). */
static const char *bytes_value(wg_lib *l, json_t *j)
{
	if (json_is_string(j))
		return wg_arena_strdup(&l->arena, json_string_value(j));
	const char *h = json_string_value(json_object_get(j, "hex"));
	size_t n = h ? strlen(h) : 1;
	char *s = n % 2 == 0 ? wg_arena_alloc(&l->arena, n / 2 + 1) : NULL;
	for (size_t i = 0; s && i < n / 2; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1 || !v)
			return NULL;
		s[i] = (char)v;
	}
	if (s)
		s[n / 2] = '\0';
	return s;
}

/* Appends v to a, or marks the whole array failed: an entry is written whole or not at all. */
static bool append(json_t *a, json_t *v)
{
	return v && json_array_append_new(a, v) == 0;
}

static json_t *syms_json(const wg_libsym *s, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++) {
		int flags = s[i].weak | s[i].hidden << 1 | s[i].torch << 2 | s[i].string_abi << 3;
		if (!append(a, json_pack("[o, o, i]", bytes_json(s[i].name), bytes_json(s[i].version),
					 flags))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *strs_json(const wg_strlist *l)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->n; i++)
		if (!append(a, bytes_json(l->v[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

void wg_cache_put(wg_env *e, const wg_lib *l)
{
	if (!e->cache_dir)
		return;
	json_t *vn = json_array();
	for (size_t i = 0; vn && i < l->verneeds.len; i++) {
		const wg_verneed *v = wg_vec_at(&l->verneeds, i);
		if (!append(vn, json_pack("[o, o, b]", bytes_json(v->file), bytes_json(v->version),
					  v->weak))) {
			json_decref(vn);
			return;
		}
	}
	json_t *j = json_pack("{s:s, s:o, s:I, s:I, s:o, s:o, s:o, s:i, s:o, s:o, s:o, s:o, s:o}",
		"format", CACHE_FORMAT, "path", bytes_json(l->path), "size", (json_int_t)l->size,
		"mtime", (json_int_t)l->mtime, "soname", bytes_json(l->soname),
		"rpath", bytes_json(l->rpath), "runpath", bytes_json(l->runpath),
		"torch_abi", (int)l->torch_abi, "needed", strs_json(&l->needed),
		"verdefs", strs_json(&l->verdefs), "verneeds", vn,
		"defs", syms_json(l->defs, l->ndefs), "undefs", syms_json(l->undefs, l->nundefs));
	if (!j)
		return;
	char final[4200], tmp[4300];
	wg_cache_entry_path(final, sizeof(final), e, l->path);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", final);
	int fd = mkstemp(tmp);
	if (fd >= 0) {
		FILE *f = fdopen(fd, "w");
		bool ok = f && json_dumpf(j, f, JSON_COMPACT) == 0;
		if (f)
			ok = (fclose(f) == 0) && ok;
		else
			close(fd);
		if (!ok || rename(tmp, final) != 0)
			unlink(tmp);
	}
	json_decref(j);
}

static bool load_syms(wg_lib *l, json_t *a, wg_libsym **out, size_t *n, uint32_t max)
{
	size_t len = json_array_size(a);
	if (len > max)
		return false; /* more than an object may have (max_symbols): rebuilt */
	*out = wg_arena_alloc(&l->arena, (len + 1) * sizeof(wg_libsym));
	if (!*out || !json_is_array(a))
		return false;
	for (size_t i = 0; i < len; i++) {
		json_t *it = json_array_get(a, i);
		json_t *ver = json_array_get(it, 1);
		json_int_t flags = json_integer_value(json_array_get(it, 2));
		wg_libsym *s = &(*out)[i];
		s->name = bytes_value(l, json_array_get(it, 0));
		s->version = json_is_null(ver) ? NULL : bytes_value(l, ver);
		if (!s->name || (!s->version && !json_is_null(ver)))
			return false;
		s->weak = flags & 1;
		s->hidden = (flags >> 1) & 1;
		s->torch = (flags >> 2) & 1;
		s->string_abi = (uint8_t)((flags >> 3) & 3);
	}
	*n = len;
	return true;
}

static bool load_strs(wg_lib *l, json_t *a, wg_strlist *out)
{
	if (!json_is_array(a))
		return false;
	for (size_t i = 0; i < json_array_size(a); i++) {
		const char *s = bytes_value(l, json_array_get(a, i));
		if (!s || wg_strlist_add(out, &l->arena, s) < 0)
			return false;
	}
	return true;
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
	/* An entry over max_cache_entry (libtorch_cpu.so's 78k symbols take about 12 MiB) is
	 * not read but rebuilt from the library. */
	const wg_options *o = &e->sc->ctx->opts;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > o->max_cache_entry) {
		close(fd);
		return NULL; /* rebuilt from the library and written over */
	}
	/* Read whole, then parsed: json_loadfd reads a byte per system call (a 40 MB entry took
	 * 70 s). The size is the one fstat gave, within max_cache_entry. */
	size_t want = (size_t)st.st_size, got = 0;
	char *text = malloc(want ? want : 1);
	while (text && got < want) {
		ssize_t n = read(fd, text + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	json_error_t je;
	json_t *j = text && got == want ? json_loadb(text, want, 0, &je) : NULL;
	free(text);
	if (!j)
		return NULL;
	wg_lib *l = calloc(1, sizeof(*l));
	bool ok = l != NULL;
	const char *fmt = json_string_value(json_object_get(j, "format"));
	const char *p = ok ? bytes_value(l, json_object_get(j, "path")) : NULL;
	ok = ok && fmt && !strcmp(fmt, CACHE_FORMAT) && p && !strcmp(p, path) &&
	     (uint64_t)json_integer_value(json_object_get(j, "size")) == size &&
	     (uint64_t)json_integer_value(json_object_get(j, "mtime")) == mtime;
	if (ok) {
		wg_vec_init(&l->verneeds, sizeof(wg_verneed));
		const char *so = bytes_value(l, json_object_get(j, "soname"));
		l->path = wg_arena_strdup(&l->arena, path);
		l->soname = so;
		l->rpath = bytes_value(l, json_object_get(j, "rpath"));
		l->runpath = bytes_value(l, json_object_get(j, "runpath"));
		l->size = size;
		l->mtime = mtime;
		l->torch_abi = (wg_string_abi)json_integer_value(json_object_get(j, "torch_abi"));
		json_t *vn = json_object_get(j, "verneeds");
		ok = so && load_strs(l, json_object_get(j, "needed"), &l->needed) &&
		     load_strs(l, json_object_get(j, "verdefs"), &l->verdefs) && json_is_array(vn) &&
		     load_syms(l, json_object_get(j, "defs"), &l->defs, &l->ndefs, o->max_symbols) &&
		     load_syms(l, json_object_get(j, "undefs"), &l->undefs, &l->nundefs,
			       o->max_symbols);
		for (size_t i = 0; ok && i < json_array_size(vn); i++) {
			json_t *it = json_array_get(vn, i);
			const char *f = bytes_value(l, json_array_get(it, 0));
			const char *v = bytes_value(l, json_array_get(it, 1));
			wg_verneed *x = f && v ? wg_vec_push(&l->verneeds) : NULL;
			ok = x != NULL;
			if (ok) {
				x->file = f;
				x->version = v;
				x->weak = json_is_true(json_array_get(it, 2));
			}
		}
	}
	json_decref(j);
	if (!ok) {
		wg_lib_free(l); /* corrupt or stale: read the library again (and rewrite it) */
		return NULL;
	}
	wg_lib_index(l);
	return l;
}

/*
 * Small memory helpers: an arena for the strings of one scan, growable arrays and buffers.
 * Every size computation here is checked for overflow.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>
#include <string.h>

#include "core/core.h"

struct wg_arena_chunk {
	wg_arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

#define WG_ARENA_CHUNK (64 * 1024)

/* n bytes at a multiple of align (a power of two, at most max_align_t's) */
static void *arena_alloc(wg_arena *a, size_t n, size_t align)
{
	if (n == 0)
		n = 1;
	if (n > SIZE_MAX - sizeof(max_align_t))
		return NULL;
	wg_arena_chunk *c = a->head;
	size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
	if (!c || at > c->cap || c->cap - at < n) {
		size_t cap = n > WG_ARENA_CHUNK ? n : WG_ARENA_CHUNK;
		if (cap > SIZE_MAX - sizeof(*c))
			return NULL;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		at = 0;
		/* A big allocation goes behind the current chunk so that its free space stays usable. */
		if (a->head && n > WG_ARENA_CHUNK / 4) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = (char *)c->data + at;
	c->used = at + n;
	return p;
}

void *wg_arena_alloc(wg_arena *a, size_t n)
{
	return arena_alloc(a, n, sizeof(max_align_t));
}

char *wg_arena_strndup(wg_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *p = arena_alloc(a, n + 1, 1); /* strings need no alignment: no padding */
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *wg_arena_strdup(wg_arena *a, const char *s)
{
	return s ? wg_arena_strndup(a, s, strlen(s)) : NULL;
}

char *wg_arena_printf(wg_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *p = arena_alloc(a, (size_t)n + 1, 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void wg_arena_free(wg_arena *a)
{
	wg_arena_chunk *c = a->head;
	while (c) {
		wg_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
}

void wg_vec_init(wg_vec *v, size_t item_size)
{
	v->items = NULL;
	v->len = v->cap = 0;
	v->item_size = item_size;
}

void *wg_vec_push(wg_vec *v)
{
	if (v->len == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 8;
		if (cap < v->cap || cap > SIZE_MAX / v->item_size)
			return NULL;
		void *p = realloc(v->items, cap * v->item_size);
		if (!p)
			return NULL;
		v->items = p;
		v->cap = cap;
	}
	void *item = (char *)v->items + v->len * v->item_size;
	memset(item, 0, v->item_size);
	v->len++;
	return item;
}

void *wg_vec_at(const wg_vec *v, size_t i)
{
	return i < v->len ? (char *)v->items + i * v->item_size : NULL;
}

void wg_vec_free(wg_vec *v)
{
	free(v->items);
	v->items = NULL;
	v->len = v->cap = 0;
}

int wg_strlist_add(wg_strlist *l, wg_arena *a, const char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		if (cap > SIZE_MAX / sizeof(*l->v))
			return WG_ENOMEM;
		const char **v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return WG_ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	const char *copy = wg_arena_strdup(a, s);
	if (!copy)
		return WG_ENOMEM;
	l->v[l->n++] = copy;
	return WG_OK;
}

void wg_strlist_free(wg_strlist *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

int wg_buf_append(wg_buf *b, const char *s, size_t n)
{
	if (n > SIZE_MAX - b->len - 1)
		return WG_ENOMEM;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1) {
			if (cap > SIZE_MAX / 2)
				return WG_ENOMEM;
			cap *= 2;
		}
		char *p = realloc(b->s, cap);
		if (!p)
			return WG_ENOMEM;
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return WG_OK;
}

void wg_buf_free(wg_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

bool wg_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int wg_path_dir_len(const char *dir)
{
	size_t n = strlen(dir);
	while (n > 0 && dir[n - 1] == '/')
		n--;
	return n > INT_MAX ? INT_MAX : (int)n;
}

bool wg_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- text from strangers: valid UTF-8 for JSON, no control bytes for terminals ---- */

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *p)
{
	unsigned char c = p[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return (p[1] & 0xC0) == 0x80 ? 2 : 0;
	if (c >= 0xE0 && c <= 0xEF) {
		unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
		return p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
		return p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80
			       ? 4 : 0;
	}
	return 0;
}

bool wg_utf8_valid(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_seq(p);
		if (!n)
			return false;
		p += n;
	}
	return true;
}

unsigned wg_utf8_unsafe(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	if (n == 1)
		return *p < 0x20 || *p == 0x7F ? *p : 0;
	if (n == 2) {
		unsigned c = (unsigned)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
		return c < 0xA0 || c == 0x061C ? c : 0; /* C1; ARABIC LETTER MARK */
	}
	if (n == 3) {
		unsigned c = (unsigned)(p[0] & 0x0F) << 12 | (unsigned)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
		/* LRM, RLM; LINE and PARAGRAPH SEPARATOR; LRE..RLO; LRI..PDI */
		return c == 0x200E || c == 0x200F || (c >= 0x2028 && c <= 0x202E) ||
			       (c >= 0x2066 && c <= 0x2069)
			       ? c : 0;
	}
	return 0;
}

int wg_buf_escape(wg_buf *b, const char *s, unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	int rc = WG_OK;
	for (const unsigned char *p = (const unsigned char *)s; *p && rc == WG_OK;) {
		size_t n = utf8_seq(p);
		/* C0 controls, DEL, the C1 controls (U+0080..U+009F) that terminals obey, and the
		 * bidi controls that reorder what a reader sees ("Trojan Source"). */
		unsigned unsafe = n && (flags & WG_ESCAPE_CONTROL) ? wg_utf8_unsafe((const char *)p, n) : 0;
		if (n && !unsafe) {
			rc = wg_buf_append(b, (const char *)p, n);
			p += n;
			continue;
		}
		if (n > 1) { /* a C1 or bidi control: its code point */
			char u[7] = {'\\', 'u', hex[unsafe >> 12], hex[(unsafe >> 8) & 15],
				     hex[(unsafe >> 4) & 15], hex[unsafe & 15], 0};
			rc = wg_buf_append(b, u, 6);
			p += n;
			continue;
		}
		char x[5] = {'\\', 'x', hex[*p >> 4], hex[*p & 15], 0};
		rc = wg_buf_append(b, x, 4);
		p++;
	}
	if (rc == WG_OK && !b->s)
		rc = wg_buf_append(b, "", 0);
	return rc;
}

char *wg_json_dump(const json_t *j, size_t flags)
{
	static const char hex[] = "0123456789abcdef";
	char *s = j ? json_dumps(j, flags) : NULL;
	if (!s)
		return NULL;
	/* jansson writes valid UTF-8 and escapes C0 itself; DEL, C1 and bidi controls it writes
	 * raw. Outside strings a JSON document is ASCII without DEL, so each such character is
	 * inside a string, where \uNNNN means the same. */
	wg_buf b = {0};
	const char *run = s;
	for (const char *p = s; *p;) {
		size_t n = utf8_seq((const unsigned char *)p);
		n = n ? n : 1;
		unsigned c = n == 1 && *p == 0x7F ? 0x7F : n > 1 ? wg_utf8_unsafe(p, n) : 0;
		if (!c) {
			p += n;
			continue;
		}
		char u[7] = {'\\', 'u', hex[c >> 12], hex[(c >> 8) & 15], hex[(c >> 4) & 15],
			     hex[c & 15], 0};
		if (wg_buf_append(&b, run, (size_t)(p - run)) < 0 || wg_buf_append(&b, u, 6) < 0) {
			wg_buf_free(&b);
			free(s);
			return NULL;
		}
		p += n;
		run = p;
	}
	if (!b.s)
		return s;
	if (wg_buf_append(&b, run, strlen(run)) < 0) {
		wg_buf_free(&b);
		free(s);
		return NULL;
	}
	free(s);
	return b.s;
}

WG_API int wg_escape(char **out, const char *s, unsigned int flags)
{
	if (!out || !s)
		return wg_null_arg("wg_escape");
	wg_buf b = {0};
	int rc = wg_buf_escape(&b, s, flags | WG_ESCAPE_UTF8);
	if (rc < 0) {
		wg_buf_free(&b);
		*out = NULL;
		return rc;
	}
	*out = b.s;
	return WG_OK;
}

void wg_arena_adopt(wg_arena *a, wg_arena *from)
{
	if (!from->head)
		return;
	/* The adopted chunks go behind a's head, so that a's current chunk stays the one
	 * allocations are served from. */
	wg_arena_chunk *last = from->head;
	while (last->next)
		last = last->next;
	if (a->head) {
		last->next = a->head->next;
		a->head->next = from->head;
	} else {
		a->head = from->head;
	}
	from->head = NULL;
}

/* ---- the string map ---- */

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h ^ (h >> 29);
}

bool wg_strmap_init(wg_strmap *m, size_t expect)
{
	size_t cap = 16;
	while (cap < expect * 2 && cap < ((size_t)1 << 40))
		cap <<= 1;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	m->cap = cap;
	m->n = 0;
	if (!m->keys || !m->vals) {
		wg_strmap_free(m);
		return false;
	}
	return true;
}

void wg_strmap_free(wg_strmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->n = 0;
}

size_t wg_strmap_get(const wg_strmap *m, const char *key)
{
	if (!m->cap)
		return SIZE_MAX;
	for (size_t i = (size_t)str_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return SIZE_MAX;
		if (!strcmp(m->keys[i], key))
			return m->vals[i];
	}
}

static bool strmap_grow(wg_strmap *m)
{
	wg_strmap bigger;
	if (m->cap > SIZE_MAX / 4 || !wg_strmap_init(&bigger, m->cap))
		return false;
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			wg_strmap_put(&bigger, m->keys[i], m->vals[i]);
	wg_strmap_free(m);
	*m = bigger;
	return true;
}

size_t wg_strmap_put(wg_strmap *m, const char *key, size_t val)
{
	if ((m->n + 1) * 2 > m->cap && !strmap_grow(m))
		return SIZE_MAX - 1;
	for (size_t i = (size_t)str_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i]) {
			m->keys[i] = key;
			m->vals[i] = val;
			m->n++;
			return SIZE_MAX;
		}
		if (!strcmp(m->keys[i], key))
			return m->vals[i];
	}
}

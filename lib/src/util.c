/*
 * Small memory helpers: an arena for the strings of one scan, growable arrays and buffers.
 * Every size computation here is checked for overflow.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct wg_arena_chunk {
	wg_arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

#define WG_ARENA_CHUNK (64 * 1024)

void *wg_arena_alloc(wg_arena *a, size_t n)
{
	size_t align = sizeof(max_align_t);
	n = (n + align - 1) & ~(align - 1);
	if (n == 0)
		n = align;
	wg_arena_chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > WG_ARENA_CHUNK ? n : WG_ARENA_CHUNK;
		if (cap > SIZE_MAX - sizeof(*c))
			return NULL;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		/* A big allocation goes behind the current chunk so that its free space stays usable. */
		if (a->head && n > WG_ARENA_CHUNK / 4) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

char *wg_arena_strndup(wg_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *p = wg_arena_alloc(a, n + 1);
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
	char *p = wg_arena_alloc(a, (size_t)n + 1);
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

bool wg_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * The fact model: a scan with its objects and problems (one ELF image read into an object:
 * object.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_INPUT /* wg_seterr: what fails here */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/facts.h"

/* ---------------------------------------------------------------------------------------- */
/* the fact model                                                                           */

wg_scan *wg_scan_new(wg_scan_kind kind, const char *path, const wg_context *ctx)
{
	wg_scan *scan = calloc(1, sizeof(*scan));
	if (!scan)
		return NULL;
	scan->kind = kind;
	scan->ctx = ctx;
	scan->file_size = -1;
	wg_vec_init(&scan->members, sizeof(wg_member));
	wg_vec_init(&scan->objects, sizeof(wg_object *));
	wg_vec_init(&scan->problems, sizeof(wg_problem));
	wg_vec_init(&scan->sources, sizeof(wg_source));
	if (!(scan->path = wg_arena_strdup(&scan->arena, path))) {
		free(scan);
		return NULL;
	}
	return scan;
}

WG_API void wg_scan_free(wg_scan *scan)
{
	if (!scan)
		return;
	for (size_t i = 0; i < scan->objects.len; i++) {
		wg_object *o = *(wg_object **)wg_vec_at(&scan->objects, i);
		wg_strlist_free(&o->needed);
		wg_vec_free(&o->fatbin_containers);
		wg_vec_free(&o->fatbin_entries);
		wg_vec_free(&o->verneeds);
		wg_strlist_free(&o->verdefs);
	}
	for (size_t i = 0; i < WG_ARRAY_LEN(scan->lists); i++)
		wg_strlist_free(&scan->lists[i]);
	wg_strlist_free(&scan->wheels);
	wg_strlist_free(&scan->kernel.archs);
	wg_vec_free(&scan->members);
	wg_vec_free(&scan->objects);
	wg_vec_free(&scan->problems);
	for (size_t i = 0; i < scan->sources.len; i++)
		free(((wg_source *)wg_vec_at(&scan->sources, i))->text);
	wg_vec_free(&scan->sources);
	wg_arena_free(&scan->arena);
	free(scan);
}

static size_t code_slot(int code)
{
	return code <= 0 && code > -WG_PROBLEM_CODES ? (size_t)-code : WG_PROBLEM_CODES - 1;
}

size_t wg_scan_problems_more_of(const wg_scan *scan, int code)
{
	return scan ? scan->problems_more[code_slot(code)] : 0;
}

void wg_scan_add_problem(wg_scan *scan, int code, const char *where, const char *fmt, ...)
{
	/* Past the bound of its code (a RECORD of a million rows naming no member): counted,
	 * the message never formatted. The bound is per code so that one kind of problem in
	 * bulk never hides the first of another. */
	size_t slot = code_slot(code);
	uint32_t max = scan->ctx ? scan->ctx->opts.max_problems : 0;
	if (max && scan->problems_kept[slot] >= max) {
		scan->problems_more[slot]++;
		return;
	}
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wg_problem *p = wg_vec_push(&scan->problems);
	if (!p)
		return;
	p->code = code;
	p->where = where ? wg_arena_strdup(&scan->arena, where) : NULL;
	p->message = wg_arena_strdup(&scan->arena, msg);
	if (!p->message)
		scan->problems.len--;
	else
		scan->problems_kept[slot]++;
}

wg_object *wg_scan_new_object(wg_scan *scan, const char *path, uint64_t size)
{
	wg_object *o = wg_arena_alloc(&scan->arena, sizeof(*o));
	if (!o)
		return NULL;
	memset(o, 0, sizeof(*o));
	o->path = wg_arena_strdup(&scan->arena, path);
	o->size = size;
	wg_vec_init(&o->verneeds, sizeof(wg_verneed));
	wg_object **slot = wg_vec_push(&scan->objects);
	if (!slot || !o->path)
		return NULL;
	*slot = o;
	return o;
}

static wg_string_abi abi_of(unsigned n_new, unsigned n_old)
{
	return n_new && n_old ? WG_ABI_MIXED : n_new ? WG_ABI_NEW : n_old ? WG_ABI_OLD : WG_ABI_NONE;
}

void wg_object_classify(wg_object *obj, wg_matcher *m)
{
	memset(obj->counts, 0, sizeof(obj->counts));
	for (size_t i = 0; i < obj->nsyms; i++) {
		wg_sym *y = &obj->syms[i];
		unsigned bits;
		bool torch, runtime;
		wg_classify_symbol(m, y->name, y->demangled, &bits, &torch, &runtime);
		y->string_abi = (uint8_t)bits;
		y->torch = torch;
		y->runtime = runtime;
		y->surface = !y->defined || !runtime;
		if (!y->surface)
			continue;
		int base = torch ? 0 : 2;
		if (bits & WG_SYM_NEW_STRING)
			obj->counts[base]++;
		if (bits & WG_SYM_OLD_STRING)
			obj->counts[base + 1]++;
	}
	obj->torch_abi = abi_of(obj->counts[0], obj->counts[1]);
	obj->abi = abi_of(obj->counts[0] + obj->counts[2], obj->counts[1] + obj->counts[3]);
}

wg_pool *wg_context_pool(const wg_context *cctx)
{
	wg_context *ctx = (wg_context *)cctx; /* the pool is made once, under its lock */
	pthread_mutex_lock(&ctx->pool_lock);
	if (!ctx->pool_made) {
		ctx->pool_made = true;
		unsigned n = ctx->opts.jobs ? ctx->opts.jobs : wg_cpu_count();
		if (n > WG_POOL_MAX)
			n = WG_POOL_MAX;
		if (n > 1 && wg_pool_new(&ctx->pool, n - 1) < 0)
			ctx->pool = NULL;
	}
	wg_pool *p = ctx->pool;
	pthread_mutex_unlock(&ctx->pool_lock);
	return p;
}

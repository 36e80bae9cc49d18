/*
 * One ELF image read into a new object of a scan: the ELF facts (elf.c), the string-ABI
 * classification (scan.c), the Python extension name (pyext.c) and the fatbins (fatbin.c),
 * within the input's budget of fatbin entries.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_INPUT /* wg_seterr: what fails here */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "facts/facts.h"

typedef struct {
	wg_scan *scan;
	const char *where;
} fatbin_problem_ctx;

static void fatbin_problem(void *payload, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fatbin_problem(void *payload, int code, const char *fmt, ...)
{
	fatbin_problem_ctx *pc = payload;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (wg_scan_is_dist(pc->scan))
		wg_scan_add_problem(pc->scan, code, pc->where, "%s: %s", pc->scan->path, msg);
	else
		wg_scan_add_problem(pc->scan, code, pc->where, "%s", msg);
}

static int add_elf(wg_scan *scan, wg_scanner *s, const char *path, const char *relpath,
		   const uint8_t *data, size_t len, wg_sparse *sp);

/* Reads one ELF image into a new object of scan; problems are recorded, not returned. */
int wg_scan_add_elf(wg_scan *scan, wg_scanner *s, const char *path, const char *relpath,
		    const uint8_t *data, size_t len)
{
	return add_elf(scan, s, path, relpath, data, len, NULL);
}

int wg_scan_add_elf_sparse(wg_scan *scan, wg_scanner *s, const char *path, const char *relpath,
			   wg_sparse *sp, uint64_t len)
{
	return add_elf(scan, s, path, relpath, wg_sparse_image(sp), (size_t)len, sp);
}

static int add_elf(wg_scan *scan, wg_scanner *s, const char *path, const char *relpath,
		   const uint8_t *data, size_t len, wg_sparse *sp)
{
	wg_err err = {0};
	wg_object *o = wg_scan_new_object(scan, path, len);
	if (!o)
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	int rc = wg_elf_read(o, &scan->arena, data, len, s->ctx->opts.max_symbols, &err);
	if (rc == WG_ENOMEM)
		return wg_err_copy(&s->err, &err, rc);
	if (rc < 0) {
		o->error = wg_arena_strdup(&scan->arena, err.msg);
		/* Inside a wheel the message names the wheel too. */
		if (wg_scan_is_dist(scan))
			wg_scan_add_problem(scan, rc, path, "%s: %s", scan->path, err.msg);
		else
			wg_scan_add_problem(scan, rc, path, "%s", err.msg);
		return WG_OK;
	}
	wg_object_classify(o, s->matcher);
	wg_pyext_classify(o, &scan->arena, relpath);
	/* Read sparsely, a run whose ELF facts missed bytes is thrown away: the fatbin readers
	 * are not run on what it made of zeros (a section table that seems to lie would send
	 * them through every byte of the segments). */
	int64_t missing = sp ? wg_sparse_missing(sp, false) : 0;
	if (missing < 0)
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	if (missing)
		return WG_OK;
	fatbin_problem_ctx pc = {scan, path};
	/* The input's budget of entries: what its objects read before took their part. */
	uint32_t max = s->ctx->opts.max_fatbin_entries;
	size_t left = !max ? SIZE_MAX : scan->fatbin_entries_kept < max ? max - scan->fatbin_entries_kept : 0;
	size_t before = o->fatbin_entries.len;
	if (wg_fatbin_read_sparse(o, &scan->arena, data, len, left, sp, fatbin_problem, &pc) ==
	    WG_ENOMEM)
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	scan->fatbin_entries_kept += o->fatbin_entries.len - before;
	return WG_OK;
}

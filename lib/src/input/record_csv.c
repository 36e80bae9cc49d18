/*
 * RECORD: the CSV manifest of a wheel (path, hash "sha256=<urlsafe b64>", size), read with
 * libcsv so that quoted paths with commas are handled as the csv module writes them.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_WHEEL /* wg_seterr: what fails here */
#include <csv.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "input/input.h"

typedef struct {
	wg_vec *rows;
	wg_arena *a;
	const char *fields[3];
	int nfields;
	size_t line;
	int rc;
	wg_err *err;
	size_t max_rows;
} record_state;

static void on_field(void *s, size_t n, void *payload)
{
	record_state *st = payload;
	if (st->rc < 0)
		return;
	if (st->nfields >= 3) {
		st->rc = wg_seterr(st->err, WG_EFORMAT, "RECORD line %zu: more than 3 fields",
				   st->line + 1);
		return;
	}
	const char *f = wg_arena_strndup(st->a, s ? s : "", s ? n : 0);
	if (!f) {
		st->rc = WG_ENOMEM;
		return;
	}
	st->fields[st->nfields++] = f;
}

static void on_row(int c, void *payload)
{
	record_state *st = payload;
	(void)c;
	st->line++;
	if (st->rc < 0)
		return;
	if (st->nfields == 1 && st->fields[0][0] == '\0') {
		st->nfields = 0;
		return; /* blank line */
	}
	if (st->nfields != 3) {
		st->rc = wg_seterr(st->err, WG_EFORMAT,
				   "RECORD line %zu: expected 3 fields (path,hash,size), found %d",
				   st->line, st->nfields);
		return;
	}
	if (st->rows->len >= st->max_rows) {
		st->rc = wg_seterr(st->err, WG_ELIMIT, "RECORD has more than %zu rows, the limit "
				   "(max_record_rows); not read", st->max_rows);
		return;
	}
	wg_record_row *r = wg_vec_push(st->rows);
	if (!r) {
		st->rc = WG_ENOMEM;
		return;
	}
	r->path = st->fields[0];
	r->size = -1;
	const char *h = st->fields[1];
	if (*h) {
		const char *eq = strchr(h, '=');
		if (!eq) {
			st->rc = wg_seterr(st->err, WG_EFORMAT,
					   "RECORD line %zu: hash '%s' is not algorithm=digest", st->line, h);
			return;
		}
		r->algo = wg_arena_strndup(st->a, h, (size_t)(eq - h));
		r->digest = eq + 1;
	}
	const char *sz = st->fields[2];
	if (*sz) {
		char *end;
		errno = 0;
		long long v = strtoll(sz, &end, 10);
		if (errno || *end || v < 0) {
			st->rc = wg_seterr(st->err, WG_EFORMAT, "RECORD line %zu: bad size '%s'",
					   st->line, sz);
			return;
		}
		r->size = v;
	}
	st->nfields = 0;
}

int wg_record_parse(wg_vec *rows, wg_arena *a, const char *text, size_t len, wg_err *err)
{
	return wg_record_parse_max(rows, a, text, len, SIZE_MAX, err);
}

int wg_record_parse_max(wg_vec *rows, wg_arena *a, const char *text, size_t len, size_t max_rows,
			wg_err *err)
{
	struct csv_parser p;
	record_state st = {rows, a, {0}, 0, 0, WG_OK, err, max_rows};
	if (csv_init(&p, CSV_APPEND_NULL) != 0)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	if (csv_parse(&p, text, len, on_field, on_row, &st) != len && st.rc == WG_OK)
		st.rc = wg_seterr(err, WG_EFORMAT, "RECORD: %s", csv_strerror(csv_error(&p)));
	if (st.rc == WG_OK && csv_fini(&p, on_field, on_row, &st) != 0)
		st.rc = wg_seterr(err, WG_EFORMAT, "RECORD: %s", csv_strerror(csv_error(&p)));
	csv_free(&p);
	return st.rc;
}

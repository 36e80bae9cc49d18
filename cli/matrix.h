/*
 * `wheelgate matrix`: extension wheels (rows) judged against torch releases (columns): the
 * torch side (matrix_torch.c: a wheel read once into compact facts kept by sha256, stored
 * facts, or an installed environment), the cells (cmd_matrix.c: check's install profile on
 * the extension installed with that torch) and the formats (matrix_out.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_MATRIX_H
#define WG_CLI_MATRIX_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"

/* One torch release, a column. */
typedef struct {
	char *source;     /* as given */
	const char *from; /* "wheel", "facts" or "env" */
	char sha256[65];  /* the wheel's (wheel, facts); "" for env */
	char *version, *cuda, *python; /* NULL: unknown */
	int cxx11abi;     /* 1, 0, -1 unknown */
	bool stored;      /* the facts came from the store: the wheel was not read */
	size_t libraries; /* torch's libraries in the facts (libtorch*, libc10*) */
	wg_scan *scan;    /* the compact facts as a scan (wheel, facts); NULL for env */
	wg_env *env;      /* the environment cells are judged in */
	wg_scanner *env_sc;
	wg_target *target;
	char *tmpdir;     /* the empty prefix made for a wheel's or facts' environment */
	char *error;      /* why the column cannot be judged, or NULL */
} mx_torch;

/* One extension wheel, a row. */
typedef struct {
	char *path;
	wg_scan *scan;
	char *error;
} mx_ext;

typedef enum {
	MX_LOADS = 0, MX_PYTHON, MX_ABI, MX_CUDA, MX_LIBRARY, MX_SYMBOL, MX_SYSTEM, MX_ERROR
} mx_verdict;

/* One cell: the first reason it does not load (by the order of mx_verdict), with its facts. */
typedef struct {
	mx_verdict verdict;
	char *symbol, *demangled; /* MX_SYMBOL (also with MX_ABI when a symbol is missing) */
	size_t missing;           /* undefined symbols of that object */
	char *library;            /* MX_LIBRARY: the library not found */
	char *object;             /* the member whose load fails */
	char *message;            /* the finding's message (text from the wheel: escape it) */
	char *have, *want;        /* MX_PYTHON, MX_ABI, MX_CUDA: the extension's, torch's */
	char *rules;              /* every rule of the cell, comma-separated ("" when none) */
} mx_cell;

typedef struct {
	wg_context *ctx;
	wg_scanner *sc;
	const wg_ruleset *rs;
	const char *store;    /* the facts store (DIR), or NULL: none */
	bool quiet;
} mx_run;

/* matrix_torch.c */
/** Opens TORCH (a wheel, a stored facts file or sha256, an environment) into t: its facts,
 * its environment and target. -1 with t->error set when it cannot be judged. */
int mx_torch_open(mx_torch *t, const mx_run *r, const char *arg);
void mx_torch_free(mx_torch *t);
/** "2.11.0" or the source's file name when the version is not known. */
const char *mx_torch_label(const mx_torch *t);

/* matrix_out.c */
const char *mx_verdict_name(mx_verdict v);
void mx_out_text(FILE *f, const mx_torch *t, size_t nt, const mx_ext *e, size_t ne,
		 const mx_cell *c, bool color);
void mx_out_markdown(FILE *f, const mx_torch *t, size_t nt, const mx_ext *e, size_t ne,
		     const mx_cell *c);
int mx_out_json(FILE *f, const mx_torch *t, size_t nt, const mx_ext *e, size_t ne,
		const mx_cell *c);

#endif

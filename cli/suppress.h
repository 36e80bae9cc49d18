/*
 * Findings the user already knows: per-input ignores from the configuration (`ignore:`) and a
 * baseline file (--baseline FILE, written by --write-baseline FILE). Matching is by rule, the
 * input's name without its version (a wheel: name and tags), the member (a .dist-info or .data
 * directory without its version) and the symbol, so that a new release keeps its baseline.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_SUPPRESS_H
#define WG_CLI_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "wheelgate.h"

typedef struct suppress suppress;

/** ignores: the configuration's entries, each "GLOB\nSELECTOR,SELECTOR". NULL on error (err). */
suppress *suppress_new(char *const *ignores, size_t nignores, char *err, size_t errlen);
void suppress_free(suppress *s);
/** Reads a baseline: --write-baseline's file, or a `--format json` report. -1 with err. */
int suppress_load_baseline(suppress *s, const char *path, char *err, size_t errlen);
/** Every ignore's selectors must select a rule of rs; -1 with err (naming the nearest). */
int suppress_check_rules(const suppress *s, const wg_ruleset *rs, char *err, size_t errlen);
/** Takes the ignored and the baselined findings out of rep (input: the name it goes by): an
 * ignored one is removed, a baselined one suppressed (wg_report_suppress: SARIF keeps it,
 * marked); what stays is remembered for --write-baseline. -1 when out of memory. */
int suppress_apply(suppress *s, const wg_ruleset *rs, const char *input, wg_report *rep,
		   size_t *ignored, size_t *baselined);
/** Writes every finding seen (not ignored; baselined or new) as a baseline. -1 with err. */
int suppress_write_baseline(const suppress *s, const char *path, char *err, size_t errlen);

#endif

/*
 * Private to the check report formats: check_formats.c (JSON, and the dispatch of
 * wg_reports_format), check_sarif.c (SARIF 2.1.0) and check_text.c (text, the summary line,
 * GitHub workflow commands).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_OUTPUT_CHECK_INTERNAL_H
#define WG_OUTPUT_CHECK_INTERNAL_H

#include <jansson.h>

#include "output/output.h"

/* Every string from an input goes through wg_json_str: invalid UTF-8 is escaped, never the
 * finding dropped (a count would then disagree with the list). */
static inline json_t *nstr(const char *s)
{
	return s ? wg_json_str(s) : json_null();
}

/* ---- check_formats.c ---- */

/* The rules of a report not applied, with what each lacks. */
json_t *wg_cf_not_applied_json(const wg_report *r);
/* Adds the findings a report counted but did not list to c (by severity). */
void wg_cf_add_more(size_t c[3], const wg_report *r);

/* ---- check_sarif.c ---- */

json_t *wg_cf_sarif(const wg_ruleset *rs, const wg_target *target, const char *const *paths,
		    const wg_report *const *reports, const char *const *errors, size_t n,
		    wg_severity fail_on);
/* A finding's file as a file on disk (in an input directory, or beside an installed
 * distribution's .dist-info), never a member inside an archive; NULL when there is none. */
char *wg_cf_disk_file(const char *path, const wg_finding *f);
/* The result's text: the member (and the file and line inside an archive) where the message
 * does not name them, the message, the fix. */
char *wg_cf_result_text(const wg_finding *f, bool region);

/* ---- check_text.c ---- */

/* The line that closes `wheelgate check`: inputs, verdicts and findings counted. */
char *wg_cf_summary(const wg_target *target, const wg_report *const *reports, size_t n,
		    wg_severity fail_on);
/* GitHub workflow commands. */
char *wg_cf_github(const wg_target *target, const char *const *paths,
		   const wg_report *const *reports, const char *const *errors, size_t n,
		   wg_severity fail_on);
/* The rules not applied, once for all inputs: the block that closes the text. */
char *wg_cf_not_applied_text(const wg_report *const *reports, size_t n);
/* The text of `wheelgate check`. */
char *wg_cf_text(const char *const *paths, const wg_report *const *reports,
		 const char *const *errors, size_t n, wg_severity fail_on, bool color);

#endif

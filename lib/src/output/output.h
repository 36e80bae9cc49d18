/*
 * output/: documents made from facts and reports: the inspect JSON (inspect_json.c) with the
 * facts of a scan (facts_json.c), the inspect text (inspect_text.c, wg_scan_format_text in
 * wheelgate.h) and the check reports as JSON and SARIF (check_formats.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_OUTPUT_H
#define WG_OUTPUT_H

#include "rules/rules.h"

/** A JSON string of s, invalid UTF-8 escaped as \xNN (inspect_json.c); never NULL but out of
 * memory. */
struct json_t *wg_json_str(const char *s);

/** The version of the "facts" member: written by facts_json.c, read by store/facts_read.c. */
#define WG_FACTS_VERSION 1

/** Every fact of scan that the checks read, losslessly (facts_json.c): the "facts" member of
 * an inspect item written with WG_JSON_FACTS; NULL when out of memory. */
struct json_t *wg_facts_json(const wg_scan *scan);

/** The "wheelgate.check/1" document of n inputs (check_formats.c), NULL when out of memory;
 * wg_reports_format_doc (report_doc.c) adds a command's keys to it. */
struct json_t *wg_check_json(const wg_target *target, const char *const *paths,
			     const wg_report *const *reports, const char *const *errors, size_t n,
			     wg_severity fail_on);

#endif

/*
 * wheelgate: catch broken CUDA/C++ Python wheels before they are installed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of the public API: wheelgate.scan/1 records: one JSON Lines record per input written, and read back
 * (docs/scan.md).
 * Programs include <wheelgate.h>, whose opening comment gives the conventions (names,
 * errors, versioned structs, ownership, threads); this part compiles alone too.
 */
#ifndef WHEELGATE_RECORD_H
#define WHEELGATE_RECORD_H

#include "rules.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- wheelgate.scan/1: one JSON Lines record per input (docs/scan.md) ---- */

/** One target an input is judged for: an item of the record's "targets". */
typedef struct wg_scan_record_target {
	unsigned int version;
	const char *name;         /**< "default", "h100" */
	const wg_target *target;  /**< its profile */
	const wg_report *report;  /**< NULL: not judged (verdict "error") */
	/** (version 2) this target's fail-on (wheelgate.dask's targets may differ), or NULL:
	 * the record's */
	const wg_severity *fail_on;
} wg_scan_record_target;
#define WG_SCAN_RECORD_TARGET_VERSION 2
#define WG_SCAN_RECORD_TARGET_INIT { WG_SCAN_RECORD_TARGET_VERSION, NULL, NULL, NULL, NULL }

typedef struct wg_scan_record {
	unsigned int version;
	const char *path;        /**< the input as the record names it */
	const wg_scan *scan;     /**< its facts (name, version, tags), or NULL: not read */
	const char *sha256;      /**< 64 hex digits, or NULL */
	int64_t size;            /**< bytes, or -1: unknown */
	const wg_scan_record_target *targets;
	size_t ntargets;
	wg_severity fail_on;
	const char *facts;       /**< the stored facts it was judged from, or NULL */
	double seconds;
	const char *error;       /**< why it (or a target) could not be judged, or NULL */
} wg_scan_record;
#define WG_SCAN_RECORD_VERSION 1
#define WG_SCAN_RECORD_INIT \
	{ WG_SCAN_RECORD_VERSION, NULL, NULL, NULL, -1, NULL, 0, WG_SEV_ERROR, NULL, 0.0, NULL }

/** The record as one line of ASCII JSON, without its newline, into *out (wg_free). */
WG_API int wg_scan_record_format(char **out, const wg_scan_record *rec);

/** A record read back (--resume, a summary of records written before). */
typedef struct wg_scanrec wg_scanrec;
/** WG_EFORMAT (message in wg_error_last(), naming the first field that is wrong) for a line
 * that is not a wheelgate.scan/1 record: not a JSON object, another schema, "targets" not an
 * array of objects each with a string "target" and a "verdict" of pass, fail or error, or
 * "findings"/"more" entries without a string "rule", a known "severity", a count. */
WG_API int wg_scanrec_parse(wg_scanrec **out, const char *line, size_t len);
WG_API void wg_scanrec_free(wg_scanrec *rec);
typedef struct wg_scanrec_info {
	unsigned int version;
	const char *path, *name, *pkg_version; /**< NULL where the record has null */
	const char *sha256;  /**< 64 lower-case hex digits, or NULL */
	int64_t size;        /**< -1: null */
	const char *facts, *error;
	size_t ntargets;
} wg_scanrec_info;
#define WG_SCANREC_INFO_VERSION 1
#define WG_SCANREC_INFO_INIT { WG_SCANREC_INFO_VERSION, NULL, NULL, NULL, NULL, -1, NULL, NULL, 0 }
WG_API int wg_scanrec_get(wg_scanrec_info *out, const wg_scanrec *rec);
typedef struct wg_scanrec_target_info {
	unsigned int version;
	const char *target, *profile; /**< profile: NULL where the record has null */
	wg_verdict verdict;
	size_t counts[3];             /**< by wg_severity */
	/** (version 2) its findings (wg_scanrec_finding) and counted findings past a bound
	 * (wg_scanrec_more): counts is the sum of both */
	size_t nfindings, nmore;
} wg_scanrec_target_info;
#define WG_SCANREC_TARGET_INFO_VERSION 2
#define WG_SCANREC_TARGET_INFO_INIT \
	{ WG_SCANREC_TARGET_INFO_VERSION, NULL, NULL, WG_VERDICT_ERROR, {0, 0, 0}, 0, 0 }
/** Target i of the record; WG_ENOTFOUND past wg_scanrec_info.ntargets. */
WG_API int wg_scanrec_target(wg_scanrec_target_info *out, const wg_scanrec *rec, size_t i);

/** One finding of a target, as the record holds it (the strings are the record's, valid until
 * wg_scanrec_free; the escaping for a terminal is the caller's). */
typedef struct wg_scanrec_finding_info {
	unsigned int version;
	const char *rule;
	wg_severity severity;
	const char *message, *member, *symbol; /**< NULL where the record has null */
} wg_scanrec_finding_info;
#define WG_SCANREC_FINDING_INFO_VERSION 1
#define WG_SCANREC_FINDING_INFO_INIT \
	{ WG_SCANREC_FINDING_INFO_VERSION, NULL, WG_SEV_INFO, NULL, NULL, NULL }
/** Finding i of target t; WG_ENOTFOUND past either count. */
WG_API int wg_scanrec_finding(wg_scanrec_finding_info *out, const wg_scanrec *rec, size_t t,
			      size_t i);

/** Findings of one rule past the report's bound, counted ("more" in docs/scan.md). */
typedef struct wg_scanrec_more_info {
	unsigned int version;
	const char *rule;
	size_t count;       /**< findings of the rule counted, not kept */
	size_t severity[3]; /**< of them, by wg_severity (as wg_more_info) */
} wg_scanrec_more_info;
#define WG_SCANREC_MORE_INFO_VERSION 1
#define WG_SCANREC_MORE_INFO_INIT { WG_SCANREC_MORE_INFO_VERSION, NULL, 0, {0, 0, 0} }
/** Counted entry i of target t; WG_ENOTFOUND past either count. */
WG_API int wg_scanrec_more(wg_scanrec_more_info *out, const wg_scanrec *rec, size_t t, size_t i);

#ifdef __cplusplus
}
#endif
#endif /* WHEELGATE_RECORD_H */

/*
 * wg_reports_format: a report set to the document of the format asked for, each format's
 * writer called from here (JSON: check_formats.c, SARIF: check_sarif.c, text, summary and
 * GitHub commands: check_text.c), so the writers never call back into the dispatch.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/check_internal.h"

WG_API int wg_reports_format(char **out, wg_format format, const wg_ruleset *rs,
			     const wg_target *target, const char *const *paths,
			     const wg_report *const *reports, const char *const *errors, size_t n,
			     wg_severity fail_on)
{
	if (!out || (n && (!paths || !reports))) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_reports_format: no %s", out ? "paths or reports"
										: "place for the document");
		return WG_EINVAL;
	}
	*out = NULL;
	if (format == WG_FORMAT_TEXT || format == WG_FORMAT_TEXT_COLOR || format == WG_FORMAT_SUMMARY ||
	    format == WG_FORMAT_GITHUB || format == WG_FORMAT_NOT_APPLIED) {
		*out = format == WG_FORMAT_SUMMARY ? wg_cf_summary(target, reports, n, fail_on)
		       : format == WG_FORMAT_NOT_APPLIED ? wg_cf_not_applied_text(reports, n)
		       : format == WG_FORMAT_GITHUB ? wg_cf_github(target, paths, reports, errors, n, fail_on)
		       : wg_cf_text(paths, reports, errors, n, fail_on, format == WG_FORMAT_TEXT_COLOR);
		if (*out)
			return WG_OK;
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	json_t *doc = NULL;
	if (format == WG_FORMAT_SARIF)
		doc = wg_cf_sarif(rs, target, paths, reports, errors, n, fail_on);
	else if (format == WG_FORMAT_JSON || format == WG_FORMAT_JSON_COMPACT)
		doc = wg_check_json(target, paths, reports, errors, n, fail_on);
	if (!doc && format != WG_FORMAT_SARIF && format != WG_FORMAT_JSON &&
	    format != WG_FORMAT_JSON_COMPACT) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_reports_format: no format %d", (int)format);
		return WG_EINVAL;
	}
	/* The compact document is the same one on one line (a fleet envelope takes it whole). */
	*out = doc ? wg_json_dump(doc, (format == WG_FORMAT_JSON_COMPACT ? JSON_COMPACT
								: JSON_INDENT(2)) |
					       JSON_PRESERVE_ORDER)
		   : NULL;
	json_decref(doc);
	if (*out)
		return WG_OK;
	wg_set_error(WG_ERROR_CLASS_INVALID, WG_ENOMEM, "out of memory");
	return WG_ENOMEM;
}

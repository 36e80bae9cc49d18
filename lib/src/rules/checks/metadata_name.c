/*
 * metadata-name: the filename's name and version must be METADATA's (names compared after
 * PEP 503 normalisation, versions as written, local label included).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include <stdio.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const char *fn = s->fields[WG_WHEEL_NAME], *fv = s->fields[WG_WHEEL_VERSION];
	const char *mn = s->fields[WG_WHEEL_META_NAME], *mv = s->fields[WG_WHEEL_META_VERSION];
	if (s->kind != WG_SCAN_WHEEL || !fn || !mn || !fv || !mv)
		return WG_OK;
	if (!wg_rule_matches(cc, "name", mn, NULL, 0) && !wg_rule_matches(cc, "name", fn, NULL, 0))
		return WG_OK;
	wg_arena *a = &cc->report->arena;
	const char *nf = wg_normalize_name(a, fn), *nm = wg_normalize_name(a, mn);
	bool name_ok = nf && nm && !strcmp(nf, nm), version_ok = !strcmp(fv, mv);
	if (name_ok && version_ok)
		return WG_OK;
	wg_vars v = {0};
	wg_vars_set(&v, "filename_name", fn);
	wg_vars_set(&v, "metadata_name", mn);
	wg_vars_set(&v, "filename_version", fv);
	wg_vars_set(&v, "metadata_version", mv);
	wg_vars_set(&v, "what", !name_ok && !version_ok ? "name and version" : !name_ok ? "name"
											: "version");
	return wg_emit(cc, &v, s->fields[WG_WHEEL_DIST_INFO]
				    ? wg_check_printf(cc, "%s/METADATA", s->fields[WG_WHEEL_DIST_INFO])
				    : NULL, NULL, NULL, 0);
}

static const char *const patterns[] = {"name", NULL};
static const char *const vars[] = {"filename_name", "metadata_name", "filename_version",
				   "metadata_version", "what", NULL};
const wg_check_kind wg_check_metadata_name = {"metadata-name", run, patterns, vars,
	WG_FACT_FILENAME};

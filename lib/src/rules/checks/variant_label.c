/*
 * variant-label: a PEP 825 variant wheel whose filename's variant label and
 * .dist-info/variant.json disagree: a label without variant.json, a variant.json without a
 * label, two different labels, or a variant.json that cannot be used (not JSON, not exactly
 * one variant, properties of the wrong shape). Installers pick by the label and read the
 * properties from the file: when they disagree, one of them lies.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (s->kind != WG_SCAN_WHEEL)
		return WG_OK;
	const char *fl = s->fields[WG_WHEEL_VARIANT_LABEL];
	const char *jl = s->fields[WG_WHEEL_VARIANT_JSON_LABEL];
	const char *bad = s->fields[WG_WHEEL_VARIANT_ERROR];
	const char *di = s->fields[WG_WHEEL_DIST_INFO] ? s->fields[WG_WHEEL_DIST_INFO] : "*.dist-info";
	const char *problem = NULL;
	if (bad)
		problem = wg_check_printf(cc, "%s/variant.json cannot be used: %s", di, bad);
	else if (fl && !jl)
		problem = wg_check_printf(cc, "the filename carries the variant label '%s' but the "
					  "wheel has no %s/variant.json", fl, di);
	else if (!fl && jl)
		problem = wg_check_printf(cc, "%s/variant.json describes variant '%s' but the filename "
					  "carries no variant label", di, jl);
	else if (fl && jl && strcmp(fl, jl))
		problem = wg_check_printf(cc, "the filename's variant label is '%s' but %s/variant.json "
					  "describes variant '%s'", fl, di, jl);
	if (!problem)
		return WG_OK;
	wg_vars v = {0};
	wg_vars_set(&v, "problem", problem);
	wg_vars_set(&v, "label", fl ? fl : "(none)");
	wg_vars_set(&v, "json_label", jl ? jl : "(none)");
	return wg_emit(cc, &v, bad || jl ? wg_check_printf(cc, "%s/variant.json", di) : NULL, NULL,
		       NULL, 0);
}

static const char *const vars[] = {"problem", "label", "json_label", NULL};
const wg_check_kind wg_check_variant_label = {"variant-label", run, NULL, vars, WG_FACT_FILENAME};

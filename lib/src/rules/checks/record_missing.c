/*
 * record-missing: a wheel without a .dist-info/RECORD: nothing in it can be verified, and
 * pip cannot uninstall it cleanly.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (s->kind != WG_SCAN_WHEEL || s->has_record)
		return WG_OK;
	wg_vars v = {0};
	wg_vars_set(&v, "dist_info", s->fields[WG_WHEEL_DIST_INFO] ? s->fields[WG_WHEEL_DIST_INFO]
								    : "(no .dist-info)");
	return wg_emit(cc, &v, NULL, NULL, NULL, 0);
}

static const char *const vars[] = {"dist_info", NULL};
const wg_check_kind wg_check_record_missing = {"record-missing", run, NULL, vars, 0};

/*
 * imports-partial: the wheel holds more Python than the import checks examine
 * (max_python_bytes, max_python_lines): what they say rests on part of the code. The loader
 * checks then take every extension module as imported by `import <package>` (the strictest
 * reading), and the hollow-wheel check saw only the sources before the limit.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_scan_is_dist(s) || !s->python_partial)
		return WG_OK;
	wg_vars v = {0};
	wg_vars_set(&v, "member", s->python_partial);
	wg_vars_set(&v, "limit", s->python_partial_why ? s->python_partial_why : "and what follows were not read (a limit)");
	return wg_emit(cc, &v, s->python_partial, NULL, NULL, 0);
}

static const char *const vars[] = {"member", "limit", NULL};
const wg_check_kind wg_check_imports_partial = {"imports-partial", run, NULL, vars, 0};

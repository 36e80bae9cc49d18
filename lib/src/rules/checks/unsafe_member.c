/*
 * unsafe-member: member names that would be written outside the install directory (../x,
 * /etc/x), mean different things on different systems (backslashes), or appear twice.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	for (size_t i = 0; i < s->problems.len; i++) {
		const wg_problem *p = wg_vec_at(&s->problems, i);
		if (p->code != WG_EUNSAFE)
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "member", p->where ? p->where : "?");
		wg_vars_set(&v, "problem", p->message);
		int rc = wg_emit(cc, &v, p->where, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	/* those the scan counted past max_problems: findings counted, not kept */
	return wg_emit_count(cc, cc->severity, wg_scan_problems_more_of(s, WG_EUNSAFE));
}

static const char *const vars[] = {"member", "problem", NULL};
const wg_check_kind wg_check_unsafe_member = {"unsafe-member", run, NULL, vars, 0};

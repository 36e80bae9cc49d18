/*
 * unreadable: parts of the input wheelgate could not read or refused (corrupt members, ELF
 * objects that do not parse, members over a safety limit, malformed fatbins or metadata):
 * nothing about them can be vouched for.
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
		if (p->code == WG_EUNSAFE || p->code == WG_EINTEGRITY)
			continue; /* the record-* and unsafe-member rules report these */
		if (p->where && !wg_rule_in_scope(cc, false, p->where))
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "member", p->where ? p->where : s->path);
		wg_vars_set(&v, "problem", p->message);
		wg_vars_set(&v, "code", wg_error_name(p->code));
		int rc = wg_emit(cc, &v, p->where, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	/* problems the scan counted past max_problems: findings counted, not kept */
	size_t more = 0;
	for (int code = 0; code > -WG_PROBLEM_CODES; code--)
		if (code != WG_EUNSAFE && code != WG_EINTEGRITY)
			more += wg_scan_problems_more_of(s, code);
	return wg_emit_count(cc, cc->severity, more);
}

static const char *const vars[] = {"member", "problem", "code", NULL};
const wg_check_kind wg_check_unreadable = {"unreadable", run, NULL, vars, 0};

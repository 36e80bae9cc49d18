/*
 * record-unlisted: members RECORD does not list (files pip would install without knowing
 * them, and never remove), and RECORD rows naming no member.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	for (size_t i = 0; i < s->members.len; i++) {
		const wg_member *m = wg_vec_at(&s->members, i);
		if (m->record != WG_RECORD_MISSING || !wg_rule_in_scope(cc, false, m->name))
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "member", m->name);
		wg_vars_set(&v, "what", "is not listed in RECORD");
		int rc = wg_emit(cc, &v, m->name, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < s->lists[WG_LIST_RECORD_ORPHANS].n; i++) {
		const char *name = s->lists[WG_LIST_RECORD_ORPHANS].v[i];
		if (!wg_rule_in_scope(cc, false, name))
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "member", name);
		wg_vars_set(&v, "what", "is listed in RECORD but not in the wheel");
		int rc = wg_emit(cc, &v, name, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const vars[] = {"member", "what", NULL};
const wg_check_kind wg_check_record_unlisted = {"record-unlisted", run, NULL, vars, 0};

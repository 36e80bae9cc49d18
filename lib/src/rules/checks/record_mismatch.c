/*
 * record-mismatch: a member whose sha256 or size differs from its RECORD row: in a wheel, it
 * was altered after it was built (or RECORD was written wrong); in an installed distribution,
 * the file changed since it was installed. The shipped rules say which with `when: {input:}`.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const char *dist = wg_check_distribution(cc);
	if (!dist)
		return WG_ENOMEM;
	for (size_t i = 0; i < s->members.len; i++) {
		const wg_member *m = wg_vec_at(&s->members, i);
		if ((m->record != WG_RECORD_BAD_HASH && m->record != WG_RECORD_BAD_SIZE) ||
		    !wg_rule_in_scope(cc, false, m->name))
			continue;
		int rc;
		if (wg_emit_counted(cc, cc->severity, &rc)) { /* past the bound: no path made */
			if (rc < 0)
				return rc;
			continue;
		}
		const char *file = wg_check_member_file(cc, m->name);
		if (!file)
			return WG_ENOMEM;
		wg_vars v = {0};
		wg_vars_set(&v, "member", m->name);
		wg_vars_set(&v, "what", m->record == WG_RECORD_BAD_HASH ? "sha256" : "size");
		wg_vars_set(&v, "file", file);
		wg_vars_set(&v, "distribution", dist);
		if ((rc = wg_emit(cc, &v, m->name, NULL, NULL, 0)) < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const vars[] = {"member", "what", "file", "distribution", NULL};
const wg_check_kind wg_check_record_mismatch = {"record-mismatch", run, NULL, vars, 0};

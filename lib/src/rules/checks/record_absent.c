/*
 * record-absent: a file an installed distribution's RECORD lists that is not there (removed
 * since a wheel installer installed it: by hand, by a cleanup, by uninstalling another
 * distribution that shared it). Absent .pyc caches are no members at all (input/installed.c),
 * and a system's packaging's distributions give RECORD orphans instead (record-unlisted).
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
		if (m->record != WG_RECORD_ABSENT || !wg_rule_in_scope(cc, false, m->name))
			continue;
		const char *file = wg_check_member_file(cc, m->name);
		if (!file)
			return WG_ENOMEM;
		wg_vars v = {0};
		wg_vars_set(&v, "member", m->name);
		wg_vars_set(&v, "file", file);
		wg_vars_set(&v, "distribution", dist);
		int rc = wg_emit(cc, &v, m->name, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const vars[] = {"member", "file", "distribution", NULL};
const wg_check_kind wg_check_record_absent = {"record-absent", run, NULL, vars, 0};

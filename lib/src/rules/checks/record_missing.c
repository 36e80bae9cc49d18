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
	if (!wg_scan_is_dist(s) || s->has_record)
		return WG_OK;
	/* A RECORD that is there but was not read (too large, corrupt) is not missing: the
	 * unreadable rule says why it was not read. */
	const char *di = s->fields[WG_WHEEL_DIST_INFO];
	size_t dl = di ? strlen(di) : 0;
	for (size_t i = 0; di && i < s->members.len; i++) {
		const wg_member *m = wg_vec_at(&s->members, i);
		if (!strncmp(m->name, di, dl) && !strcmp(m->name + dl, "/RECORD"))
			return WG_OK;
	}
	wg_vars v = {0};
	wg_vars_set(&v, "dist_info", s->fields[WG_WHEEL_DIST_INFO] ? s->fields[WG_WHEEL_DIST_INFO]
								    : "(no .dist-info)");
	return wg_emit(cc, &v, NULL, NULL, NULL, 0);
}

static const char *const vars[] = {"dist_info", NULL};
const wg_check_kind wg_check_record_missing = {"record-missing", run, NULL, vars, 0};

/*
 * ld-not-read: a library an object needs was looked for where wheelgate does not read (a
 * RUNPATH outside the environment and the system's library directories), or was found but
 * not read (unreadable, not an ELF file, over the size limit): whether the import loads it
 * is not known, and is not taken as either.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	int rc = wg_check_ld(cc);
	for (size_t i = 0; i < cc->ld_issues.len && rc == WG_OK; i++) {
		const wg_ld_issue *x = wg_vec_at(&cc->ld_issues, i);
		if (x->kind != WG_LD_NOT_READ || !wg_rule_in_scope(cc, true, x->object) ||
		    wg_ld_seen_before(cc, i, false))
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "object", x->object);
		wg_vars_set(&v, "library", x->library);
		wg_vars_set(&v, "detail", x->detail ? x->detail : "");
		rc = wg_emit(cc, &v, x->object, NULL, NULL, 0);
	}
	return rc;
}

static const char *const vars[] = {"object", "library", "detail", NULL};
const wg_check_kind wg_check_ld_not_read = {"ld-not-read", run, NULL, vars, WG_FACT_ENV};

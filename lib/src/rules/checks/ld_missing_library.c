/*
 * ld-missing-library: a library an object needs (DT_NEEDED) is nowhere the loader looks:
 * not loaded by torch, not on its RPATH/RUNPATH, not in the system's directories.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	int rc = wg_check_ld(cc);
	for (size_t i = 0; i < cc->ld_issues.len && rc == WG_OK; i++) {
		const wg_ld_issue *x = wg_vec_at(&cc->ld_issues, i);
		if (x->kind != WG_LD_MISSING_LIBRARY || !wg_rule_in_scope(cc, true, x->object) ||
		    !wg_rule_matches(cc, "libraries", x->library, NULL, 0))
			continue;
		/* Once per object and library, however many loads meet it. */
		if (wg_ld_seen_before(cc, i, false))
			continue;
		const char *why;
		wg_severity sev = wg_ld_severity(cc, x->object, x->kind, &why);
		wg_vars v = {0};
		wg_vars_set(&v, "object", x->object);
		wg_vars_set(&v, "library", x->library);
		wg_vars_set(&v, "scope", why);
		/* Where the search ended: nowhere, or at a file that is not a library. */
		char *where = x->detail ? wg_check_printf(cc, "%s", x->detail)
			: wg_check_printf(cc, "is not loaded by torch, not on its RPATH/RUNPATH and not "
					  "in the system's library directories: importing it fails with "
					  "\"%s: cannot open shared object file\"", x->library);
		if (!where)
			return WG_ENOMEM;
		wg_vars_set(&v, "why", where);
		rc = wg_emit_sev(cc, sev, &v, x->object, NULL, NULL, 0);
	}
	return rc;
}

static const char *const patterns[] = {"libraries", NULL};
static const char *const vars[] = {"object", "library", "scope", "why", NULL};
const wg_check_kind wg_check_ld_missing_library = {"ld-missing-library", run, patterns, vars,
	WG_FACT_ENV};

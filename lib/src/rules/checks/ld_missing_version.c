/*
 * ld-missing-version: an object needs a symbol version its library does not define
 * ("version `GLIBC_2.38' not found", "GLIBCXX_3.4.32 not found"): the library on the target
 * system is older than the one it was built against.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	int rc = wg_check_ld(cc);
	for (size_t i = 0; i < cc->ld_issues.len && rc == WG_OK; i++) {
		const wg_ld_issue *x = wg_vec_at(&cc->ld_issues, i);
		if (x->kind != WG_LD_MISSING_VERSION || x->system || !wg_rule_in_scope(cc, true, x->object))
			continue;
		if (wg_ld_seen_before(cc, i, true))
			continue;
		const char *why;
		wg_severity sev = wg_ld_severity(cc, x->object, x->kind, &why);
		wg_vars v = {0};
		wg_vars_set(&v, "object", x->object);
		wg_vars_set(&v, "library", x->library);
		wg_vars_set(&v, "version", x->version);
		wg_vars_set(&v, "scope", why);
		rc = wg_emit_sev(cc, sev, &v, x->object, NULL, NULL, 0);
	}
	return rc;
}

static const char *const vars[] = {"object", "library", "version", "scope", NULL};
const wg_check_kind wg_check_ld_missing_version = {"ld-missing-version", run, NULL, vars,
	WG_FACT_ENV};

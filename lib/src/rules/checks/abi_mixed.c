/*
 * abi-mixed: one object whose torch-facing symbols carry both std::string ABIs (translation
 * units compiled with different _GLIBCXX_USE_CXX11_ABI): it cannot load against any torch.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_object *o;
	wg_for_each_object(cc, o) {
		if (o->torch_abi != WG_ABI_MIXED)
			continue;
		const wg_sym *n = NULL, *old = NULL;
		for (size_t j = 0; j < o->nsyms; j++) {
			const wg_sym *y = &o->syms[j];
			if (!y->torch || !y->surface)
				continue;
			if ((y->string_abi & WG_SYM_NEW_STRING) && !n)
				n = y;
			if ((y->string_abi & WG_SYM_OLD_STRING) && !old)
				old = y;
		}
		if (!n || !old || !wg_rule_matches(cc, "symbols", n->name, NULL, 0))
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "object", o->path);
		wg_vars_set(&v, "module", o->module ? o->module : o->path);
		wg_vars_set(&v, "new_symbol", n->name);
		wg_vars_set(&v, "old_symbol", old->name);
		wg_vars_set(&v, "new_count", wg_check_printf(cc, "%u", o->counts[0]));
		wg_vars_set(&v, "old_count", wg_check_printf(cc, "%u", o->counts[1]));
		int rc = wg_emit(cc, &v, cc->scan->kind == WG_SCAN_WHEEL ? o->path : NULL, old->name,
				 NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const patterns[] = {"symbols", NULL};
static const char *const vars[] = {"object", "module", "new_symbol", "old_symbol", "new_count",
				   "old_count", NULL};
const wg_check_kind wg_check_abi_mixed = {"abi-mixed", run, patterns, vars, 0};

/*
 * abi-mismatch: an object that links torch imports c10/at/torch/caffe2 symbols whose
 * std::string ABI differs from the target torch's (the loader cannot resolve them:
 * "undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_string...").
 * Imports that carry no std::string load with either ABI and are not findings.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include <stdio.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	int abi = cc->target->cxx11abi;
	unsigned wrong = abi == 1 ? WG_SYM_OLD_STRING : WG_SYM_NEW_STRING;
	const wg_object *o;
	wg_for_each_object(cc, o) {
		const char *lib = NULL;
		for (size_t j = 0; j < o->needed.n && !lib; j++)
			if (wg_rule_matches(cc, "libraries", o->needed.v[j], NULL, 0))
				lib = o->needed.v[j];
		if (!lib)
			continue; /* does not link torch: its strings never meet torch's */
		const wg_sym *first = NULL;
		unsigned count = 0;
		for (size_t j = 0; j < o->nsyms; j++) {
			const wg_sym *y = &o->syms[j];
			if (!y->defined && y->torch && (y->string_abi & wrong)) {
				count++;
				if (!first)
					first = y;
			}
		}
		if (!first)
			continue;
		wg_vars v = {0};
		char tabi[96];
		wg_abi_name_for(tabi, sizeof(tabi), abi);
		wg_vars_set(&v, "object", o->path);
		wg_vars_set(&v, "module", o->module ? o->module : o->path);
		wg_vars_set(&v, "library", lib);
		wg_vars_set(&v, "symbol", first->name);
		wg_vars_set(&v, "demangled", first->demangled ? first->demangled : first->name);
		wg_vars_set(&v, "count", wg_check_printf(cc, "%u", count));
		wg_vars_set(&v, "more", count > 1 ? wg_check_printf(cc, " and %u more", count - 1) : "");
		wg_vars_set(&v, "object_abi", wrong == WG_SYM_OLD_STRING ? "old" : "new");
		wg_vars_set(&v, "target_abi", abi == 1 ? "new" : "old");
		wg_vars_set(&v, "abi_flag", abi == 1 ? "1" : "0");
		wg_vars_set(&v, "abi_label", abi == 1 ? "cxx11abiTRUE" : "cxx11abiFALSE");
		wg_vars_set(&v, "abi_bool", abi == 1 ? "TRUE" : "FALSE");
		int rc = wg_emit(cc, &v, cc->scan->kind == WG_SCAN_WHEEL ? o->path : NULL, first->name,
				 NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const patterns[] = {"libraries", NULL};
static const char *const vars[] = {"object", "module", "library", "symbol", "demangled", "count",
				   "more", "object_abi", "target_abi", "abi_flag", "abi_label",
				   "abi_bool", NULL};
const wg_check_kind wg_check_abi_mismatch = {"abi-mismatch", run, patterns, vars, 0};

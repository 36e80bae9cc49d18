/*
 * variant-torch: a PEP 825 property `abi_dependency :: torch :: X.Y[.Z]` claims the objects
 * were built against that torch. What the objects tell: the std::string ABI of their
 * torch-facing imports (torch's pip wheels use the old ABI up to 2.6 and the new one,
 * cxx11abi=1, from 2.7 on). An object that meets torch (links the rule's `libraries`, or
 * imports its symbols whatever DT_NEEDED says) and imports a c10/at/torch symbol of the other
 * ABI cannot load into the claimed torch. Torch's version itself is not in the symbols: it is
 * not verified, and objects that do not meet torch leave the claim unverified (WG-VAR-005
 * lists it).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_strlist *props = &s->lists[WG_LIST_VARIANT_PROPERTIES];
	for (size_t p = 0; p < props->n; p++) {
		const char *val;
		unsigned ma, mi;
		if (!wg_variant_is(props->v[p], "abi_dependency", "torch", &val) ||
		    sscanf(val, "%u.%u", &ma, &mi) != 2)
			continue;
		bool new_abi = ma > 2 || (ma == 2 && mi >= 7);
		unsigned wrong = new_abi ? WG_SYM_OLD_STRING : WG_SYM_NEW_STRING;
		const wg_object *o;
		wg_for_each_object(cc, o) {
			unsigned count;
			const wg_sym *first = wg_check_abi_import(cc, o, wrong, &count);
			if (!first)
				continue;
			wg_vars v = {0};
			wg_vars_set(&v, "property", props->v[p]);
			wg_vars_set(&v, "object", o->path);
			wg_vars_set(&v, "torch_abi", new_abi ? "new (cxx11abi=1) ABI, as torch 2.7 and later"
							     : "old (cxx11abi=0) ABI, as torch 2.6 and earlier");
			wg_vars_set(&v, "object_abi", new_abi ? "old" : "new");
			wg_vars_set(&v, "symbol", first->demangled ? first->demangled : first->name);
			wg_vars_set(&v, "more", count > 1 ? wg_check_printf(cc, " and %u more", count - 1) : "");
			int rc = wg_emit(cc, &v, wg_scan_is_dist(s) ? o->path : NULL, first->name, NULL, 0);
			if (rc < 0)
				return rc;
		}
	}
	return WG_OK;
}

static const char *const patterns[] = {"libraries", NULL};
static const char *const vars[] = {"property", "object", "torch_abi", "object_abi", "symbol",
				   "more", NULL};
const wg_check_kind wg_check_variant_torch = {"variant-torch", run, patterns, vars, 0};

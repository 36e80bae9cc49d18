/*
 * ld-unresolved: importing an object (after `import torch`, in the target environment) leaves
 * a strong symbol unresolved: "ImportError: ...: undefined symbol: ...". When the symbol
 * carries a std::string of the ABI the environment's torch does not use, the message says so;
 * when it is torch's and nothing in the load needs torch's libraries (which `import torch`
 * loads RTLD_LOCAL), it says that too, with the library that defines it when one does.
 * One finding per object, naming the first symbol and how many there are.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	int rc = wg_check_ld(cc);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < cc->ld_issues.len; i++) {
		const wg_ld_issue *x = wg_vec_at(&cc->ld_issues, i);
		if (x->kind != WG_LD_UNRESOLVED || !wg_rule_in_scope(cc, true, x->object))
			continue;
		/* One finding per object, naming a torch-facing symbol first when there is one
		 * (the usual cause), else the first. */
		size_t count = 0, pick = SIZE_MAX, first = SIZE_MAX;
		for (size_t k = 0; k < cc->ld_issues.len; k++) {
			const wg_ld_issue *y = wg_vec_at(&cc->ld_issues, k);
			if (y->kind != WG_LD_UNRESOLVED || strcmp(y->object, x->object))
				continue;
			count++;
			if (first == SIZE_MAX)
				first = k;
			if (pick == SIZE_MAX && y->torch)
				pick = k;
		}
		if (first != i)
			continue;
		x = wg_vec_at(&cc->ld_issues, pick != SIZE_MAX ? pick : first);
		char *dem = wg_demangle(x->symbol);
		const char *why = "";
		int abi = cc->target->cxx11abi;
		bool wrong_abi = x->torch && (((x->string_abi & WG_SYM_NEW_STRING) && abi == 0) ||
					      ((x->string_abi & WG_SYM_OLD_STRING) && abi == 1));
		if (wrong_abi)
			why = abi == 0 ? ": it carries the new (C++11) std::string, but the environment's "
					 "torch was built with the old ABI (_GLIBCXX_USE_CXX11_ABI=0)"
				       : ": it carries the old std::string, but the environment's torch "
					 "was built with the new C++11 ABI (_GLIBCXX_USE_CXX11_ABI=1)";
		/* No torch library in the load: `import torch` loaded them RTLD_LOCAL, where
		 * this load does not look, whatever the symbol's ABI. */
		if (x->torch && !x->torch_in_load && x->local_def)
			why = wg_check_printf(cc, ": %s defines it, but `import torch` loaded %s "
					      "RTLD_LOCAL and nothing in this load needs it (%s lists "
					      "none of torch's libraries in DT_NEEDED: link it with "
					      "-lc10 -ltorch_cpu...)", x->local_def, x->local_def,
					      x->object);
		else if (x->torch && !x->torch_in_load)
			why = wg_check_printf(cc, "%s%s none of torch's libraries is in this load (%s "
					      "lists none of them in DT_NEEDED, and `import torch` loads "
					      "them RTLD_LOCAL)%s", why, wrong_abi ? "; and" : ":",
					      x->object, wrong_abi ? ", so the right ABI alone would not "
					      "resolve it either" : "");
		wg_vars v = {0};
		wg_vars_set(&v, "object", x->object);
		wg_vars_set(&v, "symbol", x->symbol);
		wg_vars_set(&v, "demangled", wg_check_printf(cc, "%s", dem ? dem : x->symbol));
		wg_vars_set(&v, "version", x->version ? wg_check_printf(cc, "@%s", x->version) : "");
		wg_vars_set(&v, "library", x->library ? x->library : "any loaded library");
		wg_vars_set(&v, "count", wg_check_printf(cc, "%zu", count));
		wg_vars_set(&v, "more", count > 1 ? wg_check_printf(cc, " (and %zu more)", count - 1) : "");
		wg_vars_set(&v, "why", why);
		const char *scope;
		wg_severity sev = wg_ld_severity(cc, x->object, x->kind, &scope);
		wg_vars_set(&v, "scope", scope);
		free(dem);
		rc = wg_emit_sev(cc, sev, &v, x->object, x->symbol, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const vars[] = {"object", "symbol", "demangled", "version", "library", "count",
				   "more", "why", "scope", NULL};
const wg_check_kind wg_check_ld_unresolved = {"ld-unresolved", run, NULL, vars, WG_FACT_ENV};

/*
 * abi-mismatch: an object imports c10/at/torch/caffe2 symbols whose std::string ABI differs
 * from the target torch's (the loader cannot resolve them: "undefined symbol:
 * _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_string..."). Torch-facing by the
 * symbols, whatever DT_NEEDED says: an object linked -Wl,--as-needed against a stub lists no
 * libc10.so and still needs those symbols from torch. Imports that carry no std::string load
 * with either ABI and are not findings.
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
		unsigned count;
		const wg_sym *first = wg_check_abi_import(cc, o, wrong, &count);
		if (!first)
			continue;
		wg_vars v = {0};
		char tabi[96];
		wg_abi_name_for(tabi, sizeof(tabi), abi);
		wg_vars_set(&v, "object", o->path);
		wg_vars_set(&v, "module", o->module ? o->module : o->path);
		/* The torch library it needs, or what it does not need: its c10 symbols come from
		 * torch all the same, and only a load that has torch's libraries in scope finds
		 * them (`import torch` loads them RTLD_LOCAL). */
		const char *lib = NULL;
		wg_check_faces_torch(cc, o, &lib);
		wg_vars_set(&v, "library", lib ? lib : "none of torch's libraries");
		wg_vars_set(&v, "linkage", lib ? "" : wg_check_printf(cc,
			"; nor does it list torch's libraries in DT_NEEDED, and `import torch` loads "
			"them RTLD_LOCAL: rebuilt with the %s ABI alone, it finds them only if "
			"another object of its load needs them", abi == 1 ? "new" : "old"));
		wg_vars_set(&v, "relink", lib ? "" : " Link it against torch's libraries too "
			    "(-lc10 -ltorch_cpu..., as torch.utils.cpp_extension does; "
			    "-Wl,--as-needed drops a library that defines none of its symbols, such "
			    "as a stub).");
		wg_vars_set(&v, "symbol", first->name);
		wg_vars_set(&v, "demangled", first->demangled ? first->demangled : first->name);
		wg_vars_set(&v, "count", wg_check_printf(cc, "%u", count));
		wg_vars_set(&v, "more", count > 1 ? wg_check_printf(cc, " and %u more", count - 1) : "");
		wg_vars_set(&v, "object_abi", wrong == WG_SYM_OLD_STRING ? "old" : "new");
		wg_vars_set(&v, "target_abi", abi == 1 ? "new" : "old");
		wg_vars_set(&v, "abi_flag", abi == 1 ? "1" : "0");
		wg_vars_set(&v, "abi_label", abi == 1 ? "cxx11abiTRUE" : "cxx11abiFALSE");
		wg_vars_set(&v, "abi_bool", abi == 1 ? "TRUE" : "FALSE");
		int rc = wg_emit(cc, &v, wg_scan_is_dist(cc->scan) ? o->path : NULL, first->name,
				 NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const patterns[] = {"libraries", NULL};
static const char *const vars[] = {"object", "module", "library", "linkage", "relink", "symbol",
				   "demangled", "count", "more", "object_abi", "target_abi",
				   "abi_flag", "abi_label", "abi_bool", NULL};
const wg_check_kind wg_check_abi_mismatch = {"abi-mismatch", run, patterns, vars, 0};

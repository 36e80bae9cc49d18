/*
 * local-label-content: a local version label that claims a build (flash-attn's
 * +cu12torch2.6cxx11abiFALSE) against what the objects hold, whatever the target:
 * cxx11abiTRUE/FALSE against the std::string ABI of the torch-facing imports of every object
 * that meets torch (links the rule's `libraries`, or imports its symbols), cuXY/cuX against
 * the CUDA majors of the libraries the objects need (`cuda11`, `cuda12`... as WG-CUDA-001's
 * lists). torchX.Y is not in the symbols and is not verified. The rule's `abi` and `cuda`
 * patterns read the label.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules/checks/check.h"

static int emit(wg_check_ctx *cc, const char *label, const char *claim, const wg_object *o,
		const char *evidence, const char *symbol)
{
	wg_vars v = {0};
	wg_vars_set(&v, "label", label);
	wg_vars_set(&v, "claim", claim);
	wg_vars_set(&v, "object", o->path);
	wg_vars_set(&v, "evidence", evidence);
	return wg_emit(cc, &v, wg_scan_is_dist(cc->scan) ? o->path : NULL, symbol, NULL, 0);
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const char *label = s->fields[WG_WHEEL_LOCAL_VERSION];
	if (!wg_scan_is_dist(s) || !label)
		return WG_OK;
	size_t c[4];
	int rc;
	if (wg_rule_matches(cc, "abi", label, c, 2) && c[2] != SIZE_MAX) {
		bool claim_new = !strncasecmp(label + c[2], "TRUE", 4);
		unsigned wrong = claim_new ? WG_SYM_OLD_STRING : WG_SYM_NEW_STRING;
		const char *claim = wg_check_printf(cc, "cxx11abi%s", claim_new ? "TRUE" : "FALSE");
		const wg_object *o;
		wg_for_each_object(cc, o) {
			unsigned count;
			const wg_sym *first = wg_check_abi_import(cc, o, wrong, &count);
			if (!first)
				continue;
			const char *ev = wg_check_printf(cc, "imports %s (%s std::string ABI)%s",
							 first->demangled ? first->demangled : first->name,
							 claim_new ? "old" : "new",
							 count > 1 ? wg_check_printf(cc, " and %u more like it",
										     count - 1) : "");
			if ((rc = emit(cc, label, claim, o, ev, first->name)) < 0)
				return rc;
		}
	}
	if (wg_rule_matches(cc, "cuda", label, c, 2) && c[2] != SIZE_MAX) {
		unsigned d = (unsigned)strtoul(label + c[2], NULL, 10);
		unsigned major = d >= 100 ? d / 10 : d;
		const char *claim = wg_check_printf(cc, "cu%.*s", (int)(c[3] - c[2]), label + c[2]);
		const wg_object *o;
		wg_for_each_object(cc, o) {
			for (size_t j = 0; j < o->needed.n; j++) {
				const char *lib = o->needed.v[j];
				unsigned m = 0;
				for (size_t k = 0; k < cc->rule->nlists && !m; k++) {
					const char *name = cc->rule->lists[k].name;
					if (wg_has_prefix(name, "cuda") && strcmp(name, "cuda") &&
					    wg_rule_matches(cc, name, lib, NULL, 0))
						m = (unsigned)strtoul(name + 4, NULL, 10);
				}
				if (!m || m == major)
					continue;
				const char *ev = wg_check_printf(cc, "needs %s, a CUDA %u library (the label "
								 "says CUDA %u)", lib, m, major);
				if ((rc = emit(cc, label, claim, o, ev, NULL)) < 0)
					return rc;
			}
		}
	}
	return WG_OK;
}

static const char *const patterns[] = {"abi", "cuda", "libraries", NULL};
static const char *const vars[] = {"label", "claim", "object", "evidence", NULL};
const wg_check_kind wg_check_local_label_content = {"local-label-content", run, patterns, vars,
	WG_FACT_FILENAME};

/*
 * variant-unverified: the PEP 825 properties of a wheel that wheelgate cannot check against
 * its objects, listed (an info finding, never silence): every namespace other than nvidia's
 * sm_arch and CUDA bounds and abi_dependency :: torch, and abi_dependency :: torch when no
 * object meets torch (links the rule's `libraries`, or imports torch's symbols).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_strlist *props = &s->lists[WG_LIST_VARIANT_PROPERTIES];
	bool links = false;
	const wg_object *o;
	const char *lib;
	wg_for_each_object(cc, o)
		links = links || wg_check_faces_torch(cc, o, &lib);
	for (size_t p = 0; p < props->n; p++) {
		const char *prop = props->v[p], *why;
		if (wg_variant_is(prop, "nvidia", "sm_arch", NULL) ||
		    wg_variant_is(prop, "nvidia", "cuda_version_lower_bound", NULL) ||
		    wg_variant_is(prop, "nvidia", "cuda_version_upper_bound", NULL))
			continue;
		if (wg_variant_is(prop, "abi_dependency", "torch", NULL)) {
			if (links)
				continue;
			why = "no object of the wheel links torch, so no symbol tells which torch it "
			      "was built for";
		} else {
			why = "wheelgate has no way to check this namespace or feature against the "
			      "objects";
		}
		wg_vars v = {0};
		wg_vars_set(&v, "property", prop);
		wg_vars_set(&v, "why", why);
		int rc = wg_emit(cc, &v, NULL, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const patterns[] = {"libraries", NULL};
static const char *const vars[] = {"property", "why", NULL};
const wg_check_kind wg_check_variant_unverified = {"variant-unverified", run, patterns, vars, 0};

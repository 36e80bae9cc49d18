/*
 * variant-sm-arch: a PEP 825 property `nvidia :: sm_arch :: <cc>_real` claims SASS for that
 * architecture, `<cc>_virtual` PTX for it (90_real: sm_90; 90a_real: sm_90a; 80_virtual:
 * compute_80), in every object of the wheel that holds CUDA code. An object without it, or a
 * wheel with no CUDA code at all, makes the claim a lie: the installer picks the variant for
 * a GPU whose kernels are not there ("no kernel image is available for execution").
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

static bool has_image(const wg_object *o, int kind, unsigned arch, char variant)
{
	for (size_t j = 0; j < o->fatbin_entries.len; j++) {
		const wg_fatbin_entry *e = wg_vec_at(&o->fatbin_entries, j);
		if (e->kind == kind && e->arch == arch && e->variant == variant)
			return true;
	}
	return false;
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_strlist *props = &s->lists[WG_LIST_VARIANT_PROPERTIES];
	for (size_t p = 0; p < props->n; p++) {
		const char *val;
		if (!wg_variant_is(props->v[p], "nvidia", "sm_arch", &val))
			continue;
		char *end;
		unsigned long arch = strtoul(val, &end, 10);
		char variant = 0;
		if (*end == 'a' || *end == 'f')
			variant = *end++;
		int kind = !strcmp(end, "_real") ? WG_FATBIN_SASS
			   : !strcmp(end, "_virtual") ? WG_FATBIN_PTX : 0;
		wg_vars v = {0};
		wg_vars_set(&v, "property", props->v[p]);
		if (!kind || end == val || arch == 0 || arch > 10000) {
			wg_vars_set(&v, "want", wg_check_printf(cc, "'%s', which is no architecture", val));
			wg_vars_set(&v, "object", "the wheel");
			wg_vars_set(&v, "have", "nothing to compare it with: a value is <cc>[a|f]_real (SASS) or "
						"<cc>[a|f]_virtual (PTX), as 90_real, 100a_real, 80_virtual");
			int rc = wg_emit(cc, &v, NULL, NULL, NULL, 0);
			if (rc < 0)
				return rc;
			continue;
		}
		char want[32];
		wg_fatbin_arch_name(want, sizeof(want), kind, (unsigned)arch, variant);
		wg_vars_set(&v, "want", wg_check_printf(cc, "%s %s", kind == WG_FATBIN_SASS ? "SASS" :
							"PTX", want));
		bool any = false;
		const wg_object *o;
		wg_for_each_object(cc, o) {
			if (!wg_object_is_cuda(o))
				continue;
			any = true;
			if (has_image(o, kind, (unsigned)arch, variant))
				continue;
			char set[256];
			size_t n = wg_object_arch_set(o, (wg_fatbin_kind)kind, -1, set, sizeof(set));
			wg_vars_set(&v, "object", o->path);
			wg_vars_set(&v, "have", n ? wg_check_printf(cc, "%s only: %s",
								    kind == WG_FATBIN_SASS ? "SASS" : "PTX", set)
						  : wg_check_printf(cc, "no %s at all",
								    kind == WG_FATBIN_SASS ? "SASS" : "PTX"));
			int rc = wg_emit(cc, &v, wg_scan_is_dist(s) ? o->path : NULL, NULL, NULL, 0);
			if (rc < 0)
				return rc;
		}
		if (!any) {
			wg_vars_set(&v, "object", "the wheel");
			wg_vars_set(&v, "have", "no object holding CUDA code");
			int rc = wg_emit(cc, &v, NULL, NULL, NULL, 0);
			if (rc < 0)
				return rc;
		}
	}
	return WG_OK;
}

static const char *const vars[] = {"property", "object", "want", "have", NULL};
const wg_check_kind wg_check_variant_sm_arch = {"variant-sm-arch", run, NULL, vars, 0};

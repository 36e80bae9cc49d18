/*
 * platform-tag-versions: a wheel tagged manylinux_2_28_x86_64 (or manylinux2014, or
 * musllinux_*) promises to load on every system of that policy, but an object needs a newer
 * GLIBC/GLIBCXX/CXXABI/GCC version than the policy allows (or, for musllinux, glibc at all).
 * The policies are data: rules/platform/manylinux.yaml (auditwheel's), each family's highest
 * version on the tag's architecture.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_scan_is_dist(s))
		return WG_OK;
	int rc = WG_OK;
	const wg_object *o;
	for (size_t next = 0; rc == WG_OK && (o = wg_check_next_object(cc, &next));) {
		const wg_sysneed *need;
		size_t n = wg_analysis_sysneeds(cc->an, next - 1, &need);
		for (size_t k = 0; k < n && rc == WG_OK; k++) {
			char tags[512] = "", allowed[64] = "";
			for (size_t j = 0; j < s->lists[WG_LIST_PLATFORM_TAGS].n; j++) {
				const char *tag = s->lists[WG_LIST_PLATFORM_TAGS].v[j];
				const wg_sysver *lim = NULL;
				wg_sysver none = {"", {0, 0, 0, 0}, 0};
				wg_policy pol; /* lim may point into it */
				if (wg_has_prefix(tag, "musllinux_")) {
					if (strcmp(need[k].v.family, "GLIBC"))
						continue; /* musl systems may well carry libstdc++ */
					snprintf(none.family, sizeof(none.family), "GLIBC");
					lim = &none;
				} else {
					lim = wg_policy_for_tag(&pol, tag)
						      ? wg_policy_limit(&pol, need[k].v.family) : NULL;
				}
				if (!lim || (lim->n && wg_ver_cmp(need[k].v.v, need[k].v.n, lim->v,
								 lim->n) <= 0))
					continue;
				size_t o2 = strlen(tags);
				snprintf(tags + o2, sizeof(tags) - o2, "%s%s", o2 ? ", " : "", tag);
				if (!allowed[0])
					wg_sysver_format(allowed, sizeof(allowed), lim);
			}
			if (!tags[0])
				continue;
			size_t nsym = 0;
			const char *sym = wg_object_symbol_at(o, need[k].version, &nsym);
			wg_vars v = {0};
			wg_vars_set(&v, "object", o->path);
			wg_vars_set(&v, "platform", tags);
			wg_vars_set(&v, "library", need[k].library);
			wg_vars_set(&v, "version", need[k].version);
			wg_vars_set(&v, "allowed", allowed);
			wg_vars_set(&v, "symbol", sym ? sym : "(no symbol)");
			rc = wg_emit(cc, &v, o->path, sym, NULL, 0);
		}
	}
	return rc < 0 ? rc : WG_OK;
}

static const char *const vars[] = {"object", "platform", "library", "version", "allowed",
				   "symbol", NULL};
const wg_check_kind wg_check_platform_tag_versions = {"platform-tag-versions", run, NULL, vars,
	WG_FACT_FILENAME};

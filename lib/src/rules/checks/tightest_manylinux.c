/*
 * tightest-manylinux: a wheel tagged for a bare platform (linux_x86_64) says nothing about the
 * systems it loads on. The highest GLIBC/GLIBCXX/CXXABI/GCC versions its objects need give the
 * oldest manylinux policy it meets (rules/platform/manylinux.yaml), reported as information:
 * the tag `auditwheel repair` could give it, once it also vets the libraries the wheel links.
 * The bare-platform tags and their architecture are the rule's `bare_platform` patterns.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_scan_is_dist(s) || !s->objects.len)
		return WG_OK;
	const char *plat = NULL;
	char arch[32] = "";
	for (size_t i = 0; i < s->lists[WG_LIST_PLATFORM_TAGS].n && !plat; i++) {
		size_t caps[4];
		const char *t = s->lists[WG_LIST_PLATFORM_TAGS].v[i];
		if (wg_rule_matches(cc, "bare_platform", t, caps, 2) && caps[2] != SIZE_MAX) {
			plat = t;
			snprintf(arch, sizeof(arch), "%.*s", (int)(caps[3] - caps[2]), t + caps[2]);
		}
	}
	if (!plat)
		return WG_OK;
	/* The highest need of each family over every object of the wheel. */
	wg_sysneed all[WG_SYS_FAMILIES];
	size_t nall = 0;
	const char *worst_object[WG_SYS_FAMILIES] = {0};
	for (size_t i = 0; i < s->objects.len; i++) {
		const wg_object *o = *(wg_object **)wg_vec_at(&s->objects, i);
		if (o->error)
			continue;
		const wg_sysneed *need;
		size_t n = wg_analysis_sysneeds(cc->an, i, &need);
		for (size_t k = 0; k < n; k++) {
			size_t j = 0;
			while (j < nall && strcmp(all[j].v.family, need[k].v.family))
				j++;
			if (j == nall)
				all[nall++] = need[k], worst_object[j] = o->path;
			else if (wg_ver_cmp(need[k].v.v, need[k].v.n, all[j].v.v,
					    all[j].v.n) > 0)
				all[j] = need[k], worst_object[j] = o->path;
		}
	}
	char needs[256] = "", policy[96] = "", limiting[512] = "";
	for (size_t j = 0; j < nall; j++) {
		size_t o = strlen(needs);
		snprintf(needs + o, sizeof(needs) - o, "%s%s", o ? ", " : "", all[j].version);
	}
	if (!needs[0])
		snprintf(needs, sizeof(needs), "no versioned C or C++ runtime symbols");
	for (size_t p = 0; p < wg_policy_count() && !policy[0]; p++) {
		const void *pol = wg_policy_at(p);
		bool ok = true;
		for (size_t j = 0; j < nall && ok; j++) {
			const wg_sysver *lim = wg_policy_limit(pol, all[j].v.family);
			ok = lim && wg_ver_cmp(all[j].v.v, all[j].v.n, lim->v, lim->n) <= 0;
		}
		if (ok)
			snprintf(policy, sizeof(policy), "%s_%s", wg_policy_name(pol), arch);
	}
	/* What keeps it from the policy below: the family that needs the most. */
	for (size_t j = 0; j < nall; j++) {
		size_t o = strlen(limiting);
		if (o + strlen(worst_object[j]) + 64 < sizeof(limiting))
			snprintf(limiting + o, sizeof(limiting) - o, "%s%s by %s", o ? "; " : "",
				 all[j].version, worst_object[j]);
	}
	wg_vars v = {0};
	wg_vars_set(&v, "platform", plat);
	wg_vars_set(&v, "needs", needs);
	wg_vars_set(&v, "policy", policy[0] ? policy : "none (newer than every known manylinux policy)");
	wg_vars_set(&v, "limiting", limiting[0] ? limiting : "nothing");
	return wg_emit(cc, &v, NULL, NULL, NULL, 0);
}

static const char *const patterns[] = {"bare_platform", NULL};
static const char *const vars[] = {"platform", "needs", "policy", "limiting", NULL};
const wg_check_kind wg_check_tightest_manylinux = {"tightest-manylinux", run, patterns, vars,
	WG_FACT_FILENAME};

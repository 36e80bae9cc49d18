/*
 * policy-libraries: a wheel tagged manylinux_2_17_x86_64 (or musllinux_*) promises that it
 * needs from the system only what every system of that policy has: the policy's lib_whitelist
 * (rules/platform/manylinux.yaml, auditwheel's). An object needing another library that the
 * wheel does not ship is refused by `auditwheel show` and fails to import where the system
 * lacks it. The exceptions (the loader, the NVIDIA driver, libraries of the distributions the
 * wheel requires) are data too: rules/platform/provided.yaml.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

#define MAX_CLAIMS 8

static void append(char *buf, size_t n, const char *s)
{
	size_t o = strlen(buf);
	if (o + strlen(s) + 3 < n)
		snprintf(buf + o, n - o, "%s%s", o ? ", " : "", s);
}

typedef struct {
	const char *name;
	size_t i;
} need_at;

static int cmp_named(const void *a, const void *b)
{
	const need_at *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/* (*again)[j]: an earlier DT_NEEDED entry of o names the same library (n log n, whatever
 * the count). */
static int repeated(const wg_object *o, bool **again)
{
	size_t n = o->needed.n;
	need_at *v = malloc((n ? n : 1) * sizeof(*v));
	*again = calloc(n ? n : 1, sizeof(**again));
	if (!v || !*again) {
		free(v);
		free(*again);
		*again = NULL;
		return WG_ENOMEM;
	}
	for (size_t j = 0; j < n; j++)
		v[j] = (need_at){o->needed.v[j], j};
	qsort(v, n, sizeof(*v), cmp_named);
	for (size_t j = 1; j < n; j++)
		if (!strcmp(v[j].name, v[j - 1].name))
			(*again)[v[j].i] = true;
	free(v);
	return WG_OK;
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_scan_is_dist(s))
		return WG_OK;
	/* The policies the platform tags claim, as the data knows them (a manylinux_X_Y the
	 * data does not know has no whitelist to judge by). */
	wg_policy claim[MAX_CLAIMS];
	const char *tag[MAX_CLAIMS];
	size_t nclaim = 0;
	for (size_t i = 0; i < s->lists[WG_LIST_PLATFORM_TAGS].n && nclaim < MAX_CLAIMS; i++) {
		tag[nclaim] = s->lists[WG_LIST_PLATFORM_TAGS].v[i];
		if (wg_policy_for_tag(&claim[nclaim], tag[nclaim]) && claim[nclaim].index >= 0)
			nclaim++;
	}
	if (!nclaim)
		return WG_OK;
	const wg_object *o;
	int rc = WG_OK;
	wg_for_each_object_at(cc, o, i) {
		/* each library once, in the order of the first DT_NEEDED entry naming it */
		bool *again = NULL;
		if ((rc = repeated(o, &again)) < 0)
			break;
		for (size_t j = 0; j < o->needed.n && rc == WG_OK; j++) {
			const char *lib = o->needed.v[j], *why;
			if (again[j])
				continue;
			wg_need_from from;
			if ((rc = wg_check_need_from(cc, i, lib, &from, &why)) < 0 ||
			    from != WG_NEED_SYSTEM)
				continue;
			char tags[512] = "", names[256] = "";
			size_t nnames = 0;
			for (size_t k = 0; k < nclaim; k++) {
				if (wg_policy_library(&claim[k], lib) != 0)
					continue;
				append(tags, sizeof(tags), tag[k]);
				bool named = false;
				for (size_t m = 0; m < k && !named; m++)
					named = !strcmp(claim[m].name, claim[k].name) &&
						wg_policy_library(&claim[m], lib) == 0;
				if (!named) {
					append(names, sizeof(names), claim[k].name);
					nnames++;
				}
			}
			if (!tags[0])
				continue;
			char by[256];
			size_t nby = wg_provided_by(lib, NULL, by, sizeof(by));
			wg_vars v = {0};
			wg_vars_set(&v, "object", o->path);
			wg_vars_set(&v, "library", lib);
			wg_vars_set(&v, "platform", wg_check_printf(cc, "%s", tags));
			wg_vars_set(&v, "policy", wg_check_printf(cc, "the %s polic%s", names,
								  nnames > 1 ? "ies" : "y"));
			wg_vars_set(&v, "provided",
				    nby ? wg_check_printf(cc, "; %s %s it, but the wheel does not "
							  "require %s", by, nby > 1 ? "ship" : "ships",
							  nby > 1 ? "any of them" : "it")
					: "");
			rc = wg_emit(cc, &v, o->path, NULL, NULL, 0);
		}
		free(again);
		if (rc < 0)
			break;
	}
	return rc < 0 ? rc : WG_OK;
}

static const char *const vars[] = {"object", "library", "platform", "policy", "provided", NULL};
const wg_check_kind wg_check_policy_libraries = {"policy-libraries", run, NULL, vars,
	WG_FACT_FILENAME};

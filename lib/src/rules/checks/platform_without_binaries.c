/*
 * platform-without-binaries: a wheel tagged for a platform (linux_x86_64, manylinux...) that
 * contains no ELF object at all: mis-tagged, or its compiled part is missing.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (s->kind != WG_SCAN_WHEEL || s->objects.len)
		return WG_OK;
	for (size_t i = 0; i < s->lists[WG_LIST_PLATFORM_TAGS].n; i++) {
		const char *tag = s->lists[WG_LIST_PLATFORM_TAGS].v[i];
		if (!wg_rule_matches(cc, "binary_platform", tag, NULL, 0))
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "platform", tag);
		return wg_emit(cc, &v, NULL, NULL, NULL, 0);
	}
	return WG_OK;
}

static const char *const patterns[] = {"binary_platform", NULL};
static const char *const vars[] = {"platform", NULL};
const wg_check_kind wg_check_platform_without_binaries = {"platform-without-binaries", run,
							   patterns, vars, WG_FACT_FILENAME};

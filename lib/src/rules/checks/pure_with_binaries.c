/*
 * pure-with-binaries: a wheel whose tags are platform-independent (py3-none-any) but that
 * contains ELF objects: pip installs it on any platform, where its binaries cannot load.
 * Root-Is-Purelib is not such a claim: it only picks the install directory (purelib or
 * platlib), and the nvidia-* wheels set it on manylinux-tagged wheels full of libraries.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (s->kind != WG_SCAN_WHEEL || !s->objects.len)
		return WG_OK;
	bool all_any = s->lists[WG_LIST_PLATFORM_TAGS].n > 0;
	for (size_t i = 0; i < s->lists[WG_LIST_PLATFORM_TAGS].n; i++)
		all_any = all_any && wg_rule_matches(cc, "any_platform",
						     s->lists[WG_LIST_PLATFORM_TAGS].v[i], NULL, 0);
	if (!all_any)
		return WG_OK;
	const wg_object *o = *(wg_object **)wg_vec_at(&s->objects, 0);
	wg_vars v = {0};
	wg_vars_set(&v, "object", o->path);
	wg_vars_set(&v, "count", wg_check_printf(cc, "%zu", s->objects.len));
	wg_vars_set(&v, "why", "its platform tag is 'any'");
	return wg_emit(cc, &v, o->path, NULL, NULL, 0);
}

static const char *const patterns[] = {"any_platform", NULL};
static const char *const vars[] = {"object", "count", "why", NULL};
const wg_check_kind wg_check_pure_with_binaries = {"pure-with-binaries", run, patterns, vars, 0};

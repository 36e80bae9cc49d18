/*
 * platform-without-binaries: a wheel tagged for a platform (linux_x86_64, manylinux...) that
 * contains no ELF object at all: mis-tagged, or its compiled part is missing. An object that
 * is there but cannot be read is not missing: WG-WHL-002 reports it, and this rule is quiet.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

/* Whether an object is there that could not be read (WG-WHL-002 says so): a member whose
 * first bytes are ELF's, or one named like a shared object that was not read at all (refused,
 * corrupt before its first bytes). A member read whole that is not ELF is no object. */
static bool unreadable_object(const wg_scan *s)
{
	for (size_t i = 0; i < s->members.len; i++) {
		const wg_member *m = wg_vec_at(&s->members, i);
		if (!m->is_dir && !m->read_ok &&
		    (m->is_elf || wg_looks_like_shared_object(m->name)))
			return true;
	}
	return false;
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_scan_is_dist(s) || s->objects.len || unreadable_object(s))
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

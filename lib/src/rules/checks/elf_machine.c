/*
 * elf-machine: an ELF object for another machine than the wheel's platform tag (an aarch64
 * .so in a linux_x86_64 wheel). The architecture is read from the platform tag by the rule's
 * `platform_arch` patterns (group 1), in the spelling of wg_object machine names.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include <stdio.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (s->kind != WG_SCAN_WHEEL)
		return WG_OK;
	char archs[256] = "";
	const char *plat = NULL;
	for (size_t i = 0; i < s->lists[WG_LIST_PLATFORM_TAGS].n; i++) {
		size_t caps[4];
		const char *t = s->lists[WG_LIST_PLATFORM_TAGS].v[i];
		if (wg_rule_matches(cc, "platform_arch", t, caps, 2) && caps[2] != SIZE_MAX) {
			size_t o = strlen(archs);
			if (o + (caps[3] - caps[2]) + 3 < sizeof(archs))
				snprintf(archs + o, sizeof(archs) - o, " %.*s ", (int)(caps[3] - caps[2]),
					 t + caps[2]);
			plat = t;
		}
	}
	if (!plat)
		return WG_OK; /* "any", or a platform the patterns do not know */
	const wg_object *o;
	wg_for_each_object(cc, o) {
		if (!o->machine_name)
			continue;
		char key[64];
		snprintf(key, sizeof(key), " %s ", o->machine_name);
		if (strstr(archs, key))
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "object", o->path);
		wg_vars_set(&v, "machine", o->machine_name);
		wg_vars_set(&v, "platform", plat);
		int rc = wg_emit(cc, &v, o->path, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const patterns[] = {"platform_arch", NULL};
static const char *const vars[] = {"object", "machine", "platform", NULL};
const wg_check_kind wg_check_elf_machine = {"elf-machine", run, patterns, vars, WG_FACT_FILENAME};

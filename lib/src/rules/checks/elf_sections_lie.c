/*
 * elf-sections-lie: an object whose section headers disagree with what the loader reads from
 * its dynamic segment (none at all, an unsound table, a .dynamic or .dynsym header pointing
 * elsewhere or listing other symbols). The facts come from the loader's view whatever the
 * sections say (facts/elf.c); this says that tools reading sections see another object.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_object *o;
	wg_for_each_object(cc, o) {
		if (!o->sections_lie || o->error)
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "object", o->path);
		wg_vars_set(&v, "lie", o->sections_lie);
		wg_vars_set(&v, "symbols", wg_check_printf(cc, "%zu", o->nsyms));
		int rc = wg_emit(cc, &v, wg_scan_is_dist(s) ? o->path : NULL, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const vars[] = {"object", "lie", "symbols", NULL};
const wg_check_kind wg_check_elf_sections_lie = {"elf-sections-lie", run, NULL, vars, 0};

/*
 * ext-interpreter: an extension module built for another interpreter than the wheel's tags
 * say (cpython-311 in a cp312 wheel: pip installs it for 3.12, where it cannot be imported),
 * or a version-specific extension in an abi3 wheel.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (s->kind != WG_SCAN_WHEEL)
		return WG_OK;
	bool abi3 = false, any_cp = false;
	char want[256] = "";
	for (size_t i = 0; i < s->lists[WG_LIST_ABI_TAGS].n; i++)
		abi3 = abi3 || !strcmp(s->lists[WG_LIST_ABI_TAGS].v[i], "abi3");
	/* cp312 -> cpython-312, as the extension suffix spells it */
	for (size_t i = 0; i < s->lists[WG_LIST_PYTHON_TAGS].n; i++) {
		size_t caps[4];
		const char *t = s->lists[WG_LIST_PYTHON_TAGS].v[i];
		if (wg_rule_matches(cc, "cpython_tag", t, caps, 2) && caps[2] != SIZE_MAX) {
			any_cp = true;
			size_t o = strlen(want);
			snprintf(want + o, sizeof(want) - o, " cpython-%.*s ", (int)(caps[3] - caps[2]),
				 t + caps[2]);
		}
	}
	if (!any_cp)
		return WG_OK;
	const wg_object *o;
	wg_for_each_object(cc, o) {
		if (!o->is_extension || !o->ext_interpreter)
			continue;
		char key[80];
		snprintf(key, sizeof(key), " %s ", o->ext_interpreter);
		bool ok = abi3 ? !strcmp(o->ext_interpreter, "abi3")
			       : (strstr(want, key) != NULL || !strcmp(o->ext_interpreter, "abi3"));
		if (ok)
			continue;
		wg_vars v = {0};
		char tags[128];
		snprintf(tags, sizeof(tags), "%s-%s", s->lists[WG_LIST_PYTHON_TAGS].v[0],
			 s->lists[WG_LIST_ABI_TAGS].n ? s->lists[WG_LIST_ABI_TAGS].v[0] : "?");
		wg_vars_set(&v, "object", o->path);
		wg_vars_set(&v, "module", o->module ? o->module : o->path);
		wg_vars_set(&v, "interpreter", o->ext_interpreter);
		wg_vars_set(&v, "tags", wg_check_printf(cc, "%s", tags));
		int rc = wg_emit(cc, &v, o->path, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const patterns[] = {"cpython_tag", NULL};
static const char *const vars[] = {"object", "module", "interpreter", "tags", NULL};
const wg_check_kind wg_check_ext_interpreter = {"ext-interpreter", run, patterns, vars,
	WG_FACT_FILENAME};

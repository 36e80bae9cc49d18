/*
 * python-target: none of the wheel's python tags admits the target interpreter (a cp311 wheel
 * for Python 3.12). py3 admits every 3.x, cp3X exactly 3.X, cp3X with abi3 every 3.Y >= 3.X.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	unsigned tmaj = cc->target->python_major, tmin = cc->target->python_minor;
	if (s->kind != WG_SCAN_WHEEL || !s->lists[WG_LIST_PYTHON_TAGS].n)
		return WG_OK;
	bool abi3 = false;
	for (size_t i = 0; i < s->lists[WG_LIST_ABI_TAGS].n; i++)
		abi3 = abi3 || !strcmp(s->lists[WG_LIST_ABI_TAGS].v[i], "abi3");
	wg_buf tags = {0};
	for (size_t i = 0; i < s->lists[WG_LIST_PYTHON_TAGS].n; i++) {
		const char *t = s->lists[WG_LIST_PYTHON_TAGS].v[i];
		size_t caps[6];
		if (tags.len)
			wg_buf_append(&tags, ".", 1);
		wg_buf_append(&tags, t, strlen(t));
		if (!wg_rule_matches(cc, "python_tag", t, caps, 3) || caps[2] == SIZE_MAX) {
			wg_buf_free(&tags);
			return WG_OK; /* a tag the rule does not read (pp, ironpython...): no verdict */
		}
		char num[16];
		snprintf(num, sizeof(num), "%.*s", (int)(caps[3] - caps[2]), t + caps[2]);
		unsigned maj = (unsigned)strtoul(num, NULL, 10);
		bool has_min = caps[4] != SIZE_MAX && caps[5] > caps[4];
		snprintf(num, sizeof(num), "%.*s", has_min ? (int)(caps[5] - caps[4]) : 0,
			 has_min ? t + caps[4] : "");
		unsigned min = has_min ? (unsigned)strtoul(num, NULL, 10) : 0;
		bool ok = maj == tmaj && (!has_min || min == tmin || (abi3 && min <= tmin));
		if (ok) {
			wg_buf_free(&tags);
			return WG_OK;
		}
	}
	wg_vars v = {0};
	wg_vars_set(&v, "tags", wg_check_printf(cc, "%s", tags.s ? tags.s : ""));
	wg_buf_free(&tags);
	return wg_emit(cc, &v, NULL, NULL, NULL, 0);
}

static const char *const patterns[] = {"python_tag", NULL};
static const char *const vars[] = {"tags", NULL};
const wg_check_kind wg_check_python_target = {"python-target", run, patterns, vars,
	WG_FACT_FILENAME};

/*
 * wheel-tags: the tags the filename expands to (py2.py3-none-any is two) must be exactly the
 * WHEEL file's Tag: lines; installers trust one, build tools write the other.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static bool in(const wg_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_strlist *py = &s->lists[WG_LIST_PYTHON_TAGS], *abi = &s->lists[WG_LIST_ABI_TAGS],
			 *plat = &s->lists[WG_LIST_PLATFORM_TAGS], *wheel = &s->lists[WG_LIST_WHEEL_TAGS];
	if (s->kind != WG_SCAN_WHEEL || !py->n || !wheel->n)
		return WG_OK;
	wg_buf missing = {0}, extra = {0};
	size_t expanded = 0;
	for (size_t a = 0; a < py->n; a++)
		for (size_t b = 0; b < abi->n; b++)
			for (size_t c = 0; c < plat->n; c++) {
				char tag[512];
				snprintf(tag, sizeof(tag), "%s-%s-%s", py->v[a], abi->v[b], plat->v[c]);
				expanded++;
				if (!in(wheel, tag)) {
					if (missing.len)
						wg_buf_append(&missing, ", ", 2);
					wg_buf_append(&missing, tag, strlen(tag));
				}
			}
	for (size_t i = 0; i < wheel->n; i++) {
		const char *t = wheel->v[i];
		bool found = false;
		for (size_t a = 0; a < py->n && !found; a++)
			for (size_t b = 0; b < abi->n && !found; b++)
				for (size_t c = 0; c < plat->n && !found; c++) {
					char tag[512];
					snprintf(tag, sizeof(tag), "%s-%s-%s", py->v[a], abi->v[b], plat->v[c]);
					found = !strcmp(tag, t);
				}
		if (!found || !wg_rule_matches(cc, "tag", t, NULL, 0)) {
			if (extra.len)
				wg_buf_append(&extra, ", ", 2);
			wg_buf_append(&extra, t, strlen(t));
		}
	}
	int rc = WG_OK;
	if (missing.len || extra.len) {
		wg_vars v = {0};
		wg_vars_set(&v, "missing", missing.len ? wg_check_printf(cc, "%s", missing.s) : "none");
		wg_vars_set(&v, "extra", extra.len ? wg_check_printf(cc, "%s", extra.s) : "none");
		rc = wg_emit(cc, &v, s->fields[WG_WHEEL_DIST_INFO]
					 ? wg_check_printf(cc, "%s/WHEEL", s->fields[WG_WHEEL_DIST_INFO])
					 : NULL, NULL, NULL, 0);
	}
	(void)expanded;
	wg_buf_free(&missing);
	wg_buf_free(&extra);
	return rc;
}

static const char *const patterns[] = {"tag", NULL};
static const char *const vars[] = {"missing", "extra", NULL};
const wg_check_kind wg_check_wheel_tags = {"wheel-tags", run, patterns, vars, WG_FACT_FILENAME};

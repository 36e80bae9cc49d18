/*
 * variant-index: a variant wheel checked together with its index file
 * ({name}-{version}-variants.json, PEP 825: installers read the properties there before they
 * download a wheel) must appear in the index under its label, with the same properties as its
 * own variant.json. An index label without a wheel given is not a finding (the index may list
 * variants not checked now).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "rules/checks/check.h"

static bool has(const wg_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_target *t = cc->target;
	const char *label = s->fields[WG_WHEEL_VARIANT_LABEL];
	const char *name = s->fields[WG_WHEEL_NAME], *version = s->fields[WG_WHEEL_VERSION];
	if (s->kind != WG_SCAN_WHEEL || !t->nvariant_indexes || !label || !name || !version)
		return WG_OK;
	char norm[128];
	if (wg_name_normalize(norm, sizeof(norm), name, strlen(name)) < 0)
		return WG_OK;
	for (size_t i = 0; i < t->nvariant_indexes; i++) {
		const struct wg_variant_index *x = &t->variant_indexes[i];
		if (strcmp(x->name, norm) || strcmp(x->version, version))
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "index", wg_check_printf(cc, "%s", wg_base_name(x->path)));
		wg_vars_set(&v, "label", label);
		json_t *props = json_object_get(x->variants, label);
		const char *problem = NULL;
		if (!props) {
			problem = "the index has no such variant: installers never offer this wheel";
		} else if (s->fields[WG_WHEEL_VARIANT_JSON_LABEL] &&
			   !strcmp(s->fields[WG_WHEEL_VARIANT_JSON_LABEL], label)) {
			wg_arena *a = &cc->report->arena;
			wg_strlist want = {0};
			char why[256];
			if (wg_variant_properties(&want, a, props, why, sizeof(why)) < 0) {
				problem = wg_check_printf(cc, "the index's entry cannot be read: %s", why);
			} else {
				const wg_strlist *have = &s->lists[WG_LIST_VARIANT_PROPERTIES];
				for (size_t j = 0; j < want.n && !problem; j++)
					if (!has(have, want.v[j]))
						problem = wg_check_printf(cc, "the index says '%s' but the wheel's "
									  "variant.json does not", want.v[j]);
				for (size_t j = 0; j < have->n && !problem; j++)
					if (!has(&want, have->v[j]))
						problem = wg_check_printf(cc, "the wheel's variant.json says '%s' "
									  "but the index does not", have->v[j]);
			}
			wg_strlist_free(&want);
		}
		if (!problem)
			continue;
		wg_vars_set(&v, "problem", problem);
		int rc = wg_emit(cc, &v, NULL, NULL, x->path, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const vars[] = {"index", "label", "problem", NULL};
const wg_check_kind wg_check_variant_index = {"variant-index", run, NULL, vars, WG_FACT_FILENAME};

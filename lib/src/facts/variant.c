/*
 * PEP 825 wheel variants: the .dist-info/variant.json of a variant wheel (jansson). Its
 * "variants" object maps the wheel's one variant label to its properties,
 * {namespace: {feature: [value, ...]}}; each becomes "namespace :: feature :: value" in
 * WG_LIST_VARIANT_PROPERTIES and the label WG_WHEEL_VARIANT_JSON_LABEL. What cannot be used
 * is said in WG_WHEEL_VARIANT_ERROR (and as a problem), never guessed around.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "facts/facts.h"

#define VARIANT_MAX_PROPERTIES 4096

static void fail(wg_scan *scan, const char *member, const char *why)
{
	/* a finding of its own (WG-VAR-001, variant-label), not a problem of the reader: the
	 * rest of the wheel was read */
	(void)member;
	scan->fields[WG_WHEEL_VARIANT_ERROR] = wg_arena_strdup(&scan->arena, why);
}

int wg_variant_properties(wg_strlist *out, wg_arena *a, const void *json_obj, char *why,
			  size_t n)
{
	const json_t *props = json_obj;
	if (!json_is_object(props)) {
		snprintf(why, n, "the properties are not an object");
		return WG_EFORMAT;
	}
	const char *ns;
	json_t *feats;
	json_object_foreach((json_t *)props, ns, feats) {
		if (!json_is_object(feats)) {
			snprintf(why, n, "namespace '%.64s' is not an object of features", ns);
			return WG_EFORMAT;
		}
		const char *feat;
		json_t *vals;
		json_object_foreach(feats, feat, vals) {
			if (!json_is_array(vals)) {
				snprintf(why, n, "'%.64s :: %.64s' is not a list of values", ns, feat);
				return WG_EFORMAT;
			}
			size_t i;
			json_t *v;
			json_array_foreach(vals, i, v) {
				if (!json_is_string(v)) {
					snprintf(why, n, "a value of '%.64s :: %.64s' is not a string",
						 ns, feat);
					return WG_EFORMAT;
				}
				if (out->n >= VARIANT_MAX_PROPERTIES) {
					snprintf(why, n, "more than %d properties", VARIANT_MAX_PROPERTIES);
					return WG_ELIMIT;
				}
				char *p = wg_arena_printf(a, "%s :: %s :: %s", ns, feat,
							  json_string_value(v));
				if (!p || wg_strlist_add(out, a, p) < 0) {
					snprintf(why, n, "out of memory");
					return WG_ENOMEM;
				}
			}
		}
	}
	return WG_OK;
}

void wg_variant_read(wg_scan *scan, const char *member, const char *text, size_t len)
{
	json_error_t je;
	char why[256];
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(why, sizeof(why), "not valid JSON (line %d: %s)", je.line, je.text);
		fail(scan, member, why);
		return;
	}
	json_t *vars = json_object_get(root, "variants");
	if (!json_is_object(root) || !json_is_object(vars)) {
		fail(scan, member, "has no \"variants\" object");
	} else if (json_object_size(vars) != 1) {
		snprintf(why, sizeof(why), "describes %zu variants; a wheel's must describe exactly "
			 "its own one", json_object_size(vars));
		fail(scan, member, why);
	} else {
		const char *label = json_object_iter_key(json_object_iter(vars));
		json_t *props = json_object_iter_value(json_object_iter(vars));
		scan->fields[WG_WHEEL_VARIANT_JSON_LABEL] = wg_arena_strdup(&scan->arena, label);
		if (wg_variant_properties(&scan->lists[WG_LIST_VARIANT_PROPERTIES], &scan->arena,
					  props, why, sizeof(why)) < 0)
			fail(scan, member, why);
	}
	json_decref(root);
}

bool wg_variant_is(const char *prop, const char *ns, const char *feature, const char **value)
{
	size_t nl = strlen(ns), fl = strlen(feature);
	if (strncmp(prop, ns, nl) || strncmp(prop + nl, " :: ", 4) ||
	    strncmp(prop + nl + 4, feature, fl) || strncmp(prop + nl + 4 + fl, " :: ", 4))
		return false;
	if (value)
		*value = prop + nl + 4 + fl + 4;
	return true;
}

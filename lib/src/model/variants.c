/*
 * PEP 825 variant index files, {name}-{version}-variants.json, given with the wheels they
 * describe (wheelgate check WHEELS... name-version-variants.json): read with jansson into the
 * target, where the variant-index check compares each variant wheel's label and properties
 * with the index's entry.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "model/model.h"

#define INDEX_MAX_BYTES (16u << 20)

WG_API int wg_is_variants_index(const char *path)
{
	return path && wg_has_suffix(wg_base_name(path), "-variants.json") &&
	       strlen(wg_base_name(path)) > strlen("-variants.json");
}

void wg_target_variants_free(wg_target *t)
{
	for (size_t i = 0; i < t->nvariant_indexes; i++)
		json_decref(t->variant_indexes[i].variants);
	t->nvariant_indexes = 0;
}

static int bad(const char *path, const char *fmt, const char *what)
{
	wg_set_error(WG_ERROR_CLASS_VARIANTS, WG_EFORMAT, "%s: %s%s", path, fmt, what ? what : "");
	return WG_EFORMAT;
}

WG_API int wg_target_add_variants(wg_target *t, const char *path)
{
	if (!t || !path) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL, "wg_target_add_variants: no %s",
			     t ? "path" : "target");
		return WG_EINVAL;
	}
	if (!wg_is_variants_index(path))
		return bad(path, "not a variant index file (PEP 825: {name}-{version}-variants.json)",
			   NULL);
	if (t->nvariant_indexes >= WG_MAX_VARIANT_INDEXES) {
		wg_set_error(WG_ERROR_CLASS_VARIANTS, WG_ELIMIT,
			     "%s: more than %d variant index files", path,
				  WG_MAX_VARIANT_INDEXES);
		return WG_ELIMIT;
	}
	const char *base = wg_base_name(path);
	size_t stem = strlen(base) - strlen("-variants.json");
	const char *dash = memchr(base, '-', stem);
	if (!dash || dash == base || (size_t)(dash - base) >= sizeof(t->variant_indexes[0].name) ||
	    stem - (size_t)(dash - base) - 1 >= sizeof(t->variant_indexes[0].version) ||
	    stem - (size_t)(dash - base) - 1 == 0 || memchr(dash + 1, '-', stem - (size_t)(dash - base) - 1))
		return bad(path, "the file name is not {name}-{version}-variants.json", NULL);
	struct stat st;
	if (stat(path, &st) < 0) {
		wg_set_error(WG_ERROR_CLASS_VARIANTS, WG_EIO, "%s: cannot read", path);
		return WG_EIO;
	}
	if (st.st_size > INDEX_MAX_BYTES) {
		wg_set_error(WG_ERROR_CLASS_VARIANTS, WG_ELIMIT,
			     "%s: larger than %u bytes", path, INDEX_MAX_BYTES);
		return WG_ELIMIT;
	}
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		char why[256];
		snprintf(why, sizeof(why), "line %d: %s", je.line, je.text);
		return bad(path, "not valid JSON: ", why);
	}
	json_t *vars = json_object_get(root, "variants");
	if (!json_is_object(root) || !json_is_object(vars)) {
		json_decref(root);
		return bad(path, "has no \"variants\" object", NULL);
	}
	/* every entry must be properties of the right shape: said now, not at each wheel */
	const char *label;
	json_t *props;
	json_object_foreach(vars, label, props) {
		wg_arena a = {0};
		wg_strlist l = {0};
		char why[256];
		int rc = wg_variant_properties(&l, &a, props, why, sizeof(why));
		wg_strlist_free(&l);
		wg_arena_free(&a);
		if (rc < 0) {
			wg_set_error(WG_ERROR_CLASS_VARIANTS, rc,
				     "%s: variant '%s': %s", path, label, why);
			json_decref(root);
			return rc;
		}
	}
	struct wg_variant_index *e = &t->variant_indexes[t->nvariant_indexes];
	snprintf(e->path, sizeof(e->path), "%s", path);
	char name[128];
	snprintf(name, sizeof(name), "%.*s", (int)(dash - base), base);
	wg_name_normalize(e->name, sizeof(e->name), name, strlen(name));
	snprintf(e->version, sizeof(e->version), "%.*s", (int)(stem - (size_t)(dash - base) - 1),
		 dash + 1);
	e->variants = json_incref(vars);
	json_decref(root);
	t->nvariant_indexes++;
	return WG_OK;
}

/*
 * gpu-gencode-mismatch: the CUDA objects of one wheel were built with different gencode sets
 * (one extension with sm_80+sm_90, another with sm_80 only): some of the package runs on a
 * GPU where the rest fails at its first launch.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "../internal.h"

static void archs_of(wg_check_ctx *cc, const wg_object *o, char *buf, size_t n)
{
	char sass[1024], ptx[1024];
	wg_object_arch_set(o, WG_FATBIN_SASS, 1, sass, sizeof(sass));
	wg_object_arch_set(o, WG_FATBIN_PTX, 1, ptx, sizeof(ptx));
	snprintf(buf, n, "%s%s%s", sass, *sass && *ptx ? " " : "", ptx);
	(void)cc;
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_object *first = NULL;
	char first_set[2048];
	for (size_t i = 0; i < s->objects.len; i++) {
		const wg_object *o = *(wg_object **)wg_vec_at(&s->objects, i);
		if (o->error || !wg_object_is_cuda(o) || !wg_rule_in_scope(cc, true, o->path) ||
		    !wg_rule_matches(cc, "objects", o->path, NULL, 0))
			continue;
		char set[2048];
		archs_of(cc, o, set, sizeof(set));
		if (!*set)
			continue;
		if (!first) {
			first = o;
			snprintf(first_set, sizeof(first_set), "%s", set);
			continue;
		}
		if (!strcmp(set, first_set))
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "object", o->path);
		wg_vars_set(&v, "archs", wg_check_printf(cc, "%s", set));
		wg_vars_set(&v, "other_object", first->path);
		wg_vars_set(&v, "other_archs", wg_check_printf(cc, "%s", first_set));
		int rc = wg_emit(cc, &v, o->path, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const patterns[] = {"objects", NULL};
static const char *const vars[] = {"object", "archs", "other_object", "other_archs", NULL};
const wg_check_kind wg_check_gpu_gencode_mismatch = {"gpu-gencode-mismatch", run, patterns,
						     vars, 0};

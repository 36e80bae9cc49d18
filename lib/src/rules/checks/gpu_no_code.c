/*
 * gpu-no-code: an object that links the CUDA runtime and registers fatbins, yet carries no
 * SASS or PTX in them (only empty containers or LTO-IR): no GPU can run its kernels.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_object *o;
	wg_for_each_object(cc, o) {
		bool cudart = false;
		for (size_t j = 0; j < o->needed.n && !cudart; j++)
			cudart = wg_rule_matches(cc, "runtime", o->needed.v[j], NULL, 0);
		if (!cudart || !o->fatbin_wrappers)
			continue;
		size_t code = 0;
		for (size_t j = 0; j < o->fatbin_entries.len; j++) {
			const wg_fatbin_entry *e = wg_vec_at(&o->fatbin_entries, j);
			code += e->kind == WG_FATBIN_SASS || e->kind == WG_FATBIN_PTX;
		}
		if (code)
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "object", o->path);
		wg_vars_set(&v, "entries", wg_check_printf(cc, "%zu", o->fatbin_entries.len));
		int rc = wg_emit(cc, &v, s->kind == WG_SCAN_WHEEL ? o->path : NULL, NULL, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const patterns[] = {"runtime", NULL};
static const char *const vars[] = {"object", "entries", NULL};
const wg_check_kind wg_check_gpu_no_code = {"gpu-no-code", run, patterns, vars, 0};

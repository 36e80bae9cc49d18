/*
 * cuda-runtime-major: an object needs a CUDA library of another CUDA major than the target's
 * (libcudart.so.12 in a CUDA 13 environment). Library sonames do not follow CUDA's major
 * (CUDA 13's cuFFT is libcufft.so.12), so the rule's pattern lists `cuda11`, `cuda12`,
 * `cuda13`... name the sonames of each release.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	char mine[16];
	snprintf(mine, sizeof(mine), "cuda%u", cc->target->cuda_major);
	const wg_object *o;
	wg_for_each_object(cc, o) {
		for (size_t j = 0; j < o->needed.n; j++) {
			const char *lib = o->needed.v[j];
			if (wg_rule_matches(cc, mine, lib, NULL, 0))
				continue; /* the target's own release names it */
			const char *other = NULL;
			for (size_t k = 0; k < cc->rule->nlists && !other; k++) {
				const char *name = cc->rule->lists[k].name;
				if (wg_has_prefix(name, "cuda") && strcmp(name, mine) &&
				    wg_rule_matches(cc, name, lib, NULL, 0))
					other = name + 4;
			}
			if (!other)
				continue;
			wg_vars v = {0};
			wg_vars_set(&v, "object", o->path);
			wg_vars_set(&v, "library", lib);
			wg_vars_set(&v, "library_cuda", other);
			int rc = wg_emit(cc, &v, s->kind == WG_SCAN_WHEEL ? o->path : NULL, NULL, NULL, 0);
			if (rc < 0)
				return rc;
		}
	}
	return WG_OK;
}

static const char *const vars[] = {"object", "library", "library_cuda", NULL};
const wg_check_kind wg_check_cuda_runtime_major = {"cuda-runtime-major", run, NULL, vars, 0};

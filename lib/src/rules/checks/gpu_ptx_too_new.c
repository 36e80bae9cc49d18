/*
 * gpu-ptx-too-new: an object that can only run on a target GPU by JIT-compiling its PTX, whose
 * PTX ISA is newer than the target's CUDA (its driver): CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
 * Which CUDA release introduced each ISA is data (rules/gpu/cuda.yaml).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_target *t = cc->target;
	for (size_t g = 0; g < t->ngpus; g++) {
		const wg_object *o;
		wg_for_each_object_at(cc, o, i) {
			if (!wg_object_is_cuda(o) ||
			    !wg_rule_matches(cc, "objects", o->path, NULL, 0))
				continue;
			const wg_gpu_verdict *v = wg_analysis_gpu_verdict(cc->an, i, g);
			unsigned cm, cn;
			if (!v || v->how != WG_RUN_PTX_JIT || !v->ptx_isa_major ||
			    wg_ptx_isa_cuda(s->ctx, v->ptx_isa_major, v->ptx_isa_minor, &cm, &cn) < 0)
				continue;
			if (cm < t->cuda_major || (cm == t->cuda_major && cn <= t->cuda_minor))
				continue;
			wg_vars vs = {0};
			wg_vars_set(&vs, "object", o->path);
			wg_vars_set(&vs, "gpu", wg_check_printf(cc, "sm_%u%u", t->gpus[g].cc_major,
								t->gpus[g].cc_minor));
			wg_vars_set(&vs, "ptx_isa", wg_check_printf(cc, "%u.%u", v->ptx_isa_major,
								    v->ptx_isa_minor));
			wg_vars_set(&vs, "needs_cuda", wg_check_printf(cc, "%u.%u", cm, cn));
			int rc = wg_emit(cc, &vs, wg_scan_is_dist(s) ? o->path : NULL, NULL, NULL, 0);
			if (rc < 0)
				return rc;
		}
	}
	return WG_OK;
}

static const char *const patterns[] = {"objects", NULL};
static const char *const vars[] = {"object", "gpu", "ptx_isa", "needs_cuda", NULL};
const wg_check_kind wg_check_gpu_ptx_too_new = {"gpu-ptx-too-new", run, patterns, vars, 0};

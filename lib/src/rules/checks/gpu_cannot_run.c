/*
 * gpu-cannot-run: a CUDA object whose kernel modules the CUDA runtime registers, with no image
 * that can run on a target GPU: no SASS of the GPU's major at or below its minor (nor a
 * family/arch-specific match) and no PTX to JIT, neither in its registered modules nor in the
 * fatbins it loads itself through the driver API ("no kernel image is available for execution
 * on the device" at the first launch). cuFFT registers nothing and keeps its kernels outside
 * .nv_fatbin: it runs wherever one of those has an image. An object that only loads fatbins
 * itself is not judged: which of them it needs on which GPU is its own choice. The fix names
 * the -gencode and TORCH_CUDA_ARCH_LIST entry that would cover it.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	for (size_t g = 0; g < cc->target->ngpus; g++) {
		const wg_gpu *gpu = &cc->target->gpus[g];
		const wg_object *o;
		wg_for_each_object_at(cc, o, i) {
			if (!wg_object_is_cuda(o) ||
			    !wg_rule_matches(cc, "objects", o->path, NULL, 0))
				continue;
			const wg_gpu_verdict *v = wg_analysis_gpu_verdict(cc->an, i, g);
			if (!v || !v->kernel_containers || v->runs != WG_RUNS_NONE)
				continue;
			char sass[1024], ptx[1024];
			wg_object_arch_set(o, WG_FATBIN_SASS, -1, sass, sizeof(sass));
			wg_object_arch_set(o, WG_FATBIN_PTX, -1, ptx, sizeof(ptx));
			wg_vars vs = {0};
			unsigned sm = gpu->cc_major * 10 + gpu->cc_minor;
			wg_vars_set(&vs, "object", o->path);
			wg_vars_set(&vs, "module", o->module ? o->module : o->path);
			wg_vars_set(&vs, "gpu", gpu->name ? wg_check_printf(cc, "%s (sm_%u)", gpu->name, sm)
							  : wg_check_printf(cc, "sm_%u", sm));
			wg_vars_set(&vs, "sm", wg_check_printf(cc, "%u", sm));
			wg_vars_set(&vs, "cc", wg_check_printf(cc, "%u.%u", gpu->cc_major, gpu->cc_minor));
			wg_vars_set(&vs, "sass", *sass ? wg_check_printf(cc, "%s", sass) : "none");
			wg_vars_set(&vs, "ptx", *ptx ? wg_check_printf(cc, "%s", ptx) : "none");
			int rc = wg_emit(cc, &vs, wg_scan_is_dist(s) ? o->path : NULL, NULL, NULL, 0);
			if (rc < 0)
				return rc;
		}
	}
	return WG_OK;
}

static const char *const patterns[] = {"objects", NULL};
static const char *const vars[] = {"object", "module", "gpu", "sm", "cc", "sass", "ptx", NULL};
const wg_check_kind wg_check_gpu_cannot_run = {"gpu-cannot-run", run, patterns, vars, 0};

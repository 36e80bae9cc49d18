/*
 * kernel-archs: a Hugging Face hub kernel build variant whose metadata.json declares a CUDA
 * arch (backend.archs: "8.0", "9.0a", "10.0") that a CUDA object of the variant cannot run on:
 * no SASS for it and no PTX to JIT (the GPU model of wg_object_gpu_verdict). A user picking the
 * kernel for that GPU gets "no kernel image is available for execution on the device" (HF
 * kernels #707).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

/* "8.0", "9.0a", "10.0f", "8.6+PTX", "sm_80", "compute_90a", "80" -> major.minor */
static bool parse_arch(const char *s, unsigned *major, unsigned *minor)
{
	if (!strncmp(s, "sm_", 3))
		s += 3;
	else if (!strncmp(s, "compute_", 8))
		s += 8;
	char *end;
	unsigned long a = strtoul(s, &end, 10);
	if (end == s)
		return false;
	if (*end == '.') {
		const char *m = end + 1;
		unsigned long b = strtoul(m, &end, 10);
		if (end == m || a > 99 || b > 9)
			return false;
		*major = (unsigned)a;
		*minor = (unsigned)b;
	} else {
		if (a < 10 || a > 999)
			return false;
		*major = (unsigned)(a / 10);
		*minor = (unsigned)(a % 10);
	}
	return true;
}

static int run(wg_check_ctx *cc)
{
	const wg_kernel_variant *k = &cc->scan->kernel;
	if (!k->name || !k->archs.n || (k->backend && strcmp(k->backend, "cuda")))
		return WG_OK;
	for (size_t a = 0; a < k->archs.n; a++) {
		wg_gpu gpu = WG_GPU_INIT;
		if (!parse_arch(k->archs.v[a], &gpu.cc_major, &gpu.cc_minor))
			continue;
		const wg_object *o;
		wg_for_each_object(cc, o) {
			if (!wg_object_is_cuda(o))
				continue;
			wg_gpu_verdict v = WG_GPU_VERDICT_INIT;
			if (wg_object_gpu_verdict(&v, o, &gpu) < 0 || !v.kernel_containers ||
			    v.runs != WG_RUNS_NONE)
				continue;
			char sass[512], ptx[512];
			wg_object_arch_set(o, WG_FATBIN_SASS, -1, sass, sizeof(sass));
			wg_object_arch_set(o, WG_FATBIN_PTX, -1, ptx, sizeof(ptx));
			wg_vars vs = {0};
			wg_vars_set(&vs, "variant", k->name);
			wg_vars_set(&vs, "arch", k->archs.v[a]);
			wg_vars_set(&vs, "sm", wg_check_printf(cc, "%u%u", gpu.cc_major, gpu.cc_minor));
			wg_vars_set(&vs, "object", o->path);
			wg_vars_set(&vs, "sass", *sass ? wg_check_printf(cc, "%s", sass) : "none");
			wg_vars_set(&vs, "ptx", *ptx ? wg_check_printf(cc, "%s", ptx) : "none");
			int rc = wg_emit(cc, &vs, NULL, NULL, NULL, 0);
			if (rc < 0)
				return rc;
		}
	}
	return WG_OK;
}

static const char *const vars[] = {"variant", "arch", "sm", "object", "sass", "ptx", NULL};
const wg_check_kind wg_check_kernel_archs = {"kernel-archs", run, NULL, vars, 0};

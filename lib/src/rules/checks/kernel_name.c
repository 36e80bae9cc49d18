/*
 * kernel-name: a Hugging Face hub kernel build variant whose directory name lies about its
 * objects (docs/kernels.md): cxx11 / cxx98 against the std::string ABI of the torch-facing
 * symbols the objects import, cu<XY> against the CUDA runtime majors of the libraries they
 * need (the rule's `cuda11`, `cuda12`... sonames, as WG-CUDA-001's), a compute with no CUDA
 * (cpu, rocm, metal, xpu) against CUDA code or libraries, the cpu against the ELF machine, and
 * metadata.json's backend type against the name. The kernels loader picks the variant by the
 * name alone: a lying one installs and fails at import or at the first kernel launch.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

static int emit(wg_check_ctx *cc, const char *claim, const char *evidence, const char *object)
{
	const wg_kernel_variant *k = &cc->scan->kernel;
	wg_vars v = {0};
	wg_vars_set(&v, "variant", k->name);
	wg_vars_set(&v, "claim", wg_check_printf(cc, "%s", claim));
	wg_vars_set(&v, "evidence", wg_check_printf(cc, "%s", evidence));
	wg_vars_set(&v, "object", object ? object : k->name);
	return wg_emit(cc, &v, NULL, NULL, NULL, 0);
}

/* The CUDA major (the rule's list cudaNN) whose sonames name lib, or 0. */
static unsigned lib_cuda_major(wg_check_ctx *cc, const char *lib)
{
	for (size_t k = 0; k < cc->rule->nlists; k++) {
		const char *name = cc->rule->lists[k].name;
		if (wg_has_prefix(name, "cuda") && wg_rule_matches(cc, name, lib, NULL, 0))
			return (unsigned)strtoul(name + 4, NULL, 10);
	}
	return 0;
}

static int run(wg_check_ctx *cc)
{
	const wg_kernel_variant *k = &cc->scan->kernel;
	if (!k->name)
		return WG_OK;
	char claim[160], ev[512];
	int rc = WG_OK;
	bool cuda_named = k->compute && !strcmp(k->compute, "cu");
	const wg_object *o;
	wg_for_each_object(cc, o) {
		if (rc < 0)
			break;
		/* the C++ ABI: torch-facing strings of the other ABI cannot resolve */
		if (k->cxx11 >= 0 && o->torch_abi != WG_ABI_NONE &&
		    o->torch_abi != (k->cxx11 ? WG_ABI_NEW : WG_ABI_OLD)) {
			snprintf(claim, sizeof(claim), "%s (%s std::string ABI)",
				 k->cxx11 ? "cxx11" : "cxx98", k->cxx11 ? "the new" : "the old");
			snprintf(ev, sizeof(ev), "%s imports %u torch symbols with new-ABI "
				 "(std::__cxx11) strings and %u with old-ABI strings", o->path,
				 o->counts[0], o->counts[1]);
			rc = emit(cc, claim, ev, o->path);
		}
		/* the CUDA runtime major, or CUDA where the name says none */
		bool lied = false;
		for (size_t j = 0; j < o->needed.n && rc == WG_OK; j++) {
			unsigned major = lib_cuda_major(cc, o->needed.v[j]);
			if (!major || (cuda_named && major == k->cuda_major))
				continue;
			if (cuda_named)
				snprintf(claim, sizeof(claim), "%s (CUDA %u.%u)", k->compute_label,
					 k->cuda_major, k->cuda_minor);
			else
				snprintf(claim, sizeof(claim), "%s (no CUDA)", k->compute_label);
			snprintf(ev, sizeof(ev), "%s needs %s, a CUDA %u library", o->path,
				 o->needed.v[j], major);
			rc = emit(cc, claim, ev, o->path);
			lied = true;
			break;
		}
		if (rc == WG_OK && !lied && k->compute && !cuda_named && wg_object_is_cuda(o)) {
			char sass[256];
			wg_object_arch_set(o, WG_FATBIN_SASS, -1, sass, sizeof(sass));
			snprintf(claim, sizeof(claim), "%s (no CUDA)", k->compute_label);
			snprintf(ev, sizeof(ev), "%s carries CUDA code (SASS %s)", o->path,
				 *sass ? sass : "none");
			rc = emit(cc, claim, ev, o->path);
		}
		/* the cpu */
		if (rc == WG_OK && k->cpu && o->machine_name && strcmp(k->cpu, o->machine_name)) {
			snprintf(claim, sizeof(claim), "%s-%s", k->cpu, k->os);
			snprintf(ev, sizeof(ev), "%s is an %s object", o->path, o->machine_name);
			rc = emit(cc, claim, ev, o->path);
		}
	}
	/* metadata.json's backend against the name */
	if (rc == WG_OK && k->backend && k->compute) {
		const char *want = cuda_named ? "cuda" : k->compute;
		if (strcmp(k->backend, want)) {
			snprintf(claim, sizeof(claim), "%s", k->compute_label);
			snprintf(ev, sizeof(ev), "metadata.json says backend \"%s\"", k->backend);
			rc = emit(cc, claim, ev, NULL);
		}
	}
	return rc;
}

static const char *const vars[] = {"variant", "claim", "evidence", "object", NULL};
const wg_check_kind wg_check_kernel_name = {"kernel-name", run, NULL, vars, 0};

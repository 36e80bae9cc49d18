/*
 * gpu-gencode-mismatch: two Python extension modules of one wheel that carry kernels run on
 * different GPUs. On a GPU where one of them has an image and the other has none, the package
 * imports, part of it runs and the rest fails at its first launch ("no kernel image is
 * available for execution on the device"). Coverage is judged by the compatibility rules over
 * every image of each extension (registered or loaded by itself), on the compute capabilities
 * of the known GPUs (rules/gpu/cuda.yaml) and of the images themselves. Shared libraries shipped
 * in the wheel (cuDNN's engines, cuBLAS's arch-specific modules, torch's own libraries) carry
 * different architecture sets by design and are not compared.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

#define MAX_CCS 256 /* compute capabilities compared (X.Y as X * 10 + Y) */

static bool carries_kernels(const wg_object *o)
{
	for (size_t i = 0; i < o->fatbin_entries.len; i++) {
		const wg_fatbin_entry *e = wg_vec_at(&o->fatbin_entries, i);
		if (e->kind == WG_FATBIN_SASS || e->kind == WG_FATBIN_PTX)
			return true;
	}
	return false;
}

static void add_cc(unsigned *ccs, size_t *n, unsigned major, unsigned minor)
{
	unsigned cc = major * 10 + minor;
	if (minor > 9)
		return;
	for (size_t i = 0; i < *n; i++)
		if (ccs[i] == cc)
			return;
	if (*n < MAX_CCS)
		ccs[(*n)++] = cc;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

static bool runs_on(const wg_object *o, unsigned cc)
{
	wg_gpu g = WG_GPU_INIT;
	wg_gpu_verdict v = WG_GPU_VERDICT_INIT;
	g.cc_major = cc / 10;
	g.cc_minor = cc % 10;
	return wg_object_gpu_verdict(&v, o, &g) == WG_OK && v.runs != WG_RUNS_NONE;
}

/* "sm_90 (H100, H200)": the capability and the known GPUs that have it. */
static const char *gpu_label(wg_check_ctx *cc, unsigned sm)
{
	char names[256] = "";
	size_t used = 0, shown = 0, n = wg_gpu_known_count(cc->scan->ctx);
	for (size_t i = 0; i < n && used + 8 < sizeof(names); i++) {
		wg_gpu g = WG_GPU_INIT;
		if (wg_gpu_known(&g, cc->scan->ctx, i) < 0 || g.cc_major * 10 + g.cc_minor != sm ||
		    !g.name)
			continue;
		if (shown++ == 3) {
			used += (size_t)snprintf(names + used, sizeof(names) - used, ", ...");
			break;
		}
		used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "",
					 g.name);
	}
	return *names ? wg_check_printf(cc, "sm_%u (%s)", sm, names) : wg_check_printf(cc, "sm_%u", sm);
}

/* Every SASS and PTX architecture the object holds, registered or not. */
static const char *archs_of(wg_check_ctx *cc, const wg_object *o)
{
	char sass[1024], ptx[1024];
	wg_object_arch_set(o, WG_FATBIN_SASS, -1, sass, sizeof(sass));
	wg_object_arch_set(o, WG_FATBIN_PTX, -1, ptx, sizeof(ptx));
	return wg_check_printf(cc, "%s%s%s", sass, *sass && *ptx ? " " : "", ptx);
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_object **ext = calloc(s->objects.len + 1, sizeof(*ext));
	unsigned ccs[MAX_CCS];
	size_t next = 0, nccs = 0;
	bool *cov = NULL;
	int rc = WG_OK;
	if (!ext)
		return WG_ENOMEM;
	const wg_object *o;
	wg_for_each_object(cc, o) {
		if (!o->is_extension || !wg_object_is_cuda(o) || !carries_kernels(o) ||
		    !wg_rule_matches(cc, "objects", o->path, NULL, 0))
			continue;
		ext[next++] = o;
		for (size_t j = 0; j < o->fatbin_entries.len; j++) {
			const wg_fatbin_entry *e = wg_vec_at(&o->fatbin_entries, j);
			if (e->kind == WG_FATBIN_SASS || e->kind == WG_FATBIN_PTX)
				add_cc(ccs, &nccs, e->arch / 10, e->arch % 10);
		}
	}
	if (next < 2)
		goto done;
	for (size_t i = 0; i < wg_gpu_known_count(s->ctx); i++) {
		wg_gpu g = WG_GPU_INIT;
		if (wg_gpu_known(&g, s->ctx, i) == WG_OK)
			add_cc(ccs, &nccs, g.cc_major, g.cc_minor);
	}
	qsort(ccs, nccs, sizeof(*ccs), cmp_uint);
	if (!(cov = calloc(next * nccs + 1, sizeof(*cov)))) {
		rc = WG_ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < next; i++)
		for (size_t k = 0; k < nccs; k++)
			cov[i * nccs + k] = runs_on(ext[i], ccs[k]);
	/* Each extension once: the first GPU where it fails and another extension runs. */
	for (size_t i = 0; i < next && rc >= 0; i++) {
		size_t other = next, k;
		for (k = 0; k < nccs && other == next; k++) {
			if (cov[i * nccs + k])
				continue;
			for (size_t j = 0; j < next && other == next; j++)
				if (j != i && cov[j * nccs + k])
					other = j;
		}
		if (other == next)
			continue;
		wg_vars v = {0};
		wg_vars_set(&v, "object", ext[i]->path);
		wg_vars_set(&v, "archs", archs_of(cc, ext[i]));
		wg_vars_set(&v, "other_object", ext[other]->path);
		wg_vars_set(&v, "other_archs", archs_of(cc, ext[other]));
		wg_vars_set(&v, "gpu", gpu_label(cc, ccs[k - 1]));
		rc = wg_emit(cc, &v, ext[i]->path, NULL, NULL, 0);
	}
done:
	free(cov);
	free(ext);
	return rc < 0 ? rc : WG_OK;
}

static const char *const patterns[] = {"objects", NULL};
static const char *const vars[] = {"object", "archs", "other_object", "other_archs", "gpu", NULL};
const wg_check_kind wg_check_gpu_gencode_mismatch = {"gpu-gencode-mismatch", run, patterns,
						     vars, 0};

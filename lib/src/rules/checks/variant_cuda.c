/*
 * variant-cuda: PEP 825 properties `nvidia :: cuda_version_lower_bound :: X.Y` and
 * `nvidia :: cuda_version_upper_bound :: X[.Y]` claim the CUDA releases the wheel works with.
 * Against the objects: every CUDA library an object needs belongs to one CUDA major (the
 * rule's `cuda11`, `cuda12`... lists name each release's sonames, as WG-CUDA-001's do): a
 * range that reaches a major whose release does not ship it lies (libcudart.so.13 under a
 * lower bound of 12.8; libcudart.so.12 under 13.0). An upper bound X or X.0 is read as
 * exclusive (up to X-1), any other as inclusive. And the newest PTX ISA of an object needs
 * the driver of the CUDA release that introduced it (rules/gpu/cuda.yaml): a lower bound
 * below that release lies for every GPU that JIT-compiles the PTX.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

static bool parse_ver(const char *s, unsigned *ma, unsigned *mi, bool *has_minor)
{
	char *end;
	unsigned long a = strtoul(s, &end, 10), b = 0;
	if (end == s || a > 1000)
		return false;
	*has_minor = false;
	if (*end == '.') {
		const char *q = end + 1;
		b = strtoul(q, &end, 10);
		if (end == q || b > 1000)
			return false;
		*has_minor = true;
		if (*end == '.') /* a patch level is allowed and ignored */
			strtoul(end + 1, &end, 10);
	}
	if (*end)
		return false;
	*ma = (unsigned)a;
	*mi = (unsigned)b;
	return true;
}

static int emit(wg_check_ctx *cc, const char *prop, const wg_object *o, const char *evidence)
{
	wg_vars v = {0};
	wg_vars_set(&v, "property", prop);
	wg_vars_set(&v, "object", o ? o->path : "(every object)");
	wg_vars_set(&v, "evidence", evidence);
	return wg_emit(cc, &v, o && wg_scan_is_dist(cc->scan) ? o->path : NULL, NULL, NULL, 0);
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_strlist *props = &s->lists[WG_LIST_VARIANT_PROPERTIES];
	const char *lo = NULL, *hi = NULL;
	for (size_t p = 0; p < props->n; p++) {
		const char *val;
		if (wg_variant_is(props->v[p], "nvidia", "cuda_version_lower_bound", &val))
			lo = props->v[p];
		else if (wg_variant_is(props->v[p], "nvidia", "cuda_version_upper_bound", &val))
			hi = props->v[p];
	}
	if (!lo && !hi)
		return WG_OK;
	unsigned lma = 0, lmi = 0, hma = 0, hmi = 0;
	bool lhas = false, hhas = false;
	int rc;
	if (lo && !parse_ver(strrchr(lo, ' ') + 1, &lma, &lmi, &lhas)) {
		if ((rc = emit(cc, lo, NULL, "the value is not a version X.Y")) < 0)
			return rc;
		lo = NULL;
	}
	if (hi && !parse_ver(strrchr(hi, ' ') + 1, &hma, &hmi, &hhas)) {
		if ((rc = emit(cc, hi, NULL, "the value is not a version X[.Y]")) < 0)
			return rc;
		hi = NULL;
	}
	/* the highest major the upper bound admits */
	unsigned hmax = hi ? (hmi == 0 && hma > 0 ? hma - 1 : hma) : 0;
	const wg_object *o;
	wg_for_each_object(cc, o) {
		/* the CUDA majors of the libraries it needs */
		for (size_t j = 0; j < o->needed.n; j++) {
			const char *lib = o->needed.v[j];
			unsigned major = 0;
			for (size_t k = 0; k < cc->rule->nlists && !major; k++) {
				const char *name = cc->rule->lists[k].name;
				if (wg_has_prefix(name, "cuda") && wg_rule_matches(cc, name, lib, NULL, 0))
					major = (unsigned)strtoul(name + 4, NULL, 10);
			}
			if (!major)
				continue;
			const char *ev = NULL, *which = lo;
			if (lo && lma != major)
				ev = wg_check_printf(cc, "it needs %s, a CUDA %u library: CUDA %u.%u %s",
						     lib, major, lma, lmi,
						     lma > major ? "no longer ships it" : "does not ship it yet");
			else if (hi && (major > hma || major < hmax) && (which = hi))
				ev = major > hma ? wg_check_printf(cc, "it needs %s, a CUDA %u library, "
								   "which no CUDA up to %u.%u ships", lib,
								   major, hma, hmi)
						 : wg_check_printf(cc, "it needs %s, a CUDA %u library, "
								   "which CUDA %u (inside the bound) does "
								   "not ship", lib, major, hmax);
			if (ev && (rc = emit(cc, which, o, ev)) < 0)
				return rc;
		}
		/* the newest PTX ISA against the lower bound */
		if (!lo || !wg_object_is_cuda(o))
			continue;
		unsigned ima = 0, imi = 0;
		for (size_t j = 0; j < o->fatbin_entries.len; j++) {
			const wg_fatbin_entry *e = wg_vec_at(&o->fatbin_entries, j);
			unsigned a, b;
			if (e->kind != WG_FATBIN_PTX || !e->ptx_version ||
			    sscanf(e->ptx_version, "%u.%u", &a, &b) != 2)
				continue;
			if (a > ima || (a == ima && b > imi))
				ima = a, imi = b;
		}
		unsigned cm, cn;
		if (!ima || wg_ptx_isa_cuda(s->ctx, ima, imi, &cm, &cn) < 0)
			continue;
		if (cm > lma || (cm == lma && cn > lmi)) {
			const char *ev = wg_check_printf(cc, "its PTX is ISA %u.%u, which only the "
							 "drivers of CUDA %u.%u and later JIT-compile",
							 ima, imi, cm, cn);
			if ((rc = emit(cc, lo, o, ev)) < 0)
				return rc;
		}
	}
	return WG_OK;
}

static const char *const vars[] = {"property", "object", "evidence", NULL};
const wg_check_kind wg_check_variant_cuda = {"variant-cuda", run, NULL, vars, 0};

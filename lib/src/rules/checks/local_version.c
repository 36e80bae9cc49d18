/*
 * local-version: a local version label that names a build (flash-attn's
 * +cu12torch2.8cxx11abiFALSE, torch's +cu128) contradicting the target: its CUDA major, torch
 * major.minor or C++ ABI. The rule's `cuda`, `torch` and `abi` patterns read the label
 * (group 1 each).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules/checks/check.h"

static int emit(wg_check_ctx *cc, const char *label, const char *what, const char *have,
		const char *want)
{
	wg_vars v = {0};
	wg_vars_set(&v, "label", label);
	wg_vars_set(&v, "what", what);
	wg_vars_set(&v, "wheel_value", wg_check_printf(cc, "%s", have));
	wg_vars_set(&v, "target_value", wg_check_printf(cc, "%s", want));
	return wg_emit(cc, &v, NULL, NULL, NULL, 0);
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const wg_target *t = cc->target;
	const char *label = s->fields[WG_WHEEL_LOCAL_VERSION];
	if (s->kind != WG_SCAN_WHEEL || !label)
		return WG_OK;
	size_t c[4];
	int rc = WG_OK;
	char have[96], want[96];
	if (t->cuda_major && wg_rule_matches(cc, "cuda", label, c, 2) && c[2] != SIZE_MAX) {
		/* cu12 is CUDA 12; cu128 is 12.8; cu130 is 13.0 */
		unsigned d = (unsigned)strtoul(label + c[2], NULL, 10);
		unsigned major = d >= 100 ? d / 10 : d;
		if (major != t->cuda_major) {
			snprintf(have, sizeof(have), "CUDA %u (cu%.*s)", major, (int)(c[3] - c[2]),
				 label + c[2]);
			snprintf(want, sizeof(want), "CUDA %u.%u", t->cuda_major, t->cuda_minor);
			rc = emit(cc, label, "CUDA major", have, want);
		}
	}
	if (rc == WG_OK && t->torch[0] && wg_rule_matches(cc, "torch", label, c, 2) && c[2] != SIZE_MAX) {
		unsigned ma, mi;
		char tv[32];
		snprintf(tv, sizeof(tv), "%.*s", (int)(c[3] - c[2]), label + c[2]);
		if (sscanf(tv, "%u.%u", &ma, &mi) == 2 && (ma != t->torch_major || mi != t->torch_minor)) {
			snprintf(have, sizeof(have), "torch %s", tv);
			snprintf(want, sizeof(want), "torch %s", t->torch);
			rc = emit(cc, label, "torch version", have, want);
		}
	}
	if (rc == WG_OK && t->cxx11abi >= 0 && wg_rule_matches(cc, "abi", label, c, 2) &&
	    c[2] != SIZE_MAX) {
		bool wheel_new = !strncasecmp(label + c[2], "TRUE", 4);
		if ((int)wheel_new != t->cxx11abi) {
			snprintf(have, sizeof(have), "cxx11abi%s", wheel_new ? "TRUE" : "FALSE");
			snprintf(want, sizeof(want), "cxx11abi=%d", t->cxx11abi);
			rc = emit(cc, label, "C++ ABI", have, want);
		}
	}
	return rc;
}

static const char *const patterns[] = {"cuda", "torch", "abi", NULL};
static const char *const vars[] = {"label", "what", "wheel_value", "target_value", NULL};
const wg_check_kind wg_check_local_version = {"local-version", run, patterns, vars,
	WG_FACT_FILENAME};

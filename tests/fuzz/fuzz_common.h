/*
 * What every libFuzzer harness shares: one context, rule set and scanner made once (the
 * library's shared state, as an embedder holds it), and a scan of the input run through the
 * checks and both report formats, so that every reader and writer of untrusted text is reached.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_FUZZ_COMMON_H
#define WG_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wheelgate.h"

static wg_context *fz_ctx;
static wg_ruleset *fz_rules;
static wg_scanner *fz_sc;
static wg_target *fz_install, *fz_publish;

static void fz_init(void)
{
	if (fz_ctx)
		return;
	wg_options o = WG_OPTIONS_INIT;
	/* Small limits: the fuzzer explores, it does not need big members. */
	o.max_member_size = 16u << 20;
	o.max_total_size = 64u << 20;
	if (wg_context_new(&fz_ctx, &o) < 0 || wg_ruleset_new(&fz_rules, fz_ctx, NULL) < 0 ||
	    wg_scanner_new(&fz_sc, fz_ctx) < 0 || wg_target_new(&fz_install) < 0 ||
	    wg_target_new(&fz_publish) < 0)
		abort();
	if (wg_target_parse(fz_install, "python=3.12,torch=2.11.0+cu130,cxx11abi=1,cuda=13.0,"
					"glibc=2.39,glibcxx=3.4.33") < 0 ||
	    wg_target_add_gpu(fz_install, fz_ctx, "sm_90") < 0 ||
	    wg_target_set(fz_publish, "profile", "publish") < 0)
		abort();
}

/* Scans, checks in both profiles and formats everything; every result is freed. */
static void fz_scan_and_report(wg_scan *scan, const char *name) __attribute__((unused));
static void fz_scan_and_report(wg_scan *scan, const char *name)
{
	char *doc = NULL;
	if (wg_scan_format_text(&doc, scan, WG_TEXT_MEMBERS, NULL, 0) == WG_OK)
		wg_free(doc);
	wg_target *targets[] = {fz_install, fz_publish};
	for (size_t t = 0; t < 2; t++) {
		wg_report *r = NULL;
		if (wg_check(&r, fz_sc, fz_rules, scan, targets[t]) < 0)
			continue;
		const wg_report *reps[] = {r};
		const char *paths[] = {name};
		for (int f = WG_FORMAT_JSON; f <= WG_FORMAT_TEXT; f++) {
			doc = NULL;
			if (wg_reports_format(&doc, (wg_format)f, fz_rules, targets[t], paths, reps, NULL,
					      1, WG_SEV_ERROR) == WG_OK)
				wg_free(doc);
		}
		wg_report_free(r);
	}
}

#endif

/*
 * A --target spec and a --gpu name, as a user (or a config file, or the upload service's
 * request) writes them; a parsed target is then used by a check of an empty wheel, so that its
 * description reaches every report format.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_init();
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	wg_target *t = NULL;
	if (wg_target_new(&t) == WG_OK) {
		int parsed = wg_target_parse(t, s);
		/* "auto" asks NVML for the local GPUs: a different reader, not this harness's. */
		if (strcmp(s, "auto") != 0)
			(void)wg_target_add_gpu(t, fz_ctx, s);
		wg_gpu gpu = WG_GPU_INIT;
		(void)wg_gpu_parse(&gpu, fz_ctx, s);
		if (parsed == WG_OK) {
			static const uint8_t empty_zip[22] = {'P', 'K', 5, 6};
			wg_scan *scan = NULL;
			if (wg_scan_buffer(&scan, fz_sc, empty_zip, sizeof(empty_zip),
					   "x-1.0-py3-none-any.whl") == WG_OK) {
				wg_report *r = NULL;
				if (wg_check(&r, fz_sc, fz_rules, scan, t) == WG_OK) {
					const wg_report *reps[] = {r};
					const char *paths[] = {"x-1.0-py3-none-any.whl"};
					for (int f = WG_FORMAT_JSON; f <= WG_FORMAT_TEXT; f++) {
						char *doc = NULL;
						if (wg_reports_format(&doc, (wg_format)f, fz_rules, t, paths,
								      reps, NULL, 1, WG_SEV_ERROR) == WG_OK)
							wg_free(doc);
					}
					wg_report_free(r);
				}
				wg_scan_free(scan);
			}
		}
		wg_target_free(t);
	}
	free(s);
	return 0;
}

/*
 * A rule file (YAML with PCRE2 patterns and examples), written to a memory file and loaded as
 * --rules is; a rule set that loads is then used for a check of an empty wheel, so that its
 * texts reach every report format.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_init();
	int fd = memfd_create("rules.yaml", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		const char *paths[] = {path};
		wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
		ro.rule_paths = paths;
		ro.nrule_paths = 1;
		ro.no_default_rules = 1; /* the fuzzed file alone: the shipped ones load the same each time */
		wg_ruleset *rs = NULL;
		if (wg_ruleset_new(&rs, fz_ctx, &ro) == WG_OK) {
			static const uint8_t empty_zip[22] = {'P', 'K', 5, 6};
			wg_scan *scan = NULL;
			if (wg_scan_buffer(&scan, fz_sc, empty_zip, sizeof(empty_zip),
					   "x-1.0-py3-none-any.whl") == WG_OK) {
				wg_report *r = NULL;
				if (wg_check(&r, fz_sc, rs, scan, fz_install) == WG_OK) {
					const wg_report *reps[] = {r};
					const char *names[] = {"x-1.0-py3-none-any.whl"};
					for (int f = WG_FORMAT_JSON; f <= WG_FORMAT_TEXT; f++) {
						char *doc = NULL;
						if (wg_reports_format(&doc, (wg_format)f, rs, fz_install,
								      names, reps, NULL, 1,
								      WG_SEV_ERROR) == WG_OK)
							wg_free(doc);
					}
					wg_report_free(r);
				}
				wg_scan_free(scan);
			}
			wg_ruleset_free(rs);
		}
	}
	close(fd);
	return 0;
}

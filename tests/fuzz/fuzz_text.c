/*
 * The short strings a user or a wheel supplies: a --target spec, a GPU name, a wheel filename
 * (through the name of an otherwise valid empty wheel) and a rule file (written to a memory
 * file and loaded as --rules).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

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
		wg_target_parse(t, s);
		wg_target_add_gpu(t, fz_ctx, s);
		wg_target_free(t);
	}
	/* The empty zip archive, named by the input: the filename parser sees it all. */
	static const uint8_t empty_zip[22] = {'P', 'K', 5, 6};
	wg_scan *scan = NULL;
	if (wg_scan_buffer(&scan, fz_sc, empty_zip, sizeof(empty_zip), s) == WG_OK) {
		fz_scan_and_report(scan, s);
		wg_scan_free(scan);
	}
	/* A rule file. */
	int fd = memfd_create("rules.yaml", MFD_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, data, size) == (ssize_t)size) {
			char path[64];
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			const char *paths[] = {path};
			wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
			ro.rule_paths = paths;
			ro.nrule_paths = 1;
			wg_ruleset *rs = NULL;
			if (wg_ruleset_new(&rs, fz_ctx, &ro) == WG_OK)
				wg_ruleset_free(rs);
		}
		close(fd);
	}
	free(s);
	return 0;
}

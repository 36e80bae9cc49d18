/*
 * A wheel's filename: the name an upload or a download carries, given to an otherwise valid
 * empty wheel, so that the filename parser, the tag checks and every report format see it.
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
	static const uint8_t empty_zip[22] = {'P', 'K', 5, 6};
	wg_scan *scan = NULL;
	if (wg_scan_buffer(&scan, fz_sc, empty_zip, sizeof(empty_zip), s) == WG_OK) {
		fz_scan_and_report(scan, s);
		wg_scan_free(scan);
	}
	free(s);
	return 0;
}

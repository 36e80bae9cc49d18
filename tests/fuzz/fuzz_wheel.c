/*
 * A wheel from a stranger, in memory (wg_scan_buffer): the zip directory and members, RECORD,
 * WHEEL/METADATA, the Python import reading, every ELF member, then the checks and reports.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_init();
	wg_scan *scan = NULL;
	const char *name = "fuzz-1.0-cp312-cp312-manylinux_2_28_x86_64.whl";
	if (wg_scan_buffer(&scan, fz_sc, data, size, name) == WG_OK) {
		fz_scan_and_report(scan, name);
		wg_scan_free(scan);
	}
	return 0;
}

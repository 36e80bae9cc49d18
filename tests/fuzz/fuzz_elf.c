/*
 * An ELF object (a loose .so): headers, sections, the dynamic array through PT_LOAD, symbol
 * versions, dynamic symbols as the loader reads them (hash tables, relocations, DT_VERSYM)
 * and libbfd's section view as the cross-check, CUDA fatbins; then the checks and reports.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_init();
	/* Always an ELF image: the magic is given, the fuzzer spends its effort on the rest. */
	uint8_t *buf = malloc(size + 4);
	if (!buf)
		return 0;
	memcpy(buf, "\x7f" "ELF", 4);
	memcpy(buf + 4, data, size);
	wg_scan *scan = NULL;
	if (wg_scan_buffer(&scan, fz_sc, buf, size + 4, "fuzz.cpython-312-x86_64-linux-gnu.so") == WG_OK) {
		fz_scan_and_report(scan, "fuzz.so");
		wg_scan_free(scan);
	}
	free(buf);
	return 0;
}

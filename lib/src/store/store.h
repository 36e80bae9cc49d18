/*
 * store/: stored facts. A scan kept by the sha256 of its input as its inspect document with
 * its facts (store.c: written through output/, zstd), and read back into a scan that the
 * rules judge as they would the input (facts_read.c: wg_scan_from_facts, wg_facts_load).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_STORE_H
#define WG_STORE_H

#include "output/output.h"

/** The value of a hex digit, or -1. */
static inline int wg_hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

#endif

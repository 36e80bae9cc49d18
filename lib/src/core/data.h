/*
 * The files of rules/ compiled into the library (scripts/embed-data.cmake generates the table).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_DATA_H
#define WG_DATA_H
#include <stddef.h>

typedef struct {
	const char *path; /* relative to rules/, e.g. "classify/string-abi.yaml" */
	const char *text; /* NUL-terminated */
	size_t len;
} wg_data_file;

extern const wg_data_file wg_data_files[]; /* ends with a NULL path */

#endif

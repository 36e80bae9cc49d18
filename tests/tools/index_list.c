/*
 * The simple index reader (cli/index.c) run alone, for tests/integration/test_index.py:
 *   wg-index-list INDEX_URL PROJECT|- [TIMEOUT_S]
 * prints one JSON object per file on stdout ({"filename", "url", "sha256", "size", "yanked",
 * "requires_python"}, nulls where absent) and exits 0, or prints index_project_files's error
 * on stderr and exits 1 (2 on usage). PROJECT "-" passes NULL (INDEX_URL is the project page).
 * Built next to wheelgate (build/wg-index-list) so that it finds wheelgate-fetch.so there.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "index.h"

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: wg-index-list INDEX_URL PROJECT|- [TIMEOUT_S]\n");
		return 2;
	}
	char err[2048];
	index_file *f;
	size_t n;
	long timeout = argc == 4 ? strtol(argv[3], NULL, 10) : 30;
	if (index_project_files(&f, &n, argv[1], strcmp(argv[2], "-") ? argv[2] : NULL, timeout,
				err, sizeof(err)) < 0) {
		fprintf(stderr, "wg-index-list: %s\n", err);
		return 1;
	}
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_pack("{s:s, s:s, s:s?, s:I, s:b, s:s?}", "filename", f[i].filename,
				      "url", f[i].url, "sha256", f[i].sha256, "size",
				      (json_int_t)f[i].size, "yanked", f[i].yanked,
				      "requires_python", f[i].requires_python);
		char *line = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		if (!line) {
			fprintf(stderr, "wg-index-list: file %zu cannot be written as JSON\n", i);
			rc = 1;
		} else {
			puts(line);
		}
		free(line);
		json_decref(o);
	}
	index_files_free(f, n);
	return rc;
}

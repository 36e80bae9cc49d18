/*
 * The simple index reader (cli/index.c) run alone, for tests/integration/test_index.py:
 *   wg-index-list INDEX_URL PROJECT|- [TIMEOUT_S]
 * prints one JSON object per file on stdout ({"filename", "url", "sha256", "size", "yanked",
 * "requires_python"}, nulls where absent) and exits 0, or prints index_project_files's error
 * on stderr and exits 1 (2 on usage). PROJECT "-" passes NULL (INDEX_URL is the project page).
 *   wg-index-list --fetch-to FILE URL [HEADER...]
 * calls the fetch module's wg_fetch_v2 with the body into FILE (a descriptor, not memory) and
 * prints {"final_url", "content_type", "bytes"}: the path index.c does not take.
 * Built next to wheelgate (build/wg-index-list) so that it finds wheelgate-fetch.so there.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "helper.h"
#include "index.h"

typedef int (*fetch_v2_fn)(const char *url, const char *const *headers, int fd, char **body,
			   size_t *body_len, unsigned long long max, long timeout_s, int progress,
			   char **final_url, char **content_type, char *err, size_t errlen);

static int fetch_to(char **argv)
{
	char path[PATH_MAX], tried[2 * PATH_MAX + 64], err[1024];
	if (helper_path(HELPER_FETCH, path, sizeof(path), tried, sizeof(tried)) < 0) {
		fprintf(stderr, "wg-index-list: no %s: looked for %s\n", HELPER_FETCH, tried);
		return 1;
	}
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL), *sym = h ? dlsym(h, "wg_fetch_v2") : NULL;
	fetch_v2_fn fetch;
	if (!sym) {
		fprintf(stderr, "wg-index-list: %s: %s\n", path, dlerror());
		return 1;
	}
	memcpy(&fetch, &sym, sizeof(sym));
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	char *final = NULL, *ctype = NULL;
	int rc = fetch(argv[3], (const char *const *)argv + 4, fd, NULL, NULL, INDEX_BODY_MAX, 30, 0,
		       &final, &ctype, err, sizeof(err));
	off_t bytes = lseek(fd, 0, SEEK_END);
	close(fd);
	if (rc < 0) {
		fprintf(stderr, "wg-index-list: %s\n", err);
		return 1;
	}
	json_t *o = json_pack("{s:s, s:s?, s:I}", "final_url", final, "content_type", ctype, "bytes",
			      (json_int_t)bytes);
	char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (line)
		puts(line);
	free(line);
	json_decref(o);
	free(final);
	free(ctype);
	return line ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "--fetch-to"))
		return fetch_to(argv);
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

/*
 * An entry of the environment's library cache ($XDG_CACHE_HOME/wheelgate/libs/<hash>.json):
 * a file anyone with write access to the cache directory can change, read back as a library's
 * index. The input is written where the cache keeps the entry of the library it names (its
 * "path", "size" and "mtime" are read from it first, so that the fuzzer gets past the
 * staleness test) and read with wg_cache_get; every definition it holds is then looked up.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "loader/loader.h"

static char fz_dir[256];

static void fz_cleanup(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fz_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_cache: could not remove %s\n", fz_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_init();
	if (!fz_dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(fz_dir, sizeof(fz_dir), "%s/wg-fuzz-cache-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(fz_dir))
			abort();
		atexit(fz_cleanup);
	}
	const char *path = "/usr/lib/libfuzz.so";
	uint64_t fsize = 0, mtime = 0;
	json_t *j = json_loadb((const char *)data, size, 0, NULL);
	if (json_is_string(json_object_get(j, "path")))
		path = json_string_value(json_object_get(j, "path"));
	fsize = (uint64_t)json_integer_value(json_object_get(j, "size"));
	mtime = (uint64_t)json_integer_value(json_object_get(j, "mtime"));

	wg_env e = {0};
	e.sc = fz_sc;
	e.cache_dir = fz_dir;
	char file[4200];
	wg_cache_entry_path(file, sizeof(file), &e, path);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	bool whole = write(fd, data, size) == (ssize_t)size;
	close(fd);
	if (whole) {
		wg_lib *l = wg_cache_get(&e, path, fsize, mtime);
		if (l) {
			for (size_t i = 0; i < l->ndefs; i++)
				(void)wg_lib_lookup(l, l->defs[i].name, l->defs[i].version);
			for (size_t i = 0; i < l->nundefs; i++)
				(void)wg_lib_lookup(l, l->undefs[i].name, l->undefs[i].version);
			wg_lib_free(l);
		}
	}
	json_decref(j);
	return 0;
}

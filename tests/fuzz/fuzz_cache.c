/*
 * An entry of the environment's library cache ($XDG_CACHE_HOME/wheelgate/libs/<hash>.wgl, the
 * binary format 3 of loader/libcache.c): a file anyone with write access to the cache
 * directory can change, read back as a library's index. So that the fuzzer gets past the
 * staleness test and the checksum, the harness takes the key (size and mtime, and the path
 * when the entry's path offset names a string of its table) from the input and sets the
 * header's CRC-32 to the payload's before writing the input where the cache keeps the entry
 * of that path (a wrong checksum is check_env's test); it is read with wg_cache_get and
 * every definition it holds is then looked up.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <fcntl.h>
#include <libdeflate.h>
#include <stdio.h>
#include <string.h>
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

static uint32_t u32_at(const uint8_t *d, size_t off)
{
	uint32_t v;
	memcpy(&v, d + off, 4);
	return v;
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
	char path[4096] = "/usr/lib/libfuzz.so";
	uint64_t fsize = 0, mtime = 0;
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	if (size >= 84) {
		memcpy(&fsize, data + 24, 8);
		memcpy(&mtime, data + 32, 8);
		/* the table follows the fixed part and the records (format 3's layout) */
		uint64_t words = (uint64_t)u32_at(data, 60) + u32_at(data, 64) +
				 3ull * u32_at(data, 68) + 3ull * u32_at(data, 72) +
				 3ull * u32_at(data, 76);
		uint64_t tab = 84 + words * 4, off = u32_at(data, 40);
		if (tab < size && off < size - tab) {
			const uint8_t *s = data + tab + off;
			size_t n = strnlen((const char *)s, size - tab - off);
			if (n < sizeof(path) && tab + off + n < size)
				memcpy(path, s, n + 1);
		}
		uint32_t crc = libdeflate_crc32(0, data + 24, size - 24);
		memcpy(copy + 12, &crc, 4);
	}

	wg_env e = {0};
	e.sc = fz_sc;
	e.cache_dir = fz_dir;
	char file[4200];
	wg_cache_entry_path(file, sizeof(file), &e, path);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	bool whole = write(fd, copy, size) == (ssize_t)size;
	close(fd);
	free(copy);
	if (whole) {
		wg_lib *l = wg_cache_get(&e, path, fsize, mtime);
		if (l) {
			for (size_t i = 0; i < l->ndefs; i++)
				(void)wg_lib_lookup(l, l->defs[i].name, l->defs[i].version);
			for (size_t i = 0; i < l->nundefs; i++)
				(void)wg_lib_lookup(l, l->undefs[i].name, l->undefs[i].version);
			for (size_t i = 0; i < l->needed.n; i++)
				(void)strlen(l->needed.v[i]);
			for (size_t i = 0; i < l->verneeds.len; i++) {
				const wg_verneed *v = wg_vec_at(&l->verneeds, i);
				(void)strlen(v->file);
				(void)strlen(v->version);
			}
			wg_lib_free(l);
		}
	}
	return 0;
}

/*
 * Times the fatbin listing of one ELF file against reading it: read() of the whole file into
 * memory, the ELF facts (libbfd), then every fatbin container and entry (registered sections,
 * wrappers and the whole-file scan). Prints the three times and the counts.
 * Usage: bench_fatbin FILE [REPEAT]
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "facts/facts.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_problem(void *payload, int code, const char *fmt, ...)
{
	(void)payload;
	(void)code;
	(void)fmt;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_fatbin FILE [REPEAT]\n");
		return 2;
	}
	int repeat = argc > 2 ? atoi(argv[2]) : 3;
	struct stat st;
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(argv[1]);
		return 2;
	}
	uint8_t *buf = malloc((size_t)st.st_size);
	double best_read = 1e9, best_elf = 1e9, best_fat = 1e9;
	size_t containers = 0, entries = 0;
	for (int r = 0; r < repeat; r++) {
		double t0 = now();
		size_t got = 0;
		while (got < (size_t)st.st_size) {
			ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
			if (n <= 0) {
				perror("read");
				return 2;
			}
			got += (size_t)n;
		}
		double t1 = now();
		wg_arena a = {0};
		wg_object o;
		wg_err err = {0};
		memset(&o, 0, sizeof(o));
		o.path = argv[1];
		if (wg_elf_read(&o, &a, buf, got, 4000000, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		double t2 = now();
		wg_fatbin_read(&o, &a, buf, got, on_problem, NULL);
		double t3 = now();
		containers = o.fatbin_containers.len;
		entries = o.fatbin_entries.len;
		wg_vec_free(&o.fatbin_containers);
		wg_vec_free(&o.fatbin_entries);
		wg_strlist_free(&o.needed);
		wg_vec_free(&o.verneeds);
		wg_strlist_free(&o.verdefs);
		wg_arena_free(&a);
		best_read = t1 - t0 < best_read ? t1 - t0 : best_read;
		best_elf = t2 - t1 < best_elf ? t2 - t1 : best_elf;
		best_fat = t3 - t2 < best_fat ? t3 - t2 : best_fat;
	}
	printf("%s: %.0f MiB\n", argv[1], (double)st.st_size / 1048576);
	printf("  read the file into memory     %8.3f s\n", best_read);
	printf("  ELF facts (libbfd, symbols)   %8.3f s\n", best_elf);
	printf("  fatbin listing                %8.3f s  (%zu containers, %zu entries; %.0f%% of the read)\n",
	       best_fat, containers, entries, 100.0 * best_fat / best_read);
	free(buf);
	close(fd);
	return 0;
}

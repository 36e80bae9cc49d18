/*
 * The harnesses without libFuzzer: each file named (or each file of each directory named) is
 * read and given to LLVMFuzzerTestOneInput once. ctest runs every seed and every input that
 * ever crashed (regress/) this way in the normal and sanitizer builds, so that a fixed crash
 * stays fixed where no fuzzer is built.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs are small (the fuzzer's max_len); a larger file is a mistake in the corpus. */
#define REPLAY_MAX (16u << 20)

static int replay_file(const char *path, unsigned *count)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	uint8_t *buf = malloc(REPLAY_MAX);
	size_t n = buf ? fread(buf, 1, REPLAY_MAX, f) : 0;
	int more = buf && fgetc(f) != EOF;
	fclose(f);
	if (!buf || more) {
		fprintf(stderr, "replay: %s: %s\n", path,
			buf ? "larger than 16 MiB: not a fuzzer input" : "out of memory");
		free(buf);
		return -1;
	}
	/* A copy of exactly n bytes, so that ASan sees a read past the input's end. */
	uint8_t *in = malloc(n ? n : 1);
	if (!in) {
		free(buf);
		return -1;
	}
	memcpy(in, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(in, n);
	free(in);
	(*count)++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay(const char *path, unsigned *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path, count);
	struct dirent **list = NULL;
	int n = scandir(path, &list, NULL, NULL);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = 0;
	char **names = malloc((size_t)n * sizeof(*names) + 1);
	size_t nn = 0;
	for (int i = 0; i < n; i++) {
		if (names && list[i]->d_name[0] != '.')
			names[nn++] = list[i]->d_name;
	}
	if (!names)
		rc = -1;
	else
		qsort(names, nn, sizeof(*names), cmp_names);
	for (size_t i = 0; i < nn && rc == 0; i++) {
		char sub[4096];
		snprintf(sub, sizeof(sub), "%s/%s", path, names[i]);
		if (stat(sub, &st) == 0 && S_ISREG(st.st_mode))
			rc = replay_file(sub, count);
	}
	free(names);
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...  (runs each input through the harness once)\n",
			argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (replay(argv[i], &count) != 0)
			return 1;
	printf("%s: %u inputs replayed\n", argv[0], count);
	if (count == 0) {
		fprintf(stderr, "replay: no input found: an empty corpus tests nothing\n");
		return 1;
	}
	return 0;
}

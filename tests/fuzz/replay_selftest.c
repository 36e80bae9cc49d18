/*
 * A harness for testing replay_main.c's limits (ctest fuzz-replay-limits): an input
 * "sleep S" takes S seconds, "alloc M" touches M MiB (freed before it returns), anything else
 * returns at once.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[64];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
	memcpy(s, data, n);
	s[n] = '\0';
	double v;
	if (sscanf(s, "sleep %lf", &v) == 1) {
		/* Slept in short steps until the time has passed: a signal cuts a sleep short. */
		double end = now_s() + v;
		struct timespec step = {0, 10 * 1000 * 1000};
		while (now_s() < end)
			nanosleep(&step, NULL);
	} else if (sscanf(s, "alloc %lf", &v) == 1 && v > 0) {
		size_t bytes = (size_t)v << 20;
		volatile char *p = malloc(bytes);
		if (p) {
			for (size_t i = 0; i < bytes; i += 4096)
				p[i] = 1;
			free((void *)p);
		}
	}
	return 0;
}

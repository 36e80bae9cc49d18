/*
 * The harnesses without libFuzzer: each file named (or each file of each directory named) is
 * read and given to LLVMFuzzerTestOneInput once. ctest runs every seed and every input that
 * ever crashed or was slow (regress/, and the generated hostile inputs) this way in the normal
 * and sanitizer builds, so that a fixed crash stays fixed where no fuzzer is built.
 *
 * Each input is bounded, and an input over a bound fails the run naming its file:
 * - time: an input that takes longer than the limit (WG_REPLAY_SECONDS, 10 s in an optimised
 *   build, 3 times that under AddressSanitizer or without optimisation) fails once it is done,
 *   with its time; one still running at twice the limit is stopped by an alarm that names it;
 * - memory: the input during which the process's peak resident size (getrusage) first passes
 *   the limit (WG_REPLAY_MB, 700 MiB; 3 times that under AddressSanitizer) fails, with the
 *   peak; without AddressSanitizer an address-space limit (RLIMIT_AS) of 4 times that and
 *   512 MiB keeps a runaway input from taking the machine.
 * All inputs run; the status is 1 when any failed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs are small (the fuzzer's max_len); a larger file is a mistake in the corpus. */
#define REPLAY_MAX (16u << 20)

#if defined(__SANITIZE_ADDRESS__)
#define REPLAY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REPLAY_ASAN 1
#endif
#endif
#ifndef REPLAY_ASAN
#define REPLAY_ASAN 0
#endif
#ifdef __OPTIMIZE__
#define REPLAY_SLOW_BUILD REPLAY_ASAN
#else
#define REPLAY_SLOW_BUILD 1
#endif

static double limit_s = 10;     /* per input, seconds */
static long limit_kb = 700L << 10; /* peak resident size, KiB */
static unsigned failed;

/* The input being run, for the alarm's message (written before each input, read in the
 * handler: a plain static buffer, only async-signal-safe calls there). */
static char current[4096];
static size_t current_len;

static void on_alarm(int sig)
{
	(void)sig;
	static const char a[] = "replay: ";
	static const char b[] = ": SLOW INPUT: still running at twice the time limit (stopped)\n";
	ssize_t r = write(2, a, sizeof(a) - 1);
	r = write(2, current, current_len);
	r = write(2, b, sizeof(b) - 1);
	(void)r;
	_exit(1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_kb(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

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
			buf ? "larger than 16 MiB: not a fuzzer input"
			    : "out of memory (the address-space guard: 4 x WG_REPLAY_MB + 512 MiB)");
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

	current_len = strlen(path) < sizeof(current) ? strlen(path) : sizeof(current) - 1;
	memcpy(current, path, current_len);
	long kb0 = peak_kb();
	unsigned alarm_s = (unsigned)(2 * limit_s) + 2; /* at least twice the limit */
	alarm(alarm_s);
	double t0 = now_s();
	LLVMFuzzerTestOneInput(in, n);
	double dt = now_s() - t0;
	alarm(0);
	long kb = peak_kb();
	free(in);
	(*count)++;
	if (dt > limit_s) {
		fprintf(stderr, "replay: %s: SLOW INPUT: %.2f s, over the %g s limit per input\n",
			path, dt, limit_s);
		failed++;
	}
	if (kb > limit_kb && kb0 <= limit_kb) {
		fprintf(stderr,
			"replay: %s: MEMORY: the peak resident size reached %ld MiB during this input, "
			"over the %ld MiB limit\n",
			path, kb >> 10, limit_kb >> 10);
		failed++;
	}
	if (getenv("WG_REPLAY_VERBOSE"))
		fprintf(stderr, "replay: %s: %zu bytes, %.3f s, peak %ld MiB\n", path, n, dt, kb >> 10);
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

static void set_limits(void)
{
	double scale = REPLAY_SLOW_BUILD ? 3 : 1;
	const char *s = getenv("WG_REPLAY_SECONDS");
	const char *m = getenv("WG_REPLAY_MB");
	limit_s = (s && atof(s) > 0 ? atof(s) : 10) * scale;
	limit_kb = (m && atol(m) > 0 ? atol(m) : 700) * (REPLAY_ASAN ? 3 : 1) * 1024L;
	signal(SIGALRM, on_alarm);
#if !REPLAY_ASAN
	/* A guard for the machine, far above the limit checked above. */
	struct rlimit rl;
	rlim_t as = ((rlim_t)limit_kb * 4 + (512u << 10)) * 1024;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > as)) {
		rl.rlim_cur = as;
		setrlimit(RLIMIT_AS, &rl);
	}
#endif
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...  (runs each input through the harness once)\n"
				"  WG_REPLAY_SECONDS (10) and WG_REPLAY_MB (700): limits per input\n",
			argv[0]);
		return 2;
	}
	set_limits();
	for (int i = 1; i < argc; i++)
		if (replay(argv[i], &count) != 0)
			return 1;
	printf("%s: %u inputs replayed (limits per input: %g s, %ld MiB peak)\n", argv[0], count,
	       limit_s, limit_kb >> 10);
	if (count == 0) {
		fprintf(stderr, "replay: no input found: an empty corpus tests nothing\n");
		return 1;
	}
	if (failed) {
		fprintf(stderr, "replay: %u input(s) over a limit (named above)\n", failed);
		return 1;
	}
	return 0;
}

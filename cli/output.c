/*
 * Terminal helpers for the CLI: colour only on a terminal (and never with NO_COLOR), sizes,
 * and a one-line progress display on stderr.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

bool use_color;
static bool progress_shown;
/* Progress comes from whichever thread reads a large member. */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;

void output_init(void)
{
	/* libzip converts every member's DOS time with mktime, and glibc's mktime stats
	 * /etc/localtime at each call unless TZ is set: 40,000 stats for a wheel of 20,000
	 * members. Naming the same file the default would read keeps the same zone, read once. */
	if (!getenv("TZ"))
		setenv("TZ", ":/etc/localtime", 0);
	const char *nc = getenv("NO_COLOR");
	const char *term = getenv("TERM");
	use_color = isatty(STDOUT_FILENO) && !(nc && *nc) && !(term && !strcmp(term, "dumb"));
}

const char *c_bold(void) { return use_color ? "\033[1m" : ""; }
const char *c_red(void) { return use_color ? "\033[31m" : ""; }
const char *c_yellow(void) { return use_color ? "\033[33m" : ""; }
const char *c_green(void) { return use_color ? "\033[32m" : ""; }
const char *c_dim(void) { return use_color ? "\033[2m" : ""; }
const char *c_off(void) { return use_color ? "\033[0m" : ""; }

void human_size(char *buf, size_t n, unsigned long long bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%llu B", bytes);
	else
		snprintf(buf, n, "%.1f %s", v, units[u]);
}

void progress_cb(const char *what, uint64_t done, uint64_t total, void *payload)
{
	(void)payload;
	if (!isatty(STDERR_FILENO))
		return;
	char d[32], t[32];
	human_size(d, sizeof(d), done);
	human_size(t, sizeof(t), total);
	unsigned pct = total ? (unsigned)(done * 100 / total) : 100;
	pthread_mutex_lock(&progress_lock);
	fprintf(stderr, "\r\033[Kreading %s: %3u%% (%s of %s)", what, pct, d, t);
	progress_shown = true;
	pthread_mutex_unlock(&progress_lock);
}

void progress_clear(void)
{
	pthread_mutex_lock(&progress_lock);
	if (progress_shown) {
		fprintf(stderr, "\r\033[K");
		progress_shown = false;
	}
	pthread_mutex_unlock(&progress_lock);
}

void progress_line(const char *line)
{
	pthread_mutex_lock(&progress_lock);
	fprintf(stderr, "\r\033[K%s", line);
	progress_shown = *line != '\0';
	pthread_mutex_unlock(&progress_lock);
}

int parse_jobs(const char *cmd, const char *arg, uint32_t *out)
{
	char *end = NULL;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || !end || *end || end == arg || *arg == '-' || v > 256) {
		fprintf(stderr, "wheelgate %s: -j takes a number of threads from 1 to 256 (0: one "
			"per CPU this process may use), not '%s'\n", cmd, esc(arg));
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int read_stdin(unsigned char **out, size_t *len, size_t limit)
{
	size_t cap = 1 << 20, n = 0;
	unsigned char *buf = malloc(cap);
	if (!buf)
		return -1;
	for (;;) {
		if (n > limit) {
			free(buf);
			return -2; /* counted while reading: at most limit + one read are held */
		}
		if (n == cap) {
			/* Grown to at most limit + 1 bytes: one more byte says it is over the limit. */
			if (cap > limit) {
				free(buf);
				return -2;
			}
			cap = cap > (limit + 1) / 2 ? limit + 1 : cap * 2;
			unsigned char *p = realloc(buf, cap);
			if (!p) {
				free(buf);
				return -1;
			}
			buf = p;
		}
		ssize_t r = read(STDIN_FILENO, buf + n, cap - n);
		if (r < 0) {
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

const char *cli_base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path;
}

bool wg_has_suffix_cli(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

const char *esc(const char *s)
{
	/* A few results live at once (several in one printf); each is freed when reused. */
	static char *ring[16];
	static unsigned next;
	if (!s)
		return NULL;
	char *e = NULL;
	if (wg_escape(&e, s, WG_ESCAPE_CONTROL) < 0)
		return "(out of memory)";
	unsigned i = next++ % 16;
	wg_free(ring[i]);
	ring[i] = e;
	return e;
}

int queue_wheels(char ***queue, size_t *n, size_t at, const wg_scan *scan)
{
	size_t nw = wg_scan_wheel_count(scan);
	if (!nw)
		return 0;
	char **q = realloc(*queue, (*n + nw) * sizeof(*q));
	if (!q)
		return -1;
	*queue = q;
	memmove(q + at + 1 + nw, q + at + 1, (*n - at - 1) * sizeof(*q));
	for (size_t k = 0; k < nw; k++)
		q[at + 1 + k] = NULL;
	*n += nw;
	for (size_t k = 0; k < nw; k++)
		if (!(q[at + 1 + k] = strdup(wg_scan_wheel_path(scan, k)))) {
			/* undo: the queue stays as it was */
			for (size_t j = 0; j < k; j++)
				free(q[at + 1 + j]);
			memmove(q + at + 1, q + at + 1 + nw, (*n - at - 1 - nw) * sizeof(*q));
			*n -= nw;
			return -1;
		}
	return 0;
}

void suggest_option(char **argv, int optind_now, const struct option *longopts)
{
	/* The word getopt stopped at: the one before optind, or at optind for a missing value. */
	const char *arg = optind_now > 0 ? argv[optind_now - 1] : NULL;
	if (!arg || strncmp(arg, "--", 2) != 0)
		return;
	char word[128];
	size_t n = strcspn(arg + 2, "=");
	if (n >= sizeof(word))
		return;
	memcpy(word, arg + 2, n);
	word[n] = '\0';
	const char *names[128];
	size_t k = 0;
	for (const struct option *o = longopts; o->name && k < 128; o++)
		names[k++] = o->name;
	for (size_t i = 0; i < k; i++)
		if (!strcmp(names[i], word))
			return; /* known: a missing or extra value, which getopt told */
	const char *best = wg_suggest(word, names, k);
	if (best)
		fprintf(stderr, "did you mean '--%s'?\n", best);
}

/*
 * Terminal helpers for the CLI: colour only on a terminal (and never with NO_COLOR), sizes,
 * and a one-line progress display on stderr.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
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

/* Whether the first n bytes of stdin may start what wg_scan_fd reads: a zip (a local file
 * header, or the end record of an empty archive) or an ELF object. Too few bytes to tell: no. */
static bool may_start_input(const unsigned char *b, size_t n)
{
	return n >= 4 && (!memcmp(b, "PK\003\004", 4) || !memcmp(b, "PK\005\006", 4) ||
			  !memcmp(b, "\177ELF", 4));
}

static int tmp_file(void)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
#ifdef O_TMPFILE
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
#endif
	/* no O_TMPFILE there: a named file, unlinked at once */
	char path[4096];
	snprintf(path, sizeof(path), "%s/wheelgate-stdin-XXXXXX", dir);
	int f = mkstemp(path);
	if (f >= 0)
		unlink(path);
	return f;
}

unsigned char spool_head[16];
size_t spool_head_len;

int spool_stdin(size_t limit, char *seen, size_t seenlen)
{
	enum { CHUNK = 1 << 20 };
	unsigned char *buf = malloc(CHUNK);
	int fd = -1, rc = -1;
	size_t n = 0, head = 0;
	if (!buf)
		return -1;
	/* the first bytes decide before anything is kept: zeros or text are refused at once */
	while (head < 4) {
		ssize_t r = read(STDIN_FILENO, buf + head, CHUNK - head);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0)
				goto done;
			break;
		}
		head += (size_t)r;
	}
	if (!may_start_input(buf, head)) {
		size_t o = 0;
		spool_head_len = head < sizeof(spool_head) ? head : sizeof(spool_head);
		memcpy(spool_head, buf, spool_head_len);
		seen[0] = '\0';
		for (size_t i = 0; i < head && i < 16 && o + 4 < seenlen; i++)
			o += (size_t)snprintf(seen + o, seenlen - o, "%s%02x", i ? " " : "", buf[i]);
		if (!head)
			snprintf(seen, seenlen, "nothing (stdin is empty)");
		rc = -3;
		goto done;
	}
	if ((fd = tmp_file()) < 0)
		goto done;
	for (size_t len = head;;) {
		if (n + len > limit) {
			rc = -2; /* counted while read: never more than limit + one read written */
			goto done;
		}
		for (size_t w = 0; w < len;) {
			ssize_t x = write(fd, buf + w, len - w);
			if (x < 0 && errno == EINTR)
				continue;
			if (x <= 0)
				goto done;
			w += (size_t)x;
		}
		n += len;
		ssize_t r = read(STDIN_FILENO, buf, CHUNK);
		if (r < 0 && errno == EINTR) {
			len = 0;
			continue;
		}
		if (r < 0)
			goto done;
		if (r == 0)
			break;
		len = (size_t)r;
	}
	rc = fd;
	fd = -1;
done:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
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

int path_dir_len(const char *dir)
{
	size_t n = strlen(dir);
	while (n > 0 && dir[n - 1] == '/')
		n--;
	return n > INT_MAX ? INT_MAX : (int)n;
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

/* The limits --limit sets, by the names the library's messages give. */
static const struct {
	const char *name;
	size_t off;
	bool u64;
} limits[] = {
#define L64(f) {#f, offsetof(wg_options, f), true}
#define L32(f) {#f, offsetof(wg_options, f), false}
	L64(max_member_size), L64(max_total_size), L32(max_members), L32(max_ratio),
	L32(max_symbols), L32(max_files), L64(max_text_total), L64(max_python_bytes),
	L32(max_python_lines), L32(max_record_rows), L64(max_rule_file), L64(max_stdin),
	L64(max_cache_entry), L32(max_rule_findings), L32(max_findings), L32(max_problems),
	L32(max_fatbin_entries), L32(max_listed_entries), L64(max_member_held),
#undef L64
#undef L32
};

bool parse_limit(wg_options *o, const char *cmd, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
	uint64_t v;
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		if (strlen(limits[i].name) != nl || strncmp(limits[i].name, arg, nl))
			continue;
		if (!eq || !parse_size(eq + 1, &v) || (!limits[i].u64 && v > UINT32_MAX)) {
			fprintf(stderr, "wheelgate %s: --limit %s= takes a number%s, not '%s'\n", cmd,
				limits[i].name, limits[i].u64 ? " (or a size with K, M or G)" : "",
				esc(eq ? eq + 1 : ""));
			return false;
		}
		char *at = (char *)o + limits[i].off;
		if (limits[i].u64)
			memcpy(at, &v, sizeof(v));
		else
			memcpy(at, &(uint32_t){(uint32_t)v}, sizeof(uint32_t));
		return true;
	}
	const char *names[sizeof(limits) / sizeof(limits[0])];
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		names[i] = limits[i].name;
	char word[64];
	snprintf(word, sizeof(word), "%.*s", (int)(nl < 63 ? nl : 63), arg);
	const char *near = wg_suggest(word, names, sizeof(limits) / sizeof(limits[0]));
	fprintf(stderr, "wheelgate %s: --limit: no limit '%s'%s%s%s (NAME=VALUE; 'wheelgate %s "
		"--help' lists them)\n", cmd, esc(word), near ? "; did you mean '" : "",
		near ? near : "", near ? "'?" : "", cmd);
	return false;
}

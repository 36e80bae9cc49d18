/*
 * `wheelgate select`'s SOURCEs as candidates: a directory of wheels, a wheel, a list file of
 * paths and URLs, a PEP 751 lock file (every wheel of every package: lock.c's reader), the URL
 * of a wheel. A PEP 503/691 simple index URL is the index module's (cli/index.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "digest.h"
#include "index.h"
#include "lock.h"
#include "select.h"

#define LIST_MAX (16u << 20) /* the most a list file may have */

const char *select_source_who = SELECT_PROG;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", select_source_who);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static char *dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

void candidates_free(candidates *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		candidate *c = &cs->c[i];
		free(c->where);
		free(c->filename);
		free(c->path);
		free(c->url);
		free(c->sha256);
		free(c->version);
		free(c->error);
		wg_report_free(c->rep);
		for (size_t r = 0; r < c->nreasons; r++)
			free(c->reasons[r]);
		free(c->reasons);
	}
	free(cs->c);
	memset(cs, 0, sizeof(*cs));
}

/* The name and version of a wheel file name (NAME-VERSION[-BUILD]-PY-ABI-PLAT.whl). */
static void name_version(candidate *c)
{
	const char *f = c->filename;
	size_t len = strlen(f);
	c->project[0] = '\0';
	if (len < 5 || strcasecmp(f + len - 4, ".whl"))
		return;
	const char *d1 = strchr(f, '-');
	const char *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
	if (!d1 || !d2 || d1 == f)
		return;
	if (wg_name_normalize(c->project, sizeof(c->project), f, (size_t)(d1 - f)) < 0)
		c->project[0] = '\0';
	c->version = strndup(d1 + 1, (size_t)(d2 - d1 - 1));
}

/* Appends one candidate; sha256 (when given) is checked to be 64 hex digits. */
static int add(candidates *cs, const char *source, const char *where, const char *path,
	       const char *url, const char *filename, const char *sha256, long long size)
{
	if (cs->n >= SELECT_MAX_CANDIDATES) {
		say("%s: more than %d candidates\n", esc(source), SELECT_MAX_CANDIDATES);
		return -1;
	}
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 64;
		candidate *c = realloc(cs->c, cap * sizeof(*c));
		if (!c)
			goto oom;
		cs->c = c;
		cs->cap = cap;
	}
	candidate *c = &cs->c[cs->n];
	memset(c, 0, sizeof(*c));
	c->source = source;
	c->size = size;
	c->rank = -1;
	c->where = dup0(where);
	c->path = dup0(path);
	c->url = dup0(url);
	c->filename = dup0(filename);
	c->sha256 = dup0(sha256);
	cs->n++;
	if (!c->where || !c->filename || (path && !c->path) || (url && !c->url) ||
	    (sha256 && !c->sha256))
		goto oom;
	if (c->sha256) {
		for (char *p = c->sha256; *p; p++)
			*p = (char)(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p);
		if (!is_sha256_hex(c->sha256)) {
			say("%s: %s: the sha256 given is not 64 hex digits\n", esc(source), esc(where));
			return -1;
		}
	}
	name_version(c);
	return 0;
oom:
	say("out of memory\n");
	return -1;
}

static bool is_url(const char *s)
{
	return !strncasecmp(s, "http://", 7) || !strncasecmp(s, "https://", 8) ||
	       !strncasecmp(s, "file:", 5);
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The last path part of a URL, before any query or fragment, percent-decoded ("%2B": '+',
 * as pip and indexes write local labels); %00 and '/' stay encoded. */
static char *url_file(const char *url)
{
	size_t end = strcspn(url, "?#");
	const char *s = url + end;
	while (s > url && s[-1] != '/')
		s--;
	char *out = strndup(s, (size_t)(url + end - s));
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; out[i]; i++) {
		int h, l, c;
		if (out[i] == '%' && (h = hexval(out[i + 1])) >= 0 && (l = hexval(out[i + 2])) >= 0 &&
		    (c = h * 16 + l) != 0 && c != '/') {
			out[o++] = (char)c;
			i += 2;
		} else {
			out[o++] = out[i];
		}
	}
	out[o] = '\0';
	return out;
}

/* One URL (with pip's #sha256=HEX fragment, if any). */
static int add_url(candidates *cs, const char *source, const char *url)
{
	char hex[65] = "";
	const char *frag = strstr(url, "#sha256=");
	if (frag)
		snprintf(hex, sizeof(hex), "%.64s", frag + 8);
	char *file = url_file(url);
	char *bare = strndup(url, frag ? (size_t)(frag - url) : strlen(url));
	int rc = -1;
	if (!file || !bare)
		say("out of memory\n");
	else if (!*file)
		say("%s: %s: names no file\n", esc(source), esc(url));
	else
		rc = add(cs, source, bare, NULL, bare, file, *hex ? hex : NULL, -1);
	free(file);
	free(bare);
	return rc;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.whl of a directory (not below it: a release's files sit side by side). */
static int from_dir(candidates *cs, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		say("%s: %s\n", esc(dir), strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (!wg_has_suffix_cli(e->d_name, ".whl"))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **x = realloc(names, cap * sizeof(*x));
			if (!x) {
				rc = -1;
				break;
			}
			names = x;
		}
		if (!(names[n] = strdup(e->d_name)))
			rc = -1;
		else
			n++;
	}
	closedir(d);
	if (rc < 0)
		say("out of memory\n");
	if (n)
		qsort(names, n, sizeof(*names), cmpstr);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st;
		int l = snprintf(path, sizeof(path), "%.*s/%s", path_dir_len(dir), dir, names[i]);
		if (rc == 0 && l > 0 && (size_t)l < sizeof(path) && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode))
			rc = add(cs, dir, path, path, NULL, names[i], NULL, (long long)st.st_size);
		free(names[i]);
	}
	free(names);
	if (rc == 0 && n == 0) {
		say("%s: no wheel (*.whl) in this directory\n", esc(dir));
		rc = -1;
	}
	return rc;
}

/* A list file: a path (relative to the list's directory), a file: or an http(s): URL a line;
 * blank lines and '#' comments skipped. */
static int from_list(candidates *cs, const char *list)
{
	FILE *f = fopen(list, "r");
	if (!f) {
		say("%s: %s\n", esc(list), strerror(errno));
		return -1;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", list);
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	char *line = NULL;
	size_t cap = 0, total = 0, before = cs->n;
	ssize_t len;
	unsigned lineno = 0;
	int rc = 0;
	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		total += (size_t)len;
		if (total > LIST_MAX) {
			say("%s: more than %u bytes: not a list of wheels\n", esc(list), LIST_MAX);
			rc = -1;
			break;
		}
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		size_t l = strcspn(s, "\r\n");
		while (l && (s[l - 1] == ' ' || s[l - 1] == '\t'))
			l--;
		s[l] = '\0';
		if (!*s || *s == '#')
			continue;
		if (is_url(s)) {
			rc = add_url(cs, list, s);
			continue;
		}
		char path[PATH_MAX];
		int pl = s[0] == '/' ? snprintf(path, sizeof(path), "%s", s)
				     : snprintf(path, sizeof(path), "%.*s/%s", path_dir_len(dir), dir, s);
		struct stat st;
		if (pl < 0 || (size_t)pl >= sizeof(path)) {
			say("%s:%u: the path is too long\n", esc(list), lineno);
			rc = -1;
		} else if (!wg_has_suffix_cli(s, ".whl")) {
			say("%s:%u: %s is not a wheel (*.whl) or a URL\n", esc(list), lineno, esc(s));
			rc = -1;
		} else {
			rc = add(cs, list, path, path, NULL, cli_base_name(path), NULL,
				 stat(path, &st) == 0 ? (long long)st.st_size : -1);
		}
	}
	free(line);
	fclose(f);
	if (rc == 0 && cs->n == before) {
		say("%s: lists no wheel\n", esc(list));
		rc = -1;
	}
	return rc;
}

static int from_lock(candidates *cs, const char *lockpath)
{
	lock_wheel_ref *w = NULL;
	size_t n = 0;
	static char who[96];
	snprintf(who, sizeof(who), "%s: lock", select_source_who);
	lock_set_who(who);
	if (lock_wheels(&w, &n, lockpath) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!w[i].path && !w[i].url) {
			say("%s:%u: a wheel of %s with neither a path nor a url\n", esc(lockpath),
			    w[i].line, esc(w[i].project));
			rc = -1;
			continue;
		}
		rc = add(cs, lockpath, w[i].path ? w[i].path : w[i].url, w[i].path, w[i].url,
			 w[i].filename, w[i].sha256, w[i].size);
	}
	if (rc == 0 && n == 0) {
		say("%s: the lock lists no wheel\n", esc(lockpath));
		rc = -1;
	}
	lock_wheels_free(w, n);
	return rc;
}

/* The files of a simple index project page (https://host/simple/PROJECT/), yanked ones left
 * out (PEP 592: an installer takes them only when pinned by ==, and select chooses). The page
 * is fetched within SELECT_INDEX_TIMEOUT seconds. */
static int from_index(candidates *cs, const char *url)
{
	index_file *f = NULL;
	size_t n = 0;
	char err[1024];
	if (index_project_files(&f, &n, url, NULL, SELECT_INDEX_TIMEOUT, err, sizeof(err)) < 0) {
		say("%s\n", esc(err));
		return -1;
	}
	int rc = 0;
	size_t added = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (f[i].yanked || !wg_has_suffix_cli(f[i].filename, ".whl"))
			continue;
		rc = add(cs, url, f[i].url, NULL, f[i].url, f[i].filename, f[i].sha256, f[i].size);
		added++;
	}
	if (rc == 0 && added == 0) {
		say("%s: the index page lists no wheel (yanked ones left out)\n", esc(url));
		rc = -1;
	}
	index_files_free(f, n);
	return rc;
}

int select_source(candidates *cs, const char *source, bool quiet)
{
	(void)quiet;
	if (!strncasecmp(source, "http://", 7) || !strncasecmp(source, "https://", 8)) {
		if (wg_has_suffix_cli(source, ".whl") || strstr(source, ".whl#"))
			return add_url(cs, source, source);
		/* a PEP 503/691 simple index project page (cli/index.c; yanked files skipped) */
		return from_index(cs, source);
	}
	if (!strncasecmp(source, "file:", 5))
		return add_url(cs, source, source);
	struct stat st;
	if (stat(source, &st) != 0) {
		say("%s: %s\n", esc(source), strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return from_dir(cs, source);
	if (!S_ISREG(st.st_mode)) {
		say("%s: not a directory or a regular file\n", esc(source));
		return -1;
	}
	if (wg_has_suffix_cli(source, ".whl"))
		return add(cs, source, source, source, NULL, cli_base_name(source), NULL,
			   (long long)st.st_size);
	const char *base = cli_base_name(source);
	if (wg_has_suffix_cli(source, ".toml") && !strncmp(base, "pylock", 6))
		return from_lock(cs, source);
	return from_list(cs, source);
}

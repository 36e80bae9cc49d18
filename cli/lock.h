/*
 * `wheelgate check --lock FILE`: the wheels a PEP 751 lock file (pylock.toml) lists, chosen
 * for the target's python and platform, taken from a path, a file: URL or an http(s): URL
 * (fetched by the dlopen'ed module wheelgate-fetch.so, libcurl) and verified against the
 * lock's sha256 and size before anything reads them. See docs/lock.md.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_LOCK_H
#define WG_CLI_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the TOML module reports, entry by entry (wheelgate-toml.so, wg_toml_read_lock_v1):
 * a package, then its wheels. Strings absent from the lock are NULL, size -1. */
typedef struct lock_sink {
	void *ctx;
	/* source: the first of "sdist", "vcs", "directory", "archive" the package has, or NULL */
	int (*package)(void *ctx, const char *name, const char *version, const char *marker,
		       const char *source, unsigned line);
	int (*wheel)(void *ctx, const char *name, const char *url, const char *path,
		     long long size, const char *sha256, unsigned line);
} lock_sink;

typedef int (*lock_reader)(const char *path, const char *text, size_t len, const lock_sink *sink,
			   char *err, size_t errlen);

/* fetch module (wheelgate-fetch.so, wg_fetch_v1): url into fd, at most max bytes, within
 * timeout_s seconds; progress on stderr when asked. 0, or -1 with why in err. */
typedef int (*lock_fetcher)(const char *url, int fd, unsigned long long max, long timeout_s,
			    int progress, char *err, size_t errlen);

/* One input of the check: a chosen wheel, open and verified, or why it is not judged. */
typedef struct lock_input {
	char *label;    /* "name version (url or path)" */
	char *filename; /* the wheel's file name (its tags and version) */
	int fd;         /* -1 when error is set */
	char *error;
} lock_input;

typedef struct lock_options {
	const char *python;   /* "3.12": the target interpreter's version */
	const char *python_from; /* where that came from, for the message */
	uint64_t max;         /* the most a wheel without a size in the lock may have */
	bool allow_no_wheel;  /* packages without a wheel: told, not errors */
	bool allow_unhashed;  /* wheels without a sha256: read anyway */
	bool quiet;
} lock_options;

/* The lock's inputs (*out, *n); -1 when the lock itself cannot be used (printed), else 0
 * (entries that fail carry their error). */
int lock_inputs(lock_input **out, size_t *n, const char *lockpath, const lock_options *o);
void lock_inputs_free(lock_input *in, size_t n);
/* "3.11", asked of the first python3 on PATH (into buf); NULL when there is none. */
const char *lock_python_on_path(char *buf, size_t n);

/* ---- select (cmd_select.c): a lock as a source of candidates ---- */

/* Messages of the lock functions start with who ("wheelgate select: lock"); the default is
 * "wheelgate check: --lock". */
void lock_set_who(const char *who);
/* One wheel a lock lists, whatever the target: its package, its file name, where it is (path:
 * resolved against the lock's directory; else url) and what the lock says of it. */
typedef struct lock_wheel_ref {
	char *project, *version; /* the package's name and version (version NULL: not given) */
	char *filename;          /* the wheel's `name`, else the last part of its path or URL */
	char *path, *url;        /* one of them, or neither (the lock gives neither) */
	char *sha256;            /* or NULL */
	long long size;          /* -1: not given */
	unsigned line;
} lock_wheel_ref;
/* Every wheel of every package of the lock (*out, *n); -1 when the lock cannot be used
 * (printed). */
int lock_wheels(lock_wheel_ref **out, size_t *n, const char *lockpath);
void lock_wheels_free(lock_wheel_ref *w, size_t n);
/* A wheel at path (absolute or relative to the working directory), else a file: or http(s):
 * URL (fetched into an unlinked temporary file: at most size bytes, else max) opened into *fd
 * and verified against size (>= 0) and sha256 (non-NULL) before anything reads it. 0, or -1
 * with why in err. */
int lock_open(int *fd, const char *path, const char *url, const char *sha256, long long size,
	      uint64_t max, bool quiet, char *err, size_t errlen);
/* The rank of a wheel file name's tags for python 3.minor on this system, as pip (packaging
 * .tags) orders the target's supported tags: lower is better, -1 when none is supported; desc
 * (may be NULL): "python 3.12 on linux_x86_64 (glibc 2.36)". */
long lock_tag_rank(int minor, const char *filename, char *desc, size_t desclen);

#endif

/*
 * `wheelgate select` (cmd_select.c): the candidates of its SOURCEs (select_source.c), each
 * judged by content for the target, ranked among those that work; the PEP 440 order of
 * versions it ranks by (select_version.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_SELECT_H
#define WG_CLI_SELECT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline.h"
#include "wheelgate.h"

#define SELECT_PROG "wheelgate select"
#define SELECT_MAX_CANDIDATES 100000
#define SELECT_INDEX_TIMEOUT 60 /* seconds a simple index page may take */

/* One wheel a SOURCE offers, and what became of it. */
typedef struct candidate {
	/* from the source */
	char *where;    /* the path or URL as the source gives it: what stdout prints */
	char *filename; /* the wheel's file name (its name, version and tags) */
	char *path;     /* a local file, or NULL */
	char *url;      /* a file: or http(s): URL, or NULL */
	char *sha256;   /* 64 hex digits the source gives, or NULL */
	long long size; /* the size the source gives (or the file's), -1: unknown */
	const char *source; /* the SOURCE argument it came from */
	char project[256];  /* PEP 503-normalized, from the file name ("" when not a wheel name) */
	char *version;      /* the version of the file name, local label included */
	/* judged */
	long rank;          /* the tags' rank for the target (lower first), -1: not supported */
	char hex[65];       /* the sha256 of its bytes (or the source's, facts from the store) */
	bool from_store;    /* its facts were read back from the store: no byte of it read */
	bool not_fetched;   /* a remote wheel its tags rule out: judged by its name, not fetched */
	char *error;        /* it could not be fetched, verified or read: why */
	wg_report *rep;
	size_t errors, warnings; /* findings at or above --fail-on, and the others */
	char **reasons;          /* one line each: why it would not work */
	size_t nreasons;
	bool works;
	double seconds;
} candidate;

typedef struct candidates {
	candidate *c;
	size_t n, cap;
} candidates;

/** The candidates of one SOURCE appended to cs: a directory of wheels, a wheel, a list file
 * (paths or URLs, one a line, '#' comments), a pylock.toml, a URL of a wheel. -1 with the
 * message printed (a usage error: exit 2), else 0. */
int select_source(candidates *cs, const char *source, bool quiet);
/** The program its messages name ("wheelgate select"; wheelgate matrix reads sources too). */
extern const char *select_source_who;
void candidates_free(candidates *cs);

/** PEP 440 order of two versions (local labels ignored: a label claims, it does not order):
 * <0, 0 or >0. Epochs, release segments (1.0 == 1.0.0), pre-releases (a < b < rc), post and
 * dev releases; text that is not a PEP 440 version sorts before every version, by strcmp. */
int select_version_compare(const char *a, const char *b);

/** Whether version (a file name's, local label included) is `== want` in PEP 440's sense: the
 * same release (1.0 == 1.0.0), and when want has a local label, the same label (case and the
 * separators '-', '_', '.' alike); without one, every label matches (==1.0 is 1.0+cu12 too).
 * 1 or 0; -1 when want is not a PEP 440 version. */
int select_version_matches(const char *version, const char *want);

/* The command's options (cmd_select.c), as the output needs them. */
typedef struct {
	pipeline p;
	const char *env_path, *project, *version, *format, *facts_dir;
	char env_why[1024];
	bool no_store, allow_unhashed;
	uint32_t jobs;
	char store[PATH_MAX];
} select_args;

/* The rules not applied to any candidate for lack of a fact (select_not_applied). */
typedef struct {
	const char *rule, *lacks, *message;
} not_applied;

/** msg on one line, at most max bytes of it, into out (select's reasons and notes). */
void select_compact(char *out, size_t n, const char *msg, size_t max);
/** The rules no candidate was judged by for lack of a fact, each once (at most max). */
size_t select_not_applied(not_applied *out, size_t max, candidate *const *order, size_t n);
/** The wheelgate.select/1 document (docs/select.md). */
void select_print_json(FILE *f, const select_args *a, candidate *const *order, size_t n,
		       const candidate *chosen, const char *project, const char *tagdesc,
		       int minor, const wg_target *t, const char *env_path, size_t nstore,
		       size_t nread, double seconds, int status);
/** The candidates in rank order on stderr (at most limit), each with why it does not work. */
void select_print_table(const candidate *const *order, size_t n, const candidate *chosen,
			size_t limit);

#endif

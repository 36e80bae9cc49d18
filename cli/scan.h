/*
 * `wheelgate scan` inside: the options and the state of a scan (cmd_scan.c), its inputs
 * gathered, sharded and matched against --resume's records (scan_inputs.c); the library
 * writes and reads the wheelgate.scan/1 records (wg_scan_record_format, wg_scanrec_parse).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_SCAN_H
#define WG_CLI_SCAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "pipeline.h"

#define SCAN_PROG "wheelgate scan"

/** "wheelgate scan: " and the message, on stderr. */
void scan_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A list of paths, each malloc'd. */
typedef struct {
	char **v;
	size_t n, cap;
} strlist;

int strlist_add(strlist *l, const char *s);
void strlist_free(strlist *l);

/* The sha256 --resume's file already holds, sorted. */
typedef struct {
	char (*v)[65];
	size_t n;
} shaset;

bool shaset_has(const shaset *s, const char *hex);
/** Reads FILE's records: their sha256 into *set (*records: how many); a last line cut short
 * (a scan killed while writing it) is cut off the file. An absent FILE is empty. 0, or -1
 * (the message printed). */
int resume_read(shaset *set, const char *file, size_t *records);

/** The inputs into *all: each of paths (a directory gives every *.whl below it, sorted; with
 * from_facts every stored facts file, and a sha256 the file facts_dir holds for it), then
 * each --from list; none given: with from_facts and facts_dir, every input the store holds.
 * Then only shard_i of shard_n (when shard_n), *total: how many before. -1 to go on, else the
 * exit status (printed). */
int scan_gather(strlist *all, size_t *total, char *const *paths, size_t npaths,
		const strlist *from, const char *facts_dir, bool from_facts, unsigned shard_i,
		unsigned shard_n);

/* An environment some targets judge installs into: opened once, shared by those targets. */
typedef struct {
	const char *path;
	wg_env *env;
	wg_scanner *sc;
} scan_env;

/* One target each input is judged for: an entry of the record's "targets". */
typedef struct {
	char name[1024];
	int profile;
	wg_target *target;
	scan_env *env; /* NULL: no environment */
} scan_target;

#define MAX_SETS 64

typedef struct {
	pipeline p; /* configuration, rules, ignores and baseline */
	/* options */
	const char *output, *resume, *env_path, *facts_dir;
	bool quiet, from_facts, refresh_facts;
	uint32_t jobs;
	unsigned shard_i, shard_n;
	const char *sets[MAX_SETS]; /* --target-set specs */
	size_t nsets;
	/* state */
	scan_target tg[MAX_SETS];
	size_t ntg;
	scan_env envs[MAX_SETS + 1];
	size_t nenvs;
	wg_scanner **scs;
	unsigned nscs;
	shaset done;
	char **inputs;
	size_t n;
	FILE *out;
	pthread_mutex_t lock; /* the output, the counts, the environment */
	size_t finished, skipped, passed, failed, unreadable, from_store, stored, nread;
	size_t stale; /* stored facts another wheelgate version wrote */
	bool write_error;
	bool tty;
	struct timespec t0;
	double shown; /* when the progress line was last written */
} scanner_state;


#endif

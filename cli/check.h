/*
 * `wheelgate check` and the commands built on it (audit), inside: what the command line asks
 * for (cmd_check.c), the inputs read and judged on the context's threads (check_run.c), the
 * reports told in their format with the exit status (check_report.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_CHECK_H
#define WG_CLI_CHECK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "lock.h"
#include "pipeline.h"

#define MAX_INPUTS 4096

/* What the command line asks for; the pipeline holds the configuration under it. */
typedef struct {
	pipeline p;
	const check_command *cmd; /* the command built on check (audit), or NULL */
	const char *output, *env_path, *stdin_name;
	char env_why[1024]; /* the interpreter --env named did not answer (pyenv.c): why */
	const char *lock;   /* --lock FILE */
	const char *facts_dir; /* --facts-dir DIR: the store of facts by sha256 */
	bool from_facts;       /* --from-facts: the PATHs are stored facts (files or sha256s) */
	bool allow_no_wheel, allow_unhashed;
	uint64_t max_stdin; /* 0: the library's default */
	/* --max-rule-findings, --max-findings: -1 for the library's default */
	long long max_rule_findings, max_findings;
	const char *limits[32]; /* --limit NAME=VALUE, checked when parsed */
	size_t nlimits;
	const char **only;  /* audit: --only NAME..., nonly of them */
	size_t nonly;
	uint32_t jobs;      /* -j: 0 for one thread per CPU */
	bool list, self_test;
	bool explain;       /* --explain: the rules that produced findings, explained */
	bool together;      /* --together: the inputs are one install into --env */
	const char *write_baseline; /* --write-baseline FILE */
} check_args;

/* The inputs checked and their reports, in order; directories add the wheels below them. */
typedef struct {
	char **paths;
	wg_report **reports;
	char **errors;
	char **notes; /* what was treated differently (audit), or NULL */
	size_t n, cap;
} results;

/* The checker's state while the inputs go by. */
typedef struct {
	const check_args *a;
	wg_scanner *sc;
	const wg_ruleset *rs;
	const wg_target *target;
	size_t max_stdin;
	FILE *out;
	bool text, color;
	results res;
	wg_context *ctx;
	wg_scanner **scs; /* one scanner per thread slot (0: sc), made on first use */
	unsigned nscs;
	bool tty;
	/* An environment loads its libraries lazily, one thread at a time: the checks that
	 * resolve against it take turns (reading the inputs does not). */
	bool has_env;
	pthread_mutex_t env_lock;
	wg_env *env;        /* --env, or NULL */
	wg_scanner *env_sc; /* the environment's scanner (its lazy loads, its install plans) */
	const lock_input *lock; /* --lock: the inputs, in the order of the paths (their labels) */
	suppress *sup;          /* ignores and the baseline, or NULL */
	size_t (*sups)[2];      /* per result: findings ignored, baselined */
	size_t nsups;
} checker;

/* check_run.c */
/** Every input read and judged (--together: as one install), each told as it is done. */
int check_inputs(checker *k, char **inputs, size_t ninputs);
void results_free(results *rs);

/* check_report.c */
/** One input's text block, as the library formats it (the pip gate prints the same). */
void print_report(FILE *out, const wg_ruleset *rs, const results *res, size_t i,
		  wg_severity fail_on, bool quiet, bool color);
/** The ignored and the baselined findings out of the last result's report, counted. */
int suppress_last(checker *k);
/** After an input's text report: what was taken out of it. */
void print_suppressed(const checker *k);
/** The document (JSON, SARIF) or the text's closing line, and the exit status. */
int finish(checker *k, int status);
/** --list-rules and --self-test: the rules, not the inputs. */
int rules_only(const check_args *a, const wg_ruleset *rs);

#endif

/*
 * The pipeline check, audit, scan and check --lock share, in the order they run it: the
 * configuration (the file, the command line on top), the rules, the targets with their
 * environments, the known findings (ignores, baseline), each input judged. The commands add
 * their inputs (paths, an environment's distributions, a lock's wheels, a list) and their
 * report (check's formats, scan's records).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_PIPELINE_H
#define WG_CLI_PIPELINE_H

#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>

#include "cli.h"
#include "config.h"
#include "suppress.h"

/* The options of the pipeline, the first values of each command's getopt_long keys. */
enum {
	PO_TARGET = 256, PO_GPU, PO_RULES, PO_DISABLE, PO_ENABLE, PO_CONFIG, PO_NOCONFIG,
	PO_FAILON, PO_PROFILE, PO_BASELINE, PO_FORMAT,
	PO_END /* a command's own keys start here */
};

/* The long options every pipeline command takes (--format is check's and audit's:
 * PIPELINE_FORMAT_OPTION). */
#define PIPELINE_OPTIONS                                                                     \
	{"target", required_argument, NULL, PO_TARGET}, {"gpu", required_argument, NULL, PO_GPU}, \
	{"rules", required_argument, NULL, PO_RULES},                                          \
	{"disable", required_argument, NULL, PO_DISABLE},                                      \
	{"enable", required_argument, NULL, PO_ENABLE},                                        \
	{"config", required_argument, NULL, PO_CONFIG},                                        \
	{"no-config", no_argument, NULL, PO_NOCONFIG},                                         \
	{"fail-on", required_argument, NULL, PO_FAILON},                                       \
	{"profile", required_argument, NULL, PO_PROFILE},                                      \
	{"baseline", required_argument, NULL, PO_BASELINE}
#define PIPELINE_FORMAT_OPTION {"format", required_argument, NULL, PO_FORMAT}

typedef struct pipeline {
	const char *prog; /* "wheelgate check", before every message */
	/* the command line */
	cli_config cli;     /* its values, put on top of the file's */
	const char *config; /* --config FILE */
	bool no_config, quiet;
	/* configured (pipeline_configure) */
	cli_config cfg;       /* the file's values, the command line's on top */
	size_t cfg_selectors; /* how many enable/disable selectors the file gave */
	const char *format;   /* text (default), json, sarif or github */
	int profile;          /* a wg_profile */
	wg_severity fail_on;
	/* made (pipeline_rules, pipeline_suppress) */
	wg_context *ctx;
	wg_ruleset *rs;
	suppress *sup; /* ignores and the baseline, or NULL */
} pipeline;

/** "PROG: " and the message, on stderr. */
void pipeline_fail(const pipeline *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** One of the PIPELINE_OPTIONS (key c, its argument arg): 0 when taken, 1 when c is not one
 * of them, EXIT_USAGE when its value cannot be kept (printed). */
int pipeline_option(pipeline *p, int c, const char *arg);

/** The configuration file (--config, else the nearest: cfg_find) unless --no-config, then the
 * command line on top; the values checked (formats: the command has --format). -1 to go on,
 * else the exit status (printed). */
int pipeline_configure(pipeline *p, bool formats);

/** The context (opts) and the rules the configuration selects. -1 to go on, else the exit
 * status (printed, with the configuration file named when its selectors may be at fault). */
int pipeline_rules(pipeline *p, const wg_options *opts);

/** The environment an --env ENV names (pyenv.c's env_resolve) into out (n bytes); *why: what
 * an interpreter that did not answer said ("" when it did). label: "--env:" or "--env",
 * before the message. -1 to go on, else the exit status (printed). */
int pipeline_env_resolve(const pipeline *p, const char *arg, char *out, size_t n, char *why,
			 size_t whylen, const char *label);

/** The environment at path (resolved) opened with a scanner of its own (*sc: its lazy loads
 * and install plans); label names it in the message ("--env", "--env PATH"); why: what its
 * resolution said. -1 to go on, else the exit status (printed). */
int pipeline_env_open(pipeline *p, wg_env **env, wg_scanner **sc, const char *path,
		      const char *why, const char *label);

/* One target: the configuration's facts and GPUs, then a named set's own. */
typedef struct {
	const char *set;         /* --target-set's NAME, or NULL */
	int profile;             /* a wg_profile */
	wg_env *env;             /* its environment, or NULL */
	const char *facts;       /* the set's facts (KEY=VALUE,...), or NULL */
	const char *const *gpus; /* the set's GPUs */
	size_t ngpus;
} pipeline_target_spec;

/** The target: its profile, its environment (--target values override what that says), the
 * configuration's facts, the set's facts, then every GPU (a notice of --gpu auto said on
 * stderr). -1 to go on, else the exit status (printed). */
int pipeline_target(const pipeline *p, wg_target **t, const pipeline_target_spec *ts);

/** The python the target is for: env's, else the last --target python=, else the python3 on
 * PATH (asked); *from says which. NULL when none answers. */
const char *pipeline_target_python(const pipeline *p, const wg_env *env, char *buf, size_t n,
				   const char **from);

/** The configuration's ignores and its baseline (always: also when there are none, for
 * --write-baseline) into p->sup. -1 to go on, else the exit status (printed). */
int pipeline_suppress(pipeline *p, bool always);

/** Judges scan for target t: a wheel judged against an environment (install) is an install
 * of it alone there. The environment's checks take turns under env_lock (NULL: no
 * environment). 0 with *rep, or -1 with the reason in err. */
int pipeline_judge(wg_report **rep, wg_scanner *sc, const wg_ruleset *rs, const wg_scan *scan,
		   const wg_target *t, wg_env *env, wg_scanner *env_sc, bool install,
		   pthread_mutex_t *env_lock, char *err, size_t errlen);

void pipeline_free(pipeline *p);

#endif

/*
 * The wheelgate command line: one cmd_<name>.c per command, listed once in main.c.
 * The CLI uses only the public header; it parses arguments, formats output, sets exit codes.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_H
#define WG_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "wheelgate.h"

/* Exit codes shared by all commands. */
#define EXIT_CLEAN 0    /* read everything, nothing to report */
#define EXIT_FINDINGS 1 /* read, but problems (or blocking findings) exist */
#define EXIT_USAGE 2    /* bad usage or unreadable input */

int cmd_inspect(int argc, char **argv);
int cmd_gpus(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_select(int argc, char **argv);
int cmd_explain(int argc, char **argv);
/** cmd_explain.c: rule i of rs explained as `wheelgate explain` prints it (docs/explain.md). */
void explain_rule_text(FILE *f, const wg_ruleset *rs, size_t i);

/** A command built on check's machinery (cmd_check.c: options, configuration, target,
 * threads, report formats, exit status) with inputs of its own: `wheelgate audit`. Each
 * callback is given payload, the command's own state. */
typedef struct check_command {
	const char *name; /* "wheelgate audit", in messages */
	void (*help)(FILE *f);
	/** The inputs (*paths and each of them malloc'd) from the environment opened once;
	 * only: --only's names. -1 to go on, else the exit status (the message printed). */
	int (*inputs)(char ***paths, size_t *n, const wg_env *env, const char *const *only,
		      size_t nonly, bool quiet, void *payload);
	/** The name an input's report goes by (malloc'd), from its scan (NULL when it could not
	 * be read) or its path; NULL: its path. Called on any thread. */
	char *(*label)(const wg_scan *scan, const char *path, void *payload);
	/** What was treated differently for an input (malloc'd, one line), or NULL: printed
	 * after its report in text, on stderr beside JSON and SARIF. Called on any thread. */
	char *(*note)(const wg_scan *scan, void *payload);
	/** The distributions seen but not checked (audit: *.egg-info), each with why; NULL: none.
	 * Listed in JSON as "not_audited" and counted in its summary. */
	size_t (*not_checked)(const char *const **paths, const char *const **why, void *payload);
	void *payload;
	/** Where --verbose is written (audit: name what is not checked); NULL: no --verbose. */
	bool *verbose;
} check_command;
int check_main(int argc, char **argv, const check_command *cmd);
/** The options check and the commands built on it share, for their --help. */
void check_help_options(FILE *f, bool audit);
/* pyenv.c: the environment ARG names (NULL: $VIRTUAL_ENV, else the python3 on PATH) as a path
 * for wg_env_open: a directory as it is; an interpreter (a file, or a bare name on PATH, a
 * shim included) run once and asked for sys.executable and sys.prefix. 0, with what was
 * asked in note ("" when nothing was); 1 when the interpreter could not answer (out: its path,
 * to be read as it is; err: why, for a message should reading fail too); -1 (a name on no
 * PATH directory) with why in err. */
int env_resolve(const char *arg, char *out, size_t n, char *note, size_t nn, char *err,
		size_t en);

/* output.c */
extern bool use_color;
void output_init(void);
const char *c_bold(void);
const char *c_red(void);
const char *c_yellow(void);
const char *c_green(void);
const char *c_dim(void);
const char *c_off(void);
void human_size(char *buf, size_t n, unsigned long long bytes);
/* Progress of long reads on a terminal (stderr), cleared when done. */
void progress_cb(const char *what, uint64_t done, uint64_t total, void *payload);
void progress_clear(void);
/** Replaces the progress line with line ("" clears it); from any thread. */
void progress_line(const char *line);
/** -j N: 0 to 256 into *out; else prints why and returns -1. */
int parse_jobs(const char *cmd, const char *arg, uint32_t *out);
bool wg_has_suffix_cli(const char *s, const char *suffix);
/* The length of dir without its trailing slashes: "%.*s/%s" joins a name to it once. */
int path_dir_len(const char *dir);
/* The file name of path (after its last '/'); NULL for NULL. */
const char *cli_base_name(const char *path);
struct option;
/** After getopt_long refused an option: "did you mean '--NAME'?" on stderr where a long option
 * is close to the word it stopped at (argv[optind - 1]). */
void suggest_option(char **argv, int optind_now, const struct option *longopts);
/** usage.c: after getopt_long (with opterr = 0) refused an option: one line, "PROG: unknown
 * option '--jsn'; did you mean '--json'?" (or "option '--format' needs a value"), then "Try
 * 'PROG --help'." on stderr. prog: "wheelgate check". */
void option_error(const char *prog, char **argv, int optind_now, const char *optstring,
		  const struct option *longopts);
/* Text from an input made safe for a terminal: control characters and invalid UTF-8 escaped
 * (\xNN). The result stays valid until 16 more calls; NULL for NULL. */
const char *esc(const char *s);
/* Inserts the wheels a directory scan found right after position at of the input queue
 * (*queue, *n entries, each malloc'd); -1 when out of memory. */
int queue_wheels(char ***queue, size_t *n, size_t at, const wg_scan *scan);
/** Reads stdin (for "-") whole into an unlinked temporary file under $TMPDIR (else /tmp), so
 * that memory stays small whatever limit is: the file descriptor (>= 0; close it), -2 as soon
 * as more than limit bytes came, -3 when its first bytes cannot start a wheel (a zip) or an
 * ELF object (seen, seenlen bytes: what they were, escaped), -1 on a read or write error
 * (errno). */
int spool_stdin(size_t limit, char *seen, size_t seenlen);
/* With -3 from spool_stdin: the first bytes it read (at most 16), for wg_scan_buffer to judge
 * as it judges any input (the same message as for a file of those bytes). */
extern unsigned char spool_head[16];
extern size_t spool_head_len;
/** "2G", "512M", "100k" or bytes; false when s is not a size. */
bool parse_size(const char *s, uint64_t *out);
/** --limit NAME=VALUE: sets the wg_options limit NAME (max_members, max_total_size,
 * max_fatbin_entries, ...: the names the library's messages give) to VALUE (a number, or a
 * size with K, M or G); false with the reason on stderr (cmd: "check", "inspect"). */
bool parse_limit(wg_options *o, const char *cmd, const char *arg);
/** The --limit help lines. */
#define LIMIT_HELP                                                                        \
	"  --limit NAME=N     raise or lower a safety limit for each input; NAME is the one\n"  \
	"                     a limit's message names (max_total_size, max_members,\n"       \
	"                     max_fatbin_entries, max_problems, max_record_rows,\n"          \
	"                     max_member_held: the largest member read whole, 8M, ...);\n"  \
	"                     sizes take K, M or G; 0 lifts the bounds on findings,\n"       \
	"                     problems and entries. Repeatable\n"

#endif

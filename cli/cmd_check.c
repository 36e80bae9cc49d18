/*
 * `wheelgate check`: the rules applied to wheels, objects and directories for a target, as
 * text, JSON ("wheelgate.check/1") or SARIF 2.1.0. Exit 0 when nothing blocks, 1 when a
 * finding at or above --fail-on exists, 2 for usage errors and unreadable inputs.
 * `wheelgate audit` (cmd_audit.c) is the same machinery with an environment's installed
 * distributions as the inputs (check_main with a check_command).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "suppress.h"
#include "lock.h"

#define MAX_INPUTS 4096

/* The command running: check (NULL) or one built on it (audit), and its name in messages. */
static const check_command *mode;
static const char *prog = "wheelgate check";

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void help(FILE *f)
{
	fprintf(f,
		"usage: wheelgate check [options] PATH...\n"
		"       wheelgate check [options] --lock pylock.toml [--env ENV]\n"
		"\n"
		"Checks wheels, ELF objects, directories (every wheel and ELF object below them,\n"
		"each wheel on its own), installed *.dist-info directories (the files their\n"
		"RECORD lists, as they are now: see 'wheelgate audit --help') or '-' (stdin)\n"
		"against the rules for the environment they are to be installed in, and says\n"
		"what would break: C++ ABI mismatches with torch, hollow wheels, GPU code that\n"
		"cannot run on the target GPU, CUDA runtime majors, local version labels, wheel\n"
		"tags and RECORD integrity.\n"
		"A PEP 825 variant index file (NAME-VERSION-variants.json) among the PATHs is no\n"
		"input of its own: the variant wheels given with it are checked against it.\n"
		"\n");
	check_help_options(f, false);
	fprintf(f,
		"\n"
		"Every report lists the rules not applied for lack of a fact (a GPU, an environment...).\n"
		"\n"
		"exit status: 0 when nothing blocks, 1 when a finding at or above --fail-on exists,\n"
		"2 for usage errors, broken rule files, inputs that cannot be read and directories\n"
		"with no wheel or ELF object.\n"
		"\n"
		"facts kept by content (docs/facts-store.md):\n"
		"  --facts-dir DIR    keep the facts of each input file read under its sha256:\n"
		"                     DIR/ab/<sha256>.json.zst (zstd; written atomically)\n"
		"  --from-facts       the PATHs are stored facts files (or, with --facts-dir,\n"
		"                     sha256s of inputs stored there), judged for the target,\n"
		"                     profile and rules given, without reading the inputs\n"
		"\n"
		"lock files (PEP 751, see docs/lock.md):\n"
		"  --lock FILE        check the wheels a pylock.toml lists instead of PATHs: for\n"
		"                     each package the wheel that fits the target python (--env's,\n"
		"                     else --target python=, else the python3 on PATH) and this\n"
		"                     system's platform, best first as pip orders tags; taken\n"
		"                     from its path (relative to FILE), a file: URL or an\n"
		"                     http(s): URL, its size and sha256 verified before it is\n"
		"                     read; judged as one install into --env\n"
		"  --allow-no-wheel   packages the lock gives only as an sdist, vcs, directory or\n"
		"                     archive are told and skipped (default: an error, exit 2)\n"
		"  --allow-unhashed   read wheels the lock gives no sha256 for (default: an\n"
		"                     error, exit 2)\n");
}

void check_help_options(FILE *f, bool audit)
{
	fprintf(f,
		"target:\n"
		"  --target SPEC      facts of the environment, e.g.\n"
		"                     python=3.12,torch=2.9.1+cu128,cxx11abi=0,cuda=12.8\n"
		"                     (torch's +cuXYZ implies cuda; rules needing an unknown fact\n"
		"                     do not apply); the system's C/C++ runtime:\n"
		"                     glibc=2.39,glibcxx=3.4.33 (also cxxabi=, gcc=) or\n"
		"                     platform=manylinux_2_28_x86_64; default: this system's\n"
		"  --gpu GPU          a target GPU: sm_89, 8.9 or a name (L4, H100...; see\n"
		"                     'wheelgate gpus'); repeatable; 'auto' asks NVML for the\n"
		"                     local GPUs (none: no GPU rule applies, and the report\n"
		"                     says so; the target is still this machine: install)\n"
		"%s"
		"  --profile P        the question asked: 'install' (will it work here? the\n"
		"                     environment, system and GPUs; the default with --env or\n"
		"                     any target fact) or 'publish' (is the wheel what it\n"
		"                     claims? tags, manylinux claims (the symbol versions\n"
		"                     and the libraries from outside the wheel that\n"
		"                     auditwheel's policy of the tag allows), labels, RECORD,\n"
		"                     portability; the default without a target). Each rule\n"
		"                     has a severity per profile (--list-rules)\n"
		"rules:\n"
		"  --rules PATH       a rule file or a directory of them, added to the shipped\n"
		"                     rules (same id: replaces); repeatable\n"
		"  --disable RULE     switch rules off (repeatable, or RULE,RULE): an id\n"
		"                     (WG-SYS-001), an id prefix (WG-SYS), a name (hollow-wheel)\n"
		"                     or a glob (WG-SYS-*), in any case\n"
		"  --enable RULE      switch rules on (the same selectors)\n"
		"  --config FILE      options from FILE (wheelgate.yaml, or pyproject.toml's\n"
		"                     [tool.wheelgate]); default: the first wheelgate.yaml or\n"
		"                     pyproject.toml with [tool.wheelgate] in this directory\n"
		"                     or above it, up to a .git directory's (named on stderr\n"
		"                     when found above)\n"
		"  --no-config        read no configuration file\n"
		"  --list-rules       list the rules and exit\n"
		"  --self-test        check every rule's examples and exit\n"
		"output:\n"
		"  --format FORMAT    text (default), json, sarif or github (workflow annotations)\n"
		"  -o, --output FILE  write the report (any format) to FILE instead of stdout\n"
		"%s"
		"  --fail-on LEVEL    error (default), warning or info: the lowest severity that\n"
		"                     fails an input\n"
		"  --baseline FILE    known findings (a --write-baseline file, or a --format json\n"
		"                     report) pass, counted as baselined; new ones fail. Matched\n"
		"                     by rule, input name without its version, member, symbol;\n"
		"                     SARIF keeps them as results marked suppressed\n"
		"  --write-baseline FILE  write every finding of this run as a baseline\n"
		"  --max-rule-findings N  findings of one rule listed per input (default 100);\n"
		"                     further ones are counted (\"... and 68,950 more like\n"
		"                     this\"; in json and sarif a count per rule) and still\n"
		"                     decide the verdict; 0: list all\n"
		"  --max-findings N   findings listed per input, all rules (default 10000), as\n"
		"                     above\n"
		LIMIT_HELP
		"  -q, --quiet        text: print only failing inputs and the summary\n"
		"  -j, --jobs N       threads reading members and inputs at once (default: one\n"
		"                     per CPU this process may use; 1: no threads); reports are\n"
		"                     the same, in the same order, for any N\n"
		"  -h, --help         show this help\n",
		audit ? "" :
		"  --env PATH         a Python environment (venv, prefix, site-packages, a python\n"
		"                     executable or a name on PATH such as python3, a pyenv shim\n"
		"                     included: an interpreter is asked where it is): its\n"
		"                     python, torch, CUDA and C++ ABI become the target, and\n"
		"                     every object is resolved as the loader would\n"
		"                     after `import torch` there (see 'wheelgate env'); each\n"
		"                     wheel is judged as installed there on its own, in place of\n"
		"                     the installed release of its name, and what that breaks\n"
		"                     among the installed distributions is reported (WG-LD-006)\n"
		"  --together         with --env: the wheels are one install (pip install A B):\n"
		"                     each resolves against the others, and what the install\n"
		"                     breaks is told on the wheel that breaks it\n",
		audit ? "  --only NAME        audit only the distribution NAME (repeatable, or NAME,NAME;\n"
			"                     compared as pip does: case, '-', '_' and '.' alike)\n" :
		"  --stdin-filename NAME  the file name of what '-' reads (a wheel's name, version\n"
		"                     and tags come from it; without it those rules are not applied)\n"
		"  --max-stdin SIZE   the most '-' reads (default 2G), into an unlinked file under\n"
		"                     $TMPDIR, never into memory: more is refused. What cannot\n"
		"                     start a wheel or an ELF object is refused at once\n");
}

static void list_rules(const wg_ruleset *rs)
{
	printf("%-12s %-8s %-8s %-3s %-26s %s\n", "ID", "INSTALL", "PUBLISH", "ON", "CHECK", "TITLE");
	for (size_t i = 0; i < wg_ruleset_count(rs); i++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		wg_ruleset_rule(&ri, rs, i);
		printf("%-12s %-8s %-8s %-3s %-26s %s\n", esc(ri.id),
		       ri.install < 0 ? "-" : wg_severity_name((wg_severity)ri.install),
		       ri.publish < 0 ? "-" : wg_severity_name((wg_severity)ri.publish),
		       ri.enabled ? "on" : "off", esc(ri.check), esc(ri.title));
	}
}

/* The inputs checked and their reports, in order; directories add the wheels below them. */
typedef struct {
	char **paths;
	wg_report **reports;
	char **errors;
	char **notes; /* what was treated differently (audit), or NULL */
	size_t n, cap;
} results;

static int results_add(results *rs, const char *path, wg_report *rep, const char *error)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		char **p = realloc(rs->paths, cap * sizeof(*p));
		if (p)
			rs->paths = p;
		wg_report **r = p ? realloc(rs->reports, cap * sizeof(*r)) : NULL;
		if (r)
			rs->reports = r;
		char **e = r ? realloc(rs->errors, cap * sizeof(*e)) : NULL;
		if (e)
			rs->errors = e;
		char **no = e ? realloc(rs->notes, cap * sizeof(*no)) : NULL;
		if (!no)
			return -1;
		rs->notes = no;
		rs->cap = cap;
	}
	rs->paths[rs->n] = strdup(path);
	rs->reports[rs->n] = rep;
	rs->errors[rs->n] = error ? strdup(error) : NULL;
	rs->notes[rs->n] = NULL;
	if (!rs->paths[rs->n]) {
		free(rs->errors[rs->n]);
		return -1;
	}
	rs->n++;
	return 0;
}

static void results_free(results *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->paths[i]);
		wg_report_free(rs->reports[i]);
		free(rs->errors[i]);
		free(rs->notes[i]);
	}
	free(rs->notes);
	free(rs->paths);
	free(rs->reports);
	free(rs->errors);
}

/* One input's block, as the library formats it (the pip gate prints the same). */
static void print_report(FILE *out, const wg_ruleset *rs, const results *res, size_t i,
			 wg_severity fail_on, bool quiet, bool color)
{
	const wg_report *r = res->reports[i];
	if (quiet && r && wg_report_worst(r) < (int)fail_on)
		return;
	char *doc = NULL;
	const char *path = res->paths[i], *err = res->errors[i];
	if (wg_reports_format(&doc, color ? WG_FORMAT_TEXT_COLOR : WG_FORMAT_TEXT, rs, NULL, &path,
			      &r, &err, 1, fail_on) == WG_OK)
		fputs(doc, out);
	wg_free(doc);
}

/* What the command line asks for, the configuration file under it. */
typedef struct {
	cli_config cfg;
	const char *config, *output, *env_path, *stdin_name, *format;
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
	bool no_config, list, self_test, quiet;
	bool together;      /* --together: the inputs are one install into --env */
	const char *write_baseline; /* --write-baseline FILE */
	size_t cfg_selectors;       /* how many enable/disable selectors the file gave */
	int profile;
	wg_severity fail_on;
} check_args;

/* The options into a->cfg (the command line's part); -1 to go on, else the exit status. */
static int parse_args(check_args *a, cli_config *cli, int argc, char **argv)
{
	enum { O_TARGET = 256, O_GPU, O_RULES, O_DISABLE, O_ENABLE, O_CONFIG, O_NOCONFIG,
	       O_LIST, O_SELFTEST, O_FORMAT, O_FAILON, O_ENV, O_PROFILE, O_STDIN_NAME,
	       O_MAX_STDIN, O_ONLY, O_TOGETHER, O_LOCK, O_ALLOW_NO_WHEEL, O_ALLOW_UNHASHED,
	       O_BASELINE, O_WRITE_BASELINE, O_FACTS_DIR, O_FROM_FACTS, O_MAX_RULE_FINDINGS,
	       O_MAX_FINDINGS, O_LIMIT };
	static const struct option longopts[] = {
		{"target", required_argument, NULL, O_TARGET}, {"gpu", required_argument, NULL, O_GPU},
		{"rules", required_argument, NULL, O_RULES}, {"disable", required_argument, NULL, O_DISABLE},
		{"enable", required_argument, NULL, O_ENABLE}, {"config", required_argument, NULL, O_CONFIG},
		{"no-config", no_argument, NULL, O_NOCONFIG}, {"list-rules", no_argument, NULL, O_LIST},
		{"self-test", no_argument, NULL, O_SELFTEST}, {"format", required_argument, NULL, O_FORMAT},
		{"fail-on", required_argument, NULL, O_FAILON}, {"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
		{"env", required_argument, NULL, O_ENV}, {"profile", required_argument, NULL, O_PROFILE},
		{"stdin-filename", required_argument, NULL, O_STDIN_NAME},
		{"max-stdin", required_argument, NULL, O_MAX_STDIN},
		{"jobs", required_argument, NULL, 'j'}, {"only", required_argument, NULL, O_ONLY},
		{"together", no_argument, NULL, O_TOGETHER},
		{"lock", required_argument, NULL, O_LOCK},
		{"allow-no-wheel", no_argument, NULL, O_ALLOW_NO_WHEEL},
		{"allow-unhashed", no_argument, NULL, O_ALLOW_UNHASHED},
		{"baseline", required_argument, NULL, O_BASELINE},
		{"write-baseline", required_argument, NULL, O_WRITE_BASELINE},
		{"facts-dir", required_argument, NULL, O_FACTS_DIR},
		{"from-facts", no_argument, NULL, O_FROM_FACTS},
		{"max-rule-findings", required_argument, NULL, O_MAX_RULE_FINDINGS},
		{"max-findings", required_argument, NULL, O_MAX_FINDINGS},
		{"limit", required_argument, NULL, O_LIMIT},
		{NULL, 0, NULL, 0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qhj:", longopts, NULL)) != -1) {
		int bad = 0;
		if (mode && (c == O_ENV || c == O_STDIN_NAME || c == O_MAX_STDIN || c == O_TOGETHER)) {
			fail("--%s: the environment audited is the ENV argument; its distributions "
			     "are the inputs\n", c == O_ENV ? "env" : c == O_STDIN_NAME ? "stdin-filename"
			     : c == O_TOGETHER ? "together" : "max-stdin");
			return EXIT_USAGE;
		}
		if (mode && (c == O_LOCK || c == O_ALLOW_NO_WHEEL || c == O_ALLOW_UNHASHED)) {
			fail("--lock, --allow-no-wheel and --allow-unhashed are options of "
			     "'wheelgate check'\n");
			return EXIT_USAGE;
		}
		if (!mode && c == O_ONLY) {
			fail("--only is an option of 'wheelgate audit'\n");
			return EXIT_USAGE;
		}
		switch (c) {
		case O_TARGET: bad = cfg_add(cli, "target", optarg); break;
		case O_GPU: bad = cfg_add_csv(cli, "gpu", optarg); break;
		case O_RULES: bad = cfg_add(cli, "rules", optarg); break;
		case O_DISABLE: bad = cfg_add_csv(cli, "disable", optarg); break;
		case O_ENABLE: bad = cfg_add_csv(cli, "enable", optarg); break;
		case O_CONFIG: a->config = optarg; break;
		case O_NOCONFIG: a->no_config = true; break;
		case O_LIST: a->list = true; break;
		case O_SELFTEST: a->self_test = true; break;
		case O_FORMAT: bad = cfg_add(cli, "format", optarg); break;
		case O_FAILON: bad = cfg_add(cli, "fail-on", optarg); break;
		case O_PROFILE: bad = cfg_add(cli, "profile", optarg); break;
		case 'o': a->output = optarg; break;
		case O_ENV: a->env_path = optarg; break;
		case O_STDIN_NAME: a->stdin_name = optarg; break;
		case O_TOGETHER: a->together = true; break;
		case O_LOCK: a->lock = optarg; break;
		case O_FACTS_DIR: a->facts_dir = optarg; break;
		case O_FROM_FACTS: a->from_facts = true; break;
		case O_ALLOW_NO_WHEEL: a->allow_no_wheel = true; break;
		case O_ALLOW_UNHASHED: a->allow_unhashed = true; break;
		case O_BASELINE: bad = cfg_add(cli, "baseline", optarg); break;
		case O_WRITE_BASELINE: a->write_baseline = optarg; break;
		case O_LIMIT: {
			wg_options scratch = WG_OPTIONS_INIT;
			if (!parse_limit(&scratch, mode ? "audit" : "check", optarg))
				return EXIT_USAGE;
			if (a->nlimits == sizeof(a->limits) / sizeof(a->limits[0])) {
				fail("at most %zu --limit\n", a->nlimits);
				return EXIT_USAGE;
			}
			a->limits[a->nlimits++] = optarg;
			break;
		}
		case O_MAX_RULE_FINDINGS:
		case O_MAX_FINDINGS: {
			char *end = NULL;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (!*optarg || *end || errno || v > UINT32_MAX || optarg[0] == '-') {
				fail("--%s takes a number of findings (0: all), not '%s'\n",
				     c == O_MAX_FINDINGS ? "max-findings" : "max-rule-findings",
				     esc(optarg));
				return EXIT_USAGE;
			}
			*(c == O_MAX_FINDINGS ? &a->max_findings : &a->max_rule_findings) = (long long)v;
			break;
		}
		case O_MAX_STDIN:
			if (!parse_size(optarg, &a->max_stdin)) {
				fail("--max-stdin takes a size (bytes, or "
					"with K, M or G), not '%s'\n", esc(optarg));
				return EXIT_USAGE;
			}
			break;
		case O_ONLY: {
			char *save = NULL;
			for (char *t = strtok_r(optarg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				const char **p = realloc(a->only, (a->nonly + 1) * sizeof(*p));
				if (!p) {
					fail("out of memory\n");
					return EXIT_USAGE;
				}
				a->only = p;
				a->only[a->nonly++] = t;
			}
			break;
		}
		case 'q': a->quiet = true; break;
		case 'j':
			if (parse_jobs(prog + 10, optarg, &a->jobs) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			if (mode)
				mode->help(stdout);
			else
				help(stdout);
			return EXIT_CLEAN;
		default:
			suggest_option(argv, optind, longopts);
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
		if (bad) {
			fail("too many values for --%s\n", longopts[c - O_TARGET].name);
			return EXIT_USAGE;
		}
	}
	return -1;
}

/* The configuration file first, then the command line on top; then the values checked.
 * -1 to go on, else the exit status. */
static int configure(check_args *a, const cli_config *cli)
{
	char err[1024];
	int found = 0;
	cli_config *cfg = &a->cfg;
	if (!a->no_config) {
		const char *config = a->config;
		int rc;
		if (config)
			rc = wg_has_suffix_cli(config, ".toml") ? cfg_read_pyproject(cfg, config, &found, err, sizeof(err))
							       : cfg_read_yaml(cfg, config, &found, err, sizeof(err));
		else
			rc = cfg_find(cfg, &found, err, sizeof(err));
		if (rc == 0 && config && !found) {
			snprintf(err, sizeof(err), "%s: not found%s", config,
				 wg_has_suffix_cli(config, ".toml") ? " (or no [tool.wheelgate] table)" : "");
			rc = -1;
		}
		if (rc < 0) {
			fail("%s\n", esc(err));
			return EXIT_USAGE;
		}
		/* One found in a directory above names itself: it is not where one looks first. */
		if (found && !config && !a->quiet && strchr(cfg->source, '/'))
			fprintf(stderr, "%s: configuration from %s\n", prog, esc(cfg->source));
	}
	a->cfg_selectors = cfg->ndisable + cfg->nenable;
	for (size_t i = 0; i < cli->nrules; i++) cfg_add(cfg, "rules", cli->rules[i]);
	for (size_t i = 0; i < cli->ndisable; i++) cfg_add(cfg, "disable", cli->disable[i]);
	for (size_t i = 0; i < cli->nenable; i++) cfg_add(cfg, "enable", cli->enable[i]);
	for (size_t i = 0; i < cli->ngpus; i++) cfg_add(cfg, "gpu", cli->gpus[i]);
	for (size_t i = 0; i < cli->ntargets; i++) cfg_add(cfg, "target", cli->targets[i]);
	if (cli->fail_on) cfg_add(cfg, "fail-on", cli->fail_on);
	if (cli->profile) cfg_add(cfg, "profile", cli->profile);
	if (cli->format) cfg_add(cfg, "format", cli->format);
	if (cli->baseline) cfg_add(cfg, "baseline", cli->baseline);

	a->format = cfg->format ? cfg->format : "text";
	int fail_on = cfg_severity(cfg->fail_on ? cfg->fail_on : "error");
	if (strcmp(a->format, "text") && strcmp(a->format, "json") && strcmp(a->format, "sarif") &&
	    strcmp(a->format, "github")) {
		fail("--format takes text, json, sarif or github, not '%s'\n", esc(a->format));
		return EXIT_USAGE;
	}
	a->profile = wg_profile_parse(cfg->profile ? cfg->profile : "auto");
	if (a->profile < 0) {
		fail("--profile takes install, publish or auto, not '%s'\n",
			esc(cfg->profile));
		return EXIT_USAGE;
	}
	if (fail_on < 0) {
		fail("--fail-on takes error, warning or info, not '%s'\n",
			esc(cfg->fail_on));
		return EXIT_USAGE;
	}
	a->fail_on = (wg_severity)fail_on;
	return -1;
}

/* The target: the environment first (--target values override what it says), then the
 * declared facts and GPUs. -1 to go on, else the exit status. */
static int make_target(wg_target **t, wg_env **env, const check_args *a, wg_context *ctx,
		       wg_scanner *sc)
{
	if (wg_target_new(t) < 0 ||
	    wg_target_set(*t, "profile", wg_profile_name((wg_profile)a->profile)) < 0) {
		fail("%s\n", esc(wg_error_last()));
		return EXIT_USAGE;
	}
	if (a->env_path) {
		wg_env_options eo = WG_ENV_OPTIONS_INIT;
		if (wg_env_open(env, sc, a->env_path, &eo) < 0) {
			fail("--env: %s%s%s\n", esc(wg_scanner_error(sc)), *a->env_why ? "; " : "",
			     a->env_why);
			return EXIT_USAGE;
		}
		wg_target_set_env(*t, *env);
	}
	for (size_t i = 0; i < a->cfg.ntargets; i++)
		if (wg_target_parse(*t, a->cfg.targets[i]) < 0) {
			fail("%s\n", esc(wg_error_last()));
			return EXIT_USAGE;
		}
	for (size_t i = 0; i < a->cfg.ngpus; i++) {
		if (wg_target_add_gpu(*t, ctx, a->cfg.gpus[i]) < 0) {
			fail("--gpu: %s\n", esc(wg_error_last()));
			return EXIT_USAGE;
		}
		if (!strcmp(a->cfg.gpus[i], "auto") && wg_target_notice(*t))
			fail("--gpu auto: %s: GPU rules do not apply\n", esc(wg_target_notice(*t)));
	}
	return -1;
}

/* --list-rules and --self-test: the rules, not the inputs. */
static int rules_only(const check_args *a, const wg_ruleset *rs)
{
	if (a->list) {
		list_rules(rs);
		return EXIT_CLEAN;
	}
	char *report = NULL;
	int status = EXIT_CLEAN;
	if (wg_ruleset_self_test(rs, &report) < 0) {
		fail("rule examples that fail:\n%s", report ? report : "");
		status = EXIT_USAGE;
	} else {
		printf("%zu rules: every example agrees with its patterns\n", wg_ruleset_count(rs));
	}
	wg_free(report);
	return status;
}

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

/* The ignored and the baselined findings out of the last result's report, counted. */
static int suppress_last(checker *k)
{
	size_t i = k->res.n - 1;
	if (!k->sup)
		return 0;
	if (i >= k->nsups) {
		size_t n = k->nsups ? k->nsups * 2 : 16;
		size_t (*p)[2] = realloc(k->sups, n * sizeof(*p));
		if (!p)
			return -1;
		memset(p + k->nsups, 0, (n - k->nsups) * sizeof(*p));
		k->sups = p;
		k->nsups = n;
	}
	if (!k->res.reports[i])
		return 0;
	return suppress_apply(k->sup, k->rs, k->res.paths[i], k->res.reports[i], &k->sups[i][0],
			      &k->sups[i][1]);
}

/* After an input's text report: what was taken out of it. */
static void print_suppressed(const checker *k)
{
	size_t i = k->res.n - 1;
	if (!k->sup || !k->text || k->a->quiet || i >= k->nsups || !(k->sups[i][0] + k->sups[i][1]))
		return;
	fprintf(k->out, "  %zu known finding%s baselined, %zu ignored by the configuration\n",
		k->sups[i][1], k->sups[i][1] == 1 ? "" : "s", k->sups[i][0]);
}

/* Reads one input (a path, or "-" for stdin); *name: the name it goes by in the report. */
static int read_input(checker *k, wg_scanner *sc, const char *path, const char **name,
		      wg_scan **scan)
{
	int rc;
	*name = path;
	if (!strcmp(path, "-")) {
		char seen[96];
		/* Spooled to an unlinked file, not held: memory stays small whatever --max-stdin. */
		int fd = spool_stdin(k->max_stdin, seen, sizeof(seen));
		/* The name gives a wheel on stdin its filename facts (name, version, tags). */
		*name = k->a->stdin_name ? k->a->stdin_name : "-";
		if (fd == -2 || fd == -3) {
			char *e = NULL;
			wg_escape(&e, *name, WG_ESCAPE_CONTROL);
			if (fd == -2)
				fprintf(stderr, "wheelgate: %s: stdin is larger than the limit of %zu "
					"bytes (--max-stdin); not read\n", e ? e : "-", k->max_stdin);
			else
				fprintf(stderr, "wheelgate: %s: stdin starts with %s: not read "
					"further\n", e ? e : "-", seen);
			wg_free(e);
		} else if (fd == -1) {
			fprintf(stderr, "wheelgate: -: cannot read stdin into a temporary file under "
				"$TMPDIR: %s\n", strerror(errno));
		}
		/* refused at its first bytes: judged from them, as a file of those bytes is */
		rc = fd == -3 ? wg_scan_buffer(scan, sc, spool_head, spool_head_len, *name)
		     : fd < 0 ? WG_EIO : wg_scan_fd(scan, sc, fd, *name);
		if (fd >= 0)
			close(fd);
	} else if (k->a->from_facts) {
		/* A stored facts file, or the sha256 of an input whose facts --facts-dir holds. */
		char file[4096];
		const char *f = path;
		if (k->a->facts_dir && strlen(path) == 64 && strspn(path, "0123456789abcdef") == 64 &&
		    wg_facts_path(file, sizeof(file), k->a->facts_dir, path) == WG_OK)
			f = file;
		rc = wg_facts_load(scan, sc, f);
		/* facts depend on the reader that made them: say when it was another version */
		if (rc == WG_OK && strcmp(wg_scan_stored_by(*scan), wg_version_string())) {
			char *e = NULL, *v = NULL;
			wg_escape(&e, f, WG_ESCAPE_CONTROL);
			wg_escape(&v, wg_scan_stored_by(*scan), WG_ESCAPE_CONTROL);
			fprintf(stderr, "wheelgate: warning: %s: facts stored by wheelgate %s, not "
				"this %s: they hold what that version read; store them again where "
				"the input is\n", e ? e : "?", v ? v : "?", wg_version_string());
			wg_free(e);
			wg_free(v);
		}
	} else {
		rc = wg_scan_path(scan, sc, path);
		struct stat st;
		char hex[65];
		/* --facts-dir: the facts of every file read, kept under its sha256 */
		if (rc == WG_OK && k->a->facts_dir && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    (wg_file_sha256(hex, path) < 0 ||
		     wg_facts_store(k->a->facts_dir, hex, *scan) < 0)) {
			/* on a worker thread: esc()'s ring is not ours */
			char *e = NULL, *m = NULL;
			wg_escape(&e, path, WG_ESCAPE_CONTROL);
			wg_escape(&m, wg_error_last(), WG_ESCAPE_CONTROL);
			fprintf(stderr, "wheelgate: %s: facts not stored: %s\n", e ? e : "?",
				m ? m : "out of memory");
			wg_free(e);
			wg_free(m);
		}
	}
	return rc;
}

/* One input's outcome, made on whichever thread checked it, told in input order. */
typedef struct {
	char *path;
	const char *name;
	wg_report *rep;
	char *msg;       /* why it could not be read */
	char *label;     /* the name it goes by, when the command names it (audit) */
	char *note;      /* what was treated differently (audit), or NULL */
	bool judged;     /* false: a directory of wheels only (they are the inputs) */
	char **wheels;   /* the wheels a directory holds: inputs of their own, right after it */
	size_t nwheels;
	bool oom;
} outcome;

typedef struct {
	checker *k;
	outcome *o;
	size_t *order;   /* largest first */
	size_t n;
	const lock_input *lock; /* --lock's inputs (the first batch only) */
} batch;

static wg_scanner *slot_scanner(checker *k, unsigned slot)
{
	if (slot == 0 || slot >= k->nscs)
		return k->sc;
	if (!k->scs[slot] && wg_scanner_new(&k->scs[slot], k->ctx) < 0)
		return NULL;
	return k->scs[slot];
}

static void check_job(void *arg, size_t j, unsigned slot)
{
	batch *b = arg;
	checker *k = b->k;
	outcome *o = &b->o[b->order[j]];
	wg_scanner *sc = slot_scanner(k, slot);
	if (!sc) {
		o->oom = true;
		return;
	}
	if (k->tty && b->n > 1) {
		char *e = NULL, line[512];
		wg_escape(&e, o->path, WG_ESCAPE_CONTROL);
		snprintf(line, sizeof(line), "checking %s", e ? e : "");
		wg_free(e);
		progress_line(line);
	}
	wg_scan *scan = NULL;
	int rc;
	const lock_input *li = b->lock ? &b->lock[b->order[j]] : NULL;
	if (li && li->error) {
		/* Not judged: the lock's wheel could not be chosen, fetched or verified. */
		o->judged = true;
		o->name = li->label;
		o->msg = strdup(li->error);
		o->oom = !o->msg;
		return;
	}
	if (li) {
		o->name = li->label;
		rc = wg_scan_fd(&scan, sc, li->fd, li->filename);
	} else {
		rc = read_input(k, sc, o->path, &o->name, &scan);
	}
	if (mode && mode->label && (o->label = mode->label(rc == WG_OK ? scan : NULL, o->path)))
		o->name = o->label;
	if (rc == WG_OK && mode && mode->note)
		o->note = mode->note(scan);
	size_t nw = rc == WG_OK ? wg_scan_wheel_count(scan) : 0;
	if (nw && (o->wheels = calloc(nw, sizeof(*o->wheels)))) {
		for (size_t i = 0; i < nw; i++)
			if ((o->wheels[o->nwheels] = strdup(wg_scan_wheel_path(scan, i))))
				o->nwheels++;
	}
	o->oom = nw && o->nwheels < nw;
	o->judged = rc < 0 || !nw || wg_scan_object_count(scan) || wg_scan_problem_count(scan);
	if (rc == WG_OK && o->judged) {
		if (k->has_env)
			pthread_mutex_lock(&k->env_lock);
		/* A wheel checked against an environment is an install of it alone there. */
		bool install = !mode && k->env && wg_scan_get_kind(scan) == WG_SCAN_WHEEL;
		const wg_scan *one = scan;
		if (install && wg_env_set_install(k->env, k->env_sc, &one, 1) < 0) {
			rc = -1;
			o->msg = strdup(wg_scanner_error(k->env_sc));
			o->oom = !o->msg;
		}
		if (rc == WG_OK)
			rc = wg_check(&o->rep, sc, k->rs, scan, k->target);
		if (install)
			wg_env_set_install(k->env, k->env_sc, NULL, 0);
		if (k->has_env)
			pthread_mutex_unlock(&k->env_lock);
	}
	wg_scan_free(scan);
	if (rc < 0 && !o->msg) {
		const char *msg = wg_scanner_error(sc);
		o->msg = strdup(*msg ? msg : "cannot read stdin");
		o->oom = o->oom || !o->msg;
	}
}

static int by_size(const void *x, const void *y, void *payload)
{
	const off_t *sizes = payload;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	if (sizes[a] != sizes[b])
		return sizes[a] < sizes[b] ? 1 : -1;
	return a < b ? -1 : 1;
}

/* Checks paths at once on the context's threads (largest first), then tells each in order,
 * a directory's wheels right after it (checked the same way). */
static int check_batch(checker *k, char **paths, size_t n, const lock_input *lock)
{
	int status = EXIT_CLEAN;
	outcome *o = calloc(n ? n : 1, sizeof(*o));
	size_t *order = calloc(n ? n : 1, sizeof(*order));
	off_t *sizes = calloc(n ? n : 1, sizeof(*sizes));
	if (!o || !order || !sizes) {
		fail("out of memory\n");
		free(o);
		free(order);
		free(sizes);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		o[i].path = paths[i];
		order[i] = i;
		sizes[i] = lock ? (lock[i].fd >= 0 && fstat(lock[i].fd, &st) == 0 ? st.st_size : 0)
			   : strcmp(paths[i], "-") && stat(paths[i], &st) == 0 && S_ISREG(st.st_mode)
				   ? st.st_size : 0;
		/* An installed distribution (audit): its RECORD's length, as many rows as files,
		 * puts torch's first. */
		if (!lock && !sizes[i] && strcmp(paths[i], "-") &&
		    wg_has_suffix_cli(paths[i], ".dist-info")) {
			char rec[4096];
			snprintf(rec, sizeof(rec), "%s/RECORD", paths[i]);
			sizes[i] = stat(rec, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : 0;
		}
	}
	qsort_r(order, n, sizeof(*order), by_size, sizes);
	batch b = {k, o, order, n, lock};
	wg_context_run(k->ctx, n, check_job, &b);
	progress_clear();
	for (size_t i = 0; i < n; i++) {
		if (o[i].oom) {
			fail("out of memory\n");
			status = EXIT_USAGE;
		}
		if (o[i].judged) {
			if (o[i].msg)
				fprintf(stderr, "wheelgate: %s\n", esc(o[i].msg));
			if (results_add(&k->res, o[i].name ? o[i].name : o[i].path,
					o[i].msg ? NULL : o[i].rep, o[i].msg) < 0) {
				status = EXIT_USAGE;
			} else {
				o[i].rep = NULL; /* the results own it */
				k->res.notes[k->res.n - 1] = o[i].note;
				o[i].note = NULL;
				if (suppress_last(k) < 0) {
					fail("out of memory\n");
					status = EXIT_USAGE;
				}
				if (k->text)
					print_report(k->out, k->rs, &k->res, k->res.n - 1, k->a->fail_on,
						     k->a->quiet, k->color);
				print_suppressed(k);
				const char *note = k->res.notes[k->res.n - 1];
				if (note && k->text && k->out == stdout && !k->a->quiet)
					fprintf(k->out, "  note: %s\n", esc(note));
				else if (note && !k->a->quiet)
					fprintf(stderr, "%s: %s: note: %s\n", prog,
						esc(o[i].name ? o[i].name : o[i].path), esc(note));
			}
		}
		if (o[i].nwheels) {
			int st = check_batch(k, o[i].wheels, o[i].nwheels, NULL);
			if (st != EXIT_CLEAN)
				status = st;
		}
		wg_report_free(o[i].rep);
		free(o[i].msg);
		free(o[i].label);
		free(o[i].note);
		for (size_t w = 0; w < o[i].nwheels; w++)
			free(o[i].wheels[w]);
		free(o[i].wheels);
	}
	free(o);
	free(order);
	free(sizes);
	return status;
}

/* --together: every input a wheel file, read at once, then judged as one install. */
typedef struct {
	checker *k;
	char **paths;
	wg_scan **scans;
	char **msgs;
} together_batch;

static void read_job(void *arg, size_t j, unsigned slot)
{
	together_batch *b = arg;
	wg_scanner *sc = slot_scanner(b->k, slot);
	/* --lock: the chosen wheel, open and verified, or why it is not judged. */
	const lock_input *li = b->k->lock ? &b->k->lock[j] : NULL;
	if (li && li->error)
		b->msgs[j] = strdup(li->error);
	else if (!sc || (li ? wg_scan_fd(&b->scans[j], sc, li->fd, li->filename)
			    : wg_scan_path(&b->scans[j], sc, b->paths[j])) < 0)
		b->msgs[j] = strdup(sc ? wg_scanner_error(sc) : "out of memory");
}

static int check_together(checker *k, char **paths, size_t n)
{
	for (size_t i = 0; i < n && !k->lock; i++) {
		struct stat st;
		if (!strcmp(paths[i], "-") || stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode) ||
		    !wg_has_suffix_cli(paths[i], ".whl")) {
			fail("--together: %s: the inputs of one install are wheel files (*.whl)\n",
			     esc(paths[i]));
			return EXIT_USAGE;
		}
	}
	together_batch b = {k, paths, calloc(n, sizeof(wg_scan *)), calloc(n, sizeof(char *))};
	int status = EXIT_CLEAN;
	if (!b.scans || !b.msgs) {
		fail("out of memory\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (k->tty)
		progress_line("reading the wheels of the install");
	wg_context_run(k->ctx, n, read_job, &b);
	progress_clear();
	if (k->tty)
		progress_line("resolving the installed distributions as the install leaves them");
	int rc = wg_env_set_install(k->env, k->env_sc, (const wg_scan *const *)b.scans, n);
	progress_clear();
	if (rc < 0) {
		fail("--together: %s\n", esc(wg_scanner_error(k->env_sc)));
		status = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		wg_report *rep = NULL;
		if (b.scans[i] && wg_check(&rep, k->sc, k->rs, b.scans[i], k->target) < 0)
			b.msgs[i] = strdup(wg_scanner_error(k->sc));
		if (b.msgs[i])
			fprintf(stderr, "wheelgate: %s\n", esc(b.msgs[i]));
		if (results_add(&k->res, paths[i], b.msgs[i] ? NULL : rep, b.msgs[i]) < 0) {
			wg_report_free(rep);
			status = EXIT_USAGE;
			continue;
		}
		if (rep && b.msgs[i])
			wg_report_free(rep);
		if (suppress_last(k) < 0) {
			fail("out of memory\n");
			status = EXIT_USAGE;
		}
		if (k->text)
			print_report(k->out, k->rs, &k->res, k->res.n - 1, k->a->fail_on, k->a->quiet,
				     k->color);
		print_suppressed(k);
	}
	wg_env_set_install(k->env, k->env_sc, NULL, 0);
out:
	for (size_t i = 0; i < n; i++) {
		if (b.scans)
			wg_scan_free(b.scans[i]);
		if (b.msgs)
			free(b.msgs[i]);
	}
	free(b.scans);
	free(b.msgs);
	return status;
}

/* Arguments, then the wheels a directory holds, each checked as given on its own. */
static int check_inputs(checker *k, char **inputs, size_t ninputs)
{
	k->tty = isatty(STDERR_FILENO);
	k->nscs = wg_context_slots(k->ctx);
	if (!(k->scs = calloc(k->nscs, sizeof(*k->scs)))) {
		fail("out of memory\n");
		return EXIT_USAGE;
	}
	int status = k->a->together ? check_together(k, inputs, ninputs)
				    : check_batch(k, inputs, ninputs, k->lock);
	for (unsigned i = 1; i < k->nscs; i++)
		wg_scanner_free(k->scs[i]);
	free(k->scs);
	return status;
}

/* A command's additions to the JSON document (audit: each input's note, the distributions
 * not audited); the document as the library wrote it when there are none. */
static void annotate(char **doc, const checker *k)
{
	const results *res = &k->res;
	const char *const *paths = NULL, *const *why = NULL;
	size_t nn = mode && mode->not_checked ? mode->not_checked(&paths, &why) : 0;
	bool notes = false;
	for (size_t i = 0; i < res->n && !notes; i++)
		notes = res->notes[i] != NULL;
	if (!notes && !nn && !(mode && mode->not_checked) && !k->sup)
		return;
	json_t *j = json_loads(*doc, 0, NULL);
	json_t *inputs = j ? json_object_get(j, "inputs") : NULL;
	if (!inputs || json_array_size(inputs) != res->n) {
		json_decref(j);
		return;
	}
	for (size_t i = 0; i < res->n; i++)
		if (res->notes[i])
			json_object_set_new(json_array_get(inputs, i), "note",
					    json_string(res->notes[i]));
	if (k->sup) {
		size_t tot[2] = {0, 0};
		for (size_t i = 0; i < res->n; i++) {
			size_t ig = i < k->nsups ? k->sups[i][0] : 0, bl = i < k->nsups ? k->sups[i][1] : 0;
			json_t *in = json_array_get(inputs, i);
			json_object_set_new(in, "ignored", json_integer((json_int_t)ig));
			json_object_set_new(in, "baselined", json_integer((json_int_t)bl));
			tot[0] += ig;
			tot[1] += bl;
		}
		json_object_set_new(json_object_get(j, "summary"), "ignored",
				    json_integer((json_int_t)tot[0]));
		json_object_set_new(json_object_get(j, "summary"), "baselined",
				    json_integer((json_int_t)tot[1]));
	}
	if (mode && mode->not_checked) {
		json_t *na = json_array();
		for (size_t i = 0; na && i < nn; i++)
			json_array_append_new(na, json_pack("{s:s, s:s}", "path", paths[i], "reason",
							    why[i]));
		json_object_set_new(j, "not_audited", na);
		json_object_set_new(json_object_get(j, "summary"), "not_audited",
				    json_integer((json_int_t)nn));
	}
	/* Text from the distributions (INSTALLER, names) stays escaped as the library wrote
	 * it: every non-ASCII character as \uNNNN, and DEL (raw in jansson's output, only
	 * ever inside a string) too. */
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	json_decref(j);
	size_t dels = 0, len = s ? strlen(s) : 0;
	for (size_t i = 0; i < len; i++)
		dels += s[i] == 0x7F;
	char *out = s ? malloc(len + dels * 5 + 1) : NULL;
	if (out) {
		size_t o = 0;
		for (size_t i = 0; i < len; i++) {
			if (s[i] == 0x7F) {
				memcpy(out + o, "\\u007f", 6);
				o += 6;
			} else {
				out[o++] = s[i];
			}
		}
		out[o] = '\0';
		wg_free(*doc);
		*doc = out; /* malloc'd: wg_free is free */
	}
	free(s);
}

/* The document (JSON, SARIF) or the text's closing line, and the exit status. */
static int finish(checker *k, int status)
{
	const results *res = &k->res;
	if (!k->text) {
		char *doc = NULL;
		if (wg_reports_format(&doc, !strcmp(k->a->format, "sarif")    ? WG_FORMAT_SARIF
					    : !strcmp(k->a->format, "github") ? WG_FORMAT_GITHUB
									      : WG_FORMAT_JSON,
				      k->rs, k->target, (const char *const *)res->paths,
				      (const wg_report *const *)res->reports,
				      (const char *const *)res->errors, res->n, k->a->fail_on) == WG_OK) {
			if (!strcmp(k->a->format, "json"))
				annotate(&doc, k);
			fputs(doc, k->out);
			/* a document (JSON, SARIF) ends without one; GitHub's lines end with theirs */
			if (!*doc || doc[strlen(doc) - 1] != '\n')
				fputc('\n', k->out);
		}
		wg_free(doc);
	}
	/* The summary closes the text report; beside a JSON or SARIF document, or a report
	 * written to a file, it goes to stderr (the document stays pure). */
	char *summary = NULL;
	if (wg_reports_format(&summary, WG_FORMAT_SUMMARY, k->rs, k->target,
			      (const char *const *)res->paths, (const wg_report *const *)res->reports,
			      (const char *const *)res->errors, res->n, k->a->fail_on) < 0) {
		fail("%s\n", esc(wg_error_last()));
		status = EXIT_USAGE;
	}
	if (summary && k->text)
		fputs(summary, k->out);
	if (summary && (!k->text || k->out != stdout))
		fputs(summary, stderr);
	wg_free(summary);
	size_t tot[2] = {0, 0};
	for (size_t i = 0; i < res->n && i < k->nsups; i++) {
		tot[0] += k->sups[i][0];
		tot[1] += k->sups[i][1];
	}
	/* Known findings pass, but are counted beside the summary. */
	if (k->sup) {
		char line[512];
		snprintf(line, sizeof(line), "%zu known finding%s baselined (%s), %zu ignored by the "
			 "configuration\n", tot[1], tot[1] == 1 ? "" : "s",
			 k->a->cfg.baseline ? esc(k->a->cfg.baseline) : "no --baseline", tot[0]);
		if (k->text)
			fputs(line, k->out);
		if (!k->text || k->out != stdout)
			fputs(line, stderr);
	}
	char werr[1024];
	if (k->a->write_baseline && suppress_write_baseline(k->sup, k->a->write_baseline, werr,
							    sizeof(werr)) < 0) {
		fail("%s\n", esc(werr));
		status = EXIT_USAGE;
	}
	if (k->out != stdout && fclose(k->out) != 0) {
		fail("-o: %s: %s\n", k->a->output, strerror(errno));
		status = EXIT_USAGE;
	}
	bool unreadable = false, failed = false;
	for (size_t i = 0; i < res->n; i++) {
		unreadable = unreadable || !res->reports[i];
		failed = failed || (res->reports[i] && wg_report_worst(res->reports[i]) >= (int)k->a->fail_on);
	}
	if (status == EXIT_CLEAN)
		status = unreadable ? EXIT_USAGE : failed ? EXIT_FINDINGS : EXIT_CLEAN;
	return status;
}

int cmd_check(int argc, char **argv)
{
	return check_main(argc, argv, NULL);
}

/* audit: ENV (or the default python3), opened once as check's --env; -1 to go on, else the
 * exit status. */
static int audit_env(check_args *a, int argc, char **argv, char *buf, size_t n)
{
	if (argc - optind > 1) {
		fail("one ENV at most, not %d\n", argc - optind);
		return EXIT_USAGE;
	}
	char note[1024];
	int rc = env_resolve(argc > optind ? argv[optind] : NULL, buf, n, note, sizeof(note),
			     a->env_why, sizeof(a->env_why));
	if (rc < 0) {
		fail("%s\n", a->env_why);
		return EXIT_USAGE;
	}
	if (rc == 0)
		a->env_why[0] = '\0';
	a->env_path = buf;
	if (*note && !a->quiet)
		fprintf(stderr, "%s: %s\n", prog, note);
	return -1;
}

/* check --env ENV: a name on PATH or an interpreter asked where it is (pyenv.c); -1 to go on,
 * else the exit status. */
static int check_env(check_args *a, char *buf, size_t n)
{
	char note[1024];
	int rc = env_resolve(a->env_path, buf, n, note, sizeof(note), a->env_why,
			     sizeof(a->env_why));
	if (rc < 0) {
		fail("--env: %s\n", a->env_why);
		return EXIT_USAGE;
	}
	if (rc == 0)
		a->env_why[0] = '\0';
	a->env_path = buf;
	return -1;
}

/* The python the lock's wheels are chosen for: --env's, else --target python=, else the
 * python3 on PATH (asked). */
static const char *lock_python(const check_args *a, const wg_env *env, char *buf, size_t n,
			       const char **from)
{
	wg_env_info ei = WG_ENV_INFO_INIT;
	if (env && wg_env_get_info(&ei, env) == 0 && ei.python_version) {
		snprintf(buf, n, "%s", ei.python_version);
		*from = "--env";
		return buf;
	}
	for (size_t i = a->cfg.ntargets; i-- > 0;) {
		const char *p = strstr(a->cfg.targets[i], "python=");
		if (p && (p == a->cfg.targets[i] || p[-1] == ',')) {
			snprintf(buf, n, "%.*s", (int)strcspn(p + 7, ","), p + 7);
			*from = "--target";
			return buf;
		}
	}
	*from = "the python3 on PATH";
	return lock_python_on_path(buf, n);
}

/* --lock: its wheels as the inputs, their labels as the paths. -1 to go on, else the exit
 * status. */
static int lock_main(check_args *a, const wg_env *env, int argc, char **argv, lock_input **locked,
		     size_t *nlocked, char ***inputs)
{
	if (argc > optind) {
		fail("--lock FILE checks the lock's wheels: no PATH with it ('%s')\n",
		     esc(argv[optind]));
		return EXIT_USAGE;
	}
	char pybuf[64];
	lock_options lo = {NULL, NULL, a->max_stdin ? a->max_stdin : (2ull << 30),
			   a->allow_no_wheel, a->allow_unhashed, a->quiet};
	lo.python = lock_python(a, env, pybuf, sizeof(pybuf), &lo.python_from);
	if (lock_inputs(locked, nlocked, a->lock, &lo) < 0)
		return EXIT_USAGE;
	if (*nlocked == 0) {
		fail("--lock: %s: no wheel to check (every package skipped)\n", esc(a->lock));
		return EXIT_USAGE;
	}
	if (!(*inputs = calloc(*nlocked, sizeof(**inputs)))) {
		fail("out of memory\n");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < *nlocked; i++)
		(*inputs)[i] = (*locked)[i].label;
	/* The lock's wheels are one install into --env (as `uv pip sync` makes it). */
	a->together = env != NULL;
	return -1;
}

/* Whether a wheel of the name and version of a variant index file ({name}-{version}-
 * variants.json) is among inputs (by file name, names compared normalized). */
static bool index_has_wheel(const char *index, char **inputs, size_t n)
{
	const char *b = strrchr(index, '/');
	b = b ? b + 1 : index;
	size_t stem = strlen(b) - strlen("-variants.json");
	const char *d = memchr(b, '-', stem);
	char iname[256], wname[256];
	if (!d || wg_name_normalize(iname, sizeof(iname), b, (size_t)(d - b)) < 0)
		return false;
	const char *iver = d + 1;
	size_t ivl = stem - (size_t)(iver - b);
	for (size_t i = 0; i < n; i++) {
		const char *w = strrchr(inputs[i], '/');
		w = w ? w + 1 : inputs[i];
		const char *d1 = strchr(w, '-');
		const char *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
		if (d2 && wg_name_normalize(wname, sizeof(wname), w, (size_t)(d1 - w)) >= 0 &&
		    !strcmp(wname, iname) && (size_t)(d2 - d1 - 1) == ivl && !strncmp(d1 + 1, iver, ivl))
			return true;
	}
	return false;
}

int check_main(int argc, char **argv, const check_command *cmd)
{
	check_args a = {0};
	a.max_rule_findings = a.max_findings = -1;
	cli_config cli = {0};
	char envbuf[4096];
	char **inputs = NULL;
	size_t ninputs = 0;
	lock_input *locked = NULL;
	size_t nlocked = 0;
	mode = cmd;
	if (cmd)
		prog = cmd->name;
	int status = parse_args(&a, &cli, argc, argv);
	if (status < 0 && cmd)
		status = audit_env(&a, argc, argv, envbuf, sizeof(envbuf));
	else if (status < 0 && a.env_path)
		status = check_env(&a, envbuf, sizeof(envbuf));
	if (status < 0)
		status = configure(&a, &cli);
	cfg_free(&cli);
	if (status >= 0) {
		cfg_free(&a.cfg);
		free(a.only);
		return status;
	}
	status = EXIT_CLEAN;
	wg_options opts = WG_OPTIONS_INIT;
	opts.progress = progress_cb;
	opts.jobs = a.jobs;
	for (size_t i = 0; i < a.nlimits; i++)
		parse_limit(&opts, "check", a.limits[i]); /* checked when parsed */
	if (a.max_rule_findings >= 0)
		opts.max_rule_findings = (uint32_t)a.max_rule_findings;
	if (a.max_findings >= 0)
		opts.max_findings = (uint32_t)a.max_findings;
	wg_context *ctx = NULL;
	wg_ruleset *rs = NULL;
	wg_scanner *sc = NULL, *env_sc = NULL;
	wg_env *env = NULL;
	wg_target *target = NULL;
	wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
	ro.rule_paths = (const char *const *)a.cfg.rules;
	ro.nrule_paths = a.cfg.nrules;
	ro.disable = (const char *const *)a.cfg.disable;
	ro.ndisable = a.cfg.ndisable;
	ro.enable = (const char *const *)a.cfg.enable;
	ro.nenable = a.cfg.nenable;
	if (wg_context_new(&ctx, &opts) < 0 || wg_ruleset_new(&rs, ctx, &ro) < 0 ||
	    wg_scanner_new(&sc, ctx) < 0) {
		fail("%s\n", esc(wg_error_last()));
		/* A selector may come from the file rather than the command line: say which file. */
		if (!rs && a.cfg_selectors && a.cfg.source && (strstr(wg_error_last(), "--disable:") ||
							     strstr(wg_error_last(), "--enable:")))
			fail("(the rules to enable and disable include those of %s)\n",
			     esc(a.cfg.source));
		status = EXIT_USAGE;
		goto out;
	}
	/* The environment gets a scanner of its own: its lazy loads classify symbols with it
	 * while the threads read inputs with theirs. */
	if (a.env_path && wg_scanner_new(&env_sc, ctx) < 0) {
		fail("%s\n", esc(wg_error_last()));
		status = EXIT_USAGE;
		goto out;
	}
	if ((status = make_target(&target, &env, &a, ctx, env_sc ? env_sc : sc)) >= 0)
		goto out;
	status = EXIT_CLEAN;
	if (a.list || a.self_test) {
		status = rules_only(&a, rs);
		goto out;
	}
	if (cmd) {
		if ((status = cmd->inputs(&inputs, &ninputs, env, a.only, a.nonly, a.quiet)) >= 0)
			goto out;
		status = EXIT_CLEAN;
	} else if (a.lock) {
		if ((status = lock_main(&a, env, argc, argv, &locked, &nlocked, &inputs)) >= 0)
			goto out;
		status = EXIT_CLEAN;
		ninputs = nlocked;
	} else {
		ninputs = (size_t)(argc > optind ? argc - optind : 0);
		inputs = argv + optind;
		/* PEP 825 index files ({name}-{version}-variants.json) are no inputs of their own:
		 * the wheels given with them are checked against them (WG-VAR-006). */
		size_t kept = 0, nidx = 0;
		const char *idx[8];
		bool had_index = false;
		for (size_t i = 0; i < ninputs; i++) {
			if (!wg_is_variants_index(inputs[i])) {
				inputs[kept++] = inputs[i];
				continue;
			}
			had_index = true;
			if (nidx < 8)
				idx[nidx++] = inputs[i];
			if (wg_target_add_variants(target, inputs[i]) < 0) {
				fail("%s\n", esc(wg_error_last()));
				status = EXIT_USAGE;
				goto out;
			}
		}
		ninputs = kept;
		/* an index that no wheel given belongs to would check nothing: said, never silent */
		for (size_t x = 0; x < nidx; x++) {
			if (!index_has_wheel(idx[x], inputs, ninputs)) {
				fail("%s: no wheel of its name and version is given with it: a variant index "
				     "file is checked against the wheels given with it\n", esc(idx[x]));
				status = EXIT_USAGE;
				goto out;
			}
		}
		if (had_index && ninputs == 0) {
			fail("a variant index file is checked against the wheels given with it: give "
			     "them too\n");
			status = EXIT_USAGE;
			goto out;
		}
	}
	if (!cmd && ninputs == 0) {
		fail("no PATH given\n");
		help(stderr);
		status = EXIT_USAGE;
		goto out;
	}
	if (a.from_facts && (a.together || a.lock || cmd)) {
		fail("--from-facts judges stored facts one by one: not with %s\n",
		     cmd ? cmd->name : a.together ? "--together" : "--lock");
		status = EXIT_USAGE;
		goto out;
	}
	if (a.together && !env) {
		fail("--together judges wheels as one install into an environment: give --env\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (!cmd && ninputs > MAX_INPUTS) {
		fail("at most %d inputs at once\n", MAX_INPUTS);
		status = EXIT_USAGE;
		goto out;
	}
	if (a.max_stdin)
		opts.max_stdin = a.max_stdin;
	checker k = {&a, sc, rs, target, (size_t)opts.max_stdin, stdout,
		     !strcmp(a.format, "text"), false, {0}, ctx, NULL, 0, false, env != NULL,
		     PTHREAD_MUTEX_INITIALIZER, env, env_sc, locked, NULL, NULL, 0};
	if (a.cfg.nignores || a.cfg.baseline || a.write_baseline) {
		char serr[1024];
		if (!(k.sup = suppress_new(a.cfg.ignores, a.cfg.nignores, serr, sizeof(serr))) ||
		    suppress_check_rules(k.sup, rs, serr, sizeof(serr)) < 0 ||
		    (a.cfg.baseline && suppress_load_baseline(k.sup, a.cfg.baseline, serr,
							      sizeof(serr)) < 0)) {
			bool ign = !strncmp(serr, "ignore", 6) && a.cfg.source;
			fail("%s%s%s\n", ign ? esc(a.cfg.source) : "", ign ? ": " : "", esc(serr));
			suppress_free(k.sup);
			status = EXIT_USAGE;
			goto out;
		}
	}
	if (a.output && !(k.out = fopen(a.output, "w"))) {
		fail("-o: %s: %s\n", a.output, strerror(errno));
		status = EXIT_USAGE;
		goto out;
	}
	k.color = k.text && k.out == stdout && use_color;
	status = finish(&k, check_inputs(&k, inputs, ninputs));
	results_free(&k.res);
	suppress_free(k.sup);
	free(k.sups);
out:
	wg_target_free(target);
	wg_env_free(env);
	wg_scanner_free(env_sc);
	wg_scanner_free(sc);
	wg_ruleset_free(rs);
	wg_context_free(ctx);
	cfg_free(&a.cfg);
	free(a.only);
	if (cmd) {
		for (size_t i = 0; i < ninputs; i++)
			free(inputs[i]);
		free(inputs);
	}
	if (a.lock) {
		free(inputs); /* the labels are the lock inputs' */
		lock_inputs_free(locked, nlocked);
	}
	return status;
}

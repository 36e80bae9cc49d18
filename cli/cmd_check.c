/*
 * `wheelgate check`: the rules applied to wheels, objects and directories for a target, as
 * text, JSON ("wheelgate.check/1") or SARIF 2.1.0. Exit 0 when nothing blocks, 1 when a
 * finding at or above --fail-on exists, 2 for usage errors and unreadable inputs.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"

#define MAX_INPUTS 4096

static void help(FILE *f)
{
	fprintf(f,
		"usage: wheelgate check [options] PATH...\n"
		"\n"
		"Checks wheels, ELF objects, directories (every wheel and ELF object below them,\n"
		"each wheel on its own) or '-' (stdin) against the rules for the\n"
		"environment they are to be installed in, and says what would break: C++ ABI\n"
		"mismatches with torch, hollow wheels, GPU code that cannot run on the target GPU,\n"
		"CUDA runtime majors, local version labels, wheel tags and RECORD integrity.\n"
		"\n"
		"target:\n"
		"  --target SPEC      facts of the environment, e.g.\n"
		"                     python=3.12,torch=2.9.1+cu128,cxx11abi=0,cuda=12.8\n"
		"                     (torch's +cuXYZ implies cuda; rules needing an unknown fact\n"
		"                     do not apply); the system's C/C++ runtime:\n"
		"                     glibc=2.39,glibcxx=3.4.33 (also cxxabi=, gcc=) or\n"
		"                     platform=manylinux_2_28_x86_64; default: this system's\n"
		"  --gpu GPU          a target GPU: sm_89, 8.9 or a name (L4, H100...; see\n"
		"                     'wheelgate gpus'); repeatable; 'auto' asks NVML for the\n"
		"                     local GPUs (none: no GPU rule applies)\n"
		"  --env PATH         a Python environment (venv, prefix, site-packages or python\n"
		"                     executable): its python, torch, CUDA and C++ ABI become the\n"
		"                     target, and every object is resolved as the loader would\n"
		"                     after `import torch` there (see 'wheelgate env')\n"
		"  --profile P        the question asked: 'install' (will it work here? the\n"
		"                     environment, system and GPUs; the default with --env or\n"
		"                     any target fact) or 'publish' (is the wheel what it\n"
		"                     claims? tags, manylinux claims, labels, RECORD,\n"
		"                     portability; the default without a target). Each rule\n"
		"                     has a severity per profile (--list-rules)\n"
		"rules:\n"
		"  --rules PATH       a rule file or a directory of them, added to the shipped\n"
		"                     rules (same id: replaces); repeatable\n"
		"  --disable ID       switch a rule off (repeatable, or ID,ID)\n"
		"  --enable ID        switch a rule on\n"
		"  --config FILE      options from FILE (wheelgate.yaml, or pyproject.toml's\n"
		"                     [tool.wheelgate]); default: ./wheelgate.yaml, else\n"
		"                     ./pyproject.toml\n"
		"  --no-config        read no configuration file\n"
		"  --list-rules       list the rules and exit\n"
		"  --self-test        check every rule's examples and exit\n"
		"output:\n"
		"  --format FORMAT    text (default), json or sarif\n"
		"  -o, --output FILE  write the report (any format) to FILE instead of stdout\n"
		"  --stdin-filename NAME  the file name of what '-' reads (a wheel's name, version\n"
		"                     and tags come from it; without it those rules are not applied)\n"
		"  --fail-on LEVEL    error (default), warning or info: the lowest severity that\n"
		"                     fails an input\n"
		"  -q, --quiet        text: print only failing inputs and the summary\n"
		"  -h, --help         show this help\n"
		"\n"
		"Every report lists the rules not applied for lack of a fact (a GPU, an environment...).\n"
		"\n"
		"exit status: 0 when nothing blocks, 1 when a finding at or above --fail-on exists,\n"
		"2 for usage errors, broken rule files, inputs that cannot be read and directories\n"
		"with no wheel or ELF object.\n");
}

static int add_csv(cli_config *cfg, const char *key, const char *arg)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", arg);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (cfg_add(cfg, key, t) < 0)
			return -1;
	return 0;
}

static int severity_of(const char *s)
{
	return !strcmp(s, "error") ? WG_SEV_ERROR : !strcmp(s, "warning") ? WG_SEV_WARNING
					       : !strcmp(s, "info") ? WG_SEV_INFO : -1;
}

static void list_rules(const wg_ruleset *rs)
{
	printf("%-12s %-8s %-8s %-3s %-26s %s\n", "ID", "INSTALL", "PUBLISH", "ON", "CHECK", "TITLE");
	for (size_t i = 0; i < wg_ruleset_count(rs); i++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		wg_ruleset_rule(&ri, rs, i);
		printf("%-12s %-8s %-8s %-3s %-26s %s\n", ri.id,
		       ri.install < 0 ? "-" : wg_severity_name((wg_severity)ri.install),
		       ri.publish < 0 ? "-" : wg_severity_name((wg_severity)ri.publish),
		       ri.enabled ? "on" : "off", ri.check, ri.title);
	}
}

/* The inputs checked and their reports, in order; directories add the wheels below them. */
typedef struct {
	char **paths;
	wg_report **reports;
	char **errors;
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
		if (!e)
			return -1;
		rs->errors = e;
		rs->cap = cap;
	}
	rs->paths[rs->n] = strdup(path);
	rs->reports[rs->n] = rep;
	rs->errors[rs->n] = error ? strdup(error) : NULL;
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
	}
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

int cmd_check(int argc, char **argv)
{
	enum { O_TARGET = 256, O_GPU, O_RULES, O_DISABLE, O_ENABLE, O_CONFIG, O_NOCONFIG,
	       O_LIST, O_SELFTEST, O_FORMAT, O_FAILON, O_ENV, O_PROFILE, O_STDIN_NAME };
	static const struct option longopts[] = {
		{"target", required_argument, NULL, O_TARGET}, {"gpu", required_argument, NULL, O_GPU},
		{"rules", required_argument, NULL, O_RULES}, {"disable", required_argument, NULL, O_DISABLE},
		{"enable", required_argument, NULL, O_ENABLE}, {"config", required_argument, NULL, O_CONFIG},
		{"no-config", no_argument, NULL, O_NOCONFIG}, {"list-rules", no_argument, NULL, O_LIST},
		{"self-test", no_argument, NULL, O_SELFTEST}, {"format", required_argument, NULL, O_FORMAT},
		{"fail-on", required_argument, NULL, O_FAILON}, {"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
		{"env", required_argument, NULL, O_ENV}, {"profile", required_argument, NULL, O_PROFILE},
		{"stdin-filename", required_argument, NULL, O_STDIN_NAME}, {NULL, 0, NULL, 0}};
	cli_config cli = {0}, cfg = {0};
	const char *config = NULL, *output = NULL, *env_path = NULL, *stdin_name = NULL;
	bool no_config = false, list = false, self_test = false, quiet = false;
	int c, status = EXIT_CLEAN;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case O_TARGET: bad = cfg_add(&cli, "target", optarg); break;
		case O_GPU: bad = add_csv(&cli, "gpu", optarg); break;
		case O_RULES: bad = cfg_add(&cli, "rules", optarg); break;
		case O_DISABLE: bad = add_csv(&cli, "disable", optarg); break;
		case O_ENABLE: bad = add_csv(&cli, "enable", optarg); break;
		case O_CONFIG: config = optarg; break;
		case O_NOCONFIG: no_config = true; break;
		case O_LIST: list = true; break;
		case O_SELFTEST: self_test = true; break;
		case O_FORMAT: bad = cfg_add(&cli, "format", optarg); break;
		case O_FAILON: bad = cfg_add(&cli, "fail-on", optarg); break;
		case O_PROFILE: bad = cfg_add(&cli, "profile", optarg); break;
		case 'o': output = optarg; break;
		case O_ENV: env_path = optarg; break;
		case O_STDIN_NAME: stdin_name = optarg; break;
		case 'q': quiet = true; break;
		case 'h': help(stdout); cfg_free(&cli); return EXIT_CLEAN;
		default:
			fprintf(stderr, "Try 'wheelgate check --help'.\n");
			cfg_free(&cli);
			return EXIT_USAGE;
		}
		if (bad) {
			fprintf(stderr, "wheelgate check: too many values for --%s\n", longopts[c - O_TARGET].name);
			cfg_free(&cli);
			return EXIT_USAGE;
		}
	}
	/* The configuration file first, then the command line on top. */
	char err[1024];
	int found = 0;
	if (!no_config) {
		int rc;
		if (config)
			rc = wg_has_suffix_cli(config, ".toml") ? cfg_read_pyproject(&cfg, config, &found, err, sizeof(err))
							       : cfg_read_yaml(&cfg, config, &found, err, sizeof(err));
		else if ((rc = cfg_read_yaml(&cfg, "wheelgate.yaml", &found, err, sizeof(err))) == 0 && !found)
			rc = cfg_read_pyproject(&cfg, "pyproject.toml", &found, err, sizeof(err));
		if (rc == 0 && config && !found) {
			snprintf(err, sizeof(err), "%s: not found%s", config,
				 wg_has_suffix_cli(config, ".toml") ? " (or no [tool.wheelgate] table)" : "");
			rc = -1;
		}
		if (rc < 0) {
			fprintf(stderr, "wheelgate check: %s\n", err);
			cfg_free(&cli);
			cfg_free(&cfg);
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < cli.nrules; i++) cfg_add(&cfg, "rules", cli.rules[i]);
	for (size_t i = 0; i < cli.ndisable; i++) cfg_add(&cfg, "disable", cli.disable[i]);
	for (size_t i = 0; i < cli.nenable; i++) cfg_add(&cfg, "enable", cli.enable[i]);
	for (size_t i = 0; i < cli.ngpus; i++) cfg_add(&cfg, "gpu", cli.gpus[i]);
	for (size_t i = 0; i < cli.ntargets; i++) cfg_add(&cfg, "target", cli.targets[i]);
	if (cli.fail_on) cfg_add(&cfg, "fail-on", cli.fail_on);
	if (cli.profile) cfg_add(&cfg, "profile", cli.profile);
	if (cli.format) cfg_add(&cfg, "format", cli.format);
	cfg_free(&cli);

	const char *format = cfg.format ? cfg.format : "text";
	int fail_on = severity_of(cfg.fail_on ? cfg.fail_on : "error");
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "sarif")) {
		fprintf(stderr, "wheelgate check: --format takes text, json or sarif, not '%s'\n", format);
		cfg_free(&cfg);
		return EXIT_USAGE;
	}
	int profile = wg_profile_parse(cfg.profile ? cfg.profile : "auto");
	if (profile < 0) {
		fprintf(stderr, "wheelgate check: --profile takes install, publish or auto, not '%s'\n",
			cfg.profile);
		cfg_free(&cfg);
		return EXIT_USAGE;
	}
	if (fail_on < 0) {
		fprintf(stderr, "wheelgate check: --fail-on takes error, warning or info, not '%s'\n",
			cfg.fail_on);
		cfg_free(&cfg);
		return EXIT_USAGE;
	}

	wg_options opts = WG_OPTIONS_INIT;
	opts.progress = progress_cb;
	wg_context *ctx = NULL;
	wg_ruleset *rs = NULL;
	wg_scanner *sc = NULL;
	wg_env *env = NULL;
	wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
	ro.rule_paths = (const char *const *)cfg.rules;
	ro.nrule_paths = cfg.nrules;
	ro.disable = (const char *const *)cfg.disable;
	ro.ndisable = cfg.ndisable;
	ro.enable = (const char *const *)cfg.enable;
	ro.nenable = cfg.nenable;
	if (wg_context_new(&ctx, &opts) < 0 || wg_ruleset_new(&rs, ctx, &ro) < 0 ||
	    wg_scanner_new(&sc, ctx) < 0) {
		fprintf(stderr, "wheelgate check: %s\n", wg_error_last());
		status = EXIT_USAGE;
		goto out;
	}
	wg_target target;
	wg_target_init(&target, WG_TARGET_VERSION);
	target.profile = profile;
	if (env_path) {
		/* The environment first: --target values override what it says. */
		wg_env_options eo = WG_ENV_OPTIONS_INIT;
		if (wg_env_open(&env, sc, env_path, &eo) < 0) {
			fprintf(stderr, "wheelgate check: --env: %s\n", wg_scanner_error(sc));
			status = EXIT_USAGE;
			goto out;
		}
		wg_env_fill_target(env, &target);
	}
	for (size_t i = 0; i < cfg.ntargets; i++)
		if (wg_target_parse(&target, cfg.targets[i]) < 0) {
			fprintf(stderr, "wheelgate check: %s\n", wg_error_last());
			status = EXIT_USAGE;
			goto out;
		}
	for (size_t i = 0; i < cfg.ngpus; i++) {
		if (wg_target_add_gpu(&target, ctx, cfg.gpus[i]) < 0) {
			fprintf(stderr, "wheelgate check: --gpu: %s\n", wg_error_last());
			status = EXIT_USAGE;
			goto out;
		}
		if (!strcmp(cfg.gpus[i], "auto") && *wg_error_last())
			fprintf(stderr, "wheelgate check: --gpu auto: %s: GPU rules do not apply\n",
				wg_error_last());
	}
	if (list) {
		list_rules(rs);
		goto out;
	}
	if (self_test) {
		char *report = NULL;
		int rc = wg_ruleset_self_test(rs, &report);
		if (rc < 0) {
			fprintf(stderr, "wheelgate check: rule examples that fail:\n%s", report ? report : "");
			status = EXIT_USAGE;
		} else {
			printf("%zu rules: every example agrees with its patterns\n", wg_ruleset_count(rs));
		}
		wg_free(report);
		goto out;
	}
	int ninputs = argc - optind;
	if (ninputs <= 0) {
		fprintf(stderr, "wheelgate check: no PATH given\n");
		help(stderr);
		status = EXIT_USAGE;
		goto out;
	}
	if (ninputs > MAX_INPUTS) {
		fprintf(stderr, "wheelgate check: at most %d inputs at once\n", MAX_INPUTS);
		status = EXIT_USAGE;
		goto out;
	}
	bool text = !strcmp(format, "text");
	FILE *out = stdout;
	if (output && !(out = fopen(output, "w"))) {
		fprintf(stderr, "wheelgate check: -o: %s: %s\n", output, strerror(errno));
		status = EXIT_USAGE;
		goto out;
	}
	bool color = text && out == stdout && use_color;
	bool tty = isatty(STDERR_FILENO);
	size_t passed = 0, failed = 0, unreadable = 0, sev[3] = {0};
	results res = {0};
	/* Arguments, then the wheels a directory holds, each checked as given on its own. */
	char **queue = NULL;
	size_t nqueue = 0, qcap = 0;
	for (int i = 0; i < ninputs; i++) {
		if (nqueue == qcap) {
			qcap = qcap ? 2 * qcap : 64;
			char **q = realloc(queue, qcap * sizeof(*q));
			if (!q) {
				status = EXIT_USAGE;
				break;
			}
			queue = q;
		}
		queue[nqueue++] = strdup(argv[optind + i]);
	}
	for (size_t qi = 0; qi < nqueue; qi++) {
		const char *path = queue[qi];
		if (!path) {
			fprintf(stderr, "wheelgate check: out of memory\n");
			status = EXIT_USAGE;
			continue;
		}
		if (tty && nqueue > 1)
			fprintf(stderr, "\r\033[K[%zu/%zu] checking %s", qi + 1, nqueue, path);
		wg_scan *scan = NULL;
		int rc;
		const char *name = path;
		if (!strcmp(path, "-")) {
			unsigned char *buf;
			size_t len;
			int r = read_stdin(&buf, &len, (size_t)opts.max_member_size);
			/* The name gives a wheel on stdin its filename facts (name, version, tags). */
			name = stdin_name ? stdin_name : "-";
			rc = r < 0 ? WG_EIO : wg_scan_buffer(&scan, sc, buf, len, name);
			if (r == 0)
				free(buf);
		} else {
			rc = wg_scan_path(&scan, sc, path);
		}
		/* A directory's wheels are inputs of their own, checked right after it. */
		size_t nw = rc == WG_OK ? wg_scan_wheel_count(scan) : 0;
		if (nw) {
			if (queue_wheels(&queue, &nqueue, qi, scan) < 0) {
				fprintf(stderr, "wheelgate check: out of memory\n");
				status = EXIT_USAGE;
			}
			qcap = nqueue;
		}
		bool judged = rc < 0 || !nw || wg_scan_object_count(scan) || wg_scan_problem_count(scan);
		wg_report *rep = NULL;
		if (rc == WG_OK && judged)
			rc = wg_check(&rep, sc, rs, scan, &target);
		wg_scan_free(scan);
		progress_clear();
		if (tty && nqueue > 1)
			fprintf(stderr, "\r\033[K");
		if (!judged)
			continue; /* only wheels below it: they are the inputs */
		if (rc < 0) {
			const char *msg = wg_scanner_error(sc);
			msg = *msg ? msg : "cannot read stdin";
			unreadable++;
			char *e = NULL;
			wg_escape(&e, msg, WG_ESCAPE_CONTROL);
			fprintf(stderr, "wheelgate: %s\n", e ? e : "unreadable input");
			wg_free(e);
			if (results_add(&res, name, NULL, msg) < 0) {
				status = EXIT_USAGE;
				break;
			}
		} else {
			if (results_add(&res, name, rep, NULL) < 0) {
				wg_report_free(rep);
				status = EXIT_USAGE;
				break;
			}
			for (size_t k = 0; k < wg_report_count(rep); k++) {
				wg_finding_info f = WG_FINDING_INFO_INIT;
				wg_report_finding(&f, rep, k);
				sev[f.severity]++;
			}
			if (wg_report_worst(rep) >= fail_on)
				failed++;
			else
				passed++;
		}
		if (text)
			print_report(out, rs, &res, res.n - 1, (wg_severity)fail_on, quiet, color);
	}
	for (size_t i = 0; i < nqueue; i++)
		free(queue[i]);
	free(queue);
	if (!text) {
		char *doc = NULL;
		if (wg_reports_format(&doc, !strcmp(format, "sarif") ? WG_FORMAT_SARIF : WG_FORMAT_JSON,
				      rs, &target, (const char *const *)res.paths,
				      (const wg_report *const *)res.reports,
				      (const char *const *)res.errors, res.n,
				      (wg_severity)fail_on) == WG_OK) {
			fputs(doc, out);
			fputc('\n', out);
		}
		wg_free(doc);
	}
	/* The summary closes the text report; beside a JSON or SARIF document, or a report
	 * written to a file, it goes to stderr (the document stays pure). */
	char summary[512];
	snprintf(summary, sizeof(summary), "%zu input%s: %zu passed, %zu failed, %zu unreadable; "
		 "%zu error%s, %zu warning%s, %zu info (profile: %s, fail-on: %s)\n", res.n,
		 res.n == 1 ? "" : "s", passed, failed, unreadable, sev[2], sev[2] == 1 ? "" : "s",
		 sev[1], sev[1] == 1 ? "" : "s", sev[0], wg_profile_name(wg_target_profile(&target)),
		 wg_severity_name((wg_severity)fail_on));
	if (text)
		fputs(summary, out);
	if (!text || out != stdout)
		fputs(summary, stderr);
	if (out != stdout && fclose(out) != 0) {
		fprintf(stderr, "wheelgate check: -o: %s: %s\n", output, strerror(errno));
		status = EXIT_USAGE;
	}
	if (status == EXIT_CLEAN)
		status = unreadable ? EXIT_USAGE : failed ? EXIT_FINDINGS : EXIT_CLEAN;
	results_free(&res);
out:
	wg_env_free(env);
	wg_scanner_free(sc);
	wg_ruleset_free(rs);
	wg_context_free(ctx);
	cfg_free(&cfg);
	return status;
}

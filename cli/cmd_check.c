/*
 * `wheelgate check`: the rules applied to wheels, objects and directories for a target, as
 * text, JSON ("wheelgate.check/1") or SARIF 2.1.0. Exit 0 when nothing blocks, 1 when a
 * finding at or above --fail-on exists, 2 for usage errors and unreadable inputs.
 * `wheelgate audit` (cmd_audit.c) is the same machinery with an environment's installed
 * distributions as the inputs (check_main with a check_command).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

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
		"  --explain          after the report, explain each rule that produced a\n"
		"                     finding, once (as 'wheelgate explain ID'; with json,\n"
		"                     sarif or github, on stderr)\n"
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

/* The options into a (the configuration's values into a->p.cli); -1 to go on, else the exit
 * status. */
static int parse_args(check_args *a, int argc, char **argv)
{
	enum { O_LIST = PO_END, O_SELFTEST, O_ENV, O_STDIN_NAME, O_MAX_STDIN, O_ONLY, O_TOGETHER,
	       O_LOCK, O_ALLOW_NO_WHEEL, O_ALLOW_UNHASHED, O_WRITE_BASELINE, O_FACTS_DIR,
	       O_FROM_FACTS, O_MAX_RULE_FINDINGS, O_MAX_FINDINGS, O_LIMIT, O_EXPLAIN, O_VERBOSE };
	/* the pipeline's options among check's own, in the order --help gives them */
	static const struct option longopts[] = {
		{"target", required_argument, NULL, PO_TARGET}, {"gpu", required_argument, NULL, PO_GPU},
		{"rules", required_argument, NULL, PO_RULES}, {"disable", required_argument, NULL, PO_DISABLE},
		{"enable", required_argument, NULL, PO_ENABLE}, {"config", required_argument, NULL, PO_CONFIG},
		{"no-config", no_argument, NULL, PO_NOCONFIG}, {"list-rules", no_argument, NULL, O_LIST},
		{"self-test", no_argument, NULL, O_SELFTEST}, {"explain", no_argument, NULL, O_EXPLAIN},
		{"verbose", no_argument, NULL, O_VERBOSE},
		PIPELINE_FORMAT_OPTION,
		{"fail-on", required_argument, NULL, PO_FAILON}, {"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
		{"env", required_argument, NULL, O_ENV}, {"profile", required_argument, NULL, PO_PROFILE},
		{"stdin-filename", required_argument, NULL, O_STDIN_NAME},
		{"max-stdin", required_argument, NULL, O_MAX_STDIN},
		{"jobs", required_argument, NULL, 'j'}, {"only", required_argument, NULL, O_ONLY},
		{"together", no_argument, NULL, O_TOGETHER},
		{"lock", required_argument, NULL, O_LOCK},
		{"allow-no-wheel", no_argument, NULL, O_ALLOW_NO_WHEEL},
		{"allow-unhashed", no_argument, NULL, O_ALLOW_UNHASHED},
		{"baseline", required_argument, NULL, PO_BASELINE},
		{"write-baseline", required_argument, NULL, O_WRITE_BASELINE},
		{"facts-dir", required_argument, NULL, O_FACTS_DIR},
		{"from-facts", no_argument, NULL, O_FROM_FACTS},
		{"max-rule-findings", required_argument, NULL, O_MAX_RULE_FINDINGS},
		{"max-findings", required_argument, NULL, O_MAX_FINDINGS},
		{"limit", required_argument, NULL, O_LIMIT},
		{NULL, 0, NULL, 0}};
	const check_command *mode = a->cmd;
	pipeline *p = &a->p;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qhj:", longopts, NULL)) != -1) {
		if (mode && (c == O_ENV || c == O_STDIN_NAME || c == O_MAX_STDIN || c == O_TOGETHER)) {
			pipeline_fail(p, "--%s: the environment audited is the ENV argument; its "
				      "distributions are the inputs\n", c == O_ENV ? "env"
				      : c == O_STDIN_NAME ? "stdin-filename"
				      : c == O_TOGETHER ? "together" : "max-stdin");
			return EXIT_USAGE;
		}
		if (mode && (c == O_LOCK || c == O_ALLOW_NO_WHEEL || c == O_ALLOW_UNHASHED)) {
			pipeline_fail(p, "--lock, --allow-no-wheel and --allow-unhashed are options of "
				      "'wheelgate check'\n");
			return EXIT_USAGE;
		}
		if (!mode && c == O_ONLY) {
			pipeline_fail(p, "--only is an option of 'wheelgate audit'\n");
			return EXIT_USAGE;
		}
		if (c == O_VERBOSE) {
			if (!mode || !mode->verbose) {
				pipeline_fail(p, "--verbose is an option of 'wheelgate audit'\n");
				return EXIT_USAGE;
			}
			*mode->verbose = true;
			continue;
		}
		int taken = pipeline_option(p, c, optarg);
		if (taken != 1) {
			if (taken)
				return taken;
			continue;
		}
		switch (c) {
		case O_LIST: a->list = true; break;
		case O_SELFTEST: a->self_test = true; break;
		case O_EXPLAIN: a->explain = true; break;
		case 'o': a->output = optarg; break;
		case O_ENV: a->env_path = optarg; break;
		case O_STDIN_NAME: a->stdin_name = optarg; break;
		case O_TOGETHER: a->together = true; break;
		case O_LOCK: a->lock = optarg; break;
		case O_FACTS_DIR: a->facts_dir = optarg; break;
		case O_FROM_FACTS: a->from_facts = true; break;
		case O_ALLOW_NO_WHEEL: a->allow_no_wheel = true; break;
		case O_ALLOW_UNHASHED: a->allow_unhashed = true; break;
		case O_WRITE_BASELINE: a->write_baseline = optarg; break;
		case O_LIMIT: {
			wg_options scratch = WG_OPTIONS_INIT;
			if (!parse_limit(&scratch, mode ? "audit" : "check", optarg))
				return EXIT_USAGE;
			if (a->nlimits == sizeof(a->limits) / sizeof(a->limits[0])) {
				pipeline_fail(p, "at most %zu --limit\n", a->nlimits);
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
				pipeline_fail(p, "--%s takes a number of findings (0: all), not '%s'\n",
					      c == O_MAX_FINDINGS ? "max-findings" : "max-rule-findings",
					      esc(optarg));
				return EXIT_USAGE;
			}
			*(c == O_MAX_FINDINGS ? &a->max_findings : &a->max_rule_findings) = (long long)v;
			break;
		}
		case O_MAX_STDIN:
			if (!parse_size(optarg, &a->max_stdin)) {
				pipeline_fail(p, "--max-stdin takes a size (bytes, or with K, M or G), "
					      "not '%s'\n", esc(optarg));
				return EXIT_USAGE;
			}
			break;
		case O_ONLY: {
			char *save = NULL;
			for (char *t = strtok_r(optarg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				const char **o = realloc(a->only, (a->nonly + 1) * sizeof(*o));
				if (!o) {
					pipeline_fail(p, "out of memory\n");
					return EXIT_USAGE;
				}
				a->only = o;
				a->only[a->nonly++] = t;
			}
			break;
		}
		case 'q': p->quiet = true; break;
		case 'j':
			if (parse_jobs(p->prog + 10, optarg, &a->jobs) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			if (mode)
				mode->help(stdout);
			else
				help(stdout);
			return EXIT_CLEAN;
		default:
			option_error(p->prog, argv, optind, "o:qhj:", longopts);
			return EXIT_USAGE;
		}
	}
	return -1;
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
		pipeline_fail(&a->p, "one ENV at most, not %d\n", argc - optind);
		return EXIT_USAGE;
	}
	char note[1024];
	int rc = env_resolve(argc > optind ? argv[optind] : NULL, buf, n, note, sizeof(note),
			     a->env_why, sizeof(a->env_why));
	if (rc < 0) {
		pipeline_fail(&a->p, "%s\n", a->env_why);
		return EXIT_USAGE;
	}
	if (rc == 0)
		a->env_why[0] = '\0';
	a->env_path = buf;
	if (*note && !a->p.quiet)
		fprintf(stderr, "%s: %s\n", a->p.prog, note);
	return -1;
}

/* --lock: its wheels as the inputs, their labels as the paths. -1 to go on, else the exit
 * status. */
static int lock_main(check_args *a, const wg_env *env, int argc, char **argv, lock_input **locked,
		     size_t *nlocked, char ***inputs)
{
	if (argc > optind) {
		pipeline_fail(&a->p, "--lock FILE checks the lock's wheels: no PATH with it ('%s')\n",
			      esc(argv[optind]));
		return EXIT_USAGE;
	}
	char pybuf[64];
	lock_options lo = {NULL, NULL, a->max_stdin ? a->max_stdin : (2ull << 30),
			   a->allow_no_wheel, a->allow_unhashed, a->p.quiet};
	lo.python = pipeline_target_python(&a->p, env, pybuf, sizeof(pybuf), &lo.python_from);
	if (lock_inputs(locked, nlocked, a->lock, &lo) < 0)
		return EXIT_USAGE;
	if (*nlocked == 0) {
		pipeline_fail(&a->p, "--lock: %s: no wheel to check (every package skipped)\n",
			      esc(a->lock));
		return EXIT_USAGE;
	}
	if (!(*inputs = calloc(*nlocked, sizeof(**inputs)))) {
		pipeline_fail(&a->p, "out of memory\n");
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

/* PEP 825 index files ({name}-{version}-variants.json) are no inputs of their own: the wheels
 * given with them are checked against them (WG-VAR-006); the others stay in inputs (*n). -1 to
 * go on, else the exit status. */
static int variant_indexes(const check_args *a, wg_target *target, char **inputs, size_t *n)
{
	size_t kept = 0, nidx = 0;
	const char *idx[8];
	bool had_index = false;
	for (size_t i = 0; i < *n; i++) {
		if (!wg_is_variants_index(inputs[i])) {
			inputs[kept++] = inputs[i];
			continue;
		}
		had_index = true;
		if (nidx < 8)
			idx[nidx++] = inputs[i];
		if (wg_target_add_variants(target, inputs[i]) < 0) {
			pipeline_fail(&a->p, "%s\n", esc(wg_error_last()));
			return EXIT_USAGE;
		}
	}
	*n = kept;
	/* an index that no wheel given belongs to would check nothing: said, never silent */
	for (size_t x = 0; x < nidx; x++) {
		if (!index_has_wheel(idx[x], inputs, kept)) {
			pipeline_fail(&a->p, "%s: no wheel of its name and version is given with it: a "
				      "variant index file is checked against the wheels given with "
				      "it\n", esc(idx[x]));
			return EXIT_USAGE;
		}
	}
	if (had_index && kept == 0) {
		pipeline_fail(&a->p, "a variant index file is checked against the wheels given with "
			      "it: give them too\n");
		return EXIT_USAGE;
	}
	return -1;
}

/* What cannot go together; -1 to go on, else the exit status. */
static int refuse_mixes(const check_args *a, const wg_env *env, size_t ninputs)
{
	const check_command *cmd = a->cmd;
	if (!cmd && ninputs == 0) {
		pipeline_fail(&a->p, "no input given (a wheel, an ELF object, a directory or -)\n");
		fprintf(stderr, "Try 'wheelgate check --help'.\n");
		return EXIT_USAGE;
	}
	if (a->from_facts && (a->together || a->lock || cmd)) {
		pipeline_fail(&a->p, "--from-facts judges stored facts one by one: not with %s\n",
			      cmd ? cmd->name : a->together ? "--together" : "--lock");
		return EXIT_USAGE;
	}
	if (a->together && !env) {
		pipeline_fail(&a->p, "--together judges wheels as one install into an environment: "
			      "give --env\n");
		return EXIT_USAGE;
	}
	if (!cmd && ninputs > MAX_INPUTS) {
		pipeline_fail(&a->p, "at most %d inputs at once\n", MAX_INPUTS);
		return EXIT_USAGE;
	}
	return -1;
}

int check_main(int argc, char **argv, const check_command *cmd)
{
	check_args a = {0};
	a.max_rule_findings = a.max_findings = -1;
	a.cmd = cmd;
	a.p.prog = cmd ? cmd->name : "wheelgate check";
	char envbuf[4096];
	char **inputs = NULL;
	size_t ninputs = 0;
	lock_input *locked = NULL;
	size_t nlocked = 0;
	int status = parse_args(&a, argc, argv);
	if (status < 0 && cmd)
		status = audit_env(&a, argc, argv, envbuf, sizeof(envbuf));
	else if (status < 0 && a.env_path &&
		 (status = pipeline_env_resolve(&a.p, a.env_path, envbuf, sizeof(envbuf), a.env_why,
						sizeof(a.env_why), "--env:")) < 0)
		a.env_path = envbuf;
	if (status < 0)
		status = pipeline_configure(&a.p, true);
	if (status >= 0) {
		pipeline_free(&a.p);
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
	wg_scanner *sc = NULL, *env_sc = NULL;
	wg_env *env = NULL;
	wg_target *target = NULL;
	if ((status = pipeline_rules(&a.p, &opts)) >= 0)
		goto out;
	if (wg_scanner_new(&sc, a.p.ctx) < 0) {
		pipeline_fail(&a.p, "%s\n", esc(wg_error_last()));
		status = EXIT_USAGE;
		goto out;
	}
	/* The environment gets a scanner of its own: its lazy loads classify symbols with it
	 * while the threads read inputs with theirs. */
	if (a.env_path &&
	    (status = pipeline_env_open(&a.p, &env, &env_sc, a.env_path, a.env_why, "--env")) >= 0)
		goto out;
	pipeline_target_spec ts = {NULL, a.p.profile, env, NULL, NULL, 0};
	if ((status = pipeline_target(&a.p, &target, &ts)) >= 0)
		goto out;
	status = EXIT_CLEAN;
	if (a.list || a.self_test) {
		status = rules_only(&a, a.p.rs);
		goto out;
	}
	if (cmd) {
		if ((status = cmd->inputs(&inputs, &ninputs, env, a.only, a.nonly, a.p.quiet,
					  cmd->payload)) >= 0)
			goto out;
	} else if (a.lock) {
		if ((status = lock_main(&a, env, argc, argv, &locked, &nlocked, &inputs)) >= 0)
			goto out;
		ninputs = nlocked;
	} else {
		ninputs = (size_t)(argc > optind ? argc - optind : 0);
		inputs = argv + optind;
		if ((status = variant_indexes(&a, target, inputs, &ninputs)) >= 0)
			goto out;
	}
	if ((status = refuse_mixes(&a, env, ninputs)) >= 0)
		goto out;
	if (a.max_stdin)
		opts.max_stdin = a.max_stdin;
	if ((status = pipeline_suppress(&a.p, a.write_baseline != NULL)) >= 0)
		goto out;
	checker k = {&a, sc, a.p.rs, target, (size_t)opts.max_stdin, stdout,
		     !strcmp(a.p.format, "text"), false, {0}, a.p.ctx, NULL, 0, false, env != NULL,
		     PTHREAD_MUTEX_INITIALIZER, env, env_sc, locked, a.p.sup, NULL, 0};
	if (a.output && !(k.out = fopen(a.output, "w"))) {
		pipeline_fail(&a.p, "-o: %s: %s\n", a.output, strerror(errno));
		status = EXIT_USAGE;
		goto out;
	}
	k.color = k.text && k.out == stdout && use_color;
	status = finish(&k, check_inputs(&k, inputs, ninputs));
	results_free(&k.res);
	free(k.sups);
out:
	wg_target_free(target);
	wg_env_free(env);
	wg_scanner_free(env_sc);
	wg_scanner_free(sc);
	pipeline_free(&a.p);
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

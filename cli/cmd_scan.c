/*
 * `wheelgate scan`: many inputs (paths, directories, a list of paths) judged with check's
 * rules, one JSON Lines record ("wheelgate.scan/1", docs/scan.md) per input written as each
 * input is done. `--shard I/N` splits a list stably by file name; `--resume OUT.jsonl` skips
 * the inputs whose sha256 the file already holds and appends the rest.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "scan.h"

static const char prog[] = SCAN_PROG;

void scan_fail(const char *fmt, ...)
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
		"usage: wheelgate scan [options] [PATH...]\n"
		"\n"
		"Judges many wheels with the rules of 'wheelgate check' and writes one JSON Lines\n"
		"record (\"wheelgate.scan/1\", see docs/scan.md) per input as soon as it is done:\n"
		"its sha256, size, name, version, tags, the verdict, counts and findings for the\n"
		"target, the seconds it took, or why it could not be read. A PATH is a wheel or a\n"
		"directory (every *.whl below it).\n"
		"\n"
		"inputs:\n"
		"  --from FILE        one path a line ('-': stdin); blank lines and lines starting\n"
		"                     with '#' are skipped; URLs are refused (download them first)\n"
		"  --shard I/N        only the inputs of shard I of N (0 <= I < N): an input belongs\n"
		"                     to shard FNV-1a-64(its file name, without directories) mod N,\n"
		"                     so every machine given the same list takes a disjoint share\n"
		"  --resume FILE      skip the inputs whose sha256 a record of FILE already has and\n"
		"                     append the records of the others to FILE (a last line cut\n"
		"                     short by a killed scan is dropped and written again)\n"
		"facts kept by content (docs/facts-store.md):\n"
		"  --facts-dir DIR    keep the facts of each wheel read in DIR under its sha256;\n"
		"                     a wheel whose facts DIR already holds (stored under the\n"
		"                     same file name) is judged from them, not read again\n"
		"  --refresh-facts    read every wheel, and store its facts again\n"
		"  --from-facts       judge stored facts, the wheels may be gone: each PATH (or\n"
		"                     --from line) is a stored file, a directory of them, or a\n"
		"                     sha256 whose facts --facts-dir holds; no PATH: every\n"
		"                     input --facts-dir holds\n"
		"output:\n"
		"  -o, --output FILE  write the records to FILE (default: stdout)\n"
		"  -j, --jobs N       inputs read at once (default: one per CPU; 1: no threads)\n"
		"  -q, --quiet        no progress line and no summary on stderr\n"
		"target and rules (as 'wheelgate check'):\n"
		"  --target SPEC, --gpu GPU, --env PATH, --profile P, --rules PATH,\n"
		"  --disable RULE, --enable RULE, --config FILE, --no-config, --fail-on LEVEL,\n"
		"  --baseline FILE\n"
		"  --target-set NAME:KEY=VALUE,...\n"
		"                     a named target (repeatable): each input is read once and\n"
		"                     judged for every set, one entry of the record's \"targets\"\n"
		"                     each. KEYs: the facts of --target (python, torch, cuda,\n"
		"                     cxx11abi, glibc, platform...), gpu (repeatable), profile\n"
		"                     and env (a path without commas); --target, --gpu, --env and\n"
		"                     --profile apply to every set, the set's own on top, e.g.\n"
		"                     --target-set h100:gpu=H100,torch=2.11.0+cu130\n"
		"                     --target-set b200:gpu=B200,torch=2.11.0+cu130\n"
		"  -h, --help         show this help\n"
		"\n"
		"exit status: 0 when every input passes for every target, 1 when an input fails\n"
		"(a finding at or above --fail-on), 2 for usage errors and inputs that cannot be\n"
		"read.\n");
}

/* ---- the scan ---- */

static double now_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void progress(scanner_state *s)
{
	if (!s->tty || s->quiet)
		return;
	double el = now_since(&s->t0);
	size_t done = s->finished + s->skipped;
	/* at most ten times a second, and the last */
	if (done < s->n && el - s->shown < 0.1)
		return;
	s->shown = el;
	double rate = el > 0 ? (double)s->finished / el : 0;
	size_t left = s->n - done;
	char line[256];
	if (rate > 0)
		snprintf(line, sizeof(line), "scan: %zu/%zu (%zu skipped) %.1f/s ETA %.0fs", done,
			 s->n, s->skipped, rate, (double)left / rate);
	else
		snprintf(line, sizeof(line), "scan: %zu/%zu (%zu skipped)", done, s->n, s->skipped);
	progress_line(line);
}

static wg_scanner *slot_scanner(scanner_state *s, unsigned slot)
{
	if (slot >= s->nscs)
		slot = 0;
	if (!s->scs[slot] && wg_scanner_new(&s->scs[slot], s->p.ctx) < 0)
		return NULL;
	return s->scs[slot];
}

static bool is_facts_name(const char *path, char key[65])
{
	const char *b = cli_base_name(path);
	if (strlen(b) != 64 + strlen(".json.zst") || strcmp(b + 64, ".json.zst"))
		return false;
	memcpy(key, b, 64);
	key[64] = '\0';
	return is_sha256_hex(key);
}

/* Says on stderr (not a verdict) what went wrong with the store. */
static void store_warning(scanner_state *s, const char *path, const char *what, const char *why)
{
	if (s->quiet)
		return;
	/* on a worker thread: esc()'s ring is not ours */
	char *e = NULL, *m = NULL;
	wg_escape(&e, path, WG_ESCAPE_CONTROL);
	wg_escape(&m, why, WG_ESCAPE_CONTROL);
	pthread_mutex_lock(&s->lock);
	if (s->tty)
		progress_clear();
	fprintf(stderr, "wheelgate: %s: %s: %s\n", e ? e : "?", what, m ? m : "out of memory");
	pthread_mutex_unlock(&s->lock);
	wg_free(e);
	wg_free(m);
}

/* The facts of one input: its stored facts (--from-facts, or --facts-dir holding them) or the
 * file read (and stored with --facts-dir). 0, or -1 with the reason in err. */
static int get_facts(scanner_state *s, wg_scanner *sc, const char *path, const char *hex,
		     wg_scan **scan, char *facts, size_t flen, bool *from_store, char *err,
		     size_t errlen)
{
	*from_store = false;
	if (s->from_facts) {
		if (wg_facts_load(scan, sc, path) < 0) {
			snprintf(err, errlen, "%s", wg_scanner_error(sc));
			return -1;
		}
		/* no wheel to read again: judged, and counted for the closing warning */
		if (strcmp(wg_scan_stored_by(*scan), wg_version_string())) {
			pthread_mutex_lock(&s->lock);
			s->stale++;
			pthread_mutex_unlock(&s->lock);
		}
		snprintf(facts, flen, "%s", path);
		*from_store = true;
		return 0;
	}
	bool have = false;
	struct stat st;
	if (s->facts_dir && wg_facts_path(facts, flen, s->facts_dir, hex) == WG_OK) {
		have = !s->refresh_facts && stat(facts, &st) == 0 && S_ISREG(st.st_mode);
		/* The file name is a fact too (its tags, name and version): the same bytes under
		 * another name are read as what they now claim to be. Facts depend on the reader
		 * that made them: those another wheelgate version stored are read again. */
		if (have && wg_facts_load(scan, sc, facts) == WG_OK &&
		    !strcmp(cli_base_name(wg_scan_get_path(*scan)), cli_base_name(path))) {
			if (!strcmp(wg_scan_stored_by(*scan), wg_version_string())) {
				*from_store = true;
				return 0;
			}
			pthread_mutex_lock(&s->lock);
			s->stale++;
			pthread_mutex_unlock(&s->lock);
		}
		if (have && !*scan)
			store_warning(s, facts, "stored facts not read, the wheel is read instead",
				      wg_scanner_error(sc));
		wg_scan_free(*scan);
		*scan = NULL;
	}
	if (wg_scan_path(scan, sc, path) < 0) {
		snprintf(err, errlen, "%s", wg_scanner_error(sc));
		return -1;
	}
	bool stored = false;
	if (s->facts_dir) {
		if (wg_facts_store(s->facts_dir, hex, *scan) < 0)
			store_warning(s, path, "facts not stored", wg_error_last());
		else
			stored = true;
	}
	pthread_mutex_lock(&s->lock);
	s->nread++;
	s->stored += stored;
	pthread_mutex_unlock(&s->lock);
	facts[0] = '\0';
	return 0;
}

/* Judges scan for target tg (as check: a wheel judged against an environment is an install of
 * it alone), the ignores and the baseline taken out: the report, or -1 with the reason in
 * err. */
static int judge(scanner_state *s, wg_scanner *sc, const scan_target *tg, const char *path,
		 const wg_scan *scan, wg_report **rep, char *err, size_t errlen)
{
	scan_env *e = tg->env;
	if (pipeline_judge(rep, sc, s->p.rs, scan, tg->target, e ? e->env : NULL, e ? e->sc : NULL,
			   true, e ? &s->lock : NULL, err, errlen) < 0)
		return -1;
	if (s->p.sup) {
		size_t ig = 0, bl = 0;
		pthread_mutex_lock(&s->lock);
		int rc = suppress_apply(s->p.sup, s->p.rs, path, *rep, &ig, &bl);
		pthread_mutex_unlock(&s->lock);
		if (rc < 0) {
			snprintf(err, errlen, "out of memory");
			wg_report_free(*rep);
			*rep = NULL;
			return -1;
		}
	}
	return 0;
}

static void scan_job(void *arg, size_t i, unsigned slot)
{
	scanner_state *s = arg;
	const char *path = s->inputs[i];
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char hex[65] = "", err[1024] = "", facts[4096] = "";
	uint64_t size = 0;
	bool have_sha = false, have_size = false, from_store = false;
	wg_scan *scan = NULL;
	wg_report *reps[MAX_SETS] = {0};
	const char *error = NULL;
	wg_scanner *sc = slot_scanner(s, slot);
	if (strstr(path, "://")) {
		snprintf(err, sizeof(err), "%s: URLs are not read by 'wheelgate scan': download "
			 "the wheel and give its path", path);
	} else if (!sc) {
		snprintf(err, sizeof(err), "out of memory");
	} else if (!s->from_facts && sha256_file(path, hex, &size, err, sizeof(err)) != 0) {
		/* err says why */
	} else {
		/* stored facts: the sha256 their file name gives (DIR/ab/<sha256>.json.zst) */
		if (s->from_facts)
			have_sha = is_facts_name(path, hex);
		else
			have_sha = have_size = true;
		if (have_sha && shaset_has(&s->done, hex)) {
			pthread_mutex_lock(&s->lock);
			s->skipped++;
			progress(s);
			pthread_mutex_unlock(&s->lock);
			return;
		}
		if (get_facts(s, sc, path, hex, &scan, facts, sizeof(facts), &from_store, err,
			      sizeof(err)) == 0) {
			if (s->from_facts && wg_scan_file_size(scan) >= 0) {
				size = (uint64_t)wg_scan_file_size(scan);
				have_size = true;
			}
			/* the input's name in messages: the wheel's own path when from the store */
			const char *name = s->from_facts ? wg_scan_get_path(scan) : path;
			for (size_t t = 0; t < s->ntg; t++) {
				char e[1024] = "";
				if (judge(s, sc, &s->tg[t], name, scan, &reps[t], e, sizeof(e)) < 0) {
					/* the record's error: the first target's that could not be judged */
					if (!*err)
						snprintf(err, sizeof(err), "%s", e);
				}
			}
		}
	}
	int worst = -1;
	if (*err)
		error = err;
	for (size_t t = 0; t < s->ntg; t++)
		if (reps[t] && wg_report_worst(reps[t]) > worst)
			worst = wg_report_worst(reps[t]);
	const char *shown = s->from_facts && scan ? wg_scan_get_path(scan) : path;
	/* the record, as the library writes it (wheelgate.scan/1, docs/scan.md) */
	wg_scan_record_target rt[MAX_SETS];
	for (size_t t = 0; t < s->ntg; t++)
		rt[t] = (wg_scan_record_target){WG_SCAN_RECORD_TARGET_VERSION, s->tg[t].name,
						s->tg[t].target, reps[t], NULL};
	wg_scan_record rec = WG_SCAN_RECORD_INIT;
	rec.path = shown;
	rec.scan = scan;
	rec.sha256 = have_sha ? hex : NULL;
	rec.size = have_size ? (int64_t)size : -1;
	rec.targets = rt;
	rec.ntargets = s->ntg;
	rec.fail_on = s->p.fail_on;
	rec.facts = from_store ? facts : NULL;
	rec.seconds = now_since(&t0);
	rec.error = error;
	char *line = NULL;
	if (wg_scan_record_format(&line, &rec) < 0)
		line = NULL;
	for (size_t t = 0; t < s->ntg; t++)
		wg_report_free(reps[t]);
	wg_scan_free(scan);

	pthread_mutex_lock(&s->lock);
	if (!line || fputs(line, s->out) == EOF || fputc('\n', s->out) == EOF ||
	    fflush(s->out) != 0)
		s->write_error = true;
	s->finished++;
	if (from_store)
		s->from_store++;
	if (error)
		s->unreadable++;
	else if (worst >= (int)s->p.fail_on)
		s->failed++;
	else
		s->passed++;
	if (error && !s->quiet) {
		if (s->tty)
			progress_clear();
		fprintf(stderr, "wheelgate: %s\n", esc(error));
	}
	progress(s);
	pthread_mutex_unlock(&s->lock);
	wg_free(line);
}

/* ---- options ---- */

/* -1 to go on, else the exit status. */
static int parse_args(scanner_state *s, strlist *from, int argc, char **argv)
{
	enum { O_ENV = PO_END, O_FROM, O_RESUME, O_SHARD, O_FACTS_DIR, O_FROM_FACTS,
	       O_REFRESH_FACTS, O_TARGET_SET };
	static const struct option longopts[] = {
		PIPELINE_OPTIONS,
		{"env", required_argument, NULL, O_ENV},
		{"from", required_argument, NULL, O_FROM}, {"resume", required_argument, NULL, O_RESUME},
		{"shard", required_argument, NULL, O_SHARD},
		{"facts-dir", required_argument, NULL, O_FACTS_DIR},
		{"from-facts", no_argument, NULL, O_FROM_FACTS},
		{"refresh-facts", no_argument, NULL, O_REFRESH_FACTS},
		{"target-set", required_argument, NULL, O_TARGET_SET},
		{"output", required_argument, NULL, 'o'}, {"jobs", required_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qhj:", longopts, NULL)) != -1) {
		int taken = pipeline_option(&s->p, c, optarg);
		if (taken != 1) {
			if (taken)
				return taken;
			continue;
		}
		switch (c) {
		case O_ENV: s->env_path = optarg; break;
		case O_FROM:
			if (strlist_add(from, optarg) < 0) {
				scan_fail("out of memory\n");
				return EXIT_USAGE;
			}
			break;
		case O_RESUME: s->resume = optarg; break;
		case O_FACTS_DIR: s->facts_dir = optarg; break;
		case O_FROM_FACTS: s->from_facts = true; break;
		case O_REFRESH_FACTS: s->refresh_facts = true; break;
		case O_TARGET_SET:
			if (s->nsets == MAX_SETS) {
				scan_fail("at most %d --target-set\n", MAX_SETS);
				return EXIT_USAGE;
			}
			s->sets[s->nsets++] = optarg;
			break;
		case O_SHARD: {
			unsigned i, n;
			char tail;
			if (sscanf(optarg, "%u/%u%c", &i, &n, &tail) != 2 || n == 0 || i >= n) {
				scan_fail("--shard takes I/N with 0 <= I < N (e.g. 0/4), not '%s'\n",
				     esc(optarg));
				return EXIT_USAGE;
			}
			s->shard_i = i;
			s->shard_n = n;
			break;
		}
		case 'o': s->output = optarg; break;
		case 'q': s->quiet = s->p.quiet = true; break;
		case 'j':
			if (parse_jobs("scan", optarg, &s->jobs) < 0)
				return EXIT_USAGE;
			break;
		case 'h': help(stdout); return EXIT_CLEAN;
		default:
			option_error(prog, argv, optind, "o:qhj:", longopts);
			return EXIT_USAGE;
		}
	}
	if (s->refresh_facts && (!s->facts_dir || s->from_facts)) {
		scan_fail("--refresh-facts reads the wheels and stores their facts in --facts-dir: %s\n",
		     s->from_facts ? "not with --from-facts" : "no --facts-dir given");
		return EXIT_USAGE;
	}
	if (s->output && s->resume && strcmp(s->output, s->resume)) {
		scan_fail("--resume FILE appends to FILE: -o names another file ('%s')\n", esc(s->output));
		return EXIT_USAGE;
	}
	return -1;
}

/* The environment at path, opened on first use and shared by the targets naming it. */
static scan_env *open_env(scanner_state *s, const char *path)
{
	for (size_t i = 0; i < s->nenvs; i++)
		if (!strcmp(s->envs[i].path, path))
			return &s->envs[i];
	scan_env *e = &s->envs[s->nenvs];
	char where[PATH_MAX], why[1024], label[PATH_MAX + 8];
	if (pipeline_env_resolve(&s->p, path, where, sizeof(where), why, sizeof(why), "--env") >= 0)
		return NULL;
	/* several targets may name several environments: each message names its own */
	snprintf(label, sizeof(label), "--env %s", esc(path));
	e->path = path;
	if (pipeline_env_open(&s->p, &e->env, &e->sc, where, why, label) >= 0)
		return NULL;
	s->nenvs++;
	return e;
}

/* Appends "key=value" (or value alone) to a target's name. */
static void name_add(char *name, size_t n, const char *key, const char *value)
{
	size_t o = strlen(name);
	if (o < n)
		snprintf(name + o, n - o, "%s%s%s%s", o ? "," : "", key ? key : "", key ? "=" : "",
			 value);
}

/* A target: the options every target takes (--target, --gpu, --env, --profile), then set's
 * own (NAME:KEY=VALUE,...), or the options alone when set is NULL. */
static int make_one_target(scanner_state *s, scan_target *tg, const char *set)
{
	char facts[1024] = "", spec[1024];
	const char *gpus[CFG_MAX];
	size_t ngpus = 0;
	const char *env_path = s->env_path;
	int profile = s->p.profile;
	if (set) {
		const char *colon = strchr(set, ':');
		if (!colon || colon == set || (size_t)(colon - set) >= sizeof(tg->name)) {
			scan_fail("--target-set takes NAME:KEY=VALUE[,KEY=VALUE...], not '%s'\n", esc(set));
			return EXIT_USAGE;
		}
		snprintf(tg->name, sizeof(tg->name), "%.*s", (int)(colon - set), set);
		for (size_t i = 0; i < s->ntg; i++)
			if (!strcmp(s->tg[i].name, tg->name)) {
				scan_fail("--target-set: two sets are named '%s'\n", esc(tg->name));
				return EXIT_USAGE;
			}
		if (snprintf(spec, sizeof(spec), "%s", colon + 1) >= (int)sizeof(spec)) {
			scan_fail("--target-set %s: too long\n", esc(tg->name));
			return EXIT_USAGE;
		}
		char *save = NULL;
		for (char *kv = strtok_r(spec, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');
			if (!eq || eq == kv || !eq[1]) {
				scan_fail("--target-set %s: '%s' is not KEY=VALUE\n", esc(tg->name), esc(kv));
				return EXIT_USAGE;
			}
			*eq = '\0';
			const char *v = eq + 1;
			if (!strcmp(kv, "gpu")) {
				if (ngpus == CFG_MAX) {
					scan_fail("--target-set %s: too many GPUs\n", esc(tg->name));
					return EXIT_USAGE;
				}
				gpus[ngpus++] = v;
			} else if (!strcmp(kv, "profile")) {
				if ((profile = wg_profile_parse(v)) < 0) {
					scan_fail("--target-set %s: profile takes install, publish or auto, "
					     "not '%s'\n", esc(tg->name), esc(v));
					return EXIT_USAGE;
				}
			} else if (!strcmp(kv, "env")) {
				env_path = v;
			} else {
				name_add(facts, sizeof(facts), kv, v);
			}
		}
	}
	tg->profile = profile;
	const char *what = set ? tg->name : NULL;
	wg_env *env = NULL;
	if (env_path) {
		if (!(tg->env = open_env(s, env_path)))
			return EXIT_USAGE;
		env = tg->env->env;
	}
	pipeline_target_spec ts = {what, profile, env, facts, gpus, ngpus};
	int rc = pipeline_target(&s->p, &tg->target, &ts);
	if (rc >= 0)
		return rc;
	if (!set) {
		/* The target's name in the records: what defines it, else "default". */
		if (env_path)
			name_add(tg->name, sizeof(tg->name), "env", env_path);
		for (size_t i = 0; i < s->p.cfg.ntargets; i++)
			name_add(tg->name, sizeof(tg->name), NULL, s->p.cfg.targets[i]);
		for (size_t i = 0; i < s->p.cfg.ngpus; i++)
			name_add(tg->name, sizeof(tg->name), "gpu", s->p.cfg.gpus[i]);
		if (!tg->name[0])
			snprintf(tg->name, sizeof(tg->name), "default");
	}
	return -1;
}

static int make_targets(scanner_state *s)
{
	int rc = -1;
	if (!s->nsets) {
		rc = make_one_target(s, &s->tg[0], NULL);
		s->ntg = 1;
		return rc;
	}
	for (size_t i = 0; i < s->nsets && rc < 0; i++) {
		rc = make_one_target(s, &s->tg[i], s->sets[i]);
		s->ntg = i + 1;
	}
	return rc;
}

int cmd_scan(int argc, char **argv)
{
	scanner_state s = {0};
	strlist from = {0}, all = {0};
	s.p.prog = prog;
	int status = parse_args(&s, &from, argc, argv);
	if (status < 0)
		status = pipeline_configure(&s.p, false);
	if (status >= 0)
		goto done;
	status = EXIT_CLEAN;
	/* the inputs: the PATHs, then each --from list; a directory gives its wheels */
	size_t total = 0;
	if ((status = scan_gather(&all, &total, argv + optind, (size_t)(argc - optind), &from,
				  s.from_facts ? s.facts_dir : NULL, s.from_facts, s.shard_i,
				  s.shard_n)) >= 0) {
		if (status == EXIT_USAGE && all.n == 0 && argc == optind && from.n == 0 &&
		    !(s.from_facts && s.facts_dir))
			fprintf(stderr, "Try 'wheelgate scan --help'.\n");
		goto done;
	}
	status = EXIT_CLEAN;
	size_t recorded = 0;
	if (s.resume && resume_read(&s.done, s.resume, &recorded) < 0) {
		status = EXIT_USAGE;
		goto done;
	}
	wg_options opts = WG_OPTIONS_INIT;
	opts.jobs = s.jobs;
	if ((status = pipeline_rules(&s.p, &opts)) >= 0 || (status = make_targets(&s)) >= 0)
		goto done;
	/* the configuration's ignores and the baseline take findings out as check's do */
	if ((status = pipeline_suppress(&s.p, false)) >= 0)
		goto done;
	status = EXIT_CLEAN;
	const char *outpath = s.resume ? s.resume : s.output;
	s.out = stdout;
	if (outpath && !(s.out = fopen(outpath, s.resume ? "a" : "w"))) {
		scan_fail("%s: %s\n", esc(outpath), strerror(errno));
		s.out = NULL;
		status = EXIT_USAGE;
		goto done;
	}
	s.inputs = all.v;
	s.n = all.n;
	s.nscs = wg_context_slots(s.p.ctx);
	if (!(s.scs = calloc(s.nscs ? s.nscs : 1, sizeof(*s.scs)))) {
		scan_fail("out of memory\n");
		status = EXIT_USAGE;
		goto done;
	}
	if (s.nscs == 0)
		s.nscs = 1;
	pthread_mutex_init(&s.lock, NULL);
	s.tty = isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &s.t0);
	if (!s.quiet && s.shard_n)
		fprintf(stderr, "%s: shard %u/%u: %zu of %zu inputs\n", prog, s.shard_i, s.shard_n,
			s.n, total);
	if (!s.quiet && s.resume)
		fprintf(stderr, "%s: --resume: %s holds %zu records (%zu sha256)\n", prog,
			esc(s.resume), recorded, s.done.n);
	wg_context_run(s.p.ctx, s.n, scan_job, &s);
	if (s.tty && !s.quiet)
		progress_clear();
	pthread_mutex_destroy(&s.lock);
	if (s.out != stdout) {
		/* a regular file is made durable; a device or a pipe (-o /dev/null) has no fsync */
		struct stat ost;
		if (fflush(s.out) != 0 || (fstat(fileno(s.out), &ost) == 0 && S_ISREG(ost.st_mode) &&
					   fsync(fileno(s.out)) != 0))
			s.write_error = true;
		if (fclose(s.out) != 0)
			s.write_error = true;
	} else if (fflush(stdout) != 0) {
		s.write_error = true;
	}
	s.out = NULL;
	double el = now_since(&s.t0);
	if (!s.quiet) {
		fprintf(stderr, "%s: %zu inputs: %zu scanned (%zu passed, %zu failed, %zu unreadable), "
			"%zu skipped (already recorded); %.1fs, %.1f inputs/s\n", prog, s.n, s.finished,
			s.passed, s.failed, s.unreadable, s.skipped, el,
			el > 0 ? (double)s.finished / el : 0.0);
		if (s.facts_dir && !s.from_facts)
			fprintf(stderr, "%s: %zu judged from stored facts, %zu read (facts of %zu "
				"stored in %s)\n", prog, s.from_store, s.nread, s.stored,
				esc(s.facts_dir));
		if (s.facts_dir && !s.from_facts && s.stale)
			fprintf(stderr, "%s: %zu inputs had facts stored by another wheelgate "
				"version: read again and stored anew\n", prog, s.stale);
		if (s.from_facts && s.stale)
			fprintf(stderr, "%s: warning: %zu of the stored facts were written by another "
				"wheelgate version than this one (%s): they hold what that version "
				"read; store them again (scan --facts-dir --refresh-facts) where the "
				"wheels are\n", prog, s.stale, wg_version_string());
	}
	if (s.write_error) {
		scan_fail("%s: cannot write the records: %s\n", outpath ? esc(outpath) : "stdout",
		     strerror(errno));
		status = EXIT_USAGE;
	} else {
		status = s.unreadable ? EXIT_USAGE : s.failed ? EXIT_FINDINGS : EXIT_CLEAN;
	}
done:
	if (s.out && s.out != stdout)
		fclose(s.out);
	for (unsigned i = 0; s.scs && i < s.nscs; i++)
		wg_scanner_free(s.scs[i]);
	free(s.scs);
	for (size_t i = 0; i < s.ntg; i++)
		wg_target_free(s.tg[i].target);
	for (size_t i = 0; i < s.nenvs; i++) {
		wg_env_free(s.envs[i].env);
		wg_scanner_free(s.envs[i].sc);
	}
	pipeline_free(&s.p);
	free(s.done.v);
	strlist_free(&from);
	strlist_free(&all);
	return status;
}

/*
 * `wheelgate select`: among the variants of a release (a directory, a list, a lock), the wheel
 * that will work here, by content: every candidate judged with check's install profile for the
 * target (facts kept by sha256 in the store), the ones that work ranked by tags (pip's order),
 * version, size; the chosen one's path or URL alone on stdout, the table on stderr.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "lock.h"
#include "pipeline.h"
#include "select.h"

#define DEFAULT_MAX (2ULL << 30) /* the most a wheel without a size may have when fetched */
#define MAX_REASONS 8

static void help(FILE *f)
{
	fprintf(f,
		"usage: wheelgate select [--env ENV | --target SPEC...] [--gpu GPU...]\n"
		"                        [--project NAME] [--version V] [--format text|json]\n"
		"                        SOURCE...\n"
		"\n"
		"Picks, among the variants of a release (flash-attn's +cu12torch2.6cxx11abiFALSE\n"
		"and the like), the wheel that will work here, by what each wheel holds, never by\n"
		"its label: every candidate is judged as 'wheelgate check' judges an install into\n"
		"the target (the install profile: the torch symbols it imports against --env's\n"
		"torch, the C++ std::string ABI, the CUDA runtime major, the GPU code for --gpu,\n"
		"the C library, the Python and platform tags), and the best of those that work is\n"
		"printed alone on stdout, so that\n"
		"    pip install \"$(wheelgate select --env .venv --gpu H100 dist/)\"\n"
		"installs it. stderr gets a table: each candidate, its verdict, and for each one\n"
		"that would not work the reasons, one line each.\n"
		"\n"
		"SOURCE (several may be given; their candidates are pooled):\n"
		"  DIR                every *.whl in the directory (not below it)\n"
		"  FILE.whl           that wheel\n"
		"  pylock*.toml       every wheel of every package a PEP 751 lock lists (not only\n"
		"                     the one 'check --lock' would choose), verified by its size\n"
		"                     and sha256\n"
		"  URL                an http(s): or file: URL of a wheel (#sha256=HEX verifies it)\n"
		"  INDEX-URL          a simple index project page (https://host/simple/PROJECT/,\n"
		"                     PEP 503/691): every wheel it lists, yanked ones left out,\n"
		"                     verified by the page's sha256\n"
		"  FILE               a list: a path (relative to FILE's directory), a file: URL or\n"
		"                     an http(s): URL a line (#sha256=HEX verifies it); blank lines\n"
		"                     and '#' comments skipped\n"
		"URLs are fetched with wheelgate's fetch module (as check --lock does) into private\n"
		"temporary files, verified before they are read.\n"
		"\n"
		"target (as 'wheelgate check' takes them):\n"
		"  --env ENV          the environment to install into: a venv or prefix, a\n"
		"                     site-packages directory or a python (its torch, python)\n"
		"  --target SPEC      facts of the target (python=3.12,torch=2.11.0,cxx11abi=1,\n"
		"                     cuda=13.0,glibc=2.35...); on top of --env's\n"
		"  --gpu GPU          a target GPU (sm_90, 9.0, H100; 'wheelgate gpus'); repeatable\n"
		"  --rules, --disable, --enable, --config, --no-config, --fail-on: as check's\n"
		"\n"
		"choosing:\n"
		"  --project NAME     the project to choose for (PEP 503 names: Flash_Attn is\n"
		"                     flash-attn) when the sources hold several; without it a\n"
		"                     source with several projects is a usage error naming them\n"
		"  --version V        only the candidates whose version is == V (PEP 440: 1.0 is\n"
		"                     1.0.0 and every 1.0+LABEL; 1.0+cu12 only that label)\n"
		"  A candidate works when its tags are among the target's (python 3.X from --target\n"
		"  python=, else --env's, else the python3 on PATH; this system's platform tags) and\n"
		"  no finding at or above --fail-on (error) remains. Among those that work: the\n"
		"  most specific tags first (pip's order: the target's supported tag list, first is\n"
		"  best), then the newest version (PEP 440; the local label does not count), then the\n"
		"  smallest file, then the file name.\n"
		"\n"
		"output:\n"
		"  --format F         text (default: the chosen wheel alone on stdout, the table on\n"
		"                     stderr) or json (one wheelgate.select/1 document on stdout,\n"
		"                     docs/select.md)\n"
		"  -q, --quiet        no table on stderr (text); the reasons of a failure still are\n"
		"\n"
		"facts kept by content (docs/facts-store.md):\n"
		"  --facts-dir DIR    the store (default: $XDG_CACHE_HOME/wheelgate/facts, else\n"
		"                     ~/.cache/wheelgate/facts): each candidate's facts kept under\n"
		"                     its sha256, so that a second run reads no wheel again (one\n"
		"                     whose source gives its sha256, a lock's or a URL's\n"
		"                     #sha256=, is not even fetched)\n"
		"  --no-store         neither read nor write the store\n"
		"  --allow-unhashed   read URL candidates whose source gives no sha256 (default:\n"
		"                     only a lock's unhashed wheels are refused)\n"
		"  -j, --jobs N       candidates judged at once (default: one per CPU)\n"
		"\n"
		"exit status: 0 when a wheel is chosen, 1 when none would work (stderr lists the\n"
		"closest: fewest blocking findings, and what each lacks), 2 on usage errors and\n"
		"sources that cannot be read.\n");
}

enum { O_ENV = PO_END, O_PROJECT, O_VERSION, O_FORMAT, O_FACTS, O_NOSTORE, O_UNHASHED, O_HELP };


static int parse_args(select_args *a, int argc, char **argv)
{
	static const struct option longopts[] = {
		PIPELINE_OPTIONS,
		{"env", required_argument, NULL, O_ENV},
		{"project", required_argument, NULL, O_PROJECT},
		{"version", required_argument, NULL, O_VERSION},
		{"format", required_argument, NULL, O_FORMAT},
		{"facts-dir", required_argument, NULL, O_FACTS},
		{"no-store", no_argument, NULL, O_NOSTORE},
		{"allow-unhashed", no_argument, NULL, O_UNHASHED},
		{"jobs", required_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0}};
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+j:qh", longopts, NULL)) != -1) {
		int rc = pipeline_option(&a->p, c, optarg);
		if (rc == 0)
			continue;
		if (rc == EXIT_USAGE)
			return EXIT_USAGE;
		switch (c) {
		case O_ENV: a->env_path = optarg; break;
		case O_PROJECT: a->project = optarg; break;
		case O_VERSION: a->version = optarg; break;
		case O_FORMAT: a->format = optarg; break;
		case O_FACTS: a->facts_dir = optarg; break;
		case O_NOSTORE: a->no_store = true; break;
		case O_UNHASHED: a->allow_unhashed = true; break;
		case 'q': a->p.quiet = true; break;
		case 'j':
			if (parse_jobs("select", optarg, &a->jobs) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
		case O_HELP: help(stdout); return 0;
		default:
			option_error("wheelgate select", argv, optind, "+j:qh", longopts);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		pipeline_fail(&a->p, "no SOURCE given (a directory of wheels, a list of paths or "
			      "URLs, a pylock.toml or a wheel's URL)\n");
		fprintf(stderr, "Try 'wheelgate select --help'.\n");
		return EXIT_USAGE;
	}
	if (a->format && strcmp(a->format, "text") && strcmp(a->format, "json")) {
		pipeline_fail(&a->p, "--format takes text or json, not '%s'\n", esc(a->format));
		return EXIT_USAGE;
	}
	if (a->version && select_version_matches("0", a->version) < 0) {
		pipeline_fail(&a->p, "--version: '%s' is not a PEP 440 version\n", esc(a->version));
		return EXIT_USAGE;
	}
	if (a->no_store && a->facts_dir) {
		pipeline_fail(&a->p, "--no-store and --facts-dir exclude each other\n");
		return EXIT_USAGE;
	}
	return -1;
}

/* The default store: $XDG_CACHE_HOME/wheelgate/facts, else ~/.cache/wheelgate/facts; "" when
 * neither is known. */
static void default_store(char *buf, size_t n)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (x && *x == '/')
		snprintf(buf, n, "%s/wheelgate/facts", x);
	else if (h && *h == '/')
		snprintf(buf, n, "%s/.cache/wheelgate/facts", h);
	else
		buf[0] = '\0';
}

/* ---- judging: on the context's threads ---- */

typedef struct {
	select_args *a;
	candidates *cs;
	size_t *todo; /* indexes of the candidates judged */
	size_t ntodo, done;
	wg_scanner **scs;
	unsigned nscs;
	const wg_target *t;
	wg_env *env;
	wg_scanner *env_sc;
	pthread_mutex_t env_lock, lock;
	const char *store; /* or NULL */
	bool tty;
} judge_state;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static wg_scanner *slot_scanner(judge_state *s, unsigned slot)
{
	if (slot >= s->nscs)
		slot = 0;
	if (!s->scs[slot] && wg_scanner_new(&s->scs[slot], s->a->p.ctx) < 0)
		return NULL;
	return s->scs[slot];
}

/* The facts the store holds for hex, when they are of this wheelgate and this file name. */
static wg_scan *stored(judge_state *s, wg_scanner *sc, const char *hex, const char *filename)
{
	char file[PATH_MAX];
	struct stat st;
	wg_scan *scan = NULL;
	if (!s->store || wg_facts_path(file, sizeof(file), s->store, hex) != WG_OK ||
	    stat(file, &st) != 0 || !S_ISREG(st.st_mode) || wg_facts_load(&scan, sc, file) < 0)
		return NULL;
	/* the file name is a fact too (its tags, name and version); facts depend on the reader */
	if (strcmp(cli_base_name(wg_scan_get_path(scan)), filename) ||
	    strcmp(wg_scan_stored_by(scan), wg_version_string())) {
		wg_scan_free(scan);
		return NULL;
	}
	return scan;
}

/* "WHERE: WHY" as the candidate's error. */
static void set_error(candidate *c, const char *where, const char *why)
{
	size_t n = strlen(where) + strlen(why) + 3;
	if ((c->error = malloc(n)))
		snprintf(c->error, n, "%s: %s", where, why);
}

/* The facts of one candidate: from the store by the sha256 its source gives (nothing read or
 * fetched), else its bytes opened (fetched), verified, hashed, then from the store by that
 * hash, else read and stored. */
static wg_scan *facts(judge_state *s, wg_scanner *sc, candidate *c)
{
	wg_scan *scan = NULL;
	if (c->sha256 && (scan = stored(s, sc, c->sha256, c->filename))) {
		snprintf(c->hex, sizeof(c->hex), "%s", c->sha256);
		c->from_store = true;
		/* the size ranks: the stored facts keep it (a source's own size must agree) */
		int64_t size = wg_scan_file_size(scan);
		if (size >= 0 && c->size >= 0 && size != c->size) {
			char why[160];
			snprintf(why, sizeof(why), "the source says %lld bytes, its sha256's stored "
				 "facts %lld", c->size, (long long)size);
			set_error(c, c->where, why);
			wg_scan_free(scan);
			return NULL;
		}
		if (size >= 0)
			c->size = size;
		return scan;
	}
	if (c->url && !c->sha256 && !s->a->allow_unhashed && !strncasecmp(c->url, "http", 4)) {
		set_error(c, c->where, "its source gives no sha256: not fetched (--allow-unhashed "
			  "reads it unverified)");
		return NULL;
	}
	int fd = -1;
	char err[1536];
	if (lock_open(&fd, c->path, c->url, c->sha256, c->size, DEFAULT_MAX, true, err,
		      sizeof(err)) < 0) {
		set_error(c, c->where, err);
		return NULL;
	}
	uint64_t size = 0;
	if (sha256_fd(fd, c->hex, &size) < 0) {
		set_error(c, c->where, "cannot be read to hash it");
		close(fd);
		return NULL;
	}
	c->size = (long long)size;
	if ((scan = stored(s, sc, c->hex, c->filename))) {
		c->from_store = true;
		close(fd);
		return scan;
	}
	if (wg_scan_fd(&scan, sc, fd, c->filename) < 0) {
		set_error(c, c->where, wg_scanner_error(sc));
		close(fd);
		return NULL;
	}
	close(fd);
	if (s->store && wg_facts_store(s->store, c->hex, scan) < 0) {
		char *e = NULL;
		wg_escape(&e, wg_error_last(), WG_ESCAPE_CONTROL);
		fprintf(stderr, SELECT_PROG ": warning: facts not stored: %s\n", e ? e : "?");
		wg_free(e);
	}
	return scan;
}

static void judge_job(void *arg, size_t j, unsigned slot)
{
	judge_state *s = arg;
	candidate *c = &s->cs->c[s->todo[j]];
	double t0 = now();
	wg_scanner *sc = slot_scanner(s, slot);
	if (!sc) {
		c->error = strdup("out of memory");
		return;
	}
	if (s->tty) {
		char *e = NULL, line[512];
		wg_escape(&e, c->filename, WG_ESCAPE_CONTROL);
		pthread_mutex_lock(&s->lock);
		snprintf(line, sizeof(line), "judging %zu/%zu %s", ++s->done, s->ntodo, e ? e : "");
		pthread_mutex_unlock(&s->lock);
		wg_free(e);
		progress_line(line);
	}
	/* A remote wheel whose tags the target cannot install: its name says so, and no byte of
	 * it is fetched (of a release's ~200 variants most are for other Pythons). */
	if (c->rank < 0 && c->url && strncasecmp(c->url, "file:", 5) != 0) {
		c->not_fetched = true;
		if (c->sha256) /* as the source gives it (verified only when fetched) */
			snprintf(c->hex, sizeof(c->hex), "%s", c->sha256);
		c->seconds = now() - t0;
		return;
	}
	wg_scan *scan = facts(s, sc, c);
	char err[1024];
	if (scan && pipeline_judge(&c->rep, sc, s->a->p.rs, scan, s->t, s->env, s->env_sc, true,
				   s->env ? &s->env_lock : NULL, err, sizeof(err)) < 0)
		set_error(c, c->where, err);
	wg_scan_free(scan);
	c->seconds = now() - t0;
}

/* ---- reasons: one line per blocking finding's rule, from the finding ---- */

static const struct {
	const char *rule, *what;
} reason_names[] = {
	{"WG-ABI-001", "wrong C++ ABI"},
	{"WG-ABI-002", "mixes both C++ ABIs"},
	{"WG-LD-001", "symbol missing"},
	{"WG-LD-006", "breaks what is installed"},
	{"WG-GPU-001", "extension modules for different GPUs"},
	{"WG-GPU-002", "no kernel image for the target GPU"},
	{"WG-GPU-003", "PTX newer than the driver"},
	{"WG-GPU-004", "no GPU code"},
	{"WG-CUDA-001", "CUDA major"},
	{"WG-SYS-001", "C/C++ runtime (glibc) too old"},
	{"WG-TAG-003", "extension built for another Python"},
	{"WG-TAG-004", "built for another machine"},
	{"WG-TAG-007", "Python tag"},
	{"WG-HOL-001", "a module it imports is missing"},
};

/* A finding's message made one line of at most max bytes: parenthesized spans longer than 40
 * (demangled signatures) left out, cut at a space with "..." past max. */
void select_compact(char *out, size_t n, const char *msg, size_t max)
{
	size_t o = 0;
	for (const char *p = msg; *p && o + 1 < n; p++) {
		if (*p == '(') {
			int depth = 0;
			const char *q = p;
			for (; *q; q++) {
				depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
				if (!depth)
					break;
			}
			if (*q && q - p > 40) {
				p = q;
				if (o && out[o - 1] == ' ' && strchr(" ,.:;", p[1]))
					o--;
				continue;
			}
		}
		out[o++] = *p;
	}
	out[o] = '\0';
	if (o > max) {
		size_t c = max;
		while (c > max / 2 && out[c] != ' ')
			c--;
		snprintf(out + c, n - c, "...");
	}
}

static int add_reason(candidate *c, const char *line)
{
	if (c->nreasons == MAX_REASONS)
		return 0;
	char **r = realloc(c->reasons, (c->nreasons + 1) * sizeof(*r));
	if (!r)
		return -1;
	c->reasons = r;
	if (!(r[c->nreasons] = strdup(line)))
		return -1;
	c->nreasons++;
	return 0;
}

/* The verdict of a judged candidate, its reasons, its counts. */
static int verdict(candidate *c, wg_severity fail_on, const char *tagdesc)
{
	char line[640];
	if (c->rank < 0) {
		const char *f = c->filename;
		size_t l = strlen(f);
		/* the last three dash-separated fields before ".whl" */
		const char *end = l > 4 ? f + l - 4 : f + l, *p = end;
		for (int d = 0; p > f && d < 3; p--)
			if (p[-1] == '-' && ++d == 3)
				break;
		snprintf(line, sizeof(line), "Python tag/platform tag: %.*s is not supported by %s%s",
			 (int)(end - p), p, tagdesc,
			 c->not_fetched ? " (not fetched: its tags rule it out)" : "");
		if (add_reason(c, line) < 0)
			return -1;
	}
	if (c->not_fetched) {
		c->works = false;
		return 0;
	}
	if (c->error) {
		c->works = false;
		return 0;
	}
	size_t n = wg_report_count(c->rep);
	for (size_t i = 0; i < n; i++) {
		wg_finding_info fi = WG_FINDING_INFO_INIT;
		if (wg_report_finding(&fi, c->rep, i) < 0)
			continue;
		if (fi.severity < fail_on) {
			c->warnings++;
			continue;
		}
		c->errors++;
		bool seen = false; /* one reason per rule */
		for (size_t j = 0; j < i && !seen; j++) {
			wg_finding_info fj = WG_FINDING_INFO_INIT;
			seen = wg_report_finding(&fj, c->rep, j) == 0 && fj.severity >= fail_on &&
			       !strcmp(fj.rule, fi.rule);
		}
		if (seen)
			continue;
		const char *what = fi.title, *msg = fi.message ? fi.message : "";
		for (size_t k = 0; k < sizeof(reason_names) / sizeof(reason_names[0]); k++)
			if (!strcmp(reason_names[k].rule, fi.rule))
				what = reason_names[k].what;
		char what_buf[96];
		const char *sm = strstr(msg, " (sm_");
		if (!strcmp(fi.rule, "WG-GPU-002") && sm) {
			/* "no kernel image for sm_90" */
			snprintf(what_buf, sizeof(what_buf), "no kernel image for %.*s",
				 (int)strcspn(sm + 2, ")"), sm + 2);
			what = what_buf;
		} else if (!strcmp(fi.rule, "WG-LD-001") &&
			   (strstr(msg, "expected from libc10") || strstr(msg, "expected from libtorch"))) {
			what = "torch symbol missing";
		}
		char detail[512];
		select_compact(detail, sizeof(detail), msg, 220);
		snprintf(line, sizeof(line), "%s (%s): %s", what, fi.rule, detail);
		if (add_reason(c, line) < 0)
			return -1;
	}
	c->works = c->rank >= 0 && wg_report_verdict(c->rep, fail_on) == WG_VERDICT_PASS;
	return 0;
}

/* Working ones first, best first: tags, version, size, name. */
static int by_rank(const void *x, const void *y)
{
	const candidate *a = *(candidate *const *)x, *b = *(candidate *const *)y;
	if (a->works != b->works)
		return a->works ? -1 : 1;
	if (!a->works) {
		/* the closest first: fewest blocking findings, tags that fit, read */
		size_t ea = a->errors + (a->rank < 0) + (a->error != NULL) * 1000;
		size_t eb = b->errors + (b->rank < 0) + (b->error != NULL) * 1000;
		if (ea != eb)
			return ea < eb ? -1 : 1;
		return strcmp(a->filename, b->filename);
	}
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	int v = select_version_compare(b->version ? b->version : "", a->version ? a->version : "");
	if (v)
		return v;
	/* an unknown size (-1) ranks last */
	unsigned long long sa = (unsigned long long)a->size, sb = (unsigned long long)b->size;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	int f = strcmp(a->filename, b->filename);
	return f ? f : strcmp(a->where, b->where);
}

/* The project chosen for: --project, else the one every candidate is of. -1 (printed). */
static int pick_project(select_args *a, candidates *cs, char *out, size_t n)
{
	if (a->project) {
		if (wg_name_normalize(out, n, a->project, strlen(a->project)) < 0) {
			pipeline_fail(&a->p, "--project: '%s' is not a project name\n", esc(a->project));
			return -1;
		}
		size_t have = 0;
		for (size_t i = 0; i < cs->n; i++)
			have += !strcmp(cs->c[i].project, out);
		if (!have) {
			pipeline_fail(&a->p, "--project %s: no candidate of it in the sources\n",
				      esc(out));
			return -1;
		}
		return 0;
	}
	out[0] = '\0';
	bool several = false;
	for (size_t i = 0; i < cs->n; i++) {
		if (!cs->c[i].project[0])
			continue;
		if (!out[0])
			snprintf(out, n, "%s", cs->c[i].project);
		else if (strcmp(out, cs->c[i].project))
			several = true;
	}
	if (!out[0]) {
		pipeline_fail(&a->p, "no candidate has a wheel file name (NAME-VERSION-TAGS.whl)\n");
		return -1;
	}
	if (several) {
		pipeline_fail(&a->p, "the sources hold several projects; choose one with "
			      "--project NAME:");
		for (size_t i = 0; i < cs->n; i++) {
			bool dup = !cs->c[i].project[0];
			for (size_t j = 0; j < i && !dup; j++)
				dup = !strcmp(cs->c[j].project, cs->c[i].project);
			if (!dup)
				fprintf(stderr, " %s", esc(cs->c[i].project));
		}
		fprintf(stderr, "\n");
		return -1;
	}
	return 0;
}

int cmd_select(int argc, char **argv)
{
	select_args a;
	memset(&a, 0, sizeof(a));
	a.p.prog = SELECT_PROG;
	char envbuf[PATH_MAX];
	candidates cs = {0};
	candidate **order = NULL;
	wg_scanner *sc = NULL, *env_sc = NULL;
	wg_env *env = NULL;
	wg_target *t = NULL;
	judge_state js;
	memset(&js, 0, sizeof(js));
	int status = parse_args(&a, argc, argv);
	if (status < 0 && a.env_path &&
	    (status = pipeline_env_resolve(&a.p, a.env_path, envbuf, sizeof(envbuf), a.env_why,
					   sizeof(a.env_why), "--env:")) < 0)
		a.env_path = envbuf;
	if (status < 0)
		status = pipeline_configure(&a.p, false);
	if (status < 0 && a.p.profile != WG_PROFILE_AUTO && a.p.profile != WG_PROFILE_INSTALL) {
		pipeline_fail(&a.p, "select asks 'will it work here?': --profile install only\n");
		status = EXIT_USAGE;
	}
	if (status >= 0)
		goto out;
	double t0 = now();
	wg_options opts = WG_OPTIONS_INIT;
	opts.jobs = a.jobs;
	if ((status = pipeline_rules(&a.p, &opts)) >= 0)
		goto out;
	if (wg_scanner_new(&sc, a.p.ctx) < 0) {
		pipeline_fail(&a.p, "%s\n", esc(wg_error_last()));
		status = EXIT_USAGE;
		goto out;
	}
	if (a.env_path &&
	    (status = pipeline_env_open(&a.p, &env, &env_sc, a.env_path, a.env_why, "--env")) >= 0)
		goto out;
	pipeline_target_spec ts = {NULL, WG_PROFILE_INSTALL, env, NULL, NULL, 0};
	if ((status = pipeline_target(&a.p, &t, &ts)) >= 0)
		goto out;
	/* the python the tags are for: --target python= over --env's, else the python3 on PATH */
	int minor = -1;
	wg_target_info ti = WG_TARGET_INFO_INIT;
	if (wg_target_get_info(&ti, t) == 0 && ti.python_major == 3)
		minor = (int)ti.python_minor;
	if (minor < 0) {
		char buf[64];
		const char *from = NULL, *py = pipeline_target_python(&a.p, env, buf, sizeof(buf), &from);
		if (!py || sscanf(py, "3.%d", &minor) != 1)
			minor = -1;
	}
	if (minor < 0) {
		pipeline_fail(&a.p, "which python the wheels are for is not known: give --env or "
			      "--target python=3.X\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (ti.python_major != 3) {
		/* the python3 on PATH: the tag rules judge for the python the tags are ranked for */
		char py[32];
		snprintf(py, sizeof(py), "python=3.%d", minor);
		if (wg_target_parse(t, py) < 0) {
			pipeline_fail(&a.p, "%s\n", esc(wg_error_last()));
			status = EXIT_USAGE;
			goto out;
		}
		wg_target_get_info(&ti, t);
	}
	for (int i = optind; i < argc; i++)
		if (select_source(&cs, argv[i], a.p.quiet) < 0) {
			status = EXIT_USAGE;
			goto out;
		}
	char project[256];
	if (pick_project(&a, &cs, project, sizeof(project)) < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	char tagdesc[160] = "";
	js.todo = calloc(cs.n ? cs.n : 1, sizeof(*js.todo));
	order = calloc(cs.n ? cs.n : 1, sizeof(*order));
	if (!js.todo || !order) {
		pipeline_fail(&a.p, "out of memory\n");
		status = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < cs.n; i++) {
		candidate *c = &cs.c[i];
		if (strcmp(c->project, project) ||
		    (a.version && select_version_matches(c->version, a.version) != 1))
			continue;
		c->rank = lock_tag_rank(minor, c->filename, tagdesc, sizeof(tagdesc));
		js.todo[js.ntodo++] = i;
	}
	if (a.version && js.ntodo == 0) {
		pipeline_fail(&a.p, "--version %s: no candidate of %s has that version; the "
			      "sources have:", esc(a.version), esc(project));
		size_t said = 0;
		for (size_t i = 0; i < cs.n && said < 20; i++) {
			bool dup = strcmp(cs.c[i].project, project) != 0 || !cs.c[i].version;
			for (size_t j = 0; j < i && !dup; j++)
				dup = !strcmp(cs.c[j].project, project) && cs.c[j].version &&
				      !strcmp(cs.c[j].version, cs.c[i].version);
			if (!dup) {
				fprintf(stderr, " %s", esc(cs.c[i].version));
				said++;
			}
		}
		fprintf(stderr, "\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (!a.no_store) {
		if (!a.facts_dir)
			default_store(a.store, sizeof(a.store));
		else
			snprintf(a.store, sizeof(a.store), "%s", a.facts_dir);
	}
	js.a = &a;
	js.cs = &cs;
	js.t = t;
	js.env = env;
	js.env_sc = env_sc;
	js.store = a.store[0] ? a.store : NULL;
	js.tty = isatty(STDERR_FILENO);
	js.nscs = wg_context_slots(a.p.ctx);
	pthread_mutex_init(&js.env_lock, NULL);
	pthread_mutex_init(&js.lock, NULL);
	if (!(js.scs = calloc(js.nscs ? js.nscs : 1, sizeof(*js.scs)))) {
		pipeline_fail(&a.p, "out of memory\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (js.nscs == 0)
		js.nscs = 1;
	js.scs[0] = sc;
	wg_context_run(a.p.ctx, js.ntodo, judge_job, &js);
	progress_clear();
	size_t n = 0, nstore = 0, nread = 0, nskip = 0;
	for (size_t j = 0; j < js.ntodo; j++) {
		candidate *c = &cs.c[js.todo[j]];
		if (!c->error && !c->rep && !c->not_fetched)
			c->error = strdup("out of memory");
		if (verdict(c, a.p.fail_on, tagdesc) < 0) {
			pipeline_fail(&a.p, "out of memory\n");
			status = EXIT_USAGE;
			goto out;
		}
		nstore += c->from_store;
		nread += !c->from_store && !c->error && !c->not_fetched;
		nskip += c->not_fetched;
		order[n++] = c;
	}
	qsort(order, n, sizeof(*order), by_rank);
	const candidate *chosen = n && order[0]->works ? order[0] : NULL;
	size_t nworks = 0;
	for (size_t i = 0; i < n; i++)
		nworks += order[i]->works;
	status = chosen ? EXIT_CLEAN : EXIT_FINDINGS;
	char torchdesc[256] = "";
	if (ti.torch || ti.cxx11abi >= 0 || ti.cuda_major)
		snprintf(torchdesc, sizeof(torchdesc), ", torch %s (C++ ABI %s, CUDA %u.%u)",
			 ti.torch ? ti.torch : "unknown",
			 ti.cxx11abi == 1 ? "new" : ti.cxx11abi == 0 ? "old" : "unknown",
			 ti.cuda_major, ti.cuda_minor);
	if (a.format && !strcmp(a.format, "json")) {
		select_print_json(stdout, &a, order, n, chosen, project, tagdesc, minor, t, a.env_path,
			   nstore, nread, now() - t0, status);
	} else {
		/* as given (pip needs the exact path); escaped only where it reaches a terminal */
		if (chosen)
			printf("%s\n", isatty(STDOUT_FILENO) ? esc(chosen->where) : chosen->where);
		if (!a.p.quiet || !chosen) {
			fprintf(stderr, SELECT_PROG ": %s: %zu candidate%s for %s%s", esc(project), n,
				n == 1 ? "" : "s", tagdesc, esc(torchdesc));
			for (size_t i = 0; i < a.p.cfg.ngpus; i++)
				fprintf(stderr, "%s%s", i ? ", " : ", GPU ", esc(a.p.cfg.gpus[i]));
			fprintf(stderr, "; %zu work; facts of %zu from the store, %zu read", nworks,
				nstore, nread);
			if (nskip)
				fprintf(stderr, ", %zu not fetched (their tags rule them out)", nskip);
			fprintf(stderr, " (%.2f s)\n", now() - t0);
			not_applied na[64];
			size_t nna = select_not_applied(na, sizeof(na) / sizeof(na[0]), order, n);
			/* the rules one reason leaves out together, each reason once */
			bool said[64] = {false};
			for (size_t i = 0; i < nna; i++) {
				if (said[i])
					continue;
				fprintf(stderr, "%s%s", i ? "; " : SELECT_PROG ": not judged, for lack "
					"of a fact: ", esc(na[i].rule));
				for (size_t j = i + 1; j < nna; j++)
					if (!said[j] && !strcmp(na[j].message, na[i].message)) {
						said[j] = true;
						fprintf(stderr, ", %s", esc(na[j].rule));
					}
				fprintf(stderr, " (%s)", esc(na[i].message));
			}
			if (nna)
				fputc('\n', stderr);
		}
		if (chosen && !a.p.quiet) {
			select_print_table((const candidate *const *)order, n, chosen, n);
		} else if (!chosen) {
			fprintf(stderr, SELECT_PROG ": no candidate would work here; the closest, and "
				"what each lacks:\n");
			select_print_table((const candidate *const *)order, n, chosen, 3);
		}
	}
out:
	if (js.scs) {
		for (unsigned i = 1; i < js.nscs; i++)
			wg_scanner_free(js.scs[i]);
		free(js.scs);
		pthread_mutex_destroy(&js.env_lock);
		pthread_mutex_destroy(&js.lock);
	}
	free(js.todo);
	free(order);
	candidates_free(&cs);
	wg_target_free(t);
	wg_env_free(env);
	wg_scanner_free(env_sc);
	wg_scanner_free(sc);
	pipeline_free(&a.p);
	return status;
}

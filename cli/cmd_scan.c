/*
 * `wheelgate scan`: many inputs (paths, directories, a list of paths) judged with check's
 * rules, one JSON Lines record ("wheelgate.scan/1", docs/scan.md) per input written as each
 * input is done. `--shard I/N` splits a list stably by file name; `--resume OUT.jsonl` skips
 * the inputs whose sha256 the file already holds and appends the rest.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "suppress.h"

static const char prog[] = "wheelgate scan";

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

/* ---- inputs ---- */

typedef struct {
	char **v;
	size_t n, cap;
} strlist;

static int strlist_add(strlist *l, const char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **p = realloc(l->v, cap * sizeof(*p));
		if (!p)
			return -1;
		l->v = p;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(s)))
		return -1;
	l->n++;
	return 0;
}

static void strlist_free(strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* nftw has no payload: the list being filled. */
static strlist *walk_out;
static int walk_oom;
static const char *walk_suffix = ".whl"; /* ".json.zst" with --from-facts */
static const char *keys_dir;              /* --from-facts: --facts-dir, for sha256 inputs */

/* A sha256 as the store and the records write it: 64 lower-case hex digits. */
static bool is_hex64(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (size_t i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_F && wg_has_suffix_cli(path, walk_suffix) && strlist_add(walk_out, path) < 0) {
		walk_oom = 1;
		return 1;
	}
	return 0;
}

/* A PATH: a directory gives every *.whl (with --from-facts: *.json.zst) below it (sorted),
 * anything else itself. */
static int add_path(strlist *l, const char *path)
{
	struct stat st;
	if (keys_dir && stat(path, &st) != 0 && is_hex64(path)) {
		/* --from-facts: the sha256 of an input whose facts --facts-dir holds */
		char file[4096];
		if (wg_facts_path(file, sizeof(file), keys_dir, path) < 0) {
			fail("%s\n", esc(wg_error_last()));
			return -2;
		}
		return strlist_add(l, file);
	}
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return strlist_add(l, path);
	size_t first = l->n;
	walk_out = l;
	walk_oom = 0;
	if (nftw(path, walk_one, 32, FTW_PHYS) != 0 && !walk_oom) {
		fail("%s: %s\n", esc(path), strerror(errno));
		return -2;
	}
	if (walk_oom)
		return -1;
	qsort(l->v + first, l->n - first, sizeof(*l->v), cmp_str);
	if (l->n == first)
		fprintf(stderr, "%s: %s: no %s (*%s) below it\n", prog, esc(path),
			strcmp(walk_suffix, ".whl") ? "stored facts" : "wheel", walk_suffix);
	return 0;
}

/* --from FILE ('-': stdin): one path a line. */
static int add_from(strlist *l, const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f) {
		fail("--from: %s: %s\n", esc(file), strerror(errno));
		return -2;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;
	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
				   line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = '\0';
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p && *p != '#')
			rc = add_path(l, p);
	}
	if (rc == 0 && ferror(f)) {
		fail("--from: %s: %s\n", esc(file), strerror(errno));
		rc = -2;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

/* The shard of an input: FNV-1a 64 of its file name (no directories), mod N. */
static uint64_t name_hash(const char *path)
{
	const char *b = cli_base_name(path);
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *b; b++) {
		h ^= (unsigned char)*b;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* ---- --resume: the sha256 already recorded ---- */

typedef struct {
	char (*v)[65];
	size_t n;
} shaset;

static int cmp_sha(const void *a, const void *b)
{
	return memcmp(a, b, 64);
}

static bool shaset_has(const shaset *s, const char *hex)
{
	return s->n && bsearch(hex, s->v, s->n, sizeof(*s->v), cmp_sha) != NULL;
}

/* Reads FILE's records: their sha256 into *set; a last line cut short (no newline, or not
 * JSON: a scan killed while writing it) is cut off the file. An absent FILE is empty. 0, or -1
 * (the message printed). */
static int resume_read(shaset *set, const char *file, size_t *records)
{
	*records = 0;
	int fd = open(file, O_RDWR);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0) {
		fail("--resume: %s: %s\n", esc(file), strerror(errno));
		return -1;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		fail("--resume: %s: %s\n", esc(file), strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0, lineno = 0, setcap = 0;
	ssize_t len;
	off_t good = 0; /* the end of the last whole record */
	int rc = 0;
	bool cut = false;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		bool whole = len > 0 && line[len - 1] == '\n';
		wg_scanrec *j = NULL;
		bool ok = wg_scanrec_parse(&j, line, (size_t)len) == WG_OK;
		wg_scanrec_info ri = WG_SCANREC_INFO_INIT;
		const char *sha = ok && wg_scanrec_get(&ri, j) == WG_OK ? ri.sha256 : NULL;
		if (!whole || !ok) {
			/* Only the last line may be broken: a killed scan's. */
			int c = getc(f);
			if (c != EOF || !len) {
				fail("--resume: %s:%zu: %s\n", esc(file), lineno,
				     ok ? "not a wheelgate.scan/1 record" : esc(wg_error_last()));
				wg_scanrec_free(j);
				rc = -1;
				break;
			}
			wg_scanrec_free(j);
			cut = true;
			break;
		}
		if (sha) {
			if (set->n == setcap) {
				size_t nc = setcap ? setcap * 2 : 256;
				char (*p)[65] = realloc(set->v, nc * sizeof(*p));
				if (!p) {
					wg_scanrec_free(j);
					fail("out of memory\n");
					rc = -1;
					break;
				}
				set->v = p;
				setcap = nc;
			}
			memcpy(set->v[set->n++], sha, 65);
		}
		wg_scanrec_free(j);
		(*records)++;
		good += len;
	}
	free(line);
	if (rc == 0 && cut) {
		if (ftruncate(fd, good) != 0) {
			fail("--resume: %s: %s\n", esc(file), strerror(errno));
			rc = -1;
		} else {
			fprintf(stderr, "%s: --resume: %s: its last line was cut short (a killed scan): "
				"dropped, that input is scanned again\n", prog, esc(file));
		}
	}
	fclose(f);
	if (set->n)
		qsort(set->v, set->n, sizeof(*set->v), cmp_sha);
	return rc;
}

/* ---- the scan ---- */

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
	/* options */
	cli_config cfg;
	const char *config, *output, *resume, *env_path, *facts_dir;
	bool no_config, quiet, from_facts, refresh_facts;
	uint32_t jobs;
	unsigned shard_i, shard_n;
	int profile;
	wg_severity fail_on;
	const char *sets[MAX_SETS]; /* --target-set specs */
	size_t nsets;
	/* state */
	wg_context *ctx;
	wg_ruleset *rs;
	scan_target tg[MAX_SETS];
	size_t ntg;
	scan_env envs[MAX_SETS + 1];
	size_t nenvs;
	wg_scanner **scs;
	unsigned nscs;
	suppress *sup;
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

static double now_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The file's sha256 (hex) and size; -1 with errno's message in err. */
static int file_sha256(const char *path, char hex[65], uint64_t *size, char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO among the inputs is refused below, never waited on */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char buf[1 << 16], dig[32];
	unsigned dl = 0;
	int rc = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) ? 0 : -1;
	uint64_t total = 0;
	ssize_t r;
	while (rc == 0 && (r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			rc = -1;
			break;
		}
		total += (uint64_t)r;
		if (!EVP_DigestUpdate(md, buf, (size_t)r))
			rc = -1;
	}
	if (rc == 0 && !EVP_DigestFinal_ex(md, dig, &dl))
		rc = -1;
	if (rc < 0 && !*err)
		snprintf(err, errlen, "%s: cannot compute its sha256", path);
	EVP_MD_CTX_free(md);
	close(fd);
	for (unsigned i = 0; rc == 0 && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", dig[i]);
	*size = total;
	return rc;
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
	if (!s->scs[slot] && wg_scanner_new(&s->scs[slot], s->ctx) < 0)
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
	return is_hex64(key);
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

/* Judges scan for target tg: the report, or -1 with the reason in err. */
static int judge(scanner_state *s, wg_scanner *sc, const scan_target *tg, const char *path,
		 const wg_scan *scan, wg_report **rep, char *err, size_t errlen)
{
	scan_env *e = tg->env;
	if (e)
		pthread_mutex_lock(&s->lock);
	/* as check: a wheel judged against an environment is an install of it alone */
	bool install = e && wg_scan_get_kind(scan) == WG_SCAN_WHEEL;
	const wg_scan *one = scan;
	if (install && wg_env_set_install(e->env, e->sc, &one, 1) < 0)
		snprintf(err, errlen, "%s", wg_scanner_error(e->sc));
	else if (wg_check(rep, sc, s->rs, scan, tg->target) < 0)
		snprintf(err, errlen, "%s", wg_scanner_error(sc));
	if (install)
		wg_env_set_install(e->env, e->sc, NULL, 0);
	if (*rep && !*err && s->sup) {
		size_t ig = 0, bl = 0;
		if (!e)
			pthread_mutex_lock(&s->lock);
		if (suppress_apply(s->sup, s->rs, path, *rep, &ig, &bl) < 0)
			snprintf(err, errlen, "out of memory");
		if (!e)
			pthread_mutex_unlock(&s->lock);
	}
	if (e)
		pthread_mutex_unlock(&s->lock);
	if (*err) {
		wg_report_free(*rep);
		*rep = NULL;
		return -1;
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
	} else if (!s->from_facts && file_sha256(path, hex, &size, err, sizeof(err)) != 0) {
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
	rec.fail_on = s->fail_on;
	rec.facts = from_store ? facts : NULL;
	rec.seconds = now_since(&t0);
	rec.error = error;
	char *line = NULL;
	if (wg_scan_record_format(&line, &rec) < 0)
		line = NULL;
	for (size_t t = 0; t < s->ntg; t++) {
		wg_report_free(reps[t]);
	}
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
	else if (worst >= (int)s->fail_on)
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
static int parse_args(scanner_state *s, cli_config *cli, strlist *from, int argc, char **argv)
{
	enum { O_TARGET = 256, O_GPU, O_RULES, O_DISABLE, O_ENABLE, O_CONFIG, O_NOCONFIG,
	       O_FAILON, O_ENV, O_PROFILE, O_FROM, O_RESUME, O_SHARD, O_BASELINE, O_FACTS_DIR,
	       O_FROM_FACTS, O_REFRESH_FACTS, O_TARGET_SET };
	static const struct option longopts[] = {
		{"target", required_argument, NULL, O_TARGET}, {"gpu", required_argument, NULL, O_GPU},
		{"rules", required_argument, NULL, O_RULES}, {"disable", required_argument, NULL, O_DISABLE},
		{"enable", required_argument, NULL, O_ENABLE}, {"config", required_argument, NULL, O_CONFIG},
		{"no-config", no_argument, NULL, O_NOCONFIG},
		{"fail-on", required_argument, NULL, O_FAILON}, {"env", required_argument, NULL, O_ENV},
		{"profile", required_argument, NULL, O_PROFILE},
		{"from", required_argument, NULL, O_FROM}, {"resume", required_argument, NULL, O_RESUME},
		{"shard", required_argument, NULL, O_SHARD},
		{"baseline", required_argument, NULL, O_BASELINE},
		{"facts-dir", required_argument, NULL, O_FACTS_DIR},
		{"from-facts", no_argument, NULL, O_FROM_FACTS},
		{"refresh-facts", no_argument, NULL, O_REFRESH_FACTS},
		{"target-set", required_argument, NULL, O_TARGET_SET},
		{"output", required_argument, NULL, 'o'}, {"jobs", required_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qhj:", longopts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case O_TARGET: bad = cfg_add(cli, "target", optarg); break;
		case O_GPU: bad = cfg_add_csv(cli, "gpu", optarg); break;
		case O_RULES: bad = cfg_add(cli, "rules", optarg); break;
		case O_DISABLE: bad = cfg_add_csv(cli, "disable", optarg); break;
		case O_ENABLE: bad = cfg_add_csv(cli, "enable", optarg); break;
		case O_CONFIG: s->config = optarg; break;
		case O_NOCONFIG: s->no_config = true; break;
		case O_FAILON: bad = cfg_add(cli, "fail-on", optarg); break;
		case O_PROFILE: bad = cfg_add(cli, "profile", optarg); break;
		case O_ENV: s->env_path = optarg; break;
		case O_BASELINE: bad = cfg_add(cli, "baseline", optarg); break;
		case O_FROM:
			if (strlist_add(from, optarg) < 0) {
				fail("out of memory\n");
				return EXIT_USAGE;
			}
			break;
		case O_RESUME: s->resume = optarg; break;
		case O_FACTS_DIR: s->facts_dir = optarg; break;
		case O_FROM_FACTS: s->from_facts = true; break;
		case O_REFRESH_FACTS: s->refresh_facts = true; break;
		case O_TARGET_SET:
			if (s->nsets == MAX_SETS) {
				fail("at most %d --target-set\n", MAX_SETS);
				return EXIT_USAGE;
			}
			s->sets[s->nsets++] = optarg;
			break;
		case O_SHARD: {
			unsigned i, n;
			char tail;
			if (sscanf(optarg, "%u/%u%c", &i, &n, &tail) != 2 || n == 0 || i >= n) {
				fail("--shard takes I/N with 0 <= I < N (e.g. 0/4), not '%s'\n",
				     esc(optarg));
				return EXIT_USAGE;
			}
			s->shard_i = i;
			s->shard_n = n;
			break;
		}
		case 'o': s->output = optarg; break;
		case 'q': s->quiet = true; break;
		case 'j':
			if (parse_jobs("scan", optarg, &s->jobs) < 0)
				return EXIT_USAGE;
			break;
		case 'h': help(stdout); return EXIT_CLEAN;
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
	if (s->refresh_facts && (!s->facts_dir || s->from_facts)) {
		fail("--refresh-facts reads the wheels and stores their facts in --facts-dir: %s\n",
		     s->from_facts ? "not with --from-facts" : "no --facts-dir given");
		return EXIT_USAGE;
	}
	if (s->output && s->resume && strcmp(s->output, s->resume)) {
		fail("--resume FILE appends to FILE: -o names another file ('%s')\n", esc(s->output));
		return EXIT_USAGE;
	}
	return -1;
}

/* The configuration file, then the command line on top (as check). */
static int configure(scanner_state *s, const cli_config *cli)
{
	char err[1024];
	int found = 0;
	cli_config *cfg = &s->cfg;
	if (!s->no_config) {
		int rc;
		if (s->config)
			rc = wg_has_suffix_cli(s->config, ".toml")
				     ? cfg_read_pyproject(cfg, s->config, &found, err, sizeof(err))
				     : cfg_read_yaml(cfg, s->config, &found, err, sizeof(err));
		else
			rc = cfg_find(cfg, &found, err, sizeof(err));
		if (rc == 0 && s->config && !found) {
			snprintf(err, sizeof(err), "%s: not found", s->config);
			rc = -1;
		}
		if (rc < 0) {
			fail("%s\n", esc(err));
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < cli->nrules; i++) cfg_add(cfg, "rules", cli->rules[i]);
	for (size_t i = 0; i < cli->ndisable; i++) cfg_add(cfg, "disable", cli->disable[i]);
	for (size_t i = 0; i < cli->nenable; i++) cfg_add(cfg, "enable", cli->enable[i]);
	for (size_t i = 0; i < cli->ngpus; i++) cfg_add(cfg, "gpu", cli->gpus[i]);
	for (size_t i = 0; i < cli->ntargets; i++) cfg_add(cfg, "target", cli->targets[i]);
	if (cli->fail_on) cfg_add(cfg, "fail-on", cli->fail_on);
	if (cli->profile) cfg_add(cfg, "profile", cli->profile);
	if (cli->baseline) cfg_add(cfg, "baseline", cli->baseline);
	s->profile = wg_profile_parse(cfg->profile ? cfg->profile : "auto");
	if (s->profile < 0) {
		fail("--profile takes install, publish or auto, not '%s'\n", esc(cfg->profile));
		return EXIT_USAGE;
	}
	int fo = cfg_severity(cfg->fail_on ? cfg->fail_on : "error");
	if (fo < 0) {
		fail("--fail-on takes error, warning or info, not '%s'\n", esc(cfg->fail_on));
		return EXIT_USAGE;
	}
	s->fail_on = (wg_severity)fo;
	return -1;
}

/* The environment at path, opened on first use and shared by the targets naming it. */
static scan_env *open_env(scanner_state *s, const char *path)
{
	for (size_t i = 0; i < s->nenvs; i++)
		if (!strcmp(s->envs[i].path, path))
			return &s->envs[i];
	scan_env *e = &s->envs[s->nenvs];
	wg_env_options eo = WG_ENV_OPTIONS_INIT;
	char where[PATH_MAX], note[1024], err[1024];
	int asked = env_resolve(path, where, sizeof(where), note, sizeof(note), err, sizeof(err));
	if (asked < 0) {
		fail("--env %s\n", err);
		return NULL;
	}
	if (asked == 0)
		err[0] = '\0';
	e->path = path;
	if (wg_scanner_new(&e->sc, s->ctx) < 0 || wg_env_open(&e->env, e->sc, where, &eo) < 0) {
		fail("--env %s: %s%s%s\n", esc(path), esc(e->sc ? wg_scanner_error(e->sc)
							      : wg_error_last()),
		     *err ? "; " : "", err);
		wg_scanner_free(e->sc);
		e->sc = NULL;
		return NULL;
	}
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
	int profile = s->profile;
	if (set) {
		const char *colon = strchr(set, ':');
		if (!colon || colon == set || (size_t)(colon - set) >= sizeof(tg->name)) {
			fail("--target-set takes NAME:KEY=VALUE[,KEY=VALUE...], not '%s'\n", esc(set));
			return EXIT_USAGE;
		}
		snprintf(tg->name, sizeof(tg->name), "%.*s", (int)(colon - set), set);
		for (size_t i = 0; i < s->ntg; i++)
			if (!strcmp(s->tg[i].name, tg->name)) {
				fail("--target-set: two sets are named '%s'\n", esc(tg->name));
				return EXIT_USAGE;
			}
		if (snprintf(spec, sizeof(spec), "%s", colon + 1) >= (int)sizeof(spec)) {
			fail("--target-set %s: too long\n", esc(tg->name));
			return EXIT_USAGE;
		}
		char *save = NULL;
		for (char *kv = strtok_r(spec, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');
			if (!eq || eq == kv || !eq[1]) {
				fail("--target-set %s: '%s' is not KEY=VALUE\n", esc(tg->name), esc(kv));
				return EXIT_USAGE;
			}
			*eq = '\0';
			const char *v = eq + 1;
			if (!strcmp(kv, "gpu")) {
				if (ngpus == CFG_MAX) {
					fail("--target-set %s: too many GPUs\n", esc(tg->name));
					return EXIT_USAGE;
				}
				gpus[ngpus++] = v;
			} else if (!strcmp(kv, "profile")) {
				if ((profile = wg_profile_parse(v)) < 0) {
					fail("--target-set %s: profile takes install, publish or auto, "
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
	if (wg_target_new(&tg->target) < 0 ||
	    wg_target_set(tg->target, "profile", wg_profile_name((wg_profile)profile)) < 0) {
		fail("%s\n", esc(wg_error_last()));
		return EXIT_USAGE;
	}
	tg->profile = profile;
	const char *what = set ? tg->name : NULL;
	if (env_path) {
		if (!(tg->env = open_env(s, env_path)))
			return EXIT_USAGE;
		wg_target_set_env(tg->target, tg->env->env);
	}
	for (size_t i = 0; i < s->cfg.ntargets; i++)
		if (wg_target_parse(tg->target, s->cfg.targets[i]) < 0) {
			fail("%s\n", esc(wg_error_last()));
			return EXIT_USAGE;
		}
	if (facts[0] && wg_target_parse(tg->target, facts) < 0) {
		fail("--target-set %s: %s\n", esc(what), esc(wg_error_last()));
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < s->cfg.ngpus + ngpus; i++) {
		const char *g = i < s->cfg.ngpus ? s->cfg.gpus[i] : gpus[i - s->cfg.ngpus];
		if (wg_target_add_gpu(tg->target, s->ctx, g) < 0) {
			if (what)
				fail("--target-set %s: gpu: %s\n", esc(what), esc(wg_error_last()));
			else
				fail("--gpu: %s\n", esc(wg_error_last()));
			return EXIT_USAGE;
		}
		/* As check says it: the records have no not_applied list to carry it. */
		bool set_gpu = what && i >= s->cfg.ngpus;
		if (!strcmp(g, "auto") && wg_target_notice(tg->target))
			fail("%s%s%s: %s: GPU rules do not apply\n", set_gpu ? "--target-set " : "",
			     set_gpu ? esc(what) : "", set_gpu ? ": gpu=auto" : "--gpu auto",
			     esc(wg_target_notice(tg->target)));
	}
	if (!set) {
		/* The target's name in the records: what defines it, else "default". */
		if (env_path)
			name_add(tg->name, sizeof(tg->name), "env", env_path);
		for (size_t i = 0; i < s->cfg.ntargets; i++)
			name_add(tg->name, sizeof(tg->name), NULL, s->cfg.targets[i]);
		for (size_t i = 0; i < s->cfg.ngpus; i++)
			name_add(tg->name, sizeof(tg->name), "gpu", s->cfg.gpus[i]);
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
	cli_config cli = {0};
	strlist from = {0}, all = {0};
	int status = parse_args(&s, &cli, &from, argc, argv);
	if (status < 0)
		status = configure(&s, &cli);
	cfg_free(&cli);
	if (status >= 0)
		goto done;
	status = EXIT_CLEAN;
	if (s.from_facts) {
		walk_suffix = ".json.zst";
		keys_dir = s.facts_dir;
	}
	/* the inputs: the PATHs, then each --from list; a directory gives its wheels */
	for (int i = optind; i < argc && status == EXIT_CLEAN; i++) {
		int rc = add_path(&all, argv[i]);
		if (rc < 0) {
			if (rc == -1)
				fail("out of memory\n");
			status = EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < from.n && status == EXIT_CLEAN; i++) {
		int rc = add_from(&all, from.v[i]);
		if (rc < 0) {
			if (rc == -1)
				fail("out of memory\n");
			status = EXIT_USAGE;
		}
	}
	if (status != EXIT_CLEAN)
		goto done;
	if (argc == optind && from.n == 0 && s.from_facts && s.facts_dir) {
		/* every input the store holds */
		int rc = add_path(&all, s.facts_dir);
		if (rc < 0) {
			if (rc == -1)
				fail("out of memory\n");
			status = EXIT_USAGE;
			goto done;
		}
	} else if (argc == optind && from.n == 0) {
		fail("no PATH and no --from list given\n");
		help(stderr);
		status = EXIT_USAGE;
		goto done;
	}
	size_t total = all.n, kept = 0;
	if (s.shard_n)
		for (size_t i = 0; i < all.n; i++) {
			if (name_hash(all.v[i]) % s.shard_n == s.shard_i)
				all.v[kept++] = all.v[i];
			else
				free(all.v[i]);
		}
	else
		kept = all.n;
	all.n = kept;
	size_t recorded = 0;
	if (s.resume && resume_read(&s.done, s.resume, &recorded) < 0) {
		status = EXIT_USAGE;
		goto done;
	}
	wg_options opts = WG_OPTIONS_INIT;
	opts.jobs = s.jobs;
	wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
	ro.rule_paths = (const char *const *)s.cfg.rules;
	ro.nrule_paths = s.cfg.nrules;
	ro.disable = (const char *const *)s.cfg.disable;
	ro.ndisable = s.cfg.ndisable;
	ro.enable = (const char *const *)s.cfg.enable;
	ro.nenable = s.cfg.nenable;
	if (wg_context_new(&s.ctx, &opts) < 0 || wg_ruleset_new(&s.rs, s.ctx, &ro) < 0) {
		fail("%s\n", esc(wg_error_last()));
		status = EXIT_USAGE;
		goto done;
	}
	if ((status = make_targets(&s)) >= 0)
		goto done;
	status = EXIT_CLEAN;
	/* the configuration's ignores and the baseline take findings out as check's do */
	if (s.cfg.nignores || s.cfg.baseline) {
		char serr[1024];
		if (!(s.sup = suppress_new(s.cfg.ignores, s.cfg.nignores, serr, sizeof(serr))) ||
		    suppress_check_rules(s.sup, s.rs, serr, sizeof(serr)) < 0 ||
		    (s.cfg.baseline && suppress_load_baseline(s.sup, s.cfg.baseline, serr,
							      sizeof(serr)) < 0)) {
			bool ign = !strncmp(serr, "ignore", 6) && s.cfg.source;
			fail("%s%s%s\n", ign ? esc(s.cfg.source) : "", ign ? ": " : "", esc(serr));
			status = EXIT_USAGE;
			goto done;
		}
	}
	const char *outpath = s.resume ? s.resume : s.output;
	s.out = stdout;
	if (outpath && !(s.out = fopen(outpath, s.resume ? "a" : "w"))) {
		fail("%s: %s\n", esc(outpath), strerror(errno));
		s.out = NULL;
		status = EXIT_USAGE;
		goto done;
	}
	s.inputs = all.v;
	s.n = all.n;
	s.nscs = wg_context_slots(s.ctx);
	if (!(s.scs = calloc(s.nscs ? s.nscs : 1, sizeof(*s.scs)))) {
		fail("out of memory\n");
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
	wg_context_run(s.ctx, s.n, scan_job, &s);
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
		fail("%s: cannot write the records: %s\n", outpath ? esc(outpath) : "stdout",
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
	suppress_free(s.sup);
	for (size_t i = 0; i < s.ntg; i++)
		wg_target_free(s.tg[i].target);
	for (size_t i = 0; i < s.nenvs; i++) {
		wg_env_free(s.envs[i].env);
		wg_scanner_free(s.envs[i].sc);
	}
	wg_ruleset_free(s.rs);
	wg_context_free(s.ctx);
	cfg_free(&s.cfg);
	free(s.done.v);
	strlist_free(&from);
	strlist_free(&all);
	return status;
}

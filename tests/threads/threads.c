/*
 * Threads (issue 12, point 5): the wheels of ../shared/corpus and the fixture wheels checked
 * on N threads (default 8) with ONE shared wg_context, ONE shared wg_ruleset and two shared
 * targets (install: the GPU machine of the corpus README; publish), a wg_scanner per thread
 * as the API says. Every thread does every input, each from another starting point, so one
 * input is read by several threads at once; each result (the inspect JSON, the check JSON of
 * both profiles and the check text) must equal the one of a single-threaded run first.
 * Built in every build (ctest: threads); under ThreadSanitizer (WG_TSAN=ON,
 * scripts/test.sh --tsan) a race report fails it (TSAN_OPTIONS=halt_on_error=1).
 *
 * Usage: wg_threads CORPUS_WHEELS_DIR FIXTURE_WHEELS_DIR [NTHREADS [MAX_FIXTURES]]
 * Exits 0, 1 on a difference or error, 77 when the corpus is absent (1 with CI=true).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wheelgate.h"

#define SKIPPED 77
#define MAX_INPUTS 256

/* The GPU machine of ../shared/corpus/README.md: torch 2.11.0+cu130, an H100 (sm_90). */
static const char INSTALL_SPEC[] =
	"python=3.12,torch=2.11.0+cu130,cxx11abi=1,cuda=13.0,glibc=2.39,glibcxx=3.4.33";

typedef struct {
	char *inspect, *check[2], *text;
} result;

static char *inputs[MAX_INPUTS];
static size_t ninputs;
static wg_context *ctx;
static wg_ruleset *rs;
static wg_target *targets[2]; /* install, publish */
static result *want;

typedef struct {
	size_t id, nthreads;
	size_t done, differ, failed;
	char first[512];
} worker;

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the *.whl of dir (sorted), at most max of them. */
static int add_wheels(const char *dir, size_t max)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	char *names[MAX_INPUTS];
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d)) && n < MAX_INPUTS;) {
		size_t len = strlen(e->d_name);
		if (len > 4 && !strcmp(e->d_name + len - 4, ".whl"))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		if (i < max && ninputs < MAX_INPUTS && names[i]) {
			size_t len = strlen(dir) + strlen(names[i]) + 2;
			char *p = malloc(len);
			if (p) {
				snprintf(p, len, "%s/%s", dir, names[i]);
				inputs[ninputs++] = p;
			}
		}
		free(names[i]);
	}
	return 0;
}

/* Everything the library says about one input, through this thread's scanner. */
static int run_one(wg_scanner *sc, const char *path, result *r, char *why, size_t whylen)
{
	wg_scan *scan = NULL;
	memset(r, 0, sizeof(*r));
	if (wg_scan_path(&scan, sc, path) < 0) {
		/* an input the library refuses: the refusal is the answer to compare */
		r->inspect = strdup(wg_scanner_error(sc));
		r->check[0] = strdup("");
		r->check[1] = strdup("");
		r->text = strdup("");
		if (r->inspect && r->check[0] && r->check[1] && r->text)
			return 0;
		snprintf(why, whylen, "%s: out of memory", path);
		return -1;
	}
	int rc = wg_scan_to_json(&r->inspect, scan, 0);
	for (int t = 0; t < 2 && rc == WG_OK; t++) {
		wg_report *rep = NULL;
		if ((rc = wg_check(&rep, sc, rs, scan, targets[t])) < 0) {
			snprintf(why, whylen, "%s: wg_check: %s", path, wg_scanner_error(sc));
			break;
		}
		const wg_report *reps[1] = {rep};
		const char *paths[1] = {path};
		rc = wg_reports_format(&r->check[t], WG_FORMAT_JSON, rs, targets[t], paths, reps, NULL,
				       1, WG_SEV_ERROR);
		if (rc == WG_OK && t == 0)
			rc = wg_reports_format(&r->text, WG_FORMAT_TEXT, rs, targets[t], paths, reps,
					       NULL, 1, WG_SEV_ERROR);
		wg_report_free(rep);
		if (rc < 0)
			snprintf(why, whylen, "%s: wg_reports_format: %s", path, wg_error_last());
	}
	wg_scan_free(scan);
	return rc < 0 ? -1 : 0;
}

static void result_free(result *r)
{
	wg_free(r->inspect);
	wg_free(r->check[0]);
	wg_free(r->check[1]);
	wg_free(r->text);
}

static const char *differs(const result *a, const result *b)
{
	return strcmp(a->inspect, b->inspect) ? "inspect JSON"
	       : strcmp(a->check[0], b->check[0]) ? "check JSON (install)"
	       : strcmp(a->check[1], b->check[1]) ? "check JSON (publish)"
	       : strcmp(a->text, b->text) ? "check text" : NULL;
}

static void *work(void *arg)
{
	worker *w = arg;
	wg_scanner *sc = NULL;
	if (wg_scanner_new(&sc, ctx) < 0) {
		w->failed++;
		snprintf(w->first, sizeof(w->first), "wg_scanner_new: %s", wg_error_last());
		return NULL;
	}
	/* Every input, from another starting point in each thread. */
	size_t start = w->id * ninputs / w->nthreads;
	for (size_t k = 0; k < ninputs; k++) {
		size_t i = (start + k) % ninputs;
		result r;
		char why[512];
		if (run_one(sc, inputs[i], &r, why, sizeof(why)) < 0) {
			if (!w->failed++)
				snprintf(w->first, sizeof(w->first), "%s", why);
		} else {
			const char *d = differs(&r, &want[i]);
			if (d && !w->differ++ && !w->failed)
				snprintf(w->first, sizeof(w->first), "%s: %s differs from the "
					 "single-threaded run", inputs[i], d);
		}
		w->done++;
		result_free(&r);
	}
	wg_scanner_free(sc);
	return NULL;
}

static int setup(void)
{
	if (wg_context_new(&ctx, NULL) < 0 || wg_ruleset_new(&rs, ctx, NULL) < 0 ||
	    wg_target_new(&targets[0]) < 0 || wg_target_new(&targets[1]) < 0 ||
	    wg_target_set(targets[0], "profile", "install") < 0 ||
	    wg_target_parse(targets[0], INSTALL_SPEC) < 0 ||
	    wg_target_add_gpu(targets[0], ctx, "sm_90") < 0 ||
	    wg_target_set(targets[1], "profile", "publish") < 0) {
		fprintf(stderr, "wg_threads: setup: %s\n", wg_error_last());
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: wg_threads CORPUS_WHEELS_DIR FIXTURE_WHEELS_DIR [NTHREADS "
				"[MAX_FIXTURES]]\n");
		return 2;
	}
	const char *ci = getenv("CI");
	bool in_ci = ci && (!strcmp(ci, "true") || !strcmp(ci, "1") || !strcmp(ci, "yes"));
	size_t nthreads = argc > 3 ? strtoul(argv[3], NULL, 10) : 8;
	size_t max_fixtures = argc > 4 ? strtoul(argv[4], NULL, 10) : MAX_INPUTS;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 8;
	if (add_wheels(argv[1], MAX_INPUTS) < 0) {
		fprintf(stderr, "wg_threads: %s: the corpus is not there%s\n", argv[1],
			in_ci ? " (CI=true: CI must have it)" : "; SKIPPED");
		return in_ci ? 1 : SKIPPED;
	}
	size_t ncorpus = ninputs;
	if (add_wheels(argv[2], max_fixtures) < 0 || ncorpus == 0 || ninputs == ncorpus) {
		fprintf(stderr, "wg_threads: no wheels in %s or %s\n", argv[1], argv[2]);
		return 1;
	}
	if (setup() < 0)
		return 1;
	/* The single-threaded answers, on the main thread's own scanner. */
	want = calloc(ninputs, sizeof(*want));
	wg_scanner *sc = NULL;
	if (!want || wg_scanner_new(&sc, ctx) < 0)
		return 1;
	for (size_t i = 0; i < ninputs; i++) {
		char why[512];
		if (run_one(sc, inputs[i], &want[i], why, sizeof(why)) < 0) {
			fprintf(stderr, "wg_threads: single-threaded: %s\n", why);
			return 1;
		}
	}
	wg_scanner_free(sc);

	pthread_t th[64];
	worker ws[64];
	for (size_t t = 0; t < nthreads; t++) {
		memset(&ws[t], 0, sizeof(ws[t]));
		ws[t].id = t;
		ws[t].nthreads = nthreads;
		if (pthread_create(&th[t], NULL, work, &ws[t]) != 0) {
			fprintf(stderr, "wg_threads: pthread_create failed\n");
			return 1;
		}
	}
	size_t done = 0, bad = 0;
	for (size_t t = 0; t < nthreads; t++) {
		pthread_join(th[t], NULL);
		done += ws[t].done;
		bad += ws[t].differ + ws[t].failed;
		if (ws[t].differ || ws[t].failed)
			fprintf(stderr, "wg_threads: thread %zu: %zu differ, %zu failed; first: %s\n",
				t, ws[t].differ, ws[t].failed, ws[t].first);
	}
	printf("wg_threads: %zu inputs (%zu corpus, %zu fixtures) x %zu threads, one context and "
	       "ruleset, install + publish: %zu results, %zu differ from the single-threaded run\n",
	       ninputs, ncorpus, ninputs - ncorpus, nthreads, done, bad);
	for (size_t i = 0; i < ninputs; i++) {
		result_free(&want[i]);
		free(inputs[i]);
	}
	free(want);
	wg_target_free(targets[0]);
	wg_target_free(targets[1]);
	wg_ruleset_free(rs);
	wg_context_free(ctx);
	return bad || done != ninputs * nthreads ? 1 : 0;
}

/*
 * check's inputs read and judged (check.h): paths (a directory adds the wheels below it),
 * stdin, stored facts or a lock's wheels, at once on the context's threads, largest first,
 * then told in the order given; --together reads them all, then judges them as one install.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "digest.h"

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

void results_free(results *rs)
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
		char hex[65], why[1024];
		const char *no = NULL; /* why the facts were not stored */
		/* --facts-dir: the facts of every file read, kept under its sha256 */
		if (rc == WG_OK && k->a->facts_dir && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			no = sha256_file(path, hex, NULL, why, sizeof(why)) < 0 ? why
			     : wg_facts_store(k->a->facts_dir, hex, *scan) < 0 ? wg_error_last() : NULL;
		if (no) {
			/* on a worker thread: esc()'s ring is not ours */
			char *e = NULL, *m = NULL;
			wg_escape(&e, path, WG_ESCAPE_CONTROL);
			wg_escape(&m, no, WG_ESCAPE_CONTROL);
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
	const check_command *mode = k->a->cmd;
	if (mode && mode->label &&
	    (o->label = mode->label(rc == WG_OK ? scan : NULL, o->path, mode->payload)))
		o->name = o->label;
	if (rc == WG_OK && mode && mode->note)
		o->note = mode->note(scan, mode->payload);
	size_t nw = rc == WG_OK ? wg_scan_wheel_count(scan) : 0;
	if (nw && (o->wheels = calloc(nw, sizeof(*o->wheels)))) {
		for (size_t i = 0; i < nw; i++)
			if ((o->wheels[o->nwheels] = strdup(wg_scan_wheel_path(scan, i))))
				o->nwheels++;
	}
	o->oom = nw && o->nwheels < nw;
	o->judged = rc < 0 || !nw || wg_scan_object_count(scan) || wg_scan_problem_count(scan);
	char err[1024] = "";
	/* audit's distributions are installed already: judged in place, not as an install */
	if (rc == WG_OK && o->judged &&
	    pipeline_judge(&o->rep, sc, k->rs, scan, k->target, k->env, k->env_sc, !mode,
			   k->has_env ? &k->env_lock : NULL, err, sizeof(err)) < 0) {
		rc = -1;
		o->msg = strdup(*err ? err : "cannot read stdin");
		o->oom = !o->msg;
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
		pipeline_fail(&k->a->p, "out of memory\n");
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
			pipeline_fail(&k->a->p, "out of memory\n");
			status = EXIT_USAGE;
		}
		if (o[i].judged) {
			/* An unreadable input is said once, in the report (text: its ERROR block;
			 * JSON, SARIF, GitHub: its error), and counted in the summary. */
			if (results_add(&k->res, o[i].name ? o[i].name : o[i].path,
					o[i].msg ? NULL : o[i].rep, o[i].msg) < 0) {
				status = EXIT_USAGE;
			} else {
				o[i].rep = NULL; /* the results own it */
				k->res.notes[k->res.n - 1] = o[i].note;
				o[i].note = NULL;
				if (suppress_last(k) < 0) {
					pipeline_fail(&k->a->p, "out of memory\n");
					status = EXIT_USAGE;
				}
				if (k->text)
					print_report(k->out, k->rs, &k->res, k->res.n - 1, k->a->p.fail_on,
						     k->a->p.quiet, k->color);
				print_suppressed(k);
				const char *note = k->res.notes[k->res.n - 1];
				if (note && k->text && k->out == stdout && !k->a->p.quiet)
					fprintf(k->out, "  note: %s\n", esc(note));
				else if (note && !k->a->p.quiet)
					fprintf(stderr, "%s: %s: note: %s\n", k->a->p.prog,
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
			pipeline_fail(&k->a->p, "--together: %s: the inputs of one install are wheel files (*.whl)\n",
			     esc(paths[i]));
			return EXIT_USAGE;
		}
	}
	together_batch b = {k, paths, calloc(n, sizeof(wg_scan *)), calloc(n, sizeof(char *))};
	int status = EXIT_CLEAN;
	if (!b.scans || !b.msgs) {
		pipeline_fail(&k->a->p, "out of memory\n");
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
		pipeline_fail(&k->a->p, "--together: %s\n", esc(wg_scanner_error(k->env_sc)));
		status = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		wg_report *rep = NULL;
		if (b.scans[i] && wg_check(&rep, k->sc, k->rs, b.scans[i], k->target) < 0)
			b.msgs[i] = strdup(wg_scanner_error(k->sc));
		if (results_add(&k->res, paths[i], b.msgs[i] ? NULL : rep, b.msgs[i]) < 0) {
			wg_report_free(rep);
			status = EXIT_USAGE;
			continue;
		}
		if (rep && b.msgs[i])
			wg_report_free(rep);
		if (suppress_last(k) < 0) {
			pipeline_fail(&k->a->p, "out of memory\n");
			status = EXIT_USAGE;
		}
		if (k->text)
			print_report(k->out, k->rs, &k->res, k->res.n - 1, k->a->p.fail_on, k->a->p.quiet,
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
int check_inputs(checker *k, char **inputs, size_t ninputs)
{
	k->tty = isatty(STDERR_FILENO);
	k->nscs = wg_context_slots(k->ctx);
	if (!(k->scs = calloc(k->nscs, sizeof(*k->scs)))) {
		pipeline_fail(&k->a->p, "out of memory\n");
		return EXIT_USAGE;
	}
	int status = k->a->together ? check_together(k, inputs, ninputs)
				    : check_batch(k, inputs, ninputs, k->lock);
	for (unsigned i = 1; i < k->nscs; i++)
		wg_scanner_free(k->scs[i]);
	free(k->scs);
	return status;
}

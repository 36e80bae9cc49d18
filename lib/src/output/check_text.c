/*
 * Reports as text: `wheelgate check`'s PASS/FAIL/ERROR per input with each finding's fix,
 * the summary line that closes it, and GitHub workflow commands (docs/ci.md).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/check_internal.h"

/* GitHub workflow commands: the message's %, CR and LF escaped, a property's also ':' and
 * ','; the text first made safe for a terminal (controls and invalid UTF-8 escaped). */
static void gh_put(wg_buf *b, const char *s, bool property)
{
	wg_buf safe = {0};
	wg_buf_escape(&safe, s ? s : "", WG_ESCAPE_UTF8 | WG_ESCAPE_CONTROL);
	for (const char *p = safe.s ? safe.s : ""; *p; p++) {
		const char *e = *p == '%' ? "%25" : *p == '\r' ? "%0D" : *p == '\n' ? "%0A"
			: property && *p == ':' ? "%3A" : property && *p == ',' ? "%2C" : NULL;
		wg_buf_append(b, e ? e : p, e ? 3 : 1);
	}
	wg_buf_free(&safe);
}

char *wg_cf_github(const wg_target *target, const char *const *paths,
		    const wg_report *const *reports, const char *const *errors, size_t n,
		    wg_severity fail_on)
{
	wg_buf b = {0};
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			wg_buf_append(&b, "::error file=", 13);
			gh_put(&b, paths[i], true);
			wg_buf_append(&b, ",title=", 7);
			gh_put(&b, "wheelgate: unreadable input", true);
			wg_buf_append(&b, "::", 2);
			gh_put(&b, errors && errors[i] ? errors[i] : "unreadable", false);
			wg_buf_append(&b, "\n", 1);
			continue;
		}
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			const char *cmd = f->severity == WG_SEV_ERROR ? "::error file="
					  : f->severity == WG_SEV_WARNING ? "::warning file=" : "::notice file=";
			char *file = wg_cf_disk_file(paths[i], f);
			wg_buf_append(&b, cmd, strlen(cmd));
			gh_put(&b, file ? file : paths[i], true);
			if (file) {
				char line[32];
				snprintf(line, sizeof(line), ",line=%u", f->line);
				wg_buf_append(&b, line, strlen(line));
			}
			wg_buf_append(&b, ",title=", 7);
			wg_buf t = {0};
			wg_buf_append(&t, f->rule, strlen(f->rule));
			wg_buf_append(&t, " ", 1);
			wg_buf_append(&t, f->title ? f->title : "", f->title ? strlen(f->title) : 0);
			gh_put(&b, t.s, true);
			wg_buf_free(&t);
			wg_buf_append(&b, "::", 2);
			char *text = wg_cf_result_text(f, file != NULL);
			gh_put(&b, text, false);
			free(text);
			free(file);
			wg_buf_append(&b, "\n", 1);
		}
		for (size_t k = 0; k < r->more.len; k++) {
			const wg_more *m = wg_vec_at(&r->more, k);
			char text[256];
			const char *cmd = m->severity[2] ? "::error file=" : m->severity[1]
					  ? "::warning file=" : "::notice file=";
			wg_buf_append(&b, cmd, strlen(cmd));
			gh_put(&b, paths[i], true);
			snprintf(text, sizeof(text), ",title=%s::and %zu more like this (%s: counted, not "
				 "listed)\n", m->rule, m->count, m->rule);
			wg_buf_append(&b, text, strlen(text));
		}
	}
	/* the summary as a notice: it shows on the run's summary page */
	char *sum = wg_cf_summary(target, reports, n, fail_on);
	if (sum) {
		sum[strcspn(sum, "\n")] = '\0';
		wg_buf_append(&b, "::notice title=wheelgate::", 26);
		gh_put(&b, sum, false);
		wg_buf_append(&b, "\n", 1); /* a line as every other: the runner reads lines */
	}
	free(sum);
	if (!b.s)
		wg_buf_append(&b, "", 0);
	return b.s;
}

/* Appends a literal piece, or (for text from an input) the text with control characters and
 * invalid UTF-8 escaped: a wheel's names must not drive the terminal. */
static void put(wg_buf *b, const char *s)
{
	wg_buf_append(b, s, strlen(s));
}

static void put_esc(wg_buf *b, const char *s)
{
	wg_buf_escape(b, s, WG_ESCAPE_UTF8 | WG_ESCAPE_CONTROL);
}

/* The rules not applied, said once for all inputs (issue 29): one line per reason, each rule
 * with the number of inputs it was not applied to, consecutive ids of a family as a range
 * ("not applied: WG-LD-001..005 to 5 inputs, WG-LD-006 to 6 inputs (no Python environment to
 * load the objects in: --env)"); with one input the count says nothing and is left out. The
 * engine lists a rule only for an input it could have found something in. */
typedef struct {
	const char *rule, *message;
	size_t inputs;
} na_count;

static int by_rule(const void *a, const void *b)
{
	return strcmp(((const na_count *)a)->rule, ((const na_count *)b)->rule);
}

/* "WG-LD-003" -> its family's length ("WG-LD-") and number; false when not of that form. */
static bool rule_number(const char *id, size_t *family, unsigned long *num)
{
	const char *dash = strrchr(id, '-');
	if (!dash || !dash[1] || strspn(dash + 1, "0123456789") != strlen(dash + 1) ||
	    strlen(dash + 1) > 6)
		return false;
	*family = (size_t)(dash + 1 - id);
	*num = strtoul(dash + 1, NULL, 10);
	return true;
}

/* The rules of one reason and one count, sorted, with runs of 3 or more as ranges. */
static void put_rules(wg_buf *b, const na_count *c, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t fam, j = i + 1;
		unsigned long num, nj;
		size_t famj;
		if (rule_number(c[i].rule, &fam, &num))
			while (j < n && rule_number(c[j].rule, &famj, &nj) && famj == fam &&
			       !strncmp(c[j].rule, c[i].rule, fam) && nj == num + (j - i) &&
			       strlen(c[j].rule) == strlen(c[i].rule))
				j++;
		put(b, i ? ", " : "");
		put_esc(b, c[i].rule);
		if (j - i >= 3) {
			put(b, "..");
			put_esc(b, c[j - 1].rule + fam);
		} else {
			j = i + 1;
		}
		i = j;
	}
}

char *wg_cf_not_applied_text(const wg_report *const *reports, size_t n)
{
	wg_buf b = {0};
	wg_vec all;
	wg_vec_init(&all, sizeof(na_count));
	size_t readable = 0;
	bool oom = false;
	for (size_t i = 0; i < n && !oom; i++) {
		const wg_report *r = reports[i];
		readable += r != NULL;
		for (size_t k = 0; r && k < r->not_applied.len && !oom; k++) {
			const wg_not_applied *na = wg_vec_at(&r->not_applied, k);
			na_count *c = NULL;
			for (size_t j = 0; j < all.len && !c; j++) {
				na_count *x = wg_vec_at(&all, j);
				if (!strcmp(x->rule, na->rule) && !strcmp(x->message, na->message))
					c = x;
			}
			if (!c && (c = wg_vec_push(&all)))
				*c = (na_count){na->rule, na->message, 0};
			if (c)
				c->inputs++;
			else
				oom = true;
		}
	}
	na_count *grp = all.len ? malloc(all.len * sizeof(*grp)) : NULL;
	bool *done = all.len ? calloc(all.len, sizeof(*done)) : NULL;
	for (size_t i = 0; grp && done && i < all.len; i++) {
		const na_count *g = wg_vec_at(&all, i);
		if (done[i])
			continue;
		/* one line per reason, in the order the reasons first came */
		put(&b, "not applied: ");
		bool first = true;
		while (true) {
			/* the count of the first rule left for this reason, its rules sorted */
			const na_count *low = NULL;
			size_t most = 0, m = 0;
			for (size_t j = i; j < all.len; j++) {
				const na_count *x = wg_vec_at(&all, j);
				if (!done[j] && !strcmp(x->message, g->message) &&
				    (!low || strcmp(x->rule, low->rule) < 0))
					low = x;
			}
			if (!low)
				break;
			most = low->inputs;
			for (size_t j = i; j < all.len; j++) {
				const na_count *x = wg_vec_at(&all, j);
				if (!done[j] && !strcmp(x->message, g->message) && x->inputs == most) {
					grp[m++] = *x;
					done[j] = true;
				}
			}
			qsort(grp, m, sizeof(*grp), by_rule);
			put(&b, first ? "" : ", ");
			put_rules(&b, grp, m);
			if (readable > 1) {
				char cnt[64];
				snprintf(cnt, sizeof(cnt), " to %s%zu input%s", most == readable &&
					 most > 2 ? "all " : "", most, most == 1 ? "" : "s");
				put(&b, cnt);
			}
			first = false;
		}
		put(&b, " (");
		put_esc(&b, g->message);
		put(&b, ")\n");
	}
	free(grp);
	free(done);
	wg_vec_free(&all);
	if (oom) {
		wg_buf_free(&b);
		return NULL;
	}
	if (!b.s)
		wg_buf_append(&b, "", 0);
	return b.s;
}

/* "and 68,950 more like this": the number with thousands separators, whatever the locale. */
static void text_more(wg_buf *b, const wg_more *m, const char *dim, const char *off)
{
	char num[32], grouped[48];
	int n = snprintf(num, sizeof(num), "%zu", m->count), o = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			grouped[o++] = ',';
		grouped[o++] = num[i];
	}
	grouped[o] = '\0';
	put(b, "  ");
	put(b, dim);
	put(b, "... and ");
	put(b, grouped);
	put(b, " more like this [");
	put(b, m->rule);
	put(b, "] (counted, not listed: --max-rule-findings, --max-findings)");
	put(b, off);
	put(b, "\n");
}

/* The text of `wheelgate check`: PASS/FAIL/ERROR per input, each finding with its fix (the
 * rules not applied close the text once for all inputs: wg_cf_not_applied_text). */
char *wg_cf_text(const char *const *paths, const wg_report *const *reports,
		  const char *const *errors, size_t n, wg_severity fail_on, bool color)
{
	const char *red = color ? "\033[31m" : "", *green = color ? "\033[32m" : "",
		   *yellow = color ? "\033[33m" : "", *dim = color ? "\033[2m" : "",
		   *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
	wg_buf b = {0};
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			put(&b, red);
			put(&b, "ERROR");
			put(&b, off);
			put(&b, " ");
			put_esc(&b, paths[i]);
			put(&b, "\n      ");
			put_esc(&b, errors && errors[i] ? errors[i] : "unreadable");
			put(&b, "\n");
			continue;
		}
		bool fails = wg_report_worst(r) >= (int)fail_on;
		put(&b, fails ? red : green);
		put(&b, fails ? "FAIL" : "PASS");
		put(&b, off);
		put(&b, " ");
		put_esc(&b, paths[i]);
		put(&b, "\n");
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			const char *c = f->severity == WG_SEV_ERROR ? red
					: f->severity == WG_SEV_WARNING ? yellow : dim;
			put(&b, "  ");
			put(&b, c);
			put(&b, wg_severity_name(f->severity));
			put(&b, off);
			put(&b, "[");
			put_esc(&b, f->rule);
			put(&b, "] ");
			put(&b, bold);
			put_esc(&b, f->title);
			put(&b, off);
			put(&b, "\n      ");
			put_esc(&b, f->message);
			put(&b, "\n      ");
			put(&b, dim);
			put(&b, "fix:");
			put(&b, off);
			put(&b, " ");
			put_esc(&b, f->fix);
			put(&b, "\n");
			/* after the last kept finding of a rule: the ones counted past the bound */
			const wg_finding *next = k + 1 < r->findings.len ? wg_vec_at(&r->findings, k + 1)
									 : NULL;
			const wg_more *m = !next || strcmp(next->rule, f->rule)
						   ? wg_report_more_of(r, f->rule) : NULL;
			if (m)
				text_more(&b, m, dim, off);
		}
		/* a rule with none kept (max_findings reached before it) */
		for (size_t k = 0; k < r->more.len; k++) {
			const wg_more *m = wg_vec_at(&r->more, k);
			bool kept = false;
			for (size_t j = 0; j < r->findings.len && !kept; j++)
				kept = !strcmp(((const wg_finding *)wg_vec_at(&r->findings, j))->rule, m->rule);
			if (!kept)
				text_more(&b, m, dim, off);
		}
	}
	if (!b.s)
		wg_buf_append(&b, "", 0);
	return b.s;
}

/* The line that closes `wheelgate check`: inputs, verdicts and findings counted. */
char *wg_cf_summary(const wg_target *target, const wg_report *const *reports, size_t n,
		     wg_severity fail_on)
{
	size_t passed = 0, failed = 0, unreadable = 0, sev[3] = {0};
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			unreadable++;
			continue;
		}
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			if ((unsigned)f->severity < 3)
				sev[f->severity]++;
		}
		wg_cf_add_more(sev, r);
		if (wg_report_worst(r) >= (int)fail_on)
			failed++;
		else
			passed++;
	}
	char line[512];
	snprintf(line, sizeof(line), "%zu input%s: %zu passed, %zu failed, %zu unreadable; "
		 "%zu error%s, %zu warning%s, %zu info (profile: %s, fail-on: %s)\n", n,
		 n == 1 ? "" : "s", passed, failed, unreadable, sev[2], sev[2] == 1 ? "" : "s",
		 sev[1], sev[1] == 1 ? "" : "s", sev[0], wg_profile_name(wg_target_profile(target)),
		 wg_severity_name(fail_on));
	return strdup(line);
}

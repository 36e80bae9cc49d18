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

/* "  not applied: WG-ABI-001, WG-ABI-002 (no target ...); WG-GPU-002 (no target GPU (--gpu))":
 * rules grouped by what they lack, in rule order. */
static void text_not_applied(wg_buf *b, const wg_report *r, const char *dim, const char *off)
{
	size_t n = r->not_applied.len;
	if (!n)
		return;
	bool *done = calloc(n, sizeof(*done));
	if (!done)
		return;
	put(b, "  ");
	put(b, dim);
	put(b, "not applied:");
	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		const wg_not_applied *g = wg_vec_at(&r->not_applied, i);
		put(b, i ? "; " : " ");
		for (size_t j = i, first = 1; j < n; j++) {
			const wg_not_applied *x = wg_vec_at(&r->not_applied, j);
			if (done[j] || strcmp(x->message, g->message))
				continue;
			done[j] = true;
			put(b, first ? "" : ", ");
			put(b, x->rule);
			first = 0;
		}
		put(b, " (");
		put_esc(b, g->message);
		put(b, ")");
	}
	put(b, off);
	put(b, "\n");
	free(done);
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

/* The text of `wheelgate check`: PASS/FAIL/ERROR per input, each finding with its fix, and
 * the rules not applied. */
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
		text_not_applied(&b, r, dim, off);
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

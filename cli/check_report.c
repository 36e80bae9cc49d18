/*
 * check's reports (check.h): each input's text block as it is done, the closing document
 * (JSON, SARIF, GitHub) or summary, what the configuration and the baseline took out, and
 * the exit status; --list-rules and --self-test.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int cmp_rule_id(const void *a, const void *b, void *rs)
{
	wg_rule_info x = WG_RULE_INFO_INIT, y = WG_RULE_INFO_INIT;
	wg_ruleset_rule(&x, rs, *(const size_t *)a);
	wg_ruleset_rule(&y, rs, *(const size_t *)b);
	return strcmp(x.id, y.id);
}

/* The rules' indexes sorted by id (NULL when out of memory). */
static size_t *rules_by_id(const wg_ruleset *rs)
{
	size_t n = wg_ruleset_count(rs);
	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	for (size_t i = 0; order && i < n; i++)
		order[i] = i;
	if (order)
		qsort_r(order, n, sizeof(*order), cmp_rule_id, (void *)rs);
	return order;
}

static void list_rules(const wg_ruleset *rs)
{
	size_t *order = rules_by_id(rs);
	printf("%-12s %-8s %-8s %-3s %-26s %s\n", "ID", "INSTALL", "PUBLISH", "ON", "CHECK", "TITLE");
	for (size_t k = 0; k < wg_ruleset_count(rs); k++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		wg_ruleset_rule(&ri, rs, order ? order[k] : k);
		printf("%-12s %-8s %-8s %-3s %-26s %s\n", esc(ri.id),
		       ri.install < 0 ? "-" : wg_severity_name((wg_severity)ri.install),
		       ri.publish < 0 ? "-" : wg_severity_name((wg_severity)ri.publish),
		       ri.enabled ? "on" : "off", esc(ri.check), esc(ri.title));
	}
	free(order);
}

/* --explain: each rule with a finding (listed, or counted past a bound) in a report, once, in
 * the order of their ids, after the text report (on stderr beside a document). */
static void explain_fired(const checker *k, FILE *out)
{
	size_t n = wg_ruleset_count(k->rs), shown = 0;
	size_t *order = rules_by_id(k->rs);
	if (!order)
		return;
	for (size_t j = 0; j < n; j++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		if (wg_ruleset_rule(&ri, k->rs, order[j]) < 0)
			continue;
		bool fired = false;
		for (size_t i = 0; i < k->res.n && !fired; i++) {
			const wg_report *r = k->res.reports[i];
			for (size_t f = 0; r && f < wg_report_count(r) && !fired; f++) {
				wg_finding_info fi = WG_FINDING_INFO_INIT;
				fired = wg_report_finding(&fi, r, f) == WG_OK && !strcmp(fi.rule, ri.id);
			}
			for (size_t m = 0; r && m < wg_report_more_count(r) && !fired; m++) {
				wg_more_info mi = WG_MORE_INFO_INIT;
				fired = wg_report_more(&mi, r, m) == WG_OK && !strcmp(mi.rule, ri.id);
			}
		}
		if (!fired)
			continue;
		fprintf(out, "\n%s\n\n", shown++ ? "----" : "Rules that produced findings, explained:");
		explain_rule_text(out, k->rs, order[j]);
	}
	free(order);
}

/* One input's block, as the library formats it (the pip gate prints the same). */
void print_report(FILE *out, const wg_ruleset *rs, const results *res, size_t i,
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

/* --list-rules and --self-test: the rules, not the inputs. */
int rules_only(const check_args *a, const wg_ruleset *rs)
{
	if (a->list) {
		list_rules(rs);
		return EXIT_CLEAN;
	}
	char *report = NULL;
	int status = EXIT_CLEAN;
	if (wg_ruleset_self_test(rs, &report) < 0) {
		pipeline_fail(&a->p, "rule examples that fail:\n%s", report ? report : "");
		status = EXIT_USAGE;
	} else {
		printf("%zu rules: every example agrees with its patterns\n", wg_ruleset_count(rs));
	}
	wg_free(report);
	return status;
}

/* The ignored and the baselined findings out of the last result's report, counted. */
int suppress_last(checker *k)
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
void print_suppressed(const checker *k)
{
	size_t i = k->res.n - 1;
	if (!k->sup || !k->text || k->a->p.quiet || i >= k->nsups || !(k->sups[i][0] + k->sups[i][1]))
		return;
	fprintf(k->out, "  %zu known finding%s baselined, %zu ignored by the configuration\n",
		k->sups[i][1], k->sups[i][1] == 1 ? "" : "s", k->sups[i][0]);
}

/* The document (JSON, SARIF, GitHub) into *doc, with what the command adds to JSON (audit:
 * each input's note, the distributions not audited; a baseline: what it and the ignores took
 * out): the library writes them (wg_reports_format_doc). 0, or -1. */
static int document(char **doc, const checker *k, wg_format format)
{
	const results *res = &k->res;
	const check_command *mode = k->a->cmd;
	wg_reports_doc d = WG_REPORTS_DOC_INIT;
	d.format = format;
	d.rs = k->rs;
	d.target = k->target;
	d.paths = (const char *const *)res->paths;
	d.reports = (const wg_report *const *)res->reports;
	d.errors = (const char *const *)res->errors;
	d.n = res->n;
	d.fail_on = k->a->p.fail_on;
	size_t *counts = NULL;
	if (format == WG_FORMAT_JSON) {
		bool notes = false;
		for (size_t i = 0; i < res->n && !notes; i++)
			notes = res->notes[i] != NULL;
		if (notes)
			d.notes = (const char *const *)res->notes;
		if (k->sup && !(counts = calloc(2 * (res->n ? res->n : 1), sizeof(*counts))))
			return -1;
		for (size_t i = 0; counts && i < res->n && i < k->nsups; i++) {
			counts[i] = k->sups[i][0];
			counts[res->n + i] = k->sups[i][1];
		}
		if (counts) {
			d.ignored = counts;
			d.baselined = counts + res->n;
		}
		if (mode && mode->not_checked) {
			d.audit = 1;
			d.nnot_audited = mode->not_checked(&d.not_audited_paths, &d.not_audited_reasons,
							   mode->payload);
		}
	}
	int rc = wg_reports_format_doc(doc, &d);
	free(counts);
	return rc < 0 ? -1 : 0;
}

/* The document (JSON, SARIF) or the text's closing line, and the exit status. */
int finish(checker *k, int status)
{
	const results *res = &k->res;
	if (!k->text) {
		char *doc = NULL;
		if (document(&doc, k, !strcmp(k->a->p.format, "sarif")    ? WG_FORMAT_SARIF
				      : !strcmp(k->a->p.format, "github") ? WG_FORMAT_GITHUB
									  : WG_FORMAT_JSON) == 0) {
			fputs(doc, k->out);
			/* a document (JSON, SARIF) ends without one; GitHub's lines end with theirs */
			if (!*doc || doc[strlen(doc) - 1] != '\n')
				fputc('\n', k->out);
		}
		wg_free(doc);
	}
	/* The text's rules not applied, each reason once for all inputs, before the summary. */
	char *na = NULL;
	if (k->text && !k->a->p.quiet &&
	    wg_reports_format(&na, WG_FORMAT_NOT_APPLIED, k->rs, k->target,
			      (const char *const *)res->paths, (const wg_report *const *)res->reports,
			      (const char *const *)res->errors, res->n, k->a->p.fail_on) == WG_OK)
		fputs(na, k->out);
	wg_free(na);
	/* The summary closes the text report; beside a JSON or SARIF document, or a report
	 * written to a file, it goes to stderr (the document stays pure). */
	char *summary = NULL;
	if (wg_reports_format(&summary, WG_FORMAT_SUMMARY, k->rs, k->target,
			      (const char *const *)res->paths, (const wg_report *const *)res->reports,
			      (const char *const *)res->errors, res->n, k->a->p.fail_on) < 0) {
		pipeline_fail(&k->a->p, "%s\n", esc(wg_error_last()));
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
			 k->a->p.cfg.baseline ? esc(k->a->p.cfg.baseline) : "no --baseline", tot[0]);
		if (k->text)
			fputs(line, k->out);
		if (!k->text || k->out != stdout)
			fputs(line, stderr);
	}
	if (k->a->explain)
		explain_fired(k, k->text ? k->out : stderr);
	char werr[1024];
	if (k->a->write_baseline && suppress_write_baseline(k->sup, k->a->write_baseline, werr,
							    sizeof(werr)) < 0) {
		pipeline_fail(&k->a->p, "%s\n", esc(werr));
		status = EXIT_USAGE;
	}
	if (k->out != stdout && fclose(k->out) != 0) {
		pipeline_fail(&k->a->p, "-o: %s: %s\n", k->a->output, strerror(errno));
		status = EXIT_USAGE;
	}
	bool unreadable = false, failed = false;
	for (size_t i = 0; i < res->n; i++) {
		unreadable = unreadable || !res->reports[i];
		failed = failed || (res->reports[i] && wg_report_worst(res->reports[i]) >= (int)k->a->p.fail_on);
	}
	if (status == EXIT_CLEAN)
		status = unreadable ? EXIT_USAGE : failed ? EXIT_FINDINGS : EXIT_CLEAN;
	return status;
}


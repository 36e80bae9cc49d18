/*
 * `wheelgate select`'s output (cmd_select.c judges and ranks): the wheelgate.select/1 document
 * (docs/select.md) and the table on stderr, text from wheels escaped.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "select.h"

static void jstr(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	char *e = NULL;
	wg_escape(&e, s, WG_ESCAPE_UTF8);
	const char *p = e ? e : "";
	fputc('"', f);
	for (; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
	wg_free(e);
}

static const char *verdict_name(const candidate *c, const candidate *chosen)
{
	return c == chosen ? "chosen" : c->works ? "works" : c->error ? "error" : "rejected";
}

/* The rules not applied to any candidate for lack of a fact (the target is the same for all:
 * the first report that lists a rule names it), at most max. */

size_t select_not_applied(not_applied *out, size_t max, candidate *const *order, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = order[i]->rep;
		size_t m = r ? wg_report_not_applied_count(r) : 0;
		for (size_t j = 0; j < m && k < max; j++) {
			wg_not_applied_info na = WG_NOT_APPLIED_INFO_INIT;
			if (wg_report_not_applied(&na, r, j) < 0 || !na.rule)
				continue;
			bool dup = false;
			for (size_t x = 0; x < k && !dup; x++)
				dup = !strcmp(out[x].rule, na.rule);
			if (!dup)
				out[k++] = (not_applied){na.rule, na.lacks ? na.lacks : "",
							 na.message ? na.message : ""};
		}
	}
	return k;
}

void select_print_json(FILE *f, const select_args *a, candidate *const *order, size_t n,
		       const candidate *chosen, const char *project, const char *tagdesc,
		       int minor, const wg_target *t, const char *env_path, size_t nstore,
		       size_t nread, double seconds, int status)
{
	wg_target_info ti = WG_TARGET_INFO_INIT;
	wg_target_get_info(&ti, t);
	fprintf(f, "{\"format\":\"wheelgate.select/1\",\"wheelgate\":");
	jstr(f, wg_version_string());
	fprintf(f, ",\"project\":");
	jstr(f, project);
	fprintf(f, ",\"target\":{\"python\":\"3.%d\",\"tags\":", minor);
	jstr(f, tagdesc);
	fprintf(f, ",\"env\":");
	jstr(f, env_path);
	fprintf(f, ",\"torch\":");
	jstr(f, ti.torch);
	if (ti.cxx11abi >= 0)
		fprintf(f, ",\"cxx11abi\":%d", ti.cxx11abi);
	else
		fprintf(f, ",\"cxx11abi\":null");
	if (ti.cuda_major)
		fprintf(f, ",\"cuda\":\"%u.%u\"", ti.cuda_major, ti.cuda_minor);
	else
		fprintf(f, ",\"cuda\":null");
	fprintf(f, ",\"gpus\":[");
	for (size_t i = 0; i < a->p.cfg.ngpus; i++) {
		fputs(i ? "," : "", f);
		jstr(f, a->p.cfg.gpus[i]);
	}
	fprintf(f, "],\"fail_on\":\"%s\"},\"chosen\":", wg_severity_name(a->p.fail_on));
	jstr(f, chosen ? chosen->where : NULL);
	not_applied na[64];
	size_t nna = select_not_applied(na, sizeof(na) / sizeof(na[0]), order, n);
	fprintf(f, ",\"not_applied\":[");
	for (size_t i = 0; i < nna; i++) {
		fprintf(f, "%s{\"rule\":", i ? "," : "");
		jstr(f, na[i].rule);
		fprintf(f, ",\"lacks\":");
		jstr(f, na[i].lacks);
		fprintf(f, ",\"message\":");
		jstr(f, na[i].message);
		fputs("}", f);
	}
	fputs("]", f);
	fprintf(f, ",\"candidates\":[");
	for (size_t i = 0; i < n; i++) {
		const candidate *c = order[i];
		fprintf(f, "%s{\"file\":", i ? "," : "");
		jstr(f, c->filename);
		fprintf(f, ",\"location\":");
		jstr(f, c->where);
		fprintf(f, ",\"source\":");
		jstr(f, c->source);
		fprintf(f, ",\"version\":");
		jstr(f, c->version);
		fprintf(f, ",\"verdict\":\"%s\",\"rank\":", verdict_name(c, chosen));
		if (c->works)
			fprintf(f, "%zu", i + 1);
		else
			fputs("null", f);
		fprintf(f, ",\"tags_supported\":%s,\"tag_rank\":", c->rank >= 0 ? "true" : "false");
		if (c->rank >= 0)
			fprintf(f, "%ld", c->rank);
		else
			fputs("null", f);
		fprintf(f, ",\"sha256\":");
		jstr(f, c->hex[0] ? c->hex : NULL);
		if (c->size >= 0)
			fprintf(f, ",\"size\":%lld", c->size);
		else
			fputs(",\"size\":null", f);
		fprintf(f, ",\"from_store\":%s,\"seconds\":%.4f,\"errors\":%zu,\"warnings\":%zu,"
			"\"error\":", c->from_store ? "true" : "false", c->seconds, c->errors,
			c->warnings);
		jstr(f, c->error);
		fprintf(f, ",\"reasons\":[");
		for (size_t r = 0; r < c->nreasons; r++) {
			fputs(r ? "," : "", f);
			jstr(f, c->reasons[r]);
		}
		fprintf(f, "],\"findings\":[");
		size_t nf = c->rep ? wg_report_count(c->rep) : 0;
		for (size_t k = 0; k < nf; k++) {
			wg_finding_info fi = WG_FINDING_INFO_INIT;
			if (wg_report_finding(&fi, c->rep, k) < 0)
				continue;
			fprintf(f, "%s{\"rule\":", k ? "," : "");
			jstr(f, fi.rule);
			fprintf(f, ",\"severity\":\"%s\",\"message\":", wg_severity_name(fi.severity));
			jstr(f, fi.message);
			fputs("}", f);
		}
		fputs("]}", f);
	}
	size_t nworks = 0;
	for (size_t i = 0; i < n; i++)
		nworks += order[i]->works;
	fprintf(f, "],\"summary\":{\"candidates\":%zu,\"work\":%zu,\"from_store\":%zu,"
		"\"read\":%zu,\"seconds\":%.3f},\"exit\":%d}\n", n, nworks, nstore, nread,
		seconds, status);
}

/* The table goes to stderr: colored when stderr (not stdout, which $(...) captures) is a
 * terminal, and neither NO_COLOR nor TERM=dumb says otherwise. */
static bool stderr_color(void)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
	return isatty(STDERR_FILENO) && !(nc && *nc) && !(term && !strcmp(term, "dumb"));
}

void select_print_table(const candidate *const *order, size_t n, const candidate *chosen,
			size_t limit)
{
	bool color = stderr_color();
	for (size_t i = 0; i < n && i < limit; i++) {
		const candidate *c = order[i];
		fprintf(stderr, "  %s%-8s%s %s\n",
			!color ? "" : c == chosen ? "\033[32m" : c->works ? "" : "\033[31m",
			verdict_name(c, chosen), color ? "\033[0m" : "", esc(c->filename));
		if (c->error)
			fprintf(stderr, "             %s\n", esc(c->error));
		for (size_t r = 0; r < c->nreasons; r++)
			fprintf(stderr, "             %s\n", esc(c->reasons[r]));
		/* what does not block, said of those that work (a label its content contradicts) */
		size_t nf = c->works && c->rep ? wg_report_count(c->rep) : 0, said = 0;
		for (size_t k = 0; k < nf && said < 3; k++) {
			wg_finding_info fi = WG_FINDING_INFO_INIT;
			char line[512];
			if (wg_report_finding(&fi, c->rep, k) < 0 || fi.severity < WG_SEV_WARNING)
				continue;
			select_compact(line, sizeof(line), fi.message ? fi.message : "", 200);
			fprintf(stderr, "             %s: %s (%s): %s\n",
				wg_severity_name(fi.severity), fi.title, fi.rule, esc(line));
			said++;
		}
	}
	if (n > limit)
		fprintf(stderr, "  (%zu more)\n", n - limit);
}


/*
 * The report API (wheelgate.h, "a report read without its documents", wg_reports_format_doc,
 * wheelgate.scan/1): every accessor against the JSON document the library writes for the same
 * report, over every fixture wheel and several targets and bounds; the scan record writer and
 * the document additions byte for byte against the writers they replace (cmd_scan.c's record,
 * cmd_check.c's annotate, serve's envelope re-dump: kept below as they were), and the record
 * reader against what was written.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* ---- the writers these functions replace, as they were ---- */

/* cli/cmd_scan.c: a string from an input or a path as JSON */
static json_t *old_jstr(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	char *e = NULL;
	wg_escape(&e, s, WG_ESCAPE_UTF8);
	j = e ? json_string(e) : json_null();
	wg_free(e);
	return j;
}

/* cli/cmd_scan.c: the wheel's tags */
static json_t *old_tags_of(const wg_scan *scan)
{
	json_t *a = json_array();
	size_t np = wg_wheel_list_count(scan, WG_LIST_PYTHON_TAGS);
	size_t na = wg_wheel_list_count(scan, WG_LIST_ABI_TAGS);
	size_t nl = wg_wheel_list_count(scan, WG_LIST_PLATFORM_TAGS);
	for (size_t p = 0; p < np; p++)
		for (size_t b = 0; b < na; b++)
			for (size_t l = 0; l < nl; l++) {
				char tag[512];
				snprintf(tag, sizeof(tag), "%s-%s-%s",
					 wg_wheel_list_item(scan, WG_LIST_PYTHON_TAGS, p),
					 wg_wheel_list_item(scan, WG_LIST_ABI_TAGS, b),
					 wg_wheel_list_item(scan, WG_LIST_PLATFORM_TAGS, l));
				json_array_append_new(a, old_jstr(tag));
			}
	return a;
}

/* cli/cmd_scan.c: the target's entry from check's JSON document of one input */
static json_t *old_target_entry(const wg_ruleset *rs, wg_severity fail_on, const char *name,
				const wg_target *target, int tg_profile, const char *path,
				const wg_report *rep, const char *error)
{
	char *doc = NULL;
	json_t *t = json_object();
	json_object_set_new(t, "target", old_jstr(name));
	json_object_set_new(t, "profile", json_string(wg_profile_name(rep ? wg_report_profile(rep)
		: (wg_profile)tg_profile)));
	if (wg_reports_format(&doc, WG_FORMAT_JSON, rs, target, &path, &rep, &error, 1,
			      fail_on) < 0) {
		json_object_set_new(t, "verdict", json_string("error"));
		wg_free(doc);
		return t;
	}
	json_t *j = json_loads(doc, 0, NULL);
	wg_free(doc);
	const char *prof = json_string_value(json_object_get(j, "profile"));
	if (prof)
		json_object_set_new(t, "profile", json_string(prof));
	json_t *in = json_array_get(json_object_get(j, "inputs"), 0);
	json_object_set(t, "verdict", json_object_get(in, "verdict"));
	json_object_set(t, "counts", json_object_get(in, "counts"));
	json_t *fs = json_array();
	json_t *f;
	size_t i;
	json_array_foreach(json_object_get(in, "findings"), i, f) {
		json_t *o = json_object();
		static const char *const keys[] = {"rule", "severity", "message", "member", "symbol"};
		for (size_t k = 0; k < 5; k++) {
			json_t *v = json_object_get(f, keys[k]);
			json_object_set(o, keys[k], v ? v : json_null());
		}
		json_array_append_new(fs, o);
	}
	json_object_set_new(t, "findings", fs);
	json_t *more = json_object_get(in, "more");
	if (json_array_size(more))
		json_object_set(t, "more", more);
	json_decref(j);
	return t;
}

typedef struct {
	const char *name;
	wg_target *target;
	wg_report *rep;
} one_target;

/* cli/cmd_scan.c's scan_job, the record's assembly */
static char *old_record(const wg_ruleset *rs, wg_severity fail_on, const char *shown,
			const wg_scan *scan, const char *hex, long long size, one_target *tg,
			size_t ntg, const char *facts, double seconds, const char *error)
{
	json_t *r = json_object();
	json_object_set_new(r, "schema", json_string("wheelgate.scan/1"));
	json_object_set_new(r, "path", old_jstr(shown));
	json_object_set_new(r, "name", old_jstr(scan ? wg_wheel_get(scan, WG_WHEEL_NAME) : NULL));
	json_object_set_new(r, "version", old_jstr(scan ? wg_wheel_get(scan, WG_WHEEL_VERSION) : NULL));
	json_object_set_new(r, "tags", scan ? old_tags_of(scan) : json_array());
	json_object_set_new(r, "sha256", hex ? json_string(hex) : json_null());
	json_object_set_new(r, "size", size >= 0 ? json_integer((json_int_t)size) : json_null());
	json_t *targets = json_array();
	for (size_t t = 0; t < ntg; t++)
		json_array_append_new(targets, old_target_entry(rs, fail_on, tg[t].name, tg[t].target,
			wg_target_profile(tg[t].target), shown, tg[t].rep, tg[t].rep ? NULL : error));
	json_object_set_new(r, "targets", targets);
	json_object_set_new(r, "facts", facts ? old_jstr(facts) : json_null());
	json_object_set_new(r, "seconds", json_real(seconds));
	json_object_set_new(r, "error", old_jstr(error));
	char *line = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII |
				 JSON_REAL_PRECISION(6));
	json_decref(r);
	return line;
}

/* cli/cmd_check.c's annotate: a command's additions to the library's document */
static char *old_annotate(const char *doc, size_t n, const char *const *notes,
			  const size_t *ig_, const size_t *bl_, bool audit, const char *const *paths,
			  const char *const *why, size_t nn)
{
	json_t *j = json_loads(doc, 0, NULL);
	json_t *inputs = j ? json_object_get(j, "inputs") : NULL;
	ck_assert_ptr_nonnull(inputs);
	for (size_t i = 0; i < n; i++)
		if (notes && notes[i])
			json_object_set_new(json_array_get(inputs, i), "note", json_string(notes[i]));
	if (ig_) {
		size_t tot[2] = {0, 0};
		for (size_t i = 0; i < n; i++) {
			json_t *in = json_array_get(inputs, i);
			json_object_set_new(in, "ignored", json_integer((json_int_t)ig_[i]));
			json_object_set_new(in, "baselined", json_integer((json_int_t)bl_[i]));
			tot[0] += ig_[i];
			tot[1] += bl_[i];
		}
		json_object_set_new(json_object_get(j, "summary"), "ignored",
				    json_integer((json_int_t)tot[0]));
		json_object_set_new(json_object_get(j, "summary"), "baselined",
				    json_integer((json_int_t)tot[1]));
	}
	if (audit) {
		json_t *na = json_array();
		for (size_t i = 0; na && i < nn; i++)
			json_array_append_new(na, json_pack("{s:s, s:s}", "path", paths[i], "reason",
							    why[i]));
		json_object_set_new(j, "not_audited", na);
		json_object_set_new(json_object_get(j, "summary"), "not_audited",
				    json_integer((json_int_t)nn));
	}
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	json_decref(j);
	size_t dels = 0, len = s ? strlen(s) : 0;
	for (size_t i = 0; i < len; i++)
		dels += s[i] == 0x7F;
	char *out = malloc(len + dels * 5 + 1);
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == 0x7F) {
			memcpy(out + o, "\\u007f", 6);
			o += 6;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	free(s);
	return out;
}

/* ---- the fixtures: every wheel and loose object, judged for several targets ---- */

typedef struct {
	char **paths;
	size_t n;
} pathlist;

static void add_dir(pathlist *l, const char *dir)
{
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "%s: no fixtures", dir);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		bool whl = len > 4 && !strcmp(e->d_name + len - 4, ".whl");
		bool so = len > 3 && !strcmp(e->d_name + len - 3, ".so");
		if (!whl && !so)
			continue;
		l->paths = realloc(l->paths, (l->n + 1) * sizeof(*l->paths));
		size_t m = strlen(dir) + len + 2;
		l->paths[l->n] = malloc(m);
		snprintf(l->paths[l->n++], m, "%s/%s", dir, e->d_name);
	}
	closedir(d);
}

static void free_list(pathlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->paths[i]);
	free(l->paths);
}

/* The targets: publish (no facts), an install for an H100 with torch and CUDA declared, and
 * an install with nothing declared (rules not applied). */
static size_t make_targets(one_target *tg, const wg_context *ctx)
{
	static const char *const names[] = {"publish", "h100", "bare-install"};
	for (size_t i = 0; i < 3; i++) {
		tg[i].name = names[i];
		tg[i].rep = NULL;
		ck_assert_int_eq(wg_target_new(&tg[i].target), WG_OK);
	}
	ck_assert_int_eq(wg_target_set(tg[0].target, "profile", "publish"), WG_OK);
	ck_assert_int_eq(wg_target_set(tg[1].target, "profile", "install"), WG_OK);
	ck_assert_int_eq(wg_target_parse(tg[1].target, "python=3.12,torch=2.8.0+cu128,cuda=12.8,"
					 "cxx11abi=1"), WG_OK);
	ck_assert_int_eq(wg_target_add_gpu(tg[1].target, ctx, "H100"), WG_OK);
	ck_assert_int_eq(wg_target_set(tg[2].target, "profile", "install"), WG_OK);
	return 3;
}

static const char *sev_key(int s)
{
	return s == 2 ? "error" : s == 1 ? "warning" : "info";
}

static void eq_str(const char *what, const char *path, const char *got, json_t *want)
{
	if (json_is_null(want) || !want) {
		ck_assert_msg(got == NULL, "%s: %s: accessor \"%s\", JSON null", path, what, got);
		return;
	}
	/* the JSON escapes invalid UTF-8 (\xNN): the accessor's string, escaped the same way */
	json_t *g = got ? json_string(got) : NULL;
	char *e = NULL;
	if (!g && got) {
		wg_escape(&e, got, WG_ESCAPE_UTF8);
		g = json_string(e);
	}
	ck_assert_msg(g && json_equal(g, want), "%s: %s: accessor \"%s\", JSON \"%s\"", path, what,
		      got ? got : "(null)", json_string_value(want));
	json_decref(g);
	wg_free(e);
}

/* Every accessor of r against the JSON document of the same report. */
static size_t compare(const wg_ruleset *rs, const wg_target *t, const char *path,
		      const wg_report *r, wg_severity fail_on)
{
	char *doc = NULL;
	ck_assert_int_eq(wg_reports_format(&doc, WG_FORMAT_JSON, rs, t, &path, &r, NULL, 1, fail_on),
			 WG_OK);
	json_error_t je;
	json_t *j = json_loads(doc, 0, &je);
	ck_assert_msg(j != NULL, "%s", je.text);
	json_t *in = json_array_get(json_object_get(j, "inputs"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(in, "verdict")),
			 wg_verdict_name(wg_report_verdict(r, fail_on)));
	ck_assert_str_eq(json_string_value(json_object_get(j, "profile")),
			 wg_profile_name(wg_report_profile(r)));
	ck_assert_str_eq(wg_report_path(r), path);
	/* the target as the document gives it */
	wg_target_info ti = WG_TARGET_INFO_INIT;
	ck_assert_int_eq(wg_target_get_info(&ti, t), WG_OK);
	json_t *jt = json_object_get(j, "target");
	char ver[32];
	snprintf(ver, sizeof(ver), "%u.%u", ti.python_major, ti.python_minor);
	eq_str("python", path, ti.python_major ? ver : NULL, json_object_get(jt, "python"));
	snprintf(ver, sizeof(ver), "%u.%u", ti.cuda_major, ti.cuda_minor);
	eq_str("cuda", path, ti.cuda_major ? ver : NULL, json_object_get(jt, "cuda"));
	eq_str("torch", path, ti.torch, json_object_get(jt, "torch"));
	json_t *abi = json_object_get(jt, "cxx11abi");
	ck_assert_int_eq(ti.cxx11abi, json_is_null(abi) ? -1 : json_is_true(abi));
	ck_assert_uint_eq(wg_target_gpu_count(t), json_array_size(json_object_get(jt, "gpus")));
	ck_assert_int_eq(ti.gpu_auto, json_object_get(jt, "gpu_auto") != NULL);
	wg_counts_info c = WG_COUNTS_INFO_INIT;
	ck_assert_int_eq(wg_report_counts(&c, r), WG_OK);
	size_t total = 0, more_total = 0;
	for (int s = 0; s < 3; s++) {
		json_t *n = json_object_get(json_object_get(in, "counts"), sev_key(s));
		ck_assert_msg((size_t)json_integer_value(n) == c.severity[s], "%s: %s: JSON %lld, "
			      "accessor %zu", path, sev_key(s), json_integer_value(n), c.severity[s]);
		ck_assert_uint_eq(c.severity[s], c.kept[s] + c.more[s]);
		total += c.kept[s];
		more_total += c.more[s];
		ck_assert_uint_eq(c.suppressed[s], 0);
	}
	ck_assert_uint_eq(total, wg_report_count(r));
	ck_assert_uint_eq(total + more_total, wg_report_total(r));
	/* a finding is "fail" exactly when check's JSON says so */
	ck_assert_int_eq(c.severity[2] + (fail_on <= WG_SEV_WARNING ? c.severity[1] : 0) +
			 (fail_on == WG_SEV_INFO ? c.severity[0] : 0) > 0,
			 wg_report_verdict(r, fail_on) == WG_VERDICT_FAIL);
	json_t *fs = json_object_get(in, "findings");
	ck_assert_uint_eq(json_array_size(fs), wg_report_count(r));
	for (size_t k = 0; k < wg_report_count(r); k++) {
		wg_finding_info f = WG_FINDING_INFO_INIT;
		ck_assert_int_eq(wg_report_finding(&f, r, k), WG_OK);
		json_t *x = json_array_get(fs, k);
		eq_str("rule", path, f.rule, json_object_get(x, "rule"));
		ck_assert_str_eq(wg_severity_name(f.severity),
				 json_string_value(json_object_get(x, "severity")));
		eq_str("title", path, f.title, json_object_get(x, "title"));
		eq_str("message", path, f.message, json_object_get(x, "message"));
		eq_str("fix", path, f.fix, json_object_get(x, "fix"));
		eq_str("member", path, f.member, json_object_get(x, "member"));
		eq_str("symbol", path, f.symbol, json_object_get(x, "symbol"));
		eq_str("file", path, f.file, json_object_get(x, "file"));
		json_t *line = json_object_get(x, "line");
		ck_assert_uint_eq(f.line, json_is_null(line) ? 0 : (unsigned)json_integer_value(line));
		ck_assert_uint_eq(json_object_size(x), 9); /* nothing in the JSON the info lacks */
	}
	json_t *more = json_object_get(in, "more");
	ck_assert_uint_eq(json_array_size(more), wg_report_more_count(r));
	for (size_t k = 0; k < wg_report_more_count(r); k++) {
		wg_more_info m = WG_MORE_INFO_INIT;
		ck_assert_int_eq(wg_report_more(&m, r, k), WG_OK);
		json_t *x = json_array_get(more, k);
		ck_assert_str_eq(m.rule, json_string_value(json_object_get(x, "rule")));
		ck_assert_uint_eq(m.count, (size_t)json_integer_value(json_object_get(x, "count")));
		for (int s = 0; s < 3; s++)
			ck_assert_uint_eq(m.severity[s], (size_t)json_integer_value(
				json_object_get(json_object_get(x, "counts"), sev_key(s))));
	}
	json_t *na = json_object_get(in, "not_applied");
	ck_assert_uint_eq(json_array_size(na), wg_report_not_applied_count(r));
	for (size_t k = 0; k < wg_report_not_applied_count(r); k++) {
		wg_not_applied_info a = WG_NOT_APPLIED_INFO_INIT;
		ck_assert_int_eq(wg_report_not_applied(&a, r, k), WG_OK);
		json_t *x = json_array_get(na, k);
		ck_assert_str_eq(a.rule, json_string_value(json_object_get(x, "rule")));
		ck_assert_str_eq(a.message, json_string_value(json_object_get(x, "message")));
		char lacks[256] = "";
		size_t i;
		json_t *v;
		json_array_foreach(json_object_get(x, "lacks"), i, v) {
			strcat(lacks, i ? "," : "");
			strcat(lacks, json_string_value(v));
		}
		ck_assert_str_eq(a.lacks, lacks);
	}
	/* the compact document is the same document, on one line */
	char *compact = NULL;
	ck_assert_int_eq(wg_reports_format(&compact, WG_FORMAT_JSON_COMPACT, rs, t, &path, &r, NULL,
					   1, fail_on), WG_OK);
	ck_assert_ptr_null(strchr(compact, '\n'));
	json_t *jc = json_loads(compact, 0, &je);
	ck_assert_msg(jc && json_equal(jc, j), "%s: compact document differs", path);
	json_decref(jc);
	wg_free(compact);
	json_decref(j);
	wg_free(doc);
	return wg_report_count(r) + wg_report_more_count(r);
}

/* Checks every fixture for every target (with bounds low enough that some findings are
 * counted, not kept), compares each report's accessors with its JSON, and its record with
 * the old writer's. */
/* Target t of a record read back holds the report's findings and counted findings, as the
 * report's own accessors give them. */
static void same_findings(const wg_scanrec *back, size_t t, const wg_report *rep)
{
	wg_scanrec_target_info ti = WG_SCANREC_TARGET_INFO_INIT;
	ck_assert_int_eq(wg_scanrec_target(&ti, back, t), WG_OK);
	ck_assert_uint_eq(ti.nfindings, rep ? wg_report_count(rep) : 0);
	ck_assert_uint_eq(ti.nmore, rep ? wg_report_more_count(rep) : 0);
	wg_scanrec_finding_info sf = WG_SCANREC_FINDING_INFO_INIT;
	for (size_t k = 0; k < ti.nfindings; k++) {
		wg_finding_info fi = WG_FINDING_INFO_INIT;
		ck_assert_int_eq(wg_report_finding(&fi, rep, k), WG_OK);
		ck_assert_int_eq(wg_scanrec_finding(&sf, back, t, k), WG_OK);
		ck_assert_str_eq(sf.rule, fi.rule);
		ck_assert_int_eq(sf.severity, fi.severity);
		ck_assert_ptr_nonnull(sf.message);
		if (fi.member)
			ck_assert_ptr_nonnull(sf.member);
		else
			ck_assert_ptr_null(sf.member);
		if (fi.symbol)
			ck_assert_str_eq(sf.symbol, fi.symbol);
		else
			ck_assert_ptr_null(sf.symbol);
	}
	ck_assert_int_eq(wg_scanrec_finding(&sf, back, t, ti.nfindings), WG_ENOTFOUND);
	wg_scanrec_more_info sm = WG_SCANREC_MORE_INFO_INIT;
	for (size_t k = 0; k < ti.nmore; k++) {
		wg_more_info mi = WG_MORE_INFO_INIT;
		ck_assert_int_eq(wg_report_more(&mi, rep, k), WG_OK);
		ck_assert_int_eq(wg_scanrec_more(&sm, back, t, k), WG_OK);
		ck_assert_str_eq(sm.rule, mi.rule);
		ck_assert_uint_eq(sm.count, mi.count);
		for (int s = 0; s < 3; s++)
			ck_assert_uint_eq(sm.severity[s], mi.severity[s]);
	}
	ck_assert_int_eq(wg_scanrec_more(&sm, back, t, ti.nmore), WG_ENOTFOUND);
}

static void each_fixture(uint32_t max_rule_findings, size_t *nfindings, size_t *nmore,
			 size_t *nrecords)
{
	wg_options o = WG_OPTIONS_INIT;
	o.max_rule_findings = max_rule_findings;
	wg_context *ctx = NULL;
	wg_scanner *sc = NULL;
	wg_ruleset *rs = NULL;
	ck_assert_int_eq(wg_context_new(&ctx, &o), WG_OK);
	ck_assert_int_eq(wg_scanner_new(&sc, ctx), WG_OK);
	ck_assert_int_eq(wg_ruleset_new(&rs, ctx, NULL), WG_OK);
	one_target tg[3];
	size_t ntg = make_targets(tg, ctx);
	pathlist l = {0};
	add_dir(&l, FIX_WHEELS);
	add_dir(&l, FIX_ABI);
	ck_assert_uint_gt(l.n, 20);
	for (size_t i = 0; i < l.n; i++) {
		wg_scan *scan = NULL;
		const char *err = NULL;
		if (wg_scan_path(&scan, sc, l.paths[i]) < 0)
			err = wg_scanner_error(sc);
		for (size_t t = 0; t < ntg && scan; t++) {
			ck_assert_int_eq(wg_check(&tg[t].rep, sc, rs, scan, tg[t].target), WG_OK);
			for (int fo = 0; fo < 3; fo++)
				*nfindings += compare(rs, tg[t].target, wg_scan_get_path(scan), tg[t].rep,
						      (wg_severity)fo);
			*nmore += wg_report_more_count(tg[t].rep);
		}
		/* a target not judged: the second, as when its environment refused the wheel */
		wg_report *kept = tg[1].rep;
		for (int variant = 0; variant < 2; variant++) {
			if (variant) {
				tg[1].rep = NULL;
				err = err ? err : "a target could not be judged: \xff\x01 and \xc3\xa9";
			}
			const char *hex = i % 2 ? "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
						: NULL;
			long long size = i % 3 ? (long long)(i * 1000 + 7) : -1;
			const char *facts = i % 4 == 1 ? "store/01/x\xfe.json.zst" : NULL;
			double secs = 0.001234567 * (double)(i + 1);
			wg_severity fo = (wg_severity)(i % 3);
			char *want = old_record(rs, fo, l.paths[i], scan, hex, size, tg, ntg, facts, secs,
						err);
			wg_scan_record_target rt[3];
			for (size_t t = 0; t < ntg; t++)
				rt[t] = (wg_scan_record_target){WG_SCAN_RECORD_TARGET_VERSION, tg[t].name,
								tg[t].target, tg[t].rep, NULL};
			wg_scan_record rec = WG_SCAN_RECORD_INIT;
			rec.path = l.paths[i];
			rec.scan = scan;
			rec.sha256 = hex;
			rec.size = size;
			rec.targets = rt;
			rec.ntargets = ntg;
			rec.fail_on = fo;
			rec.facts = facts;
			rec.seconds = secs;
			rec.error = err;
			char *got = NULL;
			ck_assert_int_eq(wg_scan_record_format(&got, &rec), WG_OK);
			size_t at = 0;
			while (got[at] && got[at] == want[at])
				at++;
			ck_assert_msg(!strcmp(got, want), "%s: record differs at byte %zu: ...%.200s\n"
				      "old writer: ...%.200s", l.paths[i], at, got + at, want + at);
			/* read back: what was written */
			wg_scanrec *back = NULL;
			ck_assert_int_eq(wg_scanrec_parse(&back, got, strlen(got)), WG_OK);
			wg_scanrec_info ri = WG_SCANREC_INFO_INIT;
			ck_assert_int_eq(wg_scanrec_get(&ri, back), WG_OK);
			json_t *jr = json_loads(got, 0, NULL);
			eq_str("record path", l.paths[i], l.paths[i], json_object_get(jr, "path"));
			ck_assert_str_eq(ri.path, json_string_value(json_object_get(jr, "path")));
			if (hex)
				ck_assert_str_eq(ri.sha256, hex);
			else
				ck_assert_ptr_null(ri.sha256);
			ck_assert_int_eq(ri.size, size);
			ck_assert_uint_eq(ri.ntargets, ntg);
			if (err)
				ck_assert_ptr_nonnull(ri.error);
			else
				ck_assert_ptr_null(ri.error);
			for (size_t t = 0; t < ntg; t++) {
				wg_scanrec_target_info ti = WG_SCANREC_TARGET_INFO_INIT;
				ck_assert_int_eq(wg_scanrec_target(&ti, back, t), WG_OK);
				ck_assert_str_eq(ti.target, tg[t].name);
				ck_assert_str_eq(ti.profile,
						 wg_profile_name(wg_target_profile(tg[t].target)));
				ck_assert_int_eq(ti.verdict, wg_report_verdict(tg[t].rep, fo));
				wg_counts_info c = WG_COUNTS_INFO_INIT;
				if (tg[t].rep)
					wg_report_counts(&c, tg[t].rep);
				for (int s = 0; s < 3; s++)
					ck_assert_uint_eq(ti.counts[s], c.severity[s]);
				same_findings(back, t, tg[t].rep);
			}
			wg_scanrec_target_info ti = WG_SCANREC_TARGET_INFO_INIT;
			ck_assert_int_eq(wg_scanrec_target(&ti, back, ntg), WG_ENOTFOUND);
			/* a target's own fail-on over the record's */
			wg_severity own = fo == WG_SEV_INFO ? WG_SEV_ERROR : WG_SEV_INFO;
			rt[0].fail_on = &own;
			char *line2 = NULL;
			wg_scanrec *back2 = NULL;
			ck_assert_int_eq(wg_scan_record_format(&line2, &rec), WG_OK);
			ck_assert_int_eq(wg_scanrec_parse(&back2, line2, strlen(line2)), WG_OK);
			ck_assert_int_eq(wg_scanrec_target(&ti, back2, 0), WG_OK);
			ck_assert_int_eq(ti.verdict, wg_report_verdict(tg[0].rep, own));
			ck_assert_int_eq(wg_scanrec_target(&ti, back2, 1), WG_OK);
			ck_assert_int_eq(ti.verdict, wg_report_verdict(tg[1].rep, fo));
			wg_scanrec_free(back2);
			wg_free(line2);
			json_decref(jr);
			wg_scanrec_free(back);
			wg_free(got);
			free(want);
			(*nrecords)++;
		}
		tg[1].rep = kept;
		for (size_t t = 0; t < ntg; t++) {
			wg_report_free(tg[t].rep);
			tg[t].rep = NULL;
		}
		wg_scan_free(scan);
	}
	free_list(&l);
	for (size_t t = 0; t < ntg; t++)
		wg_target_free(tg[t].target);
	wg_ruleset_free(rs);
	wg_scanner_free(sc);
	wg_context_free(ctx);
}

START_TEST(test_accessors_and_records_agree)
{
	size_t nf = 0, nmore = 0, nrec = 0;
	each_fixture(100, &nf, &nmore, &nrec);
	/* the comparison compared something: findings, and records of every fixture */
	ck_assert_uint_gt(nf, 50);
	ck_assert_uint_gt(nrec, 40);
}
END_TEST

START_TEST(test_bounded_reports_agree)
{
	size_t nf = 0, nmore = 0, nrec = 0;
	each_fixture(1, &nf, &nmore, &nrec);
	/* with one finding kept per rule, some are counted: "more" is compared too */
	ck_assert_uint_gt(nmore, 0);
}
END_TEST

/* The document with a command's additions, against cmd_check.c's annotate of the library's
 * document; without additions, the document wg_reports_format writes. */
START_TEST(test_document_additions)
{
	wg_ruleset *rs = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	const char *paths[3] = {FIX_WHEELS "/base-1.0-py3-none-any.whl",
				FIX_WHEELS "/badrec-1.0-py3-none-any.whl", "missing \xc3\xa9.whl"};
	wg_report *reps[3] = {0};
	const char *errors[3] = {NULL, NULL, "missing \xc3\xa9.whl: no such file"};
	for (size_t i = 0; i < 2; i++) {
		wg_scan *s = t_scan(paths[i]);
		ck_assert_int_eq(wg_check(&reps[i], t_sc, rs, s, t), WG_OK);
		wg_scan_free(s);
	}
	const wg_report *const *cr = (const wg_report *const *)reps;
	char *plain = NULL, *doc0 = NULL;
	ck_assert_int_eq(wg_reports_format(&plain, WG_FORMAT_JSON, rs, t, paths, cr, errors, 3,
					   WG_SEV_ERROR), WG_OK);
	wg_reports_doc d = WG_REPORTS_DOC_INIT;
	d.rs = rs;
	d.target = t;
	d.paths = paths;
	d.reports = cr;
	d.errors = errors;
	d.n = 3;
	ck_assert_int_eq(wg_reports_format_doc(&doc0, &d), WG_OK);
	ck_assert_str_eq(doc0, plain);
	const char *notes[3] = {"installed by dpkg: \xc3\xa9 \x7f", NULL, "x"};
	size_t ig[3] = {1, 0, 2}, bl[3] = {0, 3, 0};
	const char *nap[2] = {"foo.egg-info", "b\xc3\xa4r"}, *naw[2] = {"no RECORD", "why"};
	for (int k = 0; k < 4; k++) {
		wg_reports_doc e = d;
		e.notes = k & 1 ? notes : NULL;
		e.ignored = k & 2 ? ig : NULL;
		e.baselined = k & 2 ? bl : NULL;
		e.audit = k != 2;
		e.not_audited_paths = nap;
		e.not_audited_reasons = naw;
		e.nnot_audited = k == 3 ? 2 : k;
		char *got = NULL;
		ck_assert_int_eq(wg_reports_format_doc(&got, &e), WG_OK);
		char *want = old_annotate(plain, 3, e.notes, e.ignored, e.baselined, e.audit, nap, naw,
					  e.nnot_audited);
		ck_assert_msg(!strcmp(got, want), "additions %d differ:\n%.400s\n---\n%.400s", k, got,
			      want);
		ck_assert_ptr_nonnull(strstr(got, "\\u00E9")); /* past ASCII: escaped */
		ck_assert_ptr_null(strstr(got, "\xc3\xa9"));
		wg_free(got);
		free(want);
	}
	/* the compact document, as serve's envelope wrote it: the document parsed, dumped
	 * compact (nothing in it that jansson writes raw but wg_json_dump escapes) */
	char *compact = NULL;
	ck_assert_int_eq(wg_reports_format(&compact, WG_FORMAT_JSON_COMPACT, rs, t, paths, cr,
					   errors, 3, WG_SEV_ERROR), WG_OK);
	json_t *pj = json_loads(plain, 0, NULL);
	char *redump = json_dumps(pj, JSON_COMPACT);
	ck_assert_str_eq(compact, redump);
	free(redump);
	json_decref(pj);
	wg_free(compact);
	/* other formats pass through */
	char *text = NULL, *text2 = NULL;
	d.format = WG_FORMAT_TEXT;
	ck_assert_int_eq(wg_reports_format_doc(&text, &d), WG_OK);
	ck_assert_int_eq(wg_reports_format(&text2, WG_FORMAT_TEXT, rs, t, paths, cr, errors, 3,
					   WG_SEV_ERROR), WG_OK);
	ck_assert_str_eq(text, text2);
	wg_free(text);
	wg_free(text2);
	d.version = 99;
	ck_assert_int_eq(wg_reports_format_doc(&text, &d), WG_EINVAL);
	wg_free(plain);
	wg_free(doc0);
	for (size_t i = 0; i < 2; i++)
		wg_report_free(reps[i]);
	wg_target_free(t);
	wg_ruleset_free(rs);
}
END_TEST

START_TEST(test_verdicts_and_refusals)
{
	ck_assert_str_eq(wg_verdict_name(WG_VERDICT_PASS), "pass");
	ck_assert_str_eq(wg_verdict_name(WG_VERDICT_FAIL), "fail");
	ck_assert_str_eq(wg_verdict_name(WG_VERDICT_ERROR), "error");
	ck_assert_int_eq(wg_report_verdict(NULL, WG_SEV_ERROR), WG_VERDICT_ERROR);
	ck_assert_ptr_null(wg_report_path(NULL));
	wg_counts_info c = WG_COUNTS_INFO_INIT;
	ck_assert_int_eq(wg_report_counts(&c, NULL), WG_EINVAL);
	ck_assert_int_eq(wg_error_last_info()->klass, WG_ERROR_CLASS_INVALID);
	char *out = NULL;
	ck_assert_int_eq(wg_scan_record_format(&out, NULL), WG_EINVAL);
	wg_scan_record rec = WG_SCAN_RECORD_INIT;
	rec.version = 2;
	ck_assert_int_eq(wg_scan_record_format(&out, &rec), WG_EINVAL);
	ck_assert_ptr_null(out);
	/* a record of no target, nothing read */
	rec.version = WG_SCAN_RECORD_VERSION;
	rec.path = "x.whl";
	ck_assert_int_eq(wg_scan_record_format(&out, &rec), WG_OK);
	ck_assert_str_eq(out, "{\"schema\":\"wheelgate.scan/1\",\"path\":\"x.whl\",\"name\":null,"
			 "\"version\":null,\"tags\":[],\"sha256\":null,\"size\":null,\"targets\":[],"
			 "\"facts\":null,\"seconds\":0.0,\"error\":null}");
	wg_free(out);
	/* lines that are not records: the reader says why, as --resume prints it */
	wg_scanrec *r = NULL;
	ck_assert_int_eq(wg_scanrec_parse(&r, "{\"schema\": \"x\"}", 15), WG_EFORMAT);
	ck_assert_str_eq(wg_error_last(), "not a wheelgate.scan/1 record");
	ck_assert_int_eq(wg_scanrec_parse(&r, "[1, 2]", 6), WG_EFORMAT);
	ck_assert_int_eq(wg_scanrec_parse(&r, "{\"schema\": \"wheelgate.scan/1\"", 29), WG_EFORMAT);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "not a wheelgate.scan/1 record: "));
	ck_assert_ptr_null(r);
	/* a record whose targets are not what the accessors need: refused, the field named */
	static const struct { const char *line, *why; } bad[] = {
		{"{\"schema\": \"wheelgate.scan/1\"}", "\"targets\" is not an array"},
		{"{\"schema\": \"wheelgate.scan/1\", \"targets\": [{\"verdict\": 3}, 7]}",
		 "targets[0]: not an object with a string \"target\""},
		{"{\"schema\": \"wheelgate.scan/1\", \"targets\": [{\"target\": \"a\", "
		 "\"verdict\": \"pass\"}, 7]}", "targets[1]: not an object"},
		{"{\"schema\": \"wheelgate.scan/1\", \"targets\": [{\"target\": \"a\", "
		 "\"verdict\": \"maybe\"}]}", "targets[0]: \"verdict\" is not pass, fail or error"},
		{"{\"schema\": \"wheelgate.scan/1\", \"targets\": [{\"target\": \"a\", "
		 "\"verdict\": \"fail\", \"findings\": {}}]}", "is not an array"},
		{"{\"schema\": \"wheelgate.scan/1\", \"targets\": [{\"target\": \"a\", "
		 "\"verdict\": \"fail\", \"findings\": [{\"rule\": \"R\", \"severity\": "
		 "\"fatal\"}]}]}", "targets[0].findings[0]: not a finding"},
		{"{\"schema\": \"wheelgate.scan/1\", \"targets\": [{\"target\": \"a\", "
		 "\"verdict\": \"fail\", \"findings\": [{\"rule\": \"R\", \"severity\": "
		 "\"error\", \"message\": 5}]}]}", "targets[0].findings[0]: not a finding"},
		{"{\"schema\": \"wheelgate.scan/1\", \"targets\": [{\"target\": \"a\", "
		 "\"verdict\": \"fail\", \"more\": [{\"rule\": \"R\", \"count\": -2}]}]}",
		 "targets[0].more[0]: not a counted finding"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(wg_scanrec_parse(&r, bad[i].line, strlen(bad[i].line)), WG_EFORMAT);
		ck_assert_ptr_null(r);
		ck_assert_msg(strstr(wg_error_last(), bad[i].why), "%s: %s", bad[i].line,
			      wg_error_last());
	}
	/* fields the accessors read leniently: missing or of other types, nothing read, no crash */
	const char *odd = "{\"schema\": \"wheelgate.scan/1\", \"sha256\": \"ABC\", \"size\": -4, "
			  "\"targets\": [{\"target\": \"t\", \"verdict\": \"error\", \"counts\": "
			  "{\"error\": -1}, \"findings\": null}, {\"target\": \"u\", \"verdict\": "
			  "\"fail\", \"findings\": [{\"rule\": \"R\", \"severity\": \"warning\"}], "
			  "\"more\": [{\"rule\": \"M\", \"count\": 9, \"counts\": {\"info\": \"x\"}}]}]}";
	ck_assert_int_eq(wg_scanrec_parse(&r, odd, strlen(odd)), WG_OK);
	wg_scanrec_info ri = WG_SCANREC_INFO_INIT;
	ck_assert_int_eq(wg_scanrec_get(&ri, r), WG_OK);
	ck_assert_ptr_null(ri.sha256);
	ck_assert_ptr_null(ri.path);
	ck_assert_int_eq(ri.size, -1);
	ck_assert_uint_eq(ri.ntargets, 2);
	wg_scanrec_target_info ti = WG_SCANREC_TARGET_INFO_INIT;
	ck_assert_int_eq(wg_scanrec_target(&ti, r, 0), WG_OK);
	ck_assert_int_eq(ti.verdict, WG_VERDICT_ERROR);
	ck_assert_uint_eq(ti.counts[2], 0);
	ck_assert_str_eq(ti.target, "t");
	ck_assert_uint_eq(ti.nfindings, 0);
	ck_assert_int_eq(wg_scanrec_target(&ti, r, 1), WG_OK);
	ck_assert_uint_eq(ti.nfindings, 1);
	ck_assert_uint_eq(ti.nmore, 1);
	wg_scanrec_finding_info sf = WG_SCANREC_FINDING_INFO_INIT;
	ck_assert_int_eq(wg_scanrec_finding(&sf, r, 1, 0), WG_OK);
	ck_assert_int_eq(sf.severity, WG_SEV_WARNING);
	ck_assert_ptr_null(sf.message);
	ck_assert_int_eq(wg_scanrec_finding(&sf, r, 0, 0), WG_ENOTFOUND);
	ck_assert_int_eq(wg_scanrec_finding(&sf, r, 5, 0), WG_ENOTFOUND);
	wg_scanrec_more_info sm = WG_SCANREC_MORE_INFO_INIT;
	ck_assert_int_eq(wg_scanrec_more(&sm, r, 1, 0), WG_OK);
	ck_assert_uint_eq(sm.count, 9);
	ck_assert_uint_eq(sm.severity[0], 0);
	sm.version = 9;
	ck_assert_int_eq(wg_scanrec_more(&sm, r, 1, 0), WG_EINVAL);
	/* a caller built against version 1 of the target info gets no count it has no room for */
	struct { wg_scanrec_target_info ti; } v1 = {WG_SCANREC_TARGET_INFO_INIT};
	v1.ti.version = 1;
	v1.ti.nfindings = 77;
	ck_assert_int_eq(wg_scanrec_target(&v1.ti, r, 1), WG_OK);
	ck_assert_uint_eq(v1.ti.nfindings, 77);
	ck_assert_int_eq(wg_scanrec_target(&ti, r, 2), WG_ENOTFOUND);
	wg_scanrec_free(r);
	wg_scanrec_free(NULL);
}
END_TEST

Suite *suite_report_api(void)
{
	Suite *s = suite_create("report_api");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 600);
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_add_test(tc, test_accessors_and_records_agree);
	tcase_add_test(tc, test_bounded_reports_agree);
	tcase_add_test(tc, test_document_additions);
	tcase_add_test(tc, test_verdicts_and_refusals);
	suite_add_tcase(s, tc);
	return s;
}

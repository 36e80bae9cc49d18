/*
 * The rule engine through the public API: the shipped rules and their examples (the rule
 * self-test), target parsing, enable/disable, and findings on fixtures.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/data.h"
#include "model/target.h"
#include "rules/rulefile_internal.h"
#include "test_util.h"

/* How many rules the shipped rule files hold (lines "  - id: " of the rules/default YAML files, as
 * compiled in), and how many of those ship switched off ("    enabled: false"): counted from
 * the files, not the loader, so that a rule added or lost shows here without a typed count. */
static size_t shipped_lines(const char *line)
{
	size_t n = 0, len = strlen(line);
	for (const wg_data_file *f = wg_data_files; f->path; f++) {
		if (strncmp(f->path, "default/", 8))
			continue;
		for (size_t i = 0; i + len <= f->len; i++)
			n += (i == 0 || f->text[i - 1] == '\n') && !memcmp(f->text + i, line, len);
	}
	return n;
}

START_TEST(test_shipped_rules_self_test)
{
	wg_ruleset *rs;
	char *report = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	ck_assert_uint_gt(shipped_lines("  - id: "), 40);
	ck_assert_uint_eq(wg_ruleset_count(rs), shipped_lines("  - id: "));
	int rc = wg_ruleset_self_test(rs, &report);
	ck_assert_msg(rc == WG_OK, "rule examples failing:\n%s", report ? report : "");
	wg_free(report);
	/* Every shipped rule comes from rules/default and has a title, a message and a fix. */
	for (size_t i = 0; i < wg_ruleset_count(rs); i++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		ck_assert_int_eq(wg_ruleset_rule(&ri, rs, i), WG_OK);
		ck_assert_msg(!strncmp(ri.source, "rules/default/", 14), "%s from %s", ri.id, ri.source);
		ck_assert(ri.enabled && *ri.title && *ri.fix);
		ck_assert(!strncmp(ri.id, "WG-", 3));
	}
	wg_ruleset_free(rs);
}
END_TEST

static const struct {
	const char *spec;
	int ok;
	unsigned py_major, py_minor, cuda_major, cuda_minor;
	int abi;
	const char *torch;
} targets[] = {
	{"python=3.12,torch=2.9.1+cu128,cxx11abi=0,cuda=12.8", 1, 3, 12, 12, 8, 0, "2.9.1+cu128"},
	{"torch=2.11.0+cu130", 1, 0, 0, 13, 0, -1, "2.11.0+cu130"},
	{"cuda=12.6,torch=2.9.1+cu128", 1, 0, 0, 12, 6, -1, "2.9.1+cu128"}, /* cuda= wins */
	{"cxx11abi=true", 1, 0, 0, 0, 0, 1, ""},
	{"torch=2.9.1", 1, 0, 0, 0, 0, -1, "2.9.1"},
	{"python=3", 0, 0, 0, 0, 0, -1, ""},
	{"torch=two", 0, 0, 0, 0, 0, -1, ""},
	{"cuda=13", 0, 0, 0, 0, 0, -1, ""},
	{"gpu=sm_90", 0, 0, 0, 0, 0, -1, ""},
	{"python=3.12,", 1, 3, 12, 0, 0, -1, ""},
	{"=3", 0, 0, 0, 0, 0, -1, ""},
};

START_TEST(test_target_parse)
{
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	int rc = wg_target_parse(t, targets[_i].spec);
	ck_assert_msg((rc == WG_OK) == targets[_i].ok, "%s: %d %s", targets[_i].spec, rc,
		      wg_error_last());
	if (!targets[_i].ok) {
		ck_assert_ptr_nonnull(strstr(wg_error_last(), "--target"));
		wg_target_free(t);
		return;
	}
	ck_assert_uint_eq(t->python_major, targets[_i].py_major);
	ck_assert_uint_eq(t->python_minor, targets[_i].py_minor);
	ck_assert_uint_eq(t->cuda_major, targets[_i].cuda_major);
	ck_assert_uint_eq(t->cuda_minor, targets[_i].cuda_minor);
	ck_assert_int_eq(t->cxx11abi, targets[_i].abi);
	ck_assert_str_eq(t->torch, targets[_i].torch);
	wg_target_free(t);
}
END_TEST

START_TEST(test_enable_disable)
{
	wg_ruleset *rs = NULL;
	const char *off[] = {"WG-GPU-002", "WG-ABI-001"};
	const char *bogus[] = {"WG-XYZ-000"};
	wg_ruleset_options o = WG_RULESET_OPTIONS_INIT;
	o.disable = off;
	o.ndisable = 2;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, &o), WG_OK);
	size_t enabled = 0;
	for (size_t i = 0; i < wg_ruleset_count(rs); i++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		wg_ruleset_rule(&ri, rs, i);
		enabled += ri.enabled;
	}
	/* all shipped, but those shipped off and the two disabled here */
	ck_assert_uint_eq(enabled, shipped_lines("  - id: ") - shipped_lines("    enabled: false") - 2);
	wg_ruleset_free(rs);
	o.disable = bogus;
	o.ndisable = 1;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, &o), WG_EINVAL);
	ck_assert_ptr_null(rs);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "--disable: no rule 'WG-XYZ-000'"));
}
END_TEST

/* How many rules are off after disabling sel (*rc: what wg_ruleset_new returned). */
static size_t disabled_by(const char *sel, int *rc)
{
	wg_ruleset_options o = WG_RULESET_OPTIONS_INIT;
	const char *const d[] = {sel};
	o.disable = d;
	o.ndisable = 1;
	wg_ruleset *rs = NULL;
	size_t off = 0;
	*rc = wg_ruleset_new(&rs, t_ctx, &o);
	for (size_t i = 0; rs && i < wg_ruleset_count(rs); i++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		wg_ruleset_rule(&ri, rs, i);
		off += !ri.enabled;
	}
	wg_ruleset_free(rs);
	return off;
}

START_TEST(test_rule_selectors)
{
	wg_ruleset *rs = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	size_t off0 = 0, sys = 0, hol = 0, sys00 = 0, wg = wg_ruleset_count(rs);
	for (size_t i = 0; i < wg_ruleset_count(rs); i++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		wg_ruleset_rule(&ri, rs, i);
		off0 += !ri.enabled;
		sys += ri.enabled && !strncmp(ri.id, "WG-SYS-", 7);
		sys00 += ri.enabled && !strncmp(ri.id, "WG-SYS-00", 9);
		hol += ri.enabled && !strcmp(ri.check, "hollow-wheel");
		wg -= !ri.enabled;
	}
	wg_ruleset_free(rs);
	ck_assert_uint_gt(sys, 1);
	ck_assert_uint_eq(hol, 1);
	int rc;
	/* id prefix, any case */
	ck_assert_uint_eq(disabled_by("WG-SYS", &rc), off0 + sys);
	ck_assert_int_eq(rc, WG_OK);
	ck_assert_uint_eq(disabled_by("wg-sys", &rc), off0 + sys);
	ck_assert_uint_eq(disabled_by("WG", &rc), off0 + wg);
	/* a prefix ends at a '-': WG-SY is no prefix */
	disabled_by("WG-SY", &rc);
	ck_assert_int_eq(rc, WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "did you mean 'WG-SYS'?"));
	/* exact id in lower case, name, name with '_', glob */
	ck_assert_uint_eq(disabled_by("wg-sys-001", &rc), off0 + 1);
	ck_assert_uint_eq(disabled_by("hollow-wheel", &rc), off0 + 1);
	ck_assert_uint_eq(disabled_by("HOLLOW_WHEEL", &rc), off0 + 1);
	ck_assert_uint_eq(disabled_by("wg-sys-*", &rc), off0 + sys);
	ck_assert_uint_eq(disabled_by("WG-SYS-00?", &rc), off0 + sys00);
	ck_assert_uint_eq(disabled_by("hollow-*", &rc), off0 + 1);
	ck_assert_int_eq(rc, WG_OK);
	/* matches nothing: an error naming it, with the nearest */
	disabled_by("hollow-weel", &rc);
	ck_assert_int_eq(rc, WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "--disable: no rule 'hollow-weel'"));
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "did you mean 'hollow-wheel'?"));
	disabled_by("WG-SYS-01", &rc);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "did you mean 'WG-SYS-001'?"));
	disabled_by("XYZ-*", &rc);
	ck_assert_int_eq(rc, WG_EINVAL);
	ck_assert_ptr_null(strstr(wg_error_last(), "did you mean"));
	const char *const names[] = {"check", "audit", "inspect"};
	ck_assert_str_eq(wg_suggest("chekc", names, 3), "check");
	ck_assert_str_eq(wg_suggest("INSPCT", names, 3), "inspect");
	ck_assert_ptr_null(wg_suggest("frobnicate", names, 3));
}
END_TEST

START_TEST(test_user_rule_file_errors)
{
	char path[] = "/tmp/wg-rule-XXXXXX.yaml";
	int fd = mkstemps(path, 5);
	ck_assert_int_ge(fd, 0);
	static const char text[] = "kind: rules\nrules:\n  - id: X-1\n    check: abi-mismatch\n"
				   "    severity: error\n    title: t\n    message: m\n    fix: f\n";
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (int)sizeof(text) - 1);
	close(fd);
	const char *paths[] = {path};
	wg_ruleset_options o = WG_RULESET_OPTIONS_INIT;
	o.rule_paths = paths;
	o.nrule_paths = 1;
	wg_ruleset *rs = NULL;
	/* abi-mismatch needs its `libraries` pattern list. */
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, &o), WG_EDATA);
	char want[256];
	snprintf(want, sizeof(want), "%s:3:5: rule X-1: check 'abi-mismatch' needs a pattern list "
		 "'libraries'", path);
	ck_assert_msg(strstr(wg_error_last(), want), "%s", wg_error_last());
	unlink(path);
}
END_TEST

/* A rule file of its own (the path is written into path, 32 bytes). */
static wg_ruleset *rules_from(char *path, const char *text)
{
	snprintf(path, 32, "/tmp/wg-rule-XXXXXX.yaml");
	int fd = mkstemps(path, 5);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	const char *paths[] = {path};
	wg_ruleset_options o = WG_RULESET_OPTIONS_INIT;
	o.rule_paths = paths;
	o.nrule_paths = 1;
	o.no_default_rules = 1;
	wg_ruleset *rs = NULL;
	wg_ruleset_new(&rs, t_ctx, &o);
	unlink(path);
	return rs;
}

/* `when: {input: ...}` picks the kind of input a rule judges: the same check kind says one
 * thing of a wheel (WG-REC-001) and another of an installed copy (WG-REC-004). */
START_TEST(test_rule_when_input)
{
	char path[32];
	ck_assert_ptr_null(rules_from(path, "kind: rules\nrules:\n  - id: X-1\n    check: "
				      "record-mismatch\n    severity: error\n    title: t\n"
				      "    message: m\n    fix: f\n    when: {input: wheels}\n"));
	char want[128];
	snprintf(want, sizeof(want), "%s:9:19: when: input 'wheels' is none of wheel, installed", path);
	ck_assert_msg(strstr(wg_error_last(), want), "%s", wg_error_last());
	wg_ruleset *rs = rules_from(path, "kind: rules\nrules:\n"
				    "  - id: X-W\n    check: record-mismatch\n    severity: error\n"
				    "    title: t\n    message: '{member} {file}'\n    fix: f\n"
				    "    when: {input: wheel}\n"
				    "  - id: X-I\n    check: record-mismatch\n    severity: error\n"
				    "    title: t\n    message: m\n    fix: f\n    when: {input: installed}\n"
				    "  - id: X-K\n    check: record-mismatch\n    severity: error\n"
				    "    title: t\n    message: m\n    fix: f\n    when: {input: known}\n"
				    "  - id: X-IT\n    check: record-mismatch\n    severity: error\n"
				    "    title: t\n    message: m\n    fix: f\n"
				    "    when: {input: installed, torch: known}\n"
				    "  - id: X-WT\n    check: record-mismatch\n    severity: error\n"
				    "    title: t\n    message: m\n    fix: f\n"
				    "    when: {torch: known, input: wheel}\n");
	ck_assert_msg(rs, "%s", wg_error_last());
	wg_scan *s = t_scan(FIX_WHEELS "/badrec-1.0-py3-none-any.whl");
	wg_report *r = NULL;
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, NULL), WG_OK);
	unsigned w = 0, k = 0;
	for (size_t i = 0; i < wg_report_count(r); i++) {
		wg_finding_info f = WG_FINDING_INFO_INIT;
		ck_assert_int_eq(wg_report_finding(&f, r, i), WG_OK);
		ck_assert_str_ne(f.rule, "X-I");
		if (!strcmp(f.rule, "X-W")) {
			w++;
			/* a wheel's member is its own {file} */
			char m[256];
			snprintf(m, sizeof(m), "%s %s", f.member, f.member);
			ck_assert_str_eq(f.message, m);
		}
		k += !strcmp(f.rule, "X-K");
	}
	ck_assert_uint_eq(w, 2); /* badrec/a.py, badrec/b.py */
	ck_assert_uint_eq(k, 2);
	/* another input's rule is no question of this one: not listed as not applied, whatever
	 * else it lacks; this input's rule that lacks the torch is */
	ck_assert_uint_eq(wg_report_not_applied_count(r), 1);
	wg_not_applied_info na = WG_NOT_APPLIED_INFO_INIT;
	ck_assert_int_eq(wg_report_not_applied(&na, r, 0), WG_OK);
	ck_assert_str_eq(na.rule, "X-WT");
	wg_report_free(r);
	wg_scan_free(s);
	wg_ruleset_free(rs);
}
END_TEST

START_TEST(test_findings_on_fixtures)
{
	wg_ruleset *rs;
	wg_target *t = NULL;
	wg_report *r = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_int_eq(wg_target_parse(t, "cxx11abi=1"), WG_OK);
	wg_scan *s = t_scan(FIX_WHEELS "/flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl");
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, t), WG_OK);
	wg_target_free(t);
	ck_assert_int_eq(wg_report_worst(r), WG_SEV_ERROR);
	wg_finding_info f = WG_FINDING_INFO_INIT;
	bool found = false;
	for (size_t i = 0; i < wg_report_count(r); i++) {
		ck_assert_int_eq(wg_report_finding(&f, r, i), WG_OK);
		if (strcmp(f.rule, "WG-ABI-001"))
			continue;
		found = true;
		ck_assert_str_eq(f.member, "flash_attn_2_cuda" EXT_SFX);
		ck_assert_ptr_nonnull(f.symbol);
		ck_assert_ptr_nonnull(strstr(f.message, f.symbol));
		ck_assert_ptr_nonnull(strstr(f.fix, "-D_GLIBCXX_USE_CXX11_ABI=1"));
	}
	ck_assert(found);
	wg_report_free(r);
	/* Without a known ABI the rule does not apply: the same wheel passes it. */
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, NULL), WG_OK);
	for (size_t i = 0; i < wg_report_count(r); i++) {
		wg_report_finding(&f, r, i);
		ck_assert_str_ne(f.rule, "WG-ABI-001");
	}
	wg_report_free(r);
	wg_scan_free(s);
	wg_ruleset_free(rs);
}
END_TEST


/* What `wheelgate explain` tells (issue 29): every shipped rule gives looks_at, why and
 * example {fails, passes} (wg_rule_info version 4); the loader refuses a shipped rule that
 * lacks one, and lets a user's rule leave them out (NULL). */
static int load_one(wg_ruleset *rs, const char *yaml, bool shipped, char *msg, size_t n)
{
	wg_yaml_doc *doc = NULL;
	wg_err err = {0};
	int rc = wg_yaml_parse(&doc, "t.yaml", yaml, strlen(yaml), &err);
	if (rc == WG_OK)
		rc = wg_rulefile_load_rule(rs, wg_yaml_item(wg_yaml_get(wg_yaml_root(doc), "rules"), 0),
					   "t.yaml", shipped, &err);
	snprintf(msg, n, "%s", err.msg);
	wg_yaml_free(doc);
	return rc;
}

START_TEST(test_rules_explain_fields)
{
	wg_ruleset *rs;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	for (size_t i = 0; i < wg_ruleset_count(rs); i++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		ck_assert_int_eq(wg_ruleset_rule(&ri, rs, i), WG_OK);
		const char *t[] = {ri.message, ri.looks_at, ri.why, ri.example_fails, ri.example_passes};
		for (size_t k = 0; k < 5; k++)
			ck_assert_msg(t[k] && strlen(t[k]) > (k ? 20 : 0), "%s: text %zu missing", ri.id,
				      k);
	}
	wg_ruleset_free(rs);
	wg_ruleset_options o = WG_RULESET_OPTIONS_INIT;
	o.no_default_rules = 1;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, &o), WG_OK);
	static const char head[] = "kind: rules\nrules:\n  - id: T-1\n    check: gpu-no-code\n"
		"    severity: error\n    title: t\n    message: m\n    fix: f\n"
		"    patterns: {runtime: ['^libcudart']}\n"
		"    examples: {runtime: {match: [libcudart.so.12], no_match: [libc.so.6]}}\n";
	static const char *const cases[][2] = {
		{"", "a shipped rule needs 'example: {fails: TEXT, passes: TEXT}'"},
		{"    example: {fails: a, passes: b}\n    why: w\n", "a shipped rule needs 'looks_at'"},
		{"    example: {fails: a, passes: b}\n    looks_at: l\n", "a shipped rule needs 'why'"},
		{"    example: {fails: a}\n    looks_at: l\n    why: w\n", "'example' needs 'passes'"},
		{"    example: {fails: a, passes: ''}\n    looks_at: l\n    why: w\n",
		 "needs a text in 'passes'"},
		{"    example: {fails: a, passes: b, maybe: c}\n    looks_at: l\n    why: w\n",
		 "unknown example field 'maybe'"},
		{"    example: [a, b]\n    looks_at: l\n    why: w\n", "'example' must be {fails"},
	};
	char yaml[2048], msg[1100];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(yaml, sizeof(yaml), "%s%s", head, cases[i][0]);
		ck_assert_int_eq(load_one(rs, yaml, true, msg, sizeof(msg)), WG_EDATA);
		ck_assert_msg(strstr(msg, cases[i][1]), "case %zu: %s", i, msg);
	}
	/* a user's rule may leave all of them out; one it gives is kept */
	snprintf(yaml, sizeof(yaml), "%s", head);
	ck_assert_int_eq(load_one(rs, yaml, false, msg, sizeof(msg)), WG_OK);
	snprintf(yaml, sizeof(yaml), "%s    why: w\n", head);
	ck_assert_int_eq(load_one(rs, yaml, false, msg, sizeof(msg)), WG_OK);
	snprintf(yaml, sizeof(yaml), "%s    example: {fails: a, passes: b}\n    looks_at: l\n"
		 "    why: w\n", head);
	ck_assert_int_eq(load_one(rs, yaml, true, msg, sizeof(msg)), WG_OK);
	wg_rule_info ri = WG_RULE_INFO_INIT;
	ck_assert_int_eq(wg_ruleset_rule(&ri, rs, 0), WG_OK);
	ck_assert_str_eq(ri.why, "w");
	ck_assert_str_eq(ri.looks_at, "l");
	ck_assert_str_eq(ri.example_fails, "a");
	ck_assert_str_eq(ri.example_passes, "b");
	ck_assert_uint_eq(ri.npattern_lists, 1);
	wg_rule_patterns_info pi = WG_RULE_PATTERNS_INFO_INIT;
	ck_assert_int_eq(wg_ruleset_rule_patterns(&pi, rs, 0, 0), WG_OK);
	ck_assert_str_eq(pi.name, "runtime");
	ck_assert(pi.nmatch == 1 && !strcmp(pi.match[0], "libcudart.so.12"));
	ck_assert(pi.nno_match == 1 && !strcmp(pi.no_match[0], "libc.so.6"));
	ck_assert_int_eq(wg_ruleset_rule_patterns(&pi, rs, 0, 1), WG_ENOTFOUND);
	wg_ruleset_free(rs);
}
END_TEST

Suite *suite_rules(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("rules");
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_add_test(tc, test_shipped_rules_self_test);
	tcase_add_test(tc, test_rules_explain_fields);
	tcase_add_loop_test(tc, test_target_parse, 0, (int)(sizeof(targets) / sizeof(targets[0])));
	tcase_add_test(tc, test_enable_disable);
	tcase_add_test(tc, test_rule_selectors);
	tcase_add_test(tc, test_user_rule_file_errors);
	tcase_add_test(tc, test_rule_when_input);
	tcase_add_test(tc, test_findings_on_fixtures);
	suite_add_tcase(s, tc);
	return s;
}

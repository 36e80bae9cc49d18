/*
 * Symbol classification from data: the shipped examples, a table of real symbol names, and
 * broken data files that must be refused with file:line:col.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "core/data.h"
#include "facts/facts.h"
#include "test_util.h"

static const wg_data_file *shipped(void)
{
	for (const wg_data_file *f = wg_data_files; f->path; f++)
		if (!strcmp(f->path, "classify/string-abi.yaml"))
			return f;
	return NULL;
}

START_TEST(test_shipped_examples)
{
	const wg_data_file *f = shipped();
	wg_classifier *c;
	wg_err err = {0};
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(wg_classifier_load(&c, f->path, f->text, f->len, &err), WG_OK);
	ck_assert_msg(wg_classifier_self_test(c, &err) == WG_OK, "%s", err.msg);
	wg_classifier_free(c);
}
END_TEST

static const struct {
	const char *sym;
	unsigned abi;
	bool torch, runtime;
} table[] = {
	/* The two symbols of the seed failure, one per ABI. */
	{"_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
	 WG_SYM_NEW_STRING, true, false},
	{"_ZN3c106detail14torchCheckFailEPKcS2_jRKSs", WG_SYM_OLD_STRING, true, false},
	{"_ZN3c106detail14torchCheckFailEPKcS2_jS2_", 0, true, false},
	{"_ZNK2at6Tensor4sizeEl", 0, true, false},
	{"_ZN5torch3jit4loadERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt8optionalIN3c106DeviceEEb",
	 WG_SYM_NEW_STRING, true, false},
	/* Both ABIs in one signature (a converter). */
	{"_ZN3foo7convertERKSsRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
	 WG_SYM_NEW_STRING | WG_SYM_OLD_STRING, false, false},
	/* The runtime's own. */
	{"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm", WG_SYM_NEW_STRING,
	 false, true},
	{"_ZNSs4_Rep9_S_createEmmRKSaIcE", WG_SYM_OLD_STRING, false, true},
	{"_ZSt4cout", 0, false, true},
	/* A std template instantiated over a torch type is not torch's. */
	{"_ZNSt6vectorIN2at6TensorESaIS1_EE17_M_realloc_insertIJRKS1_EEEvN9__gnu_cxx17__normal_iteratorIPS1_S3_EEDpOT_",
	 0, false, true},
	{"PyInit_flash_attn_2_cuda", 0, false, false},
	{"memcpy", 0, false, false},
};

START_TEST(test_table)
{
	wg_matcher *m;
	ck_assert_int_eq(wg_matcher_new(&m, t_ctx->classifier), WG_OK);
	char *dem = wg_demangle(table[_i].sym);
	unsigned abi;
	bool torch, runtime;
	wg_classify_symbol(m, table[_i].sym, dem, &abi, &torch, &runtime);
	ck_assert_msg(abi == table[_i].abi && torch == table[_i].torch &&
			      runtime == table[_i].runtime,
		      "%s (%s): abi %u torch %d runtime %d", table[_i].sym, dem ? dem : "-", abi,
		      torch, runtime);
	free(dem);
	wg_matcher_free(m);
}
END_TEST

static const struct {
	const char *text, *msg;
} broken[] = {
	{"kind: string-abi\nclasses: [unclosed\n", "broken.yaml:3:1: did not find expected"},
	{"kind: rules\n", "broken.yaml:1:1: expected 'kind: string-abi'"},
	{"kind: string-abi\nclasses:\n  new_string:\n    on: demangled\n    patterns: ['(']\n",
	 "broken.yaml:5:16: bad pattern at offset 1: missing closing parenthesis"},
	{"kind: string-abi\nclasses:\n  new_string:\n    on: sideways\n    patterns: [a]\n",
	 "broken.yaml:4:5: class 'new_string': 'on' must be mangled or demangled"},
	{"kind: string-abi\nclasses:\n  new_string:\n    on: mangled\n    patterns: [a]\n",
	 "missing class 'old_string'"},
	{"kind: string-abi\nclasses:\n  new_string:\n    on: mangled\n    patterns: []\n",
	 "needs a non-empty 'patterns' list"},
	{"kind: string-abi\nclasses:\n  new_string:\n    on: mangled\n    patterns: [a]\n"
	 "    match: {x: 1}\n",
	 "broken.yaml:6:12: 'match' must be a list"},
	{"", "empty document"},
};

START_TEST(test_broken)
{
	wg_classifier *c = NULL;
	wg_err err = {0};
	const char *t = broken[_i].text;
	ck_assert_int_eq(wg_classifier_load(&c, "broken.yaml", t, strlen(t), &err), WG_EDATA);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err.msg, broken[_i].msg), "'%s' lacks '%s'", err.msg, broken[_i].msg);
}
END_TEST

START_TEST(test_examples_must_hold)
{
	/* An example that contradicts its class fails the self-test, naming it. */
	static const char t[] =
		"kind: string-abi\nclasses:\n"
		"  new_string: {on: demangled, patterns: ['__cxx11'], match: [_ZNKSs4sizeEv]}\n"
		"  old_string: {on: demangled, patterns: ['x']}\n"
		"  torch_facing: {on: mangled, patterns: ['x']}\n"
		"  runtime: {on: mangled, patterns: ['x']}\n";
	wg_classifier *c;
	wg_err err = {0};
	ck_assert_int_eq(wg_classifier_load(&c, "t.yaml", t, strlen(t), &err), WG_OK);
	ck_assert_int_eq(wg_classifier_self_test(c, &err), WG_EDATA);
	ck_assert_ptr_nonnull(strstr(err.msg, "class new_string: example _ZNKSs4sizeEv does not match"));
	wg_classifier_free(c);
}
END_TEST

Suite *suite_classify(void)
{
	Suite *s = suite_create("classify");
	TCase *tc = tcase_create("classify");
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_add_test(tc, test_shipped_examples);
	tcase_add_loop_test(tc, test_table, 0, (int)(sizeof(table) / sizeof(table[0])));
	tcase_add_loop_test(tc, test_broken, 0, (int)(sizeof(broken) / sizeof(broken[0])));
	tcase_add_test(tc, test_examples_must_hold);
	suite_add_tcase(s, tc);
	return s;
}

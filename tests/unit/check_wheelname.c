/*
 * Wheel filenames: names, PEP 440 versions with local labels, build tags, compressed tag
 * sets, and the reasons invalid names are rejected.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "facts/facts.h"
#include "test_util.h"

typedef struct {
	const char *file;
	const char *name, *version, *public_version, *local, *build;
	const char *py, *abi, *plat; /* tags joined with '.' */
} good_case;

static const good_case good[] = {
	{"flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", "flash_attn",
	 "2.8.3+cu12torch2.8cxx11abiTRUE", "2.8.3", "cu12torch2.8cxx11abiTRUE", NULL, "cp312",
	 "cp312", "linux_x86_64"},
	{"multi-1.0-1build-py2.py3-none-manylinux_2_28_x86_64.manylinux2014_x86_64.whl", "multi",
	 "1.0", "1.0", NULL, "1build", "py2.py3", "none",
	 "manylinux_2_28_x86_64.manylinux2014_x86_64"},
	{"torch-2.11.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl", "torch", "2.11.0+cu130",
	 "2.11.0", "cu130", NULL, "cp312", "cp312", "manylinux_2_28_x86_64"},
	{"six-1.16.0-py2.py3-none-any.whl", "six", "1.16.0", "1.16.0", NULL, NULL, "py2.py3",
	 "none", "any"},
	{"pkg-1!2.0rc1.post3.dev4-py3-none-any.whl", "pkg", "1!2.0rc1.post3.dev4",
	 "1!2.0rc1.post3.dev4", NULL, NULL, "py3", "none", "any"},
	{"cryptography-42.0.0-cp39-abi3-manylinux_2_28_aarch64.whl", "cryptography", "42.0.0",
	 "42.0.0", NULL, NULL, "cp39", "abi3", "manylinux_2_28_aarch64"},
	{"a.b_c-0.1-py3-none-any.whl", "a.b_c", "0.1", "0.1", NULL, NULL, "py3", "none", "any"},
};

static const struct {
	const char *file, *reason;
} bad[] = {
	{"foo-1.0-py3-none.whl", "found 4 parts"},
	{"foo-bar-1.0-1-py3-none-any.whl", "too many"},
	{"foo-1.0-x1-py3-none-any.whl", "build tag 'x1' must start with a digit"},
	{"foo-1.0-py3-none-any.zip", "must end in .whl"},
	{"foo-1.0beta!x-py3-none-any.whl", "not a valid PEP 440 version"},
	{"foo-1.0+-py3-none-any.whl", "not a valid PEP 440 version"},
	{"_foo-1.0-py3-none-any.whl", "invalid distribution name"},
	{"foo-1.0-py3..py2-none-any.whl", "empty python tag"},
	{"foo-1.0-py3-no ne-any.whl", "invalid character ' ' in abi tag"},
	{"foo-1.0-py3-none-.whl", "empty platform tag"},
	{"foo-1.0-cp312-cp312-linux_x86_64-Bad.whl", "invalid variant label 'Bad'"},
	{"foo-1.0-1-cp312-cp312-linux_x86_64-x-y.whl", "too many"},
};


static const char *joined(wg_arena *a, const wg_strlist *l)
{
	wg_buf b = {0};
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			wg_buf_append(&b, ".", 1);
		wg_buf_append(&b, l->v[i], strlen(l->v[i]));
	}
	char *s = wg_arena_strdup(a, b.s ? b.s : "");
	wg_buf_free(&b);
	return s;
}

static void str_eq(const char *got, const char *want)
{
	if (!want)
		ck_assert_ptr_null(got);
	else
		ck_assert_str_eq(got, want);
}

START_TEST(test_good)
{
	const good_case *c = &good[_i];
	wg_arena a = {0};
	wg_wheelname wn;
	wg_err err = {0};
	ck_assert_msg(wg_wheelname_parse(&wn, &a, c->file, &err) == WG_OK, "%s: %s", c->file,
		      err.msg);
	ck_assert_str_eq(wn.name, c->name);
	ck_assert_str_eq(wn.version, c->version);
	ck_assert_str_eq(wn.public_version, c->public_version);
	str_eq(wn.local, c->local);
	str_eq(wn.build, c->build);
	ck_assert_str_eq(joined(&a, &wn.py), c->py);
	ck_assert_str_eq(joined(&a, &wn.abi), c->abi);
	ck_assert_str_eq(joined(&a, &wn.plat), c->plat);
	wg_strlist_free(&wn.py);
	wg_strlist_free(&wn.abi);
	wg_strlist_free(&wn.plat);
	wg_arena_free(&a);
}
END_TEST

START_TEST(test_bad)
{
	wg_arena a = {0};
	wg_wheelname wn;
	wg_err err = {0};
	ck_assert_int_eq(wg_wheelname_parse(&wn, &a, bad[_i].file, &err), WG_EFORMAT);
	ck_assert_msg(strstr(err.msg, bad[_i].reason) && strstr(err.msg, bad[_i].file),
		      "%s: message '%s' lacks '%s'", bad[_i].file, err.msg, bad[_i].reason);
	wg_arena_free(&a);
}
END_TEST

/* PEP 825: a variant label after the platform tag, with or without a build tag; six parts
 * whose third is no python tag stay a (bad) build tag. */
START_TEST(test_variant_label)
{
	static const struct {
		const char *file, *variant, *build, *plat;
	} c[] = {
		{"torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl", "cu128", NULL,
		 "manylinux_2_28_x86_64"},
		{"wgvar-1.0-2-cp312-cp312-linux_x86_64-sm90_a.1.whl", "sm90_a.1", "2", "linux_x86_64"},
		{"wgvar-1.0-2-py3-none-any.whl", NULL, "2", "any"},
		{"wgvar-1.0-py3-none-any-null.whl", "null", NULL, "any"},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		wg_arena a = {0};
		wg_wheelname wn;
		wg_err err = {0};
		ck_assert_msg(wg_wheelname_parse(&wn, &a, c[i].file, &err) == WG_OK, "%s: %s",
			      c[i].file, err.msg);
		str_eq(wn.variant, c[i].variant);
		str_eq(wn.build, c[i].build);
		ck_assert_str_eq(joined(&a, &wn.plat), c[i].plat);
		wg_strlist_free(&wn.py);
		wg_strlist_free(&wn.abi);
		wg_strlist_free(&wn.plat);
		wg_arena_free(&a);
	}
}
END_TEST

START_TEST(test_normalize)
{
	wg_arena a = {0};
	ck_assert_str_eq(wg_normalize_name(&a, "Flash_Attn"), "flash-attn");
	ck_assert_str_eq(wg_normalize_name(&a, "wgdemo-oldabi_sm90"), "wgdemo-oldabi-sm90");
	ck_assert_str_eq(wg_normalize_name(&a, "a.-_b"), "a-b");
	wg_arena_free(&a);
}
END_TEST

/* The public form (audit's --only and a dist-info's name): the same answers, bounded. */
START_TEST(test_name_normalize)
{
	char out[16];
	ck_assert_int_eq(wg_name_normalize(out, sizeof(out), "Flash_Attn", 10), 10);
	ck_assert_str_eq(out, "flash-attn");
	ck_assert_int_eq(wg_name_normalize(out, sizeof(out), "a.-_b", 5), 3);
	ck_assert_str_eq(out, "a-b");
	/* only the first len bytes: a dist-info's name before its version */
	ck_assert_int_eq(wg_name_normalize(out, sizeof(out), "PyYAML-6.0.dist-info", 6), 6);
	ck_assert_str_eq(out, "pyyaml");
	/* one that does not fit is refused whole, never cut to another name */
	ck_assert_int_eq(wg_name_normalize(out, 6, "abcdef", 6), WG_ELIMIT);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(wg_name_normalize(out, 6, "ab__cd", 6), 5);
	ck_assert_str_eq(out, "ab-cd");
	ck_assert_int_eq(wg_name_normalize(out, sizeof(out), "", 0), 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(wg_name_normalize(NULL, 4, "a", 1), WG_EINVAL);
	ck_assert_int_eq(wg_name_normalize(out, 0, "a", 1), WG_EINVAL);
}
END_TEST

Suite *suite_wheelname(void)
{
	Suite *s = suite_create("wheelname");
	TCase *tc = tcase_create("parse");
	tcase_add_loop_test(tc, test_good, 0, (int)(sizeof(good) / sizeof(good[0])));
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_variant_label);
	tcase_add_test(tc, test_normalize);
	tcase_add_test(tc, test_name_normalize);
	suite_add_tcase(s, tc);
	return s;
}

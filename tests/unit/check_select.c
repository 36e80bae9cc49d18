/*
 * `wheelgate select`'s version order (cli/select_version.c): PEP 440's own example ordering,
 * equal spellings, local labels ignored, text that is not a version.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "../../cli/select.h"
#include "test_util.h"

/* PEP 440's "summary of permitted suffixes and relative ordering", ascending. */
static const char *const ascending[] = {
	"1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456",
	"1.0b2", "1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0",
	"1.0.post456.dev34", "1.0.post456", "1.0.15", "1.1.dev1", "1.2", "1.10", "2.0",
	"1!0.1",
};

START_TEST(test_order)
{
	const char *a = ascending[_i], *b = ascending[_i + 1];
	ck_assert_msg(select_version_compare(a, b) < 0, "%s < %s", a, b);
	ck_assert_msg(select_version_compare(b, a) > 0, "%s > %s", b, a);
	ck_assert_int_eq(select_version_compare(a, a), 0);
}
END_TEST

static const char *const equal[][2] = {
	{"1.0", "1.0.0"}, {"1.0", "1.0+cu13torch2.11cxx11abiTRUE"}, {"v1.0", "1.0"},
	{"1.0-1", "1.0.post1"}, {"1.0RC1", "1.0rc1"}, {"1.0c1", "1.0rc1"},
	{"1.0alpha1", "1.0a1"}, {"1.0-r1", "1.0.post1"}, {"1.0.dev", "1.0.dev0"},
	{"2.8.3+cu12torch2.6cxx11abiFALSE", "2.8.3+cu13torch2.9cxx11abiTRUE"},
};

START_TEST(test_equal)
{
	ck_assert_msg(select_version_compare(equal[_i][0], equal[_i][1]) == 0, "%s == %s",
		      equal[_i][0], equal[_i][1]);
	ck_assert_msg(select_version_compare(equal[_i][1], equal[_i][0]) == 0, "%s == %s",
		      equal[_i][1], equal[_i][0]);
}
END_TEST

START_TEST(test_not_versions)
{
	/* not PEP 440: before every version, between themselves by strcmp */
	ck_assert_int_lt(select_version_compare("abc", "0.1"), 0);
	ck_assert_int_gt(select_version_compare("0.1", "1.0 junk"), 0);
	ck_assert_int_lt(select_version_compare("abc", "abd"), 0);
	ck_assert_int_lt(select_version_compare("99999999999999999999999", "0"), 0); /* overflow */
	ck_assert_int_lt(select_version_compare("", "0"), 0);
	/* 16 release segments fit; a 17th makes it not a version */
	ck_assert_int_gt(select_version_compare("1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1", "1"), 0);
	ck_assert_int_lt(select_version_compare("1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1", "0"), 0);
}
END_TEST

Suite *suite_select(void)
{
	Suite *s = suite_create("select");
	TCase *tc = tcase_create("version");
	tcase_add_loop_test(tc, test_order, 0, (int)(sizeof(ascending) / sizeof(ascending[0])) - 1);
	tcase_add_loop_test(tc, test_equal, 0, (int)(sizeof(equal) / sizeof(equal[0])));
	tcase_add_test(tc, test_not_versions);
	suite_add_tcase(s, tc);
	return s;
}

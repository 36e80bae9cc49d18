/*
 * Facts kept by content: a scan written with WG_JSON_FACTS and read back with
 * wg_scan_from_facts is the same scan (its full inspect document and its facts agree byte for
 * byte), names that are not UTF-8 included; broken documents are refused with a reason; the
 * store writes where wg_facts_path says and reads back what it wrote.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static const char *const inputs[] = {
	FIX_WHEELS "/flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl",
	FIX_WHEELS "/badrec-1.0-py3-none-any.whl",
	FIX_ABI "/torch_new/libc10.so",
	FIX_WHEELS "/badsect.so",
	WG_CORPUS "/wheels/wgdemo_mixed-0.1.0-cp312-cp312-linux_x86_64.whl",
	FIX_ABI "/torch_new",
};

static char *facts_of(const wg_scan *s)
{
	char *j = NULL;
	ck_assert_int_eq(wg_scan_to_json(&j, s, WG_JSON_FACTS), WG_OK);
	return j;
}

START_TEST(test_round_trip)
{
	if (t_skip_unless(inputs[_i], "a fixture"))
		return;
	wg_scan *a = t_scan(inputs[_i]), *b = NULL;
	char *ja = facts_of(a);
	ck_assert_int_eq(wg_scan_from_facts(&b, t_sc, ja, strlen(ja)), WG_OK);
	char *jb = facts_of(b);
	ck_assert_str_eq(ja, jb);
	ck_assert_int_eq(wg_scan_get_kind(a), wg_scan_get_kind(b));
	ck_assert_uint_eq(wg_scan_object_count(a), wg_scan_object_count(b));
	wg_free(ja);
	wg_free(jb);
	wg_scan_free(a);
	wg_scan_free(b);
}
END_TEST

static void refused(const char *doc, int code, const char *why)
{
	wg_scan *s = (wg_scan *)1;
	ck_assert_int_eq(wg_scan_from_facts(&s, t_sc, doc, strlen(doc)), code);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(wg_scanner_error(t_sc), why), "%s: %s", why, wg_scanner_error(t_sc));
}

START_TEST(test_refused)
{
	refused("", WG_EFORMAT, "not JSON");
	refused("{\"a\": 1, \"a\": 2}", WG_EFORMAT, "not JSON");
	refused("{}", WG_EFORMAT, "no \"facts\"");
	refused("{\"facts\": {\"version\": 7}}", WG_EUNSUPPORTED, "version");
	refused("{\"facts\": {\"version\": 1, \"kind\": 0, \"path\": \"x\"}}", WG_EFORMAT, "kind");
	refused("{\"facts\": {\"version\": 1, \"kind\": 1, \"path\": \"x\"}}", WG_EFORMAT,
		"\"fields\"");
	refused("{\"facts\": {\"version\": 1, \"kind\": 1, \"path\": \"x\", \"fields\": [],"
		" \"lists\": [[{\"hex\": \"4\"}]]}}", WG_EFORMAT, "hex");
	wg_scan *s = NULL;
	ck_assert_int_eq(wg_scan_from_facts(NULL, t_sc, "{}", 2), WG_EINVAL);
	ck_assert_int_eq(wg_scan_from_facts(&s, NULL, "{}", 2), WG_EINVAL);
	ck_assert_int_eq(wg_scan_from_facts(&s, t_sc, NULL, 2), WG_EINVAL);
}
END_TEST

START_TEST(test_not_utf8_round_trip)
{
	/* a member name with a Latin-1 byte: the inspect view escapes it, the facts keep it */
	const char *doc = "{\"facts\": {\"version\": 1, \"wheelgate_version\": \"x\", \"kind\": 1,"
		" \"path\": {\"hex\": \"e92e776866\"}, \"fields\": [], \"lists\": [],"
		" \"has_record\": false, \"repackaged\": false, \"python_partial\": null,"
		" \"python_partial_why\": null, \"members\": [[{\"hex\": \"61e9\"}, 1, 1, \"store\","
		" false, false, true, false, true, \"" "00000000000000000000000000000000"
		"00000000000000000000000000000000\", null, 6]], \"wheels\": [],"
		" \"kernel\": {\"name\": null, \"torch_major\": 0, \"torch_minor\": 0, \"cxx11\": -1,"
		" \"compute\": null, \"compute_label\": null, \"cuda_major\": 0, \"cuda_minor\": 0,"
		" \"cpu\": null, \"os\": null, \"has_metadata\": false, \"backend\": null,"
		" \"archs\": []}, \"sources\": [[\"a/__init__.py\", {\"hex\": \"2378e90a\"}]],"
		" \"objects\": [], \"problems\": []}}";
	wg_scan *s = NULL;
	ck_assert_msg(wg_scan_from_facts(&s, t_sc, doc, strlen(doc)) == WG_OK, "%s",
		      wg_scanner_error(t_sc));
	ck_assert_str_eq(wg_scan_get_path(s), "\xe9.whf");
	wg_member_info m = WG_MEMBER_INFO_INIT;
	ck_assert_int_eq(wg_scan_member(&m, s, 0), WG_OK);
	ck_assert_str_eq(m.name, "a\xe9");
	char *j = facts_of(s);
	ck_assert_ptr_nonnull(strstr(j, "{\"hex\":\"61e9\"}"));
	ck_assert_ptr_nonnull(strstr(j, "{\"hex\":\"2378e90a\"}"));
	wg_free(j);
	wg_scan_free(s);
}
END_TEST

START_TEST(test_store)
{
	char dir[] = "/tmp/wg-facts-unit-XXXXXX", hex[65], path[4096];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	const char *in = inputs[0];
	if (t_skip_unless(in, "a fixture"))
		return;
	ck_assert_int_eq(wg_file_sha256(hex, in), WG_OK);
	ck_assert_uint_eq(strlen(hex), 64);
	ck_assert_int_eq(wg_facts_path(path, sizeof(path), dir, "ABC"), WG_EINVAL);
	ck_assert_int_eq(wg_facts_path(path, sizeof(path), dir, hex), WG_OK);
	wg_scan *a = t_scan(in), *b = NULL;
	ck_assert_int_eq(wg_facts_store(dir, hex, a), WG_OK);
	ck_assert(t_exists(path));
	ck_assert_int_eq(wg_facts_load(&b, t_sc, path), WG_OK);
	char *ja = facts_of(a), *jb = facts_of(b);
	ck_assert_str_eq(ja, jb);
	wg_free(ja);
	wg_free(jb);
	wg_scan_free(a);
	wg_scan_free(b);
	ck_assert_int_eq(wg_facts_load(&b, t_sc, "/nonexistent/x.json.zst"), WG_EIO);
	ck_assert_ptr_nonnull(strstr(wg_scanner_error(t_sc), "/nonexistent/x.json.zst"));
	char sub[4200];
	snprintf(sub, sizeof(sub), "%s/%.2s", dir, hex);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(sub), 0); /* nothing else was left there: no temporary file */
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

Suite *suite_facts(void)
{
	Suite *s = suite_create("facts");
	TCase *tc = tcase_create("facts");
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_round_trip, 0, sizeof(inputs) / sizeof(inputs[0]));
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_not_utf8_round_trip);
	tcase_add_test(tc, test_store);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * The real wheels of ../shared/corpus, built and run on a GPU machine: every fact checked
 * against the corpus README. Skipped, with a message, where the corpus is absent.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "test_util.h"

#define CW WG_CORPUS "/wheels/"
#define SUF "-0.1.0-cp312-cp312-linux_x86_64.whl"

static const struct {
	const char *file, *module;
	int nobjects;
	wg_string_abi torch_abi;
	const char *import; /* a torch-facing import the README names, or NULL */
	bool cuda;
} cases[] = {
	{"wgdemo_good_sm90" SUF, "wgdemo_cuda", 1, WG_ABI_NEW,
	 "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
	 true},
	{"wgdemo_oldabi_sm90" SUF, "wgdemo_cuda", 1, WG_ABI_OLD,
	 "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs", true},
	{"wgdemo_sm80_only" SUF, "wgdemo_cuda", 1, WG_ABI_NEW, NULL, true},
	{"wgdemo_mixed" SUF, "wgdemo_aux_cuda", 2, WG_ABI_NEW, NULL, true},
	{"wgcpu_cpu_good" SUF, "wgcpu_ext", 1, WG_ABI_NONE, NULL, false},
	{"wgdemo_wrapper-0.1.0-py3-none-any.whl", NULL, 0, WG_ABI_NONE, NULL, false},
};

static bool has_needed(const wg_object *o, const char *lib)
{
	wg_object_info oi = WG_OBJECT_INFO_INIT;
	wg_object_get_info(&oi, o);
	for (size_t i = 0; i < oi.needed_count; i++)
		if (!strcmp(wg_object_needed(o, i), lib))
			return true;
	return false;
}

START_TEST(test_corpus_wheel)
{
	char path[512];
	snprintf(path, sizeof(path), CW "%s", cases[_i].file);
	if (t_skip_unless(path, "corpus wheel"))
		return;
	wg_scan *s = t_scan(path);
	/* Built by pip wheel: well-formed, RECORD intact. */
	ck_assert_msg(wg_scan_problem_count(s) == 0, "%s has problems", cases[_i].file);
	ck_assert_ptr_null(wg_wheel_get(s, WG_WHEEL_FILENAME_ERROR));
	ck_assert_str_eq(wg_wheel_get(s, WG_WHEEL_VERSION), "0.1.0");
	ck_assert_str_eq(wg_wheel_get(s, WG_WHEEL_WHEEL_VERSION), "1.0");
	ck_assert_int_eq(wg_wheel_has_record(s), 1);
	for (size_t i = 0; i < wg_scan_member_count(s); i++) {
		wg_member_info mi = WG_MEMBER_INFO_INIT;
		wg_scan_member(&mi, s, i);
		ck_assert_int_eq(mi.record, strstr(mi.name, ".dist-info/RECORD") ? WG_RECORD_UNHASHED
										  : WG_RECORD_OK);
	}
	const char *tag = wg_wheel_list_item(s, WG_LIST_WHEEL_TAGS, 0);
	ck_assert_str_eq(tag, cases[_i].module ? "cp312-cp312-linux_x86_64" : "py3-none-any");
	ck_assert_str_eq(wg_wheel_get(s, WG_WHEEL_ROOT_IS_PURELIB),
			 cases[_i].module ? "false" : "true");
	ck_assert_uint_eq(wg_scan_object_count(s), (size_t)cases[_i].nobjects);
	for (size_t i = 0; i < wg_scan_object_count(s); i++) {
		const wg_object *o = wg_scan_object(s, i);
		wg_object_info oi = WG_OBJECT_INFO_INIT;
		wg_object_get_info(&oi, o);
		ck_assert_ptr_null(oi.error);
		ck_assert_int_eq(oi.is_extension, 1);
		ck_assert_int_eq(oi.has_init, 1);
		ck_assert_str_eq(oi.ext_interpreter, "cpython-312");
		ck_assert_str_eq(oi.machine_name, "x86_64");
		ck_assert_int_eq(oi.torch_abi, cases[_i].torch_abi);
		ck_assert_int_eq(oi.abi, cases[_i].torch_abi);
		/* "the extensions have no RPATH and rely on import torch" */
		ck_assert_ptr_null(oi.rpath);
		ck_assert_ptr_null(oi.runpath);
		ck_assert(has_needed(o, "libc10.so") && has_needed(o, "libtorch_cpu.so") &&
			  has_needed(o, "libtorch_python.so"));
		ck_assert_int_eq(has_needed(o, "libcudart.so.13"), cases[_i].cuda);
		ck_assert_int_eq(has_needed(o, "libc10_cuda.so"), cases[_i].cuda);
		/* "The corpus extensions ... import __isoc23_strtoul@GLIBC_2.38" */
		wg_symbol_info si;
		ck_assert_int_ge(t_symbol(o, "__isoc23_strtoul", &si), 0);
		ck_assert_int_eq(si.defined, 0);
		ck_assert_str_eq(si.symver, "GLIBC_2.38");
		char init[128];
		snprintf(init, sizeof(init), "PyInit_%s", oi.module);
		ck_assert_int_ge(t_symbol(o, init, &si), 0);
		ck_assert_int_eq(si.defined, 1);
		if (cases[_i].import) {
			ck_assert_int_ge(t_symbol(o, cases[_i].import, &si), 0);
			ck_assert_int_eq(si.defined, 0);
			ck_assert_int_eq(si.torch_facing, 1);
			ck_assert_uint_eq(si.string_abi, cases[_i].torch_abi == WG_ABI_NEW
							 ? WG_SYM_NEW_STRING : WG_SYM_OLD_STRING);
		}
	}
	if (cases[_i].module) {
		char obj[256];
		snprintf(obj, sizeof(obj), "%s" EXT_SFX, cases[_i].module);
		const wg_object *o = t_object(s, obj);
		ck_assert_msg(o != NULL, "%s: no %s", cases[_i].file, obj);
		wg_object_info oi = WG_OBJECT_INFO_INIT;
		wg_object_get_info(&oi, o);
		ck_assert_str_eq(oi.module, cases[_i].module);
	} else {
		/* The hollow wheel: only the Python wrapper. */
		ck_assert_uint_eq(wg_wheel_list_count(s, WG_LIST_TOP_LEVEL), 1);
		ck_assert_str_eq(wg_wheel_list_item(s, WG_LIST_TOP_LEVEL, 0), "wgdemo");
	}
	wg_scan_free(s);
}
END_TEST

Suite *suite_corpus(void)
{
	Suite *s = suite_create("corpus");
	TCase *tc = tcase_create("corpus");
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_corpus_wheel, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return s;
}

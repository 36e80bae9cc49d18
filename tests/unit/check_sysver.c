/*
 * The target system's C runtime (issue 7): versions parsed and compared, the manylinux
 * policies read from rules/platform, the running system read from its own libc, and
 * WG-SYS-001's prediction on the glibc fixtures compared with what dlopen(RTLD_NOW) does here.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "test_util.h"

#define SYSDIR WG_FIXTURES "/abi-ld/sys"

START_TEST(test_versions_compare)
{
	char fam[16];
	unsigned a[4], b[4];
	int na, nb;
	ck_assert(wg_ver_parse("GLIBC_2.38", fam, sizeof(fam), a, &na));
	ck_assert_str_eq(fam, "GLIBC");
	ck_assert(wg_ver_parse("GLIBC_2.4", fam, sizeof(fam), b, &nb));
	ck_assert_int_gt(wg_ver_cmp(a, na, b, nb), 0); /* numeric, not 2.38 < 2.4 as text */
	ck_assert(wg_ver_parse("GLIBCXX_3.4.9", fam, sizeof(fam), a, &na));
	ck_assert(wg_ver_parse("GLIBCXX_3.4", fam, sizeof(fam), b, &nb));
	ck_assert_int_gt(wg_ver_cmp(a, na, b, nb), 0);
	ck_assert(wg_ver_parse("GLIBCXX_3.4.0", fam, sizeof(fam), a, &na));
	ck_assert_int_eq(wg_ver_cmp(a, na, b, nb), 0);
	ck_assert(!wg_ver_parse("GLIBC_PRIVATE", fam, sizeof(fam), a, &na));
	ck_assert(!wg_ver_parse("libcudart.so.13", fam, sizeof(fam), a, &na));
	ck_assert(!wg_ver_parse("GLIBC_2.x", fam, sizeof(fam), a, &na));
	ck_assert_int_lt(wg_version_compare("GLIBC_2.4", "GLIBC_2.38"), 0);
	ck_assert_int_gt(wg_version_compare("GLIBC_2.3.4", "GLIBC_2.3"), 0);
	ck_assert_int_eq(wg_version_compare("GCC_7.0.0", "GCC_7"), 0);
	ck_assert_int_ne(wg_version_compare("GLIBC_2.4", "GLIBCXX_2.4"), 0);
	ck_assert(wg_sysver_family("libc.so.6", "GLIBC_2.38", fam, sizeof(fam)));
	ck_assert(wg_sysver_family("libstdc++.so.6", "CXXABI_1.3.15", fam, sizeof(fam)));
	ck_assert(!wg_sysver_family("libwgver.so", "WG_2.0", fam, sizeof(fam)));
	ck_assert(!wg_sysver_family("libfoo.so", "GLIBC_2.38", fam, sizeof(fam)));
}
END_TEST

START_TEST(test_platform_policies)
{
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_int_eq(wg_target_parse(t, "platform=manylinux2014_x86_64"), WG_OK);
	bool declared = false;
	const wg_sysver *g = wg_target_sysver(t, "GLIBC", &declared);
	char buf[64];
	ck_assert(declared && g);
	wg_sysver_format(buf, sizeof(buf), g);
	ck_assert_str_eq(buf, "GLIBC_2.17");
	wg_sysver_format(buf, sizeof(buf), wg_target_sysver(t, "GLIBCXX", &declared));
	ck_assert_str_eq(buf, "GLIBCXX_3.4.19");
	/* A PEP 600 tag not in the data: its glibc alone; the C++ runtime stays unknown. */
	wg_target_clear(t);
	ck_assert_int_eq(wg_target_parse(t, "platform=manylinux_2_45_aarch64"), WG_OK);
	wg_sysver_format(buf, sizeof(buf), wg_target_sysver(t, "GLIBC", &declared));
	ck_assert_str_eq(buf, "GLIBC_2.45");
	ck_assert_ptr_null(wg_target_sysver(t, "GLIBCXX", &declared));
	/* auditwheel's policies per architecture: manylinux2014 allows GLIBC_2.18 on aarch64 (its
	 * reference system's glibc there) but not on x86_64; GCC_11.0 on aarch64 only. */
	wg_target_clear(t);
	ck_assert_int_eq(wg_target_parse(t, "platform=manylinux2014_aarch64"), WG_OK);
	wg_sysver_format(buf, sizeof(buf), wg_target_sysver(t, "GLIBC", &declared));
	ck_assert_str_eq(buf, "GLIBC_2.18");
	wg_target_clear(t);
	ck_assert_int_eq(wg_target_parse(t, "platform=manylinux_2_41_aarch64"), WG_OK);
	wg_sysver_format(buf, sizeof(buf), wg_target_sysver(t, "GLIBCXX", &declared));
	ck_assert_str_eq(buf, "GLIBCXX_3.4.33");
	wg_target_clear(t);
	ck_assert_int_eq(wg_target_parse(t, "platform=manylinux_2_24_x86_64"), WG_OK);
	wg_sysver_format(buf, sizeof(buf), wg_target_sysver(t, "GCC", &declared));
	ck_assert_str_eq(buf, "GCC_4.8.0");
	/* manylinux1 exists for x86_64 and i686 only */
	ck_assert_int_eq(wg_target_parse(t, "platform=manylinux1_aarch64"), WG_EINVAL);
	/* An explicit version wins over the platform's. */
	wg_target_clear(t);
	ck_assert_int_eq(wg_target_parse(t, "glibc=2.31,platform=manylinux_2_28_x86_64"), WG_OK);
	wg_sysver_format(buf, sizeof(buf), wg_target_sysver(t, "GLIBC", &declared));
	ck_assert_str_eq(buf, "GLIBC_2.31");
	wg_target_clear(t);
	ck_assert_int_eq(wg_target_parse(t, "platform=musllinux_1_2_x86_64"), WG_OK);
	ck_assert_int_eq(wg_target_sysver(t, "GLIBC", &declared)->n, 0);
	ck_assert_int_eq(wg_target_parse(t, "platform=macosx_11_0_arm64"), WG_EINVAL);
	ck_assert_int_eq(wg_target_parse(t, "glibc=two"), WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "glibc=two"));
	wg_target_free(t);
}
END_TEST

/* The policies read from rules/platform (auditwheel's): set membership per architecture,
 * the lib_whitelist of each policy, musl's libc by architecture, and the exceptions. */
START_TEST(test_policy_data)
{
	ck_assert_int_eq(wg_policy_count(), 18); /* 16 manylinux, 2 musllinux */
	ck_assert_int_eq(strlen(wg_policy_source()), 40);
	wg_policy p;
	ck_assert(wg_policy_for_tag(&p, "manylinux_2_38_x86_64"));
	ck_assert_int_eq(wg_policy_version(&p, "GLIBC_2.38"), 1);
	ck_assert_int_eq(wg_policy_version(&p, "GLIBC_2.37"), 0); /* no such version node */
	ck_assert_int_eq(wg_policy_version(&p, "GLIBC_2.39"), 0);
	ck_assert_int_eq(wg_policy_version(&p, "GLIBC_ABI_DT_RELR"), 1);
	ck_assert_int_eq(wg_policy_version(&p, "GLIBC_PRIVATE"), 0);
	ck_assert_int_eq(wg_policy_version(&p, "ZLIB_1.2.12"), 1);
	ck_assert_int_eq(wg_policy_version(&p, "WG_2.0"), -1);      /* not a judged family */
	ck_assert_int_eq(wg_policy_version(&p, "libcudart.so.13"), -1);
	ck_assert(wg_policy_for_tag(&p, "manylinux2014_x86_64"));
	ck_assert_str_eq(p.name, "manylinux_2_17");
	ck_assert_int_eq(wg_policy_version(&p, "GLIBC_2.18"), 0);
	ck_assert_int_eq(wg_policy_version(&p, "CXXABI_TM_1"), 1);
	ck_assert_int_eq(wg_policy_version(&p, "LIBATOMIC_1.0"), 0); /* from 2_24 on x86_64 */
	ck_assert_int_eq(wg_policy_library(&p, "libexpat.so.1"), 1);
	ck_assert_int_eq(wg_policy_library(&p, "libmvec.so.1"), 0);
	ck_assert_int_eq(wg_policy_library(&p, "libcuda.so.1"), 0);
	ck_assert(wg_policy_for_tag(&p, "manylinux2014_aarch64"));
	ck_assert_int_eq(wg_policy_version(&p, "GLIBC_2.18"), 1);
	ck_assert_int_eq(wg_policy_version(&p, "LIBATOMIC_1.0"), 1);
	ck_assert(wg_policy_for_tag(&p, "musllinux_1_2_aarch64"));
	ck_assert_int_eq(wg_policy_library(&p, "libc.musl-aarch64.so.1"), 1);
	ck_assert_int_eq(wg_policy_library(&p, "libc.musl-x86_64.so.1"), 0);
	ck_assert_int_eq(wg_policy_library(&p, "libc.so.6"), 0);
	ck_assert_int_eq(wg_policy_library(&p, "libz.so.1"), 1);
	ck_assert_int_eq(wg_policy_version(&p, "GLIBC_2.17"), -1); /* musl judges no versions */
	ck_assert(!wg_policy_for_tag(&p, "linux_x86_64"));
	ck_assert(!wg_policy_for_tag(&p, "manylinux_2_5_aarch64"));
	ck_assert(wg_policy_for_tag(&p, "manylinux_2_50_x86_64"));
	ck_assert_int_eq(p.index, -1);
	ck_assert_int_eq(wg_policy_version(&p, "GLIBC_2.50"), 1);
	ck_assert_int_eq(wg_policy_library(&p, "libc.so.6"), -1);
	/* the oldest policy per architecture */
	ck_assert(wg_policy_at(&p, 0, "x86_64"));
	ck_assert_str_eq(p.name, "manylinux_2_5");
	ck_assert(!wg_policy_at(&p, 0, "aarch64"));
	/* exceptions */
	ck_assert(wg_provided_loader("ld-linux-x86-64.so.2"));
	ck_assert(wg_provided_loader("ld64.so.2"));
	ck_assert(!wg_provided_loader("libld.so"));
	ck_assert_ptr_nonnull(wg_provided_driver("libcuda.so.1"));
	ck_assert_ptr_null(wg_provided_driver("libcudart.so.12"));
	char by[256];
	wg_strlist req = {0};
	wg_strmap set = {0};
	wg_arena a = {0};
	ck_assert_int_eq(wg_requires_set(&set, &a, &req), WG_OK);
	ck_assert_int_eq(wg_provided_by("libcudart.so.12", &set, by, sizeof(by)), 0);
	ck_assert_int_eq(wg_provided_by("libcudart.so.12", NULL, by, sizeof(by)), 1);
	ck_assert_str_eq(by, "nvidia-cuda-runtime-cu12");
	wg_strmap_free(&set);
	wg_strlist_add(&req, &a, "nvidia-cuda-runtime-cu12; extra == \"gpu\"");
	ck_assert_int_eq(wg_requires_set(&set, &a, &req), WG_OK);
	ck_assert_int_eq(wg_provided_by("libcudart.so.12", &set, by, sizeof(by)), 0);
	wg_strmap_free(&set);
	wg_strlist_add(&req, &a, "Nvidia_CUDA.Runtime-cu12 (>=12.1); platform_system == \"Linux\"");
	ck_assert_int_eq(wg_requires_set(&set, &a, &req), WG_OK);
	ck_assert_int_eq(wg_provided_by("libcudart.so.12", &set, by, sizeof(by)), 1);
	ck_assert_int_eq(wg_provided_by("libcurand.so.10", NULL, by, sizeof(by)), 3);
	wg_strmap_free(&set);
	wg_strlist_free(&req);
	wg_arena_free(&a);
}
END_TEST

/* The running system, read from its own libc.so.6, is the glibc this process runs on. */
START_TEST(test_running_system)
{
	bool declared = true;
	const wg_sysver *g = wg_target_sysver(NULL, "GLIBC", &declared);
	ck_assert_ptr_nonnull(g);
	ck_assert(!declared);
	char want[64], got[64];
	snprintf(want, sizeof(want), "GLIBC_%s", gnu_get_libc_version());
	wg_sysver_format(got, sizeof(got), g);
	ck_assert_str_eq(got, want);
	ck_assert_ptr_nonnull(wg_target_sysver(NULL, "GLIBCXX", &declared));
}
END_TEST

static const char *const sys_exts[] = {"ext_glibc238", "ext_glibc299", "ext_glibcold"};

/* WG-SYS-001 predicted for the running system == dlopen's "version `GLIBC_x' not found". */
START_TEST(test_sys001_agrees_with_dlopen)
{
	char path[512];
	snprintf(path, sizeof(path), SYSDIR "/%s" EXT_SFX, sys_exts[_i]);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	char err[1024] = "";
	if (!h)
		snprintf(err, sizeof(err), "%s", dlerror());
	else
		dlclose(h);
	wg_ruleset *rs;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	wg_scan *s = t_scan(path);
	wg_report *r = NULL;
	wg_target *here = NULL;
	ck_assert_int_eq(wg_target_new(&here), WG_OK);
	ck_assert_int_eq(wg_target_set(here, "profile", "install"), WG_OK); /* will it load here? */
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, here), WG_OK);
	wg_target_free(here);
	ck_assert_int_eq(wg_report_profile(r), WG_PROFILE_INSTALL);
	wg_finding_info f = WG_FINDING_INFO_INIT;
	const char *predicted = NULL;
	for (size_t i = 0; i < wg_report_count(r); i++) {
		ck_assert_int_eq(wg_report_finding(&f, r, i), WG_OK);
		if (!strcmp(f.rule, "WG-SYS-001"))
			predicted = f.message;
	}
	ck_assert_msg((predicted == NULL) == (h != NULL), "%s: predicted %s, dlopen %s", path,
		      predicted ? predicted : "loads", h ? "loaded" : err);
	if (predicted) {
		/* the same version as the loader names */
		const char *v = strstr(err, "version `");
		ck_assert_ptr_nonnull(v);
		char ver[64];
		snprintf(ver, sizeof(ver), "%s", v + 9);
		ver[strcspn(ver, "'")] = '\0';
		ck_assert_msg(strstr(predicted, ver), "%s vs %s", predicted, err);
		ck_assert_ptr_nonnull(strstr(predicted, "libc.so.6"));
	}
	if (_i == 1)
		ck_assert_ptr_nonnull(predicted); /* GLIBC_2.99 fails on every system */
	if (_i == 2)
		ck_assert_ptr_null(predicted);
	wg_report_free(r);
	/* A declared newer system: nothing missing. */
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_int_eq(wg_target_parse(t, "glibc=2.99"), WG_OK);
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, t), WG_OK);
	wg_target_free(t);
	for (size_t i = 0; i < wg_report_count(r); i++) {
		ck_assert_int_eq(wg_report_finding(&f, r, i), WG_OK);
		ck_assert_str_ne(f.rule, "WG-SYS-001");
	}
	wg_report_free(r);
	wg_scan_free(s);
	wg_ruleset_free(rs);
}
END_TEST

/* CPython's stable ABI (rules/python/stable_abi.yaml): every line read, entries as written. */
START_TEST(test_pyabi_data)
{
	ck_assert_uint_eq(wg_pyabi_count(), 939); /* the symbols: lines of the data file */
	ck_assert_uint_eq(strlen(wg_pyabi_source()), 40);
	const wg_pyabi_sym *e = wg_pyabi_find("PyUnicode_AsUTF8AndSize");
	ck_assert_ptr_nonnull(e);
	ck_assert(e->major == 3 && e->minor == 10 && !e->abi_only && !e->ifdef && e->on_linux);
	e = wg_pyabi_find("_Py_Dealloc");
	ck_assert(e && e->major == 3 && e->minor == 2 && e->abi_only && e->on_linux);
	e = wg_pyabi_find("PyErr_SetFromWindowsErr");
	ck_assert(e && e->minor == 7 && !strcmp(e->ifdef, "MS_WINDOWS") && !e->on_linux);
	e = wg_pyabi_find("PyOS_AfterFork_Child");
	ck_assert(e && !strcmp(e->ifdef, "HAVE_FORK") && e->on_linux);
	e = wg_pyabi_find("_Py_NegativeRefcount");
	ck_assert(e && e->abi_only && !e->on_linux); /* Py_REF_DEBUG builds only */
	ck_assert_ptr_null(wg_pyabi_find("PyUnicode_AsUTF8"));
	ck_assert_ptr_null(wg_pyabi_find("_PyLong_Sign"));
	ck_assert_ptr_null(wg_pyabi_find(""));
}
END_TEST

Suite *suite_sysver(void)
{
	Suite *s = suite_create("sysver");
	TCase *tc = tcase_create("sysver");
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_add_test(tc, test_versions_compare);
	tcase_add_test(tc, test_platform_policies);
	tcase_add_test(tc, test_policy_data);
	tcase_add_test(tc, test_running_system);
	tcase_add_test(tc, test_pyabi_data);
	tcase_add_loop_test(tc, test_sys001_agrees_with_dlopen, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * The public API's contract: the same facts from a path, a descriptor and a buffer; handles
 * and structs checked at every entry; one context shared by scanners on several threads.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "test_util.h"

#define GOOD FIX_WHEELS "/flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"

static char *json_of(wg_scan *s)
{
	char *j = NULL;
	ck_assert_int_eq(wg_scan_to_json(&j, s, 0), WG_OK);
	return j;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static const char *const same_inputs[] = {
	GOOD, FIX_WHEELS "/badrec-1.0-py3-none-any.whl", FIX_ABI "/torch_new/libc10.so",
	FIX_WHEELS "/badsect.so",
};

START_TEST(test_path_fd_buffer_agree)
{
	const char *path = same_inputs[_i];
	wg_scan *a = t_scan(path), *b, *c;
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	lseek(fd, 7, SEEK_SET); /* the descriptor's offset does not matter */
	ck_assert_int_eq(wg_scan_fd(&b, t_sc, fd, path), WG_OK);
	close(fd);
	size_t len;
	char *buf = slurp(path, &len);
	ck_assert_int_eq(wg_scan_buffer(&c, t_sc, buf, len, path), WG_OK);
	free(buf);
	char *ja = json_of(a), *jb = json_of(b), *jc = json_of(c);
	ck_assert_str_eq(ja, jb);
	ck_assert_str_eq(ja, jc);
	wg_free(ja);
	wg_free(jb);
	wg_free(jc);
	wg_scan_free(a);
	wg_scan_free(b);
	wg_scan_free(c);
}
END_TEST

START_TEST(test_buffer_errors)
{
	wg_scan *s = NULL;
	static const char junk[] = "PK\003\004 this is no zip";
	ck_assert_int_eq(wg_scan_buffer(&s, t_sc, junk, sizeof(junk), "junk.whl"), WG_EFORMAT);
	ck_assert_ptr_nonnull(strstr(wg_scanner_error(t_sc), "junk.whl: not a readable zip archive"));
	ck_assert_int_eq(wg_scan_buffer(&s, t_sc, "abc", 3, NULL), WG_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(wg_scanner_error(t_sc), "(buffer): neither a wheel"));
	ck_assert_int_eq(wg_scan_buffer(&s, t_sc, NULL, 5, "x"), WG_EINVAL);
	ck_assert_int_eq(wg_scan_fd(&s, t_sc, -1, "x"), WG_EINVAL);
	ck_assert_int_eq(wg_scan_path(NULL, t_sc, "x"), WG_EINVAL);
	ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_handles_and_versions)
{
	wg_scan_free(NULL);
	wg_scanner_free(NULL);
	wg_context_free(NULL);
	wg_free(NULL);
	for (int c = 1; c >= -12; c--) {
		ck_assert_ptr_nonnull(wg_strerror(c));
		ck_assert_ptr_nonnull(wg_error_name(c));
	}
	wg_options o = WG_OPTIONS_INIT;
	o.version = 99;
	wg_context *ctx = NULL;
	ck_assert_int_eq(wg_context_new(&ctx, &o), WG_EINVAL);
	ck_assert_ptr_null(ctx);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "wg_options version 99 is not supported"));
	ck_assert_int_eq(wg_options_init(&o, 99), WG_EINVAL);
	ck_assert_int_eq(wg_options_init(&o, WG_OPTIONS_VERSION), WG_OK);
	ck_assert(o.max_member_size == 4ULL << 30);

	wg_scan *s = t_scan(GOOD);
	wg_member_info mi = WG_MEMBER_INFO_INIT;
	mi.version = 42;
	ck_assert_int_eq(wg_scan_member(&mi, s, 0), WG_EINVAL);
	mi.version = WG_MEMBER_INFO_VERSION;
	ck_assert_int_eq(wg_scan_member(&mi, s, 999), WG_ENOTFOUND);
	ck_assert_ptr_null(wg_scan_object(s, 999));
	ck_assert_ptr_null(wg_wheel_list_item(s, WG_LIST_TOP_LEVEL, 999));
	wg_symbol_info si = WG_SYMBOL_INFO_INIT;
	ck_assert_int_eq(wg_object_symbol(&si, wg_scan_object(s, 0), 1u << 30), WG_ENOTFOUND);
	/* Wheel facts of a non-wheel scan are absent, not garbage. */
	wg_scan *so = t_scan(FIX_ABI "/torch_new/libc10.so");
	ck_assert_ptr_null(wg_wheel_get(so, WG_WHEEL_NAME));
	ck_assert_int_eq(wg_scan_get_kind(so), WG_SCAN_OBJECT);
	wg_scan_free(so);
	wg_scan_free(s);
}
END_TEST

typedef struct {
	const char *path;
	char *json;
	int rc;
} job;

static void *worker(void *p)
{
	job *j = p;
	wg_scanner *sc;
	wg_scan *s;
	if ((j->rc = wg_scanner_new(&sc, t_ctx)) < 0)
		return NULL;
	for (int k = 0; k < 3 && j->rc == WG_OK; k++) {
		if ((j->rc = wg_scan_path(&s, sc, j->path)) < 0)
			break;
		free(j->json);
		j->rc = wg_scan_to_json(&j->json, s, 0);
		wg_scan_free(s);
	}
	wg_scanner_free(sc);
	return NULL;
}

START_TEST(test_threads_share_a_context)
{
	/* Four threads, one shared context; libbfd is serialised inside the library. */
	job jobs[4] = {{GOOD, NULL, 0}, {FIX_ABI, NULL, 0}, {GOOD, NULL, 0}, {FIX_ABI, NULL, 0}};
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker, &jobs[i]), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(jobs[i].rc, WG_OK);
	ck_assert_str_eq(jobs[0].json, jobs[2].json);
	ck_assert_str_eq(jobs[1].json, jobs[3].json);
	wg_scan *s = t_scan(GOOD);
	char *single = json_of(s);
	ck_assert_str_eq(single, jobs[0].json);
	wg_free(single);
	wg_scan_free(s);
	for (int i = 0; i < 4; i++)
		free(jobs[i].json);
}
END_TEST

START_TEST(test_escape)
{
	static const struct {
		const char *in, *out, *out_control;
	} cases[] = {
		{"plain", "plain", "plain"},
		{"caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80", "caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80",
		 "caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80"},
		{"a\xff" "b", "a\\xff" "b", "a\\xff" "b"},
		{"\xc0\x80", "\\xc0\\x80", "\\xc0\\x80"},             /* overlong NUL */
		{"\xed\xa0\x80", "\\xed\\xa0\\x80", "\\xed\\xa0\\x80"}, /* a surrogate */
		{"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "\\xf4\\x90\\x80\\x80"}, /* > U+10FFFF */
		{"end\xe6\x97", "end\\xe6\\x97", "end\\xe6\\x97"},      /* cut short */
		{"\x1b[2Jx\x07", "\x1b[2Jx\x07", "\\x1b[2Jx\\x07"},
		{"tab\tnl\n\x7f", "tab\tnl\n\x7f", "tab\\x09nl\\x0a\\x7f"},
		{"csi\xc2\x9b" "1m", "csi\xc2\x9b" "1m", "csi\\u009b" "1m"}, /* a C1 control */
		/* bidi controls ("Trojan Source"): RLO, LRI, PDI, RLM, ALM, LINE SEPARATOR */
		{"a\xe2\x80\xae" "b", "a\xe2\x80\xae" "b", "a\\u202e" "b"},
		{"\xe2\x81\xa6x\xe2\x81\xa9", "\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069"},
		{"\xe2\x80\x8f\xd8\x9c\xe2\x80\xa8", "\xe2\x80\x8f\xd8\x9c\xe2\x80\xa8",
		 "\\u200f\\u061c\\u2028"},
		/* their neighbours stay: U+2027, U+202F, U+2065, U+206A, U+00A0, U+061B */
		{"\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xc2\xa0\xd8\x9b",
		 "\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xc2\xa0\xd8\x9b",
		 "\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xc2\xa0\xd8\x9b"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *e = NULL;
		ck_assert_int_eq(wg_escape(&e, cases[i].in, 0), WG_OK);
		ck_assert_str_eq(e, cases[i].out);
		wg_free(e);
		ck_assert_int_eq(wg_escape(&e, cases[i].in, WG_ESCAPE_CONTROL), WG_OK);
		ck_assert_str_eq(e, cases[i].out_control);
		wg_free(e);
	}
	char *e = NULL;
	ck_assert_int_eq(wg_escape(&e, NULL, 0), WG_EINVAL);
	ck_assert_int_eq(wg_escape(NULL, "x", 0), WG_EINVAL);
}
END_TEST

START_TEST(test_directory_inputs)
{
	/* Every wheel below a directory is listed, sorted, for the caller to scan on its own. */
	wg_scan *s = t_scan(FIX_WHEELS);
	size_t n = wg_scan_wheel_count(s);
	ck_assert_uint_gt(n, 5);
	for (size_t i = 0; i < n; i++) {
		const char *p = wg_scan_wheel_path(s, i);
		ck_assert_ptr_nonnull(strstr(p, FIX_WHEELS "/"));
		ck_assert_ptr_nonnull(strstr(p, ".whl"));
		if (i)
			ck_assert_int_lt(strcmp(wg_scan_wheel_path(s, i - 1), p), 0);
	}
	ck_assert_ptr_null(wg_scan_wheel_path(s, n));
	wg_scan_free(s);
	/* Loose ELF objects only: no wheels. */
	s = t_scan(FIX_ABI);
	ck_assert_uint_eq(wg_scan_wheel_count(s), 0);
	ck_assert_uint_gt(wg_scan_object_count(s), 0);
	wg_scan_free(s);
	/* Nothing to judge is an error, not an empty pass. */
	char tmp[] = "/tmp/wg-empty-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	const char *msg = t_scan_fails(tmp, WG_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(msg, "no wheel or ELF object found in "));
	ck_assert_ptr_nonnull(strstr(msg, tmp));
	rmdir(tmp);
}
END_TEST

static bool lacks(const wg_report *r, const char *rule, const char *want)
{
	for (size_t i = 0; i < wg_report_not_applied_count(r); i++) {
		wg_not_applied_info na = WG_NOT_APPLIED_INFO_INIT;
		ck_assert_int_eq(wg_report_not_applied(&na, r, i), WG_OK);
		if (!strcmp(na.rule, rule)) {
			ck_assert_ptr_nonnull(na.message);
			return !strcmp(na.lacks, want);
		}
	}
	return false;
}

START_TEST(test_not_applied)
{
	wg_ruleset *rs = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	wg_scan *s = t_scan(GOOD);
	wg_report *r = NULL;
	wg_target *inst = NULL;
	ck_assert_int_eq(wg_target_new(&inst), WG_OK);
	/* the loader rules belong to the install question */
	ck_assert_int_eq(wg_target_set(inst, "profile", "install"), WG_OK);
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, inst), WG_OK);
	ck_assert(lacks(r, "WG-ABI-001", "cxx11abi"));
	/* Listed only where the rule could have found something: this wheel's object has no
	 * CUDA code, so the GPU rules are no question of it (issue 29). */
	ck_assert(!lacks(r, "WG-GPU-002", "gpu"));
	ck_assert(!lacks(r, "WG-GPU-003", "cuda,gpu"));
	ck_assert(lacks(r, "WG-LD-001", "env"));
	wg_report_free(r);
	wg_scan *cu = t_scan(WG_FIXTURES "/cuda/sass80ptx80.so");
	ck_assert_int_eq(wg_check(&r, t_sc, rs, cu, inst), WG_OK);
	ck_assert(lacks(r, "WG-GPU-002", "gpu"));
	ck_assert(lacks(r, "WG-GPU-003", "cuda,gpu"));
	ck_assert(!lacks(r, "WG-ABI-001", "cxx11abi")); /* no torch C++ symbols in it */
	wg_report_free(r);
	wg_scan_free(cu);
	/* A wheel without ELF objects: no loader rule could load anything of it, but installing
	 * it could still break what is installed (WG-LD-006). */
	wg_scan *pure = t_scan(FIX_WHEELS "/purepkg-0.1-py3-none-any.whl");
	ck_assert_int_eq(wg_check(&r, t_sc, rs, pure, inst), WG_OK);
	ck_assert(!lacks(r, "WG-LD-001", "env"));
	ck_assert(!lacks(r, "WG-LD-002", "env"));
	ck_assert(lacks(r, "WG-LD-006", "env"));
	wg_report_free(r);
	wg_scan_free(pure);
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, inst), WG_OK);
	wg_target_free(inst);
	/* A rule outside the profile is not "not applied": it is not part of the question. */
	ck_assert(!lacks(r, "WG-SYS-003", "filename"));
	ck_assert(!lacks(r, "WG-TAG-005", "filename")); /* the file has a wheel's name */
	wg_not_applied_info na = WG_NOT_APPLIED_INFO_INIT;
	ck_assert_int_eq(wg_report_not_applied(&na, r, 999), WG_ENOTFOUND);
	na.version = 7;
	ck_assert_int_eq(wg_report_not_applied(&na, r, 0), WG_EINVAL);
	na.version = WG_NOT_APPLIED_INFO_VERSION;
	wg_report_free(r);
	/* Facts given: those rules apply. */
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_int_eq(wg_target_parse(t, "python=3.12,torch=2.11.0+cu130,cxx11abi=1"), WG_OK);
	ck_assert_int_eq(wg_target_add_gpu(t, t_ctx, "sm_90"), WG_OK);
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, t), WG_OK);
	for (size_t i = 0; i < wg_report_not_applied_count(r); i++) {
		ck_assert_int_eq(wg_report_not_applied(&na, r, i), WG_OK);
		ck_assert_str_eq(na.lacks, "env");
	}
	ck_assert_uint_eq(wg_report_not_applied_count(r), 6); /* the loader rules, WG-LD-001..006 */
	wg_report_free(r);
	wg_scan_free(s);
	/* The same wheel from memory without its name: the filename rules are left out. */
	size_t len;
	char *buf = slurp(GOOD, &len);
	ck_assert_int_eq(wg_scan_buffer(&s, t_sc, buf, len, "-"), WG_OK);
	/* the filename's claims are the publish question */
	ck_assert_int_eq(wg_target_set(t, "profile", "publish"), WG_OK);
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, t), WG_OK);
	ck_assert(lacks(r, "WG-TAG-005", "filename"));
	ck_assert(lacks(r, "WG-CUDA-002", "filename"));
	wg_report_free(r);
	wg_scan_free(s);
	free(buf);
	wg_target_free(t);
	wg_ruleset_free(rs);
}
END_TEST

/* --gpu auto declares this machine the target whether or not it has a GPU: the profile
 * stays install (a GPU-less machine flipped it to publish, which switched the system rules
 * off), an explicit profile wins, and without a GPU the GPU rules say what auto found. */
START_TEST(test_gpu_auto_keeps_the_profile)
{
	void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	bool driver = nvml != NULL;
	if (nvml)
		dlclose(nvml);
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_int_eq(wg_target_profile(t), WG_PROFILE_PUBLISH);
	ck_assert_int_eq(wg_target_add_gpu(t, t_ctx, "auto"), WG_OK);
	ck_assert_int_eq(wg_target_profile(t), WG_PROFILE_INSTALL);
	bool none = wg_target_gpu_count(t) == 0;
	/* no driver, no GPU found (a driver without a device may find none too) */
	ck_assert(driver || none);
	if (none)
		ck_assert_ptr_nonnull(strstr(wg_target_notice(t), "no local GPU ("));
	char *j = NULL;
	ck_assert_int_eq(wg_target_to_json(&j, t), WG_OK);
	json_t *doc = json_loads(j, 0, NULL);
	json_t *ga = json_object_get(doc, "gpu_auto");
	ck_assert_ptr_nonnull(ga);
	ck_assert_int_eq(json_integer_value(json_object_get(ga, "found")),
			 (json_int_t)wg_target_gpu_count(t));
	ck_assert(none ? json_is_string(json_object_get(ga, "none"))
		       : json_is_null(json_object_get(ga, "none")));
	json_decref(doc);
	wg_free(j);
	if (none) {
		wg_ruleset *rs = NULL;
		ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
		wg_scan *s = t_scan(WG_FIXTURES "/cuda/sass80ptx80.so"); /* CUDA code: a GPU question */
		wg_report *r = NULL;
		ck_assert_int_eq(wg_check(&r, t_sc, rs, s, t), WG_OK);
		ck_assert_int_eq(wg_report_profile(r), WG_PROFILE_INSTALL);
		bool said = false;
		wg_not_applied_info na = WG_NOT_APPLIED_INFO_INIT;
		for (size_t i = 0; i < wg_report_not_applied_count(r); i++) {
			ck_assert_int_eq(wg_report_not_applied(&na, r, i), WG_OK);
			if (strcmp(na.rule, "WG-GPU-002"))
				continue;
			ck_assert_str_eq(na.lacks, "gpu");
			ck_assert_msg(wg_has_prefix(na.message, "no GPU found by --gpu auto ("),
				      "%s", na.message);
			said = true;
		}
		ck_assert(said);
		wg_report_free(r);
		wg_scan_free(s);
		wg_ruleset_free(rs);
	}
	/* An explicit profile wins over what auto implies. */
	ck_assert_int_eq(wg_target_set(t, "profile", "publish"), WG_OK);
	ck_assert_int_eq(wg_target_profile(t), WG_PROFILE_PUBLISH);
	wg_target_free(t);
}
END_TEST

/* The opaque target: every fact through a function, read back through the public JSON. */
START_TEST(test_target_handle)
{
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(NULL), WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "wg_target_new"));
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_int_eq(wg_target_profile(t), WG_PROFILE_PUBLISH); /* nothing declared */
	ck_assert_int_eq(wg_target_set(t, "python", "3.12"), WG_OK);
	ck_assert_int_eq(wg_target_profile(t), WG_PROFILE_INSTALL); /* a fact of the machine */
	ck_assert_int_eq(wg_target_set(t, "profile", "publish"), WG_OK);
	ck_assert_int_eq(wg_target_profile(t), WG_PROFILE_PUBLISH);
	ck_assert_int_eq(wg_target_set(t, "profile", "sometimes"), WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "profile=sometimes"));
	ck_assert_int_eq(wg_target_set(t, "torch", "2.9.1+cu128"), WG_OK);
	ck_assert_int_eq(wg_target_set(t, "cxx11abi", "false"), WG_OK);
	ck_assert_int_eq(wg_target_set(t, "colour", "blue"), WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "unknown key 'colour'"));
	ck_assert_int_eq(wg_target_set(t, "python", ""), WG_EINVAL);
	/* profile is not a fact of the machine: --target does not take it */
	ck_assert_int_eq(wg_target_parse(t, "profile=install"), WG_EINVAL);
	ck_assert_int_eq(wg_target_add_gpu(t, t_ctx, "H100"), WG_OK);
	ck_assert_int_eq(wg_target_add_gpu(t, t_ctx, "sm_80"), WG_OK);
	ck_assert_uint_eq(wg_target_gpu_count(t), 2);
	wg_gpu g = WG_GPU_INIT;
	ck_assert_int_eq(wg_target_gpu(&g, t, 0), WG_OK);
	ck_assert(g.cc_major == 9 && g.cc_minor == 0 && g.name && !strcmp(g.name, "H100"));
	ck_assert_int_eq(wg_target_gpu(&g, t, 1), WG_OK);
	ck_assert(g.cc_major == 8 && g.cc_minor == 0 && !g.name);
	ck_assert_int_eq(wg_target_gpu(&g, t, 2), WG_ENOTFOUND);
	g.version = 9;
	ck_assert_int_eq(wg_target_gpu(&g, t, 0), WG_EINVAL);
	char *j = NULL;
	ck_assert_int_eq(wg_target_to_json(&j, t), WG_OK);
	json_error_t je;
	json_t *doc = json_loads(j, 0, &je);
	ck_assert_ptr_nonnull(doc);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "python")), "3.12");
	ck_assert_str_eq(json_string_value(json_object_get(doc, "torch")), "2.9.1+cu128");
	ck_assert_str_eq(json_string_value(json_object_get(doc, "cuda")), "12.8"); /* from +cu128 */
	ck_assert(json_is_false(json_object_get(doc, "cxx11abi")));
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "gpus")), 2);
	json_decref(doc);
	wg_free(j);
	wg_target_set_env(t, NULL);
	wg_target_free(t);
	wg_target_free(NULL);
}
END_TEST

/* One version check: older versions are read, newer and 0 refused with the reason. */
START_TEST(test_struct_versions)
{
	wg_ruleset *rs = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	wg_rule_info ri = WG_RULE_INFO_INIT;
	ri.version = 1; /* before install/publish: those fields are left as they are */
	ri.install = ri.publish = 77;
	ck_assert_int_eq(wg_ruleset_rule(&ri, rs, 0), WG_OK);
	ck_assert_ptr_nonnull(ri.id);
	ck_assert_int_eq(ri.install, 77);
	ck_assert_int_eq(ri.publish, 77);
	ri.version = WG_RULE_INFO_VERSION;
	ck_assert_int_eq(wg_ruleset_rule(&ri, rs, 0), WG_OK);
	ck_assert_int_ne(ri.install, 77);
	ri.version = WG_RULE_INFO_VERSION + 1;
	ck_assert_int_eq(wg_ruleset_rule(&ri, rs, 0), WG_EINVAL);
	char want[128];
	snprintf(want, sizeof(want), "wg_rule_info version %u is not supported (this library reads 1 "
		 "to %u)", WG_RULE_INFO_VERSION + 1, WG_RULE_INFO_VERSION);
	ck_assert_str_eq(wg_error_last(), want);
	ri.version = 0;
	ck_assert_int_eq(wg_ruleset_rule(&ri, rs, 0), WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "wg_rule_info version 0"));
	ck_assert_int_eq(wg_ruleset_rule(NULL, rs, 0), WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "wg_ruleset_rule: a required argument"));
	wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
	ro.version = 5;
	wg_ruleset *rs2 = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs2, t_ctx, &ro), WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "wg_ruleset_options version 5"));
	wg_env_options eo = WG_ENV_OPTIONS_INIT;
	eo.version = 3;
	wg_env *e = NULL;
	ck_assert_int_eq(wg_env_open(&e, t_sc, "/", &eo), WG_EINVAL);
	ck_assert_ptr_null(e);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "wg_env_options version 3"));
	/* an input struct too: the GPU a verdict is asked for */
	wg_scan *s = t_scan(GOOD);
	wg_gpu g = WG_GPU_INIT;
	ck_assert_int_eq(wg_gpu_parse(&g, t_ctx, "sm_90"), WG_OK);
	wg_gpu_verdict v = WG_GPU_VERDICT_INIT;
	ck_assert_int_eq(wg_object_gpu_verdict(&v, wg_scan_object(s, 0), &g), WG_OK);
	g.version = 2;
	ck_assert_int_eq(wg_object_gpu_verdict(&v, wg_scan_object(s, 0), &g), WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "wg_gpu version 2"));
	wg_scan_free(s);
	wg_ruleset_free(rs);
}
END_TEST

/* JSON documents: DEL, C1 and bidi controls from an input come out as \uNNNN (jansson writes
 * them raw), the value the same when read back, other text as it was. */
START_TEST(test_json_dump_escapes_controls)
{
	static const char in[] = "del\x7f csi\xc2\x9b" "1m rlo\xe2\x80\xae" "fdp.exe lri\xe2\x81\xa6"
				 " caf\xc3\xa9 \xe2\x80\xaf esc\x1b";
	json_t *j = json_pack("{s:s, s:[s]}", "k\xe2\x80\xae", in, "a", in);
	ck_assert_ptr_nonnull(j);
	char *text = wg_json_dump(j, JSON_COMPACT);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_null(strchr(text, 0x7f));
	ck_assert_ptr_null(strstr(text, "\xc2\x9b"));
	ck_assert_ptr_null(strstr(text, "\xe2\x80\xae"));
	ck_assert_ptr_null(strstr(text, "\xe2\x81\xa6"));
	ck_assert_ptr_null(strchr(text, 0x1b));
	ck_assert_ptr_nonnull(strstr(text, "del\\u007f csi\\u009b1m rlo\\u202efdp.exe lri\\u2066 caf\xc3\xa9 \xe2\x80\xaf "));
	ck_assert_ptr_nonnull(strstr(text, "\"k\\u202e\""));
	json_error_t je;
	json_t *back = json_loads(text, 0, &je);
	ck_assert_ptr_nonnull(back);
	ck_assert(json_equal(j, back));
	json_decref(back);
	json_decref(j);
	free(text);
}
END_TEST

/* GPU names of every current NVIDIA part (rules/gpu/cuda.yaml, issue 29): a sample with the
 * capability NVIDIA's CUDA GPUs page gives, spelled as users do (case, spaces, dashes); every
 * known name parses back to itself (none shadowed by another's key); a typo names the
 * closest. */
START_TEST(test_gpu_names)
{
	static const struct {
		const char *spec, *name;
		unsigned major, minor;
	} want[] = {
		{"H20", "H20", 9, 0},		     {"h800", "H800", 9, 0},
		{"A800", "A800", 8, 0},		     {"L20", "L20", 8, 9},
		{"l40s", "L40S", 8, 9},		     {"B100", "B100", 10, 0},
		{"B200", "B200", 10, 0},	     {"GB200", "GB200", 10, 0},
		{"b300", "B300", 10, 3},	     {"GB300", "GB300", 10, 3},
		{"RTX PRO 6000 Blackwell", "RTX PRO 6000 Blackwell", 12, 0},
		{"rtx-5090", "RTX 5090", 12, 0},     {"RTX 5080", "RTX 5080", 12, 0},
		{"rtx5070ti", "RTX 5070 Ti", 12, 0}, {"RTX 5070", "RTX 5070", 12, 0},
		{"RTX 5060 Ti", "RTX 5060 Ti", 12, 0}, {"RTX_5060", "RTX 5060", 12, 0},
		{"RTX 5050", "RTX 5050", 12, 0},     {"RTX 4090", "RTX 4090", 8, 9},
		{"RTX 4060 Ti", "RTX 4060 Ti", 8, 9}, {"RTX 3080", "RTX 3080", 8, 6},
		{"RTX 3060", "RTX 3060", 8, 6},	     {"DGX Spark", "DGX Spark", 12, 1},
		{"GB10", "GB10", 12, 1},	     {"Jetson Thor", "Jetson Thor", 11, 0},
		{"jetson-agx-orin", "Jetson AGX Orin", 8, 7}, {"RTX 6000 Ada", "RTX 6000 Ada", 8, 9},
		{"RTX A6000", "RTX A6000", 8, 6},    {"Quadro RTX 8000", "Quadro RTX 8000", 7, 5},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		wg_gpu g = WG_GPU_INIT;
		ck_assert_msg(wg_gpu_parse(&g, t_ctx, want[i].spec) == WG_OK, "%s: %s", want[i].spec,
			      wg_error_last());
		ck_assert_str_eq(g.name, want[i].name);
		ck_assert_msg(g.cc_major == want[i].major && g.cc_minor == want[i].minor,
			      "%s: %u.%u", want[i].spec, g.cc_major, g.cc_minor);
	}
	for (size_t i = 0; i < wg_gpu_known_count(t_ctx); i++) {
		wg_gpu k = WG_GPU_INIT, g = WG_GPU_INIT;
		ck_assert_int_eq(wg_gpu_known(&k, t_ctx, i), WG_OK);
		ck_assert_int_eq(wg_gpu_parse(&g, t_ctx, k.name), WG_OK);
		ck_assert_str_eq(g.name, k.name);
	}
	wg_gpu g = WG_GPU_INIT;
	ck_assert_int_eq(wg_gpu_parse(&g, t_ctx, "H2O"), WG_ENOTFOUND);
	ck_assert_msg(strstr(wg_error_last(), "did you mean H20 (9.0)?") &&
		      !strchr(wg_error_last(), '\n'), "%s", wg_error_last());
	ck_assert_int_eq(wg_gpu_parse(&g, t_ctx, "rtx 5909"), WG_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "did you mean RTX 5090 (12.0)?"));
	ck_assert_int_eq(wg_gpu_parse(&g, t_ctx, "Voodoo 3dfx"), WG_ENOTFOUND);
	ck_assert_ptr_null(strstr(wg_error_last(), "did you mean"));
}
END_TEST

/* The inspect document holds exactly the items wg_scan_to_json writes, and errors. */
START_TEST(test_inspect_document)
{
	wg_gpu g = WG_GPU_INIT;
	ck_assert_int_eq(wg_gpu_parse(&g, t_ctx, "L4"), WG_OK);
	wg_inspect *d = NULL;
	ck_assert_int_eq(wg_inspect_new(&d, WG_JSON_ABI_SYMBOLS, &g, 1), WG_OK);
	wg_scan *s = t_scan(GOOD);
	ck_assert_int_eq(wg_inspect_add(d, s), WG_OK);
	char *item = NULL;
	ck_assert_int_eq(wg_scan_to_json_gpus(&item, s, WG_JSON_ABI_SYMBOLS, &g, 1), WG_OK);
	wg_scan_free(s); /* the document keeps what it needs */
	ck_assert_int_eq(wg_inspect_add_error(d, "/x/\033[31mred.whl", WG_EIO, "cannot read"), WG_OK);
	char *text = NULL;
	ck_assert_int_eq(wg_inspect_format(&text, d), WG_OK);
	ck_assert_ptr_null(strchr(text, '\n')); /* compact without WG_JSON_PRETTY */
	json_error_t je;
	json_t *doc = json_loads(text, 0, &je), *want = json_loads(item, 0, &je);
	ck_assert_ptr_nonnull(doc);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "schema")), WG_INSPECT_SCHEMA);
	json_t *inputs = json_object_get(doc, "inputs");
	ck_assert_uint_eq(json_array_size(inputs), 2);
	ck_assert(json_equal(json_array_get(inputs, 0), want));
	json_t *err = json_array_get(inputs, 1);
	ck_assert_str_eq(json_string_value(json_object_get(err, "path")), "/x/\\x1b[31mred.whl");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(err, "error"), "code")), "io");
	json_decref(doc);
	json_decref(want);
	wg_free(text);
	wg_free(item);
	wg_inspect_free(d);
	wg_inspect_free(NULL);
	g.version = 0;
	ck_assert_int_eq(wg_inspect_new(&d, 0, &g, 1), WG_EINVAL);
	ck_assert_ptr_null(d);
}
END_TEST

/* The summary line counts what the reports hold. */
START_TEST(test_summary_line)
{
	wg_ruleset *rs = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_int_eq(wg_target_parse(t, "cxx11abi=1"), WG_OK);
	wg_scan *s = t_scan(FIX_WHEELS "/flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl");
	wg_report *r = NULL;
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, t), WG_OK);
	size_t sev[3] = {0};
	for (size_t i = 0; i < wg_report_count(r); i++) {
		wg_finding_info f = WG_FINDING_INFO_INIT;
		ck_assert_int_eq(wg_report_finding(&f, r, i), WG_OK);
		sev[f.severity]++;
	}
	ck_assert_uint_ge(sev[WG_SEV_ERROR], 1); /* WG-ABI-001 */
	const char *paths[] = {"a.whl", "b.whl"};
	const wg_report *reps[] = {r, NULL};
	const char *errs[] = {NULL, "b.whl: gone"};
	char *line = NULL, want[512];
	ck_assert_int_eq(wg_reports_format(&line, WG_FORMAT_SUMMARY, rs, t, paths, reps, errs, 2,
					   WG_SEV_ERROR), WG_OK);
	snprintf(want, sizeof(want), "2 inputs: 0 passed, 1 failed, 1 unreadable; %zu error%s, %zu "
		 "warning%s, %zu info (profile: install, fail-on: error)\n", sev[2],
		 sev[2] == 1 ? "" : "s", sev[1], sev[1] == 1 ? "" : "s", sev[0]);
	ck_assert_str_eq(line, want);
	wg_free(line);
	ck_assert_int_eq(wg_reports_format(&line, (wg_format)42, rs, t, paths, reps, errs, 2,
					   WG_SEV_ERROR), WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "no format 42"));
	wg_report_free(r);
	wg_scan_free(s);
	wg_target_free(t);
	wg_ruleset_free(rs);
}
END_TEST

/* --format github is lines, the last (the summary notice) too: it ends with one newline. */
START_TEST(test_github_lines_end_with_newline)
{
	wg_ruleset *rs = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	wg_scan *s = t_scan(FIX_WHEELS "/badrec-1.0-py3-none-any.whl");
	wg_report *r = NULL;
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, t), WG_OK);
	const char *paths[] = {"a.whl", "b.whl"};
	const wg_report *with[] = {r, NULL}, *none[] = {NULL, NULL};
	const char *errs[] = {NULL, "b.whl: gone"};
	for (int k = 0; k < 3; k++) {
		char *doc = NULL;
		ck_assert_int_eq(wg_reports_format(&doc, WG_FORMAT_GITHUB, rs, t, paths,
						   k == 1 ? none : with, errs, k == 2 ? 0 : 2,
						   WG_SEV_ERROR), WG_OK);
		size_t n = strlen(doc);
		ck_assert_uint_ge(n, 2);
		ck_assert_int_eq(doc[n - 1], '\n');
		ck_assert_int_ne(doc[n - 2], '\n');
		const char *last = n > 1 ? memrchr(doc, '\n', n - 1) : NULL;
		ck_assert_int_eq(strncmp(last ? last + 1 : doc, "::notice title=wheelgate::", 26), 0);
		wg_free(doc);
	}
	wg_report_free(r);
	wg_scan_free(s);
	wg_target_free(t);
	wg_ruleset_free(rs);
}
END_TEST

/* A suppressed finding leaves the findings (the verdict) and is kept with its reason for
 * SARIF; a rule's `security: true` reaches wg_rule_info version 3 and SARIF alone. */
START_TEST(test_suppress_and_security)
{
	wg_ruleset *rs = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	wg_scan *s = t_scan(FIX_WHEELS "/badrec-1.0-py3-none-any.whl");
	wg_report *r = NULL;
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, t), WG_OK);
	size_t n = wg_report_count(r);
	ck_assert_uint_ge(n, 2);
	ck_assert_int_eq(wg_report_worst(r), WG_SEV_ERROR);
	wg_finding_info first = WG_FINDING_INFO_INIT;
	ck_assert_int_eq(wg_report_finding(&first, r, 0), WG_OK);
	ck_assert_ptr_null(first.suppressed);
	ck_assert_uint_eq(wg_report_suppressed_count(r), 0);
	ck_assert_int_eq(wg_report_suppress(r, n, "x"), WG_ENOTFOUND);
	ck_assert_int_eq(wg_report_suppress(NULL, 0, "x"), WG_EINVAL);
	char why[] = "in the baseline b.json";
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(wg_report_suppress(r, 0, i ? NULL : why), WG_OK);
	why[0] = 'X'; /* copied */
	ck_assert_uint_eq(wg_report_count(r), 0);
	ck_assert_int_eq(wg_report_worst(r), -1);
	ck_assert_uint_eq(wg_report_suppressed_count(r), n);
	wg_finding_info fi = WG_FINDING_INFO_INIT;
	ck_assert_int_eq(wg_report_suppressed(&fi, r, 0), WG_OK);
	ck_assert_str_eq(fi.rule, first.rule);
	ck_assert_str_eq(fi.message, first.message);
	ck_assert_str_eq(fi.suppressed, "in the baseline b.json");
	ck_assert_int_eq(wg_report_suppressed(&fi, r, 1), WG_OK);
	ck_assert_str_eq(fi.suppressed, "");
	fi.version = 1; /* before `suppressed`: left as it is */
	fi.suppressed = "untouched";
	ck_assert_int_eq(wg_report_suppressed(&fi, r, 0), WG_OK);
	ck_assert_str_eq(fi.suppressed, "untouched");
	ck_assert_int_eq(wg_report_suppressed(&fi, r, n), WG_ENOTFOUND);
	/* SARIF: every one a result with its suppression; the run passes */
	const char *paths[] = {"badrec-1.0-py3-none-any.whl"};
	const wg_report *reps[] = {r};
	char *doc = NULL;
	ck_assert_int_eq(wg_reports_format(&doc, WG_FORMAT_SARIF, rs, t, paths, reps, NULL, 1,
					   WG_SEV_ERROR), WG_OK);
	json_error_t je;
	json_t *j = json_loads(doc, 0, &je), *run = json_array_get(json_object_get(j, "runs"), 0);
	json_t *results = json_object_get(run, "results");
	ck_assert_uint_eq(json_array_size(results), n);
	json_t *sup = json_array_get(json_object_get(json_array_get(results, 0), "suppressions"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(sup, "kind")), "external");
	ck_assert_str_eq(json_string_value(json_object_get(sup, "justification")),
			 "in the baseline b.json");
	json_t *inv = json_array_get(json_object_get(run, "invocations"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(inv, "exitCode")), 0);
	/* security: from the rule files, in wg_rule_info and in SARIF's rule properties */
	size_t seen[2] = {0, 0};
	json_t *rules = json_object_get(json_object_get(json_object_get(run, "tool"), "driver"),
					"rules");
	for (size_t i = 0; i < wg_ruleset_count(rs); i++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		ck_assert_int_eq(wg_ruleset_rule(&ri, rs, i), WG_OK);
		json_t *props = json_object_get(json_array_get(rules, i), "properties");
		ck_assert_str_eq(json_string_value(json_object_get(json_array_get(rules, i), "id")),
				 ri.id);
		ck_assert_int_eq(json_object_get(props, "security-severity") != NULL, ri.security);
		if (!strcmp(ri.id, "WG-REC-001") || !strcmp(ri.id, "WG-WHL-004")) {
			ck_assert_int_eq(ri.security, 1);
			seen[0]++;
		}
		if (!strcmp(ri.id, "WG-TAG-005") || !strcmp(ri.id, "WG-HOL-001")) {
			ck_assert_int_eq(ri.security, 0);
			seen[1]++;
		}
		ri.version = 2; /* before `security`: left as it is */
		ri.security = 42;
		ck_assert_int_eq(wg_ruleset_rule(&ri, rs, i), WG_OK);
		ck_assert_int_eq(ri.security, 42);
	}
	ck_assert_uint_eq(seen[0], 2);
	ck_assert_uint_eq(seen[1], 2);
	json_decref(j);
	wg_free(doc);
	wg_report_free(r);
	wg_scan_free(s);
	wg_target_free(t);
	wg_ruleset_free(rs);
}
END_TEST

/* The text of `wheelgate inspect`: the lines the CLI prints, colours and symbols as asked,
 * text from the input escaped. */
START_TEST(test_scan_format_text)
{
	const char *path = FIX_WHEELS "/mixedabi-1.0-cp312-cp312-linux_x86_64.whl";
	wg_scan *s = t_scan(path);
	char *abi = NULL, *none = NULL, *all = NULL, *color = NULL, want[512];
	ck_assert_int_eq(wg_scan_format_text(&abi, s, WG_TEXT_ABI_SYMBOLS | WG_TEXT_MEMBERS, NULL, 0),
			 WG_OK);
	snprintf(want, sizeof(want), "%s  (wheel)\n  name        mixedabi 1.0\n", path);
	ck_assert_int_eq(strncmp(abi, want, strlen(want)), 0);
	ck_assert_ptr_nonnull(strstr(abi, "\n  RECORD      4 ok, 1 unhashed\n"));
	ck_assert_ptr_nonnull(strstr(abi, "\n    ok                17416 deflate  ext_mixed" EXT_SFX
				    "  [ELF]\n"));
	ck_assert_ptr_nonnull(strstr(abi, "\n  ELF objects 1\n  object ext_mixed" EXT_SFX
				    "  (17.0 KiB)\n"));
	ck_assert_ptr_nonnull(strstr(abi, "\n    string ABI  mixed  (torch-facing: 2 new, 1 old -> "
				    "mixed; other: 2 new, 3 old)\n"));
	ck_assert_ptr_nonnull(strstr(abi, "\n      U global old        _ZNSs4_Rep20_S_empty_rep_"
				    "storageE@GLIBCXX_3.4\n"));
	ck_assert_ptr_null(strchr(abi, '\033'));
	ck_assert_str_eq(abi + strlen(abi) - 2, "\n\n");
	/* no symbol lines, no members; every symbol; colours only when asked */
	ck_assert_int_eq(wg_scan_format_text(&none, s, WG_TEXT_NO_SYMBOLS, NULL, 0), WG_OK);
	ck_assert_ptr_null(strstr(none, "      U global"));
	ck_assert_ptr_null(strstr(none, "[ELF]"));
	ck_assert_ptr_nonnull(strstr(none, "\n    symbols     31 (9 defined, 22 undefined)\n"));
	ck_assert_int_eq(wg_scan_format_text(&all, s, 0, NULL, 0), WG_OK);
	ck_assert_uint_gt(strlen(all), strlen(abi));
	ck_assert_int_eq(wg_scan_format_text(&color, s, WG_TEXT_COLOR | WG_TEXT_NO_SYMBOLS, NULL, 0),
			 WG_OK);
	ck_assert_ptr_nonnull(strstr(color, "    string ABI  \033[33mmixed\033[0m  (torch-facing"));
	ck_assert_ptr_nonnull(strstr(color, "  \033[1mobject ext_mixed" EXT_SFX "\033[0m  (17.0 KiB)\n"));
	wg_free(abi);
	wg_free(none);
	wg_free(all);
	wg_free(color);
	wg_scan_free(s);
	/* a name that would drive a terminal comes out escaped */
	size_t len;
	char *buf = slurp(FIX_ABI "/ext_mixed" EXT_SFX, &len), *text = NULL;
	ck_assert_int_eq(wg_scan_buffer(&s, t_sc, buf, len, "/x/\033[31mred\xff.so"), WG_OK);
	ck_assert_int_eq(wg_scan_format_text(&text, s, WG_TEXT_NO_SYMBOLS, NULL, 0), WG_OK);
	ck_assert_int_eq(strncmp(text, "/x/\\x1b[31mred\\xff.so  (ELF object)\n", 36), 0);
	ck_assert_ptr_null(strchr(text, '\033'));
	wg_free(text);
	wg_scan_free(s);
	free(buf);
	ck_assert_int_eq(wg_scan_format_text(&text, NULL, 0, NULL, 0), WG_EINVAL);
	ck_assert_ptr_nonnull(strstr(wg_error_last(), "wg_scan_format_text"));
}
END_TEST

Suite *suite_api(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("api");
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_add_loop_test(tc, test_path_fd_buffer_agree, 0,
			    (int)(sizeof(same_inputs) / sizeof(same_inputs[0])));
	tcase_add_test(tc, test_buffer_errors);
	tcase_add_test(tc, test_handles_and_versions);
	tcase_add_test(tc, test_threads_share_a_context);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_json_dump_escapes_controls);
	tcase_add_test(tc, test_directory_inputs);
	tcase_add_test(tc, test_not_applied);
	tcase_add_test(tc, test_target_handle);
	tcase_add_test(tc, test_gpu_auto_keeps_the_profile);
	tcase_add_test(tc, test_struct_versions);
	tcase_add_test(tc, test_gpu_names);
	tcase_add_test(tc, test_inspect_document);
	tcase_add_test(tc, test_summary_line);
	tcase_add_test(tc, test_github_lines_end_with_newline);
	tcase_add_test(tc, test_suppress_and_security);
	tcase_add_test(tc, test_scan_format_text);
	suite_add_tcase(s, tc);
	return s;
}

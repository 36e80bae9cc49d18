/*
 * The error record (wg_error_last_info): every failing call that has no scanner leaves the
 * code it returned and its class; a successful call leaves the record as it was (the
 * libgit2 rule); notices stay off it; it is per thread.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "test_util.h"

/* A copy of the record, to compare after other calls. */
typedef struct {
	int code;
	wg_error_class klass;
	char message[1024];
} saved_error;

static saved_error save(void)
{
	saved_error s;
	const wg_error *e = wg_error_last_info();
	s.code = e->code;
	s.klass = e->klass;
	snprintf(s.message, sizeof(s.message), "%s", e->message);
	return s;
}

static void assert_unchanged(const saved_error *s)
{
	const wg_error *e = wg_error_last_info();
	ck_assert_int_eq(e->code, s->code);
	ck_assert_int_eq(e->klass, s->klass);
	ck_assert_str_eq(e->message, s->message);
}

static void assert_empty(void)
{
	const wg_error *e = wg_error_last_info();
	ck_assert_uint_eq(e->version, WG_ERROR_VERSION);
	ck_assert_int_eq(e->code, WG_OK);
	ck_assert_int_eq(e->klass, WG_ERROR_CLASS_NONE);
	ck_assert_str_eq(e->message, "");
	ck_assert_str_eq(wg_error_last(), "");
}

/* rc is what the call returned: the record has that code, the class, and a message that
 * contains needle and is wg_error_last()'s text. */
static void assert_error(int rc, int code, wg_error_class klass, const char *needle)
{
	ck_assert_int_eq(rc, code);
	const wg_error *e = wg_error_last_info();
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->version, WG_ERROR_VERSION);
	ck_assert_int_eq(e->code, code);
	ck_assert_msg(e->klass == klass, "class %s, not %s (%s)", wg_error_class_name(e->klass),
		      wg_error_class_name(klass), e->message);
	ck_assert_msg(strstr(e->message, needle), "'%s' not in '%s'", needle, e->message);
	ck_assert_str_eq(e->message, wg_error_last());
	wg_error_clear();
	assert_empty();
}

START_TEST(test_each_path_sets_code_and_class)
{
	wg_error_clear();
	assert_empty();
	/* Refused for its arguments: a NULL, a struct version, a malformed argument. */
	assert_error(wg_target_new(NULL), WG_EINVAL, WG_ERROR_CLASS_INVALID,
		     "wg_target_new: no place for the target");
	wg_options o = WG_OPTIONS_INIT;
	o.version = 99;
	wg_context *ctx = NULL;
	assert_error(wg_context_new(&ctx, &o), WG_EINVAL, WG_ERROR_CLASS_INVALID,
		     "wg_options version 99 is not supported");
	ck_assert_ptr_null(ctx);
	char buf[16];
	assert_error(wg_facts_path(buf, sizeof(buf), "/tmp", "xyz"), WG_EINVAL,
		     WG_ERROR_CLASS_INVALID, "not a sha256");
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	assert_error(wg_target_set(t, NULL, "3.12"), WG_EINVAL, WG_ERROR_CLASS_INVALID,
		     "wg_target_set: no key");
	/* The target's facts. */
	assert_error(wg_target_set(t, "python", "three"), WG_EINVAL, WG_ERROR_CLASS_TARGET,
		     "python=three");
	wg_gpu g = WG_GPU_INIT;
	assert_error(wg_target_gpu(&g, t, 0), WG_ENOTFOUND, WG_ERROR_CLASS_TARGET,
		     "the target has 0 GPUs");
	/* GPUs. */
	assert_error(wg_gpu_parse(&g, t_ctx, "no-such-gpu"), WG_ENOTFOUND, WG_ERROR_CLASS_GPU,
		     "unknown GPU 'no-such-gpu'");
	assert_error(wg_gpu_parse(&g, t_ctx, "1.0"), WG_EINVAL, WG_ERROR_CLASS_GPU,
		     "outside the known range");
	/* Variant index files. */
	assert_error(wg_target_add_variants(t, "/nonexistent/x.json"), WG_EFORMAT,
		     WG_ERROR_CLASS_VARIANTS, "not a variant index file");
	assert_error(wg_target_add_variants(t, "/nonexistent/dir/foo-1.0-variants.json"), WG_EIO,
		     WG_ERROR_CLASS_VARIANTS, "cannot read");
	/* Rules. */
	const char *bogus[] = { "WG-XYZ-000" };
	wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
	ro.disable = bogus;
	ro.ndisable = 1;
	wg_ruleset *rs = NULL;
	assert_error(wg_ruleset_new(&rs, t_ctx, &ro), WG_EINVAL, WG_ERROR_CLASS_RULES,
		     "--disable: no rule 'WG-XYZ-000'");
	ck_assert_ptr_null(rs);
	/* The facts store. */
	char hex[65];
	assert_error(wg_file_sha256(hex, "/nonexistent/file.whl"), WG_EIO, WG_ERROR_CLASS_STORE,
		     "/nonexistent/file.whl: ");
	assert_error(wg_facts_path(buf, 8, "/tmp/store",
				   "0000000000000000000000000000000000000000000000000000000000000000"),
		     WG_ELIMIT, WG_ERROR_CLASS_STORE, "the path is too long");
	/* Scanner calls: the message stays on the scanner too. */
	wg_scan *s = NULL;
	static const char junk[] = "PK\003\004 this is no zip";
	assert_error(wg_scan_buffer(&s, t_sc, junk, sizeof(junk), "junk.whl"), WG_EFORMAT,
		     WG_ERROR_CLASS_ZIP, "junk.whl: not a readable zip archive");
	ck_assert_ptr_nonnull(strstr(wg_scanner_error(t_sc), "junk.whl: not a readable zip"));
	assert_error(wg_scan_buffer(&s, t_sc, "abc", 3, NULL), WG_EUNSUPPORTED,
		     WG_ERROR_CLASS_INPUT, "(buffer): neither a wheel");
	assert_error(wg_scan_path(&s, NULL, "x"), WG_EINVAL, WG_ERROR_CLASS_INVALID,
		     "wg_scan_path: a required argument");
	ck_assert_ptr_null(s);
	wg_env *env = NULL;
	assert_error(wg_env_open(&env, t_sc, "/nonexistent/site-packages", NULL), WG_ENOTFOUND,
		     WG_ERROR_CLASS_ENV, "/nonexistent/site-packages");
	ck_assert_ptr_null(env);
	/* Out of memory is one class wherever it happens (no call can be made to run out). */
	wg_set_error(WG_ERROR_CLASS_RULES, WG_ENOMEM, "out of memory");
	assert_error(WG_ENOMEM, WG_ENOMEM, WG_ERROR_CLASS_NOMEM, "out of memory");
	wg_target_free(t);
}
END_TEST

START_TEST(test_success_leaves_the_record)
{
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_int_eq(wg_target_set(t, "cuda", "twelve"), WG_EINVAL);
	saved_error before = save();
	ck_assert_int_eq(before.klass, WG_ERROR_CLASS_TARGET);
	/* Successful calls of every kind after it: the record still describes that failure. */
	ck_assert_int_eq(wg_target_set(t, "python", "3.12"), WG_OK);
	ck_assert_int_eq(wg_target_parse(t, "cuda=12.8,glibc=2.39"), WG_OK);
	wg_gpu g = WG_GPU_INIT;
	ck_assert_int_eq(wg_gpu_parse(&g, t_ctx, "H100"), WG_OK);
	ck_assert_int_eq(wg_target_add_gpu(t, t_ctx, "sm_90"), WG_OK);
	wg_ruleset *rs = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	wg_scan *s = t_scan(FIX_WHEELS "/flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-"
				       "linux_x86_64.whl");
	wg_report *r = NULL;
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, t), WG_OK);
	char *j = NULL;
	ck_assert_int_eq(wg_target_to_json(&j, t), WG_OK);
	wg_free(j);
	assert_unchanged(&before);
	/* Only a failure replaces it, a scanner's too; wg_error_clear() empties it. */
	wg_scan *none = NULL;
	ck_assert_int_eq(wg_scan_path(&none, t_sc, "/nonexistent/x.whl"), WG_ENOTFOUND);
	ck_assert_ptr_null(none);
	ck_assert_int_eq(wg_error_last_info()->klass, WG_ERROR_CLASS_INPUT);
	ck_assert_str_eq(wg_error_last_info()->message, wg_scanner_error(t_sc));
	ck_assert_int_eq(wg_gpu_parse(&g, t_ctx, "no-such-gpu"), WG_ENOTFOUND);
	ck_assert_int_eq(wg_error_last_info()->klass, WG_ERROR_CLASS_GPU);
	wg_error_clear();
	assert_empty();
	wg_report_free(r);
	wg_scan_free(s);
	wg_ruleset_free(rs);
	wg_target_free(t);
}
END_TEST

START_TEST(test_class_names)
{
	static const struct {
		wg_error_class klass;
		const char *name;
	} names[] = {
		{ WG_ERROR_CLASS_NONE, "none" },	 { WG_ERROR_CLASS_NOMEM, "nomem" },
		{ WG_ERROR_CLASS_INVALID, "invalid" }, { WG_ERROR_CLASS_DATA, "data" },
		{ WG_ERROR_CLASS_RULES, "rules" },	 { WG_ERROR_CLASS_TARGET, "target" },
		{ WG_ERROR_CLASS_GPU, "gpu" },	 { WG_ERROR_CLASS_VARIANTS, "variants" },
		{ WG_ERROR_CLASS_STORE, "store" },	 { WG_ERROR_CLASS_INPUT, "input" },
		{ WG_ERROR_CLASS_ZIP, "zip" },	 { WG_ERROR_CLASS_WHEEL, "wheel" },
		{ WG_ERROR_CLASS_ELF, "elf" },	 { WG_ERROR_CLASS_FATBIN, "fatbin" },
		{ WG_ERROR_CLASS_ENV, "env" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_str_eq(wg_error_class_name(names[i].klass), names[i].name);
	ck_assert_str_eq(wg_error_class_name(WG_ERROR_CLASS_ENV + 1), "unknown");
	ck_assert_str_eq(wg_error_class_name(-1), "unknown");
}
END_TEST

/* "auto" that finds no GPU: the notice is on the target, the record is emptied (so that a
 * caller of 0.1.0 reading wg_error_last() sees no older failure as a notice). */
START_TEST(test_notice_is_not_an_error)
{
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_ptr_null(wg_target_notice(t));
	ck_assert_ptr_null(wg_target_notice(NULL));
	ck_assert_int_eq(wg_target_add_gpu(t, t_ctx, "sm_90"), WG_OK);
	ck_assert_ptr_null(wg_target_notice(t));
	wg_target_free(t);
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_int_eq(wg_target_new(NULL), WG_EINVAL);
	ck_assert_int_eq(wg_target_add_gpu(t, t_ctx, "auto"), WG_OK);
	assert_empty();
	bool none = wg_target_gpu_count(t) == 0;
	const char *n = wg_target_notice(t);
	if (none)
		ck_assert_msg(n && wg_has_prefix(n, "no local GPU (") && n[strlen(n) - 1] == ')',
			      "%s", n ? n : "(null)");
	else
		ck_assert_ptr_null(n);
	/* Asked again on the same machine: the same notice, once. */
	ck_assert_int_eq(wg_target_add_gpu(t, t_ctx, "auto"), WG_OK);
	if (none)
		ck_assert_str_eq(wg_target_notice(t), n);
	wg_target_free(t);
}
END_TEST

/* Two threads fail differently at the same time; each reads its own record, and the main
 * thread's is untouched. */
typedef struct {
	pthread_barrier_t *both_failed;
	int which;
	const wg_error *record;
	int ok;
} thread_job;

static void *fail_then_read(void *arg)
{
	thread_job *j = arg;
	wg_gpu g = WG_GPU_INIT;
	int rc = j->which == 0 ? wg_target_new(NULL) : wg_gpu_parse(&g, t_ctx, "no-such-gpu");
	pthread_barrier_wait(j->both_failed);
	const wg_error *e = wg_error_last_info();
	j->record = e;
	j->ok = j->which == 0
			? rc == WG_EINVAL && e->code == WG_EINVAL &&
				  e->klass == WG_ERROR_CLASS_INVALID &&
				  strstr(e->message, "wg_target_new") != NULL
			: rc == WG_ENOTFOUND && e->code == WG_ENOTFOUND &&
				  e->klass == WG_ERROR_CLASS_GPU &&
				  strstr(e->message, "unknown GPU") != NULL;
	j->ok = j->ok && !strcmp(e->message, wg_error_last());
	return NULL;
}

START_TEST(test_record_is_per_thread)
{
	wg_set_error(WG_ERROR_CLASS_DATA, WG_EDATA, "the main thread's failure");
	saved_error mine = save();
	pthread_barrier_t b;
	ck_assert_int_eq(pthread_barrier_init(&b, NULL, 2), 0);
	thread_job jobs[2] = { { &b, 0, NULL, 0 }, { &b, 1, NULL, 0 } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, fail_then_read, &jobs[i]), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	pthread_barrier_destroy(&b);
	ck_assert_msg(jobs[0].ok, "thread 0 read another record");
	ck_assert_msg(jobs[1].ok, "thread 1 read another record");
	ck_assert_ptr_ne(jobs[0].record, jobs[1].record);
	ck_assert_ptr_ne(jobs[0].record, wg_error_last_info());
	assert_unchanged(&mine);
	ck_assert_int_eq(wg_error_last_info()->klass, WG_ERROR_CLASS_DATA);
	wg_error_clear();
}
END_TEST

Suite *suite_errors(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = tcase_create("errors");
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_add_test(tc, test_each_path_sets_code_and_class);
	tcase_add_test(tc, test_success_leaves_the_record);
	tcase_add_test(tc, test_class_names);
	tcase_add_test(tc, test_notice_is_not_an_error);
	tcase_add_test(tc, test_record_is_per_thread);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * Helpers shared by the Check suites.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

int t_skip_fd = -1;
wg_context *t_ctx;
wg_scanner *t_sc;

void t_setup(void)
{
	ck_assert_int_eq(wg_context_new(&t_ctx, NULL), WG_OK);
	ck_assert_int_eq(wg_scanner_new(&t_sc, t_ctx), WG_OK);
}

void t_teardown(void)
{
	wg_scanner_free(t_sc);
	wg_context_free(t_ctx);
	t_sc = NULL;
	t_ctx = NULL;
}

wg_scan *t_scan(const char *path)
{
	wg_scan *s = NULL;
	int rc = wg_scan_path(&s, t_sc, path);
	ck_assert_msg(rc == WG_OK, "scan of %s failed (%d): %s", path, rc, wg_scanner_error(t_sc));
	ck_assert_ptr_nonnull(s);
	return s;
}

const char *t_scan_fails(const char *path, int code)
{
	wg_scan *s = NULL;
	int rc = wg_scan_path(&s, t_sc, path);
	ck_assert_msg(rc == code, "scan of %s: expected %d (%s), got %d: %s", path, code,
		      wg_strerror(code), rc, wg_scanner_error(t_sc));
	ck_assert_ptr_null(s);
	return wg_scanner_error(t_sc);
}

int t_find_problem(const wg_scan *s, int code, const char *needle)
{
	for (size_t i = 0; i < wg_scan_problem_count(s); i++) {
		wg_problem_info p = WG_PROBLEM_INFO_INIT;
		ck_assert_int_eq(wg_scan_problem(&p, s, i), WG_OK);
		if (p.code == code && strstr(p.message, needle))
			return (int)i;
	}
	return -1;
}

const wg_object *t_object(const wg_scan *s, const char *suffix)
{
	for (size_t i = 0; i < wg_scan_object_count(s); i++) {
		const wg_object *o = wg_scan_object(s, i);
		wg_object_info oi = WG_OBJECT_INFO_INIT;
		wg_object_get_info(&oi, o);
		size_t n = strlen(oi.path), m = strlen(suffix);
		if (n >= m && !strcmp(oi.path + n - m, suffix))
			return o;
	}
	return NULL;
}

long t_symbol(const wg_object *o, const char *name, wg_symbol_info *out)
{
	wg_object_info oi = WG_OBJECT_INFO_INIT;
	wg_object_get_info(&oi, o);
	for (size_t i = 0; i < oi.symbol_count; i++) {
		wg_symbol_info si = WG_SYMBOL_INFO_INIT;
		wg_object_symbol(&si, o, i);
		if (!strcmp(si.name, name)) {
			if (out)
				*out = si;
			return (long)i;
		}
	}
	return -1;
}

long t_member(const wg_scan *s, const char *name, wg_member_info *out)
{
	for (size_t i = 0; i < wg_scan_member_count(s); i++) {
		wg_member_info mi = WG_MEMBER_INFO_INIT;
		wg_scan_member(&mi, s, i);
		if (!strcmp(mi.name, name)) {
			if (out)
				*out = mi;
			return (long)i;
		}
	}
	return -1;
}

bool t_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

bool t_in_ci(void)
{
	const char *ci = getenv("CI");
	return ci && (!strcasecmp(ci, "true") || !strcmp(ci, "1") || !strcasecmp(ci, "yes"));
}

bool t_skip_unless(const char *path, const char *why)
{
	if (t_exists(path))
		return false;
	if (t_in_ci())
		ck_abort_msg("%s: %s not found, and CI (CI=true) must have it", why, path);
	fprintf(stderr, "SKIP: %s (%s not found; a failure in CI)\n", why, path);
	if (t_skip_fd >= 0) {
		/* Check runs each test in a child: the runner counts the bytes. */
		ssize_t n = write(t_skip_fd, "s", 1);
		(void)n;
	}
	return true;
}

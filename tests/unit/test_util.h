/*
 * Helpers shared by the Check suites: fixture paths, a context and scanner per test, and
 * lookups in scan results.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_TEST_UTIL_H
#define WG_TEST_UTIL_H

#include <check.h>
#include <stdbool.h>

#include "wheelgate.h"

#define FIX_ABI WG_FIXTURES "/abi"
#define FIX_WHEELS WG_FIXTURES "/wheels"
#define EXT_SFX ".cpython-312-x86_64-linux-gnu.so"

/* One context and scanner, created fresh by setup() and freed by teardown(). */
extern wg_context *t_ctx;
extern wg_scanner *t_sc;
void t_setup(void);
void t_teardown(void);

/* Scans path and asserts success. */
wg_scan *t_scan(const char *path);
/* Scans path and asserts failure with code; returns the scanner's message. */
const char *t_scan_fails(const char *path, int code);
/* The problem whose code matches and whose message contains needle, or -1. */
int t_find_problem(const wg_scan *s, int code, const char *needle);
/* The object with the given path suffix, or NULL. */
const wg_object *t_object(const wg_scan *s, const char *path_suffix);
/* The symbol of o named name (mangled), or -1. */
long t_symbol(const wg_object *o, const char *name, wg_symbol_info *out);
/* The member named name, or -1. */
long t_member(const wg_scan *s, const char *name, wg_member_info *out);
bool t_exists(const char *path);
/* A file the runner opens: t_skip_unless writes a byte to it per skip (-1: none). */
extern int t_skip_fd;
/* True where CI=true: what CI always has (../shared) must then be present. */
bool t_in_ci(void);
/* When path does not exist: fails the test in CI, else prints "SKIP: why" and returns true. */
bool t_skip_unless(const char *path, const char *why);

Suite *suite_wheelname(void);
Suite *suite_text(void);
Suite *suite_classify(void);
Suite *suite_abi(void);
Suite *suite_wheel(void);
Suite *suite_corpus(void);
Suite *suite_api(void);
Suite *suite_errors(void);
Suite *suite_fatbin(void);
Suite *suite_rules(void);
Suite *suite_env(void);
Suite *suite_sysver(void);
Suite *suite_facts(void);
Suite *suite_report_api(void);
Suite *suite_select(void);
Suite *suite_stream(void);
Suite *suite_sparse(void);

#endif

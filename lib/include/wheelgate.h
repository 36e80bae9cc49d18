/*
 * wheelgate: catch broken CUDA/C++ Python wheels before they are installed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The one public header: programs include it alone. Its parts, under wheelgate/ (each
 * compiles alone, but a program needs none of them by name): common.h (version, errors,
 * WG_API, options, context), facts.h (scans and their facts, inspect documents), target.h
 * (targets, environments), rules.h (rulesets, checks, reports, formats), store.h (the
 * facts store) and record.h (wheelgate.scan/1 records). Conventions:
 *  - every name starts with wg_ / WG_; objects are opaque handles with _new/_free, and
 *    _free(NULL) is safe;
 *  - functions return WG_OK (0) or a negative WG_E* code; out-params come first.
 *
 * Errors: every failing call fills this thread's error record, wg_error_last_info(): the
 * code it returned, a class (what failed: wg_error_class) and the message, which
 * wg_error_last() returns alone. A successful call leaves the record as it was (libgit2's
 * rule): read it after a negative return, on the thread that made the call.
 *  - a call made with a scanner (wg_scan_path/_fd/_buffer, wg_check, wg_env_open, ...) that
 *    fails on its input or data also leaves the message on the scanner: wg_scanner_error()
 *    (which such a call clears when it starts);
 *  - a call refused for its arguments (a NULL where a handle or out-param is needed, a
 *    struct version this library does not read) has class WG_ERROR_CLASS_INVALID, scanner
 *    calls included: there may be no handle to hold the message;
 *  - notices of a call that succeeds are never put in the record: they stay on the object
 *    the call set up (wg_target_notice()) or in the report (wg_report_not_applied());
 *  - an index past a count returns WG_ENOTFOUND and leaves the record as it was (ask the
 *    count first);
 *  - findings about a wheel are facts in a report, never errors; parts of an input that
 *    cannot be read are problems of the scan (wg_scan_problem), the call succeeds.
 *
 * Versioned structs: every struct passed in or out begins with `unsigned int version`;
 * initialise it with the matching _INIT macro (or set version to its *_VERSION). Fields are
 * only ever appended, and a *_VERSION goes up when they are. The library accepts every
 * version from 1 to the one it was built with and reads or fills only the fields that
 * version has, so a program built against an older header keeps working; version 0 or a
 * newer version than the library knows fails with WG_EINVAL ("wg_X version N is not
 * supported (this library reads 1 to M)" in wg_error_last()). wg_target is opaque instead.
 *
 * Ownership: memory handed over through `char **out` (JSON and text documents, wg_escape,
 * self-test reports) belongs to the caller: free it with wg_free(). Every other pointer a
 * call returns, or leaves in a struct it fills, is borrowed and must not be freed:
 *  - constant text (wg_strerror, wg_error_name, wg_version_string, the *_name and *_str
 *    functions) lives as long as the program;
 *  - wg_error_last() and wg_error_last_info() live until the next failing call on the same
 *    thread (or wg_error_clear()), and
 *    wg_scanner_error() until the next call with that scanner or its _free;
 *  - the facts of a scan (wg_scan_get_path, wg_wheel_get, wg_wheel_list_item,
 *    wg_scan_wheel_path, wg_scan_object and everything read from the object, the strings
 *    of wg_member_info, wg_problem_info, wg_object_info, wg_symbol_info and the fatbin
 *    infos) live until wg_scan_free() of that scan;
 *  - a report's strings (wg_finding_info, wg_not_applied_info) live until wg_report_free();
 *    their rule ids belong to the ruleset, which must outlive the report;
 *  - wg_rule_info's strings live until wg_ruleset_free(); wg_env_info's and
 *    wg_env_list_item's until wg_env_free(); a wg_gpu's name until wg_context_free() of the
 *    context that named it.
 *
 * Threads: a wg_context (the loaded data and options) is immutable once created and may be
 * shared by any number of threads; it must outlive the scanners and scans made with it. A
 * wg_ruleset is immutable and may be shared too. A wg_scanner is used by one
 * thread at a time; create one per thread. A wg_scan (the facts of one input) and a
 * wg_report are read-only and may be read from any thread. A wg_target, once set up, only
 * is read by checks (it borrows the wg_env given to wg_target_set_env). A wg_env loads libraries lazily: one thread at a time.
 */
#ifndef WHEELGATE_H
#define WHEELGATE_H

#include "wheelgate/common.h"
#include "wheelgate/facts.h"
#include "wheelgate/target.h"
#include "wheelgate/rules.h"
#include "wheelgate/store.h"
#include "wheelgate/record.h"

#endif /* WHEELGATE_H */

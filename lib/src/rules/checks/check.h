/*
 * All a check kind includes: its context (the scan, the target, the rule, the report), the
 * placeholders it fills, wg_emit, the rule's patterns and scope, the iterator over the objects
 * in scope, and the loader's and the roles' verdicts that the engine computes once per scan.
 * A kind is one file, rules/checks/<name>.c, defining `const wg_check_kind wg_check_<name>`,
 * and one line in list.h.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CHECK_H
#define WG_CHECK_H

#include "rules/rules.h"

#define WG_MAX_VARS 32
typedef struct {
	struct {
		const char *key, *value;
	} v[WG_MAX_VARS];
	int n;
} wg_vars;
void wg_vars_set(wg_vars *vs, const char *key, const char *value);

struct wg_check_ctx {
	const wg_scan *scan;
	const wg_target *target;
	const wg_rule *rule;
	wg_severity severity; /* the rule's severity in this profile */
	wg_profile profile;
	wg_rmatch *md;
	wg_report *report;
	/* The loader's verdict on every object, computed once for the ld-* kinds. */
	bool ld_done, python_assumed;
	wg_vec ld_issues; /* wg_ld_issue */
	/* The facts derived once for this input (analysis/analysis.h): load roles, imports, ... */
	struct wg_analysis *an;
	const struct wg_role *roles; /* one per scan object, once wg_check_roles succeeded */
	/* A pattern that ran past PCRE2's match or depth limit decided nothing: the first such
	 * (pattern list, subject) makes the check fail, never a silent non-match (issue 12). */
	const char *limit_list;
	char limit_subject[64];
	/* Findings kept of the current rule, and the bounds (wg_options.max_rule_findings,
	 * max_findings; 0: none): past them findings are counted in report->more. */
	size_t rule_kept, max_rule, max_all;
	size_t rule_more; /* the current rule's index in report->more; SIZE_MAX: none yet */
};

/**
 * Whether a finding of the current rule at severity sev would be counted rather than kept
 * (the rule or the input is past its bound): then it is counted now and the caller skips the
 * work of building it. wg_emit calls it itself; a check that formats much per finding calls
 * it first. Returns true when counted (or out of memory: *rc then says so).
 */
bool wg_emit_counted(wg_check_ctx *cc, wg_severity sev, int *rc);
/** Counts n findings of the current rule at severity sev as past the bound, kept nowhere (a
 * check that knows of findings it did not build, such as problems a scan counted). */
int wg_emit_count(wg_check_ctx *cc, wg_severity sev, size_t n);

/** Fills cc->roles (needs the wheel's Python sources and DT_NEEDED entries). */
int wg_check_roles(wg_check_ctx *cc);
/**
 * The severity a finding about a load failure of member gets: the rule's when the package
 * cannot be imported without it, at most a warning when it is optional (an extension imported
 * only under try/except, lazily, conditionally or never by the package; a library nothing in
 * the wheel loads through DT_NEEDED). why: a sentence saying so, or "".
 */
wg_severity wg_load_severity(wg_check_ctx *cc, const char *member, const char **why);
/** wg_load_severity over the roots whose loads give the ld issues of kind on object. */
wg_severity wg_ld_severity(wg_check_ctx *cc, const char *object, int kind, const char **why);
/** wg_emit with another severity than the rule's (never a higher one). */
int wg_emit_sev(wg_check_ctx *cc, wg_severity sev, const wg_vars *vars, const char *member,
		const char *symbol, const char *file, unsigned line);
/** Runs the simulated loader over the scan's objects once (needs target->env). */
int wg_check_ld(wg_check_ctx *cc);

/** Whether any pattern of the rule's list `list` matches subject; caps as wg_regex_match. */
/** wg_rule_matches on len bytes of subject (need not end in NUL). */
bool wg_rule_matches_n(wg_check_ctx *cc, const char *list, const char *subject, size_t len,
		       size_t *caps, int ncaps);
bool wg_rule_matches(wg_check_ctx *cc, const char *list, const char *subject, size_t *caps,
		     int ncaps);
/** Whether the rule's scope (objects: / members:) admits subject; no scope admits all. */
bool wg_rule_in_scope(wg_check_ctx *cc, bool object, const char *subject);
/**
 * The next object of the scan, from index *i on, that the rule looks at: one read without
 * error and admitted by the rule's `objects:` scope; NULL after the last. *i starts at 0 and
 * is moved past the object returned.
 */
const wg_object *wg_check_next_object(wg_check_ctx *cc, size_t *i);
/** for each object o (a const wg_object *) of the scan in the rule's scope, as above */
#define wg_for_each_object(cc, o) \
	for (size_t wg_object_i_ = 0; ((o) = wg_check_next_object((cc), &wg_object_i_)) != NULL;)
/** wg_for_each_object with i (a size_t the loop declares) the object's index in the scan: the
 * key of the analysis's per-object facts (wg_analysis_sysneeds, wg_analysis_gpu_verdict) */
#define wg_for_each_object_at(cc, o, i)                                                  \
	for (size_t i = 0, wg_object_next_ = 0;                                            \
	     ((o) = wg_check_next_object((cc), &wg_object_next_)) != NULL &&                \
	     ((i) = wg_object_next_ - 1, true);)
/** Adds a finding of the current rule with its message and fix expanded from vars. */
int wg_emit(wg_check_ctx *cc, const wg_vars *vars, const char *member, const char *symbol,
	    const char *file, unsigned line);
/** The report's arena, for strings that vars point to. */
char *wg_check_printf(wg_check_ctx *cc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Shared helpers of the check kinds (engine.c). */
const char *wg_object_member(const wg_scan *scan, const wg_object *o);
/** Where a member is on disk, for a message: an installed distribution's file under its site
 * directory (the directory holding the .dist-info); a wheel's member as named (it lives in
 * the report's arena, or is member; NULL when out of memory). */
const char *wg_check_member_file(wg_check_ctx *cc, const char *member);
/** "NAME==VERSION" of the input from METADATA (else its filename), as pip takes it;
 * "NAME==VERSION" itself when neither says or either holds other characters than PEP 508
 * names and PEP 440 versions do (it is text to paste into a shell); NULL when out of memory. */
const char *wg_check_distribution(wg_check_ctx *cc);
bool wg_object_is_cuda(const wg_object *o);
/** Whether o meets the target's torch: it needs a library the rule's `libraries` patterns
 * match (torch's; *lib names it), or, whatever its DT_NEEDED says (*lib NULL), it imports a
 * c10/at/torch/caffe2 symbol and needs no copy of torch's libraries of its own (a library of
 * the input defining such symbols, or one named libc10* / libtorch* outside it that the
 * `libraries` patterns do not match). */
bool wg_check_faces_torch(wg_check_ctx *cc, const wg_object *o, const char **lib);
/** For an object that meets the target's torch (wg_check_faces_torch): its first undefined
 * torch-facing symbol carrying the std::string ABI wrong (WG_SYM_OLD_STRING or
 * WG_SYM_NEW_STRING), *count how many; NULL when none (or the object does not meet torch). */
const wg_sym *wg_check_abi_import(wg_check_ctx *cc, const wg_object *o, unsigned wrong,
				  unsigned *count);
void wg_abi_name_for(char *buf, size_t n, int cxx11abi);

/** What lets object i need the library soname (a DT_NEEDED entry) from outside a manylinux or
 * musllinux wheel, whatever the policy: the platform policy kinds' exceptions. */
typedef enum {
	WG_NEED_SYSTEM,   /* nothing: the policy's lib_whitelist must allow it */
	WG_NEED_SHIPPED,  /* the wheel ships it (wg_analysis_ships_library) */
	WG_NEED_LOADER,   /* the dynamic loader itself */
	WG_NEED_DRIVER,   /* the NVIDIA driver's (libcuda.so.1): *why says so */
	WG_NEED_REQUIRED  /* a distribution the wheel requires ships it: *why names it */
} wg_need_from;
/** Sorts the need; *why (for DRIVER and REQUIRED) in the report's arena. */
int wg_check_need_from(wg_check_ctx *cc, size_t i, const char *soname, wg_need_from *from,
		       const char **why);

/** Whether an ld issue like cc->ld_issues[i] (same kind, object and library, and with
 * version, same version) came before it: the loader kinds report each once. */
bool wg_ld_seen_before(wg_check_ctx *cc, size_t i, bool version);

#endif

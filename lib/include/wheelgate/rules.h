/*
 * wheelgate: catch broken CUDA/C++ Python wheels before they are installed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of the public API: Rules and checks: rulesets, wg_check and its report, the report read without its
 * documents (verdicts, counts) and the documents (JSON, SARIF, text, GitHub) of several
 * reports.
 * Programs include <wheelgate.h>, whose opening comment gives the conventions (names,
 * errors, versioned structs, ownership, threads); this part compiles alone too.
 */
#ifndef WHEELGATE_RULES_H
#define WHEELGATE_RULES_H

#include "target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Rules and checks                                                                         */

typedef struct wg_ruleset wg_ruleset;

typedef struct wg_ruleset_options {
	unsigned int version;
	const char *const *rule_paths; /**< user rule files or directories (*.yaml), in order */
	size_t nrule_paths;
	/** Rule selectors, case-insensitive: an id (WG-SYS-001), an id prefix (WG-SYS, WG), a
	 * rule's name (its check kind: hollow-wheel) or a glob of ids or names (WG-SYS-*). */
	const char *const *disable;    /**< rules to switch off */
	size_t ndisable;
	const char *const *enable;     /**< rules to switch on (rules shipped disabled) */
	size_t nenable;
	int no_default_rules;          /**< do not load the shipped rules */
} wg_ruleset_options;
#define WG_RULESET_OPTIONS_VERSION 1
#define WG_RULESET_OPTIONS_INIT { WG_RULESET_OPTIONS_VERSION, NULL, 0, NULL, 0, NULL, 0, 0 }

/**
 * Loads the shipped rules, then the user's (a rule with a shipped id replaces it), then
 * applies enable, then disable. Every pattern is compiled once. A broken file fails with
 * "file:line:col: what is wrong" in wg_error_last(); a selector in enable/disable that
 * matches no rule too (with a "did you mean" where one is close).
 * The ruleset is immutable and may be shared by threads.
 */
WG_API int wg_ruleset_new(wg_ruleset **out, const wg_context *ctx, const wg_ruleset_options *opts);
WG_API void wg_ruleset_free(wg_ruleset *rs);

typedef enum { WG_SEV_INFO = 0, WG_SEV_WARNING = 1, WG_SEV_ERROR = 2 } wg_severity;
WG_API const char *wg_severity_name(wg_severity s); /* "info", "warning", "error" */

typedef struct wg_rule_info {
	unsigned int version;
	const char *id, *check, *title, *fix, *source; /**< source: "file:line" of its definition */
	wg_severity severity;         /**< the one shown where no profile is named */
	int enabled;
	/** (version 2) the severity in the install and the publish profile, -1 where the rule
	 * does not apply in that profile. */
	int install, publish;
	/** (version 3) 1 for a rule about the input's integrity and tampering (`security: true`
	 * in its rule file: RECORD, unsafe names, the archive's structure), 0 for a correctness
	 * rule. SARIF gives only these rules the `security` tag and a security-severity. */
	int security;
	/** (version 4) what `wheelgate explain` tells (docs/explain.md), from the rule file: the
	 * message's template (its {placeholders} filled in per finding), what the rule looks at
	 * (`looks_at`: the facts it reads), why it matters (`why`: what breaks, with the error
	 * users see), an input it flags and one it passes (`example: {fails, passes}`). Every
	 * shipped rule gives them all; a user's rule file may leave them out: NULL. */
	const char *message, *looks_at, *why, *example_fails, *example_passes;
	/** (version 4) the rule's pattern lists (wg_ruleset_rule_patterns) */
	size_t npattern_lists;
} wg_rule_info;
#define WG_RULE_INFO_VERSION 4
#define WG_RULE_INFO_INIT \
	{ WG_RULE_INFO_VERSION, NULL, NULL, NULL, NULL, NULL, WG_SEV_INFO, 0, -1, -1, 0, \
	  NULL, NULL, NULL, NULL, NULL, 0 }

/** One pattern list of a rule (its `patterns:` in the rule file) and the examples its
 * `examples:` give: strings that must match and that must not (wg_ruleset_self_test and
 * `wheelgate check --self-test` verify them). */
typedef struct wg_rule_patterns_info {
	unsigned int version;
	const char *name;               /**< "libraries" */
	size_t npatterns;               /**< its PCRE2 patterns */
	const char *const *match;       /**< nmatch examples that must match */
	size_t nmatch;
	const char *const *no_match;    /**< nno_match examples that must not */
	size_t nno_match;
} wg_rule_patterns_info;
#define WG_RULE_PATTERNS_INFO_VERSION 1
#define WG_RULE_PATTERNS_INFO_INIT \
	{ WG_RULE_PATTERNS_INFO_VERSION, NULL, 0, NULL, 0, NULL, 0 }
/** Pattern list j of rule i (j below wg_rule_info.npattern_lists); WG_ENOTFOUND past the end.
 * The strings live as long as rs. */
WG_API int wg_ruleset_rule_patterns(wg_rule_patterns_info *out, const wg_ruleset *rs, size_t i,
				    size_t j);

WG_API size_t wg_ruleset_count(const wg_ruleset *rs);
WG_API int wg_ruleset_rule(wg_rule_info *out, const wg_ruleset *rs, size_t i);
/**
 * Checks every rule's examples against its patterns. WG_OK, or WG_EDATA with a report of
 * each failing example in *report (free with wg_free; may be NULL).
 */
WG_API int wg_ruleset_self_test(const wg_ruleset *rs, char **report);
/** Whether selector (as in wg_ruleset_options.disable: id, id prefix, name or glob, any case)
 * picks the rule with id rule_id: 1 or 0; WG_EINVAL (with a "did you mean" in
 * wg_error_last()) when it picks no rule of rs at all. */
WG_API int wg_ruleset_selects(const wg_ruleset *rs, const char *selector, const char *rule_id);

typedef struct wg_report wg_report;

/** Applies the enabled rules to the facts of scan for target. The scanner supplies the
 * per-thread state (and the error message on failure). */
WG_API int wg_check(wg_report **out, wg_scanner *scanner, const wg_ruleset *rs,
		    const wg_scan *scan, const wg_target *target);
WG_API void wg_report_free(wg_report *r);

typedef struct wg_finding_info {
	unsigned int version;
	const char *rule, *title, *message, *fix;
	wg_severity severity;
	const char *path;    /**< the input (wheel, file, directory) */
	const char *member;  /**< wheel member or file inside a directory, or NULL */
	const char *symbol;  /**< mangled symbol, or NULL */
	const char *file;    /**< source file for file:line findings (a .py member), or NULL */
	unsigned line;       /**< 1-based, 0 when none: the line of file (an import statement) */
	/** (version 2) why the finding is suppressed (wg_report_suppress: a baseline knows it),
	 * or NULL for a finding of wg_report_finding. */
	const char *suppressed;
} wg_finding_info;
#define WG_FINDING_INFO_VERSION 2
#define WG_FINDING_INFO_INIT \
	{ WG_FINDING_INFO_VERSION, NULL, NULL, NULL, NULL, WG_SEV_INFO, NULL, NULL, NULL, NULL, 0, NULL }

WG_API size_t wg_report_count(const wg_report *r);
WG_API int wg_report_finding(wg_finding_info *out, const wg_report *r, size_t i);
/** Takes finding i out of the report (a finding ignored or baselined by the caller); the
 * findings after it move down by one. WG_ENOTFOUND past the end. */
WG_API int wg_report_remove(wg_report *r, size_t i);
/**
 * Marks finding i suppressed (a finding the caller's baseline knows): it leaves the findings
 * (wg_report_count, wg_report_worst, the JSON, text and GitHub formats, the exit status) as
 * wg_report_remove takes it, and is kept with its justification (copied) for SARIF, where
 * it is a result with `suppressions` (docs/ci.md). WG_ENOTFOUND past the end.
 */
WG_API int wg_report_suppress(wg_report *r, size_t i, const char *justification);
/** The suppressed findings, in the order they were suppressed; wg_finding_info version 2
 * or later gets the justification in `suppressed`. */
WG_API size_t wg_report_suppressed_count(const wg_report *r);
WG_API int wg_report_suppressed(wg_finding_info *out, const wg_report *r, size_t i);
/** The highest severity among the findings (those counted past a bound too), or -1 when
 * there are none. */
WG_API int wg_report_worst(const wg_report *r);

/**
 * Findings past a bound (wg_options.max_rule_findings, max_findings): counted, not kept, one
 * entry per rule with findings counted. The kept findings of that rule stand for them ("and
 * 68,950 more like this"); the formats keep the count (docs/check-json.md).
 */
typedef struct wg_more_info {
	unsigned int version;
	const char *rule;      /**< "WG-REC-003" */
	size_t count;          /**< findings of the rule counted, not kept */
	size_t severity[3];    /**< of them, by wg_severity (info, warning, error) */
} wg_more_info;
#define WG_MORE_INFO_VERSION 1
#define WG_MORE_INFO_INIT { WG_MORE_INFO_VERSION, NULL, 0, {0, 0, 0} }
WG_API size_t wg_report_more_count(const wg_report *r);
WG_API int wg_report_more(wg_more_info *out, const wg_report *r, size_t i);
/** Takes the counted findings of entry i out of the report (its rule ignored for the input by
 * the caller); the entries after it move down by one. WG_ENOTFOUND past the end. */
WG_API int wg_report_more_remove(wg_report *r, size_t i);
/** Every finding of the report: those kept (wg_report_count) and those counted. */
WG_API size_t wg_report_total(const wg_report *r);
/** The profile the report was made in (install or publish). */
WG_API wg_profile wg_report_profile(const wg_report *r);

/**
 * A rule that was not applied because a fact it needs is unknown: a `when:` condition of the
 * target (a GPU, the torch C++ ABI...), or what its check kind cannot work without (a Python
 * environment for the loader rules, the wheel's filename for the tag rules). Rules switched
 * off, or whose known facts rule them out, are not listed.
 */
typedef struct wg_not_applied_info {
	unsigned int version;
	const char *rule;    /**< "WG-ABI-001" */
	const char *lacks;   /**< the facts missing, comma-separated: "gpu", "gpu,cuda", "env" */
	const char *message; /**< "no target GPU: --gpu", "no GPU found by --gpu auto (...)" */
} wg_not_applied_info;
#define WG_NOT_APPLIED_INFO_VERSION 1
#define WG_NOT_APPLIED_INFO_INIT { WG_NOT_APPLIED_INFO_VERSION, NULL, NULL, NULL }

WG_API size_t wg_report_not_applied_count(const wg_report *r);
WG_API int wg_report_not_applied(wg_not_applied_info *out, const wg_report *r, size_t i);

/* ---- a report read without its documents: what `check` decides and counts ---- */

/** An input's verdict as `wheelgate check` gives it (the JSON's "verdict", the text's
 * PASS/FAIL/ERROR, the exit status: 1 when an input fails, 2 when one is unreadable). */
typedef enum { WG_VERDICT_PASS = 0, WG_VERDICT_FAIL = 1, WG_VERDICT_ERROR = 2 } wg_verdict;
WG_API const char *wg_verdict_name(wg_verdict v); /* "pass", "fail", "error" */
/** FAIL when a finding (kept, or counted past a bound) is at fail_on or above
 * (wg_report_worst(r) >= fail_on), else PASS; ERROR for r NULL (an input not judged). */
WG_API wg_verdict wg_report_verdict(const wg_report *r, wg_severity fail_on);

/** A report's findings counted by wg_severity (info, warning, error). */
typedef struct wg_counts_info {
	unsigned int version;
	size_t severity[3];   /**< every finding: kept and counted past a bound (the JSON's
			       * "counts", the summary's totals) */
	size_t kept[3];       /**< those listed (wg_report_finding) */
	size_t more[3];       /**< those counted past a bound (wg_report_more, summed) */
	size_t suppressed[3]; /**< those the caller suppressed (wg_report_suppressed), outside
			       * the others */
} wg_counts_info;
#define WG_COUNTS_INFO_VERSION 1
#define WG_COUNTS_INFO_INIT { WG_COUNTS_INFO_VERSION, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0} }
WG_API int wg_report_counts(wg_counts_info *out, const wg_report *r);
/** The path of the input the report judged (its scan's, wg_scan_get_path); the documents
 * name the input by the path their caller gives. Lives until wg_report_free(). */
WG_API const char *wg_report_path(const wg_report *r);

/** Formats of wg_reports_format(): JSON, SARIF, the text `wheelgate check` prints (with
 * or without terminal colours; one block per input, no summary line), the block of rules not
 * applied that closes that text (WG_FORMAT_NOT_APPLIED: each reason on one line for all the
 * inputs, "not applied: WG-LD-001..005 to 5 inputs, WG-LD-006 to 6 inputs (no Python
 * environment to load the objects in: --env)\n", empty when every rule was applied; print it
 * after the inputs' blocks, before the summary), and that summary line
 * alone ("3 inputs: 2 passed, 1 failed, 0 unreadable; 1 error, 0 warnings, 0 info (profile:
 * install, fail-on: error)\n"); GitHub Actions workflow commands, one `::error`,
 * `::warning` or `::notice` line per finding and the summary as a last `::notice` (docs/ci.md;
 * every line, the last too, ends with a newline). */
typedef enum {
	WG_FORMAT_JSON = 1, WG_FORMAT_SARIF = 2, WG_FORMAT_TEXT = 3, WG_FORMAT_TEXT_COLOR = 4,
	WG_FORMAT_SUMMARY = 5, WG_FORMAT_GITHUB = 6,
	/** the JSON document on one line (no indentation), to embed (the fleet envelope) */
	WG_FORMAT_JSON_COMPACT = 7,
	/** the rules not applied to the inputs, the text's closing block (see above) */
	WG_FORMAT_NOT_APPLIED = 8
} wg_format;

/**
 * Several inputs' reports as one document: JSON ("wheelgate.check/1", docs/check-json.md),
 * SARIF 2.1.0 or GitHub workflow commands (docs/ci.md). paths/errors describe inputs that
 * could not be read (reports[i] NULL, errors[i] its message). fail_on: the severity from
 * which an input fails.
 */
WG_API int wg_reports_format(char **out, wg_format format, const wg_ruleset *rs,
			     const wg_target *target, const char *const *paths,
			     const wg_report *const *reports, const char *const *errors, size_t n,
			     wg_severity fail_on);

/**
 * wg_reports_format()'s arguments, and what a command adds to its JSON document (audit, a
 * baseline): the additions are written by the JSON formats only, in the keys docs/check-json.md
 * names. A document with any addition writes every character past ASCII as \uNNNN.
 */
typedef struct wg_reports_doc {
	unsigned int version;
	wg_format format;
	const wg_ruleset *rs;
	const wg_target *target;
	const char *const *paths;
	const wg_report *const *reports;
	const char *const *errors;
	size_t n;
	wg_severity fail_on;
	/** n notes, NULL ones none (each input's "note"), or NULL */
	const char *const *notes;
	/** n counts each (each input's "ignored" and "baselined", totalled in the summary), or
	 * NULL: no such keys */
	const size_t *ignored, *baselined;
	/** 1: "not_audited" (nnot_audited items {"path", "reason"}) and summary.not_audited */
	int audit;
	const char *const *not_audited_paths, *const *not_audited_reasons;
	size_t nnot_audited;
} wg_reports_doc;
#define WG_REPORTS_DOC_VERSION 1
#define WG_REPORTS_DOC_INIT \
	{ WG_REPORTS_DOC_VERSION, WG_FORMAT_JSON, NULL, NULL, NULL, NULL, NULL, 0, WG_SEV_ERROR, \
	  NULL, NULL, NULL, 0, NULL, NULL, 0 }
WG_API int wg_reports_format_doc(char **out, const wg_reports_doc *doc);

/** Each finding a JSON document holds, to fn (path: its input's; member and symbol NULL where
 * absent): a report (wheelgate.check/1, --format json) or a baseline (wheelgate.baseline/1,
 * --write-baseline). A non-zero return of fn stops the reading and is returned; WG_EFORMAT
 * (wg_error_last(): "LINE:COL: ..." for broken JSON) for anything else. */
typedef int (*wg_known_finding_fn)(const char *path, const char *rule, const char *member,
				   const char *symbol, void *payload);
WG_API int wg_known_findings_read(const char *json, size_t len, wg_known_finding_fn fn,
				  void *payload);

#ifdef __cplusplus
}
#endif
#endif /* WHEELGATE_RULES_H */

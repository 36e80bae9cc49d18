/*
 * rules/: rule files (rulefile.c: the shipped rules and the user's, validated whole), the
 * engine that runs them over a scan for a target (engine.c) and the reports it fills. The
 * check kinds (checks/) include rules/checks/check.h.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_RULES_H
#define WG_RULES_H

#include "analysis/analysis.h"

/* ---- rule files (rulefile.c) and the engine (engine.c) ---- */

typedef struct {
	const char *name;
	wg_regex **re;
	size_t n;
	const char **match, **no_match;
	size_t nmatch, nno_match;
} wg_pattern_list;

typedef struct {
	const char *key, *value; /* value: "known" or a literal */
} wg_when;

typedef struct wg_check_ctx wg_check_ctx;

typedef struct wg_check_kind {
	const char *name;
	int (*run)(wg_check_ctx *cc);
	const char *const *patterns; /* pattern lists it requires, NULL-terminated */
	const char *const *vars;     /* placeholders it fills, NULL-terminated */
	unsigned needs;              /* WG_FACT_* it does nothing without */
} wg_check_kind;

/* Facts a rule may need ("when:" keys and check kinds' needs); unknown ones make the rule
 * "not applied", listed in the report. */
#define WG_FACT_PYTHON 1u
#define WG_FACT_TORCH 2u
#define WG_FACT_CUDA 4u
#define WG_FACT_CXX11ABI 8u
#define WG_FACT_GPU 16u
#define WG_FACT_ENV 32u      /* a Python environment (--env) for the loader */
#define WG_FACT_FILENAME 64u /* a wheel's filename facts: name, version, tags */
#define WG_FACT_INSTALL 128u /* a wheel judged as an install into the environment */

typedef struct {
	const char *id, *check, *title, *message, *fix, *source;
	wg_severity severity;
	int sev[3];       /* per wg_profile (install, publish): a wg_severity, or -1 for off */
	bool enabled;
	bool security; /* "security: true": about integrity and tampering (SARIF security) */
	const wg_check_kind *kind;
	wg_pattern_list *lists;
	size_t nlists;
	wg_regex *scope_objects, *scope_members;
	wg_when *when;
	size_t nwhen;
	const char *facts, *condition; /* check: match's fact list and condition (any/all/none) */
	/* what `wheelgate explain` says beyond title, message and fix: NULL where a user's rule
	 * file leaves them out (the shipped rules must give them) */
	const char *why, *looks_at, *ex_fails, *ex_passes;
	unsigned needs; /* WG_FACT_* the rule needs besides its kind's (its fact list's) */
} wg_rule;

struct wg_ruleset {
	wg_arena arena;
	wg_vec rules;   /* wg_rule */
	wg_vec regexes; /* wg_regex*, owned */
};

const wg_check_kind *wg_check_kind_find(const char *name);
/** check: match (checks/match.c): the placeholders fact list name fills (NULL-terminated),
 * or NULL when there is no such list, and (needs, unless NULL) the WG_FACT_* it needs; the names of every list, ", "-separated, into buf. */
const char *const *wg_match_fact_vars(const char *name, unsigned *needs);
size_t wg_match_fact_names(char *buf, size_t n);
/** Whether name is a fact list of match, and whether it is a list of each object and a list of
 * the wheel's filename and metadata. */
bool wg_match_fact_info(const char *name, bool *object, bool *wheel);

/* ---- causes first (cause.c) ---- */

/* Where a rule's findings stand in a report: causes before what they make fail. */
typedef enum {
	WG_CAUSE_INPUT,  /* the input as read: unreadable, zip structure, RECORD, names */
	WG_CAUSE_TAGS,   /* what the wheel says it is for: tags, target Python, metadata */
	WG_CAUSE_NEEDS,  /* what its objects need of the target: libc, C++ ABI, CUDA runtime */
	WG_CAUSE_LOADER, /* what the loader does with them (WG-LD-*) */
	WG_CAUSE_GPU,    /* what a kernel launch does */
	WG_CAUSE_CODE,   /* what the Python code imports */
	WG_CAUSE_OTHER,  /* a kind not placed: last */
} wg_cause;

/* What an input must hold for a rule to find anything in it (0: anything). */
#define WG_ABOUT_OBJECTS 1u      /* an ELF object */
#define WG_ABOUT_CUDA 2u         /* an object with CUDA code */
#define WG_ABOUT_TORCH_STRING 4u /* an object with torch C++ symbols that carry std::string */

/** The rule's rank and (unless NULL) what an input must hold for it to find anything. */
wg_cause wg_rule_cause(const wg_rule *r, unsigned *about);
/** Whether the input holds what `about` (WG_ABOUT_*) asks. */
bool wg_input_holds(const wg_scan *scan, unsigned about);
/** Sorts the report's findings (and those counted past the bounds) cause first, stably. */
int wg_report_order(wg_report *r, const wg_ruleset *rs);

typedef struct {
	const char *rule, *title, *message, *fix, *path, *member, *symbol, *file;
	unsigned line;
	wg_severity severity;
	const char *suppressed; /* why, in r->suppressed (wg_report_suppress); NULL in findings */
} wg_finding;

typedef struct {
	const char *rule, *lacks, *message;
} wg_not_applied;

/* Findings of one rule past a bound (max_rule_findings, max_findings): counted, not kept. */
typedef struct {
	const char *rule;
	size_t count, severity[3];
} wg_more;

struct wg_report {
	wg_arena arena;
	const char *path;
	wg_profile profile;
	wg_vec findings; /* wg_finding */
	wg_vec suppressed; /* wg_finding taken out by the caller (a baseline), kept for SARIF */
	wg_vec not_applied; /* wg_not_applied */
	wg_vec more; /* wg_more, in the order of the rules */
};

/** The findings of rule counted past a bound, or NULL (rules.h users: the formats). */
const wg_more *wg_report_more_of(const wg_report *r, const char *rule);

#endif

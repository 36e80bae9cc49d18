/*
 * Private to the rule file readers: rulefile.c (files and directories read, rules selected,
 * the rule set's public calls) and rulefile_rule.c (one rule parsed and validated).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_RULES_RULEFILE_INTERNAL_H
#define WG_RULES_RULEFILE_INTERNAL_H

#include "rules/rules.h"

/* Reads and validates the rule at node n of file and adds it to rs (a rule with the id of
 * one already there replaces it); err says file:line:col of what is wrong. A shipped rule
 * (shipped: true) must explain itself (why, looks_at, example); a user's rule may. */
int wg_rulefile_load_rule(wg_ruleset *rs, const wg_yaml_node *n, const char *file, bool shipped,
			  wg_err *err);

#endif

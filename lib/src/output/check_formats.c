/*
 * Reports as documents: JSON ("wheelgate.check/1", docs/check-json.md and
 * docs/schema/check.schema.json) here, SARIF 2.1.0 (as GitHub code scanning reads it) in
 * check_sarif.c, text and GitHub workflow commands (docs/ci.md) in check_text.c, for
 * several inputs at once, some of which may not have been readable.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/check_internal.h"

json_t *wg_cf_not_applied_json(const wg_report *r)
{
	json_t *a = json_array();
	for (size_t i = 0; a && r && i < r->not_applied.len; i++) {
		const wg_not_applied *na = wg_vec_at(&r->not_applied, i);
		json_t *lacks = json_array();
		char keys[128];
		snprintf(keys, sizeof(keys), "%s", na->lacks);
		for (char *save = NULL, *k = strtok_r(keys, ",", &save); lacks && k;
		     k = strtok_r(NULL, ",", &save))
			json_array_append_new(lacks, json_string(k));
		json_array_append_new(a, json_pack("{s:s, s:o, s:s}", "rule", na->rule, "lacks",
						   lacks ? lacks : json_array(), "message",
						   na->message));
	}
	return a;
}

/* The findings counted past a bound (wg_options.max_rule_findings, max_findings): one item
 * per rule, so that a count never disagrees with what the list stands for. */
static json_t *more_json(const wg_report *r)
{
	json_t *a = json_array();
	for (size_t i = 0; a && r && i < r->more.len; i++) {
		const wg_more *m = wg_vec_at(&r->more, i);
		json_array_append_new(a, json_pack("{s:s, s:I, s:{s:I, s:I, s:I}}", "rule", m->rule,
			"count", (json_int_t)m->count, "counts", "error", (json_int_t)m->severity[2],
			"warning", (json_int_t)m->severity[1], "info", (json_int_t)m->severity[0]));
	}
	return a;
}

/* Adds the counted findings of r to c[3] (by severity). */
void wg_cf_add_more(size_t c[3], const wg_report *r)
{
	for (size_t i = 0; r && i < r->more.len; i++) {
		const wg_more *m = wg_vec_at(&r->more, i);
		for (int s = 0; s < 3; s++)
			c[s] += m->severity[s];
	}
}

static json_t *target_json(const wg_target *t)
{
	char buf[32];
	json_t *gpus = json_array();
	for (size_t i = 0; t && i < t->ngpus; i++) {
		snprintf(buf, sizeof(buf), "%u.%u", t->gpus[i].cc_major, t->gpus[i].cc_minor);
		json_array_append_new(gpus, json_pack("{s:o, s:s}", "name", nstr(t->gpus[i].name),
						      "cc", buf));
	}
	json_t *j = json_pack("{s:o, s:o, s:o, s:o, s:o}", "python", json_null(), "torch",
			      json_null(), "cxx11abi", json_null(), "cuda", json_null(), "gpus", gpus);
	if (!j)
		return j;
	/* The C/C++ runtime the system rules judged against, and where it comes from. */
	char sys[256];
	const char *source = NULL;
	wg_target_system(t, sys, sizeof(sys), &source);
	json_t *vers = json_array();
	for (char *save = NULL, *tok = strtok_r(sys, " ", &save); vers && tok;
	     tok = strtok_r(NULL, " ", &save))
		json_array_append_new(vers, json_string(tok));
	json_object_set_new(j, "system", json_pack("{s:s, s:o}", "source", source, "versions",
						   vers ? vers : json_array()));
	if (!t)
		return j;
	if (t->python_major) {
		snprintf(buf, sizeof(buf), "%u.%u", t->python_major, t->python_minor);
		json_object_set_new(j, "python", json_string(buf));
	}
	if (t->torch[0])
		json_object_set_new(j, "torch", json_string(t->torch));
	if (t->cxx11abi >= 0)
		json_object_set_new(j, "cxx11abi", json_boolean(t->cxx11abi));
	if (t->cuda_major) {
		snprintf(buf, sizeof(buf), "%u.%u", t->cuda_major, t->cuda_minor);
		json_object_set_new(j, "cuda", json_string(buf));
	}
	/* --gpu auto: what it found on this machine, and why nothing when nothing. */
	if (t->gpu_auto)
		json_object_set_new(j, "gpu_auto", json_pack("{s:I, s:o}", "found",
			(json_int_t)t->gpu_auto_found, "none", t->gpu_auto_none[0]
				? json_string(t->gpu_auto_none) : json_null()));
	return j;
}

json_t *wg_check_json(const wg_target *target, const char *const *paths,
		      const wg_report *const *reports, const char *const *errors, size_t n,
		      wg_severity fail_on)
{
	json_t *inputs = json_array();
	size_t passed = 0, failed = 0, unreadable = 0, counts[3] = {0};
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			unreadable++;
			json_array_append_new(inputs, json_pack("{s:o, s:s, s:o, s:{s:i, s:i, s:i}, s:[], s:[]}",
				"path", nstr(paths[i]), "verdict", "error", "error",
				nstr(errors && errors[i] ? errors[i] : "unreadable"), "counts", "error", 0,
				"warning", 0, "info", 0, "findings", "not_applied"));
			continue;
		}
		json_t *fs = json_array();
		size_t c[3] = {0};
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			c[f->severity]++;
			json_t *line = f->line ? json_integer(f->line) : json_null();
			json_array_append_new(fs, json_pack(
				"{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "rule", f->rule,
				"severity", wg_severity_name(f->severity), "title", nstr(f->title),
				"message", nstr(f->message), "fix", nstr(f->fix), "member", nstr(f->member),
				"symbol",
				nstr(f->symbol), "file", nstr(f->file), "line", line));
		}
		wg_cf_add_more(c, r);
		bool fails = false;
		for (int s = fail_on; s <= WG_SEV_ERROR; s++)
			fails = fails || c[s];
		if (fails)
			failed++;
		else
			passed++;
		for (int s = 0; s < 3; s++)
			counts[s] += c[s];
		json_array_append_new(inputs, json_pack("{s:o, s:s, s:o, s:{s:I, s:I, s:I}, s:o, s:o, s:o}",
			"path", nstr(paths[i]), "verdict", fails ? "fail" : "pass", "error", json_null(),
			"counts", "error", (json_int_t)c[2], "warning", (json_int_t)c[1], "info",
			(json_int_t)c[0], "findings", fs, "more", more_json(r), "not_applied",
			wg_cf_not_applied_json(r)));
	}
	return json_pack("{s:s, s:s, s:s, s:o, s:s, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
			 "schema", "wheelgate.check/1", "wheelgate_version", wg_version_string(),
			 "profile", wg_profile_name(wg_target_profile(target)),
			 "target", target_json(target), "fail_on", wg_severity_name(fail_on),
			 "inputs", inputs, "summary", "inputs", (json_int_t)n, "passed",
			 (json_int_t)passed, "failed", (json_int_t)failed, "unreadable",
			 (json_int_t)unreadable, "errors", (json_int_t)counts[2], "warnings",
			 (json_int_t)counts[1], "infos", (json_int_t)counts[0]);
}

WG_API int wg_target_to_json(char **out, const wg_target *t)
{
	if (!out || !t) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_target_to_json: no %s", out ? "target" : "place for it");
		return WG_EINVAL;
	}
	json_t *j = target_json(t);
	*out = j ? wg_json_dump(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(j);
	if (*out)
		return WG_OK;
	wg_set_error(WG_ERROR_CLASS_INVALID, WG_ENOMEM, "out of memory");
	return WG_ENOMEM;
}

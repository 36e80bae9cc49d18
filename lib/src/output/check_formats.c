/*
 * Reports as documents: JSON ("wheelgate.check/1", docs/check-json.md and
 * docs/schema/check.schema.json) and SARIF 2.1.0 (as GitHub code scanning reads it), for
 * several inputs at once, some of which may not have been readable.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

/* Every string from an input goes through wg_json_str: invalid UTF-8 is escaped, never the
 * finding dropped (a count would then disagree with the list). */
static json_t *nstr(const char *s)
{
	return s ? wg_json_str(s) : json_null();
}

static json_t *not_applied_json(const wg_report *r)
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
	return j;
}

static json_t *check_json(const wg_target *target, const char *const *paths,
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
		bool fails = false;
		for (int s = fail_on; s <= WG_SEV_ERROR; s++)
			fails = fails || c[s];
		if (fails)
			failed++;
		else
			passed++;
		for (int s = 0; s < 3; s++)
			counts[s] += c[s];
		json_array_append_new(inputs, json_pack("{s:o, s:s, s:o, s:{s:I, s:I, s:I}, s:o, s:o}",
			"path", nstr(paths[i]), "verdict", fails ? "fail" : "pass", "error", json_null(),
			"counts", "error", (json_int_t)c[2], "warning", (json_int_t)c[1], "info",
			(json_int_t)c[0], "findings", fs, "not_applied", not_applied_json(r)));
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

/* A relative URI reference for a path: unreserved characters and '/' as they are. */
static char *uri_of(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	char *out = malloc(3 * n + 1), *o = out;
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/+!$&'()*,;=:@", *p)) {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}

static const char *sarif_level(wg_severity s)
{
	return s == WG_SEV_ERROR ? "error" : s == WG_SEV_WARNING ? "warning" : "note";
}

static json_t *sarif_location(const char *path, const wg_finding *f)
{
	char *uri = uri_of(path);
	json_t *phys = json_pack("{s:{s:o}}", "artifactLocation", "uri", nstr(uri ? uri : ""));
	free(uri);
	if (f && f->line)
		json_object_set_new(phys, "region", json_pack("{s:i}", "startLine", (int)f->line));
	json_t *loc = json_pack("{s:o}", "physicalLocation", phys);
	if (f && (f->member || f->symbol)) {
		wg_buf fq = {0};
		const char *m = f->member ? f->member : "", *y = f->symbol ? f->symbol : "";
		if (wg_buf_append(&fq, m, strlen(m)) == WG_OK &&
		    wg_buf_append(&fq, "!", f->member && f->symbol ? 1 : 0) == WG_OK)
			wg_buf_append(&fq, y, strlen(y));
		json_object_set_new(loc, "logicalLocations",
				    json_pack("[{s:o, s:s}]", "fullyQualifiedName",
					      nstr(fq.s ? fq.s : ""), "kind",
					      f->symbol ? "function" : "module"));
		wg_buf_free(&fq);
	}
	return loc;
}

static json_t *sarif(const wg_ruleset *rs, const wg_target *target, const char *const *paths,
		     const wg_report *const *reports, const char *const *errors, size_t n)
{
	wg_profile profile = wg_target_profile(target);
	json_t *rules = json_array(), *results = json_array(), *notes = json_array();
	json_t *config = json_array();
	for (size_t i = 0; rs && i < rs->rules.len; i++) {
		const wg_rule *r = wg_vec_at(&rs->rules, i);
		json_array_append_new(rules, json_pack(
			"{s:s, s:s, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s, s:b}, s:{s:[s], s:s}}",
			"id", r->id, "name", r->check, "shortDescription", "text", r->title,
			"fullDescription", "text", r->title, "help", "text", r->fix,
			"defaultConfiguration", "level",
			sarif_level(r->sev[profile] >= 0 ? (wg_severity)r->sev[profile] : r->severity),
			"enabled", r->enabled && r->sev[profile] >= 0, "properties", "tags", r->check,
			"source", r->source));
	}
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			json_array_append_new(notes, json_pack("{s:s, s:{s:o}, s:[o]}", "level", "error",
				"message", "text", nstr(errors && errors[i] ? errors[i] : "unreadable"),
				"locations", sarif_location(paths[i], NULL)));
			continue;
		}
		/* Rules a missing fact left out: configuration notifications naming the rule. */
		json_t *na = not_applied_json(r);
		for (size_t k = 0; na && k < json_array_size(na); k++) {
			json_t *x = json_array_get(na, k);
			const char *id = json_string_value(json_object_get(x, "rule"));
			size_t idx = 0;
			for (size_t j = 0; rs && j < rs->rules.len; j++)
				if (!strcmp(((const wg_rule *)wg_vec_at(&rs->rules, j))->id, id))
					idx = j;
			char text[1024];
			snprintf(text, sizeof(text), "%s not applied: %s", id,
				 json_string_value(json_object_get(x, "message")));
			json_array_append_new(config, json_pack("{s:s, s:{s:o}, s:{s:s, s:I}, s:[o], s:{s:O}}",
				"level", "note", "message", "text", nstr(text), "associatedRule", "id", id,
				"index", (json_int_t)idx, "locations", sarif_location(paths[i], NULL),
				"properties", "lacks", json_object_get(x, "lacks")));
		}
		json_decref(na);
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			size_t idx = 0;
			for (size_t j = 0; rs && j < rs->rules.len; j++)
				if (!strcmp(((const wg_rule *)wg_vec_at(&rs->rules, j))->id, f->rule))
					idx = j;
			/* the whole message, however long (a cut could split a character) */
			wg_buf text = {0};
			const char *msg = f->message ? f->message : "", *fix = f->fix ? f->fix : "";
			if (wg_buf_append(&text, msg, strlen(msg)) == WG_OK &&
			    wg_buf_append(&text, " Fix: ", 6) == WG_OK)
				wg_buf_append(&text, fix, strlen(fix));
			json_array_append_new(results, json_pack("{s:o, s:I, s:s, s:{s:o}, s:[o]}",
				"ruleId", nstr(f->rule), "ruleIndex", (json_int_t)idx, "level",
				sarif_level(f->severity), "message", "text", nstr(text.s ? text.s : ""),
				"locations", sarif_location(paths[i], f)));
			wg_buf_free(&text);
		}
	}
	json_t *run = json_pack("{s:{s:{s:s, s:s, s:s, s:o}}, s:o, s:[{s:b, s:o, s:o}]}",
		"tool", "driver", "name", "wheelgate", "version", wg_version_string(),
		"semanticVersion", wg_version_string(), "rules", rules, "results", results,
		"invocations", "executionSuccessful", json_array_size(notes) == 0,
		"toolExecutionNotifications", notes, "toolConfigurationNotifications", config);
	json_object_set_new(run, "properties", json_pack("{s:s}", "profile", wg_profile_name(profile)));
	return json_pack("{s:s, s:s, s:[o]}", "$schema", "https://json.schemastore.org/sarif-2.1.0.json",
			 "version", "2.1.0", "runs", run);
}

/* Appends a literal piece, or (for text from an input) the text with control characters and
 * invalid UTF-8 escaped: a wheel's names must not drive the terminal. */
static void put(wg_buf *b, const char *s)
{
	wg_buf_append(b, s, strlen(s));
}

static void put_esc(wg_buf *b, const char *s)
{
	wg_buf_escape(b, s, WG_ESCAPE_UTF8 | WG_ESCAPE_CONTROL);
}

/* "  not applied: WG-ABI-001, WG-ABI-002 (no target ...); WG-GPU-002 (no target GPU (--gpu))":
 * rules grouped by what they lack, in rule order. */
static void text_not_applied(wg_buf *b, const wg_report *r, const char *dim, const char *off)
{
	size_t n = r->not_applied.len;
	if (!n)
		return;
	bool *done = calloc(n, sizeof(*done));
	if (!done)
		return;
	put(b, "  ");
	put(b, dim);
	put(b, "not applied:");
	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		const wg_not_applied *g = wg_vec_at(&r->not_applied, i);
		put(b, i ? "; " : " ");
		for (size_t j = i, first = 1; j < n; j++) {
			const wg_not_applied *x = wg_vec_at(&r->not_applied, j);
			if (done[j] || strcmp(x->message, g->message))
				continue;
			done[j] = true;
			put(b, first ? "" : ", ");
			put(b, x->rule);
			first = 0;
		}
		put(b, " (");
		put_esc(b, g->message);
		put(b, ")");
	}
	put(b, off);
	put(b, "\n");
	free(done);
}

/* The text of `wheelgate check`: PASS/FAIL/ERROR per input, each finding with its fix, and
 * the rules not applied. */
static char *text(const char *const *paths, const wg_report *const *reports,
		  const char *const *errors, size_t n, wg_severity fail_on, bool color)
{
	const char *red = color ? "\033[31m" : "", *green = color ? "\033[32m" : "",
		   *yellow = color ? "\033[33m" : "", *dim = color ? "\033[2m" : "",
		   *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
	wg_buf b = {0};
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			put(&b, red);
			put(&b, "ERROR");
			put(&b, off);
			put(&b, " ");
			put_esc(&b, paths[i]);
			put(&b, "\n      ");
			put_esc(&b, errors && errors[i] ? errors[i] : "unreadable");
			put(&b, "\n");
			continue;
		}
		bool fails = wg_report_worst(r) >= (int)fail_on;
		put(&b, fails ? red : green);
		put(&b, fails ? "FAIL" : "PASS");
		put(&b, off);
		put(&b, " ");
		put_esc(&b, paths[i]);
		put(&b, "\n");
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			const char *c = f->severity == WG_SEV_ERROR ? red
					: f->severity == WG_SEV_WARNING ? yellow : dim;
			put(&b, "  ");
			put(&b, c);
			put(&b, wg_severity_name(f->severity));
			put(&b, off);
			put(&b, "[");
			put_esc(&b, f->rule);
			put(&b, "] ");
			put(&b, bold);
			put_esc(&b, f->title);
			put(&b, off);
			put(&b, "\n      ");
			put_esc(&b, f->message);
			put(&b, "\n      ");
			put(&b, dim);
			put(&b, "fix:");
			put(&b, off);
			put(&b, " ");
			put_esc(&b, f->fix);
			put(&b, "\n");
		}
		text_not_applied(&b, r, dim, off);
	}
	if (!b.s)
		wg_buf_append(&b, "", 0);
	return b.s;
}

/* The line that closes `wheelgate check`: inputs, verdicts and findings counted. */
static char *summary(const wg_target *target, const wg_report *const *reports, size_t n,
		     wg_severity fail_on)
{
	size_t passed = 0, failed = 0, unreadable = 0, sev[3] = {0};
	for (size_t i = 0; i < n; i++) {
		const wg_report *r = reports[i];
		if (!r) {
			unreadable++;
			continue;
		}
		for (size_t k = 0; k < r->findings.len; k++) {
			const wg_finding *f = wg_vec_at(&r->findings, k);
			if ((unsigned)f->severity < 3)
				sev[f->severity]++;
		}
		if (wg_report_worst(r) >= (int)fail_on)
			failed++;
		else
			passed++;
	}
	char line[512];
	snprintf(line, sizeof(line), "%zu input%s: %zu passed, %zu failed, %zu unreadable; "
		 "%zu error%s, %zu warning%s, %zu info (profile: %s, fail-on: %s)\n", n,
		 n == 1 ? "" : "s", passed, failed, unreadable, sev[2], sev[2] == 1 ? "" : "s",
		 sev[1], sev[1] == 1 ? "" : "s", sev[0], wg_profile_name(wg_target_profile(target)),
		 wg_severity_name(fail_on));
	return strdup(line);
}

WG_API int wg_target_to_json(char **out, const wg_target *t)
{
	if (!out || !t) {
		wg_set_last_error(WG_EINVAL, "wg_target_to_json: no %s", out ? "target" : "place for it");
		return WG_EINVAL;
	}
	json_t *j = target_json(t);
	*out = j ? wg_json_dump(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(j);
	if (*out)
		return WG_OK;
	wg_set_last_error(WG_ENOMEM, "out of memory");
	return WG_ENOMEM;
}

WG_API int wg_reports_format(char **out, wg_format format, const wg_ruleset *rs,
			     const wg_target *target, const char *const *paths,
			     const wg_report *const *reports, const char *const *errors, size_t n,
			     wg_severity fail_on)
{
	if (!out || (n && (!paths || !reports))) {
		wg_set_last_error(WG_EINVAL, "wg_reports_format: no %s", out ? "paths or reports"
										: "place for the document");
		return WG_EINVAL;
	}
	*out = NULL;
	if (format == WG_FORMAT_TEXT || format == WG_FORMAT_TEXT_COLOR || format == WG_FORMAT_SUMMARY) {
		*out = format == WG_FORMAT_SUMMARY ? summary(target, reports, n, fail_on)
		       : text(paths, reports, errors, n, fail_on, format == WG_FORMAT_TEXT_COLOR);
		if (*out)
			return WG_OK;
		wg_set_last_error(WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	json_t *doc = format == WG_FORMAT_SARIF ? sarif(rs, target, paths, reports, errors, n)
		      : format == WG_FORMAT_JSON ? check_json(target, paths, reports, errors, n, fail_on)
						 : NULL;
	if (!doc && format != WG_FORMAT_SARIF && format != WG_FORMAT_JSON) {
		wg_set_last_error(WG_EINVAL, "wg_reports_format: no format %d", (int)format);
		return WG_EINVAL;
	}
	*out = doc ? wg_json_dump(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(doc);
	if (*out)
		return WG_OK;
	wg_set_last_error(WG_ENOMEM, "out of memory");
	return WG_ENOMEM;
}

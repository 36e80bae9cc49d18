/*
 * "wheelgate.scan/1" (docs/scan.md): the JSON Lines record of one input judged for one or
 * more targets, written here once for `wheelgate scan` and wheelgate.dask (through the
 * binding), and read back here (--resume, summaries).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "output/output.h"

#define SCAN_SCHEMA "wheelgate.scan/1"

/* A string from an input or a path: invalid UTF-8 escaped (\xNN), never dropped. */
static json_t *jstr(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	wg_buf b = {0};
	j = wg_buf_escape(&b, s, WG_ESCAPE_UTF8) == WG_OK && b.s ? json_string(b.s) : json_null();
	wg_buf_free(&b);
	return j;
}

static json_t *nstr(const char *s)
{
	return s ? wg_json_str(s) : json_null();
}

/* The wheel's tags as its file name gives them: each python-abi-platform combination. */
static json_t *tags_of(const wg_scan *scan)
{
	json_t *a = json_array();
	const wg_strlist *py = &scan->lists[WG_LIST_PYTHON_TAGS], *abi = &scan->lists[WG_LIST_ABI_TAGS],
			 *plat = &scan->lists[WG_LIST_PLATFORM_TAGS];
	for (size_t p = 0; a && p < py->n; p++)
		for (size_t b = 0; b < abi->n; b++)
			for (size_t l = 0; l < plat->n; l++) {
				char tag[512];
				snprintf(tag, sizeof(tag), "%s-%s-%s", py->v[p], abi->v[b], plat->v[l]);
				json_array_append_new(a, jstr(tag));
			}
	return a;
}

static json_t *counts_json(const size_t c[3])
{
	return json_pack("{s:I, s:I, s:I}", "error", (json_int_t)c[2], "warning", (json_int_t)c[1],
			 "info", (json_int_t)c[0]);
}

/* One item of "targets": the verdict, counts, findings and counted findings check gives the
 * input for this target. */
static json_t *target_entry(const wg_scan_record_target *tg, wg_severity fail_on)
{
	const wg_report *r = tg->report;
	json_t *t = json_object();
	json_object_set_new(t, "target", jstr(tg->name));
	json_object_set_new(t, "profile", json_string(wg_profile_name(wg_target_profile(tg->target))));
	json_object_set_new(t, "verdict", json_string(wg_verdict_name(wg_report_verdict(r, fail_on))));
	wg_counts_info c = WG_COUNTS_INFO_INIT;
	if (r)
		wg_report_counts(&c, r);
	json_object_set_new(t, "counts", counts_json(c.severity));
	json_t *fs = json_array();
	for (size_t k = 0; r && fs && k < r->findings.len; k++) {
		const wg_finding *f = wg_vec_at(&r->findings, k);
		json_array_append_new(fs, json_pack("{s:s, s:s, s:o, s:o, s:o}", "rule", f->rule,
			"severity", wg_severity_name(f->severity), "message", nstr(f->message),
			"member", nstr(f->member), "symbol", nstr(f->symbol)));
	}
	json_object_set_new(t, "findings", fs);
	/* the findings past a bound, counted (check's "more"): counts keep agreeing with them */
	if (r && r->more.len) {
		json_t *more = json_array();
		for (size_t i = 0; more && i < r->more.len; i++) {
			const wg_more *m = wg_vec_at(&r->more, i);
			json_array_append_new(more, json_pack("{s:s, s:I, s:o}", "rule", m->rule,
				"count", (json_int_t)m->count, "counts", counts_json(m->severity)));
		}
		json_object_set_new(t, "more", more);
	}
	return t;
}

WG_API int wg_scan_record_format(char **out, const wg_scan_record *rec)
{
	if (!out || !rec || (rec->ntargets && !rec->targets))
		return wg_null_arg("wg_scan_record_format");
	*out = NULL;
	if (wg_struct_version("wg_scan_record", rec->version, WG_SCAN_RECORD_VERSION) < 0)
		return WG_EINVAL;
	for (size_t t = 0; t < rec->ntargets; t++)
		if (wg_struct_version("wg_scan_record_target", rec->targets[t].version,
				      WG_SCAN_RECORD_TARGET_VERSION) < 0)
			return WG_EINVAL;
	const wg_scan *scan = rec->scan;
	bool dist = scan && wg_scan_is_dist(scan);
	json_t *r = json_object();
	json_object_set_new(r, "schema", json_string(SCAN_SCHEMA));
	json_object_set_new(r, "path", jstr(rec->path));
	json_object_set_new(r, "name", jstr(dist ? scan->fields[WG_WHEEL_NAME] : NULL));
	json_object_set_new(r, "version", jstr(dist ? scan->fields[WG_WHEEL_VERSION] : NULL));
	json_object_set_new(r, "tags", scan ? tags_of(scan) : json_array());
	json_object_set_new(r, "sha256", rec->sha256 ? jstr(rec->sha256) : json_null());
	json_object_set_new(r, "size", rec->size >= 0 ? json_integer((json_int_t)rec->size)
						      : json_null());
	json_t *targets = json_array();
	for (size_t t = 0; targets && t < rec->ntargets; t++)
		json_array_append_new(targets, target_entry(&rec->targets[t],
			rec->targets[t].version >= 2 && rec->targets[t].fail_on ? *rec->targets[t].fail_on
										: rec->fail_on));
	json_object_set_new(r, "targets", targets);
	json_object_set_new(r, "facts", jstr(rec->facts));
	json_object_set_new(r, "seconds", json_real(rec->seconds));
	json_object_set_new(r, "error", jstr(rec->error));
	*out = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII |
			     JSON_REAL_PRECISION(6));
	json_decref(r);
	if (*out)
		return WG_OK;
	wg_set_error(WG_ERROR_CLASS_NOMEM, WG_ENOMEM, "out of memory");
	return WG_ENOMEM;
}

/* ---- reading records back ---- */

static const char *get(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

struct wg_scanrec {
	json_t *j;
};

static bool is_hex64(const char *s)
{
	size_t n = 0;
	for (; s && s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == 64;
}

static int severity_of(const char *name)
{
	static const char *const names[3] = {"info", "warning", "error"};
	for (int s = 0; name && s < 3; s++)
		if (!strcmp(name, names[s]))
			return s;
	return -1;
}

static bool str_or_null(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return !v || json_is_string(v) || json_is_null(v);
}

static bool count_ok(const json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 0;
}

/* What the accessors below rely on, checked once: each is then a lookup. The first field that
 * is wrong goes into why ("targets[1].findings[0]: severity"). Linear in the record. */
static bool record_valid(const json_t *j, char *why, size_t n)
{
	const json_t *ts = json_object_get(j, "targets");
	if (!json_is_array(ts)) {
		snprintf(why, n, "\"targets\" is not an array");
		return false;
	}
	for (size_t i = 0; i < json_array_size(ts); i++) {
		const json_t *t = json_array_get(ts, i);
		const char *v = get(t, "verdict");
		if (!json_is_object(t) || !json_is_string(json_object_get(t, "target"))) {
			snprintf(why, n, "targets[%zu]: not an object with a string \"target\"", i);
			return false;
		}
		if (!v || (strcmp(v, "pass") && strcmp(v, "fail") && strcmp(v, "error"))) {
			snprintf(why, n, "targets[%zu]: \"verdict\" is not pass, fail or error", i);
			return false;
		}
		const json_t *fs = json_object_get(t, "findings"), *more = json_object_get(t, "more");
		if ((fs && !json_is_array(fs) && !json_is_null(fs)) ||
		    (more && !json_is_array(more) && !json_is_null(more))) {
			snprintf(why, n, "targets[%zu]: \"findings\" or \"more\" is not an array", i);
			return false;
		}
		for (size_t k = 0; k < json_array_size(fs); k++) {
			const json_t *f = json_array_get(fs, k);
			if (!json_is_object(f) || !get(f, "rule") || severity_of(get(f, "severity")) < 0 ||
			    !str_or_null(f, "message") || !str_or_null(f, "member") ||
			    !str_or_null(f, "symbol")) {
				snprintf(why, n, "targets[%zu].findings[%zu]: not a finding (a string "
					 "\"rule\", a \"severity\" of info, warning or error)", i, k);
				return false;
			}
		}
		for (size_t k = 0; k < json_array_size(more); k++) {
			const json_t *m = json_array_get(more, k);
			if (!json_is_object(m) || !get(m, "rule") || !count_ok(json_object_get(m, "count"))) {
				snprintf(why, n, "targets[%zu].more[%zu]: not a counted finding (a string "
					 "\"rule\", a \"count\")", i, k);
				return false;
			}
		}
	}
	return true;
}

WG_API int wg_scanrec_parse(wg_scanrec **out, const char *line, size_t len)
{
	if (!out || (!line && len))
		return wg_null_arg("wg_scanrec_parse");
	*out = NULL;
	json_error_t je;
	json_t *j = json_loadb(line ? line : "", len, 0, &je);
	if (!j) {
		wg_set_error(WG_ERROR_CLASS_STORE, WG_EFORMAT, "not a " SCAN_SCHEMA " record: %s",
			     je.text);
		return WG_EFORMAT;
	}
	const char *schema = json_string_value(json_object_get(j, "schema"));
	if (!json_is_object(j) || !schema || strcmp(schema, SCAN_SCHEMA)) {
		json_decref(j);
		wg_set_error(WG_ERROR_CLASS_STORE, WG_EFORMAT, "not a " SCAN_SCHEMA " record");
		return WG_EFORMAT;
	}
	char why[256];
	if (!record_valid(j, why, sizeof(why))) {
		json_decref(j);
		wg_set_error(WG_ERROR_CLASS_STORE, WG_EFORMAT, "not a " SCAN_SCHEMA " record: %s", why);
		return WG_EFORMAT;
	}
	wg_scanrec *rec = malloc(sizeof(*rec));
	if (!rec) {
		json_decref(j);
		wg_set_error(WG_ERROR_CLASS_NOMEM, WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	rec->j = j;
	*out = rec;
	return WG_OK;
}

WG_API void wg_scanrec_free(wg_scanrec *rec)
{
	if (!rec)
		return;
	json_decref(rec->j);
	free(rec);
}

WG_API int wg_scanrec_get(wg_scanrec_info *out, const wg_scanrec *rec)
{
	if (!out || !rec)
		return wg_null_arg("wg_scanrec_get");
	if (wg_struct_version("wg_scanrec_info", out->version, WG_SCANREC_INFO_VERSION) < 0)
		return WG_EINVAL;
	const json_t *j = rec->j;
	out->path = get(j, "path");
	out->name = get(j, "name");
	out->pkg_version = get(j, "version");
	out->sha256 = is_hex64(get(j, "sha256")) ? get(j, "sha256") : NULL;
	json_t *size = json_object_get(j, "size");
	out->size = json_is_integer(size) && json_integer_value(size) >= 0
		    ? (int64_t)json_integer_value(size) : -1;
	out->facts = get(j, "facts");
	out->error = get(j, "error");
	out->ntargets = json_array_size(json_object_get(j, "targets"));
	return WG_OK;
}

/* {"error": n, "warning": n, "info": n} by wg_severity; a missing or bad count is 0 */
static void read_counts(size_t out[3], const json_t *c)
{
	static const char *const names[3] = {"info", "warning", "error"};
	for (int s = 0; s < 3; s++) {
		json_t *n = json_object_get(c, names[s]);
		out[s] = count_ok(n) ? (size_t)json_integer_value(n) : 0;
	}
}

WG_API int wg_scanrec_target(wg_scanrec_target_info *out, const wg_scanrec *rec, size_t i)
{
	if (!out || !rec)
		return wg_null_arg("wg_scanrec_target");
	if (wg_struct_version("wg_scanrec_target_info", out->version,
			      WG_SCANREC_TARGET_INFO_VERSION) < 0)
		return WG_EINVAL;
	const json_t *t = json_array_get(json_object_get(rec->j, "targets"), i);
	if (!t)
		return WG_ENOTFOUND;
	out->target = get(t, "target");
	out->profile = get(t, "profile");
	const char *v = get(t, "verdict");
	out->verdict = v && !strcmp(v, "pass") ? WG_VERDICT_PASS
		       : v && !strcmp(v, "fail") ? WG_VERDICT_FAIL : WG_VERDICT_ERROR;
	read_counts(out->counts, json_object_get(t, "counts"));
	if (out->version >= 2) {
		out->nfindings = json_array_size(json_object_get(t, "findings"));
		out->nmore = json_array_size(json_object_get(t, "more"));
	}
	return WG_OK;
}

/* Item i of target t's array key, or NULL (WG_ENOTFOUND). */
static const json_t *target_item(const wg_scanrec *rec, size_t t, const char *key, size_t i)
{
	const json_t *tg = json_array_get(json_object_get(rec->j, "targets"), t);
	return json_array_get(json_object_get(tg, key), i);
}

WG_API int wg_scanrec_finding(wg_scanrec_finding_info *out, const wg_scanrec *rec, size_t t,
			      size_t i)
{
	if (!out || !rec)
		return wg_null_arg("wg_scanrec_finding");
	if (wg_struct_version("wg_scanrec_finding_info", out->version,
			      WG_SCANREC_FINDING_INFO_VERSION) < 0)
		return WG_EINVAL;
	const json_t *f = target_item(rec, t, "findings", i);
	if (!f)
		return WG_ENOTFOUND;
	out->rule = get(f, "rule");
	out->severity = (wg_severity)severity_of(get(f, "severity")); /* checked by the parse */
	out->message = get(f, "message");
	out->member = get(f, "member");
	out->symbol = get(f, "symbol");
	return WG_OK;
}

WG_API int wg_scanrec_more(wg_scanrec_more_info *out, const wg_scanrec *rec, size_t t, size_t i)
{
	if (!out || !rec)
		return wg_null_arg("wg_scanrec_more");
	if (wg_struct_version("wg_scanrec_more_info", out->version, WG_SCANREC_MORE_INFO_VERSION) < 0)
		return WG_EINVAL;
	const json_t *m = target_item(rec, t, "more", i);
	if (!m)
		return WG_ENOTFOUND;
	out->rule = get(m, "rule");
	out->count = (size_t)json_integer_value(json_object_get(m, "count"));
	read_counts(out->severity, json_object_get(m, "counts"));
	return WG_OK;
}

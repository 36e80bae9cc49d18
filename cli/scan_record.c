/*
 * scan's records (scan.h): one wheelgate.scan/1 line per input (docs/scan.md), its targets'
 * verdicts, counts and findings as check's JSON gives them.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

/* A string from an input or a path as JSON: invalid UTF-8 escaped (\xNN), never dropped. */
static json_t *jstr(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	char *e = NULL;
	wg_escape(&e, s, WG_ESCAPE_UTF8);
	j = e ? json_string(e) : json_null();
	wg_free(e);
	return j;
}

/* The wheel's tags as its file name gives them: each python-abi-platform combination. */
static json_t *tags_of(const wg_scan *scan)
{
	json_t *a = json_array();
	size_t np = wg_wheel_list_count(scan, WG_LIST_PYTHON_TAGS);
	size_t na = wg_wheel_list_count(scan, WG_LIST_ABI_TAGS);
	size_t nl = wg_wheel_list_count(scan, WG_LIST_PLATFORM_TAGS);
	for (size_t p = 0; p < np; p++)
		for (size_t b = 0; b < na; b++)
			for (size_t l = 0; l < nl; l++) {
				char tag[512];
				snprintf(tag, sizeof(tag), "%s-%s-%s",
					 wg_wheel_list_item(scan, WG_LIST_PYTHON_TAGS, p),
					 wg_wheel_list_item(scan, WG_LIST_ABI_TAGS, b),
					 wg_wheel_list_item(scan, WG_LIST_PLATFORM_TAGS, l));
				json_array_append_new(a, jstr(tag));
			}
	return a;
}

/* The target's entry from check's JSON document of one input (the library's own verdict,
 * counts and findings), reduced to the scan record's keys. */
static json_t *target_entry(const scanner_state *s, const scan_target *tg, const char *path,
			    const wg_report *rep, const char *error)
{
	char *doc = NULL;
	json_t *t = json_object();
	json_object_set_new(t, "target", jstr(tg->name));
	json_object_set_new(t, "profile", json_string(wg_profile_name(rep ? wg_report_profile(rep)
		: (wg_profile)tg->profile)));
	if (wg_reports_format(&doc, WG_FORMAT_JSON, s->p.rs, tg->target, &path, &rep, &error, 1,
			      s->p.fail_on) < 0) {
		json_object_set_new(t, "verdict", json_string("error"));
		wg_free(doc);
		return t;
	}
	json_t *j = json_loads(doc, 0, NULL);
	wg_free(doc);
	const char *prof = json_string_value(json_object_get(j, "profile"));
	if (prof)
		json_object_set_new(t, "profile", json_string(prof));
	json_t *in = json_array_get(json_object_get(j, "inputs"), 0);
	json_object_set(t, "verdict", json_object_get(in, "verdict"));
	json_object_set(t, "counts", json_object_get(in, "counts"));
	json_t *fs = json_array();
	json_t *f;
	size_t i;
	json_array_foreach(json_object_get(in, "findings"), i, f) {
		json_t *o = json_object();
		static const char *const keys[] = {"rule", "severity", "message", "member", "symbol"};
		for (size_t k = 0; k < 5; k++) {
			json_t *v = json_object_get(f, keys[k]);
			json_object_set(o, keys[k], v ? v : json_null());
		}
		json_array_append_new(fs, o);
	}
	json_object_set_new(t, "findings", fs);
	/* the findings past a bound, counted (check's "more"): counts keep agreeing with them */
	json_t *more = json_object_get(in, "more");
	if (json_array_size(more))
		json_object_set(t, "more", more);
	json_decref(j);
	return t;
}

char *scan_record_line(const scanner_state *s, const scan_record *rec)
{
	const wg_scan *scan = rec->scan;
	json_t *r = json_object();
	json_object_set_new(r, "schema", json_string("wheelgate.scan/1"));
	json_object_set_new(r, "path", jstr(rec->path));
	json_object_set_new(r, "name", jstr(scan ? wg_wheel_get(scan, WG_WHEEL_NAME) : NULL));
	json_object_set_new(r, "version", jstr(scan ? wg_wheel_get(scan, WG_WHEEL_VERSION) : NULL));
	json_object_set_new(r, "tags", scan ? tags_of(scan) : json_array());
	json_object_set_new(r, "sha256", rec->sha256 ? json_string(rec->sha256) : json_null());
	json_object_set_new(r, "size", rec->have_size ? json_integer((json_int_t)rec->size)
						      : json_null());
	json_t *targets = json_array();
	for (size_t t = 0; t < s->ntg; t++)
		json_array_append_new(targets, target_entry(s, &s->tg[t], rec->path, rec->reps[t],
							    rec->reps[t] ? NULL
							    : rec->terr[t] ? rec->terr[t]
							    : rec->error));
	json_object_set_new(r, "targets", targets);
	json_object_set_new(r, "facts", rec->facts ? jstr(rec->facts) : json_null());
	json_object_set_new(r, "seconds", json_real(rec->seconds));
	json_object_set_new(r, "error", jstr(rec->error));
	char *line = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII |
				 JSON_REAL_PRECISION(6));
	json_decref(r);
	return line;
}

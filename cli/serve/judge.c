/*
 * A wheel's bytes judged: the check JSON document `wheelgate check --format json` prints,
 * plus what the gate, the log and the metrics need (the verdict, the blocking rule ids and
 * the first blocking message).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static void scanner_free(void *p)
{
	wg_scanner_free(p);
}

wg_scanner *serve_scanner(server *s)
{
	wg_scanner *sc = pthread_getspecific(s->scanner_key);
	if (sc)
		return sc;
	if (wg_scanner_new(&sc, s->ctx) < 0)
		return NULL;
	if (pthread_setspecific(s->scanner_key, sc) != 0) {
		wg_scanner_free(sc);
		return NULL;
	}
	return sc;
}

int serve_scanner_key(server *s)
{
	return pthread_key_create(&s->scanner_key, scanner_free);
}

void serve_verdict_clear(serve_verdict *v)
{
	wg_free(v->doc);
	free(v->rules);
	free(v->first);
	free(v->first_target);
	memset(v, 0, sizeof(*v));
}

/* Appends the ids of the blocking findings of rep to *list (no repeats), and the first
 * blocking message to *first. */
static int collect(const wg_report *rep, char **list, char **first)
{
	size_t n = wg_report_count(rep);
	for (size_t i = 0; i < n; i++) {
		wg_finding_info f = WG_FINDING_INFO_INIT;
		if (wg_report_finding(&f, rep, i) < 0 || f.severity < WG_SEV_ERROR)
			continue;
		if (!*first) {
			const char *m = f.message ? f.message : f.title ? f.title : "";
			size_t fl = strlen(f.rule) + strlen(m) + 3;
			if (!(*first = malloc(fl)))
				return -1;
			snprintf(*first, fl, "%s: %s", f.rule, m);
		}
		size_t idl = strlen(f.rule);
		if (*list) {
			bool seen = false;
			for (const char *p = *list; p && *p;) {
				const char *e = strchr(p, ',');
				size_t l = e ? (size_t)(e - p) : strlen(p);
				if (l == idl && !strncmp(p, f.rule, l))
					seen = true;
				p = e ? e + 1 : NULL;
			}
			if (seen)
				continue;
		}
		size_t old = *list ? strlen(*list) : 0;
		char *l = realloc(*list, old + idl + 2);
		if (!l)
			return -1;
		if (old)
			l[old++] = ',';
		memcpy(l + old, f.rule, idl + 1);
		*list = l;
	}
	return 0;
}

int serve_judge(server *s, wg_scanner *sc, const unsigned char *buf, size_t len,
		const char *name, const char *spec, const char *profile, bool upload,
		serve_verdict *v, char *err, size_t errlen)
{
	memset(v, 0, sizeof(*v));
	int prof = upload ? (int)WG_PROFILE_PUBLISH : wg_profile_parse(profile ? profile : "auto");
	if (prof < 0) {
		snprintf(err, errlen, "profile takes install, publish or auto");
		return -1;
	}
	wg_target *t = NULL;
	if (wg_target_new(&t) < 0 ||
	    wg_target_set(t, "profile", wg_profile_name((wg_profile)prof)) < 0 ||
	    (spec && wg_target_parse(t, spec) < 0)) {
		char *e = serve_esc(wg_error_last());
		snprintf(err, errlen, "target: %s", e ? e : "out of memory");
		free(e);
		wg_target_free(t);
		return -1;
	}
	wg_scan *scan = NULL;
	wg_report *rep = NULL;
	int rc = wg_scan_buffer(&scan, sc, buf, len, name);
	if (rc == WG_OK)
		rc = wg_check(&rep, sc, s->rs, scan, t);
	wg_scan_free(scan);
	const char *e = NULL;
	if (rc < 0) {
		e = wg_scanner_error(sc);
		e = *e ? e : "cannot be read";
	}
	const wg_report *reps[1] = {rep};
	const char *paths[1] = {name}, *errs[1] = {e};
	int ret = 0;
	if (wg_reports_format(&v->doc, WG_FORMAT_JSON, s->rs, t, paths, reps, errs, 1,
			      WG_SEV_ERROR) < 0 || !v->doc) {
		char *m = serve_esc(wg_error_last());
		snprintf(err, errlen, "cannot format the report: %s", m ? m : "out of memory");
		free(m);
		ret = -2;
	} else if (!rep) {
		v->verdict = "error";
		if (!(v->first = strdup(e))) {
			snprintf(err, errlen, "out of memory");
			ret = -2;
		}
	} else {
		v->verdict = wg_report_worst(rep) >= (int)WG_SEV_ERROR ? "fail" : "pass";
		if (collect(rep, &v->rules, &v->first) < 0) {
			snprintf(err, errlen, "out of memory");
			ret = -2;
		}
	}
	wg_report_free(rep);
	wg_target_free(t);
	if (ret < 0)
		serve_verdict_clear(v);
	return ret;
}

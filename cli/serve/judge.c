/*
 * A wheel's bytes judged: the check JSON document `wheelgate check --format json` prints,
 * plus what the gate, the log and the metrics need (the verdict, the blocking rule ids and
 * the first blocking message).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "serve.h"

static void scanner_free(void *p)
{
	wg_scanner_free(p);
}

wg_scanner *serve_scanner(server *s)
{
	/* A check slot's scanner when the gate gave one (threads come and go with
	 * connections; slots stay), else this thread's own. */
	wg_scanner *sc = gate_scanner(s);
	if (sc || s->gate)
		return sc;
	sc = pthread_getspecific(s->scanner_key);
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

/* The check document of one report (or of an unreadable input: rep NULL, e its message). */
static int format_one(const serve_gen *g, wg_format format, const wg_target *t,
		      const char *name, const wg_report *rep, const char *e, char **doc, char *err,
		      size_t errlen)
{
	const wg_report *reps[1] = {rep};
	const char *paths[1] = {name}, *errs[1] = {e};
	if (wg_reports_format(doc, format, g->rs, t, paths, reps, errs, 1,
			      WG_SEV_ERROR) < 0 || !*doc) {
		char *m = serve_esc(wg_error_last());
		snprintf(err, errlen, "cannot format the report: %s", m ? m : "out of memory");
		free(m);
		return -2;
	}
	return 0;
}

/* wg_check for t; with a site-packages target (env), the wheel is judged as installed
 * there (what it would break among the installed distributions too), as `check --env` does.
 * The environment's state is one thread's at a time: under lock. */
static int check_at(wg_report **rep, serve_gen *g, wg_scanner *sc, const wg_scan *scan,
		    const wg_target *t, wg_env *env, pthread_mutex_t *lock)
{
	if (lock)
		pthread_mutex_lock(lock);
	bool install = env && wg_scan_get_kind(scan) == WG_SCAN_WHEEL;
	int rc = install ? wg_env_set_install(env, sc, &scan, 1) : WG_OK;
	if (rc == WG_OK)
		rc = wg_check(rep, sc, g->rs, scan, t);
	if (install)
		wg_env_set_install(env, sc, NULL, 0);
	if (lock)
		pthread_mutex_unlock(lock);
	return rc;
}

/* One wheel, one target: the check document (docs/check-json.md). t is owned by the caller. */
static int judge_one(serve_gen *g, wg_scanner *sc, const unsigned char *buf, size_t len,
		     const char *name, const wg_target *t, wg_env *env, pthread_mutex_t *lock,
		     serve_verdict *v, char *err, size_t errlen)
{
	wg_scan *scan = NULL;
	wg_report *rep = NULL;
	int rc = wg_scan_buffer(&scan, sc, buf, len, name);
	if (rc == WG_OK)
		rc = check_at(&rep, g, sc, scan, t, env, lock);
	wg_scan_free(scan);
	const char *e = NULL;
	if (rc < 0) {
		e = wg_scanner_error(sc);
		e = *e ? e : "cannot be read";
	}
	int ret = format_one(g, WG_FORMAT_JSON, t, name, rep, e, &v->doc, err, errlen);
	if (ret < 0) {
	} else if (!rep) {
		v->verdict = "error";
		if (!(v->first = strdup(e))) {
			snprintf(err, errlen, "out of memory");
			ret = -2;
		}
	} else {
		v->verdict = wg_verdict_name(wg_report_verdict(rep, WG_SEV_ERROR));
		if (collect(rep, &v->rules, &v->first) < 0) {
			snprintf(err, errlen, "out of memory");
			ret = -2;
		}
	}
	wg_report_free(rep);
	if (ret < 0)
		serve_verdict_clear(v);
	return ret;
}

/* One part of a fleet's judgement: the publish profile, or one target. */
typedef struct {
	const char *name;       /* the target's name; NULL for the publish profile */
	const wg_target *t;
	wg_env *env;            /* a site-packages target's environment, or NULL */
	pthread_mutex_t *lock;
	wg_report *rep;         /* NULL: unreadable */
	char *doc;
	const char *verdict;
} part;

/* A JSON string (or null) on one line, as the envelope writes it. */
static bool put_str(FILE *f, const char *s)
{
	if (!s)
		return fputs("null", f) >= 0;
	json_t *j = json_string(s);
	char *t = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	json_decref(j);
	bool ok = t && fputs(t, f) >= 0;
	free(t);
	return ok;
}

/* The fleet envelope (docs/check-json.md, "wheelgate.fleet/1"): every part's unchanged check
 * document (the library's, compact: put in as written, never read back), the policy and the
 * overall verdict. */
static char *envelope(const serve_gen *g, const part *parts, size_t n, const char *verdict,
		      const char *first_target)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	const char *publish = NULL;
	for (size_t i = 0; i < n; i++)
		if (!parts[i].name)
			publish = parts[i].doc;
	bool ok = fputs("{\"schema\":\"wheelgate.fleet/1\",\"wheelgate_version\":", f) >= 0 &&
		  put_str(f, wg_version_string()) && fputs(",\"policy\":", f) >= 0 &&
		  put_str(f, g->cfg.policy == SERVE_POLICY_ANY ? "any" : "every") &&
		  fputs(",\"verdict\":", f) >= 0 && put_str(f, verdict) &&
		  fputs(",\"first_target\":", f) >= 0 && put_str(f, first_target) &&
		  fputs(",\"publish\":", f) >= 0 && fputs(publish ? publish : "null", f) >= 0 &&
		  fputs(",\"targets\":[", f) >= 0;
	for (size_t i = 0, k = 0; ok && i < n; i++) {
		if (!parts[i].name)
			continue;
		ok = fputs(k++ ? ",{\"name\":" : "{\"name\":", f) >= 0 && put_str(f, parts[i].name) &&
		     fputs(",\"verdict\":", f) >= 0 && put_str(f, parts[i].verdict) &&
		     fputs(",\"check\":", f) >= 0 && fputs(parts[i].doc, f) >= 0 &&
		     fputs("}", f) >= 0;
	}
	ok = ok && fputs("]}", f) >= 0;
	if (fclose(f) != 0 || !ok) {
		free(text);
		return NULL;
	}
	return text;
}

/* The wheel scanned once, then checked for the publish profile (an upload) and each target of
 * the fleet (or the one named). */
static int judge_fleet(serve_gen *g, wg_scanner *sc, const unsigned char *buf, size_t len,
		       const char *name, bool upload, serve_verdict *v, char *err, size_t errlen)
{
	const serve_config *cfg = &g->cfg;
	size_t n = cfg->ntargets + (upload ? 1 : 0);
	part *parts = calloc(n, sizeof(*parts));
	wg_target *pub = NULL;
	wg_scan *scan = NULL;
	int ret = 0;
	if (!parts || (upload && (wg_target_new(&pub) < 0 ||
				  wg_target_set(pub, "profile", "publish") < 0))) {
		snprintf(err, errlen, "out of memory");
		ret = -2;
		goto out;
	}
	size_t k = 0;
	if (upload)
		parts[k++] = (part){.name = NULL, .t = pub};
	for (size_t i = 0; i < cfg->ntargets; i++) {
		serve_target *st = &cfg->targets[i];
		parts[k++] = (part){.name = st->name, .t = st->target, .env = st->env,
				    .lock = st->env ? &st->env_lock : NULL};
	}
	int rc = wg_scan_buffer(&scan, sc, buf, len, name);
	const char *e = NULL;
	char *emsg = NULL;
	if (rc < 0) {
		e = wg_scanner_error(sc);
		if (!(emsg = strdup(*e ? e : "cannot be read"))) {
			snprintf(err, errlen, "out of memory");
			ret = -2;
			goto out;
		}
	}
	size_t targets_failed = 0, errors = 0;
	for (size_t i = 0; i < n; i++) {
		part *p = &parts[i];
		const char *pe = emsg;
		if (scan) {
			rc = check_at(&p->rep, g, sc, scan, p->t, p->env, p->lock);
			if (rc < 0) {
				pe = wg_scanner_error(sc);
				pe = *pe ? pe : "cannot be checked";
			}
		}
		if ((ret = format_one(g, WG_FORMAT_JSON_COMPACT, p->t, name, p->rep, pe, &p->doc, err,
				      errlen)) < 0)
			goto out_msg;
		if (!p->rep) {
			p->verdict = "error";
			errors++;
			if (!v->first && !(v->first = strdup(pe))) {
				snprintf(err, errlen, "out of memory");
				ret = -2;
				goto out_msg;
			}
		} else {
			p->verdict = wg_verdict_name(wg_report_verdict(p->rep, WG_SEV_ERROR));
		}
		if (strcmp(p->verdict, "pass"))
			targets_failed += p->name != NULL;
	}
	size_t ntargets = cfg->ntargets;
	bool pub_failed = upload && strcmp(parts[0].verdict, "pass");
	bool fleet_failed = ntargets && (cfg->policy == SERVE_POLICY_ANY
					 ? targets_failed == ntargets : targets_failed > 0);
	/* Unreadable is unreadable for every part: "error", as a single check says. */
	v->verdict = errors ? "error" : pub_failed || fleet_failed ? "fail" : "pass";
	if (!strcmp(v->verdict, "fail")) {
		/* The blocking findings: those of every part that failed (publish first). */
		for (size_t i = 0; i < n; i++) {
			part *p = &parts[i];
			if (!p->rep || strcmp(p->verdict, "fail"))
				continue;
			if (!p->name && !pub_failed)
				continue;
			if (p->name && !fleet_failed)
				continue;
			bool had = v->first != NULL;
			if (collect(p->rep, &v->rules, &v->first) < 0) {
				snprintf(err, errlen, "out of memory");
				ret = -2;
				goto out_msg;
			}
			if (!had && v->first && p->name && !(v->first_target = strdup(p->name))) {
				snprintf(err, errlen, "out of memory");
				ret = -2;
				goto out_msg;
			}
		}
	}
	if (!(v->doc = envelope(g, parts, n, v->verdict, v->first_target))) {
		snprintf(err, errlen, "cannot format the fleet's report (out of memory?)");
		ret = -2;
	}
out_msg:
	free(emsg);
out:
	wg_scan_free(scan);
	for (size_t i = 0; parts && i < n; i++) {
		wg_report_free(parts[i].rep);
		wg_free(parts[i].doc);
	}
	free(parts);
	wg_target_free(pub);
	if (ret < 0)
		serve_verdict_clear(v);
	return ret;
}

int serve_judge_named(serve_gen *g, wg_scanner *sc, const unsigned char *buf, size_t len,
		      const char *name, const char *spec, const char *profile, const char *fleet,
		      bool upload, serve_verdict *v, char *err, size_t errlen)
{
	memset(v, 0, sizeof(*v));
	if (fleet) {
		if (spec || profile || upload) {
			snprintf(err, errlen, "fleet=NAME names a target of the config: it takes no "
				 "target= or profile=");
			return -1;
		}
		for (size_t i = 0; i < g->cfg.ntargets; i++) {
			serve_target *st = &g->cfg.targets[i];
			if (!strcmp(st->name, fleet))
				return judge_one(g, sc, buf, len, name, st->target, st->env,
						 st->env ? &st->env_lock : NULL, v, err, errlen);
		}
		char *e = serve_esc(fleet);
		size_t off = (size_t)snprintf(err, errlen, "fleet=%.64s: no such target (the "
					      "config's:", e ? e : "?");
		free(e);
		for (size_t i = 0; i < g->cfg.ntargets && off < errlen; i++)
			off += (size_t)snprintf(err + off, errlen - off, " %s", g->cfg.targets[i].name);
		if (off < errlen)
			snprintf(err + off, errlen - off, "%s)", g->cfg.ntargets ? "" : " none");
		return -1;
	}
	if (g->cfg.ntargets && !spec && !profile)
		return judge_fleet(g, sc, buf, len, name, upload, v, err, errlen);
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
	int ret = judge_one(g, sc, buf, len, name, t, NULL, NULL, v, err, errlen);
	wg_target_free(t);
	return ret;
}

int serve_judge(serve_gen *g, wg_scanner *sc, const unsigned char *buf, size_t len,
		const char *name, const char *spec, const char *profile, bool upload,
		serve_verdict *v, char *err, size_t errlen)
{
	return serve_judge_named(g, sc, buf, len, name, spec, profile, NULL, upload, v, err,
				 errlen);
}

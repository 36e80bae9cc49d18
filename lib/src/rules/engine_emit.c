/*
 * What a check kind calls while it runs: its variables, the rule's patterns matched (PCRE2,
 * within the match limits), the rule's scope, and findings emitted with their message and fix
 * templates expanded (counted past the per-rule and per-input limits).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_RULES /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules/checks/check.h"

void wg_vars_set(wg_vars *vs, const char *key, const char *value)
{
	for (int i = 0; i < vs->n; i++)
		if (!strcmp(vs->v[i].key, key)) {
			vs->v[i].value = value;
			return;
		}
	if (vs->n < WG_MAX_VARS) {
		vs->v[vs->n].key = key;
		vs->v[vs->n].value = value;
		vs->n++;
	}
}

void wg_abi_name_for(char *buf, size_t n, int cxx11abi)
{
	snprintf(buf, n, "%s", cxx11abi == 1 ? "new (C++11, _GLIBCXX_USE_CXX11_ABI=1)"
			       : cxx11abi == 0 ? "old (pre-C++11, _GLIBCXX_USE_CXX11_ABI=0)" : "unknown");
}

char *wg_check_printf(wg_check_ctx *cc, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return wg_arena_strdup(&cc->report->arena, buf);
}

/* A match that hit PCRE2's limits: remembered (the first one) so that the check fails. */
static void limit_hit(wg_check_ctx *cc, const char *list, const char *subject, size_t len)
{
	if (cc->limit_list)
		return;
	cc->limit_list = list;
	size_t n = len < sizeof(cc->limit_subject) - 1 ? len : sizeof(cc->limit_subject) - 1;
	for (size_t i = 0; i < n; i++) /* only printable ASCII: the subject is input text */
		cc->limit_subject[i] = subject[i] >= 0x20 && subject[i] < 0x7f ? subject[i] : '?';
	cc->limit_subject[n] = '\0';
}

bool wg_rule_matches_n(wg_check_ctx *cc, const char *list, const char *subject, size_t len,
		       size_t *caps, int ncaps)
{
	for (size_t i = 0; i < cc->rule->nlists; i++) {
		const wg_pattern_list *l = &cc->rule->lists[i];
		if (strcmp(l->name, list))
			continue;
		for (size_t j = 0; j < l->n; j++) {
			int rc = wg_regex_match(l->re[j], cc->md, subject, len, caps, ncaps);
			if (rc == 1)
				return true;
			if (rc == WG_ELIMIT)
				limit_hit(cc, list, subject, len);
		}
	}
	return false;
}

bool wg_rule_matches(wg_check_ctx *cc, const char *list, const char *subject, size_t *caps,
		     int ncaps)
{
	return wg_rule_matches_n(cc, list, subject, strlen(subject), caps, ncaps);
}

bool wg_rule_in_scope(wg_check_ctx *cc, bool object, const char *subject)
{
	wg_regex *re = object ? cc->rule->scope_objects : cc->rule->scope_members;
	if (!re)
		return true;
	int rc = wg_regex_match(re, cc->md, subject, strlen(subject), NULL, 0);
	if (rc == WG_ELIMIT)
		limit_hit(cc, "scope", subject, strlen(subject));
	return rc == 1;
}

const wg_object *wg_check_next_object(wg_check_ctx *cc, size_t *i)
{
	const wg_vec *objects = &cc->scan->objects;
	while (*i < objects->len) {
		const wg_object *o = *(wg_object **)wg_vec_at(objects, (*i)++);
		if (!o->error && wg_rule_in_scope(cc, true, o->path))
			return o;
	}
	return NULL;
}

static const char *target_var(wg_check_ctx *cc, const char *key, char *buf, size_t n)
{
	const wg_target *t = cc->target;
	if (!strcmp(key, "target.python"))
		snprintf(buf, n, "%u.%u", t->python_major, t->python_minor);
	else if (!strcmp(key, "target.torch"))
		snprintf(buf, n, "%s", t->torch);
	else if (!strcmp(key, "target.cuda"))
		snprintf(buf, n, "%u.%u", t->cuda_major, t->cuda_minor);
	else if (!strcmp(key, "target.cxx11abi"))
		snprintf(buf, n, "%d", t->cxx11abi);
	else if (!strcmp(key, "target.abi"))
		wg_abi_name_for(buf, n, t->cxx11abi);
	else if (!strcmp(key, "target.gpus")) {
		size_t o = 0;
		buf[0] = '\0';
		for (size_t i = 0; i < t->ngpus && o < n; i++)
			o += (size_t)snprintf(buf + o, n - o, "%s%s%ssm_%u%u%s", i ? ", " : "",
					      t->gpus[i].name ? t->gpus[i].name : "",
					      t->gpus[i].name ? " (" : "", t->gpus[i].cc_major,
					      t->gpus[i].cc_minor, t->gpus[i].name ? ")" : "");
	} else
		return NULL;
	return buf;
}

/* Expands {key} from vars, the common keys and the target; {{ is a literal brace. */
static char *expand(wg_check_ctx *cc, const char *tpl, const wg_vars *vars)
{
	wg_buf b = {0};
	for (const char *p = tpl; *p;) {
		if (p[0] == '{' && p[1] == '{') {
			wg_buf_append(&b, "{", 1);
			p += 2;
			continue;
		}
		const char *e = p[0] == '{' ? strchr(p, '}') : NULL;
		if (!e) {
			const char *next = strchr(p + 1, '{');
			size_t n = next ? (size_t)(next - p) : strlen(p);
			wg_buf_append(&b, p, n);
			p += n;
			continue;
		}
		char key[64], tmp[512];
		snprintf(key, sizeof(key), "%.*s", (int)(e - p - 1), p + 1);
		const char *val = NULL;
		for (int i = 0; i < vars->n && !val; i++)
			if (!strcmp(vars->v[i].key, key))
				val = vars->v[i].value;
		if (!val && !strcmp(key, "wheel"))
			val = cc->scan->path;
		if (!val && !strcmp(key, "path"))
			val = cc->scan->path;
		if (!val && !strcmp(key, "rule"))
			val = cc->rule->id;
		if (!val)
			val = target_var(cc, key, tmp, sizeof(tmp));
		if (!val)
			val = "?";
		wg_buf_append(&b, val, strlen(val));
		p = e + 1;
	}
	char *s = wg_arena_strdup(&cc->report->arena, b.s ? b.s : "");
	wg_buf_free(&b);
	return s;
}

int wg_emit(wg_check_ctx *cc, const wg_vars *vars, const char *member, const char *symbol,
	    const char *file, unsigned line)
{
	return wg_emit_sev(cc, cc->severity, vars, member, symbol, file, line);
}

int wg_emit_count(wg_check_ctx *cc, wg_severity sev, size_t n)
{
	if (!n)
		return WG_OK;
	if (sev > cc->severity)
		sev = cc->severity;
	wg_vec *more = &cc->report->more;
	if (cc->rule_more == SIZE_MAX) {
		wg_more *m = wg_vec_push(more);
		if (!m)
			return WG_ENOMEM;
		memset(m, 0, sizeof(*m));
		m->rule = cc->rule->id;
		cc->rule_more = more->len - 1;
	}
	wg_more *m = wg_vec_at(more, cc->rule_more);
	m->count += n;
	m->severity[(unsigned)sev < 3 ? sev : 2] += n;
	return WG_OK;
}

bool wg_emit_counted(wg_check_ctx *cc, wg_severity sev, int *rc)
{
	*rc = WG_OK;
	if ((!cc->max_rule || cc->rule_kept < cc->max_rule) &&
	    (!cc->max_all || cc->report->findings.len < cc->max_all))
		return false;
	*rc = wg_emit_count(cc, sev, 1);
	return true;
}

int wg_emit_sev(wg_check_ctx *cc, wg_severity sev, const wg_vars *vars, const char *member,
		const char *symbol, const char *file, unsigned line)
{
	if (sev > cc->severity)
		sev = cc->severity;
	int rc;
	if (wg_emit_counted(cc, sev, &rc))
		return rc;
	cc->rule_kept++;
	wg_finding *f = wg_vec_push(&cc->report->findings);
	if (!f)
		return WG_ENOMEM;
	wg_arena *a = &cc->report->arena;
	f->rule = cc->rule->id;
	f->severity = sev;
	f->title = expand(cc, cc->rule->title, vars);
	f->message = expand(cc, cc->rule->message, vars);
	f->fix = expand(cc, cc->rule->fix, vars);
	f->path = cc->report->path;
	f->member = member ? wg_arena_strdup(a, member) : NULL;
	f->symbol = symbol ? wg_arena_strdup(a, symbol) : NULL;
	f->file = file ? wg_arena_strdup(a, file) : NULL;
	f->line = line;
	return f->message ? WG_OK : WG_ENOMEM;
}

/*
 * abi3-limited-api: an object of a cpXY-abi3 wheel (or an *.abi3.so extension) imports a
 * Python C API symbol that the stable ABI of Python X.Y does not export: one added to the
 * stable ABI after X.Y (rules/python/stable_abi.yaml says when), one exported only where a
 * feature macro Linux lacks (Windows, debug builds), or one outside the stable ABI altogether
 * (a private _Py symbol, or the full C API). The version judged: the wheel's claim (its
 * lowest cpXY tag) in the publish profile; in the install profile the target Python when it
 * is known, else the claim. Symbols the wheel's own objects define are not Python's and are
 * never judged; nor are versioned imports (Python exports none).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

enum { TOO_NEW, NOT_LINUX, PRIVATE, NOT_LIMITED, NREASONS };

typedef struct {
	const char *first;
	const wg_pyabi_sym *first_entry;
	size_t count;
	wg_buf more;
} reason;

static bool python_symbol(const char *name)
{
	return !strncmp(name, "Py", 2) || !strncmp(name, "_Py", 3);
}

/* Whether any object of the scan defines name (then it is the wheel's own, not Python's). */
static bool defined_in_scan(const wg_scan *s, const char *name)
{
	for (size_t i = 0; i < s->objects.len; i++) {
		const wg_object *o = *(wg_object **)wg_vec_at(&s->objects, i);
		if (o->error)
			continue;
		for (size_t k = 0; k < o->nsyms; k++)
			if (o->syms[k].defined && !strcmp(o->syms[k].name, name))
				return true;
	}
	return false;
}

/* The lowest cpXY of the wheel's python tags: *maj.*min; false when none reads so. */
static bool wheel_claim(wg_check_ctx *cc, unsigned *maj, unsigned *min)
{
	const wg_scan *s = cc->scan;
	bool found = false;
	for (size_t i = 0; i < s->lists[WG_LIST_PYTHON_TAGS].n; i++) {
		const char *t = s->lists[WG_LIST_PYTHON_TAGS].v[i];
		size_t caps[6];
		if (!wg_rule_matches(cc, "cpython_tag", t, caps, 3) || caps[2] == SIZE_MAX ||
		    caps[4] == SIZE_MAX)
			continue;
		char num[16];
		snprintf(num, sizeof(num), "%.*s", (int)(caps[3] - caps[2]), t + caps[2]);
		unsigned a = (unsigned)strtoul(num, NULL, 10);
		snprintf(num, sizeof(num), "%.*s", (int)(caps[5] - caps[4]), t + caps[4]);
		unsigned b = (unsigned)strtoul(num, NULL, 10);
		if (!found || a < *maj || (a == *maj && b < *min)) {
			*maj = a;
			*min = b;
			found = true;
		}
	}
	return found;
}

static int emit_reason(wg_check_ctx *cc, const wg_object *o, int why, reason *r,
		       const char *claim)
{
	static const char *const kinds[] = {"too-new", "not-on-linux", "private", "not-limited"};
	const wg_pyabi_sym *e = r->first_entry;
	const char *problem;
	switch (why) {
	case TOO_NEW:
		problem = wg_check_printf(cc, "which entered the stable ABI only in Python %u.%u",
					  e->major, e->minor);
		break;
	case NOT_LINUX:
		problem = wg_check_printf(cc, "which the stable ABI exports only with %s (not on "
					  "a Linux release build)", e->ifdef);
		break;
	case PRIVATE:
		problem = "a private CPython symbol outside the stable ABI";
		break;
	default:
		problem = "part of CPython's full C API but not of the limited API (stable ABI)";
		break;
	}
	wg_vars v = {0};
	wg_vars_set(&v, "object", o->path);
	wg_vars_set(&v, "symbol", r->first);
	wg_vars_set(&v, "problem", problem);
	wg_vars_set(&v, "reason", kinds[why]);
	wg_vars_set(&v, "python", claim);
	wg_vars_set(&v, "added", e ? wg_check_printf(cc, "%u.%u", e->major, e->minor) : "");
	wg_vars_set(&v, "count", wg_check_printf(cc, "%zu", r->count));
	wg_vars_set(&v, "more", r->count > 1 ? wg_check_printf(cc, " (and %zu more like it: %s)",
							     r->count - 1, r->more.s ? r->more.s : "") : "");
	return wg_emit(cc, &v, wg_scan_is_dist(cc->scan) ? o->path : NULL, r->first, NULL, 0);
}

static int check_object(wg_check_ctx *cc, const wg_object *o, bool claimed, unsigned maj,
			unsigned min, const char *claim)
{
	reason rs[NREASONS];
	memset(rs, 0, sizeof(rs));
	for (size_t k = 0; k < o->nsyms; k++) {
		const wg_sym *y = &o->syms[k];
		if (y->defined || y->symver || !python_symbol(y->name))
			continue;
		const wg_pyabi_sym *e = wg_pyabi_find(y->name);
		int why;
		if (!e)
			why = y->name[0] == '_' ? PRIVATE : NOT_LIMITED;
		else if (!e->on_linux)
			why = NOT_LINUX;
		else if (claimed && (e->major > maj || (e->major == maj && e->minor > min)))
			why = TOO_NEW;
		else
			continue;
		if (defined_in_scan(cc->scan, y->name))
			continue;
		reason *r = &rs[why];
		if (!r->count++) {
			r->first = y->name;
			r->first_entry = e;
		} else if (r->count <= 6) {
			if (r->more.len)
				wg_buf_append(&r->more, ", ", 2);
			wg_buf_append(&r->more, y->name, strlen(y->name));
		} else if (r->count == 7) {
			wg_buf_append(&r->more, ", ...", 5);
		}
	}
	int rc = WG_OK;
	for (int why = 0; why < NREASONS; why++) {
		if (rs[why].count && rc >= 0)
			rc = emit_reason(cc, o, why, &rs[why], claim);
		wg_buf_free(&rs[why].more);
	}
	return rc;
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_pyabi_count())
		return WG_EDATA; /* rules/python/stable_abi.yaml unreadable: no verdict, said so */
	bool abi3 = false;
	unsigned maj = 0, min = 0;
	bool claimed = false; /* no claim (a bare *.abi3.so): no version judged, only membership */
	if (wg_scan_is_dist(s)) {
		for (size_t i = 0; i < s->lists[WG_LIST_ABI_TAGS].n; i++)
			abi3 = abi3 || !strcmp(s->lists[WG_LIST_ABI_TAGS].v[i], "abi3");
		claimed = wheel_claim(cc, &maj, &min);
	}
	if (cc->profile == WG_PROFILE_INSTALL && cc->target->python_major) {
		maj = cc->target->python_major;
		min = cc->target->python_minor;
		claimed = true;
	}
	char claim[32];
	snprintf(claim, sizeof(claim), claimed ? "%u.%u" : "3.x", maj, min);
	const wg_object *o;
	wg_for_each_object(cc, o) {
		if (!abi3 && !(o->ext_interpreter && !strcmp(o->ext_interpreter, "abi3")))
			continue;
		int rc = check_object(cc, o, claimed, maj, min, claim);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const patterns[] = {"cpython_tag", NULL};
static const char *const vars[] = {"object", "symbol", "problem", "reason", "python", "added",
				   "count", "more", NULL};
const wg_check_kind wg_check_abi3_limited_api = {"abi3-limited-api", run, patterns, vars, 0};

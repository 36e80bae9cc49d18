/*
 * tightest-manylinux: a wheel tagged for a bare platform (linux_x86_64) says nothing about the
 * systems it loads on. The lowest manylinux policy of its architecture that allows every need
 * of its objects is the tag it would meet (rules/platform/manylinux.yaml, auditwheel's
 * policies): every symbol version it needs from outside the wheel in the policy's
 * symbol_versions, every library it needs from outside the wheel in the policy's
 * lib_whitelist, bar the exceptions of rules/platform/provided.yaml (the loader, the NVIDIA
 * driver, the libraries of distributions it requires). Reported as information, with the needs
 * that rule out the policy below it, or with what rules out every policy.
 * The bare-platform tags and their architecture are the rule's `bare_platform` patterns.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

#define SHOWN 4 /* needs named in a list; the rest counted */

typedef struct {
	const char *name, *object; /* "GLIBC_2.38" or "libfoo.so.1"; the first object needing it */
	size_t order;
	const char *provided;      /* a library: the distributions that ship it, or NULL */
} need;

static int cmp_need(const void *a, const void *b)
{
	const need *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

/* Sorts v by name and keeps the first of each name. */
static void unique(wg_vec *v)
{
	if (!v->len)
		return;
	qsort(v->items, v->len, sizeof(need), cmp_need);
	size_t o = 1;
	for (size_t i = 1; i < v->len; i++) {
		const need *p = wg_vec_at(v, o - 1), *x = wg_vec_at(v, i);
		if (strcmp(p->name, x->name))
			memmove(wg_vec_at(v, o++), x, sizeof(need));
	}
	v->len = o;
}

/* Appends item to the list in buf, counting it; only the first SHOWN are written. */
static void add(char *buf, size_t n, size_t *count, const char *item)
{
	if ((*count)++ >= SHOWN)
		return;
	size_t o = strlen(buf);
	if (o < n)
		snprintf(buf + o, n - o, "%s%s", o ? ", " : "", item);
}

/* "GLIBC_2.38 (by a.so)" */
static void add_by(char *buf, size_t n, size_t *count, const char *name, const char *object)
{
	char item[512];
	snprintf(item, sizeof(item), "%s (by %s)", name, object);
	add(buf, n, count, item);
}

static void more(char *buf, size_t n, size_t count)
{
	size_t o = strlen(buf);
	if (count > SHOWN && o < n)
		snprintf(buf + o, n - o, " and %zu more", count - SHOWN);
}

/* The needs policy p refuses: "GLIBC_2.38 (by a.so), libfoo.so.1 (by a.so)"; how many. */
static size_t refused(const wg_policy *p, const wg_vec *vers, const wg_vec *libs, bool with_libs,
		      char *buf, size_t n)
{
	size_t count = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < vers->len; i++) {
		const need *x = wg_vec_at(vers, i);
		if (wg_policy_version(p, x->name) == 0)
			add_by(buf, n, &count, x->name, x->object);
	}
	for (size_t i = 0; with_libs && i < libs->len; i++) {
		const need *x = wg_vec_at(libs, i);
		if (wg_policy_library(p, x->name) == 0)
			add_by(buf, n, &count, x->name, x->object);
	}
	more(buf, n, count);
	return count;
}

/* The lowest glibc policy on arch allowing every need (libraries too when with_libs); its
 * index in *out, and the one before it on arch in *below (index -1: none). */
static bool lowest(const char *arch, const wg_vec *vers, const wg_vec *libs, bool with_libs,
		   wg_policy *out, wg_policy *below, wg_policy *newest)
{
	below->index = newest->index = -1;
	bool found = false;
	for (size_t i = 0; i < wg_policy_count(); i++) {
		wg_policy p;
		if (!wg_policy_at(&p, i, arch) || p.musl)
			continue;
		*newest = p;
		if (found)
			continue;
		char tmp[8];
		if (!refused(&p, vers, libs, with_libs, tmp, sizeof(tmp))) {
			*out = p;
			found = true;
		} else {
			*below = p;
		}
	}
	return found;
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_scan_is_dist(s) || !s->objects.len)
		return WG_OK;
	const char *plat = NULL;
	char arch[32] = "";
	for (size_t i = 0; i < s->lists[WG_LIST_PLATFORM_TAGS].n && !plat; i++) {
		size_t caps[4];
		const char *t = s->lists[WG_LIST_PLATFORM_TAGS].v[i];
		if (wg_rule_matches(cc, "bare_platform", t, caps, 2) && caps[2] != SIZE_MAX) {
			plat = t;
			snprintf(arch, sizeof(arch), "%.*s", (int)(caps[3] - caps[2]), t + caps[2]);
		}
	}
	if (!plat)
		return WG_OK;
	/* The highest need of each family over every object of the wheel, to show. */
	wg_sysneed all[WG_SYS_FAMILIES];
	size_t nall = 0;
	/* Every version and library needed from outside the wheel, and the exceptions taken. */
	wg_vec vers, libs, taken;
	wg_vec_init(&vers, sizeof(need));
	wg_vec_init(&libs, sizeof(need));
	wg_vec_init(&taken, sizeof(need)); /* object NULL: the driver's; else a requirement's */
	char outside[1024] = "";
	size_t noutside = 0;
	int rc = WG_OK;
	const wg_object *o;
	wg_for_each_object_at(cc, o, i) {
		const wg_sysneed *nd;
		size_t n = wg_analysis_sysneeds(cc->an, i, &nd);
		for (size_t k = 0; k < n; k++) {
			size_t j = 0;
			while (j < nall && strcmp(all[j].v.family, nd[k].v.family))
				j++;
			if (j == nall)
				all[nall++] = nd[k];
			else if (wg_ver_cmp(nd[k].v.v, nd[k].v.n, all[j].v.v, all[j].v.n) > 0)
				all[j] = nd[k];
		}
		const char *last = NULL; /* the versions of one library come together */
		wg_need_from vfrom = WG_NEED_SYSTEM;
		for (size_t k = 0; k < o->verneeds.len && rc == WG_OK; k++) {
			const wg_verneed *x = wg_vec_at(&o->verneeds, k);
			const char *why;
			if (x->weak)
				continue;
			if ((!last || strcmp(last, x->file)) &&
			    (rc = wg_check_need_from(cc, i, x->file, &vfrom, &why)) < 0)
				continue;
			last = x->file;
			if (vfrom == WG_NEED_SHIPPED)
				continue; /* the wheel's own library provides its versions */
			need *slot = wg_vec_push(&vers);
			if (!slot)
				rc = WG_ENOMEM;
			else
				*slot = (need){x->version, o->path, vers.len, NULL};
		}
		for (size_t k = 0; k < o->needed.n && rc == WG_OK; k++) {
			const char *lib = o->needed.v[k], *why;
			wg_need_from from;
			if ((rc = wg_check_need_from(cc, i, lib, &from, &why)) < 0 ||
			    from == WG_NEED_SHIPPED || from == WG_NEED_LOADER)
				continue;
			if (from == WG_NEED_DRIVER || from == WG_NEED_REQUIRED) {
				need *slot = wg_vec_push(&taken);
				if (!slot)
					rc = WG_ENOMEM;
				else
					*slot = (need){lib, from == WG_NEED_DRIVER ? NULL : o->path,
						       taken.len, why};
				continue;
			}
			char by[256];
			size_t nby = wg_provided_by(lib, NULL, by, sizeof(by));
			need *slot = wg_vec_push(&libs);
			if (!slot)
				rc = WG_ENOMEM;
			else
				*slot = (need){lib, o->path, libs.len,
					       nby ? wg_check_printf(cc, "%s", by) : NULL};
		}
		if (rc < 0)
			break;
	}
	unique(&vers);
	unique(&libs);
	unique(&taken);
	for (size_t k = 0; k < taken.len; k++) {
		const need *x = wg_vec_at(&taken, k);
		char item[512];
		snprintf(item, sizeof(item), x->object ? "%s (from %s, which it requires)" : "%s (%s)",
			 x->name, x->provided);
		add(outside, sizeof(outside), &noutside, item);
	}
	more(outside, sizeof(outside), noutside);
	wg_vec_free(&taken);
	if (rc < 0) {
		wg_vec_free(&vers);
		wg_vec_free(&libs);
		return rc;
	}
	char needs[256] = "", policy[96] = "", why[2048] = "", list[1024];
	for (size_t j = 0; j < nall; j++) {
		size_t o2 = strlen(needs);
		snprintf(needs + o2, sizeof(needs) - o2, "%s%s", o2 ? ", " : "", all[j].version);
	}
	wg_policy met, below, newest;
	bool any = lowest(arch, &vers, &libs, true, &met, &below, &newest);
	/* and the versions judged that are no numbers (GLIBC_ABI_DT_RELR, CXXABI_TM_1) */
	for (size_t k = 0; newest.index >= 0 && k < vers.len; k++) {
		const need *x = wg_vec_at(&vers, k);
		const char *us = strchr(x->name, '_');
		size_t o2 = strlen(needs);
		if (us && us[1 + strspn(us + 1, "0123456789.")] &&
		    wg_policy_version(&newest, x->name) >= 0 && o2 + strlen(x->name) + 3 < sizeof(needs))
			snprintf(needs + o2, sizeof(needs) - o2, "%s%s", o2 ? ", " : "", x->name);
	}
	if (!needs[0])
		snprintf(needs, sizeof(needs), "no versioned C or C++ runtime symbols");
	if (any) {
		snprintf(policy, sizeof(policy), "%s_%s", met.name, arch);
		if (below.index < 0) {
			snprintf(why, sizeof(why), "the oldest policy for %s", arch);
		} else {
			refused(&below, &vers, &libs, true, list, sizeof(list));
			snprintf(why, sizeof(why), "the lowest policy allowing %s: %s_%s does not", list,
				 below.name, arch);
		}
	} else if (newest.index < 0) {
		snprintf(policy, sizeof(policy), "no manylinux policy");
		snprintf(why, sizeof(why), "auditwheel has none for %s", arch);
	} else {
		snprintf(policy, sizeof(policy), "no manylinux policy");
		/* What even the newest policy refuses. */
		char vlist[1024] = "", llist[1024] = "";
		size_t nv = 0, nl = 0;
		for (size_t k = 0; k < vers.len; k++) {
			const need *x = wg_vec_at(&vers, k);
			if (wg_policy_version(&newest, x->name) == 0)
				add_by(vlist, sizeof(vlist), &nv, x->name, x->object);
		}
		for (size_t k = 0; k < libs.len; k++) {
			const need *x = wg_vec_at(&libs, k);
			char item[512];
			if (wg_policy_library(&newest, x->name) != 0)
				continue;
			snprintf(item, sizeof(item), "%s (by %s%s%s)", x->name, x->object,
				 x->provided ? "; shipped by " : "", x->provided ? x->provided : "");
			add(llist, sizeof(llist), &nl, item);
		}
		more(vlist, sizeof(vlist), nv);
		more(llist, sizeof(llist), nl);
		snprintf(why, sizeof(why), "%s%s%s%s%s%s", nv ? "it needs " : "", vlist,
			 nv ? ", in no policy's symbol versions" : "", nv && nl ? "; " : "",
			 nl ? "it needs from outside the wheel " : "", llist);
		if (nl) {
			size_t o2 = strlen(why);
			snprintf(why + o2, sizeof(why) - o2, ", in no policy's lib_whitelist (a "
				 "distribution that ships one may provide it to a wheel that requires it)");
		}
		wg_policy vmet, vbelow, vnewest;
		size_t o2 = strlen(why);
		if (lowest(arch, &vers, &libs, false, &vmet, &vbelow, &vnewest) && o2 < sizeof(why)) {
			if (vbelow.index >= 0)
				refused(&vbelow, &vers, &libs, false, list, sizeof(list));
			snprintf(why + o2, sizeof(why) - o2, "; on its symbol versions alone it would "
				 "meet %s_%s, %s%s", vmet.name, arch,
				 vbelow.index < 0 ? "the oldest policy for " : "the lowest policy allowing ",
				 vbelow.index < 0 ? arch : list);
		}
	}
	wg_vec_free(&vers);
	wg_vec_free(&libs);
	wg_vars v = {0};
	wg_vars_set(&v, "platform", plat);
	wg_vars_set(&v, "needs", wg_check_printf(cc, "%s", needs));
	wg_vars_set(&v, "outside",
		    outside[0] ? wg_check_printf(cc, ", and from outside the wheel %s", outside) : "");
	wg_vars_set(&v, "policy", wg_check_printf(cc, "%s", policy));
	wg_vars_set(&v, "why", wg_check_printf(cc, "%s", why));
	return wg_emit(cc, &v, NULL, NULL, NULL, 0);
}

static const char *const patterns[] = {"bare_platform", NULL};
static const char *const vars[] = {"platform", "needs", "outside", "policy", "why", NULL};
const wg_check_kind wg_check_tightest_manylinux = {"tightest-manylinux", run, patterns, vars,
	WG_FACT_FILENAME};

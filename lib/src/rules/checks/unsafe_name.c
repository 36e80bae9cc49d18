/*
 * unsafe-name: members that are different files to different installers or systems, though
 * no name leaves the install directory (that is unsafe-member's): symbolic links (pip writes
 * the link's target as a file's text, unzip and bsdtar make the link), names equal but for
 * ASCII case or for what the `names` patterns match ('.' and empty path components, which
 * installers drop: pkg/./a.py is installed as pkg/a.py), and any such name on its own.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules/checks/check.h"

/* The name as an installer writes it: '.' and empty components dropped ("a/./b//c" is
 * "a/b/c"), in the report's arena. */
static char *normalised(wg_check_ctx *cc, const char *name)
{
	char *out = wg_check_printf(cc, "%s", name), *w = out;
	if (!out)
		return NULL;
	for (const char *p = name; *p;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (!(n == 0 || (n == 1 && p[0] == '.'))) {
			if (w != out)
				*w++ = '/';
			memcpy(w, p, n);
			w += n;
		}
		if (!e)
			break;
		p = e + 1;
	}
	*w = '\0';
	return out;
}

typedef struct {
	const char *key; /* normalised */
	const char *name;
} keyed;

static int by_key(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	int c = strcasecmp(x->key, y->key);
	return c ? c : strcmp(x->name, y->name);
}

/* Case and normalisation say nothing of the target's system: in the install profile they
 * are at most warnings (pip on Linux installs both files); publishing, the wheel goes to
 * every system. */
static wg_severity ambiguous_sev(wg_check_ctx *cc)
{
	return cc->profile == WG_PROFILE_INSTALL && cc->severity == WG_SEV_ERROR ? WG_SEV_WARNING
										   : cc->severity;
}

static int emit(wg_check_ctx *cc, wg_severity sev, const char *member, const char *other,
		const char *problem)
{
	wg_vars v = {0};
	wg_vars_set(&v, "member", member);
	wg_vars_set(&v, "other", other ? other : "");
	wg_vars_set(&v, "problem", problem ? problem : "out of memory");
	return wg_emit_sev(cc, sev, &v, member, NULL, NULL, 0);
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	size_t n = s->members.len;
	int rc = WG_OK;
	keyed *k = n ? calloc(n, sizeof(*k)) : NULL;
	if (n && !k)
		return WG_ENOMEM;
	size_t nk = 0;
	for (size_t i = 0; i < n && rc == WG_OK; i++) {
		const wg_member *m = wg_vec_at(&s->members, i);
		if (m->symlink)
			rc = emit(cc, cc->severity, m->name, NULL,
				  wg_check_printf(cc, "%s is a symbolic link: pip installs a file "
						  "holding the link's target as text, unzip and bsdtar "
						  "make the link (a wheel has no symbolic links)",
						  m->name));
		else if (wg_rule_matches(cc, "names", m->name, NULL, 0))
			rc = emit(cc, ambiguous_sev(cc), m->name, NULL,
				  wg_check_printf(cc, "%s has a '.' or empty path component: pip "
						  "installs it as %s, a name the wheel's RECORD does not "
						  "give it", m->name,
						  normalised(cc, m->name)));
		if (rc == WG_OK && !m->is_dir) {
			k[nk].name = m->name;
			if (!(k[nk++].key = normalised(cc, m->name)))
				rc = WG_ENOMEM;
		}
	}
	/* Sorted by the folded, normalised name: a clash is two neighbours equal under it (names
	 * equal byte for byte are duplicates: unsafe-member's). */
	if (rc == WG_OK && nk > 1)
		qsort(k, nk, sizeof(*k), by_key);
	for (size_t i = 1; rc == WG_OK && i < nk; i++) {
		if (strcasecmp(k[i].key, k[i - 1].key) || !strcmp(k[i].name, k[i - 1].name))
			continue;
		bool case_only = strcmp(k[i].key, k[i - 1].key) != 0;
		rc = emit(cc, ambiguous_sev(cc), k[i].name, k[i - 1].name,
			  wg_check_printf(cc, "%s and %s are one file %s: installed, one overwrites "
					  "the other, and RECORD lists two rows for it", k[i - 1].name,
					  k[i].name,
					  case_only ? "on a case-insensitive file system (macOS, Windows)"
						    : "once installed"));
	}
	free(k);
	return rc;
}

static const char *const patterns[] = {"names", NULL};
static const char *const vars[] = {"member", "other", "problem", NULL};
const wg_check_kind wg_check_unsafe_name = {"unsafe-name", run, patterns, vars, 0};

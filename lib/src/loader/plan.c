/*
 * The install plan read: what an active plan (made by install.c) answers for the loader, the
 * paths its wheels install, the files of the distributions it replaces, the torch it leaves,
 * the top-level modules it installs and what it breaks; and the plan freed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "loader/loader.h"

/* ---- paths ---- */

char *wg_install_path(const char *site, wg_arena *a, const char *member)
{
	const char *p = member, *data = strstr(member, ".data/");
	if (data && !memchr(member, '/', (size_t)(data - member))) {
		const char *rest = data + 6;
		if (wg_has_prefix(rest, "purelib/") || wg_has_prefix(rest, "platlib/"))
			p = rest + 8;
	}
	return wg_arena_printf(a, "%s/%s", site, p);
}

/* path with "//", "/./" and "x/.." taken out, as text (no symbolic link is followed). */
static void normalise(char *out, size_t n, const char *path)
{
	size_t len = 0, marks[PATH_MAX / 2], depth = 0;
	if (n == 0)
		return;
	out[0] = '\0';
	const char *s = path;
	bool abs = *s == '/';
	if (abs && n > 1)
		out[len++] = '/';
	while (*s) {
		while (*s == '/')
			s++;
		size_t k = strcspn(s, "/");
		if (k == 0)
			break;
		if (k == 1 && s[0] == '.') {
			/* nothing */
		} else if (k == 2 && s[0] == '.' && s[1] == '.' && depth > 0) {
			len = marks[--depth];
		} else if (len + k + 2 < n && depth < WG_ARRAY_LEN(marks)) {
			marks[depth++] = len;
			if (len && out[len - 1] != '/')
				out[len++] = '/';
			memcpy(out + len, s, k);
			len += k;
		}
		s += k;
	}
	if (len > 1 && out[len - 1] == '/')
		len--;
	out[len] = '\0';
}

/* The plan's key for path: normalised, the site's real path written as the site. */
void wg_plan_key(const wg_plan *p, char *out, size_t n, const char *path)
{
	normalise(out, n, path);
	size_t rl = p->site_real ? strlen(p->site_real) : 0;
	if (rl && !strncmp(out, p->site_real, rl) && out[rl] == '/' && strcmp(p->site, p->site_real)) {
		char tmp[PATH_MAX];
		snprintf(tmp, sizeof(tmp), "%s%s", p->site, out + rl);
		normalise(out, n, tmp);
	}
}

static const wg_plan *active(const wg_env *e)
{
	return e->plan && e->plan->active ? e->plan : NULL;
}

const wg_lib *wg_plan_lookup(const wg_env *e, const char *path)
{
	const wg_plan *p = active(e);
	if (!p || !p->libs.len)
		return NULL;
	char key[PATH_MAX];
	wg_plan_key(p, key, sizeof(key), path);
	size_t i = wg_strmap_get(&p->by_path, key);
	return i == SIZE_MAX ? NULL : ((const plan_lib *)wg_vec_at(&p->libs, i))->lib;
}

bool wg_plan_removes(const wg_env *e, const char *real)
{
	const wg_plan *p = active(e);
	return p && wg_strmap_get(&p->removed, real) != SIZE_MAX;
}

const char *wg_plan_torch_dir(const wg_env *e)
{
	const wg_plan *p = active(e);
	return p && p->torch_dir ? p->torch_dir : e->torch_dir;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void wg_plan_glob(const wg_env *e, wg_arena *a, const char *dir, const char *pattern,
		  wg_strlist *out)
{
	const wg_plan *p = active(e);
	char key[PATH_MAX], real[PATH_MAX];
	if (p)
		wg_plan_key(p, key, sizeof(key), dir);
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || fnmatch(pattern, de->d_name, 0) != 0)
			continue;
		char *f = wg_arena_printf(a, "%s/%s", dir, de->d_name);
		if (!f || (p && realpath(f, real) && wg_strmap_get(&p->removed, real) != SIZE_MAX))
			continue;
		wg_strlist_add(out, a, f);
	}
	if (d)
		closedir(d);
	for (size_t i = 0; p && i < p->libs.len; i++) {
		const plan_lib *l = wg_vec_at(&p->libs, i);
		const char *slash = strrchr(l->path, '/');
		if (!slash || strncmp(l->path, key, (size_t)(slash - l->path)) ||
		    key[slash - l->path] != '\0' || fnmatch(pattern, slash + 1, 0) != 0)
			continue;
		char *f = wg_arena_printf(a, "%s/%s", dir, slash + 1);
		bool dup = false;
		for (size_t k = 0; f && k < out->n && !dup; k++)
			dup = !strcmp(out->v[k], f);
		if (f && !dup)
			wg_strlist_add(out, a, f);
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

void wg_plan_free(wg_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->wheels.len; i++)
		wg_vec_free(&((plan_wheel *)wg_vec_at(&p->wheels, i))->old_libs);
	for (size_t i = 0; i < p->libs.len; i++)
		wg_lib_free(((plan_lib *)wg_vec_at(&p->libs, i))->lib);
	wg_vec_free(&p->wheels);
	wg_vec_free(&p->libs);
	wg_vec_free(&p->breaks);
	wg_strmap_free(&p->by_path);
	wg_strmap_free(&p->removed);
	wg_strmap_free(&p->names);
	wg_strmap_free(&p->tops);
	wg_arena_free(&p->arena);
	free(p);
}

const wg_plan_break *wg_plan_breaks(const wg_env *e, size_t *n)
{
	const wg_plan *p = active(e);
	*n = p ? p->breaks.len : 0;
	return p && p->breaks.len ? p->breaks.items : NULL;
}

bool wg_plan_provides(const wg_env *e, const char *top)
{
	const wg_plan *p = active(e);
	return p && p->tops.cap && wg_strmap_get(&p->tops, top) != SIZE_MAX;
}

bool wg_plan_installs(const wg_env *e, const char *norm)
{
	const wg_plan *p = active(e);
	for (size_t i = 0; p && i < p->wheels.len; i++)
		if (!strcmp(((const plan_wheel *)wg_vec_at(&p->wheels, i))->norm, norm))
			return true;
	return false;
}

bool wg_plan_has(const wg_env *e, const char *scan_path)
{
	const wg_plan *p = active(e);
	for (size_t i = 0; p && i < p->wheels.len; i++)
		if (!strcmp(((plan_wheel *)wg_vec_at(&p->wheels, i))->path, scan_path))
			return true;
	return false;
}

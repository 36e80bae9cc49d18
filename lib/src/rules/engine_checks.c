/*
 * The helpers the check kinds share: the distribution and member files of an input, what
 * faces torch, the loader's records of the input's objects and how severe a load failure is
 * for the way a module is imported.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_RULES /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules/checks/check.h"

/* ---- helpers for the check kinds ---- */

const char *wg_object_member(const wg_scan *scan, const wg_object *o)
{
	(void)scan;
	return o->path;
}

static bool pep_word(const char *s, const char *punct)
{
	size_t n = strlen(s);
	if (!n || n > 200)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr(punct, *s)))
			return false;
	return true;
}

const char *wg_check_distribution(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	const char *n = s->fields[WG_WHEEL_META_NAME], *v = s->fields[WG_WHEEL_META_VERSION];
	if (!n)
		n = s->fields[WG_WHEEL_NAME];
	if (!v)
		v = s->fields[WG_WHEEL_VERSION];
	/* It is text a reader may paste into a shell: only a name and a version as PEP 508 and
	 * PEP 440 spell them, never quotes or spaces from a hostile METADATA. */
	if (!n || !pep_word(n, "._-") || (v && !pep_word(v, "._+!-")))
		return "NAME==VERSION";
	return v ? wg_arena_printf(&cc->report->arena, "%s==%s", n, v) : n;
}

const char *wg_check_member_file(wg_check_ctx *cc, const char *member)
{
	const wg_scan *s = cc->scan;
	if (s->kind != WG_SCAN_INSTALLED)
		return member;
	/* The site directory is the one holding the .dist-info (input/installed.c). */
	size_t n = strlen(s->path);
	while (n > 1 && s->path[n - 1] == '/')
		n--;
	size_t site = n;
	while (site && s->path[site - 1] != '/')
		site--;
	if (!site)
		return member; /* `x-1.0.dist-info`: the site is the current directory */
	site = site > 1 ? site - 1 : 1; /* without its last '/', but "/" stays */
	return wg_arena_printf(&cc->report->arena, "%.*s%s%s", (int)site, s->path,
			       s->path[site - 1] == '/' ? "" : "/", member);
}

/* Whether o needs a copy of torch's libraries of its own rather than the target's: a
 * library of the input named by a DT_NEEDED entry (its SONAME, else its file name) that
 * defines c10/at/torch/caffe2 symbols, as auditwheel repair grafts them renamed
 * (libc10-1a2b3c4d.so); or, outside the input, a library named like one of torch's that the
 * rule's `libraries` do not match, whose symbols cannot be seen. */
static bool needs_own_torch(const wg_scan *scan, const wg_object *o)
{
	for (size_t j = 0; j < o->needed.n; j++) {
		const char *n = o->needed.v[j];
		bool in_input = false;
		for (size_t i = 0; i < scan->objects.len; i++) {
			const wg_object *p = *(wg_object **)wg_vec_at(&scan->objects, i);
			const char *slash = strrchr(p->path, '/');
			if (p == o || p->error ||
			    strcmp(p->soname ? p->soname : slash ? slash + 1 : p->path, n))
				continue;
			in_input = true;
			for (size_t k = 0; k < p->nsyms; k++)
				if (p->syms[k].defined && p->syms[k].torch)
					return true;
		}
		if (!in_input && (wg_has_prefix(n, "libc10") || wg_has_prefix(n, "libtorch")))
			return true;
	}
	return false;
}

bool wg_check_faces_torch(wg_check_ctx *cc, const wg_object *o, const char **lib)
{
	*lib = NULL;
	for (size_t j = 0; j < o->needed.n; j++)
		if (wg_rule_matches(cc, "libraries", o->needed.v[j], NULL, 0)) {
			*lib = o->needed.v[j];
			return true;
		}
	/* No torch library in DT_NEEDED (linked -Wl,--as-needed against a stub, or not at all):
	 * the c10/at/torch/caffe2 symbols it imports still have to come from torch, with its
	 * ABI, unless it brings a copy of its own. */
	bool imports = false;
	for (size_t j = 0; j < o->nsyms && !imports; j++)
		imports = !o->syms[j].defined && o->syms[j].torch;
	return imports && !needs_own_torch(cc->scan, o);
}

const wg_sym *wg_check_abi_import(wg_check_ctx *cc, const wg_object *o, unsigned wrong,
				  unsigned *count)
{
	*count = 0;
	const char *lib;
	if (!wg_check_faces_torch(cc, o, &lib))
		return NULL;
	const wg_sym *first = NULL;
	for (size_t j = 0; j < o->nsyms; j++) {
		const wg_sym *y = &o->syms[j];
		if (!y->defined && y->torch && (y->string_abi & wrong) && (*count)++ == 0)
			first = y;
	}
	return first;
}

int wg_check_need_from(wg_check_ctx *cc, size_t i, const char *soname, wg_need_from *from,
		       const char **why)
{
	*why = NULL;
	*from = WG_NEED_LOADER;
	if (wg_provided_loader(soname))
		return WG_OK;
	bool ships = false;
	int rc = wg_analysis_ships_library(cc->an, i, soname, &ships);
	*from = WG_NEED_SHIPPED;
	if (rc < 0 || ships)
		return rc;
	*from = WG_NEED_DRIVER;
	if ((*why = wg_provided_driver(soname)) != NULL)
		return WG_OK;
	char by[256];
	*from = WG_NEED_REQUIRED;
	/* the requirements as a set built once per input: a lookup per library, however many
	 * requirements (10,000 Requires-Dist lines x 10,000 DT_NEEDED entries stay linear) */
	const wg_strmap *req = wg_analysis_requires(cc->an);
	if (!req)
		return WG_ENOMEM;
	if (wg_provided_by(soname, req, by, sizeof(by))) {
		*why = wg_check_printf(cc, "%s", by);
		return *why ? WG_OK : WG_ENOMEM;
	}
	*from = WG_NEED_SYSTEM;
	return WG_OK;
}

bool wg_object_is_cuda(const wg_object *o)
{
	return o->fatbin_containers.len > 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static bool loadable(const wg_object *o)
{
	return !o->error && o->type && !strcmp(o->type, "dyn");
}

int wg_check_roles(wg_check_ctx *cc)
{
	if (!cc->roles)
		cc->roles = wg_analysis_roles(cc->an);
	return cc->roles ? WG_OK : WG_ENOMEM;
}

wg_severity wg_load_severity(wg_check_ctx *cc, const char *member, const char **why)
{
	*why = "";
	if (wg_check_roles(cc) < 0 || !member)
		return cc->severity;
	const wg_scan *s = cc->scan;
	const wg_role *r = NULL;
	const wg_object *o = NULL;
	for (size_t i = 0; i < s->objects.len && !r; i++) {
		o = *(wg_object **)wg_vec_at(&s->objects, i);
		if (!strcmp(o->path, member))
			r = &cc->roles[i];
	}
	if (!r || r->how == WG_IMPORT_REQUIRED)
		return cc->severity;
	const char *pkg = r->module ? r->module : "";
	/* What the user imports: the outermost package of the module that is a regular package
	 * (has an __init__.py in the wheel); namespace packages (cuda/) are passed over. */
	char top[256];
	snprintf(top, sizeof(top), "%.*s", (int)strcspn(pkg, "."), pkg);
	for (size_t len = strcspn(pkg, "."); pkg[len] == '.'; len += 1 + strcspn(pkg + len + 1, ".")) {
		char init[512];
		snprintf(init, sizeof(init), "%.*s/__init__.py", (int)len, pkg);
		for (char *c = init; *c && c < init + len; c++)
			if (*c == '.')
				*c = '/';
		bool found = false;
		for (size_t k = 0; k < s->sources.len && !found; k++) {
			const wg_source *src = wg_vec_at(&s->sources, k);
			size_t nl = strlen(src->name), il = strlen(init);
			/* "a/__init__.py", or under ".data/purelib/" */
			found = wg_has_suffix(src->name, init) && (nl == il || src->name[nl - il - 1] == '/');
		}
		if (found) {
			snprintf(top, sizeof(top), "%.*s", (int)len, pkg);
			break;
		}
	}
	if (r->how == WG_ROLE_ALONE && r->via)
		*why = wg_check_printf(cc, " (loaded by %s, which nothing in the wheel loads through "
				       "DT_NEEDED: a plugin loaded with ctypes/dlopen or by another "
				       "package; the package imports without them, and only what loads "
				       "them fails)", base_name(r->via));
	else if (r->how == WG_ROLE_ALONE)
		*why = wg_check_printf(cc, " (nothing in the wheel loads %s through DT_NEEDED: a "
				       "plugin loaded with ctypes/dlopen or by another package; the "
				       "package imports without it, and only what loads it fails)",
				       base_name(member));
	else if (r->how == WG_IMPORT_NONE)
		*why = wg_check_printf(cc, " (%s is never imported by the package's own code: `import "
				       "%s` works without it, and only code that imports %s fails)",
				       pkg, top, pkg);
	else
		*why = wg_check_printf(cc, " (optional: %s is %s, at %s:%u: `import %s` works without "
				       "it, and the feature it provides fails when used)", pkg,
				       wg_import_how_name(r->how), r->file ? r->file : "?", r->line, top);
	return WG_SEV_WARNING < cc->severity ? WG_SEV_WARNING : cc->severity;
}

/*
 * Whether the package's import runs `import torch` first (its code imports torch, it requires
 * torch, it links torch's libraries, or it is torch): then its objects load into the state
 * torch leaves; otherwise into the interpreter's alone. Loose objects,
 * with no package to read, are judged as they always were, after `import torch`.
 */
static bool imports_torch(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_scan_is_dist(s))
		return true;
	const char *name = s->fields[WG_WHEEL_NAME];
	if (name && !strcmp(name, "torch"))
		return true;
	/* a requirement without an extra marker (`; extra == ...` ones are optional) */
	const wg_strmap *req = wg_analysis_requires(cc->an);
	if (req && wg_strmap_get(req, "torch") != SIZE_MAX)
		return true;
	/* An extension linked against torch's libraries is a torch extension: used after
	 * `import torch` (without it, the loader cannot even find libc10.so). So is one that
	 * imports torch's symbols without listing its libraries (linked -Wl,--as-needed
	 * against a stub): nothing but torch defines them. */
	for (size_t i = 0; i < s->objects.len; i++) {
		const wg_object *o = *(wg_object **)wg_vec_at(&s->objects, i);
		for (size_t k = 0; !o->error && k < o->needed.n; k++)
			if (wg_has_prefix(o->needed.v[k], "libc10") || wg_has_prefix(o->needed.v[k], "libtorch"))
				return true;
		for (size_t k = 0; !o->error && k < o->nsyms; k++)
			if (!o->syms[k].defined && o->syms[k].torch)
				return true;
	}
	return wg_pyimports_mentions(wg_analysis_imports(cc->an), "torch");
}

int wg_check_ld(wg_check_ctx *cc)
{
	if (cc->ld_done)
		return WG_OK;
	cc->ld_done = true;
	if (!cc->target->env)
		return WG_OK;
	int rc = wg_check_roles(cc);
	bool with_torch = rc == WG_OK && imports_torch(cc);
	/* The records of the input's objects, built once for every load resolved. */
	wg_lib *const *libs = NULL;
	const wg_vec *all = NULL;
	if (rc == WG_OK)
		rc = wg_analysis_libs(cc->an, &libs, &all);
	for (size_t i = 0; i < cc->scan->objects.len && rc == WG_OK; i++) {
		const wg_object *o = *(wg_object **)wg_vec_at(&cc->scan->objects, i);
		/* A library another object of the wheel loads is judged inside that load. */
		if (!loadable(o) || !cc->roles[i].root)
			continue;
		rc = wg_resolve(cc->target->env, cc->scan, o, libs[i], all, &cc->report->arena,
				&cc->ld_issues, &cc->python_assumed, with_torch);
	}
	return rc;
}

wg_severity wg_ld_severity(wg_check_ctx *cc, const char *object, int kind, const char **why)
{
	wg_severity best = WG_SEV_INFO;
	bool any = false;
	*why = "";
	for (size_t i = 0; i < cc->ld_issues.len; i++) {
		const wg_ld_issue *x = wg_vec_at(&cc->ld_issues, i);
		if ((int)x->kind != kind || strcmp(x->object, object))
			continue;
		const char *w;
		wg_severity sv = wg_load_severity(cc, x->root, &w);
		if (!any || sv > best) {
			best = sv;
			*why = w;
			any = true;
		}
	}
	return any ? best : cc->severity;
}

bool wg_ld_seen_before(wg_check_ctx *cc, size_t i, bool version)
{
	const wg_ld_issue *x = wg_vec_at(&cc->ld_issues, i);
	for (size_t k = 0; x && k < i; k++) {
		const wg_ld_issue *y = wg_vec_at(&cc->ld_issues, k);
		if (y->kind == x->kind && y->system == x->system && !strcmp(y->object, x->object) &&
		    !strcmp(y->library, x->library) &&
		    (!version || (y->version && x->version && !strcmp(y->version, x->version))))
			return true;
	}
	return false;
}

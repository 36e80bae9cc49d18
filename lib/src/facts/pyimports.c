/*
 * The wheel's Python import model: what each module imports and under which conditions, what
 * each module binds in its namespace, and what each dotted name is among the wheel's members.
 *
 * Every .py source is read by the tokenizer (pytoken.c) into logical lines, and the lines into
 * statements: compound statements' headers open blocks (by indentation, or inline after the
 * colon), `;` separates simple statements. An import statement is recorded with its context:
 *  - module level, or inside class/with/finally bodies: run when the module is imported;
 *  - inside a def (or `if __name__ == "__main__":`): lazy;
 *  - inside a try: whose handlers catch ImportError (ImportError, ModuleNotFoundError,
 *    Exception, BaseException, a bare except, a tuple with one of them) without re-raising it
 *    at their top level, or `with suppress(ImportError)`: guarded;
 *  - under if/elif/else/for/while/match/case or in an except: handler: conditional;
 *  - under `if TYPE_CHECKING:` (typing.TYPE_CHECKING, `if False:`): never run.
 * What a module binds at module level (def, class, assignment and annotated assignment
 * targets, import names, for/with targets, global declarations, strings in __all__, star
 * imports) decides whether `from M import X` takes an attribute or imports the submodule M.X;
 * dynamic bindings (a module __getattr__, globals()/vars() written, sys.modules assigned,
 * setattr on the module, exec at module level) make the answer unknowable, never "no".
 * Linear in the sources' bytes: each logical line is read once, try: statements look ahead at
 * their handlers' first lines only, nesting is capped as CPython caps it (100 levels).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/pyimports_internal.h"

/* ---- modules from member names ---- */

/* The member path below the install root (.data/purelib|platlib/ taken off), or NULL for
 * what is not installed into site-packages. */
static const char *site_path(const char *member)
{
	const char *data = strstr(member, ".data/");
	if (data && !memchr(member, '/', (size_t)(data - member))) {
		const char *p = data + 6;
		if (wg_has_prefix(p, "purelib/") || wg_has_prefix(p, "platlib/"))
			return p + 8;
		return NULL;
	}
	return member;
}

static int kind_put(wg_pyimports *im, const char *dotted, size_t n, int kind)
{
	char *k = wg_arena_strndup(&im->arena, dotted, n);
	if (!k)
		return WG_ENOMEM;
	size_t at = wg_strmap_get(&im->kinds, k);
	if (at == SIZE_MAX) {
		uint8_t *v = wg_vec_push(&im->kindv);
		if (!v || wg_strmap_put(&im->kinds, k, im->kindv.len - 1) == SIZE_MAX - 1)
			return WG_ENOMEM;
		*v = (uint8_t)kind;
		if (!memchr(k, '.', n) && wg_strlist_add(&im->tops, &im->arena, k) < 0)
			return WG_ENOMEM;
		return WG_OK;
	}
	/* a package beats a module of the same name (a/ and a.py: the package is imported) and
	 * both beat a bare directory */
	uint8_t *v = wg_vec_at(&im->kindv, at);
	if (kind == WG_PYMOD_PACKAGE || (kind == WG_PYMOD_MODULE && *v == WG_PYMOD_NAMESPACE))
		*v = (uint8_t)kind;
	return WG_OK;
}

static int anywhere_put(wg_pyimports *im, const char *name, size_t n)
{
	char *k = wg_arena_strndup(&im->arena, name, n);
	return k && wg_strmap_put(&im->anywhere, k, 0) != SIZE_MAX - 1 ? WG_OK : WG_ENOMEM;
}

/* Every dotted name a member makes importable: its directories (namespace packages until an
 * __init__ says otherwise) and the module its file is. */
static int add_member_kinds(wg_pyimports *im, const char *member)
{
	const char *p = site_path(member);
	if (!p || !*p)
		return WG_OK;
	size_t n = strlen(p);
	while (n && p[n - 1] == '/')
		n--;
	char buf[1024];
	if (n >= sizeof(buf))
		return WG_OK;
	memcpy(buf, p, n);
	buf[n] = '\0';
	/* directories: every component but the last, while each is an identifier */
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '/')
			continue;
		if (!wg_pyi_identifier(buf + start, i - start))
			return WG_OK; /* foo.dist-info/, foo.libs/, __pycache__ below: no module */
		char dotted[1024];
		memcpy(dotted, buf, i);
		for (size_t k = 0; k < i; k++)
			dotted[k] = dotted[k] == '/' ? '.' : dotted[k];
		int rc = kind_put(im, dotted, i, WG_PYMOD_NAMESPACE);
		if (rc == WG_OK)
			rc = anywhere_put(im, buf + start, i - start);
		if (rc < 0)
			return rc;
		start = i + 1;
	}
	const char *file = buf + start;
	size_t stem = strcspn(file, ".");
	if (!file[stem] || !wg_pyi_identifier(file, stem))
		return WG_OK; /* a directory entry, or no module name */
	const char *ext = file + stem;
	bool module = !strcmp(ext, ".py") || !strcmp(ext, ".pyc") || wg_has_suffix(ext, ".so") ||
		      !strcmp(ext, ".pyd") || !strcmp(ext, ".pyw");
	if (!module)
		return WG_OK;
	char dotted[1024];
	memcpy(dotted, buf, start);
	for (size_t k = 0; k < start; k++)
		dotted[k] = dotted[k] == '/' ? '.' : dotted[k];
	if (stem == 8 && !memcmp(file, "__init__", 8)) {
		if (!start)
			return WG_OK; /* a top-level __init__.py: no package */
		int rc = kind_put(im, dotted, start - 1, WG_PYMOD_PACKAGE);
		if (rc < 0)
			return rc;
		/* `import pkg.__init__` finds the file too (and runs it a second time) */
	}
	memcpy(dotted + start, file, stem);
	int rc = anywhere_put(im, file, stem);
	return rc < 0 ? rc : kind_put(im, dotted, start + stem, WG_PYMOD_MODULE);
}

/* The view of edge k. */
void wg_pyi_edge_view(const wg_pyimports *im, size_t k, wg_pyedge *out)
{
	const pyedge *e = wg_vec_at(&im->edges, k);
	const pymod *m = wg_vec_at(&im->mods, e->mod);
	*out = (wg_pyedge){m->name, e->target, e->name, m->file, e->bits >> 5,
			   (uint8_t)(e->bits >> 2 & 7), (uint8_t)(e->bits & 3)};
}

/* The importing module of edge k. */
const char *wg_pyi_edge_from(const wg_pyimports *im, size_t k)
{
	const pyedge *e = wg_vec_at(&im->edges, k);
	return ((const pymod *)wg_vec_at(&im->mods, e->mod))->name;
}

/* ---- building ---- */

/* The modules whose binds a star import brings in, each read again (once) for them; what
 * they star-import in turn too. Each source is read at most twice. */
static int read_star_binds(wg_pyimports *im)
{
	int rc = WG_OK;
	/* mods only grows in scan_source: indices stay; the loop takes new stars as it goes */
	wg_vec queue;
	wg_vec_init(&queue, sizeof(size_t));
	for (size_t i = 0; i < im->mods.len && rc == WG_OK; i++) {
		const pymod *m = wg_vec_at(&im->mods, i);
		if (!m->binds_read)
			continue;
		size_t *q = wg_vec_push(&queue);
		if (!q)
			rc = WG_ENOMEM;
		else
			*q = i;
	}
	for (size_t qi = 0; qi < queue.len && rc == WG_OK; qi++) {
		const pymod *m = wg_vec_at(&im->mods, *(size_t *)wg_vec_at(&queue, qi));
		for (size_t k = 0; k < m->stars.len && rc == WG_OK; k++) {
			const star_import *st = wg_vec_at(&m->stars, k);
			size_t t = wg_strmap_get(&im->mod_by_name, st->module);
			if (t == SIZE_MAX)
				continue;
			pymod *tm = wg_vec_at(&im->mods, t);
			if (tm->binds_read)
				continue;
			rc = wg_pyi_read_source(im, tm, true, true);
			size_t *q = rc == WG_OK ? wg_vec_push(&queue) : NULL;
			if (rc == WG_OK && !q)
				rc = WG_ENOMEM;
			else if (q)
				*q = t;
			m = wg_vec_at(&im->mods, *(size_t *)wg_vec_at(&queue, qi));
		}
	}
	wg_vec_free(&queue);
	return rc;
}

static _Thread_local const wg_pyimports *sort_im;

static int cmp_by_from(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(wg_pyi_edge_from(sort_im, x), wg_pyi_edge_from(sort_im, y));
	return c ? c : (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int wg_pyimports_build(wg_pyimports **out, const wg_scan *scan)
{
	*out = NULL;
	wg_pyimports *im = calloc(1, sizeof(*im));
	if (!im)
		return WG_ENOMEM;
	wg_vec_init(&im->edges, sizeof(pyedge));
	wg_vec_init(&im->mods, sizeof(pymod));
	wg_vec_init(&im->kindv, sizeof(uint8_t));
	int rc = WG_OK;
	if (!wg_strmap_init(&im->mod_by_name, scan->sources.len + 1) ||
	    !wg_strmap_init(&im->kinds, scan->members.len + 1) ||
	    !wg_strmap_init(&im->anywhere, scan->members.len + 1))
		rc = WG_ENOMEM;
	im->partial = scan->python_partial != NULL;
	for (size_t i = 0; i < scan->members.len && rc == WG_OK; i++) {
		const wg_member *mem = wg_vec_at(&scan->members, i);
		rc = add_member_kinds(im, mem->name);
	}
	/* the sources' own names: an editable install's sources are read from where its
	 * finder points, not from members */
	for (size_t i = 0; i < scan->sources.len && rc == WG_OK; i++)
		rc = add_member_kinds(im, ((const wg_source *)wg_vec_at(&scan->sources, i))->name);
	/* extension modules found among loose objects and wheels alike */
	for (size_t i = 0; i < scan->objects.len && rc == WG_OK; i++) {
		const wg_object *o = *(wg_object **)wg_vec_at(&scan->objects, i);
		if (o->module)
			rc = kind_put(im, o->module, strlen(o->module), WG_PYMOD_MODULE);
	}
	for (size_t i = 0; i < scan->sources.len && rc == WG_OK; i++)
		rc = wg_pyi_scan_source(im, wg_vec_at(&scan->sources, i));
	if (rc == WG_OK)
		rc = read_star_binds(im);
	if (rc == WG_OK && !(im->by_from = malloc((im->edges.len ? im->edges.len : 1) *
						 sizeof(*im->by_from))))
		rc = WG_ENOMEM;
	if (rc < 0) {
		wg_pyimports_free(im);
		return rc;
	}
	for (size_t k = 0; k < im->edges.len; k++)
		im->by_from[k] = (uint32_t)k;
	sort_im = im;
	qsort(im->by_from, im->edges.len, sizeof(*im->by_from), cmp_by_from);
	sort_im = NULL;
	if (im->tops.n)
		qsort(im->tops.v, im->tops.n, sizeof(*im->tops.v), cmp_str);
	*out = im;
	return WG_OK;
}

void wg_pyimports_free(wg_pyimports *im)
{
	if (!im)
		return;
	for (size_t i = 0; i < im->mods.len; i++) {
		pymod *m = wg_vec_at(&im->mods, i);
		wg_strmap_free(&m->binds);
		wg_strmap_free(&m->strings);
		wg_vec_free(&m->stars);
	}
	wg_vec_free(&im->mods);
	wg_strmap_free(&im->mod_by_name);
	wg_strmap_free(&im->kinds);
	wg_strmap_free(&im->anywhere);
	wg_vec_free(&im->kindv);
	wg_strmap_free(&im->reached);
	wg_strlist_free(&im->tops);
	wg_vec_free(&im->edges);
	free(im->by_from);
	wg_arena_free(&im->arena);
	free(im);
}

/* ---- queries ---- */

size_t wg_pyimports_count(const wg_pyimports *im)
{
	return im ? im->edges.len : 0;
}

bool wg_pyimports_edge(const wg_pyimports *im, size_t i, wg_pyedge *out)
{
	if (!im || i >= im->edges.len)
		return false;
	wg_pyi_edge_view(im, i, out);
	return true;
}

int wg_pyimports_kind(const wg_pyimports *im, const char *module)
{
	size_t v = im ? wg_strmap_get(&im->kinds, module) : SIZE_MAX;
	return v == SIZE_MAX ? WG_PYMOD_NONE : *(uint8_t *)wg_vec_at(&im->kindv, v);
}

const wg_strlist *wg_pyimports_tops(const wg_pyimports *im)
{
	return &im->tops;
}

static const pymod *mod_of(const wg_pyimports *im, const char *module)
{
	size_t v = wg_strmap_get(&im->mod_by_name, module);
	return v == SIZE_MAX ? NULL : wg_vec_at(&im->mods, v);
}

const char *wg_pyimports_file(const wg_pyimports *im, const char *module)
{
	const pymod *m = im ? mod_of(im, module) : NULL;
	return m ? m->file : NULL;
}

static int binds_at(const wg_pyimports *im, const char *module, const char *name,
		    unsigned before_line, int depth)
{
	const pymod *m = mod_of(im, module);
	if (!m || !m->binds_read)
		return -1; /* no source read (a .pyc, an extension, past the limits) */
	if (m->dyn_line && (!before_line || m->dyn_line < before_line))
		return -1;
	/* a def __getattr__ that raises AttributeError and names no string like `name`, and
	 * imports or forwards nothing, does not answer for it (flask's, for deprecated names) */
	if (m->getattr_line && (!before_line || m->getattr_line < before_line) &&
	    (m->getattr_forwards || !m->getattr_raises || wg_strmap_get(&m->strings, name) != SIZE_MAX))
		return -1;
	size_t line = wg_strmap_get(&m->binds, name);
	if (line != SIZE_MAX && (!before_line || line < before_line))
		return 1;
	int unknown = 0;
	for (size_t i = 0; i < m->stars.len; i++) {
		const star_import *s = wg_vec_at(&m->stars, i);
		if (before_line && s->line >= before_line)
			continue;
		if (depth >= MAX_STAR_DEPTH || !strcmp(s->module, module)) {
			unknown = 1;
			continue;
		}
		/* a star import of a submodule of the wheel binds what that binds; of anything
		 * else, who knows */
		int k = wg_pyimports_kind(im, s->module);
		if (k == WG_PYMOD_NONE) {
			unknown = 1;
			continue;
		}
		int b = binds_at(im, s->module, name, 0, depth + 1);
		if (b == 1)
			return 1;
		if (b < 0)
			unknown = 1;
	}
	return unknown ? -1 : 0;
}

int wg_pyimports_binds(const wg_pyimports *im, const char *module, const char *name,
		       unsigned before_line)
{
	if (!im || im->partial)
		return -1;
	return binds_at(im, module, name, before_line, 0);
}

int wg_pyimports_roots(const wg_pyimports *im, wg_arena *a, wg_strlist *out)
{
	for (size_t i = 0; im && i < im->kinds.cap; i++) {
		const char *k = im->kinds.keys[i];
		if (!k)
			continue;
		int kind = *(uint8_t *)wg_vec_at(&im->kindv, im->kinds.vals[i]);
		if (kind != WG_PYMOD_PACKAGE && kind != WG_PYMOD_MODULE)
			continue;
		/* the first regular package or module on its path: every package above it is a
		 * namespace (cuda.core below cuda/) */
		char buf[1024];
		snprintf(buf, sizeof(buf), "%s", k);
		bool first = true;
		for (char *d = strrchr(buf, '.'); d && first; d = strrchr(buf, '.')) {
			*d = '\0';
			first = wg_pyimports_kind(im, buf) == WG_PYMOD_NAMESPACE;
		}
		if (first && wg_strlist_add(out, a, k) < 0)
			return WG_ENOMEM;
	}
	return WG_OK;
}

bool wg_pyimports_syspath(const wg_pyimports *im)
{
	return !im || im->syspath;
}

bool wg_pyimports_anywhere(const wg_pyimports *im, const char *name)
{
	return im && wg_strmap_get(&im->anywhere, name) != SIZE_MAX;
}

bool wg_pyimports_open_package(const wg_pyimports *im, const char *module)
{
	if (!im || im->hooks)
		return true;
	const pymod *m = mod_of(im, module);
	return m && m->open_path;
}

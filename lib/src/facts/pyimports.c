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

#include "facts/facts.h"

#define MAX_NEST 100  /* CPython's MAXINDENT */
#define MAX_STAR_DEPTH 16

typedef struct {
	const char *name, *file;
	bool init;          /* a package's __init__ */
	bool examined;      /* its source was read */
	wg_strmap binds;    /* name -> first line bound (keys in the arena) */
	wg_vec stars;       /* star_import */
	unsigned dyn_line;  /* first line of a dynamic binding, 0 none */
	/* a module-level def __getattr__: its line, whether it raises AttributeError, whether
	 * it may answer for any name (imports, getattr() on another object, globals()) */
	unsigned getattr_line;
	bool getattr_raises, getattr_forwards;
	const char *getattr_param; /* its parameter's name */
	wg_strmap strings;  /* the module's plain string literals (names __getattr__ may know) */
	bool open_path;     /* __path__ changed or sys.modules written */
	/* binds and strings are read for what binds_at asks about: a package's __init__ and
	 * the modules star imports bring in (read again after every source's edges are) */
	bool binds_read;
	const wg_source *src;
	const char *pkg;    /* the package relative imports start from */
} pymod;

typedef struct {
	const char *module; /* absolute */
	unsigned line;
} star_import;

/* An edge as kept: 24 bytes, a million of them in a file of a million imported names (the
 * view, wg_pyedge, is made when asked for). */
typedef struct {
	const char *target, *name;
	uint32_t mod;       /* index in mods */
	uint32_t bits;      /* line << 5 | ctx << 2 | kind */
} pyedge;

#define EDGE_LINE_MAX ((1u << 27) - 1)
#define MAX_EDGES UINT32_MAX

struct wg_pyimports {
	wg_arena arena;
	wg_vec edges;       /* pyedge */
	uint32_t *by_from;  /* edge indices ordered by importing module, then position */
	bool partial;       /* the scan kept part of the sources (WG-WHL-003): unseen imports may exist */
	bool hooks;         /* some module installs an import hook (sys.meta_path, sys.path_hooks) */
	bool syspath;       /* some module changes sys.path (or site.addsitedir) */
	wg_strmap anywhere; /* every directory and module name of the members, at any depth */
	wg_vec mods;        /* pymod, one per source read */
	wg_strmap mod_by_name;
	wg_strmap kinds;    /* dotted name -> index in kindv */
	wg_vec kindv;       /* uint8_t: WG_PYMOD_* */
	wg_strlist tops;
	wg_strmap reached;  /* after wg_pyimports_reach */
	bool reach_done;
};

/* ---- modules from member names ---- */

char *wg_py_module_of(wg_arena *a, const char *member, bool *is_init)
{
	const char *p = member, *data = strstr(p, ".data/");
	*is_init = false;
	if (data && !memchr(p, '/', (size_t)(data - p))) {
		p = data + 6;
		if (wg_has_prefix(p, "purelib/") || wg_has_prefix(p, "platlib/"))
			p += 8;
		else
			return NULL;
	}
	size_t n = strlen(p);
	if (wg_has_suffix(p, "/__init__.py")) {
		n -= 12;
		*is_init = true;
	} else if (wg_has_suffix(p, ".py")) {
		n -= 3;
	} else {
		return NULL;
	}
	char *m = wg_arena_strndup(a, p, n);
	for (char *q = m; q && *q; q++)
		if (*q == '/')
			*q = '.';
	return m;
}

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

static bool identifier(const char *s, size_t n)
{
	if (!n || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || (unsigned char)s[i] >= 0x80))
			return false;
	return true;
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
		if (!identifier(buf + start, i - start))
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
	if (!file[stem] || !identifier(file, stem))
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

/* The absolute module of `from .x import`: dots climb from the file's package. */
char *wg_py_resolve_from(wg_arena *a, const char *pkg, const char *m, size_t ml)
{
	size_t dots = 0;
	while (dots < ml && m[dots] == '.')
		dots++;
	if (!dots)
		return wg_arena_strndup(a, m, ml);
	char *b = wg_arena_strdup(a, pkg ? pkg : "");
	for (size_t d = 1; d < dots && b && *b; d++) {
		char *dot = strrchr(b, '.');
		if (dot)
			*dot = '\0';
		else if (d + 1 < dots || ml > dots)
			return wg_arena_strdup(a, ""); /* beyond the top-level package */
		else
			b[0] = '\0';
	}
	if (!b)
		return NULL;
	if (!*b && dots > 1)
		return b;
	if (ml == dots)
		return b;
	return *b ? wg_arena_printf(a, "%s.%.*s", b, (int)(ml - dots), m + dots)
		  : wg_arena_strndup(a, m + dots, ml - dots);
}

/* ---- statements ---- */

typedef struct {
	wg_pyimports *im;
	pymod *mod;
	const char *pkg;    /* the package relative imports start from */
	const wg_pysrc *src;
	int rc;
	uint32_t mod_idx;   /* mod's index in im->mods */
	bool binds;         /* record what the module binds (and its strings) */
	bool again;         /* a second reading for binds only: no edges, no star imports */
} reader;

static const wg_pytok *tok(const reader *r, size_t i)
{
	return wg_vec_at(&r->src->toks, i);
}

static bool is_name(const wg_pytok *t, const char *w)
{
	size_t n = strlen(w);
	return t->kind == WG_PYT_NAME && t->len == n && !memcmp(t->s, w, n);
}

static bool is_op(const wg_pytok *t, const char *w)
{
	size_t n = strlen(w);
	return t->kind == WG_PYT_OP && t->len == n && !memcmp(t->s, w, n);
}

static bool is_open(const wg_pytok *t)
{
	return t->kind == WG_PYT_OP && t->len == 1 && strchr("([{", t->s[0]);
}

static bool is_close(const wg_pytok *t)
{
	return t->kind == WG_PYT_OP && t->len == 1 && strchr(")]}", t->s[0]);
}

/* k: a string that lives as long as the model (the arena's) */
static void bind_str(reader *r, const char *k, unsigned line)
{
	if (r->rc < 0 || !r->binds || !*k)
		return;
	if (wg_strmap_put(&r->mod->binds, k, line) == SIZE_MAX - 1)
		r->rc = WG_ENOMEM;
}

static void bind(reader *r, const char *s, size_t n, unsigned line)
{
	if (r->rc < 0 || !n || !r->binds)
		return;
	char *k = wg_arena_strndup(&r->im->arena, s, n);
	if (!k)
		r->rc = WG_ENOMEM;
	else
		bind_str(r, k, line);
}

static void edge(reader *r, int kind, const char *target, const char *name, unsigned line, int ctx)
{
	if (r->rc < 0 || r->again)
		return;
	if (r->im->edges.len >= MAX_EDGES) {
		r->rc = WG_ELIMIT;
		return;
	}
	pyedge *e = wg_vec_push(&r->im->edges);
	if (!e) {
		r->rc = WG_ENOMEM;
		return;
	}
	e->mod = r->mod_idx;
	e->target = target;
	e->name = name;
	/* past 2^27 lines (the scan keeps far fewer: max_python_lines), the last line */
	e->bits = (line > EDGE_LINE_MAX ? EDGE_LINE_MAX : line) << 5 | (uint32_t)ctx << 2 |
		  (uint32_t)kind;
}

/* The view of edge k. */
static void edge_view(const wg_pyimports *im, size_t k, wg_pyedge *out)
{
	const pyedge *e = wg_vec_at(&im->edges, k);
	const pymod *m = wg_vec_at(&im->mods, e->mod);
	*out = (wg_pyedge){m->name, e->target, e->name, m->file, e->bits >> 5,
			   (uint8_t)(e->bits >> 2 & 7), (uint8_t)(e->bits & 3)};
}

/* The importing module of edge k. */
static const char *edge_from(const wg_pyimports *im, size_t k)
{
	const pyedge *e = wg_vec_at(&im->edges, k);
	return ((const pymod *)wg_vec_at(&im->mods, e->mod))->name;
}

/* A dotted name at toks[*i] (NAME ( . NAME )*), into the arena; NULL when none. */
static char *dotted_name(reader *r, size_t *i, size_t end)
{
	size_t start = *i;
	if (start >= end || tok(r, start)->kind != WG_PYT_NAME)
		return NULL;
	wg_buf b = {0};
	size_t k = start;
	for (;;) {
		const wg_pytok *t = tok(r, k);
		if (wg_buf_append(&b, t->s, t->len) < 0)
			break;
		k++;
		if (k + 1 < end && is_op(tok(r, k), ".") && tok(r, k + 1)->kind == WG_PYT_NAME) {
			if (wg_buf_append(&b, ".", 1) < 0)
				break;
			k++;
			continue;
		}
		break;
	}
	*i = k;
	char *out = b.s ? wg_arena_strndup(&r->im->arena, b.s, b.len) : NULL;
	wg_buf_free(&b);
	if (!out)
		r->rc = WG_ENOMEM;
	return out;
}

/* `import a.b.c [as x], d` in toks[i, end) (i after `import`). */
static void stmt_import(reader *r, size_t i, size_t end, int ctx, bool module_scope)
{
	while (i < end && r->rc == WG_OK) {
		unsigned line = tok(r, i)->line;
		char *name = dotted_name(r, &i, end);
		if (!name)
			return;
		edge(r, WG_PYEDGE_IMPORT, name, NULL, line, ctx);
		if (i + 1 < end && is_name(tok(r, i), "as")) {
			if (module_scope)
				bind(r, tok(r, i + 1)->s, tok(r, i + 1)->len, line);
			i += 2;
		} else if (module_scope && !strchr(name, '.')) {
			bind_str(r, name, line);
		} else if (module_scope) {
			bind(r, name, strcspn(name, "."), line);
		}
		if (i < end && is_op(tok(r, i), ","))
			i++;
		else
			return;
	}
}

/* `from .m import a as b, (c, d)` / `from m import *` in toks[i, end) (i after `from`). */
static void stmt_from(reader *r, size_t i, size_t end, int ctx, bool module_scope)
{
	unsigned line = tok(r, i < end ? i : i - 1)->line;
	size_t dots = 0;
	while (i < end && tok(r, i)->kind == WG_PYT_OP &&
	       (is_op(tok(r, i), ".") || is_op(tok(r, i), "..."))) {
		dots += tok(r, i)->len;
		i++;
	}
	char *rel = NULL;
	if (i < end && tok(r, i)->kind == WG_PYT_NAME && !is_name(tok(r, i), "import"))
		rel = dotted_name(r, &i, end);
	if (r->rc < 0 || i >= end || !is_name(tok(r, i), "import"))
		return;
	i++;
	char *spec = wg_arena_printf(&r->im->arena, "%.*s%s", (int)dots, "....................................................................................................", rel ? rel : "");
	if (!spec || dots > 100) {
		if (!spec)
			r->rc = WG_ENOMEM;
		return;
	}
	if (dots && !*r->pkg && !strchr(r->mod->name, '.') && !r->mod->init)
		return; /* a relative import in a top-level module: no package to start from */
	char *base = wg_py_resolve_from(&r->im->arena, r->pkg, spec, strlen(spec));
	if (!base) {
		r->rc = WG_ENOMEM;
		return;
	}
	if (!*base)
		return; /* beyond the top-level package */
	if (i < end && is_op(tok(r, i), "*")) {
		edge(r, WG_PYEDGE_STAR, base, NULL, line, ctx);
		if (module_scope && !r->again) {
			star_import *s = wg_vec_push(&r->mod->stars);
			if (!s)
				r->rc = WG_ENOMEM;
			else
				*s = (star_import){base, line};
		}
		return;
	}
	bool any = false;
	while (i < end && r->rc == WG_OK) {
		const wg_pytok *t = tok(r, i);
		if (is_op(t, "(") || is_op(t, ")") || is_op(t, ",")) {
			i++;
			continue;
		}
		if (t->kind != WG_PYT_NAME)
			break;
		char *name = wg_arena_strndup(&r->im->arena, t->s, t->len);
		if (!name) {
			r->rc = WG_ENOMEM;
			return;
		}
		any = true;
		edge(r, WG_PYEDGE_FROM, base, name, t->line, ctx);
		i++;
		if (i + 1 < end && is_name(tok(r, i), "as")) {
			if (module_scope)
				bind(r, tok(r, i + 1)->s, tok(r, i + 1)->len, t->line);
			i += 2;
		} else if (module_scope) {
			bind_str(r, name, t->line);
		}
	}
	if (!any)
		edge(r, WG_PYEDGE_FROM, base, NULL, line, ctx);
}

/* The names an assignment target binds: plain names, also inside (), [] and after `*`;
 * not attributes (a.b), subscripts (a[0]) or calls. */
static void bind_targets(reader *r, size_t i, size_t end)
{
	for (size_t k = i; k < end; k++) {
		const wg_pytok *t = tok(r, k);
		if (t->kind != WG_PYT_NAME)
			continue;
		bool after_dot = k > i && is_op(tok(r, k - 1), ".");
		bool before = k + 1 < end && (is_op(tok(r, k + 1), ".") || is_op(tok(r, k + 1), "(") ||
					      is_op(tok(r, k + 1), "["));
		if (!after_dot && !before)
			bind(r, t->s, t->len, t->line);
	}
}

/* The text of a plain string literal token (no prefix but u, no escapes), or NULL. */
static char *string_value(reader *r, const wg_pytok *t)
{
	const char *s = t->s;
	size_t n = t->len;
	if (n && (*s == 'u' || *s == 'U')) {
		s++;
		n--;
	}
	if (n < 2 || (s[0] != '\'' && s[0] != '"') || s[n - 1] != s[0])
		return NULL;
	size_t q = n >= 6 && s[1] == s[0] && s[2] == s[0] ? 3 : 1;
	if (n < 2 * q || memchr(s + q, '\\', n - 2 * q))
		return NULL;
	return wg_arena_strndup(&r->im->arena, s + q, n - 2 * q);
}

/* Marks what makes a module's namespace or its package path unknowable. */
static void dynamic_marks(reader *r, size_t i, size_t end, bool module_scope, bool def_scope)
{
	pymod *m = r->mod;
	for (size_t k = i; k < end; k++) {
		const wg_pytok *t = tok(r, k);
		if (t->kind != WG_PYT_NAME)
			continue;
		bool call = k + 1 < end && is_op(tok(r, k + 1), "(");
		bool attr = k > i && is_op(tok(r, k - 1), ".");
		unsigned line = t->line;
		if (!attr && call && (is_name(t, "globals") || is_name(t, "vars") ||
				      (is_name(t, "locals") && module_scope))) {
			/* globals()[...] = / globals().update(...): written, not only read */
			size_t c = k + 2;
			if (c < end && is_op(tok(r, c), ")") && c + 1 < end &&
			    (is_op(tok(r, c + 1), "[") || is_op(tok(r, c + 1), "."))) {
				if (!m->dyn_line || line < m->dyn_line)
					m->dyn_line = line;
				/* globals().update(mod.__dict__) may bring another __path__ too
				 * (cuda-core takes its cu13/ package's) */
				m->open_path = true;
			}
		} else if (!attr && call && is_name(t, "exec") && !def_scope) {
			if (!m->dyn_line || line < m->dyn_line)
				m->dyn_line = line;
		} else if (!attr && call && is_name(t, "setattr")) {
			/* setattr(sys.modules[__name__], ...): the module's own namespace */
			int depth = 0;
			for (size_t c = k + 1; c < end; c++) {
				const wg_pytok *u = tok(r, c);
				if (is_open(u))
					depth++;
				else if (is_close(u) && --depth <= 0)
					break;
				else if (depth == 1 && is_op(u, ","))
					break;
				else if (is_name(u, "modules") || is_name(u, "__name__")) {
					if (!m->dyn_line || line < m->dyn_line)
						m->dyn_line = line;
					break;
				}
			}
		} else if (attr && is_name(t, "path") && k >= 2 && is_name(tok(r, k - 2), "sys") &&
			   k + 1 < end && !is_op(tok(r, k + 1), ")") && !is_op(tok(r, k + 1), ",") &&
			   !is_op(tok(r, k + 1), ":")) {
			/* sys.path.insert / append / extend, sys.path = / += / [...] =: top-level
			 * modules may be found anywhere (setuptools puts its _vendor/ there) */
			const wg_pytok *u = tok(r, k + 1);
			if (!is_op(u, ".") || (k + 2 < end && (is_name(tok(r, k + 2), "insert") ||
							       is_name(tok(r, k + 2), "append") ||
							       is_name(tok(r, k + 2), "extend") ||
							       is_name(tok(r, k + 2), "__setitem__"))))
				r->im->syspath = true;
		} else if (!attr && call && is_name(t, "addsitedir")) {
			r->im->syspath = true;
		} else if (attr && k + 2 < end && is_name(t, "addsitedir")) {
			r->im->syspath = true;
		} else if (attr && is_name(t, "modules")) {
			/* sys.modules[...] = x, sys.modules.update / setdefault: modules made up */
			bool written = false;
			if (k + 1 < end && is_op(tok(r, k + 1), ".") && k + 2 < end &&
			    (is_name(tok(r, k + 2), "update") || is_name(tok(r, k + 2), "setdefault") ||
			     is_name(tok(r, k + 2), "__setitem__")))
				written = true;
			for (size_t c = k + 1; c < end && !written; c++)
				if (is_op(tok(r, c), "=") && tok(r, c)->len == 1)
					written = true;
			if (written) {
				m->open_path = true;
				if (!m->dyn_line || line < m->dyn_line)
					m->dyn_line = line;
				/* sys.modules[__name__] = x replaces this module; any other key may make
				 * up a module anywhere (cuda-core's cu13/ answers for cuda.core._context) */
				bool self = k + 4 < end && is_op(tok(r, k + 1), "[") &&
					    is_name(tok(r, k + 2), "__name__") && is_op(tok(r, k + 3), "]");
				if (!self)
					r->im->hooks = true;
			}
		} else if (attr && (is_name(t, "meta_path") || is_name(t, "path_hooks"))) {
			/* an editable install's finder maps the project's own names to the sources
			 * read with it; any other hook may answer for anything */
			if (!wg_has_prefix(m->name, "__editable__"))
				r->im->hooks = true;
		} else if (is_name(t, "__path__") && !attr) {
			/* __path__ = ..., __path__.append(...), __path__[:] = ..., extend_path(__path__,
			 * ...): a package that names its own path may well change it */
			m->open_path = true;
		} else if (is_name(t, "__getattr__") && module_scope && !attr &&
			   !(k > i && is_name(tok(r, k - 1), "def"))) {
			/* __getattr__ = lazy.attach(...): any name may answer */
			if (!m->dyn_line || line < m->dyn_line)
				m->dyn_line = line;
		}
	}
}

/* A simple statement toks[i, end). */
static void simple_stmt(reader *r, size_t i, size_t end, int ctx, bool module_scope, bool def_scope)
{
	if (i >= end)
		return;
	const wg_pytok *t = tok(r, i);
	if (is_name(t, "import")) {
		stmt_import(r, i + 1, end, ctx, module_scope);
		return;
	}
	if (is_name(t, "from") && i + 1 < end && !is_op(tok(r, i + 1), "=")) {
		stmt_from(r, i + 1, end, ctx, module_scope);
		return;
	}
	dynamic_marks(r, i, end, module_scope, def_scope);
	if (is_name(t, "global")) {
		for (size_t k = i + 1; k < end; k++)
			if (tok(r, k)->kind == WG_PYT_NAME)
				bind(r, tok(r, k)->s, tok(r, k)->len, tok(r, k)->line);
		return;
	}
	if (!module_scope)
		return;
	/* __all__ = [...], __all__ += [...], __all__.extend([...]) / .append("x") */
	if (is_name(t, "__all__")) {
		for (size_t k = i + 1; k < end; k++)
			if (tok(r, k)->kind == WG_PYT_STRING) {
				char *v = string_value(r, tok(r, k));
				if (v)
					bind(r, v, strlen(v), tok(r, k)->line);
			}
	}
	/* assignment targets: everything before each `=` (a = b = c), `:=` names, and the
	 * annotated `x: T = v` */
	int depth = 0;
	size_t seg = i;
	for (size_t k = i; k < end; k++) {
		const wg_pytok *u = tok(r, k);
		if (is_open(u))
			depth++;
		else if (is_close(u) && depth)
			depth--;
		else if (depth == 0 && is_op(u, "=")) {
			bind_targets(r, seg, k);
			seg = k + 1;
		} else if (is_op(u, ":=") && k > i && tok(r, k - 1)->kind == WG_PYT_NAME) {
			bind(r, tok(r, k - 1)->s, tok(r, k - 1)->len, u->line);
		} else if (depth == 0 && is_op(u, ":") && k == i + 1 && t->kind == WG_PYT_NAME) {
			bind(r, t->s, t->len, t->line); /* x: int = 3 (x: int alone binds nothing,
							 * but a type checker's name is a name) */
		}
	}
}

/* Splits toks[i, end) at `;` (bracket depth 0) into simple statements. */
static void simple_stmts(reader *r, size_t i, size_t end, int ctx, bool module_scope, bool def_scope)
{
	int depth = 0;
	size_t s = i;
	for (size_t k = i; k < end && r->rc == WG_OK; k++) {
		const wg_pytok *t = tok(r, k);
		if (is_open(t))
			depth++;
		else if (is_close(t) && depth)
			depth--;
		else if (depth == 0 && is_op(t, ";")) {
			simple_stmt(r, s, k, ctx, module_scope, def_scope);
			s = k + 1;
		}
	}
	simple_stmt(r, s, end, ctx, module_scope, def_scope);
}

enum { HDR_NONE, HDR_DEF, HDR_CLASS, HDR_IF, HDR_ELIF, HDR_ELSE, HDR_LOOP, HDR_WITH, HDR_TRY,
       HDR_EXCEPT, HDR_FINALLY, HDR_MATCH };

/* The compound statement toks[i, end) opens, and its header's colon (*colon). */
static int header_of(reader *r, size_t i, size_t end, size_t *colon)
{
	const wg_pytok *t = tok(r, i);
	size_t k = i;
	if (is_name(t, "async") && i + 1 < end)
		t = tok(r, ++k);
	int h = HDR_NONE;
	if (is_name(t, "def"))
		h = HDR_DEF;
	else if (is_name(t, "class"))
		h = HDR_CLASS;
	else if (is_name(t, "if"))
		h = HDR_IF;
	else if (is_name(t, "elif"))
		h = HDR_ELIF;
	else if (is_name(t, "else"))
		h = HDR_ELSE;
	else if (is_name(t, "for") || is_name(t, "while"))
		h = HDR_LOOP;
	else if (is_name(t, "with"))
		h = HDR_WITH;
	else if (is_name(t, "try"))
		h = HDR_TRY;
	else if (is_name(t, "except"))
		h = HDR_EXCEPT;
	else if (is_name(t, "finally"))
		h = HDR_FINALLY;
	else if ((is_name(t, "match") || is_name(t, "case")) && k + 1 < end) {
		/* soft keywords: `match x:` but not `match = 1`, `match.group(1)`, `match(x)` used */
		const wg_pytok *u = tok(r, k + 1);
		if (u->kind == WG_PYT_OP && !is_op(u, "(") && !is_op(u, "[") && !is_op(u, "{") &&
		    !is_op(u, "-") && !is_op(u, "*"))
			return HDR_NONE;
		h = HDR_MATCH;
	}
	if (h == HDR_NONE)
		return h;
	/* the colon that ends the header: depth 0, each `lambda` taking one of its own */
	int depth = 0, lambdas = 0;
	for (size_t c = k + 1; c < end; c++) {
		const wg_pytok *u = tok(r, c);
		if (is_open(u))
			depth++;
		else if (is_close(u) && depth)
			depth--;
		else if (depth == 0 && is_name(u, "lambda"))
			lambdas++;
		else if (depth == 0 && is_op(u, ":")) {
			if (lambdas) {
				lambdas--;
				continue;
			}
			*colon = c;
			return h;
		}
	}
	return HDR_NONE; /* no colon: not a compound statement (or a broken one) */
}

static bool catches_import_error(reader *r, size_t i, size_t colon)
{
	/* except: / except ImportError: / except (A, ModuleNotFoundError) as e: / except* ... */
	size_t k = i + 1;
	if (k < colon && is_op(tok(r, k), "*"))
		k++;
	if (k >= colon)
		return true;
	for (; k < colon; k++) {
		const wg_pytok *t = tok(r, k);
		if (is_name(t, "as"))
			break;
		if (is_name(t, "ImportError") || is_name(t, "ModuleNotFoundError") ||
		    is_name(t, "Exception") || is_name(t, "BaseException"))
			return true;
	}
	return false;
}

/* Whether the try: at logical line li guards its body: a handler catches ImportError and
 * does not re-raise at its top level. Reads the handlers' headers and the first level of
 * their bodies only. */
static bool try_guards(reader *r, size_t li)
{
	const wg_pysrc *src = r->src;
	const wg_pyline *tl = wg_vec_at(&src->lines, li);
	bool guards = false;
	for (size_t j = li + 1; j < src->lines.len; j++) {
		const wg_pyline *l = wg_vec_at(&src->lines, j);
		if (l->indent > tl->indent)
			continue;
		if (l->indent < tl->indent)
			break;
		size_t colon = 0;
		int h = header_of(r, l->first, l->first + l->n, &colon);
		if (h == HDR_ELSE || h == HDR_FINALLY)
			continue;
		if (h != HDR_EXCEPT)
			break;
		if (!catches_import_error(r, l->first, colon))
			continue;
		bool raises = false;
		if (colon + 1 < l->first + l->n) {
			raises = is_name(tok(r, colon + 1), "raise");
		} else {
			uint32_t body = 0;
			for (size_t b = j + 1; b < src->lines.len; b++) {
				const wg_pyline *bl = wg_vec_at(&src->lines, b);
				if (bl->indent <= tl->indent)
					break;
				if (!body)
					body = bl->indent;
				if (bl->indent == body && is_name(tok(r, bl->first), "raise")) {
					raises = true;
					break;
				}
			}
		}
		if (!raises)
			guards = true;
	}
	return guards;
}

/* `if TYPE_CHECKING:`, `if typing.TYPE_CHECKING:`, `if False:`, `if 0:` */
static bool never_runs(reader *r, size_t i, size_t colon)
{
	size_t n = colon - (i + 1);
	const wg_pytok *t = tok(r, colon - 1);
	if (n == 1)
		return is_name(t, "TYPE_CHECKING") || is_name(t, "False") ||
		       (t->kind == WG_PYT_NUMBER && t->len == 1 && t->s[0] == '0');
	return n == 3 && is_name(t, "TYPE_CHECKING") && is_op(tok(r, colon - 2), ".");
}

/* `if __name__ == "__main__":` */
static bool main_guard(reader *r, size_t i, size_t colon)
{
	return colon == i + 4 && is_name(tok(r, i + 1), "__name__") && is_op(tok(r, i + 2), "==") &&
	       tok(r, i + 3)->kind == WG_PYT_STRING && memmem(tok(r, i + 3)->s, tok(r, i + 3)->len,
							      "__main__", 8);
}

/* `with suppress(ImportError):` / `with contextlib.suppress(ModuleNotFoundError):` */
static bool suppresses(reader *r, size_t i, size_t colon)
{
	bool sup = false;
	for (size_t k = i; k < colon; k++) {
		if (is_name(tok(r, k), "suppress"))
			sup = true;
		else if (sup && catches_import_error(r, k - 1, k + 1) &&
			 tok(r, k)->kind == WG_PYT_NAME && !is_name(tok(r, k), "as"))
			return true;
	}
	return false;
}

/* A line of the module's def __getattr__: does it raise AttributeError for what it does
 * not know, or may it answer anything (an import, getattr() on another object, globals())? */
static void getattr_body(reader *r, size_t i, size_t end)
{
	const char *param = r->mod->getattr_param;
	size_t pl = param ? strlen(param) : 0;
	bool call = false, uses = false;
	for (size_t k = i; k < end; k++) {
		const wg_pytok *t = tok(r, k);
		if (t->kind == WG_PYT_STRING) {
			/* f".{name}" */
			uses |= pl && memmem(t->s, t->len, param, pl) != NULL;
			continue;
		}
		if (t->kind != WG_PYT_NAME)
			continue;
		if (is_name(t, "raise") && k + 1 < end && is_name(tok(r, k + 1), "AttributeError"))
			r->mod->getattr_raises = true;
		else if (is_name(t, "getattr") || is_name(t, "import_module") ||
			 is_name(t, "__import__") || is_name(t, "globals") || is_name(t, "vars") ||
			 is_name(t, "__dict__") || is_name(t, "modules") || is_name(t, "find_spec"))
			call = true;
		else if (pl && t->len == pl && !memcmp(t->s, param, pl))
			uses = true;
	}
	/* importlib.import_module("." + name, __name__), getattr(_impl, name): any name */
	if (call && uses)
		r->mod->getattr_forwards = true;
}

typedef struct {
	uint32_t indent;
	int ctx;           /* what the block imposes on its body */
	bool scope;        /* def or class: its body is not module level */
	bool def;          /* a function body */
	int hdr;
	bool never;        /* an if TYPE_CHECKING (for its else) */
	bool getattr;      /* the module's def __getattr__ */
} block;

static int read_source(wg_pyimports *im, pymod *m, bool binds, bool again);

static int scan_source(wg_pyimports *im, const wg_source *src)
{
	bool init;
	char *modname = wg_py_module_of(&im->arena, src->name, &init);
	if (!modname)
		return WG_OK;
	char *pkg = init ? modname : wg_arena_strdup(&im->arena, modname);
	if (!pkg)
		return WG_ENOMEM;
	if (!init) {
		char *dot = strrchr(pkg, '.');
		if (dot)
			*dot = '\0';
		else
			pkg[0] = '\0';
	}
	/* one module per name: the first source (a.py and a/__init__.py: the package wins) */
	size_t have = wg_strmap_get(&im->mod_by_name, modname);
	if (have != SIZE_MAX) {
		pymod *old = wg_vec_at(&im->mods, have);
		if (old->init || !init)
			return WG_OK;
	}
	pymod *m = wg_vec_push(&im->mods);
	if (!m)
		return WG_ENOMEM;
	size_t idx = im->mods.len - 1;
	m->name = modname;
	m->file = src->name;
	m->init = init;
	m->examined = true;
	m->src = src;
	m->pkg = pkg;
	wg_vec_init(&m->stars, sizeof(star_import));
	int rc = WG_OK;
	if (!wg_strmap_init(&m->binds, 16) || !wg_strmap_init(&m->strings, 16))
		rc = WG_ENOMEM;
	else if (have == SIZE_MAX) {
		if (wg_strmap_put(&im->mod_by_name, modname, idx) == SIZE_MAX - 1)
			rc = WG_ENOMEM;
	} else {
		for (size_t k = 0; k < im->mod_by_name.cap; k++)
			if (im->mod_by_name.keys[k] && !strcmp(im->mod_by_name.keys[k], modname))
				im->mod_by_name.vals[k] = idx;
		/* the module's edges read before stay; a package's __init__ is what runs */
	}
	/* a module file's binds matter only when a star import brings them in: read again
	 * then (read_binds), so that a file of a million imports keeps none of its names */
	return rc < 0 ? rc : read_source(im, m, init, false);
}

/* Reads m's source: its edges and marks, and what it binds when binds (a package's
 * __init__, or again: the second reading of a module that a star import brings in). */
static int read_source(wg_pyimports *im, pymod *m, bool binds, bool again)
{
	wg_pysrc ps;
	int rc = wg_py_tokenize(&ps, m->src->text, m->src->len);
	if (rc < 0)
		return rc;
	m->binds_read = binds;
	reader r = {im, m, m->pkg, &ps, WG_OK, (uint32_t)(m - (pymod *)im->mods.items), binds, again};
	for (size_t k = 0; binds && k < ps.toks.len && r.rc == WG_OK; k++) {
		const wg_pytok *t = tok(&r, k);
		if (t->kind != WG_PYT_STRING || t->len > 256)
			continue;
		char *v = string_value(&r, t);
		if (v && identifier(v, strlen(v)) && wg_strmap_put(&m->strings, v, 0) == SIZE_MAX - 1)
			r.rc = WG_ENOMEM;
	}
	block st[MAX_NEST];
	size_t depth = 0;
	for (size_t li = 0; li < ps.lines.len && r.rc == WG_OK; li++) {
		const wg_pyline *l = wg_vec_at(&ps.lines, li);
		while (depth && st[depth - 1].indent >= l->indent)
			depth--;
		int ctx = WG_IMPORT_REQUIRED;
		bool module_scope = true, def_scope = false;
		for (size_t k = 0; k < depth; k++) {
			if (st[k].ctx < ctx)
				ctx = st[k].ctx;
			module_scope &= !st[k].scope;
			def_scope |= st[k].def;
		}
		size_t first = l->first, end = l->first + l->n, colon = 0;
		bool in_getattr = false;
		for (size_t k = 0; k < depth; k++)
			in_getattr |= st[k].getattr;
		if (in_getattr)
			getattr_body(&r, first, end);
		int h = header_of(&r, first, end, &colon);
		if (h == HDR_NONE) {
			simple_stmts(&r, first, end, ctx, module_scope, def_scope);
			continue;
		}
		block b = {l->indent, WG_IMPORT_REQUIRED, false, false, h, false, false};
		size_t name_at = is_name(tok(&r, first), "async") ? first + 2 : first + 1;
		switch (h) {
		case HDR_DEF:
		case HDR_CLASS:
			if (module_scope && name_at < end && tok(&r, name_at)->kind == WG_PYT_NAME) {
				const wg_pytok *nt = tok(&r, name_at);
				bind(&r, nt->s, nt->len, nt->line);
				if (h == HDR_DEF && is_name(nt, "__getattr__")) {
					b.getattr = true;
					if (!m->getattr_line)
						m->getattr_line = nt->line;
					if (name_at + 2 < end && is_op(tok(&r, name_at + 1), "(") &&
					    tok(&r, name_at + 2)->kind == WG_PYT_NAME)
						m->getattr_param = wg_arena_strndup(&im->arena,
										    tok(&r, name_at + 2)->s,
										    tok(&r, name_at + 2)->len);
				}
			}
			b.scope = true;
			b.def = h == HDR_DEF;
			b.ctx = h == HDR_DEF ? WG_IMPORT_LAZY : WG_IMPORT_REQUIRED;
			break;
		case HDR_IF:
			b.never = never_runs(&r, first, colon);
			b.ctx = b.never ? WG_IMPORT_NONE
				: main_guard(&r, first, colon) ? WG_IMPORT_LAZY : WG_IMPORT_CONDITIONAL;
			break;
		case HDR_ELIF:
		case HDR_ELSE:
		case HDR_LOOP:
		case HDR_EXCEPT:
		case HDR_MATCH:
			b.ctx = WG_IMPORT_CONDITIONAL;
			break;
		case HDR_WITH:
			b.ctx = suppresses(&r, first, colon) ? WG_IMPORT_GUARDED : WG_IMPORT_REQUIRED;
			break;
		case HDR_TRY:
			b.ctx = try_guards(&r, li) ? WG_IMPORT_GUARDED : WG_IMPORT_REQUIRED;
			break;
		default: /* finally: runs either way */
			break;
		}
		/* the header's own expressions run in the enclosing context (a for/with target is
		 * bound there; `with x as y`, `for a, b in`) */
		if (module_scope && (h == HDR_LOOP || h == HDR_WITH)) {
			size_t k = name_at;
			if (h == HDR_LOOP && is_name(tok(&r, first), "for")) {
				size_t in = k;
				while (in < colon && !is_name(tok(&r, in), "in"))
					in++;
				bind_targets(&r, k, in);
			} else {
				for (; k + 1 < colon; k++)
					if (is_name(tok(&r, k), "as"))
						bind(&r, tok(&r, k + 1)->s, tok(&r, k + 1)->len,
						     tok(&r, k + 1)->line);
			}
		}
		dynamic_marks(&r, first, colon, module_scope, def_scope);
		for (size_t k = first + 1; module_scope && h != HDR_DEF && k < colon; k++)
			if (is_op(tok(&r, k), ":=") && tok(&r, k - 1)->kind == WG_PYT_NAME)
				bind(&r, tok(&r, k - 1)->s, tok(&r, k - 1)->len, tok(&r, k)->line);
		int body_ctx = b.ctx < ctx ? b.ctx : ctx;
		if (colon + 1 < end) {
			/* an inline body: `try: import x` */
			simple_stmts(&r, colon + 1, end, body_ctx, module_scope && !b.scope,
				     def_scope || b.def);
			continue;
		}
		if (depth < MAX_NEST)
			st[depth++] = b;
	}
	wg_pysrc_free(&ps);
	return r.rc;
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
			rc = read_source(im, tm, true, true);
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
	int c = strcmp(edge_from(sort_im, x), edge_from(sort_im, y));
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
		rc = scan_source(im, wg_vec_at(&scan->sources, i));
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
	edge_view(im, i, out);
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

/* ---- reachability ---- */

static int reach_add(wg_pyimports *im, wg_vec *queue, const char *name, size_t n)
{
	char *k = wg_arena_strndup(&im->arena, name, n);
	if (!k)
		return WG_ENOMEM;
	size_t r = wg_strmap_put(&im->reached, k, 0);
	if (r == SIZE_MAX - 1)
		return WG_ENOMEM;
	if (r != SIZE_MAX)
		return WG_OK; /* there already */
	const char **q = wg_vec_push(queue);
	if (!q)
		return WG_ENOMEM;
	*q = k;
	return WG_OK;
}

/* name and every package above it */
static int reach_path(wg_pyimports *im, wg_vec *queue, const char *name)
{
	int rc = WG_OK;
	for (const char *d = strchr(name, '.'); d && rc == WG_OK; d = strchr(d + 1, '.'))
		rc = reach_add(im, queue, name, (size_t)(d - name));
	return rc == WG_OK ? reach_add(im, queue, name, strlen(name)) : rc;
}

/* The first position in by_from of module's edges. */
static size_t first_from(const wg_pyimports *im, const char *module)
{
	size_t lo = 0, hi = im->edges.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(edge_from(im, im->by_from[mid]), module) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int wg_pyimports_reach(wg_pyimports *im, const char *const *roots, size_t n)
{
	if (!im)
		return WG_OK;
	if (im->reach_done)
		wg_strmap_free(&im->reached);
	im->reach_done = true;
	if (!wg_strmap_init(&im->reached, 64))
		return WG_ENOMEM;
	wg_vec queue;
	wg_vec_init(&queue, sizeof(const char *));
	int rc = WG_OK;
	for (size_t i = 0; i < n && rc == WG_OK; i++)
		rc = reach_path(im, &queue, roots[i]);
	/* each reached module's edges once: linear in the edges */
	for (size_t q = 0; q < queue.len && rc == WG_OK; q++) {
		const char *mod = *(const char **)wg_vec_at(&queue, q);
		for (size_t k = first_from(im, mod); k < im->edges.len && rc == WG_OK; k++) {
			wg_pyedge ev;
			edge_view(im, im->by_from[k], &ev);
			const wg_pyedge *e = &ev;
			if (strcmp(e->from, mod))
				break;
			if (e->ctx != WG_IMPORT_REQUIRED)
				continue;
			rc = reach_path(im, &queue, e->target);
			if (rc == WG_OK && e->kind == WG_PYEDGE_FROM && e->name) {
				char *sub = wg_arena_printf(&im->arena, "%s.%s", e->target, e->name);
				if (!sub)
					rc = WG_ENOMEM;
				else if (wg_pyimports_kind(im, sub) != WG_PYMOD_NONE)
					rc = reach_add(im, &queue, sub, strlen(sub));
			}
		}
	}
	wg_vec_free(&queue);
	return rc;
}

bool wg_pyimports_reached(const wg_pyimports *im, const char *module)
{
	return im && im->reach_done && wg_strmap_get(&im->reached, module) != SIZE_MAX;
}

/* ---- how an extension module is imported (the loader checks' severity) ---- */

/* What an edge imports as a module: its target, or target.name for `from target import name`
 * where the wheel has that submodule. */
static const char *imported(wg_pyimports *im, const wg_pyedge *e, char *buf, size_t n)
{
	if (e->kind == WG_PYEDGE_FROM && e->name) {
		snprintf(buf, n, "%s.%s", e->target, e->name);
		if (wg_pyimports_kind(im, buf) != WG_PYMOD_NONE)
			return buf;
	}
	return e->target;
}

int wg_pyimports_how(wg_pyimports *im, const char *module, const char **file, unsigned *line)
{
	*file = NULL;
	*line = 0;
	if (!im || !module)
		return WG_IMPORT_NONE;
	/* A top-level module is what the user imports: nothing else decides for it; and when
	 * part of the sources was not examined (WG-WHL-003) an unseen import may be required. */
	if (!strchr(module, '.') || im->partial)
		return WG_IMPORT_REQUIRED;
	/* What `import <package>` runs, from each package above the module. */
	char top[1024];
	snprintf(top, sizeof(top), "%.*s", (int)strcspn(module, "."), module);
	wg_strmap saved = im->reached;
	bool saved_done = im->reach_done;
	im->reached = (wg_strmap){0};
	im->reach_done = false;
	const char *roots[1] = {top};
	int rc = wg_pyimports_reach(im, roots, 1);
	bool required = false;
	char buf[2048];
	/* the first statement in the wheel's order, in a reached module, that imports it */
	for (size_t k = 0; rc == WG_OK && k < im->edges.len && !required; k++) {
		wg_pyedge ev;
		edge_view(im, k, &ev);
		const wg_pyedge *e = &ev;
		if (e->ctx != WG_IMPORT_REQUIRED || !wg_pyimports_reached(im, e->from))
			continue;
		const char *t = imported(im, e, buf, sizeof(buf));
		if (!strcmp(t, module) || (wg_has_prefix(t, module) && t[strlen(module)] == '.')) {
			required = true;
			*file = e->file;
			*line = e->line;
		}
	}
	wg_strmap_free(&im->reached);
	im->reached = saved;
	im->reach_done = saved_done;
	if (rc < 0 || required)
		return WG_IMPORT_REQUIRED; /* out of memory: the strictest reading */
	/* Not at package import: the most direct way anything in the wheel imports it. */
	int best = WG_IMPORT_NONE;
	for (size_t k = 0; k < im->edges.len; k++) {
		wg_pyedge ev;
		edge_view(im, k, &ev);
		const wg_pyedge *e = &ev;
		const char *t = imported(im, e, buf, sizeof(buf));
		if (strcmp(t, module))
			continue;
		int how = e->ctx == WG_IMPORT_REQUIRED ? WG_IMPORT_INDIRECT : e->ctx;
		if (how > best) {
			best = how;
			*file = e->file;
			*line = e->line;
		}
	}
	return best;
}

const char *wg_import_how_name(int how)
{
	switch (how) {
	case WG_IMPORT_REQUIRED: return "imported when the package is imported";
	case WG_IMPORT_INDIRECT: return "imported by a module the package itself does not import";
	case WG_IMPORT_CONDITIONAL: return "imported only under a condition";
	case WG_IMPORT_GUARDED: return "imported only under try/except";
	case WG_IMPORT_LAZY: return "imported lazily, inside a function";
	default: return "never imported by the package's own code";
	}
}

bool wg_pyimports_mentions(const wg_pyimports *im, const char *top)
{
	size_t n = strlen(top);
	for (size_t k = 0; im && k < im->edges.len; k++) {
		wg_pyedge ev;
		edge_view(im, k, &ev);
		const wg_pyedge *e = &ev;
		if (e->ctx == WG_IMPORT_NONE)
			continue;
		if (!strncmp(e->target, top, n) && (e->target[n] == '\0' || e->target[n] == '.'))
			return true;
	}
	return false;
}

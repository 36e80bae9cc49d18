/*
 * The import model's simple statements: import and from-import (their edges and the names
 * they bind), assignment targets, the module's plain strings, and the marks of what makes a
 * namespace unknowable (a module __getattr__, globals() written, sys.modules, exec...).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/pyimports_internal.h"

/* k: a string that lives as long as the model (the arena's) */
static void bind_str(reader *r, const char *k, unsigned line)
{
	if (r->rc < 0 || !r->binds || !*k)
		return;
	if (wg_strmap_put(&r->mod->binds, k, line) == SIZE_MAX - 1)
		r->rc = WG_ENOMEM;
}

void wg_pyi_bind(reader *r, const char *s, size_t n, unsigned line)
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
				wg_pyi_bind(r, tok(r, i + 1)->s, tok(r, i + 1)->len, line);
			i += 2;
		} else if (module_scope && !strchr(name, '.')) {
			bind_str(r, name, line);
		} else if (module_scope) {
			wg_pyi_bind(r, name, strcspn(name, "."), line);
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
				wg_pyi_bind(r, tok(r, i + 1)->s, tok(r, i + 1)->len, t->line);
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
void wg_pyi_bind_targets(reader *r, size_t i, size_t end)
{
	for (size_t k = i; k < end; k++) {
		const wg_pytok *t = tok(r, k);
		if (t->kind != WG_PYT_NAME)
			continue;
		bool after_dot = k > i && is_op(tok(r, k - 1), ".");
		bool before = k + 1 < end && (is_op(tok(r, k + 1), ".") || is_op(tok(r, k + 1), "(") ||
					      is_op(tok(r, k + 1), "["));
		if (!after_dot && !before)
			wg_pyi_bind(r, t->s, t->len, t->line);
	}
}

/* The text of a plain string literal token (no prefix but u, no escapes), or NULL. */
char *wg_pyi_string_value(reader *r, const wg_pytok *t)
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
void wg_pyi_dynamic_marks(reader *r, size_t i, size_t end, bool module_scope, bool def_scope)
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
	wg_pyi_dynamic_marks(r, i, end, module_scope, def_scope);
	if (is_name(t, "global")) {
		for (size_t k = i + 1; k < end; k++)
			if (tok(r, k)->kind == WG_PYT_NAME)
				wg_pyi_bind(r, tok(r, k)->s, tok(r, k)->len, tok(r, k)->line);
		return;
	}
	if (!module_scope)
		return;
	/* __all__ = [...], __all__ += [...], __all__.extend([...]) / .append("x") */
	if (is_name(t, "__all__")) {
		for (size_t k = i + 1; k < end; k++)
			if (tok(r, k)->kind == WG_PYT_STRING) {
				char *v = wg_pyi_string_value(r, tok(r, k));
				if (v)
					wg_pyi_bind(r, v, strlen(v), tok(r, k)->line);
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
			wg_pyi_bind_targets(r, seg, k);
			seg = k + 1;
		} else if (is_op(u, ":=") && k > i && tok(r, k - 1)->kind == WG_PYT_NAME) {
			wg_pyi_bind(r, tok(r, k - 1)->s, tok(r, k - 1)->len, u->line);
		} else if (depth == 0 && is_op(u, ":") && k == i + 1 && t->kind == WG_PYT_NAME) {
			wg_pyi_bind(r, t->s, t->len, t->line); /* x: int = 3 (x: int alone binds nothing,
							 * but a type checker's name is a name) */
		}
	}
}

/* Splits toks[i, end) at `;` (bracket depth 0) into simple statements. */
void wg_pyi_simple_stmts(reader *r, size_t i, size_t end, int ctx, bool module_scope,
			 bool def_scope)
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

/* Names: the module a member is, an identifier, the absolute module of a relative import
 * (what the model in pyimports.c and the statements share). */
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

bool wg_pyi_identifier(const char *s, size_t n)
{
	if (!n || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || (unsigned char)s[i] >= 0x80))
			return false;
	return true;
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

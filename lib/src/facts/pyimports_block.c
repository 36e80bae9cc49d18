/*
 * The import model's compound statements and sources: a header's kind and the context it
 * imposes on its body (try: guarded by its handlers, if TYPE_CHECKING never run, def lazy,
 * if/for/while conditional), blocks by indentation, and a source read line by line.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/pyimports_internal.h"

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


int wg_pyi_scan_source(wg_pyimports *im, const wg_source *src)
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
	return rc < 0 ? rc : wg_pyi_read_source(im, m, init, false);
}

/* Reads m's source: its edges and marks, and what it binds when binds (a package's
 * __init__, or again: the second reading of a module that a star import brings in). */
int wg_pyi_read_source(wg_pyimports *im, pymod *m, bool binds, bool again)
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
		char *v = wg_pyi_string_value(&r, t);
		if (v && wg_pyi_identifier(v, strlen(v)) && wg_strmap_put(&m->strings, v, 0) == SIZE_MAX - 1)
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
			wg_pyi_simple_stmts(&r, first, end, ctx, module_scope, def_scope);
			continue;
		}
		block b = {l->indent, WG_IMPORT_REQUIRED, false, false, h, false, false};
		size_t name_at = is_name(tok(&r, first), "async") ? first + 2 : first + 1;
		switch (h) {
		case HDR_DEF:
		case HDR_CLASS:
			if (module_scope && name_at < end && tok(&r, name_at)->kind == WG_PYT_NAME) {
				const wg_pytok *nt = tok(&r, name_at);
				wg_pyi_bind(&r, nt->s, nt->len, nt->line);
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
				wg_pyi_bind_targets(&r, k, in);
			} else {
				for (; k + 1 < colon; k++)
					if (is_name(tok(&r, k), "as"))
						wg_pyi_bind(&r, tok(&r, k + 1)->s, tok(&r, k + 1)->len,
						     tok(&r, k + 1)->line);
			}
		}
		wg_pyi_dynamic_marks(&r, first, colon, module_scope, def_scope);
		for (size_t k = first + 1; module_scope && h != HDR_DEF && k < colon; k++)
			if (is_op(tok(&r, k), ":=") && tok(&r, k - 1)->kind == WG_PYT_NAME)
				wg_pyi_bind(&r, tok(&r, k - 1)->s, tok(&r, k - 1)->len, tok(&r, k)->line);
		int body_ctx = b.ctx < ctx ? b.ctx : ctx;
		if (colon + 1 < end) {
			/* an inline body: `try: import x` */
			wg_pyi_simple_stmts(&r, colon + 1, end, body_ctx, module_scope && !b.scope,
				     def_scope || b.def);
			continue;
		}
		if (depth < MAX_NEST)
			st[depth++] = b;
	}
	wg_pysrc_free(&ps);
	return r.rc;
}

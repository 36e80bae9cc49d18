/*
 * How a wheel's Python code imports its modules: every `import a.b` / `from a import b`
 * statement of every .py member, with the block it sits in (module level, under try:/except:,
 * inside a function, under if/for/while), so that the checks can tell a compiled module the
 * package cannot work without (imported at package import) from an optional one (imported
 * only under try/except ImportError, lazily inside a function, conditionally, or never by the
 * package itself). Line based, as the import checks have always been: triple-quoted strings
 * are skipped, `(`-continued name lists are followed, statements split by `;` are not.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/facts.h"

typedef struct {
	const char *from;   /* importing module (dotted) */
	const char *target; /* imported module (dotted, absolute) */
	const char *file;
	unsigned line;
	int ctx;            /* WG_IMPORT_* */
} edge;

struct wg_pyimports {
	wg_arena arena;
	wg_vec edges; /* edge */
	size_t *by_from; /* edge indices ordered by importing module, then position */
	bool partial;    /* the scan kept part of the sources (WG-WHL-003): unseen imports may exist */
};

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

static bool word_at(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);
	return n >= k && !memcmp(s, w, k) && (n == k || !(isalnum((unsigned char)s[k]) || s[k] == '_'));
}

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

static size_t ident(const char *s, size_t i, size_t n, bool dotted)
{
	size_t j = i;
	while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_' || (dotted && s[j] == '.')))
		j++;
	return j;
}

typedef struct {
	wg_pyimports *im;
	const char *file, *mod, *pkg;
	unsigned line;
	int ctx;
} stmt;

static int add(stmt *st, const char *target, size_t len)
{
	if (!len)
		return WG_OK;
	edge *e = wg_vec_push(&st->im->edges);
	if (!e)
		return WG_ENOMEM;
	e->from = st->mod;
	e->file = st->file;
	e->line = st->line;
	e->ctx = st->ctx;
	e->target = wg_arena_strndup(&st->im->arena, target, len);
	return e->target ? WG_OK : WG_ENOMEM;
}

/* "a.b as c, d" after `import`. */
static int names_import(stmt *st, const char *s, size_t i, size_t n)
{
	int rc = WG_OK;
	while (i < n && rc == WG_OK) {
		i = skip_ws(s, i, n);
		size_t e = ident(s, i, n, true);
		if (e == i)
			break;
		rc = add(st, s + i, e - i);
		i = skip_ws(s, e, n);
		if (word_at(s + i, n - i, "as"))
			i = ident(s, skip_ws(s, i + 2, n), n, false);
		i = skip_ws(s, i, n);
		if (i >= n || s[i] != ',')
			break;
		i++;
	}
	return rc;
}

/* `from BASE import a, b`: BASE itself, and BASE.a, BASE.b (a name may be a submodule). */
static int names_from(stmt *st, const char *base, const char *s, size_t i, size_t n)
{
	int rc = add(st, base, strlen(base));
	while (i < n && rc == WG_OK) {
		i = skip_ws(s, i, n);
		if (i < n && (s[i] == '(' || s[i] == ','))
			i++;
		i = skip_ws(s, i, n);
		size_t e = ident(s, i, n, false);
		if (e == i)
			break;
		char *full = *base ? wg_arena_printf(&st->im->arena, "%s.%.*s", base, (int)(e - i), s + i)
				   : wg_arena_strndup(&st->im->arena, s + i, e - i);
		if (!full)
			return WG_ENOMEM;
		rc = add(st, full, strlen(full));
		i = skip_ws(s, e, n);
		if (word_at(s + i, n - i, "as"))
			i = ident(s, skip_ws(s, i + 2, n), n, false);
	}
	return rc;
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
	for (size_t d = 1; d < dots && b; d++) {
		char *dot = strrchr(b, '.');
		if (dot)
			*dot = '\0';
		else
			b[0] = '\0';
	}
	if (!b)
		return NULL;
	if (ml == dots)
		return b;
	return *b ? wg_arena_printf(a, "%s.%.*s", b, (int)(ml - dots), m + dots)
		  : wg_arena_strndup(a, m + dots, ml - dots);
}

typedef struct {
	size_t indent;
	int kind; /* WG_IMPORT_* the block imposes on what it contains */
} block;

/* What a block header line imposes on its body, or -1 when the line opens no block. */
static int header_kind(const char *s, size_t n)
{
	size_t e = n;
	while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r'))
		e--;
	if (!e || s[e - 1] != ':')
		return -1;
	if (word_at(s, n, "def") || word_at(s, n, "async") || word_at(s, n, "lambda"))
		return WG_IMPORT_LAZY;
	if (word_at(s, n, "try") || word_at(s, n, "except") || word_at(s, n, "finally"))
		return WG_IMPORT_GUARDED;
	if (word_at(s, n, "if") || word_at(s, n, "elif") || word_at(s, n, "else") ||
	    word_at(s, n, "for") || word_at(s, n, "while") || word_at(s, n, "match") ||
	    word_at(s, n, "case"))
		return WG_IMPORT_CONDITIONAL;
	return WG_IMPORT_REQUIRED; /* class, with: run at import */
}

/*
 * Whether the try: at line start (indent ind) really guards its body: one of its handlers
 * catches ImportError (ImportError, ModuleNotFoundError, Exception, BaseException, a bare
 * except, or a tuple naming one) and does not raise again. A try whose handlers re-raise
 * leaves the package as broken as no try at all.
 */
static bool try_guards(const char *p, const char *end, size_t ind)
{
	bool in_handler = false, handler_catches = false, guards = false;
	int lines = 0;
	while (p < end && lines++ < 4096) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *s = p;
		p = nl ? nl + 1 : end;
		size_t i = skip_ws(s, 0, n);
		if (i == n || s[i] == '#')
			continue;
		if (i < ind || (i == ind && !word_at(s + i, n - i, "except") &&
				!word_at(s + i, n - i, "else") && !word_at(s + i, n - i, "finally"))) {
			break; /* the try statement ended */
		}
		if (i == ind) {
			if (in_handler && handler_catches)
				guards = true;
			in_handler = word_at(s + i, n - i, "except");
			handler_catches = false;
			if (in_handler) {
				const char *t = s + i + 6;
				size_t tn = n - i - 6, k = skip_ws(t, 0, tn);
				handler_catches = k < tn && t[k] == ':'; /* bare except: */
				static const char *const names[] = {"ImportError", "ModuleNotFoundError",
								    "Exception", "BaseException", "OSError"};
				for (size_t w = 0; w < WG_ARRAY_LEN(names) && !handler_catches; w++)
					handler_catches = memmem(t, tn, names[w], strlen(names[w])) != NULL;
			}
			continue;
		}
		/* inside a handler's body: a raise undoes the guard */
		if (in_handler && word_at(s + i, n - i, "raise"))
			handler_catches = false;
	}
	return guards || (in_handler && handler_catches);
}

static int scan_source(wg_pyimports *im, const wg_source *src)
{
	bool init;
	char *mod = wg_py_module_of(&im->arena, src->name, &init);
	if (!mod)
		return WG_OK;
	char *pkg = init ? mod : wg_arena_strdup(&im->arena, mod);
	if (!pkg)
		return WG_ENOMEM;
	if (!init) {
		char *dot = strrchr(pkg, '.');
		if (dot)
			*dot = '\0';
		else
			pkg[0] = '\0';
	}
	block stack[64];
	size_t depth = 0;
	const char *in_string = NULL; /* the open triple quote */
	unsigned lineno = 0;
	int rc = WG_OK;
	const char *end = src->text + src->len;
	for (const char *p = src->text; p < end && rc == WG_OK;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *s = p;
		p = nl ? nl + 1 : end;
		lineno++;
		/* Triple-quoted strings (docstrings) hide what looks like code. */
		bool was_in_string = in_string != NULL;
		for (size_t k = 0; k + 2 < n + 1 && k + 3 <= n; k++) {
			if (!in_string && s[k] == '#')
				break;
			if ((s[k] == '"' || s[k] == '\'') && s[k + 1] == s[k] && s[k + 2] == s[k]) {
				const char *q = s[k] == '"' ? "\"\"\"" : "'''";
				if (!in_string)
					in_string = q;
				else if (in_string[0] == s[k])
					in_string = NULL;
				k += 2;
			}
		}
		if (was_in_string)
			continue;
		size_t ind = skip_ws(s, 0, n);
		if (ind == n || s[ind] == '#')
			continue;
		while (depth && stack[depth - 1].indent >= ind)
			depth--;
		int ctx = WG_IMPORT_REQUIRED;
		for (size_t k = 0; k < depth; k++)
			if (stack[k].kind < ctx)
				ctx = stack[k].kind;
		const char *t = s + ind;
		size_t tn = n - ind;
		stmt st = {im, src->name, mod, pkg, lineno, ctx};
		if (word_at(t, tn, "import")) {
			rc = names_import(&st, t, 6, tn);
		} else if (word_at(t, tn, "from")) {
			size_t i = skip_ws(t, 4, tn), e = i;
			while (e < tn && t[e] == '.')
				e++;
			e = ident(t, e, tn, true);
			size_t k = skip_ws(t, e, tn);
			if (e > i && word_at(t + k, tn - k, "import")) {
				char *base = wg_py_resolve_from(&im->arena, pkg, t + i, e - i);
				if (!base)
					return WG_ENOMEM;
				if (*base || e - i > 0)
					rc = names_from(&st, base, t, k + 6, tn);
				/* `from x import (a,\n b)`: the names continue on the next lines. */
				size_t open = k + 6;
				while (open < tn && t[open] != '(')
					open++;
				if (open < tn && !memchr(t + open, ')', tn - open)) {
					while (p < end && rc == WG_OK) {
						const char *nl2 = memchr(p, '\n', (size_t)(end - p));
						size_t n2 = nl2 ? (size_t)(nl2 - p) : (size_t)(end - p);
						const char *s2 = p;
						p = nl2 ? nl2 + 1 : end;
						lineno++;
						const char *close = memchr(s2, ')', n2);
						size_t upto = close ? (size_t)(close - s2) : n2;
						const char *hash = memchr(s2, '#', upto);
						if (hash)
							upto = (size_t)(hash - s2);
						rc = names_from(&st, base, s2, 0, upto);
						if (close)
							break;
					}
				}
			}
		}
		int hk = header_kind(t, tn);
		/* A try whose handlers do not swallow ImportError guards nothing. */
		if (hk == WG_IMPORT_GUARDED && word_at(t, tn, "try") && !try_guards(p, end, ind))
			hk = WG_IMPORT_REQUIRED;
		if (hk >= 0 && depth < WG_ARRAY_LEN(stack))
			stack[depth++] = (block){ind, hk};
	}
	return rc;
}

static _Thread_local const wg_pyimports *sort_im;

static int cmp_by_from(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const edge *ex = wg_vec_at(&sort_im->edges, x), *ey = wg_vec_at(&sort_im->edges, y);
	int c = strcmp(ex->from, ey->from);
	return c ? c : (x > y) - (x < y);
}

int wg_pyimports_build(wg_pyimports **out, const wg_scan *scan)
{
	*out = NULL;
	wg_pyimports *im = calloc(1, sizeof(*im));
	if (!im)
		return WG_ENOMEM;
	wg_vec_init(&im->edges, sizeof(edge));
	int rc = WG_OK;
	im->partial = scan->python_partial != NULL;
	for (size_t i = 0; i < scan->sources.len && rc == WG_OK; i++)
		rc = scan_source(im, wg_vec_at(&scan->sources, i));
	/* The edges of one importing module, found by binary search: the walk in
	 * wg_pyimports_how visits each reached module's edges once, never every edge per module. */
	if (rc == WG_OK && !(im->by_from = malloc((im->edges.len ? im->edges.len : 1) *
						 sizeof(*im->by_from))))
		rc = WG_ENOMEM;
	if (rc < 0) {
		wg_pyimports_free(im);
		return rc;
	}
	for (size_t k = 0; k < im->edges.len; k++)
		im->by_from[k] = k;
	sort_im = im;
	qsort(im->by_from, im->edges.len, sizeof(*im->by_from), cmp_by_from);
	sort_im = NULL;
	*out = im;
	return WG_OK;
}

void wg_pyimports_free(wg_pyimports *im)
{
	if (!im)
		return;
	wg_vec_free(&im->edges);
	free(im->by_from);
	wg_arena_free(&im->arena);
	free(im);
}

/* The modules one walk has reached: a list in the order reached, and an open-addressing set
 * over it, so that each name is added once in constant time (a list searched per name was
 * quadratic: 150,000 names imported by one statement took 75 s). */
typedef struct {
	const char **list;
	size_t n, cap;
	size_t *slot; /* list index + 1, 0 empty; mask + 1 slots */
	size_t mask;
} reached_set;

static size_t name_hash(const char *s)
{
	size_t h = 1469598103934665603ULL & SIZE_MAX;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * (1099511628211ULL & SIZE_MAX);
	return h;
}

/* Adds a copy of name unless it is there; false when out of memory. */
static bool reach(wg_pyimports *im, reached_set *r, const char *name)
{
	size_t h = name_hash(name);
	for (size_t i = h & r->mask;; i = (i + 1) & r->mask) {
		if (!r->slot[i])
			break;
		if (!strcmp(r->list[r->slot[i] - 1], name))
			return true;
	}
	if (r->n == r->cap) {
		size_t nc = r->cap * 2;
		const char **bigger = realloc(r->list, nc * sizeof(*bigger));
		if (!bigger)
			return false;
		r->list = bigger;
		r->cap = nc;
	}
	if (2 * (r->n + 1) > r->mask + 1) {
		size_t nm = r->mask * 2 + 1;
		size_t *slots = calloc(nm + 1, sizeof(*slots));
		if (!slots)
			return false;
		for (size_t k = 0; k < r->n; k++) {
			size_t i = name_hash(r->list[k]) & nm;
			while (slots[i])
				i = (i + 1) & nm;
			slots[i] = k + 1;
		}
		free(r->slot);
		r->slot = slots;
		r->mask = nm;
	}
	const char *copy = wg_arena_strdup(&im->arena, name);
	if (!copy)
		return false;
	size_t i = h & r->mask;
	while (r->slot[i])
		i = (i + 1) & r->mask;
	r->slot[i] = r->n + 1;
	r->list[r->n++] = copy;
	return true;
}

/* The first position in by_from of module's edges. */
static size_t first_from(const wg_pyimports *im, const char *module)
{
	size_t lo = 0, hi = im->edges.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const edge *e = wg_vec_at(&im->edges, im->by_from[mid]);
		if (strcmp(e->from, module) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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
	/*
	 * What `import <package>` runs: start at every package that contains the module (the
	 * parents' __init__ run first), follow the module-level, unguarded imports. Parents of an
	 * imported module are imported too.
	 */
	reached_set r = {.cap = 64, .mask = 127};
	r.list = malloc(r.cap * sizeof(*r.list));
	r.slot = calloc(r.mask + 1, sizeof(*r.slot));
	if (!r.list || !r.slot) {
		free(r.list);
		free(r.slot);
		return WG_IMPORT_REQUIRED; /* out of memory: the strictest reading, never a softer one */
	}
	char buf[1024];
	bool ok = true, required = false;
	snprintf(buf, sizeof(buf), "%s", module);
	for (char *dot = strchr(buf, '.'); dot && ok; dot = strchr(dot + 1, '.')) {
		*dot = '\0';
		ok = reach(im, &r, buf);
		*dot = '.';
	}
	/* Each reached module's module-level imports, and their parents, are reached in turn:
	 * at most every module the wheel's statements name, each visited once. Of a module's
	 * edges, the first in the wheel's order that imports the module decides (file, line). */
	for (size_t i = 0; i < r.n && ok && !required; i++) {
		for (size_t k = first_from(im, r.list[i]); k < im->edges.len && ok; k++) {
			const edge *e = wg_vec_at(&im->edges, im->by_from[k]);
			if (strcmp(e->from, r.list[i]))
				break;
			if (e->ctx != WG_IMPORT_REQUIRED)
				continue;
			if (!strcmp(e->target, module)) {
				required = true;
				*file = e->file;
				*line = e->line;
				break;
			}
			snprintf(buf, sizeof(buf), "%s", e->target);
			for (char *q = buf; ok; q++) {
				char c = *q;
				if (c != '.' && c != '\0')
					continue;
				*q = '\0';
				ok = reach(im, &r, buf);
				*q = c;
				if (!c)
					break;
			}
		}
	}
	free(r.list);
	free(r.slot);
	if (required)
		return WG_IMPORT_REQUIRED;
	/* Not at package import: the most direct way anything in the wheel imports it. */
	int best = WG_IMPORT_NONE;
	for (size_t k = 0; k < im->edges.len; k++) {
		const edge *e = wg_vec_at(&im->edges, k);
		if (strcmp(e->target, module))
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
		const edge *e = wg_vec_at(&im->edges, k);
		if (!strncmp(e->target, top, n) && (e->target[n] == '\0' || e->target[n] == '.'))
			return true;
	}
	return false;
}

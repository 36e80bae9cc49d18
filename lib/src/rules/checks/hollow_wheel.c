/*
 * hollow-wheel: a wheel with no compiled object whose Python code imports a module that the
 * wheel does not ship and that looks compiled (`flash_attn_2_cuda`, `*_cuda`, `*_C`, `*_ext`:
 * the rule's `compiled` patterns). Import statements are found line by line with the rule's
 * `import` and `from_import` patterns; an import guarded by a `try:` (the rule's `guard`
 * patterns) is optional and not a finding. Relative imports resolve against the file's
 * package. Linear in members and lines: the shipped modules are a set built once (the
 * analysis's), and each file is read in one forward pass that keeps the lines that open the
 * blocks around the current one.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "rules/checks/check.h"

/*
 * Whether a distribution in Requires-Dist (without an extra marker) is named like the
 * module's top-level package: `wgdemo` requiring `wgdemo-cuda` gets `wgdemo_cuda` from it.
 * Names compare PEP 503-normalised (wgdemo_cuda, wgdemo-cuda and WgDemo.Cuda are one).
 */
static bool required_dist(const wg_scan *scan, wg_arena *a, const char *module)
{
	char top[256];
	snprintf(top, sizeof(top), "%.*s", (int)strcspn(module, "."), module);
	const char *want = wg_normalize_name(a, top);
	const wg_strlist *req = &scan->lists[WG_LIST_REQUIRES_DIST];
	for (size_t i = 0; want && i < req->n; i++) {
		const char *r = req->v[i];
		size_t n = strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");
		const char *semi = strchr(r, ';');
		if (semi && strstr(semi, "extra"))
			continue; /* only with an extra: not installed by default */
		char *name = wg_arena_strndup(a, r, n);
		const char *norm = name ? wg_normalize_name(a, name) : NULL;
		if (norm && !strcmp(norm, want))
			return true;
	}
	return false;
}

static size_t indent_of(const char *line, size_t n)
{
	size_t i = 0;
	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	return i;
}

/*
 * The enclosing lines seen so far: every earlier non-blank line that no later line has
 * closed (indent at most its own), so indents increase from the bottom. The line a statement
 * at indent ind sits under is the topmost one indented less than ind.
 */
typedef struct {
	size_t indent, line;
	int guard; /* -1 unknown, else whether the rule's guard patterns match the line */
} opener;

/* An import inside a try: block is optional (the code handles its absence). */
static bool guarded(wg_check_ctx *cc, const char **lines, const size_t *lens, opener *st,
		    size_t depth, size_t ind)
{
	while (depth && st[depth - 1].indent >= ind)
		depth--;
	if (!depth)
		return false;
	opener *o = &st[depth - 1];
	if (o->guard < 0)
		o->guard = wg_rule_matches_n(cc, "guard", lines[o->line], lens[o->line], NULL, 0);
	return o->guard;
}

typedef struct {
	const char *module, *file;
	unsigned line;
} seen;

static int report(wg_check_ctx *cc, wg_arena *a, seen *done, size_t *ndone, const char *module,
		  const char *file, unsigned line)
{
	for (size_t i = 0; i < *ndone; i++)
		if (!strcmp(done[i].module, module))
			return WG_OK;
	const char *last = strrchr(module, '.');
	last = last ? last + 1 : module;
	if (!wg_rule_matches(cc, "compiled", module, NULL, 0) &&
	    !wg_rule_matches(cc, "compiled", last, NULL, 0))
		return WG_OK;
	bool ships;
	int rc = wg_analysis_ships(cc->an, module, &ships);
	if (rc < 0 || ships)
		return rc;
	if (required_dist(cc->scan, a, module))
		return WG_OK; /* a dependency brings it: a wrapper, not a hollow wheel */
	/* A dotted module from another distribution (torch._C) is that one's business; only a
	 * missing top-level module or a missing part of this wheel's own packages counts. */
	if (strchr(module, '.')) {
		char top[256];
		snprintf(top, sizeof(top), "%.*s", (int)strcspn(module, "."), module);
		if ((rc = wg_analysis_ships(cc->an, top, &ships)) < 0 || !ships)
			return rc;
	}
	if (*ndone < 64)
		done[(*ndone)++] = (seen){module, file, line};
	wg_vars v = {0};
	wg_vars_set(&v, "module", module);
	wg_vars_set(&v, "file", file);
	wg_vars_set(&v, "line", wg_check_printf(cc, "%u", line));
	wg_vars_set(&v, "objects", "0");
	return wg_emit(cc, &v, file, NULL, file, line);
}

/* "a.b as c, d" -> each module path, without aliases. */
static int each_name(const char *list, size_t n, const char *prefix, wg_arena *a,
		     const char **out, size_t max)
{
	size_t k = 0;
	char buf[1024];
	snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) - 1 ? n : sizeof(buf) - 1), list);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok && k < max; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok) || *tok == '(')
			tok++;
		size_t len = strcspn(tok, " \t)\\#");
		if (!len)
			continue;
		out[k++] = prefix ? wg_arena_printf(a, "%s.%.*s", prefix, (int)len, tok)
				  : wg_arena_strndup(a, tok, len);
	}
	return (int)k;
}

static int run(wg_check_ctx *cc)
{
	const wg_scan *s = cc->scan;
	if (!wg_scan_is_dist(s) || s->objects.len)
		return WG_OK;
	wg_arena *a = &cc->report->arena;
	seen done[64];
	size_t ndone = 0;
	int rc = WG_OK;
	for (size_t i = 0; i < s->sources.len && rc == WG_OK; i++) {
		const wg_source *src = wg_vec_at(&s->sources, i);
		if (!wg_rule_in_scope(cc, false, src->name))
			continue;
		bool init;
		char *mod = wg_py_module_of(a, src->name, &init);
		if (!mod)
			continue;
		/* The package relative imports start from. */
		char *pkg = init ? mod : wg_arena_strdup(a, mod);
		if (!init && pkg) {
			char *dot = strrchr(pkg, '.');
			if (dot)
				*dot = '\0';
			else
				pkg[0] = '\0';
		}
		size_t nlines = 1;
		for (size_t k = 0; k < src->len; k++)
			nlines += src->text[k] == '\n';
		/* Lines point into the source (no copies: a file of short lines cost a copy and
		 * an arena slot per line); the patterns match on (pointer, length). */
		const char **lines = malloc(nlines * sizeof(*lines));
		size_t *lens = malloc(nlines * sizeof(*lens));
		opener *st = malloc(nlines * sizeof(*st));
		size_t depth = 0;
		if (!lines || !lens || !st) {
			free(lines);
			free(lens);
			free(st);
			return WG_ENOMEM;
		}
		size_t nl = 0;
		for (char *p = src->text; p <= src->text + src->len && nl < nlines;) {
			char *e = memchr(p, '\n', (size_t)(src->text + src->len - p));
			size_t len = e ? (size_t)(e - p) : (size_t)(src->text + src->len - p);
			lines[nl] = p;
			lens[nl++] = len;
			if (!e)
				break;
			p = e + 1;
		}
		for (size_t k = 0; k < nl && rc == WG_OK; k++) {
			size_t caps[6];
			const char *names[32];
			int nn = 0;
			if (wg_rule_matches_n(cc, "import", lines[k], lens[k], caps, 2) &&
			    caps[2] != SIZE_MAX) {
				nn = each_name(lines[k] + caps[2], caps[3] - caps[2], NULL, a, names, 32);
			} else if (wg_rule_matches_n(cc, "from_import", lines[k], lens[k], caps, 3) &&
				   caps[2] != SIZE_MAX) {
				const char *m = lines[k] + caps[2];
				size_t ml = caps[3] - caps[2];
				/* from . import x / from ..pkg import y */
				char *base = wg_py_resolve_from(a, pkg, m, ml);
				if (base && *base) {
					names[nn++] = base;
					if (caps[4] != SIZE_MAX)
						nn += each_name(lines[k] + caps[4], caps[5] - caps[4],
								base, a, names + nn, 31);
				}
			}
			size_t ind = indent_of(lines[k], lens[k]);
			if (nn && !guarded(cc, lines, lens, st, depth, ind))
				for (int j = 0; j < nn && rc == WG_OK; j++)
					rc = report(cc, a, done, &ndone, names[j], src->name,
						    (unsigned)k + 1);
			if (ind == lens[k])
				continue; /* blank */
			while (depth && st[depth - 1].indent >= ind)
				depth--;
			st[depth++] = (opener){ind, k, -1};
		}
		free(lines);
		free(lens);
		free(st);
	}
	return rc;
}

static const char *const patterns[] = {"import", "from_import", "compiled", "guard", NULL};
static const char *const vars[] = {"module", "file", "line", "objects", NULL};
const wg_check_kind wg_check_hollow_wheel = {"hollow-wheel", run, patterns, vars, 0};

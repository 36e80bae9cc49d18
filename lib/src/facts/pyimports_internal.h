/*
 * Private to the import model's files: pyimports.c (modules from member names, building,
 * queries), pyimports_stmt.c (simple statements: imports, bindings, dynamic marks),
 * pyimports_block.c (compound statements, their contexts, a source read line by line) and
 * pyimports_reach.c (reachability, how an extension module is imported).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_FACTS_PYIMPORTS_INTERNAL_H
#define WG_FACTS_PYIMPORTS_INTERNAL_H

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

static inline const wg_pytok *tok(const reader *r, size_t i)
{
	return wg_vec_at(&r->src->toks, i);
}

static inline bool is_name(const wg_pytok *t, const char *w)
{
	size_t n = strlen(w);
	return t->kind == WG_PYT_NAME && t->len == n && !memcmp(t->s, w, n);
}

static inline bool is_op(const wg_pytok *t, const char *w)
{
	size_t n = strlen(w);
	return t->kind == WG_PYT_OP && t->len == n && !memcmp(t->s, w, n);
}

static inline bool is_open(const wg_pytok *t)
{
	return t->kind == WG_PYT_OP && t->len == 1 && strchr("([{", t->s[0]);
}

static inline bool is_close(const wg_pytok *t)
{
	return t->kind == WG_PYT_OP && t->len == 1 && strchr(")]}", t->s[0]);
}


/* ---- pyimports.c ---- */

bool wg_pyi_identifier(const char *s, size_t n);
/* The view of edge k. */
void wg_pyi_edge_view(const wg_pyimports *im, size_t k, wg_pyedge *out);
/* The importing module of edge k. */
const char *wg_pyi_edge_from(const wg_pyimports *im, size_t k);

/* ---- pyimports_stmt.c ---- */

/* Records that the module binds s (n bytes) at line. */
void wg_pyi_bind(reader *r, const char *s, size_t n, unsigned line);
/* The names an assignment target toks[i, end) binds. */
void wg_pyi_bind_targets(reader *r, size_t i, size_t end);
/* The text of a plain string literal token (no prefix but u, no escapes), or NULL. */
char *wg_pyi_string_value(reader *r, const wg_pytok *t);
/* Marks what makes a module's namespace or its package path unknowable. */
void wg_pyi_dynamic_marks(reader *r, size_t i, size_t end, bool module_scope, bool def_scope);
/* Splits toks[i, end) at `;` (bracket depth 0) into simple statements and reads them. */
void wg_pyi_simple_stmts(reader *r, size_t i, size_t end, int ctx, bool module_scope,
			 bool def_scope);

/* ---- pyimports_block.c ---- */

/* Adds the module of source src (its first reading: edges, marks, a package's binds). */
int wg_pyi_scan_source(wg_pyimports *im, const wg_source *src);
/* Reads m's source: its edges and marks, and what it binds when binds. */
int wg_pyi_read_source(wg_pyimports *im, pymod *m, bool binds, bool again);

#endif

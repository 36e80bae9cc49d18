/*
 * loader/: Python environments read without running them (env.c), the library index of what
 * the loader needs of each shared library (libindex.c), read without a scan (library_read.c),
 * and its on-disk cache (libcache.c), the simulated loader (resolve.c), and an install judged
 * before it happens (install.c makes the plan, plan.c answers from it). A target is filled
 * from an environment here (env_info.c: wg_env_fill_target, wg_target_set_env): the model
 * comes first.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_LOADER_H
#define WG_LOADER_H

#include "model/model.h"

/* ---- environments (env.c), their library index (libindex.c, libcache.c), the loader (resolve.c) ---- */

typedef struct {
	const char *name, *version; /* version NULL when unversioned */
	uint8_t weak, hidden, torch, string_abi;
} wg_libsym;

/* What the loader needs of one shared library: from its file, or from the cache. */
typedef struct wg_lib {
	wg_arena arena;
	const char *path, *soname, *rpath, *runpath;
	uint64_t size, mtime;
	wg_strlist needed, verdefs;
	wg_vec verneeds;  /* wg_verneed */
	wg_libsym *defs, *undefs;
	size_t ndefs, nundefs;
	uint32_t *hash;   /* open addressing over defs: index + 1, 0 empty */
	size_t hcap;
	wg_string_abi torch_abi;
	bool global;      /* in the global scope (the interpreter, RTLD_GLOBAL loads) */
	void *map;        /* the cache entry its strings point into (libcache.c), or NULL */
	size_t map_len;
} wg_lib;

struct wg_env {
	wg_arena arena;
	wg_scanner *sc;
	const char *path, *site, *python, *python_version, *ext_suffix;
	const char *torch_dir, *torch_version, *torch_cuda;
	int torch_cxx11abi;
	wg_strlist lib_dirs, system_dirs, cuda_libs, native_packages;
	wg_strlist dists; /* the *.dist-info directories of its site directories */
	wg_strlist sites; /* its site directories (real paths), site first */
	/* what `import X` finds at the top level (wg_env_has_module), made on first use */
	bool modules_done, editable;
	wg_strmap modules, dist_names;
	wg_strlist roots; /* real paths the loader's search may read below (wg_env_allows) */
	wg_vec libs;      /* wg_lib*, every library indexed, by path */
	size_t cache_hits;
	char *cache_dir;  /* NULL: no cache */
	bool preloaded;   /* the state after `import torch` is built */
	wg_vec loaded;    /* wg_lib*: what is loaded after `import torch`, in load order */
	size_t npython;   /* the first npython of loaded: the interpreter alone (no torch) */
	size_t limit;     /* how many of loaded the current resolution sees */
	struct wg_plan *plan; /* the install judged (install.c, plan.c), or NULL */
};

/* Why a candidate library was not used, for the resolution's report: uncertain when the real
 * loader's result cannot be known from what was read (a directory not searched, a file not
 * read); stop when the real loader stops its search there. */
typedef struct {
	char text[512];
	bool uncertain, stop;
	bool certain_stop; /* text says why the load fails for certain ("invalid ELF header") */
} wg_ld_note;
void wg_ld_note_set(wg_ld_note *note, bool uncertain, bool stop, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

typedef enum {
	WG_LIBH_OK, WG_LIBH_NOT_ELF, WG_LIBH_NOT_SHARED, WG_LIBH_OTHER_MACHINE
} wg_lib_header;
/** What the first bytes (64) of a candidate library say: an ELF shared object (or
 * executable) of this machine's class, byte order and architecture, or why not. */
wg_lib_header wg_lib_header_check(const uint8_t *h, size_t n);
/** Opens the library at real (a real path) for reading: a regular file whose ELF header
 * passes wg_lib_header_check and whose size is at most max_size; else -1 and why in note. */
struct stat;
int wg_lib_open(const char *real, uint64_t max_size, struct stat *st, wg_ld_note *note);
/** Whether `import top` finds a top-level module or package in the environment: in one of
 * its site directories, the user site directory, or a directory a .pth file adds; 1 yes, 0
 * no, -1 cannot be known (an editable install's import hook). */
int wg_env_has_module(wg_env *e, const char *top);
/** Whether a module of this dotted name is a file or directory below one of e's site
 * directories (a.b: a/b/, a/b.py, a/b.*.so...): what stays on disk when a wheel replaces the
 * distribution that installed a.b's package, if its RECORD did not list it. */
int wg_env_has_submodule(wg_env *e, const char *dotted);
/** Whether a distribution of this PEP 503 normalised name is installed (a .dist-info or
 * .egg-info of one of e's site directories). */
bool wg_env_has_dist(wg_env *e, const char *norm);
/** Whether dir (a real path) is in the environment or the system's library directories. */
bool wg_env_allows(const wg_env *e, const char *dir);

wg_lib *wg_lib_from_object(const wg_object *o, const char *path);
void wg_lib_index(wg_lib *l);
void wg_lib_free(wg_lib *l);
/**
 * Reads the ELF shared library open on fd (wg_lib_open) into the loader's record of it
 * (symbol classes included, no GPU code), without a scan (library_read.c); NULL when it is
 * not a readable ELF object.
 */
wg_lib *wg_read_library(int fd, const char *path, uint64_t size, wg_matcher *m,
			uint32_t max_symbols);
/** The definition of name that a reference (version or NULL) binds to, or NULL. */
const wg_libsym *wg_lib_lookup(const wg_lib *l, const char *name, const char *version);
/** Indexes the library at path (cache first); NULL when it cannot be read. */
const wg_lib *wg_env_load(wg_env *e, const char *path);
/** Same, saying in note (may be NULL) why a file that is there was not used. */
const wg_lib *wg_env_load_note(wg_env *e, const char *path, wg_ld_note *note);
int wg_env_cache_open(wg_env *e, const char *dir);
void wg_env_cache_close(wg_env *e);
wg_lib *wg_cache_get(wg_env *e, const char *path, uint64_t size, uint64_t mtime);
/** Where the cache keeps the entry of the library at lib (under e->cache_dir). */
void wg_cache_entry_path(char *out, size_t n, const wg_env *e, const char *lib);
void wg_cache_put(wg_env *e, const wg_lib *l);

typedef enum {
	WG_LD_MISSING_LIBRARY = 1, WG_LD_MISSING_VERSION, WG_LD_UNRESOLVED,
	WG_LD_NOT_READ /* a library looked for where wheelgate does not read, or not read */
} wg_ld_kind;
typedef struct {
	wg_ld_kind kind;
	const char *object;   /* the object that fails (a member, or a library it loads) */
	const char *library;  /* the library missing / expected to provide it */
	const char *symbol, *version;
	unsigned string_abi;
	bool torch;
	bool system; /* a C/C++ runtime version a wheel object needs: WG-SYS-001 reports it */
	const char *root; /* the wheel object whose load (import) this is */
	const char *detail; /* WG_LD_NOT_READ: what was not searched or read, and why;
			     * WG_LD_MISSING_LIBRARY: where the search ended, when not "nowhere" */
	/* WG_LD_UNRESOLVED of a c10/at/torch/caffe2 symbol: whether the load has one of torch's
	 * libraries in its scope, and the library `import torch` loaded RTLD_LOCAL outside the
	 * load that defines the symbol (NULL: none) */
	bool torch_in_load;
	const char *local_def;
} wg_ld_issue;

/** Resolves obj (of scan) as the loader would in env, after `import torch` when with_torch
 * (the package imports torch), else with the interpreter alone. root: obj's record and
 * vlibs: every object's of the scan (wg_lib*), at their install paths (the analysis's). */
int wg_resolve(wg_env *e, const wg_scan *scan, const wg_object *obj, const wg_lib *root,
	       const wg_vec *vlibs, wg_arena *a, wg_vec *issues, bool *python_assumed,
	       bool with_torch);

/** resolve's loader for a library of the environment (no scan): root named shown in the
 * issues; scope (may be NULL): every library of the load's scope, root first (a wg_vec of
 * const wg_lib*, to free); scope_only: the libraries are found, no symbol is looked up. */
int wg_resolve_lib(wg_env *e, const wg_lib *root, const char *shown, wg_arena *a,
		   wg_vec *issues, bool *python_assumed, bool with_torch, wg_vec *scope,
		   bool scope_only);
/** Forgets the state after `import torch`: the next resolution builds it again. */
void wg_env_unload(wg_env *e);

/* ---- an install judged: the environment as it will be after installing wheels; install.c
 * makes the plan (wg_env_set_install), plan.c answers from it ---- */

typedef struct wg_plan wg_plan;
/** Where a wheel member is installed: <site>/<member> (a .data purelib/platlib prefix
 * removed), in a; NULL when out of memory. */
char *wg_install_path(const char *site, wg_arena *a, const char *member);
/** The library an active plan installs at path (compared lexically normalised), or NULL. */
const wg_lib *wg_plan_lookup(const wg_env *e, const char *path);
/** Whether an active plan removes the file at real (a real path): a file of a distribution a
 * wheel replaces that no wheel installs again. */
bool wg_plan_removes(const wg_env *e, const char *real);
/** torch's directory in the environment the resolution sees (the plan's when active). */
const char *wg_plan_torch_dir(const wg_env *e);
/** The files of dir matching the fnmatch pattern as the resolution sees them (on disk and not
 * removed, or installed by an active plan), sorted, into out (strings in a). */
void wg_plan_glob(const wg_env *e, wg_arena *a, const char *dir, const char *pattern,
		  wg_strlist *out);
void wg_plan_free(wg_plan *p);

/* The plan itself: read by plan.c, made by install.c. */
typedef struct {
	const char *path;         /* the scan's path (the input) */
	const char *name, *norm, *version;
	const char *dist_info;    /* the installed distribution it replaces, or NULL */
	const char *old_version;  /* its version */
	wg_vec old_libs;          /* const wg_lib*: that distribution's ELF files (env's) */
} plan_wheel;

typedef struct {
	const char *path; /* install path, lexically normalised */
	wg_lib *lib;
	size_t wheel;
} plan_lib;

struct wg_plan {
	wg_arena arena;
	const char *site, *site_real;
	wg_vec wheels;    /* plan_wheel */
	wg_vec libs;      /* plan_lib */
	wg_strmap by_path;   /* plan_lib path -> index */
	wg_strmap removed;   /* real paths of the replaced distributions' files */
	wg_strmap names;     /* the DT_NEEDED names the plan's libraries answer (soname, file) */
	wg_strmap tops;      /* the top-level modules and packages its wheels install */
	const char *torch_dir;
	bool active;
	wg_vec breaks;    /* wg_plan_break */
	size_t dists, roots, rechecked;
};
/** The plan's key for path (lexically normalised, the site's real path written as the site),
 * into out of n bytes. */
void wg_plan_key(const wg_plan *p, char *out, size_t n, const char *path);

/** What an install breaks: one load problem of an installed distribution's object. */
typedef struct {
	const char *wheel;   /* the input (scan path) that breaks it */
	const char *dist, *dist_version, *object; /* object: relative to its site directory */
	wg_ld_kind kind;
	const char *symbol, *version, *library;
	bool torch;
	const char *evidence; /* "defined by torch 2.11.0 but not by 2.12.0", or "" */
} wg_plan_break;
/** The breaks an active plan of e finds (NULL when none judged); *n their number. */
const wg_plan_break *wg_plan_breaks(const wg_env *e, size_t *n);
/** Whether an active plan's wheels install the top-level module top, or a distribution of
 * the normalised name norm. */
bool wg_plan_provides(const wg_env *e, const char *top);
bool wg_plan_installs(const wg_env *e, const char *norm);
/** Whether e has an install plan that scan (by its path) is part of. */
bool wg_plan_has(const wg_env *e, const char *scan_path);

#endif

/*
 * Internal declarations shared by the library's modules: memory helpers, the fact model
 * behind the public handles, and the narrow interfaces of the modules that wrap libzip,
 * libbfd, PCRE2 and libyaml (each of those is included by exactly one .c file).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_INTERNAL_H
#define WG_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wheelgate.h"

#define WG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors (error.c) ---- */

typedef struct {
	int code;
	char msg[1024];
} wg_err;

/** Sets err (if not NULL) and returns code; messages name the file and the problem. */
int wg_seterr(wg_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void wg_set_last_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- memory (util.c) ---- */

/** A bump allocator for the many small strings of one scan; freed all at once. */
typedef struct wg_arena_chunk wg_arena_chunk;
typedef struct {
	wg_arena_chunk *head;
} wg_arena;

void *wg_arena_alloc(wg_arena *a, size_t n);
char *wg_arena_strdup(wg_arena *a, const char *s);
char *wg_arena_strndup(wg_arena *a, const char *s, size_t n);
char *wg_arena_printf(wg_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wg_arena_free(wg_arena *a);

/** A growable array of fixed-size items. */
typedef struct {
	void *items;
	size_t len, cap, item_size;
} wg_vec;

void wg_vec_init(wg_vec *v, size_t item_size);
/** Appends one zeroed item and returns it, or NULL when out of memory. */
void *wg_vec_push(wg_vec *v);
void *wg_vec_at(const wg_vec *v, size_t i);
void wg_vec_free(wg_vec *v);

/** A list of strings owned by an arena. */
typedef struct {
	const char **v;
	size_t n, cap;
} wg_strlist;

int wg_strlist_add(wg_strlist *l, wg_arena *a, const char *s);
void wg_strlist_free(wg_strlist *l);

/** Growable text buffer. */
typedef struct {
	char *s;
	size_t len, cap;
} wg_buf;

int wg_buf_append(wg_buf *b, const char *s, size_t n);
void wg_buf_free(wg_buf *b);

bool wg_has_suffix(const char *s, const char *suffix);
bool wg_has_prefix(const char *s, const char *prefix);
/** Whether s is well-formed UTF-8 (what jansson accepts). */
bool wg_utf8_valid(const char *s);
/** Appends s to b with the WG_ESCAPE_* escapes (invalid UTF-8 always, controls on request). */
int wg_buf_escape(wg_buf *b, const char *s, unsigned flags);
/** A JSON string of s, invalid UTF-8 escaped as \xNN (json.c); never NULL but out of memory. */
struct json_t *wg_json_str(const char *s);

/* ---- hashing (hash.c, libcrypto) ---- */

typedef struct wg_sha256 wg_sha256;
wg_sha256 *wg_sha256_new(void);
void wg_sha256_update(wg_sha256 *h, const void *data, size_t n);
void wg_sha256_final(wg_sha256 *h, uint8_t out[32]);
void wg_sha256_free(wg_sha256 *h);
/** urlsafe base64 without padding, as RECORD writes digests; out needs 48 bytes for a sha256. */
void wg_b64url(char *out, const uint8_t *data, size_t n);

/* ---- shipped data (generated wg_data.c) and the YAML reader (yaml.c) ---- */

typedef struct wg_yaml_doc wg_yaml_doc;
typedef struct wg_yaml_node wg_yaml_node;

/** Parses YAML text; on error err says "name:line:col: what". */
int wg_yaml_parse(wg_yaml_doc **out, const char *name, const char *text, size_t len, wg_err *err);
void wg_yaml_free(wg_yaml_doc *doc);
const wg_yaml_node *wg_yaml_root(const wg_yaml_doc *doc);
bool wg_yaml_is_map(const wg_yaml_node *n);
bool wg_yaml_is_seq(const wg_yaml_node *n);
/** Scalar text, or NULL when n is not a scalar. */
const char *wg_yaml_scalar(const wg_yaml_node *n);
const wg_yaml_node *wg_yaml_get(const wg_yaml_node *map, const char *key);
size_t wg_yaml_len(const wg_yaml_node *n); /* items of a sequence or pairs of a map */
const wg_yaml_node *wg_yaml_item(const wg_yaml_node *seq, size_t i);
const char *wg_yaml_key(const wg_yaml_node *map, size_t i);
const wg_yaml_node *wg_yaml_value(const wg_yaml_node *map, size_t i);
/** "name:line:col" of a node, for messages. */
const char *wg_yaml_where(const wg_yaml_node *n, char *buf, size_t len);

/* ---- regular expressions (regex.c, the only user of PCRE2) ---- */

typedef struct wg_regex wg_regex;
typedef struct wg_rmatch wg_rmatch; /* match data: one per thread */
#define WG_RE_CASELESS 1u
#define WG_RE_EXTENDED 2u
int wg_regex_new(wg_regex **out, const char *pattern, unsigned flags, char *msg, size_t msglen,
		 size_t *erroff);
void wg_regex_free(wg_regex *re);
wg_rmatch *wg_rmatch_new(void);
void wg_rmatch_free(wg_rmatch *md);
/**
 * 1 on a match (caps gets ncaps start/end pairs, SIZE_MAX for unset groups), 0 on none,
 * WG_ELIMIT when a match limit stopped it or the subject is not valid UTF-8.
 */
int wg_regex_match(const wg_regex *re, wg_rmatch *md, const char *s, size_t len, size_t *caps,
		   int ncaps);

/* ---- classification of symbols (classify.c, PCRE2) ---- */

typedef struct wg_classifier wg_classifier;
int wg_classifier_load(wg_classifier **out, const char *name, const char *text, size_t len,
		       wg_err *err);
void wg_classifier_free(wg_classifier *c);
/** Per-thread matching state. */
typedef struct wg_matcher wg_matcher;
int wg_matcher_new(wg_matcher **out, const wg_classifier *c);
void wg_matcher_free(wg_matcher *m);
/**
 * string_abi bits of a symbol, whether it belongs to torch's C++ API, and whether it is an
 * entity of the C++ runtime itself (std, __gnu_cxx).
 */
void wg_classify_symbol(wg_matcher *m, const char *mangled, const char *demangled,
			unsigned *string_abi, bool *torch_facing, bool *runtime);
/** Runs the examples shipped with the classifier; 0 when all agree, else err says which. */
int wg_classifier_self_test(const wg_classifier *c, wg_err *err);

/* ---- the fact model ---- */

typedef struct {
	const char *name, *demangled, *symver;
	uint8_t hidden, defined, binding, type, string_abi, torch, runtime;
	bool surface; /* counted for the object's ABI: undefined, or defined outside the runtime */
} wg_sym;

typedef struct {
	const char *name;
	uint64_t offset, size, vma;
	bool has_contents, code;
} wg_section;

typedef struct {
	uint64_t offset;           /* file offset of the entry header */
	size_t container;          /* index in fatbin_containers */
	uint16_t kind, major, minor;
	uint32_t arch;
	char variant;              /* 0, 'a' or 'f' (from the entry flags) */
	uint64_t flags;
	uint32_t header_size, compressed_size;
	uint64_t payload_size, uncompressed_size;
	int compression;           /* WG_FATBIN_COMP_* */
	bool debug;
	const char *ptx_version, *ptx_target; /* from the PTX text, or NULL */
} wg_fatbin_entry;

typedef struct {
	uint64_t offset, size;
	const char *section;       /* the section holding it, or NULL */
	bool registered;           /* in .nv_fatbin / __nv_relfatbin */
	int wrapper_version;       /* 1, 2, or 0 when no .nvFatBinSegment wrapper points at it */
	size_t first_entry, entry_count;
} wg_fatbin_container;

typedef struct {
	const char *file, *version; /* "libc.so.6", "GLIBC_2.38" */
	bool weak;
} wg_verneed;

struct wg_object {
	const char *path;
	uint64_t size;
	const char *error;
	int elf_class, machine;
	const char *machine_name, *type;
	const char *soname, *rpath, *runpath;
	wg_strlist needed;
	wg_sym *syms;
	size_t nsyms, ndefined, nundefined;
	int is_extension, has_init;
	const char *module, *ext_suffix, *ext_interpreter, *ext_platform;
	unsigned counts[4]; /* torch_new, torch_old, other_new, other_old */
	wg_string_abi abi, torch_abi;
	wg_section *sections;
	size_t nsections;
	wg_vec fatbin_containers; /* wg_fatbin_container */
	wg_vec fatbin_entries;    /* wg_fatbin_entry */
	unsigned fatbin_wrappers;
	wg_vec verneeds;          /* wg_verneed: versions needed, per library file */
	wg_strlist verdefs;       /* versions defined (not the base) */
};

typedef struct {
	const char *name;
	uint64_t size, csize;
	const char *method;
	bool is_dir, is_elf, safe, hashed, read_ok;
	uint8_t sha256[32];
	const char *sha256_b64;
	wg_record_status record;
} wg_member;

typedef struct {
	int code;
	const char *where, *message;
} wg_problem;

typedef struct {
	const char *name; /* wheel member */
	char *text;       /* malloc'd, NUL-terminated */
	size_t len;
} wg_source;

struct wg_scan {
	wg_scan_kind kind;
	const wg_context *ctx;
	wg_vec sources;  /* wg_source: the wheel's Python files, for the checks */
	const char *path;
	wg_arena arena;
	/* wheel */
	const char *fields[WG_WHEEL_REQUIRES_PYTHON + 1];
	wg_strlist lists[WG_LIST_RECORD_ORPHANS + 1];
	bool has_record;
	wg_vec members;  /* wg_member */
	/* directory */
	wg_strlist wheels; /* *.whl files below it, each an input of its own */
	/* all */
	wg_vec objects;  /* wg_object* */
	wg_vec problems; /* wg_problem */
};

typedef struct wg_cuda_data wg_cuda_data;
int wg_cuda_data_load(wg_cuda_data **out, const char *name, const char *text, size_t len,
		      wg_err *err);
void wg_cuda_data_free(wg_cuda_data *d);
wg_run_how wg_image_runs_on(int kind, unsigned arch, char variant, unsigned cc_major,
			    unsigned cc_minor);

int wg_gpu_detect(const wg_context *ctx, wg_gpu *out, size_t max, size_t *n, char *why,
		  size_t whylen);

struct wg_context {
	wg_options opts;
	wg_classifier *classifier;
	wg_cuda_data *cuda;
};

struct wg_scanner {
	wg_context *ctx;
	wg_matcher *matcher;
	wg_err err;
	bool no_fatbin; /* indexing libraries for the loader needs no GPU code */
};

void wg_scan_add_problem(wg_scan *scan, int code, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
wg_object *wg_scan_new_object(wg_scan *scan, const char *path, uint64_t size);

/* ---- wheel filename (wheelname.c) ---- */

typedef struct {
	const char *name, *version, *public_version, *local, *build;
	wg_strlist py, abi, plat;
} wg_wheelname;

/** Parses a wheel filename (a basename); on failure returns WG_EFORMAT with the reason. */
int wg_wheelname_parse(wg_wheelname *out, wg_arena *a, const char *filename, wg_err *err);
/** PEP 503 normalisation into a new arena string: lower case, runs of -_. become '-'. */
char *wg_normalize_name(wg_arena *a, const char *name);

/* ---- core metadata headers (metadata.c) ---- */

typedef void (*wg_header_cb)(const char *key, const char *value, void *payload);
/** Reads RFC 822 style "Key: value" headers up to the first blank line. */
int wg_headers_parse(const char *text, size_t len, wg_arena *a, wg_header_cb cb, void *payload);

/* ---- RECORD (record.c, libcsv) ---- */

typedef struct {
	const char *path, *algo, *digest;
	int64_t size; /* -1 when empty */
	bool used;
} wg_record_row;

int wg_record_parse(wg_vec *rows, wg_arena *a, const char *text, size_t len, wg_err *err);

/* ---- Python extension names (pyext.c) ---- */

/** Fills the module facts of obj from its path inside a wheel or directory. */
void wg_pyext_classify(wg_object *obj, wg_arena *a, const char *relpath);

/* ---- zip (zipread.c, libzip) ---- */

typedef struct wg_zip wg_zip;
typedef struct {
	const char *name;
	uint64_t size, csize;
	const char *method;
	bool encrypted;
} wg_zip_entry;

int wg_zip_open_fd(wg_zip **out, int fd, const char *name, wg_err *err);
int wg_zip_open_buffer(wg_zip **out, const void *data, size_t len, const char *name, wg_err *err);
void wg_zip_close(wg_zip *z);
int64_t wg_zip_count(wg_zip *z);
int wg_zip_stat(wg_zip_entry *out, wg_zip *z, uint64_t i, wg_err *err);
/**
 * Streams member i through cb in chunks; fails when the data is longer or shorter than
 * declared, or the CRC or the compressed stream is bad.
 */
typedef int (*wg_chunk_cb)(const uint8_t *data, size_t n, void *payload);
int wg_zip_read(wg_zip *z, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
		wg_err *err);

/* ---- ELF (elf.c, the only user of libbfd) ---- */

/** Reads an ELF object held in memory into obj's facts. */
int wg_elf_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len, uint32_t max_symbols,
		wg_err *err);
bool wg_is_elf(const uint8_t *data, size_t len);
/** Demangles a C++ name as c++filt does; malloc'd, or NULL when it is not a C++ name. */
char *wg_demangle(const char *mangled);

/* ---- CUDA fatbins (fatbin.c) ---- */

typedef void (*wg_scan_problem_fn)(void *payload, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** Reads every fatbin container and entry of an ELF object in memory (sections known). */
int wg_fatbin_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		   wg_scan_problem_fn problem, void *payload);
void wg_fatbin_arch_name(char *buf, size_t n, int kind, unsigned arch, char variant);
const char *wg_fatbin_kind_name(int kind);
const char *wg_fatbin_compression_name(int c);

/* Applies the string-ABI classification to every symbol of obj. */
void wg_object_classify(wg_object *obj, wg_matcher *m);

/* ---- environments (env.c), their library index (lib.c, cache.c), the loader (resolve.c) ---- */

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
} wg_lib;

struct wg_env {
	wg_arena arena;
	wg_scanner *sc;
	const char *path, *site, *python, *python_version, *ext_suffix;
	const char *torch_dir, *torch_version, *torch_cuda;
	int torch_cxx11abi;
	wg_strlist lib_dirs, system_dirs, cuda_libs, native_packages;
	wg_vec libs;      /* wg_lib*, every library indexed, by path */
	size_t cache_hits;
	char *cache_dir;  /* NULL: no cache */
	bool preloaded;   /* the state after `import torch` is built */
	wg_vec loaded;    /* wg_lib*: what is loaded after `import torch`, in load order */
	size_t npython;   /* the first npython of loaded: the interpreter alone (no torch) */
	size_t limit;     /* how many of loaded the current resolution sees */
};

wg_lib *wg_lib_from_object(const wg_object *o, const char *path);
void wg_lib_index(wg_lib *l);
void wg_lib_free(wg_lib *l);
/** The definition of name that a reference (version or NULL) binds to, or NULL. */
const wg_libsym *wg_lib_lookup(const wg_lib *l, const char *name, const char *version);
/** Indexes the library at path (cache first); NULL when it cannot be read. */
const wg_lib *wg_env_load(wg_env *e, const char *path);
int wg_env_cache_open(wg_env *e, const char *dir);
void wg_env_cache_close(wg_env *e);
wg_lib *wg_cache_get(wg_env *e, const char *path, uint64_t size, uint64_t mtime);
void wg_cache_put(wg_env *e, const wg_lib *l);

typedef enum { WG_LD_MISSING_LIBRARY = 1, WG_LD_MISSING_VERSION, WG_LD_UNRESOLVED } wg_ld_kind;
typedef struct {
	wg_ld_kind kind;
	const char *object;   /* the object that fails (a member, or a library it loads) */
	const char *library;  /* the library missing / expected to provide it */
	const char *symbol, *version;
	unsigned string_abi;
	bool torch;
	bool system; /* a C/C++ runtime version a wheel object needs: WG-SYS-001 reports it */
	const char *root; /* the wheel object whose load (import) this is */
} wg_ld_issue;

/** Resolves obj (of scan) as the loader would in env, after `import torch` when with_torch
 * (the package imports torch), else with the interpreter alone. root: obj's record and
 * vlibs: every object's of the scan (wg_lib*), at their install paths (the analysis's). */
int wg_resolve(wg_env *e, const wg_scan *scan, const wg_object *obj, const wg_lib *root,
	       const wg_vec *vlibs, wg_arena *a, wg_vec *issues, bool *python_assumed,
	       bool with_torch);

/* ---- the target system's runtime versions (sysver.c) ---- */

bool wg_ver_parse(const char *v, char *family, size_t n, unsigned num[4], int *nn);
int wg_ver_cmp(const unsigned *a, int na, const unsigned *b, int nb);
/** Whether version, needed from lib, is a system runtime family (GLIBC from libc...). */
bool wg_sysver_family(const char *lib, const char *version, char *family, size_t n);
const void *wg_platform_policy(const char *tag, void *tmp);
size_t wg_policy_size(void);
const char *wg_policy_name(const void *p);
const wg_sysver *wg_policy_limit(const void *p, const char *family);
size_t wg_policy_count(void);
const void *wg_policy_at(size_t i);
const wg_sysver *wg_target_sysver(const wg_target *t, const char *family, bool *declared);
void wg_sysver_format(char *buf, size_t n, const wg_sysver *s);
#define WG_SYS_FAMILIES 4
typedef struct {
	wg_sysver v;                  /* the highest version needed, parsed */
	const char *version, *library; /* "GLIBC_2.38", "libc.so.6" */
} wg_highest;
typedef wg_highest wg_sysneed;
size_t wg_object_highest(const wg_object *o, wg_highest *out, size_t max);
size_t wg_object_sysneeds(const wg_object *o, wg_sysneed out[WG_SYS_FAMILIES]);
const char *wg_object_symbol_at(const wg_object *o, const char *version, size_t *count);
size_t wg_object_needs_beyond(const wg_object *o, const wg_sysver *have, char *buf, size_t len);

/* ---- how the wheel's Python code imports its modules (pyimports.c) ---- */

/* From the weakest to the most direct; a module imported several ways counts as the most
 * direct. */
enum {
	WG_IMPORT_NONE = 0,        /* never imported by the wheel's own code */
	WG_IMPORT_LAZY = 1,        /* inside a function */
	WG_IMPORT_GUARDED = 2,     /* under try:/except: */
	WG_IMPORT_CONDITIONAL = 3, /* under if/for/while */
	WG_IMPORT_INDIRECT = 4,    /* at module level of a module the package does not import */
	WG_IMPORT_REQUIRED = 5     /* run by `import <package>` (or a top-level module itself) */
};
typedef struct wg_pyimports wg_pyimports;
/** The dotted module of a .py member ("a/b.py" -> a.b, "a/__init__.py" -> a, with
 * .data/purelib|platlib/ removed); NULL for anything else. */
char *wg_py_module_of(wg_arena *a, const char *member, bool *is_init);
int wg_pyimports_build(wg_pyimports **out, const wg_scan *scan);
void wg_pyimports_free(wg_pyimports *im);
/** How module (dotted) is imported; file:line of the statement that decides, if any. */
int wg_pyimports_how(wg_pyimports *im, const char *module, const char **file, unsigned *line);
const char *wg_import_how_name(int how);
/** Whether any statement of the wheel imports top or a module inside it. */
bool wg_pyimports_mentions(const wg_pyimports *im, const char *top);

/* ---- rules and checks (rules.c, check.c, checks/) ---- */

typedef struct {
	const char *name;
	wg_regex **re;
	size_t n;
	const char **match, **no_match;
	size_t nmatch, nno_match;
} wg_pattern_list;

typedef struct {
	const char *key, *value; /* value: "known" or a literal */
} wg_when;

typedef struct wg_check_ctx wg_check_ctx;

typedef struct wg_check_kind {
	const char *name;
	int (*run)(wg_check_ctx *cc);
	const char *const *patterns; /* pattern lists it requires, NULL-terminated */
	const char *const *vars;     /* placeholders it fills, NULL-terminated */
	unsigned needs;              /* WG_FACT_* it does nothing without */
} wg_check_kind;

/* Facts a rule may need ("when:" keys and check kinds' needs); unknown ones make the rule
 * "not applied", listed in the report. */
#define WG_FACT_PYTHON 1u
#define WG_FACT_TORCH 2u
#define WG_FACT_CUDA 4u
#define WG_FACT_CXX11ABI 8u
#define WG_FACT_GPU 16u
#define WG_FACT_ENV 32u      /* a Python environment (--env) for the loader */
#define WG_FACT_FILENAME 64u /* a wheel's filename facts: name, version, tags */

typedef struct {
	const char *id, *check, *title, *message, *fix, *source;
	wg_severity severity;
	int sev[3];       /* per wg_profile (install, publish): a wg_severity, or -1 for off */
	bool enabled;
	const wg_check_kind *kind;
	wg_pattern_list *lists;
	size_t nlists;
	wg_regex *scope_objects, *scope_members;
	wg_when *when;
	size_t nwhen;
} wg_rule;

struct wg_ruleset {
	wg_arena arena;
	wg_vec rules;   /* wg_rule */
	wg_vec regexes; /* wg_regex*, owned */
};

const wg_check_kind *wg_check_kind_find(const char *name);

#define WG_MAX_VARS 32
typedef struct {
	struct {
		const char *key, *value;
	} v[WG_MAX_VARS];
	int n;
} wg_vars;
void wg_vars_set(wg_vars *vs, const char *key, const char *value);

typedef struct {
	const char *rule, *title, *message, *fix, *path, *member, *symbol, *file;
	unsigned line;
	wg_severity severity;
} wg_finding;

typedef struct {
	const char *rule, *lacks, *message;
} wg_not_applied;

struct wg_report {
	wg_arena arena;
	const char *path;
	wg_profile profile;
	wg_vec findings; /* wg_finding */
	wg_vec not_applied; /* wg_not_applied */
};

struct wg_check_ctx {
	const wg_scan *scan;
	const wg_target *target;
	const wg_rule *rule;
	wg_severity severity; /* the rule's severity in this profile */
	wg_profile profile;
	wg_rmatch *md;
	wg_report *report;
	/* The loader's verdict on every object, computed once for the ld-* kinds. */
	bool ld_done, python_assumed;
	wg_vec ld_issues; /* wg_ld_issue */
	/* The facts derived once for this input (analysis.h): load roles, imports, ... */
	struct wg_analysis *an;
	const struct wg_role *roles; /* one per scan object, once wg_check_roles succeeded */
};

/* How the user reaches one object of the wheel, for the install question. */
typedef struct wg_role {
	bool root;       /* judged as a load of its own: an extension module, or a library
			    nothing in the wheel loads through DT_NEEDED */
	int how;         /* the strongest way it is loaded: WG_IMPORT_* of the extension
			    modules whose loads bring it in; WG_ROLE_ALONE for a library only
			    loaded on its own */
	const char *module, *file; /* the extension deciding `how`, the import statement */
	unsigned line;
	const char *via; /* for a library loaded on its own through another: that one */
} wg_role;
#define WG_ROLE_ALONE (-1)
#define WG_ROLE_UNSET (-2)
/** Fills cc->roles (needs the wheel's Python sources and DT_NEEDED entries). */
int wg_check_roles(wg_check_ctx *cc);
/**
 * The severity a finding about a load failure of member gets: the rule's when the package
 * cannot be imported without it, at most a warning when it is optional (an extension imported
 * only under try/except, lazily, conditionally or never by the package; a library nothing in
 * the wheel loads through DT_NEEDED). why: a sentence saying so, or "".
 */
wg_severity wg_load_severity(wg_check_ctx *cc, const char *member, const char **why);
/** wg_load_severity over the roots whose loads give the ld issues of kind on object. */
wg_severity wg_ld_severity(wg_check_ctx *cc, const char *object, int kind, const char **why);
/** wg_emit with another severity than the rule's (never a higher one). */
int wg_emit_sev(wg_check_ctx *cc, wg_severity sev, const wg_vars *vars, const char *member,
		const char *symbol, const char *file, unsigned line);
/** Runs the simulated loader over the scan's objects once (needs target->env). */
int wg_check_ld(wg_check_ctx *cc);

/** Whether any pattern of the rule's list `list` matches subject; caps as wg_regex_match. */
bool wg_rule_matches(wg_check_ctx *cc, const char *list, const char *subject, size_t *caps,
		     int ncaps);
/** Whether the rule's scope (objects: / members:) admits subject; no scope admits all. */
bool wg_rule_in_scope(wg_check_ctx *cc, bool object, const char *subject);
/** Adds a finding of the current rule with its message and fix expanded from vars. */
int wg_emit(wg_check_ctx *cc, const wg_vars *vars, const char *member, const char *symbol,
	    const char *file, unsigned line);
/** The report's arena, for strings that vars point to. */
char *wg_check_printf(wg_check_ctx *cc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Shared helpers of the check kinds (check.c). */
const char *wg_object_member(const wg_scan *scan, const wg_object *o);
bool wg_object_is_cuda(const wg_object *o);
void wg_abi_name_for(char *buf, size_t n, int cxx11abi);

#endif

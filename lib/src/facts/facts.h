/*
 * facts/: the readers that turn bytes into facts, and the fact model they fill: a scan (a wheel,
 * an ELF object or a directory) with its members, objects, symbols, fatbins, problems and the
 * Python sources kept for the checks. Readers: the wheel (wheel.c, record.c), ELF (elf.c,
 * libbfd), CUDA fatbins (fatbin.c), symbol classes (symbol_class.c), Python extension names
 * (pyext.c), metadata headers, wheel filenames, RECORD verification (record.c), PEP 825
 * variant.json (variant.c, jansson) and Python imports
 * (pyimports.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_FACTS_H
#define WG_FACTS_H

#include <pthread.h>

#include "input/input.h"

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

/* A PT_LOAD program header: where the loader maps a file range (what fatbin.c maps the
 * wrappers' pointers through, as the CUDA runtime sees them). */
typedef struct {
	uint64_t vaddr, offset, filesz;
} wg_segment;

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
	wg_segment *segments;     /* the PT_LOAD segments, in program header order */
	size_t nsegments;
	wg_vec fatbin_containers; /* wg_fatbin_container */
	wg_vec fatbin_entries;    /* wg_fatbin_entry */
	size_t fatbin_entries_more; /* entries past max_fatbin_entries: counted, not kept */
	size_t fatbin_entries_max;  /* while reading: the bound (SIZE_MAX: none) */
	unsigned fatbin_wrappers;
	wg_vec verneeds;          /* wg_verneed: versions needed, per library file */
	wg_strlist verdefs;       /* versions defined (not the base) */
	/* How the section headers disagree with what the loader reads (the dynamic segment,
	 * which the facts above come from), or NULL: rule WG-ELF-001. */
	const char *sections_lie;
};

typedef struct {
	const char *name;
	uint64_t size, csize;
	const char *method;
	bool is_dir, is_elf, safe, hashed, read_ok;
	bool symlink; /* a symbolic link by its Unix external attributes (S_IFLNK) */
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

/* A Hugging Face hub kernel build variant (kernel.c): a directory named as kernel-builder names
 * them (build/torch29-cxx11-cu128-x86_64-linux, torch28-metal-aarch64-darwin, torch-universal)
 * and its metadata.json; what the name and the metadata claim, to be checked against the
 * objects. */
typedef struct {
	const char *name;                  /* the directory's name; NULL: not a variant */
	unsigned torch_major, torch_minor; /* 0.0 when the name gives none (torch-universal) */
	int cxx11;                         /* 1 cxx11, 0 cxx98, -1 not named */
	const char *compute;               /* "cu", "rocm", "xpu", "metal", "cpu", or NULL */
	const char *compute_label;         /* "cu128" as named */
	unsigned cuda_major, cuda_minor;   /* from cuXY[Z], else 0 */
	const char *cpu, *os;              /* "x86_64", "linux", or NULL */
	/* metadata.json */
	bool has_metadata;
	const char *backend;               /* backend.type, or NULL */
	wg_strlist archs;                  /* backend.archs as written ("8.0", "9.0a") */
} wg_kernel_variant;

/** Parses a variant directory's name (a basename) into out (strings in a); false when it is
 * none. */
bool wg_kernel_variant_parse(wg_kernel_variant *out, wg_arena *a, const char *name);
/** Reads dir's metadata.json into scan->kernel (problems are recorded, never fatal). */
void wg_kernel_variant_read(wg_scan *scan, const char *dir);

/* The WG_E* codes a problem may have (0 .. -15), for the counts per code. */
#define WG_PROBLEM_CODES 16

struct wg_scan {
	wg_scan_kind kind;
	const wg_context *ctx;
	wg_vec sources;  /* wg_source: the wheel's Python files, for the checks */
	const char *path;
	wg_arena arena;
	int64_t file_size; /* bytes of the file or buffer read; -1 unknown (wg_scan_file_size) */
	const char *stored_by; /* facts read back: the wheelgate version that stored them */
	/* wheel */
	const char *fields[WG_WHEEL_FIELD_END_];
	wg_strlist lists[WG_LIST_END_];
	bool has_record;
	bool repackaged; /* installed by a system's packaging (wg_scan_is_repackaged) */
	/* Python sources past max_python_bytes/_lines were not kept: the member where that began,
	 * and why (NULL when every source was); the import checks then saw part of the code. */
	const char *python_partial, *python_partial_why;
	wg_vec members;  /* wg_member */
	/* directory */
	wg_strlist wheels; /* *.whl files and kernel build variant directories below it, each
			    * an input of its own */
	wg_kernel_variant kernel; /* the directory is a kernel build variant (kernel.name) */
	/* all */
	wg_vec objects;  /* wg_object* */
	wg_vec problems; /* wg_problem */
	/* Problems past max_problems of their code (by -code; WG_PROBLEM_CODES of them), counted
	 * not kept (wg_scan_problems_more), and those kept of each code. */
	size_t problems_more[WG_PROBLEM_CODES], problems_kept[WG_PROBLEM_CODES];
	/* CUDA fatbin entries kept by all objects (the per-input max_fatbin_entries) */
	size_t fatbin_entries_kept;
	wg_read_stats read_stats; /* how the members were read (wheel_stream.c) */
};

typedef struct wg_cuda_data wg_cuda_data; /* model/ */

struct wg_context {
	wg_options opts;
	wg_classifier *classifier;
	wg_cuda_data *cuda;
	/* the threads (opts.jobs), made on first use: wg_context_pool() */
	pthread_mutex_t pool_lock;
	bool pool_made;
	wg_pool *pool;
};

/** The context's pool (made now if it was not), or NULL when opts.jobs is 1 or no thread
 * could be made: jobs then run on the caller. */
wg_pool *wg_context_pool(const wg_context *ctx);

struct wg_scanner {
	wg_context *ctx;
	wg_matcher *matcher;
	wg_err err;
};

/** Adds a problem; past the context's max_problems of its code it is counted, not kept. */
void wg_scan_add_problem(wg_scan *scan, int code, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/** How many problems of code (a WG_E*) were counted past max_problems, not kept. */
size_t wg_scan_problems_more_of(const wg_scan *scan, int code);
wg_object *wg_scan_new_object(wg_scan *scan, const char *path, uint64_t size);
wg_scan *wg_scan_new(wg_scan_kind kind, const char *path, const wg_context *ctx);
/** Whether scan carries wheel metadata (a wheel or an installed distribution): what the
 * checks ask instead of the input kind. */
static inline bool wg_scan_is_dist(const wg_scan *scan)
{
	return scan->kind == WG_SCAN_WHEEL || scan->kind == WG_SCAN_INSTALLED;
}
/** Reads one ELF image into a new object of scan; problems are recorded, not returned. */
int wg_scan_add_elf(wg_scan *scan, wg_scanner *s, const char *path, const char *relpath,
		    const uint8_t *data, size_t len);
typedef struct wg_sparse wg_sparse; /* sparse.c, below */
/** The same for an image of a member read sparsely (the fatbin magics found as it passed). */
int wg_scan_add_elf_sparse(wg_scan *scan, wg_scanner *s, const char *path, const char *relpath,
			   wg_sparse *sp, uint64_t len);

/* ---- wheel filename (wheelname.c) ---- */

typedef struct {
	const char *name, *version, *public_version, *local, *build;
	const char *variant; /* PEP 825 variant label (after the platform tag), or NULL */
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

/* ---- RECORD verification (record.c; its CSV: input/record_csv.c) ---- */

/** RECORD verification: every member against its row; orphans listed. */
void wg_record_verify(wg_scan *scan, const char *name, const char *text, size_t len);
/** Its two halves: RECORD's rows parsed and sorted (any thread, its own arena)... */
int wg_record_rows(wg_vec *rows, wg_arena *a, const char *text, size_t len, size_t max_rows,
		   wg_err *err);
/** ...then every member against them (rows are taken; prc and why: what parsing said). */
void wg_record_verify_rows(wg_scan *scan, const char *name, wg_vec *rows, int prc,
			   const char *why);
/** Without a usable RECORD, nothing read can be verified. */
void wg_record_mark_none(wg_scan *scan);

/* ---- Python extension names (pyext.c) ---- */

/** Fills the module facts of obj from its path inside a wheel or directory. */
void wg_pyext_classify(wg_object *obj, wg_arena *a, const char *relpath);

/* ---- ELF (elf.c, the only user of libbfd) ---- */

/** Reads an ELF object held in memory into obj's facts. */
int wg_elf_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len, uint32_t max_symbols,
		wg_err *err);
bool wg_is_elf(const uint8_t *data, size_t len);
/** "x.so", "libx.so.1.2": a name the loader or the importer would take for an ELF object. */
bool wg_looks_like_shared_object(const char *name);
/** Demangles a C++ name as c++filt does; malloc'd, or NULL when it is not a C++ name. */
char *wg_demangle(const char *mangled);

/* ---- an ELF member read as it streams, keeping only what its readers need (sparse.c) ---- */

typedef struct {
	uint64_t size;      /* the member's bytes */
	uint64_t kept;      /* bytes held at the end (whole pages) */
	uint64_t refetched; /* bytes streamed again by the passes after the first */
	unsigned passes;    /* passes after the first */
} wg_sparse_stats;
/** What wg_sparse_refill returns once it has every byte it was missing: stop the stream. */
#define WG_SPARSE_DONE WG_ZSTREAM_STOP
/** An image of len bytes that is address space only; its first pass begins. */
int wg_sparse_new(wg_sparse **out, uint64_t len);
void wg_sparse_free(wg_sparse *sp);
/** The first pass: each block of the member in order (off: its offset). */
int wg_sparse_take(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off);
/** The image the readers run on: the kept bytes in place, zeros elsewhere. */
const uint8_t *wg_sparse_image(const wg_sparse *sp);
/** Whether page (4096 bytes) holds the member's bytes (tests/unit/check_sparse.c). */
bool wg_sparse_page_kept(const wg_sparse *sp, uint64_t page);
/** The 8-aligned offsets of the fatbin container magic, in order; NULL when there were more
 * than it keeps (then the fatbin reader scans the image). */
const uint64_t *wg_sparse_fatbin_magics(const wg_sparse *sp, size_t *n);
/** After the first pass: its records ordered for wg_sparse_at, and the pages libbfd reads only
 * to see whether a DWARF section is compressed (no fact depends on them) left out of what
 * wg_sparse_missing says. */
int wg_sparse_end_pass(wg_sparse *sp);
/** A reader read every byte of a range by itself (the fatbin scans of a whole file): the pages
 * wg_sparse_end_pass left out are no longer left out. */
void wg_sparse_read_all(wg_sparse *sp);
/** Bytes [off, off + n) kept apart from the image (fatbin headers and PTX heads), or NULL;
 * *got (may be NULL): how many bytes the record holds from off on. */
const uint8_t *wg_sparse_at(const wg_sparse *sp, uint64_t off, uint64_t n, uint64_t *got);
/** After a run of the readers: the bytes of the pages it read that were not kept (0: none),
 * which the next pass fetches; all: every page not kept. */
int64_t wg_sparse_missing(wg_sparse *sp, bool all);
/** Another pass, counted: each block in order until it returns WG_SPARSE_DONE. */
void wg_sparse_pass(wg_sparse *sp);
int wg_sparse_refill(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off);
void wg_sparse_stats_get(const wg_sparse *sp, wg_sparse_stats *out);

/* ---- CUDA fatbins (fatbin.c) ---- */

typedef void (*wg_scan_problem_fn)(void *payload, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** Reads every fatbin container and entry of an ELF object in memory (sections known). */
int wg_fatbin_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		   wg_scan_problem_fn problem, void *payload);
/** Reads at most max entries (SIZE_MAX: no bound); further ones are counted in
 * obj->fatbin_entries_more and a problem names max_fatbin_entries. */
int wg_fatbin_read_max(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
		       size_t max, wg_scan_problem_fn problem, void *payload);
/** The same for the image of an object read sparsely: the scan for containers outside the
 * registered sections taken from the magics it found, headers read from its records. */
int wg_fatbin_read_sparse(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len,
			  size_t max, wg_sparse *sp, wg_scan_problem_fn problem,
			  void *payload);
/** Applies the input's budget of fatbin entries (max_fatbin_entries, all its objects
 * together) to o, an object just added to scan: past it, o's later entries are dropped and
 * counted, with a problem. */
void wg_fatbin_budget(wg_scan *scan, wg_object *o);
void wg_fatbin_arch_name(char *buf, size_t n, int kind, unsigned arch, char variant);
const char *wg_fatbin_kind_name(int kind);
const char *wg_fatbin_compression_name(int c);

/* Applies the string-ABI classification to every symbol of obj. */
void wg_object_classify(wg_object *obj, wg_matcher *m);

/* ---- PEP 825 wheel variants (variant.c, jansson) ---- */

/** Reads a wheel's .dist-info/variant.json (member) into scan's variant fields and list. */
void wg_variant_read(wg_scan *scan, const char *member, const char *text, size_t len);
/** Appends "namespace :: feature :: value" for each property of a variant's properties
 * (a json_t object); on failure why says what is wrong. */
int wg_variant_properties(wg_strlist *out, wg_arena *a, const void *json_obj, char *why,
			  size_t n);
/** Whether prop ("ns :: feature :: value") is of namespace ns and feature; *value its value. */
bool wg_variant_is(const char *prop, const char *ns, const char *feature, const char **value);

/* ---- the wheel reader (wheel.c) ---- */

/** Reads the opened wheel z into scan (a wheel scan). */
int wg_wheel_read(wg_scan *scan, wg_scanner *s, const wg_members *src);

/* ---- Python source as its tokenizer sees it (pytoken.c) ---- */

enum { WG_PYT_NAME, WG_PYT_OP, WG_PYT_STRING, WG_PYT_NUMBER };
typedef struct {
	const char *s;  /* into the source text */
	uint32_t len, line;
	uint8_t kind;   /* WG_PYT_* */
} wg_pytok;
/* A logical line: its tokens (toks[first .. first + n)), the column of its first token
 * (tabs to multiples of 8) and the physical line it starts on. */
typedef struct {
	size_t first, n;
	uint32_t indent, line;
} wg_pyline;
typedef struct {
	wg_vec toks;  /* wg_pytok */
	wg_vec lines; /* wg_pyline */
} wg_pysrc;
/** Tokenizes len bytes of Python source (comments dropped; strings, brackets and
 * continuation lines as the language reference says) into out's logical lines. */
int wg_py_tokenize(wg_pysrc *out, const char *text, size_t len);
void wg_pysrc_free(wg_pysrc *src);

/* ---- how the wheel's Python code imports its modules (pyimports.c) ---- */

/* From the weakest to the most direct; a module imported several ways counts as the most
 * direct. */
enum {
	WG_IMPORT_NONE = 0,        /* never imported by the wheel's own code (or only for type
				    * checkers: `if TYPE_CHECKING:`) */
	WG_IMPORT_LAZY = 1,        /* inside a function (or under `if __name__ == "__main__":`) */
	WG_IMPORT_GUARDED = 2,     /* under a try: whose handlers catch ImportError */
	WG_IMPORT_CONDITIONAL = 3, /* under if/for/while/match, or in an except: handler */
	WG_IMPORT_INDIRECT = 4,    /* at module level of a module the package does not import */
	WG_IMPORT_REQUIRED = 5     /* run by `import <package>` (or a top-level module itself) */
};
typedef struct wg_pyimports wg_pyimports;

/* One import statement's effect: `import a.b` (IMPORT, target a.b), `from m import x`
 * (FROM: target m, name x), `from m import *` (STAR: target m). A view: the model keeps
 * edges packed; its strings live as long as the model. */
enum { WG_PYEDGE_IMPORT, WG_PYEDGE_FROM, WG_PYEDGE_STAR };
typedef struct {
	const char *from;   /* the importing module (dotted) */
	const char *target; /* the module imported (dotted, absolute) */
	const char *name;   /* FROM: the name imported from target (a submodule or an attribute) */
	const char *file;   /* the member the statement is in */
	unsigned line;
	uint8_t ctx;        /* WG_IMPORT_* (never INDIRECT: that is a property of reachability) */
	uint8_t kind;       /* WG_PYEDGE_* */
} wg_pyedge;

/* What a dotted name is in the wheel: nothing, a module (.py, sourceless .pyc, an extension),
 * a regular package (with __init__), or a directory without __init__ (a namespace package). */
enum { WG_PYMOD_NONE, WG_PYMOD_MODULE, WG_PYMOD_PACKAGE, WG_PYMOD_NAMESPACE };

/** The dotted module of a .py member ("a/b.py" -> a.b, "a/__init__.py" -> a, with
 * .data/purelib|platlib/ removed); NULL for anything else. */
char *wg_py_module_of(wg_arena *a, const char *member, bool *is_init);
/** The absolute module of `from <m> import` in a file of package pkg: leading dots climb
 * from pkg (`from ..x` in a.b.c is a.x); NULL when out of memory. */
char *wg_py_resolve_from(wg_arena *a, const char *pkg, const char *m, size_t ml);
int wg_pyimports_build(wg_pyimports **out, const wg_scan *scan);
void wg_pyimports_free(wg_pyimports *im);
/** How module (dotted) is imported; file:line of the statement that decides, if any. */
int wg_pyimports_how(wg_pyimports *im, const char *module, const char **file, unsigned *line);
const char *wg_import_how_name(int how);
/** Whether any statement of the wheel imports top or a module inside it. */
bool wg_pyimports_mentions(const wg_pyimports *im, const char *top);
/** The import statements' effects, in the wheel's order (file, then position). */
size_t wg_pyimports_count(const wg_pyimports *im);
bool wg_pyimports_edge(const wg_pyimports *im, size_t i, wg_pyedge *out);
/** WG_PYMOD_* of a dotted name, from the wheel's members. */
int wg_pyimports_kind(const wg_pyimports *im, const char *module);
/** The top-level modules and packages the wheel ships (namespace directories too), sorted. */
const wg_strlist *wg_pyimports_tops(const wg_pyimports *im);
/**
 * Whether `from module import name` finds name bound in module's namespace (its __init__ for a
 * package) by the module's own code at module level: a def, class, assignment, import, for or
 * with target, a string in __all__, a star import of a module of the wheel that binds it.
 * 1 bound, 0 not, -1 cannot be known (a module-level __getattr__, globals() or sys.modules
 * written, exec, a star import from outside the wheel, the source not examined). before_line:
 * when the asking statement is in the module's own file, only what is bound before that line
 * (0: the whole module, as after its import finished).
 */
int wg_pyimports_binds(const wg_pyimports *im, const char *module, const char *name,
		       unsigned before_line);
/** Whether package module's submodules may come from elsewhere than its directory (its
 * __path__ is changed, sys.modules is written, or the wheel installs an import hook). */
bool wg_pyimports_open_package(const wg_pyimports *im, const char *module);
/** What a user imports: each regular package or module of the wheel with only namespace
 * packages above it (top-level ones, and cuda.core below a namespace cuda/), into out. */
int wg_pyimports_roots(const wg_pyimports *im, wg_arena *a, wg_strlist *out);
/** Whether the wheel's code changes sys.path (insert, append, extend, assignment, or
 * site.addsitedir): top-level modules may then come from any directory. */
bool wg_pyimports_syspath(const wg_pyimports *im);
/** Whether some member's path has a directory or module of this name, at any depth. */
bool wg_pyimports_anywhere(const wg_pyimports *im, const char *name);
/** Marks what `import <root>` runs, for each of roots: the module-level imports outside
 * try/except, functions and conditions, followed from module to module (parents included). */
int wg_pyimports_reach(wg_pyimports *im, const char *const *roots, size_t n);
/** After wg_pyimports_reach: whether importing some root runs module. */
bool wg_pyimports_reached(const wg_pyimports *im, const char *module);
/** The member holding module's code ("a/b.py", "a/__init__.py"), or NULL. */
const char *wg_pyimports_file(const wg_pyimports *im, const char *module);

#endif

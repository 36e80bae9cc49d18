/*
 * wheelgate: catch broken CUDA/C++ Python wheels before they are installed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of the public API: Scanning and the facts of a scan: scanners and scans, wheels, members,
 * problems, ELF objects and symbols, CUDA fatbins, GPUs and where code can run, and the
 * inspect documents (JSON and text).
 * Programs include <wheelgate.h>, whose opening comment gives the conventions (names,
 * errors, versioned structs, ownership, threads); this part compiles alone too.
 */
#ifndef WHEELGATE_FACTS_H
#define WHEELGATE_FACTS_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Scanning                                                                                 */

typedef struct wg_scanner wg_scanner;
typedef struct wg_scan wg_scan;
typedef struct wg_object wg_object;

/** A scanner reads inputs into facts. One per thread; it keeps a reference to ctx. */
WG_API int wg_scanner_new(wg_scanner **out, wg_context *ctx);
WG_API void wg_scanner_free(wg_scanner *scanner);
/** The message of the scanner's last failure ("" when none); never NULL. Valid until the
 * next call with the scanner. */
WG_API const char *wg_scanner_error(const wg_scanner *scanner);

/**
 * Reads a wheel, an ELF object or a directory (recursively: every ELF file in it).
 * The kind is decided by content, not by name. Problems inside a readable input (a corrupt
 * member, an unsafe name, a RECORD mismatch) do not fail the call: they are listed in the
 * scan (wg_scan_problem). The call fails only when the input as a whole cannot be read.
 */
WG_API int wg_scan_path(wg_scan **out, wg_scanner *scanner, const char *path);
/** Same, from an open file descriptor (not closed; its offset is not used). */
WG_API int wg_scan_fd(wg_scan **out, wg_scanner *scanner, int fd, const char *name);
/** Same, from memory; the buffer must stay valid until the call returns. */
WG_API int wg_scan_buffer(wg_scan **out, wg_scanner *scanner, const void *data, size_t len,
			  const char *name);
WG_API void wg_scan_free(wg_scan *scan);

/** What was read: a wheel (a zip), one ELF object, a directory (its ELF objects; its wheels
 * are listed by wg_scan_wheel_count()), or an installed distribution (a `*.dist-info`
 * directory: the files its RECORD lists, read as the wheel's members would be). */
typedef enum {
	WG_SCAN_WHEEL = 1, WG_SCAN_OBJECT = 2, WG_SCAN_DIRECTORY = 3, WG_SCAN_INSTALLED = 4
} wg_scan_kind;
/** Whether the input carries wheel metadata (WHEEL, METADATA, RECORD, members): a wheel or an
 * installed distribution. The checks ask this, not the kind. */
WG_API int wg_scan_has_wheel_metadata(const wg_scan *scan);

WG_API wg_scan_kind wg_scan_get_kind(const wg_scan *scan);
/** 1 for an installed distribution that no wheel installer installed: its INSTALLER is absent
 * or names something else than pip, uv, poetry, pdm or pipenv (Debian's dist-packages have
 * none, conda writes "conda"). Its files may differ from RECORD (WG_RECORD_REPACKAGED) and
 * RECORD may list files installed elsewhere (RECORD orphans, not read problems). 0 else. */
WG_API int wg_scan_is_repackaged(const wg_scan *scan);
/** The path or name the scan was made from (owned by the scan). */
WG_API const char *wg_scan_get_path(const wg_scan *scan);
/** The size in bytes of the file (wg_scan_path, wg_scan_fd) or buffer (wg_scan_buffer) the
 * scan read, kept in stored facts; -1 when not known (a directory, an installed
 * distribution, facts stored by an older wheelgate). */
WG_API int64_t wg_scan_file_size(const wg_scan *scan);
/** For a scan read back from stored facts (wg_facts_load, wg_scan_from_facts): the version of
 * the wheelgate that stored them ("unknown" when the document does not say); NULL for a scan
 * read from its input. Facts depend on the reader that made them: a caller that still has
 * the input reads it again when this is not wg_version_string(). */
WG_API const char *wg_scan_stored_by(const wg_scan *scan);
/**
 * The wheels (files named *.whl) found below a directory scanned with wg_scan_path, sorted as
 * the walk met them; a directory scan holds only its loose ELF objects, and each wheel is an
 * input of its own (scan it with wg_scan_path). 0 for scans of other kinds. A directory with
 * neither a wheel nor an ELF object below it fails wg_scan_path with WG_ENOTFOUND.
 * Hugging Face kernel build variant directories (build/torch29-cxx11-cu130-x86_64-linux,
 * docs/kernels.md) are listed here too, each an input of its own, and not walked into; a
 * variant directory is read even when it holds no object (torch-universal).
 */
WG_API size_t wg_scan_wheel_count(const wg_scan *scan);
/** The i-th of those paths (owned by the scan), or NULL. */
WG_API const char *wg_scan_wheel_path(const wg_scan *scan, size_t i);

/* ---- wheel facts ---- */

typedef enum {
	WG_WHEEL_NAME,            /**< distribution name from the filename */
	WG_WHEEL_VERSION,         /**< full version from the filename, local label included */
	WG_WHEEL_PUBLIC_VERSION,  /**< the version without its local label */
	WG_WHEEL_LOCAL_VERSION,   /**< the local label (after '+'), or NULL */
	WG_WHEEL_BUILD_TAG,       /**< build tag, or NULL */
	WG_WHEEL_FILENAME_ERROR,  /**< why the filename is not a valid wheel name, or NULL */
	WG_WHEEL_DIST_INFO,       /**< the .dist-info directory, or NULL */
	WG_WHEEL_WHEEL_VERSION,   /**< WHEEL: Wheel-Version */
	WG_WHEEL_GENERATOR,       /**< WHEEL: Generator */
	WG_WHEEL_ROOT_IS_PURELIB, /**< WHEEL: Root-Is-Purelib, as written */
	WG_WHEEL_META_NAME,       /**< METADATA: Name */
	WG_WHEEL_META_VERSION,    /**< METADATA: Version */
	WG_WHEEL_REQUIRES_PYTHON, /**< METADATA: Requires-Python */
	/** an installed distribution's INSTALLER (its first line), or NULL when it has none */
	WG_WHEEL_INSTALLER,
	/** the PEP 825 variant label at the end of the filename, or NULL */
	WG_WHEEL_VARIANT_LABEL,
	/** the variant label that .dist-info/variant.json describes, or NULL without one */
	WG_WHEEL_VARIANT_JSON_LABEL,
	/** why .dist-info/variant.json could not be used (not JSON, not one variant), or NULL */
	WG_WHEEL_VARIANT_ERROR,
	WG_WHEEL_FIELD_END_ /**< not a field: one past the last */
} wg_wheel_field;

/**
 * A distribution name as pip compares them (PEP 503): lower case, each run of '-', '_' and
 * '.' as one '-' ("Flash_Attn" and "flash.attn" are "flash-attn"). Normalizes name's first
 * len bytes into out (n bytes of room, terminated); the normalized length, WG_ELIMIT (out
 * empty) when it does not fit, WG_EINVAL for a NULL out or n == 0.
 */
WG_API int wg_name_normalize(char *out, size_t n, const char *name, size_t len);

/** A string fact of a wheel (owned by the scan), or NULL when absent (or when the scan is
 * not a wheel). */
WG_API const char *wg_wheel_get(const wg_scan *scan, wg_wheel_field field);

typedef enum {
	WG_LIST_PYTHON_TAGS,    /**< filename python tags (py2, py3, cp312 ...) */
	WG_LIST_ABI_TAGS,       /**< filename abi tags */
	WG_LIST_PLATFORM_TAGS,  /**< filename platform tags */
	WG_LIST_WHEEL_TAGS,     /**< WHEEL: every Tag line */
	WG_LIST_REQUIRES_DIST,  /**< METADATA: Requires-Dist */
	WG_LIST_TOP_LEVEL,      /**< top_level.txt */
	WG_LIST_RECORD_ORPHANS, /**< RECORD rows that name no member */
	/** variant.json's properties, "namespace :: feature :: value" (PEP 825), in file order */
	WG_LIST_VARIANT_PROPERTIES,
	WG_LIST_END_ /**< not a list: one past the last */
} wg_wheel_list;

WG_API size_t wg_wheel_list_count(const wg_scan *scan, wg_wheel_list list);
/** The i-th item of a list (owned by the scan), or NULL. */
WG_API const char *wg_wheel_list_item(const wg_scan *scan, wg_wheel_list list, size_t i);

/** Whether the wheel has a RECORD (1) or not (0). */
WG_API int wg_wheel_has_record(const wg_scan *scan);

typedef enum {
	WG_RECORD_OK = 0,          /**< hash and size agree with RECORD */
	WG_RECORD_UNHASHED = 1,    /**< listed without a hash (RECORD itself, signatures) */
	WG_RECORD_MISSING = 2,     /**< the member is not listed in RECORD */
	WG_RECORD_BAD_HASH = 3,    /**< the hash differs */
	WG_RECORD_BAD_SIZE = 4,    /**< the size differs */
	WG_RECORD_NOT_READ = 5,    /**< the member could not be read (see problems) */
	WG_RECORD_NO_RECORD = 6,   /**< the wheel has no RECORD */
	/** the hash or size differs, in an installed distribution that a system's packaging
	 * installed (wg_scan_is_repackaged): its build rewrote the file (stripped it) after
	 * writing RECORD, so RECORD cannot say whether it is what was installed */
	WG_RECORD_REPACKAGED = 7,
	/** RECORD lists it, but the installed distribution (a wheel installer's) lacks the file:
	 * removed since it was installed. Never a `.pyc` (Python writes and removes its caches
	 * itself: an absent one is left out of the members), never a zip member */
	WG_RECORD_ABSENT = 8
} wg_record_status;

typedef struct wg_member_info {
	unsigned int version;
	const char *name;
	uint64_t size;            /**< uncompressed */
	uint64_t compressed_size;
	const char *method;       /**< "store", "deflate", "bzip2", ... */
	int is_dir;
	int is_elf;               /**< starts with \x7fELF (a member that could not be read
				   *  whole: its first bytes, when they could be read) */
	int is_safe;              /**< 0 for absolute paths, ".." components, backslashes ... */
	wg_record_status record;
	const char *sha256;       /**< urlsafe-base64 sha256 as RECORD writes it, or NULL */
} wg_member_info;
#define WG_MEMBER_INFO_VERSION 1
#define WG_MEMBER_INFO_INIT { WG_MEMBER_INFO_VERSION, NULL, 0, 0, NULL, 0, 0, 0, WG_RECORD_OK, NULL }

WG_API size_t wg_scan_member_count(const wg_scan *scan);
WG_API int wg_scan_member(wg_member_info *out, const wg_scan *scan, size_t i);

/* ---- problems: parts of the input that could not be read or are unsafe ---- */

typedef struct wg_problem_info {
	unsigned int version;
	int code;            /**< a WG_E* code */
	const char *where;   /**< member or file, or NULL for the input as a whole */
	const char *message; /**< full text, naming the file and the problem */
} wg_problem_info;
#define WG_PROBLEM_INFO_VERSION 1
#define WG_PROBLEM_INFO_INIT { WG_PROBLEM_INFO_VERSION, 0, NULL, NULL }

WG_API size_t wg_scan_problem_count(const wg_scan *scan);
WG_API int wg_scan_problem(wg_problem_info *out, const wg_scan *scan, size_t i);
/** Problems past wg_options.max_problems of their kind: counted, not kept (the rules count
 * them as findings all the same). */
WG_API size_t wg_scan_problems_more(const wg_scan *scan);

/** How the members of a wheel were read (wg_options.max_member_held): what it cost, never a
 * fact about the wheel (the facts are the same however it was read). */
typedef struct wg_read_stats {
	unsigned int version;
	uint64_t streamed;         /**< members larger than max_member_held, streamed */
	uint64_t streamed_bytes;   /**< their bytes */
	uint64_t sparse_objects;   /**< ELF objects among them, read sparsely */
	uint64_t sparse_bytes;     /**< their bytes */
	uint64_t kept_bytes;       /**< of those, the bytes kept for the readers (whole pages) */
	uint64_t kept_max;         /**< the most kept for one object */
	uint64_t extra_passes;     /**< passes over an object after its first, for bytes missed */
	uint64_t extra_objects;    /**< objects that needed one */
	uint64_t refetched_bytes;  /**< bytes streamed again by those passes */
} wg_read_stats;
#define WG_READ_STATS_VERSION 1
#define WG_READ_STATS_INIT { WG_READ_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
WG_API int wg_scan_read_stats(wg_read_stats *out, const wg_scan *scan);

/* ---- ELF objects ---- */

WG_API size_t wg_scan_object_count(const wg_scan *scan);
/** The i-th ELF object (wheel member or file), or NULL. Owned by the scan. */
WG_API const wg_object *wg_scan_object(const wg_scan *scan, size_t i);

typedef enum { WG_ABI_NONE = 0, WG_ABI_NEW = 1, WG_ABI_OLD = 2, WG_ABI_MIXED = 3 } wg_string_abi;
WG_API const char *wg_string_abi_name(wg_string_abi abi); /* "none", "new", "old", "mixed" */

typedef struct wg_object_info {
	unsigned int version;
	const char *path;         /**< member name or file path */
	uint64_t size;
	const char *error;        /**< why it could not be read, or NULL */
	int elf_class;            /**< 32 or 64 */
	int machine;              /**< e_machine */
	const char *machine_name; /**< "x86_64", "aarch64", ... */
	const char *type;         /**< "rel", "exec", "dyn", "core", ... */
	const char *soname;       /**< or NULL */
	const char *rpath;        /**< DT_RPATH as written, or NULL */
	const char *runpath;      /**< DT_RUNPATH as written, or NULL */
	size_t needed_count;
	size_t symbol_count;
	size_t defined_count;
	size_t undefined_count;
	/* Python extension module facts (from the file name and PyInit_<name>). */
	int is_extension;
	const char *module;       /**< dotted module name, e.g. "flash_attn_2_cuda" */
	const char *ext_suffix;   /**< ".cpython-312-x86_64-linux-gnu.so", ".abi3.so", ".so" */
	const char *ext_interpreter; /**< "cpython-312", "abi3", "pypy310-pp73", or NULL for plain .so */
	const char *ext_platform; /**< "x86_64-linux-gnu", or NULL */
	int has_init;             /**< exports PyInit_<module> */
	/*
	 * C++ std::string ABI facts, counted over the ABI surface: undefined dynamic symbols and
	 * defined ones outside the C++ runtime (std::, __gnu_cxx::), whose instantiations or a
	 * statically linked libstdc++ carry both ABIs whatever the object's own code uses.
	 */
	unsigned torch_new, torch_old; /**< c10/at/torch/caffe2 symbols with new/old-ABI strings */
	unsigned other_new, other_old; /**< the rest */
	wg_string_abi abi;        /**< from all four counts */
	wg_string_abi torch_abi;  /**< from the torch-facing counts alone */
} wg_object_info;
#define WG_OBJECT_INFO_VERSION 1
#define WG_OBJECT_INFO_INIT                                                                      \
	{ WG_OBJECT_INFO_VERSION, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, \
	  NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, WG_ABI_NONE, WG_ABI_NONE }

WG_API int wg_object_get_info(wg_object_info *out, const wg_object *obj);
/** The i-th DT_NEEDED library of obj (owned by its scan), or NULL. */
WG_API const char *wg_object_needed(const wg_object *obj, size_t i);

typedef enum { WG_BIND_GLOBAL = 0, WG_BIND_WEAK = 1, WG_BIND_UNIQUE = 2, WG_BIND_LOCAL = 3 } wg_binding;
typedef enum {
	WG_SYMTYPE_NOTYPE = 0, WG_SYMTYPE_FUNC = 1, WG_SYMTYPE_OBJECT = 2,
	WG_SYMTYPE_TLS = 3, WG_SYMTYPE_IFUNC = 4, WG_SYMTYPE_COMMON = 5
} wg_symbol_type;

/** String-ABI marks of a symbol: a bit set. */
#define WG_SYM_NEW_STRING 1u /**< carries std::__cxx11::basic_string (new ABI) */
#define WG_SYM_OLD_STRING 2u /**< carries the old-ABI std::basic_string (Ss, Sb...) */

typedef struct wg_symbol_info {
	unsigned int version;
	const char *name;       /**< mangled */
	const char *demangled;  /**< or NULL when not a C++ name */
	const char *symver;     /**< symbol version ("GLIBC_2.38"), or NULL */
	int symver_hidden;      /**< 1 for a non-default (name@VER) version */
	int defined;
	wg_binding binding;
	wg_symbol_type type;
	unsigned string_abi;    /**< WG_SYM_* bits */
	int torch_facing;       /**< in c10/at/torch/caffe2 */
	int runtime;            /**< an entity of the C++ runtime (std, __gnu_cxx) */
	int abi_surface;        /**< counted for the object's ABI (undefined, or not runtime) */
} wg_symbol_info;
#define WG_SYMBOL_INFO_VERSION 1
#define WG_SYMBOL_INFO_INIT \
	{ WG_SYMBOL_INFO_VERSION, NULL, NULL, NULL, 0, 0, WG_BIND_GLOBAL, WG_SYMTYPE_NOTYPE, 0, 0, 0, 0 }

WG_API int wg_object_symbol(wg_symbol_info *out, const wg_object *obj, size_t i);
/** The symbol versions obj needs: (library, version) pairs ("libc.so.6", "GLIBC_2.38"),
 * both owned by its scan. */
WG_API size_t wg_object_version_count(const wg_object *obj);
WG_API int wg_object_version(const wg_object *obj, size_t i, const char **library,
			     const char **version);
/** The highest version of each family obj needs ("GLIBC_2.38 GLIBCXX_3.4.21 ..."); returns
 * how many families. */
/** Orders two symbol versions: "GLIBC_2.4" < "GLIBC_2.38" (numerically within a family);
 * versions of different families, or not of the FAMILY_N.N form, by strcmp. */
WG_API int wg_version_compare(const char *a, const char *b);
WG_API size_t wg_object_highest_versions(const wg_object *obj, char *buf, size_t len);
WG_API const char *wg_binding_name(wg_binding b);
WG_API const char *wg_symbol_type_name(wg_symbol_type t);
WG_API const char *wg_record_status_name(wg_record_status s);

/* ---- CUDA code: fatbin containers and entries ---- */

typedef enum { WG_FATBIN_PTX = 1, WG_FATBIN_SASS = 2, WG_FATBIN_LTOIR = 8 } wg_fatbin_kind;
typedef enum {
	WG_FATBIN_COMP_NONE = 0, WG_FATBIN_COMP_LZ4 = 1, WG_FATBIN_COMP_ZSTD = 2,
	WG_FATBIN_COMP_LEGACY = 3
} wg_fatbin_compression;

typedef struct wg_fatbin_container_info {
	unsigned int version;
	uint64_t offset;          /**< file offset of the container header */
	uint64_t size;            /**< header and entries */
	const char *section;      /**< the ELF section holding it, or NULL */
	int registered;           /**< in .nv_fatbin or __nv_relfatbin (else found by the scan) */
	int wrapper_version;      /**< 1 module, 2 device-linked, 0 no .nvFatBinSegment wrapper */
	size_t first_entry, entry_count;
} wg_fatbin_container_info;
#define WG_FATBIN_CONTAINER_INFO_VERSION 1
#define WG_FATBIN_CONTAINER_INFO_INIT { WG_FATBIN_CONTAINER_INFO_VERSION, 0, 0, NULL, 0, 0, 0, 0 }

typedef struct wg_fatbin_entry_info {
	unsigned int version;
	wg_fatbin_kind kind;
	unsigned arch;            /**< SM number: 75, 80, 90, 100, 120 ... */
	char variant;             /**< 0, 'a' (arch-specific) or 'f' (family), from the flags */
	char arch_name[16];       /**< "sm_90a", "compute_80", "lto_90" */
	unsigned major, minor;    /**< PTX ISA version for PTX (9.0); code version for SASS */
	uint64_t flags;
	int debug;
	wg_fatbin_compression compression;
	uint64_t offset;          /**< file offset of the entry header */
	uint64_t payload_size, compressed_size, uncompressed_size;
	size_t container;         /**< index of its container */
	const char *ptx_version;  /**< ".version" of the PTX text, or NULL */
	const char *ptx_target;   /**< ".target" of the PTX text, or NULL */
} wg_fatbin_entry_info;
#define WG_FATBIN_ENTRY_INFO_VERSION 1
#define WG_FATBIN_ENTRY_INFO_INIT                                                              \
	{ WG_FATBIN_ENTRY_INFO_VERSION, WG_FATBIN_SASS, 0, 0, {0}, 0, 0, 0, 0,                   \
	  WG_FATBIN_COMP_NONE, 0, 0, 0, 0, 0, NULL, NULL }

WG_API size_t wg_object_fatbin_container_count(const wg_object *obj);
WG_API int wg_object_fatbin_container(wg_fatbin_container_info *out, const wg_object *obj,
				      size_t i);
WG_API size_t wg_object_fatbin_entry_count(const wg_object *obj);
/** Entries past wg_options.max_fatbin_entries: counted, not read (a problem says so). */
WG_API size_t wg_object_fatbin_entries_more(const wg_object *obj);
WG_API int wg_object_fatbin_entry(wg_fatbin_entry_info *out, const wg_object *obj, size_t i);
WG_API const char *wg_fatbin_kind_str(wg_fatbin_kind kind);           /* "sass", "ptx", "lto-ir" */
WG_API const char *wg_fatbin_compression_str(wg_fatbin_compression c); /* "none", "lz4", "zstd" */

/* ---- GPUs and where code can run ---- */

typedef struct wg_gpu {
	unsigned int version;
	unsigned cc_major, cc_minor; /**< compute capability */
	const char *name;            /**< "H100", or NULL when given as sm_XY or X.Y */
} wg_gpu;
#define WG_GPU_VERSION 1
#define WG_GPU_INIT { WG_GPU_VERSION, 0, 0, NULL }

/**
 * Reads "sm_89", "compute_89", "8.9" or a GPU name ("L4", "H100", "RTX 4090"; the names are data
 * in rules/gpu/cuda.yaml). WG_ENOTFOUND for an unknown name, with the reason in wg_error_last().
 */
WG_API int wg_gpu_parse(wg_gpu *out, const wg_context *ctx, const char *spec);
WG_API size_t wg_gpu_known_count(const wg_context *ctx);
WG_API int wg_gpu_known(wg_gpu *out, const wg_context *ctx, size_t i);

/** How an image runs on a GPU, best first. */
typedef enum {
	WG_RUN_NONE = 0,        /**< it cannot */
	WG_RUN_PTX_JIT = 1,     /**< PTX compiled by the driver at load time */
	WG_RUN_SASS_FAMILY = 2, /**< family-specific SASS (sm_100f on 10.3) */
	WG_RUN_SASS_MAJOR = 3,  /**< SASS of the same major, lower minor (sm_80 on 8.6) */
	WG_RUN_SASS_EXACT = 4   /**< SASS for exactly this GPU */
} wg_run_how;
WG_API const char *wg_run_how_name(wg_run_how how);
WG_API wg_run_how wg_fatbin_entry_runs_on(const wg_fatbin_entry_info *e, const wg_gpu *gpu);

/** Whether an object can run on a GPU, over every image it holds. */
typedef enum {
	WG_RUNS_NONE = 0, /**< no image of the object runs there */
	WG_RUNS_SOME = 1, /**< some registered modules (or all driver-loaded fatbins) cannot */
	WG_RUNS_ALL = 2   /**< every registered module can, and the driver-loaded fatbins offer one */
} wg_runs;
WG_API const char *wg_runs_name(wg_runs runs);

/** Which images a verdict rests on (bits of wg_gpu_verdict.from). */
#define WG_IMAGES_REGISTERED 1u /**< modules the CUDA runtime registers (.nvFatBinSegment) */
#define WG_IMAGES_DRIVER 2u     /**< fatbins the library loads itself through the driver API */
/** "registered", "driver-loaded", "registered+driver-loaded" or "none". */
WG_API const char *wg_images_from_name(unsigned from);

typedef struct wg_gpu_verdict {
	unsigned int version;
	int is_cuda;                /**< the object carries GPU code */
	/**
	 * How its kernel modules run: the worst over the registered modules that have an image;
	 * when none has, the best driver-loaded image (the library picks by device); NONE when
	 * no image runs. Libraries keep arch-specific modules (cuBLAS has two with Blackwell
	 * code only), so runnable_containers < kernel_containers is "some modules cannot run here".
	 */
	wg_run_how how;
	size_t kernel_containers;   /**< fatbins the CUDA runtime registers with kernels */
	size_t runnable_containers; /**< ... of which have an image for the GPU */
	/**
	 * Fatbins the library loads itself through the driver API: containers outside the
	 * registered sections, and the .nv_fatbin of a linked object with no wrapper at all
	 * (libcufft.so.12: its kernels live in .ldata).
	 */
	size_t other_containers;
	size_t other_runnable;
	unsigned ptx_isa_major, ptx_isa_minor; /**< highest PTX ISA relied on for a JIT, or 0 */
	wg_runs runs;                          /**< over every image, registered or driver-loaded */
	wg_run_how other_how;                  /**< the best driver-loaded image */
	unsigned from;                         /**< WG_IMAGES_* bits: the images that run there */
} wg_gpu_verdict;
#define WG_GPU_VERDICT_VERSION 1
#define WG_GPU_VERDICT_INIT { WG_GPU_VERDICT_VERSION, 0, WG_RUN_NONE, 0, 0, 0, 0, 0, 0, \
			      WG_RUNS_NONE, WG_RUN_NONE, 0 }

/**
 * The distinct architectures of obj's entries of one kind, sorted ("sm_80 sm_90 sm_90a"):
 * from the registered containers (where = 1), the ones outside them (where = 0), or all
 * (where = -1). Returns how many; buf gets as many as fit, space-separated.
 */
WG_API size_t wg_object_arch_set(const wg_object *obj, wg_fatbin_kind kind, int where, char *buf,
				 size_t len);

/** Whether and how obj's kernels can run on gpu (fatbin-format.md, section 6). */
WG_API int wg_object_gpu_verdict(wg_gpu_verdict *out, const wg_object *obj, const wg_gpu *gpu);
/** The CUDA release that introduced a PTX ISA version (its driver is the oldest that JITs it). */
WG_API int wg_ptx_isa_cuda(const wg_context *ctx, unsigned isa_major, unsigned isa_minor,
			   unsigned *cuda_major, unsigned *cuda_minor);

/* ---- JSON ---- */

#define WG_JSON_PRETTY 1u       /**< indent */
#define WG_JSON_NO_SYMBOLS 2u   /**< omit the per-symbol lists (counts stay) */
#define WG_JSON_ABI_SYMBOLS 4u  /**< list only ABI-surface symbols that carry a std::string */
#define WG_JSON_NO_ENTRIES 8u   /**< omit per-entry fatbin lists (containers and sets stay) */
#define WG_JSON_FACTS 16u       /**< add "facts": everything the checks read (docs/facts-store.md) */

/**
 * The facts of one scan as a JSON object (one item of "inputs" in docs/inspect-json.md).
 * *out is NUL-terminated; free it with wg_free().
 */
WG_API int wg_scan_to_json(char **out, const wg_scan *scan, unsigned int flags);

/** Same, with a verdict for each of the ngpus GPUs on every CUDA object. */
WG_API int wg_scan_to_json_gpus(char **out, const wg_scan *scan, unsigned int flags,
				const wg_gpu *gpus, size_t ngpus);

/** The schema id of the inspect document: "wheelgate.inspect/1". */
#define WG_INSPECT_SCHEMA "wheelgate.inspect/1"

/**
 * The inspect document of several inputs (docs/inspect-json.md), built as they are read: each
 * scan may be freed once added. flags: WG_JSON_* for every item (WG_JSON_PRETTY indents the
 * document); the ngpus GPUs are copied. Errors: wg_error_last().
 */
typedef struct wg_inspect wg_inspect;
WG_API int wg_inspect_new(wg_inspect **out, unsigned int flags, const wg_gpu *gpus, size_t ngpus);
WG_API void wg_inspect_free(wg_inspect *doc);
/** Appends the facts of scan as the next item of "inputs". */
WG_API int wg_inspect_add(wg_inspect *doc, const wg_scan *scan);
/** Appends an input that could not be read: its path, code (WG_E*) and message (escaped). */
WG_API int wg_inspect_add_error(wg_inspect *doc, const char *path, int code, const char *message);
/** The document as NUL-terminated JSON text in *out; free it with wg_free(). */
WG_API int wg_inspect_format(char **out, const wg_inspect *doc);

/* ---- Text ---- */

#define WG_TEXT_COLOR 1u        /**< terminal colour escapes (bold, red, yellow, green, dim) */
#define WG_TEXT_NO_SYMBOLS 2u   /**< no per-symbol lines (counts stay) */
#define WG_TEXT_ABI_SYMBOLS 4u  /**< only the ABI-surface symbols that carry a std::string */
#define WG_TEXT_MEMBERS 16u     /**< a line per wheel member with its RECORD status */

/**
 * The facts of one scan as the text `wheelgate inspect` prints for people: a block that ends
 * with an empty line; without WG_TEXT_NO_SYMBOLS or WG_TEXT_ABI_SYMBOLS every symbol is listed.
 * Text from the input (names, metadata, messages) has control characters and invalid UTF-8
 * escaped as wg_escape(WG_ESCAPE_CONTROL) does. With ngpus GPUs, a line per GPU on every CUDA
 * object says whether and how it runs there (gpus is only read during the call).
 * *out is NUL-terminated; free it with wg_free(). Errors: wg_error_last().
 */
WG_API int wg_scan_format_text(char **out, const wg_scan *scan, unsigned int flags,
			       const wg_gpu *gpus, size_t ngpus);

#ifdef __cplusplus
}
#endif
#endif /* WHEELGATE_FACTS_H */

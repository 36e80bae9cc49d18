/*
 * wheelgate: catch broken CUDA/C++ Python wheels before they are installed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The one public header. Conventions:
 *  - every name starts with wg_ / WG_; objects are opaque handles with _new/_free, and
 *    _free(NULL) is safe;
 *  - functions return WG_OK (0) or a negative WG_E* code; out-params come first.
 *
 * Errors: every failing call fills this thread's error record, wg_error_last_info(): the
 * code it returned, a class (what failed: wg_error_class) and the message, which
 * wg_error_last() returns alone. A successful call leaves the record as it was (libgit2's
 * rule): read it after a negative return, on the thread that made the call.
 *  - a call made with a scanner (wg_scan_path/_fd/_buffer, wg_check, wg_env_open, ...) that
 *    fails on its input or data also leaves the message on the scanner: wg_scanner_error()
 *    (which such a call clears when it starts);
 *  - a call refused for its arguments (a NULL where a handle or out-param is needed, a
 *    struct version this library does not read) has class WG_ERROR_CLASS_INVALID, scanner
 *    calls included: there may be no handle to hold the message;
 *  - notices of a call that succeeds are never put in the record: they stay on the object
 *    the call set up (wg_target_notice()) or in the report (wg_report_not_applied());
 *  - an index past a count returns WG_ENOTFOUND and leaves the record as it was (ask the
 *    count first);
 *  - findings about a wheel are facts in a report, never errors; parts of an input that
 *    cannot be read are problems of the scan (wg_scan_problem), the call succeeds.
 *
 * Versioned structs: every struct passed in or out begins with `unsigned int version`;
 * initialise it with the matching _INIT macro (or set version to its *_VERSION). Fields are
 * only ever appended, and a *_VERSION goes up when they are. The library accepts every
 * version from 1 to the one it was built with and reads or fills only the fields that
 * version has, so a program built against an older header keeps working; version 0 or a
 * newer version than the library knows fails with WG_EINVAL ("wg_X version N is not
 * supported (this library reads 1 to M)" in wg_error_last()). wg_target is opaque instead.
 *
 * Ownership: memory handed over through `char **out` (JSON and text documents, wg_escape,
 * self-test reports) belongs to the caller: free it with wg_free(). Every other pointer a
 * call returns, or leaves in a struct it fills, is borrowed and must not be freed:
 *  - constant text (wg_strerror, wg_error_name, wg_version_string, the *_name and *_str
 *    functions) lives as long as the program;
 *  - wg_error_last() and wg_error_last_info() live until the next failing call on the same
 *    thread (or wg_error_clear()), and
 *    wg_scanner_error() until the next call with that scanner or its _free;
 *  - the facts of a scan (wg_scan_get_path, wg_wheel_get, wg_wheel_list_item,
 *    wg_scan_wheel_path, wg_scan_object and everything read from the object, the strings
 *    of wg_member_info, wg_problem_info, wg_object_info, wg_symbol_info and the fatbin
 *    infos) live until wg_scan_free() of that scan;
 *  - a report's strings (wg_finding_info, wg_not_applied_info) live until wg_report_free();
 *    their rule ids belong to the ruleset, which must outlive the report;
 *  - wg_rule_info's strings live until wg_ruleset_free(); wg_env_info's and
 *    wg_env_list_item's until wg_env_free(); a wg_gpu's name until wg_context_free() of the
 *    context that named it.
 *
 * Threads: a wg_context (the loaded data and options) is immutable once created and may be
 * shared by any number of threads; it must outlive the scanners and scans made with it. A
 * wg_ruleset is immutable and may be shared too. A wg_scanner is used by one
 * thread at a time; create one per thread. A wg_scan (the facts of one input) and a
 * wg_report are read-only and may be read from any thread. A wg_target, once set up, only
 * is read by checks (it borrows the wg_env given to wg_target_set_env). A wg_env loads libraries lazily: one thread at a time.
 */
#ifndef WHEELGATE_H
#define WHEELGATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WG_BUILDING_LIBRARY)
#define WG_API __attribute__((visibility("default")))
#else
#define WG_API
#endif

#define WG_VERSION_MAJOR 0
#define WG_VERSION_MINOR 1
#define WG_VERSION_PATCH 0

/** Error codes. Findings about a wheel are facts, not errors. */
typedef enum {
	WG_OK = 0,
	WG_ERROR = -1,        /**< generic failure */
	WG_ENOMEM = -2,       /**< out of memory */
	WG_EINVAL = -3,       /**< invalid argument or option */
	WG_EIO = -4,          /**< the input could not be read */
	WG_EFORMAT = -5,      /**< the input is malformed (zip, ELF, metadata, ...) */
	WG_ELIMIT = -6,       /**< a safety limit was exceeded (size, count, ratio) */
	WG_EUNSAFE = -7,      /**< unsafe content (e.g. a member named ../x) */
	WG_ENOTFOUND = -8,    /**< no such file, member or item */
	WG_EUNSUPPORTED = -9, /**< a kind of input wheelgate does not read */
	WG_EDATA = -10,       /**< broken rule or data file */
	WG_EINTEGRITY = -11   /**< contents disagree with their declared hash or size */
} wg_error_code;

/** Text for an error code; never NULL. */
WG_API const char *wg_strerror(int code);
/** A short stable token for an error code ("format", "limit", "unsafe", ...); never NULL. */
WG_API const char *wg_error_name(int code);
/** The message of this thread's last failed call (see Errors above; before 0.2 a scanner
 * call's failure left it as it was); never NULL. Valid until the next failing call on this
 * thread. The same text as wg_error_last_info()->message. */
WG_API const char *wg_error_last(void);

/** What a failed call was doing when it failed (the "class" of libgit2's git_error): with
 * the code, which says what went wrong, it tells an embedder what to do about it without
 * matching message text. Values are only ever appended. */
typedef enum {
	WG_ERROR_CLASS_NONE = 0,  /**< no error on this thread yet, or wg_error_clear() */
	WG_ERROR_CLASS_NOMEM,     /**< out of memory, wherever (code WG_ENOMEM) */
	WG_ERROR_CLASS_INVALID,   /**< a call refused for its arguments: a NULL handle or
				       out-param, a struct version this library does not read,
				       an unknown enum value */
	WG_ERROR_CLASS_DATA,      /**< the data files built into the library (wg_context_new) */
	WG_ERROR_CLASS_RULES,     /**< rule files, rule selectors, rulesets (wg_ruleset_*) */
	WG_ERROR_CLASS_TARGET,    /**< target facts, specs and profiles (wg_target_*) */
	WG_ERROR_CLASS_GPU,       /**< GPU names and compute capabilities (wg_gpu_*) */
	WG_ERROR_CLASS_VARIANTS,  /**< variant index files (wg_target_add_variants) */
	WG_ERROR_CLASS_STORE,     /**< the facts store, file hashes (wg_facts_*, wg_file_sha256),
				   * scan records read back (wg_scanrec_parse) */
	/* The classes of scanner calls (wg_scan_*, wg_check, wg_env_*): */
	WG_ERROR_CLASS_INPUT,     /**< opening an input: the file, its kind, an installed
				       distribution's files */
	WG_ERROR_CLASS_ZIP,       /**< the zip archive of a wheel */
	WG_ERROR_CLASS_WHEEL,     /**< a wheel's name, metadata and RECORD */
	WG_ERROR_CLASS_ELF,       /**< an ELF object and its symbols */
	WG_ERROR_CLASS_FATBIN,    /**< a CUDA fatbin */
	WG_ERROR_CLASS_ENV        /**< an environment (wg_env_open, wg_env_set_install) */
} wg_error_class;

/** One error record: this thread's last failure that has no scanner to hold it. */
typedef struct {
	unsigned int version;  /**< WG_ERROR_VERSION of the library that filled it */
	int code;              /**< a wg_error_code; WG_OK when there is none */
	wg_error_class klass;  /**< what failed; WG_ERROR_CLASS_NONE when there is none */
	const char *message;   /**< never NULL; "" when there is none */
} wg_error;
#define WG_ERROR_VERSION 1

/**
 * This thread's error record (the libgit2 rule, as git_error_last()): never NULL; set by
 * every failing call (see Errors above), with the code that call returned, its class and its
 * message (a scanner call's message is wg_scanner_error()'s too). A successful call leaves it as it was, so it
 * may describe an earlier failure: read it only when a call has just returned a negative
 * code, and tell success from failure by that code. wg_error_clear() empties it. The record
 * and its message are the library's, per thread, valid until the next failing call on this
 * thread or wg_error_clear(). A program built against a newer header reads a field only
 * when version says the record has it (fields are only ever appended).
 */
WG_API const wg_error *wg_error_last_info(void);
/** Empties this thread's record: code WG_OK, class NONE, message "". */
WG_API void wg_error_clear(void);
/** A short stable token for a class ("none", "nomem", "invalid", "data", "rules", "target",
 * "gpu", "variants", "store", "input", "zip", "wheel", "elf", "fatbin", "env"); "unknown" for
 * another value; never NULL. */
WG_API const char *wg_error_class_name(int klass);
/** "0.1.0" */
WG_API const char *wg_version_string(void);
/** "Did you mean": the one of names[0..n) nearest to word (case-insensitive edit distance),
 * or NULL when none is close enough to be a typo of it. */
WG_API const char *wg_suggest(const char *word, const char *const *names, size_t n);
/** Frees memory the library handed to the caller (JSON text and the like). */
WG_API void wg_free(void *ptr);

/** Escapes of wg_escape(): bytes that are not well-formed UTF-8 become \xNN (always); with
 * WG_ESCAPE_CONTROL also control characters (C0 and DEL as \xNN, C1 as \u00NN) and the
 * characters that reorder or break lines ("Trojan Source": U+061C, U+200E/F, U+2028..U+202E,
 * U+2066..U+2069 as \uNNNN), so that text from a wheel cannot drive a terminal or hide what
 * it says. */
#define WG_ESCAPE_UTF8 1u
#define WG_ESCAPE_CONTROL 2u
/** s as valid UTF-8 (and with flags, free of control characters) in *out; free with wg_free. */
WG_API int wg_escape(char **out, const char *s, unsigned int flags);

/* ---------------------------------------------------------------------------------------- */
/* Options and context                                                                     */

/** Progress of long work (large members): what, bytes done, bytes total. */
typedef void (*wg_progress_cb)(const char *what, uint64_t done, uint64_t total, void *payload);

typedef struct wg_options {
	unsigned int version;
	/** Largest uncompressed size of a single wheel member read (default 4 GiB). */
	uint64_t max_member_size;
	/** Largest sum of uncompressed member sizes of one wheel (default 16 GiB). */
	uint64_t max_total_size;
	/** Largest number of members of one wheel (default 100000). */
	uint32_t max_members;
	/** Largest uncompressed:compressed ratio of a member over 1 MiB (default 250). */
	uint32_t max_ratio;
	/** Largest number of dynamic symbols read from one object (default 4000000). */
	uint32_t max_symbols;
	/** Largest number of files visited in one directory scan (default 200000). */
	uint32_t max_files;
	/** Called during long reads; may be NULL. */
	wg_progress_cb progress;
	void *progress_payload;
	/* version 2: bounds on what hostile input can make the library hold or do (issue 12).
	 * Every limit hit is a problem naming the file, the limit and the option. */
	/** Bytes of metadata members (.dist-info WHEEL, METADATA, RECORD, top_level.txt) held
	 * for one wheel at once (default 64 MiB). */
	uint64_t max_text_total;
	/** Bytes of Python source kept for the import checks, per wheel (default 64 MiB). */
	uint64_t max_python_bytes;
	/** Lines of Python source kept for the import checks, per wheel (default 2000000). */
	uint32_t max_python_lines;
	/** Rows of RECORD read (default 1000000). */
	uint32_t max_record_rows;
	/** Largest rule file read (default 4 MiB); rule files may not use YAML aliases. */
	uint64_t max_rule_file;
	/** Largest input read from stdin (default 2 GiB; the CLI's --max-stdin). */
	uint64_t max_stdin;
	/** Largest library-index cache entry read (default 64 MiB; larger ones are rebuilt). */
	uint64_t max_cache_entry;
	/* version 3: threads (issue 14) */
	/** Threads that read the members of one wheel, the caller's included (default 0: as many
	 * as the CPUs this process may run on; 1: the caller's thread alone). The threads are
	 * made on first use, belong to the context and are shared by every scanner made with
	 * it; results are the same for any number. */
	uint32_t jobs;
	/* version 4: work and output per input (issue 25). What is past these bounds is counted,
	 * never dropped from the counts: a report's verdict and its error/warning counts are the
	 * same with any bound. */
	/** Findings of one rule on one input kept in its report (default 100); further ones are
	 * counted (wg_report_more: "and 68,950 more like this"). 0: all kept. */
	uint32_t max_rule_findings;
	/** Findings of all rules on one input kept (default 10000); further ones are counted as
	 * max_rule_findings' are. 0: all kept. */
	uint32_t max_findings;
	/** Problems of one kind (one WG_E* code) kept for one input (default 1000); further ones
	 * are counted (wg_scan_problems_more) and one problem says how many. 0: all kept. */
	uint32_t max_problems;
	/** CUDA fatbin entries read from one input, all its objects together (default 250000):
	 * past it, entries are counted (wg_object_fatbin_entries_more), not kept, and a problem
	 * names the limit. */
	uint32_t max_fatbin_entries;
	/** Fatbin entries listed per object in inspect's JSON (default 1000); the rest are counted
	 * ("entries_not_listed"). 0: all listed. */
	uint32_t max_listed_entries;
} wg_options;

#define WG_OPTIONS_VERSION 4
#define WG_OPTIONS_INIT                                                                     \
	{ WG_OPTIONS_VERSION, 4ULL << 30, 16ULL << 30, 100000, 250, 4000000, 200000, NULL, NULL, \
	  64ULL << 20, 64ULL << 20, 2000000, 1000000, 4ULL << 20, 2ULL << 30, 64ULL << 20, 0,     \
	  100, 10000, 1000, 250000, 1000 }
/** The size of the wg_options of each version (older callers' structs are smaller). */
#define WG_OPTIONS_V1_SIZE (offsetof(wg_options, progress_payload) + sizeof(void *))
#define WG_OPTIONS_V2_SIZE (offsetof(wg_options, max_cache_entry) + sizeof(uint64_t))
#define WG_OPTIONS_V3_SIZE (offsetof(wg_options, jobs) + sizeof(uint32_t))

/** Fills *opts with the defaults of `version`. */
WG_API int wg_options_init(wg_options *opts, unsigned int version);

typedef struct wg_context wg_context;

/**
 * Loads the shipped data (the string-ABI classifiers of rules/) and keeps the options.
 * opts may be NULL for the defaults. On failure see wg_error_last().
 */
WG_API int wg_context_new(wg_context **out, const wg_options *opts);
WG_API void wg_context_free(wg_context *ctx);

/** A job of wg_context_run: number i of the batch, on the thread of `slot` (below
 * wg_context_slots(); 0 is the calling thread). Jobs of one batch never share a slot at the
 * same time, so a scanner per slot needs no lock. */
typedef void (*wg_job_fn)(void *arg, size_t i, unsigned int slot);
/**
 * Runs fn for i in [0, n) on the context's threads (opts.jobs) and the calling thread, and
 * returns when every job is done. The same threads read the members of each wheel: a job may
 * scan. A tool checking several inputs uses it to check them at once.
 */
WG_API int wg_context_run(wg_context *ctx, size_t n, wg_job_fn fn, void *arg);
/** How many slots the jobs of wg_context_run use (the threads, the caller's included). */
WG_API unsigned int wg_context_slots(wg_context *ctx);

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

/* ---------------------------------------------------------------------------------------- */
/* The install target                                                                       */

#define WG_MAX_GPUS 16

typedef struct wg_env wg_env;

/**
 * Where a wheel is to be installed: an opaque handle, so that it learns new facts without
 * breaking embedders. Unknown facts stay unknown and the rules that need them do not apply.
 * Set it up from one thread (wg_target_set, _parse, _add_gpu, _set_env); after that checks
 * only read it, and any number of threads may use it at once.
 */
typedef struct wg_target wg_target;

/** A target that knows nothing yet (the profile chosen by wg_target_profile()). */
WG_API int wg_target_new(wg_target **out);
WG_API void wg_target_free(wg_target *t);
/**
 * Sets one fact: python ("3.12"), torch ("2.9.1+cu128"; its +cuXYZ label implies cuda),
 * cxx11abi ("1"/"0", "true"/"false"), cuda ("12.8"), glibc, glibcxx, cxxabi, gcc ("2.39"),
 * platform ("manylinux_2_28_x86_64": its policy's versions, unless given), or profile
 * ("install", "publish", "auto"). WG_EINVAL with the reason in wg_error_last().
 */
WG_API int wg_target_set(wg_target *t, const char *key, const char *value);
/** Sets the facts of spec, key=value pairs as wg_target_set() takes them (profile apart):
 * "python=3.12,torch=2.9.1+cu128,cxx11abi=0,cuda=12.8,glibc=2.39,glibcxx=3.4.33,
 * platform=manylinux_2_28_x86_64"; WG_EINVAL with the reason in wg_error_last(). */
WG_API int wg_target_parse(wg_target *t, const char *spec);
/** Adds a GPU (as wg_gpu_parse reads it), or with "auto" the local GPUs found through NVML
 * (loaded at run time). No NVML or no GPU adds none and is not an error: wg_target_notice()
 * then says "no local GPU (...)"; the GPU rules do not apply and say "no GPU found by --gpu
 * auto (...)" in the report, and "auto" still declares the target (this machine):
 * wg_target_profile() is install unless the profile is set. "auto" empties this thread's
 * error record (wg_error_clear()), so that a program that read the notice from
 * wg_error_last() (library 0.1.0) reads "" rather than an older failure. */
WG_API int wg_target_add_gpu(wg_target *t, const wg_context *ctx, const char *gpu);
/** The notice of setting t up that is not an error: "no local GPU (...)" after "auto" found
 * no GPU (wg_target_add_gpu); NULL when there is none or t is NULL. It lives until
 * wg_target_free(t). */
WG_API const char *wg_target_notice(const wg_target *t);
/**
 * Adds a PEP 825 variant index file, {name}-{version}-variants.json (the name and version are
 * read from its file name): every variant wheel of that name and version checked with t must
 * appear in its "variants" with the same properties (rule WG-VAR-006). WG_EFORMAT (with
 * wg_error_last() naming the file and the problem) for a file that is not such an index;
 * WG_ELIMIT past 8 index files.
 */
WG_API int wg_target_add_variants(wg_target *t, const char *path);
/** Whether path names a variant index file ("...-variants.json"). */
WG_API int wg_is_variants_index(const char *path);
/** Sets the facts env knows (python, torch, cxx11abi, cuda) that t does not know yet, and
 * checks resolve the wheel's objects in env. t borrows env: env must outlive every use of t
 * (NULL detaches it; the facts stay). Call it before wg_target_parse() to let declared
 * facts override the environment. */
WG_API int wg_target_set_env(wg_target *t, wg_env *env);
/** The GPUs of t, in the order added (a copy in *out; its name is owned by the context). */
WG_API size_t wg_target_gpu_count(const wg_target *t);
WG_API int wg_target_gpu(wg_gpu *out, const wg_target *t, size_t i);
/** The facts of t as the JSON object "target" of docs/check-json.md; free with wg_free. */
WG_API int wg_target_to_json(char **out, const wg_target *t);

/**
 * The two questions wheelgate answers, never mixed: "will it work here?" (install: the
 * environment, the system and the GPUs the wheel meets) and "is this wheel what it claims?"
 * (publish: tags, manylinux claims, labels, RECORD, portability). Each rule says in its YAML
 * the profiles it applies to and its severity in each.
 */
typedef enum { WG_PROFILE_AUTO = 0, WG_PROFILE_INSTALL = 1, WG_PROFILE_PUBLISH = 2 } wg_profile;
/** "install", "publish" ("auto" for WG_PROFILE_AUTO). */
WG_API const char *wg_profile_name(wg_profile p);
/** "install" | "publish" | "auto" -> the profile; -1 for anything else. */
WG_API int wg_profile_parse(const char *name);
/**
 * The profile a check for t uses: its profile when set; otherwise install when an environment
 * (--env) or anything of the target machine is declared (python, torch, C++ ABI, CUDA, GPUs,
 * the system), else publish. t may be NULL (publish).
 */
WG_API wg_profile wg_target_profile(const wg_target *t);

/** The target system's C/C++ runtime as the rules see it: "GLIBC_2.36 GLIBCXX_3.4.30
 * CXXABI_1.3.13 GCC_12.0.0" into buf, the number of families known returned, and *source set
 * to "this system" (read from the running system's libc, libstdc++ and libgcc_s), "declared"
 * (glibc=, glibcxx=...) or the platform tag declared. t may be NULL (this system). */
WG_API size_t wg_target_system(const wg_target *t, char *buf, size_t len, const char **source);
/** The facts a target declares or found, as the check document's "target" gives them (its
 * GPUs: wg_target_gpu; its system: wg_target_system; its profile: wg_target_profile). */
typedef struct wg_target_info {
	unsigned int version;
	unsigned python_major, python_minor; /**< 0.0: unknown */
	const char *torch;                   /**< "2.9.1+cu128", or NULL: unknown */
	int cxx11abi;                        /**< 1, 0, or -1: unknown */
	unsigned cuda_major, cuda_minor;     /**< 0.0: unknown */
	int gpu_auto;                        /**< 1: --gpu auto was asked */
	size_t gpu_auto_found;               /**< the GPUs it found */
	const char *gpu_auto_none;           /**< why it found none, or NULL */
} wg_target_info;
#define WG_TARGET_INFO_VERSION 1
#define WG_TARGET_INFO_INIT { WG_TARGET_INFO_VERSION, 0, 0, NULL, -1, 0, 0, 0, 0, NULL }
/** Fills out from t; its strings live until t changes or wg_target_free(). */
WG_API int wg_target_get_info(wg_target_info *out, const wg_target *t);

/* ---------------------------------------------------------------------------------------- */
/* A real Python environment                                                                */

typedef struct wg_env_options {
	unsigned int version;
	/** Where the exported-symbol index is cached: NULL for $XDG_CACHE_HOME/wheelgate (or
	 * ~/.cache/wheelgate), "" for no cache. */
	const char *cache_dir;
	/** Directories the system's loader searches, replacing /etc/ld.so.conf and the trusted
	 * directories (a colon-separated list), or NULL for the system's. */
	const char *system_dirs;
} wg_env_options;
#define WG_ENV_OPTIONS_VERSION 1
#define WG_ENV_OPTIONS_INIT { WG_ENV_OPTIONS_VERSION, NULL, NULL }

/**
 * Reads a Python environment without running anything from it: PATH is a venv or prefix, a
 * site-packages directory, or a python executable. Errors go to the scanner. An environment
 * loads libraries lazily while checks run: use it from one thread at a time.
 */
WG_API int wg_env_open(wg_env **out, wg_scanner *scanner, const char *path,
		       const wg_env_options *opts);
WG_API void wg_env_free(wg_env *env);

typedef struct wg_env_info {
	unsigned int version;
	const char *site_packages;
	const char *python;         /**< the interpreter executable or libpython read, or NULL */
	const char *python_version; /**< "3.12", or NULL */
	const char *ext_suffix;     /**< ".cpython-312-x86_64-linux-gnu.so", or NULL */
	const char *torch_dir;      /**< site-packages/torch, or NULL */
	const char *torch_version;  /**< "2.11.0+cu130", or NULL */
	const char *torch_cuda;     /**< "13.0", or NULL (a CPU build) */
	int torch_cxx11abi;         /**< from libc10's exports: 1, 0, or -1 */
	size_t libraries;           /**< libraries indexed (exports read or taken from the cache) */
	size_t cache_hits;
} wg_env_info;
#define WG_ENV_INFO_VERSION 1
#define WG_ENV_INFO_INIT { WG_ENV_INFO_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL, -1, 0, 0 }

WG_API int wg_env_get_info(wg_env_info *out, const wg_env *env);

typedef enum {
	WG_ENV_LIB_DIRS,       /**< directories searched for libraries, in order */
	WG_ENV_CUDA_LIBS,      /**< CUDA libraries present (nvidia-* wheels, torch/lib, system) */
	WG_ENV_NATIVE_PACKAGES, /**< other top-level packages in site-packages shipping .so files */
	/** the installed distributions: every `*.dist-info` directory (a full path, each a
	 * source of wg_scan_path) of the environment's site directories (site-packages; for
	 * Debian's python also /usr/lib/python3/dist-packages), sorted per directory */
	WG_ENV_DISTRIBUTIONS
} wg_env_list;
WG_API size_t wg_env_list_count(const wg_env *env, wg_env_list list);
/** The i-th item (owned by env), or NULL. */
WG_API const char *wg_env_list_item(const wg_env *env, wg_env_list list, size_t i);

/**
 * Judges the checks that follow as one install of the wheels scans (pip install a.whl b.whl)
 * into env: each wheel takes the place of the installed distribution of its name (its RECORD's
 * files), and the loader resolves every object, the wheels' own included, in the environment
 * as the install leaves it. Every installed distribution that stays and whose objects load
 * something the install removes or replaces is resolved before and after; a load problem only
 * the second has is reported by rule WG-LD-006 on the wheel that causes it ("installing torch
 * 2.12.0 breaks flash-attn 2.8.3: ..."). The scans are read during the call only (a check
 * knows its wheel by its path); inputs other than wheels are ignored. n == 0 forgets the
 * install. Call it from one thread, as the environment loads libraries. Errors (into sc):
 * WG_EINVAL for two wheels of one distribution, the errors of reading a replaced
 * distribution's RECORD.
 */
WG_API int wg_env_set_install(wg_env *env, wg_scanner *sc, const wg_scan *const *scans, size_t n);

/** The same as wg_target_set_env(t, env) (kept for embedders of 0.1). */
WG_API int wg_env_fill_target(wg_env *env, wg_target *t);
WG_API int wg_env_to_json(char **out, const wg_env *env);

/* ---------------------------------------------------------------------------------------- */
/* Rules and checks                                                                         */

typedef struct wg_ruleset wg_ruleset;

typedef struct wg_ruleset_options {
	unsigned int version;
	const char *const *rule_paths; /**< user rule files or directories (*.yaml), in order */
	size_t nrule_paths;
	/** Rule selectors, case-insensitive: an id (WG-SYS-001), an id prefix (WG-SYS, WG), a
	 * rule's name (its check kind: hollow-wheel) or a glob of ids or names (WG-SYS-*). */
	const char *const *disable;    /**< rules to switch off */
	size_t ndisable;
	const char *const *enable;     /**< rules to switch on (rules shipped disabled) */
	size_t nenable;
	int no_default_rules;          /**< do not load the shipped rules */
} wg_ruleset_options;
#define WG_RULESET_OPTIONS_VERSION 1
#define WG_RULESET_OPTIONS_INIT { WG_RULESET_OPTIONS_VERSION, NULL, 0, NULL, 0, NULL, 0, 0 }

/**
 * Loads the shipped rules, then the user's (a rule with a shipped id replaces it), then
 * applies enable, then disable. Every pattern is compiled once. A broken file fails with
 * "file:line:col: what is wrong" in wg_error_last(); a selector in enable/disable that
 * matches no rule too (with a "did you mean" where one is close).
 * The ruleset is immutable and may be shared by threads.
 */
WG_API int wg_ruleset_new(wg_ruleset **out, const wg_context *ctx, const wg_ruleset_options *opts);
WG_API void wg_ruleset_free(wg_ruleset *rs);

typedef enum { WG_SEV_INFO = 0, WG_SEV_WARNING = 1, WG_SEV_ERROR = 2 } wg_severity;
WG_API const char *wg_severity_name(wg_severity s); /* "info", "warning", "error" */

typedef struct wg_rule_info {
	unsigned int version;
	const char *id, *check, *title, *fix, *source; /**< source: "file:line" of its definition */
	wg_severity severity;         /**< the one shown where no profile is named */
	int enabled;
	/** (version 2) the severity in the install and the publish profile, -1 where the rule
	 * does not apply in that profile. */
	int install, publish;
	/** (version 3) 1 for a rule about the input's integrity and tampering (`security: true`
	 * in its rule file: RECORD, unsafe names, the archive's structure), 0 for a correctness
	 * rule. SARIF gives only these rules the `security` tag and a security-severity. */
	int security;
} wg_rule_info;
#define WG_RULE_INFO_VERSION 3
#define WG_RULE_INFO_INIT \
	{ WG_RULE_INFO_VERSION, NULL, NULL, NULL, NULL, NULL, WG_SEV_INFO, 0, -1, -1, 0 }

WG_API size_t wg_ruleset_count(const wg_ruleset *rs);
WG_API int wg_ruleset_rule(wg_rule_info *out, const wg_ruleset *rs, size_t i);
/**
 * Checks every rule's examples against its patterns. WG_OK, or WG_EDATA with a report of
 * each failing example in *report (free with wg_free; may be NULL).
 */
WG_API int wg_ruleset_self_test(const wg_ruleset *rs, char **report);
/** Whether selector (as in wg_ruleset_options.disable: id, id prefix, name or glob, any case)
 * picks the rule with id rule_id: 1 or 0; WG_EINVAL (with a "did you mean" in
 * wg_error_last()) when it picks no rule of rs at all. */
WG_API int wg_ruleset_selects(const wg_ruleset *rs, const char *selector, const char *rule_id);

/* ---- facts kept by content (docs/facts-store.md) ---- */

/** Reads back the facts of one input from an inspect document written with WG_JSON_FACTS (the
 * whole document of one input, or its item): a scan the rules judge as they would the input
 * itself, though no byte of the input is read. WG_EFORMAT (message on the scanner) when the
 * document is not JSON, lacks "facts" or holds anything out of range; WG_EUNSUPPORTED for
 * facts of another format version. */
WG_API int wg_scan_from_facts(wg_scan **out, wg_scanner *scanner, const char *json, size_t len);
/** hex (65 bytes): the sha256 of the file at path, lower-case. */
WG_API int wg_file_sha256(char hex[65], const char *path);
/** The place of an input's facts in the store dir: dir/<hex[0:2]>/<hex>.json.zst. */
WG_API int wg_facts_path(char *buf, size_t n, const char *dir, const char *sha256_hex);
/** Writes the facts of scan (the input whose file has sha256_hex) into the store dir, made if
 * missing: zstd-compressed, written to a temporary file then renamed (atomic). */
WG_API int wg_facts_store(const char *dir, const char *sha256_hex, const wg_scan *scan);
/** Reads a stored facts file (zstd-compressed, or plain JSON) into a scan: wg_scan_from_facts;
 * errors name the file. */
WG_API int wg_facts_load(wg_scan **out, wg_scanner *scanner, const char *file);

typedef struct wg_report wg_report;

/** Applies the enabled rules to the facts of scan for target. The scanner supplies the
 * per-thread state (and the error message on failure). */
WG_API int wg_check(wg_report **out, wg_scanner *scanner, const wg_ruleset *rs,
		    const wg_scan *scan, const wg_target *target);
WG_API void wg_report_free(wg_report *r);

typedef struct wg_finding_info {
	unsigned int version;
	const char *rule, *title, *message, *fix;
	wg_severity severity;
	const char *path;    /**< the input (wheel, file, directory) */
	const char *member;  /**< wheel member or file inside a directory, or NULL */
	const char *symbol;  /**< mangled symbol, or NULL */
	const char *file;    /**< source file for file:line findings (a .py member), or NULL */
	unsigned line;       /**< 1-based, 0 when none: the line of file (an import statement) */
	/** (version 2) why the finding is suppressed (wg_report_suppress: a baseline knows it),
	 * or NULL for a finding of wg_report_finding. */
	const char *suppressed;
} wg_finding_info;
#define WG_FINDING_INFO_VERSION 2
#define WG_FINDING_INFO_INIT \
	{ WG_FINDING_INFO_VERSION, NULL, NULL, NULL, NULL, WG_SEV_INFO, NULL, NULL, NULL, NULL, 0, NULL }

WG_API size_t wg_report_count(const wg_report *r);
WG_API int wg_report_finding(wg_finding_info *out, const wg_report *r, size_t i);
/** Takes finding i out of the report (a finding ignored or baselined by the caller); the
 * findings after it move down by one. WG_ENOTFOUND past the end. */
WG_API int wg_report_remove(wg_report *r, size_t i);
/**
 * Marks finding i suppressed (a finding the caller's baseline knows): it leaves the findings
 * (wg_report_count, wg_report_worst, the JSON, text and GitHub formats, the exit status) as
 * wg_report_remove takes it, and is kept with its justification (copied) for SARIF, where
 * it is a result with `suppressions` (docs/ci.md). WG_ENOTFOUND past the end.
 */
WG_API int wg_report_suppress(wg_report *r, size_t i, const char *justification);
/** The suppressed findings, in the order they were suppressed; wg_finding_info version 2
 * or later gets the justification in `suppressed`. */
WG_API size_t wg_report_suppressed_count(const wg_report *r);
WG_API int wg_report_suppressed(wg_finding_info *out, const wg_report *r, size_t i);
/** The highest severity among the findings (those counted past a bound too), or -1 when
 * there are none. */
WG_API int wg_report_worst(const wg_report *r);

/**
 * Findings past a bound (wg_options.max_rule_findings, max_findings): counted, not kept, one
 * entry per rule with findings counted. The kept findings of that rule stand for them ("and
 * 68,950 more like this"); the formats keep the count (docs/check-json.md).
 */
typedef struct wg_more_info {
	unsigned int version;
	const char *rule;      /**< "WG-REC-003" */
	size_t count;          /**< findings of the rule counted, not kept */
	size_t severity[3];    /**< of them, by wg_severity (info, warning, error) */
} wg_more_info;
#define WG_MORE_INFO_VERSION 1
#define WG_MORE_INFO_INIT { WG_MORE_INFO_VERSION, NULL, 0, {0, 0, 0} }
WG_API size_t wg_report_more_count(const wg_report *r);
WG_API int wg_report_more(wg_more_info *out, const wg_report *r, size_t i);
/** Takes the counted findings of entry i out of the report (its rule ignored for the input by
 * the caller); the entries after it move down by one. WG_ENOTFOUND past the end. */
WG_API int wg_report_more_remove(wg_report *r, size_t i);
/** Every finding of the report: those kept (wg_report_count) and those counted. */
WG_API size_t wg_report_total(const wg_report *r);
/** The profile the report was made in (install or publish). */
WG_API wg_profile wg_report_profile(const wg_report *r);

/**
 * A rule that was not applied because a fact it needs is unknown: a `when:` condition of the
 * target (a GPU, the torch C++ ABI...), or what its check kind cannot work without (a Python
 * environment for the loader rules, the wheel's filename for the tag rules). Rules switched
 * off, or whose known facts rule them out, are not listed.
 */
typedef struct wg_not_applied_info {
	unsigned int version;
	const char *rule;    /**< "WG-ABI-001" */
	const char *lacks;   /**< the facts missing, comma-separated: "gpu", "gpu,cuda", "env" */
	const char *message; /**< "no target GPU: --gpu", "no GPU found by --gpu auto (...)" */
} wg_not_applied_info;
#define WG_NOT_APPLIED_INFO_VERSION 1
#define WG_NOT_APPLIED_INFO_INIT { WG_NOT_APPLIED_INFO_VERSION, NULL, NULL, NULL }

WG_API size_t wg_report_not_applied_count(const wg_report *r);
WG_API int wg_report_not_applied(wg_not_applied_info *out, const wg_report *r, size_t i);

/* ---- a report read without its documents: what `check` decides and counts ---- */

/** An input's verdict as `wheelgate check` gives it (the JSON's "verdict", the text's
 * PASS/FAIL/ERROR, the exit status: 1 when an input fails, 2 when one is unreadable). */
typedef enum { WG_VERDICT_PASS = 0, WG_VERDICT_FAIL = 1, WG_VERDICT_ERROR = 2 } wg_verdict;
WG_API const char *wg_verdict_name(wg_verdict v); /* "pass", "fail", "error" */
/** FAIL when a finding (kept, or counted past a bound) is at fail_on or above
 * (wg_report_worst(r) >= fail_on), else PASS; ERROR for r NULL (an input not judged). */
WG_API wg_verdict wg_report_verdict(const wg_report *r, wg_severity fail_on);

/** A report's findings counted by wg_severity (info, warning, error). */
typedef struct wg_counts_info {
	unsigned int version;
	size_t severity[3];   /**< every finding: kept and counted past a bound (the JSON's
			       * "counts", the summary's totals) */
	size_t kept[3];       /**< those listed (wg_report_finding) */
	size_t more[3];       /**< those counted past a bound (wg_report_more, summed) */
	size_t suppressed[3]; /**< those the caller suppressed (wg_report_suppressed), outside
			       * the others */
} wg_counts_info;
#define WG_COUNTS_INFO_VERSION 1
#define WG_COUNTS_INFO_INIT { WG_COUNTS_INFO_VERSION, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0} }
WG_API int wg_report_counts(wg_counts_info *out, const wg_report *r);
/** The path of the input the report judged (its scan's, wg_scan_get_path); the documents
 * name the input by the path their caller gives. Lives until wg_report_free(). */
WG_API const char *wg_report_path(const wg_report *r);

/** Formats of wg_reports_format(): JSON, SARIF, the text `wheelgate check` prints (with
 * or without terminal colours; one block per input, no summary line), and that summary line
 * alone ("3 inputs: 2 passed, 1 failed, 0 unreadable; 1 error, 0 warnings, 0 info (profile:
 * install, fail-on: error)\n"); GitHub Actions workflow commands, one `::error`,
 * `::warning` or `::notice` line per finding and the summary as a last `::notice` (docs/ci.md;
 * every line, the last too, ends with a newline). */
typedef enum {
	WG_FORMAT_JSON = 1, WG_FORMAT_SARIF = 2, WG_FORMAT_TEXT = 3, WG_FORMAT_TEXT_COLOR = 4,
	WG_FORMAT_SUMMARY = 5, WG_FORMAT_GITHUB = 6,
	/** the JSON document on one line (no indentation), to embed (the fleet envelope) */
	WG_FORMAT_JSON_COMPACT = 7
} wg_format;

/**
 * Several inputs' reports as one document: JSON ("wheelgate.check/1", docs/check-json.md),
 * SARIF 2.1.0 or GitHub workflow commands (docs/ci.md). paths/errors describe inputs that
 * could not be read (reports[i] NULL, errors[i] its message). fail_on: the severity from
 * which an input fails.
 */
WG_API int wg_reports_format(char **out, wg_format format, const wg_ruleset *rs,
			     const wg_target *target, const char *const *paths,
			     const wg_report *const *reports, const char *const *errors, size_t n,
			     wg_severity fail_on);

/**
 * wg_reports_format()'s arguments, and what a command adds to its JSON document (audit, a
 * baseline): the additions are written by the JSON formats only, in the keys docs/check-json.md
 * names. A document with any addition writes every character past ASCII as \uNNNN.
 */
typedef struct wg_reports_doc {
	unsigned int version;
	wg_format format;
	const wg_ruleset *rs;
	const wg_target *target;
	const char *const *paths;
	const wg_report *const *reports;
	const char *const *errors;
	size_t n;
	wg_severity fail_on;
	/** n notes, NULL ones none (each input's "note"), or NULL */
	const char *const *notes;
	/** n counts each (each input's "ignored" and "baselined", totalled in the summary), or
	 * NULL: no such keys */
	const size_t *ignored, *baselined;
	/** 1: "not_audited" (nnot_audited items {"path", "reason"}) and summary.not_audited */
	int audit;
	const char *const *not_audited_paths, *const *not_audited_reasons;
	size_t nnot_audited;
} wg_reports_doc;
#define WG_REPORTS_DOC_VERSION 1
#define WG_REPORTS_DOC_INIT \
	{ WG_REPORTS_DOC_VERSION, WG_FORMAT_JSON, NULL, NULL, NULL, NULL, NULL, 0, WG_SEV_ERROR, \
	  NULL, NULL, NULL, 0, NULL, NULL, 0 }
WG_API int wg_reports_format_doc(char **out, const wg_reports_doc *doc);

/** Each finding a JSON document holds, to fn (path: its input's; member and symbol NULL where
 * absent): a report (wheelgate.check/1, --format json) or a baseline (wheelgate.baseline/1,
 * --write-baseline). A non-zero return of fn stops the reading and is returned; WG_EFORMAT
 * (wg_error_last(): "LINE:COL: ..." for broken JSON) for anything else. */
typedef int (*wg_known_finding_fn)(const char *path, const char *rule, const char *member,
				   const char *symbol, void *payload);
WG_API int wg_known_findings_read(const char *json, size_t len, wg_known_finding_fn fn,
				  void *payload);

/* ---- wheelgate.scan/1: one JSON Lines record per input (docs/scan.md) ---- */

/** One target an input is judged for: an item of the record's "targets". */
typedef struct wg_scan_record_target {
	unsigned int version;
	const char *name;         /**< "default", "h100" */
	const wg_target *target;  /**< its profile */
	const wg_report *report;  /**< NULL: not judged (verdict "error") */
	/** (version 2) this target's fail-on (wheelgate.dask's targets may differ), or NULL:
	 * the record's */
	const wg_severity *fail_on;
} wg_scan_record_target;
#define WG_SCAN_RECORD_TARGET_VERSION 2
#define WG_SCAN_RECORD_TARGET_INIT { WG_SCAN_RECORD_TARGET_VERSION, NULL, NULL, NULL, NULL }

typedef struct wg_scan_record {
	unsigned int version;
	const char *path;        /**< the input as the record names it */
	const wg_scan *scan;     /**< its facts (name, version, tags), or NULL: not read */
	const char *sha256;      /**< 64 hex digits, or NULL */
	int64_t size;            /**< bytes, or -1: unknown */
	const wg_scan_record_target *targets;
	size_t ntargets;
	wg_severity fail_on;
	const char *facts;       /**< the stored facts it was judged from, or NULL */
	double seconds;
	const char *error;       /**< why it (or a target) could not be judged, or NULL */
} wg_scan_record;
#define WG_SCAN_RECORD_VERSION 1
#define WG_SCAN_RECORD_INIT \
	{ WG_SCAN_RECORD_VERSION, NULL, NULL, NULL, -1, NULL, 0, WG_SEV_ERROR, NULL, 0.0, NULL }

/** The record as one line of ASCII JSON, without its newline, into *out (wg_free). */
WG_API int wg_scan_record_format(char **out, const wg_scan_record *rec);

/** A record read back (--resume, a summary of records written before). */
typedef struct wg_scanrec wg_scanrec;
/** WG_EFORMAT (message in wg_error_last()) for a line that is not a wheelgate.scan/1 record. */
WG_API int wg_scanrec_parse(wg_scanrec **out, const char *line, size_t len);
WG_API void wg_scanrec_free(wg_scanrec *rec);
typedef struct wg_scanrec_info {
	unsigned int version;
	const char *path, *name, *pkg_version; /**< NULL where the record has null */
	const char *sha256;  /**< 64 lower-case hex digits, or NULL */
	int64_t size;        /**< -1: null */
	const char *facts, *error;
	size_t ntargets;
} wg_scanrec_info;
#define WG_SCANREC_INFO_VERSION 1
#define WG_SCANREC_INFO_INIT { WG_SCANREC_INFO_VERSION, NULL, NULL, NULL, NULL, -1, NULL, NULL, 0 }
WG_API int wg_scanrec_get(wg_scanrec_info *out, const wg_scanrec *rec);
typedef struct wg_scanrec_target_info {
	unsigned int version;
	const char *target, *profile; /**< profile: NULL where the record has null */
	wg_verdict verdict;
	size_t counts[3];             /**< by wg_severity */
} wg_scanrec_target_info;
#define WG_SCANREC_TARGET_INFO_VERSION 1
#define WG_SCANREC_TARGET_INFO_INIT \
	{ WG_SCANREC_TARGET_INFO_VERSION, NULL, NULL, WG_VERDICT_ERROR, {0, 0, 0} }
/** Target i of the record; WG_ENOTFOUND past wg_scanrec_info.ntargets. */
WG_API int wg_scanrec_target(wg_scanrec_target_info *out, const wg_scanrec *rec, size_t i);

#ifdef __cplusplus
}
#endif
#endif /* WHEELGATE_H */

/*
 * wheelgate: catch broken CUDA/C++ Python wheels before they are installed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of the public API: Version, error codes and this thread's error record, the export macro WG_API,
 * memory (wg_free), escaping, options (wg_options) and the context (wg_context).
 * Programs include <wheelgate.h>, whose opening comment gives the conventions (names,
 * errors, versioned structs, ownership, threads); this part compiles alone too.
 */
#ifndef WHEELGATE_COMMON_H
#define WHEELGATE_COMMON_H

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
/** The message of this thread's last failed call (see Errors in wheelgate.h; before 0.2 a scanner
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
 * every failing call (see Errors in wheelgate.h), with the code that call returned, its class and its
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
	/* version 5: memory per member (issue 30) */
	/** Largest wheel member read whole into memory (default 8 MiB). A larger one is
	 * streamed: hashed and checked block by block in constant memory, an ELF object read
	 * sparsely (only the byte ranges its facts need kept as they pass, another pass over the
	 * member for any it missed). The facts are the same either way; 0 streams every member. */
	uint64_t max_member_held;
} wg_options;

#define WG_OPTIONS_VERSION 5
#define WG_OPTIONS_INIT                                                                     \
	{ WG_OPTIONS_VERSION, 4ULL << 30, 16ULL << 30, 100000, 250, 4000000, 200000, NULL, NULL, \
	  64ULL << 20, 64ULL << 20, 2000000, 1000000, 4ULL << 20, 2ULL << 30, 64ULL << 20, 0,     \
	  100, 10000, 1000, 250000, 1000, 8ULL << 20 }
/** The size of the wg_options of each version (older callers' structs are smaller). */
#define WG_OPTIONS_V1_SIZE (offsetof(wg_options, progress_payload) + sizeof(void *))
#define WG_OPTIONS_V2_SIZE (offsetof(wg_options, max_cache_entry) + sizeof(uint64_t))
#define WG_OPTIONS_V3_SIZE (offsetof(wg_options, jobs) + sizeof(uint32_t))
#define WG_OPTIONS_V4_SIZE (offsetof(wg_options, max_listed_entries) + sizeof(uint32_t))

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

#ifdef __cplusplus
}
#endif
#endif /* WHEELGATE_COMMON_H */

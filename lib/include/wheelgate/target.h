/*
 * wheelgate: catch broken CUDA/C++ Python wheels before they are installed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of the public API: The install target (wg_target, profiles, the target system) and a real Python
 * environment (wg_env).
 * Programs include <wheelgate.h>, whose opening comment gives the conventions (names,
 * errors, versioned structs, ownership, threads); this part compiles alone too.
 */
#ifndef WHEELGATE_TARGET_H
#define WHEELGATE_TARGET_H

#include "facts.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* WHEELGATE_TARGET_H */

/*
 * model/: what the facts mean for a target: the GPU compatibility model and the local GPUs
 * (gpu_compat.c), the install target (target.c), symbol version names (symver.c), the system
 * runtime versions (sysver.c) and the platform policies (policy.c). The target's environment
 * is the loader's to fill (loader/env_info.c: wg_target_set_env).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_MODEL_H
#define WG_MODEL_H

#include "facts/facts.h"
#include "model/target.h"

/* ---- the GPU model and the local GPUs (gpu_compat.c; data: rules/gpu/cuda.yaml) ---- */

int wg_cuda_data_load(wg_cuda_data **out, const char *name, const char *text, size_t len,
		      wg_err *err);
void wg_cuda_data_free(wg_cuda_data *d);
wg_run_how wg_image_runs_on(int kind, unsigned arch, char variant, unsigned cc_major,
			    unsigned cc_minor);

int wg_gpu_detect(const wg_context *ctx, wg_gpu *out, size_t max, size_t *n, char *why,
		  size_t whylen);

/* ---- the target system's runtime versions (sysver.c; version names: symver.c) ---- */

bool wg_ver_parse(const char *v, char *family, size_t n, unsigned num[4], int *nn);
int wg_ver_cmp(const unsigned *a, int na, const unsigned *b, int nb);
/** Whether version, needed from lib, is a system runtime family (GLIBC from libc...). */
bool wg_sysver_family(const char *lib, const char *version, char *family, size_t n);
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

/* ---- platform policies (policy.c; data: rules/platform/manylinux.yaml, generated from
 * auditwheel's policy files, and rules/platform/provided.yaml) ---- */

/** One policy on one architecture: manylinux_2_28 on x86_64. */
typedef struct {
	char name[32];      /* "manylinux_2_28", "musllinux_1_2" */
	char arch_name[16]; /* "x86_64" */
	int index;          /* in the data (oldest first within each libc); -1: a PEP 600 tag the
			       data does not know, judged on its glibc alone */
	int arch;
	bool musl;
	wg_sysver limits[4]; /* the highest GLIBC, GLIBCXX, CXXABI and GCC version it allows */
	int nlimits;
} wg_policy;

/** How many policies the data has (glibc's oldest first, then musl's). */
size_t wg_policy_count(void);
/** The commit of auditwheel's policy files the data was generated from, or "". */
const char *wg_policy_source(void);
/** Policy i on arch ("x86_64"); false when it does not exist there. */
bool wg_policy_at(wg_policy *out, size_t i, const char *arch);
/** The policy of a platform tag: "manylinux_2_28_x86_64", "manylinux2014_aarch64",
 * "musllinux_1_2_x86_64"; an unknown manylinux_X_Y tag gets glibc X.Y alone (index -1).
 * false for any other tag (linux_x86_64, manylinux1_aarch64). */
bool wg_policy_for_tag(wg_policy *out, const char *tag);
/** The highest version of family ("GLIBC") the policy allows, or NULL. */
const wg_sysver *wg_policy_limit(const wg_policy *p, const char *family);
/** Whether an object may need version ("GLIBC_2.38", "CXXABI_TM_1") under the policy: 1 yes,
 * 0 no, -1 a family the policy does not judge (its part before the first '_'). */
int wg_policy_version(const wg_policy *p, const char *version);
/** Whether the policy's lib_whitelist allows needing soname from the system: 1 yes, 0 no, -1
 * not known (a tag the data does not know). */
int wg_policy_library(const wg_policy *p, const char *soname);
/** Whether soname is the dynamic loader (ld-linux-x86-64.so.2): never a library to ship. */
bool wg_provided_loader(const char *soname);
/** Why soname may be needed from outside any wheel (the NVIDIA driver's), or NULL. */
const char *wg_provided_driver(const char *soname);
/** How many distributions ship soname (with req, the set of normalised names a wheel requires
 * without an extra marker: only those); their names, ", "-separated, in buf. */
size_t wg_provided_by(const char *soname, const wg_strmap *req, char *buf, size_t len);
/** Fills set (made here; free with wg_strmap_free) with the normalised names of req, a list of
 * Requires-Dist values, that carry no `extra` marker (what pip installs with the wheel); the
 * names live in a. WG_ENOMEM when out of memory. */
int wg_requires_set(wg_strmap *set, wg_arena *a, const wg_strlist *req);

/* ---- CPython's stable ABI (pyabi.c, rules/python/stable_abi.yaml) ---- */

typedef struct {
	const char *name;
	unsigned major, minor; /* the version that added it to the stable ABI */
	bool abi_only;         /* in the stable ABI, not in the limited API's headers */
	const char *ifdef;     /* the feature macro it is exported under, or NULL */
	bool on_linux;         /* whether a Linux release build exports it (ifdef defined there) */
} wg_pyabi_sym;

/** The stable ABI's entry for a symbol name, or NULL when it is not in the stable ABI. */
const wg_pyabi_sym *wg_pyabi_find(const char *name);
/** How many symbols the stable ABI data lists (0 when it could not be read). */
size_t wg_pyabi_count(void);
/** The commit of CPython's Misc/stable_abi.toml the data was generated from, or "". */
const char *wg_pyabi_source(void);
/** Releases the variant index files of t (model/variants.c). */
void wg_target_variants_free(wg_target *t);

#endif

/*
 * model/: what the facts mean for a target: the GPU compatibility model and the local GPUs
 * (gpu_compat.c), the install target (target.c), the system runtime versions and the platform
 * policies (sysver.c).
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

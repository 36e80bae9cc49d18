/*
 * The install target behind the opaque public wg_target. Only the library and its tests see
 * it.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_TARGET_H
#define WG_TARGET_H

#include <stddef.h>

#include "wheelgate.h"

/** A symbol version family's level: GLIBC 2.38 is {"GLIBC", {2, 38}, 2}. */
typedef struct wg_sysver {
	char family[16];
	unsigned v[4];
	int n;
} wg_sysver;

/**
 * Where a wheel is to be installed. Unknown facts stay 0 / "" / -1 and the rules that need
 * them do not apply. Callers outside the library hold it through wg_target_new(); it may
 * grow freely.
 */
#define WG_MAX_VARIANT_INDEXES 8

struct wg_target {
	unsigned python_major, python_minor;
	char torch[64];                  /**< "2.9.1+cu128", or "" */
	unsigned torch_major, torch_minor;
	int cxx11abi;                    /**< 1, 0, or -1 when unknown */
	unsigned cuda_major, cuda_minor; /**< from cuda=, else from torch's +cuXYZ label */
	size_t ngpus;
	wg_gpu gpus[WG_MAX_GPUS];
	/** "--gpu auto" was asked (the machine wheelgate runs on is the target: install), the
	 * GPUs it found, and when it found none, why ("libnvidia-ml.so.1 cannot be loaded: no
	 * NVIDIA driver here"), else "". Without a GPU the GPU rules do not apply and say so;
	 * the profile stays install. */
	int gpu_auto;
	size_t gpu_auto_found;
	char gpu_auto_none[256];
	char notice[300]; /* wg_target_notice(): "no local GPU (gpu_auto_none)" */
	/** The environment of wg_target_set_env(), borrowed; NULL for none. */
	struct wg_env *env;
	/** The target system: a declared platform tag ("manylinux_2_28_x86_64", or ""), musl,
	 * and the highest GLIBC/GLIBCXX/CXXABI/GCC versions it provides (glibc=, glibcxx=, or
	 * the platform's policy). Nothing declared: the running system's; once anything is
	 * declared, the families left out are unknown. */
	char platform[64];
	int musl;
	size_t nsysvers;
	wg_sysver sysvers[8];
	/** The question asked (wg_profile): WG_PROFILE_AUTO lets wg_target_profile() choose. */
	int profile;
	/** PEP 825 index files ({name}-{version}-variants.json) given with the wheels
	 * (wg_target_add_variants): the normalized name, the version, and the file's "variants"
	 * object (a json_t, owned: wg_target_free releases it). */
	size_t nvariant_indexes;
	struct wg_variant_index {
		char path[512], name[128], version[64];
		void *variants;
	} variant_indexes[WG_MAX_VARIANT_INDEXES];
};

/** t with nothing known (for a target on the stack inside the library). */
void wg_target_clear(wg_target *t);

#endif /* WG_TARGET_H */

/*
 * analysis/: the analysis step, between the facts of one input (a wg_scan) and the rules:
 * the facts derived from several others, each computed once per input (per wg_check call) on
 * first use and read by every check kind that needs it, with their own scratch memory:
 *  - how each object is loaded (its load role: wg_role) and how the Python code imports
 *    the extension modules (wg_pyimports);
 *  - the loader's record (wg_lib) of each object of the input, at the path it is installed
 *    to in the target environment, built once for all the loads the loader resolves;
 *  - each object's system runtime needs (GLIBC, GLIBCXX, CXXABI, GCC);
 *  - each CUDA object's verdict on each target GPU;
 *  - the modules a wheel ships (a hash set), for the hollow-wheel check;
 *  - the libraries it ships, by the names DT_NEEDED entries give (the platform policy checks).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_ANALYSIS_H
#define WG_ANALYSIS_H

#include "loader/loader.h"

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

typedef struct wg_analysis wg_analysis;

/** A new, empty analysis of scan for target (both borrowed: they outlive it). */
int wg_analysis_new(wg_analysis **out, const wg_scan *scan, const wg_target *target);
void wg_analysis_free(wg_analysis *an);

/** The load role of every object of the scan (one per object, in scan order), or NULL when
 * out of memory. */
const wg_role *wg_analysis_roles(wg_analysis *an);
/** How the wheel's Python code imports modules; NULL outside a wheel (or out of memory). */
wg_pyimports *wg_analysis_imports(wg_analysis *an);

/**
 * The loader's record of each object of the scan (NULL for an unreadable one), where it is
 * installed in env: site-packages/<member> for a wheel, where it lies otherwise. *libs gets
 * an array of scan->objects.len entries and *all the records that exist (wg_lib*); both
 * belong to the analysis. Needs target->env.
 */
int wg_analysis_libs(wg_analysis *an, wg_lib *const **libs, const wg_vec **all);

/** The highest system runtime need of each family of object i (wg_object_sysneeds), once. */
size_t wg_analysis_sysneeds(wg_analysis *an, size_t i, const wg_sysneed **out);

/**
 * Whether the input ships the library object i needs as soname (a DT_NEEDED entry): an object
 * of the input answers that name (its SONAME, else its file name: the loader takes an object
 * already loaded by SONAME), or a member of that file name lies in a directory of object i's
 * RUNPATH or RPATH given relative to $ORIGIN, inside the wheel.
 */
int wg_analysis_ships_library(wg_analysis *an, size_t i, const char *soname, bool *ships);

/** The verdict on object i for target GPU g (wg_object_gpu_verdict), once; NULL when i or g
 * is out of range. */
const wg_gpu_verdict *wg_analysis_gpu_verdict(wg_analysis *an, size_t i, size_t g);

/** Whether the wheel ships the dotted module m: a .py module, a package (any member below
 * it), or an extension module named m. Built once into a hash set; WG_ENOMEM when it
 * cannot be. */
int wg_analysis_ships(wg_analysis *an, const char *m, bool *ships);

/** The distributions the input requires without an extra (Requires-Dist lines with no
 * `extra` marker: what pip installs with it), by normalised name (wg_name_normalize): a hash
 * set built once, so that a lookup costs the same for 10 or 100,000 requirements. NULL when
 * out of memory. */
const wg_strmap *wg_analysis_requires(wg_analysis *an);

#endif

/*
 * wheelgate: catch broken CUDA/C++ Python wheels before they are installed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Part of the public API: The facts store: an input's facts kept by content and read back as a scan
 * (docs/facts-store.md).
 * Programs include <wheelgate.h>, whose opening comment gives the conventions (names,
 * errors, versioned structs, ownership, threads); this part compiles alone too.
 */
#ifndef WHEELGATE_STORE_H
#define WHEELGATE_STORE_H

#include "facts.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* WHEELGATE_STORE_H */

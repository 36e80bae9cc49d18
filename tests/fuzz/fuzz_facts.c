/*
 * A stored facts file (docs/facts-store.md): a facts store may be shared between machines, so
 * its files are untrusted bytes. The input is the JSON document wg_scan_from_facts reads (an
 * input that begins with zstd's magic is instead written to a memory file and read with
 * wg_facts_load, so that hostile frame headers are reached too). A scan read back is taken
 * through the getters scan and check use (fields, lists, problems, objects, symbols, versions,
 * fatbin containers and entries, GPU verdicts), both profiles' checks and every report
 * format. Besides the sanitizers it aborts when a refusal leaves no message, or when what was
 * read does not round-trip: its facts written again (the inspect document with
 * WG_JSON_FACTS, as wg_facts_store writes it) must read back, zstd-framed through
 * wg_facts_load, and write the same document.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "fuzz_common.h"

#define FZ_FACTS_FLAGS (WG_JSON_FACTS | WG_JSON_NO_SYMBOLS | WG_JSON_NO_ENTRIES)

static void fz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_facts: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* A refusal names its problem. */
static void fz_refused(int rc)
{
	const char *msg = wg_scanner_error(fz_sc);
	if (rc >= 0 || !msg || !*msg)
		fz_fail("a refusal without a message", NULL);
}

/* The bytes in a memory file, read with wg_facts_load; *out the scan, or NULL. */
static int fz_load(wg_scan **out, const void *data, size_t size)
{
	*out = NULL;
	int fd = memfd_create("facts.json.zst", MFD_CLOEXEC);
	if (fd < 0)
		return WG_EIO;
	int rc = WG_EIO;
	if (write(fd, data, size) == (ssize_t)size) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		rc = wg_facts_load(out, fz_sc, path);
	}
	close(fd);
	return rc;
}

static char *fz_facts_doc(const wg_scan *scan)
{
	wg_inspect *d = NULL;
	char *doc = NULL;
	if (wg_inspect_new(&d, FZ_FACTS_FLAGS, NULL, 0) < 0 || wg_inspect_add(d, scan) < 0 ||
	    wg_inspect_format(&doc, d) < 0)
		doc = NULL;
	wg_inspect_free(d);
	return doc;
}

/* Every getter of the scan, its objects and their fatbins. */
static void fz_getters(const wg_scan *scan)
{
	size_t n = 0;
	(void)wg_scan_get_path(scan);
	for (int f = 0; f < WG_WHEEL_FIELD_END_; f++) {
		const char *v = wg_wheel_get(scan, (wg_wheel_field)f);
		n += v ? strlen(v) : 0;
	}
	for (int l = 0; l < WG_LIST_END_; l++)
		for (size_t i = 0; i < wg_wheel_list_count(scan, (wg_wheel_list)l); i++) {
			const char *v = wg_wheel_list_item(scan, (wg_wheel_list)l, i);
			if (!v)
				fz_fail("a list item in range is NULL", NULL);
			n += strlen(v);
		}
	for (size_t i = 0; i < wg_scan_problem_count(scan); i++) {
		wg_problem_info p = WG_PROBLEM_INFO_INIT;
		if (wg_scan_problem(&p, scan, i) == WG_OK && p.message)
			n += strlen(p.message);
	}
	static const char *const gpus[] = {"sm_80", "sm_90", "sm_120"};
	for (size_t k = 0; k < wg_scan_object_count(scan); k++) {
		const wg_object *o = wg_scan_object(scan, k);
		wg_object_info oi = WG_OBJECT_INFO_INIT;
		(void)wg_object_get_info(&oi, o);
		for (size_t i = 0; wg_object_needed(o, i); i++)
			n += strlen(wg_object_needed(o, i));
		for (size_t i = 0;; i++) {
			wg_symbol_info y = WG_SYMBOL_INFO_INIT;
			if (wg_object_symbol(&y, o, i) != WG_OK)
				break;
			n += y.name ? strlen(y.name) : 0;
		}
		for (size_t i = 0; i < wg_object_version_count(o); i++) {
			const char *lib = NULL, *ver = NULL;
			(void)wg_object_version(o, i, &lib, &ver);
		}
		char buf[256];
		(void)wg_object_highest_versions(o, buf, sizeof(buf));
		for (size_t i = 0; i < wg_object_fatbin_container_count(o); i++) {
			wg_fatbin_container_info c = WG_FATBIN_CONTAINER_INFO_INIT;
			(void)wg_object_fatbin_container(&c, o, i);
		}
		static const wg_fatbin_kind kinds[] = {WG_FATBIN_PTX, WG_FATBIN_SASS, WG_FATBIN_LTOIR};
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			for (int where = -1; where <= 1; where++)
				(void)wg_object_arch_set(o, kinds[i], where, buf, sizeof(buf));
		for (size_t g = 0; g < sizeof(gpus) / sizeof(gpus[0]); g++) {
			wg_gpu gpu = WG_GPU_INIT;
			if (wg_gpu_parse(&gpu, fz_ctx, gpus[g]) != WG_OK)
				abort();
			for (size_t i = 0; i < wg_object_fatbin_entry_count(o); i++) {
				wg_fatbin_entry_info e = WG_FATBIN_ENTRY_INFO_INIT;
				if (wg_object_fatbin_entry(&e, o, i) == WG_OK)
					(void)wg_fatbin_entry_runs_on(&e, &gpu);
			}
			wg_gpu_verdict v = WG_GPU_VERDICT_INIT;
			(void)wg_object_gpu_verdict(&v, o, &gpu);
		}
	}
	(void)n;
}

/* What was read is written again, read back (zstd-framed, through the file reader) and
 * written the same. */
static void fz_round_trip(const wg_scan *scan)
{
	char *doc = fz_facts_doc(scan);
	if (!doc)
		fz_fail("the facts read cannot be written again", NULL);
	size_t len = strlen(doc), cap = ZSTD_compressBound(len);
	void *z = malloc(cap);
	size_t zn = z ? ZSTD_compress(z, cap, doc, len, 1) : 0;
	if (!z || ZSTD_isError(zn))
		abort();
	wg_scan *again = NULL;
	if (fz_load(&again, z, zn) != WG_OK)
		fz_fail("the facts written do not read back", wg_scanner_error(fz_sc));
	free(z);
	char *doc2 = fz_facts_doc(again);
	if (!doc2 || strcmp(doc, doc2))
		fz_fail("the facts read back are not the facts written", NULL);
	wg_free(doc2);
	wg_free(doc);
	wg_scan_free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_init();
	wg_scan *scan = NULL;
	int rc;
	if (size >= 4 && !memcmp(data, "\x28\xb5\x2f\xfd", 4))
		rc = fz_load(&scan, data, size);
	else
		rc = wg_scan_from_facts(&scan, fz_sc, (const char *)data, size);
	if (rc != WG_OK) {
		if (rc != WG_EIO)
			fz_refused(rc);
		return 0;
	}
	fz_getters(scan);
	fz_scan_and_report(scan, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	fz_round_trip(scan);
	wg_scan_free(scan);
	return 0;
}

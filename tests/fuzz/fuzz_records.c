/*
 * The JSON documents wheelgate reads back from files a user names: a wheelgate.scan/1 record
 * (byte 0 = 0: `scan --resume`, wheelgate.report, wheelgate.dask's summary; wg_scanrec_parse
 * and every accessor, each target, finding and counted finding, and indexes past the ends),
 * and a baseline or check report (byte 0 = 1: `--baseline FILE`; wg_known_findings_read).
 * Aborts when a refusal leaves no message, or when a record that was read has a target,
 * finding or count its accessors cannot give.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wheelgate.h"

static size_t touched;

static void touch(const char *s)
{
	if (s)
		touched += strlen(s);
}

static int known(const char *path, const char *rule, const char *member, const char *symbol,
		 void *payload)
{
	touch(path);
	touch(rule);
	touch(member);
	touch(symbol);
	size_t *n = payload;
	/* a non-zero answer stops the reading and is returned: every 1000th finding says so */
	return ++*n % 1000 ? 0 : 7;
}

static void record(const char *s, size_t n)
{
	wg_scanrec *rec = NULL;
	if (wg_scanrec_parse(&rec, s, n) < 0) {
		if (rec || !*wg_error_last())
			abort();
		return;
	}
	wg_scanrec_info ri = WG_SCANREC_INFO_INIT;
	if (wg_scanrec_get(&ri, rec) < 0)
		abort();
	touch(ri.path);
	touch(ri.name);
	touch(ri.pkg_version);
	touch(ri.sha256);
	touch(ri.facts);
	touch(ri.error);
	for (size_t t = 0; t <= ri.ntargets; t++) {
		wg_scanrec_target_info ti = WG_SCANREC_TARGET_INFO_INIT;
		int rc = wg_scanrec_target(&ti, rec, t);
		if ((rc == WG_OK) != (t < ri.ntargets))
			abort();
		if (rc < 0)
			break;
		touch(ti.target);
		touch(ti.profile);
		if (!ti.target || ti.verdict < WG_VERDICT_PASS || ti.verdict > WG_VERDICT_ERROR)
			abort(); /* the parse checked both */
		for (size_t i = 0; i <= ti.nfindings; i++) {
			wg_scanrec_finding_info fi = WG_SCANREC_FINDING_INFO_INIT;
			rc = wg_scanrec_finding(&fi, rec, t, i);
			if ((rc == WG_OK) != (i < ti.nfindings))
				abort();
			if (rc == WG_OK && (!fi.rule || fi.severity < WG_SEV_INFO ||
					    fi.severity > WG_SEV_ERROR))
				abort();
			if (rc == WG_OK) {
				touch(wg_severity_name(fi.severity));
				touch(fi.message);
				touch(fi.member);
				touch(fi.symbol);
			}
		}
		for (size_t i = 0; i <= ti.nmore; i++) {
			wg_scanrec_more_info mi = WG_SCANREC_MORE_INFO_INIT;
			rc = wg_scanrec_more(&mi, rec, t, i);
			if ((rc == WG_OK) != (i < ti.nmore) || (rc == WG_OK && !mi.rule))
				abort();
		}
	}
	wg_scanrec_free(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *s = (const char *)data + 1;
	size_t n = size - 1;
	if (data[0] == 0) {
		record(s, n);
	} else {
		size_t seen = 0;
		int rc = wg_known_findings_read(s, n, known, &seen);
		if (rc < 0 && !*wg_error_last())
			abort();
		if (rc > 0 && rc != 7)
			abort();
	}
	return 0;
}

/*
 * RECORD verification: every member read is checked against the row RECORD lists for it
 * (sha256 and size); rows without a member are orphans. An installed distribution's file
 * that is absent keeps WG_RECORD_ABSENT (input/installed.c decides, facts/wheel.c sets it).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "facts/facts.h"

/* Without a usable RECORD, nothing read can be verified. */
void wg_record_mark_none(wg_scan *scan)
{
	for (size_t i = 0; i < scan->members.len; i++) {
		wg_member *m = wg_vec_at(&scan->members, i);
		if (!m->is_dir && m->record != WG_RECORD_NOT_READ && m->record != WG_RECORD_ABSENT)
			m->record = WG_RECORD_NO_RECORD;
	}
}

/* Whether hex is the lower-case hexadecimal form of the digest b64 (urlsafe base64, no
 * padding) says. Distributions installed by a system's packages (Debian's dist-packages)
 * have RECORDs written with hexadecimal sha256 digests: the same hash, another spelling. */
static bool hex_digest_is(const char *hex, const char *b64)
{
	static const char digits[] = "0123456789abcdef";
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;
	for (const char *p = b64; *p; p++) {
		int v = *p >= 'A' && *p <= 'Z' ? *p - 'A' : *p >= 'a' && *p <= 'z' ? *p - 'a' + 26
			: *p >= '0' && *p <= '9' ? *p - '0' + 52 : *p == '-' ? 62 : *p == '_' ? 63 : -1;
		if (v < 0)
			return false;
		acc = (acc << 6) | (uint32_t)v;
		if ((bits += 6) >= 8) {
			bits -= 8;
			unsigned byte = (acc >> bits) & 0xff;
			if (hex[o] != digits[byte >> 4] || !hex[o + 1] || hex[o + 1] != digits[byte & 15])
				return false;
			o += 2;
		}
	}
	return o == 64 && hex[o] == '\0';
}

static int cmp_row(const void *a, const void *b)
{
	return strcmp(((const wg_record_row *)a)->path, ((const wg_record_row *)b)->path);
}

int wg_record_rows(wg_vec *rows, wg_arena *a, const char *text, size_t len, size_t max_rows,
		   wg_err *err)
{
	wg_vec_init(rows, sizeof(wg_record_row));
	int rc = wg_record_parse_max(rows, a, text, len, max_rows, err);
	if (rc == WG_OK && rows->len) /* an empty RECORD has no array: qsort takes no NULL */
		qsort(rows->items, rows->len, sizeof(wg_record_row), cmp_row);
	return rc;
}

void wg_record_verify(wg_scan *scan, const char *name, const char *text, size_t len)
{
	wg_vec rows;
	wg_err err = {0};
	int prc = wg_record_rows(&rows, &scan->arena, text, len,
				 scan->ctx ? scan->ctx->opts.max_record_rows : SIZE_MAX, &err);
	wg_record_verify_rows(scan, name, &rows, prc, err.msg);
}

void wg_record_verify_rows(wg_scan *scan, const char *name, wg_vec *rows_in, int prc,
			   const char *why)
{
	wg_vec rows = *rows_in;
	wg_vec_init(rows_in, sizeof(wg_record_row)); /* taken */
	if (prc < 0) {
		wg_scan_add_problem(scan, prc == WG_ELIMIT ? WG_ELIMIT : WG_EFORMAT, name, "%s: %s",
				    name, why);
		wg_record_mark_none(scan);
		wg_vec_free(&rows);
		return;
	}
	/* The rows by path: a member's row in one probe (bsearch took a strcmp per halving of
	 * 20,000 paths that share long prefixes). */
	wg_strmap by_path = {0};
	if (!wg_strmap_init(&by_path, rows.len)) {
		wg_scan_add_problem(scan, WG_ENOMEM, name, "%s: out of memory", name);
		wg_record_mark_none(scan);
		wg_vec_free(&rows);
		return;
	}
	for (size_t i = 0; i < rows.len; i++)
		if (wg_strmap_put(&by_path, ((wg_record_row *)wg_vec_at(&rows, i))->path, i) ==
		    SIZE_MAX - 1) {
			wg_scan_add_problem(scan, WG_ENOMEM, name, "%s: out of memory", name);
			wg_record_mark_none(scan);
			wg_strmap_free(&by_path);
			wg_vec_free(&rows);
			return;
		}
	for (size_t i = 0; i < scan->members.len; i++) {
		wg_member *m = wg_vec_at(&scan->members, i);
		if (m->is_dir)
			continue;
		size_t at = wg_strmap_get(&by_path, m->name);
		wg_record_row *r = at == SIZE_MAX ? NULL : wg_vec_at(&rows, at);
		if (r)
			r->used = true;
		if (m->record == WG_RECORD_ABSENT) /* a problem as an orphan is (WG-REC-005's) */
			wg_scan_add_problem(scan, WG_EINTEGRITY, m->name,
					    "%s: RECORD lists %s but it is missing from the installed "
					    "distribution", scan->path, m->name);
		if (m->record == WG_RECORD_NOT_READ || m->record == WG_RECORD_ABSENT)
			continue;
		bool is_sig = wg_has_suffix(m->name, "/RECORD.jws") || wg_has_suffix(m->name, "/RECORD.p7s");
		if (!r) {
			m->record = is_sig ? WG_RECORD_UNHASHED : WG_RECORD_MISSING;
			if (!is_sig)
				wg_scan_add_problem(scan, WG_EINTEGRITY, m->name,
						    "%s: %s is not listed in RECORD", scan->path, m->name);
			continue;
		}
		if (!r->algo) {
			m->record = WG_RECORD_UNHASHED;
			/* pip lists the .pyc files it compiled at install without a hash (the
			 * recording-installed-projects spec allows it): no problem there. */
			bool pyc = scan->kind == WG_SCAN_INSTALLED && wg_has_suffix(m->name, ".pyc");
			if (!wg_has_suffix(m->name, ".dist-info/RECORD") && !is_sig && !pyc)
				wg_scan_add_problem(scan, WG_EINTEGRITY, m->name,
						    "%s: RECORD lists %s without a hash", scan->path, m->name);
			continue;
		}
		if (!strcmp(m->name, name)) {
			/* A file cannot hold its own hash: the spec's RECORD row has none. */
			m->record = WG_RECORD_UNHASHED;
			wg_scan_add_problem(scan, WG_EFORMAT, m->name,
					    "%s: RECORD lists itself with a hash (%s=%s); its own row must "
					    "have none", scan->path, r->algo, r->digest);
			continue;
		}
		if (strcmp(r->algo, "sha256") != 0) {
			m->record = WG_RECORD_UNHASHED;
			wg_scan_add_problem(scan, WG_EUNSUPPORTED, m->name,
					    "%s: RECORD hashes %s with %s; wheelgate verifies sha256 only",
					    scan->path, m->name, r->algo);
			continue;
		}
		bool same_hash = !strcmp(r->digest, m->sha256_b64) ||
				 (scan->kind == WG_SCAN_INSTALLED && hex_digest_is(r->digest, m->sha256_b64));
		if (scan->repackaged &&
		    (!same_hash || (r->size >= 0 && (uint64_t)r->size != m->size))) {
			/* A system's packaging rewrote it after writing RECORD (stripped a .so):
			 * RECORD cannot tell whether it is what was installed; the package
			 * manager can (dpkg --verify). Counted for the report, not a problem. */
			m->record = WG_RECORD_REPACKAGED;
		} else if (!same_hash) {
			m->record = WG_RECORD_BAD_HASH;
			wg_scan_add_problem(scan, WG_EINTEGRITY, m->name,
					    "%s: %s: sha256 is %s but RECORD says %s", scan->path, m->name,
					    m->sha256_b64, r->digest);
		} else if (r->size >= 0 && (uint64_t)r->size != m->size) {
			m->record = WG_RECORD_BAD_SIZE;
			wg_scan_add_problem(scan, WG_EINTEGRITY, m->name,
					    "%s: %s: size is %llu but RECORD says %lld", scan->path, m->name,
					    (unsigned long long)m->size, (long long)r->size);
		} else {
			m->record = WG_RECORD_OK;
		}
	}
	for (size_t i = 0; i < rows.len; i++) {
		wg_record_row *r = wg_vec_at(&rows, i);
		if (r->used)
			continue;
		/* An installer writes scripts and data outside the site directory (`../../bin/x`)
		 * and lists them in RECORD: not members of the installed package, not orphans. */
		if (scan->kind == WG_SCAN_INSTALLED && (r->path[0] == '/' || wg_has_prefix(r->path, "../")))
			continue;
		/* Nor is a .pyc that is gone (input/installed.c): a cache Python manages itself. */
		if (scan->kind == WG_SCAN_INSTALLED && wg_has_suffix(r->path, ".pyc"))
			continue;
		wg_strlist_add(&scan->lists[WG_LIST_RECORD_ORPHANS], &scan->arena, r->path);
		wg_scan_add_problem(scan, WG_EINTEGRITY, r->path,
				    "%s: RECORD lists %s but the wheel has no such member", scan->path,
				    r->path);
	}
	wg_strmap_free(&by_path);
	wg_vec_free(&rows);
}

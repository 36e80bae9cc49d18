/*
 * The wheel's own description: the .dist-info directory read (WHEEL, METADATA, top_level.txt,
 * RECORD, variant.json) and the facts of its filename.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_WHEEL /* wg_seterr: what fails here */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "facts/wheel_internal.h"

bool wg_wheel_wanted_text(const char *name, const char *dist_info)
{
	const char *slash = strchr(name, '/');
	/* Only the .dist-info directory that is read: the others' files are never parsed, and
	 * holding them let many 1 MiB "METADATA" members add up to gigabytes (issue 12). */
	if (dist_info && slash && ((size_t)(slash - name) != strlen(dist_info) ||
				   memcmp(name, dist_info, (size_t)(slash - name))))
		return false;
	if (!slash || strchr(slash + 1, '/'))
		return false;
	if ((size_t)(slash - name) < 10 ||
	    memcmp(slash - 10, ".dist-info", 10) != 0)
		return false;
	const char *f = slash + 1;
	return !strcmp(f, "WHEEL") || !strcmp(f, "METADATA") || !strcmp(f, "RECORD") ||
	       !strcmp(f, "top_level.txt") || !strcmp(f, "variant.json");
}

typedef struct {
	wg_scan *scan;
	int which; /* 0 WHEEL, 1 METADATA */
} header_ctx;

static void on_header(const char *key, const char *value, void *payload)
{
	header_ctx *h = payload;
	wg_scan *scan = h->scan;
	if (h->which == 0) {
		if (!strcasecmp(key, "Wheel-Version"))
			scan->fields[WG_WHEEL_WHEEL_VERSION] = value;
		else if (!strcasecmp(key, "Generator"))
			scan->fields[WG_WHEEL_GENERATOR] = value;
		else if (!strcasecmp(key, "Root-Is-Purelib"))
			scan->fields[WG_WHEEL_ROOT_IS_PURELIB] = value;
		else if (!strcasecmp(key, "Tag"))
			wg_strlist_add(&scan->lists[WG_LIST_WHEEL_TAGS], &scan->arena, value);
	} else {
		if (!strcasecmp(key, "Name"))
			scan->fields[WG_WHEEL_META_NAME] = value;
		else if (!strcasecmp(key, "Version"))
			scan->fields[WG_WHEEL_META_VERSION] = value;
		else if (!strcasecmp(key, "Requires-Python"))
			scan->fields[WG_WHEEL_REQUIRES_PYTHON] = value;
		else if (!strcasecmp(key, "Requires-Dist"))
			wg_strlist_add(&scan->lists[WG_LIST_REQUIRES_DIST], &scan->arena, value);
	}
}


const char *wg_wheel_pick_dist_info(wg_scan *scan)
{
	const char *found = NULL;
	int count = 0;
	for (size_t i = 0; i < scan->members.len; i++) {
		const wg_member *m = wg_vec_at(&scan->members, i);
		const char *slash = strchr(m->name, '/');
		if (!slash || strcmp(slash + 1, "WHEEL") || (size_t)(slash - m->name) < 10 ||
		    memcmp(slash - 10, ".dist-info", 10))
			continue;
		char *dir = wg_arena_strndup(&scan->arena, m->name, (size_t)(slash - m->name));
		if (!dir)
			continue;
		count++;
		const char *n = scan->fields[WG_WHEEL_NAME], *v = scan->fields[WG_WHEEL_VERSION];
		if (!found)
			found = dir;
		if (n && v) {
			char *want = wg_arena_printf(&scan->arena, "%s-%s.dist-info", n, v);
			if (want && strcmp(want, dir) == 0)
				found = dir;
		}
	}
	if (count > 1)
		wg_scan_add_problem(scan, WG_EFORMAT, NULL, "%s: %d .dist-info directories with a WHEEL "
				    "file; using %s", scan->path, count, found);
	return found;
}

void wg_wheel_parse_text_members(wg_scan *scan, text_member *texts, size_t ntexts,
				 const char *di)
{
	scan->fields[WG_WHEEL_DIST_INFO] = di;
	if (!di) {
		wg_scan_add_problem(scan, WG_EFORMAT, NULL, "%s: no .dist-info directory with a WHEEL "
				    "file", scan->path);
		wg_record_mark_none(scan);
		return;
	}
	size_t dl = strlen(di);
	text_member *rec = NULL;
	for (size_t i = 0; i < ntexts; i++) {
		text_member *t = &texts[i];
		if (strncmp(t->name, di, dl) || t->name[dl] != '/')
			continue;
		const char *f = t->name + dl + 1;
		if (!strcmp(f, "WHEEL") || !strcmp(f, "METADATA")) {
			header_ctx h = {scan, strcmp(f, "WHEEL") ? 1 : 0};
			wg_headers_parse(t->text, t->len, &scan->arena, on_header, &h);
		} else if (!strcmp(f, "top_level.txt")) {
			for (char *p = t->text, *end = t->text + t->len; p < end;) {
				char *nl = memchr(p, '\n', (size_t)(end - p));
				char *le = nl ? nl : end;
				char *e = le;
				while (e > p && (e[-1] == '\r' || e[-1] == ' '))
					e--;
				if (e > p) {
					char *line = wg_arena_strndup(&scan->arena, p, (size_t)(e - p));
					if (line)
						wg_strlist_add(&scan->lists[WG_LIST_TOP_LEVEL], &scan->arena, line);
				}
				p = nl ? nl + 1 : end;
			}
		} else if (!strcmp(f, "RECORD")) {
			rec = t;
		} else if (!strcmp(f, "variant.json")) {
			wg_variant_read(scan, t->name, t->text, t->len);
		}
	}
	if (!scan->fields[WG_WHEEL_WHEEL_VERSION])
		wg_scan_add_problem(scan, WG_EFORMAT, NULL, "%s: %s/WHEEL has no Wheel-Version",
				    scan->path, di);
	scan->has_record = rec != NULL;
	if (rec && rec->parsed) {
		wg_record_verify_rows(scan, rec->name, &rec->rows, rec->rows_rc,
				      rec->rows_why ? rec->rows_why : "out of memory");
	} else if (rec) {
		wg_record_verify(scan, rec->name, rec->text, rec->len);
	} else {
		/* A RECORD there but not read is not "no RECORD": say why it was not. */
		const wg_member *rm = NULL;
		for (size_t i = 0; i < scan->members.len && !rm; i++) {
			const wg_member *m = wg_vec_at(&scan->members, i);
			if (!strncmp(m->name, di, dl) && !strcmp(m->name + dl, "/RECORD"))
				rm = m;
		}
		if (rm && rm->size == 0) {
			/* An empty RECORD was read: it lists nothing (no member has a chunk, so none
			 * was kept); every member is then unlisted, as with a RECORD of blank lines. */
			scan->has_record = true;
			wg_record_verify(scan, rm->name, "", 0);
			return;
		}
		if (rm && rm->size > TEXT_MAX)
			wg_scan_add_problem(scan, WG_ELIMIT, rm->name, "%s: %s is too large (%llu bytes, "
					    "limit %u): not read, so no member can be verified",
					    scan->path, rm->name, (unsigned long long)rm->size, TEXT_MAX);
		else if (rm)
			wg_scan_add_problem(scan, WG_EINTEGRITY, rm->name, "%s: %s could not be read: no "
					    "member can be verified", scan->path, rm->name);
		else
			wg_scan_add_problem(scan, WG_EINTEGRITY, NULL, "%s: no %s/RECORD", scan->path, di);
		wg_record_mark_none(scan);
	}
}

void wg_wheel_parse_filename(wg_scan *scan, const char *name)
{
	wg_wheelname wn;
	wg_err err = {0};
	const char *base = wg_base_name(name);
	if (wg_wheelname_parse(&wn, &scan->arena, base, &err) < 0) {
		scan->fields[WG_WHEEL_FILENAME_ERROR] = wg_arena_strdup(&scan->arena, err.msg);
		if (wg_has_suffix(base, ".whl"))
			wg_scan_add_problem(scan, WG_EFORMAT, NULL, "%s", err.msg);
		return;
	}
	scan->fields[WG_WHEEL_NAME] = wn.name;
	scan->fields[WG_WHEEL_VERSION] = wn.version;
	scan->fields[WG_WHEEL_PUBLIC_VERSION] = wn.public_version;
	scan->fields[WG_WHEEL_LOCAL_VERSION] = wn.local;
	scan->fields[WG_WHEEL_BUILD_TAG] = wn.build;
	scan->fields[WG_WHEEL_VARIANT_LABEL] = wn.variant;
	scan->lists[WG_LIST_PYTHON_TAGS] = wn.py;
	scan->lists[WG_LIST_ABI_TAGS] = wn.abi;
	scan->lists[WG_LIST_PLATFORM_TAGS] = wn.plat;
}

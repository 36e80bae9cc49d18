/*
 * The wheel reader: turns a wheel (a zip) into facts. Each wheel member is read exactly once;
 * in that one pass it is hashed for RECORD and, when it is an ELF object or a metadata file,
 * kept in memory just long enough to be parsed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "facts/facts.h"

/* ---------------------------------------------------------------------------------------- */
/* wheels                                                                                   */

/* Member names that could write outside the install directory, or mean different things on
 * different systems. */
static const char *unsafe_reason(const char *name)
{
	if (!*name)
		return "empty name";
	if (name[0] == '/')
		return "absolute path";
	if (strchr(name, '\\'))
		return "backslash in name";
	if (((name[0] | 0x20) >= 'a' && (name[0] | 0x20) <= 'z') && name[1] == ':')
		return "drive letter";
	for (const char *p = name; *p;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return "'..' path component";
		if (!e)
			break;
		p = e + 1;
	}
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return "control character in name";
	return NULL;
}

typedef struct {
	const char *name;
	char *text;
	size_t len;
} text_member;

typedef struct {
	wg_scan *scan;
	wg_scanner *s;
	wg_member *m;
	wg_sha256 *sha;
	uint8_t *buf;        /* whole member, when kept */
	size_t len, cap;
	bool decided, keep, elf;
	uint64_t done;
	uint64_t *py_budget;
	uint64_t *py_lines;    /* lines of Python the options still allow */
	uint64_t *text_budget; /* bytes of metadata members the options still allow */
	const char *dist_info; /* the .dist-info directory whose metadata is read, or NULL */
	bool py_refused;       /* a Python file not kept: over the bytes or lines budget */
	bool text_refused;     /* a metadata member not kept: over max_text_total */
	const char *progress_name;
} member_reader;

#define TEXT_MAX (16u << 20)
#define PY_MAX (1u << 20)      /* a Python file kept for the checks */

static bool is_py(const char *name)
{
	return wg_has_suffix(name, ".py");
}

static bool wanted_text(const char *name, const char *dist_info)
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
	       !strcmp(f, "top_level.txt");
}

static int on_chunk(const uint8_t *data, size_t n, void *payload)
{
	member_reader *r = payload;
	wg_sha256_update(r->sha, data, n);
	if (!r->decided) {
		r->decided = true;
		/* The first chunk holds at least 4 bytes unless the member is that small. */
		r->elf = wg_is_elf(data, n);
		r->keep = r->elf;
		if (!r->keep && wanted_text(r->m->name, r->dist_info) && r->m->size <= TEXT_MAX) {
			if (r->m->size <= *r->text_budget) {
				*r->text_budget -= r->m->size;
				r->keep = true;
			} else {
				r->text_refused = true;
			}
		}
		if (!r->keep && is_py(r->m->name) && r->m->size <= PY_MAX) {
			if (r->m->size <= *r->py_budget && *r->py_lines) {
				*r->py_budget -= r->m->size;
				r->keep = true;
			} else {
				r->py_refused = true;
			}
		}
		if (r->keep) {
			r->cap = (size_t)r->m->size;
			if (!(r->buf = malloc(r->cap ? r->cap : 1)))
				return wg_seterr(&r->s->err, WG_ENOMEM, "%s: out of memory for %s",
						 r->scan->path, r->m->name);
		}
	}
	if (r->keep) {
		if (n > r->cap - r->len)
			return WG_EFORMAT; /* cannot happen: wg_zip_read enforces the size */
		memcpy(r->buf + r->len, data, n);
		r->len += n;
	}
	r->done += n;
	const wg_options *o = &r->s->ctx->opts;
	if (o->progress && r->m->size >= (64u << 20) && (r->done % (32u << 20) < n || r->done == r->m->size))
		o->progress(r->progress_name, r->done, r->m->size, o->progress_payload);
	return WG_OK;
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

/* "x.so", "libx.so.1.2": names the loader or the importer would take for an ELF object. */
static bool looks_like_shared_object(const char *name)
{
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	const char *so = strstr(base, ".so");
	while (so) {
		const char *after = so + 3;
		if (!*after)
			return true;
		if (*after == '.') {
			const char *p = after;
			while (*p == '.' || (*p >= '0' && *p <= '9'))
				p++;
			if (!*p)
				return true;
		}
		so = strstr(so + 1, ".so");
	}
	return false;
}

static int cmp_member_name(const void *a, const void *b)
{
	const wg_member *const *x = a, *const *y = b;
	return strcmp((*x)->name, (*y)->name);
}

/* The .dist-info directory: the one that matches the filename, else the only one. */
static const char *pick_dist_info(wg_scan *scan)
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

static void parse_text_members(wg_scan *scan, text_member *texts, size_t ntexts,
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
	const text_member *rec = NULL;
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
		}
	}
	if (!scan->fields[WG_WHEEL_WHEEL_VERSION])
		wg_scan_add_problem(scan, WG_EFORMAT, NULL, "%s: %s/WHEEL has no Wheel-Version",
				    scan->path, di);
	scan->has_record = rec != NULL;
	if (rec) {
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

static void parse_filename(wg_scan *scan, const char *name)
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
	scan->lists[WG_LIST_PYTHON_TAGS] = wn.py;
	scan->lists[WG_LIST_ABI_TAGS] = wn.abi;
	scan->lists[WG_LIST_PLATFORM_TAGS] = wn.plat;
}

int wg_wheel_read(wg_scan *scan, wg_scanner *s, const wg_members *in)
{
	const wg_options *o = &s->ctx->opts;
	wg_err err = {0};
	text_member *texts = NULL;
	size_t ntexts = 0;
	int rc = WG_OK;

	/* An installed distribution keeps no filename: its filename facts stay unknown. */
	if (!in->installed)
		parse_filename(scan, scan->path);
	int64_t count = in->count(in->self);
	if (count < 0)
		return wg_seterr(&s->err, WG_EFORMAT, "%s: unreadable zip directory", scan->path);
	if ((uint64_t)count > o->max_members)
		return wg_seterr(&s->err, WG_ELIMIT, "%s: %lld members, more than the limit of %u",
				 scan->path, (long long)count, o->max_members);
	if (!(texts = calloc((size_t)count + 1, sizeof(*texts))))
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");

	/* Pass 1: the directory. Nothing is decompressed yet, so limits cost nothing. */
	uint64_t total = 0;
	for (int64_t i = 0; i < count; i++) {
		wg_zip_entry e;
		if ((rc = in->stat(&e, in->self, (uint64_t)i, &err)) < 0) {
			wg_seterr(&s->err, rc, "%s", err.msg);
			goto done;
		}
		wg_member *m = wg_vec_push(&scan->members);
		if (!m || !(m->name = wg_arena_strdup(&scan->arena, e.name))) {
			rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
			goto done;
		}
		m->size = e.size;
		m->csize = e.csize;
		m->method = e.method;
		m->is_dir = wg_has_suffix(m->name, "/");
		m->safe = true;
		m->record = WG_RECORD_NOT_READ;
		const char *why = unsafe_reason(m->name);
		if (why) {
			m->safe = false;
			wg_scan_add_problem(scan, WG_EUNSAFE, m->name,
					    "%s: unsafe member name '%s' (%s): it would be written outside "
					    "the install directory", scan->path, m->name, why);
		}
		if (e.encrypted) {
			m->safe = false;
			wg_scan_add_problem(scan, WG_EUNSUPPORTED, m->name, "%s: %s is encrypted",
					    scan->path, m->name);
		} else if (m->size > o->max_member_size) {
			m->safe = false;
			wg_scan_add_problem(scan, WG_ELIMIT, m->name,
					    "%s: %s claims %llu bytes uncompressed, more than the limit of "
					    "%llu (max_member_size); not read", scan->path, m->name,
					    (unsigned long long)m->size,
					    (unsigned long long)o->max_member_size);
		} else if (!in->installed && m->size > (1u << 20) && o->max_ratio &&
			   m->size / (m->csize ? m->csize : 1) > o->max_ratio) {
			m->safe = false;
			wg_scan_add_problem(scan, WG_ELIMIT, m->name,
					    "%s: %s expands %llu bytes to %llu (more than %u:1): a zip bomb; "
					    "not read", scan->path, m->name, (unsigned long long)m->csize,
					    (unsigned long long)m->size, o->max_ratio);
		} else if (m->size > o->max_total_size - total) {
			m->safe = false;
			wg_scan_add_problem(scan, WG_ELIMIT, m->name,
					    "%s: members add up to more than %llu bytes (max_total_size); "
					    "%s not read", scan->path,
					    (unsigned long long)o->max_total_size, m->name);
		} else {
			total += m->size;
		}
	}
	/* Duplicate names: one would silently overwrite the other on install. */
	if (scan->members.len > 1) {
		wg_member **sorted = malloc(scan->members.len * sizeof(*sorted));
		if (!sorted) {
			rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
			goto done;
		}
		for (size_t i = 0; i < scan->members.len; i++)
			sorted[i] = wg_vec_at(&scan->members, i);
		qsort(sorted, scan->members.len, sizeof(*sorted), cmp_member_name);
		for (size_t i = 1; i < scan->members.len; i++)
			if (!strcmp(sorted[i]->name, sorted[i - 1]->name))
				wg_scan_add_problem(scan, WG_EUNSAFE, sorted[i]->name,
						    "%s: member %s appears more than once", scan->path,
						    sorted[i]->name);
		free(sorted);
	}

	/* Pass 2: every member once: hash it, and keep what needs parsing: the objects, the
	 * metadata of the one .dist-info directory read, Python sources, each within its budget. */
	const char *di = pick_dist_info(scan);
	uint64_t py_budget = o->max_python_bytes, py_lines = o->max_python_lines;
	uint64_t text_budget = o->max_text_total;
	bool py_said = false, text_said = false;
	for (size_t i = 0; i < scan->members.len; i++) {
		wg_member *m = wg_vec_at(&scan->members, i);
		if (m->is_dir || !m->safe)
			continue;
		member_reader r = {.scan = scan, .s = s, .m = m, .progress_name = m->name,
				   .py_budget = &py_budget, .py_lines = &py_lines,
				   .text_budget = &text_budget, .dist_info = di};
		if (!(r.sha = wg_sha256_new())) {
			rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
			goto done;
		}
		err.code = 0;
		rc = in->read(in->self, i, m->size, on_chunk, &r, &err);
		if (rc == WG_ENOMEM) {
			wg_sha256_free(r.sha);
			free(r.buf);
			goto done;
		}
		if (rc < 0) {
			wg_scan_add_problem(scan, rc, m->name, "%s", err.msg);
			wg_sha256_free(r.sha);
			free(r.buf);
			rc = WG_OK;
			continue;
		}
		if (r.text_refused && !text_said) {
			text_said = true;
			wg_scan_add_problem(scan, WG_ELIMIT, m->name,
					    "%s: metadata members add up to more than %llu bytes "
					    "(max_text_total); %s and later ones not read", scan->path,
					    (unsigned long long)o->max_text_total, m->name);
		}
		if (r.keep && is_py(m->name) && !r.elf) {
			/* Lines count against max_python_lines: what the import checks examine. */
			uint64_t lines = 1;
			for (const uint8_t *p = r.buf, *end = r.buf + r.len;
			     (p = memchr(p, '\n', (size_t)(end - p))); p++)
				lines++;
			if (lines > py_lines) {
				r.keep = false;
				r.py_refused = true;
				py_lines = 0;
				free(r.buf);
				r.buf = NULL;
			} else {
				py_lines -= lines;
			}
		}
		if (r.py_refused && !py_said) {
			/* Not a problem of the wheel (a large pure package is normal: transformers has
			 * 49 MB of Python): the import checks say they saw part of it (WG-WHL-003). */
			py_said = true;
			scan->python_partial = wg_arena_strdup(&scan->arena, m->name);
			scan->python_partial_why = wg_arena_printf(
				&scan->arena, "more than %llu bytes (max_python_bytes) or %u lines "
				"(max_python_lines)", (unsigned long long)o->max_python_bytes,
				o->max_python_lines);
		}
		wg_sha256_final(r.sha, m->sha256);
		wg_sha256_free(r.sha);
		char b64[48];
		wg_b64url(b64, m->sha256, 32);
		m->sha256_b64 = wg_arena_strdup(&scan->arena, b64);
		m->hashed = m->read_ok = true;
		m->record = WG_RECORD_OK;
		m->is_elf = r.elf;
		if (r.elf) {
			rc = wg_scan_add_elf(scan, s, m->name, m->name, r.buf, r.len);
			free(r.buf);
			if (rc < 0)
				goto done;
		} else if (looks_like_shared_object(m->name)) {
			wg_scan_add_problem(scan, WG_EFORMAT, m->name,
					    "%s: %s is named like a shared object but is not an ELF object",
					    scan->path, m->name);
			free(r.buf);
		} else if (r.keep && is_py(m->name)) {
			/* Python sources stay with the scan for the checks (imports). */
			wg_source *src = wg_vec_push(&scan->sources);
			char *text = src ? realloc(r.buf, r.len + 1) : NULL;
			if (!text) {
				free(r.buf);
				if (src)
					scan->sources.len--;
				rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
				goto done;
			}
			text[r.len] = '\0';
			src->name = m->name;
			src->text = text;
			src->len = r.len;
		} else if (r.keep) {
			texts[ntexts].name = m->name;
			texts[ntexts].text = (char *)r.buf;
			texts[ntexts].len = r.len;
			ntexts++;
		}
	}
	parse_text_members(scan, texts, ntexts, di);
done:
	for (size_t i = 0; i < ntexts; i++)
		free(texts[i].text);
	free(texts);
	return rc;
}

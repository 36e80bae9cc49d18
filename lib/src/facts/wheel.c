/*
 * The wheel reader: turns a wheel (a zip) into facts. Each wheel member is read exactly once
 * (wheel_members.c); in that one pass it is hashed for RECORD and, when it is an ELF object
 * or a metadata file, kept in memory just long enough to be parsed. Here: the directory
 * (pass 1), the merge of what pass 2 read, in member order, and the steps in their order.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_WHEEL /* wg_seterr: what fails here */
#include <stdlib.h>
#include <string.h>

#include "facts/wheel_internal.h"

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

/* "x.so", "libx.so.1.2": names the loader or the importer would take for an ELF object. */
bool wg_looks_like_shared_object(const char *name)
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

/* ---------------------------------------------------------------------------------------- */
/* pass 1: the directory. Nothing is decompressed yet, so limits cost nothing.               */

/* Member i of the directory: its entry, whether its name is safe, whether it is read within
 * the limits (total: the bytes of the members read so far). */
static int add_member(wg_scan *scan, wg_scanner *s, const wg_members *in, int64_t i,
		      uint64_t *total)
{
	const wg_options *o = &s->ctx->opts;
	wg_err err = {0};
	wg_zip_entry e = {0};
	int rc;
	if ((rc = in->stat(&e, in->self, (uint64_t)i, &err)) < 0) {
		wg_err_copy(&s->err, &err, rc);
		return rc;
	}
	wg_member *m = wg_vec_push(&scan->members);
	if (!m || !(m->name = wg_arena_strdup(&scan->arena, e.name)))
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	m->size = e.size;
	m->csize = e.csize;
	m->method = e.method;
	m->is_dir = wg_has_suffix(m->name, "/");
	m->safe = true;
	/* An installed file RECORD lists and that is gone: nothing to read; the record
	 * rules report it (WG-REC-005), no read problem. */
	m->record = e.absent ? WG_RECORD_ABSENT : WG_RECORD_NOT_READ;
	m->symlink = e.symlink;
	const char *why = unsafe_reason(m->name);
	if (e.nul_in_name) {
		/* libzip reads a NUL in a name as a space (so m->name has one there);
		 * Python's zipfile ends the name at it, uv keeps it. */
		m->safe = false;
		wg_scan_add_problem(scan, WG_EUNSAFE, m->name,
				    "%s: unsafe member name '%s' (a NUL byte, shown as a space): "
				    "pip installs the file under the part of the name before it, "
				    "other installers under another name or not at all", scan->path,
				    m->name);
	} else if (why) {
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
	} else if (m->size > o->max_total_size - *total) {
		m->safe = false;
		wg_scan_add_problem(scan, WG_ELIMIT, m->name,
				    "%s: members add up to more than %llu bytes (max_total_size); "
				    "%s not read", scan->path,
				    (unsigned long long)o->max_total_size, m->name);
	} else {
		*total += m->size;
	}
	return WG_OK;
}

/* Duplicate names: one would silently overwrite the other on install. */
static int flag_duplicates(wg_scan *scan, wg_scanner *s)
{
	if (scan->members.len <= 1)
		return WG_OK;
	wg_strmap seen = {0};
	if (!wg_strmap_init(&seen, scan->members.len))
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	for (size_t i = 0; i < scan->members.len; i++) {
		wg_member *m = wg_vec_at(&scan->members, i);
		size_t was = wg_strmap_put(&seen, m->name, i);
		if (was == SIZE_MAX - 1) {
			wg_strmap_free(&seen);
			return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		}
		if (was != SIZE_MAX)
			wg_scan_add_problem(scan, WG_EUNSAFE, m->name,
					    "%s: member %s appears more than once", scan->path,
					    m->name);
	}
	wg_strmap_free(&seen);
	return WG_OK;
}

static int read_directory(wg_scan *scan, wg_scanner *s, const wg_members *in, int64_t count)
{
	uint64_t total = 0;
	int rc;
	for (int64_t i = 0; i < count; i++)
		if ((rc = add_member(scan, s, in, i, &total)) < 0)
			return rc;
	return flag_duplicates(scan, s);
}

/* ---------------------------------------------------------------------------------------- */
/* the merge: in member order, as one thread would have read them                            */

typedef struct {
	pass2 *P;
	const char *di;
	uint64_t py_budget, py_lines, text_budget;
	bool py_said, text_said;
	text_member *texts;
	size_t ntexts;
} merge_state;

/* Whether member m's copy is kept for the checks, by the budgets in member order; *refused
 * when a Python source was refused (py_big: for its own size). */
static bool decide_keep(merge_state *M, const wg_member *m, const member_out *mo,
			bool *text_refused, bool *py_refused, bool *py_big)
{
	bool keep = false;
	if (!mo->elf && wg_wheel_wanted_text(m->name, M->di) && m->size <= TEXT_MAX) {
		if (m->size <= M->text_budget) {
			M->text_budget -= m->size;
			keep = true;
		} else {
			*text_refused = true;
		}
	}
	if (!mo->elf && !keep && wg_wheel_is_py(m->name) && m->size > PY_MAX) {
		*py_refused = *py_big = true; /* never hidden: the file is named */
	} else if (!mo->elf && !keep && wg_wheel_is_py(m->name)) {
		if (m->size <= M->py_budget && M->py_lines) {
			M->py_budget -= m->size;
			keep = true;
		} else {
			*py_refused = true;
		}
	}
	return keep;
}

/* Says once that the import checks saw part of the Python sources, from m on. */
static void say_python_partial(merge_state *M, wg_scan *scan, const wg_member *m, bool py_big)
{
	const wg_options *o = &scan->ctx->opts;
	if (M->py_said)
		return;
	/* Not a problem of the wheel (a large pure package is normal: transformers has
	 * 49 MB of Python): the import checks say they saw part of it (WG-WHL-003). */
	M->py_said = true;
	scan->python_partial = wg_arena_strdup(&scan->arena, m->name);
	scan->python_partial_why =
		py_big ? wg_arena_printf(&scan->arena, "was not read: it is larger "
					 "than %u MiB, the most of one file they "
					 "read", PY_MAX >> 20)
		       : wg_arena_printf(&scan->arena, "and the sources after it were "
					 "not read: they add up to more than %llu "
					 "bytes (max_python_bytes) or %u lines "
					 "(max_python_lines)",
					 (unsigned long long)o->max_python_bytes,
					 o->max_python_lines);
}

/* The object and its problems, moved into the scan (their text lives in a slot's arena,
 * adopted when pass 2 is freed). */
static int adopt_object(wg_scan *scan, wg_scanner *s, wg_scan *sub)
{
	if (!sub)
		return WG_OK;
	for (size_t k = 0; k < sub->objects.len; k++) {
		wg_object **slot = wg_vec_push(&scan->objects);
		if (!slot)
			return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		*slot = *(wg_object **)wg_vec_at(&sub->objects, k);
		/* the input's budget of fatbin entries, over all its objects */
		wg_fatbin_budget(scan, *slot);
	}
	sub->objects.len = 0;
	uint32_t maxp = scan->ctx->opts.max_problems;
	for (size_t k = 0; k < sub->problems.len; k++) {
		const wg_problem *q = wg_vec_at(&sub->problems, k);
		size_t slot = q->code <= 0 && q->code > -WG_PROBLEM_CODES
				      ? (size_t)-q->code : WG_PROBLEM_CODES - 1;
		if (maxp && scan->problems_kept[slot] >= maxp) {
			scan->problems_more[slot]++;
			continue;
		}
		wg_problem *p = wg_vec_push(&scan->problems);
		if (!p)
			return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		*p = *q;
		scan->problems_kept[slot]++;
	}
	for (size_t k = 0; k < WG_PROBLEM_CODES; k++)
		scan->problems_more[k] += sub->problems_more[k];
	return WG_OK;
}

/* A kept copy that is no object: a Python source stays with the scan for the checks
 * (imports); a metadata member goes to the texts parsed after the merge. */
static int keep_copy(merge_state *M, wg_scan *scan, wg_scanner *s, const wg_member *m,
		     member_out *mo)
{
	if (wg_wheel_is_py(m->name)) {
		wg_source *src = wg_vec_push(&scan->sources);
		if (!src)
			return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		mo->buf[mo->len] = '\0';
		src->name = m->name;
		src->text = (char *)mo->buf;
		src->len = mo->len;
		mo->buf = NULL;
		return WG_OK;
	}
	text_member *t = &M->texts[M->ntexts++];
	t->name = m->name;
	t->text = (char *)mo->buf;
	t->len = mo->len;
	mo->buf = NULL;
	if (mo->parsed) {
		t->parsed = true;
		t->rows_rc = mo->rows_rc;
		t->rows = mo->rows;
		t->rows_why = mo->rows_why;
		mo->parsed = false;
		mo->rows_why = NULL;
	}
	return WG_OK;
}

/* What pass 2 read of member i, told to the scan. */
static int merge_member(merge_state *M, wg_scan *scan, wg_scanner *s, size_t i)
{
	const wg_options *o = &s->ctx->opts;
	wg_member *m = wg_vec_at(&scan->members, i);
	member_out *mo = &M->P->out[i];
	if (m->is_dir || !m->safe || m->record == WG_RECORD_ABSENT)
		return WG_OK;
	if (mo->rc == WG_ENOMEM)
		return wg_seterr(&s->err, WG_ENOMEM, "%s: %s", scan->path, mo->msg ? mo->msg : "out of memory");
	if (mo->rc < 0) {
		wg_scan_add_problem(scan, mo->rc, m->name, "%s", mo->msg ? mo->msg : "unreadable");
		m->is_elf = mo->elf; /* an object is there, unreadable */
		return WG_OK;
	}
	bool text_refused = false, py_refused = false, py_big = false;
	bool keep = decide_keep(M, m, mo, &text_refused, &py_refused, &py_big);
	if (keep && !mo->buf) {
		/* Kept by the budgets, but its copy was not reserved up front (an ELF object
		 * with a metadata or Python name took the room): read it again, here. */
		wg_wheel_member_reread(M->P, i);
		if (mo->rc == WG_ENOMEM)
			return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		if (mo->rc < 0) {
			wg_scan_add_problem(scan, mo->rc, m->name, "%s", mo->msg);
			return WG_OK;
		}
	} else if (!keep && mo->buf) {
		free(mo->buf);
		mo->buf = NULL;
	}
	if (text_refused && !M->text_said) {
		M->text_said = true;
		wg_scan_add_problem(scan, WG_ELIMIT, m->name,
				    "%s: metadata members add up to more than %llu bytes "
				    "(max_text_total); %s and later ones not read", scan->path,
				    (unsigned long long)o->max_text_total, m->name);
	}
	if (keep && wg_wheel_is_py(m->name)) {
		/* Lines count against max_python_lines: what the import checks examine. */
		uint64_t lines = 1;
		for (const uint8_t *p = mo->buf, *end = mo->buf + mo->len;
		     (p = memchr(p, '\n', (size_t)(end - p))); p++)
			lines++;
		if (lines > M->py_lines) {
			keep = false;
			py_refused = true;
			M->py_lines = 0;
			free(mo->buf);
			mo->buf = NULL;
		} else {
			M->py_lines -= lines;
		}
	}
	if (py_refused)
		say_python_partial(M, scan, m, py_big);
	memcpy(m->sha256, mo->sha, 32);
	char b64[48];
	wg_b64url(b64, m->sha256, 32);
	m->sha256_b64 = wg_arena_strdup(&scan->arena, b64);
	m->hashed = m->read_ok = true;
	m->record = WG_RECORD_OK;
	m->is_elf = mo->elf;
	if (mo->streamed) {
		wg_read_stats *rs = &scan->read_stats;
		rs->streamed++;
		rs->streamed_bytes += m->size;
		if (mo->sparse_read) {
			rs->sparse_objects++;
			rs->sparse_bytes += mo->sparse.size;
			rs->kept_bytes += mo->sparse.kept;
			rs->kept_max = mo->sparse.kept > rs->kept_max ? mo->sparse.kept : rs->kept_max;
			rs->extra_passes += mo->sparse.passes;
			rs->extra_objects += mo->sparse.passes > 0;
			rs->refetched_bytes += mo->sparse.refetched;
		}
	}
	if (mo->elf)
		return adopt_object(scan, s, mo->sub);
	if (wg_looks_like_shared_object(m->name)) {
		wg_scan_add_problem(scan, WG_EFORMAT, m->name,
				    "%s: %s is named like a shared object but is not an ELF object",
				    scan->path, m->name);
		return WG_OK;
	}
	return keep ? keep_copy(M, scan, s, m, mo) : WG_OK;
}

/* ---------------------------------------------------------------------------------------- */

int wg_wheel_read(wg_scan *scan, wg_scanner *s, const wg_members *in)
{
	const wg_options *o = &s->ctx->opts;
	pass2 P = {0};
	merge_state M = {&P, NULL, o->max_python_bytes, o->max_python_lines, o->max_text_total,
			 false, false, NULL, 0};
	int rc = WG_OK;

	/* An installed distribution keeps no filename: its filename facts stay unknown. */
	if (!in->installed)
		wg_wheel_parse_filename(scan, scan->path);
	scan->repackaged = in->installed && in->repackaged;
	if (in->installed && in->installer)
		scan->fields[WG_WHEEL_INSTALLER] = wg_arena_strdup(&scan->arena, in->installer);
	int64_t count = in->count(in->self);
	if (count < 0)
		return wg_seterr(&s->err, WG_EFORMAT, "%s: unreadable zip directory", scan->path);
	if ((uint64_t)count > o->max_members)
		return wg_seterr(&s->err, WG_ELIMIT, "%s: %lld members, more than the limit of %u",
				 scan->path, (long long)count, o->max_members);
	if (!(M.texts = calloc((size_t)count + 1, sizeof(*M.texts))))
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");

	if ((rc = read_directory(scan, s, in, count)) < 0)
		goto done;
	M.di = wg_wheel_pick_dist_info(scan);
	if ((rc = wg_wheel_members_read(&P, scan, s, in, M.di)) < 0)
		goto done;
	for (size_t i = 0; i < scan->members.len; i++)
		if ((rc = merge_member(&M, scan, s, i)) < 0)
			goto done;
	wg_wheel_parse_text_members(scan, M.texts, M.ntexts, M.di);
done:
	P.scan = scan;
	wg_wheel_members_free(&P);
	for (size_t i = 0; i < M.ntexts; i++) {
		free(M.texts[i].text);
		free(M.texts[i].rows_why);
		if (M.texts[i].parsed)
			wg_vec_free(&M.texts[i].rows); /* an empty vector once verified */
	}
	free(M.texts);
	return rc;
}

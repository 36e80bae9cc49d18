/*
 * Scanning: turns a wheel, an ELF file or a directory into facts. Each wheel member is read
 * exactly once; in that one pass it is hashed for RECORD and, when it is an ELF object or a
 * metadata file, kept in memory just long enough to be parsed. Also the context, the scanner
 * and the public accessors of the fact model.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data.h"
#include "internal.h"

/* ---------------------------------------------------------------------------------------- */
/* context and scanner                                                                      */

WG_API int wg_options_init(wg_options *opts, unsigned int version)
{
	if (!opts || version != WG_OPTIONS_VERSION)
		return WG_EINVAL;
	wg_options def = WG_OPTIONS_INIT;
	*opts = def;
	return WG_OK;
}

static const wg_data_file *find_data(const char *path)
{
	for (const wg_data_file *f = wg_data_files; f->path; f++)
		if (strcmp(f->path, path) == 0)
			return f;
	return NULL;
}

WG_API int wg_context_new(wg_context **out, const wg_options *opts)
{
	wg_err err = {0};
	int rc;
	if (!out)
		return WG_EINVAL;
	*out = NULL;
	if (opts && (opts->version == 0 || opts->version > WG_OPTIONS_VERSION)) {
		wg_set_last_error(WG_EINVAL, "wg_options version %u is not supported (this library: %u)",
				  opts->version, WG_OPTIONS_VERSION);
		return WG_EINVAL;
	}
	wg_context *ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		wg_set_last_error(WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	wg_options_init(&ctx->opts, WG_OPTIONS_VERSION);
	if (opts)
		ctx->opts = *opts;
	const wg_data_file *f = find_data("classify/string-abi.yaml");
	if (!f) {
		wg_set_last_error(WG_EDATA, "rules/classify/string-abi.yaml is missing from the build");
		free(ctx);
		return WG_EDATA;
	}
	if ((rc = wg_classifier_load(&ctx->classifier, "rules/classify/string-abi.yaml", f->text,
				     f->len, &err)) < 0) {
		wg_set_last_error(rc, "%s", err.msg);
		free(ctx);
		return rc;
	}
	const wg_data_file *cf = find_data("gpu/cuda.yaml");
	if (!cf || (rc = wg_cuda_data_load(&ctx->cuda, "rules/gpu/cuda.yaml", cf->text, cf->len,
					     &err)) < 0) {
		wg_set_last_error(WG_EDATA, "%s", cf ? err.msg : "rules/gpu/cuda.yaml is missing");
		wg_classifier_free(ctx->classifier);
		free(ctx);
		return WG_EDATA;
	}
	*out = ctx;
	return WG_OK;
}

WG_API void wg_context_free(wg_context *ctx)
{
	if (!ctx)
		return;
	wg_classifier_free(ctx->classifier);
	wg_cuda_data_free(ctx->cuda);
	free(ctx);
}

WG_API int wg_scanner_new(wg_scanner **out, wg_context *ctx)
{
	if (!out || !ctx)
		return WG_EINVAL;
	wg_scanner *s = calloc(1, sizeof(*s));
	if (!s || wg_matcher_new(&s->matcher, ctx->classifier) < 0) {
		free(s);
		wg_set_last_error(WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	s->ctx = ctx;
	*out = s;
	return WG_OK;
}

WG_API void wg_scanner_free(wg_scanner *s)
{
	if (!s)
		return;
	wg_matcher_free(s->matcher);
	free(s);
}

WG_API const char *wg_scanner_error(const wg_scanner *s)
{
	return s ? s->err.msg : "no scanner";
}

/* ---------------------------------------------------------------------------------------- */
/* the fact model                                                                           */

static wg_scan *scan_new(wg_scan_kind kind, const char *path, const wg_context *ctx)
{
	wg_scan *scan = calloc(1, sizeof(*scan));
	if (!scan)
		return NULL;
	scan->kind = kind;
	scan->ctx = ctx;
	wg_vec_init(&scan->members, sizeof(wg_member));
	wg_vec_init(&scan->objects, sizeof(wg_object *));
	wg_vec_init(&scan->problems, sizeof(wg_problem));
	wg_vec_init(&scan->sources, sizeof(wg_source));
	if (!(scan->path = wg_arena_strdup(&scan->arena, path))) {
		free(scan);
		return NULL;
	}
	return scan;
}

WG_API void wg_scan_free(wg_scan *scan)
{
	if (!scan)
		return;
	for (size_t i = 0; i < scan->objects.len; i++) {
		wg_object *o = *(wg_object **)wg_vec_at(&scan->objects, i);
		wg_strlist_free(&o->needed);
		wg_vec_free(&o->fatbin_containers);
		wg_vec_free(&o->fatbin_entries);
		wg_vec_free(&o->verneeds);
		wg_strlist_free(&o->verdefs);
	}
	for (size_t i = 0; i < WG_ARRAY_LEN(scan->lists); i++)
		wg_strlist_free(&scan->lists[i]);
	wg_strlist_free(&scan->wheels);
	wg_vec_free(&scan->members);
	wg_vec_free(&scan->objects);
	wg_vec_free(&scan->problems);
	for (size_t i = 0; i < scan->sources.len; i++)
		free(((wg_source *)wg_vec_at(&scan->sources, i))->text);
	wg_vec_free(&scan->sources);
	wg_arena_free(&scan->arena);
	free(scan);
}

void wg_scan_add_problem(wg_scan *scan, int code, const char *where, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wg_problem *p = wg_vec_push(&scan->problems);
	if (!p)
		return;
	p->code = code;
	p->where = where ? wg_arena_strdup(&scan->arena, where) : NULL;
	p->message = wg_arena_strdup(&scan->arena, msg);
	if (!p->message)
		scan->problems.len--;
}

wg_object *wg_scan_new_object(wg_scan *scan, const char *path, uint64_t size)
{
	wg_object *o = wg_arena_alloc(&scan->arena, sizeof(*o));
	if (!o)
		return NULL;
	memset(o, 0, sizeof(*o));
	o->path = wg_arena_strdup(&scan->arena, path);
	o->size = size;
	wg_vec_init(&o->verneeds, sizeof(wg_verneed));
	wg_object **slot = wg_vec_push(&scan->objects);
	if (!slot || !o->path)
		return NULL;
	*slot = o;
	return o;
}

static wg_string_abi abi_of(unsigned n_new, unsigned n_old)
{
	return n_new && n_old ? WG_ABI_MIXED : n_new ? WG_ABI_NEW : n_old ? WG_ABI_OLD : WG_ABI_NONE;
}

void wg_object_classify(wg_object *obj, wg_matcher *m)
{
	memset(obj->counts, 0, sizeof(obj->counts));
	for (size_t i = 0; i < obj->nsyms; i++) {
		wg_sym *y = &obj->syms[i];
		unsigned bits;
		bool torch, runtime;
		wg_classify_symbol(m, y->name, y->demangled, &bits, &torch, &runtime);
		y->string_abi = (uint8_t)bits;
		y->torch = torch;
		y->runtime = runtime;
		y->surface = !y->defined || !runtime;
		if (!y->surface)
			continue;
		int base = torch ? 0 : 2;
		if (bits & WG_SYM_NEW_STRING)
			obj->counts[base]++;
		if (bits & WG_SYM_OLD_STRING)
			obj->counts[base + 1]++;
	}
	obj->torch_abi = abi_of(obj->counts[0], obj->counts[1]);
	obj->abi = abi_of(obj->counts[0] + obj->counts[2], obj->counts[1] + obj->counts[3]);
}

typedef struct {
	wg_scan *scan;
	const char *where;
} fatbin_problem_ctx;

static void fatbin_problem(void *payload, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fatbin_problem(void *payload, int code, const char *fmt, ...)
{
	fatbin_problem_ctx *pc = payload;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pc->scan->kind == WG_SCAN_WHEEL)
		wg_scan_add_problem(pc->scan, code, pc->where, "%s: %s", pc->scan->path, msg);
	else
		wg_scan_add_problem(pc->scan, code, pc->where, "%s", msg);
}

/* Reads one ELF image into a new object of scan; problems are recorded, not returned. */
static int add_object(wg_scan *scan, wg_scanner *s, const char *path, const char *relpath,
		      const uint8_t *data, size_t len)
{
	wg_err err = {0};
	wg_object *o = wg_scan_new_object(scan, path, len);
	if (!o)
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	int rc = wg_elf_read(o, &scan->arena, data, len, s->ctx->opts.max_symbols, &err);
	if (rc == WG_ENOMEM)
		return wg_seterr(&s->err, rc, "%s", err.msg);
	if (rc < 0) {
		o->error = wg_arena_strdup(&scan->arena, err.msg);
		/* Inside a wheel the message names the wheel too. */
		if (scan->kind == WG_SCAN_WHEEL)
			wg_scan_add_problem(scan, rc, path, "%s: %s", scan->path, err.msg);
		else
			wg_scan_add_problem(scan, rc, path, "%s", err.msg);
		return WG_OK;
	}
	wg_object_classify(o, s->matcher);
	wg_pyext_classify(o, &scan->arena, relpath);
	fatbin_problem_ctx pc = {scan, path};
	if (!s->no_fatbin &&
	    wg_fatbin_read(o, &scan->arena, data, len, fatbin_problem, &pc) == WG_ENOMEM)
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	return WG_OK;
}

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
	const char *progress_name;
} member_reader;

#define TEXT_MAX (16u << 20)
#define PY_MAX (1u << 20)      /* a Python file kept for the checks */
#define PY_BUDGET (64u << 20)  /* all Python files of a wheel kept, at most */

static bool is_py(const char *name)
{
	return wg_has_suffix(name, ".py");
}

static bool wanted_text(const char *name)
{
	const char *slash = strchr(name, '/');
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
		r->keep = r->elf || (wanted_text(r->m->name) && r->m->size <= TEXT_MAX);
		if (!r->keep && is_py(r->m->name) && r->m->size <= PY_MAX &&
		    r->m->size <= *r->py_budget) {
			*r->py_budget -= r->m->size;
			r->keep = true;
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

/* Without a usable RECORD, nothing read can be verified. */
static void mark_no_record(wg_scan *scan)
{
	for (size_t i = 0; i < scan->members.len; i++) {
		wg_member *m = wg_vec_at(&scan->members, i);
		if (!m->is_dir && m->record != WG_RECORD_NOT_READ)
			m->record = WG_RECORD_NO_RECORD;
	}
}

static int cmp_row(const void *a, const void *b)
{
	return strcmp(((const wg_record_row *)a)->path, ((const wg_record_row *)b)->path);
}

static void verify_record(wg_scan *scan, const text_member *rec)
{
	wg_vec rows;
	wg_err err = {0};
	wg_vec_init(&rows, sizeof(wg_record_row));
	if (wg_record_parse(&rows, &scan->arena, rec->text, rec->len, &err) < 0) {
		wg_scan_add_problem(scan, WG_EFORMAT, rec->name, "%s: %s", rec->name, err.msg);
		mark_no_record(scan);
		wg_vec_free(&rows);
		return;
	}
	qsort(rows.items, rows.len, sizeof(wg_record_row), cmp_row);
	for (size_t i = 0; i < scan->members.len; i++) {
		wg_member *m = wg_vec_at(&scan->members, i);
		if (m->is_dir)
			continue;
		wg_record_row key = {.path = m->name};
		wg_record_row *r = bsearch(&key, rows.items, rows.len, sizeof(wg_record_row), cmp_row);
		if (r)
			r->used = true;
		if (m->record == WG_RECORD_NOT_READ)
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
			if (!wg_has_suffix(m->name, ".dist-info/RECORD") && !is_sig)
				wg_scan_add_problem(scan, WG_EINTEGRITY, m->name,
						    "%s: RECORD lists %s without a hash", scan->path, m->name);
			continue;
		}
		if (strcmp(r->algo, "sha256") != 0) {
			m->record = WG_RECORD_UNHASHED;
			wg_scan_add_problem(scan, WG_EUNSUPPORTED, m->name,
					    "%s: RECORD hashes %s with %s; wheelgate verifies sha256 only",
					    scan->path, m->name, r->algo);
			continue;
		}
		if (strcmp(r->digest, m->sha256_b64) != 0) {
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
		wg_strlist_add(&scan->lists[WG_LIST_RECORD_ORPHANS], &scan->arena, r->path);
		wg_scan_add_problem(scan, WG_EINTEGRITY, r->path,
				    "%s: RECORD lists %s but the wheel has no such member", scan->path,
				    r->path);
	}
	wg_vec_free(&rows);
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

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
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

static void parse_text_members(wg_scan *scan, text_member *texts, size_t ntexts)
{
	const char *di = pick_dist_info(scan);
	scan->fields[WG_WHEEL_DIST_INFO] = di;
	if (!di) {
		wg_scan_add_problem(scan, WG_EFORMAT, NULL, "%s: no .dist-info directory with a WHEEL "
				    "file", scan->path);
		mark_no_record(scan);
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
		verify_record(scan, rec);
	} else {
		wg_scan_add_problem(scan, WG_EINTEGRITY, NULL, "%s: no %s/RECORD", scan->path, di);
		mark_no_record(scan);
	}
}

static void parse_filename(wg_scan *scan, const char *name)
{
	wg_wheelname wn;
	wg_err err = {0};
	const char *base = base_name(name);
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

static int scan_wheel(wg_scan *scan, wg_scanner *s, wg_zip *z)
{
	const wg_options *o = &s->ctx->opts;
	wg_err err = {0};
	text_member *texts = NULL;
	size_t ntexts = 0;
	int rc = WG_OK;

	parse_filename(scan, scan->path);
	int64_t count = wg_zip_count(z);
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
		if ((rc = wg_zip_stat(&e, z, (uint64_t)i, &err)) < 0) {
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
		} else if (m->size > (1u << 20) && o->max_ratio &&
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

	/* Pass 2: every member once: hash it, and keep what needs parsing. */
	uint64_t py_budget = PY_BUDGET;
	for (size_t i = 0; i < scan->members.len; i++) {
		wg_member *m = wg_vec_at(&scan->members, i);
		if (m->is_dir || !m->safe)
			continue;
		member_reader r = {.scan = scan, .s = s, .m = m, .progress_name = m->name,
				   .py_budget = &py_budget};
		if (!(r.sha = wg_sha256_new())) {
			rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
			goto done;
		}
		err.code = 0;
		rc = wg_zip_read(z, i, m->size, on_chunk, &r, &err);
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
		wg_sha256_final(r.sha, m->sha256);
		wg_sha256_free(r.sha);
		char b64[48];
		wg_b64url(b64, m->sha256, 32);
		m->sha256_b64 = wg_arena_strdup(&scan->arena, b64);
		m->hashed = m->read_ok = true;
		m->record = WG_RECORD_OK;
		m->is_elf = r.elf;
		if (r.elf) {
			rc = add_object(scan, s, m->name, m->name, r.buf, r.len);
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
	parse_text_members(scan, texts, ntexts);
done:
	for (size_t i = 0; i < ntexts; i++)
		free(texts[i].text);
	free(texts);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* entry points                                                                             */

typedef struct {
	const uint8_t *data;
	size_t len;
	bool mapped;
} file_image;

static int map_file(file_image *img, int fd, const char *name, uint64_t size, wg_err *err)
{
	img->data = NULL;
	img->mapped = false;
	img->len = (size_t)size;
	if (size == 0) {
		img->data = (const uint8_t *)"";
		return WG_OK;
	}
	void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return wg_seterr(err, WG_EIO, "%s: cannot map file: %s", name, strerror(errno));
	img->data = p;
	img->mapped = true;
	return WG_OK;
}

static void unmap_file(file_image *img)
{
	if (img->mapped)
		munmap((void *)img->data, img->len);
}

static bool is_zip(const uint8_t *d, size_t n)
{
	return n >= 4 && d[0] == 'P' && d[1] == 'K' &&
	       ((d[2] == 3 && d[3] == 4) || (d[2] == 5 && d[3] == 6));
}

/* Scans an opened wheel into a new scan; closes z. */
static int scan_opened_wheel(wg_scan **out, wg_scanner *s, wg_zip *z, const char *name)
{
	wg_scan *scan = scan_new(WG_SCAN_WHEEL, name, s->ctx);
	if (!scan) {
		wg_zip_close(z);
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	}
	int rc = scan_wheel(scan, s, z);
	wg_zip_close(z);
	if (rc < 0) {
		wg_scan_free(scan);
		return rc;
	}
	*out = scan;
	return WG_OK;
}

static int scan_object_image(wg_scan **out, wg_scanner *s, const char *name, const uint8_t *data,
			     size_t len)
{
	wg_scan *scan = scan_new(WG_SCAN_OBJECT, name, s->ctx);
	if (!scan)
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	int rc = add_object(scan, s, name, base_name(name), data, len);
	if (rc < 0) {
		wg_scan_free(scan);
		return rc;
	}
	*out = scan;
	return WG_OK;
}

static int scan_fd_as(wg_scan **out, wg_scanner *s, int fd, const char *name)
{
	struct stat st;
	uint8_t head[4] = {0};
	if (fstat(fd, &st) != 0)
		return wg_seterr(&s->err, WG_EIO, "%s: %s", name, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return wg_seterr(&s->err, WG_EUNSUPPORTED, "%s: not a regular file", name);
	ssize_t n = pread(fd, head, sizeof(head), 0);
	if (n < 0)
		return wg_seterr(&s->err, WG_EIO, "%s: %s", name, strerror(errno));
	if (is_zip(head, (size_t)n)) {
		wg_zip *z;
		wg_err err = {0};
		int rc = wg_zip_open_fd(&z, fd, name, &err);
		if (rc < 0)
			return wg_seterr(&s->err, rc, "%s", err.msg);
		return scan_opened_wheel(out, s, z, name);
	}
	if (wg_is_elf(head, (size_t)n)) {
		file_image img;
		wg_err err = {0};
		int rc = map_file(&img, fd, name, (uint64_t)st.st_size, &err);
		if (rc < 0)
			return wg_seterr(&s->err, rc, "%s", err.msg);
		rc = scan_object_image(out, s, name, img.data, img.len);
		unmap_file(&img);
		return rc;
	}
	if (wg_has_suffix(name, ".whl"))
		return wg_seterr(&s->err, WG_EFORMAT, "%s: not a zip archive (a wheel is a zip file)",
				 name);
	return wg_seterr(&s->err, WG_EUNSUPPORTED,
			 "%s: neither a wheel (zip) nor an ELF object (%s)", name,
			 n < 4 ? "file too short" : "unknown magic bytes");
}

typedef struct {
	wg_scan *scan;
	wg_scanner *s;
	uint32_t files;
	int rc;
} dir_walk;

static void walk_dir(dir_walk *w, const char *path, const char *rel, int depth)
{
	if (depth > 64) {
		wg_scan_add_problem(w->scan, WG_ELIMIT, path, "%s: directories nested too deeply", path);
		return;
	}
	DIR *d = opendir(path);
	if (!d) {
		wg_scan_add_problem(w->scan, WG_EIO, path, "%s: %s", path, strerror(errno));
		return;
	}
	/* Sorted, so that the output does not depend on the file system's order. */
	struct dirent **names = NULL;
	size_t nn = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (nn == cap) {
			cap = cap ? cap * 2 : 32;
			struct dirent **p = realloc(names, cap * sizeof(*p));
			if (!p)
				break;
			names = p;
		}
		struct dirent *copy = malloc(sizeof(*copy));
		if (!copy)
			break;
		memcpy(copy, e, sizeof(*copy));
		names[nn++] = copy;
	}
	closedir(d);
	for (size_t i = 0; i + 1 < nn; i++)
		for (size_t j = i + 1; j < nn; j++)
			if (strcmp(names[i]->d_name, names[j]->d_name) > 0) {
				struct dirent *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	for (size_t i = 0; i < nn && w->rc == WG_OK; i++) {
		char *full = wg_arena_printf(&w->scan->arena, "%s/%s", path, names[i]->d_name);
		char *sub = *rel ? wg_arena_printf(&w->scan->arena, "%s/%s", rel, names[i]->d_name)
				 : wg_arena_strdup(&w->scan->arena, names[i]->d_name);
		struct stat st;
		if (!full || !sub) {
			w->rc = WG_ENOMEM;
			break;
		}
		if (lstat(full, &st) != 0 || S_ISLNK(st.st_mode))
			continue; /* links point at files scanned under their own name */
		if (++w->files > w->s->ctx->opts.max_files) {
			wg_scan_add_problem(w->scan, WG_ELIMIT, full, "%s: more than %u files; the rest "
					    "was not scanned", w->scan->path, w->s->ctx->opts.max_files);
			w->rc = WG_ELIMIT;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			walk_dir(w, full, sub, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (wg_has_suffix(names[i]->d_name, ".whl")) {
			/* A wheel is an input of its own, read by whoever walks the directory; an
			 * unreadable one is then reported, not skipped. */
			if (wg_strlist_add(&w->scan->wheels, &w->scan->arena, full) < 0)
				w->rc = WG_ENOMEM;
			continue;
		}
		if (st.st_size < 4)
			continue;
		int fd = open(full, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			wg_scan_add_problem(w->scan, WG_EIO, full, "%s: %s", full, strerror(errno));
			continue;
		}
		uint8_t head[4];
		if (pread(fd, head, 4, 0) == 4 && wg_is_elf(head, 4)) {
			file_image img;
			wg_err err = {0};
			if (map_file(&img, fd, full, (uint64_t)st.st_size, &err) < 0) {
				wg_scan_add_problem(w->scan, err.code, full, "%s", err.msg);
			} else {
				if (add_object(w->scan, w->s, full, sub, img.data, img.len) < 0)
					w->rc = WG_ENOMEM;
				unmap_file(&img);
			}
		}
		close(fd);
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
}

WG_API int wg_scan_path(wg_scan **out, wg_scanner *s, const char *path)
{
	struct stat st;
	if (!out || !s || !path)
		return WG_EINVAL;
	*out = NULL;
	s->err.msg[0] = '\0';
	if (stat(path, &st) != 0)
		return wg_seterr(&s->err, errno == ENOENT ? WG_ENOTFOUND : WG_EIO, "%s: %s", path,
				 strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		wg_scan *scan = scan_new(WG_SCAN_DIRECTORY, path, s->ctx);
		if (!scan)
			return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		dir_walk w = {scan, s, 0, WG_OK};
		walk_dir(&w, path, "", 0);
		if (w.rc == WG_ENOMEM) {
			wg_scan_free(scan);
			return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		}
		if (!scan->objects.len && !scan->wheels.n) {
			/* Nothing to judge is not a pass. */
			const wg_problem *p = scan->problems.len ? wg_vec_at(&scan->problems, 0) : NULL;
			wg_seterr(&s->err, WG_ENOTFOUND, "no wheel or ELF object found in %s%s%s", path,
				  p ? "; " : "", p ? p->message : "");
			wg_scan_free(scan);
			return WG_ENOTFOUND;
		}
		*out = scan;
		return WG_OK;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return wg_seterr(&s->err, WG_EIO, "%s: %s", path, strerror(errno));
	int rc = scan_fd_as(out, s, fd, path);
	close(fd);
	return rc;
}

WG_API int wg_scan_fd(wg_scan **out, wg_scanner *s, int fd, const char *name)
{
	if (!out || !s || fd < 0)
		return WG_EINVAL;
	*out = NULL;
	s->err.msg[0] = '\0';
	return scan_fd_as(out, s, fd, name ? name : "(fd)");
}

WG_API int wg_scan_buffer(wg_scan **out, wg_scanner *s, const void *data, size_t len,
			  const char *name)
{
	if (!out || !s || (!data && len))
		return WG_EINVAL;
	*out = NULL;
	s->err.msg[0] = '\0';
	name = name ? name : "(buffer)";
	const uint8_t *d = data;
	if (is_zip(d, len)) {
		wg_zip *z;
		wg_err err = {0};
		int rc = wg_zip_open_buffer(&z, data, len, name, &err);
		if (rc < 0)
			return wg_seterr(&s->err, rc, "%s", err.msg);
		return scan_opened_wheel(out, s, z, name);
	}
	if (wg_is_elf(d, len))
		return scan_object_image(out, s, name, d, len);
	return wg_seterr(&s->err, WG_EUNSUPPORTED, "%s: neither a wheel (zip) nor an ELF object",
			 name);
}

/* ---------------------------------------------------------------------------------------- */
/* accessors                                                                                */

WG_API wg_scan_kind wg_scan_get_kind(const wg_scan *scan)
{
	return scan->kind;
}

WG_API const char *wg_scan_get_path(const wg_scan *scan)
{
	return scan->path;
}

WG_API size_t wg_scan_wheel_count(const wg_scan *scan)
{
	return scan ? scan->wheels.n : 0;
}

WG_API const char *wg_scan_wheel_path(const wg_scan *scan, size_t i)
{
	return scan && i < scan->wheels.n ? scan->wheels.v[i] : NULL;
}

WG_API const char *wg_wheel_get(const wg_scan *scan, wg_wheel_field f)
{
	if (!scan || scan->kind != WG_SCAN_WHEEL || (unsigned)f >= WG_ARRAY_LEN(scan->fields))
		return NULL;
	return scan->fields[f];
}

WG_API size_t wg_wheel_list_count(const wg_scan *scan, wg_wheel_list l)
{
	if (!scan || (unsigned)l >= WG_ARRAY_LEN(scan->lists))
		return 0;
	return scan->lists[l].n;
}

WG_API const char *wg_wheel_list_item(const wg_scan *scan, wg_wheel_list l, size_t i)
{
	if (!scan || (unsigned)l >= WG_ARRAY_LEN(scan->lists) || i >= scan->lists[l].n)
		return NULL;
	return scan->lists[l].v[i];
}

WG_API int wg_wheel_has_record(const wg_scan *scan)
{
	return scan && scan->has_record;
}

WG_API size_t wg_scan_member_count(const wg_scan *scan)
{
	return scan ? scan->members.len : 0;
}

WG_API int wg_scan_member(wg_member_info *out, const wg_scan *scan, size_t i)
{
	if (!out || !scan || out->version != WG_MEMBER_INFO_VERSION)
		return WG_EINVAL;
	const wg_member *m = wg_vec_at(&scan->members, i);
	if (!m)
		return WG_ENOTFOUND;
	out->name = m->name;
	out->size = m->size;
	out->compressed_size = m->csize;
	out->method = m->method;
	out->is_dir = m->is_dir;
	out->is_elf = m->is_elf;
	out->is_safe = m->safe;
	out->record = m->record;
	out->sha256 = m->sha256_b64;
	return WG_OK;
}

WG_API size_t wg_scan_problem_count(const wg_scan *scan)
{
	return scan ? scan->problems.len : 0;
}

WG_API int wg_scan_problem(wg_problem_info *out, const wg_scan *scan, size_t i)
{
	if (!out || !scan || out->version != WG_PROBLEM_INFO_VERSION)
		return WG_EINVAL;
	const wg_problem *p = wg_vec_at(&scan->problems, i);
	if (!p)
		return WG_ENOTFOUND;
	out->code = p->code;
	out->where = p->where;
	out->message = p->message;
	return WG_OK;
}

WG_API size_t wg_scan_object_count(const wg_scan *scan)
{
	return scan ? scan->objects.len : 0;
}

WG_API const wg_object *wg_scan_object(const wg_scan *scan, size_t i)
{
	wg_object **o = scan ? wg_vec_at(&scan->objects, i) : NULL;
	return o ? *o : NULL;
}

WG_API const char *wg_string_abi_name(wg_string_abi abi)
{
	switch (abi) {
	case WG_ABI_NEW: return "new";
	case WG_ABI_OLD: return "old";
	case WG_ABI_MIXED: return "mixed";
	default: return "none";
	}
}

WG_API int wg_object_get_info(wg_object_info *out, const wg_object *o)
{
	if (!out || !o || out->version != WG_OBJECT_INFO_VERSION)
		return WG_EINVAL;
	out->path = o->path;
	out->size = o->size;
	out->error = o->error;
	out->elf_class = o->elf_class;
	out->machine = o->machine;
	out->machine_name = o->machine_name;
	out->type = o->type;
	out->soname = o->soname;
	out->rpath = o->rpath;
	out->runpath = o->runpath;
	out->needed_count = o->needed.n;
	out->symbol_count = o->nsyms;
	out->defined_count = o->ndefined;
	out->undefined_count = o->nundefined;
	out->is_extension = o->is_extension;
	out->module = o->module;
	out->ext_suffix = o->ext_suffix;
	out->ext_interpreter = o->ext_interpreter;
	out->ext_platform = o->ext_platform;
	out->has_init = o->has_init;
	out->torch_new = o->counts[0];
	out->torch_old = o->counts[1];
	out->other_new = o->counts[2];
	out->other_old = o->counts[3];
	out->abi = o->abi;
	out->torch_abi = o->torch_abi;
	return WG_OK;
}

WG_API const char *wg_object_needed(const wg_object *o, size_t i)
{
	return o && i < o->needed.n ? o->needed.v[i] : NULL;
}

WG_API int wg_object_symbol(wg_symbol_info *out, const wg_object *o, size_t i)
{
	if (!out || !o || out->version != WG_SYMBOL_INFO_VERSION)
		return WG_EINVAL;
	if (i >= o->nsyms)
		return WG_ENOTFOUND;
	const wg_sym *y = &o->syms[i];
	out->name = y->name;
	out->demangled = y->demangled;
	out->symver = y->symver;
	out->symver_hidden = y->hidden;
	out->defined = y->defined;
	out->binding = (wg_binding)y->binding;
	out->type = (wg_symbol_type)y->type;
	out->string_abi = y->string_abi;
	out->torch_facing = y->torch;
	out->runtime = y->runtime;
	out->abi_surface = y->surface;
	return WG_OK;
}

WG_API const char *wg_binding_name(wg_binding b)
{
	static const char *const n[] = {"global", "weak", "unique", "local"};
	return (unsigned)b < 4 ? n[b] : "unknown";
}

WG_API const char *wg_symbol_type_name(wg_symbol_type t)
{
	static const char *const n[] = {"notype", "func", "object", "tls", "ifunc", "common"};
	return (unsigned)t < 6 ? n[t] : "unknown";
}

WG_API const char *wg_record_status_name(wg_record_status st)
{
	static const char *const n[] = {"ok",       "unhashed", "missing",  "bad-hash",
					"bad-size", "not-read", "no-record"};
	return (unsigned)st < 7 ? n[st] : "unknown";
}

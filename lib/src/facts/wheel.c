/*
 * The wheel reader: turns a wheel (a zip) into facts. Each wheel member is read exactly once;
 * in that one pass it is hashed for RECORD and, when it is an ELF object or a metadata file,
 * kept in memory just long enough to be parsed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_WHEEL /* wg_seterr: what fails here */
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
	/* RECORD parsed on the thread that read it (parsed), or not yet */
	bool parsed;
	int rows_rc;
	wg_vec rows;
	char *rows_why;
} text_member;

#define TEXT_MAX (16u << 20)
/* A Python file kept for the checks (a larger one is read by nothing, and the import checks
 * say so: WG-WHL-003); its tokens are held while it is read, about 8 bytes of them per byte. */
#define PY_MAX (4u << 20)

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
	       !strcmp(f, "top_level.txt") || !strcmp(f, "variant.json");
}

/* ---------------------------------------------------------------------------------------- */
/* pass 2: every member read once, on the context's threads                                 */

/* What reading one member gave; the scan is told in member order afterwards (merge), so the
 * facts and problems are the same for any number of threads. */
typedef struct {
	int rc;          /* WG_OK, or the read's error (msg) */
	char *msg;
	uint8_t sha[32];
	bool elf;
	uint8_t *buf;    /* a copy kept for the checks (metadata, Python), malloc'd */
	size_t len;
	wg_scan *sub;    /* an ELF object: read into a scan of its own (object and problems) */
	/* the RECORD read: its rows, parsed and sorted right away on the same thread */
	bool parsed;
	int rows_rc;
	wg_vec rows;
	char *rows_why;
} member_out;

/* A thread's things, one per pool slot: no lock needed. */
typedef struct {
	bool ready;
	wg_scanner sc;   /* its own matcher (slot 0: the caller's) */
	wg_zbuf zb;      /* the buffer deflated members are inflated into */
	wg_sha256 *sha;
	wg_arena arena;  /* the objects' facts; the scan adopts it */
} slot_state;

typedef struct {
	wg_scan *scan;
	wg_scanner *s;
	const wg_members *in;
	member_out *out;
	size_t *order;         /* the members to read, largest first */
	const bool *may_keep;  /* a copy may be kept (metadata or Python within its budget) */
	slot_state *slots;
	const char *record;    /* the RECORD of the .dist-info read, or NULL */
	size_t *runs;          /* job k reads order[runs[k]] to order[runs[k + 1]] */
	/* The largest member's buffer, made before the threads start (big_out, big_len), so
	 * that job 1 can fault in its upper part while job 0 inflates into it from the bottom;
	 * job 0's slot then keeps it. big_member: that member, or SIZE_MAX. */
	size_t big_member;
	wg_zbuf big;
	const uint8_t *big_out;
	size_t big_len, big_share; /* job 1 faults in the top big_share bytes */
} pass2;

/* The blocks of one member as they are read (view or stream). */
typedef struct {
	const wg_options *o;
	const wg_member *m;
	wg_sha256 *sha;
	bool decided, keep, elf;
	uint8_t *buf; /* stream: the whole member, when kept */
	size_t len, cap;
	uint64_t done;
	wg_err *err;
} block_reader;

static void progress(block_reader *r, size_t n)
{
	r->done += n;
	const wg_options *o = r->o;
	if (o->progress && r->m->size >= (64u << 20) &&
	    (r->done % (32u << 20) < n || r->done == r->m->size))
		o->progress(r->m->name, r->done, r->m->size, o->progress_payload);
}

/* A view's blocks: hashed (the CRC is the view's), the first sniffed (a member whose CRC
 * then fails is still known to be an ELF object). */
static int on_block(const uint8_t *data, size_t n, void *payload)
{
	block_reader *r = payload;
	if (!r->decided) {
		r->decided = true;
		r->elf = wg_is_elf(data, n);
	}
	wg_sha256_update(r->sha, data, n);
	progress(r, n);
	return WG_OK;
}

/* A stream's chunks: hashed, and gathered when the member is kept (an ELF object, or a copy
 * the checks may keep). */
static int on_chunk(const uint8_t *data, size_t n, void *payload)
{
	block_reader *r = payload;
	wg_sha256_update(r->sha, data, n);
	if (!r->decided) {
		r->decided = true;
		/* The first chunk holds at least 4 bytes unless the member is that small. */
		r->elf = wg_is_elf(data, n);
		if (r->elf || r->keep) {
			r->keep = true;
			r->cap = (size_t)r->m->size;
			/* one more byte: a Python source kept gets its NUL there */
			if (!(r->buf = malloc(r->cap + 1)))
				return wg_seterr(r->err, WG_ENOMEM, "out of memory for %s (%llu bytes)",
						 r->m->name, (unsigned long long)r->m->size);
		}
	}
	if (r->keep) {
		if (n > r->cap - r->len)
			return WG_EFORMAT; /* cannot happen: the readers enforce the size */
		memcpy(r->buf + r->len, data, n);
		r->len += n;
	}
	progress(r, n);
	return WG_OK;
}

static int slot_ready(pass2 *P, slot_state *w, unsigned slot)
{
	if (w->ready)
		return WG_OK;
	w->sc.ctx = P->s->ctx;
	if (slot == 0)
		w->sc.matcher = P->s->matcher;
	else if (wg_matcher_new(&w->sc.matcher, P->s->ctx->classifier) < 0)
		return WG_ENOMEM;
	if (!(w->sha = wg_sha256_new()))
		return WG_ENOMEM;
	w->ready = true;
	return WG_OK;
}

static void fail(member_out *o, int rc, const char *msg)
{
	o->rc = rc;
	free(o->msg);
	o->msg = strdup(msg);
}

/* Reads member i: hash, CRC, and an ELF object's facts or a kept copy. On a thread. */
static void read_member(pass2 *P, size_t i, unsigned slot, bool keep)
{
	wg_scan *scan = P->scan;
	const wg_member *m = wg_vec_at(&scan->members, i);
	member_out *o = &P->out[i];
	slot_state *w = &P->slots[slot];
	if (slot_ready(P, w, slot) < 0) {
		fail(o, WG_ENOMEM, "out of memory");
		return;
	}
	wg_sha256_reset(w->sha);
	if (i == P->big_member && P->big.cap > w->zb.cap) {
		/* The buffer made for this member becomes the slot's (its old one is smaller). */
		wg_zbuf_free(&w->zb);
		w->zb = P->big;
		memset(&P->big, 0, sizeof(P->big));
	}
	wg_err err = {0};
	block_reader r = {.o = &scan->ctx->opts, .m = m, .sha = w->sha, .keep = keep, .err = &err};
	const uint8_t *data = NULL;
	size_t len = 0;
	int rc = 1;
	if (P->in->view)
		rc = P->in->view(P->in->self, i, m->size, &w->zb, on_block, &r, &data, &err);
	if (rc == 1) {
		r.done = 0;
		wg_sha256_reset(w->sha);
		rc = P->in->read(P->in->self, i, m->size, on_chunk, &r, &err);
		data = r.buf;
		len = r.len;
	} else {
		len = (size_t)m->size;
		if (rc == WG_OK) /* else what on_block sniffed stays */
			r.elf = wg_is_elf(data, len);
	}
	if (rc < 0) {
		fail(o, rc, err.msg[0] ? err.msg : "out of memory");
		free(r.buf);
		/* Unreadable, but an object may be there: what its first bytes say, as the failed
		 * read saw them, or read again alone (the whole-member inflate of a view hands out
		 * nothing of a corrupt stream). */
		o->elf = r.decided ? r.elf
			 : rc != WG_ENOMEM && P->in->starts_as_elf &&
				   P->in->starts_as_elf(P->in->self, i);
		if (P->in->release)
			P->in->release(P->in->self, i);
		return;
	}
	wg_sha256_final(w->sha, o->sha);
	o->elf = r.elf;
	if (r.elf) {
		wg_scan *sub = calloc(1, sizeof(*sub));
		if (!sub) {
			fail(o, WG_ENOMEM, "out of memory");
			free(r.buf);
			return;
		}
		sub->kind = scan->kind;
		sub->ctx = scan->ctx;
		sub->path = scan->path;
		wg_vec_init(&sub->members, sizeof(wg_member));
		wg_vec_init(&sub->objects, sizeof(wg_object *));
		wg_vec_init(&sub->problems, sizeof(wg_problem));
		wg_vec_init(&sub->sources, sizeof(wg_source));
		/* The object's facts go into the slot's arena (lent, then taken back). */
		sub->arena = w->arena;
		w->sc.err.msg[0] = '\0';
		rc = wg_scan_add_elf(sub, &w->sc, m->name, m->name, data, len);
		w->arena = sub->arena;
		sub->arena.head = NULL;
		o->sub = sub;
		if (rc < 0)
			fail(o, rc, w->sc.err.msg);
		free(r.buf);
	} else if (keep) {
		if (r.buf) {
			o->buf = r.buf;
			o->len = r.len;
		} else if ((o->buf = malloc(len + 1))) {
			if (len) /* an empty file (an installed __init__.py) maps to no data */
				memcpy(o->buf, data, len);
			o->len = len;
		} else {
			fail(o, WG_ENOMEM, "out of memory");
		}
		if (o->buf && P->record && !strcmp(m->name, P->record)) {
			/* RECORD's rows now, on this thread, while the others read members. */
			wg_err perr = {0};
			o->rows_rc = wg_record_rows(&o->rows, &w->arena, (const char *)o->buf, o->len,
						    scan->ctx->opts.max_record_rows, &perr);
			o->rows_why = strdup(perr.msg);
			o->parsed = true;
		}
	} else {
		free(r.buf);
	}
}

static void member_job(void *arg, size_t k, unsigned slot)
{
	pass2 *P = arg;
	if (P->big_member != SIZE_MAX) {
		/* Job 1 faults in the upper part of the largest member's buffer while job 0
		 * inflates into it from the bottom; the other jobs shift by one. */
		if (k == 1) {
			wg_zbuf_prefault(P->big_out + (P->big_len - P->big_share), P->big_share);
			return;
		}
		if (k > 1)
			k--;
	}
	/* Job k: the members order[runs[k]] up to order[runs[k + 1]]. */
	for (size_t j = P->runs[k]; j < P->runs[k + 1]; j++) {
		size_t i = P->order[j];
		read_member(P, i, slot, P->may_keep[i]);
		if (P->in->release)
			P->in->release(P->in->self, i);
	}
}

#define BIG_MEMBER (64u << 20)

/* How much of the largest member's buffer another thread faults in: what evens out the
 * threads' work, by a model measured here (inflating, CRC-32 and SHA-256 cost about 1.46 ns
 * a byte, faulting fresh memory in about 0.42): the largest member costs (c + t) x big; the
 * others, spread over the other threads, c x rest / others + t x (their largest) each.
 * Libraries of 541, 245 and 218 MB: 52% of the largest. */
static size_t big_share(const wg_scan *scan, const size_t *order, size_t n, wg_pool *pool)
{
	const double c = 1.46, t = 0.42;
	double big = (double)((wg_member *)wg_vec_at(&scan->members, order[0]))->size;
	double rest = 0, rest_max = n > 1 ? (double)((wg_member *)wg_vec_at(&scan->members,
									   order[1]))->size : 0;
	for (size_t j = 1; j < n; j++)
		rest += (double)((wg_member *)wg_vec_at(&scan->members, order[j]))->size;
	unsigned others = wg_pool_slots(pool) > 1 ? wg_pool_slots(pool) - 1 : 1;
	double a = (c + t) * big, b = c * rest / others + t * rest_max;
	double x = (a - b) / (2 * t * big); /* the share that makes a - t x big = b + t x big */
	x = x < 0 ? 0 : x > 1 ? 1 : x;
	return (size_t)(x * big) & ~(size_t)4095;
}

/* Small members go to the threads in runs: a job per 20-byte member cost more in claiming
 * and in cache lines passed between cores than reading it. */
#define RUN_MEMBERS 64
#define RUN_BYTES (256u << 10)

static int by_size_desc(const void *a, const void *b, void *members)
{
	const wg_member *x = wg_vec_at(members, *(const size_t *)a);
	const wg_member *y = wg_vec_at(members, *(const size_t *)b);
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Below this much data, or this few members, threads cost more than they give. */
#define PARALLEL_BYTES (1u << 20)
#define PARALLEL_MEMBERS 256

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
	scan->fields[WG_WHEEL_VARIANT_LABEL] = wn.variant;
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
	member_out *out = NULL;
	size_t *order = NULL, *runs = NULL;
	bool *may_keep = NULL;
	slot_state *slots = NULL;
	unsigned nslots = 0;
	const char *di = NULL;

	/* An installed distribution keeps no filename: its filename facts stay unknown. */
	if (!in->installed)
		parse_filename(scan, scan->path);
	scan->repackaged = in->installed && in->repackaged;
	if (in->installed && in->installer)
		scan->fields[WG_WHEEL_INSTALLER] = wg_arena_strdup(&scan->arena, in->installer);
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
		wg_zip_entry e = {0};
		if ((rc = in->stat(&e, in->self, (uint64_t)i, &err)) < 0) {
			wg_err_copy(&s->err, &err, rc);
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
		wg_strmap seen = {0};
		if (!wg_strmap_init(&seen, scan->members.len)) {
			rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
			goto done;
		}
		for (size_t i = 0; i < scan->members.len; i++) {
			wg_member *m = wg_vec_at(&scan->members, i);
			size_t was = wg_strmap_put(&seen, m->name, i);
			if (was == SIZE_MAX - 1) {
				wg_strmap_free(&seen);
				rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
				goto done;
			}
			if (was != SIZE_MAX)
				wg_scan_add_problem(scan, WG_EUNSAFE, m->name,
						    "%s: member %s appears more than once", scan->path,
						    m->name);
		}
		wg_strmap_free(&seen);
	}

	/* Pass 2: every member once: hashed, its CRC checked, and kept while it is parsed: the
	 * objects, the metadata of the one .dist-info directory read, Python sources, each
	 * within its budget. Read on the context's threads, largest first; told to the scan in
	 * member order. Which copies may be kept is decided here, in member order, by name and
	 * size; the merge below then applies the budgets exactly as one thread would. */
	di = pick_dist_info(scan);
	size_t nm = scan->members.len, nread = 0;
	uint64_t bytes = 0;
	if (!(out = calloc(nm + 1, sizeof(*out))) || !(order = calloc(nm + 1, sizeof(*order))) ||
	    !(may_keep = calloc(nm + 1, sizeof(*may_keep)))) {
		rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		goto done;
	}
	uint64_t tb = o->max_text_total, pb = o->max_python_bytes;
	for (size_t i = 0; i < nm; i++) {
		wg_member *m = wg_vec_at(&scan->members, i);
		if (m->is_dir || !m->safe || m->record == WG_RECORD_ABSENT)
			continue;
		order[nread++] = i;
		bytes += m->size;
		if (wanted_text(m->name, di) && m->size <= TEXT_MAX && m->size <= tb) {
			tb -= m->size;
			may_keep[i] = true;
		} else if (is_py(m->name) && m->size <= PY_MAX && m->size <= pb) {
			pb -= m->size;
			may_keep[i] = true;
		}
	}
	wg_pool *pool = (nread >= 2 && (bytes >= PARALLEL_BYTES || nread >= PARALLEL_MEMBERS))
				? wg_context_pool(s->ctx) : NULL;
	if (pool)
		qsort_r(order, nread, sizeof(*order), by_size_desc, &scan->members);
	nslots = wg_pool_slots(pool);
	if (!(slots = calloc(nslots, sizeof(*slots)))) {
		rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		goto done;
	}
	if (!(runs = calloc(nread + 2, sizeof(*runs)))) {
		rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		goto done;
	}
	size_t njobs = 0;
	for (size_t j = 0; j < nread;) {
		runs[njobs++] = j;
		uint64_t run_bytes = 0;
		size_t start = j;
		do {
			run_bytes += ((wg_member *)wg_vec_at(&scan->members, order[j]))->size;
			j++;
		} while (pool && j < nread && j - start < RUN_MEMBERS && run_bytes < RUN_BYTES &&
			 ((wg_member *)wg_vec_at(&scan->members, order[j]))->size < RUN_BYTES);
	}
	runs[njobs] = nread;
	pass2 P = {scan, s, in, out, order, may_keep, slots,
		   di ? wg_arena_printf(&scan->arena, "%s/RECORD", di) : NULL, runs,
		   SIZE_MAX, {0}, NULL, 0, 0};
	/* A member of 64 MiB or more, inflated whole into fresh memory, spends a third of its
	 * inflating time in the kernel faulting that memory in (0.23 s of 0.68 s for a 541 MB
	 * one here): another thread takes a share of that, if it is there to take it. */
	if (pool && nread >= 2 && in->inflates_whole) {
		const wg_member *m0 = wg_vec_at(&scan->members, order[0]);
		if (m0->size >= BIG_MEMBER && in->inflates_whole(in->self, order[0], m0->size) &&
		    wg_zbuf_reserve(&P.big, m0->size)) {
			P.big_member = order[0];
			P.big_out = P.big.out;
			P.big_len = (size_t)m0->size;
			P.big_share = big_share(scan, order, nread, pool);
		}
	}
	wg_pool_run(pool, njobs + (P.big_member != SIZE_MAX), member_job, &P);
	wg_zbuf_free(&P.big); /* when job 0 did not take it */

	/* The merge: in member order, as one thread would have read them. */
	uint64_t py_budget = o->max_python_bytes, py_lines = o->max_python_lines;
	uint64_t text_budget = o->max_text_total;
	bool py_said = false, text_said = false;
	for (size_t i = 0; i < nm; i++) {
		wg_member *m = wg_vec_at(&scan->members, i);
		member_out *mo = &out[i];
		if (m->is_dir || !m->safe || m->record == WG_RECORD_ABSENT)
			continue;
		if (mo->rc == WG_ENOMEM) {
			rc = wg_seterr(&s->err, WG_ENOMEM, "%s: %s", scan->path, mo->msg ? mo->msg : "out of memory");
			goto done;
		}
		if (mo->rc < 0) {
			wg_scan_add_problem(scan, mo->rc, m->name, "%s", mo->msg ? mo->msg : "unreadable");
			m->is_elf = mo->elf; /* an object is there, unreadable */
			continue;
		}
		bool keep = false, text_refused = false, py_refused = false;
		if (!mo->elf && wanted_text(m->name, di) && m->size <= TEXT_MAX) {
			if (m->size <= text_budget) {
				text_budget -= m->size;
				keep = true;
			} else {
				text_refused = true;
			}
		}
		bool py_big = false;
		if (!mo->elf && !keep && is_py(m->name) && m->size > PY_MAX) {
			py_refused = py_big = true; /* never hidden: the file is named */
		} else if (!mo->elf && !keep && is_py(m->name)) {
			if (m->size <= py_budget && py_lines) {
				py_budget -= m->size;
				keep = true;
			} else {
				py_refused = true;
			}
		}
		if (keep && !mo->buf) {
			/* Kept by the budgets, but its copy was not reserved up front (an ELF object
			 * with a metadata or Python name took the room): read it again, here. */
			read_member(&P, i, 0, true);
			if (mo->rc == WG_ENOMEM) {
				rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
				goto done;
			}
			if (mo->rc < 0) {
				wg_scan_add_problem(scan, mo->rc, m->name, "%s", mo->msg);
				continue;
			}
		} else if (!keep && mo->buf) {
			free(mo->buf);
			mo->buf = NULL;
		}
		if (text_refused && !text_said) {
			text_said = true;
			wg_scan_add_problem(scan, WG_ELIMIT, m->name,
					    "%s: metadata members add up to more than %llu bytes "
					    "(max_text_total); %s and later ones not read", scan->path,
					    (unsigned long long)o->max_text_total, m->name);
		}
		if (keep && is_py(m->name)) {
			/* Lines count against max_python_lines: what the import checks examine. */
			uint64_t lines = 1;
			for (const uint8_t *p = mo->buf, *end = mo->buf + mo->len;
			     (p = memchr(p, '\n', (size_t)(end - p))); p++)
				lines++;
			if (lines > py_lines) {
				keep = false;
				py_refused = true;
				py_lines = 0;
				free(mo->buf);
				mo->buf = NULL;
			} else {
				py_lines -= lines;
			}
		}
		if (py_refused && !py_said) {
			/* Not a problem of the wheel (a large pure package is normal: transformers has
			 * 49 MB of Python): the import checks say they saw part of it (WG-WHL-003). */
			py_said = true;
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
		memcpy(m->sha256, mo->sha, 32);
		char b64[48];
		wg_b64url(b64, m->sha256, 32);
		m->sha256_b64 = wg_arena_strdup(&scan->arena, b64);
		m->hashed = m->read_ok = true;
		m->record = WG_RECORD_OK;
		m->is_elf = mo->elf;
		if (mo->elf) {
			/* The object and its problems, moved into the scan (their text lives in a
			 * slot's arena, adopted below). */
			wg_scan *sub = mo->sub;
			for (size_t k = 0; sub && k < sub->objects.len; k++) {
				wg_object **slot = wg_vec_push(&scan->objects);
				if (!slot) {
					rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
					goto done;
				}
				*slot = *(wg_object **)wg_vec_at(&sub->objects, k);
				/* the input's budget of fatbin entries, over all its objects */
				wg_fatbin_budget(scan, *slot);
			}
			if (sub)
				sub->objects.len = 0;
			uint32_t maxp = o->max_problems;
			for (size_t k = 0; sub && k < sub->problems.len; k++) {
				const wg_problem *q = wg_vec_at(&sub->problems, k);
				size_t slot = q->code <= 0 && q->code > -WG_PROBLEM_CODES
						      ? (size_t)-q->code : WG_PROBLEM_CODES - 1;
				if (maxp && scan->problems_kept[slot] >= maxp) {
					scan->problems_more[slot]++;
					continue;
				}
				wg_problem *p = wg_vec_push(&scan->problems);
				if (!p) {
					rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
					goto done;
				}
				*p = *q;
				scan->problems_kept[slot]++;
			}
			for (size_t k = 0; sub && k < WG_PROBLEM_CODES; k++)
				scan->problems_more[k] += sub->problems_more[k];
		} else if (wg_looks_like_shared_object(m->name)) {
			wg_scan_add_problem(scan, WG_EFORMAT, m->name,
					    "%s: %s is named like a shared object but is not an ELF object",
					    scan->path, m->name);
		} else if (keep && is_py(m->name)) {
			/* Python sources stay with the scan for the checks (imports). */
			wg_source *src = wg_vec_push(&scan->sources);
			if (!src) {
				rc = wg_seterr(&s->err, WG_ENOMEM, "out of memory");
				goto done;
			}
			mo->buf[mo->len] = '\0';
			src->name = m->name;
			src->text = (char *)mo->buf;
			src->len = mo->len;
			mo->buf = NULL;
		} else if (keep) {
			text_member *t = &texts[ntexts++];
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
		}
	}
	parse_text_members(scan, texts, ntexts, di);
done:
	for (size_t i = 0; out && i < scan->members.len; i++) {
		free(out[i].msg);
		free(out[i].buf);
		free(out[i].rows_why);
		if (out[i].parsed)
			wg_vec_free(&out[i].rows);
		wg_scan_free(out[i].sub); /* objects moved out; the rest is its own */
	}
	for (unsigned k = 0; slots && k < nslots; k++) {
		slot_state *w = &slots[k];
		wg_arena_adopt(&scan->arena, &w->arena);
		wg_zbuf_free(&w->zb);
		if (w->sha)
			wg_sha256_free(w->sha);
		if (k > 0 && w->sc.matcher)
			wg_matcher_free(w->sc.matcher);
	}
	free(slots);
	free(out);
	free(order);
	free(runs);
	free(may_keep);
	for (size_t i = 0; i < ntexts; i++) {
		free(texts[i].text);
		free(texts[i].rows_why);
		if (texts[i].parsed)
			wg_vec_free(&texts[i].rows); /* an empty vector once verified */
	}
	free(texts);
	return rc;
}

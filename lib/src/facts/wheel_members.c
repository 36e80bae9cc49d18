/*
 * Pass 2 of the wheel reader: every member read exactly once, on the context's threads,
 * largest first: hashed for RECORD, its CRC checked, and, when it is an ELF object or a
 * metadata or Python file within its budget, kept in memory just long enough to be parsed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_WHEEL /* wg_seterr: what fails here */
#include <stdlib.h>
#include <string.h>

#include "facts/wheel_internal.h"

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
	wg_wheel_progress(r->o, r->m, &r->done, n);
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

/* Reads member i: hash, CRC, and an ELF object's facts or a kept copy. On a thread. */
static void read_member(pass2 *P, size_t i, unsigned slot, bool keep)
{
	wg_scan *scan = P->scan;
	const wg_member *m = wg_vec_at(&scan->members, i);
	member_out *o = &P->out[i];
	slot_state *w = &P->slots[slot];
	if (slot_ready(P, w, slot) < 0) {
		wg_wheel_member_fail(o, WG_ENOMEM, "out of memory");
		return;
	}
	if (!keep && m->size > scan->ctx->opts.max_member_held && i != P->big_member &&
	    wg_wheel_member_stream(P, i, slot) != 1)
		return;
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
		wg_wheel_member_fail(o, rc, err.msg[0] ? err.msg : "out of memory");
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
		wg_scan *sub = wg_wheel_sub_new(scan);
		if (!sub) {
			wg_wheel_member_fail(o, WG_ENOMEM, "out of memory");
			free(r.buf);
			return;
		}
		/* The object's facts go into the slot's arena (lent, then taken back). */
		sub->arena = w->arena;
		w->sc.err.msg[0] = '\0';
		rc = wg_scan_add_elf(sub, &w->sc, m->name, m->name, data, len);
		w->arena = sub->arena;
		sub->arena.head = NULL;
		o->sub = sub;
		if (rc < 0)
			wg_wheel_member_fail(o, rc, w->sc.err.msg);
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
			wg_wheel_member_fail(o, WG_ENOMEM, "out of memory");
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

/* Which members are read, which copies may be kept (decided here, in member order, by name
 * and size; the merge then applies the budgets exactly as one thread would) and how many
 * bytes they hold. */
static size_t plan_members(pass2 *P, const char *di, uint64_t *bytes)
{
	const wg_options *o = &P->s->ctx->opts;
	wg_scan *scan = P->scan;
	size_t nread = 0;
	uint64_t tb = o->max_text_total, pb = o->max_python_bytes;
	*bytes = 0;
	for (size_t i = 0; i < scan->members.len; i++) {
		wg_member *m = wg_vec_at(&scan->members, i);
		if (m->is_dir || !m->safe || m->record == WG_RECORD_ABSENT)
			continue;
		P->order[nread++] = i;
		*bytes += m->size;
		if (wg_wheel_wanted_text(m->name, di) && m->size <= TEXT_MAX && m->size <= tb) {
			tb -= m->size;
			P->may_keep[i] = true;
		} else if (wg_wheel_is_py(m->name) && m->size <= PY_MAX && m->size <= pb) {
			pb -= m->size;
			P->may_keep[i] = true;
		}
	}
	return nread;
}

/* The jobs: runs of small members, a job of its own for each large one; their count. */
static size_t plan_runs(pass2 *P, size_t nread, bool threaded)
{
	size_t njobs = 0;
	for (size_t j = 0; j < nread;) {
		P->runs[njobs++] = j;
		uint64_t run_bytes = 0;
		size_t start = j;
		do {
			run_bytes += ((wg_member *)wg_vec_at(&P->scan->members, P->order[j]))->size;
			j++;
		} while (threaded && j < nread && j - start < RUN_MEMBERS && run_bytes < RUN_BYTES &&
			 ((wg_member *)wg_vec_at(&P->scan->members, P->order[j]))->size < RUN_BYTES);
	}
	P->runs[njobs] = nread;
	return njobs;
}

int wg_wheel_members_read(pass2 *P, wg_scan *scan, wg_scanner *s, const wg_members *in,
			  const char *di)
{
	size_t nm = scan->members.len;
	P->scan = scan;
	P->s = s;
	P->in = in;
	P->big_member = SIZE_MAX;
	if (!(P->out = calloc(nm + 1, sizeof(*P->out))) ||
	    !(P->order = calloc(nm + 1, sizeof(*P->order))) ||
	    !(P->may_keep = calloc(nm + 1, sizeof(*P->may_keep))))
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	uint64_t bytes;
	size_t nread = plan_members(P, di, &bytes);
	wg_pool *pool = (nread >= 2 && (bytes >= PARALLEL_BYTES || nread >= PARALLEL_MEMBERS))
				? wg_context_pool(s->ctx) : NULL;
	if (pool)
		qsort_r(P->order, nread, sizeof(*P->order), by_size_desc, &scan->members);
	P->nslots = wg_pool_slots(pool);
	if (!(P->slots = calloc(P->nslots, sizeof(*P->slots))))
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	if (!(P->runs = calloc(nread + 2, sizeof(*P->runs))))
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	size_t njobs = plan_runs(P, nread, pool != NULL);
	P->record = di ? wg_arena_printf(&scan->arena, "%s/RECORD", di) : NULL;
	/* A member of 64 MiB or more, inflated whole into fresh memory, spends a third of its
	 * inflating time in the kernel faulting that memory in (0.23 s of 0.68 s for a 541 MB
	 * one here): another thread takes a share of that, if it is there to take it. */
	if (pool && nread >= 2 && in->inflates_whole) {
		const wg_member *m0 = wg_vec_at(&scan->members, P->order[0]);
		if (m0->size >= BIG_MEMBER && (!in->stream || m0->size <= s->ctx->opts.max_member_held) &&
		    in->inflates_whole(in->self, P->order[0], m0->size) &&
		    wg_zbuf_reserve(&P->big, m0->size)) {
			P->big_member = P->order[0];
			P->big_out = P->big.out;
			P->big_len = (size_t)m0->size;
			P->big_share = big_share(scan, P->order, nread, pool);
		}
	}
	wg_pool_run(pool, njobs + (P->big_member != SIZE_MAX), member_job, P);
	wg_zbuf_free(&P->big); /* when job 0 did not take it */
	return WG_OK;
}

void wg_wheel_member_reread(pass2 *P, size_t i)
{
	read_member(P, i, 0, true);
}

void wg_wheel_members_free(pass2 *P)
{
	wg_scan *scan = P->scan;
	for (size_t i = 0; P->out && i < scan->members.len; i++) {
		free(P->out[i].msg);
		free(P->out[i].buf);
		free(P->out[i].rows_why);
		if (P->out[i].parsed)
			wg_vec_free(&P->out[i].rows);
		wg_scan_free(P->out[i].sub); /* objects moved out; the rest is its own */
	}
	for (unsigned k = 0; P->slots && k < P->nslots; k++) {
		slot_state *w = &P->slots[k];
		wg_arena_adopt(&scan->arena, &w->arena);
		wg_zbuf_free(&w->zb);
		wg_zstream_free(w->zs);
		if (w->sha)
			wg_sha256_free(w->sha);
		if (k > 0 && w->sc.matcher)
			wg_matcher_free(w->sc.matcher);
	}
	free(P->slots);
	free(P->out);
	free(P->order);
	free(P->runs);
	free(P->may_keep);
}

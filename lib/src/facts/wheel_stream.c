/*
 * Pass 2 for a member larger than max_member_held (issue 30): read as a stream in constant
 * memory. The member source hands it over in blocks (a zip member through ISA-L into the
 * worker's 1 MiB buffer, CRC-32 and SHA-256 per block; an installed file in chunks); nothing
 * holds the whole member. An ELF object is read sparsely (sparse.c): the ranges its readers
 * need are kept as they pass, the readers run on that image, and a run that read a page that
 * was not kept is thrown away, the pages it missed fetched in another pass over the member
 * (stopped after the last of them) and the readers run again. After MAX_RUNS runs every page
 * still missing is fetched, so the facts are always those of the whole member.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_WHEEL /* wg_seterr: what fails here */
#include <stdlib.h>
#include <string.h>

#include "facts/wheel_internal.h"

#define MAX_RUNS 4

/* What the member readers share (wheel_members.c calls them; they call nothing of it). */
void wg_wheel_progress(const wg_options *o, const wg_member *m, uint64_t *done, size_t n)
{
	*done += n;
	if (o->progress && m->size >= (64u << 20) &&
	    (*done % (32u << 20) < n || *done == m->size))
		o->progress(m->name, *done, m->size, o->progress_payload);
}

void wg_wheel_member_fail(member_out *o, int rc, const char *msg)
{
	o->rc = rc;
	free(o->msg);
	o->msg = strdup(msg);
}

wg_scan *wg_wheel_sub_new(const wg_scan *scan)
{
	wg_scan *sub = calloc(1, sizeof(*sub));
	if (!sub)
		return NULL;
	sub->kind = scan->kind;
	sub->ctx = scan->ctx;
	sub->path = scan->path;
	wg_vec_init(&sub->members, sizeof(wg_member));
	wg_vec_init(&sub->objects, sizeof(wg_object *));
	wg_vec_init(&sub->problems, sizeof(wg_problem));
	wg_vec_init(&sub->sources, sizeof(wg_source));
	return sub;
}

typedef struct {
	const wg_options *o;
	const wg_member *m;
	wg_sha256 *sha; /* the chunk path's; a zip stream hashes for itself */
	wg_sparse *sp;
	bool decided, elf, refill, filled;
	uint64_t off, done;
	wg_err *err;
} stream_reader;

static int on_block(const uint8_t *data, size_t n, uint64_t off, void *payload)
{
	stream_reader *r = payload;
	if (r->refill) {
		if (r->filled)
			return WG_SPARSE_DONE;
		int rc = wg_sparse_refill(r->sp, data, n, off);
		r->filled = rc == WG_SPARSE_DONE;
		return rc;
	}
	if (!r->decided) {
		r->decided = true;
		/* The first block holds at least 4 bytes unless the member is that small. */
		if ((r->elf = wg_is_elf(data, n)) && wg_sparse_new(&r->sp, r->m->size) < 0)
			return wg_seterr(r->err, WG_ENOMEM, "out of memory for %s (%llu bytes of "
					 "address space)", r->m->name, (unsigned long long)r->m->size);
	}
	wg_wheel_progress(r->o, r->m, &r->done, n);
	return r->sp ? wg_sparse_take(r->sp, data, n, off) : WG_OK;
}

/* The chunk path has no offsets: they are counted here. A pass again stops when it has what
 * it came for (an installed file: its read loop ends; libzip's reads on, handed nothing). */
static int on_chunk(const uint8_t *data, size_t n, void *payload)
{
	stream_reader *r = payload;
	if (!r->refill)
		wg_sha256_update(r->sha, data, n);
	int rc = on_block(data, n, r->off, r);
	r->off += n;
	return rc;
}

/* One pass over member i: the first (hashed, r->refill false) or one that fetches what the
 * last run missed. Returns WG_OK, 1 (the source cannot stream it) or a negative code. */
static int pass(pass2 *P, size_t i, slot_state *w, stream_reader *r, wg_zstream_sum *sum,
		wg_err *err)
{
	const wg_member *m = r->m;
	r->off = 0;
	if (P->in->stream) {
		int rc = P->in->stream(P->in->self, i, m->size, w->zs, on_block, r, sum, err);
		return rc == WG_ZSTREAM_STOP ? WG_OK : rc;
	}
	if (!r->refill)
		wg_sha256_reset(r->sha);
	int rc = P->in->read(P->in->self, i, m->size, on_chunk, r, err);
	return rc == WG_ZSTREAM_STOP ? WG_OK : rc;
}

int wg_wheel_member_stream(pass2 *P, size_t i, unsigned slot)
{
	wg_scan *scan = P->scan;
	const wg_member *m = wg_vec_at(&scan->members, i);
	member_out *o = &P->out[i];
	slot_state *w = &P->slots[slot];
	if (P->in->stream && !w->zs && !(w->zs = wg_zstream_new(0))) {
		wg_wheel_member_fail(o, WG_ENOMEM, "out of memory");
		return 0;
	}
	wg_err err = {0};
	wg_zstream_sum sum = {0};
	stream_reader r = {.o = &scan->ctx->opts, .m = m, .sha = w->sha, .err = &err};
	int rc = pass(P, i, w, &r, &sum, &err);
	if (rc == 1 && !r.decided)
		return 1;
	if (rc < 0) {
		wg_wheel_member_fail(o, rc, err.msg[0] ? err.msg : "out of memory");
		o->elf = r.decided ? r.elf
			 : rc != WG_ENOMEM && P->in->starts_as_elf &&
				   P->in->starts_as_elf(P->in->self, i);
		wg_sparse_free(r.sp);
		return 0;
	}
	o->streamed = true;
	if (P->in->stream)
		memcpy(o->sha, sum.sha256, sizeof(o->sha));
	else
		wg_sha256_final(w->sha, o->sha);
	o->elf = r.elf;
	if (!r.sp) /* not an object, or an empty member */
		return 0;
	if (wg_sparse_end_pass(r.sp) < 0) {
		wg_wheel_member_fail(o, WG_ENOMEM, "out of memory");
		wg_sparse_free(r.sp);
		return 0;
	}
	for (int run = 1;; run++) {
		wg_scan *sub = wg_wheel_sub_new(scan);
		if (!sub) {
			wg_wheel_member_fail(o, WG_ENOMEM, "out of memory");
			break;
		}
		w->sc.err.msg[0] = '\0';
		rc = wg_scan_add_elf_sparse(sub, &w->sc, m->name, m->name, r.sp, m->size);
		int64_t missing = rc == WG_ENOMEM ? 0 : wg_sparse_missing(r.sp, false);
		if (missing > 0 && run >= MAX_RUNS)
			missing = wg_sparse_missing(r.sp, true);
		if (missing == 0 || missing == WG_ENOMEM) {
			/* The run read only kept bytes: its facts are the member's. */
			wg_arena_adopt(&w->arena, &sub->arena);
			o->sub = sub;
			if (rc < 0 || missing == WG_ENOMEM)
				wg_wheel_member_fail(o, rc < 0 ? rc : WG_ENOMEM,
						     rc < 0 ? w->sc.err.msg : "out of memory");
			break;
		}
		wg_scan_free(sub);
		wg_sparse_pass(r.sp);
		r.refill = true;
		r.filled = false;
		err.msg[0] = '\0';
		if ((rc = pass(P, i, w, &r, NULL, &err)) < 0) {
			wg_wheel_member_fail(o, rc, err.msg[0] ? err.msg : "out of memory");
			break;
		}
	}
	wg_sparse_stats st;
	wg_sparse_stats_get(r.sp, &st);
	o->sparse = st;
	o->sparse_read = true;
	wg_sparse_free(r.sp);
	return 0;
}

/*
 * Private to the wheel reader's files: wheel.c (the directory, the merge, wg_wheel_read),
 * wheel_members.c (pass 2: every member read once, on the context's threads), wheel_stream.c
 * (a member over max_member_held streamed, an ELF object among them read sparsely) and
 * wheel_meta.c (the .dist-info metadata and the filename).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_FACTS_WHEEL_INTERNAL_H
#define WG_FACTS_WHEEL_INTERNAL_H

#include "facts/facts.h"

#define TEXT_MAX (16u << 20)
/* A Python file kept for the checks (a larger one is read by nothing, and the import checks
 * say so: WG-WHL-003); its tokens are held while it is read, about 8 bytes of them per byte. */
#define PY_MAX (4u << 20)

static inline bool wg_wheel_is_py(const char *name)
{
	return wg_has_suffix(name, ".py");
}

/* ---- wheel_meta.c ---- */

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

/* A metadata member of the .dist-info directory that is read (dist_info; NULL: any). */
bool wg_wheel_wanted_text(const char *name, const char *dist_info);
/* The .dist-info directory: the one that matches the filename, else the only one. */
const char *wg_wheel_pick_dist_info(wg_scan *scan);
void wg_wheel_parse_text_members(wg_scan *scan, text_member *texts, size_t ntexts,
				 const char *di);
void wg_wheel_parse_filename(wg_scan *scan, const char *name);

/* ---- wheel_members.c ---- */

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
	/* an object read sparsely: what it took (wheel_stream.c) */
	bool streamed, sparse_read;
	wg_sparse_stats sparse;
} member_out;

/* A thread's things, one per pool slot: no lock needed. */
typedef struct {
	bool ready;
	wg_scanner sc;   /* its own matcher (slot 0: the caller's) */
	wg_zbuf zb;      /* the buffer deflated members are inflated into */
	wg_zstream *zs;  /* members streamed: ISA-L's state and the block buffer */
	wg_sha256 *sha;
	wg_arena arena;  /* the objects' facts; the scan adopts it */
} slot_state;

typedef struct {
	wg_scan *scan;
	wg_scanner *s;
	const wg_members *in;
	member_out *out;       /* one per member */
	size_t *order;         /* the members to read, largest first */
	bool *may_keep;        /* a copy may be kept (metadata or Python within its budget) */
	slot_state *slots;
	unsigned nslots;
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

/* Pass 2: every member once: hashed, its CRC checked, and kept while it is parsed: the
 * objects, the metadata of the .dist-info directory di, Python sources, each within its
 * budget. Read on the context's threads, largest first; P->out holds what each gave, in
 * member order. P is zeroed by the caller and freed by wg_wheel_members_free, also on
 * failure. */
int wg_wheel_members_read(pass2 *P, wg_scan *scan, wg_scanner *s, const wg_members *in,
			  const char *di);
/* Reads member i again on the caller's thread, keeping its copy (into P->out[i]). */
void wg_wheel_member_reread(pass2 *P, size_t i);
/* Frees what pass 2 left; the slots' arenas go to the scan. */
void wg_wheel_members_free(pass2 *P);
/* ---- wheel_stream.c ---- */
/* What the member readers share. */
void wg_wheel_member_fail(member_out *o, int rc, const char *msg);
void wg_wheel_progress(const wg_options *o, const wg_member *m, uint64_t *done, size_t n);
/* A scan of its own for one object's facts and problems (the merge adopts them). */
wg_scan *wg_wheel_sub_new(const wg_scan *scan);
/* Member i, larger than max_member_held, as a stream in constant memory: hashed, its CRC
 * checked, and an ELF object read sparsely (sparse.c) into P->out[i]. Returns 1 when the
 * member source cannot stream it (read it the other way), else 0 (P->out[i] says how it went). */
int wg_wheel_member_stream(pass2 *P, size_t i, unsigned slot);

#endif

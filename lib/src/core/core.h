/*
 * core/: what every layer uses: errors, memory (arena, vectors, string lists, buffers), text
 * escaping, sha256, the YAML reader and regular expressions (the only users of libcrypto,
 * libyaml and PCRE2). Includes nothing of the library but the public header.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CORE_H
#define WG_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wheelgate.h"

#define WG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- edit distance (suggest.c) ---- */

/** Levenshtein distance from a to b (each at most 64 bytes, else SIZE_MAX); same(x, y) says
 * whether two letters match (NULL: equal ignoring ASCII case). */
size_t wg_edit_distance(const char *a, const char *b, bool (*same)(char x, char y));

/* ---- errors (error.c) ---- */

typedef struct {
	int code;
	char msg[1024];
	wg_error_class klass; /* what failed; WG_ENOMEM is always NOMEM */
} wg_err;

/** Sets err (if not NULL) and returns code; messages name the file and the problem. The
 * class is the file's WG_ERR_CLASS, which every .c file that calls wg_seterr defines before
 * its includes (a file without one does not compile). */
int wg_seterr_class(wg_err *err, wg_error_class klass, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define wg_seterr(err, code, ...) wg_seterr_class((err), WG_ERR_CLASS, (code), __VA_ARGS__)
/** dst takes src's message and class, with code (an error passed up unchanged); returns code. */
int wg_err_copy(wg_err *dst, const wg_err *src, int code);
/** For a scanner call that returns rc: a failure (rc < 0) with a message in err also fills
 * this thread's error record, so that every failure is in one place. Returns rc. */
int wg_error_from(wg_err *err, int rc);
/** Fills this thread's error record (wg_error_last, wg_error_last_info) for a failing call
 * that has no scanner to hold it: the code it returns, what failed (WG_ENOMEM is always class
 * NOMEM) and the message. Only failing calls call it: notices go elsewhere (public header). */
void wg_set_error(wg_error_class klass, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- memory and text (memory.c) ---- */

/** A bump allocator for the many small strings of one scan; freed all at once. */
typedef struct wg_arena_chunk wg_arena_chunk;
typedef struct {
	wg_arena_chunk *head;
} wg_arena;

void *wg_arena_alloc(wg_arena *a, size_t n);
char *wg_arena_strdup(wg_arena *a, const char *s);
char *wg_arena_strndup(wg_arena *a, const char *s, size_t n);
char *wg_arena_printf(wg_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wg_arena_free(wg_arena *a);
/** Moves every chunk of from into a (what was allocated from either stays valid until a is
 * freed); from is left empty. */
void wg_arena_adopt(wg_arena *a, wg_arena *from);

/** A growable array of fixed-size items. */
typedef struct {
	void *items;
	size_t len, cap, item_size;
} wg_vec;

void wg_vec_init(wg_vec *v, size_t item_size);
/** Appends one zeroed item and returns it, or NULL when out of memory. */
void *wg_vec_push(wg_vec *v);
void *wg_vec_at(const wg_vec *v, size_t i);
void wg_vec_free(wg_vec *v);

/** A map from strings (borrowed: they must outlive it) to indexes, by hash: O(1) lookups where
 * a sorted array took a strcmp per halving (20,000 member names share long prefixes). */
typedef struct {
	const char **keys;
	size_t *vals;
	size_t cap, n;
} wg_strmap;

/** Room for about `expect` keys (it grows past that); false when out of memory. */
bool wg_strmap_init(wg_strmap *m, size_t expect);
/** The index of key, or SIZE_MAX when absent. */
size_t wg_strmap_get(const wg_strmap *m, const char *key);
/** Adds key -> val unless key is there; returns the index already there, SIZE_MAX when it
 * was added, or SIZE_MAX - 1 when out of memory. */
size_t wg_strmap_put(wg_strmap *m, const char *key, size_t val);
void wg_strmap_free(wg_strmap *m);

/** A list of strings owned by an arena. */
typedef struct {
	const char **v;
	size_t n, cap;
} wg_strlist;

int wg_strlist_add(wg_strlist *l, wg_arena *a, const char *s);
void wg_strlist_free(wg_strlist *l);

/** Growable text buffer. */
typedef struct {
	char *s;
	size_t len, cap;
} wg_buf;

int wg_buf_append(wg_buf *b, const char *s, size_t n);
void wg_buf_free(wg_buf *b);

bool wg_has_suffix(const char *s, const char *suffix);
/** The length of dir without its trailing slashes, to join a name to it for display and
 * open ("%.*s/%s"): "dist/" and "dist//" give "dist/x.whl", "/" gives "/x.whl". */
int wg_path_dir_len(const char *dir);
bool wg_has_prefix(const char *s, const char *prefix);
/** Whether s is well-formed UTF-8 (what jansson accepts). */
bool wg_utf8_valid(const char *s);
/** Appends s to b with the WG_ESCAPE_* escapes (invalid UTF-8 always, controls on request). */
int wg_buf_escape(wg_buf *b, const char *s, unsigned flags);
/** The code point of the well-formed n-byte UTF-8 sequence at s when a terminal would obey
 * or reorder for it (C0, DEL, C1, bidi marks/embeddings/overrides/isolates, U+2028/9), else 0
 * (also for NUL). */
unsigned wg_utf8_unsafe(const char *s, size_t n);
struct json_t;
/** json_dumps(j, flags), DEL, C1 and bidi controls written \uNNNN like the C0 ones jansson
 * escapes itself: a JSON document for a terminal as much as a program; free(). NULL: no memory. */
char *wg_json_dump(const struct json_t *j, size_t flags);

/* ---- the thread pool (pool.c) ---- */

/** A job: index i of its batch, run on the thread of slot `slot` (0: the submitting thread;
 * 1..wg_pool_slots()-1: the pool's threads). Two jobs of one batch never run at once on the
 * same slot, so per-slot state needs no lock. */
typedef void (*wg_pool_fn)(void *arg, size_t i, unsigned slot);
typedef struct wg_pool wg_pool;
#define WG_POOL_MAX 256
/** The CPUs this process may run on (its affinity mask). */
unsigned wg_cpu_count(void);
/** A pool of `threads` threads besides the submitting one (0: jobs run on the caller). */
int wg_pool_new(wg_pool **out, unsigned threads);
void wg_pool_free(wg_pool *p);
/** How many slots a job's slot number is below (the pool's threads plus the caller). */
unsigned wg_pool_slots(const wg_pool *p);
/** Runs fn for i in [0, n) on the pool and the calling thread; returns when all are done.
 * p may be NULL (everything runs on the caller). Jobs may submit batches of their own. */
void wg_pool_run(wg_pool *p, size_t n, wg_pool_fn fn, void *arg);

/* ---- hashing (hash.c, libcrypto) ---- */

typedef struct wg_sha256 wg_sha256;
wg_sha256 *wg_sha256_new(void);
void wg_sha256_update(wg_sha256 *h, const void *data, size_t n);
void wg_sha256_final(wg_sha256 *h, uint8_t out[32]);
void wg_sha256_free(wg_sha256 *h);
/** Starts h over, as if new (no allocation). */
void wg_sha256_reset(wg_sha256 *h);
/** urlsafe base64 without padding, as RECORD writes digests; out needs 48 bytes for a sha256. */
void wg_b64url(char *out, const uint8_t *data, size_t n);

/* ---- the YAML reader (yaml.c; the shipped data: data.h) ---- */

typedef struct wg_yaml_doc wg_yaml_doc;
typedef struct wg_yaml_node wg_yaml_node;

/** Parses YAML text; on error err says "name:line:col: what". */
int wg_yaml_parse(wg_yaml_doc **out, const char *name, const char *text, size_t len, wg_err *err);
void wg_yaml_free(wg_yaml_doc *doc);
const wg_yaml_node *wg_yaml_root(const wg_yaml_doc *doc);
bool wg_yaml_is_map(const wg_yaml_node *n);
bool wg_yaml_is_seq(const wg_yaml_node *n);
/** Scalar text, or NULL when n is not a scalar. */
const char *wg_yaml_scalar(const wg_yaml_node *n);
const wg_yaml_node *wg_yaml_get(const wg_yaml_node *map, const char *key);
size_t wg_yaml_len(const wg_yaml_node *n); /* items of a sequence or pairs of a map */
const wg_yaml_node *wg_yaml_item(const wg_yaml_node *seq, size_t i);
const char *wg_yaml_key(const wg_yaml_node *map, size_t i);
const wg_yaml_node *wg_yaml_value(const wg_yaml_node *map, size_t i);
/** "name:line:col" of a node, for messages. */
const char *wg_yaml_where(const wg_yaml_node *n, char *buf, size_t len);

/* ---- regular expressions (regex.c, the only user of PCRE2) ---- */

typedef struct wg_regex wg_regex;
typedef struct wg_rmatch wg_rmatch; /* match data: one per thread */
#define WG_RE_CASELESS 1u
#define WG_RE_EXTENDED 2u
int wg_regex_new(wg_regex **out, const char *pattern, unsigned flags, char *msg, size_t msglen,
		 size_t *erroff);
void wg_regex_free(wg_regex *re);
wg_rmatch *wg_rmatch_new(void);
void wg_rmatch_free(wg_rmatch *md);
/**
 * 1 on a match (caps gets ncaps start/end pairs, SIZE_MAX for unset groups), 0 on none,
 * WG_ELIMIT when a match limit stopped it or the subject is not valid UTF-8.
 */
int wg_regex_match(const wg_regex *re, wg_rmatch *md, const char *s, size_t len, size_t *caps,
		   int ncaps);

/** The last component of a path. */
static inline const char *wg_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* ---- the argument checks every public entry point shares (error.c) ---- */

/**
 * The one check of a versioned struct a caller passes in or out (what: its type name):
 * WG_OK for versions 1 up to current, whose fields the callee reads or fills (a field
 * appended in version N only when version >= N); WG_EINVAL otherwise, with "what version V
 * is not supported (this library reads 1 to current)" in wg_error_last(). (error.c)
 */
int wg_struct_version(const char *what, unsigned int version, unsigned int current);
/** WG_EINVAL, with "fn: a required argument is NULL or invalid" in wg_error_last(). (error.c) */
int wg_null_arg(const char *fn);


#endif

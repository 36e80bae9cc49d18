/*
 * `wheelgate serve`: the pieces of the HTTP service, one file each.
 *   main.c     options, the config, the daemon, signals: the drain and the reload
 *   config.c   the YAML config file (the same settings as the flags), the fleet of targets,
 *              the generations a reload swaps
 *   http.c     the router: endpoints, the token, the access log
 *   body.c     request bodies: held in memory while small, spooled to an unlinked file after
 *   judge.c    a wheel's bytes checked for the request's or the fleet's targets
 *   upload.c   the upload gate: the upload protocol's multipart body, checked, then forwarded
 *   upstream.c the upstream repository (libcurl): the original request forwarded unchanged
 *   fetch.c    POST /v1/check/url: an artifact fetched from the repository, then checked
 *   metrics.c  GET /metrics (Prometheus text)
 *   reaper.c   connections: slow ones closed, room made or refused past the limits
 *   gate.c     checks at once, the queue waiting for them, memory handed back after
 *   util.c     what the others share and that calls none of them: answers, escapes, the
 *              access-log line, the client's key, resident memory
 * No two files call each other in a circle (tests/stages/check_stages.py): a helper two
 * files share goes into util.c.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_SERVE_H
#define WG_SERVE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <microhttpd.h>

#include "../cli.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:8000"
#define SERVE_DEFAULT_MAX_BODY (512ULL << 20)
#define SERVE_MAX_WORKERS 256
#define SERVE_DEFAULT_CONNECTIONS 256
#define SERVE_DEFAULT_PER_CLIENT 64
#define SERVE_DEFAULT_MIN_RATE 1024
#define SERVE_DEFAULT_RATE_WINDOW 5
#define SERVE_DEFAULT_CHECK_MEMORY (4ULL << 30) /* the library's own largest member */
/* Connections libmicrohttpd takes past --connections, so that a new one can be seen and room
 * made for it (reaper.c) instead of it waiting in the listen queue. */
#define SERVE_CONNECTION_RESERVE 16
/* The longest reason phrase a refusal's status line carries (printable ASCII, one line). */
#define SERVE_REASON_MAX 300
/* A body up to this size stays in memory; a larger one is spooled to an unlinked file. */
#define SERVE_SPOOL_THRESHOLD (1U << 20)

typedef struct serve_metrics serve_metrics;
typedef struct serve_reaper serve_reaper;
typedef struct serve_gate serve_gate;

/* Whether a wheel must work on every target of the fleet or on at least one. */
typedef enum { SERVE_POLICY_EVERY = 0, SERVE_POLICY_ANY = 1 } serve_policy;

/* One machine of the fleet (config: targets). */
typedef struct {
	char *name;          /* as the config names it: "h100-torch29" */
	char *spec;          /* facts as --target takes them, or NULL */
	char *site_packages; /* an environment read once at start, or NULL */
	char **gpus;         /* as --gpu takes them */
	size_t ngpus;
	wg_target *target;   /* the facts, made once at start (shared, read-only) */
	wg_env *env;         /* for a site-packages target, else NULL */
	pthread_mutex_t env_lock; /* a wg_env loads libraries lazily: one thread at a time */
} serve_target;

/* Everything the flags and the config file set. Strings are malloc'd. */
typedef struct {
	char *listen;
	uint64_t max_body;
	long workers, connections, timeout, drain;
	long deadline;            /* seconds a request may take, body included (0: none) */
	long header_timeout;      /* seconds a new connection has to send its request's headers */
	long min_rate;            /* body bytes a second at least, over each rate_window (0: off) */
	long rate_window;         /* seconds */
	long per_client;          /* connections from one address at most (0: no limit) */
	long checks_per_client;   /* check slots one address may hold (0: --workers) */
	long queue;               /* requests waiting for a check slot at most */
	long queue_wait;          /* seconds one may wait */
	uint64_t check_memory;    /* the memory budget of one check (bytes) */
	char *token;              /* the bearer token the /v1 endpoints need, or NULL */
	char *upstream;           /* base URL of the repository uploads go to, or NULL */
	long upstream_timeout;    /* seconds for the whole forward */
	long connect_timeout;     /* seconds to connect to the upstream */
	bool forward_other;       /* sdists and other non-wheel files: forwarded unchecked */
	char *fetch_token;        /* for /v1/check/url: sent to the repository */
	char **fetch_allow;       /* URL prefixes /v1/check/url may fetch */
	size_t nfetch_allow;
	char *spool_dir;          /* where large bodies are spooled (default $TMPDIR or /tmp) */
	serve_target *targets;    /* the fleet; none: the publish profile alone */
	size_t ntargets;
	serve_policy policy;
	char **rules;             /* user rule files or directories (config: rules) */
	size_t nrules;
	char **enable, **disable; /* rule selectors (config: enable, disable) */
	size_t nenable, ndisable;
} serve_config;

/* One generation of what SIGHUP reloads: the whole config as read (the settings a restart
 * alone changes are read from server.cfg instead: listen, workers, connections, the
 * timeouts and limits of connections, queue, check_memory, drain), the rules and the fleet.
 * A request takes a reference when it starts (request_new) and keeps that generation until
 * it completes; a reload swaps in a new one, and the old one is freed by whoever drops its
 * last reference. */
typedef struct serve_gen {
	atomic_uint refs;
	unsigned long id;         /* 1 at start, one more for each reload */
	serve_config cfg;
	wg_ruleset *rs;
	wg_scanner *sc;           /* the scanner the fleet's environments were opened with */
} serve_gen;

/* What is shared by every request. */
typedef struct {
	serve_config cfg;         /* as at start: the settings a reload does not change */
	pthread_mutex_t gen_lock; /* guards gen (the pointer; a generation is read-only) */
	serve_gen *gen;           /* the current generation (the server holds a reference) */
	wg_context *ctx;
	serve_metrics *metrics;
	serve_reaper *reaper;     /* NULL: connections are not watched (the fuzz harness) */
	serve_gate *gate;         /* NULL: checks are not queued (the fuzz harness) */
	atomic_int in_flight;
	pthread_key_t scanner_key;
} server;

/* A request body: in memory up to SERVE_SPOOL_THRESHOLD, then in an unlinked file. Past the
 * cap it is counted, never held. */
typedef struct {
	unsigned char *mem;
	size_t len, cap;
	int fd;                  /* -1 until spooled */
	unsigned char *map;      /* the spooled file mapped by body_bytes() */
	size_t map_len;
	uint64_t seen;           /* bytes received, held or not */
	bool too_large;          /* more than the cap came */
	int err;                 /* errno of a failed spool or allocation, else 0 */
} serve_body;

void body_init(serve_body *b);
/* Takes n more bytes (cfg: max_body, spool_dir); false once the body is refused (too_large
 * or err set). */
bool body_take(serve_body *b, const serve_config *cfg, const char *data, size_t n);
/* The whole body, contiguous (the spooled file mapped); NULL with err set on failure. */
const unsigned char *body_bytes(serve_body *b, size_t *len);
void body_free(serve_body *b);

/* The endpoint a request is for. */
typedef enum {
	EP_NONE = 0, EP_HEALTHZ, EP_METRICS, EP_CHECK, EP_CHECK_URL, EP_UPLOAD, EP_SELECT
} serve_endpoint;

struct upload_state;

/* One request's state, from its headers to its completion. */
typedef struct {
	serve_endpoint ep;
	serve_body body;
	int status;             /* the status answered, for the log and the metrics */
	const char *verdict;    /* "pass", "fail", "error", "forwarded", or NULL: none */
	char *rules;            /* blocking rule ids, comma-separated, or NULL */
	int upstream_status;    /* the upstream's answer to a forward, 0: none */
	struct timespec start;
	char method[16], path[256];
	struct upload_state *upload;
	bool headers;           /* the access handler has seen its headers */
	bool answered_raw;      /* answered on the socket itself (a reason phrase of ours) */
	serve_gen *gen;         /* the configuration, rules and fleet this request uses */
} request;

/* A wheel judged for the request's target or the fleet. */
typedef struct {
	char *doc;              /* the check JSON document (docs/check-json.md) */
	const char *verdict;    /* "pass", "fail" or "error" (unreadable) */
	char *rules;            /* the blocking findings' rule ids, comma-separated, or NULL */
	char *first;            /* the first blocking finding's message, or NULL */
	char *first_target;     /* the target it failed on, for a fleet; or NULL */
} serve_verdict;

/* judge.c. With g's rules and fleet. spec/profile from the query (NULL: the fleet, or
 * publish without one). For the upload gate (upload true) the publish profile is always
 * applied, plus each target. 0 with v filled (an unreadable body too: verdict "error"); -1
 * with a message in err for a bad spec or profile (answered 400); -2 with err when the
 * service failed (out of memory). */
int serve_judge(serve_gen *g, wg_scanner *sc, const unsigned char *buf, size_t len,
		const char *name, const char *spec, const char *profile, bool upload,
		serve_verdict *v, char *err, size_t errlen);
/* The same, fleet the name of one target of the config (?fleet=NAME: that target alone, a
 * single check document; -1 for an unknown name), or NULL. With a fleet and neither spec nor
 * profile, the document is the fleet envelope "wheelgate.fleet/1" (docs/check-json.md). */
int serve_judge_named(serve_gen *g, wg_scanner *sc, const unsigned char *buf, size_t len,
		      const char *name, const char *spec, const char *profile, const char *fleet,
		      bool upload, serve_verdict *v, char *err, size_t errlen);
void serve_verdict_clear(serve_verdict *v);
/* This thread's scanner, made on first use (NULL: out of memory); the key is made once at
 * start (0, or -1). */
wg_scanner *serve_scanner(server *s);
int serve_scanner_key(server *s);

/* util.c: shared by the others, calling none of them */
enum MHD_Result serve_answer(struct MHD_Connection *c, request *r, unsigned int status,
			     const char *type, const char *body, size_t len);
enum MHD_Result serve_answer_text(struct MHD_Connection *c, request *r, unsigned int status,
				  const char *text);
/* An answer written on the connection's socket by the service itself, with reason (made
 * printable ASCII, one line, at most SERVE_REASON_MAX bytes) as the status line's reason
 * phrase: libmicrohttpd 0.9 writes its own fixed phrase and has no way to set another. The
 * connection is closed after it (Connection: close): the access handler then returns
 * MHD_NO. hdrs: nhdrs name/value pairs. 1: written; 0: nothing written (answer through
 * libmicrohttpd instead); -1: failed part-way (the connection is to be closed). Only once
 * the whole request body is in. */
int serve_answer_raw(struct MHD_Connection *c, request *r, unsigned int status,
		     const char *reason, const char *const *hdrs, size_t nhdrs, const char *type,
		     const char *body, size_t len);
/* MHD_OPTION_EXTERNAL_LOGGER: libmicrohttpd's messages on stderr, but for the close that
 * follows an answer written by serve_answer_raw (not an error). */
void serve_mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* A thread-safe copy of esc(): text from a request made safe for a log or a message. */
char *serve_esc(const char *s);
/* One access-log line (stdout, JSON). */
void serve_log_line(const char *method, const char *path, int status, uint64_t bytes,
		    double secs, const char *verdict, const char *rules, bool done,
		    int upstream_status, const char *by);
/* The client's address as the limits count it: IPv4 mapped into IPv6, or an IPv6 /64. */
void serve_client_key(struct MHD_Connection *c, unsigned char key[16]);
/* The process's resident memory in bytes (0 when /proc cannot say). */
unsigned long long serve_rss_bytes(void);

/* http.c: the router */
enum MHD_Result serve_on_request(void *cls, struct MHD_Connection *c, const char *url,
				 const char *method, const char *version, const char *data,
				 size_t *data_size, void **con_cls);
/* MHD_OPTION_URI_LOG_CALLBACK: the request is made when its request line is read, so that an
 * answer libmicrohttpd gives before the headers are in is logged and counted too. */
void *serve_on_uri(void *cls, const char *uri, struct MHD_Connection *c);
void serve_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			enum MHD_RequestTerminationCode toe);

/* upload.c: called with the whole body once it is in; answers the request. */
enum MHD_Result upload_finish(server *s, struct MHD_Connection *c, request *r);
void upload_free(request *r);

/* upstream.c: forwards the request (its method, path, query, Content-Type, Authorization and
 * body) to the upstream of the request's generation and answers with the upstream's status
 * and body; 502 or 504 with a message when it cannot. */
enum MHD_Result upstream_forward(struct MHD_Connection *c, request *r,
				 const unsigned char *body, size_t len);

/* fetch.c: POST /v1/check/url, once the body (a JSON object {"url": ...}) is in. */
enum MHD_Result fetch_check(server *s, struct MHD_Connection *c, request *r);
/* 0: url is under a --fetch-allow prefix, *norm its normalized form (libcurl's, dot segments
 * removed: what was judged against the prefixes; free()); -1: not a URL this service reads
 * (err says why); -2: not under any prefix. */
int fetch_url_allowed(const serve_config *cfg, const char *url, char **norm, char *err,
		      size_t errlen);

/* POST /v1/select (select.c): `wheelgate select` for a fleet target over index or wheel URLs. */
#define SELECT_BODY_MAX (1U << 20)
enum MHD_Result serve_select(server *s, struct MHD_Connection *c, request *r);

/* metrics.c */
int metrics_new(serve_metrics **out);
void metrics_free(serve_metrics *m);
/* One request done: its endpoint, status, verdict (or NULL), blocking rule ids (comma-
 * separated, or NULL), body bytes and seconds. */
void metrics_observe(serve_metrics *m, serve_endpoint ep, int status, const char *verdict,
		     const char *rules, uint64_t bytes, double seconds);
/* The Prometheus text exposition (malloc'd), in_flight the requests under way. */
char *metrics_render(serve_metrics *m, int in_flight);

/* Why the service closed a connection itself (metrics: wheelgate_connections_closed_total). */
typedef enum {
	CLOSE_HEADER_TIMEOUT = 0, CLOSE_IDLE, CLOSE_SLOW_BODY, CLOSE_DEADLINE, CLOSE_GONE,
	CLOSE_EVICTED, CLOSE_REFUSED, CLOSE_N
} serve_close_reason;
void metrics_closed(serve_metrics *m, serve_close_reason why);
/* The gate's numbers for /metrics (m->gate is read by metrics_render). */
void metrics_set_gate(serve_metrics *m, serve_gate *g);

/* metrics.c: a connection answered without a request read (503 at admission): logged,
 * counted. */
void serve_log_refused(server *s, int status);

/* gate.c */
int gate_new(serve_gate **out, const serve_config *cfg);
void gate_free(serve_gate *g);
/* Waits for a check slot: 0 (the slot is this thread's until gate_leave), or -1 with the
 * reason in why (answer 503 with Retry-After). A server without a gate: 0 at once. */
int gate_enter(server *s, struct MHD_Connection *c, char *why, size_t whylen);
void gate_leave(server *s);
/* The scanner of this thread's slot (NULL: no slot, or out of memory). */
wg_scanner *gate_scanner(server *s);
void gate_stats(serve_gate *g, long *running, long *waiting, unsigned long long *refused,
		unsigned long long *trims, unsigned long long *waited_ms);

/* reaper.c: where a connection is, for the thread that closes slow ones. */
typedef enum { CONN_HEADERS = 0, CONN_BODY = 1, CONN_BUSY = 2 } serve_conn_state;
int reaper_start(serve_reaper **out, server *s);
void reaper_stop(serve_reaper *rp);
unsigned long reaper_closed(serve_reaper *rp);
/* MHD_OPTION_NOTIFY_CONNECTION's callback (cls: the server). */
void serve_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			 enum MHD_ConnectionNotificationCode toe);
void reaper_mark(server *s, struct MHD_Connection *c, serve_conn_state state);
/* n more body bytes came on c (for --min-rate). */
void reaper_progress(server *s, struct MHD_Connection *c, size_t n);

/* config.c. Reads the YAML config into cfg (values already in cfg are defaults the file
 * overrides). 0, or -1 with "FILE:LINE:COL: problem" in err. */
int config_load(serve_config *cfg, const char *path, char *err, size_t errlen);
/* Makes the fleet's targets (wg_target, wg_env read once); 0 or -1 with err. */
int config_targets_open(serve_config *cfg, wg_context *ctx, wg_scanner *sc, char *err,
			size_t errlen);
void config_free(serve_config *cfg);
/* Makes the ruleset cfg asks for (the shipped rules, then cfg's rules, enable, disable);
 * 0, or -1 with "FILE:LINE:COL: problem" (or the reason) in err. */
int config_ruleset(wg_ruleset **out, const serve_config *cfg, wg_context *ctx, char *err,
		   size_t errlen);
/* The settings a reload does not change, copied from src (strings duplicated; the fleet,
 * the tokens and the lists left out): 0, or -1 when out of memory. */
int config_copy_fixed(serve_config *dst, const serve_config *src);

/* The generations (config.c). gen_new takes cfg's contents (cfg is left empty), rs and sc. */
serve_gen *gen_new(serve_config *cfg, wg_ruleset *rs, wg_scanner *sc, unsigned long id);
/* A reference to the current generation (never NULL once one is installed). */
serve_gen *gen_acquire(server *s);
void gen_release(serve_gen *g);
/* g becomes current (its reference is the server's); the old one's is dropped. */
void gen_install(server *s, serve_gen *g);

#endif

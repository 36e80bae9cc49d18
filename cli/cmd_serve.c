/*
 * `wheelgate serve`: checks over HTTP (libmicrohttpd). POST /v1/check?filename=NAME.whl with
 * the wheel as the body answers the JSON document `wheelgate check --format json` prints.
 * A fixed pool of MHD threads does the work: each thread has its own wg_scanner (made on
 * first use, freed when the thread ends); the wg_context and wg_ruleset are shared.
 * SIGTERM/SIGINT: the listening socket closes, requests under way finish, exit 0.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "cli.h"

#define DEFAULT_LISTEN "127.0.0.1:8000"
#define DEFAULT_MAX_BODY (512ULL << 20)
#define MAX_WORKERS 256
#define DEFAULT_CONNECTIONS 64

static void help(FILE *f)
{
	fprintf(f,
		"usage: wheelgate serve [options]\n"
		"\n"
		"Answers checks over HTTP until SIGTERM or SIGINT (then the listening socket\n"
		"closes, the requests under way finish, within --drain seconds, and it exits 0).\n"
		"\n"
		"endpoints:\n"
		"  GET  /healthz      200 \"ok\"\n"
		"  POST /v1/check?filename=NAME.whl[&target=SPEC][&profile=publish|install]\n"
		"                     the wheel (or ELF object) as the body; answers 200 with the\n"
		"                     JSON document 'wheelgate check --format json' prints (the\n"
		"                     verdict is inside), 422 with the same document when the\n"
		"                     body cannot be read, 400 for a bad query, 413 for a body\n"
		"                     over --max-body; SPEC as 'wheelgate check --target' takes it\n"
		"                     (python=3.12,torch=2.9.1+cu128,...); no target: publish\n"
		"\n"
		"options:\n"
		"  --listen HOST:PORT address and port to bind (default " DEFAULT_LISTEN ");\n"
		"                     port 0 picks a free one; the address bound is printed on\n"
		"                     stderr. Loopback unless you name another address; TLS:\n"
		"                     put a reverse proxy in front\n"
		"  --max-body SIZE    the largest body accepted (default 512M; K, M, G): a larger\n"
		"                     Content-Length is refused before the body is read, a\n"
		"                     chunked body past it is counted, never held, and refused\n"
		"  --workers N        threads doing checks (default: the number of CPUs); at most\n"
		"                     N checks run at once, each thread with its own scanner\n"
		"  --connections N    open connections at most (default 64); memory is bounded\n"
		"                     by N x --max-body\n"
		"  --timeout SECONDS  an idle connection is closed after this (default 60)\n"
		"  --drain SECONDS    on SIGTERM, how long requests under way may take (default 30)\n"
		"  --token TOKEN      require 'Authorization: Bearer TOKEN' on /v1/* (401\n"
		"                     otherwise); also read from $WHEELGATE_TOKEN\n"
		"  -h, --help         show this help\n"
		"\n"
		"Each request is logged on stdout as one JSON line (time, method, path, status,\n"
		"bytes, ms, verdict); headers, tokens and query strings are never logged.\n"
		"\n"
		"exit status: 0 after a signal, 2 for usage errors or an address that cannot be bound.\n");
}

/* What is shared by every request. */
typedef struct {
	wg_context *ctx;
	wg_ruleset *rs;
	const char *token;
	uint64_t max_body;
	atomic_int in_flight;
	pthread_key_t scanner_key;
} server;

/* One request's state, from its headers to its completion. */
typedef struct {
	unsigned char *body;
	size_t len, cap;
	uint64_t seen;          /* bytes received, held or not */
	bool too_large;
	int status;             /* the status answered, for the log */
	const char *verdict;    /* as the document says: "pass", "fail", "error"; NULL: none */
	struct timespec start;
	char method[16], path[128];
} request;

static void scanner_free(void *p)
{
	wg_scanner_free(p);
}

/* This thread's scanner, made on first use. */
static wg_scanner *thread_scanner(server *s)
{
	wg_scanner *sc = pthread_getspecific(s->scanner_key);
	if (sc)
		return sc;
	if (wg_scanner_new(&sc, s->ctx) < 0)
		return NULL;
	if (pthread_setspecific(s->scanner_key, sc) != 0) {
		wg_scanner_free(sc);
		return NULL;
	}
	return sc;
}

static enum MHD_Result answer(struct MHD_Connection *c, request *r, unsigned int status,
			      const char *type, const char *body, size_t len, bool copy)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		len, (void *)body, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		if (!copy)
			free((void *)body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->path[0] == '/' &&
					!strcmp(r->path, "/healthz") ? "GET, HEAD" : "POST");
	enum MHD_Result ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	r->status = (int)status;
	return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *c, request *r, unsigned int status,
				   const char *text)
{
	return answer(c, r, status, "text/plain; charset=utf-8", text, strlen(text), true);
}

/* Constant time in the length of the expected token. */
static bool token_ok(const server *s, struct MHD_Connection *c)
{
	if (!s->token)
		return true;
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h || strncasecmp(h, "Bearer ", 7))
		return false;
	h += 7;
	size_t n = strlen(s->token), m = strlen(h);
	unsigned char diff = n != m;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)s->token[i] ^ (unsigned char)(i < m ? h[i] : 0);
	return diff == 0;
}

/* The check of a body: 200 with the document, 422 when unreadable, 400 for a bad query. */
static enum MHD_Result do_check(server *s, struct MHD_Connection *c, request *r)
{
	const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "filename");
	const char *spec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "target");
	const char *prof = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "profile");
	char msg[512];
	if (!name || !*name || strlen(name) > 255 || strchr(name, '/')) {
		return answer_text(c, r, MHD_HTTP_BAD_REQUEST,
				   "wheelgate serve: /v1/check needs ?filename=NAME.whl (the file's "
				   "name, no '/', at most 255 bytes): a wheel's name, version and tags "
				   "come from it\n");
	}
	int profile = wg_profile_parse(prof ? prof : "auto");
	if (profile < 0)
		return answer_text(c, r, MHD_HTTP_BAD_REQUEST,
				   "wheelgate serve: profile takes install, publish or auto\n");
	wg_scanner *sc = thread_scanner(s);
	if (!sc)
		return answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "wheelgate serve: cannot make a scanner (out of memory?)\n");
	wg_target *t = NULL;
	if (wg_target_new(&t) < 0 ||
	    wg_target_set(t, "profile", wg_profile_name((wg_profile)profile)) < 0 ||
	    (spec && wg_target_parse(t, spec) < 0)) {
		snprintf(msg, sizeof(msg), "wheelgate serve: target: %s\n", esc(wg_error_last()));
		wg_target_free(t);
		return answer_text(c, r, MHD_HTTP_BAD_REQUEST, msg);
	}
	wg_scan *scan = NULL;
	wg_report *rep = NULL;
	int rc = wg_scan_buffer(&scan, sc, r->body ? r->body : (const unsigned char *)"", r->len, name);
	if (rc == WG_OK)
		rc = wg_check(&rep, sc, s->rs, scan, t);
	wg_scan_free(scan);
	free(r->body);
	r->body = NULL;
	const char *err = NULL;
	if (rc < 0) {
		err = wg_scanner_error(sc);
		err = *err ? err : "cannot be read";
	}
	const wg_report *reps[1] = {rep};
	const char *paths[1] = {name}, *errs[1] = {err};
	char *doc = NULL;
	enum MHD_Result ret;
	if (wg_reports_format(&doc, WG_FORMAT_JSON, s->rs, t, paths, reps, errs, 1,
			      WG_SEV_ERROR) == WG_OK && doc) {
		r->verdict = !rep ? "error" : wg_report_worst(rep) >= (int)WG_SEV_ERROR ? "fail"
											: "pass";
		ret = answer(c, r, rep ? MHD_HTTP_OK : 422 /* Unprocessable Content */,
			     "application/json", doc, strlen(doc), true);
	} else {
		snprintf(msg, sizeof(msg), "wheelgate serve: cannot format the report: %s\n",
			 esc(wg_error_last()));
		ret = answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	wg_free(doc);
	wg_report_free(rep);
	wg_target_free(t);
	return ret;
}

/* Appends a chunk of the body; past the cap the bytes are counted, never held. */
static void take_body(server *s, request *r, const char *data, size_t n)
{
	r->seen += n;
	if (r->too_large || r->seen > s->max_body) {
		r->too_large = true;
		free(r->body);
		r->body = NULL;
		r->len = r->cap = 0;
		return;
	}
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 64 * 1024;
		while (cap < r->len + n)
			cap *= 2;
		if (cap > s->max_body)
			cap = (size_t)s->max_body;
		unsigned char *p = realloc(r->body, cap);
		if (!p) {
			r->too_large = true; /* answered as out of memory below */
			free(r->body);
			r->body = NULL;
			r->len = r->cap = 0;
			return;
		}
		r->body = p;
		r->cap = cap;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **con_cls)
{
	(void)version;
	server *s = cls;
	request *r = *con_cls;
	if (!r) {
		/* The headers: answered now when the body need not be read. */
		if (!(r = calloc(1, sizeof(*r))))
			return MHD_NO;
		clock_gettime(CLOCK_MONOTONIC, &r->start);
		snprintf(r->method, sizeof(r->method), "%s", method);
		snprintf(r->path, sizeof(r->path), "%s", url);
		*con_cls = r;
		atomic_fetch_add(&s->in_flight, 1);
		bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
		if (!strcmp(url, "/healthz"))
			return get ? answer_text(c, r, MHD_HTTP_OK, "ok\n")
				   : answer_text(c, r, MHD_HTTP_METHOD_NOT_ALLOWED,
						 "wheelgate serve: /healthz takes GET\n");
		if (strcmp(url, "/v1/check"))
			return answer_text(c, r, MHD_HTTP_NOT_FOUND,
					   "wheelgate serve: not found; the endpoints are GET /healthz and "
					   "POST /v1/check?filename=NAME.whl\n");
		if (!token_ok(s, c))
			return answer_text(c, r, MHD_HTTP_UNAUTHORIZED,
					   "wheelgate serve: /v1/* needs 'Authorization: Bearer TOKEN' "
					   "with the server's token\n");
		if (strcmp(method, MHD_HTTP_METHOD_POST))
			return answer_text(c, r, MHD_HTTP_METHOD_NOT_ALLOWED,
					   "wheelgate serve: /v1/check takes POST with the wheel as the body\n");
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl) {
			errno = 0;
			char *end;
			unsigned long long n = strtoull(cl, &end, 10);
			if (errno || end == cl || n > s->max_body) {
				r->too_large = true;
				char msg[256];
				snprintf(msg, sizeof(msg), "wheelgate serve: the body (Content-Length %s) "
					 "is larger than the limit of %llu bytes (--max-body)\n",
					 esc(cl), (unsigned long long)s->max_body);
				return answer_text(c, r, 413 /* Content Too Large */, msg);
			}
		}
		return MHD_YES;
	}
	if (r->status)
		return MHD_YES; /* answered already: what follows is discarded */
	if (*data_size) {
		take_body(s, r, data, *data_size);
		*data_size = 0;
		return MHD_YES;
	}
	if (r->too_large) {
		char msg[256];
		snprintf(msg, sizeof(msg), "wheelgate serve: the body (%llu bytes) is larger than the "
			 "limit of %llu bytes (--max-body)\n", (unsigned long long)r->seen,
			 (unsigned long long)s->max_body);
		return answer_text(c, r, r->seen > s->max_body ? 413 /* Content Too Large */
							   : MHD_HTTP_SERVICE_UNAVAILABLE,
				   r->seen > s->max_body ? msg : "wheelgate serve: out of memory\n");
	}
	return do_check(s, c, r);
}

/* The request is over (answered, or the client went away): one log line. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)c;
	server *s = cls;
	request *r = *con_cls;
	if (!r)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double ms = (double)(now.tv_sec - r->start.tv_sec) * 1e3 +
		    (double)(now.tv_nsec - r->start.tv_nsec) / 1e6;
	time_t wall = time(NULL);
	struct tm tm;
	char ts[32];
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&wall, &tm));
	json_t *line = json_pack("{s:s, s:s, s:s, s:i, s:I, s:f, s:s?, s:b}", "time", ts,
				 "method", esc(r->method), "path", esc(r->path), "status", r->status,
				 "bytes", (json_int_t)r->seen, "ms", ms, "verdict", r->verdict,
				 "completed", toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
	char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
	if (text) {
		flockfile(stdout);
		fputs(text, stdout);
		fputc('\n', stdout);
		fflush(stdout);
		funlockfile(stdout);
	}
	free(text);
	json_decref(line);
	free(r->body);
	free(r);
	*con_cls = NULL;
	atomic_fetch_sub(&s->in_flight, 1);
}

/* HOST:PORT ([V6]:PORT too) into an address; false with a message when it is not one. */
static bool parse_listen(const char *arg, struct sockaddr_storage *ss, socklen_t *sslen)
{
	char host[256];
	const char *colon = strrchr(arg, ':');
	if (!colon || colon == arg || (size_t)(colon - arg) >= sizeof(host)) {
		fprintf(stderr, "wheelgate serve: --listen takes HOST:PORT, not '%s'\n", esc(arg));
		return false;
	}
	memcpy(host, arg, (size_t)(colon - arg));
	host[colon - arg] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	char *end;
	errno = 0;
	long port = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port < 0 || port > 65535) {
		fprintf(stderr, "wheelgate serve: --listen: '%s' is not a port (0-65535)\n",
			esc(colon + 1));
		return false;
	}
	struct addrinfo hints = {0}, *ai = NULL;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	int e = getaddrinfo(host, colon + 1, &hints, &ai);
	if (e || !ai) {
		fprintf(stderr, "wheelgate serve: --listen: %s: %s\n", esc(host), gai_strerror(e));
		return false;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sslen = ai->ai_addrlen;
	freeaddrinfo(ai);
	return true;
}

static bool parse_count(const char *opt, const char *arg, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi) {
		fprintf(stderr, "wheelgate serve: %s takes a number from %ld to %ld, not '%s'\n", opt,
			lo, hi, esc(arg));
		return false;
	}
	*out = v;
	return true;
}

int cmd_serve(int argc, char **argv)
{
	enum { O_LISTEN = 256, O_MAXBODY, O_WORKERS, O_TOKEN, O_CONNS, O_TIMEOUT, O_DRAIN };
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, O_LISTEN},
		{"max-body", required_argument, NULL, O_MAXBODY},
		{"workers", required_argument, NULL, O_WORKERS},
		{"connections", required_argument, NULL, O_CONNS},
		{"timeout", required_argument, NULL, O_TIMEOUT},
		{"drain", required_argument, NULL, O_DRAIN},
		{"token", required_argument, NULL, O_TOKEN},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	const char *listen = DEFAULT_LISTEN, *token = getenv("WHEELGATE_TOKEN");
	uint64_t max_body = DEFAULT_MAX_BODY;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	long workers = ncpu > 0 ? (ncpu < MAX_WORKERS ? ncpu : MAX_WORKERS) : 2;
	long conns = DEFAULT_CONNECTIONS, timeout = 60, drain = 30;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_LISTEN: listen = optarg; break;
		case O_TOKEN: token = optarg; break;
		case O_MAXBODY:
			if (!parse_size(optarg, &max_body) || max_body == 0 || max_body > SIZE_MAX / 2) {
				fprintf(stderr, "wheelgate serve: --max-body takes a size (bytes, or with "
					"K, M or G), not '%s'\n", esc(optarg));
				return EXIT_USAGE;
			}
			break;
		case O_WORKERS:
			if (!parse_count("--workers", optarg, 1, MAX_WORKERS, &workers))
				return EXIT_USAGE;
			break;
		case O_CONNS:
			if (!parse_count("--connections", optarg, 1, 100000, &conns))
				return EXIT_USAGE;
			break;
		case O_TIMEOUT:
			if (!parse_count("--timeout", optarg, 1, 86400, &timeout))
				return EXIT_USAGE;
			break;
		case O_DRAIN:
			if (!parse_count("--drain", optarg, 0, 86400, &drain))
				return EXIT_USAGE;
			break;
		case 'h': help(stdout); return EXIT_CLEAN;
		default:
			fprintf(stderr, "Try 'wheelgate serve --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "wheelgate serve: unexpected argument '%s'\nTry 'wheelgate serve "
			"--help'.\n", esc(argv[optind]));
		return EXIT_USAGE;
	}
	if (token && !*token)
		token = NULL;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	if (!parse_listen(listen, &addr, &addrlen))
		return EXIT_USAGE;

	server s = {0};
	s.token = token;
	s.max_body = max_body;
	atomic_init(&s.in_flight, 0);
	wg_options opts = WG_OPTIONS_INIT;
	wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
	if (wg_context_new(&s.ctx, &opts) < 0 || wg_ruleset_new(&s.rs, s.ctx, &ro) < 0) {
		fprintf(stderr, "wheelgate serve: %s\n", esc(wg_error_last()));
		wg_ruleset_free(s.rs);
		wg_context_free(s.ctx);
		return EXIT_USAGE;
	}
	if (pthread_key_create(&s.scanner_key, scanner_free) != 0) {
		fprintf(stderr, "wheelgate serve: cannot make thread-local storage\n");
		wg_ruleset_free(s.rs);
		wg_context_free(s.ctx);
		return EXIT_USAGE;
	}
	/* The signals are waited for here, never delivered to MHD's threads (which inherit the
	 * mask); SIGPIPE from a client gone away is ignored. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_AUTO |
			     MHD_USE_ERROR_LOG;
	if (addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	struct MHD_Daemon *d = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, &s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)workers, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)conns, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)timeout,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, &s, MHD_OPTION_END);
	int status = EXIT_CLEAN;
	if (!d) {
		fprintf(stderr, "wheelgate serve: cannot listen on %s: %s\n", esc(listen),
			errno ? strerror(errno) : "libmicrohttpd refused the options");
		status = EXIT_USAGE;
		goto out;
	}
	const union MHD_DaemonInfo *pi = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	char shown[300];
	snprintf(shown, sizeof(shown), "%.*s", (int)(strrchr(listen, ':') - listen), listen);
	fprintf(stderr, "wheelgate serve: listening on http://%s:%u (%ld workers, max body %llu "
		"bytes%s)\n", esc(shown), pi ? (unsigned)pi->port : 0u, workers,
		(unsigned long long)max_body, token ? ", token required on /v1/*" : "");

	int sig = 0;
	sigwait(&sigs, &sig);
	fprintf(stderr, "wheelgate serve: %s: no new connections; finishing %d request(s)\n",
		sig == SIGTERM ? "SIGTERM" : "SIGINT", atomic_load(&s.in_flight));
	MHD_socket lfd = MHD_quiesce_daemon(d);
	if (lfd != MHD_INVALID_SOCKET)
		close(lfd);
	/* Requests under way finish, within the drain bound (checked every 50 ms). */
	for (long i = 0; i < drain * 20 && atomic_load(&s.in_flight) > 0; i++)
		nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
	if (atomic_load(&s.in_flight) > 0)
		fprintf(stderr, "wheelgate serve: %d request(s) still under way after %ld s; closed\n",
			atomic_load(&s.in_flight), drain);
	MHD_stop_daemon(d);
	fprintf(stderr, "wheelgate serve: stopped\n");
out:
	pthread_key_delete(s.scanner_key);
	wg_ruleset_free(s.rs);
	wg_context_free(s.ctx);
	return status;
}

/*
 * An HTTP request to `wheelgate serve`, as a client on the network writes it (request line,
 * headers, body: plain, chunked, multipart, truncated): the real service code (cli/serve/: the
 * router, the bodies, /v1/check's judge, the upload gate) driven in process. One libmicrohttpd
 * daemon without a listening socket or a thread of its own is made once; each input is written
 * into one end of a socketpair whose other end is handed to the daemon, which runs (MHD_run)
 * until it has answered and closed, a bounded number of rounds. What is checked besides the
 * sanitizers: every request the router saw has one access-log line (stdout), valid JSON with
 * no control character and no credential in it; no request is left counted in flight, no
 * connection is left open, and no answer is a 500.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "../../cli/serve/serve.h"

/* The bearer token of the /v1 endpoints: it may never reach the log. */
#define FZ_TOKEN "fuzz-token-7f3a"
#define FZ_ROUNDS 200

static server fz_s;
static struct MHD_Daemon *fz_d;
static wg_scanner *fz_sc; /* this thread's scanner, kept reachable */
static int fz_log[2] = {-1, -1}, fz_stdout = -1;
/* Requests the router saw through to their end, and log lines read: one line each. */
static unsigned fz_completed, fz_lines;

static void fz_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			    enum MHD_RequestTerminationCode toe)
{
	if (*con_cls)
		fz_completed++;
	serve_on_completed(cls, c, con_cls, toe);
}

static void fz_serve_init(void)
{
	if (fz_d)
		return;
	signal(SIGPIPE, SIG_IGN);
	/* The whole config goes into the one generation; the server keeps the fixed settings. */
	static serve_config live;
	serve_config *cfg = &live;
	cfg->listen = strdup("127.0.0.1:0");
	cfg->max_body = 1U << 20;
	cfg->workers = 1;
	cfg->connections = 8;
	cfg->timeout = 5;
	cfg->drain = 0;
	cfg->deadline = 30;
	cfg->token = strdup(FZ_TOKEN);
	/* The discard port on loopback: refused at once, so a wheel that passes gets a fast 502. */
	cfg->upstream = strdup("http://127.0.0.1:9");
	cfg->upstream_timeout = 2;
	cfg->connect_timeout = 1;
	cfg->forward_other = true;
	atomic_init(&fz_s.in_flight, 0);
	wg_options o = WG_OPTIONS_INIT;
	o.max_member_size = 16u << 20;
	o.max_total_size = 64u << 20;
	wg_ruleset *rs = NULL;
	serve_gen *g = NULL;
	pthread_mutex_init(&fz_s.gen_lock, NULL);
	if (!cfg->listen || !cfg->token || !cfg->upstream || wg_context_new(&fz_s.ctx, &o) < 0 ||
	    config_copy_fixed(&fz_s.cfg, cfg) < 0 || wg_ruleset_new(&rs, fz_s.ctx, NULL) < 0 ||
	    !(g = gen_new(cfg, rs, NULL, 1)) || metrics_new(&fz_s.metrics) < 0 ||
	    serve_scanner_key(&fz_s) != 0 || !(fz_sc = serve_scanner(&fz_s)) ||
	    curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		abort();
	gen_install(&fz_s, g);
	cfg = &fz_s.cfg; /* live's contents are the generation's now */
	/* Suspend/resume allowed, as a gate that waits on its upstream may use it. */
	fz_d = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL,
				serve_on_request, &fz_s, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)cfg->connections,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->timeout,
				MHD_OPTION_NOTIFY_COMPLETED, fz_on_completed, &fz_s,
				MHD_OPTION_END);
	if (!fz_d)
		abort();
	/* The access log (stdout) goes to a pipe while a request runs, to be checked.
	 * The writer blocks on a full pipe: 1 MiB holds far more lines than one round of the
	 * daemon writes (it reads at most its buffer of requests per round), and the pipe is
	 * drained after each round. */
	if (pipe2(fz_log, O_CLOEXEC) != 0 || fcntl(fz_log[0], F_SETFL, O_NONBLOCK) != 0 ||
	    (fz_stdout = dup(STDOUT_FILENO)) < 0)
		abort();
	(void)fcntl(fz_log[1], F_SETPIPE_SZ, 1 << 20);
}

static unsigned fz_connections(void)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(fz_d,
							    MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return i ? i->num_connections : 0;
}

/* Whether the token is in this input only as a credential (a header line "Authorization:
 * Bearer TOKEN"): then it may not be in the log (elsewhere, in a path, the log shows it as
 * the path it is). */
static bool fz_token_is_credential;

static bool fz_only_as_credential(const uint8_t *data, size_t size)
{
	const size_t tl = strlen(FZ_TOKEN);
	bool found = false;
	for (const uint8_t *p = data; (p = memmem(p, size - (size_t)(p - data), FZ_TOKEN, tl));
	     p++) {
		static const char h[] = "\nAuthorization: Bearer ";
		if ((size_t)(p - data) < sizeof(h) - 1 || memcmp(p - (sizeof(h) - 1), h, sizeof(h) - 1))
			return false;
		found = true;
	}
	return found;
}

static void fz_check_line(const char *line)
{
	json_error_t e;
	json_t *j = json_loads(line, 0, &e);
	if (!j || !json_is_object(j) || !json_is_integer(json_object_get(j, "status"))) {
		fprintf(stderr, "fuzz_serve: access-log line is not a JSON object: %s (%s)\n", line,
			e.text);
		abort();
	}
	json_decref(j);
	for (const char *p = line; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			fprintf(stderr, "fuzz_serve: control character in the log: %s\n", line);
			abort();
		}
	if (fz_token_is_credential && strstr(line, FZ_TOKEN)) {
		fprintf(stderr, "fuzz_serve: a credential in the log: %s\n", line);
		abort();
	}
	fz_lines++;
}

/* The log lines written so far (drained from the pipe): each one JSON, without a control
 * character or the token. buf holds an unfinished line between calls. */
static void fz_check_log(char *buf, size_t cap, size_t *len, bool final)
{
	for (;;) {
		ssize_t n = read(fz_log[0], buf + *len, cap - 1 - *len);
		if (n > 0)
			*len += (size_t)n;
		buf[*len] = '\0';
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', *len - (size_t)(line - buf)))) {
			*nl = '\0';
			fz_check_line(line);
			line = nl + 1;
		}
		size_t rest = *len - (size_t)(line - buf);
		if (rest == cap - 1) {
			fprintf(stderr, "fuzz_serve: an access-log line over %zu bytes\n", cap - 1);
			abort();
		}
		memmove(buf, line, rest);
		*len = rest;
		if (n <= 0)
			break;
	}
	if (final && *len) {
		fprintf(stderr, "fuzz_serve: access-log line without its newline: %.*s\n", (int)*len,
			buf);
		abort();
	}
}

/* The answers: "HTTP/1.x NNN": none may be a 500 (a failure of the service itself). */
static void fz_check_answers(const char *out, size_t len)
{
	for (const char *p = out; p && (size_t)(p - out) + 12 <= len;
	     p = memmem(p + 1, len - (size_t)(p + 1 - out), "HTTP/1.", 7)) {
		if (!memcmp(p, "HTTP/1.", 7) && p[8] == ' ' && !memcmp(p + 9, "500", 3)) {
			fprintf(stderr, "fuzz_serve: the service answered 500:\n%.*s\n",
				(int)(len - (size_t)(p - out) < 400 ? len - (size_t)(p - out) : 400), p);
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_serve_init();
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	if (fcntl(sv[1], F_SETFL, O_NONBLOCK) != 0)
		abort();
	fz_token_is_credential = fz_only_as_credential(data, size);
	fz_completed = fz_lines = 0;
	fflush(stdout);
	if (dup2(fz_log[1], STDOUT_FILENO) < 0)
		abort();
	struct sockaddr_in peer = {0};
	peer.sin_family = AF_INET;
	peer.sin_port = htons(40000);
	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* MHD owns sv[0] from here, closed by it whatever happens. */
	if (MHD_add_connection(fz_d, sv[0], (struct sockaddr *)&peer, sizeof(peer)) != MHD_YES)
		abort();

	static char log[65536];
	size_t loglen = 0;
	/* The answers: the first 64 KiB are kept to be checked, the rest read and dropped. */
	static char out[65536];
	size_t outlen = 0, sent = 0;
	bool eof = false, shut = false;
	int idle = 0;
	for (int round = 0; round < FZ_ROUNDS && !eof; round++) {
		bool moved = false;
		while (sent < size) {
			ssize_t w = send(sv[1], data + sent, size - sent, MSG_NOSIGNAL);
			if (w <= 0)
				break; /* full (EAGAIN) or closed by the server: the rest waits, or not */
			sent += (size_t)w;
			moved = true;
		}
		/* All sent and the daemon quiet for two rounds (answers to pipelined requests come
		 * on a connection still open), or half the rounds gone: the client's end is shut. */
		if (!shut && ((sent == size && idle >= 2) || round > FZ_ROUNDS / 2)) {
			shutdown(sv[1], SHUT_WR);
			shut = true;
		}
		MHD_run(fz_d);
		for (;;) {
			char tmp[16384];
			ssize_t n = recv(sv[1], tmp, sizeof(tmp), 0);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				eof = true; /* closed, or reset: the server is done with it */
				break;
			}
			if (n < 0)
				break;
			moved = true;
			size_t keep = sizeof(out) - outlen < (size_t)n ? sizeof(out) - outlen : (size_t)n;
			memcpy(out + outlen, tmp, keep);
			outlen += keep;
		}
		idle = moved ? 0 : idle + 1;
		fz_check_log(log, sizeof(log), &loglen, false);
	}
	close(sv[1]);
	/* The daemon sees the close and lets the connection go (bounded). */
	for (int round = 0; round < FZ_ROUNDS && fz_connections() > 0; round++)
		MHD_run(fz_d);
	fflush(stdout);
	fz_check_log(log, sizeof(log), &loglen, true);
	if (dup2(fz_stdout, STDOUT_FILENO) < 0)
		abort();
	if (fz_connections() != 0) {
		fprintf(stderr, "fuzz_serve: a connection is still open after %d rounds\n", FZ_ROUNDS);
		abort();
	}
	if (fz_lines != fz_completed) {
		fprintf(stderr, "fuzz_serve: %u request(s) done, %u access-log line(s)\n",
			fz_completed, fz_lines);
		abort();
	}
	if (atomic_load(&fz_s.in_flight) != 0) {
		fprintf(stderr, "fuzz_serve: %d request(s) still counted in flight\n",
			atomic_load(&fz_s.in_flight));
		abort();
	}
	fz_check_answers(out, outlen);
	/* WG_FUZZ_SERVE_SHOW=1: each answer's status line and the log, to see what was reached. */
	const char *show = getenv("WG_FUZZ_SERVE_SHOW");
	if (show && *show == '1') {
		for (const char *p = out; p; p = memmem(p + 1, outlen - (size_t)(p + 1 - out),
							 "HTTP/1.", 7)) {
			const char *e = memchr(p, '\r', outlen - (size_t)(p - out));
			if (!memcmp(p, "HTTP/1.", 7))
				fprintf(stderr, "fuzz_serve: %zu bytes in, answer %.*s\n", size,
					(int)(e ? e - p : 0), p);
		}
		if (!outlen)
			fprintf(stderr, "fuzz_serve: %zu bytes in, no answer\n", size);
	}
	return 0;
}

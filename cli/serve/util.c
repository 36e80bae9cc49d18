/*
 * What the parts of `wheelgate serve` share, calling nothing of theirs: answers (through
 * libmicrohttpd, or written on the socket for a reason phrase of our own), the escape of
 * request text, the access-log line, libmicrohttpd's log hook, the client's key for the
 * per-client limit and the process's resident memory.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "serve.h"

char *serve_esc(const char *s)
{
	char *e = NULL;
	if (!s || wg_escape(&e, s, WG_ESCAPE_CONTROL) < 0)
		return NULL;
	char *copy = strdup(e); /* freed with free() by callers */
	wg_free(e);
	return copy;
}

enum MHD_Result serve_answer(struct MHD_Connection *c, request *r, unsigned int status,
			     const char *type, const char *body, size_t len)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body,
								    MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(resp, "Retry-After", "5");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
					r->ep == EP_HEALTHZ || r->ep == EP_METRICS ? "GET, HEAD"
										   : "POST");
	enum MHD_Result ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	r->status = (int)status;
	return ret;
}

enum MHD_Result serve_answer_text(struct MHD_Connection *c, request *r, unsigned int status,
				  const char *text)
{
	return serve_answer(c, r, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* Set by serve_answer_raw on the thread that then returns MHD_NO: the message
 * libmicrohttpd logs as it closes that connection is not an error. */
static _Thread_local bool raw_close;

void serve_mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	if (raw_close) {
		/* The message comes as "%s\n" with the text its argument, or as the format. */
		va_list peek;
		va_copy(peek, ap);
		const char *m = !strncmp(fmt, "%s", 2) ? va_arg(peek, const char *) : fmt;
		bool ours = m && strstr(m, "Application reported internal error");
		va_end(peek);
		if (ours) {
			raw_close = false;
			return;
		}
	}
	vfprintf(stderr, fmt, ap);
}

/* All of buf to a non-blocking socket, waiting at most 10 s in all for room. */
static bool send_all(int fd, const char *buf, size_t n)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (n) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w > 0) {
			buf += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return false;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = 10000 - (long)((now.tv_sec - t0.tv_sec) * 1000 +
					    (now.tv_nsec - t0.tv_nsec) / 1000000);
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return false;
	}
	return true;
}

int serve_answer_raw(struct MHD_Connection *c, request *r, unsigned int status,
		     const char *reason, const char *const *hdrs, size_t nhdrs, const char *type,
		     const char *body, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || ci->connect_fd == MHD_INVALID_SOCKET)
		return 0;
	/* The phrase: printable ASCII on one line (RFC 9112: reason-phrase is HTAB, SP,
	 * VCHAR and obs-text; obs-text left out, since clients decode it differently). */
	char phrase[SERVE_REASON_MAX + 1];
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)(reason ? reason : "");
	     *p && n < SERVE_REASON_MAX; p++)
		phrase[n++] = *p >= 0x20 && *p < 0x7f ? (char)*p : *p == '\t' || *p == '\n' ? ' ' : '?';
	if (reason && strlen(reason) > SERVE_REASON_MAX && n >= 3)
		memcpy(phrase + n - 3, "...", 3);
	phrase[n] = '\0';
	if (!n)
		snprintf(phrase, sizeof(phrase), "%s", MHD_get_reason_phrase_for(status));
	char date[64];
	time_t now = time(NULL);
	struct tm tm;
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&now, &tm));
	size_t cap = 1024 + sizeof(phrase) + len;
	for (size_t i = 0; i < nhdrs; i++)
		cap += strlen(hdrs[2 * i]) + strlen(hdrs[2 * i + 1]) + 4;
	char *out = malloc(cap);
	if (!out)
		return 0;
	int off = snprintf(out, cap, "HTTP/1.1 %u %s\r\nDate: %s\r\nContent-Type: %s\r\n"
			   "Content-Length: %zu\r\nConnection: close\r\n", status, phrase, date,
			   type, len);
	for (size_t i = 0; i < nhdrs && off > 0 && (size_t)off < cap; i++) {
		const char *v = hdrs[2 * i + 1];
		if (strpbrk(v, "\r\n"))
			continue; /* never: the callers' values are fixed words and rule ids */
		off += snprintf(out + off, cap - (size_t)off, "%s: %s\r\n", hdrs[2 * i], v);
	}
	if (off <= 0 || (size_t)off + 2 + len > cap) {
		free(out);
		return 0;
	}
	memcpy(out + off, "\r\n", 2);
	memcpy(out + off + 2, body, len);
	bool ok = send_all(ci->connect_fd, out, (size_t)off + 2 + len);
	free(out);
	r->status = (int)status;
	r->answered_raw = ok;
	raw_close = true;
	return ok ? 1 : -1;
}

/* One access-log line (stdout, JSON). */
void serve_log_line(const char *method, const char *path, int status, uint64_t bytes,
		    double secs, const char *verdict, const char *rules, bool done,
		    int upstream_status, const char *by)
{
	time_t wall = time(NULL);
	struct tm tm;
	char ts[32];
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&wall, &tm));
	char *m = serve_esc(method), *p = serve_esc(path);
	json_t *line = json_pack("{s:s, s:s?, s:s?, s:i, s:I, s:f, s:s?, s:s?, s:b}", "time", ts,
				 "method", m, "path", p, "status", status, "bytes",
				 (json_int_t)bytes, "ms", secs * 1e3, "verdict", verdict,
				 "rules", rules, "completed", done);
	if (line && upstream_status)
		json_object_set_new(line, "upstream_status", json_integer(upstream_status));
	if (line && by)
		json_object_set_new(line, "answered_by", json_string(by));
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
	free(m);
	free(p);
}

/* The client's address as the per-client limit counts it: IPv4 (as a mapped IPv6 address),
 * or the /64 of an IPv6 address (one host usually holds a whole /64). */
void serve_client_key(struct MHD_Connection *c, unsigned char key[16])
{
	memset(key, 0, 16);
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	if (!sa)
		return;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &in->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		memcpy(key, &in6->sin6_addr, 16);
		if (!IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			memset(key + 8, 0, 8);
	}
}

unsigned long long serve_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	unsigned long long size = 0, res = 0;
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &res) != 2)
		res = 0;
	fclose(f);
	long page = sysconf(_SC_PAGESIZE);
	return res * (unsigned long long)(page > 0 ? page : 4096);
}

/*
 * The router of `wheelgate serve`: which endpoint a request is for, the checks that need only
 * its headers (method, token, Content-Length against the cap), the body taken as it comes,
 * and the endpoint's answer once it is in; then one access-log line and the metrics. The
 * answers themselves are written by util.c.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <jansson.h>

#include "serve.h"

/* The body of POST /v1/check/url is a small JSON object. */
#define URL_BODY_MAX (64U * 1024)

/* Constant time in the length of the expected token. */
static bool token_ok(const request *r, struct MHD_Connection *c)
{
	const char *token = r->gen->cfg.token;
	if (!token)
		return true;
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h || strncasecmp(h, "Bearer ", 7))
		return false;
	h += 7;
	size_t n = strlen(token), m = strlen(h);
	unsigned char diff = n != m;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)token[i] ^ (unsigned char)(i < m ? h[i] : 0);
	return diff == 0;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* POST /v1/check: 200 with the document, 422 when unreadable, 400 for a bad query. */
static enum MHD_Result do_check(server *s, struct MHD_Connection *c, request *r)
{
	const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "filename");
	const char *spec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "target");
	const char *prof = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "profile");
	const char *fleet = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fleet");
	if (!name || !*name || strlen(name) > 255 || strchr(name, '/'))
		return serve_answer_text(c, r, MHD_HTTP_BAD_REQUEST,
					 "wheelgate serve: /v1/check needs ?filename=NAME.whl (the "
					 "file's name, no '/', at most 255 bytes): a wheel's name, "
					 "version and tags come from it\n");
	size_t len;
	const unsigned char *buf = body_bytes(&r->body, &len);
	char err[512], msg[640];
	if (!buf) {
		snprintf(msg, sizeof(msg), "wheelgate serve: cannot hold the body: %s\n",
			 strerror(r->body.err));
		return serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	if (gate_enter(s, c, err, sizeof(err)) < 0) {
		snprintf(msg, sizeof(msg), "wheelgate serve: busy: %s; try again later\n", err);
		return serve_answer_text(c, r, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
	}
	wg_scanner *sc = serve_scanner(s);
	if (!sc) {
		gate_leave(s);
		return serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					 "wheelgate serve: cannot make a scanner (out of memory?)\n");
	}
	serve_verdict v;
	int rc = serve_judge_named(r->gen, sc, buf, len, name, spec, prof, fleet, false, &v, err,
				   sizeof(err));
	body_free(&r->body);
	gate_leave(s);
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "wheelgate serve: %s\n", err);
		return serve_answer_text(c, r, rc == -1 ? MHD_HTTP_BAD_REQUEST
							 : MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	r->verdict = v.verdict;
	r->rules = v.rules;
	v.rules = NULL;
	enum MHD_Result ret = serve_answer(c, r, strcmp(v.verdict, "error") ? MHD_HTTP_OK
						   : 422 /* Unprocessable Content */,
					   "application/json", v.doc, strlen(v.doc));
	serve_verdict_clear(&v);
	return ret;
}

static const char *const NOT_FOUND =
	"wheelgate serve: not found. The endpoints: GET /healthz, GET /metrics, POST "
	"/v1/check?filename=NAME.whl, POST /v1/check/url, POST /v1/select, and uploads (the upload protocol's "
	"multipart POST, as twine sends it) at any other path, forwarded to the upstream\n";

typedef struct {
	int lengths;            /* Content-Length headers */
	bool differ, bad;       /* two that differ; one that is not all digits */
	bool chunked;           /* a Transfer-Encoding header */
	char first[32];
} length_headers;

static enum MHD_Result count_length(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	(void)kind;
	length_headers *h = cls;
	if (!key)
		return MHD_YES;
	if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		h->chunked = true;
		return MHD_YES;
	}
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
		return MHD_YES;
	const char *v = value ? value : "";
	if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) >= sizeof(h->first))
		h->bad = true;
	if (h->lengths++ == 0)
		snprintf(h->first, sizeof(h->first), "%s", v);
	else if (strcmp(h->first, v))
		h->differ = true;
	return MHD_YES;
}

/* The body's length must be said once, one way: two Content-Length headers (the same or
 * not), one that is not a number, or one beside Transfer-Encoding let a proxy in front and
 * this service read different bodies (request smuggling, RFC 9112 6.3). NULL: fine. */
static const char *length_problem(struct MHD_Connection *c)
{
	length_headers h = {0};
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_length, &h);
	if (h.differ)
		return "wheelgate serve: the request has Content-Length headers that differ\n";
	if (h.lengths > 1)
		return "wheelgate serve: the request has more than one Content-Length header\n";
	if (h.bad)
		return "wheelgate serve: the request's Content-Length is not a decimal number\n";
	if (h.lengths && h.chunked)
		return "wheelgate serve: the request has both Content-Length and "
		       "Transfer-Encoding\n";
	return NULL;
}

/* The headers are in: the endpoint, and the answers that need no body. */
static enum MHD_Result on_headers(server *s, struct MHD_Connection *c, request *r,
				  const char *url, const char *method)
{
	const char *lp = length_problem(c);
	if (lp)
		return serve_answer_text(c, r, MHD_HTTP_BAD_REQUEST, lp);
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	bool post = !strcmp(method, MHD_HTTP_METHOD_POST);
	if (!strcmp(url, "/healthz") || !strcmp(url, "/metrics")) {
		r->ep = url[1] == 'h' ? EP_HEALTHZ : EP_METRICS;
		if (!get)
			return serve_answer_text(c, r, MHD_HTTP_METHOD_NOT_ALLOWED,
						 "wheelgate serve: this endpoint takes GET\n");
		if (r->ep == EP_HEALTHZ)
			return serve_answer_text(c, r, MHD_HTTP_OK, "ok\n");
		char *text = metrics_render(s->metrics, atomic_load(&s->in_flight));
		if (!text)
			return serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
						 "wheelgate serve: out of memory\n");
		enum MHD_Result ret = serve_answer(c, r, MHD_HTTP_OK,
						   "text/plain; version=0.0.4; charset=utf-8",
						   text, strlen(text));
		free(text);
		return ret;
	}
	if (!strncmp(url, "/v1/", 4)) {
		if (!strcmp(url, "/v1/check"))
			r->ep = EP_CHECK;
		else if (!strcmp(url, "/v1/check/url"))
			r->ep = EP_CHECK_URL;
		else if (!strcmp(url, "/v1/select"))
			r->ep = EP_SELECT;
		else
			return serve_answer_text(c, r, MHD_HTTP_NOT_FOUND, NOT_FOUND);
		if (!token_ok(r, c))
			return serve_answer_text(c, r, MHD_HTTP_UNAUTHORIZED,
						 "wheelgate serve: /v1/* needs 'Authorization: Bearer "
						 "TOKEN' with the server's token\n");
		if (!post)
			return serve_answer_text(c, r, MHD_HTTP_METHOD_NOT_ALLOWED,
						 r->ep == EP_CHECK
						 ? "wheelgate serve: /v1/check takes POST with the "
						   "wheel as the body\n"
						 : r->ep == EP_SELECT
						 ? "wheelgate serve: /v1/select takes POST with "
						   "{\"source\": ..., \"project\": ...} as the body\n"
						 : "wheelgate serve: /v1/check/url takes POST with "
						   "{\"url\": ...} as the body\n");
	} else {
		/* Any other path is a repository's upload URL (/, /legacy/, /api/pypi/REPO...). */
		if (!post)
			return serve_answer_text(c, r, MHD_HTTP_NOT_FOUND, NOT_FOUND);
		r->ep = EP_UPLOAD;
		if (strlen(url) >= sizeof(r->path))
			return serve_answer_text(c, r, MHD_HTTP_URI_TOO_LONG,
						 "wheelgate serve: an upload's path is at most 255 "
						 "bytes\n");
		const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_TYPE);
		if (!ct || strncasecmp(ct, "multipart/form-data", 19))
			return serve_answer_text(c, r, 415 /* Unsupported Media Type */,
						 "wheelgate serve: an upload is a multipart/form-data "
						 "POST (the upload protocol twine speaks); other "
						 "requests go to the repository directly\n");
		if (!r->gen->cfg.upstream)
			return serve_answer_text(c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
						 "wheelgate serve: this gate has no upstream "
						 "(--upstream URL): it takes no uploads\n");
	}
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);
	uint64_t cap = r->ep == EP_CHECK_URL ? URL_BODY_MAX : r->ep == EP_SELECT ? SELECT_BODY_MAX
		       : r->gen->cfg.max_body;
	if (cl) {
		errno = 0;
		char *end;
		unsigned long long n = strtoull(cl, &end, 10);
		if (errno || end == cl || n > cap) {
			char msg[256], *e = serve_esc(cl);
			snprintf(msg, sizeof(msg), "wheelgate serve: the body (Content-Length %.40s) is "
				 "larger than the limit of %llu bytes%s\n", e ? e : "?",
				 (unsigned long long)cap,
				 r->ep == EP_CHECK_URL || r->ep == EP_SELECT ? "" : " (--max-body)");
			free(e);
			r->body.too_large = true;
			return serve_answer_text(c, r, 413 /* Content Too Large */, msg);
		}
	}
	if (cl && r->ep == EP_CHECK && s->cfg.check_memory &&
	    strtoull(cl, NULL, 10) > s->cfg.check_memory) {
		/* The wheel alone is past what one check may hold: refused, never run. A client
		 * that waits for 100 Continue is answered now. One that sends its body at once
		 * (requests, urllib) is answered once the body is read and discarded: closing on
		 * unread data resets the connection, and the client sees that reset, not the
		 * 413. The body is at most --max-body (checked above), so the extra reading is
		 * bounded. */
		const char *expect = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								 MHD_HTTP_HEADER_EXPECT);
		if (!expect || strcasecmp(expect, "100-continue")) {
			r->body.too_large = true;
			return MHD_YES;
		}
		char msg[256];
		snprintf(msg, sizeof(msg), "wheelgate serve: a check of %llu bytes is over the "
			 "memory budget of one check (%llu bytes, --check-memory)\n",
			 strtoull(cl, NULL, 10), (unsigned long long)s->cfg.check_memory);
		r->body.too_large = true;
		return serve_answer_text(c, r, 413 /* Content Too Large */, msg);
	}
	return MHD_YES;
}

static request *request_new(server *s, const char *url)
{
	request *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	body_init(&r->body);
	clock_gettime(CLOCK_MONOTONIC, &r->start);
	/* The path alone: a query string is never logged. */
	size_t n = url ? strcspn(url, "?") : 0;
	snprintf(r->path, sizeof(r->path), "%.*s", (int)(n < sizeof(r->path) ? n :
							 sizeof(r->path) - 1), url ? url : "");
	/* The generation the request keeps to its end, whatever a reload swaps in meanwhile. */
	if (!(r->gen = gen_acquire(s))) {
		free(r);
		return NULL;
	}
	atomic_fetch_add(&s->in_flight, 1);
	return r;
}

void *serve_on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)c;
	return request_new(cls, uri);
}

enum MHD_Result serve_on_request(void *cls, struct MHD_Connection *c, const char *url,
				 const char *method, const char *version, const char *data,
				 size_t *data_size, void **con_cls)
{
	(void)version;
	server *s = cls;
	request *r = *con_cls;
	if (!r && !(r = *con_cls = request_new(s, url)))
		return MHD_NO;
	if (!r->headers) {
		r->headers = true;
		snprintf(r->method, sizeof(r->method), "%s", method);
		snprintf(r->path, sizeof(r->path), "%s", url);
		clock_gettime(CLOCK_MONOTONIC, &r->start);
		reaper_mark(s, c, CONN_BODY);
		return on_headers(s, c, r, url, method);
	}
	if (r->status) {
		*data_size = 0; /* answered already: what follows is discarded */
		return MHD_YES;
	}
	if (s->cfg.deadline > 0 && seconds_since(&r->start) > (double)s->cfg.deadline) {
		/* libmicrohttpd takes an answer only before the body or after all of it: a
		 * body still coming past the deadline closes the connection (logged as 408). */
		*data_size = 0;
		body_free(&r->body);
		r->status = MHD_HTTP_REQUEST_TIMEOUT;
		return MHD_NO;
	}
	if (*data_size) {
		reaper_progress(s, c, *data_size);
		bool over_budget = r->ep == EP_CHECK && s->cfg.check_memory &&
				   r->body.seen + *data_size > s->cfg.check_memory;
		if (r->body.too_large || over_budget ||
		    (r->ep == EP_CHECK_URL && r->body.seen + *data_size > URL_BODY_MAX) ||
		    (r->ep == EP_SELECT && r->body.seen + *data_size > SELECT_BODY_MAX)) {
			r->body.seen += *data_size;
			r->body.too_large = true;
			body_free(&r->body);
		} else {
			body_take(&r->body, &r->gen->cfg, data, *data_size);
		}
		*data_size = 0;
		return MHD_YES;
	}
	if (r->body.too_large && r->ep == EP_CHECK && s->cfg.check_memory &&
	    r->body.seen > s->cfg.check_memory) {
		char msg[256];
		snprintf(msg, sizeof(msg), "wheelgate serve: a check of %llu bytes is over the "
			 "memory budget of one check (%llu bytes, --check-memory)\n",
			 (unsigned long long)r->body.seen, (unsigned long long)s->cfg.check_memory);
		body_free(&r->body);
		return serve_answer_text(c, r, 413 /* Content Too Large */, msg);
	}
	if (r->body.too_large) {
		char msg[256];
		snprintf(msg, sizeof(msg), "wheelgate serve: the body (%llu bytes) is larger than the "
			 "limit of %llu bytes\n", (unsigned long long)r->body.seen,
			 (unsigned long long)(r->ep == EP_CHECK_URL ? URL_BODY_MAX
					      : r->ep == EP_SELECT ? SELECT_BODY_MAX
					      : r->gen->cfg.max_body));
		body_free(&r->body);
		return serve_answer_text(c, r, 413 /* Content Too Large */, msg);
	}
	if (r->body.err) {
		char msg[256];
		snprintf(msg, sizeof(msg), "wheelgate serve: cannot hold the body (%llu bytes): %s\n",
			 (unsigned long long)r->body.seen, strerror(r->body.err));
		body_free(&r->body);
		return serve_answer_text(c, r, r->body.err == ENOMEM ? MHD_HTTP_SERVICE_UNAVAILABLE
								  : MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	reaper_mark(s, c, CONN_BUSY);
	switch (r->ep) {
	case EP_CHECK: return do_check(s, c, r);
	case EP_CHECK_URL: return fetch_check(s, c, r);
	case EP_SELECT: return serve_select(s, c, r);
	case EP_UPLOAD: return upload_finish(s, c, r);
	default: return serve_answer_text(c, r, MHD_HTTP_NOT_FOUND, NOT_FOUND);
	}
}

/* Whether the request line looks like one: a method of capital letters and a target that is
 * a path (or "*", or a URL). Bytes a client sent past its body can be read as a request
 * line: a header such as "Authorization: Bearer ..." then stands where the method and path
 * are, and the log says "(malformed)" instead of repeating it. */
static bool path_ok(const char *p)
{
	return p[0] == '/' || !strcmp(p, "*") || !strncasecmp(p, "http://", 7) ||
	       !strncasecmp(p, "https://", 8);
}

static bool request_line_ok(const request *r)
{
	if (!r->method[0])
		return false;
	for (const char *m = r->method; *m; m++)
		if (*m < 'A' || *m > 'Z')
			return false;
	return path_ok(r->path);
}


/* The request is over (answered, or the client went away): one log line, the metrics. An
 * answer libmicrohttpd gave itself (a malformed request, a header or chunk extension too
 * large for its buffer) is found by its status on the connection and logged as such. */
void serve_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			enum MHD_RequestTerminationCode toe)
{
	server *s = cls;
	request *r = *con_cls;
	if (!r)
		return;
	reaper_mark(s, c, CONN_HEADERS);
	double secs = seconds_since(&r->start);
	int status = r->status;
	const char *by = NULL;
	if (!status) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
		if (ci && ci->http_status >= 100 && ci->http_status <= 999) {
			status = (int)ci->http_status;
			by = "libmicrohttpd";
		}
	}
	/* Answered on the socket itself (upload.c), then closed by libmicrohttpd: answered. */
	bool done = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK || r->answered_raw;
	/* Answered, though the connection then ended otherwise, is still answered. */
	metrics_observe(s->metrics, r->ep, done || by ? status : 0, r->verdict, r->rules,
			r->body.seen, secs);
	/* Before the headers (libmicrohttpd answered): the method is not known. */
	bool ok = r->headers ? request_line_ok(r) : path_ok(r->path);
	serve_log_line(!ok ? "(malformed)" : r->headers ? r->method : "(not read)",
		 ok ? r->path : "(malformed)", status,
		 r->body.seen, secs, r->verdict, r->rules, done, r->upstream_status, by);
	upload_free(r);
	body_free(&r->body);
	free(r->rules);
	gen_release(r->gen);
	free(r);
	*con_cls = NULL;
	atomic_fetch_sub(&s->in_flight, 1);
}

/*
 * The upstream repository: a request that passed the gate goes there unchanged (libcurl):
 * the same method, path and query below the upstream's base URL, the same body and
 * Content-Type (its boundary), the client's Authorization, User-Agent and Accept; the
 * upstream's status, Content-Type and body come back. The gate keeps nothing.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "../ca_bundle.h"
#include "serve.h"

/* The most of an upstream's answer passed back (a repository's error page or "OK"). */
#define ANSWER_MAX (1U << 20)

typedef struct {
	char *buf;
	size_t len, cap;
	bool cut;
} answer_buf;

static size_t on_data(char *p, size_t size, size_t n, void *cls)
{
	answer_buf *a = cls;
	size_t len = size * n;
	size_t take = len;
	if (a->len + take > ANSWER_MAX) {
		take = ANSWER_MAX - a->len;
		a->cut = true;
	}
	if (a->len + take > a->cap) {
		size_t cap = a->cap ? a->cap : 4096;
		while (cap < a->len + take)
			cap *= 2;
		char *b = realloc(a->buf, cap);
		if (!b)
			return 0; /* libcurl fails the transfer: CURLE_WRITE_ERROR */
		a->buf = b;
		a->cap = cap;
	}
	memcpy(a->buf + a->len, p, take);
	a->len += take;
	return len;
}

typedef struct {
	struct curl_slist *h;
	bool failed;
} header_list;

static void add_header(header_list *hl, const char *name, const char *value)
{
	if (!value || hl->failed)
		return;
	size_t n = strlen(name) + strlen(value) + 3;
	char *line = malloc(n);
	if (!line) {
		hl->failed = true;
		return;
	}
	snprintf(line, n, "%s: %s", name, value);
	struct curl_slist *h = curl_slist_append(hl->h, line);
	free(line);
	if (!h)
		hl->failed = true;
	else
		hl->h = h;
}

/* Percent-encodes what is not unreserved (RFC 3986) or keep. */
static bool encode(char **out, size_t *len, size_t *cap, const char *s, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*len + 4 > *cap) {
			size_t c = *cap ? *cap * 2 : 256;
			char *b = realloc(*out, c);
			if (!b)
				return false;
			*out = b;
			*cap = c;
		}
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) || (*p && strchr(keep, *p))) {
			(*out)[(*len)++] = (char)*p;
		} else {
			(*out)[(*len)++] = '%';
			(*out)[(*len)++] = hex[*p >> 4];
			(*out)[(*len)++] = hex[*p & 15];
		}
	}
	(*out)[*len] = '\0';
	return true;
}

typedef struct {
	char *url;
	size_t len, cap;
	bool first, failed;
} query;

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			      const char *value)
{
	(void)kind;
	query *q = cls;
	if (q->failed)
		return MHD_NO;
	q->failed = !encode(&q->url, &q->len, &q->cap, q->first ? "?" : "&", "?&") ||
		    !encode(&q->url, &q->len, &q->cap, key, "") ||
		    (value && (!encode(&q->url, &q->len, &q->cap, "=", "=") ||
			       !encode(&q->url, &q->len, &q->cap, value, "")));
	q->first = false;
	return q->failed ? MHD_NO : MHD_YES;
}

/* The upstream URL of the request: the base, then the request's path (libmicrohttpd hands it
 * decoded: it is encoded again) and its query. NULL when out of memory. */
static char *upstream_url(const serve_config *cfg, struct MHD_Connection *c, const char *path)
{
	query q = {NULL, 0, 0, true, false};
	const char *base = cfg->upstream;
	size_t bl = strlen(base);
	while (bl && base[bl - 1] == '/')
		bl--;
	q.cap = bl + 256;
	if (!(q.url = malloc(q.cap)))
		return NULL;
	memcpy(q.url, base, bl);
	q.len = bl;
	q.url[q.len] = '\0';
	if (!encode(&q.url, &q.len, &q.cap, path, "/!$&'()*+,;=:@")) {
		free(q.url);
		return NULL;
	}
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, on_arg, &q);
	if (q.failed) {
		free(q.url);
		return NULL;
	}
	return q.url;
}

enum MHD_Result upstream_forward(struct MHD_Connection *c, request *r,
				 const unsigned char *body, size_t len)
{
	if (strstr(r->path, "/../") || strstr(r->path, "/./") ||
	    (strlen(r->path) >= 3 && !strcmp(r->path + strlen(r->path) - 3, "/..")))
		return serve_answer_text(c, r, MHD_HTTP_BAD_REQUEST,
					 "wheelgate serve: the upload path has '.' or '..' "
					 "segments; nothing was uploaded\n");
	const serve_config *cfg = &r->gen->cfg;
	char *url = upstream_url(cfg, c, r->path);
	CURL *h = curl_easy_init();
	header_list hl = {NULL, false};
	static const char *const pass[] = {MHD_HTTP_HEADER_CONTENT_TYPE,
					   MHD_HTTP_HEADER_AUTHORIZATION,
					   MHD_HTTP_HEADER_USER_AGENT, MHD_HTTP_HEADER_ACCEPT};
	for (size_t i = 0; i < sizeof(pass) / sizeof(*pass); i++)
		add_header(&hl, pass[i], MHD_lookup_connection_value(c, MHD_HEADER_KIND, pass[i]));
	add_header(&hl, "Expect", ""); /* no 100-continue round trip: the body is here */
	const union MHD_ConnectionInfo *ai =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char ip[64] = "";
	if (ai && ai->client_addr) {
		const struct sockaddr *sa = ai->client_addr;
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, ip,
				  sizeof(ip));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, ip,
				  sizeof(ip));
	}
	if (*ip)
		add_header(&hl, "X-Forwarded-For", ip);
	if (!url || !h || hl.failed) {
		free(url);
		curl_easy_cleanup(h);
		curl_slist_free_all(hl.h);
		return serve_answer_text(c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
					 "wheelgate serve: out of memory\n");
	}
	answer_buf a = {0};
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_URL, url);
	wg_curl_ca_bundle(h);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, (const char *)body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl.h);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, cfg->connect_timeout);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, cfg->upstream_timeout);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	CURLcode rc = curl_easy_perform(h);
	long status = 0;
	char *ctype = NULL;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ctype);
	enum MHD_Result ret;
	if (rc != CURLE_OK || status < 100 || status > 599) {
		char *u = serve_esc(cfg->upstream), *e = serve_esc(*errbuf ? errbuf
									  : curl_easy_strerror(rc));
		char msg[1024];
		bool slow = rc == CURLE_OPERATION_TIMEDOUT;
		snprintf(msg, sizeof(msg), "wheelgate serve: the upstream %s %s: %s. %s\n",
			 u ? u : "?", slow ? "did not answer in time" : "cannot be reached",
			 e ? e : "?",
			 r->verdict && !strcmp(r->verdict, "pass")
				 ? "The file passed the checks but was not stored: upload it again."
				 : "Nothing was stored.");
		free(u);
		free(e);
		ret = serve_answer_text(c, r, slow ? MHD_HTTP_GATEWAY_TIMEOUT : MHD_HTTP_BAD_GATEWAY,
					msg);
	} else {
		r->upstream_status = (int)status;
		struct MHD_Response *resp = MHD_create_response_from_buffer(
			a.len, a.buf ? a.buf : (void *)"", MHD_RESPMEM_MUST_COPY);
		if (!resp) {
			ret = MHD_NO;
		} else {
			if (ctype)
				MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
			if (r->verdict)
				MHD_add_response_header(resp, "X-Wheelgate-Verdict", r->verdict);
			ret = MHD_queue_response(c, (unsigned int)status, resp);
			MHD_destroy_response(resp);
			r->status = (int)status;
		}
	}
	free(a.buf);
	free(url);
	curl_slist_free_all(hl.h);
	curl_easy_cleanup(h);
	return ret;
}

/*
 * POST /v1/check/url: {"url": ..., "target"?, "profile"?, "filename"?}. The artifact is fetched
 * from the repository with libcurl (the configured token as a bearer token, http and https
 * only, bounded in size and time) into a body spooled like an upload's, then judged and
 * answered like /v1/check. Only URLs under a --fetch-allow prefix are fetched; a redirect is
 * followed by hand only when its target is allowed too, and the token goes only to the origin
 * of the URL asked for.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <jansson.h>

#include "../ca_bundle.h"
#include "serve.h"

#define FETCH_MAX_REDIRECTS 5
#define FETCH_EXCERPT 160

/* A URL, parsed and normalized by libcurl (dot segments removed). */
typedef struct {
	char *url;      /* the normalized URL, curl_free() */
	char *scheme, *host, *port, *path;
} fetch_url;

static void url_clear(fetch_url *u)
{
	curl_free(u->url);
	curl_free(u->scheme);
	curl_free(u->host);
	curl_free(u->port);
	curl_free(u->path);
	memset(u, 0, sizeof(*u));
}

/* 0, or -1 with why in err. */
static int url_parse(fetch_url *u, const char *text, char *err, size_t errlen)
{
	memset(u, 0, sizeof(*u));
	CURLU *h = curl_url();
	char *user = NULL, *pass = NULL;
	int rc = -1;
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (curl_url_set(h, CURLUPART_URL, text, 0) != CURLUE_OK) {
		snprintf(err, errlen, "not a URL");
		goto done;
	}
	curl_url_get(h, CURLUPART_USER, &user, 0);
	curl_url_get(h, CURLUPART_PASSWORD, &pass, 0);
	if (user || pass) {
		snprintf(err, errlen, "a URL with a user or password in it is refused (the service "
			 "sends its own --fetch-token)");
		goto done;
	}
	if (curl_url_get(h, CURLUPART_SCHEME, &u->scheme, 0) != CURLUE_OK ||
	    (strcasecmp(u->scheme, "http") && strcasecmp(u->scheme, "https"))) {
		snprintf(err, errlen, "only http:// and https:// URLs are fetched");
		goto done;
	}
	if (curl_url_get(h, CURLUPART_HOST, &u->host, 0) != CURLUE_OK ||
	    curl_url_get(h, CURLUPART_PATH, &u->path, 0) != CURLUE_OK ||
	    curl_url_get(h, CURLUPART_PORT, &u->port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
	    curl_url_get(h, CURLUPART_URL, &u->url, 0) != CURLUE_OK) {
		snprintf(err, errlen, "not a URL with a host and a path");
		goto done;
	}
	/* Encoded dots or slashes could climb out of an allowed prefix on the repository's side. */
	for (const char *p = u->path; *p; p++)
		if (*p == '\\' || (p[0] == '%' && p[1] == '2' && strchr("eEfF", p[2]))) {
			snprintf(err, errlen, "a path with an encoded '.' or '/', or a '\\', is refused");
			goto done;
		}
	rc = 0;
done:
	curl_free(user);
	curl_free(pass);
	curl_url_cleanup(h);
	if (rc < 0)
		url_clear(u);
	return rc;
}

/* Under a --fetch-allow prefix, which ends at a '/' (or the prefix ends with one). */
static bool url_allowed(const serve_config *cfg, const fetch_url *u)
{
	for (size_t i = 0; i < cfg->nfetch_allow; i++) {
		const char *p = cfg->fetch_allow[i];
		size_t n = strlen(p);
		if (!n || strncmp(u->url, p, n))
			continue;
		char next = u->url[n];
		if (p[n - 1] == '/' || next == '\0' || next == '/' || next == '?')
			return true;
	}
	return false;
}

int fetch_url_allowed(const serve_config *cfg, const char *url, char **norm, char *err,
		      size_t errlen)
{
	*norm = NULL;
	fetch_url u;
	memset(&u, 0, sizeof(u));
	if (url_parse(&u, url, err, errlen) < 0) {
		url_clear(&u);
		return -1;
	}
	int rc = url_allowed(cfg, &u) ? 0 : -2;
	if (rc == 0 && !(*norm = strdup(u.url))) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	url_clear(&u);
	return rc;
}

static bool same_origin(const fetch_url *a, const fetch_url *b)
{
	return !strcasecmp(a->scheme, b->scheme) && !strcasecmp(a->host, b->host) &&
	       !strcmp(a->port, b->port);
}

/* What the write callback fills. */
typedef struct {
	const serve_config *cfg;
	CURL *h;
	serve_body *body;
	char excerpt[FETCH_EXCERPT + 1]; /* the start of an error answer's body */
	size_t nexcerpt;
	bool too_large;
} fetch_sink;

static size_t on_data(char *data, size_t size, size_t nmemb, void *cls)
{
	fetch_sink *k = cls;
	size_t n = size * nmemb;
	long code = 0;
	curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200 || code >= 300) {
		/* An error page or a redirect: only its start is kept, for the message. */
		size_t room = FETCH_EXCERPT - k->nexcerpt, m = n < room ? n : room;
		memcpy(k->excerpt + k->nexcerpt, data, m);
		k->nexcerpt += m;
		k->excerpt[k->nexcerpt] = '\0';
		return n;
	}
	if (!body_take(k->body, k->cfg, data, n)) {
		k->too_large = k->body->too_large;
		return CURL_WRITEFUNC_ERROR;
	}
	return n;
}

/* The answer to a failed fetch: status and a message naming the URL (escaped). */
static enum MHD_Result fail(struct MHD_Connection *c, request *r, unsigned int status,
			    const char *url, const char *what)
{
	char *e = serve_esc(url);
	size_t n = strlen(what) + (e ? strlen(e) : 1) + 80;
	char *msg = malloc(n);
	enum MHD_Result ret;
	if (!msg) {
		ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					"wheelgate serve: out of memory\n");
	} else {
		snprintf(msg, n, "wheelgate serve: %s: %s\n", e ? e : "?", what);
		ret = serve_answer_text(c, r, status, msg);
	}
	free(msg);
	free(e);
	return ret;
}

/* The last segment of the URL's path, percent-decoded; NULL when it cannot name a file. */
static char *url_filename(const fetch_url *u)
{
	const char *slash = strrchr(u->path, '/');
	const char *seg = slash ? slash + 1 : u->path;
	int n = 0;
	char *d = curl_easy_unescape(NULL, seg, 0, &n);
	char *name = NULL;
	if (d && n > 0 && n <= 255 && !memchr(d, '/', (size_t)n) && !memchr(d, '\0', (size_t)n))
		name = strdup(d);
	curl_free(d);
	return name;
}

enum MHD_Result fetch_check(server *s, struct MHD_Connection *c, request *r)
{
	const serve_config *cfg = &r->gen->cfg;
	enum MHD_Result ret;
	json_t *req = NULL;
	fetch_url first = {0}, cur = {0};
	CURL *h = NULL;
	struct curl_slist *hdrs = NULL, *auth = NULL;
	serve_body art;
	char *name = NULL, *spec = NULL, *prof = NULL, *tok = NULL;
	char err[512], what[768];
	body_init(&art);

	size_t len;
	const unsigned char *buf = body_bytes(&r->body, &len);
	json_error_t jerr;
	if (buf)
		req = json_loadb((const char *)buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!req || !json_is_object(req)) {
		char *e = buf && !req ? serve_esc(jerr.text) : NULL;
		snprintf(what, sizeof(what), "wheelgate serve: /v1/check/url takes a JSON object "
			 "{\"url\": \"https://repo/.../NAME.whl\"} (optional \"target\", \"profile\", "
			 "\"filename\")%s%s\n", e ? ": " : "", e ? e : "");
		free(e);
		ret = serve_answer_text(c, r, MHD_HTTP_BAD_REQUEST, what);
		goto done;
	}
	const char *url = json_string_value(json_object_get(req, "url"));
	const char *keys[] = {"target", "profile", "filename"};
	char **vals[] = {&spec, &prof, &name};
	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_object_get(req, keys[i]);
		if (v && !json_is_null(v) && !json_is_string(v)) {
			snprintf(what, sizeof(what), "wheelgate serve: /v1/check/url: \"%s\" must be a "
				 "string\n", keys[i]);
			ret = serve_answer_text(c, r, MHD_HTTP_BAD_REQUEST, what);
			goto done;
		}
		if (json_is_string(v) && !(*vals[i] = strdup(json_string_value(v)))) {
			ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
						"wheelgate serve: out of memory\n");
			goto done;
		}
	}
	if (!url || !*url) {
		ret = serve_answer_text(c, r, MHD_HTTP_BAD_REQUEST,
					"wheelgate serve: /v1/check/url needs {\"url\": "
					"\"https://repo/.../NAME.whl\"}\n");
		goto done;
	}
	if (url_parse(&first, url, err, sizeof(err)) < 0) {
		ret = fail(c, r, MHD_HTTP_BAD_REQUEST, url, err);
		goto done;
	}
	if (!cfg->nfetch_allow) {
		ret = fail(c, r, MHD_HTTP_FORBIDDEN, first.url,
			   "this service fetches nothing: no URL prefix is allowed (--fetch-allow "
			   "PREFIX, or fetch_allow in the config)");
		goto done;
	}
	if (!url_allowed(cfg, &first)) {
		ret = fail(c, r, MHD_HTTP_FORBIDDEN, first.url,
			   "not under any --fetch-allow prefix of this service");
		goto done;
	}
	if (name && (!*name || strlen(name) > 255 || strchr(name, '/'))) {
		ret = serve_answer_text(c, r, MHD_HTTP_BAD_REQUEST,
					"wheelgate serve: \"filename\" must be a file's name (no '/', "
					"at most 255 bytes)\n");
		goto done;
	}
	if (!name && !(name = url_filename(&first))) {
		ret = fail(c, r, MHD_HTTP_BAD_REQUEST, first.url,
			   "the URL's last segment is not a file's name: give \"filename\"");
		goto done;
	}
	/* The JSON is read: its bytes are not needed while the artifact comes. */
	body_free(&r->body);

	if (!(h = curl_easy_init())) {
		ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					"wheelgate serve: cannot make a libcurl handle\n");
		goto done;
	}
	if (cfg->fetch_token) {
		size_t n = strlen(cfg->fetch_token) + 32;
		if (!(tok = malloc(n))) {
			ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
						"wheelgate serve: out of memory\n");
			goto done;
		}
		snprintf(tok, n, "Authorization: Bearer %s", cfg->fetch_token);
		auth = curl_slist_append(NULL, tok);
	}
	hdrs = curl_slist_append(NULL, "Accept: */*");
	cur = first;
	memset(&first, 0, sizeof(first));
	/* first is kept as the origin the token belongs to. */
	if (url_parse(&first, cur.url, err, sizeof(err)) < 0) {
		ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					"wheelgate serve: out of memory\n");
		goto done;
	}
	fetch_sink k = {.cfg = cfg, .h = h, .body = &art};
	char cerr[CURL_ERROR_SIZE];
	long code = 0;
	for (int hop = 0;; hop++) {
		curl_easy_reset(h);
		cerr[0] = '\0';
		k.nexcerpt = 0;
		k.excerpt[0] = '\0';
		bool own = same_origin(&first, &cur);
		curl_easy_setopt(h, CURLOPT_URL, cur.url);
		wg_curl_ca_bundle(h);
		curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L); /* redirects: checked below */
		curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, cfg->connect_timeout);
		curl_easy_setopt(h, CURLOPT_TIMEOUT, cfg->upstream_timeout);
		curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)cfg->max_body);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, own && auth ? auth : hdrs);
		curl_easy_setopt(h, CURLOPT_USERAGENT, "wheelgate-serve");
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &k);
		CURLcode cc = curl_easy_perform(h);
		code = 0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (cc == CURLE_FILESIZE_EXCEEDED || k.too_large) {
			snprintf(what, sizeof(what), "the artifact is larger than the limit of %llu "
				 "bytes (--max-body); not checked",
				 (unsigned long long)cfg->max_body);
			ret = fail(c, r, 413 /* Content Too Large */, cur.url, what);
			goto done;
		}
		if (cc == CURLE_WRITE_ERROR && art.err) {
			snprintf(what, sizeof(what), "cannot hold the artifact (%llu bytes): %s",
				 (unsigned long long)art.seen, strerror(art.err));
			ret = fail(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, cur.url, what);
			goto done;
		}
		if (cc == CURLE_OPERATION_TIMEDOUT) {
			snprintf(what, sizeof(what), "the repository did not answer in time "
				 "(--connect-timeout %ld s, --upstream-timeout %ld s): %s",
				 cfg->connect_timeout, cfg->upstream_timeout,
				 *cerr ? cerr : curl_easy_strerror(cc));
			ret = fail(c, r, MHD_HTTP_GATEWAY_TIMEOUT, cur.url, what);
			goto done;
		}
		if (cc != CURLE_OK) {
			snprintf(what, sizeof(what), "cannot fetch the artifact: %s",
				 *cerr ? cerr : curl_easy_strerror(cc));
			ret = fail(c, r, MHD_HTTP_BAD_GATEWAY, cur.url, what);
			goto done;
		}
		if (code >= 300 && code < 400) {
			char *loc = NULL;
			curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc);
			fetch_url next;
			if (!loc) {
				snprintf(what, sizeof(what), "the repository answered HTTP %ld with no "
					 "Location", code);
				ret = fail(c, r, MHD_HTTP_BAD_GATEWAY, cur.url, what);
				goto done;
			}
			if (hop >= FETCH_MAX_REDIRECTS) {
				snprintf(what, sizeof(what), "more than %d redirects; not followed",
					 FETCH_MAX_REDIRECTS);
				ret = fail(c, r, MHD_HTTP_BAD_GATEWAY, cur.url, what);
				goto done;
			}
			if (url_parse(&next, loc, err, sizeof(err)) < 0 || !url_allowed(cfg, &next)) {
				char *e = serve_esc(loc);
				snprintf(what, sizeof(what), "the repository redirected (HTTP %ld) to "
					 "%.300s, which is not under any --fetch-allow prefix; not "
					 "followed", code, e ? e : "?");
				free(e);
				if (next.url)
					url_clear(&next);
				ret = fail(c, r, MHD_HTTP_BAD_GATEWAY, cur.url, what);
				goto done;
			}
			url_clear(&cur);
			cur = next;
			continue;
		}
		break;
	}
	if (code < 200 || code >= 300) {
		char *e = k.nexcerpt ? serve_esc(k.excerpt) : NULL;
		/* Never echo the token, even if an error page does. */
		if (e && cfg->fetch_token && *cfg->fetch_token && strstr(e, cfg->fetch_token)) {
			free(e);
			e = NULL;
		}
		snprintf(what, sizeof(what), "the repository answered HTTP %ld%s%s%s", code,
			 e ? " (" : "", e ? e : "", e ? ")" : "");
		free(e);
		ret = fail(c, r, MHD_HTTP_BAD_GATEWAY, cur.url, what);
		goto done;
	}

	const unsigned char *bytes = body_bytes(&art, &len);
	if (!bytes) {
		snprintf(what, sizeof(what), "wheelgate serve: cannot hold the artifact: %s\n",
			 strerror(art.err));
		ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, what);
		goto done;
	}
	if (gate_enter(s, c, err, sizeof(err)) < 0) {
		snprintf(what, sizeof(what), "wheelgate serve: busy: %s; try again later\n", err);
		ret = serve_answer_text(c, r, MHD_HTTP_SERVICE_UNAVAILABLE, what);
		goto done;
	}
	wg_scanner *sc = serve_scanner(s);
	if (!sc) {
		gate_leave(s);
		ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					"wheelgate serve: cannot make a scanner (out of memory?)\n");
		goto done;
	}
	serve_verdict v;
	int rc = serve_judge(r->gen, sc, bytes, len, name, spec, prof, false, &v, err, sizeof(err));
	body_free(&art);
	gate_leave(s);
	if (rc < 0) {
		snprintf(what, sizeof(what), "wheelgate serve: %s\n", err);
		ret = serve_answer_text(c, r, rc == -1 ? MHD_HTTP_BAD_REQUEST
						       : MHD_HTTP_INTERNAL_SERVER_ERROR, what);
		goto done;
	}
	r->verdict = v.verdict;
	r->rules = v.rules;
	v.rules = NULL;
	ret = serve_answer(c, r, strcmp(v.verdict, "error") ? MHD_HTTP_OK : 422,
			   "application/json", v.doc, strlen(v.doc));
	serve_verdict_clear(&v);
done:
	if (tok) {
		memset(tok, 0, strlen(tok));
		free(tok);
	}
	curl_slist_free_all(auth);
	curl_slist_free_all(hdrs);
	if (h)
		curl_easy_cleanup(h);
	url_clear(&first);
	url_clear(&cur);
	body_free(&art);
	json_decref(req);
	free(name);
	free(spec);
	free(prof);
	return ret;
}

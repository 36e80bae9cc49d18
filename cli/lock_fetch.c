/*
 * The lock's http(s) wheels, fetched with libcurl: a private module (wheelgate-fetch.so) that
 * cli/lock.c dlopens only when a lock names an http(s) URL, so that `wheelgate` itself never
 * maps libcurl and its TLS stack (docs/startup.md). Only http and https, redirects too, at
 * most FETCH_REDIRECTS of them; the body bounded in size (aborted as soon as it passes) and
 * in time; a progress line on a terminal.
 * Since issue 28 it also serves cli/index.c (simple index pages, docs/index-source.md):
 * wg_fetch_v2 (request headers in; the body in memory or a file; the final URL and the
 * Content-Type out), wg_url_resolve_v1 (libcurl's URL API) and wg_html_walk_v1 (libxml2's
 * HTML parser), so that neither libcurl nor libxml2 is mapped by the CLI until it reads an index.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <libxml/HTMLparser.h>

#include "ca_bundle.h"
#include "lock.h"

#define FETCH_REDIRECTS 5

typedef struct {
	int fd;		/* the body goes here, or (fd < 0) into mem */
	char *mem;
	size_t cap;
	unsigned long long got, max;
	int over, werr, progress;
	const char *url;
} sink;

static size_t on_data(char *data, size_t size, size_t n, void *p)
{
	sink *s = p;
	size_t len = size * n;
	if (s->got + len > s->max) {
		s->over = 1;
		return 0;
	}
	if (s->fd < 0) {
		/* In memory: grown by doubling, never past max (+1 for the closing NUL). */
		if (s->got + len + 1 > s->cap) {
			size_t cap = s->cap ? s->cap : 64 * 1024;
			while (cap < s->got + len + 1)
				cap *= 2;
			if (cap > s->max + 1)
				cap = (size_t)s->max + 1;
			char *m = realloc(s->mem, cap);
			if (!m) {
				s->werr = 1;
				return 0;
			}
			s->mem = m;
			s->cap = cap;
		}
		memcpy(s->mem + s->got, data, len);
		s->got += len;
		return len;
	}
	for (size_t done = 0; done < len;) {
		ssize_t w = write(s->fd, data + done, len - done);
		if (w <= 0) {
			s->werr = 1;
			return 0;
		}
		done += (size_t)w;
	}
	s->got += len;
	return len;
}

static int on_progress(void *p, curl_off_t total, curl_off_t now, curl_off_t ut, curl_off_t un)
{
	(void)ut;
	(void)un;
	sink *s = p;
	/* The URL is the lock's text: only printable ASCII reaches the terminal. */
	char shown[61];
	size_t i = 0;
	for (; s->url[i] && i < sizeof(shown) - 1; i++)
		shown[i] = s->url[i] > 0x20 && s->url[i] < 0x7f ? s->url[i] : '?';
	shown[i] = '\0';
	if (total > 0)
		fprintf(stderr, "\rfetching %s %lld/%lld KiB", shown, (long long)now / 1024,
			(long long)total / 1024);
	else
		fprintf(stderr, "\rfetching %s %lld KiB", shown, (long long)now / 1024);
	return 0;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_ok;

static void curl_init(void)
{
	curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

static int global_init(char *err, size_t errlen)
{
	pthread_once(&curl_once, curl_init);
	if (!curl_ok) {
		snprintf(err, errlen, "libcurl cannot be initialised");
		return -1;
	}
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* One transfer. v2 adds request headers, any status but 2xx refused by name (not only
 * 4xx/5xx), compressed answers (decoded before the bound applies), a clearer timeout, and the
 * final URL and Content-Type out. */
static int perform(int v2, const char *url, const char *const *headers, sink *s, long timeout_s,
		   const char *agent, char **final_url, char **content_type, char *err,
		   size_t errlen)
{
	if (global_init(err, errlen) < 0)
		return -1;
	CURL *h = curl_easy_init();
	struct curl_slist *hl = NULL;
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; headers && headers[i]; i++) {
		struct curl_slist *t = curl_slist_append(hl, headers[i]);
		if (!t) {
			curl_slist_free_all(hl);
			curl_easy_cleanup(h);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		hl = t;
	}
	char cerr[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_URL, url);
	wg_curl_ca_bundle(h);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, (long)FETCH_REDIRECTS);
	curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)s->max);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_USERAGENT, agent);
	if (hl)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	if (v2)
		curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	if (s->progress) {
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, s);
	}
	CURLcode rc = curl_easy_perform(h);
	if (s->progress)
		fprintf(stderr, "\r\033[K");
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	int ret = rc == CURLE_OK ? 0 : -1;
	if (rc == CURLE_OK && v2 && (code < 200 || code > 299)) {
		snprintf(err, errlen, "the server answered HTTP %ld", code);
		ret = -1;
	} else if (rc == CURLE_OK)
		;
	else if (s->over || rc == CURLE_FILESIZE_EXCEEDED)
		snprintf(err, errlen, "more than %llu bytes: not read further", s->max);
	else if (s->werr)
		snprintf(err, errlen, s->fd < 0 ? "out of memory" : "cannot write the temporary file");
	else if (rc == CURLE_HTTP_RETURNED_ERROR)
		snprintf(err, errlen, "the server answered HTTP %ld", code);
	else if (rc == CURLE_TOO_MANY_REDIRECTS)
		snprintf(err, errlen, "more than %d redirects", FETCH_REDIRECTS);
	else if (v2 && rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(err, errlen, "no whole answer within %ld s (%s)", timeout_s,
			 *cerr ? cerr : curl_easy_strerror(rc));
	else
		snprintf(err, errlen, "%s", *cerr ? cerr : curl_easy_strerror(rc));
	if (ret == 0 && (final_url || content_type)) {
		char *eff = NULL, *ct = NULL;
		curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff);
		curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
		if (final_url && !(*final_url = dup_or_null(eff ? eff : url)))
			ret = -1;
		if (content_type && ct && !(*content_type = strdup(ct)))
			ret = -1;
		if (ret < 0)
			snprintf(err, errlen, "out of memory");
	}
	curl_slist_free_all(hl);
	curl_easy_cleanup(h);
	return ret;
}

int wg_fetch_v1(const char *url, int fd, unsigned long long max, long timeout_s, int progress,
		char *err, size_t errlen);

__attribute__((visibility("default"))) int
wg_fetch_v1(const char *url, int fd, unsigned long long max, long timeout_s, int progress,
	    char *err, size_t errlen)
{
	sink s = {fd, NULL, 0, 0, max, 0, 0, progress, url};
	return perform(0, url, NULL, &s, timeout_s, "wheelgate (check --lock)", NULL, NULL, err,
		       errlen);
}

int wg_fetch_v2(const char *url, const char *const *headers, int fd, char **body, size_t *body_len,
		unsigned long long max, long timeout_s, int progress, char **final_url,
		char **content_type, char *err, size_t errlen);

/* url (http or https, at most FETCH_REDIRECTS redirects), sent with headers (a NULL-terminated
 * list of "Name: value", or NULL): the body into fd when fd >= 0, else into *body (malloc'ed,
 * NUL-terminated, its length in *body_len; free() it); at most max bytes (decoded) within
 * timeout_s seconds; any final status but 2xx is an error naming it. *final_url (the URL after
 * redirects) and *content_type (the answer's Content-Type, NULL without one) are malloc'ed when
 * those pointers are not NULL. 0, or -1 with why in err (nothing to free then). */
__attribute__((visibility("default"))) int
wg_fetch_v2(const char *url, const char *const *headers, int fd, char **body, size_t *body_len,
	    unsigned long long max, long timeout_s, int progress, char **final_url,
	    char **content_type, char *err, size_t errlen)
{
	if (final_url)
		*final_url = NULL;
	if (content_type)
		*content_type = NULL;
	if (fd < 0 && (!body || !body_len || max >= SIZE_MAX)) {
		snprintf(err, errlen, "wg_fetch_v2: no file and no body to write to");
		return -1;
	}
	sink s = {fd, NULL, 0, 0, max, 0, 0, progress, url};
	int rc = perform(1, url, headers, &s, timeout_s, "wheelgate (index)", final_url,
			 content_type, err, errlen);
	if (rc == 0 && fd < 0 && !s.mem && !(s.mem = malloc(1))) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	if (rc < 0) {
		free(s.mem);
		if (final_url) {
			free(*final_url);
			*final_url = NULL;
		}
		if (content_type) {
			free(*content_type);
			*content_type = NULL;
		}
		return -1;
	}
	if (fd < 0) {
		s.mem[s.got] = '\0';
		*body = s.mem;
		*body_len = (size_t)s.got;
	}
	return 0;
}

int wg_url_resolve_v1(const char *base, const char *ref, char **abs, char **path, char **fragment,
		      char *err, size_t errlen);

/* ref (absolute or relative) resolved against base (absolute) by libcurl's URL API (RFC 3986):
 * *abs is the absolute http(s) URL without its fragment, *path its path as written (still
 * percent-encoded), *fragment the fragment (without '#') or NULL; each malloc'ed where the
 * pointer is not NULL. 0, or -1 with why in err (another scheme, a malformed URL). */
__attribute__((visibility("default"))) int
wg_url_resolve_v1(const char *base, const char *ref, char **abs, char **path, char **fragment,
		  char *err, size_t errlen)
{
	char *parts[3] = {NULL, NULL, NULL};
	char *scheme = NULL;
	int ret = -1;
	CURLUcode uc;
	CURLU *u = curl_url();
	if (!u) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((uc = curl_url_set(u, CURLUPART_URL, base, 0)) != CURLUE_OK) {
		snprintf(err, errlen, "the base URL: %s", curl_url_strerror(uc));
		goto done;
	}
	/* With a URL already in the handle, a relative one is resolved against it; a space (which
	 * pages do write in hrefs) is taken and kept as %20, as browsers do. */
	if ((uc = curl_url_set(u, CURLUPART_URL, ref, CURLU_ALLOW_SPACE | CURLU_URLENCODE)) !=
	    CURLUE_OK) {
		snprintf(err, errlen, "%s", curl_url_strerror(uc));
		goto done;
	}
	if ((uc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0)) != CURLUE_OK ||
	    (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0)) {
		snprintf(err, errlen, "not an http or https URL");
		goto done;
	}
	uc = curl_url_get(u, CURLUPART_FRAGMENT, &parts[2], 0);
	if (uc != CURLUE_OK && uc != CURLUE_NO_FRAGMENT) {
		snprintf(err, errlen, "%s", curl_url_strerror(uc));
		goto done;
	}
	if ((uc = curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0)) != CURLUE_OK ||
	    (uc = curl_url_get(u, CURLUPART_URL, &parts[0], 0)) != CURLUE_OK ||
	    (uc = curl_url_get(u, CURLUPART_PATH, &parts[1], 0)) != CURLUE_OK) {
		snprintf(err, errlen, "%s", curl_url_strerror(uc));
		goto done;
	}
	char **outs[3] = {abs, path, fragment};
	for (int i = 0; i < 3; i++)
		if (outs[i])
			*outs[i] = NULL;
	for (int i = 0; i < 3; i++) {
		if (!outs[i] || !parts[i])
			continue;
		if (!(*outs[i] = strdup(parts[i]))) {
			for (int j = 0; j < i; j++)
				if (outs[j]) {
					free(*outs[j]);
					*outs[j] = NULL;
				}
			snprintf(err, errlen, "out of memory");
			goto done;
		}
	}
	ret = 0;
done:
	for (int i = 0; i < 3; i++)
		curl_free(parts[i]);
	curl_free(scheme);
	curl_url_cleanup(u);
	return ret;
}

typedef int (*wg_html_element_cb)(void *ctx, const char *tag, const char *const *attrs);
int wg_html_walk_v1(const char *html, size_t len, const char *const *tags, wg_html_element_cb cb,
		    void *ctx, char *err, size_t errlen);

static void xml_quiet(void *ctx, const char *msg, ...)
{
	(void)ctx;
	(void)msg;
}

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void xml_init(void)
{
	xmlInitParser();
	xmlSetGenericErrorFunc(NULL, xml_quiet);
}

#define HTML_ATTRS_MAX 64	  /* attributes handed over per element; the rest are not read */
#define HTML_CHUNK (1u << 20) /* bytes given to the push parser at a time */

typedef struct {
	htmlParserCtxtPtr ctxt;
	const char *const *tags;
	wg_html_element_cb cb;
	void *ctx;
	int stopped;
} html_walk;

static void on_start(void *p, const xmlChar *name, const xmlChar **atts)
{
	html_walk *w = p;
	if (w->stopped || !name)
		return;
	int wanted = 0;
	for (size_t i = 0; w->tags && w->tags[i] && !wanted; i++)
		wanted = strcasecmp((const char *)name, w->tags[i]) == 0;
	if (!wanted)
		return;
	const char *av[2 * HTML_ATTRS_MAX + 1];
	size_t k = 0;
	for (size_t i = 0; atts && atts[i] && k < HTML_ATTRS_MAX; i += 2, k++) {
		av[2 * k] = (const char *)atts[i];
		av[2 * k + 1] = atts[i + 1] ? (const char *)atts[i + 1] : "";
	}
	av[2 * k] = NULL;
	if (w->cb(w->ctx, (const char *)name, av)) {
		w->stopped = 1;
		xmlStopParser(w->ctxt);
	}
}

/* html (len bytes, read as UTF-8) parsed by libxml2's HTML parser as a stream of SAX events
 * (no tree is built, so memory stays that of the parser's state whatever the page's size),
 * repaired as browsers do (entities decoded, unclosed elements closed); cb(ctx, tag, attrs) for
 * each start tag whose (lower-case) name is in tags (NULL-terminated), in document order: attrs
 * alternates names (lower-case) and values (UTF-8; "" for an attribute without a value),
 * NULL-terminated, at most HTML_ATTRS_MAX pairs. cb returns nonzero to stop the parse. 0, or -1
 * with why in err (the parser could not be made). */
__attribute__((visibility("default"))) int
wg_html_walk_v1(const char *html, size_t len, const char *const *tags, wg_html_element_cb cb,
		void *ctx, char *err, size_t errlen)
{
	pthread_once(&xml_once, xml_init);
	htmlSAXHandler sax;
	memset(&sax, 0, sizeof(sax));
	sax.startElement = on_start;
	html_walk w = {NULL, tags, cb, ctx, 0};
	w.ctxt = htmlCreatePushParserCtxt(&sax, &w, NULL, 0, NULL, XML_CHAR_ENCODING_UTF8);
	if (!w.ctxt) {
		snprintf(err, errlen, "libxml2 cannot make an HTML parser");
		return -1;
	}
	htmlCtxtUseOptions(w.ctxt, HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET |
					   HTML_PARSE_NOBLANKS);
	for (size_t off = 0; !w.stopped;) {
		size_t n = len - off > HTML_CHUNK ? HTML_CHUNK : len - off;
		int last = off + n == len;
		htmlParseChunk(w.ctxt, html + off, (int)n, last);
		off += n;
		if (last)
			break;
	}
	htmlFreeParserCtxt(w.ctxt);
	return 0;
}

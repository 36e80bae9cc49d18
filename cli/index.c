/*
 * A project's files on a simple index (PEP 503 HTML, PEP 691 JSON), for sources given as an
 * index URL. PEP 592 yanked, PEP 629 version, PEP 700 size; the URL built from the root and the
 * normalized name, the page fetched through the fetch module (wg_fetch_v2) and read by its
 * Content-Type. URLs are resolved and HTML
 * parsed by the module too (libcurl's URL API, libxml2), so the CLI maps neither until it reads
 * an index (docs/startup.md); the JSON is read here with jansson, which the CLI has already.
 * What is read and refused: docs/index-source.md.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "helper.h"
#include "index.h"

#define URL_MAX 16384	  /* bytes of a file's absolute URL */
#define NAME_MAX_LEN 255  /* bytes of a file's name (a file system's NAME_MAX) */
#define RP_MAX 1024	  /* bytes of a requires-python */
#define PROJECT_MAX 256	  /* bytes of a project name */
#define TIMEOUT_DEFAULT 60 /* seconds, for timeout_s <= 0 */

static const char ACCEPT[] = "Accept: application/vnd.pypi.simple.v1+json, "
			     "application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01";

int index_normalize(char *out, size_t outlen, const char *name)
{
	size_t len = name ? strlen(name) : 0, o = 0;
	if (len == 0 || len > PROJECT_MAX || !isalnum((unsigned char)name[0]) ||
	    !isalnum((unsigned char)name[len - 1]))
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == '-' || c == '_' || c == '.') {
			if (o && out[o - 1] == '-')
				continue;
			c = '-';
		} else if (!isascii(c) || !isalnum(c)) {
			return -1;
		}
		if (o + 1 >= outlen)
			return -1;
		out[o++] = (char)tolower(c);
	}
	out[o] = '\0';
	return 0;
}

/* A URL for a message: its user:password@ left out, only printable ASCII, at most 300 bytes. */
static void shown_url(char *out, size_t outlen, const char *url)
{
	const char *p = url, *sep = strstr(url, "://");
	size_t o = 0;
	if (sep) {
		const char *host = sep + 3, *end = host + strcspn(host, "/?#"), *at = NULL;
		for (const char *q = host; q < end; q++)
			if (*q == '@')
				at = q;
		for (; p < host && o + 1 < outlen; p++)
			out[o++] = *p;
		if (at)
			p = at + 1;
	}
	for (; *p && o + 1 < outlen && o < 300; p++)
		out[o++] = (unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f ? *p : '?';
	if (*p && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* --- The page reader. */

typedef struct {
	index_file *v;
	size_t n, cap;
	int over;
} flist;

static int hexval(int c)
{
	return c >= '0' && c <= '9'	? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* A valid UTF-8 string (jansson's own check). */
static int utf8_ok(const char *s, size_t len)
{
	json_t *j = json_stringn(s, len);
	json_decref(j);
	return j != NULL;
}

/* A file name that is safe as a path component: 1..NAME_MAX_LEN bytes of UTF-8, not "." or
 * "..", without '/', '\\' or control characters. */
static int name_ok(const char *s, size_t len)
{
	if (len == 0 || len > NAME_MAX_LEN || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f || c == '/' || c == '\\')
			return 0;
	}
	return utf8_ok(s, len);
}

/* The last segment of a URL path, percent-decoded; NULL when it is not a safe name. */
static char *name_from_path(const char *path)
{
	const char *seg = strrchr(path, '/');
	seg = seg ? seg + 1 : path;
	size_t len = strlen(seg), o = 0;
	if (len > 3 * NAME_MAX_LEN)
		return NULL;
	char *out = malloc(len + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (seg[i] == '%') {
			int h = i + 2 < len ? hexval(seg[i + 1]) : -1;
			int l = h >= 0 ? hexval(seg[i + 2]) : -1;
			if (l < 0) {
				free(out);
				return NULL;
			}
			char c = (char)(h * 16 + l);
			if (c == '\0') {
				free(out);
				return NULL;
			}
			out[o++] = c;
			i += 2;
		} else {
			out[o++] = seg[i];
		}
	}
	out[o] = '\0';
	if (!name_ok(out, o)) {
		free(out);
		return NULL;
	}
	return out;
}

/* 64 hex digits, lower-cased into a new string; NULL otherwise. */
static char *sha256_of(const char *hex)
{
	if (!hex || strlen(hex) != 64)
		return NULL;
	char *s = malloc(65);
	if (!s)
		return NULL;
	for (int i = 0; i < 64; i++) {
		if (hexval(hex[i]) < 0) {
			free(s);
			return NULL;
		}
		s[i] = (char)tolower((unsigned char)hex[i]);
	}
	s[64] = '\0';
	return s;
}

/* The sha256 of a PEP 503 fragment "sha256=HEX"; other fragments give NULL. */
static char *sha256_of_fragment(const char *frag)
{
	if (!frag || strncasecmp(frag, "sha256=", 7) != 0)
		return NULL;
	return sha256_of(frag + 7);
}

static void file_free(index_file *f)
{
	free(f->filename);
	free(f->url);
	free(f->sha256);
	free(f->requires_python);
}

/* One listed file: href resolved against base. A file that cannot be listed safely is left
 * out (0); -1 only for what stops the page (too many files, no memory) with why in err.
 * name: the JSON "filename" (NULL: from the URL's path); sha: the JSON sha256 (NULL: from
 * the fragment). */
static int add_file(flist *l, const index_backend *be, const char *base, const char *href,
		    const char *name, const char *sha, long long size, int yanked, const char *rp,
		    char *err, size_t errlen)
{
	char rerr[256];
	index_file f = {NULL, NULL, NULL, size, yanked ? 1 : 0, NULL};
	char *path = NULL, *frag = NULL;
	if (!href || strlen(href) > URL_MAX)
		return 0;
	if (be->resolve(base, href, &f.url, &path, &frag, rerr, sizeof(rerr)) < 0)
		return 0;
	int keep = strlen(f.url) <= URL_MAX;
	if (keep && name)
		keep = name_ok(name, strlen(name)) && (f.filename = strdup(name));
	else if (keep)
		keep = (f.filename = name_from_path(path)) != NULL;
	if (keep) {
		f.sha256 = sha ? sha256_of(sha) : NULL;
		if (!f.sha256)
			f.sha256 = sha256_of_fragment(frag);
		if (rp && *rp && strlen(rp) <= RP_MAX && utf8_ok(rp, strlen(rp)))
			f.requires_python = strdup(rp);
	}
	free(path);
	free(frag);
	if (!keep) {
		file_free(&f);
		return 0;
	}
	if (l->n >= INDEX_FILES_MAX) {
		file_free(&f);
		snprintf(err, errlen, "more than %d files: not read further", INDEX_FILES_MAX);
		return -1;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		index_file *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			file_free(&f);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = f;
	return 0;
}

/* "1.x" of PEP 629 / PEP 691: only major version 1 is read. */
static int version_ok(const char *v, const char *what, char *err, size_t errlen)
{
	char *end;
	long major = strtol(v, &end, 10);
	if (end == v || (*end && *end != '.') || major != 1) {
		char shown[40];
		shown_url(shown, sizeof(shown), v);
		snprintf(err, errlen, "%s \"%s\": only version 1.x is read", what, shown);
		return -1;
	}
	return 0;
}

/* jansson builds the whole document (about 230 bytes an object, 50 a value): a page is read
 * only when it holds at most JSON_OBJECTS_MAX objects and JSON_TOKENS_MAX values and keys,
 * counted by their separators outside strings (every value and key but the first follows one
 * of ,:[{), so that a 64 MiB page of "{}," cannot take gigabytes. */
#define JSON_OBJECTS_MAX (5 * INDEX_FILES_MAX)
#define JSON_TOKENS_MAX (20 * INDEX_FILES_MAX)

static int json_size_ok(const char *body, size_t len, char *err, size_t errlen)
{
	size_t objects = 0, tokens = 0;
	int in_string = 0;
	for (size_t i = 0; i < len; i++) {
		char c = body[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = 0;
			continue;
		}
		if (c == '"')
			in_string = 1;
		else if (c == '{')
			objects++, tokens++;
		else if (c == ',' || c == ':' || c == '[')
			tokens++;
		if (objects > JSON_OBJECTS_MAX || tokens > JSON_TOKENS_MAX) {
			snprintf(err, errlen, "a JSON page of more than %d objects or %d values: not "
					      "read (at most %d files)", JSON_OBJECTS_MAX,
				 JSON_TOKENS_MAX, INDEX_FILES_MAX);
			return 0;
		}
	}
	return 1;
}

static int read_json(flist *l, const char *body, size_t len, const char *page_url,
		     const char *project, const index_backend *be, char *err, size_t errlen)
{
	json_error_t je;
	if (!json_size_ok(body, len, err, errlen))
		return -1;
	json_t *doc = json_loadb(body, len, 0, &je);
	int ret = -1;
	if (!doc) {
		snprintf(err, errlen, "not JSON (line %d, column %d: %s)", je.line, je.column,
			 je.text);
		return -1;
	}
	json_t *files = json_object_get(doc, "files");
	json_t *meta = json_object_get(doc, "meta");
	json_t *api = json_object_get(meta, "api-version");
	json_t *name = json_object_get(doc, "name");
	if (!json_is_object(doc) || !json_is_array(files)) {
		snprintf(err, errlen, "a JSON page without a \"files\" list");
		goto done;
	}
	if (api && (!json_is_string(api) ||
		    version_ok(json_string_value(api), "api-version", err, errlen) < 0)) {
		if (!json_is_string(api))
			snprintf(err, errlen, "meta.api-version is not a string");
		goto done;
	}
	char want[PROJECT_MAX + 1], got[PROJECT_MAX + 1];
	if (project && json_is_string(name) && index_normalize(want, sizeof(want), project) == 0 &&
	    (index_normalize(got, sizeof(got), json_string_value(name)) < 0 || strcmp(want, got))) {
		char shown[80];
		shown_url(shown, sizeof(shown), json_string_value(name));
		snprintf(err, errlen, "the page is project \"%s\"'s, not %s's", shown, want);
		goto done;
	}
	size_t i;
	json_t *f;
	json_array_foreach(files, i, f)
	{
		json_t *fn = json_object_get(f, "filename"), *url = json_object_get(f, "url");
		json_t *hashes = json_object_get(f, "hashes"), *size = json_object_get(f, "size");
		json_t *y = json_object_get(f, "yanked"), *rp = json_object_get(f, "requires-python");
		json_t *sha = json_object_get(hashes, "sha256");
		if (!json_is_string(fn) || !json_is_string(url))
			continue; /* both are required (PEP 691) */
		long long sz = json_is_integer(size) && json_integer_value(size) >= 0
				       ? (long long)json_integer_value(size)
				       : -1;
		int yanked = json_is_true(y) || json_is_string(y);
		if (add_file(l, be, page_url, json_string_value(url), json_string_value(fn),
			     json_string_value(sha), sz, yanked, json_string_value(rp), err,
			     errlen) < 0)
			goto done;
	}
	ret = 0;
done:
	json_decref(doc);
	return ret;
}

typedef struct {
	char *href, *rp;
	int yanked;
} anchor;

typedef struct {
	anchor *v;
	size_t n, cap;
	char *base; /* the first <base href>, as written */
	int failed;
	char *err;
	size_t errlen;
} html_ctx;

static const char *attr(const char *const *attrs, const char *name, int *present)
{
	for (size_t i = 0; attrs[i]; i += 2)
		if (!strcasecmp(attrs[i], name)) {
			if (present)
				*present = 1;
			return attrs[i + 1];
		}
	return NULL;
}

static int on_element(void *p, const char *tag, const char *const *attrs)
{
	html_ctx *c = p;
	if (!strcasecmp(tag, "base")) {
		const char *h = attr(attrs, "href", NULL);
		if (!c->base && h && (c->base = strdup(h)) == NULL)
			goto oom;
		return 0;
	}
	if (!strcasecmp(tag, "meta")) {
		const char *nm = attr(attrs, "name", NULL), *v = attr(attrs, "content", NULL);
		if (nm && v && !strcasecmp(nm, "pypi:repository-version") &&
		    version_ok(v, "pypi:repository-version", c->err, c->errlen) < 0) {
			c->failed = 1;
			return 1;
		}
		return 0;
	}
	/* <a>: data-dist-info-metadata / data-core-metadata (PEP 658/714) are not kept. */
	int yanked = 0;
	const char *href = attr(attrs, "href", NULL);
	const char *rp = attr(attrs, "data-requires-python", NULL);
	attr(attrs, "data-yanked", &yanked);
	if (!href)
		return 0;
	if (c->n >= INDEX_FILES_MAX) {
		snprintf(c->err, c->errlen, "more than %d files: not read further", INDEX_FILES_MAX);
		c->failed = 1;
		return 1;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		anchor *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			goto oom;
		c->v = v;
		c->cap = cap;
	}
	anchor a = {strdup(href), rp ? strdup(rp) : NULL, yanked};
	if (!a.href || (rp && !a.rp)) {
		free(a.href);
		free(a.rp);
		goto oom;
	}
	c->v[c->n++] = a;
	return 0;
oom:
	snprintf(c->err, c->errlen, "out of memory");
	c->failed = 1;
	return 1;
}

static int read_html(flist *l, const char *body, size_t len, const char *page_url,
		     const index_backend *be, char *err, size_t errlen)
{
	static const char *const tags[] = {"a", "base", "meta", NULL};
	html_ctx c = {NULL, 0, 0, NULL, 0, err, errlen};
	char *base = NULL;
	int ret = -1;
	if (be->html_walk(body, len, tags, on_element, &c, err, errlen) < 0 || c.failed)
		goto done;
	/* The first <base href> applies to the whole page, resolved against the page's URL. */
	if (c.base && be->resolve(page_url, c.base, &base, NULL, NULL, err, errlen) < 0) {
		char what[256];
		snprintf(what, sizeof(what), "%s", err);
		snprintf(err, errlen, "<base href>: %s", what);
		goto done;
	}
	for (size_t i = 0; i < c.n; i++)
		if (add_file(l, be, base ? base : page_url, c.v[i].href, NULL, NULL, -1,
			     c.v[i].yanked, c.v[i].rp, err, errlen) < 0)
			goto done;
	ret = 0;
done:
	for (size_t i = 0; i < c.n; i++) {
		free(c.v[i].href);
		free(c.v[i].rp);
	}
	free(c.v);
	free(c.base);
	free(base);
	return ret;
}

int index_parse_page(index_file **out, size_t *n, const char *body, size_t len,
		     const char *content_type, const char *page_url, const char *project,
		     const index_backend *be, char *err, size_t errlen)
{
	flist l = {NULL, 0, 0, 0};
	char type[128];
	int ret;
	*out = NULL;
	*n = 0;
	if (!content_type) {
		snprintf(err, errlen, "the answer has no Content-Type: neither a simple index's "
				      "JSON nor HTML");
		return -1;
	}
	/* The media type: before any ';', without spaces. */
	size_t t = 0;
	for (const char *p = content_type; *p && *p != ';' && t + 1 < sizeof(type); p++)
		if (*p != ' ' && *p != '\t')
			type[t++] = (char)tolower((unsigned char)*p);
	type[t] = '\0';
	if (!strcmp(type, "application/vnd.pypi.simple.v1+json")) {
		ret = read_json(&l, body, len, page_url, project, be, err, errlen);
	} else if (!strcmp(type, "application/vnd.pypi.simple.v1+html") ||
		   !strcmp(type, "text/html")) {
		ret = read_html(&l, body, len, page_url, be, err, errlen);
	} else {
		char shown[80];
		shown_url(shown, sizeof(shown), content_type);
		snprintf(err, errlen, "the answer is %s: neither a simple index's JSON nor HTML",
			 shown);
		return -1;
	}
	if (ret < 0) {
		index_files_free(l.v, l.n);
		return -1;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

void index_files_free(index_file *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++)
		file_free(&f[i]);
	free(f);
}

/* --- Fetching, through the fetch module. */

typedef int (*fetch_v2_fn)(const char *url, const char *const *headers, int fd, char **body,
			   size_t *body_len, unsigned long long max, long timeout_s, int progress,
			   char **final_url, char **content_type, char *err, size_t errlen);

static struct {
	fetch_v2_fn fetch;
	index_backend be;
	char why[2 * PATH_MAX + 300];
} mod;
static pthread_once_t mod_once = PTHREAD_ONCE_INIT;

/* The module, loaded once (it stays loaded: the process is short-lived). */
static void mod_load(void)
{
	char path[PATH_MAX], tried[2 * PATH_MAX + 64];
	if (helper_path(HELPER_FETCH, path, sizeof(path), tried, sizeof(tried)) < 0) {
		snprintf(mod.why, sizeof(mod.why),
			 "reading an index needs wheelgate's module %s, which is missing: looked "
			 "for %s", HELPER_FETCH, tried);
		return;
	}
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(mod.why, sizeof(mod.why), "cannot load %s: %s", path, dlerror());
		return;
	}
	void *f = dlsym(h, "wg_fetch_v2"), *r = dlsym(h, "wg_url_resolve_v1"),
	     *w = dlsym(h, "wg_html_walk_v1");
	if (!f || !r || !w) {
		snprintf(mod.why, sizeof(mod.why),
			 "%s is not this wheelgate's module (no wg_fetch_v2, wg_url_resolve_v1 "
			 "or wg_html_walk_v1)", path);
		return;
	}
	/* Object pointers to function pointers: POSIX dlsym's documented use. */
	memcpy(&mod.fetch, &f, sizeof(f));
	memcpy(&mod.be.resolve, &r, sizeof(r));
	memcpy(&mod.be.html_walk, &w, sizeof(w));
}

/* The project page's URL: index_url itself when it already ends in /simple/NAME/ with NAME
 * the project (or project is NULL), else index_url/NAME/. */
static char *page_url_of(const char *index_url, const char *project, char *err, size_t errlen)
{
	char norm[PROJECT_MAX + 1] = "", last[PROJECT_MAX + 1];
	size_t len = strlen(index_url);
	if (strncasecmp(index_url, "http://", 7) && strncasecmp(index_url, "https://", 8)) {
		snprintf(err, errlen, "an index is an http:// or https:// URL");
		return NULL;
	}
	if (strpbrk(index_url, "?#") || len > URL_MAX) {
		snprintf(err, errlen, "an index URL has no query or fragment and at most %d bytes",
			 URL_MAX);
		return NULL;
	}
	if (project && index_normalize(norm, sizeof(norm), project) < 0) {
		char shown[80];
		shown_url(shown, sizeof(shown), project);
		snprintf(err, errlen, "\"%s\" is not a project name", shown);
		return NULL;
	}
	while (len && index_url[len - 1] == '/')
		len--;
	/* The last path segment and the one before it. */
	size_t s = len;
	while (s && index_url[s - 1] != '/')
		s--;
	size_t p = s ? s - 1 : 0;
	while (p && index_url[p - 1] != '/')
		p--;
	int is_page = 0;
	if (s > p && s - 1 - p == 6 && !strncasecmp(index_url + p, "simple", 6) &&
	    len - s <= PROJECT_MAX) {
		memcpy(last, index_url + s, len - s);
		last[len - s] = '\0';
		char lnorm[PROJECT_MAX + 1];
		is_page = index_normalize(lnorm, sizeof(lnorm), last) == 0 &&
			  (!project || !strcmp(lnorm, norm));
	}
	if (!project && !is_page) {
		snprintf(err, errlen, "no project named, and the URL is not a project page "
				      "(.../simple/NAME/)");
		return NULL;
	}
	char *url = malloc(len + strlen(norm) + 4);
	if (!url) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (is_page)
		sprintf(url, "%.*s/", (int)len, index_url);
	else
		sprintf(url, "%.*s/%s/", (int)len, index_url, norm);
	return url;
}

int index_project_files(index_file **out, size_t *n, const char *index_url, const char *project,
			long timeout_s, char *err, size_t errlen)
{
	char why[1024], shown[400];
	char *url = NULL, *body = NULL, *final = NULL, *ctype = NULL;
	size_t len = 0;
	int ret = -1;
	*out = NULL;
	*n = 0;
	shown_url(shown, sizeof(shown), index_url ? index_url : "");
	if (!index_url || !(url = page_url_of(index_url, project, why, sizeof(why)))) {
		if (!index_url)
			snprintf(why, sizeof(why), "no index URL");
		snprintf(err, errlen, "%s: %s", shown, why);
		return -1;
	}
	pthread_once(&mod_once, mod_load);
	if (!mod.fetch) {
		snprintf(err, errlen, "%s: %s", shown, mod.why);
		goto done;
	}
	shown_url(shown, sizeof(shown), url);
	const char *headers[] = {ACCEPT, NULL};
	if (mod.fetch(url, headers, -1, &body, &len, INDEX_BODY_MAX,
		      timeout_s > 0 ? timeout_s : TIMEOUT_DEFAULT, 0, &final, &ctype, why,
		      sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", shown, why);
		goto done;
	}
	shown_url(shown, sizeof(shown), final);
	if (index_parse_page(out, n, body, len, ctype, final, project, &mod.be, why,
			     sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", shown, why);
		goto done;
	}
	ret = 0;
done:
	free(url);
	free(body);
	free(final);
	free(ctype);
	return ret;
}

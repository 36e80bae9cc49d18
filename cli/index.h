/*
 * A project's files on a PEP 503 / PEP 691 simple index (issue 28): the page fetched through
 * the fetch module (wheelgate-fetch.so: libcurl, libcurl's URL API, libxml2's HTML parser),
 * read as PEP 691 JSON or PEP 503 HTML by its Content-Type. What is read and what is refused:
 * docs/index-source.md.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_INDEX_H
#define WG_CLI_INDEX_H

#include <stddef.h>

typedef struct index_file {
	char *filename;	       /* the file's name, from the URL path (percent-decoded) */
	char *url;	       /* absolute URL, without the #fragment */
	char *sha256;	       /* 64 lower-case hex digits (from PEP 691 "hashes" or the PEP 503 #sha256= fragment), or NULL */
	long long size;	       /* PEP 700 "size", or -1 */
	int yanked;	       /* PEP 592 data-yanked / PEP 691 "yanked" */
	char *requires_python; /* data-requires-python / "requires-python" (HTML-unescaped), or NULL */
} index_file;

/* Bounds on what a page may hold (docs/index-source.md). */
#define INDEX_BODY_MAX (64ULL << 20) /* bytes of a page (after Content-Encoding) */
#define INDEX_FILES_MAX 200000	     /* files listed on one page */

/* The files of `project` (PEP 503-normalized by this function) on the simple index whose root is
 * index_url (e.g. http://127.0.0.1:8080/simple/; a project page URL ending in /simple/NAME/ is
 * accepted too), asking for PEP 691 JSON first (Accept: application/vnd.pypi.simple.v1+json,
 * then text/html) and reading whichever the server answers (by Content-Type). Relative hrefs are
 * resolved against the final URL after redirects. 0, or -1 with why in err (naming the URL).
 * project may be NULL when index_url is the project page itself. In JSON, filename is the file's
 * "filename" (checked as the URL's name is). A file whose name is empty, ".", "..", holds '/',
 * '\\' or a control character, or is not UTF-8, or whose URL is not http(s), is left out. */
int index_project_files(index_file **out, size_t *n, const char *index_url, const char *project,
			long timeout_s, char *err, size_t errlen);
void index_files_free(index_file *f, size_t n);

/* --- Below: the page reader alone, for tests/fuzz/fuzz_index.c and tests/tools/index_list.c. */

/* The fetch module's functions the reader uses (cli/lock_fetch.c). */
typedef int (*index_resolve_fn)(const char *base, const char *ref, char **abs, char **path,
				char **fragment, char *err, size_t errlen);
typedef int (*index_html_cb)(void *ctx, const char *tag, const char *const *attrs);
typedef int (*index_html_walk_fn)(const char *html, size_t len, const char *const *tags,
				  index_html_cb cb, void *ctx, char *err, size_t errlen);
typedef struct index_backend {
	index_resolve_fn resolve;     /* wg_url_resolve_v1 */
	index_html_walk_fn html_walk; /* wg_html_walk_v1 */
} index_backend;

/* A fetched page (body, len bytes) answered with content_type from page_url (the URL after
 * redirects) read into *out and *n; project (normalized or not, or NULL) is checked against a
 * JSON page's "name". 0, or -1 with why in err (not naming the URL). */
int index_parse_page(index_file **out, size_t *n, const char *body, size_t len,
		     const char *content_type, const char *page_url, const char *project,
		     const index_backend *be, char *err, size_t errlen);

/* name PEP 503-normalized into out (lower case, runs of -_. as one '-'); -1 when name is not a
 * valid project name (PEP 508: letters, digits, -_. inside) or does not fit. */
int index_normalize(char *out, size_t outlen, const char *name);

#endif

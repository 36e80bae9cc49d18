/*
 * A simple index page (cli/index.c's index_parse_page, issue 28): byte 0 picks the answer's
 * Content-Type (bits 0-1: PEP 691 JSON, text/html, the PEP 691 HTML type with a charset, or
 * text/plain, which must be refused) and whether a project is named (bit 2); the rest is the
 * body, read as the page of http://127.0.0.1:9/simple/proj/. The fetch module's URL resolver
 * (libcurl's URL API) and HTML walker (libxml2) are linked in from cli/lock_fetch.c; nothing is
 * fetched. Besides the sanitizers it aborts when a refusal leaves no message or when a listed
 * file breaks what index.h promises: a name safe as a path component, an absolute http(s) URL
 * without fragment, a sha256 of 64 lower-case hex digits or none, the bound on files.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"

int wg_url_resolve_v1(const char *base, const char *ref, char **abs, char **path, char **fragment,
		      char *err, size_t errlen);
int wg_html_walk_v1(const char *html, size_t len, const char *const *tags, index_html_cb cb,
		    void *ctx, char *err, size_t errlen);

static void check_file(const index_file *f)
{
	size_t len = f->filename ? strlen(f->filename) : 0;
	if (!len || len > 255 || !strcmp(f->filename, ".") || !strcmp(f->filename, ".."))
		abort();
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)f->filename[i];
		if (c < 0x20 || c == 0x7f || c == '/' || c == '\\')
			abort();
	}
	if (!f->url || (strncmp(f->url, "http://", 7) && strncmp(f->url, "https://", 8)) ||
	    strchr(f->url, '#'))
		abort();
	if (f->sha256) {
		if (strlen(f->sha256) != 64)
			abort();
		for (int i = 0; i < 64; i++)
			if (!strchr("0123456789abcdef", f->sha256[i]))
				abort();
	}
	if (f->size < -1 || (f->yanked != 0 && f->yanked != 1))
		abort();
	if (f->requires_python && !*f->requires_python)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const types[] = {
		"application/vnd.pypi.simple.v1+json", "text/html",
		"application/vnd.pypi.simple.v1+html; charset=utf-8", "text/plain"};
	if (size < 1)
		return 0;
	const char *ct = types[data[0] & 3];
	index_backend be = {wg_url_resolve_v1, wg_html_walk_v1};
	index_file *f = NULL;
	size_t n = 0;
	char err[1024] = "";
	int rc = index_parse_page(&f, &n, (const char *)data + 1, size - 1, ct,
				  "http://127.0.0.1:9/simple/proj/", data[0] & 4 ? "Proj" : NULL,
				  &be, err, sizeof(err));
	if (rc < 0) {
		if (!*err || f || n)
			abort();
		return 0;
	}
	if ((data[0] & 3) == 3 || n > INDEX_FILES_MAX || (n && !f))
		abort();
	for (size_t i = 0; i < n; i++)
		check_file(&f[i]);
	index_files_free(f, n);
	return 0;
}

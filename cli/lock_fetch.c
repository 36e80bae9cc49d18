/*
 * The lock's http(s) wheels, fetched with libcurl: a private module (wheelgate-fetch.so) that
 * cli/lock.c dlopens only when a lock names an http(s) URL, so that `wheelgate` itself never
 * maps libcurl and its TLS stack (docs/startup.md). Only http and https, redirects too, at
 * most FETCH_REDIRECTS of them; the body bounded in size (aborted as soon as it passes) and
 * in time; a progress line on a terminal.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "lock.h"

#define FETCH_REDIRECTS 5

typedef struct {
	int fd;
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

int wg_fetch_v1(const char *url, int fd, unsigned long long max, long timeout_s, int progress,
		char *err, size_t errlen);

__attribute__((visibility("default"))) int
wg_fetch_v1(const char *url, int fd, unsigned long long max, long timeout_s, int progress,
	    char *err, size_t errlen)
{
	static int inited;
	if (!inited) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			snprintf(err, errlen, "libcurl cannot be initialised");
			return -1;
		}
		inited = 1;
	}
	CURL *h = curl_easy_init();
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	char cerr[CURL_ERROR_SIZE] = "";
	sink s = {fd, 0, max, 0, 0, progress, url};
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, (long)FETCH_REDIRECTS);
	curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "wheelgate (check --lock)");
	if (progress) {
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, &s);
	}
	CURLcode rc = curl_easy_perform(h);
	if (progress)
		fprintf(stderr, "\r\033[K");
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (rc == CURLE_OK)
		;
	else if (s.over || rc == CURLE_FILESIZE_EXCEEDED)
		snprintf(err, errlen, "more than %llu bytes: not read further", max);
	else if (s.werr)
		snprintf(err, errlen, "cannot write the temporary file");
	else if (rc == CURLE_HTTP_RETURNED_ERROR)
		snprintf(err, errlen, "the server answered HTTP %ld", code);
	else if (rc == CURLE_TOO_MANY_REDIRECTS)
		snprintf(err, errlen, "more than %d redirects", FETCH_REDIRECTS);
	else
		snprintf(err, errlen, "%s", *cerr ? cerr : curl_easy_strerror(rc));
	curl_easy_cleanup(h);
	return rc == CURLE_OK ? 0 : -1;
}

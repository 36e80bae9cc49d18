/*
 * Core metadata headers (WHEEL, METADATA): "Key: value" lines in the RFC 822 style, with
 * continuation lines, up to the first blank line (the METADATA body is the description).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "facts/facts.h"

static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
		(*e)--;
}

static int emit(wg_arena *a, const char *key, const char *key_end, const wg_buf *value,
		wg_header_cb cb, void *payload)
{
	char *k = wg_arena_strndup(a, key, (size_t)(key_end - key));
	char *v = wg_arena_strdup(a, value->s ? value->s : "");
	if (!k || !v)
		return WG_ENOMEM;
	cb(k, v, payload);
	return WG_OK;
}

int wg_headers_parse(const char *text, size_t len, wg_arena *a, wg_header_cb cb, void *payload)
{
	const char *p = text, *end = text + len;
	const char *key = NULL, *key_end = NULL;
	wg_buf value = {0};
	int rc = WG_OK;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *s = p, *e = le;
		if (e > s && e[-1] == '\r')
			e--;
		if (s == e)
			break; /* blank line: end of headers */
		if ((*s == ' ' || *s == '\t') && key) {
			trim(&s, &e);
			if ((rc = wg_buf_append(&value, "\n", 1)) < 0 ||
			    (rc = wg_buf_append(&value, s, (size_t)(e - s))) < 0)
				goto done;
		} else {
			if (key && (rc = emit(a, key, key_end, &value, cb, payload)) < 0)
				goto done;
			const char *colon = memchr(s, ':', (size_t)(e - s));
			value.len = 0;
			if (value.s)
				value.s[0] = '\0';
			if (!colon) {
				key = NULL; /* not a header line: skipped */
			} else {
				key = s;
				key_end = colon;
				trim(&key, &key_end);
				const char *vs = colon + 1, *ve = e;
				trim(&vs, &ve);
				if ((rc = wg_buf_append(&value, vs, (size_t)(ve - vs))) < 0)
					goto done;
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (key)
		rc = emit(a, key, key_end, &value, cb, payload);
done:
	wg_buf_free(&value);
	return rc;
}

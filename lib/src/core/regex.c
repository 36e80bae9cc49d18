/*
 * The only user of PCRE2: compiled patterns (JIT where available, bounded by match limits so
 * that no pattern and subject can run away) and per-thread match data.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"

struct wg_regex {
	pcre2_code *code;
	pcre2_match_context *mctx;
};

int wg_regex_new(wg_regex **out, const char *pattern, unsigned flags, char *msg, size_t msglen,
		 size_t *erroff)
{
	int ecode;
	PCRE2_SIZE eoff = 0;
	uint32_t opts = PCRE2_UTF;
	/* Names from a wheel need not be UTF-8: a byte that is not never matches, the rest of
	 * the subject still does (without it pcre2_match fails and a rule silently says nothing:
	 * a missing DT_NEEDED library with such a name went unreported). */
	opts |= PCRE2_MATCH_INVALID_UTF;
	*out = NULL;
	if (flags & WG_RE_CASELESS)
		opts |= PCRE2_CASELESS;
	if (flags & WG_RE_EXTENDED)
		opts |= PCRE2_EXTENDED;
	wg_regex *re = calloc(1, sizeof(*re));
	if (!re) {
		snprintf(msg, msglen, "out of memory");
		return WG_ENOMEM;
	}
	re->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &ecode, &eoff, NULL);
	if (!re->code) {
		PCRE2_UCHAR m[256];
		pcre2_get_error_message(ecode, m, sizeof(m));
		snprintf(msg, msglen, "%s", (const char *)m);
		if (erroff)
			*erroff = (size_t)eoff;
		free(re);
		return WG_EDATA;
	}
	pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE); /* the interpreter is the fallback */
	if (!(re->mctx = pcre2_match_context_create(NULL))) {
		pcre2_code_free(re->code);
		free(re);
		snprintf(msg, msglen, "out of memory");
		return WG_ENOMEM;
	}
	pcre2_set_match_limit(re->mctx, 1000000);
	pcre2_set_depth_limit(re->mctx, 10000);
	pcre2_set_heap_limit(re->mctx, 20000); /* KiB of backtracking memory */
	*out = re;
	return WG_OK;
}

void wg_regex_free(wg_regex *re)
{
	if (!re)
		return;
	pcre2_code_free(re->code);
	pcre2_match_context_free(re->mctx);
	free(re);
}

wg_rmatch *wg_rmatch_new(void)
{
	return (wg_rmatch *)pcre2_match_data_create(32, NULL);
}

void wg_rmatch_free(wg_rmatch *md)
{
	pcre2_match_data_free((pcre2_match_data *)md);
}

int wg_regex_match(const wg_regex *re, wg_rmatch *md, const char *s, size_t len, size_t *caps,
		   int ncaps)
{
	pcre2_match_data *m = (pcre2_match_data *)md;
	int rc = pcre2_match(re->code, (PCRE2_SPTR)s, len, 0, 0, m, re->mctx);
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT)
		return WG_ELIMIT; /* the pattern ran away on this subject: nothing decided */
	if (rc < 0)
		return WG_EFORMAT;
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m);
	uint32_t have = pcre2_get_ovector_count(m);
	for (int i = 0; i < ncaps; i++) {
		if ((uint32_t)i < have && (uint32_t)i < (uint32_t)rc && ov[2 * i] != PCRE2_UNSET) {
			caps[2 * i] = ov[2 * i];
			caps[2 * i + 1] = ov[2 * i + 1];
		} else {
			caps[2 * i] = caps[2 * i + 1] = SIZE_MAX;
		}
	}
	return 1;
}

/*
 * Reports read and trimmed through the public accessors: findings, suppressed findings, the
 * rules not applied, the findings counted past the limits, the verdict.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_RULES /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules/checks/check.h"

WG_API void wg_report_free(wg_report *r)
{
	if (!r)
		return;
	wg_vec_free(&r->findings);
	wg_vec_free(&r->suppressed);
	wg_vec_free(&r->not_applied);
	wg_vec_free(&r->more);
	wg_arena_free(&r->arena);
	free(r);
}

WG_API size_t wg_report_count(const wg_report *r)
{
	return r ? r->findings.len : 0;
}

WG_API int wg_report_remove(wg_report *r, size_t i)
{
	if (!r)
		return wg_null_arg("wg_report_remove");
	if (i >= r->findings.len)
		return WG_ENOTFOUND;
	char *base = r->findings.items;
	size_t sz = r->findings.item_size;
	memmove(base + i * sz, base + (i + 1) * sz, (r->findings.len - i - 1) * sz);
	r->findings.len--;
	return WG_OK;
}

WG_API int wg_report_suppress(wg_report *r, size_t i, const char *justification)
{
	if (!r)
		return wg_null_arg("wg_report_suppress");
	if (i >= r->findings.len)
		return WG_ENOTFOUND;
	wg_finding *to = wg_vec_push(&r->suppressed);
	const char *why = wg_arena_strdup(&r->arena, justification ? justification : "");
	if (!to || !why) {
		if (to)
			r->suppressed.len--;
		wg_set_error(WG_ERROR_CLASS_RULES, WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	*to = *(const wg_finding *)wg_vec_at(&r->findings, i);
	to->suppressed = why;
	return wg_report_remove(r, i);
}

WG_API size_t wg_report_suppressed_count(const wg_report *r)
{
	return r ? r->suppressed.len : 0;
}

static void finding_info(wg_finding_info *out, const wg_finding *f)
{
	out->rule = f->rule;
	out->title = f->title;
	out->message = f->message;
	out->fix = f->fix;
	out->severity = f->severity;
	out->path = f->path;
	out->member = f->member;
	out->symbol = f->symbol;
	out->file = f->file;
	out->line = f->line;
	if (out->version >= 2)
		out->suppressed = f->suppressed;
}

WG_API int wg_report_suppressed(wg_finding_info *out, const wg_report *r, size_t i)
{
	if (!out || !r)
		return wg_null_arg("wg_report_suppressed");
	if (wg_struct_version("wg_finding_info", out->version, WG_FINDING_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_finding *f = wg_vec_at(&r->suppressed, i);
	if (!f)
		return WG_ENOTFOUND;
	finding_info(out, f);
	return WG_OK;
}

WG_API int wg_report_finding(wg_finding_info *out, const wg_report *r, size_t i)
{
	if (!out || !r)
		return wg_null_arg("wg_report_finding");
	if (wg_struct_version("wg_finding_info", out->version, WG_FINDING_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_finding *f = wg_vec_at(&r->findings, i);
	if (!f)
		return WG_ENOTFOUND;
	finding_info(out, f);
	return WG_OK;
}

WG_API wg_profile wg_report_profile(const wg_report *r)
{
	return r ? r->profile : WG_PROFILE_PUBLISH;
}

WG_API size_t wg_report_not_applied_count(const wg_report *r)
{
	return r ? r->not_applied.len : 0;
}

WG_API int wg_report_not_applied(wg_not_applied_info *out, const wg_report *r, size_t i)
{
	if (!out || !r)
		return wg_null_arg("wg_report_not_applied");
	if (wg_struct_version("wg_not_applied_info", out->version, WG_NOT_APPLIED_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_not_applied *na = wg_vec_at(&r->not_applied, i);
	if (!na)
		return WG_ENOTFOUND;
	out->rule = na->rule;
	out->lacks = na->lacks;
	out->message = na->message;
	return WG_OK;
}

WG_API int wg_report_worst(const wg_report *r)
{
	int worst = -1;
	for (size_t i = 0; r && i < r->findings.len; i++) {
		const wg_finding *f = wg_vec_at(&r->findings, i);
		if ((int)f->severity > worst)
			worst = (int)f->severity;
	}
	/* Those counted past a bound weigh the same as those kept. */
	for (size_t i = 0; r && i < r->more.len; i++) {
		const wg_more *m = wg_vec_at(&r->more, i);
		for (int s = 2; s > worst; s--)
			if (m->severity[s])
				worst = s;
	}
	return worst;
}

const wg_more *wg_report_more_of(const wg_report *r, const char *rule)
{
	for (size_t i = 0; r && i < r->more.len; i++) {
		const wg_more *m = wg_vec_at(&r->more, i);
		if (!strcmp(m->rule, rule))
			return m;
	}
	return NULL;
}

WG_API size_t wg_report_more_count(const wg_report *r)
{
	return r ? r->more.len : 0;
}

WG_API int wg_report_more(wg_more_info *out, const wg_report *r, size_t i)
{
	if (!out || !r)
		return wg_null_arg("wg_report_more");
	if (wg_struct_version("wg_more_info", out->version, WG_MORE_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_more *m = wg_vec_at(&r->more, i);
	if (!m)
		return WG_ENOTFOUND;
	out->rule = m->rule;
	out->count = m->count;
	memcpy(out->severity, m->severity, sizeof(out->severity));
	return WG_OK;
}

WG_API int wg_report_more_remove(wg_report *r, size_t i)
{
	if (!r)
		return wg_null_arg("wg_report_more_remove");
	if (i >= r->more.len)
		return WG_ENOTFOUND;
	char *base = r->more.items;
	size_t sz = r->more.item_size;
	memmove(base + i * sz, base + (i + 1) * sz, (r->more.len - i - 1) * sz);
	r->more.len--;
	return WG_OK;
}

WG_API size_t wg_report_total(const wg_report *r)
{
	size_t n = r ? r->findings.len : 0;
	for (size_t i = 0; r && i < r->more.len; i++)
		n += ((const wg_more *)wg_vec_at(&r->more, i))->count;
	return n;
}

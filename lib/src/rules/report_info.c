/*
 * A report read without its documents (wheelgate.h, "a report read without its documents"):
 * the verdict `wheelgate check` gives an input, its findings counted, the input's path. The
 * formats (output/) and every consumer (the CLI, serve, the Python binding) decide from these,
 * so that no one reads the library's own JSON back.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "rules/rules.h"

WG_API const char *wg_verdict_name(wg_verdict v)
{
	switch (v) {
	case WG_VERDICT_PASS:
		return "pass";
	case WG_VERDICT_FAIL:
		return "fail";
	case WG_VERDICT_ERROR:
		return "error";
	}
	return "error";
}

WG_API wg_verdict wg_report_verdict(const wg_report *r, wg_severity fail_on)
{
	if (!r)
		return WG_VERDICT_ERROR;
	return wg_report_worst(r) >= (int)fail_on ? WG_VERDICT_FAIL : WG_VERDICT_PASS;
}

WG_API int wg_report_counts(wg_counts_info *out, const wg_report *r)
{
	if (!out || !r)
		return wg_null_arg("wg_report_counts");
	if (wg_struct_version("wg_counts_info", out->version, WG_COUNTS_INFO_VERSION) < 0)
		return WG_EINVAL;
	unsigned int version = out->version;
	memset(out, 0, sizeof(*out));
	out->version = version;
	for (size_t i = 0; i < r->findings.len; i++) {
		const wg_finding *f = wg_vec_at(&r->findings, i);
		if ((unsigned)f->severity < 3)
			out->kept[f->severity]++;
	}
	for (size_t i = 0; i < r->more.len; i++) {
		const wg_more *m = wg_vec_at(&r->more, i);
		for (int s = 0; s < 3; s++)
			out->more[s] += m->severity[s];
	}
	for (size_t i = 0; i < r->suppressed.len; i++) {
		const wg_finding *f = wg_vec_at(&r->suppressed, i);
		if ((unsigned)f->severity < 3)
			out->suppressed[f->severity]++;
	}
	for (int s = 0; s < 3; s++)
		out->severity[s] = out->kept[s] + out->more[s];
	return WG_OK;
}

WG_API const char *wg_report_path(const wg_report *r)
{
	return r ? r->path : NULL;
}

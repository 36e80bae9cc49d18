/*
 * wg_reports_format_doc: the documents of wg_reports_format with what a command adds to its
 * JSON (audit's notes and the distributions not audited, a baseline's counts), written here
 * once, so that no command reads the library's document back to add them; and the compact
 * JSON document (one line, to embed: serve's fleet envelope).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <jansson.h>

#include "output/output.h"

static bool has_additions(const wg_reports_doc *d)
{
	bool notes = false;
	for (size_t i = 0; d->notes && i < d->n && !notes; i++)
		notes = d->notes[i] != NULL;
	return notes || d->audit || d->ignored || d->baselined;
}

/* The keys docs/check-json.md gives a command's additions, in the order `check` and `audit`
 * have always written them: each input's note, ignored and baselined; the summary's totals;
 * then not_audited. */
static int add(json_t *j, const wg_reports_doc *d)
{
	json_t *inputs = json_object_get(j, "inputs"), *summary = json_object_get(j, "summary");
	if (!inputs || json_array_size(inputs) != d->n || !summary)
		return WG_ENOMEM;
	int bad = 0;
	for (size_t i = 0; d->notes && i < d->n; i++)
		if (d->notes[i])
			bad |= json_object_set_new(json_array_get(inputs, i), "note",
						   wg_json_str(d->notes[i]));
	if (d->ignored || d->baselined) {
		size_t tot[2] = {0, 0};
		for (size_t i = 0; i < d->n; i++) {
			size_t ig = d->ignored ? d->ignored[i] : 0, bl = d->baselined ? d->baselined[i] : 0;
			json_t *in = json_array_get(inputs, i);
			bad |= json_object_set_new(in, "ignored", json_integer((json_int_t)ig));
			bad |= json_object_set_new(in, "baselined", json_integer((json_int_t)bl));
			tot[0] += ig;
			tot[1] += bl;
		}
		bad |= json_object_set_new(summary, "ignored", json_integer((json_int_t)tot[0]));
		bad |= json_object_set_new(summary, "baselined", json_integer((json_int_t)tot[1]));
	}
	if (d->audit) {
		json_t *na = json_array();
		for (size_t i = 0; na && i < d->nnot_audited; i++)
			bad |= json_array_append_new(na, json_pack("{s:o, s:o}", "path",
				wg_json_str(d->not_audited_paths[i] ? d->not_audited_paths[i] : ""),
				"reason", wg_json_str(d->not_audited_reasons && d->not_audited_reasons[i]
						      ? d->not_audited_reasons[i] : "")));
		bad |= json_object_set_new(j, "not_audited", na);
		bad |= json_object_set_new(summary, "not_audited",
					   json_integer((json_int_t)d->nnot_audited));
	}
	return bad ? WG_ENOMEM : WG_OK;
}

WG_API int wg_reports_format_doc(char **out, const wg_reports_doc *d)
{
	if (!out || !d || (d->n && (!d->paths || !d->reports)) ||
	    (d->audit && d->nnot_audited && !d->not_audited_paths))
		return wg_null_arg("wg_reports_format_doc");
	if (wg_struct_version("wg_reports_doc", d->version, WG_REPORTS_DOC_VERSION) < 0)
		return WG_EINVAL;
	*out = NULL;
	bool json = d->format == WG_FORMAT_JSON || d->format == WG_FORMAT_JSON_COMPACT;
	if (!json)
		return wg_reports_format(out, d->format, d->rs, d->target, d->paths, d->reports,
					 d->errors, d->n, d->fail_on);
	json_t *j = wg_check_json(d->target, d->paths, d->reports, d->errors, d->n, d->fail_on);
	bool more = has_additions(d);
	int rc = j ? WG_OK : WG_ENOMEM;
	if (rc == WG_OK && more)
		rc = add(j, d);
	/* With a command's additions every character past ASCII is \uNNNN, as audit's
	 * documents have always been written (text from the distributions, escaped). */
	size_t flags = (d->format == WG_FORMAT_JSON_COMPACT ? JSON_COMPACT : JSON_INDENT(2)) |
		       JSON_PRESERVE_ORDER | (more ? JSON_ENSURE_ASCII : 0);
	if (rc == WG_OK)
		*out = wg_json_dump(j, flags);
	json_decref(j);
	if (*out)
		return WG_OK;
	wg_set_error(WG_ERROR_CLASS_INVALID, WG_ENOMEM, "out of memory");
	return WG_ENOMEM;
}

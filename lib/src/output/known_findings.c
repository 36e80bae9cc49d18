/*
 * Known findings read back from a JSON document: a report (wheelgate.check/1, written by
 * wg_reports_format) or a baseline (wheelgate.baseline/1, docs/rules.md), each finding given
 * to the caller (`check --baseline`), so that no embedder parses the library's documents.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <jansson.h>
#include <string.h>

#include "output/output.h"

#define BASELINE_SCHEMA "wheelgate.baseline/1"

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* A finding the document cannot name: which (1-based), and why. */
static int bad(const char *what, size_t i, const char *why)
{
	wg_set_error(WG_ERROR_CLASS_STORE, WG_EFORMAT, "%s %zu: %s", what, i, why);
	return WG_EFORMAT;
}

WG_API int wg_known_findings_read(const char *json, size_t len, wg_known_finding_fn fn,
				  void *payload)
{
	if ((!json && len) || !fn)
		return wg_null_arg("wg_known_findings_read");
	json_error_t je;
	json_t *j = json_loadb(json ? json : "", len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		wg_set_error(WG_ERROR_CLASS_STORE, WG_EFORMAT, "%d:%d: %s", je.line, je.column,
			     je.text);
		return WG_EFORMAT;
	}
	const char *schema = str(j, "schema");
	int rc = 0;
	size_t i, k;
	json_t *in, *x;
	if (schema && !strcmp(schema, BASELINE_SCHEMA) && json_is_array(json_object_get(j, "findings"))) {
		json_array_foreach(json_object_get(j, "findings"), i, x) {
			if (!str(x, "rule") || !str(x, "input"))
				rc = bad("finding", i + 1, "needs 'rule' and 'input' strings");
			else
				rc = fn(str(x, "input"), str(x, "rule"), str(x, "member"),
					str(x, "symbol"), payload);
			if (rc)
				break;
		}
	} else if (schema && !strcmp(schema, "wheelgate.check/1") &&
		   json_is_array(json_object_get(j, "inputs"))) {
		json_array_foreach(json_object_get(j, "inputs"), i, in) {
			const char *p = str(in, "path");
			json_array_foreach(json_object_get(in, "findings"), k, x) {
				if (!p || !str(x, "rule"))
					rc = bad("input", i + 1, "a finding without its input's "
						 "path or its rule");
				else
					rc = fn(p, str(x, "rule"), str(x, "member"), str(x, "symbol"),
						payload);
				if (rc)
					break;
			}
			if (rc)
				break;
		}
	} else {
		wg_set_error(WG_ERROR_CLASS_STORE, WG_EFORMAT, "neither a baseline (\"schema\": \"%s\", "
			     "from --write-baseline) nor a report (--format json)", BASELINE_SCHEMA);
		rc = WG_EFORMAT;
	}
	json_decref(j);
	return rc;
}

/*
 * Symbol classification by PCRE2 patterns loaded from data (rules/classify/string-abi.yaml):
 * which std::string ABI a symbol carries and whether it is part of torch's C++ API.
 * The compiled patterns are immutable and shared; match data lives in a per-thread matcher.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_DATA /* wg_seterr: what fails here */
#include <stdlib.h>
#include <string.h>

#include "facts/facts.h"

enum { CLS_NEW, CLS_OLD, CLS_TORCH, CLS_RUNTIME, CLS_COUNT };
static const char *const class_names[CLS_COUNT] = {"new_string", "old_string", "torch_facing",
						   "runtime"};

typedef struct {
	bool on_mangled;
	wg_regex **codes;
	size_t ncodes;
	char **match, **no_match; /* examples, NULL-terminated */
} wg_class;

struct wg_classifier {
	wg_class cls[CLS_COUNT];
};

struct wg_matcher {
	const wg_classifier *c;
	wg_rmatch *md;
};

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static int load_strv(char ***out, const wg_yaml_node *seq, const char *what, wg_err *err)
{
	char where[512];
	*out = NULL;
	if (!seq)
		return WG_OK;
	if (!wg_yaml_is_seq(seq))
		return wg_seterr(err, WG_EDATA, "%s: '%s' must be a list",
				 wg_yaml_where(seq, where, sizeof(where)), what);
	size_t n = wg_yaml_len(seq);
	char **v = calloc(n + 1, sizeof(*v));
	if (!v)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const wg_yaml_node *it = wg_yaml_item(seq, i);
		const char *s = wg_yaml_scalar(it);
		if (!s) {
			free_strv(v);
			return wg_seterr(err, WG_EDATA, "%s: items of '%s' must be strings",
					 wg_yaml_where(it, where, sizeof(where)), what);
		}
		if (!(v[i] = strdup(s))) {
			free_strv(v);
			return wg_seterr(err, WG_ENOMEM, "out of memory");
		}
	}
	*out = v;
	return WG_OK;
}

static int load_class(wg_class *c, const wg_yaml_node *node, const char *cname, wg_err *err)
{
	char where[512];
	int rc;
	if (!wg_yaml_is_map(node))
		return wg_seterr(err, WG_EDATA, "%s: class '%s' must be a mapping",
				 wg_yaml_where(node, where, sizeof(where)), cname);
	const char *on = wg_yaml_scalar(wg_yaml_get(node, "on"));
	if (!on || (strcmp(on, "mangled") && strcmp(on, "demangled")))
		return wg_seterr(err, WG_EDATA, "%s: class '%s': 'on' must be mangled or demangled",
				 wg_yaml_where(node, where, sizeof(where)), cname);
	c->on_mangled = strcmp(on, "mangled") == 0;
	const wg_yaml_node *pats = wg_yaml_get(node, "patterns");
	if (!wg_yaml_is_seq(pats) || wg_yaml_len(pats) == 0)
		return wg_seterr(err, WG_EDATA, "%s: class '%s' needs a non-empty 'patterns' list",
				 wg_yaml_where(node, where, sizeof(where)), cname);
	c->ncodes = wg_yaml_len(pats);
	if (!(c->codes = calloc(c->ncodes, sizeof(*c->codes))))
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	for (size_t i = 0; i < c->ncodes; i++) {
		const wg_yaml_node *it = wg_yaml_item(pats, i);
		const char *pat = wg_yaml_scalar(it);
		if (!pat)
			return wg_seterr(err, WG_EDATA, "%s: a pattern must be a string",
					 wg_yaml_where(it, where, sizeof(where)));
		char msg[256];
		size_t eoff = 0;
		if (wg_regex_new(&c->codes[i], pat, 0, msg, sizeof(msg), &eoff) < 0)
			return wg_seterr(err, WG_EDATA, "%s: bad pattern at offset %zu: %s",
					 wg_yaml_where(it, where, sizeof(where)), eoff, msg);
	}
	if ((rc = load_strv(&c->match, wg_yaml_get(node, "match"), "match", err)) < 0)
		return rc;
	return load_strv(&c->no_match, wg_yaml_get(node, "no_match"), "no_match", err);
}

int wg_classifier_load(wg_classifier **out, const char *name, const char *text, size_t len,
		       wg_err *err)
{
	char where[512];
	wg_yaml_doc *doc = NULL;
	int rc;
	*out = NULL;
	wg_classifier *c = calloc(1, sizeof(*c));
	if (!c)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	if ((rc = wg_yaml_parse(&doc, name, text, len, err)) < 0)
		goto done;
	const wg_yaml_node *root = wg_yaml_root(doc);
	const char *kind = wg_yaml_scalar(wg_yaml_get(root, "kind"));
	if (!kind || strcmp(kind, "string-abi")) {
		rc = wg_seterr(err, WG_EDATA, "%s: expected 'kind: string-abi'",
			       wg_yaml_where(root, where, sizeof(where)));
		goto done;
	}
	const wg_yaml_node *classes = wg_yaml_get(root, "classes");
	for (int i = 0; i < CLS_COUNT; i++) {
		const wg_yaml_node *n = wg_yaml_get(classes, class_names[i]);
		if (!n) {
			rc = wg_seterr(err, WG_EDATA, "%s: missing class '%s'",
				       wg_yaml_where(classes ? classes : root, where, sizeof(where)),
				       class_names[i]);
			goto done;
		}
		if ((rc = load_class(&c->cls[i], n, class_names[i], err)) < 0)
			goto done;
	}
	rc = WG_OK;
done:
	wg_yaml_free(doc);
	if (rc < 0)
		wg_classifier_free(c);
	else
		*out = c;
	return rc;
}

void wg_classifier_free(wg_classifier *c)
{
	if (!c)
		return;
	for (int i = 0; i < CLS_COUNT; i++) {
		for (size_t j = 0; j < c->cls[i].ncodes; j++)
			wg_regex_free(c->cls[i].codes[j]);
		free(c->cls[i].codes);
		free_strv(c->cls[i].match);
		free_strv(c->cls[i].no_match);
	}
	free(c);
}

int wg_matcher_new(wg_matcher **out, const wg_classifier *c)
{
	wg_matcher *m = calloc(1, sizeof(*m));
	if (!m)
		return WG_ENOMEM;
	m->c = c;
	if (!(m->md = wg_rmatch_new())) {
		free(m);
		return WG_ENOMEM;
	}
	*out = m;
	return WG_OK;
}

void wg_matcher_free(wg_matcher *m)
{
	if (!m)
		return;
	wg_rmatch_free(m->md);
	free(m);
}

static bool class_matches(wg_matcher *m, int cls, const char *mangled, const char *demangled)
{
	const wg_class *c = &m->c->cls[cls];
	const char *subject = c->on_mangled ? mangled : demangled;
	if (!subject)
		return false;
	for (size_t i = 0; i < c->ncodes; i++)
		if (wg_regex_match(c->codes[i], m->md, subject, strlen(subject), NULL, 0) == 1)
			return true;
	return false;
}

void wg_classify_symbol(wg_matcher *m, const char *mangled, const char *demangled,
			unsigned *string_abi, bool *torch_facing, bool *runtime)
{
	*string_abi = 0;
	*torch_facing = *runtime = false;
	if (!demangled)
		return; /* not a C++ name: no std::string, no namespace */
	*runtime = class_matches(m, CLS_RUNTIME, mangled, demangled);
	if (class_matches(m, CLS_NEW, mangled, demangled))
		*string_abi |= WG_SYM_NEW_STRING;
	if (class_matches(m, CLS_OLD, mangled, demangled))
		*string_abi |= WG_SYM_OLD_STRING;
	*torch_facing = class_matches(m, CLS_TORCH, mangled, demangled);
}

int wg_classifier_self_test(const wg_classifier *c, wg_err *err)
{
	wg_matcher *m;
	int rc = WG_OK;
	if (wg_matcher_new(&m, c) < 0)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	for (int i = 0; i < CLS_COUNT && rc == WG_OK; i++) {
		for (int want = 1; want >= 0 && rc == WG_OK; want--) {
			char **ex = want ? c->cls[i].match : c->cls[i].no_match;
			for (size_t j = 0; ex && ex[j]; j++) {
				char *dem = wg_demangle(ex[j]);
				bool got = class_matches(m, i, ex[j], dem);
				if (got != (bool)want)
					rc = wg_seterr(err, WG_EDATA,
						       "class %s: example %s %s (demangled: %s)",
						       class_names[i], ex[j],
						       want ? "does not match" : "matches",
						       dem ? dem : "(not C++)");
				free(dem);
				if (rc < 0)
					break;
			}
		}
	}
	wg_matcher_free(m);
	return rc;
}

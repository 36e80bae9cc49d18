/*
 * Wheel filenames as the binary distribution format specifies them:
 * {name}-{version}(-{build})?-{python tags}-{abi tags}-{platform tags}.whl, with compressed
 * tag sets ("py2.py3", "manylinux_2_28_x86_64.manylinux2014_x86_64") and PEP 440 versions.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_WHEEL /* wg_seterr: what fails here */
#include <ctype.h>
#include <pthread.h>
#include <string.h>

#include "facts/facts.h"

/* The PEP 440 version grammar (the public version scheme plus a local label). */
static const char pep440[] =
	"^v?(?:(?:[0-9]+!)?[0-9]+(?:\\.[0-9]+)*"
	"(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?"
	"(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?"
	"(?:[-_.]?dev[-_.]?[0-9]*)?)"
	"(?:\\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?$";

static wg_regex *version_re;
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void compile_version_re(void)
{
	char msg[128];
	wg_regex_new(&version_re, pep440, WG_RE_CASELESS, msg, sizeof(msg), NULL);
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

static int split_tags(wg_strlist *out, wg_arena *a, const char *field, const char *what,
		      const char *filename, wg_err *err)
{
	const char *p = field;
	for (;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n == 0)
			return wg_seterr(err, WG_EFORMAT, "%s: empty %s tag in '%s'", filename, what,
					 field);
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)p[i]) && p[i] != '_')
				return wg_seterr(err, WG_EFORMAT, "%s: invalid character '%c' in %s tag '%s'",
						 filename, p[i], what, field);
		char *tag = wg_arena_strndup(a, p, n);
		if (!tag || wg_strlist_add(out, a, tag) < 0)
			return wg_seterr(err, WG_ENOMEM, "out of memory");
		if (!dot)
			return WG_OK;
		p = dot + 1;
	}
}

/* PEP 825: a variant label is ^[0-9a-z_.]+$ */
static bool valid_variant_label(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s) && !(*s >= 'a' && *s <= 'z') && *s != '_' &&
		    *s != '.')
			return false;
	return true;
}

/* Whether s reads as a python tag (py3, cp312, pp310...): what tells a variant label at the
 * end of six parts from a build tag at the third. */
static bool looks_like_python_tag(const char *s)
{
	static const char *const impl[] = {"py", "cp", "pp", "ip", "jy", "graalpy", NULL};
	for (int i = 0; impl[i]; i++) {
		size_t n = strlen(impl[i]);
		if (!strncmp(s, impl[i], n) && isdigit((unsigned char)s[n]))
			return true;
	}
	return false;
}

int wg_wheelname_parse(wg_wheelname *out, wg_arena *a, const char *filename, wg_err *err)
{
	char *parts[7];
	int n = 0;
	memset(out, 0, sizeof(*out));
	if (!wg_has_suffix(filename, ".whl"))
		return wg_seterr(err, WG_EFORMAT, "%s: a wheel filename must end in .whl", filename);
	char *stem = wg_arena_strndup(a, filename, strlen(filename) - 4);
	if (!stem)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	for (char *p = stem;;) {
		if (n == 7)
			return wg_seterr(err, WG_EFORMAT,
					 "%s: too many '-'-separated parts (a name or version with '-' must "
					 "be escaped as '_')", filename);
		parts[n++] = p;
		char *dash = strchr(p, '-');
		if (!dash)
			break;
		*dash = '\0';
		p = dash + 1;
	}
	if (n < 5)
		return wg_seterr(err, WG_EFORMAT,
				 "%s: expected name-version[-build]-python-abi-platform.whl, found %d "
				 "parts", filename, n);
	if (!valid_name(parts[0]))
		return wg_seterr(err, WG_EFORMAT, "%s: invalid distribution name '%s'", filename,
				 parts[0]);
	pthread_once(&version_once, compile_version_re);
	size_t caps[4];
	const char *ver = parts[1];
	if (!version_re)
		return wg_seterr(err, WG_ERROR, "internal error: version pattern");
	wg_rmatch *md = wg_rmatch_new();
	if (!md)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	int m = wg_regex_match(version_re, md, ver, strlen(ver), caps, 2);
	wg_rmatch_free(md);
	if (m != 1)
		return wg_seterr(err, WG_EFORMAT, "%s: '%s' is not a valid PEP 440 version%s", filename,
				 ver, n > 5 ? " (too many '-'-separated parts? a name or version with "
					      "'-' must be escaped as '_')" : "");
	out->name = parts[0];
	out->version = ver;
	if (caps[2] != SIZE_MAX) {
		out->public_version = wg_arena_strndup(a, ver, caps[2] - 1);
		out->local = wg_arena_strndup(a, ver + caps[2], caps[3] - caps[2]);
	} else {
		out->public_version = ver;
	}
	int t = 2;
	/* PEP 825: name-version[-build]-python-abi-platform[-variant].whl */
	if (n == 7 || (n == 6 && !isdigit((unsigned char)parts[2][0]) &&
		       looks_like_python_tag(parts[2]))) {
		if (!valid_variant_label(parts[n - 1]))
			return wg_seterr(err, WG_EFORMAT, "%s: invalid variant label '%s' (PEP 825: "
					 "0-9, a-z, '_' and '.')", filename, parts[n - 1]);
		out->variant = parts[n - 1];
		n--;
	}
	if (n == 6) {
		if (!isdigit((unsigned char)parts[2][0]))
			return wg_seterr(err, WG_EFORMAT, "%s: build tag '%s' must start with a digit",
					 filename, parts[2]);
		for (const char *p = parts[2]; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.')
				return wg_seterr(err, WG_EFORMAT, "%s: invalid build tag '%s'", filename,
						 parts[2]);
		out->build = parts[2];
		t = 3;
	}
	int rc;
	if ((rc = split_tags(&out->py, a, parts[t], "python", filename, err)) < 0 ||
	    (rc = split_tags(&out->abi, a, parts[t + 1], "abi", filename, err)) < 0 ||
	    (rc = split_tags(&out->plat, a, parts[t + 2], "platform", filename, err)) < 0) {
		wg_strlist_free(&out->py);
		wg_strlist_free(&out->abi);
		wg_strlist_free(&out->plat);
		return rc;
	}
	return WG_OK;
}

/* PEP 503's normalization of name's first len bytes into out (room for n bytes, n > 0);
 * the normalized length (which can only be shorter than len). */
static size_t normalize(char *out, size_t n, const char *name, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 1 < n; i++) {
		char c = name[i];
		if (c == '-' || c == '_' || c == '.') {
			if (o == 0 || out[o - 1] != '-')
				out[o++] = '-';
		} else {
			out[o++] = (char)tolower((unsigned char)c);
		}
	}
	out[o] = '\0';
	return o;
}

char *wg_normalize_name(wg_arena *a, const char *name)
{
	size_t n = strlen(name);
	char *out = wg_arena_alloc(a, n + 1);
	if (!out)
		return NULL;
	normalize(out, n + 1, name, n);
	return out;
}

WG_API int wg_name_normalize(char *out, size_t n, const char *name, size_t len)
{
	if (!out || !n || (!name && len))
		return WG_EINVAL;
	/* Every byte of the normalized name is kept (it is never longer than name). */
	size_t full = 0;
	for (size_t i = 0; i < len; i++)
		if (!((name[i] == '-' || name[i] == '_' || name[i] == '.') && i > 0 &&
		      (name[i - 1] == '-' || name[i - 1] == '_' || name[i - 1] == '.')))
			full++;
	if (full >= n) {
		out[0] = '\0';
		return WG_ELIMIT;
	}
	return (int)normalize(out, n, name ? name : "", len);
}

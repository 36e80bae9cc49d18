/*
 * Per-input ignores and the baseline (suppress.h), read and written with jansson.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suppress.h"

#define BASELINE_SCHEMA "wheelgate.baseline/1"
/* A baseline larger than this is refused (a report of thousands of wheels is far smaller). */
#define BASELINE_MAX (64u << 20)

typedef struct {
	char *glob;
	char **sel;
	size_t nsel;
} ignore;

typedef struct {
	char *rule, *input, *member, *symbol;
} fkey;

struct suppress {
	ignore *ign;
	size_t nign;
	fkey *known; /* the baseline */
	size_t nknown, capknown;
	fkey *seen;  /* what the inputs had, for --write-baseline */
	size_t nseen, capseen;
	char *why;   /* a baselined finding's justification (SARIF suppressions) */
};

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

/* foo-1.2-cp310-cp310-linux_x86_64.whl -> foo-cp310-cp310-linux_x86_64.whl (a build tag goes
 * too); any other input: its last path component. */
static char *input_key(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base), dashes = 0;
	for (size_t i = 0; i < n; i++)
		dashes += base[i] == '-';
	if (n < 5 || strcmp(base + n - 4, ".whl") || (dashes != 4 && dashes != 5))
		return strdup(base);
	const char *d1 = strchr(base, '-'), *tags = base + n;
	for (int k = 0; k < 3; k++)
		while (--tags > base && *tags != '-')
			;
	char *out = malloc(n + 1);
	if (out)
		snprintf(out, n + 1, "%.*s%s", (int)(d1 - base), base, tags);
	return out;
}

/* foo-1.2.dist-info/RECORD -> foo.dist-info/RECORD (and foo-1.2.data/...). */
static char *member_key(const char *m)
{
	if (!m)
		return strdup("");
	size_t first = strcspn(m, "/");
	const char *sfx = NULL;
	if (first > 10 && !strncmp(m + first - 10, ".dist-info", 10))
		sfx = m + first - 10;
	else if (first > 5 && !strncmp(m + first - 5, ".data", 5))
		sfx = m + first - 5;
	const char *dash = NULL;
	for (const char *p = m; sfx && p < sfx; p++)
		if (*p == '-')
			dash = p;
	if (!dash)
		return strdup(m);
	size_t n = strlen(m) + 1;
	char *out = malloc(n);
	if (out)
		snprintf(out, n, "%.*s%s", (int)(dash - m), m, sfx);
	return out;
}

static void key_free(fkey *k)
{
	free(k->rule);
	free(k->input);
	free(k->member);
	free(k->symbol);
}

/* Adds a finding's key (its parts normalised) to *v; -1 when out of memory. */
static int key_push(fkey **v, size_t *n, size_t *cap, const char *rule, const char *input,
		    const char *member, const char *symbol)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		fkey *p = realloc(*v, c * sizeof(*p));
		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	fkey k = {dup_or_empty(rule), input_key(input), member_key(member), dup_or_empty(symbol)};
	if (!k.rule || !k.input || !k.member || !k.symbol) {
		key_free(&k);
		return -1;
	}
	(*v)[(*n)++] = k;
	return 0;
}

static bool key_eq(const fkey *a, const fkey *b)
{
	return !strcmp(a->rule, b->rule) && !strcmp(a->input, b->input) &&
	       !strcmp(a->member, b->member) && !strcmp(a->symbol, b->symbol);
}

suppress *suppress_new(char *const *ignores, size_t nignores, char *err, size_t errlen)
{
	suppress *s = calloc(1, sizeof(*s));
	if (!s || !(s->ign = calloc(nignores ? nignores : 1, sizeof(*s->ign)))) {
		snprintf(err, errlen, "out of memory");
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < nignores; i++) {
		const char *nl = strchr(ignores[i], '\n');
		ignore *g = &s->ign[s->nign++];
		g->glob = nl ? strndup(ignores[i], (size_t)(nl - ignores[i])) : NULL;
		char *list = nl ? strdup(nl + 1) : NULL, *save = NULL;
		g->sel = list ? calloc(strlen(list) / 2 + 2, sizeof(*g->sel)) : NULL;
		for (char *t = g->sel ? strtok_r(list, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
			if (!(g->sel[g->nsel++] = strdup(t)))
				g->nsel--;
		free(list);
		if (!g->glob || !g->sel) {
			snprintf(err, errlen, "out of memory");
			suppress_free(s);
			return NULL;
		}
	}
	return s;
}

void suppress_free(suppress *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nign; i++) {
		free(s->ign[i].glob);
		for (size_t j = 0; j < s->ign[i].nsel; j++)
			free(s->ign[i].sel[j]);
		free(s->ign[i].sel);
	}
	free(s->ign);
	free(s->why);
	for (size_t i = 0; i < s->nknown; i++)
		key_free(&s->known[i]);
	for (size_t i = 0; i < s->nseen; i++)
		key_free(&s->seen[i]);
	free(s->known);
	free(s->seen);
	free(s);
}

/* A known finding of the baseline, remembered. */
static int known_one(const char *input, const char *rule, const char *member, const char *symbol,
		     void *payload)
{
	suppress *s = payload;
	return key_push(&s->known, &s->nknown, &s->capknown, rule, input, member, symbol) < 0
		       ? WG_ENOMEM : 0;
}

int suppress_load_baseline(suppress *s, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "--baseline: %s: %s", path, strerror(errno));
		return -1;
	}
	long size;
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
	    (unsigned long)size > BASELINE_MAX) {
		snprintf(err, errlen, "--baseline: %s: not a regular file of at most %u bytes", path,
			 BASELINE_MAX);
		fclose(f);
		return -1;
	}
	rewind(f);
	char *text = malloc((size_t)size + 1);
	size_t got = text ? fread(text, 1, (size_t)size, f) : 0;
	bool rerr = ferror(f);
	fclose(f);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (rerr) {
		snprintf(err, errlen, "--baseline: %s: %s", path, strerror(errno));
		free(text);
		return -1;
	}
	/* the library reads its reports (and the baselines written below) back */
	int rc = wg_known_findings_read(text, got, known_one, s);
	free(text);
	if (rc == WG_ENOMEM) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (rc < 0) {
		const char *m = wg_error_last();
		snprintf(err, errlen, "--baseline: %s:%s%s", path, isdigit((unsigned char)m[0]) ? ""
									      : " ", m);
		return -1;
	}
	size_t n = strlen(path) + 64;
	free(s->why);
	if (!(s->why = malloc(n))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(s->why, n, "a known finding: in the baseline %s (--baseline)", path);
	return 0;
}

int suppress_check_rules(const suppress *s, const wg_ruleset *rs, char *err, size_t errlen)
{
	for (size_t i = 0; s && i < s->nign; i++)
		for (size_t j = 0; j < s->ign[i].nsel; j++)
			if (wg_ruleset_selects(rs, s->ign[i].sel[j], "") < 0) {
				snprintf(err, errlen, "ignore '%s': %s", s->ign[i].glob, wg_error_last());
				return -1;
			}
	return 0;
}

/* The glob matches the input as given, or its last component (dist/foo-*.whl, foo-*.whl). */
static bool glob_matches(const char *glob, const char *input)
{
	const char *base = strrchr(input, '/');
	return fnmatch(glob, input, 0) == 0 || (base && fnmatch(glob, base + 1, 0) == 0);
}

int suppress_apply(suppress *s, const wg_ruleset *rs, const char *input, wg_report *rep,
		   size_t *ignored, size_t *baselined)
{
	*ignored = *baselined = 0;
	for (size_t i = 0; s && rep && i < wg_report_count(rep);) {
		wg_finding_info fi = WG_FINDING_INFO_INIT;
		if (wg_report_finding(&fi, rep, i) < 0)
			break;
		bool ign = false;
		for (size_t g = 0; g < s->nign && !ign; g++)
			if (glob_matches(s->ign[g].glob, input))
				for (size_t j = 0; j < s->ign[g].nsel && !ign; j++)
					ign = wg_ruleset_selects(rs, s->ign[g].sel[j], fi.rule) == 1;
		if (ign) {
			wg_report_remove(rep, i);
			(*ignored)++;
			continue;
		}
		if (key_push(&s->seen, &s->nseen, &s->capseen, fi.rule, input, fi.member, fi.symbol) < 0)
			return -1;
		const fkey *k = &s->seen[s->nseen - 1];
		bool known = false;
		for (size_t b = 0; b < s->nknown && !known; b++)
			known = key_eq(&s->known[b], k);
		if (known) {
			/* out of the findings (it passes), kept for SARIF as a suppressed result */
			if (wg_report_suppress(rep, i, s->why ? s->why : "a known finding (--baseline)") < 0)
				return -1;
			(*baselined)++;
			continue;
		}
		i++;
	}
	/* Findings counted past a bound (wg_report_more): an ignore entry takes them with their
	 * rule; a baseline cannot know them one by one, so they stay counted. */
	for (size_t i = 0; s && rep && i < wg_report_more_count(rep);) {
		wg_more_info mi = WG_MORE_INFO_INIT;
		if (wg_report_more(&mi, rep, i) < 0)
			break;
		bool ign = false;
		for (size_t g = 0; g < s->nign && !ign; g++)
			if (glob_matches(s->ign[g].glob, input))
				for (size_t j = 0; j < s->ign[g].nsel && !ign; j++)
					ign = wg_ruleset_selects(rs, s->ign[g].sel[j], mi.rule) == 1;
		if (ign) {
			*ignored += mi.count;
			wg_report_more_remove(rep, i);
			continue;
		}
		i++;
	}
	return 0;
}

int suppress_write_baseline(const suppress *s, const char *path, char *err, size_t errlen)
{
	json_t *arr = json_array(), *doc = json_pack("{s:s, s:o}", "schema", BASELINE_SCHEMA,
						     "findings", arr);
	int rc = doc ? 0 : -1;
	for (size_t i = 0; s && i < s->nseen && rc == 0; i++) {
		const fkey *k = &s->seen[i];
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j++)
			dup = key_eq(&s->seen[j], k);
		if (!dup)
			rc = json_array_append_new(arr, json_pack("{s:s, s:s, s:s?, s:s?}", "rule",
					k->rule, "input", k->input, "member", *k->member ? k->member : NULL,
					"symbol", *k->symbol ? k->symbol : NULL));
	}
	if (rc == 0 && json_dump_file(doc, path, JSON_INDENT(2) | JSON_ENSURE_ASCII) != 0) {
		snprintf(err, errlen, "--write-baseline: %s: %s", path, strerror(errno));
		rc = -1;
	} else if (rc) {
		snprintf(err, errlen, "out of memory");
	}
	json_decref(doc);
	return rc;
}

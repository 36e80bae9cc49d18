/*
 * `wheelgate explain ID|NAME...`: what a rule looks at, why it matters, an input it flags and
 * one it passes, how to fix and how to silence it, all from its rule file (docs/explain.md);
 * `wheelgate check --explain` prints the same for each rule that produced a finding.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: wheelgate explain [--format text|json] [--rules PATH]... ID|NAME...\n"
		"\n"
		"Explains rules: for each rule id (WG-ABI-001, in any case) or name (hollow-wheel,\n"
		"the CHECK column of 'wheelgate check --list-rules'), its title, its severity in\n"
		"the install and the publish profile, what it looks at, why it matters (with the\n"
		"error users see), an input it flags and one it passes, the examples its patterns\n"
		"are tested with, how to fix it and how to silence it. A name picks every rule of\n"
		"that name. Everything comes from the rule files (docs/explain.md).\n"
		"\n"
		"options:\n"
		"  --format FORMAT    text (default: wrapped to the terminal) or json (one\n"
		"                     wheelgate.explain/1 document, docs/schema/explain.schema.json)\n"
		"  --rules PATH       also load this rule file or directory (*.yaml), as check\n"
		"                     does; its rules may leave out what explains them (said so)\n"
		"  --no-default-rules explain only the rules of --rules\n"
		"\n"
		"exit status: 0 when every ID|NAME names a rule, 2 when one does not (with the\n"
		"closest id or name) and for usage errors and broken rule files.\n");
}

/* The width text wraps at: the terminal's (stdout), else $COLUMNS, else 80; 60 to 100. */
static int text_width(FILE *f)
{
	struct winsize ws;
	int w = 0;
	if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0)
		w = ws.ws_col;
	const char *c = getenv("COLUMNS");
	if (!w && c)
		w = atoi(c);
	if (w <= 0)
		w = 80;
	return w < 60 ? 60 : w > 100 ? 100 : w;
}

/* text (each word escaped for the terminal) as a paragraph wrapped at width: its first line
 * indented by indent, the others by hang. */
static void wrap(FILE *f, const char *text, int indent, int hang, int width)
{
	const char *s = text;
	char word[1024];
	int col = 0, line = 0;
	while (*s) {
		while (*s == ' ' || *s == '\n' || *s == '\t')
			s++;
		if (!*s)
			break;
		size_t n = strcspn(s, " \n\t");
		snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1), s);
		const char *w = esc(word); /* a word of a user's rule file: made safe */
		int len = (int)strlen(w);
		if (col && col + 1 + len > width) {
			fputc('\n', f);
			col = 0;
		}
		if (!col)
			col = fprintf(f, "%*s", line++ ? hang : indent, "");
		else
			col += fprintf(f, " ");
		col += fprintf(f, "%s", w);
		s += n;
	}
	if (col)
		fputc('\n', f);
}

static const char *sev_name(int s)
{
	return s < 0 ? "off" : wg_severity_name((wg_severity)s);
}

/* What a user's rule file left out of what explains a rule: ", "-separated, "" for none. */
static void missing_fields(const wg_rule_info *ri, char *buf, size_t n)
{
	buf[0] = '\0';
	const char *have[] = {ri->looks_at, ri->why, ri->example_fails, ri->example_passes};
	const char *names[] = {"looks_at", "why", "example.fails", "example.passes"};
	for (size_t i = 0; i < 4; i++)
		if (!have[i]) {
			size_t o = strlen(buf);
			snprintf(buf + o, n - o, "%s%s", o ? ", " : "", names[i]);
		}
}

static void section(FILE *f, const char *title, const char *text, int width)
{
	fprintf(f, "\n%s%s%s\n", c_bold(), title, c_off());
	wrap(f, text ? text : "(not given in the rule file)", 2, 2, width);
}

void explain_rule_text(FILE *f, const wg_ruleset *rs, size_t i)
{
	wg_rule_info ri = WG_RULE_INFO_INIT;
	if (wg_ruleset_rule(&ri, rs, i) < 0)
		return;
	int width = text_width(f);
	char line[512], miss[128];
	fprintf(f, "%s%s%s  %s\n", c_bold(), esc(ri.id), c_off(), esc(ri.check));
	wrap(f, ri.title, 0, 0, width);
	snprintf(line, sizeof(line), "install profile: %s; publish profile: %s; %s by default%s "
		 "(defined at %s)", sev_name(ri.install), sev_name(ri.publish),
		 ri.enabled ? "on" : "off", ri.security ? "; a security rule" : "", ri.source);
	section(f, "Severity", line, width);
	section(f, "Looks at", ri.looks_at, width);
	section(f, "Why it matters", ri.why, width);
	section(f, "Example that fails", ri.example_fails, width);
	section(f, "Example that passes", ri.example_passes, width);
	for (size_t j = 0; j < ri.npattern_lists; j++) {
		wg_rule_patterns_info pi = WG_RULE_PATTERNS_INFO_INIT;
		if (wg_ruleset_rule_patterns(&pi, rs, i, j) < 0)
			continue;
		if (!j)
			fprintf(f, "\n%sPattern examples%s (verified by 'wheelgate check --self-test')\n",
				c_bold(), c_off());
		char *b = NULL;
		size_t bl = 0;
		FILE *m = open_memstream(&b, &bl);
		if (!m)
			continue;
		fprintf(m, "%s: matches", pi.name);
		for (size_t k = 0; k < pi.nmatch; k++)
			fprintf(m, "%s %s", k ? "," : "", pi.match[k]);
		fprintf(m, "; does not match");
		for (size_t k = 0; k < pi.nno_match; k++)
			fprintf(m, "%s %s", k ? "," : "", pi.no_match[k]);
		fclose(m);
		wrap(f, b, 2, 2, width);
		free(b);
	}
	section(f, "Message (its {placeholders} filled in for each finding)", ri.message, width);
	section(f, "How to fix (the same placeholders)", ri.fix, width);
	fprintf(f, "\n%sHow to silence it%s\n", c_bold(), c_off());
	snprintf(line, sizeof(line), "one run: wheelgate check --disable %s (--disable %s switches "
		 "off every rule of that name)", ri.id, ri.check);
	wrap(f, line, 2, 4, width);
	snprintf(line, sizeof(line), "always: 'disable: [%s]' in wheelgate.yaml, or 'disable = "
		 "[\"%s\"]' in [tool.wheelgate] of pyproject.toml", ri.id, ri.id);
	wrap(f, line, 2, 4, width);
	snprintf(line, sizeof(line), "for some inputs: 'ignore: [{path: \"dist/foo-*.whl\", rules: "
		 "[%s]}]' in wheelgate.yaml", ri.id);
	wrap(f, line, 2, 4, width);
	wrap(f, "known findings: wheelgate check --write-baseline base.json, then --baseline "
	     "base.json lets them pass and fails only new ones (docs/rules.md, Configuration files)",
	     2, 4, width);
	missing_fields(&ri, miss, sizeof(miss));
	if (*miss) {
		snprintf(line, sizeof(line), "(its rule file does not give: %s)", miss);
		fputc('\n', f);
		wrap(f, line, 0, 0, width);
	}
}

static json_t *jstr(const char *s)
{
	if (!s)
		return json_null();
	json_t *v = json_string(s);
	return v ? v : json_string(esc(s)); /* not UTF-8: escaped as the text is */
}

static json_t *jlist(const char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, jstr(v[i]));
	return a;
}

static json_t *explain_json(const wg_ruleset *rs, size_t i)
{
	wg_rule_info ri = WG_RULE_INFO_INIT;
	if (wg_ruleset_rule(&ri, rs, i) < 0)
		return json_null();
	char buf[512], miss[128];
	json_t *o = json_object(), *pats = json_array(), *sil = json_object(), *m = json_array();
	json_object_set_new(o, "id", jstr(ri.id));
	json_object_set_new(o, "name", jstr(ri.check));
	json_object_set_new(o, "title", jstr(ri.title));
	json_object_set_new(o, "severity", json_pack("{s:s,s:s}", "install", sev_name(ri.install),
						     "publish", sev_name(ri.publish)));
	json_object_set_new(o, "enabled", json_boolean(ri.enabled));
	json_object_set_new(o, "security", json_boolean(ri.security));
	json_object_set_new(o, "source", jstr(ri.source));
	json_object_set_new(o, "looks_at", jstr(ri.looks_at));
	json_object_set_new(o, "why", jstr(ri.why));
	json_object_set_new(o, "example", json_pack("{s:o,s:o}", "fails", jstr(ri.example_fails),
						    "passes", jstr(ri.example_passes)));
	for (size_t j = 0; j < ri.npattern_lists; j++) {
		wg_rule_patterns_info pi = WG_RULE_PATTERNS_INFO_INIT;
		if (wg_ruleset_rule_patterns(&pi, rs, i, j) < 0)
			continue;
		json_array_append_new(pats, json_pack("{s:o,s:I,s:o,s:o}", "list", jstr(pi.name),
						      "patterns", (json_int_t)pi.npatterns, "match",
						      jlist(pi.match, pi.nmatch), "no_match",
						      jlist(pi.no_match, pi.nno_match)));
	}
	json_object_set_new(o, "pattern_examples", pats);
	json_object_set_new(o, "message", jstr(ri.message));
	json_object_set_new(o, "fix", jstr(ri.fix));
	snprintf(buf, sizeof(buf), "--disable %s", ri.id);
	json_object_set_new(sil, "option", jstr(buf));
	snprintf(buf, sizeof(buf), "disable: [%s]", ri.id);
	json_object_set_new(sil, "config", jstr(buf));
	snprintf(buf, sizeof(buf), "ignore: [{path: \"dist/foo-*.whl\", rules: [%s]}]", ri.id);
	json_object_set_new(sil, "ignore", jstr(buf));
	json_object_set_new(sil, "baseline", jstr("--write-baseline base.json, then --baseline "
						  "base.json"));
	json_object_set_new(o, "silence", sil);
	missing_fields(&ri, miss, sizeof(miss));
	for (char *p = miss; *p;) {
		size_t l = strcspn(p, ",");
		json_array_append_new(m, json_stringn(p, l));
		p += l;
		while (*p == ',' || *p == ' ')
			p++;
	}
	json_object_set_new(o, "missing", m);
	return o;
}

/* Whether rule i is the one word names: its id, or its name ('_' for '-'), in any case. */
static bool names_rule(const wg_rule_info *ri, const char *word)
{
	if (!strcasecmp(word, ri->id))
		return true;
	size_t n = strlen(word);
	if (strlen(ri->check) != n)
		return false;
	for (size_t k = 0; k < n; k++) {
		char a = (char)tolower((unsigned char)word[k]), b = ri->check[k];
		if (a != b && !(a == '_' && b == '-'))
			return false;
	}
	return true;
}

/* The closest id or name to word, or NULL. */
static const char *closest(const wg_ruleset *rs, const char *word)
{
	size_t n = wg_ruleset_count(rs);
	const char **names = calloc(2 * n + 1, sizeof(*names));
	const char *best = NULL;
	char up[128];
	size_t k = 0;
	if (!names)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		wg_rule_info ri = WG_RULE_INFO_INIT;
		if (wg_ruleset_rule(&ri, rs, i) == WG_OK) {
			names[k++] = ri.id;
			names[k++] = ri.check;
		}
	}
	/* ids are upper case: compare an id-like word in upper case */
	snprintf(up, sizeof(up), "%s", word);
	bool idlike = strchr(up, '-') && isdigit((unsigned char)up[strlen(up) - 1]);
	for (char *p = up; idlike && *p; p++)
		*p = (char)toupper((unsigned char)*p);
	best = wg_suggest(idlike ? up : word, names, k);
	free(names);
	return best;
}

int cmd_explain(int argc, char **argv)
{
	enum { O_FORMAT = 256, O_RULES, O_NO_DEFAULT };
	static const struct option longopts[] = {
		{"format", required_argument, NULL, O_FORMAT},
		{"rules", required_argument, NULL, O_RULES},
		{"no-default-rules", no_argument, NULL, O_NO_DEFAULT},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	const char *format = "text";
	const char *paths[64];
	size_t npaths = 0;
	int no_default = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_FORMAT: format = optarg; break;
		case O_RULES:
			if (npaths == sizeof(paths) / sizeof(paths[0])) {
				fprintf(stderr, "wheelgate explain: at most 64 --rules\n");
				return EXIT_USAGE;
			}
			paths[npaths++] = optarg;
			break;
		case O_NO_DEFAULT: no_default = 1; break;
		case 'h': help(stdout); return EXIT_CLEAN;
		default:
			option_error("wheelgate explain", argv, optind, "h", longopts);
			return EXIT_USAGE;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json")) {
		fprintf(stderr, "wheelgate explain: --format takes text or json, not '%s'\n"
			"Try 'wheelgate explain --help'.\n", esc(format));
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "wheelgate explain: no rule given (an id such as WG-ABI-001, or a "
			"name such as hollow-wheel)\nTry 'wheelgate explain --help'.\n");
		return EXIT_USAGE;
	}
	wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
	ro.rule_paths = paths;
	ro.nrule_paths = npaths;
	ro.no_default_rules = no_default;
	wg_ruleset *rs = NULL;
	if (wg_ruleset_new(&rs, NULL, &ro) < 0) {
		fprintf(stderr, "wheelgate explain: %s\n", esc(wg_error_last()));
		return EXIT_USAGE;
	}
	/* every word must name a rule before anything is printed */
	size_t n = wg_ruleset_count(rs);
	for (int a = optind; a < argc; a++) {
		bool found = false;
		for (size_t i = 0; i < n && !found; i++) {
			wg_rule_info ri = WG_RULE_INFO_INIT;
			found = wg_ruleset_rule(&ri, rs, i) == WG_OK && names_rule(&ri, argv[a]);
		}
		if (!found) {
			const char *best = closest(rs, argv[a]);
			fprintf(stderr, "wheelgate explain: no rule '%s'", esc(argv[a]));
			if (best)
				fprintf(stderr, "; did you mean '%s'?", esc(best));
			fprintf(stderr, "\nTry 'wheelgate check --list-rules'.\n");
			wg_ruleset_free(rs);
			return EXIT_USAGE;
		}
	}
	json_t *doc = NULL, *rules = NULL;
	if (!strcmp(format, "json")) {
		doc = json_object();
		rules = json_array();
		json_object_set_new(doc, "schema", json_string("wheelgate.explain/1"));
		json_object_set_new(doc, "wheelgate_version", json_string(wg_version_string()));
	}
	size_t shown = 0;
	for (int a = optind; a < argc; a++)
		for (size_t i = 0; i < n; i++) {
			wg_rule_info ri = WG_RULE_INFO_INIT;
			if (wg_ruleset_rule(&ri, rs, i) < 0 || !names_rule(&ri, argv[a]))
				continue;
			if (rules) {
				json_array_append_new(rules, explain_json(rs, i));
			} else {
				if (shown++)
					printf("\n%s\n\n", "----");
				explain_rule_text(stdout, rs, i);
			}
		}
	int status = EXIT_CLEAN;
	if (doc) {
		json_object_set_new(doc, "rules", rules);
		if (json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
			status = EXIT_USAGE;
		fputc('\n', stdout);
		json_decref(doc);
	}
	wg_ruleset_free(rs);
	return status;
}

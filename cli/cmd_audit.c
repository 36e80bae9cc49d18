/*
 * `wheelgate audit [ENV]`: "what in this environment is broken now?" Every installed
 * distribution of ENV (each `*.dist-info` of its site directories, read through its RECORD)
 * checked in place with check's rules, formats and exit status, ENV being both what is
 * audited and the target it is judged against (as `check --env ENV`). The machinery is
 * check's (cmd_check.c, check_main); this file chooses the inputs and names them.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: wheelgate audit [options] [ENV]\n"
		"\n"
		"Checks every installed distribution of a Python environment in place (the\n"
		"files each *.dist-info's RECORD lists) with the rules of 'wheelgate check',\n"
		"judged against that environment (its python, torch, CUDA, C++ ABI and its\n"
		"libraries, as 'check --env ENV'): what is broken now, after a `uv sync`, a conda\n"
		"update or a driver change. ENV is a venv, prefix, site-packages directory or\n"
		"python executable or a name on PATH; default: $VIRTUAL_ENV, else the python3 on\n"
		"PATH (an interpreter, a pyenv or asdf shim included, is run once as 'python -I -S'\n"
		"and asked where it is; named on stderr). Each report goes by the distribution's\n"
		"name and version.\n"
		"\n"
		"The files a wheel installer (pip, uv...) installed are checked against RECORD as\n"
		"they are now: one that differs changed since it was installed (WG-REC-004: a\n"
		"warning, an error with --profile publish), one that is gone is missing from the\n"
		"installed distribution (WG-REC-005, an error); both name the file. An absent .pyc\n"
		"is no finding: Python writes and removes its caches itself.\n"
		"\n"
		"A distribution that no wheel installer installed (its INSTALLER is absent or\n"
		"names no pip, uv, poetry, pdm or pipenv: Debian's dist-packages, conda) had its\n"
		"files rewritten by its packaging after RECORD was written (stripped .so files):\n"
		"files that differ from RECORD are not findings there (ask the package manager:\n"
		"dpkg --verify), files RECORD lists that are absent are RECORD orphans (WG-REC-003,\n"
		"a warning: placed elsewhere) instead of WG-REC-005; a note after its report says\n"
		"so. Every other rule applies as to any distribution. *.egg-info distributions (no\n"
		"RECORD) cannot be audited: one line on stderr counts them (--verbose names each;\n"
		"JSON's not_audited lists them all); they do not change the exit status.\n"
		"\n");
	check_help_options(f, true);
	fprintf(f, "  --verbose          name each *.egg-info distribution not audited (stderr)\n");
	fprintf(f,
		"\n"
		"exit status: 0 when nothing blocks, 1 when a finding at or above --fail-on exists,\n"
		"2 for usage errors, an ENV that is not an environment, a --only naming no\n"
		"installed distribution and distributions that cannot be read (no RECORD...).\n");
}

/* The distribution name of a `NAME-VERSION.dist-info` path, normalized. */
static void dist_name(char *out, size_t n, const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dash = strchr(base, '-');
	size_t len = dash ? (size_t)(dash - base) : strlen(base) - strlen(".dist-info");
	if (wg_name_normalize(out, n, base, len) <= 0)
		out[0] = '\0';
}

/* audit's state, the payload of its callbacks: the distributions not audited (their paths),
 * for the JSON document; freed by cmd_audit. */
typedef struct {
	char **eggs_seen;
	const char **eggs_why;
	size_t neggs;
	bool verbose; /* --verbose: each .egg-info named on stderr, not only counted */
} audit_state;
static const char egg_why[] = "an .egg-info has no RECORD of the files it installed";

static size_t not_checked(const char *const **paths, const char *const **why, void *payload)
{
	audit_state *st = payload;
	*paths = (const char *const *)st->eggs_seen;
	*why = st->eggs_why;
	return st->neggs;
}

static void keep_egg(audit_state *st, const char *dir, const char *name)
{
	char **p = realloc(st->eggs_seen, (st->neggs + 1) * sizeof(*p));
	if (p)
		st->eggs_seen = p;
	const char **w = p ? realloc(st->eggs_why, (st->neggs + 1) * sizeof(*w)) : NULL;
	if (w)
		st->eggs_why = w;
	size_t n = strlen(dir) + strlen(name) + 2;
	char *path = w ? malloc(n) : NULL;
	if (!path)
		return; /* out of memory: named on stderr, not in the document */
	snprintf(path, n, "%.*s/%s", path_dir_len(dir), dir, name);
	st->eggs_seen[st->neggs] = path;
	st->eggs_why[st->neggs++] = egg_why;
}

/* The *.egg-info distributions of the site directories the environment's distributions live
 * in (and its site-packages): named, not audited (no RECORD lists their files). */
static size_t egg_infos(audit_state *st, const wg_env *env, const char *site, size_t total,
			bool quiet)
{
	char **dirs = calloc(total + 1, sizeof(*dirs));
	size_t nd = 0, eggs = 0;
	if (!dirs)
		return 0;
	for (size_t i = 0; i <= total; i++) {
		const char *p = i < total ? wg_env_list_item(env, WG_ENV_DISTRIBUTIONS, i) : site;
		if (!p)
			continue;
		char *d = strdup(p);
		if (!d)
			break;
		char *slash = i < total ? strrchr(d, '/') : NULL;
		if (slash)
			*slash = '\0';
		bool seen = false;
		for (size_t j = 0; j < nd && !seen; j++)
			seen = !strcmp(dirs[j], d);
		if (seen) {
			free(d);
			continue;
		}
		dirs[nd++] = d;
		DIR *dh = opendir(d);
		struct dirent *e;
		while (dh && (e = readdir(dh)))
			if (wg_has_suffix_cli(e->d_name, ".egg-info") && e->d_name[0] != '.') {
				eggs++;
				keep_egg(st, d, e->d_name);
				if (!quiet && st->verbose)
					fprintf(stderr, "wheelgate audit: %s/%s: not audited: %s\n",
						esc(d), esc(e->d_name), egg_why);
			}
		if (dh)
			closedir(dh);
	}
	for (size_t j = 0; j < nd; j++)
		free(dirs[j]);
	free(dirs);
	return eggs;
}

static int inputs(char ***paths, size_t *n, const wg_env *env, const char *const *only,
		  size_t nonly, bool quiet, void *payload)
{
	size_t total = wg_env_list_count(env, WG_ENV_DISTRIBUTIONS);
	bool *used = calloc(nonly ? nonly : 1, sizeof(*used));
	char **v = calloc(total ? total : 1, sizeof(*v));
	if (!used || !v) {
		free(used);
		free(v);
		fprintf(stderr, "wheelgate audit: out of memory\n");
		return EXIT_USAGE;
	}
	size_t k = 0;
	for (size_t i = 0; i < total; i++) {
		const char *p = wg_env_list_item(env, WG_ENV_DISTRIBUTIONS, i);
		char name[256], want[256];
		dist_name(name, sizeof(name), p);
		bool take = nonly == 0;
		for (size_t j = 0; j < nonly; j++) {
			if (wg_name_normalize(want, sizeof(want), only[j], strlen(only[j])) > 0 &&
			    !strcmp(name, want))
				take = used[j] = true;
		}
		if (take && !(v[k++] = strdup(p))) {
			fprintf(stderr, "wheelgate audit: out of memory\n");
			*paths = v;
			*n = k - 1;
			free(used);
			return EXIT_USAGE;
		}
	}
	*paths = v;
	*n = k;
	wg_env_info ei = WG_ENV_INFO_INIT;
	wg_env_get_info(&ei, env);
	int status = -1;
	for (size_t j = 0; j < nonly; j++)
		if (!used[j]) {
			fprintf(stderr, "wheelgate audit: --only %s: no installed distribution of that "
				"name in %s\n", esc(only[j]), esc(ei.site_packages));
			status = EXIT_USAGE;
		}
	free(used);
	size_t eggs = status < 0 && nonly == 0
			      ? egg_infos(payload, env, ei.site_packages, total, quiet) : 0;
	const audit_state *st = payload;
	if (status < 0 && !quiet) {
		char torch[128] = "no torch";
		if (ei.torch_version)
			snprintf(torch, sizeof(torch), "torch %s", ei.torch_version);
		fprintf(stderr, "wheelgate audit: %s (python %s%s%s, %s): %zu of %zu installed "
			"distributions\n", esc(ei.site_packages),
			ei.python_version ? esc(ei.python_version) : "unknown", ei.python ? " " : "",
			ei.python ? esc(ei.python) : "", esc(torch), k, total);
	}
	/* The .egg-info distributions counted once, not one line each (issue 29). */
	if (status < 0 && eggs && !quiet)
		fprintf(stderr, "wheelgate audit: %zu distribution%s installed as .egg-info ha%s no "
			"RECORD: not audited (%s)\n", eggs, eggs == 1 ? "" : "s",
			eggs == 1 ? "s" : "ve", st->verbose ? "named above"
			: "--verbose lists them; JSON's not_audited too");
	if (status < 0 && total == 0)
		fprintf(stderr, "wheelgate audit: %s: no installed distribution (*.dist-info) to "
			"audit\n", esc(ei.site_packages));
	return status;
}

/* "flash-attn 2.8.3" from METADATA, else the dist-info directory's name. */
static char *label(const wg_scan *scan, const char *path, void *payload)
{
	(void)payload;
	const char *name = scan ? wg_wheel_get(scan, WG_WHEEL_META_NAME) : NULL;
	const char *version = scan ? wg_wheel_get(scan, WG_WHEEL_META_VERSION) : NULL;
	char *out = NULL;
	if (name && version) {
		size_t n = strlen(name) + strlen(version) + 2;
		if ((out = malloc(n)))
			snprintf(out, n, "%s %s", name, version);
		return out;
	}
	const char *base = strrchr(path, '/');
	return strdup(base ? base + 1 : path);
}

/* What a system's packaging changed and the report therefore treats differently. */
static char *note(const wg_scan *scan, void *payload)
{
	(void)payload;
	if (!wg_scan_is_repackaged(scan))
		return NULL;
	size_t rewritten = 0, n = wg_scan_member_count(scan);
	for (size_t i = 0; i < n; i++) {
		wg_member_info mi = WG_MEMBER_INFO_INIT;
		if (wg_scan_member(&mi, scan, i) == WG_OK && mi.record == WG_RECORD_REPACKAGED)
			rewritten++;
	}
	size_t orphans = wg_wheel_list_count(scan, WG_LIST_RECORD_ORPHANS);
	if (!rewritten && !orphans)
		return NULL; /* nothing treated differently */
	const char *inst = wg_wheel_get(scan, WG_WHEEL_INSTALLER);
	char who[160];
	if (inst)
		snprintf(who, sizeof(who), "installed by '%.100s', not a wheel installer", inst);
	else
		snprintf(who, sizeof(who), "no INSTALLER: installed by a system's packages");
	char *out = malloc(640);
	if (out)
		snprintf(out, 640, "%s; %zu file%s differ%s from RECORD as its packaging rewrote "
			 "%s (not reported: verify with the package manager, e.g. dpkg --verify)%s%s",
			 who, rewritten, rewritten == 1 ? "" : "s", rewritten == 1 ? "s" : "",
			 rewritten == 1 ? "it" : "them",
			 orphans ? "; files RECORD lists but that are absent: WG-REC-003" : "",
			 orphans ? " (placed elsewhere by the packaging)" : "");
	return out;
}

int cmd_audit(int argc, char **argv)
{
	audit_state st = {0};
	const check_command audit = {"wheelgate audit", help, inputs, label, note, not_checked,
				     &st, &st.verbose};
	int status = check_main(argc, argv, &audit);
	for (size_t i = 0; i < st.neggs; i++)
		free(st.eggs_seen[i]);
	free(st.eggs_seen);
	free(st.eggs_why);
	return status;
}

/*
 * `wheelgate audit [ENV]`: "what in this environment is broken now?" Every installed
 * distribution of ENV (each `*.dist-info` of its site directories, read through its RECORD)
 * checked in place with check's rules, formats and exit status, ENV being both what is
 * audited and the target it is judged against (as `check --env ENV`). The machinery is
 * check's (cmd_check.c, check_main); this file chooses the inputs and names them.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
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
		"python executable; default: $VIRTUAL_ENV, else the python3 on PATH (named on\n"
		"stderr). Each report goes by the distribution's name and version.\n"
		"\n");
	check_help_options(f, true);
	fprintf(f,
		"\n"
		"exit status: 0 when nothing blocks, 1 when a finding at or above --fail-on exists,\n"
		"2 for usage errors, an ENV that is not an environment, a --only naming no\n"
		"installed distribution and distributions that cannot be read (no RECORD...).\n");
}

/* A name as pip compares them (PEP 503): lower case, runs of '-', '_' and '.' as one '-'. */
static void normalize(char *out, size_t n, const char *name, size_t len)
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
}

/* The distribution name of a `NAME-VERSION.dist-info` path, normalized. */
static void dist_name(char *out, size_t n, const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dash = strchr(base, '-');
	size_t len = dash ? (size_t)(dash - base) : strlen(base) - strlen(".dist-info");
	normalize(out, n, base, len);
}

static int inputs(char ***paths, size_t *n, const wg_env *env, const char *const *only,
		  size_t nonly, bool quiet)
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
			normalize(want, sizeof(want), only[j], strlen(only[j]));
			if (!strcmp(name, want))
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
	if (status < 0 && !quiet) {
		char torch[128] = "no torch";
		if (ei.torch_version)
			snprintf(torch, sizeof(torch), "torch %s", ei.torch_version);
		fprintf(stderr, "wheelgate audit: %s (python %s%s%s, %s): %zu of %zu installed "
			"distributions\n", esc(ei.site_packages),
			ei.python_version ? esc(ei.python_version) : "unknown", ei.python ? " " : "",
			ei.python ? esc(ei.python) : "", esc(torch), k, total);
	}
	if (status < 0 && total == 0)
		fprintf(stderr, "wheelgate audit: %s: no installed distribution (*.dist-info) to "
			"audit\n", esc(ei.site_packages));
	return status;
}

/* "flash-attn 2.8.3" from METADATA, else the dist-info directory's name. */
static char *label(const wg_scan *scan, const char *path)
{
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

int cmd_audit(int argc, char **argv)
{
	static const check_command audit = {"wheelgate audit", help, inputs, label};
	return check_main(argc, argv, &audit);
}

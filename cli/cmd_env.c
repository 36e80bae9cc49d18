/*
 * `wheelgate env [PATH]`: what wheelgate reads from a Python environment (without running
 * anything from it): interpreter, torch and its CUDA and C++ ABI, library directories, CUDA
 * libraries, native packages.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void print_list(const wg_env *e, wg_env_list l, const char *label)
{
	size_t n = wg_env_list_count(e, l);
	printf("%-16s%s\n", label, n ? "" : "-");
	for (size_t i = 0; i < n; i++)
		printf("  %s\n", esc(wg_env_list_item(e, l, i)));
}

int cmd_env(int argc, char **argv)
{
	static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
						 {"no-cache", no_argument, NULL, 'n'},
						 {"help", no_argument, NULL, 'h'},
						 {NULL, 0, NULL, 0}};
	bool json = false, no_cache = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'n': no_cache = true; break;
		case 'h':
			printf("usage: wheelgate env [--json] [--no-cache] [PATH]\n\n"
			       "Shows what wheelgate reads from a Python environment, without importing\n"
			       "anything from it. PATH is a venv or prefix, a site-packages directory or a\n"
			       "python executable, or a name on PATH (python3.12); by default\n"
			       "$VIRTUAL_ENV, else the python3 on PATH. An interpreter is asked where it\n"
			       "is (run once as 'python -I -S', so a pyenv or asdf shim or a wrapper script\n"
			       "leads to the real one; no site module, no .pth file of it runs).\n"
			       "'wheelgate check --env PATH' checks wheels against it.\n");
			return EXIT_CLEAN;
		default:
			option_error("wheelgate env", argv, optind, "h", longopts);
			return EXIT_USAGE;
		}
	}
	char buf[PATH_MAX], note[1200], err[1024];
	if (optind + 1 < argc) {
		fprintf(stderr, "wheelgate env: one PATH at most, not %d\nTry 'wheelgate env --help'.\n",
			argc - optind);
		return EXIT_USAGE;
	}
	int asked = env_resolve(optind < argc ? argv[optind] : NULL, buf, sizeof(buf), note,
				sizeof(note), err, sizeof(err));
	if (asked < 0) {
		fprintf(stderr, "wheelgate env: %s\n", err);
		return EXIT_USAGE;
	}
	if (asked == 0)
		err[0] = '\0';
	else
		snprintf(note, sizeof(note), "read as it is: %s", err);
	const char *path = buf;
	wg_context *ctx = NULL;
	wg_scanner *sc = NULL;
	wg_env *env = NULL;
	int status = EXIT_CLEAN;
	wg_env_options eo = WG_ENV_OPTIONS_INIT;
	if (no_cache)
		eo.cache_dir = "";
	if (wg_context_new(&ctx, NULL) < 0 || wg_scanner_new(&sc, ctx) < 0) {
		fprintf(stderr, "wheelgate: %s\n", esc(wg_error_last()));
		status = EXIT_USAGE;
	} else if (wg_env_open(&env, sc, path, &eo) < 0) {
		fprintf(stderr, "wheelgate env: %s%s%s\n", esc(wg_scanner_error(sc)),
			*err ? "; " : "", err);
		status = EXIT_USAGE;
	} else if (json) {
		char *doc = NULL;
		if (wg_env_to_json(&doc, env) == WG_OK)
			puts(doc);
		wg_free(doc);
	} else {
		wg_env_info ei = WG_ENV_INFO_INIT;
		wg_env_get_info(&ei, env);
		/* Paths and versions are the environment's: escaped like every name from outside. */
		if (*note)
			printf("%-16s%s\n", "from", note); /* escaped by env_resolve */
		printf("%-16s%s\n", "site-packages", esc(ei.site_packages));
		printf("%-16s%s%s%s\n", "python", ei.python_version ? esc(ei.python_version) : "?",
		       ei.python ? "  " : "  (no interpreter found: Py* symbols taken as provided)",
		       ei.python ? esc(ei.python) : "");
		printf("%-16s%s\n", "ext suffix", ei.ext_suffix ? esc(ei.ext_suffix) : "-");
		char sys[256];
		const char *source = NULL;
		if (wg_target_system(NULL, sys, sizeof(sys), &source))
			printf("%-16s%s  (%s)\n", "system", sys, source);
		if (ei.torch_dir)
			printf("%-16s%s (CUDA %s, C++ ABI %s)  %s\n", "torch",
			       ei.torch_version ? esc(ei.torch_version) : "?",
			       ei.torch_cuda ? esc(ei.torch_cuda) : "none",
			       ei.torch_cxx11abi == 1 ? "new (cxx11abi=1)"
			       : ei.torch_cxx11abi == 0 ? "old (cxx11abi=0)" : "unknown", esc(ei.torch_dir));
		else
			printf("%-16s-\n", "torch");
		print_list(env, WG_ENV_CUDA_LIBS, "CUDA libraries");
		print_list(env, WG_ENV_NATIVE_PACKAGES, "native packages");
		print_list(env, WG_ENV_LIB_DIRS, "library dirs");
	}
	wg_env_free(env);
	wg_scanner_free(sc);
	wg_context_free(ctx);
	return status;
}

/*
 * wheelgate serve: the service is its own executable (wheelgate-serve, built from
 * cli/serve/), so that its libraries (libmicrohttpd, libcurl and theirs) are loaded only when
 * it runs, not at every start of the CLI. This execs it with the same command line.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "helper.h"

int cmd_serve(int argc, char **argv)
{
	char path[PATH_MAX], tried[2 * PATH_MAX + 256];
	if (helper_path(HELPER_SERVE, path, sizeof(path), tried, sizeof(tried)) < 0) {
		fprintf(stderr, "wheelgate serve: the service's executable is missing: looked for "
			"%s (install wheelgate whole, or build the wheelgate-serve target)\n", esc(tried));
		return EXIT_USAGE;
	}
	/* argv is "serve" and its arguments: run as `wheelgate serve ...`, as typed. */
	char **args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args) {
		fprintf(stderr, "wheelgate serve: out of memory\n");
		return EXIT_USAGE;
	}
	static char name[] = "wheelgate";
	args[0] = name;
	memcpy(args + 1, argv, (size_t)argc * sizeof(*args));
	fflush(NULL);
	execv(path, args);
	int e = errno;
	free(args);
	fprintf(stderr, "wheelgate serve: cannot run %s: %s\n", esc(path), strerror(e));
	return EXIT_USAGE;
}

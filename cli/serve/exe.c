/*
 * wheelgate-serve: the service's executable. `wheelgate serve ...` execs it with its own
 * command line (so ps shows "wheelgate serve ..."); run directly, its arguments are serve's.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "serve.h"

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "serve")) {
		argc--;
		argv++;
	}
	output_init();
	return cmd_serve(argc, argv);
}

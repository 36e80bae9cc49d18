/*
 * `wheelgate gpus`: the GPU names that --gpu accepts (rules/gpu/cuda.yaml).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "cli.h"

int cmd_gpus(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: wheelgate gpus\n\nLists the GPU names that --gpu accepts and their "
		       "compute capability.\n--gpu also takes sm_XY (sm_89) or X.Y (8.9).\n");
		return EXIT_CLEAN;
	}
	if (argc > 1) {
		fprintf(stderr, "wheelgate gpus: takes no arguments, not '%s'\nTry 'wheelgate gpus "
			"--help'.\n", esc(argv[1]));
		return EXIT_USAGE;
	}
	wg_context *ctx;
	if (wg_context_new(&ctx, NULL) < 0) {
		fprintf(stderr, "wheelgate: %s\n", esc(wg_error_last()));
		return EXIT_USAGE;
	}
	int width = 14; /* the longest name sets the column */
	for (size_t i = 0; i < wg_gpu_known_count(ctx); i++) {
		wg_gpu g = WG_GPU_INIT;
		if (wg_gpu_known(&g, ctx, i) == WG_OK && g.name && (int)strlen(g.name) > width)
			width = (int)strlen(g.name);
	}
	for (size_t i = 0; i < wg_gpu_known_count(ctx); i++) {
		wg_gpu g = WG_GPU_INIT;
		wg_gpu_known(&g, ctx, i);
		printf("%-*s %4u.%u  sm_%u%u\n", width, g.name, g.cc_major, g.cc_minor, g.cc_major,
		       g.cc_minor);
	}
	wg_context_free(ctx);
	return EXIT_CLEAN;
}

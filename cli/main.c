/*
 * wheelgate: the command table and global options.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} command;

/* One row per command; each lives in cmd_<name>.c. */
static const command commands[] = {
	{"check", cmd_check, "say what would break: apply the rules for a target environment"},
	{"select", cmd_select, "pick the variant of a release that will work here, by content"},
	{"scan", cmd_scan, "judge many wheels (paths, directories, lists) as JSON Lines, resumable"},
	{"matrix", cmd_matrix, "which torch releases each extension wheel loads with (a table)"},
	{"audit", cmd_audit, "check every installed distribution of an environment in place"},
	{"inspect", cmd_inspect, "show what a wheel, ELF object or directory contains"},
	{"env", cmd_env, "show what wheelgate reads from a Python environment"},
	{"serve", cmd_serve, "answer checks over HTTP: POST /v1/check with a wheel as the body"},
	{"gpus", cmd_gpus, "list the GPU names --gpu accepts, with their compute capability"},
	{"explain", cmd_explain, "explain a rule: what it looks at, why it matters, how to fix it"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wheelgate [--version] [--help] <command> [<args>]\n"
		"\n"
		"wheelgate catches broken CUDA/C++ Python wheels before they are installed:\n"
		"C++ std::string ABI mismatches with torch, hollow wheels, GPU code that cannot\n"
		"run on the target GPU, and the metadata and integrity problems around them.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'wheelgate help <command>' (or 'wheelgate <command> --help') explains a "
		"command.\n");
}

/* The command named name, or NULL with "wheelgate: unknown command" and the closest on
 * stderr. */
static const command *find_command(const char *name)
{
	const char *names[NCOMMANDS];
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!strcmp(name, commands[i].name))
			return &commands[i];
		names[i] = commands[i].name;
	}
	const char *best = wg_suggest(name, names, NCOMMANDS);
	fprintf(stderr, "wheelgate: unknown command '%s'", esc(name));
	if (best)
		fprintf(stderr, "; did you mean '%s'?", best);
	fprintf(stderr, "\nTry 'wheelgate --help'.\n");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "wheelgate: no command given\nTry 'wheelgate --help'.\n");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    (!strcmp(argv[1], "help") && argc == 2)) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("wheelgate %s\n", wg_version_string());
		return 0;
	}
	output_init();
	if (!strcmp(argv[1], "help")) {
		/* help COMMAND: that command's --help, on stdout */
		if (argc > 3) {
			fprintf(stderr, "wheelgate help: one command at most\nTry 'wheelgate --help'.\n");
			return EXIT_USAGE;
		}
		const command *c = find_command(argv[2]);
		char *args[] = {argv[2], "--help", NULL};
		return c ? c->run(2, args) : EXIT_USAGE;
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "wheelgate: unknown option '%s'\nTry 'wheelgate --help'.\n",
			esc(argv[1]));
		return EXIT_USAGE;
	}
	const command *c = find_command(argv[1]);
	return c ? c->run(argc - 1, argv + 1) : EXIT_USAGE;
}

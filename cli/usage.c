/*
 * Usage errors as every command says them: one line naming what is wrong (with the closest
 * option where one is close) and a hint, never the whole help.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <getopt.h>
#include <string.h>

#include "cli.h"

void option_error(const char *prog, char **argv, int optind_now, const char *optstring,
		  const struct option *longopts)
{
	/* The word getopt stopped at: the one before optind (the option, also when its value is
	 * missing). */
	const char *arg = optind_now > 0 ? argv[optind_now - 1] : NULL;
	if (arg && !strncmp(arg, "--", 2)) {
		char word[128];
		size_t n = strcspn(arg + 2, "=");
		snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1),
			 arg + 2);
		const char *names[128];
		size_t k = 0, hits = 0;
		const struct option *known = NULL;
		for (const struct option *o = longopts; o->name && k < 128; o++) {
			names[k++] = o->name;
			if (!strcmp(o->name, word))
				known = o;
			else if (word[0] && !strncmp(o->name, word, strlen(word)))
				hits++;
		}
		if (known)
			fprintf(stderr, "%s: option '--%s' %s\n", prog, esc(word),
				known->has_arg == required_argument ? "needs a value" : "takes no value");
		else if (hits > 1)
			fprintf(stderr, "%s: option '--%s' is ambiguous (it starts %zu options)\n", prog,
				esc(word), hits);
		else {
			const char *best = wg_suggest(word, names, k);
			fprintf(stderr, "%s: unknown option '--%s'", prog, esc(word));
			if (best)
				fprintf(stderr, "; did you mean '--%s'?", best);
			fputc('\n', stderr);
		}
	} else if (optopt > 0 && optopt < 256) {
		const char *p = strchr(optstring, optopt);
		fprintf(stderr, "%s: %s '-%c'%s\n", prog, p ? "option" : "unknown option", optopt,
			p && p[1] == ':' ? " needs a value" : "");
	} else {
		fprintf(stderr, "%s: unknown option '%s'\n", prog, arg ? esc(arg) : "?");
	}
	fprintf(stderr, "Try '%s --help'.\n", prog);
}

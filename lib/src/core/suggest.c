/*
 * "Did you mean": the nearest of a list of names to a mistyped one, by edit distance
 * (case-insensitive), for rule selectors, commands and options.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static bool same_letter(char x, char y)
{
	return tolower((unsigned char)x) == tolower((unsigned char)y);
}

size_t wg_edit_distance(const char *a, const char *b, bool (*same)(char x, char y))
{
	size_t la = strlen(a), lb = strlen(b), row[65];
	if (la > 64 || lb > 64)
		return (size_t)-1;
	if (!same)
		same = same_letter;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + !same(a[i - 1], b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

WG_API const char *wg_suggest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bestd = (size_t)-1;
	if (!word || !names)
		return NULL;
	size_t len = strlen(word);
	/* Close enough to be a typo: 1 edit for short words, up to a third of the word. */
	size_t limit = len <= 3 ? 1 : len / 3 > 2 ? len / 3 : 2;
	for (size_t i = 0; i < n; i++) {
		if (!names[i])
			continue;
		size_t d = wg_edit_distance(word, names[i], NULL);
		if (d < bestd) {
			bestd = d;
			best = names[i];
		}
	}
	return bestd <= limit ? best : NULL;
}

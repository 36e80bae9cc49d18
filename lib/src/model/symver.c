/*
 * Symbol version names (GLIBC_2.38, GLIBCXX_3.4.32): a family and up to four numbers, parsed
 * and compared; read by the runtime versions (sysver.c) and the platform policies (policy.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

bool wg_ver_parse(const char *v, char *family, size_t n, unsigned num[4], int *nn)
{
	const char *us = strrchr(v, '_');
	if (!us || us == v || !us[1] || us[1] < '0' || us[1] > '9')
		return false;
	snprintf(family, n, "%.*s", (int)(us - v), v);
	*nn = 0;
	for (const char *p = us + 1; *p && *nn < 4;) {
		char *end;
		unsigned long x = strtoul(p, &end, 10);
		if (end == p)
			return false;
		num[(*nn)++] = (unsigned)x;
		if (*end == '.')
			p = end + 1;
		else if (!*end)
			break;
		else
			return false;
	}
	return *nn > 0;
}

int wg_ver_cmp(const unsigned *a, int na, const unsigned *b, int nb)
{
	for (int i = 0; i < 4; i++) {
		unsigned x = i < na ? a[i] : 0, y = i < nb ? b[i] : 0;
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/*
 * Finding the CLI's helpers from the running executable's own path (/proc/self/exe), so that
 * an installed tree works from any prefix and the build tree works before installation.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "helper.h"

#ifndef WG_HELPER_REL
#define WG_HELPER_REL "../libexec/wheelgate"
#endif

int helper_path(const char *name, char *out, size_t outlen, char *tried, size_t triedlen)
{
	char self[PATH_MAX], installed[PATH_MAX + 64], beside[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		snprintf(tried, triedlen, "%s (the executable's own path is unknown: /proc/self/exe)",
			 name);
		return -1;
	}
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(installed, sizeof(installed), "%s/%s/%s", self, WG_HELPER_REL, name);
	snprintf(beside, sizeof(beside), "%s/%s", self, name);
	const char *found = access(installed, F_OK) == 0 ? installed
			    : access(beside, F_OK) == 0   ? beside
							  : NULL;
	if (!found || strlen(found) >= outlen) {
		snprintf(tried, triedlen, "%s or %s", installed, beside);
		return -1;
	}
	memcpy(out, found, strlen(found) + 1);
	return 0;
}

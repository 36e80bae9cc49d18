/*
 * The CLI's helpers, installed with it but loaded only by the commands that use them: the
 * service's executable (`wheelgate serve` execs it) and the TOML module (dlopen'ed when a
 * pyproject.toml is read). See docs/startup.md.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_HELPER_H
#define WG_CLI_HELPER_H

#include <stddef.h>

#define HELPER_SERVE "wheelgate-serve"
#define HELPER_TOML "wheelgate-toml.so"
#define HELPER_FETCH "wheelgate-fetch.so"

/* The path of helper name: in WG_HELPER_REL from the executable's directory (installed:
 * bin/../libexec/wheelgate), else next to the executable (the build tree). 0 with the path in
 * out; -1 when neither exists, with the paths looked at in tried ("A or B"). */
int helper_path(const char *name, char *out, size_t outlen, char *tried, size_t triedlen);

#endif

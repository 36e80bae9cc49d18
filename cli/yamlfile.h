/*
 * The command line's one YAML file reader (libyaml's document API): wheelgate.yaml
 * (config.c) and serve's config (serve/config.c). It opens only a regular file (a FIFO or a
 * device is refused, never waited on), bounds what it reads, refuses aliases when asked (a
 * small file may not expand into a large tree) and a second document; the caller words the
 * message from what went wrong and where.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_YAMLFILE_H
#define WG_CLI_YAMLFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

typedef struct {
	size_t max;        /* the most bytes the file may have (0: no bound) */
	bool no_aliases;   /* an alias (*name) is an error */
	bool one_document; /* a second document is an error */
} yaml_file_options;

/* Why a file was not loaded. */
typedef struct {
	int errnum;          /* it could not be opened or read: errno (ENOENT: absent, EISDIR: a
			      * directory, EINVAL: not a regular file); else 0 */
	size_t line, column; /* where (1-based), 0 0: the file as a whole */
	char msg[768];       /* what, in words */
	/* a syntax error as libyaml says it: its problem and where it saw it (1-based) */
	char problem[256];
	size_t problem_line, problem_column;
} yaml_file_error;

/** Loads the file at path into *doc (yaml_document_delete it; its root is NULL for an empty
 * file); mode (may be NULL): the file's permission bits. 0, or -1 with *e filled. */
int yaml_file_load(yaml_document_t *doc, const char *path, const yaml_file_options *o,
		   unsigned *mode, yaml_file_error *e);

#endif

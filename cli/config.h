/*
 * The check command's configuration, from `wheelgate.yaml` or `[tool.wheelgate]` in
 * pyproject.toml, then the command line (lists add up, single values override).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_CONFIG_H
#define WG_CLI_CONFIG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CFG_MAX 64

typedef struct {
	char *rules[CFG_MAX];
	size_t nrules;
	char *disable[CFG_MAX];
	size_t ndisable;
	char *enable[CFG_MAX];
	size_t nenable;
	char *gpus[CFG_MAX];
	size_t ngpus;
	char *targets[CFG_MAX]; /* --target specs, applied in order */
	size_t ntargets;
	char *ignores[CFG_MAX]; /* ignore: each "GLOB\nSELECTOR,SELECTOR" */
	size_t nignores;
	char *baseline;         /* baseline: FILE (--baseline) */
	char *fail_on;
	char *profile;
	char *format;
	char *source; /* the file it came from, for messages */
} cli_config;

/* Adds one key's value (a string, or one list item) to cfg; -1 for an unknown key. */
int cfg_add(cli_config *cfg, const char *key, const char *value);
/** cfg_add for each comma-separated value of arg ("WG-SYS,WG-TAG-*"); -1 when full. */
int cfg_add_csv(cli_config *cfg, const char *key, const char *arg);
/** "error" | "warning" | "info" -> the wg_severity; -1 for anything else. */
int cfg_severity(const char *s);
void cfg_free(cli_config *cfg);
/* Adds an ignore entry: inputs matching glob skip the findings of rules[0..n) (selectors). */
int cfg_ignore_entry(cli_config *cfg, const char *glob, const char *const *rules, size_t n);

/* 0 when read (or absent: *found = 0), -1 with the reason in err ("file:line:col: ..."). */
int cfg_read_yaml(cli_config *cfg, const char *path, int *found, char *err, size_t errlen);
int cfg_read_pyproject(cli_config *cfg, const char *path, int *found, char *err, size_t errlen);
/* The configuration of the current directory, else the nearest above it (like ruff): in each
 * directory wheelgate.yaml, else pyproject.toml with [tool.wheelgate]; the search stops after a
 * directory holding .git, or at /. Relative rule paths of a file above are made relative to its
 * directory. Same return as cfg_read_yaml; cfg->source names the file. */
int cfg_find(cli_config *cfg, int *found, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

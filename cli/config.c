/*
 * wheelgate.yaml: a mapping of the check options (rules, disable, enable, gpu, target,
 * fail-on, format), each a string or a list of strings, read with libyaml; pyproject.toml's
 * [tool.wheelgate] read by the TOML module (config_toml.cpp), loaded only then.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "config.h"
#include "helper.h"
#include "yamlfile.h"
#include "wheelgate.h"

static int push(char **list, size_t *n, const char *v)
{
	if (*n == CFG_MAX)
		return -1;
	list[(*n)++] = strdup(v);
	return 0;
}

int cfg_add(cli_config *cfg, const char *key, const char *value)
{
	if (!strcmp(key, "rules"))
		return push(cfg->rules, &cfg->nrules, value);
	if (!strcmp(key, "disable"))
		return push(cfg->disable, &cfg->ndisable, value);
	if (!strcmp(key, "enable"))
		return push(cfg->enable, &cfg->nenable, value);
	if (!strcmp(key, "gpu") || !strcmp(key, "gpus"))
		return push(cfg->gpus, &cfg->ngpus, value);
	if (!strcmp(key, "target"))
		return push(cfg->targets, &cfg->ntargets, value);
	if (!strcmp(key, "ignore"))
		return strchr(value, '\n') ? push(cfg->ignores, &cfg->nignores, value) : -1;
	if (!strcmp(key, "baseline")) {
		free(cfg->baseline);
		cfg->baseline = strdup(value);
		return 0;
	}
	if (!strcmp(key, "fail-on") || !strcmp(key, "fail_on")) {
		free(cfg->fail_on);
		cfg->fail_on = strdup(value);
		return 0;
	}
	if (!strcmp(key, "profile")) {
		free(cfg->profile);
		cfg->profile = strdup(value);
		return 0;
	}
	if (!strcmp(key, "format")) {
		free(cfg->format);
		cfg->format = strdup(value);
		return 0;
	}
	return -1;
}

int cfg_add_csv(cli_config *cfg, const char *key, const char *arg)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", arg);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (cfg_add(cfg, key, t) < 0)
			return -1;
	return 0;
}

int cfg_severity(const char *s)
{
	return !strcmp(s, "error") ? WG_SEV_ERROR : !strcmp(s, "warning") ? WG_SEV_WARNING
					       : !strcmp(s, "info") ? WG_SEV_INFO : -1;
}

void cfg_free(cli_config *cfg)
{
	char **lists[] = {cfg->rules, cfg->disable, cfg->enable, cfg->gpus, cfg->targets,
			  cfg->ignores};
	size_t ns[] = {cfg->nrules, cfg->ndisable, cfg->nenable, cfg->ngpus, cfg->ntargets,
		       cfg->nignores};
	for (size_t l = 0; l < 6; l++)
		for (size_t i = 0; i < ns[l]; i++)
			free(lists[l][i]);
	free(cfg->baseline);
	free(cfg->fail_on);
	free(cfg->profile);
	free(cfg->format);
	free(cfg->source);
	memset(cfg, 0, sizeof(*cfg));
}

/* A file named by the user opened for reading only when it is a regular file: a FIFO or a
 * device in its place is refused, never waited on or read forever. */
static FILE *fopen_regular(const char *path, int *error)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	FILE *f = NULL;
	*error = 0;
	if (fd < 0) {
		*error = errno;
		return NULL;
	}
	if (fstat(fd, &st) != 0)
		*error = errno;
	else if (!S_ISREG(st.st_mode))
		*error = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	else if (!(f = fdopen(fd, "rb")))
		*error = errno;
	if (!f)
		close(fd);
	return f;
}

/* A configuration file opened with fopen_regular; NULL with *rc 0 when there is none, -1
 * (err says why) when it cannot be read. */
static FILE *open_config(const char *path, char *err, size_t errlen, int *rc)
{
	int why;
	FILE *f = fopen_regular(path, &why);
	*rc = 0;
	if (!f && why != ENOENT) {
		snprintf(err, errlen, "%s: %s", path,
			 why == EINVAL ? "not a regular file" : strerror(why));
		*rc = -1;
	}
	return f;
}

int cfg_ignore_entry(cli_config *cfg, const char *glob, const char *const *rules, size_t n)
{
	size_t len = strlen(glob) + 2;
	for (size_t i = 0; i < n; i++)
		len += strlen(rules[i]) + 1;
	char *v = malloc(len);
	if (!v)
		return -1;
	size_t o = (size_t)snprintf(v, len, "%s\n", glob);
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(v + o, len - o, "%s%s", i ? "," : "", rules[i]);
	int rc = cfg_add(cfg, "ignore", v);
	free(v);
	return rc;
}

/* ignore: [{path: GLOB, rules: [SELECTOR...] or SELECTOR}]; -1 with err naming the place. */
static int yaml_ignores(cli_config *cfg, yaml_document_t *doc, yaml_node_t *v, const char *path,
			char *err, size_t errlen)
{
	for (yaml_node_item_t *it = v && v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start
								       : NULL;
	     it && it < v->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(doc, *it);
		const char *glob = NULL, *rules[CFG_MAX];
		size_t n = 0;
		bool ok = e && e->type == YAML_MAPPING_NODE;
		for (yaml_node_pair_t *pr = ok ? e->data.mapping.pairs.start : NULL;
		     pr && pr < e->data.mapping.pairs.top && ok; pr++) {
			yaml_node_t *k = yaml_document_get_node(doc, pr->key);
			yaml_node_t *x = yaml_document_get_node(doc, pr->value);
			const char *key = k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
			if (!strcmp(key, "path") && x && x->type == YAML_SCALAR_NODE) {
				glob = (const char *)x->data.scalar.value;
			} else if (!strcmp(key, "rules") && x && x->type == YAML_SCALAR_NODE) {
				rules[n++] = (const char *)x->data.scalar.value;
			} else if (!strcmp(key, "rules") && x && x->type == YAML_SEQUENCE_NODE) {
				for (yaml_node_item_t *r = x->data.sequence.items.start;
				     r < x->data.sequence.items.top && ok; r++) {
					yaml_node_t *y = yaml_document_get_node(doc, *r);
					ok = y && y->type == YAML_SCALAR_NODE && n < CFG_MAX;
					if (ok)
						rules[n++] = (const char *)y->data.scalar.value;
				}
			} else {
				ok = false;
			}
		}
		if (!ok || !glob || !n || cfg_ignore_entry(cfg, glob, rules, n) < 0) {
			snprintf(err, errlen, "%s:%zu:%zu: ignore: each entry is {path: GLOB, rules: "
				 "[RULE, ...]} (a rule: an id, id prefix, name or glob)", path,
				 (e ? e->start_mark.line : 0) + 1, (e ? e->start_mark.column : 0) + 1);
			return -1;
		}
	}
	if (!v || v->type != YAML_SEQUENCE_NODE) {
		snprintf(err, errlen, "%s:%zu:%zu: ignore: a list of {path: GLOB, rules: [RULE, ...]}",
			 path, (v ? v->start_mark.line : 0) + 1, (v ? v->start_mark.column : 0) + 1);
		return -1;
	}
	return 0;
}

int cfg_read_yaml(cli_config *cfg, const char *path, int *found, char *err, size_t errlen)
{
	*found = 0;
	yaml_document_t doc;
	yaml_file_error ye;
	const yaml_file_options yo = {0, false, false};
	if (yaml_file_load(&doc, path, &yo, NULL, &ye) < 0) {
		if (ye.errnum == ENOENT)
			return 0;
		*found = !ye.errnum;
		if (ye.errnum)
			snprintf(err, errlen, "%s: %s", path,
				 ye.errnum == EINVAL ? "not a regular file" : strerror(ye.errnum));
		else if (ye.problem[0])
			snprintf(err, errlen, "%s:%zu:%zu: %s", path, ye.problem_line,
				 ye.problem_column, ye.problem);
		else
			snprintf(err, errlen, "%s: %s", path, ye.msg);
		return -1;
	}
	*found = 1;
	int rc = 0;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "%s:%zu:%zu: expected a mapping of options", path,
			 root->start_mark.line + 1, root->start_mark.column + 1);
		rc = -1;
	}
	for (yaml_node_pair_t *pr = root && !rc ? root->data.mapping.pairs.start : NULL;
	     pr && pr < root->data.mapping.pairs.top && !rc; pr++) {
		yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
		const char *key = k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "?";
		if (!strcmp(key, "ignore")) {
			rc = yaml_ignores(cfg, &doc, v, path, err, errlen);
			if (rc)
				break;
		} else if (v && v->type == YAML_SCALAR_NODE) {
			rc = cfg_add(cfg, key, (const char *)v->data.scalar.value);
		} else if (v && v->type == YAML_SEQUENCE_NODE) {
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top && !rc; it++) {
				yaml_node_t *x = yaml_document_get_node(&doc, *it);
				rc = x && x->type == YAML_SCALAR_NODE
					     ? cfg_add(cfg, key, (const char *)x->data.scalar.value)
					     : -1;
			}
		} else {
			rc = -1;
		}
		if (rc)
			snprintf(err, errlen, "%s:%zu:%zu: '%s': unknown option or not a string/list "
				 "(options: rules, disable, enable, gpu, target, fail-on, format, profile, ignore, "
				 "baseline)", path,
				 k ? k->start_mark.line + 1 : 0, k ? k->start_mark.column + 1 : 0, key);
	}
	yaml_document_delete(&doc);
	if (!rc)
		cfg->source = strdup(path);
	return rc;
}

/* A pyproject.toml larger than this is refused before it is read. */
#define PYPROJECT_MAX (4u << 20)

typedef int (*toml_reader)(cli_config *cfg, const char *path, const char *text, size_t len,
			   int *found, char *err, size_t errlen,
			   int (*add)(cli_config *, const char *, const char *));

/* The TOML module's reader, loaded once (it stays loaded: the process is short-lived). */
static toml_reader load_toml(const char *path, char *err, size_t errlen)
{
	static toml_reader reader;
	char mod[PATH_MAX], tried[2 * PATH_MAX + 256];
	if (reader)
		return reader;
	if (helper_path(HELPER_TOML, mod, sizeof(mod), tried, sizeof(tried)) < 0) {
		snprintf(err, errlen, "%s: reading it needs wheelgate's TOML module, which is "
			 "missing: looked for %s", path, tried);
		return NULL;
	}
	void *h = dlopen(mod, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "%s: cannot load wheelgate's TOML module: %s", path, dlerror());
		return NULL;
	}
	reader = (toml_reader)dlsym(h, "wg_toml_read_pyproject_v1");
	if (!reader)
		snprintf(err, errlen, "%s: %s is not this wheelgate's TOML module (no "
			 "wg_toml_read_pyproject_v1)", path, mod);
	return reader;
}

int cfg_read_pyproject(cli_config *cfg, const char *path, int *found, char *err, size_t errlen)
{
	*found = 0;
	int rc;
	FILE *f = open_config(path, err, errlen, &rc);
	if (!f)
		return rc;
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	rc = -1;
	if (fstat(fileno(f), &st) != 0 || st.st_size < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	} else if ((uint64_t)st.st_size > PYPROJECT_MAX) {
		snprintf(err, errlen, "%s: %lld bytes, more than the %u a pyproject.toml may have",
			 path, (long long)st.st_size, PYPROJECT_MAX);
	} else if (!(text = malloc((size_t)st.st_size + 1))) {
		snprintf(err, errlen, "%s: out of memory", path);
	} else {
		/* Read to the end, but never past the bound (the file may grow meanwhile). */
		len = fread(text, 1, (size_t)st.st_size + 1, f);
		if (ferror(f))
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		else if (len > (size_t)st.st_size)
			snprintf(err, errlen, "%s: changed while it was read", path);
		else
			rc = 0;
	}
	fclose(f);
	toml_reader reader = rc == 0 ? load_toml(path, err, errlen) : NULL;
	rc = reader ? reader(cfg, path, text ? text : "", len, found, err, errlen, cfg_add) : -1;
	free(text);
	if (rc == 0 && *found && !(cfg->source = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		rc = -1;
	}
	return rc;
}

/* Rule paths relative to the directory of the file they came from (dir: "" for the current). */
static int rebase_rules(cli_config *cfg, size_t from, const char *dir)
{
	for (size_t i = from; i < cfg->nrules && *dir; i++) {
		if (cfg->rules[i][0] == '/')
			continue;
		size_t n = strlen(dir) + strlen(cfg->rules[i]) + 2;
		char *p = malloc(n);
		if (!p)
			return -1;
		snprintf(p, n, "%s/%s", dir, cfg->rules[i]);
		free(cfg->rules[i]);
		cfg->rules[i] = p;
	}
	return 0;
}

int cfg_find(cli_config *cfg, int *found, char *err, size_t errlen)
{
	char cwd[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 32];
	*found = 0;
	if (!getcwd(cwd, sizeof(cwd))) {
		/* No name for where we are (removed, or too deep): only this directory is read. */
		int rc = cfg_read_yaml(cfg, "wheelgate.yaml", found, err, errlen);
		return rc == 0 && !*found ? cfg_read_pyproject(cfg, "pyproject.toml", found, err, errlen)
					  : rc;
	}
	snprintf(dir, sizeof(dir), "%s", cwd);
	for (;;) {
		/* Paths in the current directory stay relative, as they always were. */
		bool here = !strcmp(dir, cwd);
		const char *base = here ? "" : dir;
		size_t nrules = cfg->nrules;
		int rc;
		snprintf(path, sizeof(path), "%s%s%s", base, here ? "" : "/", "wheelgate.yaml");
		if ((rc = cfg_read_yaml(cfg, path, found, err, errlen)) < 0 || *found)
			return rc < 0 ? rc : rebase_rules(cfg, nrules, base);
		snprintf(path, sizeof(path), "%s%s%s", base, here ? "" : "/", "pyproject.toml");
		if ((rc = cfg_read_pyproject(cfg, path, found, err, errlen)) < 0 || *found)
			return rc < 0 ? rc : rebase_rules(cfg, nrules, base);
		/* A repository's top is as far as one looks, like the filesystem's root. */
		struct stat st;
		snprintf(path, sizeof(path), "%s/.git", !strcmp(dir, "/") ? "" : dir);
		if (stat(path, &st) == 0 || !strcmp(dir, "/"))
			return 0;
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			dir[1] = '\0';
		else if (slash)
			*slash = '\0';
		else
			return 0;
	}
}

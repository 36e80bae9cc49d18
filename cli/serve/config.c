/*
 * The YAML config of `wheelgate serve` (libyaml's document API) and its fleet of targets.
 * Every problem is "FILE:LINE:COL: problem"; unknown keys, wrong types and repeated keys are
 * errors, never ignored. See docs/serve.md, "Configuration".
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "../yamlfile.h"
#include "serve.h"

/* A config is a page of settings: anything larger is a mistake. */
#define CONFIG_MAX (1U << 20)
/* A token file's first line. */
#define TOKEN_MAX (16U * 1024)
#define TARGETS_MAX 64
#define FETCH_ALLOW_MAX 256

typedef struct {
	const char *path;
	yaml_document_t *doc;
	char *err;
	size_t errlen;
	bool has_token; /* a token written in the file itself */
} loader;

static int fail(loader *L, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(loader *L, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(L->err, L->errlen, "%s:%zu:%zu: %s", esc(L->path), n ? n->start_mark.line + 1 : 1,
		 n ? n->start_mark.column + 1 : 1, msg);
	return -1;
}

static yaml_node_t *node(loader *L, int i)
{
	return yaml_document_get_node(L->doc, i);
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int want_scalar(loader *L, const yaml_node_t *n, const char *key, const char *what)
{
	if (n->type != YAML_SCALAR_NODE)
		return fail(L, n, "%s takes %s, not a %s", key, what,
			    n->type == YAML_MAPPING_NODE ? "mapping" : "list");
	return 0;
}

static int get_str(loader *L, const yaml_node_t *n, const char *key, char **dst)
{
	if (want_scalar(L, n, key, "a string") < 0)
		return -1;
	if (!*scalar(n))
		return fail(L, n, "%s needs a value", key);
	if (strlen(scalar(n)) != n->data.scalar.length)
		return fail(L, n, "%s: a NUL byte in the value", key);
	char *c = strdup(scalar(n));
	if (!c)
		return fail(L, n, "out of memory");
	free(*dst);
	*dst = c;
	return 0;
}

static int get_long(loader *L, const yaml_node_t *n, const char *key, long lo, long hi, long *out)
{
	if (want_scalar(L, n, key, "a number") < 0)
		return -1;
	char *end;
	errno = 0;
	long v = strtol(scalar(n), &end, 10);
	if (errno || end == scalar(n) || *end || v < lo || v > hi)
		return fail(L, n, "%s takes a number from %ld to %ld, not '%s'", key, lo, hi,
			    esc(scalar(n)));
	*out = v;
	return 0;
}

static int get_bool(loader *L, const yaml_node_t *n, const char *key, bool *out)
{
	if (want_scalar(L, n, key, "true or false") < 0)
		return -1;
	static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
	for (size_t i = 0; i < 3; i++) {
		if (!strcasecmp(scalar(n), yes[i]) || !strcasecmp(scalar(n), no[i])) {
			*out = !strcasecmp(scalar(n), yes[i]);
			return 0;
		}
	}
	return fail(L, n, "%s takes true or false, not '%s'", key, esc(scalar(n)));
}

/* The first line of a secret file (a token), warning when others may read it. */
static int read_token_file(loader *L, const yaml_node_t *n, const char *key, char **dst)
{
	if (want_scalar(L, n, key, "a path") < 0)
		return -1;
	const char *p = scalar(n);
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return fail(L, n, "%s: %s: %s", key, esc(p), strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)TOKEN_MAX) {
		close(fd);
		return fail(L, n, "%s: %s is not a regular file of at most %u bytes", key, esc(p),
			    TOKEN_MAX);
	}
	if (st.st_mode & (S_IRGRP | S_IROTH))
		fprintf(stderr, "wheelgate serve: warning: %s: %s is readable by others (mode %03o): "
			"chmod 600 it\n", key, esc(p), (unsigned)(st.st_mode & 0777));
	char buf[TOKEN_MAX + 1];
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fd, buf + got, TOKEN_MAX - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			return fail(L, n, "%s: %s: %s", key, esc(p), strerror(e));
		}
		if (r == 0 || (got += (size_t)r) == TOKEN_MAX)
			break;
	}
	close(fd);
	buf[got] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!*buf)
		return fail(L, n, "%s: %s: the first line is empty (it holds the token)", key, esc(p));
	char *c = strdup(buf);
	memset(buf, 0, sizeof(buf));
	if (!c)
		return fail(L, n, "out of memory");
	free(*dst);
	*dst = c;
	return 0;
}

/* A mapping's pairs, refusing keys that are not plain strings and repeated keys. */
static int check_keys(loader *L, const yaml_node_t *map, const char *what)
{
	if (map->type != YAML_MAPPING_NODE)
		return fail(L, map, "%s must be a mapping (key: value)", what);
	for (yaml_node_pair_t *a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top;
	     a++) {
		yaml_node_t *k = node(L, a->key);
		if (!k || k->type != YAML_SCALAR_NODE)
			return fail(L, k ? k : map, "%s: a key must be a plain value, not a list or "
				    "a mapping", what);
		if (!node(L, a->value))
			return fail(L, k, "%s: '%s' has no value", what, esc(scalar(k)));
		for (yaml_node_pair_t *b = map->data.mapping.pairs.start; b < a; b++) {
			yaml_node_t *kb = node(L, b->key);
			if (!strcmp(scalar(kb), scalar(k)))
				return fail(L, k, "%s: '%s' is given twice (first at line %zu)", what,
					    esc(scalar(k)), kb->start_mark.line + 1);
		}
	}
	return 0;
}

/* A target's name becomes a query value (?fleet=NAME) and a JSON string: kept plain. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 64)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			return false;
	return true;
}

static int append(char **spec, const char *key, const char *value)
{
	size_t old = *spec ? strlen(*spec) : 0, add = strlen(key) + 1 + strlen(value);
	char *s = realloc(*spec, old + add + 2);
	if (!s)
		return -1;
	snprintf(s + old, add + 2, "%s%s=%s", old ? "," : "", key, value);
	*spec = s;
	return 0;
}

/* The facts a target may state one by one (those of --target). */
static const char *const FACTS[] = {"python", "torch", "cxx11abi", "cuda", "glibc", "glibcxx",
				    "cxxabi", "gcc", "platform"};

static int load_target(loader *L, const yaml_node_t *k, const yaml_node_t *v, serve_target *t)
{
	const char *name = scalar(k);
	if (!valid_name(name))
		return fail(L, k, "targets: '%s' is not a target name (letters, digits, '-', '_', "
			    "'.'; at most 64)", esc(name));
	if (!(t->name = strdup(name)))
		return fail(L, k, "out of memory");
	char what[100];
	snprintf(what, sizeof(what), "targets: %s", name);
	if (check_keys(L, v, what) < 0)
		return -1;
	const yaml_node_t *spec_node = NULL;
	char *facts = NULL;
	int rc = 0;
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; rc == 0 &&
	     p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *kk = node(L, p->key), *vv = node(L, p->value);
		const char *key = scalar(kk);
		char full[160];
		snprintf(full, sizeof(full), "targets: %s: %s", name, esc(key));
		if (!strcmp(key, "spec")) {
			rc = get_str(L, vv, full, &t->spec);
			spec_node = vv;
		} else if (!strcmp(key, "site_packages")) {
			rc = get_str(L, vv, full, &t->site_packages);
		} else if (!strcmp(key, "gpus")) {
			if (vv->type == YAML_SCALAR_NODE) {
				rc = fail(L, vv, "%s takes a list ([H100, sm_90])", full);
				break;
			}
			if (vv->type != YAML_SEQUENCE_NODE) {
				rc = fail(L, vv, "%s takes a list, not a mapping", full);
				break;
			}
			size_t n = (size_t)(vv->data.sequence.items.top - vv->data.sequence.items.start);
			if (n > WG_MAX_GPUS) {
				rc = fail(L, vv, "%s: at most %d GPUs", full, WG_MAX_GPUS);
				break;
			}
			if (n && !(t->gpus = calloc(n, sizeof(*t->gpus)))) {
				rc = fail(L, vv, "out of memory");
				break;
			}
			for (size_t i = 0; rc == 0 && i < n; i++) {
				yaml_node_t *g = node(L, vv->data.sequence.items.start[i]);
				rc = g ? get_str(L, g, full, &t->gpus[i]) : fail(L, vv, "%s: no item", full);
				t->ngpus += rc == 0;
			}
		} else {
			size_t i;
			for (i = 0; i < sizeof(FACTS) / sizeof(*FACTS) && strcmp(key, FACTS[i]); i++)
				;
			if (i == sizeof(FACTS) / sizeof(*FACTS)) {
				rc = fail(L, kk, "%s: unknown key (spec, site_packages, gpus, python, "
					  "torch, cxx11abi, cuda, glibc, glibcxx, cxxabi, gcc, platform)",
					  full);
				break;
			}
			if ((rc = want_scalar(L, vv, full, "a value")) < 0)
				break;
			if (!*scalar(vv) || strchr(scalar(vv), ',') || strchr(scalar(vv), '=')) {
				rc = fail(L, vv, "%s: '%s' is not a value", full, esc(scalar(vv)));
				break;
			}
			/* Validated now, where the line is known. */
			wg_target *probe = NULL;
			if (wg_target_new(&probe) < 0 || wg_target_set(probe, key, scalar(vv)) < 0)
				rc = fail(L, vv, "%s: %s", full, esc(wg_error_last()));
			wg_target_free(probe);
			if (rc == 0 && append(&facts, key, scalar(vv)) < 0)
				rc = fail(L, vv, "out of memory");
		}
	}
	if (rc == 0 && spec_node) {
		wg_target *probe = NULL;
		if (wg_target_new(&probe) < 0 || wg_target_parse(probe, t->spec) < 0)
			rc = fail(L, spec_node, "targets: %s: spec: %s", name, esc(wg_error_last()));
		wg_target_free(probe);
	}
	if (rc == 0 && facts) {
		/* The facts one by one after the spec: they win. */
		size_t n = (t->spec ? strlen(t->spec) + 1 : 0) + strlen(facts) + 1;
		char *all = malloc(n);
		if (!all) {
			rc = fail(L, v, "out of memory");
		} else {
			snprintf(all, n, "%s%s%s", t->spec ? t->spec : "", t->spec ? "," : "", facts);
			free(t->spec);
			t->spec = all;
		}
	}
	free(facts);
	if (rc == 0 && !t->spec && !t->site_packages && !t->ngpus)
		rc = fail(L, v, "targets: %s: says nothing about the machine: give spec, the facts "
			  "(python, torch, cxx11abi, cuda, glibc...), gpus or site_packages", name);
	return rc;
}

static int load_targets(loader *L, serve_config *cfg, const yaml_node_t *v)
{
	if (v->type != YAML_MAPPING_NODE)
		return fail(L, v, "targets must be a mapping: NAME: {spec: ...}");
	if (check_keys(L, v, "targets") < 0)
		return -1;
	size_t n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	if (n > TARGETS_MAX)
		return fail(L, v, "targets: at most %d", TARGETS_MAX);
	/* A later file's targets replace an earlier one's. */
	for (size_t i = 0; i < cfg->ntargets; i++) {
		serve_target *t = &cfg->targets[i];
		free(t->name);
		free(t->spec);
		free(t->site_packages);
		for (size_t j = 0; j < t->ngpus; j++)
			free(t->gpus[j]);
		free(t->gpus);
		pthread_mutex_destroy(&t->env_lock);
	}
	free(cfg->targets);
	cfg->targets = NULL;
	cfg->ntargets = 0;
	if (!n)
		return 0;
	if (!(cfg->targets = calloc(n, sizeof(*cfg->targets))))
		return fail(L, v, "out of memory");
	for (size_t i = 0; i < n; i++) {
		yaml_node_pair_t *p = &v->data.mapping.pairs.start[i];
		serve_target *t = &cfg->targets[i];
		pthread_mutex_init(&t->env_lock, NULL);
		cfg->ntargets++; /* counted now: config_free releases what was set */
		if (load_target(L, node(L, p->key), node(L, p->value), t) < 0)
			return -1;
	}
	return 0;
}

/* Appends the string node v to *list. */
static int push_str(loader *L, const yaml_node_t *v, const char *key, char ***list, size_t *n)
{
	char *one = NULL;
	if (get_str(L, v, key, &one) < 0)
		return -1;
	char **a = realloc(*list, (*n + 1) * sizeof(*a));
	if (!a) {
		free(one);
		return fail(L, v, "out of memory");
	}
	a[(*n)++] = one;
	*list = a;
	return 0;
}

static int load_list(loader *L, const yaml_node_t *v, const char *key, char ***list, size_t *n)
{
	if (v->type == YAML_SCALAR_NODE)
		return push_str(L, v, key, list, n);
	if (v->type != YAML_SEQUENCE_NODE)
		return fail(L, v, "%s takes a list of strings, not a mapping", key);
	size_t add = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (*n + add > FETCH_ALLOW_MAX)
		return fail(L, v, "%s: at most %d", key, FETCH_ALLOW_MAX);
	for (size_t i = 0; i < add; i++) {
		yaml_node_t *it = node(L, v->data.sequence.items.start[i]);
		if (!it)
			return fail(L, v, "%s: no item", key);
		if (push_str(L, it, key, list, n) < 0)
			return -1;
	}
	return 0;
}

/* Rule paths relative to the config file's directory, as `wheelgate check`'s config does. */
static int rebase_rules(loader *L, const yaml_node_t *v, serve_config *cfg, size_t from)
{
	const char *slash = strrchr(L->path, '/');
	if (!slash)
		return 0;
	int dl = (int)(slash - L->path);
	for (size_t i = from; i < cfg->nrules; i++) {
		if (cfg->rules[i][0] == '/')
			continue;
		size_t n = (size_t)dl + strlen(cfg->rules[i]) + 2;
		char *p = malloc(n);
		if (!p)
			return fail(L, v, "out of memory");
		snprintf(p, n, "%.*s/%s", dl, L->path, cfg->rules[i]);
		free(cfg->rules[i]);
		cfg->rules[i] = p;
	}
	return 0;
}

static int load_root(loader *L, serve_config *cfg, const yaml_node_t *root)
{
	if (check_keys(L, root, "the config") < 0)
		return -1;
	const yaml_node_t *token_at = NULL, *token_file_at = NULL, *ftoken_at = NULL,
			  *ftoken_file_at = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node(L, p->key), *v = node(L, p->value);
		const char *key = scalar(k);
		int rc;
		if (!strcmp(key, "listen")) {
			rc = get_str(L, v, key, &cfg->listen);
		} else if (!strcmp(key, "upstream")) {
			rc = get_str(L, v, key, &cfg->upstream);
			if (rc == 0 && strncmp(cfg->upstream, "http://", 7) &&
			    strncmp(cfg->upstream, "https://", 8))
				rc = fail(L, v, "upstream takes an http:// or https:// URL, not '%s'",
					  esc(cfg->upstream));
		} else if (!strcmp(key, "upstream_timeout")) {
			rc = get_long(L, v, key, 1, 86400, &cfg->upstream_timeout);
		} else if (!strcmp(key, "connect_timeout")) {
			rc = get_long(L, v, key, 1, 3600, &cfg->connect_timeout);
		} else if (!strcmp(key, "check_other")) {
			bool b = false;
			rc = get_bool(L, v, key, &b);
			cfg->forward_other = !b;
		} else if (!strcmp(key, "max_body")) {
			rc = want_scalar(L, v, key, "a size (bytes, or with K, M or G)");
			if (rc == 0 && (!parse_size(scalar(v), &cfg->max_body) || cfg->max_body == 0 ||
					cfg->max_body > SIZE_MAX / 2))
				rc = fail(L, v, "max_body takes a size (bytes, or with K, M or G), not "
					  "'%s'", esc(scalar(v)));
		} else if (!strcmp(key, "spool_dir")) {
			rc = get_str(L, v, key, &cfg->spool_dir);
		} else if (!strcmp(key, "workers")) {
			rc = get_long(L, v, key, 1, SERVE_MAX_WORKERS, &cfg->workers);
		} else if (!strcmp(key, "connections")) {
			rc = get_long(L, v, key, 1, 100000, &cfg->connections);
		} else if (!strcmp(key, "timeout")) {
			rc = get_long(L, v, key, 1, 86400, &cfg->timeout);
		} else if (!strcmp(key, "header_timeout")) {
			rc = get_long(L, v, key, 1, 3600, &cfg->header_timeout);
		} else if (!strcmp(key, "deadline")) {
			rc = get_long(L, v, key, 0, 86400, &cfg->deadline);
		} else if (!strcmp(key, "connections_per_client")) {
			rc = get_long(L, v, key, 0, 100000, &cfg->per_client);
		} else if (!strcmp(key, "min_rate")) {
			rc = get_long(L, v, key, 0, 1L << 30, &cfg->min_rate);
		} else if (!strcmp(key, "rate_window")) {
			rc = get_long(L, v, key, 1, 3600, &cfg->rate_window);
		} else if (!strcmp(key, "queue")) {
			rc = get_long(L, v, key, 0, 100000, &cfg->queue);
		} else if (!strcmp(key, "queue_wait")) {
			rc = get_long(L, v, key, 0, 3600, &cfg->queue_wait);
		} else if (!strcmp(key, "checks_per_client")) {
			rc = get_long(L, v, key, 0, SERVE_MAX_WORKERS, &cfg->checks_per_client);
		} else if (!strcmp(key, "check_memory")) {
			rc = want_scalar(L, v, key, "a size (bytes, or with K, M or G)");
			if (rc == 0 && (!parse_size(scalar(v), &cfg->check_memory) ||
					cfg->check_memory < (1ULL << 20)))
				rc = fail(L, v, "check_memory takes a size of at least 1M (bytes, or "
					  "with K, M or G), not '%s'", esc(scalar(v)));
		} else if (!strcmp(key, "drain")) {
			rc = get_long(L, v, key, 0, 86400, &cfg->drain);
		} else if (!strcmp(key, "token")) {
			rc = get_str(L, v, key, &cfg->token);
			token_at = v;
			L->has_token = true;
		} else if (!strcmp(key, "token_file")) {
			rc = read_token_file(L, v, key, &cfg->token);
			token_file_at = v;
		} else if (!strcmp(key, "fetch_token")) {
			rc = get_str(L, v, key, &cfg->fetch_token);
			ftoken_at = v;
			L->has_token = true;
		} else if (!strcmp(key, "fetch_token_file")) {
			rc = read_token_file(L, v, key, &cfg->fetch_token);
			ftoken_file_at = v;
		} else if (!strcmp(key, "fetch_allow")) {
			rc = load_list(L, v, key, &cfg->fetch_allow, &cfg->nfetch_allow);
		} else if (!strcmp(key, "rules")) {
			size_t from = cfg->nrules;
			rc = load_list(L, v, key, &cfg->rules, &cfg->nrules);
			if (rc == 0)
				rc = rebase_rules(L, v, cfg, from);
		} else if (!strcmp(key, "enable")) {
			rc = load_list(L, v, key, &cfg->enable, &cfg->nenable);
		} else if (!strcmp(key, "disable")) {
			rc = load_list(L, v, key, &cfg->disable, &cfg->ndisable);
		} else if (!strcmp(key, "targets")) {
			rc = load_targets(L, cfg, v);
		} else if (!strcmp(key, "policy")) {
			rc = want_scalar(L, v, key, "every or any");
			if (rc == 0 && !strcmp(scalar(v), "every"))
				cfg->policy = SERVE_POLICY_EVERY;
			else if (rc == 0 && !strcmp(scalar(v), "any"))
				cfg->policy = SERVE_POLICY_ANY;
			else if (rc == 0)
				rc = fail(L, v, "policy takes every (a wheel must work on every "
					  "target) or any (on at least one), not '%s'", esc(scalar(v)));
		} else {
			rc = fail(L, k, "unknown key '%s' (listen, upstream, upstream_timeout, "
				  "connect_timeout, check_other, max_body, spool_dir, workers, "
				  "connections, connections_per_client, timeout, header_timeout, "
				  "min_rate, rate_window, deadline, queue, queue_wait, "
				  "checks_per_client, check_memory, drain, token_file, token, "
				  "fetch_token_file, fetch_token, fetch_allow, rules, enable, "
				  "disable, targets, policy)",
				  esc(key));
		}
		if (rc < 0)
			return -1;
	}
	if (token_at && token_file_at)
		return fail(L, token_file_at, "token and token_file both given: keep token_file");
	if (ftoken_at && ftoken_file_at)
		return fail(L, ftoken_file_at, "fetch_token and fetch_token_file both given: keep "
			    "fetch_token_file");
	return 0;
}

int config_load(serve_config *cfg, const char *path, char *err, size_t errlen)
{
	loader L = {.path = path, .err = err, .errlen = errlen};
	/* a page of settings, one document, no aliases (a small file may not expand) */
	const yaml_file_options yo = {CONFIG_MAX, true, true};
	yaml_file_error ye;
	yaml_document_t doc;
	unsigned mode = 0;
	if (yaml_file_load(&doc, path, &yo, &mode, &ye) < 0) {
		snprintf(err, errlen, "%s:%zu:%zu: %s", esc(path), ye.line ? ye.line : 1,
			 ye.line ? ye.column : 1, ye.msg);
		return -1;
	}
	L.doc = &doc;
	int rc = 0;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root)
		rc = root->type == YAML_SCALAR_NODE && !*scalar(root) ? 0 : load_root(&L, cfg, root);
	/* An empty file sets nothing. */
	yaml_document_delete(&doc);
	if (rc == 0 && L.has_token && (mode & (S_IRGRP | S_IROTH)))
		fprintf(stderr, "wheelgate serve: warning: %s holds a token and is readable by others "
			"(mode %03o): chmod 600 it, or use token_file\n", esc(path),
			mode & 0777);
	return rc;
}

int config_targets_open(serve_config *cfg, wg_context *ctx, wg_scanner *sc, char *err,
			size_t errlen)
{
	for (size_t i = 0; i < cfg->ntargets; i++) {
		serve_target *t = &cfg->targets[i];
		const char *e = NULL;
		if (wg_target_new(&t->target) < 0 || wg_target_set(t->target, "profile", "install") < 0) {
			snprintf(err, errlen, "target %s: out of memory", t->name);
			return -1;
		}
		if (t->site_packages) {
			wg_env_options eo = WG_ENV_OPTIONS_INIT;
			if (wg_env_open(&t->env, sc, t->site_packages, &eo) < 0) {
				snprintf(err, errlen, "target %s: site_packages %s: %s", t->name,
					 esc(t->site_packages), esc(wg_scanner_error(sc)));
				return -1;
			}
			/* Before the spec: the facts declared win over the environment's. */
			if (wg_target_set_env(t->target, t->env) < 0) {
				e = wg_error_last();
				goto bad;
			}
		}
		if (t->spec && wg_target_parse(t->target, t->spec) < 0) {
			e = wg_error_last();
			goto bad;
		}
		for (size_t j = 0; j < t->ngpus; j++) {
			if (wg_target_add_gpu(t->target, ctx, t->gpus[j]) < 0) {
				snprintf(err, errlen, "target %s: gpus: %s: %s", t->name, esc(t->gpus[j]),
					 esc(wg_error_last()));
				return -1;
			}
		}
		continue;
bad:
		snprintf(err, errlen, "target %s: %s", t->name, esc(e));
		return -1;
	}
	return 0;
}

void config_free(serve_config *cfg)
{
	for (size_t i = 0; i < cfg->ntargets; i++) {
		serve_target *t = &cfg->targets[i];
		free(t->name);
		free(t->spec);
		free(t->site_packages);
		for (size_t j = 0; j < t->ngpus; j++)
			free(t->gpus[j]);
		free(t->gpus);
		wg_target_free(t->target);
		wg_env_free(t->env);
		pthread_mutex_destroy(&t->env_lock);
	}
	free(cfg->targets);
	char ***lists[] = {&cfg->fetch_allow, &cfg->rules, &cfg->enable, &cfg->disable};
	size_t counts[] = {cfg->nfetch_allow, cfg->nrules, cfg->nenable, cfg->ndisable};
	for (size_t l = 0; l < sizeof(counts) / sizeof(*counts); l++) {
		for (size_t i = 0; i < counts[l]; i++)
			free((*lists[l])[i]);
		free(*lists[l]);
	}
	free(cfg->listen);
	if (cfg->token)
		memset(cfg->token, 0, strlen(cfg->token));
	free(cfg->token);
	free(cfg->upstream);
	if (cfg->fetch_token)
		memset(cfg->fetch_token, 0, strlen(cfg->fetch_token));
	free(cfg->fetch_token);
	free(cfg->spool_dir);
	memset(cfg, 0, sizeof(*cfg));
}

int config_ruleset(wg_ruleset **out, const serve_config *cfg, wg_context *ctx, char *err,
		   size_t errlen)
{
	wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
	ro.rule_paths = (const char *const *)cfg->rules;
	ro.nrule_paths = cfg->nrules;
	ro.enable = (const char *const *)cfg->enable;
	ro.nenable = cfg->nenable;
	ro.disable = (const char *const *)cfg->disable;
	ro.ndisable = cfg->ndisable;
	*out = NULL;
	if (wg_ruleset_new(out, ctx, &ro) < 0) {
		snprintf(err, errlen, "rules: %s", esc(wg_error_last()));
		return -1;
	}
	return 0;
}

int config_copy_fixed(serve_config *dst, const serve_config *src)
{
	*dst = *src;
	dst->listen = NULL;
	dst->token = dst->upstream = dst->fetch_token = dst->spool_dir = NULL;
	dst->fetch_allow = dst->rules = dst->enable = dst->disable = NULL;
	dst->nfetch_allow = dst->nrules = dst->nenable = dst->ndisable = 0;
	dst->targets = NULL;
	dst->ntargets = 0;
	return src->listen && !(dst->listen = strdup(src->listen)) ? -1 : 0;
}

serve_gen *gen_new(serve_config *cfg, wg_ruleset *rs, wg_scanner *sc, unsigned long id)
{
	serve_gen *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	atomic_init(&g->refs, 1);
	g->id = id;
	g->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	g->rs = rs;
	g->sc = sc;
	return g;
}

serve_gen *gen_acquire(server *s)
{
	/* Under the lock: the generation read cannot be freed before its count is raised
	 * (the server's own reference is dropped by gen_install after the swap, under it). */
	pthread_mutex_lock(&s->gen_lock);
	serve_gen *g = s->gen;
	if (g)
		atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&s->gen_lock);
	return g;
}

void gen_release(serve_gen *g)
{
	if (!g || atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) != 1)
		return;
	config_free(&g->cfg); /* the fleet's environments before the scanner they were read with */
	wg_scanner_free(g->sc);
	wg_ruleset_free(g->rs);
	free(g);
}

void gen_install(server *s, serve_gen *g)
{
	pthread_mutex_lock(&s->gen_lock);
	serve_gen *old = s->gen;
	s->gen = g;
	pthread_mutex_unlock(&s->gen_lock);
	gen_release(old);
}

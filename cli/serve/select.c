/*
 * POST /v1/select: {"source": URL or [URL...], "project": NAME, "version"?: V, "target"?: NAME}.
 * Which variant of a release works on one of the fleet's targets: `wheelgate select` run
 * for that target (its facts, its site-packages, its GPUs; the service's rules) over the
 * sources, answered with its wheelgate.select/1 document (docs/select.md). The CLI is run as
 * a child (select's code lives in the CLI: cmd_select.c, pipeline.c, the index reader), with
 * an empty signal mask, stdin from /dev/null, no other descriptor of the service, bounded in time (--select-timeout, default 120 s)
 * and in output; it holds a check slot while it runs. Every source must be under a
 * --fetch-allow prefix, as /v1/check/url's URL.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "serve.h"

extern char **environ;

#define SELECT_SOURCES_MAX 1000
#define SELECT_URL_MAX 4096
#define SELECT_OUT_MAX (32U << 20)  /* the document, at most */
#define SELECT_ERR_MAX (16U << 10)  /* select's stderr kept for the answer */
#define SELECT_DEFAULT_TIMEOUT 120

/* The CLI beside this executable: $WHEELGATE_CLI, else DIR/wheelgate (the build tree), else
 * DIR/../../bin/wheelgate (installed: libexec/wheelgate/wheelgate-serve and bin/wheelgate). */
static int cli_path(char *out, size_t n)
{
	const char *env = getenv("WHEELGATE_CLI");
	if (env && *env == '/' && access(env, X_OK) == 0) {
		snprintf(out, n, "%s", env);
		return 0;
	}
	char self[PATH_MAX - 32];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return -1;
	self[len] = '\0';
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	const char *rel[] = {"wheelgate", "../../bin/wheelgate"};
	for (size_t i = 0; i < 2; i++) {
		snprintf(out, n, "%s/%s", self, rel[i]);
		if (access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

static bool name_ok(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s);
	if (!n || n > max || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
			       (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr(extra, *p)))
			return false;
	return true;
}

static enum MHD_Result bad(struct MHD_Connection *c, request *r, unsigned status,
			   const char *fmt, const char *arg)
{
	/* fmt holds "%s" once: arg goes there, escaped and cut to 200 bytes */
	char msg[1024], *e = arg ? serve_esc(arg) : NULL;
	const char *at = strstr(fmt, "%s");
	int pre = at ? (int)(at - fmt) : (int)strlen(fmt);
	snprintf(msg, sizeof(msg), "%.*s%.200s%s", pre, fmt, e ? e : "", at ? at + 2 : "");
	free(e);
	return serve_answer_text(c, r, status, msg);
}

typedef struct {
	char *buf;
	size_t len, cap, max;
	bool over;
} sink;

static int sink_read(sink *k, int fd)
{
	char tmp[65536];
	ssize_t got = read(fd, tmp, sizeof(tmp));
	if (got <= 0)
		return got == 0 || (errno != EINTR && errno != EAGAIN) ? 0 : 1;
	size_t g = (size_t)got;
	if (k->len + g > k->max) {
		k->over = true;
		g = k->max - k->len;
	}
	if (k->len + g + 1 > k->cap) {
		size_t cap = k->cap ? k->cap : 65536;
		while (cap < k->len + g + 1)
			cap *= 2;
		char *b = realloc(k->buf, cap);
		if (!b) {
			k->over = true;
			return 1;
		}
		k->buf = b;
		k->cap = cap;
	}
	memcpy(k->buf + k->len, tmp, g);
	k->len += g;
	k->buf[k->len] = '\0';
	return 1;
}

static double since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

typedef struct {
	char **v;
	size_t n, cap;
	bool oom;
} argv_t;

static void push(argv_t *a, const char *s)
{
	if (a->oom)
		return;
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		char **v = realloc(a->v, cap * sizeof(*v));
		if (!v) {
			a->oom = true;
			return;
		}
		a->v = v;
		a->cap = cap;
	}
	if (!(a->v[a->n] = strdup(s))) {
		a->oom = true;
		return;
	}
	a->v[++a->n] = NULL;
}

static void argv_free(argv_t *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

/* Runs argv; 0 with *status (waitpid's), -1 spawn failure (err), -2 timed out, -3 too much
 * output. The child is always reaped. */
static int run_child(char **argv, long timeout, sink *out, sink *errs, int *status, char *err,
		     size_t errlen)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		if (po[0] >= 0) {
			close(po[0]);
			close(po[1]);
		}
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	/* nothing else of the service (client sockets, spooled bodies) reaches the child */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	sigset_t none, def;
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGHUP);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(po[1]);
	close(pe[1]);
	if (rc != 0) {
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	int open_fds = 2, result = 0;
	while (open_fds > 0) {
		double left = (double)timeout - since(&t0);
		if (left <= 0) {
			result = -2;
			break;
		}
		int ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
		int n = poll(fds, 2, ms);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2 && n > 0; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			if (!sink_read(i ? errs : out, fds[i].fd)) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
		if (out->over) {
			result = -3;
			break;
		}
		errs->over = false; /* stderr past its cap: the rest is dropped, not an error */
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	if (result < 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return result;
}

static long select_timeout(void)
{
	const char *t = getenv("WHEELGATE_SERVE_SELECT_TIMEOUT");
	char *end;
	long v = t ? strtol(t, &end, 10) : 0;
	return t && *t && !*end && v > 0 && v <= 3600 ? v : SELECT_DEFAULT_TIMEOUT;
}

enum MHD_Result serve_select(server *s, struct MHD_Connection *c, request *r)
{
	const serve_config *cfg = &r->gen->cfg;
	json_t *req = NULL;
	argv_t av = {0};
	sink out = {.max = SELECT_OUT_MAX}, errs = {.max = SELECT_ERR_MAX};
	enum MHD_Result ret;
	size_t len;
	const unsigned char *buf = body_bytes(&r->body, &len);
	json_error_t jerr;
	if (buf)
		req = json_loadb((const char *)buf, len, JSON_REJECT_DUPLICATES, &jerr);
	body_free(&r->body);
	if (!req || !json_is_object(req)) {
		ret = bad(c, r, MHD_HTTP_BAD_REQUEST,
			  "wheelgate serve: /v1/select takes a JSON object {\"source\": \"https://"
			  "index/simple/PROJECT/\" or [\"https://.../NAME.whl#sha256=HEX\", ...], "
			  "\"project\": NAME, \"version\": V (optional), \"target\": a fleet target's "
			  "name}: %s\n", buf && !req ? jerr.text : "not an object");
		goto done;
	}
	const char *key;
	json_t *val;
	json_object_foreach(req, key, val) {
		if (strcmp(key, "source") && strcmp(key, "project") && strcmp(key, "version") &&
		    strcmp(key, "target")) {
			ret = bad(c, r, MHD_HTTP_BAD_REQUEST, "wheelgate serve: /v1/select: unknown key "
				  "\"%s\" (source, project, version, target)\n", key);
			goto done;
		}
		if (strcmp(key, "source") && !json_is_string(val)) {
			ret = bad(c, r, MHD_HTTP_BAD_REQUEST, "wheelgate serve: /v1/select: \"%s\" must "
				  "be a string\n", key);
			goto done;
		}
	}
	json_t *src = json_object_get(req, "source");
	const char *project = json_string_value(json_object_get(req, "project"));
	const char *version = json_string_value(json_object_get(req, "version"));
	const char *tname = json_string_value(json_object_get(req, "target"));
	size_t nsrc = json_is_string(src) ? 1 : json_is_array(src) ? json_array_size(src) : 0;
	if (!nsrc || nsrc > SELECT_SOURCES_MAX) {
		ret = bad(c, r, MHD_HTTP_BAD_REQUEST, "wheelgate serve: /v1/select needs \"source\": "
			  "a simple index project page URL, or a list of 1 to 1000 wheel URLs%s\n", "");
		goto done;
	}
	if (!project || !name_ok(project, 200, "._-")) {
		ret = bad(c, r, MHD_HTTP_BAD_REQUEST, "wheelgate serve: /v1/select needs \"project\": "
			  "a project's name (letters, digits, '.', '_', '-'; at most 200)%s\n", "");
		goto done;
	}
	if (version && !name_ok(version, 100, ".+!_-")) {
		ret = bad(c, r, MHD_HTTP_BAD_REQUEST, "wheelgate serve: /v1/select: \"version\" is not "
			  "a version: '%s'\n", version);
		goto done;
	}
	const serve_target *t = NULL;
	if (!cfg->ntargets) {
		ret = bad(c, r, MHD_HTTP_CONFLICT, "wheelgate serve: /v1/select judges for a fleet "
			  "target, and this service has none (targets in its config)%s\n", "");
		goto done;
	}
	if (!tname && cfg->ntargets == 1)
		t = &cfg->targets[0];
	for (size_t i = 0; tname && i < cfg->ntargets && !t; i++)
		if (!strcmp(cfg->targets[i].name, tname))
			t = &cfg->targets[i];
	if (!t) {
		char names[512] = "";
		size_t o = 0;
		for (size_t i = 0; i < cfg->ntargets && o + 1 < sizeof(names); i++)
			o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", i ? ", " : "",
					      cfg->targets[i].name);
		char msg[768];
		snprintf(msg, sizeof(msg), "wheelgate serve: /v1/select: %s; the fleet's targets: %%s\n",
			 tname ? "no fleet target of that name" : "give \"target\": the name of one");
		ret = bad(c, r, MHD_HTTP_BAD_REQUEST, msg, names);
		goto done;
	}
	char cli[PATH_MAX], err[512];
	if (cli_path(cli, sizeof(cli)) < 0) {
		ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					"wheelgate serve: /v1/select: the wheelgate CLI is not beside "
					"this service (nor $WHEELGATE_CLI)\n");
		goto done;
	}
	push(&av, cli);
	push(&av, "select");
	const char *fixed[] = {"--format", "json", "--no-config", "--no-store", "-j", "1",
			       "--project", project};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(*fixed); i++)
		push(&av, fixed[i]);
	if (version) {
		push(&av, "--version");
		push(&av, version);
	}
	if (t->spec) {
		push(&av, "--target");
		push(&av, t->spec);
	}
	if (t->site_packages) {
		push(&av, "--env");
		push(&av, t->site_packages);
	}
	for (size_t i = 0; i < t->ngpus; i++) {
		push(&av, "--gpu");
		push(&av, t->gpus[i]);
	}
	for (size_t i = 0; i < cfg->nrules; i++) {
		push(&av, "--rules");
		push(&av, cfg->rules[i]);
	}
	for (size_t i = 0; i < cfg->nenable; i++) {
		push(&av, "--enable");
		push(&av, cfg->enable[i]);
	}
	for (size_t i = 0; i < cfg->ndisable; i++) {
		push(&av, "--disable");
		push(&av, cfg->disable[i]);
	}
	push(&av, "--");
	for (size_t i = 0; i < nsrc; i++) {
		const char *u = json_string_value(json_is_string(src) ? src : json_array_get(src, i));
		char *norm = NULL;
		int allowed = u ? fetch_url_allowed(cfg, u, &norm, err, sizeof(err)) : -1;
		if (!u || strlen(u) > SELECT_URL_MAX ||
		    (strncasecmp(u, "http://", 7) && strncasecmp(u, "https://", 8))) {
			free(norm);
			ret = bad(c, r, MHD_HTTP_BAD_REQUEST, "wheelgate serve: /v1/select: a source "
				  "is an http(s) URL (at most 4096 bytes): '%s'\n", u ? u : "(not a string)");
			goto done;
		}
		if (allowed == -1) {
			ret = bad(c, r, MHD_HTTP_BAD_REQUEST, "wheelgate serve: /v1/select: %s\n", err);
			goto done;
		}
		if (allowed < 0) {
			ret = bad(c, r, MHD_HTTP_FORBIDDEN, "wheelgate serve: /v1/select: %s is not under "
				  "any --fetch-allow prefix of this service\n", u);
			goto done;
		}
		/* the URL as it was judged against the prefixes */
		push(&av, norm);
		free(norm);
	}
	if (av.oom) {
		ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					"wheelgate serve: out of memory\n");
		goto done;
	}
	if (gate_enter(s, c, err, sizeof(err)) < 0) {
		char msg[640];
		snprintf(msg, sizeof(msg), "wheelgate serve: busy: %s; try again later\n", err);
		ret = serve_answer_text(c, r, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
		goto done;
	}
	long timeout = select_timeout();
	if (cfg->deadline > 0 && cfg->deadline < timeout)
		timeout = cfg->deadline;
	int status = 0;
	int rc = run_child(av.v, timeout, &out, &errs, &status, err, sizeof(err));
	gate_leave(s);
	if (rc == -1) {
		ret = bad(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "wheelgate serve: /v1/select: %s\n",
			  err);
	} else if (rc == -2) {
		char msg[256];
		snprintf(msg, sizeof(msg), "wheelgate serve: /v1/select: wheelgate select did not "
			 "finish within %ld s (stopped)\n", timeout);
		ret = serve_answer_text(c, r, MHD_HTTP_GATEWAY_TIMEOUT, msg);
	} else if (rc == -3) {
		ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					"wheelgate serve: /v1/select: the answer is larger than 32 MiB "
					"(stopped)\n");
	} else if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1) &&
		   out.len) {
		r->verdict = WEXITSTATUS(status) == 0 ? "pass" : "fail";
		ret = serve_answer(c, r, MHD_HTTP_OK, "application/json", out.buf, out.len);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
		/* the sources could not be read, or the request made no sense to select: its
		 * message (the last lines of its stderr) */
		char *e = errs.buf ? errs.buf : "";
		size_t n = strlen(e);
		while (n && (e[n - 1] == '\n' || e[n - 1] == ' '))
			e[--n] = '\0';
		const char *tail = n > 1500 ? e + n - 1500 : e;
		char *esc = serve_esc(tail);
		size_t m = (esc ? strlen(esc) : 0) + 64;
		char *msg = malloc(m);
		if (msg)
			snprintf(msg, m, "wheelgate serve: /v1/select: %s\n", esc ? esc : "");
		r->verdict = "error";
		ret = serve_answer_text(c, r, 422 /* Unprocessable Content */,
					msg ? msg : "wheelgate serve: /v1/select: select refused\n");
		free(msg);
		free(esc);
	} else {
		char msg[256];
		snprintf(msg, sizeof(msg), "wheelgate serve: /v1/select: wheelgate select %s %d\n",
			 WIFSIGNALED(status) ? "was killed by signal" : "exited with",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		ret = serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
done:
	json_decref(req);
	argv_free(&av);
	free(out.buf);
	free(errs.buf);
	return ret;
}

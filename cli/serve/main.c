/*
 * `wheelgate serve`: options and the config file, the daemon (libmicrohttpd, a pool of
 * threads, each with its own scanner; the context, the rules and the fleet shared), SIGTERM
 * (the drain), SIGHUP (a new generation of the config, the rules and the fleet).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <netdb.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "serve.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: wheelgate serve [--listen HOST:PORT] [--upstream URL] [--config FILE] [options]\n"
		"\n"
		"A gate in front of a Python package repository, and a check API. Runs until\n"
		"SIGTERM or SIGINT (then the listening socket closes, the requests under way\n"
		"finish, within --drain seconds, and it exits 0). SIGHUP reads the --config\n"
		"file (the flags still win), the rules and the fleet again: requests under way\n"
		"finish with the configuration they started with, the next ones get the new\n"
		"one; a new configuration with a mistake is refused (said on stderr, with the\n"
		"file and line) and the current one stays. listen, workers, the connections'\n"
		"limits and timeouts, queue, check_memory and drain take a restart.\n"
		"\n"
		"endpoints:\n"
		"  POST <any other path>  an upload (the upload protocol twine, uv publish and\n"
		"                     'python -m build' clients speak: a multipart/form-data\n"
		"                     POST with :action=file_upload and the file as 'content'):\n"
		"                     a wheel is checked (publish profile, plus each target of\n"
		"                     the fleet) and its sha256 compared with sha256_digest;\n"
		"                     when it passes, the request goes unchanged (with the\n"
		"                     client's Authorization) to the same path on --upstream and\n"
		"                     the upstream's answer comes back; when it fails, 400 with\n"
		"                     the reason in the status line (what twine prints without\n"
		"                     --verbose), the rule ids and the first message in the\n"
		"                     body, and the upstream never sees it. 502/504 when the\n"
		"                     upstream is down or slow. Other files (sdists) go on\n"
		"                     unchecked (verdict forwarded) unless --check-other.\n"
		"  POST /v1/check?filename=NAME.whl[&target=SPEC][&profile=publish|install]\n"
		"                     the wheel (or ELF object) as the body; answers 200 with the\n"
		"                     JSON document 'wheelgate check --format json' prints (the\n"
		"                     verdict is inside), 422 with the same document when the\n"
		"                     body cannot be read, 400 for a bad query, 413 for a body\n"
		"                     over --max-body; SPEC as 'wheelgate check --target' takes it\n"
		"                     (python=3.12,torch=2.9.1+cu128,...); no target: the fleet's,\n"
		"                     or the publish profile when there is no fleet\n"
		"  POST /v1/check/url {\"url\": \"https://repo/.../NAME.whl\"}: the service fetches\n"
		"                     the artifact itself (with --fetch-token) and answers as\n"
		"                     /v1/check; for Artifactory workers and user plugins\n"
		"  POST /v1/select {\"source\": \"https://index/simple/PROJECT/\" or [wheel URLs],\n"
		"                     \"project\": NAME, \"version\": V, \"target\": FLEET-TARGET}:\n"
		"                     the variant that works on that target ('wheelgate select',\n"
		"                     run for it; sources under --fetch-allow); 200 with its\n"
		"                     wheelgate.select/1 document (chosen: null when none\n"
		"                     works), 422 when the sources cannot be read, 504 past\n"
		"                     $WHEELGATE_SERVE_SELECT_TIMEOUT (120 s) or --deadline\n"
		"  GET  /healthz      200 \"ok\"\n"
		"  GET  /metrics      Prometheus text: requests, verdicts by rule, bytes, latency\n"
		"\n"
		"options (each also a key of the --config file; a flag wins over the file):\n"
		"  --config FILE      a YAML file with the settings below, the fleet of targets\n"
		"                     (targets, policy) and the rules (rules: files or\n"
		"                     directories added to the shipped ones, enable, disable);\n"
		"                     see docs/serve.md. Read again on SIGHUP\n"
		"  --listen HOST:PORT address and port to bind (default " SERVE_DEFAULT_LISTEN ");\n"
		"                     port 0 picks a free one; the address bound is printed on\n"
		"                     stderr. TLS: put a reverse proxy in front (docs/serve.md)\n"
		"  --upstream URL     the repository uploads are forwarded to: its origin,\n"
		"                     https://HOST[:PORT], no path. The request's path is\n"
		"                     appended: clients upload to the gate at the repository's\n"
		"                     own path (twine's http://GATE/artifactory/api/pypi/REPO\n"
		"                     goes to https://HOST/artifactory/api/pypi/REPO)\n"
		"  --upstream-timeout SECONDS  the whole forward at most (default 300): 504 past it\n"
		"  --connect-timeout SECONDS   connecting to the upstream at most (default 10)\n"
		"  --check-other      refuse uploads that are not wheels (sdists...) instead of\n"
		"                     forwarding them unchecked (the default)\n"
		"  --max-body SIZE    the largest body accepted (default 512M; K, M, G): a larger\n"
		"                     Content-Length is refused before the body is read, a\n"
		"                     chunked body past it is counted, never held, and refused\n"
		"  --spool-dir DIR    where bodies over 1 MiB are kept while checked (an unlinked\n"
		"                     file; default $TMPDIR or /tmp)\n"
		"  --workers N        checks at once (default: the number of CPUs), each with its\n"
		"                     own scanner; every connection has its own thread, so\n"
		"                     /healthz and /metrics are answered while checks run\n"
		"  --queue N          requests waiting for a check at most (default 64): past it,\n"
		"                     503 with Retry-After\n"
		"  --queue-wait SECONDS  how long one may wait for a check (default 30): past\n"
		"                     it, 503 with Retry-After\n"
		"  --checks-per-client N  checks one client address may run at once (default\n"
		"                     --workers minus one, at least 1): one client's slow\n"
		"                     inputs leave a worker for the others\n"
		"  --check-memory SIZE  the memory budget of one check (default 4G): a wheel\n"
		"                     larger is refused with 413 and never checked; a member,\n"
		"                     the metadata and the Python source held are bounded by it\n"
		"  --connections N    open connections at most (default 256): past it, room is\n"
		"                     made by closing the oldest connection still sending its\n"
		"                     headers or sending its body under --min-rate; when none\n"
		"                     is, the new one gets 503 with Retry-After\n"
		"  --connections-per-client N  open connections from one address (IPv4, or\n"
		"                     an IPv6 /64) at most (default 64; 0: no limit), room\n"
		"                     made the same way among that address's connections\n"
		"  --timeout SECONDS  an idle connection is closed after this (default 60)\n"
		"  --header-timeout SECONDS  a new connection has this long to send its\n"
		"                     request's headers (default 15): a client that trickles\n"
		"                     bytes (slowloris) is closed, not held\n"
		"  --min-rate BYTES   a body must come at BYTES a second or faster over each\n"
		"                     --rate-window (default 1024; 0: no floor): a client that\n"
		"                     trickles its body is closed, not waited on\n"
		"  --rate-window SECONDS  the window --min-rate is measured over (default 5)\n"
		"  --deadline SECONDS a request may take this long, its body included (default\n"
		"                     600; 0: no limit): past it the connection is closed (408\n"
		"                     in the log); a check or forward under way finishes\n"
		"  --drain SECONDS    on SIGTERM, how long requests under way may take (default 30)\n"
		"  --token TOKEN      require 'Authorization: Bearer TOKEN' on /v1/* (401\n"
		"                     otherwise); also read from $WHEELGATE_TOKEN. Uploads carry\n"
		"                     the repository's credentials, which the upstream judges\n"
		"  --fetch-token TOKEN  sent as 'Authorization: Bearer TOKEN' by /v1/check/url;\n"
		"                     also read from $WHEELGATE_FETCH_TOKEN\n"
		"  --fetch-allow PREFIX the URLs /v1/check/url may fetch start with PREFIX\n"
		"                     (repeatable; none: /v1/check/url is refused)\n"
		"  -h, --help         show this help\n"
		"\n"
		"Each request is logged on stdout as one JSON line (time, method, path, status,\n"
		"bytes, ms, verdict, rules, upstream_status); headers, credentials and query\n"
		"strings are never logged.\n"
		"\n"
		"SIGHUP: systemctl reload (ExecReload in docs/integrations/systemd).\n"
		"\n"
		"exit status: 0 after SIGTERM or SIGINT, 2 for usage errors, a bad config or an\n"
		"address that cannot be bound.\n");
}

/* HOST:PORT ([V6]:PORT too) into an address; false with a message when it is not one. */
static bool parse_listen(const char *arg, struct sockaddr_storage *ss, socklen_t *sslen)
{
	char host[256];
	const char *colon = strrchr(arg, ':');
	if (!colon || colon == arg || (size_t)(colon - arg) >= sizeof(host)) {
		fprintf(stderr, "wheelgate serve: --listen takes HOST:PORT, not '%s'\n", esc(arg));
		return false;
	}
	memcpy(host, arg, (size_t)(colon - arg));
	host[colon - arg] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	char *end;
	errno = 0;
	long port = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port < 0 || port > 65535) {
		fprintf(stderr, "wheelgate serve: --listen: '%s' is not a port (0-65535)\n",
			esc(colon + 1));
		return false;
	}
	struct addrinfo hints = {0}, *ai = NULL;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	int e = getaddrinfo(host, colon + 1, &hints, &ai);
	if (e || !ai) {
		fprintf(stderr, "wheelgate serve: --listen: %s: %s\n", esc(host), gai_strerror(e));
		return false;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sslen = ai->ai_addrlen;
	freeaddrinfo(ai);
	return true;
}

static bool parse_count(const char *opt, const char *arg, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi) {
		fprintf(stderr, "wheelgate serve: %s takes a number from %ld to %ld, not '%s'\n", opt,
			lo, hi, esc(arg));
		return false;
	}
	*out = v;
	return true;
}

static bool set_str(char **dst, const char *v)
{
	char *c = strdup(v);
	if (!c) {
		fprintf(stderr, "wheelgate serve: out of memory\n");
		return false;
	}
	free(*dst);
	*dst = c;
	return true;
}

static bool valid_upstream(const char *u)
{
	if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) {
		fprintf(stderr, "wheelgate serve: --upstream takes an http:// or https:// URL, not "
			"'%s'\n", esc(u));
		return false;
	}
	return true;
}

/* The option getopt refused, on one line: unknown (with the closest), or needing a value. */
static void option_said(const char *arg, const struct option *longopts)
{
	char word[128];
	const char *names[128];
	size_t k = 0, n = strncmp(arg, "--", 2) ? 0 : strcspn(arg + 2, "=");
	snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1), arg + 2);
	for (const struct option *o = longopts; n && o->name && k < 128; o++) {
		if (!strcmp(o->name, word)) {
			fprintf(stderr, "wheelgate serve: option '--%s' %s\n", esc(word),
				o->has_arg == required_argument ? "needs a value" : "takes no value");
			return;
		}
		names[k++] = o->name;
	}
	const char *best = n ? wg_suggest(word, names, k) : NULL;
	fprintf(stderr, "wheelgate serve: unknown option '%s'%s%s%s\n", esc(arg),
		best ? "; did you mean '--" : "", best ? best : "", best ? "'?" : "");
}

/* The settings: the defaults, $WHEELGATE_TOKEN and $WHEELGATE_FETCH_TOKEN, the --config
 * file, then the flags (which win). 0; 1 when --help was asked for (printed); -1 after a
 * message on stderr. At start, and again for each SIGHUP (argv as at start). */
static int read_settings(serve_config *cfg, int argc, char **argv)
{
	enum {
		O_LISTEN = 256, O_MAXBODY, O_WORKERS, O_TOKEN, O_CONNS, O_TIMEOUT, O_DRAIN,
		O_DEADLINE, O_UPSTREAM, O_UPTIMEOUT, O_CONNTIMEOUT, O_CHECKOTHER, O_SPOOL, O_CONFIG,
		O_FETCHTOKEN, O_FETCHALLOW, O_HEADERTIMEOUT, O_PERCLIENT, O_MINRATE, O_RATEWINDOW,
		O_QUEUE, O_QUEUEWAIT, O_CHECKSPERCLIENT, O_CHECKMEMORY
	};
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, O_LISTEN},
		{"max-body", required_argument, NULL, O_MAXBODY},
		{"workers", required_argument, NULL, O_WORKERS},
		{"connections", required_argument, NULL, O_CONNS},
		{"timeout", required_argument, NULL, O_TIMEOUT},
		{"drain", required_argument, NULL, O_DRAIN},
		{"deadline", required_argument, NULL, O_DEADLINE},
		{"header-timeout", required_argument, NULL, O_HEADERTIMEOUT},
		{"connections-per-client", required_argument, NULL, O_PERCLIENT},
		{"min-rate", required_argument, NULL, O_MINRATE},
		{"rate-window", required_argument, NULL, O_RATEWINDOW},
		{"queue", required_argument, NULL, O_QUEUE},
		{"queue-wait", required_argument, NULL, O_QUEUEWAIT},
		{"checks-per-client", required_argument, NULL, O_CHECKSPERCLIENT},
		{"check-memory", required_argument, NULL, O_CHECKMEMORY},
		{"token", required_argument, NULL, O_TOKEN},
		{"upstream", required_argument, NULL, O_UPSTREAM},
		{"upstream-timeout", required_argument, NULL, O_UPTIMEOUT},
		{"connect-timeout", required_argument, NULL, O_CONNTIMEOUT},
		{"check-other", no_argument, NULL, O_CHECKOTHER},
		{"spool-dir", required_argument, NULL, O_SPOOL},
		{"config", required_argument, NULL, O_CONFIG},
		{"fetch-token", required_argument, NULL, O_FETCHTOKEN},
		{"fetch-allow", required_argument, NULL, O_FETCHALLOW},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};

	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cfg->max_body = SERVE_DEFAULT_MAX_BODY;
	cfg->workers = ncpu > 0 ? (ncpu < SERVE_MAX_WORKERS ? ncpu : SERVE_MAX_WORKERS) : 2;
	cfg->connections = SERVE_DEFAULT_CONNECTIONS;
	cfg->timeout = 60;
	cfg->drain = 30;
	cfg->deadline = 600;
	cfg->header_timeout = 15;
	cfg->per_client = SERVE_DEFAULT_PER_CLIENT;
	cfg->min_rate = SERVE_DEFAULT_MIN_RATE;
	cfg->rate_window = SERVE_DEFAULT_RATE_WINDOW;
	cfg->queue = 64;
	cfg->queue_wait = 30;
	cfg->checks_per_client = -1; /* --workers minus one, once --workers is known */
	cfg->check_memory = SERVE_DEFAULT_CHECK_MEMORY;
	cfg->upstream_timeout = 300;
	cfg->connect_timeout = 10;
	cfg->forward_other = true;
	int status = -1;
	if (!set_str(&cfg->listen, SERVE_DEFAULT_LISTEN))
		return -1;
	const char *envtok = getenv("WHEELGATE_TOKEN"), *envfetch = getenv("WHEELGATE_FETCH_TOKEN");
	if ((envtok && *envtok && !set_str(&cfg->token, envtok)) ||
	    (envfetch && *envfetch && !set_str(&cfg->fetch_token, envfetch)))
		return status;

	/* First pass: --help and --config (the file's values are defaults the flags override). */
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			help(stdout);
			return 1;
		}
		if (c == O_CONFIG) {
			char err[1024];
			if (config_load(cfg, optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "wheelgate serve: --config: %s\n", err);
				return status;
			}
		}
	}
	opterr = 0; /* the second pass says what is wrong itself: one line and a hint */
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case O_CONFIG: break;
		case O_LISTEN: ok = set_str(&cfg->listen, optarg); break;
		case O_TOKEN: ok = set_str(&cfg->token, optarg); break;
		case O_FETCHTOKEN: ok = set_str(&cfg->fetch_token, optarg); break;
		case O_UPSTREAM: ok = valid_upstream(optarg) && set_str(&cfg->upstream, optarg); break;
		case O_SPOOL: ok = set_str(&cfg->spool_dir, optarg); break;
		case O_CHECKOTHER: cfg->forward_other = false; break;
		case O_FETCHALLOW: {
			char **a = realloc(cfg->fetch_allow, (cfg->nfetch_allow + 1) * sizeof(*a));
			ok = a != NULL;
			if (a) {
				cfg->fetch_allow = a;
				ok = (a[cfg->nfetch_allow] = strdup(optarg)) != NULL;
				cfg->nfetch_allow += ok;
			}
			break;
		}
		case O_MAXBODY:
			if (!parse_size(optarg, &cfg->max_body) || cfg->max_body == 0 ||
			    cfg->max_body > SIZE_MAX / 2) {
				fprintf(stderr, "wheelgate serve: --max-body takes a size (bytes, or with "
					"K, M or G), not '%s'\n", esc(optarg));
				ok = false;
			}
			break;
		case O_WORKERS:
			ok = parse_count("--workers", optarg, 1, SERVE_MAX_WORKERS, &cfg->workers);
			break;
		case O_CONNS:
			ok = parse_count("--connections", optarg, 1, 100000, &cfg->connections);
			break;
		case O_TIMEOUT: ok = parse_count("--timeout", optarg, 1, 86400, &cfg->timeout); break;
		case O_DRAIN: ok = parse_count("--drain", optarg, 0, 86400, &cfg->drain); break;
		case O_HEADERTIMEOUT:
			ok = parse_count("--header-timeout", optarg, 1, 3600, &cfg->header_timeout);
			break;
		case O_DEADLINE:
			ok = parse_count("--deadline", optarg, 0, 86400, &cfg->deadline);
			break;
		case O_PERCLIENT:
			ok = parse_count("--connections-per-client", optarg, 0, 100000,
					 &cfg->per_client);
			break;
		case O_MINRATE:
			ok = parse_count("--min-rate", optarg, 0, 1L << 30, &cfg->min_rate);
			break;
		case O_RATEWINDOW:
			ok = parse_count("--rate-window", optarg, 1, 3600, &cfg->rate_window);
			break;
		case O_QUEUE: ok = parse_count("--queue", optarg, 0, 100000, &cfg->queue); break;
		case O_QUEUEWAIT:
			ok = parse_count("--queue-wait", optarg, 0, 3600, &cfg->queue_wait);
			break;
		case O_CHECKSPERCLIENT:
			ok = parse_count("--checks-per-client", optarg, 1, SERVE_MAX_WORKERS,
					 &cfg->checks_per_client);
			break;
		case O_CHECKMEMORY:
			if (!parse_size(optarg, &cfg->check_memory) ||
			    cfg->check_memory < (1ULL << 20)) {
				fprintf(stderr, "wheelgate serve: --check-memory takes a size of at "
					"least 1M (bytes, or with K, M or G), not '%s'\n", esc(optarg));
				ok = false;
			}
			break;
		case O_UPTIMEOUT:
			ok = parse_count("--upstream-timeout", optarg, 1, 86400, &cfg->upstream_timeout);
			break;
		case O_CONNTIMEOUT:
			ok = parse_count("--connect-timeout", optarg, 1, 3600, &cfg->connect_timeout);
			break;
		default:
			option_said(argv[optind - 1], longopts);
			fprintf(stderr, "Try 'wheelgate serve --help'.\n");
			ok = false;
		}
		if (!ok)
			return status;
	}
	if (optind < argc) {
		fprintf(stderr, "wheelgate serve: unexpected argument '%s'\nTry 'wheelgate serve "
			"--help'.\n", esc(argv[optind]));
		return status;
	}
	if (cfg->checks_per_client <= 0)
		cfg->checks_per_client = cfg->workers > 1 ? cfg->workers - 1 : 1;
	if (cfg->token && !*cfg->token) {
		free(cfg->token);
		cfg->token = NULL;
	}
	if (cfg->upstream && !valid_upstream(cfg->upstream))
		return status;
	return 0;
}
/* The settings a reload cannot change: a restart does (the listening socket, the threads,
 * the connections' limits, the context's memory budget). */
static const struct {
	const char *name;
	size_t off;
} FIXED[] = {
#define F(field, name) {name, offsetof(serve_config, field)}
	F(workers, "workers"), F(connections, "connections"), F(timeout, "timeout"),
	F(drain, "drain"), F(deadline, "deadline"), F(header_timeout, "header_timeout"),
	F(min_rate, "min_rate"), F(rate_window, "rate_window"),
	F(per_client, "connections_per_client"), F(checks_per_client, "checks_per_client"),
	F(queue, "queue"), F(queue_wait, "queue_wait"),
#undef F
};

/* SIGHUP: the settings, the rules and the fleet read again into a new generation. Requests
 * under way keep theirs; the next ones take the new one. Anything wrong (the file, a rule
 * file, a target's environment) keeps the current generation, said on stderr. */
static void reload(server *s, int argc, char **argv, unsigned long *gens)
{
	serve_config cfg = {0};
	wg_ruleset *rs = NULL;
	wg_scanner *sc = NULL;
	serve_gen *g = NULL;
	char err[1024];
	serve_gen *cur = gen_acquire(s);
	unsigned long id = cur->id;
	gen_release(cur);
	fprintf(stderr, "wheelgate serve: SIGHUP: reading the configuration again\n");
	if (read_settings(&cfg, argc, argv) != 0)
		goto refused;
	if (config_ruleset(&rs, &cfg, s->ctx, err, sizeof(err)) < 0) {
		fprintf(stderr, "wheelgate serve: %s\n", err);
		goto refused;
	}
	if (wg_scanner_new(&sc, s->ctx) < 0) {
		fprintf(stderr, "wheelgate serve: out of memory\n");
		goto refused;
	}
	if (config_targets_open(&cfg, s->ctx, sc, err, sizeof(err)) < 0) {
		fprintf(stderr, "wheelgate serve: %s\n", err);
		goto refused;
	}
	for (size_t i = 0; i < sizeof(FIXED) / sizeof(*FIXED); i++) {
		long was = *(const long *)((const char *)&s->cfg + FIXED[i].off);
		long now = *(const long *)((const char *)&cfg + FIXED[i].off);
		if (was != now)
			fprintf(stderr, "wheelgate serve: SIGHUP: %s %ld -> %ld takes a restart; "
				"%ld kept\n", FIXED[i].name, was, now, was);
	}
	if (strcmp(cfg.listen, s->cfg.listen))
		fprintf(stderr, "wheelgate serve: SIGHUP: listen %s -> %s takes a restart; kept\n",
			esc(s->cfg.listen), esc(cfg.listen));
	if (cfg.check_memory != s->cfg.check_memory)
		fprintf(stderr, "wheelgate serve: SIGHUP: check_memory %llu -> %llu takes a restart; "
			"kept\n", (unsigned long long)s->cfg.check_memory,
			(unsigned long long)cfg.check_memory);
	size_t nrules = wg_ruleset_count(rs), ntargets = cfg.ntargets;
	bool up = cfg.upstream != NULL;
	char upstream[300];
	snprintf(upstream, sizeof(upstream), "%s", up ? esc(cfg.upstream) : "");
	if (!(g = gen_new(&cfg, rs, sc, ++*gens))) {
		--*gens;
		fprintf(stderr, "wheelgate serve: out of memory\n");
		goto refused;
	}
	int under_way = atomic_load(&s->in_flight);
	gen_install(s, g);
	fprintf(stderr, "wheelgate serve: SIGHUP: configuration %lu in use (%zu rules, %zu "
		"target(s); uploads %s%s), replacing %lu; %d request(s) under way keep the "
		"configuration they started with\n", g->id, nrules, ntargets,
		up ? "forwarded to " : "refused: no upstream", upstream, id, under_way);
	return;
refused:
	fprintf(stderr, "wheelgate serve: SIGHUP: the new configuration is refused; "
		"configuration %lu stays in use\n", id);
	config_free(&cfg); /* the fleet's environments before their scanner */
	wg_scanner_free(sc);
	wg_ruleset_free(rs);
}

int cmd_serve(int argc, char **argv)
{
	server s = {0};
	serve_config *cfg = &s.cfg, first = {0};
	int status = EXIT_USAGE;
	int rs_ = read_settings(&first, argc, argv);
	if (rs_ != 0) {
		config_free(&first);
		return rs_ > 0 ? EXIT_CLEAN : EXIT_USAGE;
	}
	if (config_copy_fixed(cfg, &first) < 0) {
		fprintf(stderr, "wheelgate serve: out of memory\n");
		goto out_cfg;
	}
	struct sockaddr_storage addr;
	socklen_t addrlen;
	if (!parse_listen(cfg->listen, &addr, &addrlen))
		goto out_cfg;
	pthread_mutex_init(&s.gen_lock, NULL);

	atomic_init(&s.in_flight, 0);
	/* Flat memory under load: glibc raises its mmap threshold to the largest block freed so
	 * far (up to 32 MiB), after which each worker's arena keeps a wheel's worth of freed
	 * buffers; fixed thresholds hand large buffers back to the kernel when freed. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
	wg_options opts = WG_OPTIONS_INIT;
	/* What one check holds at once is bounded by its budget: a member, the metadata, the
	 * Python source kept for the import checks. */
	if (opts.max_member_size > cfg->check_memory)
		opts.max_member_size = cfg->check_memory;
	if (opts.max_text_total > cfg->check_memory / 4)
		opts.max_text_total = cfg->check_memory / 4;
	if (opts.max_python_bytes > cfg->check_memory / 4)
		opts.max_python_bytes = cfg->check_memory / 4;
	wg_ruleset *rs0 = NULL;
	wg_scanner *sc0 = NULL;
	char err[1024];
	if (wg_context_new(&s.ctx, &opts) < 0 || wg_scanner_new(&sc0, s.ctx) < 0) {
		fprintf(stderr, "wheelgate serve: %s\n", esc(wg_error_last()));
		goto out_lib;
	}
	if (config_ruleset(&rs0, &first, s.ctx, err, sizeof(err)) < 0 ||
	    config_targets_open(&first, s.ctx, sc0, err, sizeof(err)) < 0) {
		fprintf(stderr, "wheelgate serve: %s\n", err);
		goto out_lib;
	}
	unsigned long gens = 1;
	serve_gen *g0 = gen_new(&first, rs0, sc0, gens);
	if (!g0) {
		fprintf(stderr, "wheelgate serve: out of memory\n");
		goto out_lib;
	}
	rs0 = NULL;
	sc0 = NULL; /* the generation's now */
	gen_install(&s, g0);
	if (metrics_new(&s.metrics) < 0 || serve_scanner_key(&s) != 0 ||
	    gate_new(&s.gate, cfg) < 0) {
		fprintf(stderr, "wheelgate serve: out of memory\n");
		goto out_lib;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "wheelgate serve: libcurl cannot start\n");
		goto out_key;
	}
	/* The signals are waited for here, never delivered to MHD's threads (which inherit the
	 * mask); SIGPIPE from a client gone away is ignored. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	metrics_set_gate(s.metrics, s.gate);
	if (reaper_start(&s.reaper, &s) < 0) {
		fprintf(stderr, "wheelgate serve: cannot start a thread\n");
		goto out_curl;
	}

	/* A thread per connection: a check (or a forward) blocks its own connection alone, never
	 * the probes; how many checks run at once is the gate's (gate.c), how many connections
	 * are open the reaper's (past --connections it makes room; libmicrohttpd takes a few
	 * more so that the new one is seen). */
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_ITC | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
	if (addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	struct MHD_Daemon *d = MHD_start_daemon(
		flags, 0, NULL, NULL, serve_on_request, &s,
		MHD_OPTION_EXTERNAL_LOGGER, serve_mhd_log, NULL, /* first: before any message */
		MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&addr,
		MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)(cfg->connections + SERVE_CONNECTION_RESERVE),
		MHD_OPTION_URI_LOG_CALLBACK, serve_on_uri, &s,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->timeout,
		MHD_OPTION_NOTIFY_COMPLETED, serve_on_completed, &s,
		MHD_OPTION_NOTIFY_CONNECTION, serve_on_connection, &s, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "wheelgate serve: cannot listen on %s: %s\n", esc(cfg->listen),
			errno ? strerror(errno) : "libmicrohttpd refused the options");
		goto out_curl;
	}
	const union MHD_DaemonInfo *pi = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	char shown[300];
	snprintf(shown, sizeof(shown), "%.*s", (int)(strrchr(cfg->listen, ':') - cfg->listen),
		 cfg->listen);
	fprintf(stderr, "wheelgate serve: listening on http://%s:%u (%ld workers, max body %llu "
		"bytes%s; uploads %s%s; %zu target(s)%s)\n", esc(shown),
		pi ? (unsigned)pi->port : 0u, cfg->workers, (unsigned long long)g0->cfg.max_body,
		g0->cfg.token ? ", token required on /v1/*" : "",
		g0->cfg.upstream ? "forwarded to " : "refused: no --upstream",
		g0->cfg.upstream ? esc(g0->cfg.upstream) : "", g0->cfg.ntargets,
		g0->cfg.ntargets ? (g0->cfg.policy == SERVE_POLICY_ANY ? ", at least one must pass"
									: ", every one must pass")
				 : "");

	/* SIGHUP: a new generation (reload()); SIGTERM, SIGINT: the drain. */
	int sig = 0;
	for (;;) {
		if (sigwait(&sigs, &sig) != 0 || sig != SIGHUP)
			break;
		reload(&s, argc, argv, &gens);
	}
	fprintf(stderr, "wheelgate serve: %s: no new connections; finishing %d request(s)\n",
		sig == SIGTERM ? "SIGTERM" : "SIGINT", atomic_load(&s.in_flight));
	MHD_socket lfd = MHD_quiesce_daemon(d);
	if (lfd != MHD_INVALID_SOCKET)
		close(lfd);
	/* Requests under way finish, within the drain bound (checked every 50 ms). */
	for (long i = 0; i < cfg->drain * 20 && atomic_load(&s.in_flight) > 0; i++)
		nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
	if (atomic_load(&s.in_flight) > 0)
		fprintf(stderr, "wheelgate serve: %d request(s) still under way after %ld s; closed\n",
			atomic_load(&s.in_flight), cfg->drain);
	MHD_stop_daemon(d);
	if (reaper_closed(s.reaper))
		fprintf(stderr, "wheelgate serve: %lu connection(s) closed for taking too long "
			"(--header-timeout, --min-rate, --deadline), gone mid-body, or past "
			"--connections\n", reaper_closed(s.reaper));
	fprintf(stderr, "wheelgate serve: stopped\n");
	status = EXIT_CLEAN;
out_curl:
	reaper_stop(s.reaper);
	curl_global_cleanup();
out_key:
	pthread_key_delete(s.scanner_key);
out_lib:
	gate_free(s.gate);
	metrics_free(s.metrics);
	gen_install(&s, NULL); /* the last request is over: the generation's last reference */
	config_free(&first); /* the fleet's targets before their scanner and the context */
	wg_scanner_free(sc0);
	wg_ruleset_free(rs0);
	wg_context_free(s.ctx);
	pthread_mutex_destroy(&s.gen_lock);
	config_free(cfg);
	return status;
out_cfg:
	config_free(&first);
	config_free(cfg);
	return status;
}

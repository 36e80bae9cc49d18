/*
 * GET /metrics: the Prometheus text exposition format 0.0.4. Counted under one mutex when a
 * request completes (from libmicrohttpd's threads), rendered under the same mutex. Every
 * label's values are bounded: endpoints and verdicts are fixed sets, statuses and rule ids
 * are counted up to a limit, the rest under "other".
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve.h"

#define N_EP (EP_SELECT + 1)
#define MAX_STATUSES 32  /* distinct statuses per endpoint; then "other" */
#define MAX_RULES 1024   /* distinct rule ids; then "other" */
#define RULE_MAX_LEN 128

static const char *const EP_NAMES[N_EP] = {
	[EP_NONE] = "none", [EP_HEALTHZ] = "healthz", [EP_METRICS] = "metrics",
	[EP_CHECK] = "check", [EP_CHECK_URL] = "check_url", [EP_UPLOAD] = "upload",
	[EP_SELECT] = "select",
};

static const char *const VERDICTS[] = {"pass", "fail", "error", "forwarded", "refused", "other"};
#define N_VERDICTS (sizeof(VERDICTS) / sizeof(*VERDICTS))

/* Upper bounds of the latency histogram's buckets, in seconds (+Inf apart). */
static const double BUCKETS[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
#define N_BUCKETS (sizeof(BUCKETS) / sizeof(*BUCKETS))

typedef struct {
	int status; /* 0: the client went away first ("aborted"); -1: "other" */
	uint64_t n;
} status_count;

typedef struct {
	char *rule; /* NULL: "other" */
	uint64_t n;
} rule_count;

typedef struct {
	status_count statuses[MAX_STATUSES + 1]; /* the last: "other" */
	size_t nstatuses;
	uint64_t verdicts[N_VERDICTS];
	uint64_t bytes;
	uint64_t buckets[N_BUCKETS + 1]; /* per bucket, not cumulative; the last: +Inf */
	double sum;
	uint64_t count;
} ep_stats;

struct serve_metrics {
	pthread_mutex_t lock;
	struct timespec start;
	ep_stats ep[N_EP];
	rule_count *rules;
	size_t nrules;
	uint64_t rules_other;
	atomic_ullong closed[CLOSE_N];
	serve_gate *gate;
};

static const char *const CLOSE_NAMES[CLOSE_N] = {
	[CLOSE_HEADER_TIMEOUT] = "header_timeout", [CLOSE_IDLE] = "idle",
	[CLOSE_SLOW_BODY] = "slow_body", [CLOSE_DEADLINE] = "deadline", [CLOSE_GONE] = "gone",
	[CLOSE_EVICTED] = "evicted", [CLOSE_REFUSED] = "refused",
};

void metrics_closed(serve_metrics *m, serve_close_reason why)
{
	if (m && (unsigned)why < CLOSE_N)
		atomic_fetch_add(&m->closed[why], 1);
}

void metrics_set_gate(serve_metrics *m, serve_gate *g)
{
	if (m)
		m->gate = g;
}

int metrics_new(serve_metrics **out)
{
	serve_metrics *m = calloc(1, sizeof(*m));
	if (!m || !(m->rules = calloc(MAX_RULES, sizeof(*m->rules)))) {
		free(m);
		*out = NULL;
		return -1;
	}
	for (size_t i = 0; i < CLOSE_N; i++)
		atomic_init(&m->closed[i], 0);
	pthread_mutex_init(&m->lock, NULL);
	clock_gettime(CLOCK_MONOTONIC, &m->start);
	*out = m;
	return 0;
}

void metrics_free(serve_metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nrules; i++)
		free(m->rules[i].rule);
	free(m->rules);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* One rule id counted (under the lock). */
static void count_rule(serve_metrics *m, const char *id, size_t len)
{
	if (!len)
		return;
	for (size_t i = 0; i < m->nrules; i++) {
		if (strlen(m->rules[i].rule) == len && !memcmp(m->rules[i].rule, id, len)) {
			m->rules[i].n++;
			return;
		}
	}
	char *c = NULL;
	if (m->nrules < MAX_RULES && len <= RULE_MAX_LEN && (c = strndup(id, len))) {
		m->rules[m->nrules++] = (rule_count){c, 1};
		return;
	}
	m->rules_other++;
}

void metrics_observe(serve_metrics *m, serve_endpoint ep, int status, const char *verdict,
		     const char *rules, uint64_t bytes, double seconds)
{
	if (!m)
		return;
	if ((unsigned)ep >= N_EP)
		ep = EP_NONE;
	if (status < 0 || status > 999)
		status = -1;
	if (!(seconds >= 0))
		seconds = 0;
	pthread_mutex_lock(&m->lock);
	ep_stats *e = &m->ep[ep];
	size_t i;
	for (i = 0; i < e->nstatuses && e->statuses[i].status != status; i++)
		;
	if (i == e->nstatuses) {
		if (e->nstatuses < MAX_STATUSES) {
			e->statuses[e->nstatuses++] = (status_count){status, 0};
		} else {
			/* The last slot is "other". */
			i = MAX_STATUSES;
			e->statuses[i].status = -1;
		}
	}
	e->statuses[i].n++;
	if (verdict) {
		size_t v;
		for (v = 0; v < N_VERDICTS - 1 && strcmp(VERDICTS[v], verdict); v++)
			;
		e->verdicts[v]++;
	}
	e->bytes += bytes;
	size_t b;
	for (b = 0; b < N_BUCKETS && seconds > BUCKETS[b]; b++)
		;
	e->buckets[b]++;
	e->sum += seconds;
	e->count++;
	for (const char *p = rules; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		count_rule(m, p, len);
		p = end ? end + 1 : NULL;
	}
	pthread_mutex_unlock(&m->lock);
}

/* A label value as the exposition format writes it: \\, \" and \n escaped. */
static void label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

char *metrics_render(serve_metrics *m, int in_flight)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&m->lock);
	double up = (double)(now.tv_sec - m->start.tv_sec) +
		    (double)(now.tv_nsec - m->start.tv_nsec) / 1e9;

	fputs("# HELP wheelgate_requests_total Requests answered, by endpoint and HTTP status "
	      "(status \"aborted\": the client went away first).\n"
	      "# TYPE wheelgate_requests_total counter\n", f);
	for (size_t e = 0; e < N_EP; e++) {
		for (size_t i = 0; i <= MAX_STATUSES; i++) {
			const status_count *sc = &m->ep[e].statuses[i];
			if (i >= m->ep[e].nstatuses && !(i == MAX_STATUSES && sc->n))
				continue;
			if (sc->status > 0)
				fprintf(f, "wheelgate_requests_total{endpoint=\"%s\",status=\"%d\"} %llu\n",
					EP_NAMES[e], sc->status, (unsigned long long)sc->n);
			else
				fprintf(f, "wheelgate_requests_total{endpoint=\"%s\",status=\"%s\"} %llu\n",
					EP_NAMES[e], sc->status == 0 ? "aborted" : "other",
					(unsigned long long)sc->n);
		}
	}

	fputs("# HELP wheelgate_verdicts_total Wheels judged, by endpoint and verdict.\n"
	      "# TYPE wheelgate_verdicts_total counter\n", f);
	for (size_t e = 0; e < N_EP; e++)
		for (size_t v = 0; v < N_VERDICTS; v++)
			if (m->ep[e].verdicts[v])
				fprintf(f, "wheelgate_verdicts_total{endpoint=\"%s\",verdict=\"%s\"} "
					"%llu\n", EP_NAMES[e], VERDICTS[v],
					(unsigned long long)m->ep[e].verdicts[v]);

	fprintf(f, "# HELP wheelgate_findings_total Blocking findings, by rule id (at most %d ids; "
		"the rest under \"other\").\n# TYPE wheelgate_findings_total counter\n", MAX_RULES);
	for (size_t i = 0; i < m->nrules; i++) {
		fputs("wheelgate_findings_total{rule=\"", f);
		label(f, m->rules[i].rule);
		fprintf(f, "\"} %llu\n", (unsigned long long)m->rules[i].n);
	}
	if (m->rules_other)
		fprintf(f, "wheelgate_findings_total{rule=\"other\"} %llu\n",
			(unsigned long long)m->rules_other);

	fputs("# HELP wheelgate_request_bytes_total Request body bytes received, by endpoint.\n"
	      "# TYPE wheelgate_request_bytes_total counter\n", f);
	for (size_t e = 0; e < N_EP; e++)
		if (m->ep[e].count)
			fprintf(f, "wheelgate_request_bytes_total{endpoint=\"%s\"} %llu\n", EP_NAMES[e],
				(unsigned long long)m->ep[e].bytes);

	fputs("# HELP wheelgate_request_duration_seconds Time from a request's headers to its "
	      "completion, by endpoint.\n"
	      "# TYPE wheelgate_request_duration_seconds histogram\n", f);
	for (size_t e = 0; e < N_EP; e++) {
		if (!m->ep[e].count)
			continue;
		uint64_t cum = 0;
		for (size_t b = 0; b <= N_BUCKETS; b++) {
			cum += m->ep[e].buckets[b];
			if (b < N_BUCKETS)
				fprintf(f, "wheelgate_request_duration_seconds_bucket{endpoint=\"%s\","
					"le=\"%g\"} %llu\n", EP_NAMES[e], BUCKETS[b],
					(unsigned long long)cum);
			else
				fprintf(f, "wheelgate_request_duration_seconds_bucket{endpoint=\"%s\","
					"le=\"+Inf\"} %llu\n", EP_NAMES[e], (unsigned long long)cum);
		}
		fprintf(f, "wheelgate_request_duration_seconds_sum{endpoint=\"%s\"} %.6f\n"
			"wheelgate_request_duration_seconds_count{endpoint=\"%s\"} %llu\n",
			EP_NAMES[e], m->ep[e].sum, EP_NAMES[e], (unsigned long long)m->ep[e].count);
	}
	pthread_mutex_unlock(&m->lock);

	fprintf(f, "# HELP wheelgate_in_flight Requests under way (this one included).\n"
		"# TYPE wheelgate_in_flight gauge\nwheelgate_in_flight %d\n", in_flight);
	fprintf(f, "# HELP wheelgate_uptime_seconds Seconds since the service started.\n"
		"# TYPE wheelgate_uptime_seconds gauge\nwheelgate_uptime_seconds %.3f\n", up);
	fprintf(f, "# HELP wheelgate_resident_memory_bytes Resident memory of the service.\n"
		"# TYPE wheelgate_resident_memory_bytes gauge\nwheelgate_resident_memory_bytes %llu\n",
		serve_rss_bytes());
	fputs("# HELP wheelgate_connections_closed_total Connections the service closed itself, "
	      "by reason (header_timeout, idle, slow_body: under --min-rate, deadline, gone: the "
	      "client left mid-body, evicted: room made for a new one, refused: 503 at once).\n"
	      "# TYPE wheelgate_connections_closed_total counter\n", f);
	for (size_t i = 0; i < CLOSE_N; i++)
		fprintf(f, "wheelgate_connections_closed_total{reason=\"%s\"} %llu\n", CLOSE_NAMES[i],
			(unsigned long long)atomic_load(&m->closed[i]));
	long running, waiting;
	unsigned long long refused, trims, waited_ms;
	gate_stats(m->gate, &running, &waiting, &refused, &trims, &waited_ms);
	fprintf(f, "# HELP wheelgate_checks_running Checks under way (at most --workers).\n"
		"# TYPE wheelgate_checks_running gauge\nwheelgate_checks_running %ld\n"
		"# HELP wheelgate_checks_waiting Requests waiting for a check slot (at most --queue).\n"
		"# TYPE wheelgate_checks_waiting gauge\nwheelgate_checks_waiting %ld\n"
		"# HELP wheelgate_checks_refused_total Checks answered 503: the queue full or the "
		"wait too long.\n# TYPE wheelgate_checks_refused_total counter\n"
		"wheelgate_checks_refused_total %llu\n"
		"# HELP wheelgate_check_wait_seconds_total Time requests waited for a check slot.\n"
		"# TYPE wheelgate_check_wait_seconds_total counter\n"
		"wheelgate_check_wait_seconds_total %.3f\n"
		"# HELP wheelgate_memory_trims_total Times memory was handed back after a check.\n"
		"# TYPE wheelgate_memory_trims_total counter\nwheelgate_memory_trims_total %llu\n",
		running, waiting, refused, (double)waited_ms / 1e3, trims);
	fputs("# HELP wheelgate_build_info The version of wheelgate serving.\n"
	      "# TYPE wheelgate_build_info gauge\nwheelgate_build_info{version=\"", f);
	label(f, wg_version_string());
	fputs("\"} 1\n", f);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* A connection answered without a request read (503 at admission): counted, logged. */
void serve_log_refused(server *s, int status)
{
	metrics_observe(s->metrics, EP_NONE, status, NULL, NULL, 0, 0);
	serve_log_line("(not read)", "(not read)", status, 0, 0, NULL, NULL, true, 0, "admission");
}

/*
 * GET /metrics: Prometheus text. (Stub: filled in next.)
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

struct serve_metrics {
	int unused;
};

int metrics_new(serve_metrics **out)
{
	return (*out = calloc(1, sizeof(**out))) ? 0 : -1;
}

void metrics_free(serve_metrics *m)
{
	free(m);
}

void metrics_observe(serve_metrics *m, serve_endpoint ep, int status, const char *verdict,
		     const char *rules, uint64_t bytes, double seconds)
{
	(void)m, (void)ep, (void)status, (void)verdict, (void)rules, (void)bytes, (void)seconds;
}

char *metrics_render(serve_metrics *m, int in_flight)
{
	(void)m;
	char *s = malloc(64);
	if (s)
		snprintf(s, 64, "wheelgate_in_flight %d\n", in_flight);
	return s;
}

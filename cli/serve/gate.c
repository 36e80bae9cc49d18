/*
 * Checks at once: --workers of them, each on its own scanner (a slot's, made once); a client
 * may hold at most --checks-per-client of the slots, so that one client's slow inputs leave
 * room for the others; at most --queue requests wait for a slot, each at most --queue-wait
 * seconds; past either the answer is 503 with Retry-After. After a check, memory the
 * allocator keeps is handed back to the system when the service holds much more than it did
 * at start (a large check's buffers are freed, but glibc keeps its heaps).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve.h"

/* RSS over the start's by this much after a check: the allocator's free memory is trimmed. */
#define TRIM_OVER (64ULL << 20)

typedef struct {
	bool busy;
	unsigned char client[16];
	wg_scanner *sc;
} gate_slot;

struct serve_gate {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	long nslots, per_client, queue_max, queue_wait;
	long running, waiting;
	gate_slot *slots;
	unsigned long long rss_start;
	atomic_ullong refused, trims, waited_ms;
};

static _Thread_local int this_slot = -1;


int gate_new(serve_gate **out, const serve_config *cfg)
{
	serve_gate *g = calloc(1, sizeof(*g));
	if (!g || !(g->slots = calloc((size_t)cfg->workers, sizeof(*g->slots)))) {
		free(g);
		return -1;
	}
	g->nslots = cfg->workers;
	g->per_client = cfg->checks_per_client > 0 ? cfg->checks_per_client : cfg->workers;
	g->queue_max = cfg->queue;
	g->queue_wait = cfg->queue_wait;
	g->rss_start = serve_rss_bytes();
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->freed, NULL);
	*out = g;
	return 0;
}

void gate_free(serve_gate *g)
{
	if (!g)
		return;
	for (long i = 0; i < g->nslots; i++)
		wg_scanner_free(g->slots[i].sc);
	free(g->slots);
	pthread_cond_destroy(&g->freed);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/* A free slot this client may take (under the lock), or -1. */
static long pick(serve_gate *g, const unsigned char client[16])
{
	long mine = 0, free_slot = -1;
	for (long i = 0; i < g->nslots; i++) {
		if (g->slots[i].busy)
			mine += !memcmp(g->slots[i].client, client, 16);
		else if (free_slot < 0)
			free_slot = i;
	}
	return mine < g->per_client ? free_slot : -1;
}

int gate_enter(server *s, struct MHD_Connection *c, char *why, size_t whylen)
{
	serve_gate *g = s->gate;
	if (!g)
		return 0;
	unsigned char client[16];
	serve_client_key(c, client);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&g->lock);
	long slot = pick(g, client);
	if (slot < 0) {
		if (g->waiting >= g->queue_max) {
			pthread_mutex_unlock(&g->lock);
			atomic_fetch_add(&g->refused, 1);
			snprintf(why, whylen, "%ld check(s) under way and %ld waiting (--workers, "
				 "--queue)", g->running, g->queue_max);
			return -1;
		}
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += g->queue_wait;
		g->waiting++;
		int e = 0;
		while ((slot = pick(g, client)) < 0 && e != ETIMEDOUT)
			e = pthread_cond_timedwait(&g->freed, &g->lock, &until);
		g->waiting--;
		if (slot < 0) {
			pthread_mutex_unlock(&g->lock);
			atomic_fetch_add(&g->refused, 1);
			snprintf(why, whylen, "no check slot came free within %ld s (--queue-wait)",
				 g->queue_wait);
			return -1;
		}
	}
	g->slots[slot].busy = true;
	memcpy(g->slots[slot].client, client, 16);
	g->running++;
	pthread_mutex_unlock(&g->lock);
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_fetch_add(&g->waited_ms, (unsigned long long)((t1.tv_sec - t0.tv_sec) * 1000 +
							    (t1.tv_nsec - t0.tv_nsec) / 1000000));
	this_slot = (int)slot;
	return 0;
}

void gate_leave(server *s)
{
	serve_gate *g = s->gate;
	if (!g || this_slot < 0)
		return;
	pthread_mutex_lock(&g->lock);
	g->slots[this_slot].busy = false;
	g->running--;
	pthread_cond_broadcast(&g->freed);
	pthread_mutex_unlock(&g->lock);
	this_slot = -1;
	unsigned long long rss = serve_rss_bytes();
	if (rss && rss > g->rss_start + TRIM_OVER) {
		malloc_trim(0);
		atomic_fetch_add(&g->trims, 1);
	}
}

wg_scanner *gate_scanner(server *s)
{
	serve_gate *g = s->gate;
	if (!g || this_slot < 0)
		return NULL;
	/* The slot is this thread's until gate_leave: no lock needed for its scanner. */
	gate_slot *sl = &g->slots[this_slot];
	if (!sl->sc && wg_scanner_new(&sl->sc, s->ctx) < 0)
		sl->sc = NULL;
	return sl->sc;
}

void gate_stats(serve_gate *g, long *running, long *waiting, unsigned long long *refused,
		unsigned long long *trims, unsigned long long *waited_ms)
{
	*running = *waiting = 0;
	*refused = *trims = *waited_ms = 0;
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	*running = g->running;
	*waiting = g->waiting;
	pthread_mutex_unlock(&g->lock);
	*refused = atomic_load(&g->refused);
	*trims = atomic_load(&g->trims);
	*waited_ms = atomic_load(&g->waited_ms);
}

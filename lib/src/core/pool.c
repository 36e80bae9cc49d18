/*
 * The thread pool: a fixed set of threads that run the jobs of batches. The thread that
 * submits a batch takes part in it, so a batch never waits on threads that are all busy
 * elsewhere, and a job may itself submit a batch (a wheel's members inside one of several
 * inputs). Jobs are claimed with one atomic increment each: members of a few bytes cost no
 * lock. The newest batch is served first, so that started work finishes before new work is
 * begun.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/core.h"

typedef struct batch {
	wg_pool_fn fn;
	void *arg;
	size_t n;
	atomic_size_t next;   /* the next job to claim */
	size_t done;          /* jobs finished (under the pool's lock) */
	unsigned active;      /* pool threads inside this batch (under the lock) */
	bool listed;          /* still in the list of batches with jobs to claim */
	struct batch *older;  /* the list, newest first */
	pthread_cond_t finished;
} batch;

struct wg_pool {
	pthread_mutex_t lock;
	pthread_cond_t work;
	batch *open; /* batches that may have jobs left to claim, newest first */
	bool stop;
	unsigned nthreads;
	pthread_t *threads;
	struct worker_arg {
		wg_pool *p;
		unsigned slot;
	} *args;
};

static void unlist(wg_pool *p, batch *b)
{
	if (!b->listed)
		return;
	for (batch **q = &p->open; *q; q = &(*q)->older)
		if (*q == b) {
			*q = b->older;
			break;
		}
	b->listed = false;
}

/* Runs jobs of b until none is left to claim; returns how many it ran. */
static size_t drain(batch *b, unsigned slot)
{
	size_t did = 0, i;
	while ((i = atomic_fetch_add_explicit(&b->next, 1, memory_order_relaxed)) < b->n) {
		b->fn(b->arg, i, slot);
		did++;
	}
	return did;
}

static void *worker(void *payload)
{
	struct worker_arg *a = payload;
	wg_pool *p = a->p;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->stop && !p->open)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stop)
			break;
		batch *b = p->open;
		b->active++;
		pthread_mutex_unlock(&p->lock);
		size_t did = drain(b, a->slot);
		pthread_mutex_lock(&p->lock);
		unlist(p, b); /* every job is claimed */
		b->done += did;
		b->active--;
		if (b->done == b->n && b->active == 0)
			pthread_cond_signal(&b->finished);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

unsigned wg_cpu_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

int wg_pool_new(wg_pool **out, unsigned threads)
{
	*out = NULL;
	if (threads > WG_POOL_MAX)
		threads = WG_POOL_MAX;
	wg_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return WG_ENOMEM;
	p->threads = calloc(threads ? threads : 1, sizeof(*p->threads));
	p->args = calloc(threads ? threads : 1, sizeof(*p->args));
	if (!p->threads || !p->args) {
		free(p->threads);
		free(p->args);
		free(p);
		return WG_ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	for (unsigned i = 0; i < threads; i++) {
		p->args[i] = (struct worker_arg){p, i + 1};
		if (pthread_create(&p->threads[i], NULL, worker, &p->args[i]) != 0)
			break; /* fewer threads: the pool still works, with what it has */
		p->nthreads++;
	}
	*out = p;
	return WG_OK;
}

void wg_pool_free(wg_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p->threads);
	free(p->args);
	free(p);
}

unsigned wg_pool_slots(const wg_pool *p)
{
	return p ? p->nthreads + 1 : 1;
}

void wg_pool_run(wg_pool *p, size_t n, wg_pool_fn fn, void *arg)
{
	if (!p || !p->nthreads || n < 2) {
		for (size_t i = 0; i < n; i++)
			fn(arg, i, 0);
		return;
	}
	batch b = {.fn = fn, .arg = arg, .n = n, .listed = true};
	atomic_init(&b.next, 0);
	pthread_cond_init(&b.finished, NULL);
	pthread_mutex_lock(&p->lock);
	b.older = p->open;
	p->open = &b;
	if (n - 1 >= p->nthreads)
		pthread_cond_broadcast(&p->work);
	else
		for (size_t i = 0; i < n - 1; i++)
			pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	size_t did = drain(&b, 0);
	pthread_mutex_lock(&p->lock);
	unlist(p, &b);
	b.done += did;
	while (b.done < n || b.active > 0)
		pthread_cond_wait(&b.finished, &p->lock);
	pthread_mutex_unlock(&p->lock);
	pthread_cond_destroy(&b.finished);
}

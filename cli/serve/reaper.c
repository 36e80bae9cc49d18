/*
 * Connections that take too long. libmicrohttpd's --timeout closes a connection that sends
 * nothing, but a client that trickles a byte now and then (slowloris) resets it forever, and
 * --deadline can only be judged when bytes come. A thread here closes (shutdown(2), so that
 * libmicrohttpd sees the end and cleans up) a connection whose request headers are not in
 * within --header-timeout of its opening, or whose body is still coming past --deadline.
 * A connection being answered (a check, a forward) is never closed here. And a client that
 * closed its side before its body was all sent can never finish the request: libmicrohttpd
 * 0.9.75 sometimes keeps such a connection until --timeout; it is closed here once the
 * socket has said so (peer closed, nothing left unread) on two ticks in a row.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "serve.h"

typedef struct conn_rec {
	struct conn_rec *prev, *next;
	int fd;
	serve_conn_state state;
	bool first;              /* no request finished on it yet */
	bool shut;
	int gone_ticks;          /* ticks the peer was seen gone with the body unfinished */
	struct timespec since;   /* when it entered its state */
} conn_rec;

struct serve_reaper {
	server *s;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool stop, running;
	conn_rec *head;
	atomic_ulong closed;
};

static double elapsed(const struct timespec *t0, const struct timespec *now)
{
	return (double)(now->tv_sec - t0->tv_sec) + (double)(now->tv_nsec - t0->tv_nsec) / 1e9;
}

static void *run(void *p)
{
	serve_reaper *rp = p;
	const serve_config *cfg = &rp->s->cfg;
	pthread_mutex_lock(&rp->lock);
	while (!rp->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 250 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&rp->wake, &rp->lock, &until);
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		for (conn_rec *c = rp->head; c; c = c->next) {
			if (c->shut || c->fd < 0)
				continue;
			double limit = 0;
			if (c->state == CONN_HEADERS)
				/* a new connection: --header-timeout; between two requests on one
				 * connection the idle --timeout is the bound */
				limit = (double)(c->first ? cfg->header_timeout : cfg->timeout);
			else if (c->state == CONN_BODY && cfg->deadline > 0)
				limit = (double)cfg->deadline + 1;
			bool gone = false;
			if (c->state == CONN_BODY) {
				struct pollfd pf = {c->fd, POLLRDHUP, 0};
				int unread = 0;
				if (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP)) &&
				    ioctl(c->fd, FIONREAD, &unread) == 0 && unread == 0)
					gone = ++c->gone_ticks >= 2;
				else
					c->gone_ticks = 0;
			}
			if (gone || (limit > 0 && elapsed(&c->since, &now) > limit)) {
				shutdown(c->fd, SHUT_RDWR);
				c->shut = true;
				atomic_fetch_add(&rp->closed, 1);
			}
		}
	}
	pthread_mutex_unlock(&rp->lock);
	return NULL;
}

int reaper_start(serve_reaper **out, server *s)
{
	serve_reaper *rp = calloc(1, sizeof(*rp));
	if (!rp)
		return -1;
	rp->s = s;
	atomic_init(&rp->closed, 0);
	pthread_mutex_init(&rp->lock, NULL);
	pthread_cond_init(&rp->wake, NULL);
	if (pthread_create(&rp->thread, NULL, run, rp) != 0) {
		pthread_cond_destroy(&rp->wake);
		pthread_mutex_destroy(&rp->lock);
		free(rp);
		return -1;
	}
	rp->running = true;
	*out = rp;
	return 0;
}

void reaper_stop(serve_reaper *rp)
{
	if (!rp)
		return;
	pthread_mutex_lock(&rp->lock);
	rp->stop = true;
	pthread_cond_signal(&rp->wake);
	pthread_mutex_unlock(&rp->lock);
	if (rp->running)
		pthread_join(rp->thread, NULL);
	for (conn_rec *c = rp->head, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	pthread_cond_destroy(&rp->wake);
	pthread_mutex_destroy(&rp->lock);
	free(rp);
}

unsigned long reaper_closed(serve_reaper *rp)
{
	return rp ? atomic_load(&rp->closed) : 0;
}

void serve_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			 enum MHD_ConnectionNotificationCode toe)
{
	server *s = cls;
	serve_reaper *rp = s->reaper;
	if (!rp)
		return;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_rec *r = calloc(1, sizeof(*r));
		if (!r)
			return; /* not watched: libmicrohttpd's own timeout still applies */
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		r->fd = ci ? ci->connect_fd : -1;
		r->state = CONN_HEADERS;
		r->first = true;
		clock_gettime(CLOCK_MONOTONIC, &r->since);
		pthread_mutex_lock(&rp->lock);
		r->next = rp->head;
		if (rp->head)
			rp->head->prev = r;
		rp->head = r;
		pthread_mutex_unlock(&rp->lock);
		*socket_context = r;
	} else if (*socket_context) {
		conn_rec *r = *socket_context;
		pthread_mutex_lock(&rp->lock);
		if (r->prev)
			r->prev->next = r->next;
		else
			rp->head = r->next;
		if (r->next)
			r->next->prev = r->prev;
		pthread_mutex_unlock(&rp->lock);
		free(r);
		*socket_context = NULL;
	}
}

void reaper_mark(server *s, struct MHD_Connection *c, serve_conn_state state)
{
	serve_reaper *rp = s->reaper;
	if (!rp)
		return;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	conn_rec *r = ci ? ci->socket_context : NULL;
	if (!r)
		return;
	pthread_mutex_lock(&rp->lock);
	if (state == CONN_HEADERS)
		r->first = false;
	r->state = state;
	r->gone_ticks = 0;
	clock_gettime(CLOCK_MONOTONIC, &r->since);
	pthread_mutex_unlock(&rp->lock);
}

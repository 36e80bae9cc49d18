/*
 * Connections that take too long or take too much, and who may open more. libmicrohttpd's
 * --timeout closes a connection that sends nothing, but a client that trickles a byte now and
 * then (slowloris) resets it forever. A thread here closes (shutdown(2), so that
 * libmicrohttpd sees the end and cleans up) a connection whose request headers are not in
 * within --header-timeout of its opening (libmicrohttpd counts no bytes before the headers
 * are parsed: the header rate's floor is this deadline), whose body comes slower than
 * --min-rate bytes a second over any --rate-window, or whose body is still coming past
 * --deadline. A connection being answered (a check, a forward) is never closed here. A client
 * that closed its side before its body was all sent is closed once the socket has said so on
 * two ticks in a row (libmicrohttpd 0.9.75 sometimes keeps it until --timeout).
 * Admission, when a connection opens: past --connections-per-client from one address, or past
 * --connections in all, the oldest connection that is still sending its headers, or whose
 * body is under the minimum rate, is closed to make room (the client's own first, then
 * anyone's); when none may be closed, the new connection is answered 503 and closed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve.h"

typedef struct conn_rec {
	struct conn_rec *prev, *next;
	int fd;
	serve_conn_state state;
	bool first;              /* no request finished on it yet */
	bool shut;
	int gone_ticks;          /* ticks the peer was seen gone with the body unfinished */
	unsigned char addr[16];  /* the client: IPv4 (mapped) or the IPv6 /64 */
	struct timespec opened;  /* when it was accepted */
	struct timespec since;   /* when it entered its state */
	atomic_uint_least64_t bytes; /* body bytes received in this state */
	uint64_t mark_bytes;     /* bytes at the start of the rate window */
	struct timespec mark;    /* the start of the rate window */
} conn_rec;

struct serve_reaper {
	server *s;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool stop, running;
	conn_rec *head;
	long count;              /* connections in the list */
	atomic_ulong closed;
};

static double elapsed(const struct timespec *t0, const struct timespec *now)
{
	return (double)(now->tv_sec - t0->tv_sec) + (double)(now->tv_nsec - t0->tv_nsec) / 1e9;
}

static void close_conn(serve_reaper *rp, conn_rec *c, serve_close_reason why)
{
	shutdown(c->fd, SHUT_RDWR);
	c->shut = true;
	atomic_fetch_add(&rp->closed, 1);
	metrics_closed(rp->s->metrics, why);
}

/* The body's rate over the window that just ended is under --min-rate (under the lock). */
static bool too_slow(const serve_config *cfg, conn_rec *c, const struct timespec *now,
		     bool rolling)
{
	if (cfg->min_rate <= 0 || c->state != CONN_BODY)
		return false;
	double span = elapsed(&c->mark, now);
	uint64_t got = atomic_load(&c->bytes) - c->mark_bytes;
	if (span < (double)cfg->rate_window) {
		/* Within the first window: judged only when room is needed (admission), by
		 * the rate so far, after a second (a client may wait for 100 Continue). */
		return !rolling && span >= 1.0 && (double)got < (double)cfg->min_rate * span;
	}
	bool slow = (double)got < (double)cfg->min_rate * span;
	if (rolling && !slow) {
		c->mark = *now;
		c->mark_bytes = atomic_load(&c->bytes);
	}
	return slow;
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
			serve_close_reason why = CLOSE_DEADLINE;
			if (c->state == CONN_HEADERS) {
				/* a new connection: --header-timeout; between two requests on one
				 * connection the idle --timeout is the bound */
				limit = (double)(c->first ? cfg->header_timeout : cfg->timeout);
				why = c->first ? CLOSE_HEADER_TIMEOUT : CLOSE_IDLE;
			} else if (c->state == CONN_BODY && cfg->deadline > 0) {
				limit = (double)cfg->deadline + 1;
			}
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
			if (gone)
				close_conn(rp, c, CLOSE_GONE);
			else if (too_slow(cfg, c, &now, true))
				close_conn(rp, c, CLOSE_SLOW_BODY);
			else if (limit > 0 && elapsed(&c->since, &now) > limit)
				close_conn(rp, c, why);
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


/* Whether c may be closed to make room: still sending its headers (a new connection, or an
 * idle one between requests), or sending its body under the minimum rate. */
static bool evictable(const serve_config *cfg, conn_rec *c, const struct timespec *now)
{
	if (c->shut || c->fd < 0)
		return false;
	return c->state == CONN_HEADERS || too_slow(cfg, c, now, false);
}

/* Room for the new connection me (under the lock): true, or false when it must be refused. */
static bool admit(serve_reaper *rp, conn_rec *me)
{
	const serve_config *cfg = &rp->s->cfg;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long mine = 0, open = 0;
	conn_rec *oldest_mine = NULL, *oldest = NULL;
	for (conn_rec *c = rp->head; c; c = c->next) {
		if (c == me || c->shut)
			continue;
		open++;
		bool same = !memcmp(c->addr, me->addr, 16);
		mine += same;
		if (!evictable(cfg, c, &now))
			continue;
		/* The list is newest first: the last one seen is the oldest. */
		if (same)
			oldest_mine = c;
		oldest = c;
	}
	if (cfg->per_client > 0 && mine >= cfg->per_client) {
		if (!oldest_mine)
			return false;
		close_conn(rp, oldest_mine, CLOSE_EVICTED);
		open--;
		if (oldest == oldest_mine)
			oldest = NULL;
	}
	if (open >= cfg->connections) {
		if (!oldest)
			return false;
		close_conn(rp, oldest, CLOSE_EVICTED);
	}
	return true;
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
		atomic_init(&r->bytes, 0);
		serve_client_key(c, r->addr);
		clock_gettime(CLOCK_MONOTONIC, &r->since);
		r->opened = r->mark = r->since;
		pthread_mutex_lock(&rp->lock);
		r->next = rp->head;
		if (rp->head)
			rp->head->prev = r;
		rp->head = r;
		rp->count++;
		bool ok = admit(rp, r);
		if (!ok && r->fd >= 0) {
			/* Nothing may be closed for it: a short answer, then closed. The socket is
			 * libmicrohttpd's, but it has read and written nothing on it yet. */
			static const char text[] =
				"wheelgate serve: too many connections; try again in 5 s\n";
			char busy[256];
			int n = snprintf(busy, sizeof(busy),
					 "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\n"
					 "Content-Type: text/plain; charset=utf-8\r\n"
					 "Connection: close\r\nContent-Length: %zu\r\n\r\n%s",
					 sizeof(text) - 1, text);
			(void)!send(r->fd, busy, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
			shutdown(r->fd, SHUT_RDWR);
			r->shut = true;
			atomic_fetch_add(&rp->closed, 1);
		}
		pthread_mutex_unlock(&rp->lock);
		if (!ok) {
			metrics_closed(s->metrics, CLOSE_REFUSED);
			serve_log_refused(s, 503);
		}
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
		rp->count--;
		pthread_mutex_unlock(&rp->lock);
		free(r);
		*socket_context = NULL;
	}
}

static conn_rec *rec_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

void reaper_mark(server *s, struct MHD_Connection *c, serve_conn_state state)
{
	serve_reaper *rp = s->reaper;
	if (!rp)
		return;
	conn_rec *r = rec_of(c);
	if (!r)
		return;
	pthread_mutex_lock(&rp->lock);
	if (state == CONN_HEADERS)
		r->first = false;
	r->state = state;
	r->gone_ticks = 0;
	clock_gettime(CLOCK_MONOTONIC, &r->since);
	r->mark = r->since;
	atomic_store(&r->bytes, 0);
	r->mark_bytes = 0;
	pthread_mutex_unlock(&rp->lock);
}

void reaper_progress(server *s, struct MHD_Connection *c, size_t n)
{
	if (!s->reaper)
		return;
	conn_rec *r = rec_of(c);
	if (r)
		atomic_fetch_add(&r->bytes, n);
}

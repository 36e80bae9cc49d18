/*
 * Request bodies: in memory while small, then spooled to an unlinked file (O_TMPFILE in the
 * spool directory), so that memory stays flat with many large uploads at once; past the cap
 * the bytes are counted and dropped.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "serve.h"

void body_init(serve_body *b)
{
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}

static void drop(serve_body *b)
{
	free(b->mem);
	b->mem = NULL;
	b->len = b->cap = 0;
	if (b->map)
		munmap(b->map, b->map_len);
	b->map = NULL;
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
}

static int spool_open(const serve_config *cfg)
{
	const char *dir = cfg->spool_dir;
	if (!dir || !*dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	return open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

static bool write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

bool body_take(serve_body *b, const serve_config *cfg, const char *data, size_t n)
{
	b->seen += n;
	if (b->too_large || b->err)
		return false;
	if (b->seen > cfg->max_body) {
		b->too_large = true;
		drop(b);
		return false;
	}
	if (b->fd < 0 && b->len + n > SERVE_SPOOL_THRESHOLD) {
		/* Past the threshold: what is held moves to the file, and the rest goes there. */
		int fd = spool_open(cfg);
		if (fd < 0 || !write_all(fd, b->mem, b->len)) {
			b->err = errno ? errno : EIO;
			if (fd >= 0)
				close(fd);
			drop(b);
			return false;
		}
		free(b->mem);
		b->mem = NULL;
		b->cap = 0;
		b->fd = fd;
	}
	if (b->fd >= 0) {
		if (!write_all(b->fd, data, n)) {
			b->err = errno ? errno : EIO;
			drop(b);
			return false;
		}
		b->len += n;
		return true;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 16 * 1024;
		while (cap < b->len + n)
			cap *= 2;
		unsigned char *p = realloc(b->mem, cap);
		if (!p) {
			b->err = ENOMEM;
			drop(b);
			return false;
		}
		b->mem = p;
		b->cap = cap;
	}
	memcpy(b->mem + b->len, data, n);
	b->len += n;
	return true;
}

const unsigned char *body_bytes(serve_body *b, size_t *len)
{
	*len = b->len;
	if (b->err || b->too_large)
		return NULL;
	if (b->fd < 0)
		return b->mem ? b->mem : (const unsigned char *)"";
	if (!b->map) {
		void *m = mmap(NULL, b->len, PROT_READ, MAP_PRIVATE, b->fd, 0);
		if (m == MAP_FAILED) {
			b->err = errno;
			return NULL;
		}
		b->map = m;
		b->map_len = b->len;
	}
	return b->map;
}

void body_free(serve_body *b)
{
	drop(b);
}

/*
 * The directory walk: every file below a directory in sorted order, handed to the caller's
 * callbacks (wg_walk): a directory the caller calls an input of its own (a kernel build
 * variant) and every wheel are listed, a file whose first bytes the caller wants (an ELF
 * object) is mapped and handed on; links are skipped, depth and file count are bounded. What
 * the files mean is the caller's business (api/scan.c hands them to facts/).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/input.h"

typedef struct {
	const wg_walk *cb;
	uint32_t files;
	int rc;
} dir_walk;

/* A problem met on the way, formatted here and handed to the caller. */
static void problem(dir_walk *w, int code, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void problem(dir_walk *w, int code, const char *path, const char *fmt, ...)
{
	char msg[2 * PATH_MAX + 128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->cb->problem(w->cb->payload, code, path, msg);
}

static int cmp_dirent(const void *a, const void *b)
{
	return strcmp((*(struct dirent *const *)a)->d_name, (*(struct dirent *const *)b)->d_name);
}

static void walk_dir(dir_walk *w, const char *path, const char *rel, int depth)
{
	if (depth > 64) {
		problem(w, WG_ELIMIT, path, "%s: directories nested too deeply", path);
		return;
	}
	DIR *d = opendir(path);
	if (!d) {
		problem(w, WG_EIO, path, "%s: %s", path, strerror(errno));
		return;
	}
	/* Sorted, so that the output does not depend on the file system's order. */
	struct dirent **names = NULL;
	size_t nn = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (nn == cap) {
			cap = cap ? cap * 2 : 32;
			struct dirent **p = realloc(names, cap * sizeof(*p));
			if (!p)
				break;
			names = p;
		}
		struct dirent *copy = malloc(sizeof(*copy));
		if (!copy)
			break;
		memcpy(copy, e, sizeof(*copy));
		names[nn++] = copy;
	}
	closedir(d);
	if (nn > 1)
		qsort(names, nn, sizeof(*names), cmp_dirent);
	for (size_t i = 0; i < nn && w->rc == WG_OK; i++) {
		char *full = wg_arena_printf(w->cb->arena, "%.*s/%s", wg_path_dir_len(path), path,
					     names[i]->d_name);
		char *sub = *rel ? wg_arena_printf(w->cb->arena, "%s/%s", rel, names[i]->d_name)
				 : wg_arena_strdup(w->cb->arena, names[i]->d_name);
		struct stat st;
		if (!full || !sub) {
			w->rc = WG_ENOMEM;
			break;
		}
		if (lstat(full, &st) != 0 || S_ISLNK(st.st_mode))
			continue; /* links point at files scanned under their own name */
		if (++w->files > w->cb->max_files) {
			problem(w, WG_ELIMIT, full, "%s: more than %u files; the rest was not "
				"scanned", w->cb->root, w->cb->max_files);
			w->rc = WG_ELIMIT;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			/* A directory the caller calls an input of its own (a kernel build
			 * variant, build/torch29-cxx11-cu128-x86_64-linux) is listed by it. */
			int own = w->cb->dir(w->cb->payload, full, names[i]->d_name);
			if (own < 0)
				w->rc = own;
			if (own != 0)
				continue;
			walk_dir(w, full, sub, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (wg_has_suffix(names[i]->d_name, ".whl")) {
			/* A wheel is an input of its own, read by whoever walks the directory; an
			 * unreadable one is then reported, not skipped. */
			int rc = w->cb->wheel(w->cb->payload, full);
			if (rc < 0)
				w->rc = rc;
			continue;
		}
		if (st.st_size < 4)
			continue;
		/* O_NOFOLLOW, and fstat after open: a file swapped for a link, a FIFO or a device
		 * since lstat is refused, never followed, waited on or read. */
		int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0) {
			problem(w, WG_EIO, full, "%s: %s", full,
				errno == EACCES ? "unreadable (permission denied)" : strerror(errno));
			continue;
		}
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		uint8_t head[4];
		if (pread(fd, head, 4, 0) == 4 && w->cb->wanted(head)) {
			wg_file_image img;
			wg_err err = {0};
			if (wg_file_map(&img, fd, full, (uint64_t)st.st_size, &err) < 0) {
				problem(w, err.code, full, "%s", err.msg);
			} else {
				int rc = w->cb->file(w->cb->payload, full, sub, img.data, img.len);
				if (rc < 0)
					w->rc = rc;
				wg_file_unmap(&img);
			}
		}
		close(fd);
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
}

int wg_dir_walk(const wg_walk *cb, const char *path)
{
	dir_walk w = {cb, 0, WG_OK};
	walk_dir(&w, path, "", 0);
	return w.rc;
}

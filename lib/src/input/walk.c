/*
 * The directory walk: every ELF object below a directory read in sorted order, every wheel
 * and every kernel build variant directory listed as an input of its own; links are skipped, depth and file count are bounded.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "facts/facts.h"

typedef struct {
	wg_scan *scan;
	wg_scanner *s;
	uint32_t files;
	int rc;
} dir_walk;

static int cmp_dirent(const void *a, const void *b)
{
	return strcmp((*(struct dirent *const *)a)->d_name, (*(struct dirent *const *)b)->d_name);
}

static void walk_dir(dir_walk *w, const char *path, const char *rel, int depth)
{
	if (depth > 64) {
		wg_scan_add_problem(w->scan, WG_ELIMIT, path, "%s: directories nested too deeply", path);
		return;
	}
	DIR *d = opendir(path);
	if (!d) {
		wg_scan_add_problem(w->scan, WG_EIO, path, "%s: %s", path, strerror(errno));
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
		char *full = wg_arena_printf(&w->scan->arena, "%s/%s", path, names[i]->d_name);
		char *sub = *rel ? wg_arena_printf(&w->scan->arena, "%s/%s", rel, names[i]->d_name)
				 : wg_arena_strdup(&w->scan->arena, names[i]->d_name);
		struct stat st;
		if (!full || !sub) {
			w->rc = WG_ENOMEM;
			break;
		}
		if (lstat(full, &st) != 0 || S_ISLNK(st.st_mode))
			continue; /* links point at files scanned under their own name */
		if (++w->files > w->s->ctx->opts.max_files) {
			wg_scan_add_problem(w->scan, WG_ELIMIT, full, "%s: more than %u files; the rest "
					    "was not scanned", w->scan->path, w->s->ctx->opts.max_files);
			w->rc = WG_ELIMIT;
			break;
		}
		wg_kernel_variant kv;
		if (S_ISDIR(st.st_mode) &&
		    wg_kernel_variant_parse(&kv, &w->scan->arena, names[i]->d_name)) {
			/* A kernel build variant (build/torch29-cxx11-cu128-x86_64-linux) is an
			 * input of its own, judged for what its name claims. */
			if (wg_strlist_add(&w->scan->wheels, &w->scan->arena, full) < 0)
				w->rc = WG_ENOMEM;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			walk_dir(w, full, sub, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (wg_has_suffix(names[i]->d_name, ".whl")) {
			/* A wheel is an input of its own, read by whoever walks the directory; an
			 * unreadable one is then reported, not skipped. */
			if (wg_strlist_add(&w->scan->wheels, &w->scan->arena, full) < 0)
				w->rc = WG_ENOMEM;
			continue;
		}
		if (st.st_size < 4)
			continue;
		/* O_NOFOLLOW, and fstat after open: a file swapped for a link, a FIFO or a device
		 * since lstat is refused, never followed, waited on or read. */
		int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0) {
			wg_scan_add_problem(w->scan, WG_EIO, full, "%s: %s", full,
					    errno == EACCES ? "unreadable (permission denied)"
							    : strerror(errno));
			continue;
		}
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		uint8_t head[4];
		if (pread(fd, head, 4, 0) == 4 && wg_is_elf(head, 4)) {
			wg_file_image img;
			wg_err err = {0};
			if (wg_file_map(&img, fd, full, (uint64_t)st.st_size, &err) < 0) {
				wg_scan_add_problem(w->scan, err.code, full, "%s", err.msg);
			} else {
				if (wg_scan_add_elf(w->scan, w->s, full, sub, img.data, img.len) < 0)
					w->rc = WG_ENOMEM;
				wg_file_unmap(&img);
			}
		}
		close(fd);
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
}

/* Walks the directory path into scan: its ELF objects are read, its wheels listed. */
int wg_dir_walk(wg_scan *scan, wg_scanner *s, const char *path)
{
	dir_walk w = {scan, s, 0, WG_OK};
	walk_dir(&w, path, "", 0);
	return w.rc;
}

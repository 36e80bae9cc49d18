/*
 * The scan dispatch (wg_scan_path, wg_scan_fd, wg_scan_buffer): a path, a file descriptor or a
 * buffer with a name is sniffed (zip or ELF) and fed to the readers of facts/; a `*.dist-info`
 * directory is an installed distribution, read by the wheel reader through its RECORD
 * (input/installed.c); any other directory is walked (input/walk.c) and what the walk finds is
 * handed on from here.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_INPUT /* wg_seterr: what fails here */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"

static bool is_zip(const uint8_t *d, size_t n)
{
	return n >= 4 && d[0] == 'P' && d[1] == 'K' &&
	       ((d[2] == 3 && d[3] == 4) || (d[2] == 5 && d[3] == 6));
}

/* Scans an opened wheel into a new scan; closes z. */
static int scan_opened_wheel(wg_scan **out, wg_scanner *s, wg_zip *z, const char *name)
{
	wg_scan *scan = wg_scan_new(WG_SCAN_WHEEL, name, s->ctx);
	if (!scan) {
		wg_zip_close(z);
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	}
	wg_members src;
	wg_members_zip(&src, z);
	int rc = wg_wheel_read(scan, s, &src);
	wg_zip_close(z);
	if (rc < 0) {
		wg_scan_free(scan);
		return rc;
	}
	*out = scan;
	return WG_OK;
}

/* An installed distribution: the same wheel reader over the files its RECORD lists. */
static int scan_installed(wg_scan **out, wg_scanner *s, const char *path)
{
	wg_installed *d = NULL;
	wg_err err = {0};
	int rc = wg_installed_open(&d, path, s->ctx->opts.max_members, &err);
	if (rc < 0)
		return wg_err_copy(&s->err, &err, rc);
	wg_scan *scan = wg_scan_new(WG_SCAN_INSTALLED, path, s->ctx);
	if (!scan) {
		wg_installed_close(d);
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	}
	wg_members src;
	wg_members_installed(&src, d);
	rc = wg_wheel_read(scan, s, &src);
	wg_installed_close(d);
	if (rc < 0) {
		wg_scan_free(scan);
		return rc;
	}
	*out = scan;
	return WG_OK;
}

static int scan_object_image(wg_scan **out, wg_scanner *s, const char *name, const uint8_t *data,
			     size_t len)
{
	wg_scan *scan = wg_scan_new(WG_SCAN_OBJECT, name, s->ctx);
	if (!scan)
		return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
	int rc = wg_scan_add_elf(scan, s, name, wg_base_name(name), data, len);
	if (rc < 0) {
		wg_scan_free(scan);
		return rc;
	}
	*out = scan;
	return WG_OK;
}

static int scan_fd_as(wg_scan **out, wg_scanner *s, int fd, const char *name)
{
	struct stat st;
	uint8_t head[4] = {0};
	if (fstat(fd, &st) != 0)
		return wg_seterr(&s->err, WG_EIO, "%s: %s", name, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return wg_seterr(&s->err, WG_EUNSUPPORTED, "%s: not a regular file", name);
	ssize_t n = pread(fd, head, sizeof(head), 0);
	if (n < 0)
		return wg_seterr(&s->err, WG_EIO, "%s: %s", name, strerror(errno));
	if (is_zip(head, (size_t)n)) {
		wg_zip *z;
		wg_err err = {0};
		int rc = wg_zip_open_fd(&z, fd, name, s->ctx->opts.max_members, &err);
		if (rc < 0)
			return wg_err_copy(&s->err, &err, rc);
		rc = scan_opened_wheel(out, s, z, name);
		if (rc == WG_OK)
			(*out)->file_size = (int64_t)st.st_size;
		return rc;
	}
	if (wg_is_elf(head, (size_t)n)) {
		wg_file_image img;
		wg_err err = {0};
		int rc = wg_file_map(&img, fd, name, (uint64_t)st.st_size, &err);
		if (rc < 0)
			return wg_err_copy(&s->err, &err, rc);
		rc = scan_object_image(out, s, name, img.data, img.len);
		wg_file_unmap(&img);
		if (rc == WG_OK)
			(*out)->file_size = (int64_t)st.st_size;
		return rc;
	}
	if (wg_has_suffix(name, ".whl"))
		return wg_seterr(&s->err, WG_EFORMAT, "%s: not a zip archive (a wheel is a zip file)",
				 name);
	return wg_seterr(&s->err, WG_EUNSUPPORTED,
			 "%s: neither a wheel (zip) nor an ELF object (%s)", name,
			 n < 4 ? "file too short" : "unknown magic bytes");
}

/* ---- a directory: what the walk finds, read into the scan ---- */

typedef struct {
	wg_scan *scan;
	wg_scanner *s;
} walk_into;

static void walk_problem(void *payload, int code, const char *path, const char *msg)
{
	walk_into *w = payload;
	wg_scan_add_problem(w->scan, code, path, "%s", msg);
}

/* A kernel build variant (build/torch29-cxx11-cu128-x86_64-linux) is an input of its own,
 * judged for what its name claims. */
static int walk_dir(void *payload, const char *full, const char *name)
{
	walk_into *w = payload;
	wg_kernel_variant kv;
	if (!wg_kernel_variant_parse(&kv, &w->scan->arena, name))
		return 0;
	return wg_strlist_add(&w->scan->wheels, &w->scan->arena, full) < 0 ? WG_ENOMEM : 1;
}

/* A wheel is an input of its own, read by whoever walks the directory; an unreadable one is
 * then reported, not skipped. */
static int walk_wheel(void *payload, const char *full)
{
	walk_into *w = payload;
	return wg_strlist_add(&w->scan->wheels, &w->scan->arena, full) < 0 ? WG_ENOMEM : WG_OK;
}

static bool walk_wanted(const uint8_t head[4])
{
	return wg_is_elf(head, 4);
}

static int walk_file(void *payload, const char *full, const char *rel, const uint8_t *data,
		     size_t len)
{
	walk_into *w = payload;
	return wg_scan_add_elf(w->scan, w->s, full, rel, data, len) < 0 ? WG_ENOMEM : WG_OK;
}

/* Walks the directory path into scan: its ELF objects are read, its wheels listed. */
static int scan_dir_walk(wg_scan *scan, wg_scanner *s, const char *path)
{
	walk_into w = {scan, s};
	wg_walk cb = {
		.arena = &scan->arena,
		.root = scan->path,
		.max_files = s->ctx->opts.max_files,
		.payload = &w,
		.problem = walk_problem,
		.dir = walk_dir,
		.wheel = walk_wheel,
		.wanted = walk_wanted,
		.file = walk_file,
	};
	return wg_dir_walk(&cb, path);
}

/* ---- the entry points ---- */

static int wg_scan_path_impl(wg_scan **out, wg_scanner *s, const char *path)
{
	struct stat st;
	if (!out || !s || !path)
		return wg_null_arg("wg_scan_path");
	*out = NULL;
	s->err.msg[0] = '\0';
	if (stat(path, &st) != 0)
		return wg_seterr(&s->err, errno == ENOENT ? WG_ENOTFOUND : WG_EIO, "%s: %s", path,
				 strerror(errno));
	if (S_ISDIR(st.st_mode) && wg_is_dist_info(path))
		return scan_installed(out, s, path);
	if (S_ISDIR(st.st_mode)) {
		wg_scan *scan = wg_scan_new(WG_SCAN_DIRECTORY, path, s->ctx);
		if (!scan)
			return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		const char *base;
		char trimmed[PATH_MAX];
		/* build/torch29-cxx11-cu130-x86_64-linux/ is named by its last component */
		size_t pl = strlen(path);
		while (pl > 1 && path[pl - 1] == '/')
			pl--;
		snprintf(trimmed, sizeof(trimmed), "%.*s", (int)pl, path);
		base = strrchr(trimmed, '/');
		base = base ? base + 1 : trimmed;
		if (wg_kernel_variant_parse(&scan->kernel, &scan->arena, base))
			wg_kernel_variant_read(scan, path);
		if (scan_dir_walk(scan, s, path) == WG_ENOMEM) {
			wg_scan_free(scan);
			return wg_seterr(&s->err, WG_ENOMEM, "out of memory");
		}
		if (!scan->objects.len && !scan->wheels.n && !scan->kernel.name) {
			/* Nothing to judge is not a pass. */
			const wg_problem *p = scan->problems.len ? wg_vec_at(&scan->problems, 0) : NULL;
			wg_seterr(&s->err, WG_ENOTFOUND, "no wheel or ELF object found in %s%s%s", path,
				  p ? "; " : "", p ? p->message : "");
			wg_scan_free(scan);
			return WG_ENOTFOUND;
		}
		*out = scan;
		return WG_OK;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return wg_seterr(&s->err, WG_EIO, "%s: %s", path, strerror(errno));
	int rc = scan_fd_as(out, s, fd, path);
	close(fd);
	return rc;
}

/* The scanner keeps the message; a failure also fills this thread's error record. */
WG_API int wg_scan_path(wg_scan **out, wg_scanner *s, const char *path)
{
	if (s)
		s->err.msg[0] = '\0';
	return wg_error_from(s ? &s->err : NULL, wg_scan_path_impl(out, s, path));
}

static int wg_scan_fd_impl(wg_scan **out, wg_scanner *s, int fd, const char *name)
{
	if (!out || !s || fd < 0)
		return wg_null_arg("wg_scan_fd");
	*out = NULL;
	s->err.msg[0] = '\0';
	return scan_fd_as(out, s, fd, name ? name : "(fd)");
}

/* The scanner keeps the message; a failure also fills this thread's error record. */
WG_API int wg_scan_fd(wg_scan **out, wg_scanner *s, int fd, const char *name)
{
	if (s)
		s->err.msg[0] = '\0';
	return wg_error_from(s ? &s->err : NULL, wg_scan_fd_impl(out, s, fd, name));
}

static int wg_scan_buffer_impl(wg_scan **out, wg_scanner *s, const void *data, size_t len,
			  const char *name)
{
	if (!out || !s || (!data && len))
		return wg_null_arg("wg_scan_buffer");
	*out = NULL;
	s->err.msg[0] = '\0';
	name = name ? name : "(buffer)";
	const uint8_t *d = data;
	int rc;
	if (is_zip(d, len)) {
		wg_zip *z;
		wg_err err = {0};
		rc = wg_zip_open_buffer(&z, data, len, name, s->ctx->opts.max_members,
					    &err);
		if (rc < 0)
			return wg_err_copy(&s->err, &err, rc);
		rc = scan_opened_wheel(out, s, z, name);
	} else if (wg_is_elf(d, len)) {
		rc = scan_object_image(out, s, name, d, len);
	} else {
		return wg_seterr(&s->err, WG_EUNSUPPORTED,
				 "%s: neither a wheel (zip) nor an ELF object", name);
	}
	if (rc == WG_OK)
		(*out)->file_size = (int64_t)len;
	return rc;
}

/* The scanner keeps the message; a failure also fills this thread's error record. */
WG_API int wg_scan_buffer(wg_scan **out, wg_scanner *s, const void *data, size_t len,
			  const char *name)
{
	if (s)
		s->err.msg[0] = '\0';
	return wg_error_from(s ? &s->err : NULL, wg_scan_buffer_impl(out, s, data, len, name));
}

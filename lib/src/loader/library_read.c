/*
 * Reading an environment's shared library for the loader: the ELF facts of the file and the
 * classes of its symbols, straight into the loader's record (wg_lib), with no scan (no input,
 * no problems list, no GPU code) and nothing of the scanner changed. A file is opened once
 * (no FIFO, device or symbolic link), and read only after its first 64 bytes say it is an ELF
 * shared object or executable of this machine's class, byte order and architecture, and its
 * size is within the limit.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h"

/* This machine's ELF identity: what ld.so here accepts. */
#define HOST_CLASS (sizeof(void *) == 8 ? 2 : 1)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA 1
#else
#define HOST_DATA 2
#endif
#if defined(__x86_64__)
#define HOST_MACHINE 62
#elif defined(__aarch64__)
#define HOST_MACHINE 183
#elif defined(__powerpc64__)
#define HOST_MACHINE 21
#else
#define HOST_MACHINE 0 /* any */
#endif

wg_lib_header wg_lib_header_check(const uint8_t *h, size_t n)
{
	if (n < 4 || memcmp(h, "\x7f" "ELF", 4) != 0)
		return WG_LIBH_NOT_ELF;
	if (n < 20 || h[4] != HOST_CLASS || h[5] != HOST_DATA)
		return WG_LIBH_OTHER_MACHINE;
	unsigned type = HOST_DATA == 1 ? (unsigned)(h[16] | h[17] << 8) : (unsigned)(h[17] | h[16] << 8);
	unsigned mach = HOST_DATA == 1 ? (unsigned)(h[18] | h[19] << 8) : (unsigned)(h[19] | h[18] << 8);
	if (type != 3 && type != 2) /* ET_DYN, ET_EXEC (the interpreter) */
		return WG_LIBH_NOT_SHARED;
	if (HOST_MACHINE && mach != HOST_MACHINE)
		return WG_LIBH_OTHER_MACHINE;
	return WG_LIBH_OK;
}

int wg_lib_open(const char *real, uint64_t max_size, struct stat *st, wg_ld_note *note)
{
	/* real is a realpath: a link in its place now was put there since; not followed. */
	int fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		wg_ld_note_set(note, true, false, "%s: unreadable (%s)", real,
			       e == EACCES || e == EPERM ? "permission denied" : strerror(e));
		return -1;
	}
	uint8_t head[64];
	ssize_t n = -1;
	const char *why = NULL;
	if (fstat(fd, st) != 0)
		why = "cannot stat";
	else if (!S_ISREG(st->st_mode))
		why = "not a regular file";
	else if ((n = pread(fd, head, sizeof(head), 0)) < 0)
		why = "unreadable";
	if (why) {
		wg_ld_note_set(note, true, true, "%s: %s; not read", real, why);
		close(fd);
		return -1;
	}
	switch (wg_lib_header_check(head, (size_t)n)) {
	case WG_LIBH_OK:
		break;
	case WG_LIBH_NOT_ELF:
		/* ld.so stops here, with "invalid ELF header" (or "file too short"): certain. */
		wg_ld_note_set(note, false, true, "is %s, which is not an ELF file (not read): importing "
			       "it fails with \"%s: %s\"", real, real,
			       n < (ssize_t)(HOST_CLASS == 2 ? 64 : 52) ? "file too short"
									 : "invalid ELF header");
		close(fd);
		return -1;
	case WG_LIBH_NOT_SHARED:
		wg_ld_note_set(note, false, false, "%s is not an ELF shared object; skipped", real);
		close(fd);
		return -1;
	case WG_LIBH_OTHER_MACHINE:
		/* ld.so skips a library of another class or machine and searches on. */
		wg_ld_note_set(note, false, false, "%s is an ELF object for another machine; skipped",
			       real);
		close(fd);
		return -1;
	}
	if ((uint64_t)st->st_size > max_size) {
		wg_ld_note_set(note, true, true, "%s: %llu bytes, more than the limit of %llu "
			       "(max_member_size); not read", real, (unsigned long long)st->st_size,
			       (unsigned long long)max_size);
		close(fd);
		return -1;
	}
	return fd;
}

wg_lib *wg_read_library(int fd, const char *path, uint64_t size, wg_matcher *m,
			uint32_t max_symbols)
{
	if (size == 0 || size > SIZE_MAX)
		return NULL;
	size_t len = (size_t)size;
	void *data = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (data == MAP_FAILED)
		return NULL;
	wg_lib *l = NULL;
	if (wg_is_elf(data, len)) {
		wg_arena arena = {0};
		wg_object o;
		memset(&o, 0, sizeof(o));
		o.path = path;
		o.size = len;
		wg_vec_init(&o.verneeds, sizeof(wg_verneed));
		wg_err err = {0};
		if (wg_elf_read(&o, &arena, data, len, max_symbols, &err) == WG_OK && !o.error) {
			wg_object_classify(&o, m);
			l = wg_lib_from_object(&o, path);
		}
		wg_strlist_free(&o.needed);
		wg_vec_free(&o.fatbin_containers);
		wg_vec_free(&o.fatbin_entries);
		wg_vec_free(&o.verneeds);
		wg_strlist_free(&o.verdefs);
		wg_arena_free(&arena);
	}
	munmap(data, len);
	return l;
}

void wg_ld_note_set(wg_ld_note *note, bool uncertain, bool stop, const char *fmt, ...)
{
	if (!note)
		return;
	note->stop = note->stop || stop;
	if (note->text[0] && note->certain_stop && uncertain)
		return; /* the search ended at a certain failure before */
	/* The first uncertain reason is the one to tell; a certain one only until then. */
	if (note->text[0] && (note->uncertain || !uncertain))
		return;
	note->certain_stop = !uncertain && stop;
	note->uncertain = note->uncertain || uncertain;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(note->text, sizeof(note->text), fmt, ap);
	va_end(ap);
}

/*
 * Reading an environment's shared library for the loader: the ELF facts of the file and the
 * classes of its symbols, straight into the loader's record (wg_lib), with no scan (no input,
 * no problems list, no GPU code) and nothing of the scanner changed.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h"

wg_lib *wg_read_library(const char *path, wg_matcher *m, uint32_t max_symbols)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *data = MAP_FAILED;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED)
		return NULL;
	size_t len = (size_t)st.st_size;
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

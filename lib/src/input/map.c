/*
 * Files mapped into memory: a regular file's bytes as one read-only image (an empty file is an
 * empty image), for the ELF reader and the directory walk.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_INPUT /* wg_seterr: what fails here */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "input/input.h"

int wg_file_map(wg_file_image *img, int fd, const char *name, uint64_t size, wg_err *err)
{
	img->data = NULL;
	img->mapped = false;
	img->len = (size_t)size;
	if (size == 0) {
		img->data = (const uint8_t *)"";
		return WG_OK;
	}
	void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return wg_seterr(err, WG_EIO, "%s: cannot map file: %s", name, strerror(errno));
	img->data = p;
	img->mapped = true;
	return WG_OK;
}

void wg_file_unmap(wg_file_image *img)
{
	if (img->mapped)
		munmap((void *)img->data, img->len);
}

/*
 * Hugging Face hub kernels: a build variant directory's name and its metadata.json, the claims
 * a kernel repository makes about each build (docs/kernels.md). The names follow kernel-builder's
 * generate_build_name (huggingface/kernels, build2cmake/src/templates/build-variants.cmake):
 * torch<major><minor>-[cxx11-|cxx98-]<compute>-<cpu>-<os>, compute one of cu<XY>, rocm<XY>,
 * xpu<XY>, metal, cpu; and torch-universal for pure-Python kernels. metadata.json's backend
 * {"type": "cuda", "archs": [...]} is written by add_gpu_arch_metadata.py (same repository).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "facts/facts.h"

#define METADATA_MAX (1u << 20)
#define ARCHS_MAX 64

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* "cu128" -> 12.8, "cu118" -> 11.8, "cu130" -> 13.0, "cu12" -> 12.0 */
static void cuda_version(const char *d, size_t n, unsigned *major, unsigned *minor)
{
	unsigned v = 0;
	for (size_t i = 0; i < n && i < 6; i++)
		v = v * 10 + (unsigned)(d[i] - '0');
	if (n <= 2) {
		*major = v;
		*minor = 0;
	} else if (n == 3) {
		*major = v / 10;
		*minor = v % 10;
	} else {
		*major = (unsigned)(d[0] - '0') * 10 + (unsigned)(d[1] - '0');
		*minor = v % 100;
	}
}

bool wg_kernel_variant_parse(wg_kernel_variant *out, wg_arena *a, const char *name)
{
	memset(out, 0, sizeof(*out));
	out->cxx11 = -1;
	if (strncmp(name, "torch", 5) || strlen(name) > 128)
		return false;
	if (!strcmp(name, "torch-universal")) {
		out->name = wg_arena_strdup(a, name);
		return out->name != NULL;
	}
	/* tokens split at '-' (the cpu "x86_64" has none) */
	const char *tok[8];
	size_t len[8] = {0}, nt = 0;
	for (const char *p = name; *p && nt < 8;) {
		const char *e = strchr(p, '-');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		tok[nt] = p;
		len[nt++] = n;
		p += n + (e ? 1 : 0);
		if (!e)
			break;
	}
	size_t i = 0;
	/* torch<major><minor>, or torch followed by words up to the compute (torch-stable-abi-...) */
	if (len[0] > 5) {
		if (!all_digits(tok[0] + 5, len[0] - 5) || len[0] - 5 < 2)
			return false;
		out->torch_major = (unsigned)(tok[0][5] - '0');
		out->torch_minor = (unsigned)strtoul(tok[0] + 6, NULL, 10);
	}
	i = 1;
	for (; i < nt; i++) {
		const char *t = tok[i];
		size_t n = len[i];
		if (n == 5 && !strncmp(t, "cxx11", 5)) {
			out->cxx11 = 1;
		} else if (n == 5 && !strncmp(t, "cxx98", 5)) {
			out->cxx11 = 0;
		} else if (n > 2 && !strncmp(t, "cu", 2) && all_digits(t + 2, n - 2)) {
			out->compute = "cu";
			cuda_version(t + 2, n - 2, &out->cuda_major, &out->cuda_minor);
			break;
		} else if ((n > 4 && !strncmp(t, "rocm", 4) && all_digits(t + 4, n - 4)) ||
			   (n > 3 && !strncmp(t, "xpu", 3) && all_digits(t + 3, n - 3))) {
			out->compute = t[0] == 'r' ? "rocm" : "xpu";
			break;
		} else if ((n == 5 && !strncmp(t, "metal", 5)) || (n == 3 && !strncmp(t, "cpu", 3))) {
			out->compute = t[0] == 'm' ? "metal" : "cpu";
			break;
		} else if (len[0] > 5) {
			return false; /* torch28-<something unknown> */
		}
	}
	/* the compute, then <cpu>-<os>, and nothing after */
	if (!out->compute || i + 3 != nt || !len[i + 1] || !len[i + 2])
		return false;
	out->name = wg_arena_strdup(a, name);
	out->compute_label = wg_arena_strndup(a, tok[i], len[i]);
	out->cpu = wg_arena_strndup(a, tok[i + 1], len[i + 1]);
	out->os = wg_arena_strndup(a, tok[i + 2], len[i + 2]);
	return out->name && out->compute_label && out->cpu && out->os;
}

static void read_metadata(wg_scan *scan, const char *file, const char *text, size_t n)
{
	wg_kernel_variant *k = &scan->kernel;
	json_error_t jerr;
	json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!root || !json_is_object(root)) {
		wg_scan_add_problem(scan, WG_EFORMAT, file, "%s: not a JSON object%s%s (line %d)",
				    file, root ? "" : ": ", root ? "" : jerr.text, jerr.line);
		json_decref(root);
		return;
	}
	k->has_metadata = true;
	json_t *b = json_object_get(root, "backend");
	if (b && !json_is_object(b)) {
		wg_scan_add_problem(scan, WG_EFORMAT, file, "%s: \"backend\" is not an object", file);
	} else if (b) {
		json_t *t = json_object_get(b, "type");
		if (json_is_string(t))
			k->backend = wg_arena_strdup(&scan->arena, json_string_value(t));
		json_t *archs = json_object_get(b, "archs");
		if (archs && !json_is_array(archs)) {
			wg_scan_add_problem(scan, WG_EFORMAT, file,
					    "%s: \"backend.archs\" is not an array", file);
		} else if (archs) {
			size_t i;
			json_t *v;
			json_array_foreach(archs, i, v) {
				if (i >= ARCHS_MAX) {
					wg_scan_add_problem(scan, WG_ELIMIT, file, "%s: more than %u "
							    "archs; the rest was not read", file,
							    ARCHS_MAX);
					break;
				}
				if (!json_is_string(v) || json_string_length(v) > 32) {
					wg_scan_add_problem(scan, WG_EFORMAT, file, "%s: backend.archs[%zu]"
							    " is not a short string", file, i);
					continue;
				}
				if (wg_strlist_add(&k->archs, &scan->arena, json_string_value(v)) < 0)
					break;
			}
		}
	}
	json_decref(root);
}

void wg_kernel_variant_read(wg_scan *scan, const char *dir)
{
	char *file = wg_arena_printf(&scan->arena, "%s/metadata.json", dir);
	if (!file)
		return;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno != ENOENT)
			wg_scan_add_problem(scan, WG_EIO, file, "%s: %s", file, strerror(errno));
		return;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		wg_scan_add_problem(scan, WG_EFORMAT, file, "%s: not a regular file", file);
	} else if ((uint64_t)st.st_size > METADATA_MAX) {
		wg_scan_add_problem(scan, WG_ELIMIT, file, "%s: %lld bytes, more than the %u read",
				    file, (long long)st.st_size, METADATA_MAX);
	} else {
		size_t n = (size_t)st.st_size;
		char *text = malloc(n ? n : 1);
		if (text && pread(fd, text, n, 0) == (ssize_t)n)
			read_metadata(scan, file, text, n);
		else if (text)
			wg_scan_add_problem(scan, WG_EIO, file, "%s: short read", file);
		free(text);
	}
	close(fd);
}

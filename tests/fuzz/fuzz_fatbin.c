/*
 * A CUDA fatbin region: the input is the contents of an object's `.nv_fatbin` section (the
 * registered containers and their entries), or with a first byte of 1 a stretch of an object
 * outside any section (the whole-file scan for driver-loaded containers). The entries found go
 * through the public getters and the GPU verdicts, as the checks read them.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>

#include "facts/facts.h"
#include "fuzz_common.h"

static void fz_problem(void *payload, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fz_problem(void *payload, int code, const char *fmt, ...)
{
	(void)payload;
	(void)code;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_init();
	if (size < 1)
		return 0;
	bool loose = data[0] == 1;
	data++, size--;
	/* A copy of exactly the input's size, so that ASan sees any read past its end. */
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	wg_section sec = {0};
	sec.name = ".nv_fatbin";
	sec.offset = 0;
	sec.size = size;
	sec.has_contents = true;
	wg_object obj = {0};
	obj.path = "fuzz.so";
	obj.size = size;
	obj.sections = loose ? NULL : &sec;
	obj.nsections = loose ? 0 : 1;
	wg_arena a = {0};
	if (wg_fatbin_read(&obj, &a, buf, size, fz_problem, NULL) == WG_OK) {
		static const char *const gpus[] = {"sm_50", "sm_80", "sm_90", "sm_100", "sm_120"};
		for (size_t g = 0; g < WG_ARRAY_LEN(gpus); g++) {
			wg_gpu gpu = WG_GPU_INIT;
			if (wg_gpu_parse(&gpu, fz_ctx, gpus[g]) != WG_OK)
				abort();
			for (size_t i = 0; i < wg_object_fatbin_entry_count(&obj); i++) {
				wg_fatbin_entry_info e = WG_FATBIN_ENTRY_INFO_INIT;
				if (wg_object_fatbin_entry(&e, &obj, i) == WG_OK)
					(void)wg_fatbin_entry_runs_on(&e, &gpu);
			}
			wg_gpu_verdict v = WG_GPU_VERDICT_INIT;
			(void)wg_object_gpu_verdict(&v, &obj, &gpu);
		}
		for (size_t i = 0; i < wg_object_fatbin_container_count(&obj); i++) {
			wg_fatbin_container_info c = WG_FATBIN_CONTAINER_INFO_INIT;
			(void)wg_object_fatbin_container(&c, &obj, i);
		}
	}
	wg_vec_free(&obj.fatbin_containers);
	wg_vec_free(&obj.fatbin_entries);
	wg_arena_free(&a);
	free(buf);
	return 0;
}

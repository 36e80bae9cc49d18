/*
 * Python source, the text every pure wheel brings: the tokenizer (facts/pytoken.c) and the
 * import model (facts/pyimports.c) through the checks that read it (hollow-wheel, the loader
 * rules' severity). The input is the source of a package's __init__.py and of a module of it,
 * with a `requires` dependency, in a wheel scan made directly (no zip: the zip reader has its
 * own harness), then checked in both profiles and reported.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "fuzz_common.h"

#include "facts/facts.h"

static void add_source(wg_scan *scan, const char *name, const uint8_t *data, size_t size)
{
	wg_member *m = wg_vec_push(&scan->members);
	if (m) {
		m->name = wg_arena_strdup(&scan->arena, name);
		m->size = m->csize = size;
		m->safe = m->read_ok = true;
		m->method = "store";
	}
	char *text = malloc(size + 1);
	wg_source *src = text ? wg_vec_push(&scan->sources) : NULL;
	if (!src) {
		free(text);
		return;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	src->name = m ? m->name : "pkg/x.py";
	src->text = text;
	src->len = size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_init();
	static const char path[] = "pkg-1.0-py3-none-any.whl";
	wg_scan *scan = wg_scan_new(WG_SCAN_WHEEL, path, fz_ctx);
	if (!scan)
		return 0;
	scan->fields[WG_WHEEL_NAME] = "pkg";
	scan->fields[WG_WHEEL_VERSION] = "1.0";
	wg_strlist_add(&scan->lists[WG_LIST_REQUIRES_DIST], &scan->arena, "requests (>=2)");
	wg_strlist_add(&scan->lists[WG_LIST_REQUIRES_DIST], &scan->arena, "pkg-cuda; extra == \"gpu\"");
	/* the same text as the package and as a module of it: both binding paths */
	add_source(scan, "pkg/__init__.py", data, size);
	add_source(scan, "pkg/sub/mod.py", data, size);
	fz_scan_and_report(scan, path);
	wg_scan_free(scan);
	return 0;
}

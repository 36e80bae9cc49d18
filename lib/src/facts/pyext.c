/*
 * Python extension modules: which objects are importable modules, under which dotted name,
 * and for which interpreter (the EXTENSION_SUFFIXES of CPython and PyPy on Linux:
 * ".cpython-312-x86_64-linux-gnu.so", ".cpython-313t-...", ".abi3.so", ".pypy310-pp73-...",
 * and the untagged ".so").
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "facts/facts.h"

static bool exports(const wg_object *obj, const char *name)
{
	for (size_t i = 0; i < obj->nsyms; i++)
		if (obj->syms[i].defined && strcmp(obj->syms[i].name, name) == 0)
			return true;
	return false;
}

void wg_pyext_classify(wg_object *obj, wg_arena *a, const char *relpath)
{
	/* Wheel data directories install into site-packages too. */
	const char *p = relpath;
	const char *data = strstr(p, ".data/");
	if (data && !memchr(p, '/', (size_t)(data - p))) {
		const char *rest = data + 6;
		if (wg_has_prefix(rest, "purelib/") || wg_has_prefix(rest, "platlib/"))
			p = rest + 8;
		else
			return; /* scripts/, headers/, data/: not importable */
	}
	if (!wg_has_suffix(p, ".so"))
		return;
	const char *slash = strrchr(p, '/');
	const char *base = slash ? slash + 1 : p;
	const char *dot = strchr(base, '.');
	if (!dot || dot == base)
		return;
	size_t stem_len = (size_t)(dot - base);
	const char *suffix = dot; /* ".cpython-312-x86_64-linux-gnu.so" or ".so" */

	const char *interp = NULL, *plat = NULL;
	bool tagged = false;
	if (strcmp(suffix, ".so") == 0) {
		tagged = false;
	} else if (strcmp(suffix, ".abi3.so") == 0) {
		interp = "abi3";
		tagged = true;
	} else if (wg_has_prefix(suffix, ".cpython-") || wg_has_prefix(suffix, ".pypy")) {
		/* .<impl>-<version>-<platform>.so: cpython-312-x86_64-linux-gnu,
		 * pypy310-pp73-x86_64-linux-gnu; the interpreter is the first two fields. */
		const char *body = suffix + 1;
		size_t blen = strlen(body) - 3;
		const char *dash = memchr(body, '-', blen);
		if (!dash)
			return;
		dash = memchr(dash + 1, '-', blen - (size_t)(dash + 1 - body));
		if (!dash)
			return;
		interp = wg_arena_strndup(a, body, (size_t)(dash - body));
		plat = wg_arena_strndup(a, dash + 1, blen - (size_t)(dash + 1 - body));
		tagged = true;
	} else {
		return; /* "libfoo.so.1"-like names never reach here; ".foo.so" is not a suffix */
	}
	char *init = wg_arena_printf(a, "PyInit_%.*s", (int)stem_len, base);
	obj->has_init = init && exports(obj, init);
	/* An untagged .so is a module only when it exports its PyInit (libtorch.so does not). */
	if (!tagged && !obj->has_init)
		return;
	obj->is_extension = 1;
	obj->ext_suffix = wg_arena_strdup(a, suffix);
	obj->ext_interpreter = interp;
	obj->ext_platform = plat;
	size_t dir_len = slash ? (size_t)(slash - p) : 0;
	char *mod = wg_arena_alloc(a, dir_len + 1 + stem_len + 1);
	if (!mod)
		return;
	size_t o = 0;
	for (size_t i = 0; i < dir_len; i++)
		mod[o++] = p[i] == '/' ? '.' : p[i];
	if (dir_len)
		mod[o++] = '.';
	memcpy(mod + o, base, stem_len);
	mod[o + stem_len] = '\0';
	obj->module = mod;
}

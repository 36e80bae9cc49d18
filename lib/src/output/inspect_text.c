/*
 * The facts of a scan as text for people, the human face of `wheelgate inspect`: the wheel's
 * names, tags, metadata and RECORD, then every ELF object (format, needs, versions, string ABI,
 * CUDA and GPU verdicts, symbols), then the problems. inspect_json.c writes the same facts for
 * programs.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

#define RING 16

/* The text being written; colours are "" unless asked for. */
typedef struct {
	wg_buf b;
	bool oom;
	char *ring[RING]; /* escaped pieces of the line being written */
	unsigned next;
	const char *bold, *red, *yellow, *green, *dim, *off;
} tx;

static void tp(tx *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tp(tx *t, const char *fmt, ...)
{
	char small[512];
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->oom = true;
	} else if ((size_t)n < sizeof(small)) {
		t->oom |= wg_buf_append(&t->b, small, (size_t)n) < 0;
	} else {
		char *big = malloc((size_t)n + 1);
		if (big && vsnprintf(big, (size_t)n + 1, fmt, ap2) == n)
			t->oom |= wg_buf_append(&t->b, big, (size_t)n) < 0;
		else
			t->oom = true;
		free(big);
	}
	va_end(ap2);
}

/* Text from an input made safe for a terminal: control characters and invalid UTF-8 as \xNN.
 * Valid while RING more pieces are made (several go into one line); NULL for NULL. */
static const char *E(tx *t, const char *s)
{
	if (!s)
		return NULL;
	char *e = NULL;
	if (wg_escape(&e, s, WG_ESCAPE_CONTROL) < 0) {
		t->oom = true;
		return "";
	}
	unsigned i = t->next++ % RING;
	free(t->ring[i]);
	t->ring[i] = e;
	return e;
}

static const char *or_dash(tx *t, const char *s)
{
	return s ? E(t, s) : "-";
}

static void human_size(char *buf, size_t n, unsigned long long bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%llu B", bytes);
	else
		snprintf(buf, n, "%.1f %s", v, units[u]);
}

static void list_line(tx *t, const char *label, const wg_scan *s, wg_wheel_list l, const char *sep)
{
	size_t n = wg_wheel_list_count(s, l);
	tp(t, "  %-12s", label);
	if (!n)
		tp(t, "-");
	for (size_t i = 0; i < n; i++)
		tp(t, "%s%s", i ? sep : "", E(t, wg_wheel_list_item(s, l, i)));
	tp(t, "\n");
}

static void abi_line(tx *t, const wg_object_info *oi)
{
	const char *col = oi->abi == WG_ABI_MIXED ? t->yellow : "";
	tp(t, "    %-11s %s%s%s  (torch-facing: %u new, %u old -> %s; other: %u new, %u old)\n",
	   "string ABI", col, wg_string_abi_name(oi->abi), t->off, oi->torch_new, oi->torch_old,
	   wg_string_abi_name(oi->torch_abi), oi->other_new, oi->other_old);
}

static void cuda_lines(tx *t, const wg_object *o, const wg_gpu *gpus, size_t ngpus)
{
	size_t nc = wg_object_fatbin_container_count(o);
	if (!nc)
		return;
	char sass[1024], ptx[1024], lto[512], osass[1024], optx[1024];
	size_t ns = wg_object_arch_set(o, WG_FATBIN_SASS, 1, sass, sizeof(sass));
	size_t np = wg_object_arch_set(o, WG_FATBIN_PTX, 1, ptx, sizeof(ptx));
	size_t nl = wg_object_arch_set(o, WG_FATBIN_LTOIR, 1, lto, sizeof(lto));
	size_t reg = 0;
	for (size_t i = 0; i < nc; i++) {
		wg_fatbin_container_info ci = WG_FATBIN_CONTAINER_INFO_INIT;
		wg_object_fatbin_container(&ci, o, i);
		reg += ci.registered;
	}
	tp(t, "    %-11s %zu fatbin%s, %zu entries (%zu in the registered sections, %zu found outside "
	   "them)\n", "CUDA", nc, nc == 1 ? "" : "s", wg_object_fatbin_entry_count(o), reg, nc - reg);
	if (wg_object_fatbin_entries_more(o))
		tp(t, "    %-11s %s%zu more entries counted, not read (max_fatbin_entries; --limit "
		   "max_fatbin_entries=N)%s\n", "",
		   t->red, wg_object_fatbin_entries_more(o), t->off);
	tp(t, "    %-11s %s\n", "SASS", ns ? sass : "-");
	tp(t, "    %-11s %s\n", "PTX", np ? ptx : "-");
	if (nl)
		tp(t, "    %-11s %s\n", "LTO-IR", lto);
	if (nc > reg) {
		size_t os = wg_object_arch_set(o, WG_FATBIN_SASS, 0, osass, sizeof(osass));
		size_t op = wg_object_arch_set(o, WG_FATBIN_PTX, 0, optx, sizeof(optx));
		tp(t, "    %-11s SASS %s; PTX %s\n", "outside", os ? osass : "-", op ? optx : "-");
	}
	for (size_t i = 0; i < ngpus; i++) {
		wg_gpu_verdict v = WG_GPU_VERDICT_INIT;
		wg_object_gpu_verdict(&v, o, &gpus[i]);
		char label[64];
		if (gpus[i].name)
			snprintf(label, sizeof(label), "%s (%u.%u)", gpus[i].name, gpus[i].cc_major,
				 gpus[i].cc_minor);
		else
			snprintf(label, sizeof(label), "sm_%u%u", gpus[i].cc_major, gpus[i].cc_minor);
		/* Without a registered module nothing fails at a launch the runtime makes: the
		 * library picks among the fatbins it loads itself. */
		bool fails = v.runs == WG_RUNS_NONE && v.kernel_containers;
		const char *col = fails ? t->red
				  : v.runs != WG_RUNS_ALL || v.how == WG_RUN_PTX_JIT ? t->yellow
				  : t->green;
		tp(t, "    %-11s %s%s%s%s", label, col,
		   v.runs != WG_RUNS_NONE ? "runs: " : fails ? "cannot run" : "no image for it",
		   v.runs == WG_RUNS_NONE ? "" : wg_run_how_name(v.how), t->off);
		if (v.kernel_containers)
			tp(t, " (an image in %zu of %zu kernel module%s)", v.runnable_containers,
			   v.kernel_containers, v.kernel_containers == 1 ? "" : "s");
		else
			tp(t, " (no kernel module the CUDA runtime registers)");
		if (v.ptx_isa_major)
			tp(t, "; JIT from PTX ISA %u.%u", v.ptx_isa_major, v.ptx_isa_minor);
		if (v.other_containers)
			tp(t, "; an image in %zu of %zu fatbins the library loads itself",
			   v.other_runnable, v.other_containers);
		tp(t, "\n");
	}
}

static int by_version(const void *a, const void *b)
{
	return wg_version_compare(*(const char *const *)a, *(const char *const *)b);
}

/* Every version needed, per library, in the order the object lists the libraries. */
static void version_lines(tx *t, const wg_object *o)
{
	size_t nv = wg_object_version_count(o);
	for (size_t i = 0; i < nv; i++) {
		const char *lib, *ver, *l2, *v2;
		bool seen = false;
		wg_object_version(o, i, &lib, &ver);
		for (size_t k = 0; k < i && !seen; k++)
			seen = wg_object_version(o, k, &l2, &v2) == WG_OK && !strcmp(l2, lib);
		if (seen)
			continue; /* this library's line is written */
		tp(t, "      %-20s", E(t, lib));
		const char **vs = calloc(nv, sizeof(*vs));
		size_t n = 0;
		for (size_t k = i; vs && k < nv; k++)
			if (wg_object_version(o, k, &l2, &v2) == WG_OK && !strcmp(l2, lib))
				vs[n++] = v2;
		if (vs)
			qsort(vs, n, sizeof(*vs), by_version);
		else
			t->oom = true;
		for (size_t k = 0; k < n; k++)
			tp(t, " %s", E(t, vs[k]));
		tp(t, "\n");
		free(vs);
	}
}

static void symbol_lines(tx *t, const wg_object *o, size_t count, unsigned flags)
{
	for (size_t i = 0; i < count; i++) {
		wg_symbol_info si = WG_SYMBOL_INFO_INIT;
		wg_object_symbol(&si, o, i);
		if ((flags & WG_TEXT_ABI_SYMBOLS) && !(si.string_abi && si.abi_surface))
			continue;
		const char *abi = (si.string_abi & 3) == 3 ? "both"
				  : si.string_abi & WG_SYM_NEW_STRING ? "new"
				  : si.string_abi & WG_SYM_OLD_STRING ? "old"
								      : "";
		tp(t, "      %c %-6s %-4s %-5s%s %s%s%s%s\n", si.defined ? 'D' : 'U',
		   wg_binding_name(si.binding), abi, si.torch_facing ? "torch" : "", t->dim, t->off,
		   E(t, si.name), si.symver ? (si.symver_hidden || !si.defined ? "@" : "@@") : "",
		   si.symver ? E(t, si.symver) : "");
		if (si.demangled)
			tp(t, "        %s%s%s\n", t->dim, E(t, si.demangled), t->off);
	}
}

static void object_block(tx *t, const wg_object *o, unsigned flags, const wg_gpu *gpus,
			 size_t ngpus)
{
	wg_object_info oi = WG_OBJECT_INFO_INIT;
	char sz[32];
	wg_object_get_info(&oi, o);
	human_size(sz, sizeof(sz), oi.size);
	tp(t, "  %sobject %s%s  (%s)\n", t->bold, E(t, oi.path), t->off, sz);
	if (oi.error) {
		tp(t, "    %serror: %s%s\n", t->red, E(t, oi.error), t->off);
		return;
	}
	tp(t, "    %-11s ELF%d %s (e_machine %d), %s\n", "format", oi.elf_class, oi.machine_name,
	   oi.machine, oi.type);
	if (oi.is_extension)
		tp(t, "    %-11s module %s%s%s for %s%s%s, %s\n", "extension", t->bold, E(t, oi.module),
		   t->off, oi.ext_interpreter ? E(t, oi.ext_interpreter) : "any interpreter",
		   oi.ext_platform ? " on " : "", oi.ext_platform ? E(t, oi.ext_platform) : "",
		   oi.has_init ? "exports its PyInit" : "does NOT export its PyInit");
	if (oi.soname)
		tp(t, "    %-11s %s\n", "soname", E(t, oi.soname));
	tp(t, "    %-11s", "needed");
	if (!oi.needed_count)
		tp(t, " -");
	for (size_t i = 0; i < oi.needed_count; i++)
		tp(t, " %s", E(t, wg_object_needed(o, i)));
	tp(t, "\n");
	if (oi.rpath || oi.runpath)
		tp(t, "    %-11s rpath %s, runpath %s\n", "paths", or_dash(t, oi.rpath),
		   or_dash(t, oi.runpath));
	if (o->sections_lie)
		tp(t, "    %-11s %sthe section headers lie: %s%s (read as the loader reads it)\n",
		   "sections", t->red, E(t, o->sections_lie), t->off);
	char highest[512];
	if (wg_object_highest_versions(o, highest, sizeof(highest))) {
		tp(t, "    %-11s %s (the highest of each family)\n", "versions", E(t, highest));
		version_lines(t, o);
	}
	tp(t, "    %-11s %zu (%zu defined, %zu undefined)\n", "symbols", oi.symbol_count,
	   oi.defined_count, oi.undefined_count);
	abi_line(t, &oi);
	cuda_lines(t, o, gpus, ngpus);
	if (!(flags & WG_TEXT_NO_SYMBOLS))
		symbol_lines(t, o, oi.symbol_count, flags);
}

static void record_line(tx *t, const wg_scan *s)
{
	size_t counts[WG_RECORD_ABSENT + 1] = {0};
	size_t n = wg_scan_member_count(s);
	for (size_t i = 0; i < n; i++) {
		wg_member_info mi = WG_MEMBER_INFO_INIT;
		wg_scan_member(&mi, s, i);
		if (!mi.is_dir && (unsigned)mi.record <= WG_RECORD_ABSENT)
			counts[mi.record]++;
	}
	tp(t, "  %-12s", "RECORD");
	if (!wg_wheel_has_record(s)) {
		tp(t, "%smissing%s\n", t->red, t->off);
		return;
	}
	bool first = true;
	for (int st = 0; st <= WG_RECORD_ABSENT; st++) {
		if (!counts[st])
			continue;
		const char *col = st == WG_RECORD_OK || st == WG_RECORD_UNHASHED ? ""
				  : st == WG_RECORD_REPACKAGED ? t->yellow : t->red;
		tp(t, "%s%s%zu %s%s", first ? "" : ", ", col, counts[st],
		   wg_record_status_name((wg_record_status)st), t->off);
		first = false;
	}
	if (wg_wheel_list_count(s, WG_LIST_RECORD_ORPHANS))
		tp(t, ", %s%zu listed but absent%s", t->red,
		   wg_wheel_list_count(s, WG_LIST_RECORD_ORPHANS), t->off);
	if (wg_scan_is_repackaged(s)) {
		const char *inst = wg_wheel_get(s, WG_WHEEL_INSTALLER);
		tp(t, " (%s: files that differ from RECORD are 'repackaged', not mismatches)",
		   inst ? "INSTALLER names no wheel installer" : "no INSTALLER, a system's packages");
	}
	tp(t, "\n");
}

static void wheel_block(tx *t, const wg_scan *s, bool members)
{
	const char *err = wg_wheel_get(s, WG_WHEEL_FILENAME_ERROR);
	if (wg_scan_get_kind(s) == WG_SCAN_INSTALLED) {
		/* An install keeps no filename: name and tags come from METADATA and WHEEL below. */
		tp(t, "  %-12s%s-%s (no filename: an installed distribution)\n", "filename", t->dim,
		   t->off);
	} else if (err) {
		tp(t, "  %-12s%s%s%s\n", "filename", t->yellow, E(t, err), t->off);
	} else {
		tp(t, "  %-12s%s %s", "name", E(t, wg_wheel_get(s, WG_WHEEL_NAME)),
		   E(t, wg_wheel_get(s, WG_WHEEL_VERSION)));
		if (wg_wheel_get(s, WG_WHEEL_LOCAL_VERSION))
			tp(t, "  (local label %s)", E(t, wg_wheel_get(s, WG_WHEEL_LOCAL_VERSION)));
		if (wg_wheel_get(s, WG_WHEEL_BUILD_TAG))
			tp(t, "  (build %s)", E(t, wg_wheel_get(s, WG_WHEEL_BUILD_TAG)));
		tp(t, "\n");
		list_line(t, "python tags", s, WG_LIST_PYTHON_TAGS, ".");
		list_line(t, "abi tags", s, WG_LIST_ABI_TAGS, ".");
		list_line(t, "platforms", s, WG_LIST_PLATFORM_TAGS, ".");
	}
	if (wg_wheel_get(s, WG_WHEEL_VARIANT_LABEL) || wg_wheel_get(s, WG_WHEEL_VARIANT_JSON_LABEL) ||
	    wg_wheel_get(s, WG_WHEEL_VARIANT_ERROR)) {
		/* PEP 825: the filename's label, variant.json's, and its properties */
		tp(t, "  %-12slabel %s, variant.json %s", "variant",
		   or_dash(t, wg_wheel_get(s, WG_WHEEL_VARIANT_LABEL)),
		   or_dash(t, wg_wheel_get(s, WG_WHEEL_VARIANT_JSON_LABEL)));
		if (wg_wheel_get(s, WG_WHEEL_VARIANT_ERROR))
			tp(t, " %s(%s)%s", t->yellow, E(t, wg_wheel_get(s, WG_WHEEL_VARIANT_ERROR)),
			   t->off);
		tp(t, "\n");
		if (wg_wheel_list_count(s, WG_LIST_VARIANT_PROPERTIES))
			list_line(t, "properties", s, WG_LIST_VARIANT_PROPERTIES, ", ");
	}
	tp(t, "  %-12s%s\n", "dist-info", or_dash(t, wg_wheel_get(s, WG_WHEEL_DIST_INFO)));
	tp(t, "  %-12sWheel-Version %s, Root-Is-Purelib %s, Generator %s\n", "WHEEL",
	   or_dash(t, wg_wheel_get(s, WG_WHEEL_WHEEL_VERSION)),
	   or_dash(t, wg_wheel_get(s, WG_WHEEL_ROOT_IS_PURELIB)),
	   or_dash(t, wg_wheel_get(s, WG_WHEEL_GENERATOR)));
	list_line(t, "WHEEL tags", s, WG_LIST_WHEEL_TAGS, ", ");
	tp(t, "  %-12s%s %s", "METADATA", or_dash(t, wg_wheel_get(s, WG_WHEEL_META_NAME)),
	   or_dash(t, wg_wheel_get(s, WG_WHEEL_META_VERSION)));
	if (wg_wheel_get(s, WG_WHEEL_REQUIRES_PYTHON))
		tp(t, ", Requires-Python %s", E(t, wg_wheel_get(s, WG_WHEEL_REQUIRES_PYTHON)));
	tp(t, "\n");
	if (wg_wheel_list_count(s, WG_LIST_REQUIRES_DIST))
		list_line(t, "requires", s, WG_LIST_REQUIRES_DIST, ", ");
	list_line(t, "top_level", s, WG_LIST_TOP_LEVEL, ", ");
	size_t n = wg_scan_member_count(s);
	unsigned long long usize = 0, csize = 0;
	for (size_t i = 0; i < n; i++) {
		wg_member_info mi = WG_MEMBER_INFO_INIT;
		wg_scan_member(&mi, s, i);
		usize += mi.size;
		csize += mi.compressed_size;
	}
	char a[32], b[32];
	human_size(a, sizeof(a), usize);
	human_size(b, sizeof(b), csize);
	tp(t, "  %-12s%zu (%s, %s compressed)\n", "members", n, a, b);
	record_line(t, s);
	if (!members)
		return;
	for (size_t i = 0; i < n; i++) {
		wg_member_info mi = WG_MEMBER_INFO_INIT;
		wg_scan_member(&mi, s, i);
		bool bad = mi.record != WG_RECORD_OK && mi.record != WG_RECORD_UNHASHED;
		tp(t, "    %s%-10s%s %12llu %-8s %s%s\n", bad ? t->red : t->dim,
		   mi.is_dir ? "dir" : wg_record_status_name(mi.record), t->off,
		   (unsigned long long)mi.size, mi.method, E(t, mi.name), mi.is_elf ? "  [ELF]" : "");
	}
}


/* What a Hugging Face kernel build variant's name and metadata.json claim (docs/kernels.md). */
static void kernel_block(tx *t, const wg_kernel_variant *kv)
{
	char torch[32] = "any", cuda[48] = "";
	if (kv->torch_major)
		snprintf(torch, sizeof(torch), "%u.%u", kv->torch_major, kv->torch_minor);
	if (kv->cuda_major)
		snprintf(cuda, sizeof(cuda), " (CUDA %u.%u)", kv->cuda_major, kv->cuda_minor);
	tp(t, "  %-12storch %s, %s, %s%s, %s%s%s\n", "kernel", torch,
	   kv->cxx11 < 0 ? "C++ ABI not named" : kv->cxx11 ? "cxx11" : "cxx98",
	   kv->compute_label ? E(t, kv->compute_label) : "no compute", cuda,
	   kv->cpu ? E(t, kv->cpu) : "any cpu", kv->os ? "-" : "", kv->os ? E(t, kv->os) : "");
	if (!kv->has_metadata) {
		tp(t, "  %-12snone\n", "metadata");
		return;
	}
	tp(t, "  %-12sbackend %s, archs", "metadata", kv->backend ? E(t, kv->backend) : "none");
	for (size_t i = 0; i < kv->archs.n; i++)
		tp(t, " %s", E(t, kv->archs.v[i]));
	tp(t, "%s\n", kv->archs.n ? "" : " none");
}
WG_API int wg_scan_format_text(char **out, const wg_scan *scan, unsigned int flags,
			       const wg_gpu *gpus, size_t ngpus)
{
	static const char *const kinds[] = {"?", "wheel", "ELF object", "directory",
					    "installed distribution"};
	int rc;
	if (!out || !scan || (ngpus && !gpus)) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL, "wg_scan_format_text: no %s",
				  !out ? "place for the text" : !scan ? "scan" : "GPUs");
		return WG_EINVAL;
	}
	*out = NULL;
	for (size_t i = 0; i < ngpus; i++)
		if ((rc = wg_struct_version("wg_gpu", gpus[i].version, WG_GPU_VERSION)) < 0)
			return rc;
	bool color = flags & WG_TEXT_COLOR;
	tx t = {.bold = color ? "\033[1m" : "", .red = color ? "\033[31m" : "",
		.yellow = color ? "\033[33m" : "", .green = color ? "\033[32m" : "",
		.dim = color ? "\033[2m" : "", .off = color ? "\033[0m" : ""};

	wg_scan_kind k = wg_scan_get_kind(scan);
	tp(&t, "%s%s%s  (%s)\n", t.bold, E(&t, wg_scan_get_path(scan)), t.off,
	   kinds[k <= 4 ? k : 0]);
	if (wg_scan_has_wheel_metadata(scan))
		wheel_block(&t, scan, flags & WG_TEXT_MEMBERS);
	if (k == WG_SCAN_DIRECTORY && scan->kernel.name)
		kernel_block(&t, &scan->kernel);
	size_t n = wg_scan_object_count(scan);
	if (k != WG_SCAN_OBJECT)
		tp(&t, "  %-12s%zu\n", "ELF objects", n);
	for (size_t i = 0; i < n; i++)
		object_block(&t, wg_scan_object(scan, i), flags, gpus, ngpus);
	size_t np = wg_scan_problem_count(scan), pmore = wg_scan_problems_more(scan);
	if (np || pmore) {
		tp(&t, "  %s%zu problem%s:%s\n", t.red, np + pmore, np + pmore == 1 ? "" : "s", t.off);
		for (size_t i = 0; i < np; i++) {
			wg_problem_info pi = WG_PROBLEM_INFO_INIT;
			wg_scan_problem(&pi, scan, i);
			tp(&t, "    [%s] %s\n", wg_error_name(pi.code), E(&t, pi.message));
		}
		if (pmore)
			tp(&t, "    ... and %zu more (counted, not kept: max_problems; --limit max_problems=N)\n", pmore);
	}
	tp(&t, "\n");

	for (unsigned i = 0; i < RING; i++)
		free(t.ring[i]);
	if (t.oom) {
		wg_buf_free(&t.b);
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	*out = t.b.s;
	return WG_OK;
}

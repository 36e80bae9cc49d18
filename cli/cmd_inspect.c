/*
 * `wheelgate inspect`: the facts of wheels, ELF objects and directories, as text for people
 * or as JSON ("wheelgate.inspect/1", docs/inspect-json.md) for programs.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { SYMS_NONE, SYMS_ABI, SYMS_ALL, SYMS_DEFAULT };

static void help(FILE *f)
{
	fprintf(f,
		"usage: wheelgate inspect [options] PATH...\n"
		"\n"
		"Shows what wheelgate reads from each PATH: a wheel (.whl), an ELF object (.so),\n"
		"a directory (every wheel below it, each on its own, and its loose ELF files),\n"
		"or '-' for a wheel or object on stdin.\n"
		"For a wheel: filename tags, WHEEL, METADATA, top_level.txt, RECORD verification\n"
		"(sha256 and size of every member), and every ELF member. For an ELF object:\n"
		"class, machine, SONAME, DT_NEEDED, RPATH/RUNPATH, Python extension module name,\n"
		"dynamic symbols with versions, and the C++ std::string ABI of the symbols\n"
		"(new = _GLIBCXX_USE_CXX11_ABI=1, old = 0), torch-facing (c10/at/torch/caffe2)\n"
		"and other symbols counted apart.\n"
		"\n"
		"options:\n"
		"  --json            print one JSON document (schema wheelgate.inspect/1)\n"
		"  --symbols=WHICH   symbols to list: abi (those carrying a std::string; the\n"
		"                    default for text), all (the default for --json), none\n"
		"  --members         list every wheel member with its RECORD status (text)\n"
		"  --compact         with --json: no indentation\n"
		"  --gpu GPU         say whether and how each CUDA object can run on GPU: sm_89,\n"
		"                    8.9 or a name (L4, H100, ...; 'wheelgate gpus' lists them);\n"
		"                    repeatable\n"
		"  --entries=WHICH   fatbin entries in JSON: all (default) or none\n"
		"  --stdin-filename NAME  the file name of what '-' reads (a wheel's name, version\n"
		"                    and tags come from it)\n"
		"  -h, --help        show this help\n"
		"\n"
		"exit status: 0 when every input was read and nothing is wrong with it,\n"
		"1 when an input has problems (unsafe names, corrupt members, RECORD mismatches,\n"
		"unreadable objects), 2 for usage errors, inputs that cannot be read at all and\n"
		"directories with no wheel or ELF object.\n"
		"A CUDA object that cannot run on a --gpu is a fact here, not an error;\n"
		"'wheelgate check' turns facts into verdicts.\n");
}

static void print_list(const char *label, const wg_scan *s, wg_wheel_list l, const char *sep)
{
	size_t n = wg_wheel_list_count(s, l);
	printf("  %-12s", label);
	if (!n)
		printf("-");
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? sep : "", esc(wg_wheel_list_item(s, l, i)));
	printf("\n");
}

static const char *or_dash(const char *s)
{
	return s ? esc(s) : "-";
}

static void print_abi_line(const wg_object_info *oi)
{
	const char *col = oi->abi == WG_ABI_MIXED ? c_yellow() : "";
	printf("    %-11s %s%s%s  (torch-facing: %u new, %u old -> %s; other: %u new, %u old)\n",
	       "string ABI", col, wg_string_abi_name(oi->abi), c_off(), oi->torch_new, oi->torch_old,
	       wg_string_abi_name(oi->torch_abi), oi->other_new, oi->other_old);
}

#define MAX_GPUS 16

static void print_cuda(const wg_object *o, const wg_gpu *gpus, size_t ngpus)
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
	printf("    %-11s %zu fatbin%s, %zu entries (%zu in the registered sections, %zu found outside "
	       "them)\n", "CUDA", nc, nc == 1 ? "" : "s", wg_object_fatbin_entry_count(o), reg,
	       nc - reg);
	printf("    %-11s %s\n", "SASS", ns ? sass : "-");
	printf("    %-11s %s\n", "PTX", np ? ptx : "-");
	if (nl)
		printf("    %-11s %s\n", "LTO-IR", lto);
	if (nc > reg) {
		size_t os = wg_object_arch_set(o, WG_FATBIN_SASS, 0, osass, sizeof(osass));
		size_t op = wg_object_arch_set(o, WG_FATBIN_PTX, 0, optx, sizeof(optx));
		printf("    %-11s SASS %s; PTX %s\n", "outside", os ? osass : "-", op ? optx : "-");
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
		const char *col = fails ? c_red()
				  : v.runs != WG_RUNS_ALL || v.how == WG_RUN_PTX_JIT ? c_yellow()
				  : c_green();
		printf("    %-11s %s%s%s%s", label, col,
		       v.runs != WG_RUNS_NONE ? "runs: " : fails ? "cannot run" : "no image for it",
		       v.runs == WG_RUNS_NONE ? "" : wg_run_how_name(v.how), c_off());
		if (v.kernel_containers)
			printf(" (an image in %zu of %zu kernel module%s)", v.runnable_containers,
			       v.kernel_containers, v.kernel_containers == 1 ? "" : "s");
		else
			printf(" (no kernel module the CUDA runtime registers)");
		if (v.ptx_isa_major)
			printf("; JIT from PTX ISA %u.%u", v.ptx_isa_major, v.ptx_isa_minor);
		if (v.other_containers)
			printf("; an image in %zu of %zu fatbins the library loads itself",
			       v.other_runnable, v.other_containers);
		printf("\n");
	}
}


static int by_version(const void *a, const void *b)
{
	return wg_version_compare(*(const char *const *)a, *(const char *const *)b);
}
static void print_object(const wg_object *o, int syms, const wg_gpu *gpus, size_t ngpus)
{
	wg_object_info oi = WG_OBJECT_INFO_INIT;
	char sz[32];
	wg_object_get_info(&oi, o);
	human_size(sz, sizeof(sz), oi.size);
	printf("  %sobject %s%s  (%s)\n", c_bold(), esc(oi.path), c_off(), sz);
	if (oi.error) {
		printf("    %serror: %s%s\n", c_red(), esc(oi.error), c_off());
		return;
	}
	printf("    %-11s ELF%d %s (e_machine %d), %s\n", "format", oi.elf_class, oi.machine_name,
	       oi.machine, oi.type);
	if (oi.is_extension)
		printf("    %-11s module %s%s%s for %s%s%s, %s\n", "extension", c_bold(), esc(oi.module),
		       c_off(), oi.ext_interpreter ? esc(oi.ext_interpreter) : "any interpreter",
		       oi.ext_platform ? " on " : "", oi.ext_platform ? esc(oi.ext_platform) : "",
		       oi.has_init ? "exports its PyInit" : "does NOT export its PyInit");
	if (oi.soname)
		printf("    %-11s %s\n", "soname", esc(oi.soname));
	printf("    %-11s", "needed");
	if (!oi.needed_count)
		printf(" -");
	for (size_t i = 0; i < oi.needed_count; i++)
		printf(" %s", esc(wg_object_needed(o, i)));
	printf("\n");
	if (oi.rpath || oi.runpath)
		printf("    %-11s rpath %s, runpath %s\n", "paths", or_dash(oi.rpath),
		       or_dash(oi.runpath));
	char highest[512];
	if (wg_object_highest_versions(o, highest, sizeof(highest))) {
		printf("    %-11s %s (the highest of each family)\n", "versions", esc(highest));
		/* Every version needed, per library, in the order the object lists them. */
		size_t nv = wg_object_version_count(o);
		for (size_t i = 0; i < nv; i++) {
			const char *lib, *ver, *l2, *v2;
			bool seen = false;
			wg_object_version(o, i, &lib, &ver);
			for (size_t k = 0; k < i && !seen; k++)
				seen = wg_object_version(o, k, &l2, &v2) == WG_OK && !strcmp(l2, lib);
			if (seen)
				continue; /* this library's line is printed */
			printf("      %-20s", esc(lib));
			const char **vs = calloc(nv, sizeof(*vs));
			size_t n = 0;
			for (size_t k = i; vs && k < nv; k++)
				if (wg_object_version(o, k, &l2, &v2) == WG_OK && !strcmp(l2, lib))
					vs[n++] = v2;
			if (vs)
				qsort(vs, n, sizeof(*vs), by_version);
			for (size_t k = 0; k < n; k++)
				printf(" %s", esc(vs[k]));
			printf("\n");
			free(vs);
		}
	}
	printf("    %-11s %zu (%zu defined, %zu undefined)\n", "symbols", oi.symbol_count,
	       oi.defined_count, oi.undefined_count);
	print_abi_line(&oi);
	print_cuda(o, gpus, ngpus);
	if (syms == SYMS_NONE)
		return;
	for (size_t i = 0; i < oi.symbol_count; i++) {
		wg_symbol_info si = WG_SYMBOL_INFO_INIT;
		wg_object_symbol(&si, o, i);
		if (syms == SYMS_ABI && !(si.string_abi && si.abi_surface))
			continue;
		const char *abi = (si.string_abi & 3) == 3 ? "both"
				  : si.string_abi & WG_SYM_NEW_STRING ? "new"
				  : si.string_abi & WG_SYM_OLD_STRING ? "old"
								      : "";
		printf("      %c %-6s %-4s %-5s%s %s%s%s%s\n", si.defined ? 'D' : 'U',
		       wg_binding_name(si.binding), abi, si.torch_facing ? "torch" : "", c_dim(),
		       c_off(), esc(si.name),
		       si.symver ? (si.symver_hidden || !si.defined ? "@" : "@@") : "",
		       si.symver ? esc(si.symver) : "");
		if (si.demangled)
			printf("        %s%s%s\n", c_dim(), esc(si.demangled), c_off());
	}
}

static void print_record_summary(const wg_scan *s)
{
	size_t counts[8] = {0};
	size_t n = wg_scan_member_count(s);
	for (size_t i = 0; i < n; i++) {
		wg_member_info mi = WG_MEMBER_INFO_INIT;
		wg_scan_member(&mi, s, i);
		if (!mi.is_dir && (unsigned)mi.record < 8)
			counts[mi.record]++;
	}
	printf("  %-12s", "RECORD");
	if (!wg_wheel_has_record(s)) {
		printf("%smissing%s\n", c_red(), c_off());
		return;
	}
	bool first = true;
	for (int st = 0; st < 7; st++) {
		if (!counts[st])
			continue;
		const char *col = st == WG_RECORD_OK || st == WG_RECORD_UNHASHED ? "" : c_red();
		printf("%s%s%zu %s%s", first ? "" : ", ", col, counts[st],
		       wg_record_status_name((wg_record_status)st), c_off());
		first = false;
	}
	if (wg_wheel_list_count(s, WG_LIST_RECORD_ORPHANS))
		printf(", %s%zu listed but absent%s", c_red(),
		       wg_wheel_list_count(s, WG_LIST_RECORD_ORPHANS), c_off());
	printf("\n");
}

static void print_wheel(const wg_scan *s, bool members)
{
	const char *err = wg_wheel_get(s, WG_WHEEL_FILENAME_ERROR);
	if (err) {
		printf("  %-12s%s%s%s\n", "filename", c_yellow(), esc(err), c_off());
	} else {
		printf("  %-12s%s %s", "name", esc(wg_wheel_get(s, WG_WHEEL_NAME)),
		       esc(wg_wheel_get(s, WG_WHEEL_VERSION)));
		if (wg_wheel_get(s, WG_WHEEL_LOCAL_VERSION))
			printf("  (local label %s)", esc(wg_wheel_get(s, WG_WHEEL_LOCAL_VERSION)));
		if (wg_wheel_get(s, WG_WHEEL_BUILD_TAG))
			printf("  (build %s)", esc(wg_wheel_get(s, WG_WHEEL_BUILD_TAG)));
		printf("\n");
		print_list("python tags", s, WG_LIST_PYTHON_TAGS, ".");
		print_list("abi tags", s, WG_LIST_ABI_TAGS, ".");
		print_list("platforms", s, WG_LIST_PLATFORM_TAGS, ".");
	}
	printf("  %-12s%s\n", "dist-info", or_dash(wg_wheel_get(s, WG_WHEEL_DIST_INFO)));
	printf("  %-12sWheel-Version %s, Root-Is-Purelib %s, Generator %s\n", "WHEEL",
	       or_dash(wg_wheel_get(s, WG_WHEEL_WHEEL_VERSION)),
	       or_dash(wg_wheel_get(s, WG_WHEEL_ROOT_IS_PURELIB)),
	       or_dash(wg_wheel_get(s, WG_WHEEL_GENERATOR)));
	print_list("WHEEL tags", s, WG_LIST_WHEEL_TAGS, ", ");
	printf("  %-12s%s %s", "METADATA", or_dash(wg_wheel_get(s, WG_WHEEL_META_NAME)),
	       or_dash(wg_wheel_get(s, WG_WHEEL_META_VERSION)));
	if (wg_wheel_get(s, WG_WHEEL_REQUIRES_PYTHON))
		printf(", Requires-Python %s", esc(wg_wheel_get(s, WG_WHEEL_REQUIRES_PYTHON)));
	printf("\n");
	if (wg_wheel_list_count(s, WG_LIST_REQUIRES_DIST))
		print_list("requires", s, WG_LIST_REQUIRES_DIST, ", ");
	print_list("top_level", s, WG_LIST_TOP_LEVEL, ", ");
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
	printf("  %-12s%zu (%s, %s compressed)\n", "members", n, a, b);
	print_record_summary(s);
	if (!members)
		return;
	for (size_t i = 0; i < n; i++) {
		wg_member_info mi = WG_MEMBER_INFO_INIT;
		wg_scan_member(&mi, s, i);
		bool bad = mi.record != WG_RECORD_OK && mi.record != WG_RECORD_UNHASHED;
		printf("    %s%-10s%s %12llu %-8s %s%s\n", bad ? c_red() : c_dim(),
		       mi.is_dir ? "dir" : wg_record_status_name(mi.record), c_off(),
		       (unsigned long long)mi.size, mi.method, esc(mi.name), mi.is_elf ? "  [ELF]" : "");
	}
}

static int print_text(const wg_scan *s, int syms, bool members, const wg_gpu *gpus, size_t ngpus)
{
	static const char *const kinds[] = {"?", "wheel", "ELF object", "directory"};
	wg_scan_kind k = wg_scan_get_kind(s);
	printf("%s%s%s  (%s)\n", c_bold(), esc(wg_scan_get_path(s)), c_off(), kinds[k <= 3 ? k : 0]);
	if (k == WG_SCAN_WHEEL)
		print_wheel(s, members);
	size_t n = wg_scan_object_count(s);
	if (k != WG_SCAN_OBJECT)
		printf("  %-12s%zu\n", "ELF objects", n);
	for (size_t i = 0; i < n; i++)
		print_object(wg_scan_object(s, i), syms, gpus, ngpus);
	size_t np = wg_scan_problem_count(s);
	if (np) {
		printf("  %s%zu problem%s:%s\n", c_red(), np, np == 1 ? "" : "s", c_off());
		for (size_t i = 0; i < np; i++) {
			wg_problem_info pi = WG_PROBLEM_INFO_INIT;
			wg_scan_problem(&pi, s, i);
			printf("    [%s] %s\n", wg_error_name(pi.code), esc(pi.message));
		}
	}
	printf("\n");
	return np ? EXIT_FINDINGS : EXIT_CLEAN;
}

int cmd_inspect(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},      {"symbols", required_argument, NULL, 's'},
		{"members", no_argument, NULL, 'm'},   {"compact", no_argument, NULL, 'c'},
		{"gpu", required_argument, NULL, 'g'}, {"entries", required_argument, NULL, 'e'},
		{"help", no_argument, NULL, 'h'},      {"stdin-filename", required_argument, NULL, 'n'},
		{NULL, 0, NULL, 0}};
	const char *stdin_name = NULL;
	bool json = false, members = false, compact = false, entries = true;
	int syms = SYMS_DEFAULT, c;
	const char *gpu_specs[MAX_GPUS];
	size_t ngpus = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'm': members = true; break;
		case 'c': compact = true; break;
		case 's':
			if (!strcmp(optarg, "all"))
				syms = SYMS_ALL;
			else if (!strcmp(optarg, "abi"))
				syms = SYMS_ABI;
			else if (!strcmp(optarg, "none"))
				syms = SYMS_NONE;
			else {
				fprintf(stderr, "wheelgate inspect: --symbols takes all, abi or none, not "
						"'%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'g':
			if (ngpus == MAX_GPUS) {
				fprintf(stderr, "wheelgate inspect: at most %d --gpu\n", MAX_GPUS);
				return EXIT_USAGE;
			}
			gpu_specs[ngpus++] = optarg;
			break;
		case 'e':
			if (strcmp(optarg, "all") && strcmp(optarg, "none")) {
				fprintf(stderr, "wheelgate inspect: --entries takes all or none, not '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			entries = !strcmp(optarg, "all");
			break;
		case 'n': stdin_name = optarg; break;
		case 'h': help(stdout); return EXIT_CLEAN;
		default:
			fprintf(stderr, "Try 'wheelgate inspect --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "wheelgate inspect: no PATH given\n");
		help(stderr);
		return EXIT_USAGE;
	}
	if (syms == SYMS_DEFAULT)
		syms = json ? SYMS_ALL : SYMS_ABI;

	wg_options opts = WG_OPTIONS_INIT;
	opts.progress = progress_cb;
	wg_context *ctx = NULL;
	wg_scanner *sc = NULL;
	if (wg_context_new(&ctx, &opts) < 0 || wg_scanner_new(&sc, ctx) < 0) {
		fprintf(stderr, "wheelgate: %s\n", wg_error_last());
		wg_context_free(ctx);
		return EXIT_USAGE;
	}
	wg_gpu gpus[MAX_GPUS];
	for (size_t i = 0; i < ngpus; i++) {
		gpus[i] = (wg_gpu)WG_GPU_INIT;
		if (wg_gpu_parse(&gpus[i], ctx, gpu_specs[i]) < 0) {
			fprintf(stderr, "wheelgate inspect: --gpu: %s\n", wg_error_last());
			wg_scanner_free(sc);
			wg_context_free(ctx);
			return EXIT_USAGE;
		}
	}
	int status = EXIT_CLEAN;
	/* JSON: one document the library writes, the inputs added as they are read. */
	unsigned flags = (compact ? 0 : WG_JSON_PRETTY) | (entries ? 0 : WG_JSON_NO_ENTRIES) |
			 (syms == SYMS_NONE ? WG_JSON_NO_SYMBOLS : syms == SYMS_ABI ? WG_JSON_ABI_SYMBOLS : 0);
	wg_inspect *doc = NULL;
	if (json && wg_inspect_new(&doc, flags, gpus, ngpus) < 0) {
		fprintf(stderr, "wheelgate: %s\n", wg_error_last());
		wg_scanner_free(sc);
		wg_context_free(ctx);
		return EXIT_USAGE;
	}
	/* Arguments, then the wheels a directory holds, each an input of its own. */
	size_t nqueue = (size_t)(argc - optind);
	char **queue = calloc(nqueue, sizeof(*queue));
	for (size_t i = 0; queue && i < nqueue; i++)
		queue[i] = strdup(argv[optind + (int)i]);
	if (!queue) {
		fprintf(stderr, "wheelgate: out of memory\n");
		nqueue = 0;
		status = EXIT_USAGE;
	}
	for (size_t qi = 0; qi < nqueue; qi++) {
		const char *path = queue[qi];
		wg_scan *scan = NULL;
		int rc;
		if (!path) {
			fprintf(stderr, "wheelgate: out of memory\n");
			status = EXIT_USAGE;
			continue;
		}
		if (!strcmp(path, "-")) {
			unsigned char *buf;
			size_t len;
			int r = read_stdin(&buf, &len, (size_t)opts.max_member_size);
			if (r < 0) {
				fprintf(stderr, "wheelgate: -: %s\n",
					r == -2 ? "stdin is larger than the member size limit"
						: "cannot read stdin");
				status = EXIT_USAGE;
				continue;
			}
			path = stdin_name ? stdin_name : "-";
			rc = wg_scan_buffer(&scan, sc, buf, len, path);
			free(buf);
		} else {
			rc = wg_scan_path(&scan, sc, path);
		}
		progress_clear();
		if (rc < 0) {
			fprintf(stderr, "wheelgate: %s\n", esc(wg_scanner_error(sc)));
			if (doc)
				wg_inspect_add_error(doc, path, rc, wg_scanner_error(sc));
			status = EXIT_USAGE;
			continue;
		}
		size_t nw = wg_scan_wheel_count(scan);
		if (nw) {
			if (queue_wheels(&queue, &nqueue, qi, scan) < 0) {
				fprintf(stderr, "wheelgate: out of memory\n");
				status = EXIT_USAGE;
			}
			if (!wg_scan_object_count(scan) && !wg_scan_problem_count(scan)) {
				wg_scan_free(scan);
				continue; /* only wheels below it: they are the inputs */
			}
		}
		int st;
		if (doc) {
			if (wg_inspect_add(doc, scan) < 0) {
				fprintf(stderr, "wheelgate: %s\n", wg_error_last());
				wg_scan_free(scan);
				status = EXIT_USAGE;
				continue;
			}
			st = wg_scan_problem_count(scan) ? EXIT_FINDINGS : EXIT_CLEAN;
		} else {
			st = print_text(scan, syms, members, gpus, ngpus);
		}
		if (st > status)
			status = st;
		wg_scan_free(scan);
	}
	for (size_t i = 0; i < nqueue; i++)
		free(queue[i]);
	free(queue);
	char *out = NULL;
	if (doc && wg_inspect_format(&out, doc) == WG_OK) {
		fputs(out, stdout);
		fputc('\n', stdout);
	}
	wg_free(out);
	wg_inspect_free(doc);
	wg_scanner_free(sc);
	wg_context_free(ctx);
	return status;
}

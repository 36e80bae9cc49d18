/*
 * `wheelgate inspect`: the facts of wheels, ELF objects and directories, as text for people
 * or as JSON ("wheelgate.inspect/1", docs/inspect-json.md) for programs.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
		"and other symbols counted apart. Objects are read as ld.so reads them, from\n"
		"the dynamic segment; section headers that disagree are shown (WG-ELF-001).\n"
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
		"  --entries=WHICH   fatbin entries listed per object in JSON: N (default 1000;\n"
		"                    the rest are counted in \"entries_not_listed\"), all or none\n"
		"  --stdin-filename NAME  the file name of what '-' reads (a wheel's name, version\n"
		"                    and tags come from it)\n"
		"  --max-stdin SIZE  the most '-' reads (default 2G), into an unlinked file under\n"
		"                    $TMPDIR, never into memory: more is refused. What cannot\n"
		"                    start a wheel or an ELF object is refused at once\n"
		LIMIT_HELP
		"  -j, --jobs N      threads reading a wheel's members (default: one per CPU\n"
		"                    this process may use; 1: no threads); same output for any N\n"
		"  --read-stats      say on stderr how each wheel's members were read: those over\n"
		"                    max_member_held (8M; --limit max_member_held=SIZE) streamed,\n"
		"                    the bytes of their ELF objects kept, and the passes made again\n"
		"                    for bytes a reader needed and the first pass did not keep\n"
		"  -h, --help        show this help\n"
		"\n"
		"exit status: 0 when every input was read and nothing is wrong with it,\n"
		"1 when an input has problems (unsafe names, corrupt members, RECORD mismatches,\n"
		"unreadable objects), 2 for usage errors, inputs that cannot be read at all and\n"
		"directories with no wheel or ELF object.\n"
		"A CUDA object that cannot run on a --gpu is a fact here, not an error;\n"
		"'wheelgate check' turns facts into verdicts.\n");
}

#define MAX_GPUS 16

typedef struct {
	const char *stdin_name;
	uint64_t max_stdin; /* 0: the library's default */
	bool json, members, compact, entries, read_stats;
	long long max_entries; /* --entries=N: -1 the library's default, 0 all */
	const char *limits[32]; /* --limit NAME=VALUE, checked when parsed */
	size_t nlimits;
	int syms;
	const char *gpu_specs[MAX_GPUS];
	size_t ngpus;
	uint32_t jobs; /* -j N */
} inspect_args;

/* The options into a; -1 to go on, else the exit status. */
static int parse_args(inspect_args *a, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'O'},      {"symbols", required_argument, NULL, 's'},
		{"members", no_argument, NULL, 'm'},   {"compact", no_argument, NULL, 'c'},
		{"gpu", required_argument, NULL, 'g'}, {"entries", required_argument, NULL, 'e'},
		{"help", no_argument, NULL, 'h'},      {"stdin-filename", required_argument, NULL, 'n'},
		{"max-stdin", required_argument, NULL, 'M'}, {"jobs", required_argument, NULL, 'j'},
		{"limit", required_argument, NULL, 'L'}, {"read-stats", no_argument, NULL, 'R'},
		{NULL, 0, NULL, 0}};
	int c;
	*a = (inspect_args){.entries = true, .max_entries = -1, .syms = SYMS_DEFAULT};
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hj:", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (parse_jobs("inspect", optarg, &a->jobs) < 0)
				return EXIT_USAGE;
			break;
		case 'O': a->json = true; break;
		case 'm': a->members = true; break;
		case 'R': a->read_stats = true; break;
		case 'c': a->compact = true; break;
		case 's':
			if (!strcmp(optarg, "all"))
				a->syms = SYMS_ALL;
			else if (!strcmp(optarg, "abi"))
				a->syms = SYMS_ABI;
			else if (!strcmp(optarg, "none"))
				a->syms = SYMS_NONE;
			else {
				fprintf(stderr, "wheelgate inspect: --symbols takes all, abi or none, not "
						"'%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'g':
			if (a->ngpus == MAX_GPUS) {
				fprintf(stderr, "wheelgate inspect: at most %d --gpu\n", MAX_GPUS);
				return EXIT_USAGE;
			}
			a->gpu_specs[a->ngpus++] = optarg;
			break;
		case 'e': {
			char *end = NULL;
			unsigned long long v = strtoull(optarg, &end, 10);
			bool num = optarg[0] >= '0' && optarg[0] <= '9' && !*end && v <= UINT32_MAX;
			if (strcmp(optarg, "all") && strcmp(optarg, "none") && !num) {
				fprintf(stderr, "wheelgate inspect: --entries takes a number, all or none, "
					"not '%s'\n", esc(optarg));
				return EXIT_USAGE;
			}
			a->entries = strcmp(optarg, "none") != 0;
			a->max_entries = num ? (long long)v : !strcmp(optarg, "all") ? 0 : a->max_entries;
			break;
		}
		case 'n': a->stdin_name = optarg; break;
		case 'L': {
			wg_options scratch = WG_OPTIONS_INIT;
			if (!parse_limit(&scratch, "inspect", optarg))
				return EXIT_USAGE;
			if (a->nlimits == sizeof(a->limits) / sizeof(a->limits[0])) {
				fprintf(stderr, "wheelgate inspect: at most %zu --limit\n", a->nlimits);
				return EXIT_USAGE;
			}
			a->limits[a->nlimits++] = optarg;
			break;
		}
		case 'M':
			if (!parse_size(optarg, &a->max_stdin)) {
				fprintf(stderr, "wheelgate inspect: --max-stdin takes a size (bytes, or "
					"with K, M or G), not '%s'\n", esc(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'h': help(stdout); return EXIT_CLEAN;
		default:
			option_error("wheelgate inspect", argv, optind, "hj:", longopts);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "wheelgate inspect: no input given (a wheel, an ELF object, a directory "
			"or -)\nTry 'wheelgate inspect --help'.\n");
		return EXIT_USAGE;
	}
	if (a->syms == SYMS_DEFAULT)
		a->syms = a->json ? SYMS_ALL : SYMS_ABI;
	return -1;
}

/* Reads one input (a path, or "-" for stdin) into *scan; *name: the name it goes by. Returns
 * the scan's code (WG_OK or a WG_E*), or 1 when stdin could not be read (said on stderr). */
static int read_input(wg_scanner *sc, const inspect_args *a, size_t max_stdin, const char **name,
		      wg_scan **scan)
{
	if (strcmp(*name, "-"))
		return wg_scan_path(scan, sc, *name);
	char seen[96];
	/* Spooled to an unlinked file, not held: memory stays small whatever --max-stdin. */
	int fd = spool_stdin(max_stdin, seen, sizeof(seen));
	if (fd == -3) {
		/* refused at its first bytes: judged from them, as a file of those bytes is */
		fprintf(stderr, "wheelgate: -: stdin starts with %s: not read further\n", seen);
		*name = a->stdin_name ? a->stdin_name : "-";
		return wg_scan_buffer(scan, sc, spool_head, spool_head_len, *name);
	}
	if (fd < 0) {
		if (fd == -2)
			fprintf(stderr, "wheelgate: -: stdin is larger than the limit (--max-stdin); "
				"not read\n");
		else if (fd == -3)
			fprintf(stderr, "wheelgate: -: stdin starts with %s: not a wheel (a zip) or an "
				"ELF object; not read further\n", seen);
		else
			fprintf(stderr, "wheelgate: -: cannot read stdin into a temporary file under "
				"$TMPDIR: %s\n", strerror(errno));
		return 1;
	}
	/* The name gives a wheel on stdin its filename facts (name, version, tags). */
	*name = a->stdin_name ? a->stdin_name : "-";
	int rc = wg_scan_fd(scan, sc, fd, *name);
	close(fd);
	return rc;
}

/* --read-stats: one line on stderr for a wheel that streamed a member. */
static void say_read_stats(const char *path, const wg_scan *scan)
{
	wg_read_stats st = WG_READ_STATS_INIT;
	if (wg_scan_read_stats(&st, scan) < 0)
		return;
	fprintf(stderr, "%s: %llu members streamed (%.1f MB); %llu ELF objects read sparsely "
		"(%.1f MB), %.1f MB kept (%.2f%%, at most %.1f MB for one); %llu passes again "
		"over %llu objects, %.1f MB streamed again (%.2f%%)\n", esc(path),
		(unsigned long long)st.streamed, st.streamed_bytes / 1e6,
		(unsigned long long)st.sparse_objects, st.sparse_bytes / 1e6, st.kept_bytes / 1e6,
		st.sparse_bytes ? 100.0 * (double)st.kept_bytes / (double)st.sparse_bytes : 0.0,
		st.kept_max / 1e6, (unsigned long long)st.extra_passes,
		(unsigned long long)st.extra_objects, st.refetched_bytes / 1e6,
		st.sparse_bytes ? 100.0 * (double)st.refetched_bytes / (double)st.sparse_bytes : 0.0);
}

/* The document of each input: added to the JSON (doc), or its text printed as it comes.
 * Returns the input's exit status. */
static int put_input(wg_inspect *doc, const wg_scan *scan, unsigned tflags, const wg_gpu *gpus,
		     size_t ngpus)
{
	char *text = NULL;
	if (doc ? wg_inspect_add(doc, scan) < 0
		: wg_scan_format_text(&text, scan, tflags, gpus, ngpus) < 0) {
		fprintf(stderr, "wheelgate: %s\n", esc(wg_error_last()));
		return EXIT_USAGE;
	}
	if (text)
		fputs(text, stdout);
	wg_free(text);
	return wg_scan_problem_count(scan) ? EXIT_FINDINGS : EXIT_CLEAN;
}

typedef struct {
	const inspect_args *a;
	wg_scanner *sc;
	size_t max_stdin;
	wg_inspect *doc; /* with --json */
	unsigned tflags; /* without: WG_TEXT_* */
	const wg_gpu *gpus;
} inspector;

/* Arguments, then the wheels a directory holds, each an input of its own. */
static int inspect_inputs(const inspector *k, char **args, size_t nargs)
{
	int status = EXIT_CLEAN;
	size_t nqueue = nargs;
	char **queue = calloc(nqueue, sizeof(*queue));
	for (size_t i = 0; queue && i < nqueue; i++)
		queue[i] = strdup(args[i]);
	if (!queue) {
		fprintf(stderr, "wheelgate: out of memory\n");
		nqueue = 0;
		status = EXIT_USAGE;
	}
	for (size_t qi = 0; qi < nqueue; qi++) {
		const char *path = queue[qi];
		wg_scan *scan = NULL;
		if (!path) {
			fprintf(stderr, "wheelgate: out of memory\n");
			status = EXIT_USAGE;
			continue;
		}
		int rc = read_input(k->sc, k->a, k->max_stdin, &path, &scan);
		progress_clear();
		if (rc != WG_OK) {
			if (rc < 0)
				fprintf(stderr, "wheelgate: %s\n", esc(wg_scanner_error(k->sc)));
			if (rc < 0 && k->doc)
				wg_inspect_add_error(k->doc, path, rc, wg_scanner_error(k->sc));
			status = EXIT_USAGE;
			continue;
		}
		if (wg_scan_wheel_count(scan) && queue_wheels(&queue, &nqueue, qi, scan) < 0) {
			fprintf(stderr, "wheelgate: out of memory\n");
			status = EXIT_USAGE;
		}
		/* A directory with only wheels below it: they are the inputs. */
		if (k->a->read_stats)
			say_read_stats(path, scan);
		if (!wg_scan_wheel_count(scan) || wg_scan_object_count(scan) ||
		    wg_scan_problem_count(scan)) {
			int st = put_input(k->doc, scan, k->tflags, k->gpus, k->a->ngpus);
			if (st > status)
				status = st;
		}
		wg_scan_free(scan);
	}
	for (size_t i = 0; i < nqueue; i++)
		free(queue[i]);
	free(queue);
	return status;
}

int cmd_inspect(int argc, char **argv)
{
	inspect_args a;
	int status = parse_args(&a, argc, argv);
	if (status >= 0)
		return status;
	wg_options opts = WG_OPTIONS_INIT;
	opts.progress = progress_cb;
	opts.jobs = a.jobs;
	for (size_t i = 0; i < a.nlimits; i++)
		parse_limit(&opts, "inspect", a.limits[i]); /* checked when parsed */
	if (a.max_entries >= 0)
		opts.max_listed_entries = (uint32_t)a.max_entries;
	wg_context *ctx = NULL;
	wg_scanner *sc = NULL;
	wg_inspect *doc = NULL;
	wg_gpu gpus[MAX_GPUS];
	status = EXIT_USAGE;
	if (wg_context_new(&ctx, &opts) < 0 || wg_scanner_new(&sc, ctx) < 0) {
		fprintf(stderr, "wheelgate: %s\n", esc(wg_error_last()));
		goto out;
	}
	for (size_t i = 0; i < a.ngpus; i++) {
		gpus[i] = (wg_gpu)WG_GPU_INIT;
		if (wg_gpu_parse(&gpus[i], ctx, a.gpu_specs[i]) < 0) {
			fprintf(stderr, "wheelgate inspect: --gpu: %s\n", esc(wg_error_last()));
			goto out;
		}
	}
	/* JSON: one document the library writes, the inputs added as they are read; text: a block
	 * per input, which the library writes too. */
	int syms = a.syms;
	unsigned jflags = (a.compact ? 0 : WG_JSON_PRETTY) | (a.entries ? 0 : WG_JSON_NO_ENTRIES) |
			  (syms == SYMS_NONE ? WG_JSON_NO_SYMBOLS : syms == SYMS_ABI ? WG_JSON_ABI_SYMBOLS : 0);
	unsigned tflags = (use_color ? WG_TEXT_COLOR : 0) | (a.members ? WG_TEXT_MEMBERS : 0) |
			  (syms == SYMS_NONE ? WG_TEXT_NO_SYMBOLS : syms == SYMS_ABI ? WG_TEXT_ABI_SYMBOLS : 0);
	if (a.json && wg_inspect_new(&doc, jflags, gpus, a.ngpus) < 0) {
		fprintf(stderr, "wheelgate: %s\n", esc(wg_error_last()));
		goto out;
	}
	if (a.max_stdin)
		opts.max_stdin = a.max_stdin;
	inspector k = {&a, sc, (size_t)opts.max_stdin, doc, tflags, gpus};
	status = inspect_inputs(&k, argv + optind, (size_t)(argc - optind));
	char *out = NULL;
	if (doc && wg_inspect_format(&out, doc) == WG_OK) {
		fputs(out, stdout);
		fputc('\n', stdout);
	}
	wg_free(out);
out:
	wg_inspect_free(doc);
	wg_scanner_free(sc);
	wg_context_free(ctx);
	return status;
}

/*
 * `wheelgate matrix EXT... --torch TORCH...`: which torch releases each extension wheel loads
 * with. A cell is check's install profile for the extension in the environment of that torch
 * (matrix_torch.c): the rule engine's findings of the loader, C++ ABI, CUDA and Python rules
 * on the extension's own objects, the first of them by the order of mx_verdict.
 * Exit 0 when every cell loads, 1 when one does not, 2 for usage errors and inputs that
 * cannot be read.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lock.h"
#include "matrix.h"
#include "select.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: wheelgate matrix [options] EXT... --torch TORCH [--torch TORCH...]\n"
		"\n"
		"Says which torch releases each extension wheel loads with: a table whose rows are\n"
		"the EXT wheels and whose columns are the\n"
		"TORCH releases. Each cell is check's install profile for the extension installed\n"
		"with that torch (pip install torch.whl ext.whl into an empty environment, or the\n"
		"extension into the environment given), and says the first reason it would not\n"
		"load:\n"
		"  loads       nothing stops `import torch; import ext`\n"
		"  python      the wheel's tags do not meet torch's Python (WG-TAG-007)\n"
		"  abi         its std::string ABI differs from torch's (WG-ABI-001)\n"
		"  cuda        it needs the CUDA runtime of another major than torch's (WG-CUDA-001)\n"
		"  library     a library it needs is not there (WG-LD-002)\n"
		"  symbol      a symbol it needs is defined by none of the libraries (WG-LD-001):\n"
		"              the first (torch's first), demangled and mangled, and how many\n"
		"  system      the system's C/C++ runtime is older than it needs (WG-LD-003)\n"
		"\n"
		"EXT is a wheel, a directory (the *.whl files in it), or any source wheelgate\n"
		"select reads (docs/select.md): a list of wheel paths or URLs, a pylock.toml, the\n"
		"URL of a wheel, a simple index project page (PEP 503/691); a wheel fetched over\n"
		"http(s) is verified against the sha256 its source gives (none: not fetched).\n"
		"\n"
		"TORCH is one of:\n"
		"  a torch wheel  read once: its compact facts (the exports of libtorch* and\n"
		"                 libc10*, their SONAMEs, torch's version, C++ ABI and CUDA) are\n"
		"                 kept in the facts store by the wheel's sha256, and a later run\n"
		"                 reads no byte of the wheel while its size and mtime are the same\n"
		"  stored facts   a DIR/torch/ab/<sha256>.json.zst file of the store, or the sha256\n"
		"  an environment a venv or prefix, site-packages, or a python (as check --env\n"
		"                 takes it) where torch is installed\n"
		"torch's own dependencies (the nvidia-* wheels of its CUDA) are taken as installed.\n"
		"\n"
		"options:\n"
		"  --torch TORCH      a column; repeatable, in the order given\n"
		"  --format FORMAT    text (default: a table, cells short, notes and a legend),\n"
		"                     json (wheelgate.matrix/1, docs/matrix.md) or markdown\n"
		"  -o, --output FILE  write the matrix to FILE instead of stdout\n"
		"  --facts-dir DIR    the facts store (default: $XDG_CACHE_HOME/wheelgate/facts,\n"
		"                     else ~/.cache/wheelgate/facts)\n"
		"  --no-store         keep no torch facts (every torch wheel is read)\n"
		"  -h, --help         show this help\n"
		"\n"
		"exit status: 0 when every cell loads, 1 when some does not, 2 for usage errors and\n"
		"inputs that cannot be read.\n");
}

#define MATRIX_FETCH_MAX (2ULL << 30) /* a fetched wheel without a size: at most this */

static char *default_store(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char buf[PATH_MAX];
	if (xdg && *xdg == '/')
		snprintf(buf, sizeof(buf), "%s/wheelgate/facts", xdg);
	else if (home && *home)
		snprintf(buf, sizeof(buf), "%s/.cache/wheelgate/facts", home);
	else
		return NULL;
	return strdup(buf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* EXT arguments into paths (a directory's *.whl sorted); -1 on a usage error. A list file,
 * a pylock.toml, a wheel's URL or a simple index page are select's sources (select_source.c):
 * their wheels go into *cs, fetched and verified when they are read. */
static int add_ext(char ***paths, size_t *n, candidates *cs, const char *arg)
{
	struct stat st;
	bool url = !strncasecmp(arg, "http://", 7) || !strncasecmp(arg, "https://", 8) ||
		   !strncasecmp(arg, "file:", 5);
	if (url || (stat(arg, &st) == 0 && S_ISREG(st.st_mode) &&
		    !wg_has_suffix_cli(arg, ".whl"))) {
		size_t before = cs->n;
		select_source_who = "wheelgate matrix";
		if (select_source(cs, arg, true) < 0)
			return -1;
		if (cs->n == before) {
			fprintf(stderr, "wheelgate matrix: %s: no wheel\n", esc(arg));
			return -1;
		}
		return 0;
	}
	if (stat(arg, &st) != 0) {
		fprintf(stderr, "wheelgate matrix: %s: no such file or directory\n", esc(arg));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		char **p = realloc(*paths, (*n + 1) * sizeof(char *));
		if (!p)
			return -1;
		*paths = p;
		p[(*n)++] = strdup(arg);
		return 0;
	}
	DIR *d = opendir(arg);
	if (!d) {
		fprintf(stderr, "wheelgate matrix: %s: cannot be read\n", esc(arg));
		return -1;
	}
	size_t first = *n;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !wg_has_suffix_cli(de->d_name, ".whl"))
			continue;
		char full[PATH_MAX];
		snprintf(full, sizeof(full), "%.*s/%s", path_dir_len(arg), arg, de->d_name);
		if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		char **p = realloc(*paths, (*n + 1) * sizeof(char *));
		if (!p) {
			closedir(d);
			return -1;
		}
		*paths = p;
		p[(*n)++] = strdup(full);
	}
	closedir(d);
	if (*n == first) {
		fprintf(stderr, "wheelgate matrix: %s: no wheel (*.whl) in this directory\n", esc(arg));
		return -1;
	}
	qsort(*paths + first, *n - first, sizeof(char *), cmp_str);
	return 0;
}

static bool ext_member(const wg_scan *scan, const char *member)
{
	if (!member)
		return false;
	for (size_t i = 0; i < wg_scan_member_count(scan); i++) {
		wg_member_info mi = WG_MEMBER_INFO_INIT;
		if (wg_scan_member(&mi, scan, i) == 0 && !strcmp(mi.name, member))
			return true;
	}
	return false;
}

static const wg_object *ext_object(const wg_scan *scan, const char *member)
{
	for (size_t i = 0; member && i < wg_scan_object_count(scan); i++) {
		wg_object_info oi = WG_OBJECT_INFO_INIT;
		const wg_object *o = wg_scan_object(scan, i);
		if (wg_object_get_info(&oi, o) == 0 && !strcmp(oi.path, member))
			return o;
	}
	return NULL;
}

static char *demangled_of(const wg_object *o, const char *symbol)
{
	wg_object_info oi = WG_OBJECT_INFO_INIT;
	if (!o || !symbol || wg_object_get_info(&oi, o) < 0)
		return NULL;
	for (size_t i = 0; i < oi.symbol_count; i++) {
		wg_symbol_info si = WG_SYMBOL_INFO_INIT;
		if (wg_object_symbol(&si, o, i) == 0 && !strcmp(si.name, symbol))
			return si.demangled ? strdup(si.demangled) : NULL;
	}
	return NULL;
}

/* The DT_NEEDED name of o that the message names (the library a finding is about). */
static char *needed_named(const wg_object *o, const char *message, const char *prefix)
{
	wg_object_info oi = WG_OBJECT_INFO_INIT;
	if (!o || wg_object_get_info(&oi, o) < 0)
		return NULL;
	for (size_t i = 0; i < oi.needed_count; i++) {
		const char *n = wg_object_needed(o, i);
		if (n && (!prefix || !strncmp(n, prefix, strlen(prefix))) &&
		    (!message || strstr(message, n)))
			return strdup(n);
	}
	return NULL;
}

/* The torch-facing std::string ABI of the extension's objects: "new", "old" or NULL. */
static const char *ext_torch_abi(const wg_scan *scan)
{
	for (size_t i = 0; i < wg_scan_object_count(scan); i++) {
		wg_object_info oi = WG_OBJECT_INFO_INIT;
		if (wg_object_get_info(&oi, wg_scan_object(scan, i)) == 0 &&
		    (oi.torch_abi == WG_ABI_OLD || oi.torch_abi == WG_ABI_NEW ||
		     oi.torch_abi == WG_ABI_MIXED))
			return wg_string_abi_name(oi.torch_abi);
	}
	return NULL;
}

static void cell_set(mx_cell *c, mx_verdict v)
{
	if (c->verdict == MX_LOADS || v < c->verdict)
		c->verdict = v;
}

static void add_rule(mx_cell *c, const char *rule)
{
	if (!c->rules || strstr(c->rules, rule))
		return;
	size_t n = strlen(c->rules);
	char *r = realloc(c->rules, n + strlen(rule) + 2);
	if (!r)
		return;
	sprintf(r + n, "%s%s", n ? "," : "", rule);
	c->rules = r;
}

static void judge(mx_cell *c, const mx_run *r, mx_torch *t, const mx_ext *x)
{
	memset(c, 0, sizeof(*c));
	c->rules = strdup("");
	if (t->error || x->error) {
		c->verdict = MX_ERROR;
		c->message = strdup(x->error ? x->error : t->error);
		return;
	}
	const wg_scan *inst[2];
	size_t n = 0;
	if (t->scan)
		inst[n++] = t->scan;
	inst[n++] = x->scan;
	wg_report *rep = NULL;
	if (wg_env_set_install(t->env, t->env_sc, inst, n) < 0) {
		c->verdict = MX_ERROR;
		c->message = strdup(wg_scanner_error(t->env_sc));
		return;
	}
	int rc = wg_check(&rep, r->sc, r->rs, x->scan, t->target);
	wg_env_set_install(t->env, t->env_sc, NULL, 0);
	if (rc < 0) {
		c->verdict = MX_ERROR;
		c->message = strdup(wg_scanner_error(r->sc));
		return;
	}
	mx_verdict first = MX_ERROR;
	for (size_t i = 0; i < wg_report_count(rep); i++) {
		wg_finding_info f = WG_FINDING_INFO_INIT;
		if (wg_report_finding(&f, rep, i) < 0 || f.severity != WG_SEV_ERROR)
			continue;
		mx_verdict v;
		if (!strcmp(f.rule, "WG-TAG-007"))
			v = MX_PYTHON;
		else if (!strcmp(f.rule, "WG-ABI-001"))
			v = MX_ABI;
		else if (!strcmp(f.rule, "WG-CUDA-001"))
			v = MX_CUDA;
		else if (!strcmp(f.rule, "WG-LD-002"))
			v = MX_LIBRARY;
		else if (!strcmp(f.rule, "WG-LD-001"))
			v = MX_SYMBOL;
		else if (!strcmp(f.rule, "WG-LD-003"))
			v = MX_SYSTEM;
		else
			continue;
		/* the extension's own loads: torch's are judged by torch's publishers */
		if (!strncmp(f.rule, "WG-LD", 5) && !ext_member(x->scan, f.member))
			continue;
		add_rule(c, f.rule);
		const wg_object *o = ext_object(x->scan, f.member);
		if (v == MX_SYMBOL && !c->symbol) {
			c->symbol = f.symbol ? strdup(f.symbol) : NULL;
			c->demangled = demangled_of(o, f.symbol);
			const char *more = f.message ? strstr(f.message, " (and ") : NULL;
			c->missing = 1 + (more ? strtoul(more + 6, NULL, 10) : 0);
		}
		if (v == MX_LIBRARY && !c->library)
			c->library = needed_named(o, f.message, NULL);
		if (v == MX_CUDA && !c->have) {
			char *lib = needed_named(o, f.message, "libcudart.so.");
			if (!lib)
				lib = needed_named(o, f.message, "lib");
			const char *dot = lib ? strstr(lib, ".so.") : NULL;
			c->have = dot ? strndup(dot + 4, strcspn(dot + 4, ".")) : NULL;
			free(lib);
			c->want = t->cuda ? strndup(t->cuda, strcspn(t->cuda, ".")) : NULL;
		}
		if (v == MX_ABI && !c->have) {
			const char *a = ext_torch_abi(x->scan);
			c->have = a ? strdup(a) : NULL;
			c->want = strdup(t->cxx11abi == 1 ? "new" : t->cxx11abi == 0 ? "old" : "?");
		}
		if (v == MX_PYTHON && !c->have) {
			size_t k = wg_wheel_list_count(x->scan, WG_LIST_PYTHON_TAGS);
			char buf[256] = "";
			for (size_t j = 0; j < k; j++) {
				size_t len = strlen(buf);
				snprintf(buf + len, sizeof(buf) - len, "%s%s", j ? "." : "",
					 wg_wheel_list_item(x->scan, WG_LIST_PYTHON_TAGS, j));
			}
			c->have = strdup(buf);
			c->want = t->python ? strdup(t->python) : NULL;
		}
		if (first == MX_ERROR || v < first) {
			first = v;
			free(c->message);
			free(c->object);
			c->message = f.message ? strdup(f.message) : NULL;
			c->object = f.member ? strdup(f.member) : NULL;
		}
		cell_set(c, v);
	}
	wg_report_free(rep);
}

static void cell_free(mx_cell *c)
{
	free(c->symbol);
	free(c->demangled);
	free(c->library);
	free(c->object);
	free(c->message);
	free(c->have);
	free(c->want);
	free(c->rules);
}

/* A wheel of a list, lock, URL or index: fetched (http(s): only with the sha256 its source
 * gives) and verified against its size and sha256 before it is read. */
static int open_candidate(mx_ext *e, mx_run *r, const candidate *c)
{
	e->path = strdup(c->where);
	if (c->url && !c->sha256 && !strncasecmp(c->url, "http", 4)) {
		char why[512];
		snprintf(why, sizeof(why), "%s: its source gives no sha256: not fetched", c->where);
		e->error = strdup(why);
		return -1;
	}
	int fd = -1;
	char err[1536];
	if (lock_open(&fd, c->path, c->url, c->sha256, c->size, MATRIX_FETCH_MAX, true, err,
		      sizeof(err)) < 0) {
		char why[2048];
		snprintf(why, sizeof(why), "%s: %s", c->where, err);
		e->error = strdup(why);
		return -1;
	}
	int rc = wg_scan_fd(&e->scan, r->sc, fd, c->filename);
	close(fd);
	return rc;
}

int cmd_matrix(int argc, char **argv)
{
	enum { O_TORCH = 256, O_FORMAT, O_FACTS_DIR, O_NO_STORE };
	static const struct option longopts[] = {
		{"torch", required_argument, NULL, O_TORCH},
		{"format", required_argument, NULL, O_FORMAT},
		{"output", required_argument, NULL, 'o'},
		{"facts-dir", required_argument, NULL, O_FACTS_DIR},
		{"no-store", no_argument, NULL, O_NO_STORE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	const char *format = "text", *output = NULL, *facts_dir = NULL;
	bool no_store = false;
	char **torches = NULL;
	size_t ntorches = 0;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case O_TORCH: {
			char **p = realloc(torches, (ntorches + 1) * sizeof(char *));
			if (!p) {
				free(torches);
				return EXIT_USAGE;
			}
			torches = p;
			torches[ntorches++] = optarg;
			break;
		}
		case O_FORMAT: format = optarg; break;
		case 'o': output = optarg; break;
		case O_FACTS_DIR: facts_dir = optarg; break;
		case O_NO_STORE: no_store = true; break;
		case 'h':
			help(stdout);
			free(torches);
			return EXIT_CLEAN;
		default:
			option_error("wheelgate matrix", argv, optind, "o:h", longopts);
			free(torches);
			return EXIT_USAGE;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "markdown")) {
		fprintf(stderr, "wheelgate matrix: --format takes text, json or markdown, not '%s'\n",
			esc(format));
		free(torches);
		return EXIT_USAGE;
	}
	if (optind >= argc || !ntorches) {
		fprintf(stderr, "wheelgate matrix: %s\n", optind >= argc
			? "give the extension wheels (or directories of them) to judge"
			: "give at least one --torch (a torch wheel, stored facts or an environment)");
		fprintf(stderr, "Try 'wheelgate matrix --help'.\n");
		free(torches);
		return EXIT_USAGE;
	}
	if (no_store && facts_dir) {
		fprintf(stderr, "wheelgate matrix: --no-store and --facts-dir: choose one\n");
		free(torches);
		return EXIT_USAGE;
	}
	char **paths = NULL;
	size_t nexts = 0, npaths = 0;
	candidates cs = {0};
	int status = EXIT_CLEAN;
	for (int i = optind; i < argc; i++)
		if (add_ext(&paths, &npaths, &cs, argv[i]) < 0) {
			status = EXIT_USAGE;
			break;
		}
	nexts = npaths + cs.n;
	char *store = no_store ? NULL : facts_dir ? strdup(facts_dir) : default_store();
	mx_run r = {0};
	r.store = store;
	mx_torch *t = calloc(ntorches, sizeof(*t));
	mx_ext *e = calloc(nexts ? nexts : 1, sizeof(*e));
	mx_cell *cells = calloc(nexts && ntorches ? nexts * ntorches : 1, sizeof(*cells));
	wg_ruleset *rs = NULL;
	FILE *out = NULL;
	if (status != EXIT_CLEAN || !t || !e || !cells)
		goto done;
	wg_options opts = WG_OPTIONS_INIT;
	wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
	if (wg_context_new(&r.ctx, &opts) < 0 || wg_ruleset_new(&rs, r.ctx, &ro) < 0 ||
	    wg_scanner_new(&r.sc, r.ctx) < 0) {
		fprintf(stderr, "wheelgate matrix: %s\n", esc(wg_error_last()));
		status = EXIT_USAGE;
		goto done;
	}
	r.rs = rs;
	for (size_t i = 0; i < ntorches; i++)
		if (mx_torch_open(&t[i], &r, torches[i]) < 0) {
			fprintf(stderr, "wheelgate matrix: --torch %s\n", esc(t[i].error));
			status = EXIT_USAGE;
		}
	for (size_t i = 0; i < nexts; i++) {
		int rc;
		if (i < npaths) {
			e[i].path = paths[i];
			paths[i] = NULL;
			rc = wg_scan_path(&e[i].scan, r.sc, e[i].path);
		} else {
			rc = open_candidate(&e[i], &r, &cs.c[i - npaths]);
		}
		if (rc < 0) {
			if (!e[i].error)
				e[i].error = strdup(wg_scanner_error(r.sc));
			fprintf(stderr, "wheelgate matrix: %s\n", esc(e[i].error));
			status = EXIT_USAGE;
		} else if (wg_scan_get_kind(e[i].scan) != WG_SCAN_WHEEL) {
			e[i].error = strdup("not a wheel");
			fprintf(stderr, "wheelgate matrix: %s: not a wheel\n", esc(e[i].path));
			status = EXIT_USAGE;
		}
	}
	bool failed = false;
	for (size_t i = 0; i < nexts; i++)
		for (size_t j = 0; j < ntorches; j++) {
			mx_cell *x = &cells[i * ntorches + j];
			judge(x, &r, &t[j], &e[i]);
			failed |= x->verdict != MX_LOADS;
			/* a cell that could not be judged: said once here (an input's was said) */
			if (x->verdict == MX_ERROR && !t[j].error && !e[i].error) {
				fprintf(stderr, "wheelgate matrix: %s with --torch %s: %s\n",
					esc(e[i].path), esc(t[j].source), esc(x->message));
				status = EXIT_USAGE;
			}
		}
	if (status == EXIT_CLEAN && failed)
		status = EXIT_FINDINGS;
	out = output ? fopen(output, "w") : stdout;
	if (!out) {
		fprintf(stderr, "wheelgate matrix: %s: cannot be written\n", esc(output));
		status = EXIT_USAGE;
		goto done;
	}
	if (!strcmp(format, "json")) {
		if (mx_out_json(out, t, ntorches, e, nexts, cells) < 0)
			status = EXIT_USAGE;
	} else if (!strcmp(format, "markdown")) {
		mx_out_markdown(out, t, ntorches, e, nexts, cells);
	} else {
		mx_out_text(out, t, ntorches, e, nexts, cells, use_color && !output);
	}
	if (out != stdout && fclose(out) != 0)
		status = EXIT_USAGE;
done:
	for (size_t i = 0; cells && i < nexts * ntorches; i++)
		cell_free(&cells[i]);
	for (size_t i = 0; t && i < ntorches; i++)
		mx_torch_free(&t[i]);
	for (size_t i = 0; e && i < nexts; i++) {
		wg_scan_free(e[i].scan);
		free(e[i].path);
		free(e[i].error);
	}
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	candidates_free(&cs);
	free(cells);
	free(t);
	free(e);
	free(torches);
	free(store);
	wg_scanner_free(r.sc);
	wg_ruleset_free(rs);
	wg_context_free(r.ctx);
	return status;
}

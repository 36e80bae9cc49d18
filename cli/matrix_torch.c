/*
 * The torch side of `wheelgate matrix`: a torch release as a column.
 *
 * A torch wheel is read once: its scan's facts (the store's document, docs/facts-store.md)
 * cut down to what judging an extension against it needs -- torch/_C and the libraries of
 * torch/lib named libtorch* and libc10* with their SONAME, DT_NEEDED (torch's own libraries
 * and the C/C++ runtime; the CUDA libraries of nvidia-* wheels are left out: torch's
 * dependencies are taken as installed), RPATH and defined dynamic symbols (no demangled
 * names, no GPU code), torch/version.py and the .dist-info members -- and kept in the facts
 * store under DIR/torch/<ab>/<sha256>.json.zst (wg_facts_store). DIR/torch/paths/<sha256 of
 * the wheel's real path> remembers the sha256 of a wheel by its size and mtime, so that a
 * second run reads no byte of the wheel (the library cache's rule, lib/src/loader/libcache.c).
 *
 * A column is judged in an environment: a wheel's or stored facts' in an empty prefix made
 * for it (lib/pythonX.Y/site-packages, X.Y from the wheel's python tag) where each cell
 * installs the torch wheel and the extension together (wg_env_set_install), an installed
 * environment's as it is (the extension installed alone). The target's torch version, C++
 * ABI and CUDA are torch's: from torch/version.py (as wg_env reads an installed torch), the
 * string ABI of libc10's symbols.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "matrix.h"

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void set_error(mx_torch *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(mx_torch *t, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	free(t->error);
	t->error = msg ? msg : strdup("out of memory");
}

static int mkdirs(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* A Python assignment NAME = '...' of torch/version.py (NULL for None or absent). */
static char *py_string(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = text; (p = strstr(p, name)); p += n) {
		if (p != text && p[-1] != '\n')
			continue;
		const char *q = p + n;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == ':')
			q = strchr(q, '=');
		if (!q || *q != '=')
			continue;
		q++;
		while (*q == ' ')
			q++;
		if (*q != '\'' && *q != '"')
			return NULL;
		char quote = *q++;
		const char *e = strchr(q, quote);
		return e && e - q < 64 ? strndup(q, (size_t)(e - q)) : NULL;
	}
	return NULL;
}

static bool is_torch_object(const char *path)
{
	const char *b = cli_base_name(path);
	if (!strncmp(path, "torch/_C", 8) && !strchr(path + 6, '/'))
		return true;
	return !strncmp(path, "torch/lib/", 10) && !strchr(path + 10, '/') &&
	       (!strncmp(b, "libtorch", 8) || !strncmp(b, "libc10", 6)) && strstr(b, ".so");
}

/* The C/C++ runtime a torch library may need from the system. */
static bool is_runtime(const char *name)
{
	static const char *const rt[] = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0",
					 "librt.so.1", "libstdc++.so.6", "libgcc_s.so.1",
					 "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", NULL};
	for (size_t i = 0; rt[i]; i++)
		if (!strcmp(name, rt[i]))
			return true;
	return false;
}

/* The store's document of a torch wheel's scan cut down to the matrix's facts (above). */
static char *compact_facts(const char *full, char *err, size_t errlen)
{
	json_error_t je;
	json_t *doc = json_loads(full, 0, &je), *in0 = NULL, *facts = NULL;
	in0 = json_array_get(json_object_get(doc, "inputs"), 0);
	if (doc && !in0)
		in0 = doc; /* one item of "inputs" */
	if (!doc || !(facts = json_object_get(in0, "facts"))) {
		snprintf(err, errlen, "the facts document could not be read: %s", je.text);
		json_decref(doc);
		return NULL;
	}
	json_t *objects = json_object_get(facts, "objects"), *kept = json_array();
	json_t *sonames = json_object();
	size_t i;
	json_t *o;
	json_array_foreach(objects, i, o) {
		const char *path = json_string_value(json_object_get(o, "path"));
		if (!path || !is_torch_object(path))
			continue;
		const char *so = json_string_value(json_object_get(o, "soname"));
		json_object_set_new(sonames, so ? so : cli_base_name(path), json_true());
		json_array_append(kept, o);
	}
	json_array_foreach(kept, i, o) {
		json_t *syms = json_object_get(o, "syms"), *defs = json_array(), *s;
		size_t k;
		json_array_foreach(syms, k, s) {
			if (!json_is_true(json_array_get(s, 4)) &&
			    json_integer_value(json_array_get(s, 4)) != 1)
				continue;
			json_t *c = json_copy(s);
			json_array_set_new(c, 1, json_null()); /* the demangled name: not needed */
			json_array_append_new(defs, c);
		}
		json_object_set_new(o, "syms", defs);
		json_object_set_new(o, "nundefined", json_integer(0));
		json_t *needed = json_object_get(o, "needed"), *keep = json_array(), *nd;
		json_array_foreach(needed, k, nd) {
			const char *n = json_string_value(nd);
			if (n && (json_object_get(sonames, n) || is_runtime(n)))
				json_array_append(keep, nd);
		}
		json_object_set_new(o, "needed", keep);
		json_object_set_new(o, "verneeds", json_array());
		json_object_set_new(o, "fatbin_containers", json_array());
		json_object_set_new(o, "fatbin_entries", json_array());
		json_object_set_new(o, "fatbin_wrappers", json_integer(0));
		json_object_del(o, "fatbin_entries_more");
	}
	json_t *members = json_object_get(facts, "members"), *mkeep = json_array(), *m;
	json_array_foreach(members, i, m) {
		const char *name = json_string_value(json_array_get(m, 0));
		if (name && (is_torch_object(name) || !strcmp(name, "torch/__init__.py") ||
			     !strcmp(name, "torch/version.py") || strstr(name, ".dist-info/")))
			json_array_append(mkeep, m);
	}
	json_t *sources = json_object_get(facts, "sources"), *skeep = json_array(), *s;
	json_array_foreach(sources, i, s) {
		const char *name = json_string_value(json_array_get(s, 0));
		if (name && !strcmp(name, "torch/version.py"))
			json_array_append(skeep, s);
	}
	json_object_set_new(facts, "objects", kept);
	json_object_set_new(facts, "members", mkeep);
	json_object_set_new(facts, "sources", skeep);
	json_t *out = json_object(), *in = json_object();
	json_object_set_new(out, "schema", json_string("wheelgate.inspect/1"));
	json_object_set_new(out, "wheelgate_version", json_string(wg_version_string()));
	json_object_set(in, "path", json_object_get(in0, "path"));
	json_object_set(in, "kind", json_object_get(in0, "kind"));
	json_object_set(in, "facts", facts);
	json_object_set_new(out, "inputs", json_pack("[o]", in));
	char *text = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	json_decref(sonames);
	json_decref(doc);
	if (!text)
		snprintf(err, errlen, "out of memory");
	return text;
}

/* torch's version, CUDA and C++ ABI from its (compact) scan. */
static int facts_from_scan(mx_torch *t)
{
	const wg_scan *scan = t->scan;
	const char *name = wg_wheel_get(scan, WG_WHEEL_NAME);
	if (wg_scan_get_kind(scan) != WG_SCAN_WHEEL || !name || strcmp(name, "torch")) {
		set_error(t, "%s: not a torch wheel (its name is '%s')", t->source, name ? name : "?");
		return -1;
	}
	char *json = NULL;
	if (wg_scan_to_json(&json, scan, WG_JSON_FACTS | WG_JSON_NO_SYMBOLS | WG_JSON_NO_ENTRIES) < 0) {
		set_error(t, "%s: %s", t->source, wg_error_last());
		return -1;
	}
	json_t *doc = json_loads(json, 0, NULL);
	wg_free(json);
	json_t *item = json_array_get(json_object_get(doc, "inputs"), 0);
	json_t *sources = json_object_get(json_object_get(item ? item : doc, "facts"), "sources"), *s;
	size_t i;
	json_array_foreach(sources, i, s) {
		const char *n = json_string_value(json_array_get(s, 0));
		const char *text = json_string_value(json_array_get(s, 1));
		if (n && text && !strcmp(n, "torch/version.py")) {
			t->version = py_string(text, "__version__");
			t->cuda = py_string(text, "cuda");
		}
	}
	json_decref(doc);
	if (!t->version)
		t->version = xstrdup(wg_wheel_get(scan, WG_WHEEL_VERSION));
	t->cxx11abi = -1;
	for (size_t k = 0; k < wg_scan_object_count(scan); k++) {
		wg_object_info oi = WG_OBJECT_INFO_INIT;
		if (wg_object_get_info(&oi, wg_scan_object(scan, k)) < 0)
			continue;
		t->libraries++;
		if (!strcmp(oi.path, "torch/lib/libc10.so"))
			t->cxx11abi = oi.torch_abi == WG_ABI_NEW ? 1 : oi.torch_abi == WG_ABI_OLD ? 0 : -1;
	}
	for (size_t k = 0; k < wg_wheel_list_count(scan, WG_LIST_PYTHON_TAGS); k++) {
		const char *tag = wg_wheel_list_item(scan, WG_LIST_PYTHON_TAGS, k);
		if (tag && !strncmp(tag, "cp3", 3) && strlen(tag) >= 4 && strlen(tag) <= 5 &&
		    strspn(tag + 2, "0123456789") == strlen(tag + 2)) {
			char py[16];
			snprintf(py, sizeof(py), "3.%s", tag + 3);
			t->python = strdup(py);
			break;
		}
	}
	if (!t->python) {
		set_error(t, "%s: the wheel's tags name no CPython 3 release (cp3XY)", t->source);
		return -1;
	}
	return 0;
}

/* DIR/torch/paths/<sha256 of the real path>: "size mtime_sec mtime_nsec sha256\n". */
static void memo_path(char *out, size_t n, const char *store, const char *real)
{
	char key[65];
	if (!sha256_buffer(real, strlen(real), key))
		key[0] = '\0';
	snprintf(out, n, "%s/torch/paths/%s", store, key);
}

static bool memo_get(const char *store, const char *real, const struct stat *st, char sha[65])
{
	char p[PATH_MAX + 128], line[256];
	memo_path(p, sizeof(p), store, real);
	FILE *f = fopen(p, "r");
	if (!f)
		return false;
	unsigned long long size, sec, nsec;
	char hex[80];
	bool ok = fgets(line, sizeof(line), f) &&
		  sscanf(line, "%llu %llu %llu %70s", &size, &sec, &nsec, hex) == 4 &&
		  size == (unsigned long long)st->st_size &&
		  sec == (unsigned long long)st->st_mtim.tv_sec &&
		  nsec == (unsigned long long)st->st_mtim.tv_nsec && is_sha256_hex(hex);
	fclose(f);
	if (ok)
		memcpy(sha, hex, 65);
	return ok;
}

static void memo_put(const char *store, const char *real, const struct stat *st, const char *sha)
{
	char p[PATH_MAX + 128], tmp[PATH_MAX + 160], dir[PATH_MAX + 64];
	snprintf(dir, sizeof(dir), "%s/torch/paths", store);
	if (mkdirs(dir) != 0)
		return;
	memo_path(p, sizeof(p), store, real);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", p, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%llu %llu %llu %s\n", (unsigned long long)st->st_size,
		(unsigned long long)st->st_mtim.tv_sec, (unsigned long long)st->st_mtim.tv_nsec, sha);
	if (fclose(f) != 0 || rename(tmp, p) != 0)
		unlink(tmp);
}

static int open_wheel(mx_torch *t, const mx_run *r, const struct stat *st)
{
	char real[PATH_MAX], torch_dir[PATH_MAX + 16], stored[PATH_MAX + 128], err[1024];
	if (!realpath(t->source, real))
		snprintf(real, sizeof(real), "%s", t->source);
	t->from = "wheel";
	bool known = r->store && memo_get(r->store, real, st, t->sha256);
	if (!known) {
		uint64_t size;
		if (sha256_file(t->source, t->sha256, &size, err, sizeof(err)) < 0) {
			set_error(t, "%s", err);
			return -1;
		}
		if (r->store)
			memo_put(r->store, real, st, t->sha256);
	}
	if (r->store) {
		snprintf(torch_dir, sizeof(torch_dir), "%s/torch", r->store);
		if (wg_facts_path(stored, sizeof(stored), torch_dir, t->sha256) == 0 &&
		    access(stored, R_OK) == 0 && wg_facts_load(&t->scan, r->sc, stored) == 0) {
			/* facts depend on the reader that made them: another version's are made
			 * again, as `scan --facts-dir` does */
			const char *by = wg_scan_stored_by(t->scan);
			if (by && !strcmp(by, wg_version_string())) {
				t->stored = true;
				return 0;
			}
			wg_scan_free(t->scan);
			t->scan = NULL;
		}
	}
	wg_scan *full = NULL;
	if (wg_scan_path(&full, r->sc, t->source) < 0) {
		set_error(t, "%s: %s", t->source, wg_scanner_error(r->sc));
		return -1;
	}
	char *json = NULL;
	int rc = wg_scan_to_json(&json, full, WG_JSON_FACTS | WG_JSON_NO_SYMBOLS | WG_JSON_NO_ENTRIES);
	wg_scan_free(full);
	if (rc < 0) {
		set_error(t, "%s: %s", t->source, wg_error_last());
		return -1;
	}
	char *compact = compact_facts(json, err, sizeof(err));
	wg_free(json);
	if (!compact || wg_scan_from_facts(&t->scan, r->sc, compact, strlen(compact)) < 0) {
		set_error(t, "%s: %s", t->source, compact ? wg_scanner_error(r->sc) : err);
		free(compact);
		return -1;
	}
	free(compact);
	if (r->store && (mkdirs(torch_dir) != 0 || wg_facts_store(torch_dir, t->sha256, t->scan) < 0))
		fprintf(stderr, "wheelgate matrix: warning: %s: the torch facts were not stored: %s\n",
			esc(t->source), esc(wg_error_last()));
	return 0;
}

static int open_facts(mx_torch *t, const mx_run *r, const char *file)
{
	t->from = "facts";
	t->stored = true;
	const char *b = cli_base_name(file);
	if (strlen(b) >= 64 && !strncmp(b + 64, ".json", 5)) {
		memcpy(t->sha256, b, 64);
		t->sha256[64] = '\0';
		if (!is_sha256_hex(t->sha256))
			t->sha256[0] = '\0';
	}
	if (wg_facts_load(&t->scan, r->sc, file) < 0) {
		set_error(t, "%s: %s", file, wg_scanner_error(r->sc));
		return -1;
	}
	const char *by = wg_scan_stored_by(t->scan);
	if (by && strcmp(by, wg_version_string()))
		fprintf(stderr, "wheelgate matrix: warning: %s: stored by wheelgate %s, this is %s: "
			"give the torch wheel to read it again\n", esc(file), esc(by),
			wg_version_string());
	return 0;
}

/* The empty prefix a wheel's column is judged in. */
static int bare_env(mx_torch *t, const mx_run *r)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], site[PATH_MAX + 64];
	snprintf(dir, sizeof(dir), "%s/wg-matrix-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		set_error(t, "%s: %s", dir, strerror(errno));
		return -1;
	}
	t->tmpdir = strdup(dir);
	snprintf(site, sizeof(site), "%s/lib/python%s/site-packages", dir, t->python);
	if (mkdirs(site) != 0) {
		set_error(t, "%s: %s", site, strerror(errno));
		return -1;
	}
	wg_env_options eo = WG_ENV_OPTIONS_INIT;
	eo.cache_dir = ""; /* its paths are new each run: nothing to reuse */
	if (wg_scanner_new(&t->env_sc, r->ctx) < 0 || wg_env_open(&t->env, t->env_sc, dir, &eo) < 0) {
		set_error(t, "%s: %s", t->source, t->env_sc ? wg_scanner_error(t->env_sc) : wg_error_last());
		return -1;
	}
	return 0;
}

static int open_env(mx_torch *t, const mx_run *r)
{
	char path[PATH_MAX], note[1024], why[1024];
	t->from = "env";
	if (env_resolve(t->source, path, sizeof(path), note, sizeof(note), why, sizeof(why)) < 0) {
		set_error(t, "%s: %s", t->source, why);
		return -1;
	}
	wg_env_options eo = WG_ENV_OPTIONS_INIT;
	if (wg_scanner_new(&t->env_sc, r->ctx) < 0 || wg_env_open(&t->env, t->env_sc, path, &eo) < 0) {
		set_error(t, "%s: %s", t->source, t->env_sc ? wg_scanner_error(t->env_sc) : wg_error_last());
		return -1;
	}
	wg_env_info ei = WG_ENV_INFO_INIT;
	if (wg_env_get_info(&ei, t->env) < 0 || !ei.torch_dir) {
		set_error(t, "%s: no torch is installed there", t->source);
		return -1;
	}
	t->version = xstrdup(ei.torch_version);
	t->cuda = xstrdup(ei.torch_cuda);
	t->python = xstrdup(ei.python_version);
	t->cxx11abi = ei.torch_cxx11abi;
	return 0;
}

static int make_target(mx_torch *t)
{
	char abi[4];
	snprintf(abi, sizeof(abi), "%d", t->cxx11abi);
	if (wg_target_new(&t->target) < 0 || wg_target_set(t->target, "profile", "install") < 0 ||
	    wg_target_set_env(t->target, t->env) < 0 ||
	    (t->version && wg_target_set(t->target, "torch", t->version) < 0) ||
	    (t->cxx11abi >= 0 && wg_target_set(t->target, "cxx11abi", abi) < 0) ||
	    (t->cuda && wg_target_set(t->target, "cuda", t->cuda) < 0) ||
	    (t->python && wg_target_set(t->target, "python", t->python) < 0)) {
		set_error(t, "%s: %s", t->source, wg_error_last());
		return -1;
	}
	return 0;
}

int mx_torch_open(mx_torch *t, const mx_run *r, const char *arg)
{
	memset(t, 0, sizeof(*t));
	t->cxx11abi = -1;
	t->source = strdup(arg);
	t->from = "facts";
	struct stat st;
	int rc;
	char stored[PATH_MAX + 128], torch_dir[PATH_MAX + 16];
	if (stat(arg, &st) == 0 && S_ISREG(st.st_mode) && wg_has_suffix_cli(arg, ".whl")) {
		rc = open_wheel(t, r, &st);
	} else if (stat(arg, &st) == 0 && S_ISREG(st.st_mode) &&
		   (wg_has_suffix_cli(arg, ".json.zst") || wg_has_suffix_cli(arg, ".json"))) {
		rc = open_facts(t, r, arg);
	} else if (is_sha256_hex(arg) && stat(arg, &st) != 0) {
		if (!r->store) {
			set_error(t, "%s: a sha256 names stored torch facts: give --facts-dir", arg);
			return -1;
		}
		snprintf(torch_dir, sizeof(torch_dir), "%s/torch", r->store);
		wg_facts_path(stored, sizeof(stored), torch_dir, arg);
		if (access(stored, R_OK) != 0) {
			set_error(t, "%s: no torch facts stored under this sha256 (%s)", arg, stored);
			return -1;
		}
		rc = open_facts(t, r, stored);
	} else {
		return open_env(t, r) < 0 || make_target(t) < 0 ? -1 : 0;
	}
	if (rc < 0 || facts_from_scan(t) < 0 || bare_env(t, r) < 0 || make_target(t) < 0)
		return -1;
	return 0;
}

const char *mx_torch_label(const mx_torch *t)
{
	return t->version ? t->version : cli_base_name(t->source);
}

static void rm_bare(const char *dir, const char *python)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/lib/python%s/site-packages", dir, python ? python : "");
	rmdir(p);
	snprintf(p, sizeof(p), "%s/lib/python%s", dir, python ? python : "");
	rmdir(p);
	snprintf(p, sizeof(p), "%s/lib", dir);
	rmdir(p);
	rmdir(dir);
}

void mx_torch_free(mx_torch *t)
{
	wg_target_free(t->target);
	wg_env_free(t->env);
	wg_scanner_free(t->env_sc);
	wg_scan_free(t->scan);
	if (t->tmpdir)
		rm_bare(t->tmpdir, t->python);
	free(t->tmpdir);
	free(t->source);
	free(t->version);
	free(t->cuda);
	free(t->python);
	free(t->error);
	memset(t, 0, sizeof(*t));
}

/*
 * Environments and the simulated loader against the real one: every generated extension
 * against each generated torch environment (g++, both ABIs), predicted by wg_resolve and
 * loaded for real with dlopen(RTLD_NOW) after loading torch's library as `import torch` does;
 * the environment reader on the faithful torch 2.11 stand-in.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loader/loader.h"
#include "test_util.h"

#define ENVS WG_FIXTURES "/envs"
#define SITE "/lib/python3.12/site-packages"

static const char *const exts[] = {"seed", "string_abi1", "string_abi0", "charptr_abi0",
				   "charptr_abi1", "plain", "mixed", "-ld/ext_missing",
				   "-ld/vers/ext_newver", "-ld/unlinked/ext_unlinked_abi0",
				   "-ld/unlinked/ext_unlinked_abi1", "-ld/bundled/ext_bundled"};
static const char *const envs[] = {"oldabi", "newabi"};
#define N_EXTS (int)(sizeof(exts) / sizeof(exts[0]))

static wg_env_options no_cache(void)
{
	wg_env_options o = WG_ENV_OPTIONS_INIT;
	o.cache_dir = "";
	return o;
}

/* `import torch` (torch's library, RTLD_LOCAL; RTLD_GLOBAL when global), then the extension
 * with RTLD_NOW. */
static bool load_with(const char *env, const char *ext, bool global, char *err, size_t n)
{
	char c10[512];
	snprintf(c10, sizeof(c10), ENVS "/%s" SITE "/torch/lib/libc10.so", env);
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (!dlopen(c10, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL)) ||
		    !dlopen(ext, RTLD_NOW)) {
			const char *e = dlerror();
			(void)!write(fds[1], e, strlen(e));
			_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	ssize_t r = read(fds[0], err, n - 1);
	err[r > 0 ? r : 0] = '\0';
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static bool load_for_real(const char *env, const char *ext, char *err, size_t n)
{
	return load_with(env, ext, false, err, n);
}

START_TEST(test_loader_agrees_with_dlopen)
{
	const char *name = exts[_i % N_EXTS], *env = envs[_i / N_EXTS];
	char ext[512], envpath[512], err[2048];
	if (name[0] == '-')
		snprintf(ext, sizeof(ext), FIX_ABI "%s" EXT_SFX, name);
	else
		snprintf(ext, sizeof(ext), FIX_ABI "/ext_%s" EXT_SFX, name);
	snprintf(envpath, sizeof(envpath), ENVS "/%s", env);
	wg_env *e = NULL;
	wg_env_options eo = no_cache();
	ck_assert_msg(wg_env_open(&e, t_sc, envpath, &eo) == WG_OK, "%s", wg_scanner_error(t_sc));
	wg_scan *s = t_scan(ext);
	wg_arena a = {0};
	wg_vec issues;
	bool assumed = false;
	wg_vec_init(&issues, sizeof(wg_ld_issue));
	/* A lone object is loaded where it lies: its record at its own path (as the analysis
	 * step builds it for wg_check). */
	const wg_object *o = wg_scan_object(s, 0);
	wg_lib *root = wg_lib_from_object(o, o->path);
	wg_vec vlibs;
	wg_vec_init(&vlibs, sizeof(wg_lib *));
	ck_assert_ptr_nonnull(root);
	*(wg_lib **)wg_vec_push(&vlibs) = root;
	ck_assert_int_eq(wg_resolve(e, s, o, root, &vlibs, &a, &issues, &assumed, true), WG_OK);
	bool loads = load_for_real(env, ext, err, sizeof(err));
	ck_assert_msg((issues.len == 0) == loads, "%s in %s: predicted %zu issue(s), dlopen %s",
		      name, env, issues.len, loads ? "loaded" : err);
	const char *ver = loads ? NULL : strstr(err, "version `");
	const char *lib = loads ? NULL : strstr(err, ": cannot open shared object file");
	if (ver) {
		/* "version `WG_2.0' not found (required by ...)" */
		char v[128];
		snprintf(v, sizeof(v), "%s", ver + 9);
		v[strcspn(v, "'")] = '\0';
		bool listed = false;
		for (size_t i = 0; i < issues.len; i++) {
			const wg_ld_issue *x = wg_vec_at(&issues, i);
			listed = listed || (x->kind == WG_LD_MISSING_VERSION && !strcmp(x->version, v));
		}
		ck_assert_msg(listed, "%s: dlopen: %s; not predicted", name, err);
	} else if (lib) {
		/* "libwgmissing.so: cannot open shared object file" */
		const char *start = lib;
		while (start > err && start[-1] != ' ')
			start--;
		char l[256];
		snprintf(l, sizeof(l), "%.*s", (int)(lib - start), start);
		bool listed = false;
		for (size_t i = 0; i < issues.len; i++) {
			const wg_ld_issue *x = wg_vec_at(&issues, i);
			listed = listed || (x->kind == WG_LD_MISSING_LIBRARY && !strcmp(x->library, l));
		}
		ck_assert_msg(listed, "%s: dlopen: %s; not predicted", name, err);
	} else if (!loads) {
		/* The symbol the loader names is one the prediction lists as unresolved. */
		const char *u = strstr(err, "undefined symbol: ");
		ck_assert_ptr_nonnull(u);
		char sym[1024];
		snprintf(sym, sizeof(sym), "%s", u + 18);
		sym[strcspn(sym, " \n(")] = '\0';
		bool listed = false;
		for (size_t i = 0; i < issues.len; i++) {
			const wg_ld_issue *x = wg_vec_at(&issues, i);
			listed = listed || (x->kind == WG_LD_UNRESOLVED && !strcmp(x->symbol, sym));
		}
		ck_assert_msg(listed, "%s in %s: dlopen names %s, not predicted", name, env, sym);
		if (!strcmp(name, "seed")) /* the seed's message, exactly */
			ck_assert_str_eq(sym, "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112"
					      "basic_stringIcSt11char_traitsIcESaIcEEE");
	}
	/* No interpreter in these environments: Py* would be taken as provided (none here). */
	ck_assert(!assumed);
	wg_vec_free(&issues);
	wg_vec_free(&vlibs);
	wg_lib_free(root);
	wg_arena_free(&a);
	wg_scan_free(s);
	wg_env_free(e);
}
END_TEST

/* The finding of rule among r's, or NULL. */
static const char *finding_message(const wg_report *r, const char *rule)
{
	wg_finding_info fi = WG_FINDING_INFO_INIT;
	for (size_t i = 0; i < wg_report_count(r); i++)
		if (wg_report_finding(&fi, r, i) == WG_OK && !strcmp(fi.rule, rule))
			return fi.message;
	return NULL;
}

/*
 * Torch-facing by symbol (issue 24): ext_string.cpp linked -Wl,--as-needed against a stub
 * libc10.so lists no torch library in DT_NEEDED and still imports c10 symbols. The real
 * loader after `import torch` (libc10.so RTLD_LOCAL) never loads it, whatever its ABI; with
 * libc10.so RTLD_GLOBAL it loads exactly when its ABI is torch's (the symbols exist, only the
 * load's scope lacks them). WG-ABI-001 fires exactly when the ABIs differ, and WG-LD-001's
 * message says which of the two it is.
 */
START_TEST(test_torch_symbols_without_torch_in_load)
{
	int abi = _i % 2, env_abi = _i / 2; /* envs[0] is oldabi, envs[1] newabi */
	const char *env = envs[env_abi];
	char ext[512], envpath[512], err[2048], gerr[2048];
	snprintf(ext, sizeof(ext), FIX_ABI "-ld/unlinked/ext_unlinked_abi%d" EXT_SFX, abi);
	snprintf(envpath, sizeof(envpath), ENVS "/%s", env);
	ck_assert_msg(!load_with(env, ext, false, err, sizeof(err)), "abi%d in %s loaded", abi, env);
	bool global = load_with(env, ext, true, gerr, sizeof(gerr));
	ck_assert_msg(global == (abi == env_abi), "abi%d in %s, libc10 RTLD_GLOBAL: %s", abi, env,
		      global ? "loaded" : gerr);
	/* The facts: no torch library needed, the symbol dlopen names is a torch-facing import. */
	const char *u = strstr(err, "undefined symbol: ");
	ck_assert_msg(u, "%s", err);
	char sym[1024];
	snprintf(sym, sizeof(sym), "%s", u + 18);
	sym[strcspn(sym, " \n(")] = '\0';
	wg_scan *s = t_scan(ext);
	const wg_object *o = wg_scan_object(s, 0);
	for (size_t j = 0; j < o->needed.n; j++)
		ck_assert_msg(!strstr(o->needed.v[j], "c10") && !strstr(o->needed.v[j], "torch"),
			      "%s", o->needed.v[j]);
	wg_symbol_info si;
	ck_assert_int_ge(t_symbol(o, sym, &si), 0);
	ck_assert(!si.defined && si.torch_facing);
	/* The rules, with the environment (its torch's ABI is the target's). */
	wg_env *e = NULL;
	wg_env_options eo = no_cache();
	ck_assert_int_eq(wg_env_open(&e, t_sc, envpath, &eo), WG_OK);
	wg_target *t = NULL;
	ck_assert_int_eq(wg_target_new(&t), WG_OK);
	ck_assert_int_eq(wg_target_set_env(t, e), WG_OK);
	ck_assert_int_eq(t->cxx11abi, env_abi);
	wg_ruleset *rs = NULL;
	ck_assert_int_eq(wg_ruleset_new(&rs, t_ctx, NULL), WG_OK);
	wg_report *r = NULL;
	ck_assert_int_eq(wg_check(&r, t_sc, rs, s, t), WG_OK);
	const char *abi_msg = finding_message(r, "WG-ABI-001");
	const char *ld_msg = finding_message(r, "WG-LD-001");
	ck_assert_msg(!abi_msg == global, "abi%d in %s: WG-ABI-001 %s", abi, env,
		      abi_msg ? abi_msg : "(none)");
	if (abi_msg)
		ck_assert_ptr_nonnull(strstr(abi_msg, "nor does it list torch's libraries in "
						      "DT_NEEDED"));
	ck_assert_msg(ld_msg, "abi%d in %s: no WG-LD-001", abi, env);
	if (global) {
		ck_assert_msg(strstr(ld_msg, "libc10.so defines it, but `import torch` loaded "
					     "libc10.so RTLD_LOCAL"), "%s", ld_msg);
	} else {
		ck_assert_msg(strstr(ld_msg, "none of torch's libraries is in this load"), "%s",
			      ld_msg);
		ck_assert_msg(strstr(ld_msg, "the right ABI alone would not resolve it either"),
			      "%s", ld_msg);
	}
	wg_report_free(r);
	wg_ruleset_free(rs);
	wg_target_free(t);
	wg_env_free(e);
	wg_scan_free(s);
}
END_TEST

START_TEST(test_reader_on_faithful_torch)
{
	if (t_skip_unless(ENVS "/torch211", "faithful torch stand-in (needs the corpus)"))
		return;
	wg_env *e = NULL;
	wg_env_options eo = no_cache();
	/* From the prefix, the site-packages directory and the interpreter: the same facts. */
	const char *paths[] = {ENVS "/torch211", ENVS "/torch211" SITE,
			       ENVS "/torch211/bin/python3.12"};
	for (size_t p = 0; p < 3; p++) {
		ck_assert_int_eq(wg_env_open(&e, t_sc, paths[p], &eo), WG_OK);
		wg_env_info ei = WG_ENV_INFO_INIT;
		wg_env_get_info(&ei, e);
		ck_assert_str_eq(ei.python_version, "3.12");
		ck_assert_str_eq(ei.ext_suffix, ".cpython-312-x86_64-linux-gnu.so");
		ck_assert_str_eq(ei.torch_version, "2.11.0+cu130");
		ck_assert_str_eq(ei.torch_cuda, "13.0");
		ck_assert_int_eq(ei.torch_cxx11abi, 1);
		ck_assert_ptr_nonnull(strstr(ei.python, "/bin/python3.12"));
		wg_target *t = NULL;
		ck_assert_int_eq(wg_target_new(&t), WG_OK);
		ck_assert_int_eq(wg_target_set_env(t, e), WG_OK);
		ck_assert(t->python_major == 3 && t->python_minor == 12 && t->cuda_major == 13 &&
			  t->cxx11abi == 1 && t->env == e);
		ck_assert_str_eq(t->torch, "2.11.0+cu130");
		/* the 0.1 name does the same */
		wg_target_clear(t);
		ck_assert_int_eq(wg_env_fill_target(e, t), WG_OK);
		ck_assert(t->python_major == 3 && t->cxx11abi == 1 && t->env == e);
		wg_target_free(t);
		wg_env_free(e);
	}
	ck_assert_int_eq(wg_env_open(&e, t_sc, "/nonexistent/venv", &eo), WG_ENOTFOUND);
	ck_assert_int_eq(wg_env_open(&e, t_sc, FIX_ABI, &eo), WG_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(wg_scanner_error(t_sc), "not a Python environment"));
}
END_TEST

START_TEST(test_old_abi_env_facts)
{
	wg_env *e = NULL;
	wg_env_options eo = no_cache();
	ck_assert_int_eq(wg_env_open(&e, t_sc, ENVS "/oldabi", &eo), WG_OK);
	wg_env_info ei = WG_ENV_INFO_INIT;
	wg_env_get_info(&ei, e);
	ck_assert_int_eq(ei.torch_cxx11abi, 0);
	ck_assert_str_eq(ei.torch_version, "2.4.0+cpu");
	ck_assert_ptr_null(ei.torch_cuda);
	ck_assert_ptr_null(ei.python);
	wg_env_free(e);
}
END_TEST

/* ---- the library index cache (libcache.c): round trip and hostile entries ---- */

static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void assert_same_lib(const wg_lib *a, const wg_lib *b)
{
	ck_assert_str_eq(a->path, b->path);
	ck_assert(str_same(a->soname, b->soname) && str_same(a->rpath, b->rpath) &&
		  str_same(a->runpath, b->runpath));
	ck_assert(a->size == b->size && a->mtime == b->mtime && a->torch_abi == b->torch_abi);
	ck_assert(a->needed.n == b->needed.n && a->verdefs.n == b->verdefs.n &&
		  a->verneeds.len == b->verneeds.len);
	for (size_t i = 0; i < a->needed.n; i++)
		ck_assert_str_eq(a->needed.v[i], b->needed.v[i]);
	for (size_t i = 0; i < a->verdefs.n; i++)
		ck_assert_str_eq(a->verdefs.v[i], b->verdefs.v[i]);
	for (size_t i = 0; i < a->verneeds.len; i++) {
		const wg_verneed *x = wg_vec_at(&a->verneeds, i), *y = wg_vec_at(&b->verneeds, i);
		ck_assert(str_same(x->file, y->file) && str_same(x->version, y->version) &&
			  x->weak == y->weak);
	}
	ck_assert_uint_eq(a->ndefs, b->ndefs);
	ck_assert_uint_eq(a->nundefs, b->nundefs);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0, n = pass ? a->nundefs : a->ndefs; i < n; i++) {
			const wg_libsym *x = pass ? &a->undefs[i] : &a->defs[i];
			const wg_libsym *y = pass ? &b->undefs[i] : &b->defs[i];
			ck_assert_str_eq(x->name, y->name);
			ck_assert(str_same(x->version, y->version));
			ck_assert(x->weak == y->weak && x->hidden == y->hidden &&
				  x->torch == y->torch && x->string_abi == y->string_abi);
		}
	/* and the index over the definitions answers the same */
	for (size_t i = 0; i < a->ndefs; i++)
		ck_assert_ptr_eq(wg_lib_lookup(b, a->defs[i].name, a->defs[i].version) - b->defs +
					 a->defs,
				 wg_lib_lookup(a, a->defs[i].name, a->defs[i].version));
}

#define C10 ENVS "/newabi" SITE "/torch/lib/libc10.so"

static char cache_tmp[64];

static void read_file(const char *path, uint8_t **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	*data = malloc(*len + 1);
	ck_assert_uint_eq(fread(*data, 1, *len, f), *len);
	fclose(f);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* Opens the environment with the cache in cache_tmp: libc10.so is loaded (its C++ ABI). */
static wg_env *open_cached(void)
{
	wg_env *e = NULL;
	wg_env_options eo = WG_ENV_OPTIONS_INIT;
	eo.cache_dir = cache_tmp;
	ck_assert_int_eq(wg_env_open(&e, t_sc, ENVS "/newabi", &eo), WG_OK);
	ck_assert_ptr_nonnull(e->cache_dir);
	return e;
}

/* The payload's fields (libcache.c's layout): offsets in the entry. */
enum { F_PATH = 40, F_RPATH = 48, F_ABI = 56, F_NNEEDED = 60, F_NDEFS = 72, F_NS = 80,
       F_WORDS = 84 };

static void set_u32(uint8_t *d, size_t off, uint32_t v)
{
	memcpy(d + off, &v, 4);
}

static void fix_crc(uint8_t *d, size_t len)
{
	uint32_t crc = libdeflate_crc32(0, d + 24, len - 24);
	memcpy(d + 12, &crc, 4);
}

START_TEST(test_cache_round_trip_and_hostile_entries)
{
	char real[PATH_MAX], entry[4200];
	ck_assert_ptr_nonnull(realpath(C10, real));
	snprintf(cache_tmp, sizeof(cache_tmp), "/tmp/wg-check-cache-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(cache_tmp));
	struct stat st;
	ck_assert_int_eq(stat(real, &st), 0);

	/* The library read from its file: what every read of the entry must give back. */
	wg_ld_note note;
	int fd = wg_lib_open(real, UINT64_MAX, &st, &note);
	ck_assert_int_ge(fd, 0);
	wg_lib *ref = wg_read_library(fd, real, (uint64_t)st.st_size, t_sc->matcher,
				      t_ctx->opts.max_symbols);
	close(fd);
	ck_assert_ptr_nonnull(ref);
	ref->size = (uint64_t)st.st_size;
	ref->mtime = (uint64_t)st.st_mtime;
	ck_assert_uint_gt(ref->ndefs, 4);
	ck_assert_uint_gt(ref->nundefs, 4);
	ck_assert_uint_gt(ref->verneeds.len, 0);

	/* Cold: written; warm: read back, every fact equal. */
	wg_env *e = open_cached();
	ck_assert_uint_eq(e->cache_hits, 0);
	wg_cache_entry_path(entry, sizeof(entry), e, real);
	uint8_t *good;
	size_t len;
	read_file(entry, &good, &len);
	ck_assert_uint_gt(len, 84);
	ck_assert(!memcmp(good, "WGLIBIDX", 8));
	wg_lib *l = wg_cache_get(e, real, ref->size, ref->mtime);
	ck_assert_ptr_nonnull(l);
	assert_same_lib(ref, l);
	wg_lib_free(l);
	/* another size or mtime: stale */
	ck_assert_ptr_null(wg_cache_get(e, real, ref->size + 1, ref->mtime));
	ck_assert_ptr_null(wg_cache_get(e, real, ref->size, ref->mtime + 1));
	wg_env_free(e);
	e = open_cached();
	ck_assert_uint_eq(e->cache_hits, 1);
	wg_env_free(e);

	/* Hostile entries: each one is ignored (not read back) and rebuilt as it was. */
	enum { N_TRUNC = 16, N_OTHER = 12 };
	uint8_t *bad = malloc(len + 4096);
	for (int k = 0; k < N_TRUNC + N_OTHER; k++) {
		memcpy(bad, good, len);
		size_t blen = len;
		uint32_t ns;
		memcpy(&ns, good + F_NS, 4);
		switch (k - N_TRUNC) {
		case 0: /* a flipped byte: the checksum */
			bad[len / 2] ^= 0x20;
			break;
		case 1: /* wrong magic */
			bad[0] = 'X';
			break;
		case 2: /* wrong version */
			bad[8]++;
			break;
		case 3: /* the header's payload length past the end */
			bad[16]++;
			break;
		case 4: /* a string offset past the table, checksum right */
			set_u32(bad, F_RPATH, ns);
			fix_crc(bad, blen);
			break;
		case 5: /* the table longer than the file, checksum right */
			set_u32(bad, F_NS, ns + 1000);
			fix_crc(bad, blen);
			break;
		case 6: /* a huge count, checksum right */
			set_u32(bad, F_NDEFS, 0xffffffffu);
			fix_crc(bad, blen);
			break;
		case 7: /* a count whose records would lie past the end, checksum right */
			set_u32(bad, F_NNEEDED, 0x40000000u);
			fix_crc(bad, blen);
			break;
		case 8: /* the table not ending with NUL, checksum right */
			bad[len - 1] = 'x';
			fix_crc(bad, blen);
			break;
		case 9: /* a C++ ABI out of range, checksum right */
			set_u32(bad, F_ABI, 7);
			fix_crc(bad, blen);
			break;
		case 10: /* a symbol's name offset past the table (the last undefined's) */
			set_u32(bad, len - ns - 12, ns + 5);
			fix_crc(bad, blen);
			break;
		case 11: /* bytes appended, the lengths unchanged */
			memset(bad + len, 0, 4096);
			blen = len + 4096;
			break;
		default: /* truncated at k/16 of its length */
			blen = len * (size_t)k / N_TRUNC;
		}
		/* the symbol's record is where case 10 says (the last of the records) */
		ck_assert(k - N_TRUNC != 10 || F_WORDS <= len - ns - 12);
		e = open_cached();
		write_file(entry, bad, blen);
		wg_lib *got = wg_cache_get(e, real, ref->size, ref->mtime);
		ck_assert_msg(!got, "hostile entry %d was read back", k);
		wg_env_free(e);
		/* ignored above (the library was read from its file) and written again whole */
		write_file(entry, bad, blen);
		e = open_cached();
		ck_assert_msg(e->cache_hits == 0, "hostile entry %d was used", k);
		wg_env_free(e);
		uint8_t *again;
		size_t alen;
		read_file(entry, &again, &alen);
		ck_assert_msg(alen == len && !memcmp(again, good, len), "entry %d not rebuilt", k);
		free(again);
	}
	free(bad);
	free(good);
	wg_lib_free(ref);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache_tmp);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *suite_env(void)
{
	Suite *s = suite_create("env");
	TCase *tc = tcase_create("env");
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_loader_agrees_with_dlopen, 0, N_EXTS * 2);
	tcase_add_loop_test(tc, test_torch_symbols_without_torch_in_load, 0, 4);
	tcase_add_test(tc, test_reader_on_faithful_torch);
	tcase_add_test(tc, test_old_abi_env_facts);
	tcase_add_test(tc, test_cache_round_trip_and_hostile_entries);
	suite_add_tcase(s, tc);
	return s;
}

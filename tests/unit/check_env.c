/*
 * Environments and the simulated loader against the real one: every generated extension
 * against each generated torch environment (g++, both ABIs), predicted by wg_resolve and
 * loaded for real with dlopen(RTLD_NOW) after loading torch's library as `import torch` does;
 * the environment reader on the faithful torch 2.11 stand-in.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loader/loader.h"
#include "test_util.h"

#define ENVS WG_FIXTURES "/envs"
#define SITE "/lib/python3.12/site-packages"

static const char *const exts[] = {"seed", "string_abi1", "string_abi0", "charptr_abi0",
				   "charptr_abi1", "plain", "mixed", "-ld/ext_missing",
				   "-ld/vers/ext_newver"};
static const char *const envs[] = {"oldabi", "newabi"};
#define N_EXTS (int)(sizeof(exts) / sizeof(exts[0]))

static wg_env_options no_cache(void)
{
	wg_env_options o = WG_ENV_OPTIONS_INIT;
	o.cache_dir = "";
	return o;
}

/* `import torch` (torch's library, RTLD_LOCAL), then the extension with RTLD_NOW. */
static bool load_for_real(const char *env, const char *ext, char *err, size_t n)
{
	char c10[512];
	snprintf(c10, sizeof(c10), ENVS "/%s" SITE "/torch/lib/libc10.so", env);
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (!dlopen(c10, RTLD_NOW | RTLD_LOCAL) || !dlopen(ext, RTLD_NOW)) {
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

Suite *suite_env(void)
{
	Suite *s = suite_create("env");
	TCase *tc = tcase_create("env");
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_loader_agrees_with_dlopen, 0, N_EXTS * 2);
	tcase_add_test(tc, test_reader_on_faithful_torch);
	tcase_add_test(tc, test_old_abi_env_facts);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * The std::string ABI facts against ground truth: what the compiler was told
 * (-D_GLIBCXX_USE_CXX11_ABI) and what dlopen(RTLD_NOW) really does with each extension
 * against each stand-in libc10.so (tests/fixtures/gen-abi.sh builds them with g++).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

static const struct {
	const char *variant;
	wg_string_abi told; /* what the flags given to g++ imply for the torch-facing imports */
} exts[] = {
	{"string_abi1", WG_ABI_NEW},  {"string_abi0", WG_ABI_OLD}, {"charptr_abi0", WG_ABI_NONE},
	{"charptr_abi1", WG_ABI_NONE}, {"plain", WG_ABI_NONE},     {"mixed", WG_ABI_MIXED},
};

static const struct {
	const char *dir;
	wg_string_abi told;
} torches[] = {{"torch_new", WG_ABI_NEW}, {"torch_old", WG_ABI_OLD}};

#define N_EXTS (int)(sizeof(exts) / sizeof(exts[0]))

static void ext_path(char *buf, size_t n, int i)
{
	snprintf(buf, n, FIX_ABI "/ext_%s" EXT_SFX, exts[i].variant);
}

static wg_object_info info_of(wg_scan *s)
{
	wg_object_info oi = WG_OBJECT_INFO_INIT;
	ck_assert_uint_eq(wg_scan_object_count(s), 1);
	ck_assert_int_eq(wg_object_get_info(&oi, wg_scan_object(s, 0)), WG_OK);
	ck_assert_ptr_null(oi.error);
	return oi;
}

START_TEST(test_ext_facts_match_compiler)
{
	char path[512];
	ext_path(path, sizeof(path), _i);
	wg_scan *s = t_scan(path);
	wg_object_info oi = info_of(s);
	ck_assert_msg(oi.torch_abi == exts[_i].told, "%s: torch-facing ABI %s, compiled as %s",
		      exts[_i].variant, wg_string_abi_name(oi.torch_abi),
		      wg_string_abi_name(exts[_i].told));
	/* An object whose own code uses one ABI reports it overall too (the C++ runtime's
	 * instantiations are not counted). */
	if (exts[_i].told == WG_ABI_NEW || exts[_i].told == WG_ABI_OLD)
		ck_assert_int_eq(oi.abi, exts[_i].told);
	ck_assert_int_eq(oi.is_extension, 1);
	ck_assert_int_eq(oi.has_init, 1);
	ck_assert_str_eq(oi.ext_interpreter, "cpython-312");
	ck_assert_str_eq(oi.ext_platform, "x86_64-linux-gnu");
	ck_assert_int_eq(oi.elf_class, 64);
	ck_assert_str_eq(oi.machine_name, "x86_64");
	ck_assert_str_eq(oi.type, "dyn");
	if (strcmp(exts[_i].variant, "plain")) {
		ck_assert_uint_ge(oi.needed_count, 1);
		ck_assert_str_eq(wg_object_needed(wg_scan_object(s, 0), 0), "libc10.so");
	}
	wg_scan_free(s);
}
END_TEST

START_TEST(test_torch_facts_match_compiler)
{
	char path[512];
	snprintf(path, sizeof(path), FIX_ABI "/%s/libc10.so", torches[_i].dir);
	wg_scan *s = t_scan(path);
	wg_object_info oi = info_of(s);
	ck_assert_int_eq(oi.torch_abi, torches[_i].told);
	ck_assert_int_eq(oi.abi, torches[_i].told);
	ck_assert_str_eq(oi.soname, "libc10.so");
	ck_assert_int_eq(oi.is_extension, 0);
	/* The c10::Error constructor is exported in the stand-in's own ABI. */
	wg_symbol_info si;
	const char *ctor = torches[_i].told == WG_ABI_NEW
		? "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
		: "_ZN3c105ErrorC2ENS_14SourceLocationESs";
	ck_assert_int_ge(t_symbol(wg_scan_object(s, 0), ctor, &si), 0);
	ck_assert_int_eq(si.defined, 1);
	ck_assert_int_eq(si.torch_facing, 1);
	ck_assert_str_eq(si.demangled, torches[_i].told == WG_ABI_NEW
		? "c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)"
		: "c10::Error::Error(c10::SourceLocation, std::basic_string<char, std::char_traits<char>, std::allocator<char> >)");
	wg_scan_free(s);
}
END_TEST

/* Loads torch then ext in a child process, as `import torch; import ext` would. Returns 1 when
 * it loaded, 0 when not, with dlerror() in err. */
static int dlopen_in_child(const char *torch, const char *ext, char *err, size_t n)
{
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		if (!dlopen(torch, RTLD_NOW | RTLD_GLOBAL)) {
			const char *e = dlerror();
			(void)!write(fds[1], e, strlen(e));
			_exit(3);
		}
		if (!dlopen(ext, RTLD_NOW | RTLD_LOCAL)) {
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
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 3, "cannot load %s: %s", torch, err);
	return WEXITSTATUS(st) == 0;
}

START_TEST(test_prediction_matches_dlopen)
{
	int e = _i % N_EXTS, t = _i / N_EXTS;
	char ext[512], torch[512], err[2048];
	ext_path(ext, sizeof(ext), e);
	snprintf(torch, sizeof(torch), FIX_ABI "/%s/libc10.so", torches[t].dir);
	wg_scan *es = t_scan(ext), *ts = t_scan(torch);
	wg_object_info eo = info_of(es), to = info_of(ts);
	/* The prediction from the facts alone: an extension whose torch-facing imports carry no
	 * std::string loads against either ABI; otherwise the ABIs must be the same. */
	bool predicted = eo.torch_abi == WG_ABI_NONE || eo.torch_abi == to.torch_abi;
	bool loaded = dlopen_in_child(torch, ext, err, sizeof(err));
	ck_assert_msg(predicted == loaded, "%s against %s: predicted %s, dlopen %s (%s)",
		      exts[e].variant, torches[t].dir, predicted ? "loads" : "fails",
		      loaded ? "loaded" : "failed", err);
	if (!loaded) {
		/* The loader names a symbol that the facts list as a torch-facing import carrying
		 * the other ABI's std::string. */
		const char *u = strstr(err, "undefined symbol: ");
		ck_assert_msg(u, "unexpected dlopen error: %s", err);
		char sym[1024];
		snprintf(sym, sizeof(sym), "%s", u + strlen("undefined symbol: "));
		sym[strcspn(sym, " \n(")] = '\0';
		wg_symbol_info si;
		ck_assert_msg(t_symbol(wg_scan_object(es, 0), sym, &si) >= 0, "%s not in facts", sym);
		ck_assert_int_eq(si.defined, 0);
		ck_assert_int_eq(si.torch_facing, 1);
		unsigned other = to.torch_abi == WG_ABI_NEW ? WG_SYM_OLD_STRING : WG_SYM_NEW_STRING;
		ck_assert_uint_eq(si.string_abi & other, other);
	}
	wg_scan_free(es);
	wg_scan_free(ts);
}
END_TEST

Suite *suite_abi(void)
{
	Suite *s = suite_create("abi");
	TCase *tc = tcase_create("fixtures");
	tcase_add_checked_fixture(tc, t_setup, t_teardown);
	tcase_add_loop_test(tc, test_ext_facts_match_compiler, 0, N_EXTS);
	tcase_add_loop_test(tc, test_torch_facts_match_compiler, 0, 2);
	tcase_add_loop_test(tc, test_prediction_matches_dlopen, 0, N_EXTS * 2);
	suite_add_tcase(s, tc);
	return s;
}

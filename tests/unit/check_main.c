/*
 * The one Check runner. `check_wheelgate` runs every suite; `check_wheelgate NAME` runs one,
 * and CTest registers each suite as `unit-NAME` (tests/CMakeLists.txt reads the table below).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

static const struct {
	const char *name;
	Suite *(*make)(void);
} suites[] = {
	{ "wheelname", suite_wheelname },
	{ "text", suite_text },
	{ "classify", suite_classify },
	{ "abi", suite_abi },
	{ "wheel", suite_wheel },
	{ "corpus", suite_corpus },
	{ "api", suite_api },
	{ "fatbin", suite_fatbin },
	{ "rules", suite_rules },
	{ "env", suite_env },
	{ "sysver", suite_sysver },
	{ "facts", suite_facts },
	{ "errors", suite_errors },
	{ "report_api", suite_report_api },
	{ "select", suite_select },
	{ "stream", suite_stream },
	{ "sparse", suite_sparse },
};

/* The exit status of a run that skipped a test and failed none (CTest's SKIP_RETURN_CODE). */
#define T_SKIPPED 77
#define N_SUITES (sizeof(suites) / sizeof(suites[0]))

int main(int argc, char **argv)
{
	SRunner *sr = NULL;
	if (argc > 2) {
		fprintf(stderr, "usage: check_wheelgate [SUITE | --list]\n");
		return EXIT_FAILURE;
	}
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < N_SUITES; i++)
			printf("%s\n", suites[i].name);
		return EXIT_SUCCESS;
	}
	for (size_t i = 0; i < N_SUITES; i++) {
		if (argc == 2 && strcmp(argv[1], suites[i].name))
			continue;
		if (!sr)
			sr = srunner_create(suites[i].make());
		else
			srunner_add_suite(sr, suites[i].make());
	}
	if (!sr) {
		fprintf(stderr, "check_wheelgate: no suite named '%s' (--list lists them)\n", argv[1]);
		return EXIT_FAILURE;
	}
	FILE *skips = tmpfile();
	t_skip_fd = skips ? fileno(skips) : -1;
	srunner_run_all(sr, CK_NORMAL);
	int run = srunner_ntests_run(sr);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	struct stat st;
	long skipped = skips && fstat(fileno(skips), &st) == 0 ? (long)st.st_size : 0;
	if (skips)
		fclose(skips);
	if (run == 0) {
		/* CK_RUN_SUITE or CK_RUN_CASE named nothing that is here. */
		fprintf(stderr, "check_wheelgate: no test ran\n");
		return EXIT_FAILURE;
	}
	if (failed)
		return EXIT_FAILURE;
	if (skipped) {
		/* CTest reports this as Skipped, not Passed (tests/CMakeLists.txt). */
		fprintf(stderr, "check_wheelgate: %ld test(s) skipped for lack of ../shared "
			"(CI=true makes that a failure)\n", skipped);
		return T_SKIPPED;
	}
	return EXIT_SUCCESS;
}

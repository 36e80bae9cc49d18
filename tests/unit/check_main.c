/*
 * The one Check runner: every suite, registered under CTest as `unit`.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>

#include "test_util.h"

int main(void)
{
	SRunner *sr = srunner_create(suite_wheelname());
	srunner_add_suite(sr, suite_text());
	srunner_add_suite(sr, suite_classify());
	srunner_add_suite(sr, suite_abi());
	srunner_add_suite(sr, suite_wheel());
	srunner_add_suite(sr, suite_corpus());
	srunner_add_suite(sr, suite_api());
	srunner_add_suite(sr, suite_fatbin());
	srunner_add_suite(sr, suite_rules());
	srunner_add_suite(sr, suite_env());
	srunner_add_suite(sr, suite_sysver());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

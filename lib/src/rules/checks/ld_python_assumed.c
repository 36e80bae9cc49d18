/*
 * ld-python-assumed: the environment has no interpreter wheelgate could read (a bare
 * site-packages directory), so the Python C API symbols objects import (Py*, _Py*) were taken
 * as provided instead of resolved. Said once per input, as information.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	int rc = wg_check_ld(cc);
	if (rc < 0 || !cc->python_assumed)
		return rc;
	wg_vars v = {0};
	wg_vars_set(&v, "env", cc->target->env->site);
	return wg_emit(cc, &v, NULL, NULL, NULL, 0);
}

static const char *const vars[] = {"env", NULL};
const wg_check_kind wg_check_ld_python_assumed = {"ld-python-assumed", run, NULL, vars,
	WG_FACT_ENV};

/*
 * ld-breaks-installed: installing this wheel (with the others of its install) leaves an
 * installed distribution's object unable to load: a symbol, library or version it used is
 * gone (loader/plan.c finds them by resolving the distributions before and after). One
 * finding per broken object, naming a torch-facing symbol first when there is one, else the
 * first problem, and the evidence (which replaced distribution had what the object needs).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

static const char *problem(wg_check_ctx *cc, const wg_plan_break *b)
{
	switch (b->kind) {
	case WG_LD_UNRESOLVED: {
		char *dem = wg_demangle(b->symbol);
		const char *s = wg_check_printf(cc, "undefined symbol %s (%s%s%s)", b->symbol,
						dem ? dem : b->symbol, b->version ? "@" : "",
						b->version ? b->version : "");
		free(dem);
		return s;
	}
	case WG_LD_MISSING_LIBRARY:
		return wg_check_printf(cc, "%s: cannot open shared object file", b->library);
	case WG_LD_MISSING_VERSION:
		return wg_check_printf(cc, "version `%s' not found (required by it, from %s)",
				       b->version ? b->version : "", b->library ? b->library : "?");
	default:
		return "it no longer loads";
	}
}

static int run(wg_check_ctx *cc)
{
	const wg_env *e = cc->target->env;
	size_t n = 0;
	const wg_plan_break *breaks = e ? wg_plan_breaks(e, &n) : NULL;
	for (size_t i = 0; i < n; i++) {
		const wg_plan_break *b = &breaks[i];
		if (strcmp(b->wheel, cc->scan->path))
			continue;
		/* Once per broken object: the first break of it, or its first torch symbol. */
		size_t count = 0, pick = SIZE_MAX, first = SIZE_MAX;
		for (size_t k = 0; k < n; k++) {
			const wg_plan_break *y = &breaks[k];
			if (strcmp(y->wheel, b->wheel) || strcmp(y->dist, b->dist) ||
			    strcmp(y->object, b->object))
				continue;
			count++;
			if (first == SIZE_MAX)
				first = k;
			if (pick == SIZE_MAX && y->torch)
				pick = k;
		}
		if (first != i)
			continue;
		const wg_plan_break *x = &breaks[pick != SIZE_MAX ? pick : first];
		const char *name = cc->scan->fields[WG_WHEEL_NAME];
		const char *version = cc->scan->fields[WG_WHEEL_VERSION];
		wg_vars v = {0};
		wg_vars_set(&v, "wheel", wg_check_printf(cc, "%s %s", name ? name : cc->scan->path,
							 version ? version : ""));
		wg_vars_set(&v, "dist", wg_check_printf(cc, "%s %s", x->dist, x->dist_version));
		wg_vars_set(&v, "dist_name", x->dist);
		wg_vars_set(&v, "object", x->object);
		wg_vars_set(&v, "problem", problem(cc, x));
		wg_vars_set(&v, "evidence", x->evidence);
		wg_vars_set(&v, "more", count > 1 ? wg_check_printf(cc, " (and %zu more)", count - 1)
						  : "");
		int rc = wg_emit(cc, &v, NULL, x->symbol, NULL, 0);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

static const char *const vars[] = {"wheel", "dist", "dist_name", "object", "problem", "evidence", "more",
				   NULL};
const wg_check_kind wg_check_ld_breaks_installed = {"ld-breaks-installed", run, NULL, vars,
						    WG_FACT_ENV | WG_FACT_INSTALL};

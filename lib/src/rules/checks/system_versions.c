/*
 * system-versions: an object needs a version of the C or C++ runtime (GLIBC_2.38 from
 * libc.so.6, GLIBCXX_3.4.32 from libstdc++.so.6, CXXABI_*, GCC_*) that the target system does
 * not provide: the loader refuses it ("version `GLIBC_2.38' not found"). The target system is
 * the one declared (--target glibc=2.39 or platform=manylinux_2_28_x86_64) or else the one
 * wheelgate runs on, read from its own libc, libstdc++ and libgcc_s.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

static int run(wg_check_ctx *cc)
{
	const wg_target *t = cc->target;
	const wg_object *o;
	wg_for_each_object_at(cc, o, i) {
		const wg_sysneed *need;
		size_t n = wg_analysis_sysneeds(cc->an, i, &need);
		for (size_t k = 0; k < n; k++) {
			bool declared = false;
			const wg_sysver *have = wg_target_sysver(t, need[k].v.family, &declared);
			if (!have || wg_ver_cmp(need[k].v.v, need[k].v.n, have->v, have->n) <= 0)
				continue;
			char hv[64], system[160], beyond[256], symbol[512], count[32];
			wg_sysver_format(hv, sizeof(hv), have);
			if (t && t->platform[0])
				snprintf(system, sizeof(system), "the target platform %s", t->platform);
			else if (declared)
				snprintf(system, sizeof(system), "the declared target system");
			else
				snprintf(system, sizeof(system), "this system");
			wg_object_needs_beyond(o, have, beyond, sizeof(beyond));
			size_t nsym = 0;
			const char *sym = wg_object_symbol_at(o, need[k].version, &nsym);
			char *dem = sym && sym[0] == '_' && sym[1] == 'Z' ? wg_demangle(sym) : NULL;
			snprintf(symbol, sizeof(symbol), "%s%s%s%s", sym ? sym : "(no symbol)",
				 dem ? " (" : "", dem ? dem : "", dem ? ")" : "");
			snprintf(count, sizeof(count), "%zu", nsym);
			wg_vars v = {0};
			wg_vars_set(&v, "object", o->path);
			wg_vars_set(&v, "library", need[k].library);
			wg_vars_set(&v, "version", need[k].version);
			wg_vars_set(&v, "family", need[k].v.family);
			wg_vars_set(&v, "provided", hv);
			wg_vars_set(&v, "system", system);
			wg_vars_set(&v, "symbol", symbol);
			wg_vars_set(&v, "symbols", count);
			wg_vars_set(&v, "beyond", beyond);
			const char *scope;
			wg_severity sev = wg_load_severity(cc, o->path, &scope);
			wg_vars_set(&v, "scope", scope);
			int rc = wg_emit_sev(cc, sev, &v, o->path, sym, NULL, 0);
			free(dem);
			if (rc < 0)
				return rc;
		}
	}
	return WG_OK;
}

static const char *const vars[] = {"object", "library", "version", "family", "provided", "system",
				   "symbol", "symbols", "beyond", "scope", NULL};
const wg_check_kind wg_check_system_versions = {"system-versions", run, NULL, vars, 0};

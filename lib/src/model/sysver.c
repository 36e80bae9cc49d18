/*
 * The target system's C and C++ runtime: symbol version families (GLIBC_2.38, GLIBCXX_3.4.32,
 * CXXABI_1.3.15, GCC_7.0.0), what the running system provides (its own libc, libstdc++ and
 * libgcc_s, read as the loader would find them) and the highest versions an object needs;
 * what a platform tag promises is policy.c's.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/data.h"
#include "model/model.h"

/* ---- the running system ---- */

static struct {
	wg_sysver v[8];
	size_t n;
	char where[8][512];
} running;
static pthread_once_t running_once = PTHREAD_ONCE_INIT;

static void note_max(const char *lib_path, const wg_object *o)
{
	for (size_t i = 0; i < o->verdefs.n; i++) {
		char fam[16];
		unsigned v[4];
		int nv;
		if (!wg_ver_parse(o->verdefs.v[i], fam, sizeof(fam), v, &nv))
			continue;
		if (strcmp(fam, "GLIBC") && strcmp(fam, "GLIBCXX") && strcmp(fam, "CXXABI") &&
		    strcmp(fam, "GCC"))
			continue;
		size_t k = 0;
		while (k < running.n && strcmp(running.v[k].family, fam))
			k++;
		if (k == running.n) {
			if (running.n == 8)
				continue;
			running.n++;
			snprintf(running.v[k].family, sizeof(running.v[k].family), "%s", fam);
			running.v[k].n = 0;
		}
		if (!running.v[k].n || wg_ver_cmp(v, nv, running.v[k].v, running.v[k].n) > 0) {
			memcpy(running.v[k].v, v, sizeof(v));
			running.v[k].n = nv;
			snprintf(running.where[k], sizeof(running.where[k]), "%s", lib_path);
		}
	}
}

static void probe_running(void)
{
	static const char *const dirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					   "/lib64", "/usr/lib64", "/lib/aarch64-linux-gnu",
					   "/usr/lib/aarch64-linux-gnu", "/lib", "/usr/lib"};
	static const char *const libs[] = {"libc.so.6", "libstdc++.so.6", "libgcc_s.so.1"};
	for (size_t l = 0; l < WG_ARRAY_LEN(libs); l++) {
		for (size_t d = 0; d < WG_ARRAY_LEN(dirs); d++) {
			char path[512];
			snprintf(path, sizeof(path), "%s/%s", dirs[d], libs[l]);
			int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			struct stat st;
			if (fd < 0)
				continue;
			if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
				close(fd);
				continue;
			}
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			close(fd);
			if (m == MAP_FAILED)
				continue;
			wg_arena a = {0};
			wg_object o;
			wg_err err = {0};
			memset(&o, 0, sizeof(o));
			o.path = path;
			if (wg_elf_read(&o, &a, m, (size_t)st.st_size, 4000000, &err) == WG_OK)
				note_max(path, &o);
			wg_strlist_free(&o.needed);
			wg_strlist_free(&o.verdefs);
			wg_vec_free(&o.verneeds);
			wg_arena_free(&a);
			munmap(m, (size_t)st.st_size);
			break;
		}
	}
}

/* What the target system provides for a family: declared, or the running system's. */
const wg_sysver *wg_target_sysver(const wg_target *t, const char *family, bool *declared)
{
	for (size_t i = 0; t && i < t->nsysvers; i++)
		if (!strcmp(t->sysvers[i].family, family)) {
			*declared = true;
			return &t->sysvers[i];
		}
	*declared = false;
	if (t && t->musl && !strcmp(family, "GLIBC")) {
		static const wg_sysver none = {"GLIBC", {0, 0, 0, 0}, 0};
		*declared = true;
		return &none; /* musl: no glibc version at all */
	}
	/* A declared system is another machine: what it did not declare is unknown, not ours. */
	if (t && (t->nsysvers || t->platform[0]))
		return NULL;
	pthread_once(&running_once, probe_running);
	for (size_t i = 0; i < running.n; i++)
		if (!strcmp(running.v[i].family, family))
			return &running.v[i];
	return NULL;
}

void wg_sysver_format(char *buf, size_t n, const wg_sysver *s)
{
	int o = snprintf(buf, n, "%s_", s->family);
	for (int i = 0; i < s->n && o > 0 && (size_t)o < n; i++)
		o += snprintf(buf + o, n - (size_t)o, "%s%u", i ? "." : "", s->v[i]);
	if (!s->n && o > 0 && (size_t)o < n)
		snprintf(buf + o, n - (size_t)o, "none");
}

/* The highest version of each family an object needs, the C and C++ runtime's families first
 * (GLIBC, GLIBCXX, CXXABI, GCC), then others in the order met; system_only: only those
 * families, from the libraries that carry them, strong needs only. */
static size_t highest(const wg_object *o, wg_highest *out, size_t max, bool system_only)
{
	size_t nb = 0;
	for (size_t i = 0; o && i < o->verneeds.len; i++) {
		const wg_verneed *x = wg_vec_at(&o->verneeds, i);
		char fam[16];
		unsigned v[4];
		int nv;
		if (!wg_ver_parse(x->version, fam, sizeof(fam), v, &nv) ||
		    (system_only && (x->weak || !wg_sysver_family(x->file, x->version, fam, sizeof(fam)))))
			continue;
		size_t k = 0;
		while (k < nb && strcmp(out[k].v.family, fam))
			k++;
		if (k == nb) {
			if (nb == max)
				continue;
			nb++;
			memset(&out[k], 0, sizeof(out[k]));
			snprintf(out[k].v.family, sizeof(out[k].v.family), "%s", fam);
		}
		if (!out[k].v.n || wg_ver_cmp(v, nv, out[k].v.v, out[k].v.n) > 0) {
			memcpy(out[k].v.v, v, sizeof(v));
			out[k].v.n = nv;
			out[k].version = x->version;
			out[k].library = x->file;
		}
	}
	static const char *const order[] = {"GLIBC", "GLIBCXX", "CXXABI", "GCC"};
	size_t placed = 0;
	for (size_t j = 0; j < WG_ARRAY_LEN(order); j++)
		for (size_t k = placed; k < nb; k++)
			if (!strcmp(out[k].v.family, order[j])) {
				wg_highest t = out[k];
				memmove(&out[placed + 1], &out[placed], (k - placed) * sizeof(*out));
				out[placed++] = t;
				break;
			}
	return nb;
}

size_t wg_object_highest(const wg_object *o, wg_highest *out, size_t max)
{
	return highest(o, out, max, false);
}

/* "GLIBC_2.38 GLIBCXX_3.4.21 CXXABI_1.3.9 GCC_3.0": the highest of each family. */
WG_API size_t wg_object_highest_versions(const wg_object *o, char *buf, size_t len)
{
	wg_highest best[16];
	size_t nb = wg_object_highest(o, best, WG_ARRAY_LEN(best)), used = 0;
	if (buf && len)
		buf[0] = '\0';
	for (size_t k = 0; buf && k < nb; k++)
		if (used + strlen(best[k].version) + 2 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "",
						 best[k].version);
	return nb;
}

WG_API size_t wg_object_version_count(const wg_object *o)
{
	return o ? o->verneeds.len : 0;
}

WG_API int wg_object_version(const wg_object *o, size_t i, const char **library,
			     const char **version)
{
	const wg_verneed *x = o ? wg_vec_at(&o->verneeds, i) : NULL;
	if (!x)
		return WG_ENOTFOUND;
	*library = x->file;
	*version = x->version;
	return WG_OK;
}

/* The highest version of each system family (GLIBC, GLIBCXX, CXXABI, GCC) an object needs,
 * with the library it needs it from; weak needs are left out (the loader only warns). */
size_t wg_object_sysneeds(const wg_object *o, wg_sysneed out[WG_SYS_FAMILIES])
{
	return highest(o, out, WG_SYS_FAMILIES, true);
}

/* An undefined symbol an object imports at exactly this version, to name in a finding. */
const char *wg_object_symbol_at(const wg_object *o, const char *version, size_t *count)
{
	const char *first = NULL;
	*count = 0;
	for (size_t i = 0; i < o->nsyms; i++) {
		const wg_sym *s = &o->syms[i];
		if (s->defined || !s->symver || strcmp(s->symver, version))
			continue;
		if (!first)
			first = s->name;
		(*count)++;
	}
	return first;
}

/* Versions of a family needed beyond what `have` provides, e.g. "GLIBC_2.38, GLIBC_2.37". */
size_t wg_object_needs_beyond(const wg_object *o, const wg_sysver *have, char *buf, size_t len)
{
	size_t n = 0, used = 0;
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < o->verneeds.len; i++) {
		const wg_verneed *x = wg_vec_at(&o->verneeds, i);
		char fam[16];
		unsigned v[4];
		int nv;
		if (x->weak || !wg_ver_parse(x->version, fam, sizeof(fam), v, &nv) ||
		    strcmp(fam, have->family) || !wg_sysver_family(x->file, x->version, fam, sizeof(fam)) ||
		    wg_ver_cmp(v, nv, have->v, have->n) <= 0)
			continue;
		n++;
		if (used + strlen(x->version) + 3 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 x->version);
	}
	return n;
}

/* The target system's runtime versions as rules see them, "GLIBC_2.36 GLIBCXX_3.4.30 ...",
 * and where they come from. */
WG_API size_t wg_target_system(const wg_target *t, char *buf, size_t len, const char **source)
{
	static const char *const fams[] = {"GLIBC", "GLIBCXX", "CXXABI", "GCC"};
	size_t n = 0, used = 0;
	bool any_declared = false;
	if (buf && len)
		buf[0] = '\0';
	for (size_t i = 0; i < WG_ARRAY_LEN(fams); i++) {
		bool declared = false;
		const wg_sysver *v = wg_target_sysver(t, fams[i], &declared);
		if (!v)
			continue;
		any_declared = any_declared || declared;
		char one[64];
		wg_sysver_format(one, sizeof(one), v);
		if (buf && used + strlen(one) + 2 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "", one);
		n++;
	}
	if (source)
		*source = t && t->platform[0] ? t->platform : any_declared ? "declared" : "this system";
	return n;
}

/* Orders "GLIBC_2.4" < "GLIBC_2.38" (numerically, within a family); other strings by strcmp. */
WG_API int wg_version_compare(const char *a, const char *b)
{
	char fa[16], fb[16];
	unsigned va[4], vb[4];
	int na, nb;
	if (!wg_ver_parse(a, fa, sizeof(fa), va, &na) || !wg_ver_parse(b, fb, sizeof(fb), vb, &nb) ||
	    strcmp(fa, fb))
		return strcmp(a, b);
	return wg_ver_cmp(va, na, vb, nb);
}

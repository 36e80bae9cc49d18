/*
 * The target system's C and C++ runtime: symbol version families (GLIBC_2.38, GLIBCXX_3.4.32,
 * CXXABI_1.3.15, GCC_7.0.0), what the running system provides (its own libc, libstdc++ and
 * libgcc_s, read as the loader would find them), what a declared target or a platform tag
 * promises (rules/platform/manylinux.yaml), and the highest versions an object needs.
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

bool wg_ver_parse(const char *v, char *family, size_t n, unsigned num[4], int *nn)
{
	const char *us = strrchr(v, '_');
	if (!us || us == v || !us[1] || us[1] < '0' || us[1] > '9')
		return false;
	snprintf(family, n, "%.*s", (int)(us - v), v);
	*nn = 0;
	for (const char *p = us + 1; *p && *nn < 4;) {
		char *end;
		unsigned long x = strtoul(p, &end, 10);
		if (end == p)
			return false;
		num[(*nn)++] = (unsigned)x;
		if (*end == '.')
			p = end + 1;
		else if (!*end)
			break;
		else
			return false;
	}
	return *nn > 0;
}

int wg_ver_cmp(const unsigned *a, int na, const unsigned *b, int nb)
{
	for (int i = 0; i < 4; i++) {
		unsigned x = i < na ? a[i] : 0, y = i < nb ? b[i] : 0;
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* ---- the platform data ---- */

typedef struct {
	char name[64], aliases[2][64];
	wg_sysver limits[4];
	int nlimits;
} policy;

static struct {
	policy policies[32];
	size_t npolicies;
	struct {
		char family[16];
		char libs[12][32];
		int nlibs;
	} families[8];
	size_t nfamilies;
	bool ok;
} plat;

static pthread_once_t plat_once = PTHREAD_ONCE_INIT;

static void set_limit(wg_sysver *l, const char *family, const char *value)
{
	char fam[16];
	char full[64];
	snprintf(full, sizeof(full), "%s_%s", family, value);
	if (!wg_ver_parse(full, fam, sizeof(fam), l->v, &l->n))
		l->n = 0;
	snprintf(l->family, sizeof(l->family), "%s", family);
}

static void load_platforms(void)
{
	const wg_data_file *f = NULL;
	for (const wg_data_file *d = wg_data_files; d->path; d++)
		if (!strcmp(d->path, "platform/manylinux.yaml"))
			f = d;
	wg_yaml_doc *doc = NULL;
	if (!f || wg_yaml_parse(&doc, "rules/platform/manylinux.yaml", f->text, f->len, NULL) < 0)
		return;
	const wg_yaml_node *root = wg_yaml_root(doc);
	const wg_yaml_node *pols = wg_yaml_get(root, "policies");
	static const char *const fams[] = {"GLIBC", "GLIBCXX", "CXXABI", "GCC"};
	for (size_t i = 0; i < wg_yaml_len(pols) && plat.npolicies < 32; i++) {
		const wg_yaml_node *p = wg_yaml_item(pols, i);
		policy *x = &plat.policies[plat.npolicies];
		memset(x, 0, sizeof(*x));
		const char *name = wg_yaml_scalar(wg_yaml_get(p, "name"));
		if (!name)
			continue;
		snprintf(x->name, sizeof(x->name), "%s", name);
		const wg_yaml_node *al = wg_yaml_get(p, "aliases");
		for (size_t k = 0; k < wg_yaml_len(al) && k < 2; k++)
			snprintf(x->aliases[k], sizeof(x->aliases[k]), "%s",
				 wg_yaml_scalar(wg_yaml_item(al, k)) ? wg_yaml_scalar(wg_yaml_item(al, k)) : "");
		for (size_t k = 0; k < 4; k++) {
			const char *v = wg_yaml_scalar(wg_yaml_get(p, fams[k]));
			if (v)
				set_limit(&x->limits[x->nlimits++], fams[k], v);
		}
		plat.npolicies++;
	}
	const wg_yaml_node *fm = wg_yaml_get(root, "families");
	for (size_t i = 0; i < wg_yaml_len(fm) && plat.nfamilies < 8; i++) {
		const wg_yaml_node *libs = wg_yaml_value(fm, i);
		snprintf(plat.families[plat.nfamilies].family, 16, "%s", wg_yaml_key(fm, i));
		for (size_t k = 0; k < wg_yaml_len(libs) && k < 12; k++)
			snprintf(plat.families[plat.nfamilies].libs[k], 32, "%s",
				 wg_yaml_scalar(wg_yaml_item(libs, k)) ? wg_yaml_scalar(wg_yaml_item(libs, k)) : "");
		plat.families[plat.nfamilies].nlibs = (int)(wg_yaml_len(libs) < 12 ? wg_yaml_len(libs) : 12);
		plat.nfamilies++;
	}
	plat.ok = true;
	wg_yaml_free(doc);
}

/* Whether (library, version) is a system runtime version: GLIBC_* from libc & co., ... */
bool wg_sysver_family(const char *lib, const char *version, char *family, size_t n)
{
	pthread_once(&plat_once, load_platforms);
	unsigned v[4];
	int nv;
	char fam[16];
	if (!wg_ver_parse(version, fam, sizeof(fam), v, &nv))
		return false;
	for (size_t i = 0; i < plat.nfamilies; i++) {
		if (strcmp(plat.families[i].family, fam))
			continue;
		for (int k = 0; k < plat.families[i].nlibs; k++)
			if (!strcmp(plat.families[i].libs[k], lib)) {
				snprintf(family, n, "%s", fam);
				return true;
			}
	}
	return false;
}

/* The policy of a platform tag: "manylinux_2_28_x86_64", "manylinux2014_x86_64". Unknown
 * manylinux_X_Y tags get a policy of glibc X.Y alone (written into *tmp). */
const void *wg_platform_policy(const char *tag, void *tmp)
{
	pthread_once(&plat_once, load_platforms);
	char base[64];
	snprintf(base, sizeof(base), "%s", tag);
	static const char *const arches[] = {"_x86_64", "_aarch64", "_i686", "_ppc64le", "_s390x",
					     "_armv7l", "_ppc64", "_riscv64"};
	for (size_t i = 0; i < WG_ARRAY_LEN(arches); i++)
		if (wg_has_suffix(base, arches[i]))
			base[strlen(base) - strlen(arches[i])] = '\0';
	for (size_t i = 0; i < plat.npolicies; i++) {
		const policy *p = &plat.policies[i];
		if (!strcmp(p->name, base) || !strcmp(p->aliases[0], base) || !strcmp(p->aliases[1], base))
			return p;
	}
	unsigned x, y;
	char tail;
	if (sscanf(base, "manylinux_%u_%u%c", &x, &y, &tail) == 2) {
		policy *p = tmp;
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", base);
		char v[32];
		snprintf(v, sizeof(v), "%u.%u", x, y);
		set_limit(&p->limits[p->nlimits++], "GLIBC", v);
		return p;
	}
	return NULL;
}

size_t wg_policy_size(void)
{
	return sizeof(policy);
}

const char *wg_policy_name(const void *p)
{
	return ((const policy *)p)->name;
}

const wg_sysver *wg_policy_limit(const void *p, const char *family)
{
	const policy *x = p;
	for (int i = 0; i < x->nlimits; i++)
		if (!strcmp(x->limits[i].family, family))
			return &x->limits[i];
	return NULL;
}

size_t wg_policy_count(void)
{
	pthread_once(&plat_once, load_platforms);
	return plat.npolicies;
}

const void *wg_policy_at(size_t i)
{
	return i < plat.npolicies ? &plat.policies[i] : NULL;
}

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

/*
 * The platform policies of manylinux and musllinux wheels, as auditwheel's policy files say
 * (rules/platform/manylinux.yaml, generated from them): per policy and architecture the symbol
 * versions an object may need and the libraries it may need from outside the wheel; the C and
 * C++ runtime's version families; and what may lie outside a wheel whatever its policy
 * (rules/platform/provided.yaml: the loader, the NVIDIA driver, the libraries of distributions
 * the wheel requires). Read once, shared by every thread.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/data.h"
#include "model/model.h"

#define MAX_POLICIES 48
#define MAX_ARCHES 16
#define MAX_FAMS 8
#define MAX_WL 128
#define MAX_VERS 4096
#define MAX_DISTS 96
#define MAX_PROVIDED 512

typedef struct {
	char name[32], aliases[2][32];
	bool musl;
	unsigned arches; /* bit a: the policy exists for architecture a */
} policy;

typedef struct {
	unsigned short arch, fam, pol; /* pol: the policy that first allows it */
	char v[24];
} pver;

static struct {
	bool ok;
	char source[48];
	policy pol[MAX_POLICIES];
	size_t npol;
	char arch[MAX_ARCHES][16];
	size_t narch;
	char musl_libc[MAX_ARCHES][40];
	struct {
		char lib[40];
		unsigned short pol;
	} wl[MAX_WL];
	size_t nwl;
	struct {
		char name[16];
		unsigned arches; /* the architectures whose policies judge this family */
	} fam[MAX_FAMS];
	size_t nfam;
	pver *ver; /* sorted by (arch, fam, v) */
	size_t nver;
	/* families: which libraries carry the C and C++ runtime's version families */
	struct {
		char family[16];
		char libs[12][32];
		int nlibs;
	} families[8];
	size_t nfamilies;
	/* provided.yaml */
	char loader[8][32];
	size_t nloader;
	struct {
		char lib[40], why[160];
	} driver[8];
	size_t ndriver;
	char dist[MAX_DISTS][48]; /* normalised names */
	size_t ndist;
	struct {
		char lib[48];
		unsigned short dist;
	} prov[MAX_PROVIDED];
	size_t nprov;
} plat;

static pthread_once_t plat_once = PTHREAD_ONCE_INIT;

static const wg_data_file *data_file(const char *path)
{
	for (const wg_data_file *d = wg_data_files; d->path; d++)
		if (!strcmp(d->path, path))
			return d;
	return NULL;
}

static int arch_index(const char *a, bool add)
{
	for (size_t i = 0; i < plat.narch; i++)
		if (!strcmp(plat.arch[i], a))
			return (int)i;
	if (!add || plat.narch == MAX_ARCHES || strlen(a) >= sizeof(plat.arch[0]))
		return -1;
	snprintf(plat.arch[plat.narch], sizeof(plat.arch[0]), "%s", a);
	return (int)plat.narch++;
}

static int fam_index(const char *f, size_t len, bool add)
{
	for (size_t i = 0; i < plat.nfam; i++)
		if (strlen(plat.fam[i].name) == len && !strncmp(plat.fam[i].name, f, len))
			return (int)i;
	if (!add || plat.nfam == MAX_FAMS || len >= sizeof(plat.fam[0].name))
		return -1;
	snprintf(plat.fam[plat.nfam].name, sizeof(plat.fam[0].name), "%.*s", (int)len, f);
	plat.fam[plat.nfam].arches = 0;
	return (int)plat.nfam++;
}

static int policy_index(const char *name)
{
	for (size_t i = 0; name && i < plat.npol; i++)
		if (!strcmp(plat.pol[i].name, name))
			return (int)i;
	return -1;
}

static int ver_cmp(const void *a, const void *b)
{
	const pver *x = a, *y = b;
	if (x->arch != y->arch)
		return x->arch < y->arch ? -1 : 1;
	if (x->fam != y->fam)
		return x->fam < y->fam ? -1 : 1;
	return strcmp(x->v, y->v);
}

/* Copies a scalar into a fixed field; false when there is none or it does not fit. */
static bool copy(char *dst, size_t n, const char *s)
{
	if (!s || strlen(s) >= n)
		return false;
	memcpy(dst, s, strlen(s) + 1);
	return true;
}

static bool load_policies(const wg_yaml_node *root)
{
	const char *ver = wg_yaml_scalar(wg_yaml_get(root, "version"));
	const char *kind = wg_yaml_scalar(wg_yaml_get(root, "kind"));
	if (!kind || strcmp(kind, "platforms") || !ver || strcmp(ver, "2"))
		return false;
	copy(plat.source, sizeof(plat.source),
	     wg_yaml_scalar(wg_yaml_get(wg_yaml_get(root, "source"), "commit")));
	const wg_yaml_node *pols = wg_yaml_get(root, "policies");
	for (size_t i = 0; i < wg_yaml_len(pols); i++) {
		const wg_yaml_node *p = wg_yaml_item(pols, i);
		if (plat.npol == MAX_POLICIES)
			return false;
		policy *x = &plat.pol[plat.npol];
		memset(x, 0, sizeof(*x));
		const char *libc = wg_yaml_scalar(wg_yaml_get(p, "libc"));
		if (!copy(x->name, sizeof(x->name), wg_yaml_scalar(wg_yaml_get(p, "name"))) || !libc)
			return false;
		x->musl = !strcmp(libc, "musl");
		const wg_yaml_node *al = wg_yaml_get(p, "aliases");
		for (size_t k = 0; k < wg_yaml_len(al); k++)
			if (k >= 2 || !copy(x->aliases[k], sizeof(x->aliases[k]),
					    wg_yaml_scalar(wg_yaml_item(al, k))))
				return false;
		const wg_yaml_node *ar = wg_yaml_get(p, "arches");
		for (size_t k = 0; k < wg_yaml_len(ar); k++) {
			const char *a = wg_yaml_scalar(wg_yaml_item(ar, k));
			int ai = a ? arch_index(a, true) : -1;
			if (ai < 0)
				return false;
			x->arches |= 1u << ai;
		}
		const wg_yaml_node *wl = wg_yaml_get(p, "lib_whitelist");
		for (size_t k = 0; k < wg_yaml_len(wl); k++) {
			if (plat.nwl == MAX_WL ||
			    !copy(plat.wl[plat.nwl].lib, sizeof(plat.wl[0].lib),
				  wg_yaml_scalar(wg_yaml_item(wl, k))))
				return false;
			plat.wl[plat.nwl++].pol = (unsigned short)plat.npol;
		}
		plat.npol++;
	}
	const wg_yaml_node *ml = wg_yaml_get(root, "musl_libc");
	for (size_t i = 0; i < wg_yaml_len(ml); i++) {
		int ai = arch_index(wg_yaml_key(ml, i), true);
		if (ai < 0 || !copy(plat.musl_libc[ai], sizeof(plat.musl_libc[0]),
				    wg_yaml_scalar(wg_yaml_value(ml, i))))
			return false;
	}
	const wg_yaml_node *sv = wg_yaml_get(root, "symbol_versions");
	plat.ver = calloc(MAX_VERS, sizeof(*plat.ver));
	if (!plat.ver)
		return false;
	for (size_t i = 0; i < wg_yaml_len(sv); i++) {
		int ai = arch_index(wg_yaml_key(sv, i), true);
		const wg_yaml_node *fams = wg_yaml_value(sv, i);
		if (ai < 0 || !wg_yaml_is_map(fams))
			return false;
		for (size_t f = 0; f < wg_yaml_len(fams); f++) {
			const char *fname = wg_yaml_key(fams, f);
			int fi = fname ? fam_index(fname, strlen(fname), true) : -1;
			const wg_yaml_node *adds = wg_yaml_value(fams, f);
			if (fi < 0)
				return false;
			plat.fam[fi].arches |= 1u << ai;
			for (size_t k = 0; k < wg_yaml_len(adds); k++) {
				int pi = policy_index(wg_yaml_key(adds, k));
				const wg_yaml_node *vs = wg_yaml_value(adds, k);
				if (pi < 0 || !(plat.pol[pi].arches & (1u << ai)))
					return false;
				for (size_t j = 0; j < wg_yaml_len(vs); j++) {
					pver *v = &plat.ver[plat.nver];
					if (plat.nver == MAX_VERS ||
					    !copy(v->v, sizeof(v->v), wg_yaml_scalar(wg_yaml_item(vs, j))))
						return false;
					v->arch = (unsigned short)ai;
					v->fam = (unsigned short)fi;
					v->pol = (unsigned short)pi;
					plat.nver++;
				}
			}
		}
	}
	qsort(plat.ver, plat.nver, sizeof(*plat.ver), ver_cmp);
	const wg_yaml_node *fm = wg_yaml_get(root, "families");
	for (size_t i = 0; i < wg_yaml_len(fm) && plat.nfamilies < 8; i++) {
		const wg_yaml_node *libs = wg_yaml_value(fm, i);
		if (!copy(plat.families[plat.nfamilies].family, 16, wg_yaml_key(fm, i)))
			return false;
		for (size_t k = 0; k < wg_yaml_len(libs); k++)
			if (k >= 12 || !copy(plat.families[plat.nfamilies].libs[k], 32,
					     wg_yaml_scalar(wg_yaml_item(libs, k))))
				return false;
		plat.families[plat.nfamilies].nlibs = (int)wg_yaml_len(libs);
		plat.nfamilies++;
	}
	return plat.npol > 0 && plat.nver > 0;
}

static bool load_provided(const wg_yaml_node *root)
{
	const char *kind = wg_yaml_scalar(wg_yaml_get(root, "kind"));
	if (!kind || strcmp(kind, "provided"))
		return false;
	const wg_yaml_node *ld = wg_yaml_get(root, "loader");
	for (size_t i = 0; i < wg_yaml_len(ld); i++)
		if (plat.nloader == 8 || !copy(plat.loader[plat.nloader++], sizeof(plat.loader[0]),
					       wg_yaml_scalar(wg_yaml_item(ld, i))))
			return false;
	const wg_yaml_node *dr = wg_yaml_get(root, "driver");
	for (size_t i = 0; i < wg_yaml_len(dr); i++) {
		if (plat.ndriver == 8 ||
		    !copy(plat.driver[plat.ndriver].lib, sizeof(plat.driver[0].lib), wg_yaml_key(dr, i)) ||
		    !copy(plat.driver[plat.ndriver].why, sizeof(plat.driver[0].why),
			  wg_yaml_scalar(wg_yaml_value(dr, i))))
			return false;
		plat.ndriver++;
	}
	const wg_yaml_node *ds = wg_yaml_get(root, "distributions");
	for (size_t i = 0; i < wg_yaml_len(ds); i++) {
		const char *name = wg_yaml_key(ds, i);
		const wg_yaml_node *libs = wg_yaml_value(ds, i);
		if (plat.ndist == MAX_DISTS || !name ||
		    wg_name_normalize(plat.dist[plat.ndist], sizeof(plat.dist[0]), name, strlen(name)) < 0)
			return false;
		for (size_t k = 0; k < wg_yaml_len(libs); k++) {
			if (plat.nprov == MAX_PROVIDED ||
			    !copy(plat.prov[plat.nprov].lib, sizeof(plat.prov[0].lib),
				  wg_yaml_scalar(wg_yaml_item(libs, k))))
				return false;
			plat.prov[plat.nprov++].dist = (unsigned short)plat.ndist;
		}
		plat.ndist++;
	}
	return plat.nloader && plat.ndriver && plat.ndist;
}

static bool load_file(const char *path, bool (*fn)(const wg_yaml_node *))
{
	const wg_data_file *f = data_file(path);
	char name[64];
	snprintf(name, sizeof(name), "rules/%s", path);
	wg_yaml_doc *doc = NULL;
	if (!f || wg_yaml_parse(&doc, name, f->text, f->len, NULL) < 0)
		return false;
	bool ok = fn(wg_yaml_root(doc));
	wg_yaml_free(doc);
	return ok;
}

static void load_platforms(void)
{
	if (load_file("platform/manylinux.yaml", load_policies) &&
	    load_file("platform/provided.yaml", load_provided)) {
		plat.ok = true;
		return;
	}
	/* Broken data (a build's own rules/ are checked by the tests): no policy is known. */
	free(plat.ver);
	memset(&plat, 0, sizeof(plat));
}

/* ---- the C and C++ runtime's families ---- */

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

/* ---- policies ---- */

const char *wg_policy_source(void)
{
	pthread_once(&plat_once, load_platforms);
	return plat.source;
}

size_t wg_policy_count(void)
{
	pthread_once(&plat_once, load_platforms);
	return plat.npol;
}

/* The highest numeric version of family the policy allows on its architecture. */
static void fill_limits(wg_policy *p)
{
	static const char *const fams[] = {"GLIBC", "GLIBCXX", "CXXABI", "GCC"};
	p->nlimits = 0;
	for (size_t f = 0; f < WG_ARRAY_LEN(fams); f++) {
		int fi = fam_index(fams[f], strlen(fams[f]), false);
		wg_sysver best = {"", {0, 0, 0, 0}, 0};
		for (size_t i = 0; fi >= 0 && i < plat.nver; i++) {
			const pver *v = &plat.ver[i];
			char full[64], fam[16];
			unsigned num[4];
			int nn;
			if (v->arch != p->arch || v->fam != fi || v->pol > p->index)
				continue;
			snprintf(full, sizeof(full), "%s_%s", fams[f], v->v);
			if (!wg_ver_parse(full, fam, sizeof(fam), num, &nn) ||
			    (best.n && wg_ver_cmp(num, nn, best.v, best.n) <= 0))
				continue;
			memcpy(best.v, num, sizeof(num));
			best.n = nn;
		}
		if (!best.n)
			continue;
		snprintf(best.family, sizeof(best.family), "%s", fams[f]);
		p->limits[p->nlimits++] = best;
	}
}

static void fill(wg_policy *out, size_t i, int arch)
{
	memset(out, 0, sizeof(*out));
	out->index = (int)i;
	out->arch = arch;
	out->musl = plat.pol[i].musl;
	snprintf(out->name, sizeof(out->name), "%s", plat.pol[i].name);
	snprintf(out->arch_name, sizeof(out->arch_name), "%s", plat.arch[arch]);
	if (!out->musl)
		fill_limits(out);
}

bool wg_policy_at(wg_policy *out, size_t i, const char *arch)
{
	pthread_once(&plat_once, load_platforms);
	int a = arch_index(arch, false);
	if (i >= plat.npol || a < 0 || !(plat.pol[i].arches & (1u << a)))
		return false;
	fill(out, i, a);
	return true;
}

bool wg_policy_for_tag(wg_policy *out, const char *tag)
{
	pthread_once(&plat_once, load_platforms);
	/* "<policy>_<arch>", the architecture possibly with '_' (x86_64) */
	for (size_t a = 0; a < plat.narch; a++) {
		size_t tl = strlen(tag), al = strlen(plat.arch[a]);
		if (tl <= al + 1 || tag[tl - al - 1] != '_' || strcmp(tag + tl - al, plat.arch[a]))
			continue;
		char base[64];
		snprintf(base, sizeof(base), "%.*s", (int)(tl - al - 1), tag);
		for (size_t i = 0; i < plat.npol; i++) {
			const policy *p = &plat.pol[i];
			if (strcmp(p->name, base) && strcmp(p->aliases[0], base) &&
			    strcmp(p->aliases[1], base))
				continue;
			if (!(p->arches & (1u << a)))
				return false; /* manylinux1_aarch64: a policy that does not exist */
			fill(out, i, (int)a);
			return true;
		}
		/* A PEP 600 tag the data does not know: glibc X.Y, nothing else. */
		unsigned x, y;
		char tail;
		if (sscanf(base, "manylinux_%u_%u%c", &x, &y, &tail) == 2) {
			memset(out, 0, sizeof(*out));
			out->index = -1;
			out->arch = (int)a;
			snprintf(out->name, sizeof(out->name), "manylinux_%u_%u", x, y);
			snprintf(out->arch_name, sizeof(out->arch_name), "%s", plat.arch[a]);
			wg_sysver *l = &out->limits[out->nlimits++];
			snprintf(l->family, sizeof(l->family), "GLIBC");
			l->v[0] = x;
			l->v[1] = y;
			l->n = 2;
			return true;
		}
		return false;
	}
	return false;
}

const wg_sysver *wg_policy_limit(const wg_policy *p, const char *family)
{
	for (int i = 0; i < p->nlimits; i++)
		if (!strcmp(p->limits[i].family, family))
			return &p->limits[i];
	return NULL;
}

/* The index of the first policy (of the architecture's list) allowing version, -1 when none
 * does; -2 when the family is not judged on arch. */
static int first_allowing(int arch, const char *version)
{
	const char *us = strchr(version, '_');
	if (!us)
		return -2;
	int fi = fam_index(version, (size_t)(us - version), false);
	if (fi < 0 || !(plat.fam[fi].arches & (1u << arch)))
		return -2;
	pver key;
	memset(&key, 0, sizeof(key));
	key.arch = (unsigned short)arch;
	key.fam = (unsigned short)fi;
	if (strlen(us + 1) >= sizeof(key.v))
		return -1;
	memcpy(key.v, us + 1, strlen(us + 1) + 1);
	const pver *v = bsearch(&key, plat.ver, plat.nver, sizeof(*plat.ver), ver_cmp);
	return v ? v->pol : -1;
}

int wg_policy_version(const wg_policy *p, const char *version)
{
	pthread_once(&plat_once, load_platforms);
	if (p->index < 0) {
		char fam[16];
		unsigned v[4];
		int nv;
		if (!wg_ver_parse(version, fam, sizeof(fam), v, &nv) || strcmp(fam, "GLIBC"))
			return -1;
		return wg_ver_cmp(v, nv, p->limits[0].v, p->limits[0].n) <= 0;
	}
	/* musl's policies list no symbol versions (gen-platform-policy.py makes sure). */
	if (p->musl)
		return -1;
	int first = first_allowing(p->arch, version);
	if (first == -2)
		return -1;
	/* A glibc policy's list holds the versions of the glibc policies before it. */
	return first >= 0 && plat.pol[first].musl == p->musl && first <= p->index;
}

int wg_policy_library(const wg_policy *p, const char *soname)
{
	pthread_once(&plat_once, load_platforms);
	if (p->index < 0)
		return -1;
	for (size_t i = 0; i < plat.nwl; i++) {
		const char *lib = plat.wl[i].lib;
		if (plat.wl[i].pol > p->index || plat.pol[plat.wl[i].pol].musl != p->musl)
			continue;
		if (p->musl && !strcmp(lib, "libc.so"))
			lib = plat.musl_libc[p->arch];
		if (!strcmp(lib, soname))
			return 1;
	}
	return 0;
}

/* ---- what may lie outside a wheel whatever its policy ---- */

bool wg_provided_loader(const char *soname)
{
	pthread_once(&plat_once, load_platforms);
	for (size_t i = 0; i < plat.nloader; i++)
		if (!fnmatch(plat.loader[i], soname, 0))
			return true;
	return false;
}

const char *wg_provided_driver(const char *soname)
{
	pthread_once(&plat_once, load_platforms);
	for (size_t i = 0; i < plat.ndriver; i++)
		if (!strcmp(plat.driver[i].lib, soname))
			return plat.driver[i].why;
	return NULL;
}

int wg_requires_set(wg_strmap *set, wg_arena *a, const wg_strlist *req)
{
	if (!wg_strmap_init(set, req->n + 1))
		return WG_ENOMEM;
	for (size_t i = 0; i < req->n; i++) {
		const char *r = req->v[i];
		size_t n = strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");
		const char *semi = strchr(r, ';');
		char norm[256];
		/* a requirement of an extra is installed only when the extra is asked for */
		if (!n || (semi && strstr(semi, "extra")) ||
		    wg_name_normalize(norm, sizeof(norm), r, n) < 0)
			continue;
		char *k = wg_arena_strdup(a, norm);
		if (!k || wg_strmap_put(set, k, i) == SIZE_MAX - 1) {
			wg_strmap_free(set);
			return WG_ENOMEM;
		}
	}
	return WG_OK;
}

size_t wg_provided_by(const char *soname, const wg_strmap *req, char *buf, size_t len)
{
	pthread_once(&plat_once, load_platforms);
	size_t found = 0, used = 0;
	if (buf && len)
		buf[0] = '\0';
	for (size_t i = 0; i < plat.nprov; i++) {
		if (strcmp(plat.prov[i].lib, soname))
			continue;
		const char *dist = plat.dist[plat.prov[i].dist];
		if (req && wg_strmap_get(req, dist) == SIZE_MAX)
			continue;
		found++;
		if (buf && used + strlen(dist) + 3 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", dist);
	}
	return found;
}

/*
 * A real Python environment, read without running anything from it: where site-packages is,
 * the interpreter and its exports, torch's version, CUDA and C++ ABI, the CUDA libraries and
 * other native packages, and the directories the loader searches. Libraries are indexed on
 * demand (their exports, needs and versions) and the index is cached on disk (libcache.c);
 * what an opened environment says of itself is env_info.c's.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ENV /* wg_seterr: what fails here */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h"

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static char *path_join(wg_arena *a, const char *d, const char *f)
{
	return wg_arena_printf(a, "%s%s%s", d, wg_has_suffix(d, "/") ? "" : "/", f);
}

/* The only lib/pythonX.Y/site-packages under prefix, or NULL. */
static char *find_site(wg_arena *a, const char *prefix, char *version, size_t vlen)
{
	/* A venv or a prefix; Debian's system Python keeps its packages in dist-packages. */
	static const char *const pats[] = {"/lib/python3.*/site-packages",
					   "/local/lib/python3.*/dist-packages",
					   "/lib/python3/dist-packages"};
	char *found = NULL;
	for (size_t i = 0; i < WG_ARRAY_LEN(pats) && !found; i++) {
		char pat[PATH_MAX];
		glob_t g;
		snprintf(pat, sizeof(pat), "%s%s", prefix, pats[i]);
		if (glob(pat, 0, NULL, &g) == 0) {
			found = wg_arena_strdup(a, g.gl_pathv[0]);
			const char *py = strstr(found, "/lib/python3.");
			if (py && !*version)
				snprintf(version, vlen, "%.*s", (int)strcspn(py + 11, "/"), py + 11);
			globfree(&g);
		}
	}
	return found;
}

/* Python assignments in torch/version.py: __version__ = '2.11.0+cu130', cuda = '13.0'. */
static char *py_string(wg_arena *a, const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = text; (p = strstr(p, name)); p += n) {
		if (p != text && p[-1] != '\n')
			continue;
		const char *q = p + n;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == ':') /* cuda: Optional[str] = '13.0' */
			q = strchr(q, '=');
		if (!q || *q != '=')
			continue;
		q++;
		while (*q == ' ')
			q++;
		if (*q != '\'' && *q != '"')
			return NULL; /* None */
		char quote = *q++;
		const char *e = strchr(q, quote);
		return e ? wg_arena_strndup(a, q, (size_t)(e - q)) : NULL;
	}
	return NULL;
}

/* The first max bytes of a regular file (a FIFO or device in its place is not waited on). */
static char *slurp_small(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (buf = malloc(max + 1))) {
		while (n < max) {
			ssize_t r = read(fd, buf + n, max - n);
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		buf[n] = '\0';
	}
	close(fd);
	return buf;
}

/* /etc/ld.so.conf (with its include globs) and the trusted directories: what ldconfig puts in
 * ld.so.cache, which the loader searches after RPATH/RUNPATH. */
static void read_ld_conf(wg_env *e, const char *file, int depth)
{
	char *text = depth < 4 ? slurp_small(file, 1 << 20) : NULL;
	if (!text)
		return;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		size_t n = strlen(line);
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!n)
			continue;
		if (!strncmp(line, "include", 7) && (line[7] == ' ' || line[7] == '\t')) {
			glob_t g;
			char *pat = line + 8;
			while (*pat == ' ')
				pat++;
			if (glob(pat, 0, NULL, &g) == 0) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					read_ld_conf(e, g.gl_pathv[i], depth + 1);
				globfree(&g);
			}
		} else if (line[0] == '/' && is_dir(line)) {
			wg_strlist_add(&e->system_dirs, &e->arena, line);
		}
	}
	free(text);
}

static void add_dir_once(wg_strlist *l, wg_arena *a, const char *d)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], d))
			return;
	if (is_dir(d))
		wg_strlist_add(l, a, d);
}

static void system_dirs(wg_env *e, const char *override)
{
	if (override) {
		char *copy = wg_arena_strdup(&e->arena, override), *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			add_dir_once(&e->system_dirs, &e->arena, d);
		return;
	}
	read_ld_conf(e, "/etc/ld.so.conf", 0);
	static const char *const trusted[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					      "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
	for (size_t i = 0; i < WG_ARRAY_LEN(trusted); i++)
		add_dir_once(&e->system_dirs, &e->arena, trusted[i]);
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Entries of a directory, sorted; NULL-terminated, malloc'd. */
static char **list_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	size_t n = 0, cap = 16;
	char **v = malloc(cap * sizeof(*v));
	struct dirent *de;
	while (v && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n + 1 >= cap) {
			char **p = realloc(v, (cap *= 2) * sizeof(*v));
			if (!p)
				break;
			v = p;
		}
		v[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (!v)
		return NULL;
	v[n] = NULL;
	qsort(v, n, sizeof(*v), cmp_strp);
	return v;
}

static void free_list(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Whether dir holds a file whose name has ".so" in it, depth directories down at most. The
 * entry types come from readdir: only a link (or a file system that gives no type) is
 * stat'ed, so that a pure-Python package's tree costs no stat per file (issue 14). */
static bool has_so(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		bool so = strstr(de->d_name, ".so") != NULL;
		if (!so && (depth <= 0 || de->d_type == DT_REG))
			continue;
		char path[PATH_MAX];
		int n = snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue; /* longer than a path can be: nothing to open there */
		unsigned char t = de->d_type;
		if (t == DT_LNK || t == DT_UNKNOWN) {
			struct stat st;
			t = stat(path, &st) != 0 ? DT_UNKNOWN
			    : S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_UNKNOWN;
		}
		if (so && t == DT_REG)
			found = true;
		else if (depth > 0 && t == DT_DIR)
			found = has_so(path, depth - 1);
	}
	closedir(d);
	return found;
}

static bool is_cuda_lib(const char *name)
{
	static const char *const cuda[] = {
		"libcuda.", "libcudart.", "libcublas.", "libcublasLt.", "libcufft.", "libcufftw.",
		"libcurand.", "libcusolver.", "libcusolverMg.", "libcusparse.", "libcusparseLt.",
		"libcudnn", "libcupti.", "libcufile", "libnvrtc", "libnvJitLink.", "libnvblas.",
		"libnccl.", "libnvshmem", "libnvToolsExt.", "libnvtx3interop.", "libnvvm.", "libnpp"};
	if (!strstr(name, ".so"))
		return false;
	for (size_t i = 0; i < WG_ARRAY_LEN(cuda); i++)
		if (wg_has_prefix(name, cuda[i]))
			return true;
	return false;
}

static void survey(wg_env *e)
{
	wg_arena *a = &e->arena;
	/* Library directories torch brings: torch/lib, then every nvidia/<pkg>/lib. */
	if (e->torch_dir)
		add_dir_once(&e->lib_dirs, a, path_join(a, e->torch_dir, "lib"));
	char *nv = path_join(a, e->site, "nvidia");
	char **pkgs = list_dir(nv);
	for (size_t i = 0; pkgs && pkgs[i]; i++)
		add_dir_once(&e->lib_dirs, a, wg_arena_printf(a, "%s/%s/lib", nv, pkgs[i]));
	free_list(pkgs);
	for (size_t i = 0; i < e->system_dirs.n; i++)
		add_dir_once(&e->lib_dirs, a, e->system_dirs.v[i]);
	/* CUDA libraries present anywhere on that path. */
	for (size_t i = 0; i < e->lib_dirs.n; i++) {
		char **v = list_dir(e->lib_dirs.v[i]);
		for (size_t j = 0; v && v[j]; j++)
			if (is_cuda_lib(v[j]))
				wg_strlist_add(&e->cuda_libs, a,
					       wg_arena_printf(a, "%s/%s", e->lib_dirs.v[i], v[j]));
		free_list(v);
	}
	/* Other packages that ship native code. */
	char **top = list_dir(e->site);
	for (size_t i = 0; top && top[i]; i++) {
		if (!strcmp(top[i], "torch") || !strcmp(top[i], "nvidia") ||
		    wg_has_suffix(top[i], ".dist-info") || wg_has_suffix(top[i], ".egg-info") ||
		    !strcmp(top[i], "__pycache__"))
			continue;
		char *p = path_join(a, e->site, top[i]);
		if ((is_dir(p) && has_so(p, 3)) || (strstr(top[i], ".so") && is_file(p)))
			wg_strlist_add(&e->native_packages, a, top[i]);
	}
	free_list(top);
}

/* The installed distributions (`*.dist-info` directories) of every site directory of the
 * environment: its site-packages and, under a prefix, each directory find_site's patterns
 * match (Debian's python reads /usr/local/lib/python3.X/dist-packages and
 * /usr/lib/python3/dist-packages: both are its environment). */
static void list_dists(wg_env *e, const char *prefix)
{
	static const char *const pats[] = {"/lib/python3.*/site-packages",
					   "/local/lib/python3.*/dist-packages",
					   "/lib/python3/dist-packages"};
	wg_arena *a = &e->arena;
	wg_strlist sites = {0};
	char real[PATH_MAX];
	if (realpath(e->site, real))
		add_dir_once(&sites, a, real);
	for (size_t i = 0; prefix && i < WG_ARRAY_LEN(pats); i++) {
		char pat[PATH_MAX];
		glob_t g;
		snprintf(pat, sizeof(pat), "%s%s", prefix, pats[i]);
		if (glob(pat, 0, NULL, &g) != 0)
			continue;
		for (size_t j = 0; j < g.gl_pathc; j++)
			if (realpath(g.gl_pathv[j], real) && is_dir(real))
				add_dir_once(&sites, a, real);
		globfree(&g);
	}
	for (size_t i = 0; i < sites.n; i++) {
		char **v = list_dir(sites.v[i]);
		for (size_t j = 0; v && v[j]; j++) {
			char *p = wg_has_suffix(v[j], ".dist-info") ? path_join(a, sites.v[i], v[j]) : NULL;
			if (p && is_dir(p))
				wg_strlist_add(&e->dists, a, p);
		}
		free_list(v);
	}
	e->sites = sites;
}

/* ---- what `import X` finds (wg_env_has_module) ---- */

static void module_add(wg_env *e, const char *name, size_t n)
{
	char *k = wg_arena_strndup(&e->arena, name, n);
	if (k)
		wg_strmap_put(&e->modules, k, 0);
}

/* PEP 503: lower case, runs of -_. one '-'. */
static char *normalise_dist(wg_arena *a, const char *s, size_t n)
{
	char *out = wg_arena_alloc(a, n + 1);
	size_t k = 0;
	for (size_t i = 0; out && i < n; i++) {
		char c = s[i];
		if (c == '-' || c == '_' || c == '.') {
			if (k && out[k - 1] != '-')
				out[k++] = '-';
		} else {
			out[k++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
		}
	}
	if (out)
		out[k] = '\0';
	return out;
}

/* The top-level names of one directory on sys.path; with_pth: read its .pth files too. */
static void index_dir(wg_env *e, const char *dir, bool with_pth, int depth)
{
	char **v = list_dir(dir);
	for (size_t j = 0; v && v[j]; j++) {
		const char *f = v[j];
		size_t n = strlen(f);
		char *p = path_join(&e->arena, dir, f);
		if (!p)
			break;
		if (wg_has_suffix(f, ".dist-info") || wg_has_suffix(f, ".egg-info")) {
			size_t stem = strcspn(f, "-");
			if (stem == n)
				stem = n - (wg_has_suffix(f, ".dist-info") ? 10 : 9);
			char *norm = normalise_dist(&e->arena, f, stem);
			if (norm)
				wg_strmap_put(&e->dist_names, norm, 0);
			continue;
		}
		if (with_pth && depth == 0 && wg_has_suffix(f, ".pth")) {
			/* paths added to sys.path (relative to the site directory), import lines run;
			 * an editable install's finder answers for names no directory shows */
			FILE *fp = fopen(p, "r");
			char line[4096];
			int lines = 0;
			while (fp && lines++ < 1000 && fgets(line, sizeof(line), fp)) {
				line[strcspn(line, "\r\n")] = '\0';
				if (!line[0] || line[0] == '#')
					continue;
				if (!strncmp(line, "import ", 7) || !strncmp(line, "import\t", 7)) {
					if (strstr(line, "__editable__"))
						e->editable = true;
					continue;
				}
				char *d = line[0] == '/' ? wg_arena_strdup(&e->arena, line)
							 : path_join(&e->arena, dir, line);
				if (d && is_dir(d))
					index_dir(e, d, false, depth + 1);
			}
			if (fp)
				fclose(fp);
			continue;
		}
		size_t stem = strcspn(f, ".");
		if (stem == n) {
			if (is_dir(p))
				module_add(e, f, n); /* a package, regular or namespace */
			continue;
		}
		const char *ext = f + stem;
		if (!strcmp(ext, ".py") || !strcmp(ext, ".pyc") || wg_has_suffix(ext, ".so") ||
		    !strcmp(ext, ".pyd") || wg_has_suffix(ext, ".egg-link"))
			module_add(e, f, stem);
	}
	free_list(v);
}

static void index_modules(wg_env *e)
{
	e->modules_done = true;
	if (!wg_strmap_init(&e->modules, 512) || !wg_strmap_init(&e->dist_names, 128))
		return;
	for (size_t i = 0; i < e->sites.n; i++)
		index_dir(e, e->sites.v[i], true, 0);
	if (!e->sites.n && e->site)
		index_dir(e, e->site, true, 0);
	/* the user site directory, which the interpreter adds when it exists */
	const char *home = getenv("HOME");
	if (home && e->python_version) {
		char *user = wg_arena_printf(&e->arena, "%s/.local/lib/python%s/site-packages", home,
					     e->python_version);
		if (user && is_dir(user))
			index_dir(e, user, true, 0);
	}
}

int wg_env_has_module(wg_env *e, const char *top)
{
	if (!e->modules_done)
		index_modules(e);
	if (!e->modules.cap)
		return -1;
	if (wg_strmap_get(&e->modules, top) != SIZE_MAX)
		return 1;
	return e->editable ? -1 : 0;
}

int wg_env_has_submodule(wg_env *e, const char *dotted)
{
	char rel[PATH_MAX];
	snprintf(rel, sizeof(rel), "%s", dotted);
	for (char *q = rel; *q; q++)
		if (*q == '.')
			*q = '/';
	for (size_t i = 0; i < e->sites.n || (i == 0 && !e->sites.n && e->site); i++) {
		const char *site = e->sites.n ? e->sites.v[i] : e->site;
		char p[2 * PATH_MAX + 16];
		static const char *const fixed[] = {"", ".py", ".pyc", ".so"};
		for (size_t k = 0; k < WG_ARRAY_LEN(fixed); k++) {
			snprintf(p, sizeof(p), "%s/%s%s", site, rel, fixed[k]);
			if (!access(p, F_OK))
				return 1;
		}
		/* an extension module: X.cpython-312-x86_64-linux-gnu.so, X.abi3.so */
		snprintf(p, sizeof(p), "%s/%s.*.so", site, rel);
		glob_t g;
		int found = glob(p, GLOB_NOSORT, NULL, &g) == 0 && g.gl_pathc > 0;
		globfree(&g);
		if (found)
			return 1;
	}
	return 0;
}

bool wg_env_has_dist(wg_env *e, const char *norm)
{
	if (!e->modules_done)
		index_modules(e);
	return e->dist_names.cap && wg_strmap_get(&e->dist_names, norm) != SIZE_MAX;
}

/* site-packages, dist-packages, or a directory with installed distributions in it. */
static bool looks_like_site(const char *dir)
{
	if (wg_has_suffix(dir, "/site-packages") || wg_has_suffix(dir, "/dist-packages"))
		return true;
	char **v = list_dir(dir);
	bool yes = false;
	for (size_t i = 0; v && v[i] && !yes; i++)
		yes = wg_has_suffix(v[i], ".dist-info") || !strcmp(v[i], "torch");
	free_list(v);
	return yes;
}

/* The real path of dir added to the roots, once. */
static void add_root(wg_env *e, const char *dir)
{
	char real[PATH_MAX];
	if (dir && realpath(dir, real) && is_dir(real))
		add_dir_once(&e->roots, &e->arena, real);
}

/* Where the loader's search reads: the environment (its prefix, or its site-packages), the
 * interpreter's own prefix, and the system's library directories. A RUNPATH elsewhere (a
 * home or build directory, /tmp, /etc) is not searched: reading it would let a wheel make
 * wheelgate read any file of the machine. */
static void loader_roots(wg_env *e, const char *prefix)
{
	add_root(e, prefix);
	add_root(e, e->site);
	if (e->python) {
		char *d = wg_arena_strdup(&e->arena, e->python), *s = d ? strrchr(d, '/') : NULL;
		if (s) {
			*s = '\0';
			if ((s = strrchr(d, '/')) && s != d)
				*s = '\0';
			add_root(e, d);
		}
	}
	for (size_t i = 0; i < e->system_dirs.n; i++)
		add_root(e, e->system_dirs.v[i]);
	for (size_t i = 0; i < e->lib_dirs.n; i++)
		add_root(e, e->lib_dirs.v[i]);
}

static int wg_env_open_impl(wg_env **out, wg_scanner *sc, const char *path, const wg_env_options *o)
{
	wg_env_options def = WG_ENV_OPTIONS_INIT;
	if (!out || !sc || !path)
		return wg_null_arg("wg_env_open");
	*out = NULL;
	if (!o)
		o = &def;
	if (wg_struct_version("wg_env_options", o->version, WG_ENV_OPTIONS_VERSION) < 0)
		return WG_EINVAL;
	wg_env *e = calloc(1, sizeof(*e));
	if (!e)
		return wg_seterr(&sc->err, WG_ENOMEM, "out of memory");
	e->sc = sc;
	e->torch_cxx11abi = -1;
	wg_vec_init(&e->libs, sizeof(wg_lib *));
	wg_arena *a = &e->arena;
	char real[PATH_MAX], version[16] = "";
	if (!realpath(path, real)) {
		int rc = wg_seterr(&sc->err, errno == ENOENT ? WG_ENOTFOUND : WG_EIO, "%s: %s", path,
				   strerror(errno));
		wg_env_free(e);
		return rc;
	}
	const char *prefix = NULL;
	if (is_file(real)) {
		/* a python executable: <prefix>/bin/python3.12 */
		e->python = wg_arena_strdup(a, real);
		const char *b = strrchr(real, '/');
		unsigned ma, mi;
		if (b && sscanf(b + 1, "python%u.%u", &ma, &mi) == 2)
			snprintf(version, sizeof(version), "%u.%u", ma, mi);
		char *d = wg_arena_strdup(a, path);
		char *s1 = strrchr(d, '/');
		if (s1) {
			*s1 = '\0';
			char *s2 = strrchr(d, '/');
			if (s2)
				*s2 = '\0';
			prefix = d;
		}
		e->site = prefix ? find_site(a, prefix, version, sizeof(version)) : NULL;
	} else if (is_dir(real)) {
		char *lib = path_join(a, real, "lib");
		if (is_dir(lib) && (e->site = find_site(a, real, version, sizeof(version))))
			prefix = wg_arena_strdup(a, real);
		else {
			e->site = wg_arena_strdup(a, real);
			const char *py = strstr(e->site, "/lib/python");
			if (py) {
				snprintf(version, sizeof(version), "%.*s", (int)strcspn(py + 11, "/"), py + 11);
				prefix = wg_arena_strndup(a, e->site, (size_t)(py - e->site));
			}
		}
	}
	if (e->site && !prefix && !looks_like_site(e->site))
		e->site = NULL;
	if (!e->site || !is_dir(e->site)) {
		wg_env_free(e);
		return wg_seterr(&sc->err, WG_ENOTFOUND, "%s: not a Python environment (expected a "
				 "venv or prefix with lib/python3.X/site-packages, a site-packages "
				 "directory, or a python executable)", path);
	}
	e->path = wg_arena_strdup(a, path);
	if (*version)
		e->python_version = wg_arena_strdup(a, version);
	if (!e->python && prefix && *version) {
		/* The interpreter of a venv is a link to the base one: read what it points to. */
		char exact[64];
		snprintf(exact, sizeof(exact), "bin/python%s", version);
		const char *cands[] = {exact, "bin/python3", "bin/python"};
		for (size_t i = 0; i < 3 && !e->python; i++) {
			char full[PATH_MAX];
			char *p = path_join(a, prefix, cands[i]);
			if (realpath(p, full) && is_file(full))
				e->python = wg_arena_strdup(a, full);
		}
	}
	/* Debian's /usr/lib/python3/dist-packages names no minor version: take it from the
	 * interpreter's file name (python3.11) when there is one, else leave the version's
	 * minor and the extension suffix unknown rather than guess. */
	if (e->python_version && !strchr(e->python_version, '.') && e->python) {
		const char *b = strrchr(e->python, '/');
		unsigned ma, mi;
		char tail;
		if (sscanf(b ? b + 1 : e->python, "python%u.%u%c", &ma, &mi, &tail) == 2 &&
		    (unsigned)atoi(e->python_version) == ma)
			e->python_version = wg_arena_printf(a, "%u.%u", ma, mi);
	}
	if (e->python_version && strchr(e->python_version, '.'))
		e->ext_suffix = wg_arena_printf(a, ".cpython-%.*s%s-x86_64-linux-gnu.so",
						(int)strcspn(e->python_version, "."), e->python_version,
						strchr(e->python_version, '.') + 1);
	char *torch = path_join(a, e->site, "torch");
	if (is_dir(torch)) {
		e->torch_dir = torch;
		char *vp = slurp_small(path_join(a, torch, "version.py"), 1 << 16);
		if (vp) {
			e->torch_version = py_string(a, vp, "__version__");
			e->torch_cuda = py_string(a, vp, "cuda");
			free(vp);
		}
		if (!e->torch_version) {
			glob_t g;
			char pat[PATH_MAX];
			snprintf(pat, sizeof(pat), "%s/torch-*.dist-info/METADATA", e->site);
			if (glob(pat, 0, NULL, &g) == 0) {
				char *md = slurp_small(g.gl_pathv[0], 1 << 16);
				const char *v = md ? strstr(md, "\nVersion:") : NULL;
				if (v)
					e->torch_version = wg_arena_strndup(a, v + 10 + (v[9] == ' '),
									    strcspn(v + 10 + (v[9] == ' '), "\r\n"));
				free(md);
				globfree(&g);
			}
		}
	}
	system_dirs(e, o->system_dirs);
	survey(e);
	list_dists(e, prefix);
	loader_roots(e, prefix);
	int rc = wg_env_cache_open(e, o->cache_dir);
	if (rc == WG_OK && e->torch_dir) {
		/* torch's std::string ABI: what libc10.so's torch-facing exports carry. */
		const wg_lib *c10 = wg_env_load(e, path_join(a, e->torch_dir, "lib/libc10.so"));
		if (c10)
			e->torch_cxx11abi = c10->torch_abi == WG_ABI_NEW ? 1
					    : c10->torch_abi == WG_ABI_OLD ? 0 : -1;
	}
	if (rc < 0) {
		wg_env_free(e);
		return rc;
	}
	*out = e;
	return WG_OK;
}

/* The scanner keeps the message; a failure also fills this thread's error record. */
WG_API int wg_env_open(wg_env **out, wg_scanner *sc, const char *path, const wg_env_options *o)
{
	if (sc)
		sc->err.msg[0] = '\0';
	return wg_error_from(sc ? &sc->err : NULL, wg_env_open_impl(out, sc, path, o));
}

WG_API void wg_env_free(wg_env *e)
{
	if (!e)
		return;
	wg_env_cache_close(e);
	wg_env_unload(e);
	wg_plan_free(e->plan);
	for (size_t i = 0; i < e->libs.len; i++)
		wg_lib_free(*(wg_lib **)wg_vec_at(&e->libs, i));
	wg_vec_free(&e->libs);
	wg_vec_free(&e->loaded);
	wg_strlist_free(&e->lib_dirs);
	wg_strlist_free(&e->system_dirs);
	wg_strlist_free(&e->cuda_libs);
	wg_strlist_free(&e->native_packages);
	wg_strlist_free(&e->dists);
	wg_strlist_free(&e->sites);
	wg_strmap_free(&e->modules);
	wg_strmap_free(&e->dist_names);
	wg_strlist_free(&e->roots);
	wg_arena_free(&e->arena);
	free(e);
}

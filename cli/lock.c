/*
 * `wheelgate check --lock FILE`: a PEP 751 lock file's wheels as check's inputs. The TOML is
 * read by the TOML module (wheelgate-toml.so, toml++); each package's wheel is chosen for the
 * target python and this system's platform as pip would (interpreter-specific over abi3 over
 * pure), opened from its path, file: URL or (through wheelgate-fetch.so, libcurl) http(s):
 * URL, and verified against the lock's size and sha256 before the library reads it.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>


#include "cli.h"
#include "digest.h"
#include "helper.h"
#include "lock.h"

#define LOCK_MAX (64u << 20)   /* the most a lock file may have */
#define FETCH_TIMEOUT 1800L    /* seconds for one wheel */
#define MAX_PLATS 64

typedef struct {
	char *name, *url, *path, *sha256;
	long long size;
	unsigned line;
} lwheel;

typedef struct {
	char *name, *version, *marker, *source;
	unsigned line;
	lwheel *wheels;
	size_t nwheels;
} lpkg;

typedef struct {
	lpkg *pkgs;
	size_t n;
	int oom;
} lock_doc;

/* Who speaks in the messages: check --lock, or select reading a lock (lock_wheels). */
static const char *lock_who = "wheelgate check: --lock";

static void lock_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void lock_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", lock_who);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static char *dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int on_package(void *ctx, const char *name, const char *version, const char *marker,
		      const char *source, unsigned line)
{
	lock_doc *d = ctx;
	lpkg *p = realloc(d->pkgs, (d->n + 1) * sizeof(*p));
	if (!p)
		return -1;
	d->pkgs = p;
	p = &d->pkgs[d->n++];
	memset(p, 0, sizeof(*p));
	p->name = dup0(name);
	p->version = dup0(version);
	p->marker = dup0(marker);
	p->source = dup0(source);
	p->line = line;
	return p->name ? 0 : -1;
}

static int on_wheel(void *ctx, const char *name, const char *url, const char *path,
		    long long size, const char *sha256, unsigned line)
{
	lock_doc *d = ctx;
	lpkg *p = &d->pkgs[d->n - 1];
	lwheel *w = realloc(p->wheels, (p->nwheels + 1) * sizeof(*w));
	if (!w)
		return -1;
	p->wheels = w;
	w = &p->wheels[p->nwheels++];
	w->name = dup0(name);
	w->url = dup0(url);
	w->path = dup0(path);
	w->sha256 = dup0(sha256);
	w->size = size;
	w->line = line;
	return 0;
}

static void doc_free(lock_doc *d)
{
	for (size_t i = 0; i < d->n; i++) {
		lpkg *p = &d->pkgs[i];
		for (size_t j = 0; j < p->nwheels; j++) {
			free(p->wheels[j].name);
			free(p->wheels[j].url);
			free(p->wheels[j].path);
			free(p->wheels[j].sha256);
		}
		free(p->wheels);
		free(p->name);
		free(p->version);
		free(p->marker);
		free(p->source);
	}
	free(d->pkgs);
}

/* A symbol of a helper module, loaded once (it stays loaded: the process is short-lived). */
static void *module_symbol(const char *helper, const char *sym, const char *what)
{
	char mod[PATH_MAX], tried[2 * PATH_MAX + 256];
	if (helper_path(helper, mod, sizeof(mod), tried, sizeof(tried)) < 0) {
		lock_say("%s needs wheelgate's module %s, which is "
			"missing: looked for %s\n", what, helper, tried);
		return NULL;
	}
	void *h = dlopen(mod, RTLD_NOW | RTLD_LOCAL);
	void *f = h ? dlsym(h, sym) : NULL;
	if (!h)
		lock_say("cannot load %s: %s\n", mod, dlerror());
	else if (!f)
		lock_say("%s is not this wheelgate's module (no %s)\n",
			mod, sym);
	return f;
}

static char *read_lock(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *text = NULL;
	if (fd < 0 || fstat(fd, &st) != 0) {
		lock_say("%s: %s\n", esc(path), strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		lock_say("%s: not a regular file\n", esc(path));
	} else if ((uint64_t)st.st_size > LOCK_MAX) {
		lock_say("%s: %lld bytes, more than the %u a lock "
			"file may have\n", esc(path), (long long)st.st_size, LOCK_MAX);
	} else if (!(text = malloc((size_t)st.st_size + 1))) {
		lock_say("%s: out of memory\n", esc(path));
	} else {
		ssize_t r = pread(fd, text, (size_t)st.st_size + 1, 0);
		if (r < 0 || r > st.st_size) {
			lock_say("%s: %s\n", esc(path),
				r < 0 ? strerror(errno) : "changed while it was read");
			free(text);
			text = NULL;
		} else {
			*len = (size_t)r;
		}
	}
	if (fd >= 0)
		close(fd);
	return text;
}

/* ---- which wheel: the target's tags, best first, as packaging.tags orders them ---- */

typedef struct {
	int minor;                /* python 3.minor */
	char arch[32];
	char plats[MAX_PLATS][64];
	int nplats;
	char desc[160];           /* "python 3.12 on linux_x86_64 (glibc 2.36)" */
} tagset;

static void tags_init(tagset *t, int minor)
{
	struct utsname u;
	memset(t, 0, sizeof(*t));
	t->minor = minor;
	snprintf(t->arch, sizeof(t->arch), "%.31s", uname(&u) == 0 ? u.machine : "x86_64");
	int gmaj = 0, gmin = 0;
	sscanf(gnu_get_libc_version(), "%d.%d", &gmaj, &gmin);
	for (int v = gmaj == 2 ? gmin : 0; v >= 5 && t->nplats < MAX_PLATS - 4; v--) {
		snprintf(t->plats[t->nplats++], 64, "manylinux_2_%d_%s", v, t->arch);
		const char *legacy = v == 17 ? "manylinux2014" : v == 12 ? "manylinux2010"
				     : v == 5 ? "manylinux1" : NULL;
		if (legacy)
			snprintf(t->plats[t->nplats++], 64, "%s_%s", legacy, t->arch);
	}
	snprintf(t->plats[t->nplats++], 64, "linux_%s", t->arch);
	snprintf(t->desc, sizeof(t->desc), "python 3.%d on linux_%s (glibc %d.%d)", minor, t->arch,
		 gmaj, gmin);
}

/* "cp312" / "py3" / "py311": 'c' or 'p', and the minor (-1 for "py3"); 0 when not one. */
static int pytag(const char *s, size_t len, char *kind, int *minor)
{
	if (len < 3 || (strncmp(s, "cp3", 3) && strncmp(s, "py3", 3)))
		return 0;
	*kind = s[0];
	if (len == 3) {
		*minor = -1;
		return *kind == 'p';
	}
	int m = 0;
	for (size_t i = 3; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		m = m * 10 + (s[i] - '0');
	}
	*minor = m;
	return 1;
}

/* The rank of one tag triple (lower is better), or -1 when the target cannot use it. */
static long tag_rank(const tagset *t, const char *py, size_t pl, const char *abi, size_t al,
		     const char *plat, size_t tl)
{
	int X = t->minor, pi = -1;
	bool any = tl == 3 && !strncmp(plat, "any", 3);
	for (int i = 0; i < t->nplats && !any; i++)
		if (strlen(t->plats[i]) == tl && !strncmp(t->plats[i], plat, tl))
			pi = i;
	if (!any && pi < 0)
		return -1;
	char kind;
	int m;
	if (!pytag(py, pl, &kind, &m))
		return -1;
	char cpx[16];
	snprintf(cpx, sizeof(cpx), "cp3%d", X);
	bool abi_cpx = al == strlen(cpx) && !strncmp(abi, cpx, al);
	bool abi3 = al == 4 && !strncmp(abi, "abi3", 4);
	bool none = al == 4 && !strncmp(abi, "none", 4);
	long K = t->nplats + 1, C0 = 3 + X, C1 = C0 + 2 + X, cls = -1;
	if (!any) {
		if (kind == 'c' && m == X && abi_cpx)
			cls = 0;
		else if (kind == 'c' && m == X && abi3)
			cls = 1;
		else if (kind == 'c' && m == X && none)
			cls = 2;
		else if (kind == 'c' && m >= 2 && m < X && abi3)
			cls = 3 + (X - 1 - m);
		else if (kind == 'p' && none)
			cls = m == X ? C0 : m < 0 ? C0 + 1 : m < X ? C0 + 2 + (X - 1 - m) : -1;
	} else if (none) {
		if (kind == 'c' && m == X)
			cls = C1;
		else if (kind == 'p')
			cls = m == X ? C1 + 1 : m < 0 ? C1 + 2 : m < X ? C1 + 3 + (X - 1 - m) : -1;
	}
	return cls < 0 ? -1 : cls * K + (any ? 0 : pi);
}

/* The best rank of a wheel file name's tag sets (compressed: "py2.py3"), or -1. */
static long wheel_rank(const tagset *t, const char *file)
{
	size_t len = strlen(file);
	if (len < 5 || strcmp(file + len - 4, ".whl"))
		return -1;
	len -= 4;
	const char *dash[3] = {NULL, NULL, NULL};
	int nd = 0;
	for (size_t i = len; i-- > 0 && nd < 3;)
		if (file[i] == '-')
			dash[nd++] = file + i;
	if (nd < 3)
		return -1;
	const char *py = dash[2] + 1, *abi = dash[1] + 1, *plat = dash[0] + 1, *end = file + len;
	long best = -1;
	for (const char *a = py; a < dash[1];) {
		const char *ae = memchr(a, '.', (size_t)(dash[1] - a));
		ae = ae ? ae : dash[1];
		for (const char *b = abi; b < dash[0];) {
			const char *be = memchr(b, '.', (size_t)(dash[0] - b));
			be = be ? be : dash[0];
			for (const char *c = plat; c < end;) {
				const char *ce = memchr(c, '.', (size_t)(end - c));
				ce = ce ? ce : end;
				long r = tag_rank(t, a, (size_t)(ae - a), b, (size_t)(be - b), c,
						  (size_t)(ce - c));
				if (r >= 0 && (best < 0 || r < best))
					best = r;
				c = ce + 1;
			}
			b = be + 1;
		}
		a = ae + 1;
	}
	return best;
}

/* ---- markers: only conjunctions of simple comparisons are evaluated ---- */

/* 1 true, 0 false, -1 not evaluated here. */
static int marker_eval(const char *marker, const tagset *t)
{
	if (strchr(marker, '(') || strstr(marker, " or ") || strstr(marker, " in ") ||
	    strlen(marker) > 1000)
		return -1;
	char buf[1024], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", marker);
	int result = 1;
	/* split on " and " */
	for (char *c = buf; c && *c;) {
		char *next = strstr(c, " and ");
		if (next) {
			*next = '\0';
			next += 5;
		}
		char var[64], op[4], val[128];
		if (sscanf(c, " %63[a-z_] %3[=!<>~] %*[\"']%127[^\"']", var, op, val) != 3)
			return -1;
		(void)save;
		char have[64];
		if (!strcmp(var, "sys_platform"))
			snprintf(have, sizeof(have), "linux");
		else if (!strcmp(var, "platform_system"))
			snprintf(have, sizeof(have), "Linux");
		else if (!strcmp(var, "os_name"))
			snprintf(have, sizeof(have), "posix");
		else if (!strcmp(var, "platform_machine"))
			snprintf(have, sizeof(have), "%s", t->arch);
		else if (!strcmp(var, "implementation_name"))
			snprintf(have, sizeof(have), "cpython");
		else if (!strcmp(var, "platform_python_implementation"))
			snprintf(have, sizeof(have), "CPython");
		else if (!strcmp(var, "python_version"))
			snprintf(have, sizeof(have), "3.%d", t->minor);
		else
			return -1;
		int cmp;
		if (!strcmp(var, "python_version")) {
			int vmaj = 0, vmin = 0;
			if (sscanf(val, "%d.%d", &vmaj, &vmin) != 2)
				return -1;
			cmp = 3 != vmaj ? (3 < vmaj ? -1 : 1) : t->minor < vmin ? -1 : t->minor > vmin;
		} else {
			if (strcmp(op, "==") && strcmp(op, "!="))
				return -1;
			cmp = strcmp(have, val) != 0;
		}
		bool ok = !strcmp(op, "==") ? cmp == 0 : !strcmp(op, "!=") ? cmp != 0
			  : !strcmp(op, "<") ? cmp < 0 : !strcmp(op, "<=") ? cmp <= 0
			  : !strcmp(op, ">") ? cmp > 0 : !strcmp(op, ">=") ? cmp >= 0 : false;
		if (strcmp(op, "==") && strcmp(op, "!=") && strcmp(op, "<") && strcmp(op, "<=") &&
		    strcmp(op, ">") && strcmp(op, ">="))
			return -1;
		if (!ok)
			result = 0;
		c = next;
	}
	return result;
}

/* ---- where the wheel is, and its verification ---- */

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* file:///p or file://localhost/p, percent-decoded into out; -1 with why in err. */
static int file_url_path(const char *url, char *out, size_t n, char *err, size_t errlen)
{
	const char *p = url + 5;
	if (!strncmp(p, "//", 2)) {
		p += 2;
		const char *slash = strchr(p, '/');
		size_t hl = slash ? (size_t)(slash - p) : strlen(p);
		if (hl && !(hl == 9 && !strncasecmp(p, "localhost", 9))) {
			snprintf(err, errlen, "a file: URL of another host (%.*s) is not read",
				 (int)(hl > 64 ? 64 : hl), p);
			return -1;
		}
		p += hl;
	}
	if (*p != '/') {
		snprintf(err, errlen, "a file: URL without an absolute path");
		return -1;
	}
	size_t o = 0;
	for (; *p && *p != '?' && *p != '#'; p++) {
		int c = (unsigned char)*p;
		if (c == '%') {
			int h = hexval(p[1]), l = h >= 0 ? hexval(p[2]) : -1;
			if (l < 0) {
				snprintf(err, errlen, "a file: URL with a bad %%-escape");
				return -1;
			}
			c = h * 16 + l;
			p += 2;
			if (c == 0) {
				snprintf(err, errlen, "a file: URL with %%00 in it");
				return -1;
			}
		}
		if (o + 1 >= n) {
			snprintf(err, errlen, "a file: URL too long");
			return -1;
		}
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* The wheel open (*fd), or -1 with why in err. where: the path or URL, for messages. */
static int open_wheel(const lwheel *w, const char *lockdir, const lock_options *o, int *fd,
		      char *err, size_t errlen)
{
	char path[PATH_MAX];
	*fd = -1;
	if (w->path) {
		int len = w->path[0] == '/' ? snprintf(path, sizeof(path), "%s", w->path)
					    : snprintf(path, sizeof(path), "%s/%s", lockdir, w->path);
		if (len < 0 || (size_t)len >= sizeof(path)) {
			snprintf(err, errlen, "the path is too long");
			return -1;
		}
	} else if (!w->url) {
		snprintf(err, errlen, "the lock gives neither a path nor a url");
		return -1;
	} else if (!strncasecmp(w->url, "file:", 5)) {
		if (file_url_path(w->url, path, sizeof(path), err, errlen) < 0)
			return -1;
	} else if (!strncasecmp(w->url, "http://", 7) || !strncasecmp(w->url, "https://", 8)) {
		static lock_fetcher fetch;
		if (!fetch && !(fetch = (lock_fetcher)module_symbol(HELPER_FETCH, "wg_fetch_v1",
								     "an http(s) URL"))) {
			snprintf(err, errlen, "cannot fetch: wheelgate's fetch module is missing");
			return -1;
		}
		const char *tmp = getenv("TMPDIR");
		char tpl[PATH_MAX];
		snprintf(tpl, sizeof(tpl), "%s/wheelgate-lock-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		int t = mkostemp(tpl, O_CLOEXEC);
		if (t < 0) {
			snprintf(err, errlen, "cannot make a temporary file in %s: %s",
				 tmp && *tmp ? tmp : "/tmp", strerror(errno));
			return -1;
		}
		unlink(tpl); /* private: gone with the descriptor */
		uint64_t max = w->size >= 0 ? (uint64_t)w->size : o->max;
		if (fetch(w->url, t, max, FETCH_TIMEOUT, isatty(STDERR_FILENO) && !o->quiet, err,
			  errlen) < 0) {
			close(t);
			return -1;
		}
		*fd = t;
		return 0;
	} else {
		snprintf(err, errlen, "only path, file:, http: and https: sources are read");
		return -1;
	}
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (*fd < 0 || fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%.900s: %s", path, *fd < 0 ? strerror(errno) : "not a regular file");
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -1;
	}
	return 0;
}

static int add_input(lock_input **in, size_t *n, const lpkg *p, const lwheel *w, int fd,
		     const char *error)
{
	lock_input *x = realloc(*in, (*n + 1) * sizeof(*x));
	if (!x)
		return -1;
	*in = x;
	x = &x[(*n)++];
	memset(x, 0, sizeof(*x));
	x->fd = fd;
	const char *where = w ? (w->url ? w->url : w->path) : p->source ? p->source : "no wheel";
	size_t len = strlen(p->name) + (p->version ? strlen(p->version) : 0) + strlen(where) + 8;
	if ((x->label = malloc(len)))
		snprintf(x->label, len, "%s%s%s (%s)", p->name, p->version ? " " : "",
			 p->version ? p->version : "", where);
	x->filename = dup0(w ? (w->name ? w->name : cli_base_name(w->path ? w->path : w->url)) : NULL);
	x->error = dup0(error);
	return x->label && (!error || x->error) ? 0 : -1;
}

/* One package: its wheel chosen, opened and verified (an input), or why not. */
static int one_package(lock_input **in, size_t *n, const lpkg *p, const tagset *t,
		       const char *lockdir, const lock_options *o)
{
	char err[2048];
	if (p->marker) {
		int m = marker_eval(p->marker, t);
		if (m == 0) {
			lock_say("%s: skipped: its marker \"%s\" is "
				"false for %s\n", esc(p->name), esc(p->marker), t->desc);
			return 0;
		}
		if (m < 0 && !o->quiet)
			lock_say("%s: marker \"%s\" not evaluated "
				"here: checked\n", esc(p->name), esc(p->marker));
	}
	if (!p->nwheels) {
		snprintf(err, sizeof(err), "%s: the lock gives no wheel (%s): not checked", p->name,
			 p->source ? p->source : "no source at all");
		if (o->allow_no_wheel) {
			lock_say("%s (--allow-no-wheel)\n", esc(err));
			return 0;
		}
		return add_input(in, n, p, NULL, -1, err);
	}
	long best = -1;
	size_t bi = 0;
	for (size_t i = 0; i < p->nwheels; i++) {
		const lwheel *w = &p->wheels[i];
		const char *file = w->name ? w->name : cli_base_name(w->path ? w->path : w->url);
		long r = file ? wheel_rank(t, file) : -1;
		if (r >= 0 && (best < 0 || r < best)) {
			best = r;
			bi = i;
		}
	}
	if (best < 0) {
		size_t o2 = (size_t)snprintf(err, sizeof(err), "no wheel of %s in the lock fits %s: "
					     "listed are", p->name, t->desc);
		for (size_t i = 0; i < p->nwheels && o2 < sizeof(err); i++) {
			const lwheel *w = &p->wheels[i];
			const char *file = w->name ? w->name : cli_base_name(w->path ? w->path : w->url);
			o2 += (size_t)snprintf(err + o2, sizeof(err) - o2, "%s %s", i ? "," : "",
					       file ? file : "(no name)");
		}
		return add_input(in, n, p, NULL, -1, err);
	}
	const lwheel *w = &p->wheels[bi];
	const char *where = w->url ? w->url : w->path;
	if (!w->sha256 && !o->allow_unhashed) {
		snprintf(err, sizeof(err), "%s: %s: the lock gives no sha256 for it: not read "
			 "(--allow-unhashed reads it unverified)", p->name, where);
		return add_input(in, n, p, w, -1, err);
	}
	int fd;
	char why[1024];
	if (open_wheel(w, lockdir, o, &fd, why, sizeof(why)) < 0) {
		snprintf(err, sizeof(err), "%s: %s: %s", p->name, where, why);
		return add_input(in, n, p, w, -1, err);
	}
	struct stat st;
	char hex[65];
	if (fstat(fd, &st) != 0 || (w->size >= 0 && st.st_size != w->size)) {
		snprintf(err, sizeof(err), "%s: %s: %lld bytes, the lock says %lld: not read",
			 p->name, where, (long long)st.st_size, w->size);
	} else if (w->sha256 && sha256_fd(fd, hex, NULL) < 0) {
		snprintf(err, sizeof(err), "%s: %s: cannot be read to hash it", p->name, where);
	} else if (w->sha256 && strcasecmp(hex, w->sha256)) {
		snprintf(err, sizeof(err), "%s: %s: sha256 mismatch: the lock says %s, the file has "
			 "%s: not read", p->name, where, w->sha256, hex);
	} else {
		if (!w->sha256)
			lock_say("%s: %s: no sha256 in the lock: read "
				"unverified (--allow-unhashed)\n", esc(p->name), esc(where));
		return add_input(in, n, p, w, fd, NULL);
	}
	close(fd);
	return add_input(in, n, p, w, -1, err);
}

/* The lock's packages and wheels into *d, through the TOML module: 0, or -1 (said; *d may
 * hold what was read before the error, for lock_doc's free). */
static int parse_lock(lock_doc *d, const char *lockpath)
{
	size_t len = 0;
	char *text = read_lock(lockpath, &len);
	if (!text)
		return -1;
	lock_reader reader = (lock_reader)module_symbol(HELPER_TOML, "wg_toml_read_lock_v1",
							 "reading a lock file");
	lock_sink sink = {d, on_package, on_wheel};
	char err[2048];
	int rc = reader ? reader(lockpath, text, len, &sink, err, sizeof(err)) : -1;
	free(text);
	if (reader && rc < 0)
		lock_say("%s\n", esc(err));
	return rc;
}

int lock_inputs(lock_input **out, size_t *n, const char *lockpath, const lock_options *o)
{
	*out = NULL;
	*n = 0;
	lock_doc d = {0};
	int rc = parse_lock(&d, lockpath);
	if (rc == 0 && d.n == 0) {
		lock_say("%s: no [[packages]]: nothing to check\n",
			esc(lockpath));
		rc = -1;
	}
	int minor = -1;
	if (rc == 0 && (!o->python || sscanf(o->python, "3.%d", &minor) != 1 || minor < 0)) {
		lock_say("which python the wheels are for is not "
			"known (%s): give --env or --target python=3.X\n",
			o->python ? esc(o->python) : "no python3 on PATH");
		rc = -1;
	}
	if (rc == 0) {
		tagset t;
		tags_init(&t, minor);
		if (!o->quiet)
			lock_say("%zu package%s; wheels chosen for %s "
				"(python from %s)\n", d.n, d.n == 1 ? "" : "s", t.desc, o->python_from);
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", lockpath);
		char *slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = '\0';
		else
			snprintf(dir, sizeof(dir), ".");
		for (size_t i = 0; i < d.n && rc == 0; i++)
			if (one_package(out, n, &d.pkgs[i], &t, dir, o) < 0) {
				lock_say("out of memory\n");
				rc = -1;
			}
	}
	doc_free(&d);
	if (rc < 0) {
		lock_inputs_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

void lock_inputs_free(lock_input *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (in[i].fd >= 0)
			close(in[i].fd);
		free(in[i].label);
		free(in[i].filename);
		free(in[i].error);
	}
	free(in);
}

const char *lock_python_on_path(char *buf, size_t n)
{
	int pfd[2];
	if (pipe(pfd) != 0)
		return NULL;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		execlp("python3", "python3", "-I", "-c",
		       "import sys; print('%d.%d' % sys.version_info[:2])", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	ssize_t r = pid > 0 ? read(pfd[0], buf, n - 1) : -1;
	close(pfd[0]);
	int st = 0;
	if (pid > 0)
		waitpid(pid, &st, 0);
	if (r <= 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return NULL;
	buf[r] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* ---- for select: every wheel of a lock, a wheel opened and verified, a name's tag rank ---- */

void lock_set_who(const char *who)
{
	lock_who = who;
}

int lock_wheels(lock_wheel_ref **out, size_t *n, const char *lockpath)
{
	*out = NULL;
	*n = 0;
	lock_doc d = {0};
	int rc = parse_lock(&d, lockpath);
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", lockpath);
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	size_t total = 0;
	for (size_t i = 0; rc == 0 && i < d.n; i++)
		total += d.pkgs[i].nwheels;
	if (rc == 0 && total && !(*out = calloc(total, sizeof(**out))))
		rc = -1;
	for (size_t i = 0; rc == 0 && i < d.n; i++) {
		const lpkg *p = &d.pkgs[i];
		for (size_t j = 0; rc == 0 && j < p->nwheels; j++) {
			const lwheel *w = &p->wheels[j];
			lock_wheel_ref *r = &(*out)[(*n)++];
			const char *file = w->name ? w->name : cli_base_name(w->path ? w->path : w->url);
			r->project = dup0(p->name);
			r->version = dup0(p->version);
			r->filename = dup0(file ? file : "");
			r->url = w->path ? NULL : dup0(w->url);
			r->sha256 = dup0(w->sha256);
			r->size = w->size;
			r->line = w->line;
			if (w->path) {
				size_t l = strlen(dir) + strlen(w->path) + 2;
				if ((r->path = malloc(l)))
					snprintf(r->path, l, "%s%s%s", w->path[0] == '/' ? "" : dir,
						 w->path[0] == '/' ? "" : "/", w->path);
			}
			if (!r->project || !r->filename || (w->path && !r->path) ||
			    (!w->path && w->url && !r->url) || (w->sha256 && !r->sha256))
				rc = -1;
		}
	}
	if (rc < 0 && *n)
		lock_say("out of memory\n");
	doc_free(&d);
	if (rc < 0) {
		lock_wheels_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

void lock_wheels_free(lock_wheel_ref *w, size_t n)
{
	for (size_t i = 0; w && i < n; i++) {
		free(w[i].project);
		free(w[i].version);
		free(w[i].filename);
		free(w[i].url);
		free(w[i].path);
		free(w[i].sha256);
	}
	free(w);
}

int lock_open(int *fd, const char *path, const char *url, const char *sha256, long long size,
	      uint64_t max, bool quiet, char *err, size_t errlen)
{
	lwheel w = {NULL, (char *)url, (char *)path, (char *)sha256, size, 0};
	lock_options o = {0};
	o.max = max;
	o.quiet = quiet;
	if (open_wheel(&w, path && path[0] != '/' ? "." : "/", &o, fd, err, errlen) < 0)
		return -1;
	struct stat st;
	char hex[65];
	const char *where = url ? url : path;
	if (fstat(*fd, &st) != 0 || (size >= 0 && st.st_size != size))
		snprintf(err, errlen, "%lld bytes, the source says %lld: not read",
			 (long long)st.st_size, size);
	else if (sha256 && sha256_fd(*fd, hex, NULL) < 0)
		snprintf(err, errlen, "cannot be read to hash it");
	else if (sha256 && strcasecmp(hex, sha256))
		snprintf(err, errlen, "sha256 mismatch: the source says %.64s, the file has %s: "
			 "not read", sha256, hex);
	else
		return 0;
	(void)where;
	close(*fd);
	*fd = -1;
	return -1;
}

long lock_tag_rank(int minor, const char *filename, char *desc, size_t desclen)
{
	tagset t;
	tags_init(&t, minor);
	if (desc)
		snprintf(desc, desclen, "%s", t.desc);
	return wheel_rank(&t, filename);
}

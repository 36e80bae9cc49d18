/*
 * scan's inputs (scan.h): the PATHs (a directory gives the wheels below it), the --from
 * lists, the store's facts; the shard kept; the sha256 --resume's file already holds.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "scan.h"

int strlist_add(strlist *l, const char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **p = realloc(l->v, cap * sizeof(*p));
		if (!p)
			return -1;
		l->v = p;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(s)))
		return -1;
	l->n++;
	return 0;
}

void strlist_free(strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* nftw has no payload: the list being filled. */
static strlist *walk_out;
static int walk_oom;
static const char *walk_suffix = ".whl"; /* ".json.zst" with --from-facts */
static const char *keys_dir;              /* --from-facts: --facts-dir, for sha256 inputs */

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_F && wg_has_suffix_cli(path, walk_suffix) && strlist_add(walk_out, path) < 0) {
		walk_oom = 1;
		return 1;
	}
	return 0;
}

/* A PATH: a directory gives every *.whl (with --from-facts: *.json.zst) below it (sorted),
 * anything else itself. */
static int add_path(strlist *l, const char *path)
{
	struct stat st;
	if (keys_dir && stat(path, &st) != 0 && is_sha256_hex(path)) {
		/* --from-facts: the sha256 of an input whose facts --facts-dir holds */
		char file[4096];
		if (wg_facts_path(file, sizeof(file), keys_dir, path) < 0) {
			scan_fail("%s\n", esc(wg_error_last()));
			return -2;
		}
		return strlist_add(l, file);
	}
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return strlist_add(l, path);
	size_t first = l->n;
	walk_out = l;
	walk_oom = 0;
	if (nftw(path, walk_one, 32, FTW_PHYS) != 0 && !walk_oom) {
		scan_fail("%s: %s\n", esc(path), strerror(errno));
		return -2;
	}
	if (walk_oom)
		return -1;
	qsort(l->v + first, l->n - first, sizeof(*l->v), cmp_str);
	if (l->n == first)
		fprintf(stderr, "%s: %s: no %s (*%s) below it\n", SCAN_PROG, esc(path),
			strcmp(walk_suffix, ".whl") ? "stored facts" : "wheel", walk_suffix);
	return 0;
}

/* --from FILE ('-': stdin): one path a line. */
static int add_from(strlist *l, const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f) {
		scan_fail("--from: %s: %s\n", esc(file), strerror(errno));
		return -2;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;
	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
				   line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = '\0';
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p && *p != '#')
			rc = add_path(l, p);
	}
	if (rc == 0 && ferror(f)) {
		scan_fail("--from: %s: %s\n", esc(file), strerror(errno));
		rc = -2;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

/* The shard of an input: FNV-1a 64 of its file name (no directories), mod N. */
static uint64_t name_hash(const char *path)
{
	const char *b = cli_base_name(path);
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *b; b++) {
		h ^= (unsigned char)*b;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* ---- --resume: the sha256 already recorded ---- */

static int cmp_sha(const void *a, const void *b)
{
	return memcmp(a, b, 64);
}

bool shaset_has(const shaset *s, const char *hex)
{
	return s->n && bsearch(hex, s->v, s->n, sizeof(*s->v), cmp_sha) != NULL;
}

int resume_read(shaset *set, const char *file, size_t *records)
{
	*records = 0;
	int fd = open(file, O_RDWR);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0) {
		scan_fail("--resume: %s: %s\n", esc(file), strerror(errno));
		return -1;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		scan_fail("--resume: %s: %s\n", esc(file), strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0, lineno = 0, setcap = 0;
	ssize_t len;
	off_t good = 0; /* the end of the last whole record */
	int rc = 0;
	bool cut = false;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		bool whole = len > 0 && line[len - 1] == '\n';
		wg_scanrec *j = NULL;
		bool ok = wg_scanrec_parse(&j, line, (size_t)len) == WG_OK;
		wg_scanrec_info ri = WG_SCANREC_INFO_INIT;
		const char *sha = ok && wg_scanrec_get(&ri, j) == WG_OK ? ri.sha256 : NULL;
		if (!whole || !ok) {
			/* Only the last line may be broken: a killed scan's. */
			int c = getc(f);
			if (c != EOF || !len) {
				scan_fail("--resume: %s:%zu: %s\n", esc(file), lineno,
					  ok ? "not a wheelgate.scan/1 record" : esc(wg_error_last()));
				wg_scanrec_free(j);
				rc = -1;
				break;
			}
			wg_scanrec_free(j);
			cut = true;
			break;
		}
		if (sha) {
			if (set->n == setcap) {
				size_t nc = setcap ? setcap * 2 : 256;
				char (*p)[65] = realloc(set->v, nc * sizeof(*p));
				if (!p) {
					wg_scanrec_free(j);
					scan_fail("out of memory\n");
					rc = -1;
					break;
				}
				set->v = p;
				setcap = nc;
			}
			memcpy(set->v[set->n++], sha, 65);
		}
		wg_scanrec_free(j);
		(*records)++;
		good += len;
	}
	free(line);
	if (rc == 0 && cut) {
		if (ftruncate(fd, good) != 0) {
			scan_fail("--resume: %s: %s\n", esc(file), strerror(errno));
			rc = -1;
		} else {
			fprintf(stderr, "%s: --resume: %s: its last line was cut short (a killed scan): "
				"dropped, that input is scanned again\n", SCAN_PROG, esc(file));
		}
	}
	fclose(f);
	if (set->n)
		qsort(set->v, set->n, sizeof(*set->v), cmp_sha);
	return rc;
}

int scan_gather(strlist *all, size_t *total, char *const *paths, size_t npaths,
		const strlist *from, const char *facts_dir, bool from_facts, unsigned shard_i,
		unsigned shard_n)
{
	int status = EXIT_CLEAN;
	if (from_facts) {
		walk_suffix = ".json.zst";
		keys_dir = facts_dir;
	}
	for (size_t i = 0; i < npaths && status == EXIT_CLEAN; i++) {
		int rc = add_path(all, paths[i]);
		if (rc < 0) {
			if (rc == -1)
				scan_fail("out of memory\n");
			status = EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < from->n && status == EXIT_CLEAN; i++) {
		int rc = add_from(all, from->v[i]);
		if (rc < 0) {
			if (rc == -1)
				scan_fail("out of memory\n");
			status = EXIT_USAGE;
		}
	}
	if (status != EXIT_CLEAN)
		return status;
	if (npaths == 0 && from->n == 0 && from_facts && facts_dir) {
		/* every input the store holds */
		int rc = add_path(all, facts_dir);
		if (rc < 0) {
			if (rc == -1)
				scan_fail("out of memory\n");
			return EXIT_USAGE;
		}
	} else if (npaths == 0 && from->n == 0) {
		scan_fail("no PATH and no --from list given\n");
		return EXIT_USAGE;
	}
	size_t kept = 0;
	*total = all->n;
	if (shard_n)
		for (size_t i = 0; i < all->n; i++) {
			if (name_hash(all->v[i]) % shard_n == shard_i)
				all->v[kept++] = all->v[i];
			else
				free(all->v[i]);
		}
	else
		kept = all->n;
	all->n = kept;
	return -1;
}

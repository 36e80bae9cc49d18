/*
 * Member sources: what the wheel reader (facts/wheel.c) reads members from. A zip archive
 * (a wheel file, or one in memory) and an installed distribution: a `*.dist-info` directory
 * whose RECORD lists the files it installed, relative to the site directory that holds it.
 * Both give the same names, sizes and bytes, so an installed distribution yields the facts its
 * wheel would (apart from the filename, which an install does not keep).
 *
 * An installed RECORD is read like a wheel's member list: names that would leave the site
 * directory (`../../bin/x`: scripts and data an installer put elsewhere) are not members, only
 * regular files are read (a FIFO or a device named in RECORD is a problem, never a hang), and
 * sizes come from the file itself, read through one descriptor in bounded chunks.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_INPUT /* wg_seterr: what fails here */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/input.h"

/* ---- a zip archive ---- */

static int64_t zip_count(void *self)
{
	return wg_zip_count(self);
}

static int zip_stat(wg_zip_entry *out, void *self, uint64_t i, wg_err *err)
{
	return wg_zip_stat(out, self, i, err);
}

static int zip_read(void *self, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
		    wg_err *err)
{
	return wg_zip_read(self, i, declared, cb, payload, err);
}

static int zip_view(void *self, uint64_t i, uint64_t declared, wg_zbuf *b, wg_chunk_cb cb,
		    void *payload, const uint8_t **data, wg_err *err)
{
	return wg_zip_view(self, i, declared, b, cb, payload, data, err);
}

static int zip_stream(void *self, uint64_t i, uint64_t declared, wg_zstream *s, wg_block_cb cb,
		      void *payload, wg_zstream_sum *sum, wg_err *err)
{
	return wg_zip_stream(self, i, declared, s, cb, payload, sum, err);
}

static bool zip_inflates_whole(void *self, uint64_t i, uint64_t declared)
{
	return wg_zip_inflates_whole(self, i, declared);
}

static bool zip_starts_as_elf(void *self, uint64_t i)
{
	return wg_zip_starts_as_elf(self, i);
}

static void zip_release(void *self, uint64_t i)
{
	wg_zip_release(self, i);
}

void wg_members_zip(wg_members *m, wg_zip *z)
{
	m->self = z;
	m->count = zip_count;
	m->stat = zip_stat;
	m->read = zip_read;
	m->view = zip_view;
	m->stream = zip_stream;
	m->release = zip_release;
	m->inflates_whole = zip_inflates_whole;
	m->starts_as_elf = zip_starts_as_elf;
	m->installed = false;
	m->installer = NULL;
	m->repackaged = false;
}

/* ---- an installed distribution ---- */

typedef struct {
	const char *name; /* the RECORD path, as a wheel member name */
	uint64_t size;
	bool regular;     /* a regular file that could be stat'ed */
	bool absent;      /* no such file: removed since it was installed */
	const char *why;  /* why not, for the problem the read reports */
} installed_file;

struct wg_installed {
	wg_arena arena;
	char *site;      /* the directory holding the .dist-info */
	installed_file *files;
	size_t n;
	size_t skipped;  /* RECORD paths outside the site directory */
	char *installer; /* INSTALLER's first line, or NULL */
	bool repackaged; /* installed by no wheel installer */
};

/* The installers that install wheels as built: RECORD is then what they wrote. */
static bool wheel_installer(const char *name)
{
	static const char *const known[] = {"pip", "uv", "poetry", "pdm", "pipenv", NULL};
	for (size_t i = 0; known[i]; i++)
		if (!strcmp(name, known[i]))
			return true;
	return false;
}

#define RECORD_MAX (16u << 20)

static int read_small_file(const char *path, char **out, size_t *len, size_t max, wg_err *err)
{
	/* O_NOFOLLOW: RECORD is read as the members are (inst_read), never through a symbolic
	 * link. pip writes a wheel's RECORD as a regular file; a link in its place (to
	 * /etc/shadow, to another distribution's RECORD) would make wheelgate read, and name in
	 * its problems, a file the distribution does not own. Only the last component is
	 * checked: a site directory reached through a link (lib64 -> lib in a venv) still works. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && errno == ELOOP)
		return wg_seterr(err, WG_EUNSUPPORTED, "%s: a symbolic link: not read", path);
	if (fd < 0)
		return wg_seterr(err, errno == ENOENT ? WG_ENOTFOUND : WG_EIO, "%s: %s", path,
				 strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return wg_seterr(err, WG_EUNSUPPORTED, "%s: not a regular file", path);
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return wg_seterr(err, WG_ELIMIT, "%s: %lld bytes, more than the limit of %zu", path,
				 (long long)st.st_size, max);
	}
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	}
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return WG_OK;
}

/* A RECORD path that stays inside the site directory (no absolute path, no `..`). */
static bool inside(const char *p)
{
	if (!*p || p[0] == '/' || strchr(p, '\\'))
		return false;
	for (const char *s = p; *s;) {
		size_t n = strcspn(s, "/");
		if ((n == 2 && s[0] == '.' && s[1] == '.') || n == 0)
			return false;
		s += n;
		if (*s == '/')
			s++;
	}
	return true;
}

int wg_installed_open(wg_installed **out, const char *dist_info, uint32_t max_members,
		      wg_err *err)
{
	*out = NULL;
	wg_installed *d = calloc(1, sizeof(*d));
	if (!d)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	char *record_text = NULL;
	size_t record_len = 0;
	wg_vec rows;
	wg_vec_init(&rows, sizeof(wg_record_row));
	char path[4096];
	/* The site directory: where the .dist-info is. */
	snprintf(path, sizeof(path), "%s", dist_info);
	size_t pl = strlen(path);
	while (pl > 1 && path[pl - 1] == '/')
		path[--pl] = '\0';
	const char *base = strrchr(path, '/');
	d->site = base ? wg_arena_strndup(&d->arena, path, base == path ? 1 : (size_t)(base - path))
		       : wg_arena_strdup(&d->arena, ".");
	const char *di_name = base ? base + 1 : path;
	char record[4200];
	snprintf(record, sizeof(record), "%s/RECORD", path);
	int rc = read_small_file(record, &record_text, &record_len, RECORD_MAX, err);
	if (rc < 0)
		goto fail;
	if ((rc = wg_record_parse(&rows, &d->arena, record_text, record_len, err)) < 0)
		goto fail;
	/* Who installed it (INSTALLER, the recording-installed-projects spec): pip and uv
	 * install a wheel's files as built; a system's packaging (Debian's dh-python, which
	 * writes no INSTALLER; conda) builds the wheel, writes RECORD, then rewrites files
	 * (strips, relocates) and places some elsewhere (/usr/bin). */
	char inst_path[4200], *inst_text = NULL;
	size_t inst_len = 0;
	wg_err ierr = {0};
	snprintf(inst_path, sizeof(inst_path), "%s/INSTALLER", path);
	if (read_small_file(inst_path, &inst_text, &inst_len, 4096, &ierr) == WG_OK) {
		size_t l = strcspn(inst_text, "\r\n");
		while (l && (inst_text[l - 1] == ' ' || inst_text[l - 1] == '\t'))
			l--;
		d->installer = wg_arena_strndup(&d->arena, inst_text, l);
		free(inst_text);
		if (!d->installer) { /* never taken for "no INSTALLER" */
			rc = wg_seterr(err, WG_ENOMEM, "out of memory");
			goto fail;
		}
	}
	d->repackaged = !d->installer || !wheel_installer(d->installer);
	if (rows.len > max_members) {
		rc = wg_seterr(err, WG_ELIMIT, "%s: RECORD lists %zu files, more than the limit of %u",
			       record, rows.len, max_members);
		goto fail;
	}
	d->files = wg_arena_alloc(&d->arena, (rows.len + 1) * sizeof(*d->files));
	if (!d->files || !d->site) {
		rc = wg_seterr(err, WG_ENOMEM, "out of memory");
		goto fail;
	}
	bool have_record = false;
	for (size_t i = 0; i < rows.len; i++) {
		const wg_record_row *row = wg_vec_at(&rows, i);
		if (!inside(row->path)) {
			d->skipped++; /* installed outside site-packages: not part of the package */
			continue;
		}
		/* The dist-info's own RECORD may be named through another dist-info spelling
		 * (a renamed directory): the member list is the RECORD as written. */
		installed_file *f = &d->files[d->n++];
		memset(f, 0, sizeof(*f));
		f->name = row->path;
		char full[8192];
		snprintf(full, sizeof(full), "%s/%s", d->site, row->path);
		struct stat st;
		int gone = lstat(full, &st) != 0 ? errno : 0;
		bool no_file = gone == ENOENT || gone == ENOTDIR;
		if (no_file && (d->repackaged || wg_has_suffix(row->path, ".pyc"))) {
			/* Placed elsewhere by the packaging (Debian's RECORD names the build tree's
			 * scripts-3.11/x, installed as /usr/bin/x): not a member; an orphan of
			 * RECORD, which the record rules report (a warning), never a read error.
			 * A .pyc is a cache: pip lists those it compiled, Python rewrites and
			 * removes them (a new interpreter, `find -name __pycache__ -delete`): an
			 * absent one is not a member either, and no orphan (facts/record.c). */
			d->n--;
			continue;
		} else if (no_file) {
			/* What a wheel installer installed and is gone: the record rules say so
			 * (WG_RECORD_ABSENT), it is not a file that could not be read. */
			f->absent = true;
			f->why = "missing from the installed distribution";
		} else if (gone) {
			f->why = wg_arena_printf(&d->arena, "listed in RECORD but could not be "
						 "examined (%s)", strerror(gone));
		} else if (S_ISLNK(st.st_mode)) {
			f->why = "a symbolic link: not read";
		} else if (!S_ISREG(st.st_mode)) {
			f->why = "not a regular file: not read";
		} else {
			f->regular = true;
			f->size = (uint64_t)st.st_size;
		}
		size_t dl = strlen(di_name);
		if (!strncmp(row->path, di_name, dl) && !strcmp(row->path + dl, "/RECORD"))
			have_record = true;
	}
	if (!have_record) {
		/* RECORD usually lists itself; keep it a member so the facts see it either way. */
		installed_file *f = &d->files[d->n];
		memset(f, 0, sizeof(*f));
		f->name = wg_arena_printf(&d->arena, "%s/RECORD", di_name);
		f->size = record_len;
		f->regular = true;
		if (!f->name) {
			rc = wg_seterr(err, WG_ENOMEM, "out of memory");
			goto fail;
		}
		d->n++;
	}
	wg_vec_free(&rows);
	free(record_text);
	*out = d;
	return WG_OK;
fail:
	wg_vec_free(&rows);
	free(record_text);
	wg_installed_close(d);
	return rc;
}

void wg_installed_close(wg_installed *d)
{
	if (!d)
		return;
	wg_arena_free(&d->arena);
	free(d);
}

const char *wg_installed_site(const wg_installed *d)
{
	return d->site;
}

const char *wg_installed_file(const wg_installed *d, size_t i, bool *regular)
{
	if (i >= d->n)
		return NULL;
	*regular = d->files[i].regular;
	return d->files[i].name;
}

size_t wg_installed_skipped(const wg_installed *d)
{
	return d ? d->skipped : 0;
}

static int64_t inst_count(void *self)
{
	return (int64_t)((wg_installed *)self)->n;
}

static int inst_stat(wg_zip_entry *out, void *self, uint64_t i, wg_err *err)
{
	wg_installed *d = self;
	if (i >= d->n)
		return wg_seterr(err, WG_ENOTFOUND, "no file %llu", (unsigned long long)i);
	memset(out, 0, sizeof(*out));
	out->name = d->files[i].name;
	out->size = out->csize = d->files[i].size;
	out->method = "installed";
	out->absent = d->files[i].absent;
	return WG_OK;
}

static int inst_read(void *self, uint64_t i, uint64_t declared, wg_chunk_cb cb, void *payload,
		     wg_err *err)
{
	wg_installed *d = self;
	if (i >= d->n)
		return wg_seterr(err, WG_ENOTFOUND, "no file %llu", (unsigned long long)i);
	const installed_file *f = &d->files[i];
	if (!f->regular)
		return wg_seterr(err, WG_EIO, "%s/%s: %s", d->site, f->name,
				 f->why ? f->why : "not read");
	char full[8192];
	snprintf(full, sizeof(full), "%s/%s", d->site, f->name);
	/* O_NOFOLLOW and O_NONBLOCK: a file swapped for a link or a FIFO since it was listed is
	 * refused, never followed or waited on. */
	int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return wg_seterr(err, WG_EIO, "%s: %s", full, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return wg_seterr(err, WG_EIO, "%s: not a regular file", full);
	}
	uint8_t *buf = malloc(1u << 20);
	if (!buf) {
		close(fd);
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	}
	uint64_t done = 0;
	int rc = WG_OK;
	while (rc == WG_OK) {
		ssize_t r = read(fd, buf, 1u << 20);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = wg_seterr(err, WG_EIO, "%s: %s", full, strerror(errno));
			break;
		}
		if (r == 0)
			break;
		if ((uint64_t)r > declared - done) {
			rc = wg_seterr(err, WG_EFORMAT, "%s: grew while it was read (more than %llu "
				       "bytes)", full, (unsigned long long)declared);
			break;
		}
		done += (uint64_t)r;
		rc = cb(buf, (size_t)r, payload);
	}
	if (rc == WG_OK && done != declared)
		rc = wg_seterr(err, WG_EFORMAT, "%s: %llu bytes read, %llu expected (changed while "
			       "it was read)", full, (unsigned long long)done,
			       (unsigned long long)declared);
	free(buf);
	close(fd);
	return rc;
}

void wg_members_installed(wg_members *m, wg_installed *d)
{
	m->self = d;
	m->count = inst_count;
	m->stat = inst_stat;
	m->read = inst_read;
	m->view = NULL;
	m->stream = NULL;
	m->release = NULL;
	m->inflates_whole = NULL;
	m->starts_as_elf = NULL; /* a file that cannot be read cannot be sniffed either */
	m->installed = true;
	m->installer = d->installer;
	m->repackaged = d->repackaged;
}

bool wg_is_dist_info(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	return n > 10 && !memcmp(path + n - 10, ".dist-info", 10);
}

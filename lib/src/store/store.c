/*
 * The facts store (docs/facts-store.md): a scan written as its inspect document with its
 * facts (output/), compressed with zstd under DIR/ab/<sha256>.json.zst, found by the sha256
 * of the input, and loaded back into a scan (facts_read.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_STORE /* wg_seterr: what fails here */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "store/store.h"

/* A stored document larger than this once decompressed is refused (hostile frames). */
#define FACTS_MAX_BYTES ((size_t)1 << 30)
/* What a zstd frame may declare: FACTS_MAX_RATIO times its size, plus 1 MiB */
#define FACTS_MAX_RATIO 200
#define FACTS_RATIO_SLACK (1ull << 20)

/* ---------------------------------------------------------------------------------------- */
/* the store                                                                                */

WG_API int wg_file_sha256(char hex[65], const char *path)
{
	if (!hex || !path)
		return wg_null_arg("wg_file_sha256");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		wg_set_error(WG_ERROR_CLASS_STORE, WG_EIO, "%s: %s", path, strerror(errno));
		return WG_EIO;
	}
	wg_sha256 *h = wg_sha256_new();
	static __thread unsigned char buf[1 << 16];
	ssize_t n;
	while (h && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			wg_sha256_free(h);
			wg_set_error(WG_ERROR_CLASS_STORE, WG_EIO, "%s: %s", path, strerror(e));
			return WG_EIO;
		}
		wg_sha256_update(h, buf, (size_t)n);
	}
	close(fd);
	if (!h) {
		wg_set_error(WG_ERROR_CLASS_STORE, WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	uint8_t d[32];
	wg_sha256_final(h, d);
	wg_sha256_free(h);
	for (size_t k = 0; k < 32; k++)
		snprintf(hex + 2 * k, 3, "%02x", d[k]);
	return WG_OK;
}

static bool is_sha(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (size_t i = 0; i < 64; i++)
		if (wg_hexval(s[i]) < 0)
			return false;
	return true;
}

WG_API int wg_facts_path(char *buf, size_t n, const char *dir, const char *sha256_hex)
{
	if (!buf || !dir || !is_sha(sha256_hex)) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL, "wg_facts_path: %s",
			     !buf || !dir ? "no directory"
					  : "not a sha256 (64 lower-case hexadecimal digits)");
		return WG_EINVAL;
	}
	if ((size_t)snprintf(buf, n, "%s/%.2s/%s.json.zst", dir, sha256_hex, sha256_hex) >= n) {
		wg_set_error(WG_ERROR_CLASS_STORE, WG_ELIMIT, "%s: the path is too long", dir);
		return WG_ELIMIT;
	}
	return WG_OK;
}

WG_API int wg_facts_store(const char *dir, const char *sha256_hex, const wg_scan *scan)
{
	char path[4096], tmp[4200], sub[4096];
	int rc = wg_facts_path(path, sizeof(path), dir, sha256_hex);
	if (rc < 0)
		return rc;
	if (!scan)
		return wg_null_arg("wg_facts_store");
	snprintf(sub, sizeof(sub), "%s/%.2s", dir, sha256_hex);
	if ((mkdir(dir, 0777) < 0 && errno != EEXIST) || (mkdir(sub, 0777) < 0 && errno != EEXIST)) {
		wg_set_error(WG_ERROR_CLASS_STORE, WG_EIO,
			     "%s: cannot make the directory: %s", sub, strerror(errno));
		return WG_EIO;
	}
	char *doc = NULL;
	wg_inspect *d = NULL;
	if ((rc = wg_inspect_new(&d, WG_JSON_FACTS | WG_JSON_NO_SYMBOLS | WG_JSON_NO_ENTRIES,
				 NULL, 0)) < 0 ||
	    (rc = wg_inspect_add(d, scan)) < 0 || (rc = wg_inspect_format(&doc, d)) < 0) {
		wg_inspect_free(d);
		return rc;
	}
	wg_inspect_free(d);
	size_t len = strlen(doc), cap = ZSTD_compressBound(len);
	void *z = malloc(cap);
	size_t zn = z ? ZSTD_compress(z, cap, doc, len, 3) : 0;
	free(doc);
	if (!z || ZSTD_isError(zn)) {
		free(z);
		wg_set_error(WG_ERROR_CLASS_STORE, WG_ENOMEM,
			     "%s: cannot compress the facts", path);
		return WG_ENOMEM;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%lx", path, (long)getpid(),
		 (unsigned long)(uintptr_t)&tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	size_t done = 0;
	while (fd >= 0 && done < zn) {
		ssize_t w = write(fd, (char *)z + done, zn - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	free(z);
	int e = errno;
	if (fd < 0 || done < zn || close(fd) < 0 || rename(tmp, path) < 0) {
		e = errno ? errno : e;
		if (fd >= 0)
			unlink(tmp);
		wg_set_error(WG_ERROR_CLASS_STORE, WG_EIO,
			     "%s: cannot write the facts: %s", path, strerror(e));
		return WG_EIO;
	}
	return WG_OK;
}

static int wg_facts_load_impl(wg_scan **out, wg_scanner *sc, const char *file)
{
	if (!out || !sc || !file)
		return wg_null_arg("wg_facts_load");
	*out = NULL;
	/* O_NONBLOCK: a FIFO (or a device) where a stored file should be is refused below
	 * instead of blocking the open until something writes to it. */
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
	if (!f) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return wg_seterr(&sc->err, WG_EIO, "%s: %s", file, strerror(e));
	}
	struct stat st;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > FACTS_MAX_BYTES) {
		fclose(f);
		return wg_seterr(&sc->err, WG_EFORMAT, "%s: not a stored facts file (not a regular "
				 "file, or over 1 GiB)", file);
	}
	size_t n = (size_t)st.st_size;
	char *buf = malloc(n ? n : 1);
	if (!buf || fread(buf, 1, n, f) != n) {
		fclose(f);
		free(buf);
		return wg_seterr(&sc->err, buf ? WG_EIO : WG_ENOMEM, "%s: cannot read it", file);
	}
	fclose(f);
	char *json = buf;
	size_t jn = n;
	if (n >= 4 && !memcmp(buf, "\x28\xb5\x2f\xfd", 4)) {
		unsigned long long sz = ZSTD_getFrameContentSize(buf, n);
		if (sz == ZSTD_CONTENTSIZE_ERROR || sz == ZSTD_CONTENTSIZE_UNKNOWN ||
		    sz > FACTS_MAX_BYTES) {
			free(buf);
			return wg_seterr(&sc->err, WG_EFORMAT, "%s: a zstd frame %s", file,
					 sz == ZSTD_CONTENTSIZE_ERROR ? "that is broken"
					 : sz == ZSTD_CONTENTSIZE_UNKNOWN ? "without its size"
									 : "of over 1 GiB");
		}
		/* A bomb: stored facts compress about 3 to 15 times (zstd level 3); a small file
		 * that declares far more is refused before anything is allocated for it. */
		if (sz > (unsigned long long)n * FACTS_MAX_RATIO + FACTS_RATIO_SLACK) {
			free(buf);
			return wg_seterr(&sc->err, WG_EFORMAT, "%s: a zstd frame of %zu bytes that "
					 "declares %llu: more than %d times its size, which stored "
					 "facts never are (a compression bomb?)", file, n, sz,
					 FACTS_MAX_RATIO);
		}
		json = malloc(sz ? sz : 1);
		size_t got = json ? ZSTD_decompress(json, sz, buf, n) : 0;
		free(buf);
		if (!json || ZSTD_isError(got) || got != sz) {
			int e = json ? WG_EFORMAT : WG_ENOMEM;
			const char *why = json ? ZSTD_isError(got) ? ZSTD_getErrorName(got)
								   : "short frame" : "out of memory";
			free(json);
			return wg_seterr(&sc->err, e, "%s: cannot decompress it: %s", file, why);
		}
		jn = got;
	}
	int rc = wg_scan_from_facts(out, sc, json, jn);
	free(json);
	if (rc < 0) {
		char msg[1024];
		snprintf(msg, sizeof(msg), "%s", sc->err.msg);
		wg_seterr(&sc->err, rc, "%s: %s", file, msg);
	}
	return rc;
}

/* The scanner keeps the message; a failure also fills this thread's error record. */
WG_API int wg_facts_load(wg_scan **out, wg_scanner *sc, const char *file)
{
	if (sc)
		sc->err.msg[0] = '\0';
	return wg_error_from(sc ? &sc->err : NULL, wg_facts_load_impl(out, sc, file));
}

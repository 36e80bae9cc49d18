/*
 * The command line's one SHA-256 (digest.h), on OpenSSL's EVP.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"

static void to_hex(const unsigned char *md, char hex[65])
{
	for (unsigned i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

bool sha256_buffer(const void *buf, size_t len, char hex[65])
{
	unsigned char md[32];
	unsigned int n = 0;
	if (!EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL) || n != 32)
		return false;
	to_hex(md, hex);
	return true;
}

int sha256_fd(int fd, char hex[65], uint64_t *size)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned char buf[1 << 16], md[32];
	unsigned mdlen = 0;
	off_t off = 0;
	int rc = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1 ? 0 : -1;
	int e = 0;
	while (rc == 0) {
		ssize_t r = pread(fd, buf, sizeof(buf), off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			rc = -1;
		}
		if (r <= 0)
			break;
		off += r;
		if (EVP_DigestUpdate(c, buf, (size_t)r) != 1)
			rc = -1;
	}
	if (rc == 0 && EVP_DigestFinal_ex(c, md, &mdlen) != 1)
		rc = -1;
	EVP_MD_CTX_free(c);
	if (rc == 0)
		to_hex(md, hex);
	if (size)
		*size = (uint64_t)off;
	errno = e;
	return rc;
}

int sha256_file(const char *path, char hex[65], uint64_t *size, char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO is refused below, never waited on */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	errno = 0;
	int rc = sha256_fd(fd, hex, size);
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", path,
			 errno ? strerror(errno) : "cannot compute its sha256");
	close(fd);
	return rc;
}

bool is_sha256_hex(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (size_t i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

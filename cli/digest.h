/*
 * The command line's one SHA-256 of a file or a buffer (OpenSSL's EVP), as lower-case hex:
 * scan's records and --resume, check's --facts-dir, the lock's verification, serve's uploads.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_DIGEST_H
#define WG_CLI_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The sha256 of len bytes at buf; false when OpenSSL fails. */
bool sha256_buffer(const void *buf, size_t len, char hex[65]);
/** The sha256 of an open file from its first byte (read with pread: its offset stays where it
 * is) and its size (size may be NULL); -1 with errno on a read error. */
int sha256_fd(int fd, char hex[65], uint64_t *size);
/** The sha256 of the regular file at path and its size: something else there (a FIFO, a
 * device) is refused, never waited on. -1 with why in err ("PATH: reason"). */
int sha256_file(const char *path, char hex[65], uint64_t *size, char *err, size_t errlen);
/** A sha256 as the store and the records write it: 64 lower-case hex digits. */
bool is_sha256_hex(const char *s);

#endif

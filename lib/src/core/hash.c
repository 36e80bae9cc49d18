/*
 * sha256 through libcrypto (SHA-NI where the CPU has it) and RECORD's digest encoding.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <openssl/evp.h>
#include <pthread.h>

#include "core/core.h"

struct wg_sha256 {
	EVP_MD_CTX *md;
};

/* The digest fetched once: EVP_sha256() makes OpenSSL 3 look the implementation up again at
 * every init, which cost more than hashing a small member. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void fetch_sha256(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
	pthread_once(&sha256_once, fetch_sha256);
	return sha256_md ? sha256_md : EVP_sha256();
}

wg_sha256 *wg_sha256_new(void)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	if (!md)
		return NULL;
	if (EVP_DigestInit_ex2(md, sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		return NULL;
	}
	return (wg_sha256 *)md;
}

void wg_sha256_reset(wg_sha256 *h)
{
	EVP_DigestInit_ex2((EVP_MD_CTX *)h, sha256(), NULL);
}

void wg_sha256_update(wg_sha256 *h, const void *data, size_t n)
{
	EVP_DigestUpdate((EVP_MD_CTX *)h, data, n);
}

void wg_sha256_final(wg_sha256 *h, uint8_t out[32])
{
	unsigned int n = 32;
	EVP_DigestFinal_ex((EVP_MD_CTX *)h, out, &n);
}

void wg_sha256_free(wg_sha256 *h)
{
	EVP_MD_CTX_free((EVP_MD_CTX *)h);
}

void wg_b64url(char *out, const uint8_t *data, size_t n)
{
	/* RECORD uses the urlsafe alphabet without '=' padding (PEP 376/427). */
	int len = EVP_EncodeBlock((unsigned char *)out, data, (int)n);
	for (int i = 0; i < len; i++) {
		if (out[i] == '+')
			out[i] = '-';
		else if (out[i] == '/')
			out[i] = '_';
		else if (out[i] == '=') {
			out[i] = '\0';
			break;
		}
	}
}

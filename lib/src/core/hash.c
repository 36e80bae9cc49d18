/*
 * sha256 through libcrypto (SHA-NI where the CPU has it) and RECORD's digest encoding.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <openssl/evp.h>

#include "core/core.h"

struct wg_sha256 {
	EVP_MD_CTX *md;
};

wg_sha256 *wg_sha256_new(void)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	if (!md)
		return NULL;
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		return NULL;
	}
	return (wg_sha256 *)md;
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

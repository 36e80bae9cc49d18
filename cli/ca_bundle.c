/*
 * The CA certificates of https fetches (the fetch module, wheelgate serve's upstream and
 * fetch). libcurl verifies with the bundle its build names (Debian's:
 * /etc/ssl/certs/ca-certificates.crt), which the manylinux wheel (docs/install.md) carries
 * to systems that keep theirs elsewhere (Fedora and RHEL: /etc/pki/...): there the first
 * bundle of the usual places that exists is taken instead. $CURL_CA_BUNDLE (curl's tool) and
 * $SSL_CERT_FILE (OpenSSL's) name a bundle explicitly, as they do for curl and Python.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "ca_bundle.h"

static const char *const bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt",			/* Debian, Ubuntu, Arch, Gentoo */
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",	/* Fedora, RHEL 7+ and rebuilds */
	"/etc/pki/tls/certs/ca-bundle.crt",			/* Fedora, RHEL 6 */
	"/etc/ssl/ca-bundle.pem",				/* openSUSE, SLES */
	"/etc/ssl/cert.pem",					/* Alpine */
	"/etc/pki/tls/cacert.pem",				/* OpenELEC */
};

void wg_curl_ca_bundle(CURL *h)
{
	static const char *const vars[] = {"CURL_CA_BUNDLE", "SSL_CERT_FILE"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(*vars); i++) {
		const char *v = getenv(vars[i]);
		if (v && *v) {
			curl_easy_setopt(h, CURLOPT_CAINFO, v);
			return;
		}
	}
	char *own = NULL;
	if (curl_easy_getinfo(h, CURLINFO_CAINFO, &own) == CURLE_OK && own && access(own, R_OK) == 0)
		return;
	for (size_t i = 0; i < sizeof(bundles) / sizeof(*bundles); i++)
		if (access(bundles[i], R_OK) == 0) {
			curl_easy_setopt(h, CURLOPT_CAINFO, bundles[i]);
			return;
		}
}

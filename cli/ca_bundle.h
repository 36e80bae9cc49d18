/*
 * Which CA certificates libcurl verifies https servers with (cli/ca_bundle.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_CLI_CA_BUNDLE_H
#define WG_CLI_CA_BUNDLE_H

#include <curl/curl.h>

/* Sets h's CA bundle when libcurl's own would not do: $CURL_CA_BUNDLE or $SSL_CERT_FILE when
 * set, else, when the bundle libcurl was built with is not on this system, the first bundle
 * of the usual places that is. */
void wg_curl_ca_bundle(CURL *h);

#endif

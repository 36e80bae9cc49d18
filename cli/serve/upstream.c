/*
 * The upstream repository (libcurl). (Stub: filled in next.)
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "serve.h"

enum MHD_Result upstream_forward(server *s, struct MHD_Connection *c, request *r,
				 const unsigned char *body, size_t len)
{
	(void)s, (void)body, (void)len;
	return serve_answer_text(c, r, MHD_HTTP_BAD_GATEWAY,
				 "wheelgate serve: forwarding is not built yet\n");
}

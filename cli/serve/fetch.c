/*
 * POST /v1/check/url. (Stub: filled in next.)
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "serve.h"

enum MHD_Result fetch_check(server *s, struct MHD_Connection *c, request *r)
{
	(void)s;
	return serve_answer_text(c, r, MHD_HTTP_NOT_IMPLEMENTED,
				 "wheelgate serve: /v1/check/url is not built yet\n");
}

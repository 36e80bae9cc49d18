/*
 * The upload gate. (Stub: filled in next.)
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "serve.h"

enum MHD_Result upload_finish(server *s, struct MHD_Connection *c, request *r)
{
	(void)s;
	return serve_answer_text(c, r, MHD_HTTP_NOT_IMPLEMENTED,
				 "wheelgate serve: uploads are not built yet\n");
}

void upload_free(request *r)
{
	(void)r;
}

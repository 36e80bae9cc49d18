/*
 * Error codes, their texts, and the per-thread message of failed constructors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"

static _Thread_local char last_error[1024];

WG_API const char *wg_strerror(int code)
{
	switch (code) {
	case WG_OK: return "success";
	case WG_ERROR: return "error";
	case WG_ENOMEM: return "out of memory";
	case WG_EINVAL: return "invalid argument";
	case WG_EIO: return "cannot read input";
	case WG_EFORMAT: return "malformed input";
	case WG_ELIMIT: return "safety limit exceeded";
	case WG_EUNSAFE: return "unsafe content";
	case WG_ENOTFOUND: return "not found";
	case WG_EUNSUPPORTED: return "unsupported input";
	case WG_EDATA: return "broken rule or data file";
	case WG_EINTEGRITY: return "integrity check failed";
	default: return "unknown error";
	}
}

WG_API const char *wg_error_name(int code)
{
	switch (code) {
	case WG_OK: return "ok";
	case WG_ENOMEM: return "nomem";
	case WG_EINVAL: return "invalid";
	case WG_EIO: return "io";
	case WG_EFORMAT: return "format";
	case WG_ELIMIT: return "limit";
	case WG_EUNSAFE: return "unsafe";
	case WG_ENOTFOUND: return "notfound";
	case WG_EUNSUPPORTED: return "unsupported";
	case WG_EDATA: return "data";
	case WG_EINTEGRITY: return "integrity";
	default: return "error";
	}
}

int wg_seterr(wg_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

void wg_set_last_error(int code, const char *fmt, ...)
{
	(void)code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

WG_API const char *wg_error_last(void)
{
	return last_error;
}

WG_API const char *wg_version_string(void)
{
	return WG_VERSION_STRING;
}

WG_API void wg_free(void *ptr)
{
	free(ptr);
}

int wg_struct_version(const char *what, unsigned int version, unsigned int current)
{
	if (version >= 1 && version <= current)
		return WG_OK;
	wg_set_last_error(WG_EINVAL, "%s version %u is not supported (this library reads 1 to %u)",
			  what, version, current);
	return WG_EINVAL;
}

int wg_null_arg(const char *fn)
{
	wg_set_last_error(WG_EINVAL, "%s: a required argument is NULL or invalid", fn);
	return WG_EINVAL;
}

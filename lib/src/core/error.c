/*
 * Error codes, their texts, and the per-thread message of failed constructors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"

/* This thread's error record: one per thread, so no lock; its message points into
 * last_error. Zero-initialised: no error yet reads as code WG_OK, class NONE, "". */
static _Thread_local char last_error[1024];
static _Thread_local wg_error last_info;

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

int wg_seterr_class(wg_err *err, wg_error_class klass, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
		err->klass = code == WG_ENOMEM ? WG_ERROR_CLASS_NOMEM : klass;
	}
	return code;
}

int wg_err_copy(wg_err *dst, const wg_err *src, int code)
{
	if (dst && dst != src) {
		snprintf(dst->msg, sizeof(dst->msg), "%s", src->msg);
		dst->klass = src->klass;
	}
	if (dst)
		dst->code = code;
	return code;
}

int wg_error_from(wg_err *err, int rc)
{
	if (rc < 0 && err && err->msg[0])
		wg_set_error(err->klass, rc, "%s", err->msg);
	return rc;
}

void wg_set_error(wg_error_class klass, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	last_info.code = code;
	/* Running out of memory is one thing wherever it happens. */
	last_info.klass = code == WG_ENOMEM ? WG_ERROR_CLASS_NOMEM : klass;
}

WG_API const char *wg_error_last(void)
{
	return last_error;
}

WG_API const wg_error *wg_error_last_info(void)
{
	last_info.version = WG_ERROR_VERSION;
	last_info.message = last_error;
	return &last_info;
}

WG_API void wg_error_clear(void)
{
	last_error[0] = '\0';
	last_info.code = WG_OK;
	last_info.klass = WG_ERROR_CLASS_NONE;
}

WG_API const char *wg_error_class_name(int klass)
{
	switch (klass) {
	case WG_ERROR_CLASS_NONE: return "none";
	case WG_ERROR_CLASS_NOMEM: return "nomem";
	case WG_ERROR_CLASS_INVALID: return "invalid";
	case WG_ERROR_CLASS_DATA: return "data";
	case WG_ERROR_CLASS_RULES: return "rules";
	case WG_ERROR_CLASS_TARGET: return "target";
	case WG_ERROR_CLASS_GPU: return "gpu";
	case WG_ERROR_CLASS_VARIANTS: return "variants";
	case WG_ERROR_CLASS_STORE: return "store";
	case WG_ERROR_CLASS_INPUT: return "input";
	case WG_ERROR_CLASS_ZIP: return "zip";
	case WG_ERROR_CLASS_WHEEL: return "wheel";
	case WG_ERROR_CLASS_ELF: return "elf";
	case WG_ERROR_CLASS_FATBIN: return "fatbin";
	case WG_ERROR_CLASS_ENV: return "env";
	default: return "unknown";
	}
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
	wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
		     "%s version %u is not supported (this library reads 1 to %u)",
			  what, version, current);
	return WG_EINVAL;
}

int wg_null_arg(const char *fn)
{
	wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
		     "%s: a required argument is NULL or invalid", fn);
	return WG_EINVAL;
}

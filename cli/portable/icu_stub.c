/*
 * The manylinux wheel's stand-in for ICU's libicuuc (-DWG_PORTABLE=ON, docs/install.md): the
 * wheel vendors Debian's libxml2.so.2 for the fetch module (libxml2.a is not
 * position-independent), and libxml2 needs libicuuc only for its last fallback when it meets
 * a character encoding that neither libxml2 itself nor glibc's iconv knows. Debian 12's
 * libicuuc.so.72 needs std::condition_variable::wait@GLIBCXX_3.4.30 (GCC 12: manylinux_2_35)
 * and libicudata's 31 MB; this library has the soname and the seven functions libxml2 calls,
 * and ucnv_open fails, so such an encoding is reported unsupported by libxml2, as it is by a
 * libxml2 built without ICU. The fetch module parses index pages as UTF-8
 * (cli/lock_fetch.c); a page's <meta charset> goes through glibc's iconv first (ctest
 * portable-wheel reads an ISO-8859-1 page). Nothing else loads this library: it is in the
 * wheel under a hashed name.
 * WG_ICU_SUFFIX is ICU's major version, which its C API appends to every name.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stddef.h>
#include <stdint.h>

#define WG_ICU_CAT2(a, b) a##_##b
#define WG_ICU_CAT(a, b) WG_ICU_CAT2(a, b)
#define WG_ICU(name) WG_ICU_CAT(name, WG_ICU_SUFFIX)
#define WG_ICU_API __attribute__((visibility("default")))

typedef int UErrorCode;		/* ICU's enum UErrorCode */
typedef int8_t UBool;
typedef uint16_t UChar;
typedef struct UConverter UConverter;
typedef void (*UConverterCallback)(void);

enum { U_FILE_ACCESS_ERROR = 4, U_UNSUPPORTED_ERROR = 16 };

WG_ICU_API UConverter *WG_ICU(ucnv_open)(const char *name, UErrorCode *err);
WG_ICU_API void WG_ICU(ucnv_close)(UConverter *cnv);
WG_ICU_API void WG_ICU(ucnv_setToUCallBack)(UConverter *cnv, UConverterCallback action,
	const void *context, UConverterCallback *old_action, const void **old_context, UErrorCode *err);
WG_ICU_API void WG_ICU(ucnv_setFromUCallBack)(UConverter *cnv, UConverterCallback action,
	const void *context, UConverterCallback *old_action, const void **old_context, UErrorCode *err);
WG_ICU_API void WG_ICU(ucnv_convertEx)(UConverter *target_cnv, UConverter *source_cnv,
	char **target, const char *target_limit, const char **source, const char *source_limit,
	UChar *pivot_start, UChar **pivot_source, UChar **pivot_target, const UChar *pivot_limit,
	UBool reset, UBool flush, UErrorCode *err);
WG_ICU_API void WG_ICU(UCNV_TO_U_CALLBACK_STOP)(const void *context, void *args,
	const char *units, int32_t length, int reason, UErrorCode *err);
WG_ICU_API void WG_ICU(UCNV_FROM_U_CALLBACK_STOP)(const void *context, void *args,
	const UChar *units, int32_t length, int32_t code_point, int reason, UErrorCode *err);

static void fail(UErrorCode *err, UErrorCode code)
{
	if (err != NULL && *err <= 0)
		*err = code;
}

UConverter *WG_ICU(ucnv_open)(const char *name, UErrorCode *err)
{
	(void)name;
	fail(err, U_FILE_ACCESS_ERROR);	/* what ICU says of a converter it has no data for */
	return NULL;
}

void WG_ICU(ucnv_close)(UConverter *cnv)
{
	(void)cnv;
}

void WG_ICU(ucnv_setToUCallBack)(UConverter *cnv, UConverterCallback action,
	const void *context, UConverterCallback *old_action, const void **old_context, UErrorCode *err)
{
	(void)cnv, (void)action, (void)context, (void)old_action, (void)old_context;
	fail(err, U_UNSUPPORTED_ERROR);
}

void WG_ICU(ucnv_setFromUCallBack)(UConverter *cnv, UConverterCallback action,
	const void *context, UConverterCallback *old_action, const void **old_context, UErrorCode *err)
{
	(void)cnv, (void)action, (void)context, (void)old_action, (void)old_context;
	fail(err, U_UNSUPPORTED_ERROR);
}

void WG_ICU(ucnv_convertEx)(UConverter *target_cnv, UConverter *source_cnv,
	char **target, const char *target_limit, const char **source, const char *source_limit,
	UChar *pivot_start, UChar **pivot_source, UChar **pivot_target, const UChar *pivot_limit,
	UBool reset, UBool flush, UErrorCode *err)
{
	(void)target_cnv, (void)source_cnv, (void)target, (void)target_limit, (void)source;
	(void)source_limit, (void)pivot_start, (void)pivot_source, (void)pivot_target;
	(void)pivot_limit, (void)reset, (void)flush;
	fail(err, U_UNSUPPORTED_ERROR);
}

void WG_ICU(UCNV_TO_U_CALLBACK_STOP)(const void *context, void *args,
	const char *units, int32_t length, int reason, UErrorCode *err)
{
	(void)context, (void)args, (void)units, (void)length, (void)reason, (void)err;
}

void WG_ICU(UCNV_FROM_U_CALLBACK_STOP)(const void *context, void *args,
	const UChar *units, int32_t length, int32_t code_point, int reason, UErrorCode *err)
{
	(void)context, (void)args, (void)units, (void)length, (void)code_point, (void)reason, (void)err;
}

/*
 * A target's facts read back (wg_target_get_info): what the check document's "target" says,
 * for callers that read a report without its documents (the Python binding).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "model/model.h"

WG_API int wg_target_get_info(wg_target_info *out, const wg_target *t)
{
	if (!out || !t)
		return wg_null_arg("wg_target_get_info");
	if (wg_struct_version("wg_target_info", out->version, WG_TARGET_INFO_VERSION) < 0)
		return WG_EINVAL;
	out->python_major = t->python_major;
	out->python_minor = t->python_minor;
	out->torch = t->torch[0] ? t->torch : NULL;
	out->cxx11abi = t->cxx11abi;
	out->cuda_major = t->cuda_major;
	out->cuda_minor = t->cuda_minor;
	out->gpu_auto = t->gpu_auto;
	out->gpu_auto_found = t->gpu_auto_found;
	out->gpu_auto_none = t->gpu_auto_none[0] ? t->gpu_auto_none : NULL;
	return WG_OK;
}

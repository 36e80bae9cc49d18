/*
 * What an opened environment says of itself (env.c opens it): its facts and lists for the
 * caller (wg_env_get_info, wg_env_list_*), the wheelgate.env/1 document (wg_env_to_json), and
 * a target filled from it (wg_env_fill_target, wg_target_set_env: the model's target is told
 * of its environment here, since the loader comes after the model).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ENV /* wg_seterr: what fails here */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"

WG_API int wg_env_get_info(wg_env_info *out, const wg_env *e)
{
	if (!out || !e)
		return wg_null_arg("wg_env_get_info");
	if (wg_struct_version("wg_env_info", out->version, WG_ENV_INFO_VERSION) < 0)
		return WG_EINVAL;
	out->site_packages = e->site;
	out->python = e->python;
	out->python_version = e->python_version;
	out->ext_suffix = e->ext_suffix;
	out->torch_dir = e->torch_dir;
	out->torch_version = e->torch_version;
	out->torch_cuda = e->torch_cuda;
	out->torch_cxx11abi = e->torch_cxx11abi;
	out->libraries = e->libs.len;
	out->cache_hits = e->cache_hits;
	return WG_OK;
}

static const wg_strlist *list_of(const wg_env *e, wg_env_list l)
{
	return l == WG_ENV_LIB_DIRS ? &e->lib_dirs : l == WG_ENV_CUDA_LIBS ? &e->cuda_libs
		: l == WG_ENV_NATIVE_PACKAGES ? &e->native_packages
		: l == WG_ENV_DISTRIBUTIONS ? &e->dists : NULL;
}

WG_API size_t wg_env_list_count(const wg_env *e, wg_env_list l)
{
	const wg_strlist *s = e ? list_of(e, l) : NULL;
	return s ? s->n : 0;
}

WG_API const char *wg_env_list_item(const wg_env *e, wg_env_list l, size_t i)
{
	const wg_strlist *s = e ? list_of(e, l) : NULL;
	return s && i < s->n ? s->v[i] : NULL;
}

WG_API int wg_env_fill_target(wg_env *e, wg_target *t)
{
	if (!e || !t) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_env_fill_target: no %s", e ? "target" : "environment");
		return WG_EINVAL;
	}
	unsigned a, b;
	if (!t->python_major && e->python_version && sscanf(e->python_version, "%u.%u", &a, &b) == 2) {
		t->python_major = a;
		t->python_minor = b;
	}
	if (!t->torch[0] && e->torch_version) {
		wg_target tmp;
		wg_target_clear(&tmp);
		char spec[96];
		snprintf(spec, sizeof(spec), "torch=%s", e->torch_version);
		if (wg_target_parse(&tmp, spec) == WG_OK) {
			memcpy(t->torch, tmp.torch, sizeof(t->torch));
			t->torch_major = tmp.torch_major;
			t->torch_minor = tmp.torch_minor;
			if (!t->cuda_major) {
				t->cuda_major = tmp.cuda_major;
				t->cuda_minor = tmp.cuda_minor;
			}
		}
	}
	if (!t->cuda_major && e->torch_cuda && sscanf(e->torch_cuda, "%u.%u", &a, &b) == 2) {
		t->cuda_major = a;
		t->cuda_minor = b;
	}
	if (t->cxx11abi < 0)
		t->cxx11abi = e->torch_cxx11abi;
	t->env = e;
	return WG_OK;
}

/* The target's environment (the model's wg_target, filled here: the loader comes after the
 * model, so the target is told of its environment by the loader, never the other way). */
WG_API int wg_target_set_env(wg_target *t, wg_env *env)
{
	if (!t) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL, "wg_target_set_env: no target");
		return WG_EINVAL;
	}
	if (!env) {
		t->env = NULL;
		return WG_OK;
	}
	return wg_env_fill_target(env, t);
}

WG_API int wg_env_to_json(char **out, const wg_env *e)
{
	if (!out || !e)
		return wg_null_arg("wg_env_to_json");
	*out = NULL;
	json_t *lists[3];
	for (int l = 0; l < 3; l++) {
		lists[l] = json_array();
		for (size_t i = 0; lists[l] && i < wg_env_list_count(e, (wg_env_list)l); i++)
			json_array_append_new(lists[l], json_string(wg_env_list_item(e, (wg_env_list)l, i)));
	}
#define S(x) ((x) ? json_string(x) : json_null())
	json_t *j = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:{s:o, s:o, s:o, s:o}, s:o, s:o, s:o}",
		"schema", "wheelgate.env/1", "path", e->path, "site_packages", e->site,
		"python", S(e->python), "python_version", S(e->python_version),
		"ext_suffix", S(e->ext_suffix),
		"torch", "dir", S(e->torch_dir), "version", S(e->torch_version), "cuda", S(e->torch_cuda),
		"cxx11abi", e->torch_cxx11abi < 0 ? json_null() : json_boolean(e->torch_cxx11abi),
		"library_dirs", lists[WG_ENV_LIB_DIRS], "cuda_libraries", lists[WG_ENV_CUDA_LIBS],
		"native_packages", lists[WG_ENV_NATIVE_PACKAGES]);
#undef S
	if (!j)
		return WG_ENOMEM;
	*out = wg_json_dump(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	return *out ? WG_OK : WG_ENOMEM;
}

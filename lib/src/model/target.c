/*
 * The install target: the Python, torch, C++ ABI, CUDA and GPUs a wheel is checked against,
 * from "--target python=3.12,torch=2.9.1+cu128,cxx11abi=0,cuda=12.8" and --gpu. Opaque to
 * callers (target.h holds the struct), so that it can grow.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

void wg_target_clear(wg_target *t)
{
	memset(t, 0, sizeof(*t));
	t->cxx11abi = -1;
}

WG_API int wg_target_new(wg_target **out)
{
	if (!out) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_target_new: no place for the target");
		return WG_EINVAL;
	}
	*out = malloc(sizeof(**out));
	if (!*out) {
		wg_set_error(WG_ERROR_CLASS_TARGET, WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	wg_target_clear(*out);
	return WG_OK;
}

WG_API void wg_target_free(wg_target *t)
{
	if (t)
		wg_target_variants_free(t);
	free(t);
}

/* A fact or spec the target cannot take (class TARGET), or, with WG_ERROR_CLASS_INVALID, a
 * call refused for its arguments. */
static int refuse(wg_error_class klass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(wg_error_class klass, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wg_set_error(klass, WG_EINVAL, "%s", msg);
	return WG_EINVAL;
}
#define bad(...) refuse(WG_ERROR_CLASS_TARGET, __VA_ARGS__)
#define bad_arg(...) refuse(WG_ERROR_CLASS_INVALID, __VA_ARGS__)

static bool two_numbers(const char *v, unsigned *major, unsigned *minor)
{
	char tail;
	return sscanf(v, "%u.%u%c", major, minor, &tail) == 2;
}

static void set_sysver(wg_target *t, const wg_sysver *sv)
{
	for (size_t i = 0; i < t->nsysvers; i++)
		if (!strcmp(t->sysvers[i].family, sv->family)) {
			t->sysvers[i] = *sv;
			return;
		}
	if (t->nsysvers < WG_ARRAY_LEN(t->sysvers))
		t->sysvers[t->nsysvers++] = *sv;
}

/* One fact of the target machine, key=value as --target names it. */
static int set_fact(wg_target *t, const char *k, const char *v)
{
	unsigned a, b;
	if (!strcmp(k, "python")) {
		if (!two_numbers(v, &a, &b) || a < 2 || a > 4)
			return bad("--target: python=%s: expected a version like 3.12", v);
		t->python_major = a;
		t->python_minor = b;
	} else if (!strcmp(k, "torch")) {
		char tail;
		if (strlen(v) >= sizeof(t->torch) || sscanf(v, "%u.%u%c", &a, &b, &tail) < 2 ||
		    (sscanf(v, "%u.%u%c", &a, &b, &tail) == 3 && tail != '.' && tail != '+'))
			return bad("--target: torch=%s: expected a version like 2.9.1 or "
				   "2.9.1+cu128", v);
		snprintf(t->torch, sizeof(t->torch), "%s", v);
		t->torch_major = a;
		t->torch_minor = b;
		/* torch's local label says its CUDA: +cu128 is 12.8, +cu130 is 13.0. */
		const char *cu = strstr(v, "+cu");
		unsigned digits;
		if (cu && !t->cuda_major && sscanf(cu + 3, "%u", &digits) == 1 && digits >= 100) {
			t->cuda_major = digits / 10;
			t->cuda_minor = digits % 10;
		}
	} else if (!strcmp(k, "cxx11abi")) {
		if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "TRUE") || !strcmp(v, "new"))
			t->cxx11abi = 1;
		else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "FALSE") ||
			 !strcmp(v, "old"))
			t->cxx11abi = 0;
		else
			return bad("--target: cxx11abi=%s: expected 1 or 0 (true/false)", v);
	} else if (!strcmp(k, "glibc") || !strcmp(k, "glibcxx") || !strcmp(k, "cxxabi") ||
		   !strcmp(k, "gcc")) {
		char full[80], fam[16];
		wg_sysver sv;
		snprintf(full, sizeof(full), "%s_%s", !strcmp(k, "glibc") ? "GLIBC"
			 : !strcmp(k, "glibcxx") ? "GLIBCXX" : !strcmp(k, "cxxabi") ? "CXXABI" : "GCC", v);
		if (!wg_ver_parse(full, fam, sizeof(fam), sv.v, &sv.n))
			return bad("--target: %s=%s: expected a version like 2.39", k, v);
		snprintf(sv.family, sizeof(sv.family), "%s", fam);
		set_sysver(t, &sv);
	} else if (!strcmp(k, "platform")) {
		wg_policy pol;
		bool known = wg_policy_for_tag(&pol, v);
		bool musl = wg_has_prefix(v, "musllinux_");
		if (!known && !musl) {
			return bad("--target: platform=%s: expected a manylinux or musllinux tag "
				   "(manylinux_2_28_x86_64, manylinux2014_x86_64, musllinux_1_2_x86_64)", v);
		}
		snprintf(t->platform, sizeof(t->platform), "%s", v);
		t->musl = musl;
		static const char *const fams[] = {"GLIBC", "GLIBCXX", "CXXABI", "GCC"};
		for (size_t i = 0; known && i < 4; i++) {
			const wg_sysver *l = wg_policy_limit(&pol, fams[i]);
			bool have = false;
			for (size_t j = 0; j < t->nsysvers; j++)
				have = have || !strcmp(t->sysvers[j].family, fams[i]);
			if (l && !have) /* an explicit glibc= given before wins */
				set_sysver(t, l);
		}
	} else if (!strcmp(k, "cuda")) {
		if (!two_numbers(v, &a, &b) || a < 7 || a > 99)
			return bad("--target: cuda=%s: expected a version like 12.8", v);
		t->cuda_major = a;
		t->cuda_minor = b;
	} else {
		return bad("--target: unknown key '%s' (python, torch, cxx11abi, cuda, glibc, "
			   "glibcxx, platform; GPUs go in --gpu)", k);
	}
	return WG_OK;
}

WG_API int wg_target_parse(wg_target *t, const char *spec)
{
	if (!t || !spec)
		return bad_arg("wg_target_parse: no %s", t ? "spec" : "target");
	char buf[512];
	if (strlen(spec) >= sizeof(buf))
		return bad("--target: too long");
	snprintf(buf, sizeof(buf), "%s", spec);
	char *save = NULL;
	for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (!eq || eq == item || !eq[1])
			return bad("--target: '%s' is not key=value (keys: python, torch, cxx11abi, "
				   "cuda)", item);
		*eq = '\0';
		int rc = set_fact(t, item, eq + 1);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

WG_API int wg_target_set(wg_target *t, const char *key, const char *value)
{
	if (!t || !key || !value)
		return bad_arg("wg_target_set: no %s", !t ? "target" : !key ? "key" : "value");
	if (!strcmp(key, "profile")) {
		int p = wg_profile_parse(value);
		if (p < 0)
			return bad("profile=%s: expected install, publish or auto", value);
		t->profile = p;
		return WG_OK;
	}
	if (!*value)
		return bad("--target: %s has no value", key);
	return set_fact(t, key, value);
}

WG_API size_t wg_target_gpu_count(const wg_target *t)
{
	return t ? t->ngpus : 0;
}

WG_API int wg_target_gpu(wg_gpu *out, const wg_target *t, size_t i)
{
	int rc;
	if (!out || !t)
		return bad_arg("wg_target_gpu: no %s", t ? "place for the GPU" : "target");
	if ((rc = wg_struct_version("wg_gpu", out->version, WG_GPU_VERSION)) < 0)
		return rc;
	if (i >= t->ngpus) {
		wg_set_error(WG_ERROR_CLASS_TARGET, WG_ENOTFOUND,
			     "the target has %zu GPUs, no GPU %zu", t->ngpus, i);
		return WG_ENOTFOUND;
	}
	out->cc_major = t->gpus[i].cc_major;
	out->cc_minor = t->gpus[i].cc_minor;
	out->name = t->gpus[i].name;
	return WG_OK;
}

WG_API int wg_target_add_gpu(wg_target *t, const wg_context *ctx, const char *spec)
{
	if (!t || !ctx || !spec)
		return bad_arg("wg_target_add_gpu: no %s", !t ? "target" : !ctx ? "context" : "GPU");
	if (t->ngpus == WG_MAX_GPUS) {
		wg_set_error(WG_ERROR_CLASS_TARGET, WG_ELIMIT, "at most %d GPUs", WG_MAX_GPUS);
		return WG_ELIMIT;
	}
	if (!strcmp(spec, "auto")) {
		/* The GPUs of this machine (NVML); none is not an error: no GPU rule applies. */
		char why[256] = "";
		size_t n = 0;
		wg_gpu found[WG_MAX_GPUS];
		wg_gpu_detect(ctx, found, WG_MAX_GPUS, &n, why, sizeof(why));
		if (!n && !why[0]) /* NVML saw devices, but none gave its compute capability */
			snprintf(why, sizeof(why), "NVML gives no device's compute capability");
		for (size_t i = 0; i < n && t->ngpus < WG_MAX_GPUS; i++) {
			bool dup = false;
			for (size_t k = 0; k < t->ngpus; k++)
				dup = dup || (t->gpus[k].cc_major == found[i].cc_major &&
					      t->gpus[k].cc_minor == found[i].cc_minor);
			if (!dup)
				t->gpus[t->ngpus++] = found[i];
		}
		/* Asking is a statement about the target, this machine, even when it finds none:
		 * the profile stays install, and the GPU rules say why they did not apply. */
		t->gpu_auto = 1;
		t->gpu_auto_found = n; /* the same machine each time */
		if (!n && !t->gpu_auto_none[0])
			snprintf(t->gpu_auto_none, sizeof(t->gpu_auto_none), "%s", why);
		/* The notice stays on the target (wg_target_notice), never in the error record;
		 * emptying the record keeps callers of 0.1.0, which read the notice there, from
		 * taking an older failure for it. */
		if (!n && !t->notice[0])
			snprintf(t->notice, sizeof(t->notice), "no local GPU (%s)", why);
		wg_error_clear();
		return WG_OK;
	}
	wg_gpu g = WG_GPU_INIT;
	int rc = wg_gpu_parse(&g, ctx, spec);
	if (rc < 0)
		return rc;
	t->gpus[t->ngpus++] = g;
	return WG_OK;
}

WG_API const char *wg_target_notice(const wg_target *t)
{
	return t && t->notice[0] ? t->notice : NULL;
}

WG_API const char *wg_profile_name(wg_profile p)
{
	return p == WG_PROFILE_INSTALL ? "install" : p == WG_PROFILE_PUBLISH ? "publish" : "auto";
}

WG_API int wg_profile_parse(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "install"))
		return WG_PROFILE_INSTALL;
	if (!strcmp(name, "publish"))
		return WG_PROFILE_PUBLISH;
	if (!strcmp(name, "auto"))
		return WG_PROFILE_AUTO;
	return -1;
}

WG_API wg_profile wg_target_profile(const wg_target *t)
{
	if (!t)
		return WG_PROFILE_PUBLISH;
	if (t->profile == WG_PROFILE_INSTALL || t->profile == WG_PROFILE_PUBLISH)
		return (wg_profile)t->profile;
	/* --gpu auto names this machine as the target even when it finds no GPU: without it
	 * the profile would flip to publish and switch the system rules off unseen. */
	bool machine = t->env || t->python_major || t->torch[0] || t->cxx11abi >= 0 ||
		       t->cuda_major || t->ngpus || t->gpu_auto || t->platform[0] || t->musl ||
		       t->nsysvers;
	return machine ? WG_PROFILE_INSTALL : WG_PROFILE_PUBLISH;
}

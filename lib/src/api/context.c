/*
 * The context (options, the shipped classifier and CUDA data) and the scanner (per-thread
 * matching state and the last error).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "core/data.h"
#include "api/api.h"

/* ---------------------------------------------------------------------------------------- */
/* context and scanner                                                                      */

static size_t options_size(unsigned int version)
{
	return version == 1 ? WG_OPTIONS_V1_SIZE : version == 2 ? WG_OPTIONS_V2_SIZE
	       : version == 3 ? WG_OPTIONS_V3_SIZE : version == 4 ? WG_OPTIONS_V4_SIZE
	       : sizeof(wg_options);
}

WG_API int wg_options_init(wg_options *opts, unsigned int version)
{
	if (!opts)
		return wg_null_arg("wg_options_init");
	if (wg_struct_version("wg_options", version, WG_OPTIONS_VERSION) < 0)
		return WG_EINVAL;
	wg_options def = WG_OPTIONS_INIT;
	/* Only the fields of that version: an older caller's struct ends earlier. */
	memcpy(opts, &def, options_size(version));
	opts->version = version;
	return WG_OK;
}

static const wg_data_file *find_data(const char *path)
{
	for (const wg_data_file *f = wg_data_files; f->path; f++)
		if (strcmp(f->path, path) == 0)
			return f;
	return NULL;
}

WG_API int wg_context_new(wg_context **out, const wg_options *opts)
{
	wg_err err = {0};
	int rc;
	if (!out)
		return wg_null_arg("wg_context_new");
	*out = NULL;
	if (opts && wg_struct_version("wg_options", opts->version, WG_OPTIONS_VERSION) < 0)
		return WG_EINVAL;
	wg_context *ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		wg_set_error(WG_ERROR_CLASS_DATA, WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	wg_options_init(&ctx->opts, WG_OPTIONS_VERSION);
	pthread_mutex_init(&ctx->pool_lock, NULL);
	if (opts) {
		/* An older caller's options: its fields; the later ones keep their defaults. */
		memcpy(&ctx->opts, opts, options_size(opts->version));
		ctx->opts.version = WG_OPTIONS_VERSION;
	}
	const wg_data_file *f = find_data("classify/string-abi.yaml");
	if (!f) {
		wg_set_error(WG_ERROR_CLASS_DATA, WG_EDATA,
			     "rules/classify/string-abi.yaml is missing from the build");
		free(ctx);
		return WG_EDATA;
	}
	if ((rc = wg_classifier_load(&ctx->classifier, "rules/classify/string-abi.yaml", f->text,
				     f->len, &err)) < 0) {
		wg_set_error(WG_ERROR_CLASS_DATA, rc, "%s", err.msg);
		free(ctx);
		return rc;
	}
	const wg_data_file *cf = find_data("gpu/cuda.yaml");
	if (!cf || (rc = wg_cuda_data_load(&ctx->cuda, "rules/gpu/cuda.yaml", cf->text, cf->len,
					     &err)) < 0) {
		wg_set_error(WG_ERROR_CLASS_DATA, WG_EDATA,
			     "%s", cf ? err.msg : "rules/gpu/cuda.yaml is missing");
		wg_classifier_free(ctx->classifier);
		free(ctx);
		return WG_EDATA;
	}
	*out = ctx;
	return WG_OK;
}

WG_API void wg_context_free(wg_context *ctx)
{
	if (!ctx)
		return;
	wg_pool_free(ctx->pool);
	pthread_mutex_destroy(&ctx->pool_lock);
	wg_classifier_free(ctx->classifier);
	wg_cuda_data_free(ctx->cuda);
	free(ctx);
}

WG_API int wg_scanner_new(wg_scanner **out, wg_context *ctx)
{
	if (!out || !ctx)
		return wg_null_arg("wg_scanner_new");
	wg_scanner *s = calloc(1, sizeof(*s));
	if (!s || wg_matcher_new(&s->matcher, ctx->classifier) < 0) {
		free(s);
		wg_set_error(WG_ERROR_CLASS_DATA, WG_ENOMEM, "out of memory");
		return WG_ENOMEM;
	}
	s->ctx = ctx;
	*out = s;
	return WG_OK;
}

WG_API void wg_scanner_free(wg_scanner *s)
{
	if (!s)
		return;
	wg_matcher_free(s->matcher);
	free(s);
}

WG_API const char *wg_scanner_error(const wg_scanner *s)
{
	return s ? s->err.msg : "no scanner";
}

WG_API int wg_context_run(wg_context *ctx, size_t n, wg_job_fn fn, void *arg)
{
	if (!ctx || !fn)
		return wg_null_arg("wg_context_run");
	wg_pool_run(wg_context_pool(ctx), n, fn, arg);
	return WG_OK;
}

WG_API unsigned int wg_context_slots(wg_context *ctx)
{
	return ctx ? wg_pool_slots(wg_context_pool(ctx)) : 1;
}

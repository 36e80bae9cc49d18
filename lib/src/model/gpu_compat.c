/*
 * The GPU compatibility model (fatbin-format.md, section 6): which SASS or PTX image of an
 * object can run on a GPU of a given compute capability, and how; GPU names and PTX ISA
 * versions come from data (rules/gpu/cuda.yaml).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_GPU /* wg_seterr: what fails here */
#include <ctype.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

/* The oldest compute capability major --gpu accepts (Kepler). */
#define WG_GPU_OLDEST_MAJOR 3u

struct wg_cuda_data {
	struct gpu_row {
		char *name, *key;
		unsigned major, minor;
	} *gpus;
	size_t ngpus;
	struct isa_row {
		unsigned isa_major, isa_minor, cuda_major, cuda_minor;
	} *isas;
	size_t nisas;
};

/* "RTX 4090" -> "rtx4090": names compare without case, spaces or dashes. */
static void name_key(char *out, size_t n, const char *s)
{
	size_t o = 0;
	for (; *s && o + 1 < n; s++)
		if (*s != ' ' && *s != '-' && *s != '_')
			out[o++] = (char)tolower((unsigned char)*s);
	out[o] = '\0';
}

/* Two letters of keys (lower case) that match: the letter O typed for a zero costs nothing,
 * so "H2O" is H20 first. */
static bool same_key_letter(char x, char y)
{
	return x == y || (x == 'o' && y == '0');
}

/* The known GPU whose key is fewest edits from key (a typo: "H2O" for H20), or NULL when
 * none is within a third of its length (at least 1). */
static const struct gpu_row *closest(const wg_cuda_data *d, const char *key)
{
	const struct gpu_row *best = NULL;
	size_t bd = SIZE_MAX, limit = strlen(key) / 3 ? strlen(key) / 3 : 1;
	for (size_t i = 0; i < d->ngpus; i++) {
		size_t e = wg_edit_distance(key, d->gpus[i].key, same_key_letter);
		if (e < bd) {
			bd = e;
			best = &d->gpus[i];
		}
	}
	return bd <= limit ? best : NULL;
}

static bool parse_version(const char *s, unsigned *major, unsigned *minor)
{
	char tail;
	return s && sscanf(s, "%u.%u%c", major, minor, &tail) == 2;
}

void wg_cuda_data_free(wg_cuda_data *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ngpus; i++) {
		free(d->gpus[i].name);
		free(d->gpus[i].key);
	}
	free(d->gpus);
	free(d->isas);
	free(d);
}

int wg_cuda_data_load(wg_cuda_data **out, const char *name, const char *text, size_t len,
		      wg_err *err)
{
	char where[512];
	wg_yaml_doc *doc = NULL;
	int rc;
	*out = NULL;
	wg_cuda_data *d = calloc(1, sizeof(*d));
	if (!d)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	if ((rc = wg_yaml_parse(&doc, name, text, len, err)) < 0)
		goto done;
	const wg_yaml_node *root = wg_yaml_root(doc);
	const char *kind = wg_yaml_scalar(wg_yaml_get(root, "kind"));
	const wg_yaml_node *gpus = wg_yaml_get(root, "gpus"), *isas = wg_yaml_get(root, "ptx_isa");
	if (!kind || strcmp(kind, "cuda") || !wg_yaml_is_seq(gpus) || !wg_yaml_is_seq(isas)) {
		rc = wg_seterr(err, WG_EDATA, "%s: expected 'kind: cuda' with 'gpus' and 'ptx_isa' lists",
			       wg_yaml_where(root, where, sizeof(where)));
		goto done;
	}
	d->gpus = calloc(wg_yaml_len(gpus) + 1, sizeof(*d->gpus));
	d->isas = calloc(wg_yaml_len(isas) + 1, sizeof(*d->isas));
	if (!d->gpus || !d->isas) {
		rc = wg_seterr(err, WG_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < wg_yaml_len(gpus); i++) {
		const wg_yaml_node *g = wg_yaml_item(gpus, i);
		const char *gname = wg_yaml_scalar(wg_yaml_get(g, "name"));
		struct gpu_row *r = &d->gpus[d->ngpus];
		if (!gname || !parse_version(wg_yaml_scalar(wg_yaml_get(g, "cc")), &r->major, &r->minor)) {
			rc = wg_seterr(err, WG_EDATA, "%s: a GPU needs a name and a cc like \"8.9\"",
				       wg_yaml_where(g, where, sizeof(where)));
			goto done;
		}
		char key[64];
		name_key(key, sizeof(key), gname);
		if (!(r->name = strdup(gname)) || !(r->key = strdup(key))) {
			rc = wg_seterr(err, WG_ENOMEM, "out of memory");
			goto done;
		}
		d->ngpus++;
	}
	for (size_t i = 0; i < wg_yaml_len(isas); i++) {
		const wg_yaml_node *g = wg_yaml_item(isas, i);
		struct isa_row *r = &d->isas[d->nisas];
		if (!parse_version(wg_yaml_scalar(wg_yaml_get(g, "isa")), &r->isa_major, &r->isa_minor) ||
		    !parse_version(wg_yaml_scalar(wg_yaml_get(g, "cuda")), &r->cuda_major,
				   &r->cuda_minor)) {
			rc = wg_seterr(err, WG_EDATA, "%s: a ptx_isa row needs isa and cuda like \"9.0\"",
				       wg_yaml_where(g, where, sizeof(where)));
			goto done;
		}
		d->nisas++;
	}
	rc = WG_OK;
done:
	wg_yaml_free(doc);
	if (rc < 0)
		wg_cuda_data_free(d);
	else
		*out = d;
	return rc;
}

WG_API int wg_gpu_parse(wg_gpu *out, const wg_context *ctx, const char *spec)
{
	unsigned major, minor, sm;
	char tail;
	if (!out || !ctx || !spec)
		return wg_null_arg("wg_gpu_parse");
	if (wg_struct_version("wg_gpu", out->version, WG_GPU_VERSION) < 0)
		return WG_EINVAL;
	const wg_cuda_data *d = ctx->cuda;
	out->name = NULL;
	/* sm_89, compute_89, sm_100 (and sm_90a: the suffix names code, not a GPU) */
	const char *digits = !strncmp(spec, "sm_", 3) ? spec + 3
			     : !strncmp(spec, "compute_", 8) ? spec + 8 : NULL;
	if (digits && sscanf(digits, "%u%c", &sm, &tail) >= 1 && sm >= 10 && sm < 1000 &&
	    (strlen(digits) == (sm >= 100 ? 3u : 2u) ||
	     (strlen(digits) == (sm >= 100 ? 4u : 3u) && (tail == 'a' || tail == 'f')))) {
		out->cc_major = sm / 10;
		out->cc_minor = sm % 10;
	} else if (parse_version(spec, &major, &minor) && major >= 1 && major < 100 && minor < 10) {
		out->cc_major = major;
		out->cc_minor = minor;
	} else {
		out->cc_major = 0;
		char key[64];
		name_key(key, sizeof(key), spec);
		for (size_t i = 0; i < d->ngpus; i++)
			if (!strcmp(d->gpus[i].key, key)) {
				out->cc_major = d->gpus[i].major;
				out->cc_minor = d->gpus[i].minor;
				out->name = d->gpus[i].name;
				return WG_OK;
			}
		const struct gpu_row *near = closest(d, key);
		if (near)
			wg_set_error(WG_ERROR_CLASS_GPU, WG_ENOTFOUND,
				     "unknown GPU '%s': did you mean %s (%u.%u)? ('wheelgate gpus' lists "
				     "the known names; sm_XY or a compute capability X.Y also do)", spec,
				     near->name, near->major, near->minor);
		else
			wg_set_error(WG_ERROR_CLASS_GPU, WG_ENOTFOUND,
				     "unknown GPU '%s': give sm_XY (sm_89), a compute capability (8.9) "
				     "or a known name (T4, A10G, A100, L4, L40S, H100, H200, H20, B200, "
				     "B300, RTX 4090, RTX 5090, ...; 'wheelgate gpus' lists them)", spec);
		return WG_ENOTFOUND;
	}
	/* A bare capability names no particular GPU, but one that exists: from 3.0 (Kepler, the
	 * oldest any CUDA 12 or 11 toolkit still reads) to the newest major of the known GPUs. */
	unsigned newest = 0;
	for (size_t i = 0; i < d->ngpus; i++)
		newest = d->gpus[i].major > newest ? d->gpus[i].major : newest;
	if (out->cc_major < WG_GPU_OLDEST_MAJOR || out->cc_major > newest) {
		wg_set_error(WG_ERROR_CLASS_GPU, WG_EINVAL,
			     "GPU '%s': compute capability %u.%u is outside the known "
				  "range %u.0 to %u.9 ('wheelgate gpus' lists the known GPUs)", spec,
				  out->cc_major, out->cc_minor, WG_GPU_OLDEST_MAJOR, newest);
		return WG_EINVAL;
	}
	return WG_OK;
}

WG_API size_t wg_gpu_known_count(const wg_context *ctx)
{
	return ctx && ctx->cuda ? ctx->cuda->ngpus : 0;
}

WG_API int wg_gpu_known(wg_gpu *out, const wg_context *ctx, size_t i)
{
	if (!out || !ctx)
		return wg_null_arg("wg_gpu_known");
	if (wg_struct_version("wg_gpu", out->version, WG_GPU_VERSION) < 0)
		return WG_EINVAL;
	if (i >= ctx->cuda->ngpus)
		return WG_ENOTFOUND;
	out->cc_major = ctx->cuda->gpus[i].major;
	out->cc_minor = ctx->cuda->gpus[i].minor;
	out->name = ctx->cuda->gpus[i].name;
	return WG_OK;
}

WG_API int wg_ptx_isa_cuda(const wg_context *ctx, unsigned isa_major, unsigned isa_minor,
			   unsigned *cuda_major, unsigned *cuda_minor)
{
	if (!ctx || !cuda_major || !cuda_minor)
		return wg_null_arg("wg_ptx_isa_cuda");
	for (size_t i = 0; i < ctx->cuda->nisas; i++) {
		const struct isa_row *r = &ctx->cuda->isas[i];
		if (r->isa_major == isa_major && r->isa_minor == isa_minor) {
			*cuda_major = r->cuda_major;
			*cuda_minor = r->cuda_minor;
			return WG_OK;
		}
	}
	return WG_ENOTFOUND;
}

WG_API const char *wg_run_how_name(wg_run_how how)
{
	switch (how) {
	case WG_RUN_SASS_EXACT: return "sass-exact";
	case WG_RUN_SASS_MAJOR: return "sass-same-major";
	case WG_RUN_SASS_FAMILY: return "sass-family";
	case WG_RUN_PTX_JIT: return "ptx-jit";
	default: return "none";
	}
}

/* Section 6 of the format document, for one image (kind, SM number, a/f variant). */
wg_run_how wg_image_runs_on(int kind, unsigned arch, char variant, unsigned cc_major,
			    unsigned cc_minor)
{
	unsigned x = arch / 10, y = arch % 10;
	if (kind == WG_FATBIN_SASS) {
		if (x != cc_major || cc_minor < y)
			return WG_RUN_NONE;
		if (variant == 'a')
			return cc_minor == y ? WG_RUN_SASS_EXACT : WG_RUN_NONE;
		if (cc_minor == y)
			return WG_RUN_SASS_EXACT;
		return variant == 'f' ? WG_RUN_SASS_FAMILY : WG_RUN_SASS_MAJOR;
	}
	if (kind == WG_FATBIN_PTX) {
		if (variant == 'a')
			return x == cc_major && y == cc_minor ? WG_RUN_PTX_JIT : WG_RUN_NONE;
		if (variant == 'f')
			return x == cc_major && cc_minor >= y ? WG_RUN_PTX_JIT : WG_RUN_NONE;
		return cc_major * 10 + cc_minor >= arch ? WG_RUN_PTX_JIT : WG_RUN_NONE;
	}
	return WG_RUN_NONE; /* LTO-IR is linked at run time by the application, not loaded */
}

WG_API wg_run_how wg_fatbin_entry_runs_on(const wg_fatbin_entry_info *e, const wg_gpu *gpu)
{
	if (!e || !gpu)
		return WG_RUN_NONE;
	return wg_image_runs_on(e->kind, e->arch, e->variant, gpu->cc_major, gpu->cc_minor);
}

/*
 * Which registered containers hold the kernels the CUDA runtime loads. A plain build's
 * .nv_fatbin has the module fatbin (wrapper v1) and a device-link fatbin whose cubins hold no
 * kernels (wrapped as v2, or not wrapped at all); with -rdc=true the module fatbins move to
 * __nv_relfatbin and the linked v2 fatbin holds the kernels (with the relocatable PTX usable
 * for a JIT link).
 */
static bool is_relocatable(const wg_object *o)
{
	return o->type && !strcmp(o->type, "rel");
}

static bool is_kernel_container(const wg_object *o, const wg_fatbin_container *c, bool rdc)
{
	if (!c->registered || !c->entry_count)
		return false;
	if (!o->fatbin_wrappers)
		/* A relocatable .o has no wrappers to tell: every container counts. A linked
		 * object without a single wrapper registers nothing with the runtime. */
		return is_relocatable(o);
	/* A container no wrapper points at is never registered: nothing launches from it. */
	if (rdc)
		return c->wrapper_version == 2;
	return c->wrapper_version == 1;
}

/*
 * Containers the library loads itself through the driver API (cuModuleLoadData): those found
 * outside the registered sections, and the .nv_fatbin of a linked object that has no wrapper
 * at all (libcufft.so.12 holds no wrapper magic anywhere: its sm_75 .nv_fatbin module is never
 * registered, and its kernels are the 23,983 containers in .ldata). The library picks among
 * them by the device it runs on.
 */
static bool is_driver_loaded(const wg_object *o, const wg_fatbin_container *c)
{
	if (!c->entry_count)
		return false;
	return !c->registered || (!o->fatbin_wrappers && !is_relocatable(o));
}

static wg_run_how best_in(const wg_object *o, const wg_fatbin_container *c, const wg_gpu *g,
			  unsigned *isa_major, unsigned *isa_minor)
{
	wg_run_how best = WG_RUN_NONE;
	for (size_t i = 0; i < c->entry_count; i++) {
		const wg_fatbin_entry *e = wg_vec_at(&o->fatbin_entries, c->first_entry + i);
		wg_run_how h = wg_image_runs_on(e->kind, e->arch, e->variant, g->cc_major, g->cc_minor);
		if (h == WG_RUN_PTX_JIT && best < WG_RUN_PTX_JIT) {
			*isa_major = e->major;
			*isa_minor = e->minor;
		}
		if (h > best)
			best = h;
	}
	return best;
}

/* The lowest PTX ISA among the driver-loaded PTX images that JIT for g: the library may pick
 * any of them, so only the lowest is sure to be needed. */
static void lowest_driver_isa(const wg_object *o, const wg_gpu *g, unsigned *major,
			      unsigned *minor)
{
	bool any = false;
	for (size_t i = 0; i < o->fatbin_entries.len; i++) {
		const wg_fatbin_entry *e = wg_vec_at(&o->fatbin_entries, i);
		const wg_fatbin_container *c = wg_vec_at(&o->fatbin_containers, e->container);
		if (!is_driver_loaded(o, c) ||
		    wg_image_runs_on(e->kind, e->arch, e->variant, g->cc_major, g->cc_minor) !=
			    WG_RUN_PTX_JIT)
			continue;
		if (!any || e->major < *major || (e->major == *major && e->minor < *minor)) {
			*major = e->major;
			*minor = e->minor;
			any = true;
		}
	}
}

WG_API const char *wg_runs_name(wg_runs runs)
{
	return runs == WG_RUNS_ALL ? "all" : runs == WG_RUNS_SOME ? "some" : "none";
}

WG_API const char *wg_images_from_name(unsigned from)
{
	switch (from & (WG_IMAGES_REGISTERED | WG_IMAGES_DRIVER)) {
	case WG_IMAGES_REGISTERED: return "registered";
	case WG_IMAGES_DRIVER: return "driver-loaded";
	case WG_IMAGES_REGISTERED | WG_IMAGES_DRIVER: return "registered+driver-loaded";
	default: return "none";
	}
}

WG_API int wg_object_gpu_verdict(wg_gpu_verdict *out, const wg_object *o, const wg_gpu *gpu)
{
	if (!out || !o || !gpu)
		return wg_null_arg("wg_object_gpu_verdict");
	if (wg_struct_version("wg_gpu_verdict", out->version, WG_GPU_VERDICT_VERSION) < 0 ||
	    wg_struct_version("wg_gpu", gpu->version, WG_GPU_VERSION) < 0)
		return WG_EINVAL;
	wg_gpu_verdict v = WG_GPU_VERDICT_INIT;
	bool rdc = false;
	for (size_t i = 0; i < o->fatbin_containers.len; i++) {
		const wg_fatbin_container *c = wg_vec_at(&o->fatbin_containers, i);
		rdc = rdc || (c->section && !strcmp(c->section, "__nv_relfatbin"));
	}
	wg_run_how worst = WG_RUN_SASS_EXACT; /* lowered to the worst module that runs */
	for (size_t i = 0; i < o->fatbin_containers.len; i++) {
		const wg_fatbin_container *c = wg_vec_at(&o->fatbin_containers, i);
		unsigned ma = 0, mi = 0;
		if (is_kernel_container(o, c, rdc)) {
			wg_run_how h = best_in(o, c, gpu, &ma, &mi);
			if (rdc && h == WG_RUN_NONE) {
				/* The relocatable modules' PTX can be JIT-linked instead. */
				for (size_t j = 0; j < o->fatbin_containers.len; j++) {
					const wg_fatbin_container *r = wg_vec_at(&o->fatbin_containers, j);
					if (r->section && !strcmp(r->section, "__nv_relfatbin") &&
					    best_in(o, r, gpu, &ma, &mi) == WG_RUN_PTX_JIT)
						h = WG_RUN_PTX_JIT;
				}
			}
			v.kernel_containers++;
			if (h == WG_RUN_NONE)
				continue;
			v.runnable_containers++;
			if (h < worst)
				worst = h;
			if (h == WG_RUN_PTX_JIT && (ma > v.ptx_isa_major ||
						    (ma == v.ptx_isa_major && mi > v.ptx_isa_minor))) {
				v.ptx_isa_major = ma;
				v.ptx_isa_minor = mi;
			}
		} else if (is_driver_loaded(o, c)) {
			v.other_containers++;
			wg_run_how h = best_in(o, c, gpu, &ma, &mi);
			if (h != WG_RUN_NONE)
				v.other_runnable++;
			if (h > v.other_how)
				v.other_how = h;
		}
	}
	v.is_cuda = v.kernel_containers > 0 || v.other_containers > 0;
	if (v.runnable_containers) {
		/* The runtime's modules decide how the object's own launches run. */
		v.how = worst;
		v.from |= WG_IMAGES_REGISTERED;
	}
	if (v.other_runnable) {
		v.from |= WG_IMAGES_DRIVER;
		if (!v.runnable_containers) {
			v.how = v.other_how;
			if (v.how == WG_RUN_PTX_JIT)
				lowest_driver_isa(o, gpu, &v.ptx_isa_major, &v.ptx_isa_minor);
		}
	}
	/*
	 * Every image counts: none when no image of the object runs on the GPU; all when every
	 * registered kernel module has one and, where the library loads containers itself, at
	 * least one of those does (it picks by device); some otherwise.
	 */
	if (!v.runnable_containers && !v.other_runnable)
		v.runs = WG_RUNS_NONE;
	else if (v.runnable_containers == v.kernel_containers &&
		 (!v.other_containers || v.other_runnable))
		v.runs = WG_RUNS_ALL;
	else
		v.runs = WG_RUNS_SOME;
	*out = v;
	return WG_OK;
}

static int cmp_arch(const void *a, const void *b)
{
	const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

WG_API size_t wg_object_arch_set(const wg_object *o, wg_fatbin_kind kind, int where, char *buf,
				 size_t len)
{
	if (buf && len)
		buf[0] = '\0';
	if (!o || !o->fatbin_entries.len)
		return 0;
	/* arch * 4 + variant rank, sorted and made unique */
	uint32_t *keys = malloc(o->fatbin_entries.len * sizeof(*keys));
	if (!keys)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < o->fatbin_entries.len; i++) {
		const wg_fatbin_entry *e = wg_vec_at(&o->fatbin_entries, i);
		const wg_fatbin_container *c = wg_vec_at(&o->fatbin_containers, e->container);
		if (e->kind != kind || (where >= 0 && c->registered != (where == 1)))
			continue;
		keys[n++] = e->arch * 4 + (e->variant == 'a' ? 1u : e->variant == 'f' ? 2u : 0u);
	}
	qsort(keys, n, sizeof(*keys), cmp_arch);
	size_t distinct = 0, used = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && keys[i] == keys[i - 1])
			continue;
		distinct++;
		char name[24];
		unsigned v = keys[i] % 4;
		wg_fatbin_arch_name(name, sizeof(name), kind, keys[i] / 4, v == 1 ? 'a' : v == 2 ? 'f' : 0);
		size_t nl = strlen(name) + (used ? 1 : 0);
		if (buf && used + nl < len) {
			snprintf(buf + used, len - used, "%s%s", used ? " " : "", name);
			used += nl;
		}
	}
	free(keys);
	return distinct;
}

/*
 * The local GPUs, from NVML loaded at run time (no build dependency on the driver). No NVML,
 * no driver or no GPU is no local GPU: *n is 0 and why says which ("libnvidia-ml.so.1 cannot
 * be loaded: no NVIDIA driver here").
 */
int wg_gpu_detect(const wg_context *ctx, wg_gpu *out, size_t max, size_t *n, char *why,
		  size_t whylen)
{
	*n = 0;
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, whylen, "libnvidia-ml.so.1 cannot be loaded: no NVIDIA driver here");
		return WG_OK;
	}
	typedef int (*init_fn)(void);
	typedef int (*count_fn)(unsigned *);
	typedef int (*handle_fn)(unsigned, void **);
	typedef int (*cc_fn)(void *, int *, int *);
	typedef int (*name_fn)(void *, char *, unsigned);
	init_fn init = (init_fn)dlsym(h, "nvmlInit_v2");
	init_fn shutdown = (init_fn)dlsym(h, "nvmlShutdown");
	count_fn count = (count_fn)dlsym(h, "nvmlDeviceGetCount_v2");
	handle_fn handle = (handle_fn)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	cc_fn cap = (cc_fn)dlsym(h, "nvmlDeviceGetCudaComputeCapability");
	name_fn name = (name_fn)dlsym(h, "nvmlDeviceGetName");
	unsigned devices = 0;
	if (!init || !count || !handle || !cap || init() != 0) {
		snprintf(why, whylen, "NVML did not initialise");
		dlclose(h);
		return WG_OK;
	}
	if (count(&devices) != 0 || devices == 0)
		snprintf(why, whylen, "NVML sees no device");
	for (unsigned i = 0; i < devices && *n < max; i++) {
		void *dev = NULL;
		int ma = 0, mi = 0;
		char nm[96] = "";
		if (handle(i, &dev) != 0 || cap(dev, &ma, &mi) != 0 || ma <= 0)
			continue;
		if (name)
			name(dev, nm, sizeof(nm));
		wg_gpu g = WG_GPU_INIT;
		g.cc_major = (unsigned)ma;
		g.cc_minor = (unsigned)mi;
		/* "NVIDIA H100 80GB HBM3": the known name it contains, with the same capability. */
		for (size_t k = 0; k < ctx->cuda->ngpus; k++) {
			const struct gpu_row *r = &ctx->cuda->gpus[k];
			char key[96];
			name_key(key, sizeof(key), nm);
			if (r->major == g.cc_major && r->minor == g.cc_minor && strstr(key, r->key) &&
			    (!g.name || strlen(r->key) > strlen(g.name)))
				g.name = r->name;
		}
		out[(*n)++] = g;
	}
	if (shutdown)
		shutdown();
	dlclose(h);
	return WG_OK;
}

/*
 * The facts of a scan as JSON (jansson), the machine-readable face of `wheelgate inspect`.
 * The schema is documented in docs/inspect-json.md and docs/schema/inspect.schema.json; change
 * them together.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "output/output.h"

json_t *wg_json_str(const char *s)
{
	if (wg_utf8_valid(s))
		return json_string(s);
	/* Names and text from a wheel need not be UTF-8; jansson refuses such strings, and a
	 * refused string would drop the whole item around it. */
	wg_buf b = {0};
	json_t *j = wg_buf_escape(&b, s, WG_ESCAPE_UTF8) == WG_OK ? json_string(b.s) : NULL;
	wg_buf_free(&b);
	return j;
}

static json_t *str_or_null(const char *s)
{
	return s ? wg_json_str(s) : json_null();
}

static json_t *strlist(const wg_strlist *l)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->n; i++)
		json_array_append_new(a, wg_json_str(l->v[i]));
	return a;
}

static json_t *purelib(const char *v)
{
	if (!v)
		return json_null();
	if (!strcasecmp(v, "true"))
		return json_true();
	if (!strcasecmp(v, "false"))
		return json_false();
	return wg_json_str(v);
}

static json_t *wheel_json(const wg_scan *s)
{
	json_t *fn = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			       "name", str_or_null(s->fields[WG_WHEEL_NAME]),
			       "version", str_or_null(s->fields[WG_WHEEL_VERSION]),
			       "public_version", str_or_null(s->fields[WG_WHEEL_PUBLIC_VERSION]),
			       "local_version", str_or_null(s->fields[WG_WHEEL_LOCAL_VERSION]),
			       "build_tag", str_or_null(s->fields[WG_WHEEL_BUILD_TAG]),
			       "python_tags", strlist(&s->lists[WG_LIST_PYTHON_TAGS]),
			       "abi_tags", strlist(&s->lists[WG_LIST_ABI_TAGS]),
			       "platform_tags", strlist(&s->lists[WG_LIST_PLATFORM_TAGS]),
			       "error", str_or_null(s->fields[WG_WHEEL_FILENAME_ERROR]));
	json_t *wf = json_pack("{s:o, s:o, s:o, s:o}",
			       "wheel_version", str_or_null(s->fields[WG_WHEEL_WHEEL_VERSION]),
			       "generator", str_or_null(s->fields[WG_WHEEL_GENERATOR]),
			       "root_is_purelib", purelib(s->fields[WG_WHEEL_ROOT_IS_PURELIB]),
			       "tags", strlist(&s->lists[WG_LIST_WHEEL_TAGS]));
	json_t *md = json_pack("{s:o, s:o, s:o, s:o}",
			       "name", str_or_null(s->fields[WG_WHEEL_META_NAME]),
			       "version", str_or_null(s->fields[WG_WHEEL_META_VERSION]),
			       "requires_python", str_or_null(s->fields[WG_WHEEL_REQUIRES_PYTHON]),
			       "requires_dist", strlist(&s->lists[WG_LIST_REQUIRES_DIST]));
	json_t *members = json_array();
	for (size_t i = 0; members && i < s->members.len; i++) {
		const wg_member *m = wg_vec_at(&s->members, i);
		json_array_append_new(members,
			json_pack("{s:o, s:I, s:I, s:s, s:b, s:b, s:b, s:o, s:s}",
				  "name", wg_json_str(m->name), "size", (json_int_t)m->size,
				  "compressed_size", (json_int_t)m->csize, "method", m->method,
				  "dir", m->is_dir, "elf", m->is_elf, "safe", m->safe,
				  "sha256", str_or_null(m->sha256_b64),
				  "record", wg_record_status_name(m->record)));
	}
	json_t *w = json_pack("{s:o, s:o, s:o, s:o, s:o, s:{s:b, s:o}, s:o}",
			 "filename", fn, "dist_info", str_or_null(s->fields[WG_WHEEL_DIST_INFO]),
			 "wheel_file", wf, "metadata", md,
			 "top_level", strlist(&s->lists[WG_LIST_TOP_LEVEL]),
			 "record", "present", s->has_record,
			 "orphans", strlist(&s->lists[WG_LIST_RECORD_ORPHANS]),
			 "members", members);
	/* PEP 825 variant wheels only: the filename's label and variant.json's */
	if (w && (s->fields[WG_WHEEL_VARIANT_LABEL] || s->fields[WG_WHEEL_VARIANT_JSON_LABEL] ||
		  s->fields[WG_WHEEL_VARIANT_ERROR]))
		json_object_set_new(w, "variant",
			json_pack("{s:o, s:o, s:o, s:o}",
				  "label", str_or_null(s->fields[WG_WHEEL_VARIANT_LABEL]),
				  "json_label", str_or_null(s->fields[WG_WHEEL_VARIANT_JSON_LABEL]),
				  "properties", strlist(&s->lists[WG_LIST_VARIANT_PROPERTIES]),
				  "error", str_or_null(s->fields[WG_WHEEL_VARIANT_ERROR])));
	return w;
}

static json_t *abi_bits(unsigned bits)
{
	if ((bits & 3) == 3)
		return json_string("both");
	if (bits & WG_SYM_NEW_STRING)
		return json_string("new");
	if (bits & WG_SYM_OLD_STRING)
		return json_string("old");
	return json_null();
}

static json_t *arch_list(const wg_object *o, wg_fatbin_kind kind, int where)
{
	char buf[4096];
	json_t *a = json_array();
	wg_object_arch_set(o, kind, where, buf, sizeof(buf));
	for (char *tok = strtok(buf, " "); a && tok; tok = strtok(NULL, " "))
		json_array_append_new(a, json_string(tok));
	return a;
}

static json_t *verdict_json(const wg_scan *scan, const wg_object *o, const wg_gpu *g)
{
	wg_gpu_verdict v = WG_GPU_VERDICT_INIT;
	char cc[16], gpu[64];
	wg_object_gpu_verdict(&v, o, g);
	snprintf(cc, sizeof(cc), "%u.%u", g->cc_major, g->cc_minor);
	snprintf(gpu, sizeof(gpu), "%s", g->name ? g->name : cc);
	json_t *isa = json_null(), *needs = json_null();
	if (v.ptx_isa_major) {
		char b[16];
		unsigned cm, cn;
		snprintf(b, sizeof(b), "%u.%u", v.ptx_isa_major, v.ptx_isa_minor);
		isa = json_string(b);
		if (wg_ptx_isa_cuda(scan->ctx, v.ptx_isa_major, v.ptx_isa_minor, &cm, &cn) == WG_OK) {
			snprintf(b, sizeof(b), "%u.%u", cm, cn);
			needs = json_string(b);
		}
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o}", "gpu", gpu,
			 "cc", cc, "runs", wg_runs_name(v.runs), "how", wg_run_how_name(v.how),
			 "from", wg_images_from_name(v.from),
			 "other_how", wg_run_how_name(v.other_how),
			 "kernel_containers", (json_int_t)v.kernel_containers,
			 "runnable_containers", (json_int_t)v.runnable_containers,
			 "other_containers", (json_int_t)v.other_containers,
			 "other_runnable", (json_int_t)v.other_runnable, "ptx_isa", isa,
			 "driver_cuda_needed", needs);
}

static json_t *cuda_json(const wg_scan *scan, const wg_object *o, unsigned flags,
			 const wg_gpu *gpus, size_t ngpus)
{
	if (!o->fatbin_containers.len)
		return json_null();
	json_t *conts = json_array(), *entries = json_array(), *verdicts = json_array();
	for (size_t i = 0; conts && i < o->fatbin_containers.len; i++) {
		const wg_fatbin_container *c = wg_vec_at(&o->fatbin_containers, i);
		json_array_append_new(conts, json_pack("{s:I, s:I, s:o, s:b, s:i, s:I}",
			"offset", (json_int_t)c->offset, "size", (json_int_t)c->size,
			"section", str_or_null(c->section), "registered", c->registered,
			"wrapper_version", c->wrapper_version, "entries", (json_int_t)c->entry_count));
	}
	/* The entries listed: at most max_listed_entries (the rest are counted in
	 * "entries_not_listed"); entries past max_fatbin_entries were never read
	 * ("entries_not_read"). */
	uint32_t cap = scan->ctx ? scan->ctx->opts.max_listed_entries : 0;
	size_t listed = cap && o->fatbin_entries.len > cap ? cap : o->fatbin_entries.len;
	for (size_t i = 0; entries && !(flags & WG_JSON_NO_ENTRIES) && i < listed; i++) {
		wg_fatbin_entry_info e = WG_FATBIN_ENTRY_INFO_INIT;
		wg_object_fatbin_entry(&e, o, i);
		char ver[16], var[2] = {e.variant, 0};
		snprintf(ver, sizeof(ver), "%u.%u", e.major, e.minor);
		json_array_append_new(entries, json_pack(
			"{s:I, s:s, s:s, s:i, s:o, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:o, s:o}",
			"container", (json_int_t)e.container, "kind", wg_fatbin_kind_str(e.kind),
			"arch", e.arch_name, "sm", (int)e.arch,
			"variant", e.variant ? json_string(var) : json_null(), "version", ver,
			"compression", wg_fatbin_compression_str(e.compression), "debug", e.debug,
			"flags", (json_int_t)e.flags, "offset", (json_int_t)e.offset,
			"payload_size", (json_int_t)e.payload_size,
			"compressed_size", (json_int_t)e.compressed_size,
			"uncompressed_size", (json_int_t)e.uncompressed_size,
			"ptx_version", str_or_null(e.ptx_version), "ptx_target", str_or_null(e.ptx_target)));
	}
	for (size_t i = 0; verdicts && i < ngpus; i++)
		json_array_append_new(verdicts, verdict_json(scan, o, &gpus[i]));
	json_t *j = json_pack("{s:o, s:o, s:o, s:{s:o, s:o}, s:I, s:o}",
			      "sass", arch_list(o, WG_FATBIN_SASS, 1),
			      "ptx", arch_list(o, WG_FATBIN_PTX, 1),
			      "lto_ir", arch_list(o, WG_FATBIN_LTOIR, 1),
			      "outside", "sass", arch_list(o, WG_FATBIN_SASS, 0),
			      "ptx", arch_list(o, WG_FATBIN_PTX, 0),
			      "wrappers", (json_int_t)o->fatbin_wrappers, "containers", conts);
	if (!j)
		return NULL;
	if (!(flags & WG_JSON_NO_ENTRIES))
		json_object_set_new(j, "entries", entries);
	else
		json_decref(entries);
	json_object_set_new(j, "entry_count", json_integer((json_int_t)o->fatbin_entries.len));
	json_object_set_new(j, "entries_not_listed", json_integer(
		(json_int_t)(flags & WG_JSON_NO_ENTRIES ? o->fatbin_entries.len
							 : o->fatbin_entries.len - listed)));
	json_object_set_new(j, "entries_not_read", json_integer((json_int_t)o->fatbin_entries_more));
	json_object_set_new(j, "gpus", verdicts);
	return j;
}

static json_t *object_json(const wg_scan *scan, const wg_object *o, unsigned flags,
			   const wg_gpu *gpus, size_t ngpus)
{
	json_t *ext = json_null();
	if (o->is_extension)
		ext = json_pack("{s:o, s:o, s:o, s:o, s:b}", "module",
				wg_json_str(o->module ? o->module : ""), "suffix",
				wg_json_str(o->ext_suffix ? o->ext_suffix : ""),
				"interpreter", str_or_null(o->ext_interpreter),
				"platform", str_or_null(o->ext_platform), "has_init", o->has_init);
	json_t *syms = json_array();
	for (size_t i = 0; syms && i < o->nsyms && !(flags & WG_JSON_NO_SYMBOLS); i++) {
		const wg_sym *y = &o->syms[i];
		if ((flags & WG_JSON_ABI_SYMBOLS) && !(y->string_abi && y->surface))
			continue;
		json_array_append_new(syms,
			json_pack("{s:o, s:o, s:o, s:b, s:b, s:s, s:s, s:o, s:b, s:b, s:b}",
				  "name", wg_json_str(y->name), "demangled", str_or_null(y->demangled),
				  "version", str_or_null(y->symver), "version_hidden", y->hidden,
				  "defined", y->defined, "binding", wg_binding_name(y->binding),
				  "type", wg_symbol_type_name(y->type),
				  "string_abi", abi_bits(y->string_abi), "torch", y->torch,
				  "runtime", y->runtime, "abi_surface", y->surface));
	}
	json_t *j = json_pack("{s:o, s:I, s:o}", "path", wg_json_str(o->path), "size", (json_int_t)o->size,
			      "error", str_or_null(o->error));
	if (!j)
		return NULL;
	if (o->error) {
		json_decref(ext);
		json_decref(syms);
		return j;
	}
	json_object_update_new(j, json_pack(
		"{s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
		" s:{s:s, s:s, s:i, s:i, s:i, s:i},"
		" s:{s:I, s:I, s:I}, s:o}",
		"class", o->elf_class, "machine", o->machine, "machine_name",
		str_or_null(o->machine_name), "type", str_or_null(o->type), "soname", str_or_null(o->soname), "needed", strlist(&o->needed),
		"rpath", str_or_null(o->rpath), "runpath", str_or_null(o->runpath),
		"python_extension", ext,
		"string_abi", "abi", wg_string_abi_name(o->abi), "torch_abi",
		wg_string_abi_name(o->torch_abi), "torch_new", (int)o->counts[0], "torch_old",
		(int)o->counts[1], "other_new", (int)o->counts[2], "other_old", (int)o->counts[3],
		"symbol_counts", "total", (json_int_t)o->nsyms, "defined", (json_int_t)o->ndefined,
		"undefined", (json_int_t)o->nundefined,
		"symbols", syms));
	json_t *needed = json_array(), *highest = json_array();
	for (size_t i = 0; needed && i < o->verneeds.len; i++) {
		const wg_verneed *x = wg_vec_at(&o->verneeds, i);
		json_array_append_new(needed, json_pack("{s:o, s:o, s:b}", "library",
							wg_json_str(x->file), "version",
							wg_json_str(x->version), "weak", x->weak));
	}
	wg_highest best[16];
	size_t nb = wg_object_highest(o, best, WG_ARRAY_LEN(best));
	for (size_t k = 0; highest && k < nb; k++)
		json_array_append_new(highest, json_pack("{s:o, s:o, s:o}", "family",
							 wg_json_str(best[k].v.family), "version",
							 wg_json_str(best[k].version), "library",
							 wg_json_str(best[k].library)));
	json_object_set_new(j, "versions", json_pack("{s:o, s:o, s:o}", "needed", needed ? needed : json_array(),
						     "highest", highest ? highest : json_array(),
						     "defined", strlist(&o->verdefs)));
	json_object_set_new(j, "cuda", cuda_json(scan, o, flags, gpus, ngpus));
	json_object_set_new(j, "sections_lie", str_or_null(o->sections_lie));
	return j;
}

WG_API int wg_scan_to_json(char **out, const wg_scan *scan, unsigned int flags)
{
	return wg_scan_to_json_gpus(out, scan, flags, NULL, 0);
}

/* One item of "inputs": the facts of scan (NULL when out of memory). */
static json_t *scan_json(const wg_scan *scan, unsigned int flags, const wg_gpu *gpus, size_t ngpus)
{
	static const char *const kinds[] = {"?", "wheel", "object", "directory", "installed"};
	json_t *objs = json_array(), *probs = json_array();
	for (size_t i = 0; objs && i < scan->objects.len; i++)
		json_array_append_new(objs, object_json(scan, *(wg_object **)wg_vec_at(&scan->objects, i),
							flags, gpus, ngpus));
	for (size_t i = 0; probs && i < scan->problems.len; i++) {
		const wg_problem *p = wg_vec_at(&scan->problems, i);
		json_array_append_new(probs, json_pack("{s:s, s:o, s:o}", "code",
						       wg_error_name(p->code), "where",
						       str_or_null(p->where), "message",
						       wg_json_str(p->message)));
	}
	json_t *j = json_pack("{s:o, s:s, s:o, s:o, s:o, s:I}", "path", wg_json_str(scan->path),
			      "kind", kinds[scan->kind <= 4 ? scan->kind : 0], "wheel",
			      wg_scan_is_dist(scan) ? wheel_json(scan) : json_null(),
			      "objects", objs, "problems", probs, "problems_more",
			      (json_int_t)wg_scan_problems_more(scan));
	/* --facts-dir: everything the checks read, to judge the input again without it */
	if (j && (flags & WG_JSON_FACTS))
		json_object_set_new(j, "facts", wg_facts_json(scan));
	return j;
}

WG_API int wg_scan_to_json_gpus(char **out, const wg_scan *scan, unsigned int flags,
				const wg_gpu *gpus, size_t ngpus)
{
	if (!out || !scan)
		return wg_null_arg("wg_scan_to_json_gpus");
	*out = NULL;
	json_t *j = scan_json(scan, flags, gpus, ngpus);
	if (!j)
		return WG_ENOMEM;
	*out = wg_json_dump(j, (flags & WG_JSON_PRETTY ? JSON_INDENT(2) : JSON_COMPACT) |
				     JSON_PRESERVE_ORDER);
	json_decref(j);
	return *out ? WG_OK : WG_ENOMEM;
}

/* The inspect document of several inputs, built as they are read (each scan can be freed once
 * added): the library writes it once, nobody parses it back. */
struct wg_inspect {
	json_t *doc, *inputs;
	unsigned int flags;
	wg_gpu *gpus;
	size_t ngpus;
};

static int nomem(void)
{
	wg_set_error(WG_ERROR_CLASS_INVALID, WG_ENOMEM, "out of memory");
	return WG_ENOMEM;
}

WG_API int wg_inspect_new(wg_inspect **out, unsigned int flags, const wg_gpu *gpus, size_t ngpus)
{
	int rc;
	if (!out || (ngpus && !gpus)) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_inspect_new: no %s", out ? "GPUs" : "place for it");
		return WG_EINVAL;
	}
	*out = NULL;
	for (size_t i = 0; i < ngpus; i++)
		if ((rc = wg_struct_version("wg_gpu", gpus[i].version, WG_GPU_VERSION)) < 0)
			return rc;
	wg_inspect *d = calloc(1, sizeof(*d));
	if (!d)
		return nomem();
	d->flags = flags;
	d->inputs = json_array();
	d->doc = d->inputs ? json_pack("{s:s, s:s, s:O}", "schema", WG_INSPECT_SCHEMA,
				       "wheelgate_version", wg_version_string(), "inputs", d->inputs)
			   : NULL;
	d->gpus = ngpus ? malloc(ngpus * sizeof(*gpus)) : NULL;
	if (!d->doc || (ngpus && !d->gpus)) {
		wg_inspect_free(d);
		return nomem();
	}
	if (ngpus)
		memcpy(d->gpus, gpus, ngpus * sizeof(*gpus));
	d->ngpus = ngpus;
	*out = d;
	return WG_OK;
}

WG_API void wg_inspect_free(wg_inspect *d)
{
	if (!d)
		return;
	json_decref(d->inputs);
	json_decref(d->doc);
	free(d->gpus);
	free(d);
}

WG_API int wg_inspect_add(wg_inspect *d, const wg_scan *scan)
{
	if (!d || !scan) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_inspect_add: no %s", d ? "scan" : "document");
		return WG_EINVAL;
	}
	json_t *j = scan_json(scan, d->flags, d->gpus, d->ngpus);
	return j && json_array_append_new(d->inputs, j) == 0 ? WG_OK : nomem();
}

WG_API int wg_inspect_add_error(wg_inspect *d, const char *path, int code, const char *message)
{
	if (!d || !path || !message) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL, "wg_inspect_add_error: no %s",
				  !d ? "document" : !path ? "path" : "message");
		return WG_EINVAL;
	}
	/* Text for a terminal as much as for a program: control characters escaped too. */
	char *p = NULL, *m = NULL;
	json_t *j = NULL;
	if (wg_escape(&p, path, WG_ESCAPE_CONTROL) == WG_OK &&
	    wg_escape(&m, message, WG_ESCAPE_CONTROL) == WG_OK)
		j = json_pack("{s:s, s:{s:s, s:s}}", "path", p, "error", "code", wg_error_name(code),
			      "message", m);
	free(p);
	free(m);
	return j && json_array_append_new(d->inputs, j) == 0 ? WG_OK : nomem();
}

WG_API int wg_inspect_format(char **out, const wg_inspect *d)
{
	if (!out || !d) {
		wg_set_error(WG_ERROR_CLASS_INVALID, WG_EINVAL,
			     "wg_inspect_format: no %s", out ? "document" : "place for it");
		return WG_EINVAL;
	}
	*out = wg_json_dump(d->doc, (d->flags & WG_JSON_PRETTY ? JSON_INDENT(2) : JSON_COMPACT) |
					  JSON_PRESERVE_ORDER);
	return *out ? WG_OK : nomem();
}

/*
 * The public accessors of the fact model: scans, wheels, members, problems, objects, symbols
 * (wheelgate.h): read by embedders and by output/.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "facts/facts.h"

/* ---------------------------------------------------------------------------------------- */
/* accessors                                                                                */

WG_API int wg_scan_has_wheel_metadata(const wg_scan *scan)
{
	return scan && wg_scan_is_dist(scan);
}

WG_API wg_scan_kind wg_scan_get_kind(const wg_scan *scan)
{
	return scan->kind;
}

WG_API int wg_scan_is_repackaged(const wg_scan *scan)
{
	return scan && scan->kind == WG_SCAN_INSTALLED && scan->repackaged;
}

WG_API const char *wg_scan_get_path(const wg_scan *scan)
{
	return scan->path;
}

WG_API const char *wg_scan_stored_by(const wg_scan *scan)
{
	return scan ? scan->stored_by : NULL;
}

WG_API int64_t wg_scan_file_size(const wg_scan *scan)
{
	return scan ? scan->file_size : -1;
}

WG_API size_t wg_scan_wheel_count(const wg_scan *scan)
{
	return scan ? scan->wheels.n : 0;
}

WG_API const char *wg_scan_wheel_path(const wg_scan *scan, size_t i)
{
	return scan && i < scan->wheels.n ? scan->wheels.v[i] : NULL;
}

WG_API const char *wg_wheel_get(const wg_scan *scan, wg_wheel_field f)
{
	if (!scan || !wg_scan_is_dist(scan) || (unsigned)f >= WG_ARRAY_LEN(scan->fields))
		return NULL;
	return scan->fields[f];
}

WG_API size_t wg_wheel_list_count(const wg_scan *scan, wg_wheel_list l)
{
	if (!scan || (unsigned)l >= WG_ARRAY_LEN(scan->lists))
		return 0;
	return scan->lists[l].n;
}

WG_API const char *wg_wheel_list_item(const wg_scan *scan, wg_wheel_list l, size_t i)
{
	if (!scan || (unsigned)l >= WG_ARRAY_LEN(scan->lists) || i >= scan->lists[l].n)
		return NULL;
	return scan->lists[l].v[i];
}

WG_API int wg_wheel_has_record(const wg_scan *scan)
{
	return scan && scan->has_record;
}

WG_API size_t wg_scan_member_count(const wg_scan *scan)
{
	return scan ? scan->members.len : 0;
}

WG_API int wg_scan_member(wg_member_info *out, const wg_scan *scan, size_t i)
{
	if (!out || !scan)
		return wg_null_arg("wg_scan_member");
	if (wg_struct_version("wg_member_info", out->version, WG_MEMBER_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_member *m = wg_vec_at(&scan->members, i);
	if (!m)
		return WG_ENOTFOUND;
	out->name = m->name;
	out->size = m->size;
	out->compressed_size = m->csize;
	out->method = m->method;
	out->is_dir = m->is_dir;
	out->is_elf = m->is_elf;
	out->is_safe = m->safe;
	out->record = m->record;
	out->sha256 = m->sha256_b64;
	return WG_OK;
}

WG_API size_t wg_scan_problem_count(const wg_scan *scan)
{
	return scan ? scan->problems.len : 0;
}

WG_API size_t wg_scan_problems_more(const wg_scan *scan)
{
	size_t n = 0;
	for (size_t i = 0; scan && i < WG_PROBLEM_CODES; i++)
		n += scan->problems_more[i];
	return n;
}

WG_API int wg_scan_read_stats(wg_read_stats *out, const wg_scan *scan)
{
	if (!out || !scan)
		return wg_null_arg("wg_scan_read_stats");
	if (wg_struct_version("wg_read_stats", out->version, WG_READ_STATS_VERSION) < 0)
		return WG_EINVAL;
	*out = scan->read_stats;
	out->version = WG_READ_STATS_VERSION;
	return WG_OK;
}

WG_API int wg_scan_problem(wg_problem_info *out, const wg_scan *scan, size_t i)
{
	if (!out || !scan)
		return wg_null_arg("wg_scan_problem");
	if (wg_struct_version("wg_problem_info", out->version, WG_PROBLEM_INFO_VERSION) < 0)
		return WG_EINVAL;
	const wg_problem *p = wg_vec_at(&scan->problems, i);
	if (!p)
		return WG_ENOTFOUND;
	out->code = p->code;
	out->where = p->where;
	out->message = p->message;
	return WG_OK;
}

WG_API size_t wg_scan_object_count(const wg_scan *scan)
{
	return scan ? scan->objects.len : 0;
}

WG_API const wg_object *wg_scan_object(const wg_scan *scan, size_t i)
{
	wg_object **o = scan ? wg_vec_at(&scan->objects, i) : NULL;
	return o ? *o : NULL;
}

WG_API const char *wg_string_abi_name(wg_string_abi abi)
{
	switch (abi) {
	case WG_ABI_NEW: return "new";
	case WG_ABI_OLD: return "old";
	case WG_ABI_MIXED: return "mixed";
	default: return "none";
	}
}

WG_API int wg_object_get_info(wg_object_info *out, const wg_object *o)
{
	if (!out || !o)
		return wg_null_arg("wg_object_get_info");
	if (wg_struct_version("wg_object_info", out->version, WG_OBJECT_INFO_VERSION) < 0)
		return WG_EINVAL;
	out->path = o->path;
	out->size = o->size;
	out->error = o->error;
	out->elf_class = o->elf_class;
	out->machine = o->machine;
	out->machine_name = o->machine_name;
	out->type = o->type;
	out->soname = o->soname;
	out->rpath = o->rpath;
	out->runpath = o->runpath;
	out->needed_count = o->needed.n;
	out->symbol_count = o->nsyms;
	out->defined_count = o->ndefined;
	out->undefined_count = o->nundefined;
	out->is_extension = o->is_extension;
	out->module = o->module;
	out->ext_suffix = o->ext_suffix;
	out->ext_interpreter = o->ext_interpreter;
	out->ext_platform = o->ext_platform;
	out->has_init = o->has_init;
	out->torch_new = o->counts[0];
	out->torch_old = o->counts[1];
	out->other_new = o->counts[2];
	out->other_old = o->counts[3];
	out->abi = o->abi;
	out->torch_abi = o->torch_abi;
	return WG_OK;
}

WG_API const char *wg_object_needed(const wg_object *o, size_t i)
{
	return o && i < o->needed.n ? o->needed.v[i] : NULL;
}

WG_API int wg_object_symbol(wg_symbol_info *out, const wg_object *o, size_t i)
{
	if (!out || !o)
		return wg_null_arg("wg_object_symbol");
	if (wg_struct_version("wg_symbol_info", out->version, WG_SYMBOL_INFO_VERSION) < 0)
		return WG_EINVAL;
	if (i >= o->nsyms)
		return WG_ENOTFOUND;
	const wg_sym *y = &o->syms[i];
	out->name = y->name;
	out->demangled = y->demangled;
	out->symver = y->symver;
	out->symver_hidden = y->hidden;
	out->defined = y->defined;
	out->binding = (wg_binding)y->binding;
	out->type = (wg_symbol_type)y->type;
	out->string_abi = y->string_abi;
	out->torch_facing = y->torch;
	out->runtime = y->runtime;
	out->abi_surface = y->surface;
	return WG_OK;
}

WG_API const char *wg_binding_name(wg_binding b)
{
	static const char *const n[] = {"global", "weak", "unique", "local"};
	return (unsigned)b < 4 ? n[b] : "unknown";
}

WG_API const char *wg_symbol_type_name(wg_symbol_type t)
{
	static const char *const n[] = {"notype", "func", "object", "tls", "ifunc", "common"};
	return (unsigned)t < 6 ? n[t] : "unknown";
}

WG_API const char *wg_record_status_name(wg_record_status st)
{
	static const char *const n[] = {"ok",       "unhashed", "missing",  "bad-hash",
					"bad-size", "not-read", "no-record", "repackaged",
					"absent"};
	return (unsigned)st < sizeof(n) / sizeof(*n) ? n[st] : "unknown";
}

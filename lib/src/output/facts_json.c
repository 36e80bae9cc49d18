/*
 * The facts of a scan written (docs/facts-store.md): the "facts" member of an inspect item
 * (WG_JSON_FACTS) that holds every fact the checks read, losslessly (strings that are not
 * UTF-8 are written {"hex": ...}). store/ keeps such documents and reads them back.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"


/* ---------------------------------------------------------------------------------------- */
/* writing                                                                                  */

static json_t *fbytes(const char *s, size_t n)
{
	if (!s)
		return json_null();
	json_t *j = json_stringn(s, n); /* NULL when not UTF-8 */
	if (j)
		return j;
	char *hex = malloc(2 * n + 1);
	if (!hex)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)s[i]);
	j = json_pack("{s:s}", "hex", hex);
	free(hex);
	return j;
}

static json_t *fstr(const char *s)
{
	return fbytes(s, s ? strlen(s) : 0);
}

static json_t *flist(const wg_strlist *l)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->n; i++)
		json_array_append_new(a, fstr(l->v[i]));
	return a;
}

#define I(x) ((json_int_t)(x))

static json_t *object_facts(const wg_object *o)
{
	json_t *syms = json_array(), *secs = json_array(), *conts = json_array(),
	       *ents = json_array(), *vn = json_array();
	for (size_t i = 0; syms && i < o->nsyms; i++) {
		const wg_sym *y = &o->syms[i];
		json_array_append_new(syms, json_pack("[o, o, o, i, i, i, i, i, i, i, b]",
			fstr(y->name), fstr(y->demangled), fstr(y->symver), y->hidden, y->defined,
			y->binding, y->type, y->string_abi, y->torch, y->runtime, y->surface));
	}
	for (size_t i = 0; secs && i < o->nsections; i++) {
		const wg_section *s = &o->sections[i];
		json_array_append_new(secs, json_pack("[o, I, I, I, b, b]", fstr(s->name),
			I(s->offset), I(s->size), I(s->vma), s->has_contents, s->code));
	}
	for (size_t i = 0; conts && i < o->fatbin_containers.len; i++) {
		const wg_fatbin_container *c = wg_vec_at(&o->fatbin_containers, i);
		json_array_append_new(conts, json_pack("[I, I, o, b, i, I, I]", I(c->offset),
			I(c->size), fstr(c->section), c->registered, c->wrapper_version,
			I(c->first_entry), I(c->entry_count)));
	}
	for (size_t i = 0; ents && i < o->fatbin_entries.len; i++) {
		const wg_fatbin_entry *e = wg_vec_at(&o->fatbin_entries, i);
		json_array_append_new(ents, json_pack("[I, I, i, i, i, I, i, I, I, I, I, I, i, b, o, o]",
			I(e->offset), I(e->container), e->kind, e->major, e->minor, I(e->arch),
			e->variant, I(e->flags), I(e->header_size), I(e->compressed_size),
			I(e->payload_size), I(e->uncompressed_size), e->compression, e->debug,
			fstr(e->ptx_version), fstr(e->ptx_target)));
	}
	for (size_t i = 0; vn && i < o->verneeds.len; i++) {
		const wg_verneed *x = wg_vec_at(&o->verneeds, i);
		json_array_append_new(vn, json_pack("[o, o, b]", fstr(x->file), fstr(x->version),
						    x->weak));
	}
	json_t *j = json_pack("{s:o, s:I, s:o, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o}",
		"path", fstr(o->path), "size", I(o->size), "error", fstr(o->error),
		"elf_class", o->elf_class, "machine", o->machine,
		"machine_name", fstr(o->machine_name), "type", fstr(o->type),
		"soname", fstr(o->soname), "rpath", fstr(o->rpath), "runpath", fstr(o->runpath),
		"needed", flist(&o->needed));
	if (!j)
		goto fail;
	json_object_update_new(j, json_pack(
		"{s:o, s:I, s:I, s:i, s:i, s:o, s:o, s:o, s:o, s:[i, i, i, i], s:i, s:i, s:o, s:o,"
		" s:o, s:o, s:i, s:o, s:o}",
		"syms", syms, "ndefined", I(o->ndefined), "nundefined", I(o->nundefined),
		"is_extension", o->is_extension, "has_init", o->has_init,
		"module", fstr(o->module), "ext_suffix", fstr(o->ext_suffix),
		"ext_interpreter", fstr(o->ext_interpreter), "ext_platform", fstr(o->ext_platform),
		"counts", o->counts[0], o->counts[1], o->counts[2], o->counts[3],
		"abi", o->abi, "torch_abi", o->torch_abi, "sections", secs,
		"fatbin_containers", conts, "fatbin_entries", ents,
		"verneeds", vn, "fatbin_wrappers", (int)o->fatbin_wrappers,
		"verdefs", flist(&o->verdefs), "has_sections", json_boolean(o->sections != NULL)));
	if (j && o->fatbin_entries_more) /* counted past max_fatbin_entries: kept as a count */
		json_object_set_new(j, "fatbin_entries_more", json_integer(I(o->fatbin_entries_more)));
	if (j)
		json_object_set_new(j, "sections_lie", fstr(o->sections_lie));
	if (j && o->segments) { /* the PT_LOAD segments: [vaddr, offset, filesz] */
		json_t *segs = json_array();
		for (size_t i = 0; segs && i < o->nsegments; i++)
			json_array_append_new(segs, json_pack("[I, I, I]", I(o->segments[i].vaddr),
				I(o->segments[i].offset), I(o->segments[i].filesz)));
		if (!segs || json_object_set_new(j, "segments", segs) < 0) {
			json_decref(j);
			return NULL;
		}
	}
	return j;
fail:
	json_decref(syms);
	json_decref(secs);
	json_decref(conts);
	json_decref(ents);
	json_decref(vn);
	return NULL;
}

json_t *wg_facts_json(const wg_scan *s)
{
	json_t *fields = json_array(), *lists = json_array(), *members = json_array(),
	       *sources = json_array(), *objects = json_array(), *problems = json_array();
	for (size_t i = 0; fields && i < WG_WHEEL_FIELD_END_; i++)
		json_array_append_new(fields, fstr(s->fields[i]));
	for (size_t i = 0; lists && i < WG_LIST_END_; i++)
		json_array_append_new(lists, flist(&s->lists[i]));
	for (size_t i = 0; members && i < s->members.len; i++) {
		const wg_member *m = wg_vec_at(&s->members, i);
		char hex[65];
		for (size_t k = 0; k < 32; k++)
			snprintf(hex + 2 * k, 3, "%02x", m->sha256[k]);
		json_array_append_new(members, json_pack("[o, I, I, o, b, b, b, b, b, s, o, i]",
			fstr(m->name), I(m->size), I(m->csize), fstr(m->method), m->is_dir, m->is_elf,
			m->safe, m->hashed, m->read_ok, hex, fstr(m->sha256_b64), (int)m->record));
	}
	/* Symbolic-link members, by index: a key of its own, absent when there are none, so
	 * facts stored before it was added still read. */
	json_t *symlinks = NULL;
	for (size_t i = 0; i < s->members.len; i++) {
		const wg_member *m = wg_vec_at(&s->members, i);
		if (m->symlink && (symlinks || (symlinks = json_array())))
			json_array_append_new(symlinks, json_integer((json_int_t)i));
	}
	for (size_t i = 0; sources && i < s->sources.len; i++) {
		const wg_source *src = wg_vec_at(&s->sources, i);
		json_array_append_new(sources, json_pack("[o, o]", fstr(src->name),
							 fbytes(src->text, src->len)));
	}
	for (size_t i = 0; objects && i < s->objects.len; i++)
		json_array_append_new(objects, object_facts(*(wg_object **)wg_vec_at(&s->objects, i)));
	for (size_t i = 0; problems && i < s->problems.len; i++) {
		const wg_problem *p = wg_vec_at(&s->problems, i);
		json_array_append_new(problems, json_pack("[i, o, o]", p->code, fstr(p->where),
							  fstr(p->message)));
	}
	const wg_kernel_variant *k = &s->kernel;
	json_t *kernel = json_pack("{s:o, s:i, s:i, s:i, s:o, s:o, s:i, s:i, s:o, s:o, s:b, s:o, s:o}",
		"name", fstr(k->name), "torch_major", (int)k->torch_major,
		"torch_minor", (int)k->torch_minor, "cxx11", k->cxx11, "compute", fstr(k->compute),
		"compute_label", fstr(k->compute_label), "cuda_major", (int)k->cuda_major,
		"cuda_minor", (int)k->cuda_minor, "cpu", fstr(k->cpu), "os", fstr(k->os),
		"has_metadata", k->has_metadata, "backend", fstr(k->backend),
		"archs", flist(&k->archs));
	/* problems counted past max_problems, by code: [code, count] pairs */
	json_t *pmore = NULL;
	for (size_t c = 0; c < WG_PROBLEM_CODES; c++)
		if (s->problems_more[c]) {
			if (!pmore && !(pmore = json_array()))
				break;
			json_array_append_new(pmore, json_pack("[i, I]", -(int)c, I(s->problems_more[c])));
		}
	json_t *doc = json_pack("{s:i, s:s, s:i, s:o, s:o, s:o, s:o, s:b, s:b, s:o, s:o, s:o, s:o, s:o,"
			 " s:o, s:o, s:o}",
		"version", WG_FACTS_VERSION, "wheelgate_version", wg_version_string(),
		"kind", (int)s->kind, "path", fstr(s->path),
		"file_size", s->file_size >= 0 ? json_integer(I(s->file_size)) : json_null(),
		"fields", fields, "lists", lists,
		"has_record", s->has_record, "repackaged", s->repackaged,
		"python_partial", fstr(s->python_partial),
		"python_partial_why", fstr(s->python_partial_why), "members", members,
		"wheels", flist(&s->wheels), "kernel", kernel, "sources", sources,
		"objects", objects, "problems", problems);
	if (doc && pmore)
		json_object_set_new(doc, "problems_more", pmore);
	else
		json_decref(pmore);
	if (doc && symlinks)
		json_object_set_new(doc, "symlinks", symlinks);
	else
		json_decref(symlinks);
	return doc;
}

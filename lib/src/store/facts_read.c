/*
 * Stored facts read back (docs/facts-store.md): the "facts" member output/facts_json.c wrote,
 * parsed with jansson into a scan that the rules judge as they would the input itself
 * (wg_scan_from_facts); every value is checked, a document that lies is refused.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_STORE /* wg_seterr: what fails here */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

/* ---------------------------------------------------------------------------------------- */
/* reading                                                                                  */

typedef struct {
	wg_scan *scan;
	wg_arena *a;
	const char *where; /* what is being read, for the error */
	char why[200];
	int bad;
} rd;

static int bad(rd *r, const char *what)
{
	if (!r->bad)
		snprintf(r->why, sizeof(r->why), "%s: %s", r->where, what);
	r->bad = 1;
	return -1;
}

/* A string written by fbytes into the arena (NULL allowed when nullable); *n its length. */
static int gbytes(rd *r, json_t *j, const char **out, size_t *n, bool nullable)
{
	*out = NULL;
	if (n)
		*n = 0;
	if (json_is_null(j) && nullable)
		return 0;
	if (json_is_string(j)) {
		size_t len = json_string_length(j);
		if (!n && memchr(json_string_value(j), 0, len))
			return bad(r, "a name holds a NUL byte");
		if (!(*out = wg_arena_strndup(r->a, json_string_value(j), len)))
			return bad(r, "out of memory");
		if (n)
			*n = len;
		return 0;
	}
	json_t *h = json_is_object(j) ? json_object_get(j, "hex") : NULL;
	if (!json_is_string(h) || json_string_length(h) % 2)
		return bad(r, "a string is neither text nor {\"hex\": ...}");
	const char *x = json_string_value(h);
	size_t len = json_string_length(h) / 2;
	char *s = wg_arena_alloc(r->a, len + 1);
	if (!s)
		return bad(r, "out of memory");
	for (size_t i = 0; i < len; i++) {
		int hi = wg_hexval(x[2 * i]), lo = wg_hexval(x[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return bad(r, "a {\"hex\": ...} string is not hexadecimal");
		s[i] = (char)(hi << 4 | lo);
	}
	s[len] = 0;
	if (!n && memchr(s, 0, len))
		return bad(r, "a name holds a NUL byte");
	*out = s;
	if (n)
		*n = len;
	return 0;
}

static const char *gstr(rd *r, json_t *j)
{
	const char *s = NULL;
	gbytes(r, j, &s, NULL, true);
	return s;
}

static uint64_t gint(rd *r, json_t *j, uint64_t max)
{
	if (!json_is_integer(j)) {
		bad(r, "a number is missing");
		return 0;
	}
	uint64_t v = (uint64_t)json_integer_value(j);
	if (max && v > max) {
		bad(r, "a number is out of range");
		return 0;
	}
	return v;
}

static bool gbool(rd *r, json_t *j)
{
	if (!json_is_boolean(j))
		bad(r, "a true/false is missing");
	return json_is_true(j);
}

static void glist(rd *r, wg_strlist *l, json_t *j)
{
	if (!json_is_array(j)) {
		bad(r, "a list is missing");
		return;
	}
	for (size_t i = 0; i < json_array_size(j) && !r->bad; i++) {
		const char *s = NULL;
		if (gbytes(r, json_array_get(j, i), &s, NULL, false) == 0 &&
		    wg_strlist_add(l, r->a, s) < 0)
			bad(r, "out of memory");
	}
}

/* The array j of exactly n items, or NULL (and the error). */
static json_t *tuple(rd *r, json_t *j, size_t n)
{
	if (!json_is_array(j) || json_array_size(j) != n) {
		bad(r, "an item has not the fields it should");
		return NULL;
	}
	return j;
}

#define G(t, i) json_array_get(t, i)
#define O(j, k) json_object_get(j, k)

static void read_object(rd *r, json_t *j)
{
	if (!json_is_object(j)) {
		bad(r, "an object is not a JSON object");
		return;
	}
	const char *path = NULL;
	if (gbytes(r, O(j, "path"), &path, NULL, false) < 0)
		return;
	wg_object *o = wg_scan_new_object(r->scan, path, gint(r, O(j, "size"), 0));
	if (!o) {
		bad(r, "out of memory");
		return;
	}
	wg_vec_init(&o->fatbin_containers, sizeof(wg_fatbin_container));
	wg_vec_init(&o->fatbin_entries, sizeof(wg_fatbin_entry));
	o->error = gstr(r, O(j, "error"));
	o->elf_class = (int)gint(r, O(j, "elf_class"), 255);
	o->machine = (int)gint(r, O(j, "machine"), 65535);
	o->machine_name = gstr(r, O(j, "machine_name"));
	o->type = gstr(r, O(j, "type"));
	o->soname = gstr(r, O(j, "soname"));
	o->rpath = gstr(r, O(j, "rpath"));
	o->runpath = gstr(r, O(j, "runpath"));
	glist(r, &o->needed, O(j, "needed"));
	json_t *syms = O(j, "syms");
	if (!json_is_array(syms)) {
		bad(r, "an object has no symbol list");
		return;
	}
	o->nsyms = json_array_size(syms);
	o->syms = wg_arena_alloc(r->a, (o->nsyms ? o->nsyms : 1) * sizeof(wg_sym));
	if (!o->syms) {
		bad(r, "out of memory");
		return;
	}
	memset(o->syms, 0, (o->nsyms ? o->nsyms : 1) * sizeof(wg_sym));
	for (size_t i = 0; i < o->nsyms && !r->bad; i++) {
		json_t *t = tuple(r, G(syms, i), 11);
		wg_sym *y = &o->syms[i];
		if (!t || gbytes(r, G(t, 0), &y->name, NULL, false) < 0)
			return;
		y->demangled = gstr(r, G(t, 1));
		y->symver = gstr(r, G(t, 2));
		y->hidden = (uint8_t)gint(r, G(t, 3), 1);
		y->defined = (uint8_t)gint(r, G(t, 4), 1);
		y->binding = (uint8_t)gint(r, G(t, 5), 3);
		y->type = (uint8_t)gint(r, G(t, 6), 5);
		y->string_abi = (uint8_t)gint(r, G(t, 7), 3);
		y->torch = (uint8_t)gint(r, G(t, 8), 1);
		y->runtime = (uint8_t)gint(r, G(t, 9), 1);
		y->surface = gbool(r, G(t, 10));
	}
	o->ndefined = gint(r, O(j, "ndefined"), o->nsyms);
	o->nundefined = gint(r, O(j, "nundefined"), o->nsyms);
	o->is_extension = (int)gint(r, O(j, "is_extension"), 1);
	o->has_init = (int)gint(r, O(j, "has_init"), 1);
	o->module = gstr(r, O(j, "module"));
	o->ext_suffix = gstr(r, O(j, "ext_suffix"));
	o->ext_interpreter = gstr(r, O(j, "ext_interpreter"));
	o->ext_platform = gstr(r, O(j, "ext_platform"));
	json_t *counts = tuple(r, O(j, "counts"), 4);
	for (size_t i = 0; counts && i < 4; i++)
		o->counts[i] = (unsigned)gint(r, G(counts, i), UINT32_MAX);
	o->abi = (wg_string_abi)gint(r, O(j, "abi"), WG_ABI_MIXED);
	o->torch_abi = (wg_string_abi)gint(r, O(j, "torch_abi"), WG_ABI_MIXED);
	json_t *secs = O(j, "sections");
	if (!json_is_array(secs)) {
		bad(r, "an object has no section list");
		return;
	}
	o->nsections = json_array_size(secs);
	if (gbool(r, O(j, "has_sections"))) {
		o->sections = wg_arena_alloc(r->a, (o->nsections ? o->nsections : 1) * sizeof(wg_section));
		if (!o->sections) {
			bad(r, "out of memory");
			return;
		}
	} else if (o->nsections) {
		bad(r, "sections listed but none kept");
		return;
	}
	for (size_t i = 0; i < o->nsections && !r->bad; i++) {
		json_t *t = tuple(r, G(secs, i), 6);
		wg_section *s = &o->sections[i];
		if (!t)
			return;
		s->name = gstr(r, G(t, 0));
		s->offset = gint(r, G(t, 1), 0);
		s->size = gint(r, G(t, 2), 0);
		s->vma = gint(r, G(t, 3), 0);
		s->has_contents = gbool(r, G(t, 4));
		s->code = gbool(r, G(t, 5));
	}
	json_t *conts = O(j, "fatbin_containers"), *ents = O(j, "fatbin_entries");
	if (!json_is_array(conts) || !json_is_array(ents)) {
		bad(r, "an object has no fatbin lists");
		return;
	}
	size_t ne = json_array_size(ents);
	for (size_t i = 0; i < json_array_size(conts) && !r->bad; i++) {
		json_t *t = tuple(r, G(conts, i), 7);
		wg_fatbin_container *c = wg_vec_push(&o->fatbin_containers);
		if (!t || !c) {
			bad(r, "out of memory");
			return;
		}
		c->offset = gint(r, G(t, 0), 0);
		c->size = gint(r, G(t, 1), 0);
		c->section = gstr(r, G(t, 2));
		c->registered = gbool(r, G(t, 3));
		c->wrapper_version = (int)gint(r, G(t, 4), 255);
		c->first_entry = gint(r, G(t, 5), ne);
		c->entry_count = gint(r, G(t, 6), ne);
		if (c->first_entry + c->entry_count > ne)
			bad(r, "a fatbin container's entries are out of range");
	}
	for (size_t i = 0; i < ne && !r->bad; i++) {
		json_t *t = tuple(r, G(ents, i), 16);
		wg_fatbin_entry *e = wg_vec_push(&o->fatbin_entries);
		if (!t || !e) {
			bad(r, "out of memory");
			return;
		}
		e->offset = gint(r, G(t, 0), 0);
		e->container = gint(r, G(t, 1), 0);
		if (e->container >= o->fatbin_containers.len)
			bad(r, "a fatbin entry names no container");
		e->kind = (uint16_t)gint(r, G(t, 2), UINT16_MAX);
		e->major = (uint16_t)gint(r, G(t, 3), UINT16_MAX);
		e->minor = (uint16_t)gint(r, G(t, 4), UINT16_MAX);
		e->arch = (uint32_t)gint(r, G(t, 5), UINT32_MAX);
		e->variant = (char)gint(r, G(t, 6), 127);
		e->flags = gint(r, G(t, 7), 0);
		e->header_size = (uint32_t)gint(r, G(t, 8), UINT32_MAX);
		e->compressed_size = (uint32_t)gint(r, G(t, 9), UINT32_MAX);
		e->payload_size = gint(r, G(t, 10), 0);
		e->uncompressed_size = gint(r, G(t, 11), 0);
		e->compression = (int)gint(r, G(t, 12), 255);
		e->debug = gbool(r, G(t, 13));
		e->ptx_version = gstr(r, G(t, 14));
		e->ptx_target = gstr(r, G(t, 15));
	}
	o->fatbin_wrappers = (unsigned)gint(r, O(j, "fatbin_wrappers"), UINT32_MAX);
	if (O(j, "fatbin_entries_more"))
		o->fatbin_entries_more = (size_t)gint(r, O(j, "fatbin_entries_more"), 0);
	json_t *vn = O(j, "verneeds");
	if (!json_is_array(vn)) {
		bad(r, "an object has no version needs");
		return;
	}
	for (size_t i = 0; i < json_array_size(vn) && !r->bad; i++) {
		json_t *t = tuple(r, G(vn, i), 3);
		wg_verneed *x = wg_vec_push(&o->verneeds);
		if (!t || !x) {
			bad(r, "out of memory");
			return;
		}
		if (gbytes(r, G(t, 0), &x->file, NULL, false) < 0 ||
		    gbytes(r, G(t, 1), &x->version, NULL, false) < 0)
			return;
		x->weak = gbool(r, G(t, 2));
	}
	glist(r, &o->verdefs, O(j, "verdefs"));
	json_t *lie = O(j, "sections_lie"); /* absent in facts stored before it was read: none */
	if (lie)
		o->sections_lie = gstr(r, lie);
	/* absent in facts stored before they were kept: the sections stand in for them */
	json_t *segs = O(j, "segments");
	if (!segs)
		return;
	if (!json_is_array(segs)) {
		bad(r, "an object's segment list is not a list");
		return;
	}
	size_t n = json_array_size(segs);
	if (!(o->segments = wg_arena_alloc(r->a, (n ? n : 1) * sizeof(wg_segment)))) {
		bad(r, "out of memory");
		return;
	}
	for (size_t i = 0; i < n && !r->bad; i++) {
		json_t *t = tuple(r, G(segs, i), 3);
		if (!t)
			return;
		wg_segment *g = &o->segments[o->nsegments++];
		g->vaddr = gint(r, G(t, 0), 0);
		g->offset = gint(r, G(t, 1), 0);
		g->filesz = gint(r, G(t, 2), 0);
	}
}

static void read_facts(rd *r, json_t *f)
{
	wg_scan *s = r->scan;
	json_t *fields = O(f, "fields"), *lists = O(f, "lists");
	if (!json_is_array(fields) || json_array_size(fields) > WG_WHEEL_FIELD_END_ ||
	    !json_is_array(lists) || json_array_size(lists) > WG_LIST_END_) {
		bad(r, "\"fields\" or \"lists\" is not what this wheelgate writes");
		return;
	}
	for (size_t i = 0; i < json_array_size(fields); i++)
		s->fields[i] = gstr(r, G(fields, i));
	for (size_t i = 0; i < json_array_size(lists); i++)
		glist(r, &s->lists[i], G(lists, i));
	/* optional (older stores lack it): null or absent is unknown */
	json_t *fsz = O(f, "file_size");
	if (fsz && !json_is_null(fsz))
		s->file_size = (int64_t)gint(r, fsz, (uint64_t)INT64_MAX);
	s->stored_by = gstr(r, O(f, "wheelgate_version"));
	if (!s->stored_by && !r->bad)
		s->stored_by = "unknown";
	s->has_record = gbool(r, O(f, "has_record"));
	s->repackaged = gbool(r, O(f, "repackaged"));
	s->python_partial = gstr(r, O(f, "python_partial"));
	s->python_partial_why = gstr(r, O(f, "python_partial_why"));
	json_t *members = O(f, "members");
	if (!json_is_array(members)) {
		bad(r, "\"members\" is missing");
		return;
	}
	for (size_t i = 0; i < json_array_size(members) && !r->bad; i++) {
		json_t *t = tuple(r, G(members, i), 12);
		wg_member *m = t ? wg_vec_push(&s->members) : NULL;
		if (!m) {
			bad(r, "out of memory");
			return;
		}
		if (gbytes(r, G(t, 0), &m->name, NULL, false) < 0)
			return;
		m->size = gint(r, G(t, 1), 0);
		m->csize = gint(r, G(t, 2), 0);
		m->method = gstr(r, G(t, 3));
		/* one of the names the zip reader gives (lib/src/input/zip.c), as the inspect
		 * document's schema lists them */
		static const char *const methods[] = {"store", "deflate", "deflate64", "bzip2",
						      "lzma", "xz", "zstd", "unknown"};
		bool known = false;
		for (size_t k = 0; m->method && k < sizeof(methods) / sizeof(*methods); k++)
			known |= !strcmp(m->method, methods[k]);
		if (!known && !r->bad) {
			bad(r, "a member's compression method is none this wheelgate writes");
			return;
		}
		m->is_dir = gbool(r, G(t, 4));
		m->is_elf = gbool(r, G(t, 5));
		m->safe = gbool(r, G(t, 6));
		m->hashed = gbool(r, G(t, 7));
		m->read_ok = gbool(r, G(t, 8));
		const char *hex = json_string_value(G(t, 9));
		if (!hex || strlen(hex) != 64) {
			bad(r, "a member's sha256 is not 64 hexadecimal digits");
			return;
		}
		for (size_t k = 0; k < 32; k++) {
			int hi = wg_hexval(hex[2 * k]), lo = wg_hexval(hex[2 * k + 1]);
			if (hi < 0 || lo < 0) {
				bad(r, "a member's sha256 is not 64 hexadecimal digits");
				return;
			}
			m->sha256[k] = (uint8_t)(hi << 4 | lo);
		}
		m->sha256_b64 = gstr(r, G(t, 10));
		m->record = (wg_record_status)gint(r, G(t, 11), WG_RECORD_REPACKAGED);
	}
	json_t *links = O(f, "symlinks"); /* optional: absent when no member is one */
	if (links && !json_is_array(links))
		bad(r, "\"symlinks\" is not a list");
	for (size_t i = 0; links && i < json_array_size(links) && !r->bad; i++) {
		json_t *v = G(links, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    (uint64_t)json_integer_value(v) >= s->members.len) {
			bad(r, "a symlink is not a member's index");
			break;
		}
		((wg_member *)wg_vec_at(&s->members, (size_t)json_integer_value(v)))->symlink = true;
	}
	glist(r, &s->wheels, O(f, "wheels"));
	json_t *k = O(f, "kernel");
	if (!json_is_object(k)) {
		bad(r, "\"kernel\" is missing");
		return;
	}
	wg_kernel_variant *kv = &s->kernel;
	kv->name = gstr(r, O(k, "name"));
	kv->torch_major = (unsigned)gint(r, O(k, "torch_major"), UINT32_MAX);
	kv->torch_minor = (unsigned)gint(r, O(k, "torch_minor"), UINT32_MAX);
	json_t *cx = O(k, "cxx11");
	kv->cxx11 = json_is_integer(cx) && json_integer_value(cx) >= -1 && json_integer_value(cx) <= 1
			    ? (int)json_integer_value(cx) : (bad(r, "\"cxx11\" is not -1, 0 or 1"), -1);
	kv->compute = gstr(r, O(k, "compute"));
	kv->compute_label = gstr(r, O(k, "compute_label"));
	kv->cuda_major = (unsigned)gint(r, O(k, "cuda_major"), UINT32_MAX);
	kv->cuda_minor = (unsigned)gint(r, O(k, "cuda_minor"), UINT32_MAX);
	kv->cpu = gstr(r, O(k, "cpu"));
	kv->os = gstr(r, O(k, "os"));
	kv->has_metadata = gbool(r, O(k, "has_metadata"));
	kv->backend = gstr(r, O(k, "backend"));
	glist(r, &kv->archs, O(k, "archs"));
	json_t *sources = O(f, "sources");
	if (!json_is_array(sources)) {
		bad(r, "\"sources\" is missing");
		return;
	}
	for (size_t i = 0; i < json_array_size(sources) && !r->bad; i++) {
		json_t *t = tuple(r, G(sources, i), 2);
		const char *name = NULL, *text = NULL;
		size_t len = 0;
		if (!t || gbytes(r, G(t, 0), &name, NULL, false) < 0 ||
		    gbytes(r, G(t, 1), &text, &len, false) < 0)
			return;
		wg_source *src = wg_vec_push(&s->sources);
		if (!src || !(src->text = malloc(len + 1))) {
			if (src)
				s->sources.len--;
			bad(r, "out of memory");
			return;
		}
		memcpy(src->text, text, len);
		src->text[len] = 0;
		src->len = len;
		src->name = name;
	}
	json_t *objects = O(f, "objects"), *problems = O(f, "problems");
	if (!json_is_array(objects) || !json_is_array(problems)) {
		bad(r, "\"objects\" or \"problems\" is missing");
		return;
	}
	for (size_t i = 0; i < json_array_size(objects) && !r->bad; i++)
		read_object(r, G(objects, i));
	for (size_t i = 0; i < json_array_size(problems) && !r->bad; i++) {
		json_t *t = tuple(r, G(problems, i), 3);
		wg_problem *p = t ? wg_vec_push(&s->problems) : NULL;
		if (!p) {
			bad(r, "out of memory");
			return;
		}
		json_t *c = G(t, 0);
		p->code = json_is_integer(c) && json_integer_value(c) <= 0 &&
				  json_integer_value(c) >= -100 ? (int)json_integer_value(c)
								: (bad(r, "a problem's code is out of range"), 0);
		p->where = gstr(r, G(t, 1));
		if (gbytes(r, G(t, 2), &p->message, NULL, false) < 0)
			return;
	}
	json_t *pmore = O(f, "problems_more");
	for (size_t i = 0; pmore && i < json_array_size(pmore) && !r->bad; i++) {
		json_t *t = tuple(r, G(pmore, i), 2);
		json_t *c = t ? G(t, 0) : NULL;
		if (!json_is_integer(c) || json_integer_value(c) > 0 ||
		    json_integer_value(c) <= -WG_PROBLEM_CODES) {
			bad(r, "a problem count's code is out of range");
			return;
		}
		s->problems_more[-json_integer_value(c)] += (size_t)gint(r, G(t, 1), 0);
	}
}

static int wg_scan_from_facts_impl(wg_scan **out, wg_scanner *sc, const char *json, size_t len)
{
	if (!out || !sc || (!json && len))
		return wg_null_arg("wg_scan_from_facts");
	*out = NULL;
	json_error_t jerr;
	json_t *doc = json_loadb(json ? json : "", len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return wg_seterr(&sc->err, WG_EFORMAT, "stored facts: not JSON: %s (line %d)",
				 jerr.text, jerr.line);
	/* The inspect document of one input, or that input alone. */
	json_t *item = doc, *inputs = json_object_get(doc, "inputs");
	if (json_is_array(inputs))
		item = json_array_size(inputs) == 1 ? json_array_get(inputs, 0) : NULL;
	json_t *f = json_is_object(item) ? json_object_get(item, "facts") : NULL;
	json_t *ver = json_object_get(f, "version"), *kind = json_object_get(f, "kind");
	/* the path as written (text, or {"hex": ...}), in an arena of its own for now */
	wg_arena pa = {0};
	rd pr = {NULL, &pa, "stored facts", "", 0};
	const char *path = NULL;
	if (json_is_object(f))
		gbytes(&pr, json_object_get(f, "path"), &path, NULL, false);
	int rc;
	if (!json_is_object(f)) {
		rc = wg_seterr(&sc->err, WG_EFORMAT, "stored facts: no \"facts\" of one input (an "
			       "inspect document written with --facts-dir holds them)");
	} else if (!json_is_integer(ver) || json_integer_value(ver) != WG_FACTS_VERSION) {
		rc = wg_seterr(&sc->err, WG_EUNSUPPORTED, "stored facts: version %s is not the one "
			       "this wheelgate reads (%d)", json_is_integer(ver) ? "other" : "missing",
			       WG_FACTS_VERSION);
	} else if (!json_is_integer(kind) || json_integer_value(kind) < WG_SCAN_WHEEL ||
		   json_integer_value(kind) > WG_SCAN_INSTALLED || !path) {
		rc = wg_seterr(&sc->err, WG_EFORMAT, "stored facts: no valid \"kind\" and \"path\"");
	} else {
		wg_scan *s = wg_scan_new((wg_scan_kind)json_integer_value(kind), path, sc->ctx);
		rd r = {s, s ? &s->arena : NULL, "stored facts", "", 0};
		if (!s) {
			rc = wg_seterr(&sc->err, WG_ENOMEM, "out of memory");
		} else {
			read_facts(&r, f);
			if (r.bad) {
				rc = wg_seterr(&sc->err, WG_EFORMAT, "%s", r.why);
				wg_scan_free(s);
			} else {
				*out = s;
				rc = WG_OK;
			}
		}
	}
	wg_arena_free(&pa);
	json_decref(doc);
	return rc;
}

/* The scanner keeps the message; a failure also fills this thread's error record. */
WG_API int wg_scan_from_facts(wg_scan **out, wg_scanner *sc, const char *json, size_t len)
{
	if (sc)
		sc->err.msg[0] = '\0';
	return wg_error_from(sc ? &sc->err : NULL, wg_scan_from_facts_impl(out, sc, json, len));
}

/*
 * The dynamic segment as ld.so reads it: the PT_LOAD segments that map addresses to file
 * bytes, the dynamic array PT_DYNAMIC points at (SONAME, NEEDED, RPATH/RUNPATH, the tables'
 * addresses) and the symbol version tables. Every address goes through the segments, every
 * read is bounds-checked against the segment and the file, every loop bounded by the file.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ELF /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/elf_internal.h"

enum { MAP_OK, MAP_NOWHERE, MAP_PAST_END };

/* The file bytes at virtual address addr, and how many follow in the same segment and file. */
static int map_vaddr(const elf_view *v, uint64_t addr, const uint8_t **p, uint64_t *avail)
{
	if (v->phnum) {
		for (uint64_t i = 0; i < v->phnum; i++) {
			if (PH_TYPE(v, i) != PT_LOAD)
				continue;
			uint64_t vaddr = PH_VADDR(v, i), filesz = PH_FILESZ(v, i), off = PH_OFFSET(v, i);
			if (addr < vaddr || addr - vaddr >= filesz)
				continue;
			if (off > v->len || addr - vaddr >= v->len - off)
				return MAP_PAST_END;
			uint64_t at = off + (addr - vaddr), left = filesz - (addr - vaddr);
			*p = v->data + at;
			*avail = left < v->len - at ? left : v->len - at;
			return MAP_OK;
		}
		return MAP_NOWHERE;
	}
	/* No program headers: the loaded (alloc) sections stand in for the segments. */
	for (asection *s = v->abfd->sections; s; s = s->next) {
		flagword f = bfd_section_flags(s);
		uint64_t vma = bfd_section_vma(s), size = bfd_section_size(s);
		if ((f & (SEC_ALLOC | SEC_HAS_CONTENTS)) != (SEC_ALLOC | SEC_HAS_CONTENTS) ||
		    s->filepos < 0 || addr < vma || addr - vma >= size)
			continue;
		uint64_t at = (uint64_t)s->filepos + (addr - vma);
		if (at >= v->len)
			return MAP_PAST_END;
		uint64_t left = size - (addr - vma);
		*p = v->data + at;
		*avail = left < v->len - at ? left : v->len - at;
		return MAP_OK;
	}
	return MAP_NOWHERE;
}

/* The PT_LOAD segments, kept for the readers that map addresses on the raw bytes (fatbins). */
int wg_elf_read_segments(wg_object *obj, wg_arena *a, const elf_view *v)
{
	size_t n = 0;
	for (uint64_t i = 0; i < v->phnum; i++)
		n += PH_TYPE(v, i) == PT_LOAD;
	obj->nsegments = 0;
	obj->segments = wg_arena_alloc(a, (n ? n : 1) * sizeof(wg_segment));
	if (!obj->segments)
		return WG_ENOMEM;
	for (uint64_t i = 0; i < v->phnum; i++)
		if (PH_TYPE(v, i) == PT_LOAD)
			obj->segments[obj->nsegments++] = (wg_segment){PH_VADDR(v, i), PH_OFFSET(v, i),
								       PH_FILESZ(v, i)};
	return WG_OK;
}

/* Maps a dynamic entry's address, or says which entry points where. */
int wg_elf_map_entry(const elf_view *v, const char *tag, uint64_t addr, const uint8_t **p,
		     uint64_t *avail, wg_err *err)
{
	int r = map_vaddr(v, addr, p, avail);
	if (r == MAP_NOWHERE)
		return wg_seterr(err, WG_EFORMAT,
				 "%s: dynamic entry %s (address 0x%llx) lies in no loadable segment",
				 v->path, tag, (unsigned long long)addr);
	if (r == MAP_PAST_END)
		return wg_seterr(err, WG_EFORMAT,
				 "%s: dynamic entry %s (address 0x%llx) maps past the end of the file "
				 "(%zu bytes): truncated or corrupt ELF", v->path, tag,
				 (unsigned long long)addr, v->len);
	return WG_OK;
}


/*
 * Reads SONAME, NEEDED, RPATH and RUNPATH from the dynamic array that PT_DYNAMIC points at
 * (the .dynamic section only where there is no PT_DYNAMIC), and the addresses of the symbol,
 * hash, relocation and version tables. Every address goes through the PT_LOAD segments and
 * every read is bounds-checked.
 */
int wg_elf_read_dynamic(wg_object *obj, wg_arena *a, const elf_view *v, dyninfo *di, wg_err *err)
{
	memset(di, 0, sizeof(*di));
	const uint8_t *p = NULL;
	uint64_t size = 0, where = 0, pltrel = 0;
	bool found = false;
	for (uint64_t i = 0; i < v->phnum && !found; i++) {
		if (PH_TYPE(v, i) != PT_DYNAMIC)
			continue;
		found = true;
		where = PH_OFFSET(v, i);
		size = PH_FILESZ(v, i);
	}
	if (!found) {
		asection *dyn = bfd_get_section_by_name(v->abfd, ".dynamic");
		if (!dyn || !(bfd_section_flags(dyn) & SEC_HAS_CONTENTS))
			return WG_OK;
		if (dyn->filepos < 0)
			return wg_seterr(err, WG_EFORMAT, "%s: section .dynamic has no file offset",
					 obj->path);
		where = (uint64_t)dyn->filepos;
		size = bfd_section_size(dyn);
	}
	if (where > v->len || size > v->len - where)
		return wg_seterr(err, WG_EFORMAT,
				 "%s: the dynamic %s (offset %llu, %llu bytes) extends past the end of "
				 "the file (%zu bytes)", obj->path, found ? "segment" : "section",
				 (unsigned long long)where, (unsigned long long)size, v->len);
	di->where = where;
	di->size = size;
	di->from_segment = found;
	p = v->data + where;
	size_t entsize = v->is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	int w = v->is64 ? 8 : 4;
	di->entsize = entsize;
	uint64_t strtab = 0, strsz = 0;
	bool have_strtab = false, have_strsz = false, uses_strings = false;
	/* Pass 1: the tables' addresses; pass 2: the entries that name strings. */
	for (uint64_t off = 0; off + entsize <= size; off += entsize) {
		uint64_t tag = get_n(p + off, w, v->little), val = get_n(p + off + w, w, v->little);
		di->used++;
		if (tag == DT_NULL)
			break;
		switch (tag) {
		case DT_STRTAB: strtab = val; have_strtab = true; break;
		case DT_STRSZ: strsz = val; have_strsz = true; break;
		case DT_VERNEED: di->verneed = val; di->have_verneed = true; break;
		case DT_VERNEEDNUM: di->verneednum = val; break;
		case DT_VERDEF: di->verdef = val; di->have_verdef = true; break;
		case DT_VERDEFNUM: di->verdefnum = val; break;
		case DT_SYMTAB: di->symtab = val; di->have_symtab = true; break;
		case DT_SYMENT: di->syment = val; break;
		case DT_HASH: di->hash = val; di->have_hash = true; break;
		case DT_GNU_HASH: di->gnu_hash = val; di->have_gnu_hash = true; break;
		case DT_VERSYM: di->versym = val; di->have_versym = true; break;
		case DT_RELA: di->rel[0] = val; di->have_rel[0] = true; break;
		case DT_RELASZ: di->relsz[0] = val; break;
		case DT_RELAENT: di->relent[0] = val; break;
		case DT_REL: di->rel[1] = val; di->have_rel[1] = true; break;
		case DT_RELSZ: di->relsz[1] = val; break;
		case DT_RELENT: di->relent[1] = val; break;
		case DT_JMPREL: di->rel[2] = val; di->have_rel[2] = true; break;
		case DT_PLTRELSZ: di->relsz[2] = val; break;
		case DT_PLTREL: pltrel = val; break;
		case DT_NEEDED: case DT_SONAME: case DT_RPATH: case DT_RUNPATH:
			uses_strings = true;
			break;
		}
	}
	di->rel_is_rela[0] = true;
	di->rel_is_rela[2] = pltrel == DT_RELA || (pltrel != DT_REL && v->is64);
	di->relent[2] = di->rel_is_rela[2] ? di->relent[0] : di->relent[1];
	if (have_strtab) {
		int rc = wg_elf_map_entry(v, "DT_STRTAB", strtab, &di->str, &di->strlen, err);
		if (rc < 0)
			return rc;
		if (have_strsz && strsz < di->strlen)
			di->strlen = strsz;
	} else if (uses_strings || di->have_verneed || di->have_verdef || di->have_symtab) {
		return wg_seterr(err, WG_EFORMAT,
				 "%s: the dynamic section names libraries, versions or symbols but has "
				 "no DT_STRTAB", obj->path);
	}
	for (uint64_t off = 0; off + entsize <= size; off += entsize) {
		uint64_t tag = get_n(p + off, w, v->little), val = get_n(p + off + w, w, v->little);
		if (tag == DT_NULL)
			break;
		if (tag != DT_NEEDED && tag != DT_SONAME && tag != DT_RPATH && tag != DT_RUNPATH)
			continue;
		if (val >= di->strlen || !memchr(di->str + val, '\0', di->strlen - val))
			return wg_seterr(err, WG_EFORMAT,
					 "%s: dynamic entry %llu points outside the string table "
					 "(offset %llu of %llu bytes)", obj->path,
					 (unsigned long long)(off / entsize), (unsigned long long)val,
					 (unsigned long long)di->strlen);
		const char *s = (const char *)di->str + val;
		if (tag == DT_NEEDED) {
			if (wg_strlist_add(&obj->needed, a, s) < 0)
				return WG_ENOMEM;
		} else {
			const char *copy = wg_arena_strdup(a, s);
			if (!copy)
				return WG_ENOMEM;
			if (tag == DT_SONAME)
				obj->soname = copy;
			else if (tag == DT_RPATH)
				obj->rpath = copy;
			else
				obj->runpath = copy;
		}
	}
	return WG_OK;
}

const char *wg_elf_dynstring(const uint8_t *str, uint64_t len, uint64_t off)
{
	if (!str || off >= len || !memchr(str + off, '\0', len - off))
		return NULL;
	return (const char *)str + off;
}
/*
 * The symbol version tables that DT_VERNEED (what the object needs: {file, version}) and
 * DT_VERDEF (what it defines) point at, DT_VERNEEDNUM/DT_VERDEFNUM records long. Every record
 * and string is bounds-checked against the segment holding the table; the chains cannot loop
 * (each step moves forward) and stop at 4096 records whatever the counts say. vt, where
 * given, gets the names by version index. In the loader's view (di->from_segment) a link past
 * the table is an error: ld.so would follow it out of the table.
 */
static int chain_error(const elf_view *v, const char *table, uint64_t n, wg_err *err)
{
	return wg_seterr(err, WG_EFORMAT, "%s: %s record %llu links past the end of its table",
			 v->path, table, (unsigned long long)n);
}

int wg_elf_read_versions(wg_object *obj, wg_arena *a, const elf_view *v, const dyninfo *di,
			 vertab *vt, wg_err *err)
{
	const uint8_t *d;
	uint64_t size;
	int rc;
	bool little = v->little;
	if (di->have_verneed) {
		if ((rc = wg_elf_map_entry(v, "DT_VERNEED", di->verneed, &d, &size, err)) < 0)
			return rc;
		uint64_t num = di->verneednum ? di->verneednum : 4096;
		for (uint64_t vn = 0, n = 0; n < num && n < 4096 && vn + sizeof(Elf64_Verneed) <= size;
		     n++) {
			const uint8_t *r = d + vn;
			uint16_t cnt = (uint16_t)GET(r, Elf64_Verneed, vn_cnt, little);
			const char *file = wg_elf_dynstring(di->str, di->strlen,
						     GET(r, Elf64_Verneed, vn_file, little));
			uint32_t aux = (uint32_t)GET(r, Elf64_Verneed, vn_aux, little);
			uint32_t next = (uint32_t)GET(r, Elf64_Verneed, vn_next, little);
			for (uint64_t va = vn + aux, k = 0;
			     k < cnt && va + sizeof(Elf64_Vernaux) <= size && aux; k++) {
				const uint8_t *x = d + va;
				uint16_t flags = (uint16_t)GET(x, Elf64_Vernaux, vna_flags, little);
				uint16_t other = (uint16_t)GET(x, Elf64_Vernaux, vna_other, little);
				const char *ver = wg_elf_dynstring(di->str, di->strlen,
							    GET(x, Elf64_Vernaux, vna_name, little));
				uint32_t vnext = (uint32_t)GET(x, Elf64_Vernaux, vna_next, little);
				if (vt && ver && !vt->need[other & 0x7fff])
					vt->need[other & 0x7fff] = ver;
				if (file && ver) {
					wg_verneed *y = wg_vec_push(&obj->verneeds);
					if (!y)
						return WG_ENOMEM;
					y->file = wg_arena_strdup(a, file);
					y->version = wg_arena_strdup(a, ver);
					if (!y->file || !y->version)
						return WG_ENOMEM;
					y->weak = (flags & VER_FLG_WEAK) != 0;
				}
				if (!vnext)
					break;
				if (di->from_segment && va + vnext + sizeof(Elf64_Vernaux) > size)
					return chain_error(v, "DT_VERNEED", n, err);
				va += vnext;
			}
			if (!next)
				break;
			if (di->from_segment && vn + next + sizeof(Elf64_Verneed) > size)
				return chain_error(v, "DT_VERNEED", n, err);
			vn += next;
		}
	}
	if (di->have_verdef) {
		if ((rc = wg_elf_map_entry(v, "DT_VERDEF", di->verdef, &d, &size, err)) < 0)
			return rc;
		uint64_t num = di->verdefnum ? di->verdefnum : 4096;
		for (uint64_t vd = 0, n = 0; n < num && n < 4096 && vd + sizeof(Elf64_Verdef) <= size;
		     n++) {
			const uint8_t *r = d + vd;
			uint16_t flags = (uint16_t)GET(r, Elf64_Verdef, vd_flags, little);
			uint16_t ndx = (uint16_t)GET(r, Elf64_Verdef, vd_ndx, little) & 0x7fff;
			uint32_t aux = (uint32_t)GET(r, Elf64_Verdef, vd_aux, little);
			uint32_t next = (uint32_t)GET(r, Elf64_Verdef, vd_next, little);
			const char *ver = NULL;
			if (aux && vd + aux + sizeof(Elf64_Verdaux) <= size)
				ver = wg_elf_dynstring(di->str, di->strlen,
						GET(d + vd + aux, Elf64_Verdaux, vda_name, little));
			if (vt) {
				if (ver && !vt->def[ndx])
					vt->def[ndx] = ver;
				if (ndx > vt->ndefs)
					vt->ndefs = ndx;
				if (ndx == 1 && !vt->have_flags1) {
					vt->flags1 = flags;
					vt->have_flags1 = true;
				}
			}
			if (ver && !(flags & VER_FLG_BASE) /* the base is the soname */ &&
			    wg_strlist_add(&obj->verdefs, a, ver) < 0)
				return WG_ENOMEM;
			if (!next)
				break;
			if (di->from_segment && vd + next + sizeof(Elf64_Verdef) > size)
				return chain_error(v, "DT_VERDEF", n, err);
			vd += next;
		}
	}
	return WG_OK;
}

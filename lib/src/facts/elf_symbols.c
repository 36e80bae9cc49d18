/*
 * The dynamic symbol table as the loader sees it: how many entries DT_SYMTAB has (the hash
 * tables and the relocations tell), each named in DT_STRTAB and versioned by DT_VERSYM, kept
 * as libbfd would give them so that the two views compare entry by entry.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ELF /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/elf_internal.h"

/*
 * How many entries the dynamic symbol table has, as far as the loader can reach them: DT_HASH's
 * nchain, the end of DT_GNU_HASH's last chain (linkers put the hashed symbols last, so that
 * is the table's end; with no hashed symbol, its symoffset), and every symbol a dynamic
 * relocation names (an undefined symbol after the hashed ones is still bound). The largest
 * wins. Each table is bounded by the segment that holds it; each loop by the file.
 */
static int count_dynsyms(const elf_view *v, const dyninfo *di, uint64_t *count, wg_err *err)
{
	const uint8_t *p;
	uint64_t avail, n = 0;
	int rc;
	bool little = v->little;
	if (di->have_hash) {
		if ((rc = wg_elf_map_entry(v, "DT_HASH", di->hash, &p, &avail, err)) < 0)
			return rc;
		/* 4-byte words on every machine wheelgate names (8 only on alpha and s390x 64) */
		int hw = v->is64 && (get_n(v->data + 18, 2, little) == EM_S390 ||
				     get_n(v->data + 18, 2, little) == EM_ALPHA) ? 8 : 4;
		if (avail < 2u * (unsigned)hw)
			return wg_seterr(err, WG_EFORMAT, "%s: DT_HASH is truncated", v->path);
		uint64_t nbucket = get_n(p, hw, little), nchain = get_n(p + hw, hw, little);
		if (nbucket > avail / (unsigned)hw || nchain > avail / (unsigned)hw ||
		    nbucket + nchain > (avail - 2u * (unsigned)hw) / (unsigned)hw)
			return wg_seterr(err, WG_EFORMAT,
					 "%s: DT_HASH's %llu buckets and %llu chains run past its "
					 "segment", v->path, (unsigned long long)nbucket,
					 (unsigned long long)nchain);
		n = nchain;
	}
	if (di->have_gnu_hash) {
		if ((rc = wg_elf_map_entry(v, "DT_GNU_HASH", di->gnu_hash, &p, &avail, err)) < 0)
			return rc;
		if (avail < 16)
			return wg_seterr(err, WG_EFORMAT, "%s: DT_GNU_HASH is truncated", v->path);
		uint64_t nbuckets = get_n(p, 4, little), symoffset = get_n(p + 4, 4, little);
		uint64_t bloom = get_n(p + 8, 4, little);
		uint64_t buckets = 16 + bloom * (v->is64 ? 8 : 4); /* < 2^35: no overflow */
		if (buckets > avail || nbuckets > (avail - buckets) / 4)
			return wg_seterr(err, WG_EFORMAT,
					 "%s: DT_GNU_HASH's %llu bloom words and %llu buckets run past "
					 "its segment", v->path, (unsigned long long)bloom,
					 (unsigned long long)nbuckets);
		uint64_t chains = buckets + 4 * nbuckets, top = 0, gn = symoffset;
		bool any = false;
		for (uint64_t i = 0; i < nbuckets; i++) {
			uint64_t b = get_n(p + buckets + 4 * i, 4, little);
			if (!b)
				continue;
			if (b < symoffset)
				return wg_seterr(err, WG_EFORMAT,
						 "%s: DT_GNU_HASH bucket %llu names symbol %llu, below "
						 "its first hashed symbol %llu", v->path,
						 (unsigned long long)i, (unsigned long long)b,
						 (unsigned long long)symoffset);
			if (b > top)
				top = b;
			any = true;
		}
		if (any) {
			/* The last chain ends at the first word with its low bit set. */
			uint64_t k = top - symoffset, room = (avail - chains) / 4;
			for (;; k++) {
				if (k >= room)
					return wg_seterr(err, WG_EFORMAT,
							 "%s: DT_GNU_HASH's last chain runs past its "
							 "segment", v->path);
				if (get_n(p + chains + 4 * k, 4, little) & 1)
					break;
			}
			gn = symoffset + k + 1;
		}
		if (gn > n)
			n = gn;
	}
	static const char *const names[3] = {"DT_RELA", "DT_REL", "DT_JMPREL"};
	int w = v->is64 ? 8 : 4;
	for (int t = 0; t < 3; t++) {
		if (!di->have_rel[t] || !di->relsz[t])
			continue;
		if ((rc = wg_elf_map_entry(v, names[t], di->rel[t], &p, &avail, err)) < 0)
			return rc;
		uint64_t least = (uint64_t)w * (di->rel_is_rela[t] ? 3 : 2);
		uint64_t ent = di->relent[t] ? di->relent[t] : least;
		if (ent < least || ent > 256)
			return wg_seterr(err, WG_EFORMAT, "%s: %s entries of %llu bytes", v->path,
					 names[t], (unsigned long long)ent);
		if (di->relsz[t] > avail)
			return wg_seterr(err, WG_EFORMAT,
					 "%s: %s (%llu bytes) runs past its segment", v->path,
					 names[t], (unsigned long long)di->relsz[t]);
		for (uint64_t off = 0; off + ent <= di->relsz[t]; off += ent) {
			uint64_t info = get_n(p + off + w, w, little);
			uint64_t sym = v->is64 ? ELF64_R_SYM(info) : ELF32_R_SYM(info);
			if (sym + 1 > n)
				n = sym + 1;
		}
	}
	*count = n;
	return WG_OK;
}

int wg_elf_keep_sym(wg_object *obj, wg_arena *a, bfd *abfd, const symview *x)
{
	wg_sym *y = &obj->syms[obj->nsyms];
	memset(y, 0, sizeof(*y));
	if (!(y->name = wg_arena_strndup(a, x->name, x->namelen)))
		return WG_ENOMEM;
	if (x->symver && !(y->symver = wg_arena_strdup(a, x->symver)))
		return WG_ENOMEM;
	y->hidden = x->hidden;
	y->defined = x->defined;
	y->binding = x->binding;
	y->type = x->type;
	if (y->name[0] == '_' && y->name[1] == 'Z') {
		char *d = bfd_demangle(abfd, y->name, DEMANGLE_FLAGS);
		if (d) {
			y->demangled = wg_arena_strdup(a, d);
			free(d);
			if (!y->demangled)
				return WG_ENOMEM;
		}
	}
	if (y->defined)
		obj->ndefined++;
	else
		obj->nundefined++;
	obj->nsyms++;
	return WG_OK;
}

/*
 * The dynamic symbols as the loader sees them: count_dynsyms() entries of DT_SYMTAB (entry 0
 * is the null symbol), named in DT_STRTAB, versioned by DT_VERSYM through vt. What is kept,
 * and how binding, type and version read, is what libbfd gives for the same table (so the
 * two views compare entry by entry): section and file symbols and unnamed ones are not kept;
 * index 0 and the base version read as no version.
 */
int wg_elf_read_loader_symbols(wg_object *obj, wg_arena *a, const elf_view *v, const dyninfo *di,
			       const vertab *vt, uint32_t max_symbols, wg_err *err)
{
	uint64_t count = 0;
	int rc;
	if (!di->have_symtab)
		return WG_OK;
	if ((rc = count_dynsyms(v, di, &count, err)) < 0)
		return rc;
	if (count > (uint64_t)max_symbols + 1)
		return wg_seterr(err, WG_ELIMIT, "%s: more than %u dynamic symbols (limit max_symbols)",
				 obj->path, max_symbols);
	uint64_t syment = v->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	if (di->syment && di->syment != syment)
		return wg_seterr(err, WG_EFORMAT, "%s: DT_SYMENT is %llu, not %llu", obj->path,
				 (unsigned long long)di->syment, (unsigned long long)syment);
	if (count <= 1)
		return WG_OK;
	const uint8_t *st, *vs = NULL;
	uint64_t avail, vavail = 0;
	if ((rc = wg_elf_map_entry(v, "DT_SYMTAB", di->symtab, &st, &avail, err)) < 0)
		return rc;
	if (count > avail / syment)
		return wg_seterr(err, WG_EFORMAT,
				 "%s: the dynamic symbol table holds %llu symbols (by its hash tables "
				 "and relocations), but only %llu fit in its segment", obj->path,
				 (unsigned long long)count, (unsigned long long)(avail / syment));
	bool versioned = di->have_versym && (di->have_verdef || di->have_verneed);
	if (versioned) {
		if ((rc = wg_elf_map_entry(v, "DT_VERSYM", di->versym, &vs, &vavail, err)) < 0)
			return rc;
		if (count > vavail / 2)
			return wg_seterr(err, WG_EFORMAT,
					 "%s: DT_VERSYM holds fewer than the %llu dynamic symbols",
					 obj->path, (unsigned long long)count);
	}
	if (!(obj->syms = wg_arena_alloc(a, (size_t)count * sizeof(wg_sym))))
		return WG_ENOMEM;
	bool little = v->little;
	for (uint64_t i = 1; i < count; i++) {
		const uint8_t *e = st + i * syment;
		uint64_t name;
		unsigned info, shndx;
		if (v->is64) {
			name = GET(e, Elf64_Sym, st_name, little);
			info = (unsigned)GET(e, Elf64_Sym, st_info, little);
			shndx = (unsigned)GET(e, Elf64_Sym, st_shndx, little);
		} else {
			name = GET(e, Elf32_Sym, st_name, little);
			info = (unsigned)GET(e, Elf32_Sym, st_info, little);
			shndx = (unsigned)GET(e, Elf32_Sym, st_shndx, little);
		}
		unsigned type = ELF64_ST_TYPE(info), bind = ELF64_ST_BIND(info);
		if (type == STT_SECTION || type == STT_FILE)
			continue;
		const char *nm = wg_elf_dynstring(di->str, di->strlen, name);
		if (!nm || !*nm)
			continue;
		symview x = {nm, NULL, strlen(nm), shndx != SHN_UNDEF, false, 0, 0};
		x.binding = bind == STB_GNU_UNIQUE ? WG_BIND_UNIQUE
			    : bind == STB_WEAK     ? WG_BIND_WEAK
			    : bind == STB_GLOBAL || !x.defined ? WG_BIND_GLOBAL
							       : WG_BIND_LOCAL;
		x.type = type == STT_GNU_IFUNC ? WG_SYMTYPE_IFUNC
			 : type == STT_TLS     ? WG_SYMTYPE_TLS
			 : type == STT_FUNC    ? WG_SYMTYPE_FUNC
			 : type == STT_OBJECT  ? WG_SYMTYPE_OBJECT
			 : shndx == SHN_COMMON ? WG_SYMTYPE_COMMON
					       : WG_SYMTYPE_NOTYPE;
		if (versioned) {
			uint16_t raw = (uint16_t)get_n(vs + 2 * i, 2, little);
			unsigned ndx = raw & 0x7fff;
			bool hidden = (raw & 0x8000) != 0;
			const char *ver = NULL;
			if (ndx == 0 ||
			    (ndx == 1 && (vt->ndefs < 1 || (vt->have_flags1 && vt->flags1 == VER_FLG_BASE)))) {
				ver = NULL; /* local, global, or the base version */
			} else if (ndx <= vt->ndefs) {
				ver = vt->def[ndx] ? vt->def[ndx] : "<corrupt>";
				if (!strcmp(ver, nm))
					ver = NULL; /* the symbol naming a version it defines */
			} else {
				ver = vt->need[ndx] ? vt->need[ndx] : "<corrupt>";
				hidden = true; /* as libbfd reads a needed version */
			}
			if (ver) {
				x.symver = ver;
				x.hidden = hidden;
			}
		}
		if ((rc = wg_elf_keep_sym(obj, a, v->abfd, &x)) < 0)
			return wg_seterr(err, WG_ENOMEM, "out of memory");
	}
	return WG_OK;
}

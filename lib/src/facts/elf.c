/*
 * The only user of libbfd: reads an ELF object held in memory (bfd_openr_iovec) into the
 * facts of a wg_object: header, SONAME, DT_NEEDED, RPATH/RUNPATH, dynamic symbols with
 * versions, demangled. libbfd 2.40 is not thread-safe, so every call into it happens under
 * one mutex; the rest of the library may scan on several threads.
 *
 * An object that has a dynamic segment is read as ld.so reads it: from PT_DYNAMIC and the
 * PT_LOAD segments, never from the section headers, which the loader ignores and anyone can
 * zero or rewrite. libbfd 2.40 cannot do this itself: its dynamic symbol table is the .dynsym
 * section. On a .so whose e_shoff/e_shnum/e_shstrndx are zeroed, binutils 2.40's `objdump -T`
 * says "invalid operation" and bfd_get_dynamic_symtab_upper_bound() fails the same way (0
 * symbols); binutils' reconstruction from PT_DYNAMIC (_bfd_elf_get_dynamic_symbols, newer
 * releases) is internal, reached by no call of 2.40's bfd.h (elf-bfd.h is not installed).
 * So the dynamic segment is read here, with <elf.h>'s layouts, every offset and count checked
 * against the segment and the file, every loop bounded by the file (readelf, which does not
 * use libbfd, reads it the same way: `readelf --use-dynamic -s`). libbfd's section view is kept as the
 * cross-check: where it disagrees with the loader's, the loader's wins and the object says
 * how the section headers lie (rule WG-ELF-001).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define PACKAGE "wheelgate"
#define PACKAGE_VERSION WG_VERSION_STRING
#define WG_ERR_CLASS WG_ERROR_CLASS_ELF /* wg_seterr: what fails here */
#include <bfd.h>
#include <elf.h>
#include <libiberty/demangle.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "facts/facts.h"

#define DEMANGLE_FLAGS (DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE)

static pthread_mutex_t bfd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t bfd_once = PTHREAD_ONCE_INIT;
/* What libbfd said last, captured instead of printed (guarded by bfd_lock). */
static char bfd_said[512];

static void on_bfd_error(const char *fmt, va_list ap)
{
	/* libbfd's own format has extensions (%pA, %pB) that vsnprintf does not know: keep the
	 * text up to the first of them, which is enough to say what went wrong. */
	char tmp[512];
	const char *ext = strstr(fmt, "%p");
	if (ext) {
		size_t n = (size_t)(ext - fmt) < sizeof(tmp) - 1 ? (size_t)(ext - fmt) : sizeof(tmp) - 1;
		memcpy(tmp, fmt, n);
		tmp[n] = '\0';
		snprintf(bfd_said, sizeof(bfd_said), "%s", tmp);
		return;
	}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	vsnprintf(bfd_said, sizeof(bfd_said), fmt, ap);
#pragma GCC diagnostic pop
}

static void init_bfd(void)
{
	bfd_init();
	bfd_set_error_handler(on_bfd_error);
}

bool wg_is_elf(const uint8_t *data, size_t len)
{
	return len >= 4 && memcmp(data, "\x7f" "ELF", 4) == 0;
}

typedef struct {
	const uint8_t *data;
	size_t len;
	/* When set, libbfd reads these bytes instead of the file's first hdrlen: the ELF header
	 * with the section header table hidden, for an object whose table is unsound. */
	const uint8_t *hdr;
	size_t hdrlen;
} memfile;

static void *mem_open(struct bfd *abfd, void *closure)
{
	(void)abfd;
	return closure;
}

static file_ptr mem_pread(struct bfd *abfd, void *stream, void *buf, file_ptr nbytes,
			  file_ptr offset)
{
	const memfile *m = stream;
	(void)abfd;
	if (offset < 0 || nbytes < 0 || (uint64_t)offset >= m->len)
		return 0;
	size_t n = m->len - (size_t)offset;
	if ((uint64_t)nbytes < n)
		n = (size_t)nbytes;
	memcpy(buf, m->data + offset, n);
	if (m->hdr && (uint64_t)offset < m->hdrlen) {
		size_t k = m->hdrlen - (size_t)offset;
		memcpy(buf, m->hdr + offset, k < n ? k : n);
	}
	return (file_ptr)n;
}

static int mem_close(struct bfd *abfd, void *stream)
{
	(void)abfd;
	(void)stream;
	return 0;
}

static int mem_stat(struct bfd *abfd, void *stream, struct stat *sb)
{
	const memfile *m = stream;
	(void)abfd;
	memset(sb, 0, sizeof(*sb));
	sb->st_mode = S_IFREG | 0444;
	sb->st_size = (off_t)m->len;
	return 0;
}

static const char *machine_name(int machine, bool little)
{
	switch (machine) {
	case 3: return "i686";
	case 62: return "x86_64";
	case 183: return "aarch64";
	case 40: return "armv7l";
	case 21: return little ? "ppc64le" : "ppc64";
	case 20: return "ppc";
	case 22: return "s390x";
	case 243: return "riscv64";
	case 258: return "loongarch64";
	case 190: return "cuda";
	default: return "unknown";
	}
}

static const char *type_name(int type)
{
	switch (type) {
	case 1: return "rel";
	case 2: return "exec";
	case 3: return "dyn";
	case 4: return "core";
	default: return "unknown";
	}
}

static const char *bfd_reason(void)
{
	if (bfd_said[0])
		return bfd_said;
	return bfd_errmsg(bfd_get_error());
}

/* The section table, kept for the readers that work on the raw bytes (fatbins). */
static int read_sections(wg_object *obj, wg_arena *a, bfd *abfd)
{
	size_t n = 0;
	for (asection *s = abfd->sections; s; s = s->next)
		n++;
	obj->sections = wg_arena_alloc(a, (n ? n : 1) * sizeof(wg_section));
	if (!obj->sections)
		return WG_ENOMEM;
	for (asection *s = abfd->sections; s; s = s->next) {
		wg_section *w = &obj->sections[obj->nsections++];
		if (!(w->name = wg_arena_strdup(a, bfd_section_name(s))))
			return WG_ENOMEM;
		w->offset = s->filepos >= 0 ? (uint64_t)s->filepos : 0;
		w->size = bfd_section_size(s);
		w->vma = bfd_section_vma(s);
		w->has_contents = (bfd_section_flags(s) & SEC_HAS_CONTENTS) && s->filepos >= 0;
		w->code = (bfd_section_flags(s) & SEC_CODE) != 0;
	}
	return WG_OK;
}

static uint64_t get_n(const uint8_t *p, int n, bool little)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[little ? i : n - 1 - i] << (8 * i);
	return v;
}

/*
 * The object as ld.so sees it: the program headers (whose extent precheck() has validated)
 * and, for the rare object without them, libbfd's section table. Addresses in the dynamic
 * section are virtual addresses; they are found in the file through the PT_LOAD segment that
 * holds them, never through section address ranges (non-alloc sections such as .debug_info
 * have address 0 and would match low addresses; patchelf and auditwheel move .dynstr past them).
 */
typedef struct {
	const char *path;
	const uint8_t *data;
	size_t len;
	bool is64, little;
	uint64_t phoff, phentsize, phnum;
	bfd *abfd;
} elf_view;


enum { MAP_OK, MAP_NOWHERE, MAP_PAST_END };

static uint64_t ph_field(const elf_view *v, uint64_t i, int off64, int off32, bool wide)
{
	const uint8_t *h = v->data + v->phoff + i * v->phentsize;
	return get_n(h + (v->is64 ? off64 : off32), v->is64 && wide ? 8 : 4, v->little);
}

#define PH_TYPE(v, i) ph_field(v, i, 0, 0, false)
#define PH_OFFSET(v, i) ph_field(v, i, 8, 4, true)
#define PH_VADDR(v, i) ph_field(v, i, 16, 8, true)
#define PH_FILESZ(v, i) ph_field(v, i, 32, 16, true)

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
static int read_segments(wg_object *obj, wg_arena *a, const elf_view *v)
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
static int map_entry(const elf_view *v, const char *tag, uint64_t addr, const uint8_t **p,
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

/* What the dynamic array says, as far as wheelgate reads it. */
typedef struct {
	const uint8_t *str; /* DT_STRTAB's bytes, bounded by DT_STRSZ, the segment and the file */
	uint64_t strlen;
	uint64_t verneed, verneednum, verdef, verdefnum;
	bool have_verneed, have_verdef;
	/* The dynamic symbol table, and what tells how long it is. */
	uint64_t symtab, syment, hash, gnu_hash, versym;
	bool have_symtab, have_hash, have_gnu_hash, have_versym;
	/* The relocation tables (DT_RELA, DT_REL, DT_JMPREL): every symbol one names exists. */
	uint64_t rel[3], relsz[3], relent[3];
	bool have_rel[3], rel_is_rela[3];
	/* Where the dynamic array is in the file, and whether PT_DYNAMIC said so; its entry size
	 * and how many entries ld.so reads (up to DT_NULL, included). */
	uint64_t where, size, entsize, used;
	bool from_segment;
} dyninfo;

/*
 * Reads SONAME, NEEDED, RPATH and RUNPATH from the dynamic array that PT_DYNAMIC points at
 * (the .dynamic section only where there is no PT_DYNAMIC), and the addresses of the symbol,
 * hash, relocation and version tables. Every address goes through the PT_LOAD segments and
 * every read is bounds-checked.
 */
static int read_dynamic(wg_object *obj, wg_arena *a, const elf_view *v, dyninfo *di, wg_err *err)
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
		int rc = map_entry(v, "DT_STRTAB", strtab, &di->str, &di->strlen, err);
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

static const char *dynstring(const uint8_t *str, uint64_t len, uint64_t off)
{
	if (!str || off >= len || !memchr(str + off, '\0', len - off))
		return NULL;
	return (const char *)str + off;
}

/*
 * Version names by version index (what DT_VERSYM holds, 15 bits), for the symbols of the
 * loader's view: the definitions (vd_ndx) and the needs (vna_other), each NULL where none.
 */
#define VER_SLOTS 0x8000u
typedef struct {
	const char **def, **need;
	uint32_t ndefs;     /* the highest vd_ndx */
	uint16_t flags1;    /* vd_flags of index 1 (VER_FLG_BASE: the soname) */
	bool have_flags1;
} vertab;

#define GET(p, type, field, little) get_n((p) + offsetof(type, field), sizeof(((type *)0)->field), little)

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

static int read_versions(wg_object *obj, wg_arena *a, const elf_view *v, const dyninfo *di,
			 vertab *vt, wg_err *err)
{
	const uint8_t *d;
	uint64_t size;
	int rc;
	bool little = v->little;
	if (di->have_verneed) {
		if ((rc = map_entry(v, "DT_VERNEED", di->verneed, &d, &size, err)) < 0)
			return rc;
		uint64_t num = di->verneednum ? di->verneednum : 4096;
		for (uint64_t vn = 0, n = 0; n < num && n < 4096 && vn + sizeof(Elf64_Verneed) <= size;
		     n++) {
			const uint8_t *r = d + vn;
			uint16_t cnt = (uint16_t)GET(r, Elf64_Verneed, vn_cnt, little);
			const char *file = dynstring(di->str, di->strlen,
						     GET(r, Elf64_Verneed, vn_file, little));
			uint32_t aux = (uint32_t)GET(r, Elf64_Verneed, vn_aux, little);
			uint32_t next = (uint32_t)GET(r, Elf64_Verneed, vn_next, little);
			for (uint64_t va = vn + aux, k = 0;
			     k < cnt && va + sizeof(Elf64_Vernaux) <= size && aux; k++) {
				const uint8_t *x = d + va;
				uint16_t flags = (uint16_t)GET(x, Elf64_Vernaux, vna_flags, little);
				uint16_t other = (uint16_t)GET(x, Elf64_Vernaux, vna_other, little);
				const char *ver = dynstring(di->str, di->strlen,
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
		if ((rc = map_entry(v, "DT_VERDEF", di->verdef, &d, &size, err)) < 0)
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
				ver = dynstring(di->str, di->strlen,
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
		if ((rc = map_entry(v, "DT_HASH", di->hash, &p, &avail, err)) < 0)
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
		if ((rc = map_entry(v, "DT_GNU_HASH", di->gnu_hash, &p, &avail, err)) < 0)
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
		if ((rc = map_entry(v, names[t], di->rel[t], &p, &avail, err)) < 0)
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

/* One dynamic symbol as wheelgate keeps it, before its strings are copied. */
typedef struct {
	const char *name, *symver; /* name: up to namelen bytes */
	size_t namelen;
	bool defined, hidden;
	uint8_t binding, type;
} symview;

static bool same_sym(const symview *x, const wg_sym *y)
{
	/* Names compared up to a '@': libbfd appends "@VER" to dynamic names. */
	size_t ylen = strcspn(y->name, "@");
	return x->namelen == ylen && !memcmp(x->name, y->name, ylen) &&
	       x->defined == y->defined && x->binding == y->binding && x->type == y->type &&
	       !strcmp(x->symver ? x->symver : "", y->symver ? y->symver : "") &&
	       x->hidden == y->hidden;
}

static int keep_sym(wg_object *obj, wg_arena *a, bfd *abfd, const symview *x)
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
static int read_loader_symbols(wg_object *obj, wg_arena *a, const elf_view *v, const dyninfo *di,
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
	if ((rc = map_entry(v, "DT_SYMTAB", di->symtab, &st, &avail, err)) < 0)
		return rc;
	if (count > avail / syment)
		return wg_seterr(err, WG_EFORMAT,
				 "%s: the dynamic symbol table holds %llu symbols (by its hash tables "
				 "and relocations), but only %llu fit in its segment", obj->path,
				 (unsigned long long)count, (unsigned long long)(avail / syment));
	bool versioned = di->have_versym && (di->have_verdef || di->have_verneed);
	if (versioned) {
		if ((rc = map_entry(v, "DT_VERSYM", di->versym, &vs, &vavail, err)) < 0)
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
		const char *nm = dynstring(di->str, di->strlen, name);
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
		if ((rc = keep_sym(obj, a, v->abfd, &x)) < 0)
			return wg_seterr(err, WG_ENOMEM, "out of memory");
	}
	return WG_OK;
}

/*
 * One of libbfd's symbols as a symview, or false where wheelgate keeps none (section, file
 * and debugging symbols; a relocatable object's locals; unnamed ones).
 */
static bool bfd_symview(bfd *abfd, asymbol *s, bool dynamic, symview *x)
{
	flagword f = s->flags;
	if (f & (BSF_SECTION_SYM | BSF_FILE | BSF_DEBUGGING))
		return false;
	if (!dynamic && !(f & (BSF_GLOBAL | BSF_WEAK | BSF_GNU_UNIQUE)) &&
	    !bfd_is_und_section(s->section))
		return false; /* .o files: only the interface */
	const char *name = bfd_asymbol_name(s);
	if (!name || !*name)
		return false;
	memset(x, 0, sizeof(*x));
	/* Since binutils 2.35 dynamic names may carry "@VER"/"@@VER": keep the bare name. */
	const char *at = strchr(name, '@');
	x->name = name;
	x->namelen = at ? (size_t)(at - name) : strlen(name);
	x->defined = !bfd_is_und_section(s->section);
	x->binding = (f & BSF_GNU_UNIQUE) ? WG_BIND_UNIQUE
		     : (f & BSF_WEAK)     ? WG_BIND_WEAK
		     : (f & BSF_GLOBAL) || !x->defined ? WG_BIND_GLOBAL
						       : WG_BIND_LOCAL;
	x->type = (f & BSF_GNU_INDIRECT_FUNCTION) ? WG_SYMTYPE_IFUNC
		  : (f & BSF_THREAD_LOCAL)        ? WG_SYMTYPE_TLS
		  : (f & BSF_FUNCTION)            ? WG_SYMTYPE_FUNC
		  : (f & BSF_OBJECT)              ? WG_SYMTYPE_OBJECT
		  : bfd_is_com_section(s->section) ? WG_SYMTYPE_COMMON
						   : WG_SYMTYPE_NOTYPE;
	if (!dynamic && at) {
		/* A .o names a .symver'ed symbol name@VER or name@@VER (the default). */
		bool dflt = at[1] == '@';
		if (at[dflt ? 2 : 1]) {
			x->symver = at + (dflt ? 2 : 1);
			x->hidden = !dflt;
		}
	} else if (dynamic) {
		bool hidden = false;
		/* base_p false: the base version (index 1, the soname) reads as "", so a
		 * version really named "Base" (libdevmapper's) is kept as written. */
		const char *v = bfd_get_symbol_version_string(abfd, s, false, &hidden);
		if (v && *v) {
			x->symver = v;
			x->hidden = hidden;
		}
	}
	return true;
}

/* libbfd's symbol table: the dynamic one (the .dynsym section), or a .o's .symtab. */
static int bfd_symbols(bfd *abfd, bool dynamic, uint32_t max_symbols, asymbol ***out, long *n,
		       const char *path, wg_err *err)
{
	*out = NULL;
	*n = 0;
	bfd_set_error(bfd_error_no_error);
	long bound = dynamic ? bfd_get_dynamic_symtab_upper_bound(abfd)
			     : bfd_get_symtab_upper_bound(abfd);
	if (bound < 0) {
		if (bfd_get_error() == bfd_error_no_symbols ||
		    bfd_get_error() == bfd_error_invalid_operation)
			return WG_OK;
		return wg_seterr(err, WG_EFORMAT, "%s: cannot read the dynamic symbol table: %s",
				 path, bfd_reason());
	}
	if ((unsigned long)bound / sizeof(asymbol *) > (unsigned long)max_symbols + 1)
		return wg_seterr(err, WG_ELIMIT, "%s: more than %u dynamic symbols (limit max_symbols)",
				 path, max_symbols);
	asymbol **syms = malloc(bound > 0 ? (size_t)bound : 1);
	if (!syms)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	long k = dynamic ? bfd_canonicalize_dynamic_symtab(abfd, syms)
			 : bfd_canonicalize_symtab(abfd, syms);
	if (k < 0) {
		free(syms);
		return wg_seterr(err, WG_EFORMAT, "%s: cannot read the dynamic symbol table: %s",
				 path, bfd_reason());
	}
	*out = syms;
	*n = k;
	return WG_OK;
}

/* The symbols of an object without a dynamic segment, as libbfd reads its sections. */
static int read_symbols(wg_object *obj, wg_arena *a, bfd *abfd, uint32_t max_symbols, wg_err *err)
{
	bool dynamic = true;
	asymbol **syms;
	long n;
	bfd_set_error(bfd_error_no_error);
	if (bfd_get_dynamic_symtab_upper_bound(abfd) < 0 && obj->type &&
	    strcmp(obj->type, "rel") == 0)
		dynamic = false; /* no .dynsym: a relocatable object keeps its interface in .symtab */
	int rc = bfd_symbols(abfd, dynamic, max_symbols, &syms, &n, obj->path, err);
	if (rc < 0)
		return rc;
	obj->syms = wg_arena_alloc(a, (size_t)(n ? n : 1) * sizeof(wg_sym));
	if (!obj->syms) {
		free(syms);
		return WG_ENOMEM;
	}
	for (long i = 0; i < n; i++) {
		symview x;
		if (bfd_symview(abfd, syms[i], dynamic, &x) && keep_sym(obj, a, abfd, &x) < 0) {
			free(syms);
			return wg_seterr(err, WG_ENOMEM, "out of memory");
		}
	}
	free(syms);
	return WG_OK;
}

/* How one kept symbol reads, for a message: "name (undefined, version V)". */
static void describe_sym(char *out, size_t n, const char *name, size_t namelen, bool defined,
			 const char *symver)
{
	snprintf(out, n, "%.*s (%s%s%s)", (int)(namelen > 80 ? 80 : namelen), name,
		 defined ? "defined" : "undefined", symver ? ", version " : "", symver ? symver : "");
}

/*
 * The cross-check: the section headers' view of an object read as the loader reads it. Says
 * (in obj->sections_lie) the first way they disagree: no section headers at all, an unsound
 * table, a .dynamic section header that is not PT_DYNAMIC, or a .dynsym that lists other
 * symbols than the dynamic segment's table (fewer, more, or different ones).
 */
static int cross_check(wg_object *obj, wg_arena *a, bfd *abfd, const dyninfo *di,
		       const char *unsound, uint32_t max_symbols)
{
	char msg[512] = "";
	if (unsound) {
		snprintf(msg, sizeof(msg), "its section header table is unsound (%s)", unsound);
	} else if (!abfd->sections) {
		snprintf(msg, sizeof(msg), "it has no section headers");
	} else {
		asection *dyn = bfd_get_section_by_name(abfd, ".dynamic");
		if (!dyn)
			snprintf(msg, sizeof(msg), "no section header names the dynamic segment "
				 "(offset %llu)", (unsigned long long)di->where);
		else if (dyn->filepos < 0 || (uint64_t)dyn->filepos != di->where)
			snprintf(msg, sizeof(msg), "the .dynamic section header says offset %lld, "
				 "the dynamic segment is at %llu", (long long)dyn->filepos,
				 (unsigned long long)di->where);
		else if (bfd_section_size(dyn) / di->entsize < di->used)
			/* shorter: entries ld.so reads (NEEDED, the tables' addresses) left out */
			snprintf(msg, sizeof(msg), "the .dynamic section header holds %llu of the "
				 "%llu entries ld.so reads from the dynamic segment",
				 (unsigned long long)(bfd_section_size(dyn) / di->entsize),
				 (unsigned long long)di->used);
	}
	if (!msg[0]) {
		wg_err e = {0};
		asymbol **syms;
		long n;
		if (bfd_symbols(abfd, true, max_symbols, &syms, &n, obj->path, &e) == WG_ENOMEM)
			return WG_ENOMEM;
		if (e.code) {
			snprintf(msg, sizeof(msg), "the section headers' symbol table cannot be read "
				 "(%.300s)", e.msg);
		} else {
			size_t k = 0;
			for (long i = 0; i < n && !msg[0]; i++) {
				symview x;
				if (!bfd_symview(abfd, syms[i], true, &x))
					continue;
				if (k < obj->nsyms && same_sym(&x, &obj->syms[k])) {
					k++;
					continue;
				}
				char s1[160], s2[160] = "nothing";
				describe_sym(s1, sizeof(s1), x.name, x.namelen, x.defined, x.symver);
				if (k < obj->nsyms)
					describe_sym(s2, sizeof(s2), obj->syms[k].name,
						     strlen(obj->syms[k].name), obj->syms[k].defined,
						     obj->syms[k].symver);
				snprintf(msg, sizeof(msg), "dynamic symbol %zu is %s by the section "
					 "headers, %s by the dynamic segment", k + 1, s1, s2);
			}
			if (!msg[0] && k != obj->nsyms)
				snprintf(msg, sizeof(msg), "the section headers list %zu dynamic "
					 "symbols, the dynamic segment %zu", k, obj->nsyms);
			free(syms);
		}
	}
	if (msg[0] && !(obj->sections_lie = wg_arena_strdup(a, msg)))
		return WG_ENOMEM;
	return WG_OK;
}

/*
 * Checks the ELF header's tables and every section's extent against the file before libbfd
 * sees it: a hostile or truncated object gets a precise message, and libbfd (which prints
 * some of its warnings straight to stderr) is never handed one. Only the fixed header and the
 * section header table are read, each read through the bounds of the buffer. A program header
 * table past the end is an error; an unsound section header table is said in unsound (the
 * caller decides: the loader never reads it).
 */
static int precheck(const char *path, const uint8_t *d, size_t len, char *unsound, size_t n,
		    wg_err *err)
{
	bool is64 = d[4] == 2, little = d[5] == 1;
	size_t ehsize = is64 ? 64 : 52;
	unsound[0] = '\0';
	if (len < ehsize)
		return wg_seterr(err, WG_EFORMAT, "%s: truncated ELF header (%zu of %zu bytes)", path,
				 len, ehsize);
	uint64_t phoff = get_n(d + (is64 ? 0x20 : 0x1c), is64 ? 8 : 4, little);
	uint64_t shoff = get_n(d + (is64 ? 0x28 : 0x20), is64 ? 8 : 4, little);
	uint64_t phentsize = get_n(d + (is64 ? 0x36 : 0x2a), 2, little);
	uint64_t phnum = get_n(d + (is64 ? 0x38 : 0x2c), 2, little);
	uint64_t shentsize = get_n(d + (is64 ? 0x3a : 0x2e), 2, little);
	uint64_t shnum = get_n(d + (is64 ? 0x3c : 0x30), 2, little);
	uint64_t shstrndx = get_n(d + (is64 ? 0x3e : 0x32), 2, little);
	if (phnum && (phoff > len || phentsize * phnum > len - phoff))
		return wg_seterr(err, WG_EFORMAT,
				 "%s: truncated ELF: the program header table (offset %llu, %llu bytes) "
				 "lies past the end of the file (%zu bytes)", path,
				 (unsigned long long)phoff, (unsigned long long)(phentsize * phnum), len);
	if (!shoff || !shnum)
		return WG_OK;
	if (shentsize != (is64 ? 64u : 40u)) {
		snprintf(unsound, n, "invalid ELF: section header size %llu",
			 (unsigned long long)shentsize);
		return WG_OK;
	}
	if (shoff > len || shentsize * shnum > len - shoff) {
		snprintf(unsound, n, "truncated ELF: the section header table (offset %llu, %llu "
			 "bytes) lies past the end of the file (%zu bytes)", (unsigned long long)shoff,
			 (unsigned long long)(shentsize * shnum), len);
		return WG_OK;
	}
	/* The section name table, if it is itself sound, to name the culprit. */
	const uint8_t *names = NULL;
	uint64_t names_len = 0;
	if (shstrndx < shnum) {
		const uint8_t *h = d + shoff + shstrndx * shentsize;
		uint64_t off = get_n(h + (is64 ? 0x18 : 0x10), is64 ? 8 : 4, little);
		uint64_t size = get_n(h + (is64 ? 0x20 : 0x14), is64 ? 8 : 4, little);
		if (off <= len && size <= len - off) {
			names = d + off;
			names_len = size;
		}
	}
	for (uint64_t i = 0; i < shnum; i++) {
		const uint8_t *h = d + shoff + i * shentsize;
		uint64_t type = get_n(h + 4, 4, little);
		uint64_t off = get_n(h + (is64 ? 0x18 : 0x10), is64 ? 8 : 4, little);
		uint64_t size = get_n(h + (is64 ? 0x20 : 0x14), is64 ? 8 : 4, little);
		if (type == SHT_NOBITS || type == SHT_NULL)
			continue;
		if (off <= len && size <= len - off)
			continue;
		uint64_t name = get_n(h, 4, little);
		char label[64];
		if (names && name < names_len && memchr(names + name, '\0', names_len - name))
			snprintf(label, sizeof(label), "%s", (const char *)names + name);
		else
			snprintf(label, sizeof(label), "#%llu", (unsigned long long)i);
		snprintf(unsound, n, "section %s (offset %llu, %llu bytes) extends past the end of "
			 "the file (%zu bytes): truncated or corrupt ELF", label,
			 (unsigned long long)off, (unsigned long long)size, len);
		return WG_OK;
	}
	return WG_OK;
}

static const char *generic_target(const uint8_t *d)
{
	bool is64 = d[4] == 2, little = d[5] == 1;
	return is64 ? (little ? "elf64-little" : "elf64-big") : (little ? "elf32-little" : "elf32-big");
}

/* Whether a (prechecked) program header table has a PT_DYNAMIC: the loader's view exists. */
static bool has_pt_dynamic(const uint8_t *d)
{
	bool is64 = d[4] == 2, little = d[5] == 1;
	elf_view v = {NULL, d, 0, is64, little, get_n(d + (is64 ? 0x20 : 0x1c), is64 ? 8 : 4, little),
		      get_n(d + (is64 ? 0x36 : 0x2a), 2, little),
		      get_n(d + (is64 ? 0x38 : 0x2c), 2, little), NULL};
	if (v.phentsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return false;
	for (uint64_t i = 0; i < v.phnum; i++)
		if (PH_TYPE(&v, i) == PT_DYNAMIC)
			return true;
	return false;
}

int wg_elf_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len, uint32_t max_symbols,
		wg_err *err)
{
	memfile m = {data, len, NULL, 0};
	int rc = WG_OK;
	char unsound[256];
	uint8_t hidden[64];
	vertab vt = {NULL, NULL, 0, 0, false};
	if (!obj->verneeds.item_size)
		wg_vec_init(&obj->verneeds, sizeof(wg_verneed));
	if (!wg_is_elf(data, len))
		return wg_seterr(err, WG_EFORMAT, "%s: not an ELF object (no \\x7fELF magic)", obj->path);
	if (len < 52 || (data[4] != 1 && data[4] != 2) || (data[5] != 1 && data[5] != 2) ||
	    (data[4] == 2 && len < 64))
		return wg_seterr(err, WG_EFORMAT, "%s: truncated or invalid ELF header (%zu bytes)",
				 obj->path, len);
	if ((rc = precheck(obj->path, data, len, unsound, sizeof(unsound), err)) < 0)
		return rc;
	bool is64 = data[4] == 2, little = data[5] == 1;
	if (unsound[0]) {
		/* The loader never reads the section headers: an object it can load is read
		 * without them (libbfd is shown a header whose table is gone), and the table's
		 * state is what the cross-check reports. Without a dynamic segment there is no
		 * loader's view, and the sections are all there is. */
		if (!has_pt_dynamic(data))
			return wg_seterr(err, WG_EFORMAT, "%s: %s", obj->path, unsound);
		m.hdrlen = is64 ? 64 : 52;
		memcpy(hidden, data, m.hdrlen);
		memset(hidden + (is64 ? 0x28 : 0x20), 0, is64 ? 8 : 4); /* e_shoff */
		memset(hidden + (is64 ? 0x3c : 0x30), 0, 4);           /* e_shnum, e_shstrndx */
		m.hdr = hidden;
	}
	pthread_once(&bfd_once, init_bfd);
	pthread_mutex_lock(&bfd_lock);
	bfd_said[0] = '\0';
	bfd_set_error(bfd_error_no_error);
	bfd *abfd = bfd_openr_iovec(obj->path, NULL, mem_open, &m, mem_pread, mem_close, mem_stat);
	if (!abfd) {
		rc = wg_seterr(err, WG_ENOMEM, "%s: cannot open: %s", obj->path, bfd_reason());
		goto unlock;
	}
	if (!bfd_check_format(abfd, bfd_object)) {
		/* A machine this libbfd has no backend for: read it with the generic ELF target. */
		bfd_close(abfd);
		bfd_said[0] = '\0';
		bfd_set_error(bfd_error_no_error);
		abfd = bfd_openr_iovec(obj->path, generic_target(data), mem_open, &m, mem_pread,
				       mem_close, mem_stat);
		if (!abfd || !bfd_check_format(abfd, bfd_object)) {
			rc = wg_seterr(err, WG_EFORMAT, "%s: unreadable ELF object: %s", obj->path,
				       bfd_reason());
			goto close;
		}
	}
	obj->elf_class = bfd_get_arch_size(abfd) == 32 ? 32 : 64;
	obj->machine = little ? (data[18] | data[19] << 8) : (data[18] << 8 | data[19]);
	int type = little ? (data[16] | data[17] << 8) : (data[16] << 8 | data[17]);
	obj->machine_name = machine_name(obj->machine, little);
	obj->type = type_name(type);
	elf_view v = {obj->path, data, len, is64, little,
		      get_n(data + (is64 ? 0x20 : 0x1c), is64 ? 8 : 4, little),
		      get_n(data + (is64 ? 0x36 : 0x2a), 2, little),
		      get_n(data + (is64 ? 0x38 : 0x2c), 2, little), abfd};
	if (v.phnum && v.phentsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr))) {
		rc = wg_seterr(err, WG_EFORMAT, "%s: invalid ELF: program header size %llu",
			       obj->path, (unsigned long long)v.phentsize);
		goto close;
	}
	dyninfo di;
	if ((rc = read_sections(obj, a, abfd)) < 0 || (rc = read_segments(obj, a, &v)) < 0) {
		rc = wg_seterr(err, WG_ENOMEM, "out of memory");
		goto close;
	}
	if ((rc = read_dynamic(obj, a, &v, &di, err)) < 0)
		goto close;
	if (di.from_segment) {
		/* The loader's view; the version names by index are needed only with DT_VERSYM. */
		if (di.have_versym && di.have_symtab) {
			vt.def = calloc(VER_SLOTS, sizeof(*vt.def));
			vt.need = calloc(VER_SLOTS, sizeof(*vt.need));
			if (!vt.def || !vt.need) {
				rc = wg_seterr(err, WG_ENOMEM, "out of memory");
				goto close;
			}
		}
		if ((rc = read_versions(obj, a, &v, &di, vt.def ? &vt : NULL, err)) < 0 ||
		    (rc = read_loader_symbols(obj, a, &v, &di, &vt, max_symbols, err)) < 0)
			goto close;
		if ((rc = cross_check(obj, a, abfd, &di, unsound[0] ? unsound : NULL,
				      max_symbols)) < 0)
			rc = wg_seterr(err, WG_ENOMEM, "out of memory");
	} else {
		if ((rc = read_versions(obj, a, &v, &di, NULL, err)) < 0)
			goto close;
		rc = read_symbols(obj, a, abfd, max_symbols, err);
	}
close:
	if (abfd)
		bfd_close(abfd);
unlock:
	pthread_mutex_unlock(&bfd_lock);
	free(vt.def);
	free(vt.need);
	return rc;
}

char *wg_demangle(const char *mangled)
{
	pthread_once(&bfd_once, init_bfd);
	pthread_mutex_lock(&bfd_lock);
	char *d = bfd_demangle(NULL, mangled, DEMANGLE_FLAGS);
	pthread_mutex_unlock(&bfd_lock);
	return d;
}

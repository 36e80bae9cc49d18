/*
 * Private to the ELF reader's files, the only users of libbfd: elf.c (libbfd opened on the
 * bytes, the header checked, the steps in their order), elf_dynamic.c (the dynamic segment as
 * ld.so reads it: segments, the dynamic array, the version tables), elf_symbols.c (the loader's
 * dynamic symbol table) and elf_bfd.c (libbfd's section view: the symbols of an object without
 * a dynamic segment, and the cross-check that says when the section headers lie).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_FACTS_ELF_INTERNAL_H
#define WG_FACTS_ELF_INTERNAL_H

/* bfd.h refuses to be included without these (it is meant for binutils' own build). */
#define PACKAGE "wheelgate"
#define PACKAGE_VERSION WG_VERSION_STRING
#include <stdarg.h>
#include <bfd.h>
#include <elf.h>
#include <libiberty/demangle.h>
#include <stddef.h>

#include "facts/facts.h"

#define DEMANGLE_FLAGS (DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE)

static inline uint64_t get_n(const uint8_t *p, int n, bool little)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[little ? i : n - 1 - i] << (8 * i);
	return v;
}

#define GET(p, type, field, little) get_n((p) + offsetof(type, field), sizeof(((type *)0)->field), little)

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



static inline uint64_t ph_field(const elf_view *v, uint64_t i, int off64, int off32, bool wide)
{
	const uint8_t *h = v->data + v->phoff + i * v->phentsize;
	return get_n(h + (v->is64 ? off64 : off32), v->is64 && wide ? 8 : 4, v->little);
}

#define PH_TYPE(v, i) ph_field(v, i, 0, 0, false)
#define PH_OFFSET(v, i) ph_field(v, i, 8, 4, true)
#define PH_VADDR(v, i) ph_field(v, i, 16, 8, true)
#define PH_FILESZ(v, i) ph_field(v, i, 32, 16, true)

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

/* One dynamic symbol as wheelgate keeps it, before its strings are copied. */
typedef struct {
	const char *name, *symver; /* name: up to namelen bytes */
	size_t namelen;
	bool defined, hidden;
	uint8_t binding, type;
} symview;

/* elf.c: what libbfd said last (under its lock), or its error's text. */
/* What libbfd said last (elf_bfd.c keeps it, under the lock of elf.c): libbfd's error
 * handler, the text, and forgetting it before a call. */
void wg_elf_bfd_on_error(const char *fmt, va_list ap);
const char *wg_elf_bfd_reason(void);
void wg_elf_bfd_forget(void);

/* ---- elf_dynamic.c ---- */

/* The PT_LOAD segments, kept for the readers that map addresses on the raw bytes (fatbins). */
int wg_elf_read_segments(wg_object *obj, wg_arena *a, const elf_view *v);
/* Maps a dynamic entry's address, or says which entry points where. */
int wg_elf_map_entry(const elf_view *v, const char *tag, uint64_t addr, const uint8_t **p,
		     uint64_t *avail, wg_err *err);
/* The NUL-terminated string at off in a string table of len bytes, or NULL. */
const char *wg_elf_dynstring(const uint8_t *str, uint64_t len, uint64_t off);
/* SONAME, NEEDED, RPATH, RUNPATH and the tables' addresses, from the dynamic array. */
int wg_elf_read_dynamic(wg_object *obj, wg_arena *a, const elf_view *v, dyninfo *di, wg_err *err);
/* The version tables (DT_VERNEED, DT_VERDEF); vt, where given, gets the names by index. */
int wg_elf_read_versions(wg_object *obj, wg_arena *a, const elf_view *v, const dyninfo *di,
			 vertab *vt, wg_err *err);

/* ---- elf_symbols.c ---- */

/* Keeps x as the object's next symbol (obj->syms has room), demangled with abfd. */
int wg_elf_keep_sym(wg_object *obj, wg_arena *a, bfd *abfd, const symview *x);
/* The dynamic symbols as the loader sees them (DT_SYMTAB, DT_STRTAB, DT_VERSYM). */
int wg_elf_read_loader_symbols(wg_object *obj, wg_arena *a, const elf_view *v, const dyninfo *di,
			       const vertab *vt, uint32_t max_symbols, wg_err *err);

/* ---- elf_bfd.c ---- */

/* The symbols of an object without a dynamic segment, as libbfd reads its sections. */
int wg_elf_read_symbols(wg_object *obj, wg_arena *a, bfd *abfd, uint32_t max_symbols, wg_err *err);
/* The section headers' view against the loader's: obj->sections_lie says how they differ. */
int wg_elf_cross_check(wg_object *obj, wg_arena *a, bfd *abfd, const dyninfo *di,
		       const char *unsound, uint32_t max_symbols);

#endif

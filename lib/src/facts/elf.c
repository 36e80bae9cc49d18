/*
 * The only user of libbfd: reads an ELF object held in memory (bfd_openr_iovec) into the
 * facts of a wg_object: header, SONAME, DT_NEEDED, RPATH/RUNPATH, dynamic symbols with
 * versions, demangled. libbfd 2.40 is not thread-safe, so every call into it happens under
 * one mutex; the rest of the library may scan on several threads.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define PACKAGE "wheelgate"
#define PACKAGE_VERSION WG_VERSION_STRING
#include <bfd.h>
#include <libiberty/demangle.h>
#include <pthread.h>
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

#define PT_LOAD_ 1
#define PT_DYNAMIC_ 2

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
			if (PH_TYPE(v, i) != PT_LOAD_)
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
} dyninfo;

#define DT_NEEDED_ 1
#define DT_STRTAB_ 5
#define DT_STRSZ_ 10
#define DT_SONAME_ 14
#define DT_RPATH_ 15
#define DT_RUNPATH_ 29
#define DT_VERDEF_ 0x6ffffffc
#define DT_VERDEFNUM_ 0x6ffffffd
#define DT_VERNEED_ 0x6ffffffe
#define DT_VERNEEDNUM_ 0x6fffffff

/*
 * Reads SONAME, NEEDED, RPATH and RUNPATH from the dynamic array that PT_DYNAMIC points at
 * (the .dynamic section only where there is no PT_DYNAMIC), and the addresses of the version
 * tables. Every address goes through the PT_LOAD segments and every read is bounds-checked.
 */
static int read_dynamic(wg_object *obj, wg_arena *a, const elf_view *v, dyninfo *di, wg_err *err)
{
	memset(di, 0, sizeof(*di));
	const uint8_t *p = NULL;
	uint64_t size = 0, where = 0;
	bool found = false;
	for (uint64_t i = 0; i < v->phnum && !found; i++) {
		if (PH_TYPE(v, i) != PT_DYNAMIC_)
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
	p = v->data + where;
	size_t entsize = v->is64 ? 16 : 8;
	int w = v->is64 ? 8 : 4;
	uint64_t strtab = 0, strsz = 0;
	bool have_strtab = false, have_strsz = false, uses_strings = false;
	/* Pass 1: the tables' addresses; pass 2: the entries that name strings. */
	for (uint64_t off = 0; off + entsize <= size; off += entsize) {
		uint64_t tag = get_n(p + off, w, v->little), val = get_n(p + off + w, w, v->little);
		if (tag == 0)
			break;
		switch (tag) {
		case DT_STRTAB_: strtab = val; have_strtab = true; break;
		case DT_STRSZ_: strsz = val; have_strsz = true; break;
		case DT_VERNEED_: di->verneed = val; di->have_verneed = true; break;
		case DT_VERNEEDNUM_: di->verneednum = val; break;
		case DT_VERDEF_: di->verdef = val; di->have_verdef = true; break;
		case DT_VERDEFNUM_: di->verdefnum = val; break;
		case DT_NEEDED_: case DT_SONAME_: case DT_RPATH_: case DT_RUNPATH_:
			uses_strings = true;
			break;
		}
	}
	if (have_strtab) {
		int rc = map_entry(v, "DT_STRTAB", strtab, &di->str, &di->strlen, err);
		if (rc < 0)
			return rc;
		if (have_strsz && strsz < di->strlen)
			di->strlen = strsz;
	} else if (uses_strings || di->have_verneed || di->have_verdef) {
		return wg_seterr(err, WG_EFORMAT,
				 "%s: the dynamic section names libraries or versions but has no "
				 "DT_STRTAB", obj->path);
	}
	for (uint64_t off = 0; off + entsize <= size; off += entsize) {
		uint64_t tag = get_n(p + off, w, v->little), val = get_n(p + off + w, w, v->little);
		if (tag == 0)
			break;
		if (tag != DT_NEEDED_ && tag != DT_SONAME_ && tag != DT_RPATH_ && tag != DT_RUNPATH_)
			continue;
		if (val >= di->strlen || !memchr(di->str + val, '\0', di->strlen - val))
			return wg_seterr(err, WG_EFORMAT,
					 "%s: dynamic entry %llu points outside the string table "
					 "(offset %llu of %llu bytes)", obj->path,
					 (unsigned long long)(off / entsize), (unsigned long long)val,
					 (unsigned long long)di->strlen);
		const char *s = (const char *)di->str + val;
		if (tag == DT_NEEDED_) {
			if (wg_strlist_add(&obj->needed, a, s) < 0)
				return WG_ENOMEM;
		} else {
			const char *copy = wg_arena_strdup(a, s);
			if (!copy)
				return WG_ENOMEM;
			if (tag == DT_SONAME_)
				obj->soname = copy;
			else if (tag == DT_RPATH_)
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
 * The symbol version tables that DT_VERNEED (what the object needs: {file, version}) and
 * DT_VERDEF (what it defines) point at, DT_VERNEEDNUM/DT_VERDEFNUM records long. Every record
 * and string is bounds-checked against the segment holding the table; the chains cannot loop
 * (each step moves forward) and stop at 4096 records whatever the counts say.
 */
static int read_versions(wg_object *obj, wg_arena *a, const elf_view *v, const dyninfo *di,
			 wg_err *err)
{
	const uint8_t *d;
	uint64_t size;
	int rc;
	bool little = v->little;
	if (di->have_verneed) {
		if ((rc = map_entry(v, "DT_VERNEED", di->verneed, &d, &size, err)) < 0)
			return rc;
		uint64_t num = di->verneednum ? di->verneednum : 4096;
		for (uint64_t vn = 0, n = 0; n < num && n < 4096 && vn + 16 <= size; n++) {
			uint16_t cnt = (uint16_t)get_n(d + vn + 2, 2, little);
			const char *file = dynstring(di->str, di->strlen, get_n(d + vn + 4, 4, little));
			uint32_t aux = (uint32_t)get_n(d + vn + 8, 4, little);
			uint32_t next = (uint32_t)get_n(d + vn + 12, 4, little);
			for (uint64_t va = vn + aux, k = 0; k < cnt && va + 16 <= size && aux; k++) {
				uint16_t flags = (uint16_t)get_n(d + va + 4, 2, little);
				const char *ver = dynstring(di->str, di->strlen, get_n(d + va + 8, 4, little));
				uint32_t vnext = (uint32_t)get_n(d + va + 12, 4, little);
				if (file && ver) {
					wg_verneed *x = wg_vec_push(&obj->verneeds);
					if (!x)
						return WG_ENOMEM;
					x->file = wg_arena_strdup(a, file);
					x->version = wg_arena_strdup(a, ver);
					if (!x->file || !x->version)
						return WG_ENOMEM;
					x->weak = (flags & 2) != 0; /* VER_FLG_WEAK */
				}
				if (!vnext)
					break;
				va += vnext;
			}
			if (!next)
				break;
			vn += next;
		}
	}
	if (di->have_verdef) {
		if ((rc = map_entry(v, "DT_VERDEF", di->verdef, &d, &size, err)) < 0)
			return rc;
		uint64_t num = di->verdefnum ? di->verdefnum : 4096;
		for (uint64_t vd = 0, n = 0; n < num && n < 4096 && vd + 20 <= size; n++) {
			uint16_t flags = (uint16_t)get_n(d + vd + 2, 2, little);
			uint32_t aux = (uint32_t)get_n(d + vd + 12, 4, little);
			uint32_t next = (uint32_t)get_n(d + vd + 16, 4, little);
			if (aux && vd + aux + 8 <= size && !(flags & 1) /* VER_FLG_BASE: the soname */) {
				const char *ver = dynstring(di->str, di->strlen,
							    get_n(d + vd + aux, 4, little));
				if (ver && wg_strlist_add(&obj->verdefs, a, ver) < 0)
					return WG_ENOMEM;
			}
			if (!next)
				break;
			vd += next;
		}
	}
	return WG_OK;
}

static int read_symbols(wg_object *obj, wg_arena *a, bfd *abfd, uint32_t max_symbols, wg_err *err)
{
	bool dynamic = true;
	long bound = bfd_get_dynamic_symtab_upper_bound(abfd);
	if (bound < 0) {
		/* No .dynsym: a relocatable object keeps its interface in .symtab. */
		if (obj->type && strcmp(obj->type, "rel") == 0) {
			dynamic = false;
			bfd_set_error(bfd_error_no_error);
			bound = bfd_get_symtab_upper_bound(abfd);
		}
		if (bound < 0) {
			if (bfd_get_error() == bfd_error_no_symbols ||
			    bfd_get_error() == bfd_error_invalid_operation)
				return WG_OK;
			return wg_seterr(err, WG_EFORMAT, "%s: cannot read the dynamic symbol table: %s",
					 obj->path, bfd_reason());
		}
	}
	if ((unsigned long)bound / sizeof(asymbol *) > (unsigned long)max_symbols + 1)
		return wg_seterr(err, WG_ELIMIT, "%s: more than %u dynamic symbols (limit max_symbols)",
				 obj->path, max_symbols);
	asymbol **syms = malloc(bound > 0 ? (size_t)bound : 1);
	if (!syms)
		return wg_seterr(err, WG_ENOMEM, "out of memory");
	long n = dynamic ? bfd_canonicalize_dynamic_symtab(abfd, syms)
			 : bfd_canonicalize_symtab(abfd, syms);
	if (n < 0) {
		free(syms);
		return wg_seterr(err, WG_EFORMAT, "%s: cannot read the dynamic symbol table: %s",
				 obj->path, bfd_reason());
	}
	obj->syms = wg_arena_alloc(a, (size_t)(n ? n : 1) * sizeof(wg_sym));
	if (!obj->syms) {
		free(syms);
		return WG_ENOMEM;
	}
	size_t k = 0;
	for (long i = 0; i < n; i++) {
		asymbol *s = syms[i];
		flagword f = s->flags;
		if (f & (BSF_SECTION_SYM | BSF_FILE | BSF_DEBUGGING))
			continue;
		if (!dynamic && !(f & (BSF_GLOBAL | BSF_WEAK | BSF_GNU_UNIQUE)) &&
		    !bfd_is_und_section(s->section))
			continue; /* .o files: only the interface */
		const char *name = bfd_asymbol_name(s);
		if (!name || !*name)
			continue;
		wg_sym *y = &obj->syms[k];
		memset(y, 0, sizeof(*y));
		/* Since binutils 2.35 dynamic names may carry "@VER"/"@@VER": keep the bare name. */
		const char *at = strchr(name, '@');
		y->name = at ? wg_arena_strndup(a, name, (size_t)(at - name)) : wg_arena_strdup(a, name);
		if (!y->name)
			goto nomem;
		y->defined = !bfd_is_und_section(s->section);
		y->binding = (f & BSF_GNU_UNIQUE) ? WG_BIND_UNIQUE
			     : (f & BSF_WEAK)     ? WG_BIND_WEAK
			     : (f & BSF_GLOBAL) || !y->defined ? WG_BIND_GLOBAL
							       : WG_BIND_LOCAL;
		y->type = (f & BSF_GNU_INDIRECT_FUNCTION) ? WG_SYMTYPE_IFUNC
			  : (f & BSF_THREAD_LOCAL)        ? WG_SYMTYPE_TLS
			  : (f & BSF_FUNCTION)            ? WG_SYMTYPE_FUNC
			  : (f & BSF_OBJECT)              ? WG_SYMTYPE_OBJECT
			  : bfd_is_com_section(s->section) ? WG_SYMTYPE_COMMON
							   : WG_SYMTYPE_NOTYPE;
		if (!dynamic && at) {
			/* A .o names a .symver'ed symbol name@VER or name@@VER (the default). */
			bool dflt = at[1] == '@';
			if (at[dflt ? 2 : 1]) {
				if (!(y->symver = wg_arena_strdup(a, at + (dflt ? 2 : 1))))
					goto nomem;
				y->hidden = !dflt;
			}
		} else if (dynamic) {
			bool hidden = false;
			/* base_p false: the base version (index 1, the soname) reads as "", so a
			 * version really named "Base" (libdevmapper's) is kept as written. */
			const char *v = bfd_get_symbol_version_string(abfd, s, false, &hidden);
			if (v && *v) {
				if (!(y->symver = wg_arena_strdup(a, v)))
					goto nomem;
				y->hidden = hidden;
			}
		}
		if (y->name[0] == '_' && y->name[1] == 'Z') {
			char *d = bfd_demangle(abfd, y->name, DEMANGLE_FLAGS);
			if (d) {
				y->demangled = wg_arena_strdup(a, d);
				free(d);
				if (!y->demangled)
					goto nomem;
			}
		}
		if (y->defined)
			obj->ndefined++;
		else
			obj->nundefined++;
		k++;
	}
	obj->nsyms = k;
	free(syms);
	return WG_OK;
nomem:
	free(syms);
	return wg_seterr(err, WG_ENOMEM, "out of memory");
}

/*
 * Checks the ELF header's tables and every section's extent against the file before libbfd
 * sees it: a hostile or truncated object gets a precise message, and libbfd (which prints
 * some of its warnings straight to stderr) is never handed one. Only the fixed header and the
 * section header table are read, each read through the bounds of the buffer.
 */
static int precheck(const char *path, const uint8_t *d, size_t len, wg_err *err)
{
	bool is64 = d[4] == 2, little = d[5] == 1;
	size_t ehsize = is64 ? 64 : 52;
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
	if (shentsize != (is64 ? 64u : 40u))
		return wg_seterr(err, WG_EFORMAT, "%s: invalid ELF: section header size %llu",
				 path, (unsigned long long)shentsize);
	if (shoff > len || shentsize * shnum > len - shoff)
		return wg_seterr(err, WG_EFORMAT,
				 "%s: truncated ELF: the section header table (offset %llu, %llu bytes) "
				 "lies past the end of the file (%zu bytes)", path,
				 (unsigned long long)shoff, (unsigned long long)(shentsize * shnum), len);
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
		if (type == 8 /* SHT_NOBITS */ || type == 0 /* SHT_NULL */)
			continue;
		if (off <= len && size <= len - off)
			continue;
		uint64_t name = get_n(h, 4, little);
		char label[64];
		if (names && name < names_len && memchr(names + name, '\0', names_len - name))
			snprintf(label, sizeof(label), "%s", (const char *)names + name);
		else
			snprintf(label, sizeof(label), "#%llu", (unsigned long long)i);
		return wg_seterr(err, WG_EFORMAT,
				 "%s: section %s (offset %llu, %llu bytes) extends past the end of the "
				 "file (%zu bytes): truncated or corrupt ELF", path, label,
				 (unsigned long long)off, (unsigned long long)size, len);
	}
	return WG_OK;
}

static const char *generic_target(const uint8_t *d)
{
	bool is64 = d[4] == 2, little = d[5] == 1;
	return is64 ? (little ? "elf64-little" : "elf64-big") : (little ? "elf32-little" : "elf32-big");
}

int wg_elf_read(wg_object *obj, wg_arena *a, const uint8_t *data, size_t len, uint32_t max_symbols,
		wg_err *err)
{
	memfile m = {data, len};
	int rc = WG_OK;
	if (!obj->verneeds.item_size)
		wg_vec_init(&obj->verneeds, sizeof(wg_verneed));
	if (!wg_is_elf(data, len))
		return wg_seterr(err, WG_EFORMAT, "%s: not an ELF object (no \\x7fELF magic)", obj->path);
	if (len < 52 || (data[4] != 1 && data[4] != 2) || (data[5] != 1 && data[5] != 2) ||
	    (data[4] == 2 && len < 64))
		return wg_seterr(err, WG_EFORMAT, "%s: truncated or invalid ELF header (%zu bytes)",
				 obj->path, len);
	if ((rc = precheck(obj->path, data, len, err)) < 0)
		return rc;
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
	bool little = data[5] == 1;
	obj->elf_class = bfd_get_arch_size(abfd) == 32 ? 32 : 64;
	obj->machine = little ? (data[18] | data[19] << 8) : (data[18] << 8 | data[19]);
	int type = little ? (data[16] | data[17] << 8) : (data[16] << 8 | data[17]);
	obj->machine_name = machine_name(obj->machine, little);
	obj->type = type_name(type);
	bool is64 = data[4] == 2;
	elf_view v = {obj->path, data, len, is64, little,
		      get_n(data + (is64 ? 0x20 : 0x1c), is64 ? 8 : 4, little),
		      get_n(data + (is64 ? 0x36 : 0x2a), 2, little),
		      get_n(data + (is64 ? 0x38 : 0x2c), 2, little), abfd};
	if (v.phnum && v.phentsize < (is64 ? 56u : 32u)) {
		rc = wg_seterr(err, WG_EFORMAT, "%s: invalid ELF: program header size %llu",
			       obj->path, (unsigned long long)v.phentsize);
		goto close;
	}
	dyninfo di;
	if ((rc = read_sections(obj, a, abfd)) < 0 ||
	    (rc = read_dynamic(obj, a, &v, &di, err)) < 0 ||
	    (rc = read_versions(obj, a, &v, &di, err)) < 0)
		goto close;
	rc = read_symbols(obj, a, abfd, max_symbols, err);
close:
	if (abfd)
		bfd_close(abfd);
unlock:
	pthread_mutex_unlock(&bfd_lock);
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

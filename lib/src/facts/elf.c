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
 *
 * Here: libbfd opened on the bytes under its lock, the ELF header and the section header
 * table checked before libbfd sees them, the section table, and the steps in their order.
 * The dynamic segment: elf_dynamic.c; the loader's symbol table: elf_symbols.c; libbfd's
 * section view and the cross-check: elf_bfd.c (elf_internal.h is theirs).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ELF /* wg_seterr: what fails here */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "facts/elf_internal.h"

static pthread_mutex_t bfd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t bfd_once = PTHREAD_ONCE_INIT;
static void init_bfd(void)
{
	bfd_init();
	bfd_set_error_handler(wg_elf_bfd_on_error);
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
	wg_elf_bfd_forget();
	bfd_set_error(bfd_error_no_error);
	bfd *abfd = bfd_openr_iovec(obj->path, NULL, mem_open, &m, mem_pread, mem_close, mem_stat);
	if (!abfd) {
		rc = wg_seterr(err, WG_ENOMEM, "%s: cannot open: %s", obj->path, wg_elf_bfd_reason());
		goto unlock;
	}
	if (!bfd_check_format(abfd, bfd_object)) {
		/* A machine this libbfd has no backend for: read it with the generic ELF target. */
		bfd_close(abfd);
		wg_elf_bfd_forget();
		bfd_set_error(bfd_error_no_error);
		abfd = bfd_openr_iovec(obj->path, generic_target(data), mem_open, &m, mem_pread,
				       mem_close, mem_stat);
		if (!abfd || !bfd_check_format(abfd, bfd_object)) {
			rc = wg_seterr(err, WG_EFORMAT, "%s: unreadable ELF object: %s", obj->path,
				       wg_elf_bfd_reason());
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
	if ((rc = read_sections(obj, a, abfd)) < 0 || (rc = wg_elf_read_segments(obj, a, &v)) < 0) {
		rc = wg_seterr(err, WG_ENOMEM, "out of memory");
		goto close;
	}
	if ((rc = wg_elf_read_dynamic(obj, a, &v, &di, err)) < 0)
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
		if ((rc = wg_elf_read_versions(obj, a, &v, &di, vt.def ? &vt : NULL, err)) < 0 ||
		    (rc = wg_elf_read_loader_symbols(obj, a, &v, &di, &vt, max_symbols, err)) < 0)
			goto close;
		if ((rc = wg_elf_cross_check(obj, a, abfd, &di, unsound[0] ? unsound : NULL,
				      max_symbols)) < 0)
			rc = wg_seterr(err, WG_ENOMEM, "out of memory");
	} else {
		if ((rc = wg_elf_read_versions(obj, a, &v, &di, NULL, err)) < 0)
			goto close;
		rc = wg_elf_read_symbols(obj, a, abfd, max_symbols, err);
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

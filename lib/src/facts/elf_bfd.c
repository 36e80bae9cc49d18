/*
 * libbfd's section view of an object: the symbols of an object without a dynamic segment
 * (its .dynsym, or a relocatable object's .symtab), and, for one that has it, the cross-check
 * against the loader's view that says how the section headers lie (rule WG-ELF-001).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ELF /* wg_seterr: what fails here */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/elf_internal.h"

/* What libbfd said last, captured instead of printed (guarded by bfd_lock). */
static char bfd_said[512];

void wg_elf_bfd_on_error(const char *fmt, va_list ap)
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

const char *wg_elf_bfd_reason(void)
{
	if (bfd_said[0])
		return bfd_said;
	return bfd_errmsg(bfd_get_error());
}

void wg_elf_bfd_forget(void)
{
	bfd_said[0] = '\0';
}

static bool same_sym(const symview *x, const wg_sym *y)
{
	/* Names compared up to a '@': libbfd appends "@VER" to dynamic names. */
	size_t ylen = strcspn(y->name, "@");
	return x->namelen == ylen && !memcmp(x->name, y->name, ylen) &&
	       x->defined == y->defined && x->binding == y->binding && x->type == y->type &&
	       !strcmp(x->symver ? x->symver : "", y->symver ? y->symver : "") &&
	       x->hidden == y->hidden;
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
				 path, wg_elf_bfd_reason());
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
				 path, wg_elf_bfd_reason());
	}
	*out = syms;
	*n = k;
	return WG_OK;
}

/* The symbols of an object without a dynamic segment, as libbfd reads its sections. */
int wg_elf_read_symbols(wg_object *obj, wg_arena *a, bfd *abfd, uint32_t max_symbols, wg_err *err)
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
		if (bfd_symview(abfd, syms[i], dynamic, &x) && wg_elf_keep_sym(obj, a, abfd, &x) < 0) {
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
int wg_elf_cross_check(wg_object *obj, wg_arena *a, bfd *abfd, const dyninfo *di,
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

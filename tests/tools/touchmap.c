/*
 * touchmap: which bytes of an ELF image the fact readers read (issue 30, phase 2 research;
 * docs/stream-touchmap.md). Built only with -DWG_TOUCHMAP=ON; nothing of it is in the library.
 *
 * The image is copied into anonymous memory made PROT_NONE; a SIGSEGV handler records the
 * faulting page (4 KiB) and makes it readable. wg_elf_read() (the ELF readers) and
 * wg_fatbin_read_max() (the fatbin readers) run one after the other, the image protected again
 * before each, so each has its own page set. libbfd reads the image through the pread callback
 * of bfd_openr_iovec: the link wraps bfd_openr_iovec (-Wl,--wrap) so that each of its reads is
 * recorded exactly (offset, length) and done with its pages opened, never counted as a fault.
 *
 * The touched bytes are then attributed to what they are (ELF header, program headers, the
 * dynamic segment, the dynamic tables, section header table, .shstrtab, fatbin sections,
 * notes, .debug_*, code, other sections, bytes in no section), and each class says whether its
 * offset is known from bytes before it in file order (one pass) or only after (second pass).
 *
 * Usage: wg-touchmap [-v] FILE...   (one line of TSV per object and class; -v: the order in
 * which the classes were first touched).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "facts/elf_internal.h"

#define PG 4096u

static uint8_t *img;        /* the protected image */
static size_t img_len, npages;
static uint8_t *touched;    /* per page: 1 when the current phase faulted on it */
static uint32_t *order;     /* pages in the order of their first fault */
static size_t norder;
static uint8_t *bfdbyte;    /* per 64-byte line: 1 when libbfd read it */
static uint64_t bfd_reads;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	uint8_t *p = si->si_addr;
	if (p < img || p >= img + ((img_len + PG - 1) & ~(size_t)(PG - 1))) {
		signal(sig, SIG_DFL);
		return; /* a real crash: re-raised with the default action */
	}
	size_t pg = (size_t)(p - img) / PG;
	touched[pg] = 1;
	order[norder++] = (uint32_t)pg;
	mprotect(img + pg * PG, PG, PROT_READ);
}

/* ---- libbfd's reads, through a wrapped bfd_openr_iovec ---- */

typedef file_ptr (*pread_fn)(struct bfd *, void *, void *, file_ptr, file_ptr);
typedef void *(*open_fn)(struct bfd *, void *);
typedef int (*close_fn)(struct bfd *, void *);
typedef int (*stat_fn)(struct bfd *, void *, struct stat *);
static pread_fn real_pread;

bfd *__real_bfd_openr_iovec(const char *, const char *, open_fn, void *, pread_fn, close_fn,
			    stat_fn);
bfd *__wrap_bfd_openr_iovec(const char *, const char *, open_fn, void *, pread_fn, close_fn,
			    stat_fn);

static file_ptr rec_pread(struct bfd *abfd, void *stream, void *buf, file_ptr n, file_ptr off)
{
	if (off >= 0 && n > 0 && (uint64_t)off < img_len) {
		size_t end = (uint64_t)(off + n) < img_len ? (size_t)(off + n) : img_len;
		bfd_reads++;
		for (size_t l = (size_t)off / 64; l <= (end - 1) / 64; l++)
			bfdbyte[l] = 1;
		size_t p0 = (size_t)off / PG, p1 = (end - 1) / PG;
		mprotect(img + p0 * PG, (p1 - p0 + 1) * PG, PROT_READ);
		file_ptr r = real_pread(abfd, stream, buf, n, off);
		for (size_t p = p0; p <= p1; p++)
			if (!touched[p])
				mprotect(img + p * PG, PG, PROT_NONE);
		return r;
	}
	return real_pread(abfd, stream, buf, n, off);
}

bfd *__wrap_bfd_openr_iovec(const char *name, const char *target, open_fn o, void *cl,
			    pread_fn pr, close_fn c, stat_fn s)
{
	real_pread = pr;
	return __real_bfd_openr_iovec(name, target, o, cl, rec_pread, c, s);
}

/* ---- what the bytes are ---- */

enum { C_EHDR, C_PHDR, C_DYNAMIC, C_DYNTAB, C_SHT, C_SHSTR, C_FATBIN, C_FBSEG, C_NOTE,
       C_DEBUG, C_SYMTAB, C_CODE, C_RODATA, C_OTHER, C_NONE, C_N };
static const char *const cname[C_N] = {"ehdr", "phdrs", "dynamic", "dyntables", "shdrs",
	"shstrtab", "nv_fatbin", "fatbinseg", "notes", "debug", "symtab", "code", "rodata",
	"other", "nosection"};

typedef struct {
	uint64_t off, size;
	int cls;
	uint64_t locator; /* the end of the bytes its offset is read from */
	char name[32];
} region;

static region *regs;
static size_t nregs, capregs;
static int *cls_of_line; /* per 64-byte line: its class */

static void add_region(uint64_t off, uint64_t size, int cls, uint64_t locator, const char *name)
{
	if (off >= img_len || !size)
		return;
	if (size > img_len - off)
		size = img_len - off;
	if (nregs == capregs) {
		capregs = capregs ? 2 * capregs : 64;
		regs = realloc(regs, capregs * sizeof(*regs));
		if (!regs)
			abort();
	}
	region *r = &regs[nregs++];
	*r = (region){off, size, cls, locator, ""};
	snprintf(r->name, sizeof(r->name), "%s", name ? name : cname[cls]);
}

static uint64_t g(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static bool in_file(uint64_t off, uint64_t size)
{
	return off <= img_len && size <= img_len - off;
}

/* The regions of a little-endian ELF, from an unprotected copy d. */
static void classify(const uint8_t *d)
{
	nregs = 0;
	bool is64 = d[4] == 2;
	if (d[5] != 1)
		return;
	uint64_t eh = is64 ? 64 : 52;
	add_region(0, eh, C_EHDR, 0, NULL);
	uint64_t phoff = g(d + (is64 ? 0x20 : 0x1c), is64 ? 8 : 4);
	uint64_t shoff = g(d + (is64 ? 0x28 : 0x20), is64 ? 8 : 4);
	uint64_t phes = g(d + (is64 ? 0x36 : 0x2a), 2), phn = g(d + (is64 ? 0x38 : 0x2c), 2);
	uint64_t shes = g(d + (is64 ? 0x3a : 0x2e), 2), shn = g(d + (is64 ? 0x3c : 0x30), 2);
	uint64_t shstrndx = g(d + (is64 ? 0x3e : 0x32), 2);
	uint64_t dyn_off = 0, dyn_sz = 0;
	if (phn && in_file(phoff, phes * phn)) {
		add_region(phoff, phes * phn, C_PHDR, eh, NULL);
		for (uint64_t i = 0; i < phn; i++) {
			const uint8_t *p = d + phoff + i * phes;
			uint32_t type = (uint32_t)g(p, 4);
			uint64_t off = g(p + (is64 ? 8 : 4), is64 ? 8 : 4);
			uint64_t fsz = g(p + (is64 ? 32 : 16), is64 ? 8 : 4);
			if (type == PT_DYNAMIC && in_file(off, fsz)) {
				dyn_off = off;
				dyn_sz = fsz;
				add_region(off, fsz, C_DYNAMIC, phoff + phes * phn, NULL);
			} else if (type == PT_NOTE) {
				add_region(off, fsz, C_NOTE, phoff + phes * phn, NULL);
			}
		}
	}
	if (!shoff || !shn || shes != (is64 ? 64u : 40u) || !in_file(shoff, shes * shn))
		return;
	add_region(shoff, shes * shn, C_SHT, eh, NULL);
	const uint8_t *names = NULL;
	uint64_t names_len = 0;
	if (shstrndx < shn) {
		const uint8_t *h = d + shoff + shstrndx * shes;
		uint64_t off = g(h + (is64 ? 0x18 : 0x10), is64 ? 8 : 4);
		uint64_t sz = g(h + (is64 ? 0x20 : 0x14), is64 ? 8 : 4);
		if (in_file(off, sz)) {
			names = d + off;
			names_len = sz;
			add_region(off, sz, C_SHSTR, shoff + shes * shn, NULL);
		}
	}
	for (uint64_t i = 0; i < shn; i++) {
		const uint8_t *h = d + shoff + i * shes;
		uint32_t nm = (uint32_t)g(h, 4), type = (uint32_t)g(h + 4, 4);
		uint64_t flags = g(h + 8, is64 ? 8 : 4);
		uint64_t off = g(h + (is64 ? 0x18 : 0x10), is64 ? 8 : 4);
		uint64_t sz = g(h + (is64 ? 0x20 : 0x14), is64 ? 8 : 4);
		if (type == SHT_NOBITS || type == SHT_NULL || i == shstrndx || !in_file(off, sz))
			continue;
		const char *name = names && nm < names_len &&
				   memchr(names + nm, 0, names_len - nm) ? (const char *)names + nm : "";
		int c = C_OTHER;
		uint64_t loc = shoff + shes * shn;
		bool dyntab = type == SHT_DYNSYM || type == SHT_GNU_versym ||
			      type == SHT_GNU_verneed || type == SHT_GNU_verdef || type == SHT_HASH ||
			      type == SHT_GNU_HASH || !strcmp(name, ".dynstr");
		if (type == SHT_DYNAMIC)
			continue; /* PT_DYNAMIC's */
		if (dyntab) {
			c = C_DYNTAB;
			if (dyn_sz)
				loc = dyn_off + dyn_sz; /* the loader's view finds them through DT_* */
		} else if (!strcmp(name, ".nv_fatbin") || !strcmp(name, "__nv_relfatbin"))
			c = C_FATBIN;
		else if (!strcmp(name, ".nvFatBinSegment"))
			c = C_FBSEG;
		else if (type == SHT_NOTE)
			continue; /* PT_NOTE's, or a .o's notes: other */
		else if (!strncmp(name, ".debug", 6) || !strncmp(name, ".zdebug", 7))
			c = C_DEBUG;
		else if (type == SHT_SYMTAB || !strcmp(name, ".strtab"))
			c = C_SYMTAB;
		else if (flags & SHF_EXECINSTR)
			c = C_CODE;
		else if (!strncmp(name, ".rodata", 7) || !strcmp(name, ".ldata") ||
			 !strncmp(name, ".lrodata", 8))
			c = C_RODATA;
		add_region(off, sz, c, loc, name);
	}
}

/* ---- one object ---- */

static void problem(void *payload, int code, const char *fmt, ...)
{
	(void)payload;
	(void)code;
	(void)fmt;
}

typedef struct {
	uint64_t size[C_N], pages_bytes[C_N], bfd[C_N];
	bool second[C_N];
} tally;

static int verbose;

static void phase_begin(void)
{
	memset(touched, 0, npages);
	norder = 0;
	mprotect(img, npages * PG, PROT_NONE);
}

static size_t count_pages(void)
{
	size_t n = 0;
	for (size_t i = 0; i < npages; i++)
		n += touched[i];
	return n;
}

/* Bytes of class c under the touched pages (page granular) / lines read by libbfd. */
static void attribute(uint64_t *out, const uint8_t *map, size_t unit)
{
	memset(out, 0, C_N * sizeof(*out));
	size_t nunits = (img_len + unit - 1) / unit;
	for (size_t u = 0; u < nunits; u++) {
		if (!map[u])
			continue;
		uint64_t a = u * unit, b = a + unit < img_len ? a + unit : img_len;
		for (uint64_t l = a / 64; l < (b + 63) / 64; l++)
			out[cls_of_line[l]] += (l + 1) * 64 < b ? 64 : b - l * 64;
	}
}

/* Bytes of [off, off+size) under the units (pages or lines) set in map. */
static uint64_t under(uint64_t off, uint64_t size, const uint8_t *map, size_t unit)
{
	uint64_t n = 0, end = off + size;
	for (uint64_t u = off / unit; u * unit < end; u++) {
		if (!map[u])
			continue;
		uint64_t a = u * unit > off ? u * unit : off;
		uint64_t b = (u + 1) * unit < end ? (u + 1) * unit : end;
		n += b - a;
	}
	return n;
}

static void print_order(const char *phase)
{
	if (!verbose)
		return;
	printf("#order %s:", phase);
	int last = -1;
	unsigned shown = 0;
	for (size_t i = 0; i < norder && shown < 40; i++) {
		int c = cls_of_line[(size_t)order[i] * PG / 64];
		if (c != last) {
			printf(" %s@%u", cname[c], order[i]);
			last = c;
			shown++;
		}
	}
	printf("\n");
}

static int one(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 64) {
		fprintf(stderr, "%s: cannot read\n", path);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	img_len = (size_t)st.st_size;
	npages = (img_len + PG - 1) / PG;
	uint8_t *copy = mmap(NULL, img_len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (copy == MAP_FAILED || !wg_is_elf(copy, img_len)) {
		fprintf(stderr, "%s: not ELF\n", path);
		return 1;
	}
	img = mmap(NULL, npages * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t nlines = (img_len + 63) / 64;
	touched = calloc(npages, 1);
	order = calloc(npages, sizeof(*order));
	bfdbyte = calloc(nlines, 1);
	cls_of_line = calloc(nlines, sizeof(int));
	if (img == MAP_FAILED || !touched || !order || !bfdbyte || !cls_of_line)
		abort();
	memcpy(img, copy, img_len);

	/* Each line's class: the narrowest region over it, else "nosection". */
	classify(copy);
	for (size_t l = 0; l < nlines; l++)
		cls_of_line[l] = C_NONE;
	tally t;
	memset(&t, 0, sizeof(t));
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t r = 0; r < nregs; r++) {
			region *g0 = &regs[r];
			bool big = g0->cls >= C_FATBIN && g0->cls != C_FBSEG && g0->cls != C_NOTE;
			if ((pass == 0) != big)
				continue; /* sections first, then the small tables over them */
			for (uint64_t l = g0->off / 64; l < (g0->off + g0->size + 63) / 64; l++)
				cls_of_line[l] = g0->cls;
		}
	for (size_t r = 0; r < nregs; r++) {
		t.size[regs[r].cls] += regs[r].size;
		if (regs[r].locator > regs[r].off)
			t.second[regs[r].cls] = true;
	}

	wg_scan *scan = wg_scan_new(WG_SCAN_OBJECT, path, NULL);
	wg_object *o = scan ? wg_scan_new_object(scan, path, img_len) : NULL;
	if (!o)
		abort();
	wg_err err = {0};
	uint64_t elf_b[C_N], fb_b[C_N], bfd_b[C_N];

	phase_begin();
	int rc = wg_elf_read(o, &scan->arena, img, img_len, 100000000u, &err);
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", path, err.msg);
	size_t elf_pages = count_pages();
	attribute(elf_b, touched, PG);
	print_order("elf");
	uint8_t *elf_touched = malloc(npages);
	memcpy(elf_touched, touched, npages);

	size_t fb_pages = 0;
	memset(fb_b, 0, sizeof(fb_b));
	if (rc >= 0) {
		phase_begin();
		wg_fatbin_read_max(o, &scan->arena, img, img_len, SIZE_MAX, problem, NULL);
		fb_pages = count_pages();
		attribute(fb_b, touched, PG);
		print_order("fatbin");
	}
	size_t union_pages = 0;
	for (size_t i = 0; i < npages; i++)
		union_pages += touched[i] || elf_touched[i];
	attribute(bfd_b, bfdbyte, 64);
	uint64_t bfd_total = 0;
	for (int c = 0; c < C_N; c++)
		bfd_total += bfd_b[c];

	/* One summary line, then one per class that has bytes or was touched. */
	printf("OBJ\t%s\t%zu\trc=%d\tdyn=%d\telf_pages=%zu\tfatbin_pages=%zu\tunion_pages=%zu"
	       "\tunion_pct=%.2f\tbfd_bytes=%llu\tbfd_pct=%.2f\tbfd_reads=%llu\tcontainers=%zu\n",
	       path, img_len, rc, t.size[C_DYNAMIC] ? 1 : 0, elf_pages, fb_pages,
	       union_pages, 100.0 * (double)union_pages * PG / (double)img_len,
	       (unsigned long long)bfd_total, 100.0 * (double)bfd_total / (double)img_len,
	       (unsigned long long)bfd_reads, o->fatbin_containers.len);
	for (int c = 0; c < C_N; c++) {
		uint64_t sz = t.size[c];
		if (c == C_NONE) {
			uint64_t covered = 0;
			for (size_t l = 0; l < nlines; l++)
				covered += cls_of_line[l] == C_NONE;
			sz = covered * 64;
		}
		if (!sz && !elf_b[c] && !fb_b[c] && !bfd_b[c])
			continue;
		printf("CLS\t%s\t%s\t%llu\t%llu\t%llu\t%llu\t%s\n", path, cname[c],
		       (unsigned long long)sz, (unsigned long long)elf_b[c],
		       (unsigned long long)fb_b[c], (unsigned long long)bfd_b[c],
		       t.second[c] ? "after" : "before");
	}
	for (size_t r = 0; verbose && r < nregs; r++) {
		const region *g0 = &regs[r];
		printf("REG\t%s\t%s\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%s\n", path, g0->name,
		       cname[g0->cls], (unsigned long long)g0->off, (unsigned long long)g0->size,
		       (unsigned long long)under(g0->off, g0->size, elf_touched, PG),
		       (unsigned long long)(rc >= 0 ? under(g0->off, g0->size, touched, PG) : 0),
		       (unsigned long long)under(g0->off, g0->size, bfdbyte, 64),
		       g0->locator > g0->off ? "after" : "before");
	}
	fflush(stdout);
	wg_scan_free(scan);
	free(elf_touched);
	munmap(img, npages * PG);
	munmap(copy, img_len);
	free(touched);
	free(order);
	free(bfdbyte);
	free(cls_of_line);
	bfd_reads = 0;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	int rc = 0, nfiles = 0;
	for (int i = 1; i < argc; i++)
		nfiles += strcmp(argv[i], "-v") != 0;
	if (!nfiles) {
		fprintf(stderr, "usage: wg-touchmap [-v] FILE...  (which bytes of each ELF object the "
			"fact readers read: docs/stream-touchmap.md)\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v")) {
			verbose = 1;
			continue;
		}
		rc |= one(argv[i]);
	}
	return rc;
}

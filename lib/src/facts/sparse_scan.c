/*
 * What the first pass over an ELF member read sparsely looks for as its bytes go by
 * (sparse.c says why and what is done with it): the ELF header, then the program headers, the
 * segments and what follows each, the tables PT_DYNAMIC points at that are still to come,
 * .shstrtab wherever no segment maps, and at every 8-aligned offset the magic of a CUDA fatbin
 * container (walked entry by entry as it passes) or of a .nvFatBinSegment wrapper.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_ELF /* wg_seterr: what fails here */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "facts/sparse_internal.h"

/* The ELF header has passed (the front is kept): what to keep from the program headers, once
 * they have passed too, and from the section header table. */
static int plan_header(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	const uint8_t *d = sp->img;
	sp->planned = true;
	if (sp->len < 52 || memcmp(d, "\177ELF", 4) || (d[4] != 1 && d[4] != 2) ||
	    (d[5] != 1 && d[5] != 2) || (d[4] == 2 && sp->len < 64))
		return WG_OK; /* the reader says what is wrong: the front is what it reads */
	sp->elf_ok = true;
	sp->is64 = d[4] == 2;
	sp->little = d[5] == 1;
	bool w = sp->is64;
	uint64_t phoff = wg_sp_rd(sp, w ? 0x20 : 0x1c, w ? 8 : 4);
	uint64_t shoff = wg_sp_rd(sp, w ? 0x28 : 0x20, w ? 8 : 4);
	uint64_t phentsize = wg_sp_rd(sp, w ? 0x36 : 0x2a, 2), phnum = wg_sp_rd(sp, w ? 0x38 : 0x2c, 2);
	uint64_t shentsize = wg_sp_rd(sp, w ? 0x3a : 0x2e, 2), shnum = wg_sp_rd(sp, w ? 0x3c : 0x30, 2);
	int rc;
	if (shoff && shoff < sp->len) {
		uint64_t lo = shoff > TAIL_BEFORE ? shoff - TAIL_BEFORE : 0;
		uint64_t size = shentsize * (shnum ? shnum : 1);
		if ((rc = wg_sp_keep(sp, lo, shoff + (size < sp->len ? size : sp->len), data, n, off)) < 0)
			return rc;
	}
	if (!phnum)
		sp->segments_known = true; /* none: every byte may be a section's */
	if (phnum && phentsize >= (w ? 56u : 32u) && phoff < sp->len &&
	    phentsize * phnum <= sp->len - phoff) {
		sp->plan_at = phoff + phentsize * phnum;
		if ((rc = wg_sp_keep(sp, phoff, sp->plan_at, data, n, off)) < 0)
			return rc;
	}
	return WG_OK;
}

/* The program headers have passed: the front up to the end of the first segment, and the
 * small segments the loader and libbfd read by their headers. */
static int plan_segments(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	bool w = sp->is64;
	uint64_t phoff = wg_sp_rd(sp, w ? 0x20 : 0x1c, w ? 8 : 4);
	uint64_t phentsize = wg_sp_rd(sp, w ? 0x36 : 0x2a, 2), phnum = wg_sp_rd(sp, w ? 0x38 : 0x2c, 2);
	bool first = true;
	int rc;
	sp->plan_at = 0;
	sp->segments_known = true;
	sp->nloads = 0;
	for (uint64_t i = 0; i < phnum; i++) {
		uint64_t h = phoff + i * phentsize;
		uint64_t type = wg_sp_rd(sp, h, 4);
		uint64_t o = wg_sp_rd(sp, h + (w ? 8 : 4), w ? 8 : 4);
		uint64_t fsz = wg_sp_rd(sp, h + (w ? 32 : 16), w ? 8 : 4);
		if (o >= sp->len)
			continue;
		if (fsz > sp->len - o)
			fsz = sp->len - o;
		if (type == 1 /* PT_LOAD */ && sp->nloads < MAX_LOADS) {
			sp->loads[sp->nloads].off = o;
			sp->loads[sp->nloads].vaddr = wg_sp_rd(sp, h + (w ? 16 : 8), w ? 8 : 4);
			sp->loads[sp->nloads++].filesz = fsz;
		}
		if (type == 2 /* PT_DYNAMIC */ && !sp->dyn_size && fsz) {
			sp->dyn_off = o;
			sp->dyn_size = fsz;
		}
		/* What follows a segment in the file: .comment and the notes no loader maps, which
		 * libbfd reads (annobin's .gnu.build.attributes: RHEL's toolchains, manylinux). */
		if (type == 1 && (rc = wg_sp_keep(sp, o + fsz, o + fsz + GAP_HEAD, data, n, off)) < 0)
			return rc;
		if (type == 1 /* PT_LOAD */) {
			/* Executable or not (older linkers put the tables and the code in one). */
			if (first && o == 0 &&
			    (rc = wg_sp_keep(sp, 0, fsz < FRONT_MAX ? fsz : FRONT_MAX, data, n, off)) < 0)
				return rc;
			/* A small one after it: patchelf puts the tables it moves in one at the end. */
			if (!first && fsz <= SEGMENT_MAX && (rc = wg_sp_keep(sp, o, o + fsz, data, n, off)) < 0)
				return rc;
			first = false;
		} else if (fsz <= SEGMENT_MAX && (rc = wg_sp_keep(sp, o, o + fsz, data, n, off)) < 0) {
			return rc;
		}
	}
	return WG_OK;
}

/* The file offset of virtual address va, and where its segment's bytes end; false if none. */
static bool va_to_off(const wg_sparse *sp, uint64_t va, uint64_t *off, uint64_t *end)
{
	for (unsigned i = 0; i < sp->nloads; i++) {
		uint64_t v = sp->loads[i].vaddr;
		if (va >= v && va - v < sp->loads[i].filesz) {
			*off = sp->loads[i].off + (va - v);
			*end = sp->loads[i].off + sp->loads[i].filesz;
			return true;
		}
	}
	return false;
}

/*
 * PT_DYNAMIC has passed: the tables it points at that are still to come (patchelf and
 * auditwheel move .dynstr, .dynsym and the hashes to a segment at the end: torch's libraries,
 * openblas) are kept as they pass, each to its size where the array says it (DT_STRSZ,
 * DT_RELASZ...) and else up to the next table or the end of its segment, at most TABLE_MAX.
 */
static int plan_dynamic(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	enum { STR, SYM, HASH, GNUHASH, VERSYM, VERNEED, VERDEF, RELA, REL, JMPREL, NT };
	uint64_t at[NT] = {0}, size[NT] = {0};
	bool have[NT] = {false};
	bool w = sp->is64;
	size_t ent = w ? 16 : 8;
	sp->dyn_done = true;
	if (!wg_sp_kept_range(sp, sp->dyn_off, sp->dyn_size))
		return WG_OK;
	bool more = true;
	for (uint64_t p = sp->dyn_off; more && p + ent <= sp->dyn_off + sp->dyn_size; p += ent) {
		uint64_t tag = wg_sp_rd(sp, p, w ? 8 : 4), val = wg_sp_rd(sp, p + ent / 2, w ? 8 : 4);
		int t = -1;
		switch (tag) {
		case 0: more = false; continue; /* DT_NULL: the end */
		case 5: t = STR; break;
		case 10: size[STR] = val; continue; /* DT_STRSZ */
		case 6: t = SYM; break;
		case 4: t = HASH; break;
		case 0x6ffffef5: t = GNUHASH; break;
		case 0x6ffffff0: t = VERSYM; break;
		case 0x6ffffffe: t = VERNEED; break;
		case 0x6ffffffc: t = VERDEF; break;
		case 7: t = RELA; break;
		case 8: size[RELA] = val; continue; /* DT_RELASZ */
		case 17: t = REL; break;
		case 18: size[REL] = val; continue; /* DT_RELSZ */
		case 23: t = JMPREL; break;
		case 2: size[JMPREL] = val; continue; /* DT_PLTRELSZ */
		default: continue;
		}
		at[t] = val;
		have[t] = true;
	}
	uint64_t fo[NT], seg_end[NT];
	for (int t = 0; t < NT; t++)
		have[t] = have[t] && va_to_off(sp, at[t], &fo[t], &seg_end[t]);
	for (int t = 0; t < NT; t++) {
		if (!have[t] || fo[t] + 1 <= sp->have)
			continue; /* passed: the front or a segment kept it, or a run will miss it */
		uint64_t end = seg_end[t];
		if (size[t] && size[t] < end - fo[t]) {
			end = fo[t] + size[t];
		} else {
			for (int u = 0; u < NT; u++)
				if (have[u] && fo[u] > fo[t] && fo[u] < end)
					end = fo[u];
		}
		if (end - fo[t] > TABLE_MAX)
			end = fo[t] + TABLE_MAX;
		int rc = wg_sp_keep(sp, fo[t], end, data, n, off);
		if (rc < 0)
			return rc;
	}
	return WG_OK;
}

/* A container's walk, as far as the bytes that have passed allow (fatbin_container.c's). */
static int walk(wg_sparse *sp, walker *k, const uint8_t *data, size_t n, uint64_t off)
{
	int rc;
	if (k->zstd) {
		/* The decoder reads the frame header, then the first block whole (at most 128 KiB):
		 * its size is in its 3-byte header. */
		if (k->at + ZSTD_FRAME_HEAD > sp->have && k->end > sp->have)
			return WG_OK;
		uint64_t p = k->at, end = k->end;
		k->at = k->end = 0; /* done, whatever follows */
		if (end - p < 6 || wg_sp_rd(sp, p, 4) != 0xFD2FB528u)
			return WG_OK;
		unsigned fhd = sp->img[p + 4];
		unsigned did = (unsigned[]){0, 1, 2, 4}[fhd & 3], fcs = (unsigned[]){0, 2, 4, 8}[fhd >> 6];
		if (!fcs && (fhd & 0x20))
			fcs = 1;
		uint64_t b = p + 5 + !(fhd & 0x20) + did + fcs; /* the first block's header */
		if (b + 3 > end || b + 3 > sp->have)
			return wg_sp_keep(sp, p, end < p + (132u << 10) ? end : p + (132u << 10), data, n, off);
		uint64_t bh = wg_sp_rd(sp, b, 3), type = bh >> 1 & 3, size = bh >> 3;
		uint64_t last = b + 3 + (type == 1 ? 1 : size) + 3; /* and the next block's header */
		return wg_sp_keep(sp, p, last < end ? last : end, data, n, off);
	}
	const uint8_t *h;
	for (;;) {
		if (!k->entries) {
			if (k->at + 16 > sp->have)
				return WG_OK;
			uint64_t c = k->at;
			if ((rc = wg_sp_record(sp, c, 16, data, n, off, &h)) < 0)
				return rc;
			uint64_t hsize = h ? wg_sp_le(h + 6, 2) : 0, fat = h ? wg_sp_le(h + 8, 8) : 0;
			if (!h || wg_sp_le(h, 4) != FATBIN_MAGIC || wg_sp_le(h + 4, 2) != 1 || hsize < 16 ||
			    hsize > sp->len - c || fat > sp->len - c - hsize) {
				k->at = k->end = 0;
				return WG_OK;
			}
			k->entries = true;
			k->at = c + hsize;
			k->end = c + hsize + fat;
			continue;
		}
		if (k->at >= k->end) /* and the bytes after it: zero padding, or the next one */
			return wg_sp_record(sp, k->end, 8, data, n, off, &h);
		if (k->end - k->at < 64) { /* the zero padding the walk reads */
			rc = wg_sp_record(sp, k->at, k->end - k->at, data, n, off, &h);
			k->at = k->end;
			return rc;
		}
		if (k->at + 64 > sp->have)
			return WG_OK;
		uint64_t e = k->at;
		if ((rc = wg_sp_record(sp, e, 64, data, n, off, &h)) < 0)
			return rc;
		if (!h) {
			k->at = k->end;
			return WG_OK;
		}
		uint64_t kind = wg_sp_le(h, 2), ehs = wg_sp_le(h + 4, 4), psize = wg_sp_le(h + 8, 8);
		uint64_t csize = wg_sp_le(h + 16, 4), flags = wg_sp_le(h + 0x28, 8);
		if (ehs < 64 || ehs % 8 || ehs > k->end - e || psize > k->end - e - ehs) {
			k->at = k->end;
			return WG_OK;
		}
		if (kind == 1 /* PTX */ && !(flags & 0x10000ull /* obfuscated */)) {
			bool none = !csize && !(flags & (0x1000ull | 0x2000ull | 0x8000ull));
			uint64_t avail = none ? psize : csize ? csize : psize;
			uint64_t head = none ? PTX_HEAD_KEEP : flags & 0x8000ull ? ZSTD_FRAME_HEAD
					: flags & 0x2000ull ? LZ4_HEAD_KEEP : 0;
			if (head > avail)
				head = avail;
			if (head && !none && (flags & 0x8000ull)) {
				/* zstd: in pages, the block the decoder reads found from its header */
				if ((rc = wg_sp_keep(sp, e + ehs, e + ehs + head, data, n, off)) < 0)
					return rc;
				if (sp->heads.len < MAX_WALKERS) { /* else a run misses the block */
					walker *z = wg_vec_push(&sp->heads);
					if (!z)
						return WG_ENOMEM;
					*z = (walker){e + ehs, e + ehs + avail, false, true};
				}
			} else if (head && (rc = wg_sp_record(sp, e + ehs, head, data, n, off, &h)) < 0) {
				return rc;
			}
		}
		k->at = e + ehs + psize;
	}
}

/* An 8-aligned word of the member at `at`: a container's or a wrapper's magic. */
static int word(wg_sparse *sp, uint64_t v, uint64_t at, const uint8_t *data, size_t n,
		uint64_t off)
{
	if ((uint32_t)v == WRAPPER_MAGIC)
		return wg_sp_keep(sp, at, at + 24, data, n, off);
	if (v != 0x00100001BA55ED50ull) /* 50 ED 55 BA 01 00 10 00 */
		return WG_OK;
	if (!sp->magics_full) {
		uint64_t *slot = sp->magics.len < MAGICS_MAX ? wg_vec_push(&sp->magics) : NULL;
		if (slot)
			*slot = at;
		else
			sp->magics_full = true; /* fatbin.c scans the image: every page is missed */
	}
	if (sp->walkers.len >= MAX_WALKERS)
		return WG_OK; /* not walked as it passes: a run misses its pages, a pass fetches them */
	walker *k = wg_vec_push(&sp->walkers);
	if (!k)
		return WG_ENOMEM;
	*k = (walker){at, 0, false, false};
	return WG_OK;
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/*
 * How many bytes of p (n, a multiple of 64) pass the magic filter: the offset of the first
 * 64-byte piece with a 32-bit half equal to either magic, or n. AVX2 where the CPU has it (the
 * scan reads every byte of every streamed object: 21 ms of SSE2 for cuBLASLt's 541 MB), SSE2
 * on any x86-64, plain words elsewhere.
 */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static size_t skip_avx2(const uint8_t *p, size_t n)
{
	const __m256i fm = _mm256_set1_epi32((int)FATBIN_MAGIC), wm = _mm256_set1_epi32((int)WRAPPER_MAGIC);
	size_t i = 0;
	for (; i < n; i += 64) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
		__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 32));
		__m256i hit = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi32(a, fm), _mm256_cmpeq_epi32(a, wm)),
					      _mm256_or_si256(_mm256_cmpeq_epi32(b, fm), _mm256_cmpeq_epi32(b, wm)));
		if (!_mm256_testz_si256(hit, hit))
			break;
	}
	return i;
}
#endif

static size_t skip_plain(const uint8_t *p, size_t n)
{
	size_t i = 0;
	for (; i < n; i += 64) {
#ifdef __SSE2__
		const __m128i fm = _mm_set1_epi32((int)FATBIN_MAGIC), wm = _mm_set1_epi32((int)WRAPPER_MAGIC);
		__m128i hit = _mm_setzero_si128();
		for (int k = 0; k < 4; k++) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 16 * k));
			hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi32(v, fm), _mm_cmpeq_epi32(v, wm)));
		}
		if (_mm_movemask_epi8(hit))
			break;
#else
		bool hit = false;
		for (int k = 0; k < 16; k++) {
			uint32_t v;
			memcpy(&v, p + i + 4 * k, 4);
			hit |= (v == FATBIN_MAGIC) | (v == WRAPPER_MAGIC);
		}
		if (hit)
			break;
#endif
	}
	return i;
}

static size_t skip(const uint8_t *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
	static int avx2 = -1; /* every thread finds the same answer: relaxed is enough */
	int have = __atomic_load_n(&avx2, __ATOMIC_RELAXED);
	if (have < 0) {
		have = __builtin_cpu_supports("avx2") ? 1 : 0;
		__atomic_store_n(&avx2, have, __ATOMIC_RELAXED);
	}
	if (have)
		return skip_avx2(p, n);
#endif
	return skip_plain(p, n);
}

/* Every 8-aligned word of the block; one that straddles blocks is carried. */
static int scan_words(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	size_t i = 0;
	int rc;
	if (sp->ncarry) {
		while (sp->ncarry < 8 && i < n)
			sp->carry[sp->ncarry++] = data[i++];
		if (sp->ncarry < 8)
			return WG_OK;
		sp->ncarry = 0;
		uint64_t v = load64(sp->carry);
		if ((rc = word(sp, v, off + i - 8, data, n, off)) < 0)
			return rc;
	} else if (off % 8) {
		return WG_OK; /* cannot happen: words are carried from the first block on */
	}
	/* Whole 64-byte pieces by the fastest filter there is; a piece where any 32-bit half
	 * equals either magic goes to word(), which decides (a hit is a container's start). */
	while (i + 64 <= n) {
		i += skip(data + i, (n - i) & ~(size_t)63);
		if (i + 64 > n)
			break;
		for (int k = 0; k < 8; k++)
			if ((rc = word(sp, load64(data + i + 8 * k), off + i + 8 * k, data, n, off)) < 0)
				return rc;
		i += 64;
	}
	for (; i + 8 <= n; i += 8)
		if ((rc = word(sp, load64(data + i), off + i, data, n, off)) < 0)
			return rc;
	while (i < n)
		sp->carry[sp->ncarry++] = data[i++];
	return WG_OK;
}

/*
 * .shstrtab names every section, its own name too: wherever a linker put it (lld: between
 * .symtab and .strtab, megabytes before the section header table), ".shstrtab" is in it, and
 * the bytes around it are kept. Looked for only past the segments, where the sections no
 * loader maps are.
 */
static bool in_load(const wg_sparse *sp, uint64_t at, uint64_t *end)
{
	for (unsigned i = 0; i < sp->nloads; i++)
		if (at >= sp->loads[i].off && at - sp->loads[i].off < sp->loads[i].filesz) {
			*end = sp->loads[i].off + sp->loads[i].filesz;
			return true;
		}
	return false;
}

static int find_in(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off, uint64_t from,
		   uint64_t to);

static int find_shstrtab(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	if (!sp->segments_known)
		return WG_OK; /* the segments are not known yet */
	/* The runs of the block that no segment maps: every step moves at forward. */
	for (uint64_t at = off, end = off + n, stop; at < end;) {
		if (in_load(sp, at, &stop)) {
			at = stop;
			continue;
		}
		uint64_t to = end;
		for (unsigned i = 0; i < sp->nloads; i++)
			if (sp->loads[i].off > at && sp->loads[i].off < to)
				to = sp->loads[i].off;
		int rc = find_in(sp, data, n, off, at, to);
		if (rc < 0)
			return rc;
		at = to;
	}
	return WG_OK;
}

/* ".shstrtab" in [from, to) of the block, and across its start from the bytes before it. */
static int find_in(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off, uint64_t from,
		   uint64_t to)
{
	static const char name[] = ".shstrtab";
	const size_t k = sizeof(name); /* with its NUL */
	int rc;
	(void)n;
	if (from == off && sp->prev_n >= k - 1) {
		/* a name cut by the block boundary */
		uint8_t seam[2 * sizeof(name)];
		size_t m = n < k - 1 ? n : k - 1;
		memcpy(seam, sp->prev + sp->prev_n - (k - 1), k - 1);
		memcpy(seam + k - 1, data, m);
		const uint8_t *q = memmem(seam, k - 1 + m, name, k);
		if (q && (rc = wg_sp_keep(sp, off - (k - 1) + (uint64_t)(q - seam) - SHSTRTAB_AROUND,
				    off + SHSTRTAB_AROUND, data, n, off)) < 0)
			return rc;
	}
	const uint8_t *p = data + (from - off), *end = data + (to - off);
	for (const uint8_t *q; p < end && (q = memmem(p, (size_t)(end - p), name, k)); p = q + 1) {
		uint64_t at = off + (uint64_t)(q - data);
		if ((rc = wg_sp_keep(sp, at > SHSTRTAB_AROUND ? at - SHSTRTAB_AROUND : 0,
			       at + SHSTRTAB_AROUND, data, n, off)) < 0)
			return rc;
	}
	return WG_OK;
}

int wg_sparse_take(wg_sparse *sp, const uint8_t *data, size_t n, uint64_t off)
{
	int rc;
	if (!n)
		return WG_OK;
	sp->have = off + n;
	wg_sp_copy_pending(sp, data, n, off);
	if (!sp->planned && sp->have >= (sp->len < 64 ? sp->len : 64) &&
	    (rc = plan_header(sp, data, n, off)) < 0)
		return rc;
	if (sp->plan_at && sp->have >= sp->plan_at && (rc = plan_segments(sp, data, n, off)) < 0)
		return rc;
	if (!sp->dyn_done && sp->dyn_size && sp->have >= sp->dyn_off + sp->dyn_size &&
	    (rc = plan_dynamic(sp, data, n, off)) < 0)
		return rc;
	if ((rc = scan_words(sp, data, n, off)) < 0 || (rc = find_shstrtab(sp, data, n, off)) < 0)
		return rc;
	for (size_t i = 0; i < sp->walkers.len;) {
		walker *k = wg_vec_at(&sp->walkers, i);
		if ((rc = walk(sp, k, data, n, off)) < 0)
			return rc;
		if (k->entries ? k->at >= k->end : !k->end && k->at + 16 <= sp->have) {
			*k = *(walker *)wg_vec_at(&sp->walkers, sp->walkers.len - 1);
			sp->walkers.len--;
		} else {
			i++;
		}
	}
	for (size_t i = 0; i < sp->heads.len;) {
		walker *k = wg_vec_at(&sp->heads, i);
		if ((rc = walk(sp, k, data, n, off)) < 0)
			return rc;
		if (!k->end) {
			*k = *(walker *)wg_vec_at(&sp->heads, sp->heads.len - 1);
			sp->heads.len--;
		} else {
			i++;
		}
	}
	wg_sp_remember(sp, data, n);
	return WG_OK;
}

/*
 * The fatbin reader on hand-made containers: well-formed ones (plain, LZ4 and zstd PTX, a/f
 * variants, wrappers, containers outside the registered sections) and malformed ones, which
 * must give a clear error naming the object, section and offset, and never crash or hang.
 * The GPU model's rules (fatbin-format.md section 6) are checked case by case.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <lz4.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "model/model.h"
#include "test_util.h"

typedef struct {
	uint8_t d[8192];
	size_t len;
} image;

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static size_t container_header(image *im, uint64_t fat)
{
	size_t at = im->len;
	put32(im->d + at, 0xBA55ED50u);
	put16(im->d + at + 4, 1);
	put16(im->d + at + 6, 16);
	put64(im->d + at + 8, fat);
	im->len += 16;
	return at;
}

/* Appends an entry; returns its offset. payload is copied and padded to 8. */
static size_t entry(image *im, uint16_t kind, uint32_t arch, uint64_t flags, uint16_t major,
		    uint16_t minor, const void *payload, uint32_t plen, uint32_t csize, uint64_t usize)
{
	size_t at = im->len;
	uint8_t *e = im->d + at;
	uint32_t padded = (plen + 7) & ~7u;
	memset(e, 0, 64 + padded);
	put16(e, kind);
	put16(e + 2, 0x0101);
	put32(e + 4, 64);
	put64(e + 8, padded);
	put32(e + 16, csize);
	put16(e + 0x18, minor);
	put16(e + 0x1a, major);
	put32(e + 0x1c, arch);
	put64(e + 0x28, flags | 0x11);
	put64(e + 0x38, usize);
	memcpy(e + 64, payload, plen);
	im->len += 64 + padded;
	return at;
}

static void fix_fat(image *im, size_t container)
{
	put64(im->d + container + 8, im->len - container - 16);
}

typedef struct {
	char msgs[8][512];
	int n;
} problems;

static void on_problem(void *payload, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void on_problem(void *payload, int code, const char *fmt, ...)
{
	problems *p = payload;
	(void)code;
	if (p->n < 8) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->msgs[p->n++], 512, fmt, ap);
		va_end(ap);
	}
}

static wg_section sections[3];
static wg_object obj;
static wg_arena arena;
static problems probs;

/* The image's bytes [from, to) are .nv_fatbin, [seg_from, seg_to) .nvFatBinSegment (when not
 * empty), and the rest after them .ldata. */
static void read_image(image *im, size_t from, size_t to, size_t seg_from, size_t seg_to)
{
	size_t n = 0;
	memset(&obj, 0, sizeof(obj));
	memset(&probs, 0, sizeof(probs));
	obj.path = "t.so";
	sections[n++] = (wg_section){".nv_fatbin", from, to - from, 0x10000 + from, true, false};
	if (seg_to > seg_from)
		sections[n++] = (wg_section){".nvFatBinSegment", seg_from, seg_to - seg_from,
					     0x10000 + seg_from, true, false};
	size_t rest = seg_to > to ? seg_to : to;
	if (im->len > rest)
		sections[n++] = (wg_section){".ldata", rest, im->len - rest, 0, true, false};
	obj.sections = sections;
	obj.nsections = n;
	ck_assert_int_eq(wg_fatbin_read(&obj, &arena, im->d, im->len, on_problem, &probs), WG_OK);
}

static void teardown_fb(void)
{
	wg_vec_free(&obj.fatbin_containers);
	wg_vec_free(&obj.fatbin_entries);
	wg_arena_free(&arena);
}

static const wg_fatbin_entry *E(size_t i)
{
	return wg_vec_at(&obj.fatbin_entries, i);
}

static bool has_problem(const char *needle)
{
	for (int i = 0; i < probs.n; i++)
		if (strstr(probs.msgs[i], needle))
			return true;
	return false;
}

START_TEST(test_well_formed)
{
	static image im;
	memset(&im, 0, sizeof(im));
	static const char ptx[] = ".version 9.0\n.target sm_90a\n.address_size 64\n";
	char lz4[256], zst[256];
	int nl = LZ4_compress_default(ptx, lz4, (int)sizeof(ptx), (int)sizeof(lz4));
	size_t nz = ZSTD_compress(zst, sizeof(zst), ptx, sizeof(ptx), 3);
	ck_assert_int_gt(nl, 0);
	ck_assert(!ZSTD_isError(nz));
	size_t c = container_header(&im, 0);
	entry(&im, WG_FATBIN_SASS, 90, 0x100000, 1, 8, "\x7f" "ELF", 4, 0, 0);   /* sm_90a */
	entry(&im, WG_FATBIN_SASS, 100, 0x200000, 1, 8, "\x7f" "ELF", 4, 0, 0);  /* sm_100f */
	entry(&im, WG_FATBIN_PTX, 90, 0x102000, 9, 0, lz4, (uint32_t)nl, (uint32_t)nl, sizeof(ptx));
	entry(&im, WG_FATBIN_PTX, 80, 0x8000, 8, 7, zst, (uint32_t)nz, (uint32_t)nz, sizeof(ptx));
	entry(&im, WG_FATBIN_PTX, 75, 0x2, 8, 0, ptx, sizeof(ptx), 0, 0);          /* debug */
	fix_fat(&im, c);
	size_t end = im.len;
	/* An empty container (legal: a PTX-only build's device-link fatbin), then padding. */
	container_header(&im, 0);
	im.len += 8;
	size_t sec_end = im.len;
	/* The wrapper of the first container. */
	size_t seg = im.len;
	put32(im.d + seg, 0x466243B1u);
	put32(im.d + seg + 4, 1);
	put64(im.d + seg + 8, 0x10000 + c);
	im.len += 24;
	read_image(&im, 0, sec_end, seg, im.len);
	(void)end;
	ck_assert_int_eq(probs.n, 0);
	ck_assert_uint_eq(obj.fatbin_containers.len, 2);
	ck_assert_uint_eq(obj.fatbin_entries.len, 5);
	const wg_fatbin_container *c0 = wg_vec_at(&obj.fatbin_containers, 0);
	ck_assert_int_eq(c0->wrapper_version, 1);
	ck_assert(c0->registered);
	ck_assert_int_eq(E(0)->variant, 'a');
	ck_assert_int_eq(E(1)->variant, 'f');
	ck_assert_int_eq(E(2)->compression, WG_FATBIN_COMP_LZ4);
	ck_assert_str_eq(E(2)->ptx_target, "sm_90a");
	ck_assert_str_eq(E(2)->ptx_version, "9.0");
	ck_assert_int_eq(E(3)->compression, WG_FATBIN_COMP_ZSTD);
	ck_assert_str_eq(E(3)->ptx_target, "sm_90a");
	ck_assert_int_eq(E(4)->compression, WG_FATBIN_COMP_NONE);
	ck_assert(E(4)->debug);
	ck_assert_str_eq(E(4)->ptx_target, "sm_90a");
	char set[128];
	ck_assert_uint_eq(wg_object_arch_set(&obj, WG_FATBIN_SASS, 1, set, sizeof(set)), 2);
	ck_assert_str_eq(set, "sm_90a sm_100f");
	ck_assert_uint_eq(wg_object_arch_set(&obj, WG_FATBIN_PTX, -1, set, sizeof(set)), 3);
	ck_assert_str_eq(set, "compute_75 compute_80 compute_90a");
	teardown_fb();
}
END_TEST

/* Malformed registered containers: each gives one problem naming file, section, offset. */
typedef enum { TRUNC_HEADER, FAT_PAST_END, ENTRY_HS_ZERO, ENTRY_HS_ODD, PAYLOAD_PAST,
	       PAYLOAD_OVERFLOW, CSIZE_OVER, LEFTOVER, BAD_MAGIC, WRAPPER_MAGIC, N_BAD } bad_kind;

static const char *const bad_msgs[N_BAD] = {
	"t.so: section .nv_fatbin: fatbin container at offset 0: header truncated",
	("t.so: section .nv_fatbin: fatbin container at offset 0: header size 16 + 1000000 bytes "
	 "of entries run past the end"),
	"t.so: section .nv_fatbin: fatbin entry at offset 0x10: header size 0 is invalid",
	"fatbin entry at offset 0x10: header size 68 is invalid",
	"fatbin entry at offset 0x10: payload of 4096 bytes runs past the container's end",
	"fatbin entry at offset 0x10: payload of 18446744073709551608 bytes runs past",
	"fatbin entry at offset 0x10: compressed size 4000 exceeds its payload of 8 bytes",
	"fatbin entry at offset 0x58: 24 bytes left, less than an entry header",
	"t.so: section .nv_fatbin: offset 0: not a fatbin container (magic 0xdeadbeef",
	"section .nvFatBinSegment: offset 0x58: wrapper magic 0x1234",
};

START_TEST(test_malformed)
{
	static image im;
	memset(&im, 0, sizeof(im));
	size_t c = container_header(&im, 0);
	size_t e = entry(&im, WG_FATBIN_SASS, 80, 0, 1, 8, "12345678", 8, 0, 0);
	fix_fat(&im, c);
	size_t sec_end = im.len, seg_from = 0, seg_to = 0;
	switch ((bad_kind)_i) {
	case TRUNC_HEADER: sec_end = 10; break;
	case FAT_PAST_END: put64(im.d + 8, 1000000); break;
	case ENTRY_HS_ZERO: put32(im.d + e + 4, 0); break;
	case ENTRY_HS_ODD: put32(im.d + e + 4, 68); break;
	case PAYLOAD_PAST: put64(im.d + e + 8, 4096); break;
	case PAYLOAD_OVERFLOW: put64(im.d + e + 8, UINT64_MAX - 7); break;
	case CSIZE_OVER: put32(im.d + e + 16, 4000); break;
	case LEFTOVER:
		memset(im.d + im.len, 0xee, 24);
		im.len += 24;
		fix_fat(&im, c);
		sec_end = im.len;
		break;
	case BAD_MAGIC: put32(im.d, 0xdeadbeef); break;
	case WRAPPER_MAGIC:
		seg_from = im.len;
		put32(im.d + im.len, 0x1234);
		im.len += 24;
		seg_to = im.len;
		break;
	default: break;
	}
	read_image(&im, 0, sec_end, seg_from, seg_to);
	ck_assert_msg(has_problem(bad_msgs[_i]), "case %d: expected '%s', got %d problem(s): '%s'",
		      _i, bad_msgs[_i], probs.n, probs.n ? probs.msgs[0] : "");
	teardown_fb();
}
END_TEST

START_TEST(test_outside_scan)
{
	static image im;
	memset(&im, 0, sizeof(im));
	/* Registered section: empty. Outside (.ldata): chance magic with garbage after it, a real
	 * container, and a magic at an odd offset. */
	im.len = 64;
	size_t junk = im.len;
	container_header(&im, 40); /* claims 40 bytes of entries: garbage, not an entry */
	memset(im.d + im.len, 0x41, 40);
	im.len += 40;
	size_t real = im.len;
	size_t c = container_header(&im, 0);
	entry(&im, WG_FATBIN_SASS, 120, 0x200000, 1, 8, "ELFELFEL", 8, 0, 0);
	fix_fat(&im, c);
	memcpy(im.d + im.len + 3, "\x50\xed\x55\xba\x01\x00\x10\x00", 8);
	im.len += 64;
	read_image(&im, 0, 0, 0, 0);
	ck_assert_int_eq(probs.n, 0);
	ck_assert_uint_eq(obj.fatbin_containers.len, 1);
	const wg_fatbin_container *f = wg_vec_at(&obj.fatbin_containers, 0);
	ck_assert_uint_eq(f->offset, real);
	ck_assert(!f->registered);
	ck_assert_str_eq(f->section, ".ldata");
	ck_assert_int_eq(E(0)->arch, 120);
	ck_assert_int_eq(E(0)->variant, 'f');
	(void)junk;
	teardown_fb();
}
END_TEST

START_TEST(test_compressed_ptx_is_bounded)
{
	/* A PTX entry that claims 2^62 bytes uncompressed, with a corrupt zstd stream, and an LZ4
	 * one whose data is garbage: no allocation by the claim, no target, no crash. */
	static image im;
	memset(&im, 0, sizeof(im));
	size_t c = container_header(&im, 0);
	static const char bad_zstd[16] = "\x28\xb5\x2f\xfd garbage!!!";
	entry(&im, WG_FATBIN_PTX, 90, 0x8000, 9, 0, bad_zstd, 16, 16, 1ull << 62);
	entry(&im, WG_FATBIN_PTX, 90, 0x2000, 9, 0, "\xff\xff\xff\xff\xff\xff\xff\xff", 8, 8,
	      1ull << 62);
	fix_fat(&im, c);
	read_image(&im, 0, im.len, 0, 0);
	ck_assert_uint_eq(obj.fatbin_entries.len, 2);
	ck_assert_ptr_null(E(0)->ptx_target);
	ck_assert_ptr_null(E(1)->ptx_target);
	teardown_fb();
}
END_TEST

/* Section 6 of the format document, case by case. */
static const struct {
	int kind;
	unsigned arch;
	char variant;
	unsigned major, minor;
	wg_run_how want;
} rules[] = {
	{WG_FATBIN_SASS, 80, 0, 8, 0, WG_RUN_SASS_EXACT},
	{WG_FATBIN_SASS, 80, 0, 8, 6, WG_RUN_SASS_MAJOR},   /* A100 code on an A10G */
	{WG_FATBIN_SASS, 86, 0, 8, 0, WG_RUN_NONE},         /* newer minor */
	{WG_FATBIN_SASS, 80, 0, 9, 0, WG_RUN_NONE},         /* other major */
	{WG_FATBIN_SASS, 90, 'a', 9, 0, WG_RUN_SASS_EXACT},
	{WG_FATBIN_SASS, 100, 'a', 10, 3, WG_RUN_NONE},     /* arch-specific: exactly 10.0 */
	{WG_FATBIN_SASS, 100, 'f', 10, 3, WG_RUN_SASS_FAMILY},
	{WG_FATBIN_SASS, 120, 'f', 12, 1, WG_RUN_SASS_FAMILY},
	{WG_FATBIN_SASS, 100, 'f', 12, 0, WG_RUN_NONE},
	{WG_FATBIN_PTX, 80, 0, 9, 0, WG_RUN_PTX_JIT},
	{WG_FATBIN_PTX, 80, 0, 12, 1, WG_RUN_PTX_JIT},
	{WG_FATBIN_PTX, 90, 0, 8, 9, WG_RUN_NONE},          /* older GPU */
	{WG_FATBIN_PTX, 90, 'a', 9, 0, WG_RUN_PTX_JIT},
	{WG_FATBIN_PTX, 90, 'a', 10, 0, WG_RUN_NONE},
	{WG_FATBIN_PTX, 100, 'f', 10, 3, WG_RUN_PTX_JIT},
	{WG_FATBIN_PTX, 100, 'f', 12, 0, WG_RUN_NONE},
	{WG_FATBIN_LTOIR, 90, 0, 9, 0, WG_RUN_NONE},
};

START_TEST(test_rules)
{
	wg_run_how got = wg_image_runs_on(rules[_i].kind, rules[_i].arch, rules[_i].variant,
					  rules[_i].major, rules[_i].minor);
	ck_assert_msg(got == rules[_i].want, "kind %d arch %u%c on %u.%u: %s, expected %s",
		      rules[_i].kind, rules[_i].arch, rules[_i].variant ? rules[_i].variant : ' ',
		      rules[_i].major, rules[_i].minor, wg_run_how_name(got),
		      wg_run_how_name(rules[_i].want));
}
END_TEST

START_TEST(test_gpu_names_and_isa)
{
	static const struct {
		const char *spec;
		unsigned major, minor;
		const char *name;
	} ok[] = {
		{"sm_89", 8, 9, NULL}, {"compute_100", 10, 0, NULL}, {"8.6", 8, 6, NULL},
		{"sm_90a", 9, 0, NULL}, {"L4", 8, 9, "L4"}, {"h100", 9, 0, "H100"},
		{"RTX 4090", 8, 9, "RTX 4090"}, {"rtx-5090", 12, 0, "RTX 5090"}, {"T4", 7, 5, "T4"},
		{"A10G", 8, 6, "A10G"}, {"A100", 8, 0, "A100"}, {"L40S", 8, 9, "L40S"},
		{"H200", 9, 0, "H200"}, {"B200", 10, 0, "B200"}, {"B300", 10, 3, "B300"},
		{"Thor", 11, 0, "Thor"}, {"DGX Spark", 12, 1, "DGX Spark"}, {"Orin", 8, 7, "Orin"},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		wg_gpu g = WG_GPU_INIT;
		ck_assert_msg(wg_gpu_parse(&g, t_ctx, ok[i].spec) == WG_OK, "%s", ok[i].spec);
		ck_assert_uint_eq(g.cc_major, ok[i].major);
		ck_assert_uint_eq(g.cc_minor, ok[i].minor);
		if (ok[i].name)
			ck_assert_str_eq(g.name, ok[i].name);
		else
			ck_assert_ptr_null(g.name);
	}
	static const char *const bad[] = {"sm_", "sm_9", "sm_90x", "Voodoo", "8.", "", "sm_1000"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wg_gpu g = WG_GPU_INIT;
		ck_assert_msg(wg_gpu_parse(&g, t_ctx, bad[i]) == WG_ENOTFOUND, "'%s' accepted", bad[i]);
		ck_assert_ptr_nonnull(strstr(wg_error_last(), "unknown GPU"));
	}
	/* Well-formed, but no GPU has that capability: refused, naming the known range. */
	static const char *const far[] = {"sm_999", "99.0", "sm_20", "2.1", "compute_130", "13.0"};
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		wg_gpu g = WG_GPU_INIT;
		ck_assert_msg(wg_gpu_parse(&g, t_ctx, far[i]) == WG_EINVAL, "'%s' accepted", far[i]);
		ck_assert_ptr_nonnull(strstr(wg_error_last(), "outside the known range 3.0 to 12.9"));
	}
	static const char *const edge[] = {"sm_30", "3.0", "sm_121", "12.1", "sm_120a"};
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		wg_gpu g = WG_GPU_INIT;
		ck_assert_msg(wg_gpu_parse(&g, t_ctx, edge[i]) == WG_OK, "'%s' refused", edge[i]);
	}
	unsigned cm, cn;
	ck_assert_int_eq(wg_ptx_isa_cuda(t_ctx, 9, 0, &cm, &cn), WG_OK);
	ck_assert(cm == 13 && cn == 0);
	ck_assert_int_eq(wg_ptx_isa_cuda(t_ctx, 8, 7, &cm, &cn), WG_OK);
	ck_assert(cm == 12 && cn == 8);
	ck_assert_int_eq(wg_ptx_isa_cuda(t_ctx, 9, 1, &cm, &cn), WG_OK);
	ck_assert(cm == 13 && cn == 1);
	ck_assert_int_eq(wg_ptx_isa_cuda(t_ctx, 99, 0, &cm, &cn), WG_ENOTFOUND);
}
END_TEST

/*
 * The verdict over every image: a registered module (wrapped in .nvFatBinSegment) and the
 * fatbins the library loads itself. The registered module holds sm_75 SASS only; outside it,
 * containers hold sm_90 SASS, sm_80 SASS and compute_80/compute_86 PTX (one per container,
 * the way libcufft.so.12 keeps its kernels in .ldata).
 */
static size_t one_entry_container(image *im, uint16_t kind, uint32_t arch, uint16_t major,
				  uint16_t minor)
{
	size_t c = container_header(im, 0);
	entry(im, kind, arch, 0, major, minor, kind == WG_FATBIN_PTX ? ".version" : "\x7f" "ELF",
	      kind == WG_FATBIN_PTX ? 8 : 4, 0, 0);
	fix_fat(im, c);
	return c;
}

static wg_gpu_verdict verdict_on(unsigned major, unsigned minor)
{
	wg_gpu g = WG_GPU_INIT;
	wg_gpu_verdict v = WG_GPU_VERDICT_INIT;
	g.cc_major = major;
	g.cc_minor = minor;
	ck_assert_int_eq(wg_object_gpu_verdict(&v, &obj, &g), WG_OK);
	return v;
}

/* wrapped: a .nvFatBinSegment wrapper points at the registered module; outside: the driver
 * API containers after it (sm_90 and sm_80 SASS, or compute_80/86 PTX when ptx_only). */
static void verdict_image(image *im, bool wrapped, bool ptx_only)
{
	memset(im, 0, sizeof(*im));
	size_t c = one_entry_container(im, WG_FATBIN_SASS, 75, 1, 8);
	size_t sec_end = im->len, seg = im->len;
	if (wrapped) {
		put32(im->d + seg, 0x466243B1u);
		put32(im->d + seg + 4, 1);
		put64(im->d + seg + 8, 0x10000 + c);
		im->len += 24;
	}
	size_t seg_end = im->len;
	if (ptx_only) {
		one_entry_container(im, WG_FATBIN_PTX, 86, 8, 5);
		one_entry_container(im, WG_FATBIN_PTX, 80, 8, 0);
	} else {
		one_entry_container(im, WG_FATBIN_SASS, 90, 1, 8);
		one_entry_container(im, WG_FATBIN_SASS, 80, 1, 8);
	}
	read_image(im, 0, sec_end, seg, seg_end);
	ck_assert_int_eq(probs.n, 0);
	ck_assert_uint_eq(obj.fatbin_containers.len, 3);
	ck_assert_uint_eq(obj.fatbin_wrappers, wrapped ? 1 : 0);
}

START_TEST(test_verdict_registered_and_outside)
{
	static image im;
	verdict_image(&im, true, false);
	/* 9.0: the registered module has no image (the registered-only answer: none), an
	 * outside container has exact SASS: some (the sm_75 module cannot run there). */
	wg_gpu_verdict v = verdict_on(9, 0);
	ck_assert(v.is_cuda);
	ck_assert_uint_eq(v.kernel_containers, 1);
	ck_assert_uint_eq(v.runnable_containers, 0);
	ck_assert_uint_eq(v.other_containers, 2);
	ck_assert_uint_eq(v.other_runnable, 1);
	ck_assert_int_eq(v.runs, WG_RUNS_SOME);
	ck_assert_int_eq(v.how, WG_RUN_SASS_EXACT);
	ck_assert_int_eq(v.other_how, WG_RUN_SASS_EXACT);
	ck_assert_str_eq(wg_images_from_name(v.from), "driver-loaded");
	/* 8.6: sm_80 outside runs by the same major; the registered sm_75 does not. */
	v = verdict_on(8, 6);
	ck_assert_int_eq(v.runs, WG_RUNS_SOME);
	ck_assert_int_eq(v.how, WG_RUN_SASS_MAJOR);
	/* 7.5: the registered module runs, no outside container has an image: some. */
	v = verdict_on(7, 5);
	ck_assert_uint_eq(v.runnable_containers, 1);
	ck_assert_uint_eq(v.other_runnable, 0);
	ck_assert_int_eq(v.runs, WG_RUNS_SOME);
	ck_assert_int_eq(v.how, WG_RUN_SASS_EXACT);
	ck_assert_str_eq(wg_images_from_name(v.from), "registered");
	/* 10.0: nothing anywhere. */
	v = verdict_on(10, 0);
	ck_assert_int_eq(v.runs, WG_RUNS_NONE);
	ck_assert_int_eq(v.how, WG_RUN_NONE);
	ck_assert_str_eq(wg_images_from_name(v.from), "none");
	ck_assert_str_eq(wg_runs_name(v.runs), "none");
	teardown_fb();
}
END_TEST

START_TEST(test_verdict_unwrapped_fatbin_is_driver_loaded)
{
	/* libcufft.so.12's layout: .nv_fatbin (sm_75) and no wrapper anywhere, kernels outside. */
	static image im;
	verdict_image(&im, false, false);
	wg_gpu_verdict v = verdict_on(9, 0);
	ck_assert_uint_eq(v.kernel_containers, 0);
	ck_assert_uint_eq(v.other_containers, 3);
	ck_assert_uint_eq(v.other_runnable, 1);
	ck_assert_int_eq(v.runs, WG_RUNS_ALL);
	ck_assert_int_eq(v.how, WG_RUN_SASS_EXACT);
	ck_assert_str_eq(wg_runs_name(v.runs), "all");
	v = verdict_on(7, 5);
	ck_assert_int_eq(v.runs, WG_RUNS_ALL);
	ck_assert_uint_eq(v.other_runnable, 1);
	v = verdict_on(12, 0);
	ck_assert_int_eq(v.runs, WG_RUNS_NONE);
	/* A relocatable .o has no wrappers to tell: its .nv_fatbin counts as registered. */
	obj.type = "rel";
	v = verdict_on(9, 0);
	ck_assert_uint_eq(v.kernel_containers, 1);
	ck_assert_uint_eq(v.runnable_containers, 0);
	ck_assert_uint_eq(v.other_containers, 2);
	ck_assert_int_eq(v.runs, WG_RUNS_SOME);
	teardown_fb();
}
END_TEST

START_TEST(test_verdict_outside_ptx)
{
	/* Only PTX outside (ISA 8.5 for compute_86, 8.0 for compute_80), registered sm_75: on 9.0
	 * the library can JIT either; the lowest ISA is the one a driver surely needs. */
	static image im;
	verdict_image(&im, true, true);
	wg_gpu_verdict v = verdict_on(9, 0);
	ck_assert_int_eq(v.runs, WG_RUNS_SOME);
	ck_assert_int_eq(v.how, WG_RUN_PTX_JIT);
	ck_assert_uint_eq(v.other_runnable, 2);
	ck_assert_uint_eq(v.ptx_isa_major, 8);
	ck_assert_uint_eq(v.ptx_isa_minor, 0);
	/* 8.0: compute_86 cannot JIT for an older GPU; compute_80 can. */
	v = verdict_on(8, 0);
	ck_assert_uint_eq(v.other_runnable, 1);
	ck_assert_int_eq(v.how, WG_RUN_PTX_JIT);
	/* 7.5: the registered SASS runs; the PTX outside (newer than the GPU) does not. */
	v = verdict_on(7, 5);
	ck_assert_int_eq(v.how, WG_RUN_SASS_EXACT);
	ck_assert_uint_eq(v.ptx_isa_major, 0);
	teardown_fb();
}
END_TEST

Suite *suite_fatbin(void)
{
	Suite *s = suite_create("fatbin");
	TCase *tc = tcase_create("reader");
	tcase_add_test(tc, test_well_formed);
	tcase_add_loop_test(tc, test_malformed, 0, N_BAD);
	tcase_add_test(tc, test_outside_scan);
	tcase_add_test(tc, test_compressed_ptx_is_bounded);
	suite_add_tcase(s, tc);
	TCase *tm = tcase_create("model");
	tcase_add_checked_fixture(tm, t_setup, t_teardown);
	tcase_add_loop_test(tm, test_rules, 0, (int)(sizeof(rules) / sizeof(rules[0])));
	tcase_add_test(tm, test_gpu_names_and_isa);
	suite_add_tcase(s, tm);
	TCase *tv = tcase_create("verdict");
	tcase_add_test(tv, test_verdict_registered_and_outside);
	tcase_add_test(tv, test_verdict_unwrapped_fatbin_is_driver_loaded);
	tcase_add_test(tv, test_verdict_outside_ptx);
	suite_add_tcase(s, tv);
	return s;
}

/*
 * bench_floor: the floor a wheel reader cannot beat on this machine, for bench/speed.sh.
 * It maps the wheel, finds each member's raw bytes through libzip's central directory, inflates
 * the deflated ones whole with libdeflate (stored ones are read in place) and runs SHA-256 and
 * CRC-32 over every member, checking the CRC against the directory. Not linked to wheelgate.
 * With -s, each deflated member is inflated as a stream by ISA-L (isal_inflate, raw deflate)
 * into the thread's one 1 MiB buffer, SHA-256 and CRC-32 (ISA-L's) over each block as it is
 * produced: memory no longer follows the largest member (issue 30).
 *
 *   bench_floor [-j N] [-s] [-v] WHEEL
 *
 * -j N: N threads (default 1), members handed out largest first; -s: ISA-L streaming; -v: one
 * line per member (name, CRC-32, SHA-256, in directory order). Exit 0: every CRC matched; 1: a
 * mismatch or a member that does not inflate to its size; 2: usage or I/O error. The summary
 * line ends with the mode and the process's peak RSS (getrusage: the mapped wheel's touched
 * pages count too).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <openssl/evp.h>
#include <zip.h>

/* SHA-256 and CRC-32 run over the same chunk while it is still in cache. */
#define CHUNK (256 * 1024)
/* No member of a real wheel comes near this; a larger size is a bomb, not a benchmark. */
#define MAX_MEMBER ((uint64_t)16 << 30)
/* -s: the buffer each thread inflates every member into, block after block. */
#define STREAM_BLOCK (1u << 20)

struct member {
	const char *name;
	const unsigned char *data; /* the raw (compressed or stored) bytes, in the mapping */
	uint64_t comp_size, size;
	uint32_t crc;
	int deflated;
	/* results */
	uint32_t got_crc;
	unsigned char sha[32];
	int bad; /* 1: CRC mismatch; 2: does not inflate to its size */
};

/* A libzip source over the mapping that notes where each read starts. */
struct map_source {
	const unsigned char *base;
	uint64_t len, pos;
	int note;           /* the next read's offset is wanted */
	uint64_t noted;     /* ... and here it is */
	zip_error_t error;
};

static zip_int64_t map_cb(void *ud, void *data, zip_uint64_t n, zip_source_cmd_t cmd)
{
	struct map_source *s = ud;

	switch (cmd) {
	case ZIP_SOURCE_OPEN:
		s->pos = 0;
		return 0;
	case ZIP_SOURCE_READ:
		if (s->pos > s->len)
			return 0;
		if (n > s->len - s->pos)
			n = s->len - s->pos;
		if (s->note) {
			s->noted = s->pos;
			s->note = 0;
		}
		memcpy(data, s->base + s->pos, n);
		s->pos += n;
		return (zip_int64_t)n;
	case ZIP_SOURCE_CLOSE:
		return 0;
	case ZIP_SOURCE_STAT: {
		zip_stat_t *st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, n, &s->error);
		if (st == NULL)
			return -1;
		zip_stat_init(st);
		st->size = s->len;
		st->comp_size = s->len;
		st->comp_method = ZIP_CM_STORE;
		st->valid = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
		return sizeof(*st);
	}
	case ZIP_SOURCE_ERROR:
		return zip_error_to_data(&s->error, data, n);
	case ZIP_SOURCE_FREE:
		return 0;
	case ZIP_SOURCE_SEEK: {
		zip_int64_t to = zip_source_seek_compute_offset(s->pos, s->len, data, n, &s->error);
		if (to < 0)
			return -1;
		s->pos = (uint64_t)to;
		return 0;
	}
	case ZIP_SOURCE_TELL:
		return (zip_int64_t)s->pos;
	case ZIP_SOURCE_SUPPORTS:
		return ZIP_SOURCE_SUPPORTS_SEEKABLE;
	default:
		zip_error_set(&s->error, ZIP_ER_OPNOTSUPP, 0);
		return -1;
	}
}

struct pool {
	struct member **order; /* largest first */
	size_t count;
	atomic_size_t next;
	const EVP_MD *sha256;
	int stream; /* -s */
};

struct worker {
	struct pool *pool;
	pthread_t thread;
	int failed; /* could not allocate or hash */
};

static int hash_member(struct member *m, const unsigned char *p, uint64_t n, EVP_MD_CTX *ctx,
	const EVP_MD *md)
{
	uint32_t crc = 0;
	unsigned int len = 0;

	if (!EVP_DigestInit_ex(ctx, md, NULL))
		return -1;
	for (uint64_t off = 0; off < n; off += CHUNK) {
		size_t k = (size_t)(n - off < CHUNK ? n - off : CHUNK);
		if (!EVP_DigestUpdate(ctx, p + off, k))
			return -1;
		crc = libdeflate_crc32(crc, p + off, k);
	}
	if (!EVP_DigestFinal_ex(ctx, m->sha, &len))
		return -1;
	m->got_crc = crc;
	if (crc != m->crc)
		m->bad = 1;
	return 0;
}

/* -s: m inflated by ISA-L into buf (STREAM_BLOCK bytes), hashed block by block; output past
 * m->size, a corrupt or a truncated stream is bad 2. */
static int stream_member(struct member *m, struct inflate_state *st, unsigned char *buf,
	EVP_MD_CTX *ctx, const EVP_MD *md)
{
	uint64_t total = 0;
	uint32_t crc = 0;
	unsigned int len = 0;

	if (!EVP_DigestInit_ex(ctx, md, NULL))
		return -1;
	isal_inflate_init(st);
	st->crc_flag = ISAL_DEFLATE;
	st->next_in = (uint8_t *)(uintptr_t)m->data; /* read, never written */
	st->avail_in = (uint32_t)m->comp_size; /* under 4 GiB: checked by the caller */
	for (;;) {
		uint64_t left = m->size - total;
		uint32_t room = left < STREAM_BLOCK ? (uint32_t)left + 1 : STREAM_BLOCK;
		uint32_t in_before = st->avail_in;
		size_t k;

		st->next_out = buf;
		st->avail_out = room;
		if (isal_inflate(st) < 0) {
			m->bad = 2;
			return 0;
		}
		k = room - st->avail_out;
		if (k > left) {
			m->bad = 2;
			return 0;
		}
		if (k) {
			if (!EVP_DigestUpdate(ctx, buf, k))
				return -1;
			crc = crc32_gzip_refl(crc, buf, k);
			total += k;
		}
		if (st->block_state == ISAL_BLOCK_FINISH)
			break;
		if (!k && st->avail_in == in_before) {
			m->bad = 2; /* truncated */
			return 0;
		}
	}
	if (!EVP_DigestFinal_ex(ctx, m->sha, &len))
		return -1;
	m->got_crc = crc;
	if (total != m->size)
		m->bad = 2;
	else if (crc != m->crc)
		m->bad = 1;
	return 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pool *pool = w->pool;
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char *buf = NULL; /* grow-only, this thread's */
	size_t cap = 0;
	struct inflate_state *st = NULL;
	unsigned char *block = NULL;

	if (pool->stream && ((st = malloc(sizeof(*st))) == NULL ||
		(block = malloc(STREAM_BLOCK)) == NULL)) {
		w->failed = 1;
		goto done;
	}
	if (d == NULL || ctx == NULL) {
		w->failed = 1;
		goto done;
	}
	for (;;) {
		size_t i = atomic_fetch_add(&pool->next, 1);
		struct member *m;
		const unsigned char *p;

		if (i >= pool->count)
			break;
		m = pool->order[i];
		p = m->data;
		if (m->deflated && pool->stream) {
			if (stream_member(m, st, block, ctx, pool->sha256) < 0) {
				w->failed = 1;
				goto done;
			}
			continue;
		}
		if (m->deflated) {
			if (m->size > cap) {
				/* Contents are not kept across members: a fresh mapping, no copy. */
				size_t want = (size_t)m->size;
				if (buf != NULL)
					munmap(buf, cap);
				buf = mmap(NULL, want, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (buf == MAP_FAILED) {
					buf = NULL;
					cap = 0;
					w->failed = 1;
					goto done;
				}
				/* No MADV_HUGEPAGE: with THP defrag "madvise" the kernel compacts
				 * memory to fault huge pages in, and a 541 MB buffer took 1.4 s to
				 * fault in instead of 0.4 s on the development machine. */
				cap = want;
			}
			if (libdeflate_deflate_decompress(d, m->data, (size_t)m->comp_size, buf,
				(size_t)m->size, NULL) != LIBDEFLATE_SUCCESS) {
				m->bad = 2;
				continue;
			}
			p = buf;
		}
		if (hash_member(m, p, m->size, ctx, pool->sha256) < 0) {
			w->failed = 1;
			goto done;
		}
	}
done:
	free(block);
	free(st);
	if (buf != NULL)
		munmap(buf, cap);
	EVP_MD_CTX_free(ctx);
	libdeflate_free_decompressor(d);
	return NULL;
}

static int by_size_desc(const void *a, const void *b)
{
	const struct member *x = *(struct member *const *)a, *y = *(struct member *const *)b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

/* A member name comes from a stranger: only printable ASCII reaches the terminal. */
static void print_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f && c != '\\')
			fputc(c, f);
		else
			fprintf(f, "\\x%02x", c);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fputs("usage: bench_floor [-j N] [-s] [-v] WHEEL\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	unsigned long jobs = 1;
	int verbose = 0, stream = 0, fd, rc = 0, zerr = 0;
	struct stat st;
	struct map_source src = { 0 };
	zip_source_t *zs = NULL;
	zip_t *za = NULL;
	zip_int64_t n;
	struct member *ms = NULL;
	struct pool pool = { 0 };
	struct worker *ws = NULL;
	unsigned long started = 0;
	uint64_t total = 0, total_comp = 0;
	size_t bad = 0;
	double t0 = now(), t1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-j") == 0 && i + 1 < argc) {
			char *end;
			jobs = strtoul(argv[++i], &end, 10);
			if (*end != '\0' || jobs < 1 || jobs > 256)
				usage();
		} else if (strcmp(argv[i], "-v") == 0) {
			verbose = 1;
		} else if (strcmp(argv[i], "-s") == 0) {
			stream = 1;
		} else if (argv[i][0] == '-' || path != NULL) {
			usage();
		} else {
			path = argv[i];
		}
	}
	if (path == NULL)
		usage();
	/* libzip converts every entry's DOS time with mktime(), which without TZ stats
	 * /etc/localtime each time; the floor never looks at times. */
	if (getenv("TZ") == NULL)
		setenv("TZ", "UTC", 1);

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "bench_floor: %s: %s\n", path, strerror(errno));
		return 2;
	}
	if (st.st_size == 0) {
		fprintf(stderr, "bench_floor: %s: empty file, not a zip archive\n", path);
		return 2;
	}
	src.len = (uint64_t)st.st_size;
	src.base = mmap(NULL, src.len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (src.base == MAP_FAILED) {
		fprintf(stderr, "bench_floor: %s: mmap: %s\n", path, strerror(errno));
		return 2;
	}
	rc = 2; /* until every member is read */
	zip_error_init(&src.error);
	zs = zip_source_function_create(map_cb, &src, NULL);
	if (zs == NULL || (za = zip_open_from_source(zs, ZIP_RDONLY, NULL)) == NULL) {
		fprintf(stderr, "bench_floor: %s: not a zip archive libzip can read\n", path);
		zip_source_free(zs); /* still the caller's when the open failed */
		goto done;
	}
	n = zip_get_num_entries(za, 0);
	ms = calloc(n > 0 ? (size_t)n : 1, sizeof(*ms));
	pool.order = calloc(n > 0 ? (size_t)n : 1, sizeof(*pool.order));
	if (ms == NULL || pool.order == NULL) {
		fputs("bench_floor: out of memory\n", stderr);
		goto done;
	}
	/* Where each member's raw bytes start: open it compressed and note the offset of the
	 * first read libzip makes past the local header; the bytes it returns must be those. */
	for (zip_int64_t i = 0; i < n; i++) {
		struct member *m = &ms[i];
		zip_stat_t zst;
		zip_file_t *zf;
		unsigned char probe[16];
		zip_int64_t got;

		if (zip_stat_index(za, (zip_uint64_t)i, 0, &zst) < 0) {
			fprintf(stderr, "bench_floor: %s: member %" PRId64 ": %s\n", path, i,
				zip_strerror(za));
			goto done;
		}
		m->name = zst.name;
		m->comp_size = zst.comp_size;
		m->size = zst.size;
		m->crc = zst.crc;
		if (zst.comp_method == ZIP_CM_DEFLATE) {
			m->deflated = 1;
		} else if (zst.comp_method != ZIP_CM_STORE || zst.comp_size != zst.size) {
			fprintf(stderr, "bench_floor: %s: ", path);
			print_escaped(stderr, zst.name);
			fprintf(stderr, ": method %u, not stored or deflated\n", zst.comp_method);
			goto done;
		}
		if (m->size > MAX_MEMBER || (stream && m->comp_size > UINT32_MAX)) {
			fprintf(stderr, "bench_floor: %s: ", path);
			print_escaped(stderr, zst.name);
			fprintf(stderr, ": %" PRIu64 " bytes inflated, over the floor's bound\n", m->size);
			goto done;
		}
		total += m->size;
		total_comp += m->comp_size;
		pool.order[i] = m;
		if (m->comp_size == 0) {
			m->data = src.base; /* nothing is read */
			continue;
		}
		if ((zf = zip_fopen_index(za, (zip_uint64_t)i, ZIP_FL_COMPRESSED)) == NULL) {
			zerr = 1;
		} else {
			size_t want = m->comp_size < sizeof(probe) ? (size_t)m->comp_size : sizeof(probe);
			src.note = 1;
			got = zip_fread(zf, probe, want);
			src.note = 0;
			zip_fclose(zf);
			if (got != (zip_int64_t)want || src.noted > src.len ||
				m->comp_size > src.len - src.noted ||
				memcmp(src.base + src.noted, probe, want) != 0)
				zerr = 1;
		}
		if (zerr) {
			fprintf(stderr, "bench_floor: %s: ", path);
			print_escaped(stderr, zst.name);
			fputs(": cannot locate the member's data\n", stderr);
			goto done;
		}
		m->data = src.base + src.noted;
	}
	pool.count = (size_t)n;
	pool.sha256 = EVP_sha256();
	pool.stream = stream;
	qsort(pool.order, pool.count, sizeof(*pool.order), by_size_desc);
	/* No MADV_WILLNEED: on a wheel already in the page cache it cost the stored wheel's
	 * 2-thread run 0.3 s of 0.66 (paired runs). */

	if ((ws = calloc(jobs, sizeof(*ws))) == NULL) {
		fputs("bench_floor: out of memory\n", stderr);
		goto done;
	}
	for (unsigned long j = 0; j < jobs; j++) {
		ws[j].pool = &pool;
		if (j > 0 && pthread_create(&ws[j].thread, NULL, work, &ws[j]) != 0) {
			fputs("bench_floor: cannot start a thread\n", stderr);
			ws[0].failed = 1;
			break;
		}
		started = j + 1;
	}
	if (!ws[0].failed)
		work(&ws[0]); /* the caller's thread is worker 0 */
	for (unsigned long j = 1; j < started; j++)
		pthread_join(ws[j].thread, NULL);
	for (unsigned long j = 0; j < jobs; j++) {
		if (ws[j].failed) {
			fputs("bench_floor: out of memory, no thread or SHA-256 failed\n", stderr);
			goto done;
		}
	}
	t1 = now();

	for (size_t i = 0; i < pool.count; i++) {
		struct member *m = &ms[i];
		if (m->bad) {
			bad++;
			fprintf(stderr, "bench_floor: %s: ", path);
			print_escaped(stderr, m->name);
			if (m->bad == 1)
				fprintf(stderr, ": CRC-32 %08" PRIx32 ", the directory says %08" PRIx32 "\n",
					m->got_crc, m->crc);
			else
				fprintf(stderr, ": does not inflate to %" PRIu64 " bytes\n", m->size);
		}
		if (verbose) {
			print_escaped(stdout, m->name);
			printf(" %08" PRIx32 " ", m->got_crc);
			for (int k = 0; k < 32; k++)
				printf("%02x", m->sha[k]);
			putchar('\n');
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("members %zu, %" PRIu64 " bytes inflated from %" PRIu64 ", %lu thread%s, %.3f s, "
		"%zu bad; %s, peak RSS %ld KiB\n", pool.count, total, total_comp, jobs,
		jobs == 1 ? "" : "s", t1 - t0, bad, stream ? "ISA-L streamed" : "libdeflate whole",
		ru.ru_maxrss);
	rc = bad ? 1 : 0;
done:
	zip_discard(za);
	munmap((void *)src.base, src.len);
	free(ws);
	free(pool.order);
	free(ms);
	return rc;
}

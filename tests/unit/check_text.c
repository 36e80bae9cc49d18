/*
 * The text formats inside a wheel: RECORD (CSV) and the WHEEL/METADATA headers.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "facts/facts.h"
#include "test_util.h"

START_TEST(test_record_rows)
{
	static const char rec[] =
		"pkg/__init__.py,sha256=AAAA,12\n"
		"\"pkg/odd,name.txt\",sha256=BBBB,3\r\n"
		"\n"
		"pkg-1.0.dist-info/RECORD,,\n";
	wg_arena a = {0};
	wg_vec rows;
	wg_err err = {0};
	wg_vec_init(&rows, sizeof(wg_record_row));
	ck_assert_int_eq(wg_record_parse(&rows, &a, rec, strlen(rec), &err), WG_OK);
	ck_assert_uint_eq(rows.len, 3);
	wg_record_row *r = wg_vec_at(&rows, 1);
	ck_assert_str_eq(r->path, "pkg/odd,name.txt");
	ck_assert_str_eq(r->algo, "sha256");
	ck_assert_str_eq(r->digest, "BBBB");
	ck_assert_int_eq(r->size, 3);
	r = wg_vec_at(&rows, 2);
	ck_assert_ptr_null(r->algo);
	ck_assert_int_eq(r->size, -1);
	wg_vec_free(&rows);
	wg_arena_free(&a);
}
END_TEST

static const struct {
	const char *text, *msg;
} bad_records[] = {
	{"a,sha256=x\n", "line 1: expected 3 fields"},
	{"a,sha256=x,1\nb,sha256=y,1,extra\n", "line 2: more than 3 fields"},
	{"a,sha256=x,-4\n", "line 1: bad size '-4'"},
	{"a,sha256=x,12kb\n", "bad size '12kb'"},
	{"a,nohash,1\n", "is not algorithm=digest"},
};

START_TEST(test_record_bad)
{
	wg_arena a = {0};
	wg_vec rows;
	wg_err err = {0};
	wg_vec_init(&rows, sizeof(wg_record_row));
	const char *t = bad_records[_i].text;
	ck_assert_int_eq(wg_record_parse(&rows, &a, t, strlen(t), &err), WG_EFORMAT);
	ck_assert_msg(strstr(err.msg, bad_records[_i].msg), "'%s' lacks '%s'", err.msg,
		      bad_records[_i].msg);
	wg_vec_free(&rows);
	wg_arena_free(&a);
}
END_TEST

typedef struct {
	char keys[8][64], values[8][128];
	int n;
} headers;

static void collect(const char *k, const char *v, void *p)
{
	headers *h = p;
	if (h->n < 8) {
		snprintf(h->keys[h->n], 64, "%s", k);
		snprintf(h->values[h->n], 128, "%s", v);
		h->n++;
	}
}

START_TEST(test_headers)
{
	static const char md[] = "Metadata-Version: 2.1\r\n"
				 "Name:   flash_attn  \n"
				 "License: line one\n"
				 "        line two\n"
				 "garbage line without colon\n"
				 "Requires-Dist: torch\n"
				 "\n"
				 "Name: in the body\n";
	wg_arena a = {0};
	headers h = {0};
	ck_assert_int_eq(wg_headers_parse(md, strlen(md), &a, collect, &h), WG_OK);
	ck_assert_int_eq(h.n, 4);
	ck_assert_str_eq(h.keys[1], "Name");
	ck_assert_str_eq(h.values[1], "flash_attn");
	ck_assert_str_eq(h.values[2], "line one\nline two");
	ck_assert_str_eq(h.keys[3], "Requires-Dist");
	wg_arena_free(&a);
}
END_TEST

START_TEST(test_b64)
{
	/* sha256("") as RECORD writes it. */
	uint8_t d[32];
	char out[48];
	wg_sha256 *h = wg_sha256_new();
	wg_sha256_final(h, d);
	wg_sha256_free(h);
	wg_b64url(out, d, 32);
	ck_assert_str_eq(out, "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}
END_TEST

Suite *suite_text(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("record");
	tcase_add_test(tc, test_record_rows);
	tcase_add_loop_test(tc, test_record_bad, 0,
			    (int)(sizeof(bad_records) / sizeof(bad_records[0])));
	tcase_add_test(tc, test_headers);
	tcase_add_test(tc, test_b64);
	suite_add_tcase(s, tc);
	return s;
}

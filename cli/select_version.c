/*
 * The PEP 440 order `wheelgate select` ranks versions by: epoch, release (trailing zeros do not
 * count), then .devN < aN < bN < rcN < (the release) < .postN; the local label is ignored.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <string.h>

#include "select.h"

#define MAX_RELEASE 16

typedef struct {
	unsigned long long epoch, rel[MAX_RELEASE];
	int nrel;
	int pre_kind;                 /* 0 a, 1 b, 2 rc, 3 none */
	unsigned long long pre;
	int has_post, has_dev;
	unsigned long long post, dev;
} pver;

static int num(const char **s, unsigned long long *out)
{
	if (!isdigit((unsigned char)**s))
		return -1;
	unsigned long long v = 0;
	while (isdigit((unsigned char)**s)) {
		unsigned d = (unsigned)(**s - '0');
		if (v > (~0ULL - d) / 10)
			return -1;
		v = v * 10 + d;
		(*s)++;
	}
	*out = v;
	return 0;
}

static int word(const char **s, const char *w)
{
	size_t l = strlen(w);
	if (strncasecmp(*s, w, l))
		return 0;
	*s += l;
	return 1;
}

/* An optional separator ('.', '-', '_'), then an optional number (implicit 0). */
static int seg_num(const char **s, unsigned long long *out)
{
	if (**s == '.' || **s == '-' || **s == '_')
		(*s)++;
	*out = 0;
	return isdigit((unsigned char)**s) ? num(s, out) : 0;
}

static int parse(const char *v, pver *p)
{
	memset(p, 0, sizeof(*p));
	p->pre_kind = 3;
	const char *s = v;
	if (*s == 'v' || *s == 'V')
		s++;
	unsigned long long n;
	if (num(&s, &n) < 0)
		return -1;
	if (*s == '!') {
		p->epoch = n;
		s++;
		if (num(&s, &n) < 0)
			return -1;
	}
	p->rel[p->nrel++] = n;
	while (*s == '.' && isdigit((unsigned char)s[1])) {
		s++;
		if (num(&s, &n) < 0)
			return -1;
		if (p->nrel == MAX_RELEASE)
			return -1;
		p->rel[p->nrel++] = n;
	}
	/* pre-release */
	const char *t = s;
	if (*t == '.' || *t == '-' || *t == '_')
		t++;
	static const struct { const char *w; int k; } pre[] = {
		{"alpha", 0}, {"beta", 1}, {"preview", 2}, {"pre", 2}, {"rc", 2}, {"a", 0},
		{"b", 1}, {"c", 2}};
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (word(&t, pre[i].w)) {
			p->pre_kind = pre[i].k;
			if (seg_num(&t, &p->pre) < 0)
				return -1;
			s = t;
			break;
		}
	/* post-release: .postN, -N */
	t = s;
	if (*t == '-' && isdigit((unsigned char)t[1])) {
		t++;
		p->has_post = 1;
		if (num(&t, &p->post) < 0)
			return -1;
		s = t;
	} else {
		if (*t == '.' || *t == '-' || *t == '_')
			t++;
		if (word(&t, "post") || word(&t, "rev") || word(&t, "r")) {
			p->has_post = 1;
			if (seg_num(&t, &p->post) < 0)
				return -1;
			s = t;
		}
	}
	/* dev release */
	t = s;
	if (*t == '.' || *t == '-' || *t == '_')
		t++;
	if (word(&t, "dev")) {
		p->has_dev = 1;
		if (seg_num(&t, &p->dev) < 0)
			return -1;
		s = t;
	}
	return *s == '\0' || *s == '+' ? 0 : -1;
}

#define CMP(x, y) ((x) < (y) ? -1 : (x) > (y) ? 1 : 0)

int select_version_compare(const char *a, const char *b)
{
	pver x, y;
	int px = parse(a, &x), py = parse(b, &y);
	if (px < 0 || py < 0)
		return px < 0 && py < 0 ? strcmp(a, b) : px < 0 ? -1 : 1;
	int c;
	if ((c = CMP(x.epoch, y.epoch)))
		return c;
	for (int i = 0; i < MAX_RELEASE; i++) {
		unsigned long long u = i < x.nrel ? x.rel[i] : 0, v = i < y.nrel ? y.rel[i] : 0;
		if ((c = CMP(u, v)))
			return c;
	}
	/* 1.0.dev1 (a dev release with no pre or post) comes before 1.0a1 */
	int kx = x.pre_kind == 3 && !x.has_post && x.has_dev ? -1 : x.pre_kind;
	int ky = y.pre_kind == 3 && !y.has_post && y.has_dev ? -1 : y.pre_kind;
	if ((c = CMP(kx, ky)))
		return c;
	if (kx >= 0 && kx < 3 && (c = CMP(x.pre, y.pre)))
		return c;
	/* no post release before any post release */
	if ((c = CMP(x.has_post, y.has_post)))
		return c;
	if (x.has_post && (c = CMP(x.post, y.post)))
		return c;
	/* a dev release before the release it leads to */
	if ((c = CMP(!x.has_dev, !y.has_dev)))
		return c;
	return x.has_dev ? CMP(x.dev, y.dev) : 0;
}

/* A local label as PEP 440 compares it: lower case, '-' and '_' as '.'. */
static int local_equal(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = (char)tolower((unsigned char)*a), y = (char)tolower((unsigned char)*b);
		x = x == '-' || x == '_' ? '.' : x;
		y = y == '-' || y == '_' ? '.' : y;
		if (x != y)
			return 0;
	}
	return *a == *b;
}

int select_version_matches(const char *version, const char *want)
{
	pver x;
	if (parse(want, &x) < 0)
		return -1;
	if (!version || parse(version, &x) < 0 || select_version_compare(version, want))
		return 0;
	const char *lw = strchr(want, '+'), *lv = strchr(version, '+');
	if (!lw)
		return 1; /* ==1.0 matches 1.0+anything */
	return lv && local_equal(lv + 1, lw + 1);
}

/*
 * Python source as the interpreter's tokenizer sees it (the lexical rules of the Python 3
 * language reference, ch. 2): comments, string literals of every kind (prefixes, triple
 * quotes, f-strings with nested replacement fields and the same quotes inside them, as 3.12
 * allows), explicit (backslash) and implicit (bracket) line joining, `;` is a token like any
 * other. What leaves is a list of logical lines, each with its indentation and its tokens, for
 * pyimports.c to read statements from. Bytes at or above 0x80 are identifier characters, so a
 * file in any ASCII-compatible encoding (PEP 263) tokenizes the same; a UTF-8 byte order mark
 * is skipped. Malformed text (an unterminated string, unbalanced brackets) never stops the
 * tokenizer: it goes on as the interpreter's error recovery would not, one pass, linear in
 * the bytes, nested f-string fields bounded in depth.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "facts/facts.h"

#define MAX_FIELD_DEPTH 32 /* f-strings inside f-string fields: CPython allows about 150 */

typedef struct {
	const char *p, *end;
	uint32_t line;
	wg_pysrc *out;
	size_t line_first; /* first token of the logical line being built */
	uint32_t line_indent, line_no;
	bool in_line;      /* a logical line has begun */
	int depth;         /* brackets open */
	int rc;
} lexer;

static bool id_start(unsigned char c)
{
	return isalpha(c) || c == '_' || c >= 0x80;
}

static bool id_char(unsigned char c)
{
	return isalnum(c) || c == '_' || c >= 0x80;
}

/* A newline at p: "\r\n", "\n" or a lone "\r"; its length, 0 when none. */
static size_t newline_at(const char *p, const char *end)
{
	if (p >= end)
		return 0;
	if (*p == '\n')
		return 1;
	if (*p == '\r')
		return p + 1 < end && p[1] == '\n' ? 2 : 1;
	return 0;
}

static void push(lexer *lx, int kind, const char *s, size_t len, uint32_t line)
{
	if (lx->rc < 0)
		return;
	if (!lx->in_line) {
		lx->in_line = true;
		lx->line_first = lx->out->toks.len;
		lx->line_no = line;
	}
	wg_pytok *t = wg_vec_push(&lx->out->toks);
	if (!t) {
		lx->rc = WG_ENOMEM;
		return;
	}
	t->s = s;
	t->len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	t->line = line;
	t->kind = (uint8_t)kind;
}

static void end_line(lexer *lx)
{
	if (!lx->in_line || lx->rc < 0)
		return;
	wg_pyline *l = wg_vec_push(&lx->out->lines);
	if (!l) {
		lx->rc = WG_ENOMEM;
		return;
	}
	l->first = lx->line_first;
	l->n = lx->out->toks.len - lx->line_first;
	l->indent = lx->line_indent;
	l->line = lx->line_no;
	lx->in_line = false;
	lx->depth = 0;
}

static const char *string_body(lexer *lx, const char *p, char q, bool triple, bool fmt, bool raw,
			       int fdepth);

/* Whether the n characters at s are a string prefix (r, b, u, f, t and their pairs, any case):
 * *fmt for an f- or t-string, *raw for a raw one. */
static bool string_prefix(const char *s, size_t n, bool *fmt, bool *raw)
{
	bool ok = n <= 3;
	*fmt = *raw = false;
	for (size_t k = 0; k < n && ok; k++) {
		char l = (char)tolower((unsigned char)s[k]);
		ok = strchr("rbuft", l) != NULL;
		*fmt |= l == 'f' || l == 't';
		*raw |= l == 'r';
	}
	return ok;
}

/*
 * A replacement field of an f-string, from after its `{` to after its `}` (or the end of the
 * string when it is cut short: the string's own quote at bracket depth 0 ends the field).
 */
static const char *fstring_field(lexer *lx, const char *p, char q, bool triple, int fdepth)
{
	int depth = 0;
	while (p < lx->end) {
		char c = *p;
		size_t nl = newline_at(p, lx->end);
		if (nl) {
			if (!triple && fdepth <= 1 && depth == 0)
				return p; /* a one-line f-string cut by the newline */
			lx->line++;
			p += nl;
			continue;
		}
		if (c == '\\' && p + 1 < lx->end) {
			p += 2;
			continue;
		}
		if (c == '\'' || c == '"') {
			bool t3 = p + 2 < lx->end && p[1] == c && p[2] == c;
			p = string_body(lx, p + (t3 ? 3 : 1), c, t3, false, false, fdepth + 1);
			continue;
		}
		if (id_start((unsigned char)c)) {
			/* a prefixed string inside the field: f"{f'{x}'}" */
			const char *s = p;
			while (p < lx->end && id_char((unsigned char)*p))
				p++;
			bool f, r, ok = string_prefix(s, (size_t)(p - s), &f, &r);
			if (ok && p < lx->end && (*p == '\'' || *p == '"')) {
				char qq = *p;
				bool t3 = p + 2 < lx->end && p[1] == qq && p[2] == qq;
				p = string_body(lx, p + (t3 ? 3 : 1), qq, t3, f, r, fdepth + 1);
			}
			continue;
		}
		if (c == '(' || c == '[' || c == '{') {
			depth++;
		} else if (c == ')' || c == ']') {
			if (depth)
				depth--;
		} else if (c == '}') {
			if (!depth)
				return p + 1;
			depth--;
		} else if ((c == ':' || c == '!') && depth == 0 && !(c == '!' && p + 1 < lx->end && p[1] == '=')) {
			/* the format spec: literal text with fields of its own, up to the `}` */
			p++;
			while (p < lx->end && *p != '}') {
				size_t nl2 = newline_at(p, lx->end);
				if (nl2) {
					if (!triple)
						return p;
					lx->line++;
					p += nl2;
					continue;
				}
				if (*p == q && (!triple || (p + 2 < lx->end && p[1] == q && p[2] == q)))
					return p;
				if (*p == '{') {
					p = fdepth < MAX_FIELD_DEPTH ? fstring_field(lx, p + 1, q, triple, fdepth + 1)
								     : p + 1;
					continue;
				}
				p++;
			}
			return p < lx->end ? p + 1 : p;
		}
		p++;
	}
	return p;
}

/*
 * The body of a string literal from after its opening quote(s) to after its closing ones.
 * A backslash always keeps the next character from closing it (raw strings too: r"\"" is one
 * string); a one-line string ends at an unescaped newline (a syntax error, recovered from);
 * f-strings' replacement fields are read as code, with strings of their own.
 */
static const char *string_body(lexer *lx, const char *p, char q, bool triple, bool fmt, bool raw,
			       int fdepth)
{
	(void)raw;
	while (p < lx->end) {
		char c = *p;
		if (c == '\\' && p + 1 < lx->end) {
			size_t nl = newline_at(p + 1, lx->end);
			if (nl) {
				lx->line++;
				p += 1 + nl;
			} else {
				p += 2;
			}
			continue;
		}
		size_t nl = newline_at(p, lx->end);
		if (nl) {
			if (!triple)
				return p; /* unterminated: the newline ends the logical line */
			lx->line++;
			p += nl;
			continue;
		}
		if (c == q) {
			if (!triple)
				return p + 1;
			if (p + 2 < lx->end && p[1] == q && p[2] == q)
				return p + 3;
		}
		if (fmt && c == '{') {
			if (p + 1 < lx->end && p[1] == '{') {
				p += 2;
				continue;
			}
			p = fdepth < MAX_FIELD_DEPTH ? fstring_field(lx, p + 1, q, triple, fdepth + 1) : p + 1;
			continue;
		}
		p++;
	}
	return p;
}

/* Operators of more than one character; the longest is taken. */
static size_t op_len(const char *p, const char *end)
{
	static const char *const ops3[] = {"**=", "//=", ">>=", "<<=", "..."};
	static const char *const ops2[] = {"->", ":=", "==", "!=", "<=", ">=", "+=", "-=", "*=",
					   "/=", "%=", "&=", "|=", "^=", "@=", "**", "//", "<<",
					   ">>", "<>"};
	size_t left = (size_t)(end - p);
	for (size_t i = 0; left >= 3 && i < WG_ARRAY_LEN(ops3); i++)
		if (!memcmp(p, ops3[i], 3))
			return 3;
	for (size_t i = 0; left >= 2 && i < WG_ARRAY_LEN(ops2); i++)
		if (!memcmp(p, ops2[i], 2))
			return 2;
	return 1;
}

int wg_py_tokenize(wg_pysrc *out, const char *text, size_t len)
{
	wg_vec_init(&out->toks, sizeof(wg_pytok));
	wg_vec_init(&out->lines, sizeof(wg_pyline));
	lexer lx = {.p = text, .end = text + len, .line = 1, .out = out};
	const char *p = text;
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	bool at_line_start = true;
	while (p < lx.end && lx.rc == WG_OK) {
		if (at_line_start && !lx.in_line) {
			/* indentation of a new logical line: tabs to the next multiple of 8 */
			uint32_t col = 0;
			while (p < lx.end && (*p == ' ' || *p == '\t' || *p == '\f')) {
				col = *p == ' ' ? col + 1 : *p == '\t' ? (col / 8 + 1) * 8 : 0;
				p++;
			}
			lx.line_indent = col;
			at_line_start = false;
			continue;
		}
		char c = *p;
		size_t nl = newline_at(p, lx.end);
		if (nl) {
			p += nl;
			lx.line++;
			if (lx.depth == 0)
				end_line(&lx);
			at_line_start = !lx.in_line;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\f') {
			p++;
			continue;
		}
		if (c == '#') {
			while (p < lx.end && *p != '\n' && *p != '\r')
				p++;
			continue;
		}
		if (c == '\\') {
			size_t nl2 = newline_at(p + 1, lx.end);
			if (nl2) { /* explicit line joining */
				p += 1 + nl2;
				lx.line++;
				continue;
			}
			push(&lx, WG_PYT_OP, p, 1, lx.line);
			p++;
			continue;
		}
		uint32_t line = lx.line;
		if (id_start((unsigned char)c)) {
			const char *s = p;
			while (p < lx.end && id_char((unsigned char)*p))
				p++;
			size_t n = (size_t)(p - s);
			bool f, r, prefix = string_prefix(s, n, &f, &r);
			if (prefix && p < lx.end && (*p == '\'' || *p == '"')) {
				char q = *p;
				bool t3 = p + 2 < lx.end && p[1] == q && p[2] == q;
				p = string_body(&lx, p + (t3 ? 3 : 1), q, t3, f, r, 0);
				push(&lx, WG_PYT_STRING, s, (size_t)(p - s), line);
			} else {
				push(&lx, WG_PYT_NAME, s, n, line);
			}
			continue;
		}
		if (c == '\'' || c == '"') {
			const char *s = p;
			bool t3 = p + 2 < lx.end && p[1] == c && p[2] == c;
			p = string_body(&lx, p + (t3 ? 3 : 1), c, t3, false, false, 0);
			push(&lx, WG_PYT_STRING, s, (size_t)(p - s), line);
			continue;
		}
		if (isdigit((unsigned char)c) || (c == '.' && p + 1 < lx.end && isdigit((unsigned char)p[1]))) {
			const char *s = p;
			while (p < lx.end) {
				if ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E') &&
				    !(s + 1 < lx.end && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
					p++;
				else if (id_char((unsigned char)*p) || *p == '.')
					p++;
				else
					break;
			}
			push(&lx, WG_PYT_NUMBER, s, (size_t)(p - s), line);
			continue;
		}
		size_t n = op_len(p, lx.end);
		if (c == '(' || c == '[' || c == '{')
			lx.depth++;
		else if ((c == ')' || c == ']' || c == '}') && lx.depth > 0)
			lx.depth--;
		push(&lx, WG_PYT_OP, p, n, line);
		p += n;
	}
	end_line(&lx);
	if (lx.rc < 0)
		wg_pysrc_free(out);
	return lx.rc;
}

void wg_pysrc_free(wg_pysrc *src)
{
	wg_vec_free(&src->toks);
	wg_vec_free(&src->lines);
}

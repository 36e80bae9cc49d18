/*
 * The formats of `wheelgate matrix`: a text table (cells short, the details in numbered
 * notes, a legend), Markdown and JSON (wheelgate.matrix/1, docs/matrix.md). Text from a wheel
 * (names, versions, symbols, messages) is escaped for a terminal (esc) and for Markdown.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"

const char *mx_verdict_name(mx_verdict v)
{
	static const char *const names[] = {"loads", "python", "abi", "cuda", "library",
					    "symbol", "system", "error"};
	return v <= MX_ERROR ? names[v] : "error";
}

/* "flash_attn 2.8.3", escaped, into buf. */
static const char *ext_field(const mx_ext *e, wg_wheel_field f, wg_wheel_field meta)
{
	const char *v = e->scan ? wg_wheel_get(e->scan, f) : NULL;
	return v ? v : e->scan ? wg_wheel_get(e->scan, meta) : NULL;
}

static const char *ext_name(const mx_ext *e)
{
	return ext_field(e, WG_WHEEL_NAME, WG_WHEEL_META_NAME);
}

static const char *ext_version(const mx_ext *e)
{
	return ext_field(e, WG_WHEEL_VERSION, WG_WHEEL_META_VERSION);
}

static const char *ext_label(char *buf, size_t n, const mx_ext *e)
{
	const char *name = ext_name(e), *ver = ext_version(e);
	if (name && ver)
		snprintf(buf, n, "%s %s", esc(name), esc(ver));
	else
		snprintf(buf, n, "%s", esc(cli_base_name(e->path)));
	return buf;
}

/* The short text of a cell (note: its note's number, 0 for none). */
static void cell_short(char *buf, size_t n, const mx_cell *c, int note)
{
	switch (c->verdict) {
	case MX_LOADS: snprintf(buf, n, "loads"); return;
	case MX_PYTHON: snprintf(buf, n, "python [%d]", note); return;
	case MX_ABI: snprintf(buf, n, "abi %s [%d]", c->have ? esc(c->have) : "?", note); return;
	case MX_CUDA: snprintf(buf, n, "cuda %s [%d]", c->have ? esc(c->have) : "?", note); return;
	case MX_LIBRARY: snprintf(buf, n, "library [%d]", note); return;
	case MX_SYMBOL:
		if (c->missing > 1)
			snprintf(buf, n, "symbol +%zu [%d]", c->missing - 1, note);
		else
			snprintf(buf, n, "symbol [%d]", note);
		return;
	case MX_SYSTEM: snprintf(buf, n, "system [%d]", note); return;
	default: snprintf(buf, n, "error [%d]", note); return;
	}
}

/* The one-line detail of a failing cell, escaped, without the extension and torch. */
static void cell_detail(char *buf, size_t n, const mx_cell *c, const mx_torch *t)
{
	char sym[1024] = "";
	if (c->symbol)
		snprintf(sym, sizeof(sym), "; undefined symbol %s%s%s%s%s", c->demangled ? esc(c->demangled) : "",
			 c->demangled ? " (" : "", esc(c->symbol), c->demangled ? ")" : "",
			 c->missing > 1 ? "" : "");
	char more[64] = "";
	if (c->symbol && c->missing > 1)
		snprintf(more, sizeof(more), " and %zu more", c->missing - 1);
	switch (c->verdict) {
	case MX_PYTHON:
		snprintf(buf, n, "built for %s, torch is for Python %s", c->have ? esc(c->have) : "?",
			 c->want ? esc(c->want) : "?");
		return;
	case MX_ABI:
		snprintf(buf, n, "%s%s%s std::string ABI, torch's is %s%s%s",
			 c->object ? esc(c->object) : "", c->object ? ": " : "",
			 c->have ? esc(c->have) : "?", c->want ? esc(c->want) : "?", sym, more);
		return;
	case MX_CUDA:
		snprintf(buf, n, "%s%sneeds the CUDA %s runtime, torch has CUDA %s",
			 c->object ? esc(c->object) : "", c->object ? " " : "",
			 c->have ? esc(c->have) : "?", t->cuda ? esc(t->cuda) : "?");
		return;
	case MX_LIBRARY:
		snprintf(buf, n, "%s: %s not found", c->object ? esc(c->object) : "?",
			 c->library ? esc(c->library) : "a library");
		return;
	case MX_SYMBOL:
		snprintf(buf, n, "%s%s%s", c->object ? esc(c->object) : "?", sym, more);
		return;
	default:
		snprintf(buf, n, "%s", c->message ? esc(c->message) : "?");
		return;
	}
}

void mx_out_text(FILE *f, const mx_torch *t, size_t nt, const mx_ext *e, size_t ne,
		 const mx_cell *c, bool color)
{
	/* widths: the label column, then each torch column */
	char buf[1024];
	size_t w0 = strlen("extension"), *w = calloc(nt ? nt : 1, sizeof(size_t));
	int *notes = calloc(ne && nt ? ne * nt : 1, sizeof(int));
	if (!w || !notes) {
		free(w);
		free(notes);
		return;
	}
	int nnotes = 0;
	for (size_t i = 0; i < ne; i++)
		for (size_t j = 0; j < nt; j++)
			if (c[i * nt + j].verdict != MX_LOADS)
				notes[i * nt + j] = ++nnotes;
	for (size_t i = 0; i < ne; i++) {
		size_t l = strlen(ext_label(buf, sizeof(buf), &e[i]));
		w0 = l > w0 ? l : w0;
	}
	for (size_t j = 0; j < nt; j++) {
		snprintf(buf, sizeof(buf), "torch %s", esc(mx_torch_label(&t[j])));
		w[j] = strlen(buf);
		for (size_t i = 0; i < ne; i++) {
			cell_short(buf, sizeof(buf), &c[i * nt + j], notes[i * nt + j]);
			w[j] = strlen(buf) > w[j] ? strlen(buf) : w[j];
		}
	}
	fprintf(f, "%-*s", (int)w0, "extension");
	for (size_t j = 0; j < nt; j++) {
		snprintf(buf, sizeof(buf), "torch %s", esc(mx_torch_label(&t[j])));
		fprintf(f, "  %-*s", j + 1 == nt ? 0 : (int)w[j], buf);
	}
	fprintf(f, "\n");
	for (size_t i = 0; i < ne; i++) {
		fprintf(f, "%-*s", (int)w0, ext_label(buf, sizeof(buf), &e[i]));
		for (size_t j = 0; j < nt; j++) {
			const mx_cell *x = &c[i * nt + j];
			cell_short(buf, sizeof(buf), x, notes[i * nt + j]);
			bool last = j + 1 == nt;
			fprintf(f, "  %s%s%s", color ? (x->verdict == MX_LOADS ? c_green() : c_red()) : "",
				buf, color ? c_off() : "");
			if (!last)
				fprintf(f, "%*s", (int)(w[j] - strlen(buf)), "");
		}
		fprintf(f, "\n");
	}
	if (nnotes)
		fprintf(f, "\n");
	for (size_t i = 0; i < ne; i++)
		for (size_t j = 0; j < nt; j++) {
			const mx_cell *x = &c[i * nt + j];
			if (x->verdict == MX_LOADS)
				continue;
			char label[512], detail[4096];
			ext_label(label, sizeof(label), &e[i]);
			cell_detail(detail, sizeof(detail), x, &t[j]);
			const char *rules = x->rules ? x->rules : "";
			fprintf(f, "[%d] %s with torch %s: %s%s%s%s\n", notes[i * nt + j], label,
				esc(mx_torch_label(&t[j])), detail, *rules ? " (" : "", rules,
				*rules ? ")" : "");
		}
	fprintf(f, "\ntorch:");
	for (size_t j = 0; j < nt; j++)
		fprintf(f, "%s %s (%s%s, C++ ABI %s, CUDA %s, Python %s)", j ? ";" : "",
			esc(mx_torch_label(&t[j])), t[j].from, t[j].stored ? ", stored facts" : "",
			t[j].cxx11abi == 1 ? "new" : t[j].cxx11abi == 0 ? "old" : "?",
			t[j].cuda ? esc(t[j].cuda) : "none", t[j].python ? esc(t[j].python) : "?");
	fprintf(f, "\nlegend: loads = nothing stops `import torch; import ext`; python = its tags "
		   "miss torch's Python; abi X = its std::string ABI (old/new) is not torch's; "
		   "cuda N = it needs CUDA N's runtime; library = a library it needs is missing; "
		   "symbol +N = an undefined symbol (and N more); system = the system's C/C++ "
		   "runtime is too old; [n] = the note\n");
	free(w);
	free(notes);
}

/* Text for a Markdown cell: esc'd, then Markdown's special characters escaped. */
static const char *md(char *buf, size_t n, const char *s)
{
	const char *in = esc(s ? s : "");
	size_t k = 0;
	for (; *in && k + 3 < n; in++) {
		if (strchr("\\`*_[]<>|#~", *in))
			buf[k++] = '\\';
		buf[k++] = *in;
	}
	buf[k] = '\0';
	return buf;
}

void mx_out_markdown(FILE *f, const mx_torch *t, size_t nt, const mx_ext *e, size_t ne,
		     const mx_cell *c)
{
	char a[2048], b[2048], d[4096];
	fprintf(f, "| extension |");
	for (size_t j = 0; j < nt; j++)
		fprintf(f, " torch %s |", md(a, sizeof(a), mx_torch_label(&t[j])));
	fprintf(f, "\n|---|");
	for (size_t j = 0; j < nt; j++)
		fprintf(f, "---|");
	fprintf(f, "\n");
	for (size_t i = 0; i < ne; i++) {
		const char *name = ext_name(&e[i]), *ver = ext_version(&e[i]);
		snprintf(d, sizeof(d), "%s %s", name ? name : cli_base_name(e[i].path), ver ? ver : "");
		fprintf(f, "| %s |", md(a, sizeof(a), d));
		for (size_t j = 0; j < nt; j++) {
			const mx_cell *x = &c[i * nt + j];
			if (x->verdict == MX_LOADS) {
				fprintf(f, " loads |");
				continue;
			}
			cell_detail(d, sizeof(d), x, &t[j]);
			fprintf(f, " **%s**: %s |", mx_verdict_name(x->verdict), md(b, sizeof(b), d));
		}
		fprintf(f, "\n");
	}
}

static json_t *jstr(const char *s)
{
	if (!s)
		return json_null();
	json_t *v = json_string(s);
	return v ? v : json_string(esc(s)); /* not UTF-8: escaped as the text is */
}

int mx_out_json(FILE *f, const mx_torch *t, size_t nt, const mx_ext *e, size_t ne,
		const mx_cell *c)
{
	json_t *doc = json_object(), *torch = json_array(), *exts = json_array(),
	       *cells = json_array();
	size_t loads = 0;
	for (size_t j = 0; j < nt; j++) {
		json_t *o = json_object();
		json_object_set_new(o, "label", jstr(mx_torch_label(&t[j])));
		json_object_set_new(o, "source", jstr(t[j].source));
		json_object_set_new(o, "from", json_string(t[j].from ? t[j].from : "facts"));
		json_object_set_new(o, "sha256", t[j].sha256[0] ? json_string(t[j].sha256) : json_null());
		json_object_set_new(o, "stored", json_boolean(t[j].stored));
		json_object_set_new(o, "version", jstr(t[j].version));
		json_object_set_new(o, "cxx11abi", t[j].cxx11abi < 0 ? json_null()
						   : json_boolean(t[j].cxx11abi == 1));
		json_object_set_new(o, "cuda", jstr(t[j].cuda));
		json_object_set_new(o, "python", jstr(t[j].python));
		json_object_set_new(o, "libraries", t[j].scan ? json_integer((json_int_t)t[j].libraries)
							       : json_null());
		json_object_set_new(o, "error", jstr(t[j].error));
		json_array_append_new(torch, o);
	}
	for (size_t i = 0; i < ne; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "path", jstr(e[i].path));
		json_object_set_new(o, "name", jstr(ext_name(&e[i])));
		json_object_set_new(o, "version", jstr(ext_version(&e[i])));
		json_object_set_new(o, "error", jstr(e[i].error));
		json_array_append_new(exts, o);
		json_t *row = json_array();
		for (size_t j = 0; j < nt; j++) {
			const mx_cell *x = &c[i * nt + j];
			json_t *k = json_object();
			loads += x->verdict == MX_LOADS;
			json_object_set_new(k, "verdict", json_string(mx_verdict_name(x->verdict)));
			json_object_set_new(k, "loads", json_boolean(x->verdict == MX_LOADS));
			json_object_set_new(k, "object", jstr(x->object));
			json_object_set_new(k, "symbol", jstr(x->symbol));
			json_object_set_new(k, "demangled", jstr(x->demangled));
			json_object_set_new(k, "missing", json_integer((json_int_t)(x->symbol ? x->missing : 0)));
			json_object_set_new(k, "library", jstr(x->library));
			json_object_set_new(k, "have", jstr(x->have));
			json_object_set_new(k, "want", jstr(x->want));
			json_t *rules = json_array();
			for (const char *p = x->rules ? x->rules : ""; *p;) {
				size_t l = strcspn(p, ",");
				json_array_append_new(rules, json_stringn(p, l));
				p += l + (p[l] == ',');
			}
			json_object_set_new(k, "rules", rules);
			json_object_set_new(k, "message", jstr(x->message));
			json_array_append_new(row, k);
		}
		json_array_append_new(cells, row);
	}
	json_object_set_new(doc, "schema", json_string("wheelgate.matrix/1"));
	json_object_set_new(doc, "wheelgate_version", json_string(wg_version_string()));
	json_object_set_new(doc, "torch", torch);
	json_object_set_new(doc, "extensions", exts);
	json_object_set_new(doc, "cells", cells);
	json_object_set_new(doc, "summary", json_pack("{s:I,s:I,s:I}", "cells", (json_int_t)(ne * nt),
						      "load", (json_int_t)loads,
						      "fail", (json_int_t)(ne * nt - loads)));
	int rc = json_dumpf(doc, f, JSON_INDENT(2)) == 0 ? 0 : -1;
	fputc('\n', f);
	json_decref(doc);
	return rc;
}

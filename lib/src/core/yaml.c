/*
 * The YAML reader for rule and data files: libyaml's document API behind a small read-only
 * node interface. Every error names the file, line and column.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define WG_ERR_CLASS WG_ERROR_CLASS_RULES /* wg_seterr: what fails here */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/core.h"

struct wg_yaml_doc {
	yaml_document_t doc;
	char *name;
};

/* A node handle is the libyaml node plus its document (for resolving children). */
struct wg_yaml_node {
	yaml_node_t node;
};

static _Thread_local const wg_yaml_doc *current_doc;

/*
 * Rule and data files may not use aliases (*name): libyaml shares the aliased node, but every
 * reader of the tree walks it again at each alias, so a 1 MB file of aliases cost gigabytes
 * (issue 12). One pass over libyaml's events finds the first alias before anything is built.
 */
static int refuse_aliases(const char *name, const char *text, size_t len, wg_err *err)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int rc = WG_OK;
	if (!yaml_parser_initialize(&p))
		return wg_seterr(err, WG_ENOMEM, "%s: out of memory", name);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	for (;;) {
		if (!yaml_parser_parse(&p, &ev))
			break; /* a syntax error: yaml_parser_load says where */
		yaml_event_type_t t = ev.type;
		if (t == YAML_ALIAS_EVENT)
			rc = wg_seterr(err, WG_EDATA, "%s:%zu:%zu: YAML aliases (*%s) are not allowed in "
				       "rule and data files: write the value out", name,
				       ev.start_mark.line + 1, ev.start_mark.column + 1,
				       wg_utf8_valid((const char *)ev.data.alias.anchor)
					       ? (const char *)ev.data.alias.anchor : "?");
		yaml_event_delete(&ev);
		if (rc < 0 || t == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&p);
	return rc;
}

int wg_yaml_parse(wg_yaml_doc **out, const char *name, const char *text, size_t len, wg_err *err)
{
	*out = NULL;
	int arc = refuse_aliases(name, text, len, err);
	if (arc < 0)
		return arc;
	wg_yaml_doc *d = calloc(1, sizeof(*d));
	if (!d || !(d->name = strdup(name))) {
		free(d);
		return wg_seterr(err, WG_ENOMEM, "%s: out of memory", name);
	}
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p)) {
		free(d->name);
		free(d);
		return wg_seterr(err, WG_ENOMEM, "%s: out of memory", name);
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &d->doc)) {
		const yaml_mark_t *m = p.problem_mark.line || p.problem_mark.column ? &p.problem_mark
										    : &p.context_mark;
		wg_seterr(err, WG_EDATA, "%s:%zu:%zu: %s%s%s", name, m->line + 1, m->column + 1,
			  p.problem ? p.problem : "invalid YAML", p.context ? " " : "",
			  p.context ? p.context : "");
		yaml_parser_delete(&p);
		free(d->name);
		free(d);
		return WG_EDATA;
	}
	yaml_parser_delete(&p);
	if (!yaml_document_get_root_node(&d->doc)) {
		yaml_document_delete(&d->doc);
		free(d->name);
		free(d);
		return wg_seterr(err, WG_EDATA, "%s:1:1: empty document", name);
	}
	/* Every key is a plain value in our formats; a sequence or mapping as a key (`? [a]: b`)
	 * is refused here, once, so that no reader meets a key without text (fuzz_rules found a
	 * NULL key reaching strcmp). */
	for (yaml_node_t *n = d->doc.nodes.start; n < d->doc.nodes.top; n++) {
		if (n->type != YAML_MAPPING_NODE)
			continue;
		for (yaml_node_pair_t *kv = n->data.mapping.pairs.start; kv < n->data.mapping.pairs.top;
		     kv++) {
			yaml_node_t *k = yaml_document_get_node(&d->doc, kv->key);
			if (k && k->type == YAML_SCALAR_NODE)
				continue;
			const yaml_mark_t *m = k ? &k->start_mark : &n->start_mark;
			wg_seterr(err, WG_EDATA, "%s:%zu:%zu: a key must be a plain value, not a list "
				  "or a mapping", name, m->line + 1, m->column + 1);
			wg_yaml_free(d);
			return WG_EDATA;
		}
	}
	*out = d;
	return WG_OK;
}

void wg_yaml_free(wg_yaml_doc *d)
{
	if (!d)
		return;
	yaml_document_delete(&d->doc);
	free(d->name);
	free(d);
}

/*
 * Nodes are libyaml's own node structs; children are looked up by index in the document,
 * which the caller reached through wg_yaml_root() on this thread.
 */
const wg_yaml_node *wg_yaml_root(const wg_yaml_doc *d)
{
	current_doc = d;
	return (const wg_yaml_node *)yaml_document_get_root_node((yaml_document_t *)&d->doc);
}

static const yaml_node_t *N(const wg_yaml_node *n)
{
	return (const yaml_node_t *)n;
}

static const wg_yaml_node *node_at(int index)
{
	return (const wg_yaml_node *)yaml_document_get_node((yaml_document_t *)&current_doc->doc,
							    index);
}

bool wg_yaml_is_map(const wg_yaml_node *n)
{
	return n && N(n)->type == YAML_MAPPING_NODE;
}

bool wg_yaml_is_seq(const wg_yaml_node *n)
{
	return n && N(n)->type == YAML_SEQUENCE_NODE;
}

const char *wg_yaml_scalar(const wg_yaml_node *n)
{
	return n && N(n)->type == YAML_SCALAR_NODE ? (const char *)N(n)->data.scalar.value : NULL;
}

size_t wg_yaml_len(const wg_yaml_node *n)
{
	if (wg_yaml_is_seq(n))
		return (size_t)(N(n)->data.sequence.items.top - N(n)->data.sequence.items.start);
	if (wg_yaml_is_map(n))
		return (size_t)(N(n)->data.mapping.pairs.top - N(n)->data.mapping.pairs.start);
	return 0;
}

const wg_yaml_node *wg_yaml_item(const wg_yaml_node *seq, size_t i)
{
	if (!wg_yaml_is_seq(seq) || i >= wg_yaml_len(seq))
		return NULL;
	return node_at(N(seq)->data.sequence.items.start[i]);
}

const char *wg_yaml_key(const wg_yaml_node *map, size_t i)
{
	if (!wg_yaml_is_map(map) || i >= wg_yaml_len(map))
		return NULL;
	return wg_yaml_scalar(node_at(N(map)->data.mapping.pairs.start[i].key));
}

const wg_yaml_node *wg_yaml_value(const wg_yaml_node *map, size_t i)
{
	if (!wg_yaml_is_map(map) || i >= wg_yaml_len(map))
		return NULL;
	return node_at(N(map)->data.mapping.pairs.start[i].value);
}

const wg_yaml_node *wg_yaml_get(const wg_yaml_node *map, const char *key)
{
	size_t n = wg_yaml_len(map);
	for (size_t i = 0; i < n && wg_yaml_is_map(map); i++) {
		const char *k = wg_yaml_key(map, i);
		if (k && strcmp(k, key) == 0)
			return wg_yaml_value(map, i);
	}
	return NULL;
}

const char *wg_yaml_where(const wg_yaml_node *n, char *buf, size_t len)
{
	const char *name = current_doc ? current_doc->name : "?";
	if (!n)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s:%zu:%zu", name, N(n)->start_mark.line + 1,
			 N(n)->start_mark.column + 1);
	return buf;
}

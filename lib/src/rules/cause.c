/*
 * The order of a report's findings, cause first, and what an input must hold for a rule to
 * find anything in it: both said here once, by the rule's check kind (for `check: match`, by
 * its fact list), never by lists of rule ids, so that a user's rule of a kind is placed and
 * judged as the shipped ones are.
 *
 * Causes before what they make fail (issue 29): the input as read (an unreadable archive, its
 * zip structure, RECORD, unsafe names, section headers that lie), then what the wheel says it
 * is for (its tags, the target Python, its metadata and variant labels), then what its objects
 * need of the target (glibc/libstdc++ versions, the torch C++ ABI, the CUDA runtime, the
 * Python limited API), then what the loader does with them (WG-LD-*), then what a kernel
 * launch does (GPU code), then the Python code's imports. Within a rank the rules keep their
 * order, and a rule's findings their order. Every format reads the one sorted report.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "rules/checks/check.h"

static const struct {
	const char *kind;
	wg_cause cause;
	unsigned about; /* WG_ABOUT_*: what the input must hold for the kind to find anything */
} kinds[] = {
	{"record-mismatch", WG_CAUSE_INPUT, 0},
	{"record-unlisted", WG_CAUSE_INPUT, 0},
	{"unsafe-name", WG_CAUSE_INPUT, 0},
	{"pure-with-binaries", WG_CAUSE_TAGS, WG_ABOUT_OBJECTS},
	{"platform-without-binaries", WG_CAUSE_TAGS, 0},
	{"ext-interpreter", WG_CAUSE_TAGS, WG_ABOUT_OBJECTS},
	{"elf-machine", WG_CAUSE_TAGS, WG_ABOUT_OBJECTS},
	{"wheel-tags", WG_CAUSE_TAGS, 0},
	{"metadata-name", WG_CAUSE_TAGS, 0},
	{"python-target", WG_CAUSE_TAGS, 0},
	{"local-version", WG_CAUSE_TAGS, 0},
	{"variant-label", WG_CAUSE_TAGS, 0},
	{"variant-sm-arch", WG_CAUSE_TAGS, 0},
	{"variant-cuda", WG_CAUSE_TAGS, 0},
	{"variant-torch", WG_CAUSE_TAGS, 0},
	{"variant-unverified", WG_CAUSE_TAGS, 0},
	{"local-label-content", WG_CAUSE_TAGS, 0},
	{"variant-index", WG_CAUSE_TAGS, 0},
	{"system-versions", WG_CAUSE_NEEDS, WG_ABOUT_OBJECTS},
	{"platform-tag-versions", WG_CAUSE_NEEDS, WG_ABOUT_OBJECTS},
	{"tightest-manylinux", WG_CAUSE_NEEDS, WG_ABOUT_OBJECTS},
	{"policy-libraries", WG_CAUSE_NEEDS, WG_ABOUT_OBJECTS},
	{"cuda-runtime-major", WG_CAUSE_NEEDS, WG_ABOUT_OBJECTS},
	{"abi-mismatch", WG_CAUSE_NEEDS, WG_ABOUT_TORCH_STRING},
	{"abi-mixed", WG_CAUSE_NEEDS, WG_ABOUT_TORCH_STRING},
	{"abi3-limited-api", WG_CAUSE_NEEDS, WG_ABOUT_OBJECTS},
	{"ld-unresolved", WG_CAUSE_LOADER, WG_ABOUT_OBJECTS},
	/* Installing even a wheel without objects may replace a distribution whose libraries
	 * the installed ones load: about any wheel. */
	{"ld-breaks-installed", WG_CAUSE_LOADER, 0},
	{"gpu-gencode-mismatch", WG_CAUSE_GPU, WG_ABOUT_CUDA},
	{"gpu-cannot-run", WG_CAUSE_GPU, WG_ABOUT_CUDA},
	{"gpu-ptx-too-new", WG_CAUSE_GPU, WG_ABOUT_CUDA},
	{"gpu-no-code", WG_CAUSE_GPU, WG_ABOUT_CUDA},
	{"kernel-name", WG_CAUSE_GPU, 0},
	{"kernel-archs", WG_CAUSE_GPU, 0},
	{"hollow-wheel", WG_CAUSE_CODE, 0},
};

/* `check: match`: its fact list says. The loader's lists (they need an environment) are the
 * loader's verdicts on the objects; a list of each object is about what the objects need,
 * except the section headers' lie (the object as read); a list of the wheel's filename and
 * metadata is about what the wheel says it is
 * for; the rest (members, RECORD, unreadable members) about the input as read. */
static wg_cause match_cause(const char *facts, unsigned *about)
{
	unsigned needs = 0;
	bool object = false, wheel = false;
	wg_match_fact_vars(facts, &needs);
	wg_match_fact_info(facts, &object, &wheel);
	*about = object || (needs & WG_FACT_ENV) ? WG_ABOUT_OBJECTS : 0;
	if (needs & WG_FACT_ENV)
		return WG_CAUSE_LOADER;
	if (object)
		return facts && !strcmp(facts, "sections_lie") ? WG_CAUSE_INPUT : WG_CAUSE_NEEDS;
	return wheel ? WG_CAUSE_TAGS : WG_CAUSE_INPUT;
}

wg_cause wg_rule_cause(const wg_rule *r, unsigned *about)
{
	unsigned a = 0;
	wg_cause c = WG_CAUSE_OTHER;
	if (r && r->kind && !strcmp(r->kind->name, "match")) {
		c = match_cause(r->facts, &a);
	} else {
		for (size_t i = 0; r && r->kind && i < WG_ARRAY_LEN(kinds); i++)
			if (!strcmp(kinds[i].kind, r->kind->name)) {
				c = kinds[i].cause;
				a = kinds[i].about;
				break;
			}
	}
	if (about)
		*about = a;
	return c;
}

bool wg_input_holds(const wg_scan *scan, unsigned about)
{
	if (!about)
		return true;
	bool any = false;
	for (size_t i = 0; scan && i < scan->objects.len; i++) {
		const wg_object *o = *(wg_object *const *)wg_vec_at(&scan->objects, i);
		if (!o)
			continue;
		any = true;
		if ((about & WG_ABOUT_CUDA) && !wg_object_is_cuda(o))
			continue;
		if ((about & WG_ABOUT_TORCH_STRING) && !o->counts[0] && !o->counts[1])
			continue;
		return true;
	}
	return any && about == WG_ABOUT_OBJECTS;
}

typedef struct {
	wg_cause cause;
	size_t at;
} order_key;

static int by_cause(const void *a, const void *b)
{
	const order_key *x = a, *y = b;
	if (x->cause != y->cause)
		return x->cause < y->cause ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

static wg_cause cause_of_id(const wg_ruleset *rs, const char *id)
{
	for (size_t i = 0; rs && id && i < rs->rules.len; i++) {
		const wg_rule *r = wg_vec_at(&rs->rules, i);
		if (!strcmp(r->id, id))
			return wg_rule_cause(r, NULL);
	}
	return WG_CAUSE_OTHER;
}

/* Sorts a vector whose items start with a rule id (wg_finding, wg_more) by cause, stably. */
static int order_vec(wg_vec *v, const wg_ruleset *rs)
{
	if (v->len < 2)
		return WG_OK;
	order_key *k = calloc(v->len, sizeof(*k));
	char *tmp = malloc(v->len * v->item_size);
	if (!k || !tmp) {
		free(k);
		free(tmp);
		return WG_ENOMEM;
	}
	const char *last = NULL;
	wg_cause lc = WG_CAUSE_OTHER;
	for (size_t i = 0; i < v->len; i++) {
		const char *id = *(const char *const *)wg_vec_at(v, i);
		if (!last || !id || strcmp(last, id))
			lc = cause_of_id(rs, id);
		last = id;
		k[i] = (order_key){lc, i};
	}
	qsort(k, v->len, sizeof(*k), by_cause);
	for (size_t i = 0; i < v->len; i++)
		memcpy(tmp + i * v->item_size, wg_vec_at(v, k[i].at), v->item_size);
	memcpy(v->items, tmp, v->len * v->item_size);
	free(k);
	free(tmp);
	return WG_OK;
}

int wg_report_order(wg_report *r, const wg_ruleset *rs)
{
	int rc = order_vec(&r->findings, rs);
	return rc == WG_OK ? order_vec(&r->more, rs) : rc;
}

/*
 * The command line's one YAML file reader (yamlfile.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "yamlfile.h"

static int fail_at(yaml_file_error *e, const yaml_mark_t *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(yaml_file_error *e, const yaml_mark_t *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->line = m ? m->line + 1 : 0;
	e->column = m ? m->column + 1 : 0;
	return -1;
}

/* The file's bytes (malloc'd, *len of them); NULL with *e filled. */
static unsigned char *read_regular(const char *path, const yaml_file_options *o, unsigned *mode,
				   size_t *len, yaml_file_error *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		e->errnum = errno;
		fail_at(e, NULL, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		e->errnum = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		fail_at(e, NULL, "not a regular file");
		return NULL;
	}
	if (o->max && st.st_size > (off_t)o->max) {
		close(fd);
		fail_at(e, NULL, "%lld bytes: a config is at most %zu bytes", (long long)st.st_size,
			o->max);
		return NULL;
	}
	if (mode)
		*mode = (unsigned)st.st_mode;
	unsigned char *text = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (text && got < (size_t)st.st_size) {
		ssize_t r = read(fd, text + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	int err = errno;
	close(fd);
	if (!text) {
		fail_at(e, NULL, "out of memory");
		return NULL;
	}
	if (got != (size_t)st.st_size) {
		free(text);
		fail_at(e, NULL, "cannot read: %s", got ? "it changed while read" : strerror(err));
		return NULL;
	}
	*len = got;
	return text;
}

/* Aliases (*name) would let a small file expand into a large tree: refused, as in rule files.
 * A syntax error is left for yaml_parser_load to report. */
static int refuse_aliases(const unsigned char *text, size_t len, yaml_file_error *e)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int rc = 0;
	if (!yaml_parser_initialize(&p))
		return fail_at(e, NULL, "out of memory");
	yaml_parser_set_input_string(&p, text, len);
	for (;;) {
		if (!yaml_parser_parse(&p, &ev))
			break;
		yaml_event_type_t t = ev.type;
		if (t == YAML_ALIAS_EVENT)
			rc = fail_at(e, &ev.start_mark,
				     "aliases (*name) are not allowed here: write the value out");
		yaml_event_delete(&ev);
		if (rc < 0 || t == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&p);
	return rc;
}

/* After the first document: nothing but its end. */
static int refuse_second(yaml_parser_t *p, yaml_file_error *e)
{
	yaml_document_t more;
	if (!yaml_parser_load(p, &more))
		return fail_at(e, NULL, "invalid YAML after the first document");
	int rc = 0;
	yaml_node_t *r2 = yaml_document_get_root_node(&more);
	if (r2)
		rc = fail_at(e, &r2->start_mark, "a second YAML document: a config is one mapping");
	yaml_document_delete(&more);
	return rc;
}

int yaml_file_load(yaml_document_t *doc, const char *path, const yaml_file_options *o,
		   unsigned *mode, yaml_file_error *e)
{
	memset(e, 0, sizeof(*e));
	size_t len = 0;
	unsigned char *text = read_regular(path, o, mode, &len, e);
	if (!text)
		return -1;
	if (o->no_aliases && refuse_aliases(text, len, e) < 0) {
		free(text);
		return -1;
	}
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p)) {
		free(text);
		return fail_at(e, NULL, "out of memory");
	}
	yaml_parser_set_input_string(&p, text, len);
	int rc = 0;
	if (!yaml_parser_load(&p, doc)) {
		const yaml_mark_t *m = p.problem_mark.line || p.problem_mark.column ? &p.problem_mark
										    : &p.context_mark;
		fail_at(e, m, "%s%s%s", p.problem ? p.problem : "invalid YAML", p.context ? " " : "",
			p.context ? p.context : "");
		snprintf(e->problem, sizeof(e->problem), "%s", p.problem ? p.problem : "invalid YAML");
		e->problem_line = p.problem_mark.line + 1;
		e->problem_column = p.problem_mark.column + 1;
		rc = -1;
	} else if (o->one_document && yaml_document_get_root_node(doc) &&
		   refuse_second(&p, e) < 0) {
		yaml_document_delete(doc);
		rc = -1;
	}
	yaml_parser_delete(&p);
	free(text);
	return rc;
}

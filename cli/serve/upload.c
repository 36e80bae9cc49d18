/*
 * The upload gate: the upload protocol's body (multipart/form-data, as twine, uv publish and
 * every PyPI-compatible repository speak it: :action=file_upload, the file as the part
 * "content", sha256_digest, name, version, filetype and the metadata fields) read with
 * libmicrohttpd's post processor; a wheel is checked and its sha256 compared with the
 * client's; on a pass the original request goes unchanged to the upstream, on a blocking
 * finding the answer is 400 and the upstream never sees the file.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


#include "../digest.h"
#include "serve.h"

#define FIELD_MAX 256 /* the small fields kept: :action, sha256_digest, name, version... */
#define FEED_CHUNK (64U * 1024)

typedef struct upload_state {
	const serve_config *cfg;
	char action[FIELD_MAX], sha256[FIELD_MAX], filetype[FIELD_MAX], name[FIELD_MAX],
		version[FIELD_MAX];
	char filename[FIELD_MAX + 1]; /* of the content part; '\0': none */
	bool filename_long;
	int content_parts;            /* parts named "content" */
	serve_body content;
	bool content_failed;
	int parts;                    /* parts the post processor gave, of any name */
	bool unnamed;                 /* a part with no name it could read */
	char other_file[FIELD_MAX];   /* the name of a file part not "content", or "" */
	int other_files;
	bool sig_bad;                 /* a gpg_signature part that is not one */
	uint64_t sig_len;
} upload_state;

/* The largest detached signature taken beside a wheel (an ASCII-armoured OpenPGP one). */
#define SIG_MAX (64U * 1024)
static const char SIG_HEAD[] = "-----BEGIN PGP SIGNATURE-----";

/* Appends a small field's value; longer values are cut (and so never match). */
static void keep(char *dst, const char *data, uint64_t off, size_t size)
{
	if (off >= FIELD_MAX - 1)
		return;
	size_t n = size;
	if (off + n > FIELD_MAX - 1)
		n = (size_t)(FIELD_MAX - 1 - off);
	memcpy(dst + off, data, n);
	dst[off + n] = '\0';
}

static enum MHD_Result on_field(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *filename, const char *content_type,
				const char *transfer_encoding, const char *data, uint64_t off,
				size_t size)
{
	(void)kind, (void)content_type, (void)transfer_encoding;
	upload_state *u = cls;
	if (off == 0)
		u->parts++;
	if (!key) {
		/* A part whose Content-Disposition the post processor could not read (no
		 * name=, or name= unquoted): a repository may still read it. */
		u->unnamed = true;
		return MHD_YES;
	}
	if (!strcmp(key, "gpg_signature") && filename) {
		/* twine --sign: a detached signature, text; judged by its content. */
		if (off == 0 && size < sizeof(SIG_HEAD) - 1)
			u->sig_bad = true;
		if (off == 0 && size >= sizeof(SIG_HEAD) - 1 &&
		    memcmp(data, SIG_HEAD, sizeof(SIG_HEAD) - 1))
			u->sig_bad = true;
		for (size_t i = 0; i < size; i++)
			if ((unsigned char)data[i] >= 0x80 || (data[i] < 0x20 && data[i] != '\n' &&
							       data[i] != '\r' && data[i] != '\t'))
				u->sig_bad = true;
		u->sig_len += size;
		if (u->sig_len > SIG_MAX)
			u->sig_bad = true;
		return MHD_YES;
	}
	if (filename && strcmp(key, "content")) {
		/* A file the gate does not judge: refused, never forwarded. */
		if (off == 0 && !u->other_files++)
			snprintf(u->other_file, sizeof(u->other_file), "%s", key);
		return MHD_YES;
	}
	if (!strcmp(key, "content")) {
		/* A part starts at offset 0; a second part with bytes is a second file. */
		if (off == 0 && (u->content_parts == 0 || u->content.seen > 0))
			u->content_parts++;
		if (off == 0 && filename) {
			size_t n = strlen(filename);
			u->filename_long = n > FIELD_MAX;
			snprintf(u->filename, sizeof(u->filename), "%s", filename);
		}
		if (u->content_parts == 1 && size && !u->content_failed &&
		    !body_take(&u->content, u->cfg, data, size))
			u->content_failed = true;
		return MHD_YES;
	}
	if (!strcmp(key, ":action"))
		keep(u->action, data, off, size);
	else if (!strcmp(key, "sha256_digest"))
		keep(u->sha256, data, off, size);
	else if (!strcmp(key, "filetype"))
		keep(u->filetype, data, off, size);
	else if (!strcmp(key, "name"))
		keep(u->name, data, off, size);
	else if (!strcmp(key, "version"))
		keep(u->version, data, off, size);
	return MHD_YES;
}

void upload_free(request *r)
{
	if (!r->upload)
		return;
	body_free(&r->upload->content);
	free(r->upload);
	r->upload = NULL;
}

/* A refusal (400): text as the body, reason (or the text's first line) as the status
 * line's reason phrase. */
static enum MHD_Result refuse_why(struct MHD_Connection *c, request *r, const char *verdict,
				  const char *rules, const char *text, const char *reason)
{
	r->verdict = verdict;
	const char *hdrs[4] = {"X-Wheelgate-Verdict", verdict, rules ? "X-Wheelgate-Rules" : NULL,
			       rules};
	size_t nl = strcspn(text, "\n");
	char first[SERVE_REASON_MAX + 1];
	if (!reason) {
		snprintf(first, sizeof(first), "%.*s", (int)(nl < SERVE_REASON_MAX ? nl
							     : SERVE_REASON_MAX), text);
		reason = first;
	}
	int raw = serve_answer_raw(c, r, MHD_HTTP_BAD_REQUEST, reason, hdrs, rules ? 2 : 1,
				   "text/plain; charset=utf-8", text, strlen(text));
	if (raw != 0)
		return MHD_NO; /* answered (or broken mid-way): libmicrohttpd closes the connection */
	struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(text), (void *)text,
								    MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(resp, "X-Wheelgate-Verdict", verdict);
	if (rules)
		MHD_add_response_header(resp, "X-Wheelgate-Rules", rules);
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_BAD_REQUEST, resp);
	MHD_destroy_response(resp);
	r->status = MHD_HTTP_BAD_REQUEST;
	return ret;
}

/* The text a refused upload answers: twine shows it with --verbose, uv publish always. Its
 * first line goes into the status line's reason phrase too (as PyPI does): twine without
 * --verbose prints the reason phrase alone ("400 Bad Request from URL" and the phrase). */
static enum MHD_Result refuse(struct MHD_Connection *c, request *r, const char *verdict,
			      const char *rules, const char *text)
{
	return refuse_why(c, r, verdict, rules, text, NULL);
}

static enum MHD_Result refuse_msg(struct MHD_Connection *c, request *r, const char *text)
{
	return refuse(c, r, "refused", NULL, text);
}

static bool is_hex64(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (size_t i = 0; i < 64; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* The file's name as a repository stores it: one path segment, no control characters. */
static const char *bad_filename(const char *f)
{
	if (!*f)
		return "is empty";
	if (strchr(f, '/') || strchr(f, '\\'))
		return "has a '/' or '\\' (a file name is one path segment)";
	if (!strcmp(f, ".") || !strcmp(f, ".."))
		return "is '.' or '..'";
	for (const unsigned char *p = (const unsigned char *)f; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return "has control characters";
	return NULL;
}

/* The name as a repository may store it differs from the name sent: trailing dots and spaces
 * (dropped by Windows and SMB storage, and by some repositories), leading spaces, a name
 * that is not a plain printable one. NULL: the name is stored as sent. */
static const char *unstable_filename(const char *f)
{
	size_t n = strlen(f);
	if (n && (f[n - 1] == '.' || f[n - 1] == ' '))
		return "ends in a dot or a space (a repository may store it without them, as "
		       "another name than the one judged)";
	if (f[0] == ' ')
		return "starts with a space";
	for (const unsigned char *p = (const unsigned char *)f; *p; p++)
		if (*p >= 0x80)
			return "has bytes outside ASCII (a repository may store it under another "
			       "normal form than the one judged)";
	return NULL;
}

/* Part headers the post processor does not read, by a line scan of the body (no second
 * multipart parser: the post processor decides what the parts are; this only refuses).
 * A Content-Disposition line with filename*= (RFC 5987/2231) names the file in a way a
 * repository may read and the post processor does not; and a count of Content-Disposition
 * lines that differs from the parts it gave means a part it did not see. NULL: none. */
static const char *hidden_part_headers(const unsigned char *raw, size_t len, int parts)
{
	static const char CD[] = "content-disposition:";
	int lines = 0;
	for (size_t i = 0; i + sizeof(CD) - 1 <= len; i++) {
		if (i && raw[i - 1] != '\n')
			continue;
		if (strncasecmp((const char *)raw + i, CD, sizeof(CD) - 1))
			continue;
		lines++;
		const unsigned char *eol = memchr(raw + i, '\n', len - i);
		size_t n = eol ? (size_t)(eol - (raw + i)) : len - i;
		for (size_t j = 0; j + 9 <= n; j++)
			if (!strncasecmp((const char *)raw + i + j, "filename*", 9))
				return "a part names its file with filename*= (RFC 5987/2231), which "
				       "this gate does not read; send filename=\"NAME\"";
	}
	if (lines != parts)
		return "the body has a part this gate cannot read (its count of "
		       "Content-Disposition lines and of parts read differ)";
	return NULL;
}

/* A zip whose central directory names a .dist-info/WHEEL: a wheel, whatever its name says.
 * (The central directory's names are stored, never compressed.) */
static bool looks_like_wheel(const unsigned char *buf, size_t len)
{
	static const char W[] = ".dist-info/WHEEL";
	return len > 4 && !memcmp(buf, "PK\x03\x04", 4) && memmem(buf, len, W, sizeof(W) - 1);
}

/* s as a query value (RFC 3986 unreserved characters kept, the rest %XX): a '+' in a
 * wheel's local version would read as a space. Cut to fit n. */
static void query_value(char *out, size_t n, const char *s)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p && o + 4 <= n; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '.' || *p == '_' || *p == '~')
			out[o++] = (char)*p;
		else
			o += (size_t)snprintf(out + o, n - o, "%%%02X", *p);
	}
	if (n)
		out[o < n ? o : n - 1] = '\0';
}

/* How to see the whole report of what refused the upload: the publish profile's, or the
 * fleet target's (its facts from the gate's config; a site-packages environment is named,
 * its path is the gate's own). */
static void hint(char *out, size_t n, const serve_gen *g, const char *f, const char *tgt)
{
	const serve_target *st = NULL;
	char q[800];
	query_value(q, sizeof(q), f);
	for (size_t i = 0; tgt && i < g->cfg.ntargets; i++)
		if (!strcmp(g->cfg.targets[i].name, tgt))
			st = &g->cfg.targets[i];
	if (!st) {
		snprintf(out, n, "The whole report: 'wheelgate check --profile publish %s', or POST "
			 "the file to /v1/check?filename=%s&profile=publish on this gate.", f, q);
		return;
	}
	char facts[1024] = "";
	size_t off = 0;
	if (st->spec) {
		char *sp = serve_esc(st->spec);
		off += (size_t)snprintf(facts + off, sizeof(facts) - off, " --target '%s'",
					sp ? sp : "?");
		free(sp);
	}
	for (size_t j = 0; j < st->ngpus && off < sizeof(facts); j++) {
		char *gp = serve_esc(st->gpus[j]);
		off += (size_t)snprintf(facts + off, sizeof(facts) - off, " --gpu %s", gp ? gp : "?");
		free(gp);
	}
	if (st->site_packages && off < sizeof(facts))
		snprintf(facts + off, sizeof(facts) - off, " --env SITE_PACKAGES");
	snprintf(out, n, "The fleet's target %s refused it (the publish profile alone may pass). "
		 "Its whole report: POST the file to /v1/check?filename=%s&fleet=%s on this gate, or "
		 "run: wheelgate check --profile install%s %s%s", tgt, q, tgt, facts, f,
		 st->site_packages ? " (SITE_PACKAGES: the target's environment, site_packages "
				     "in the gate's config)" : "");
}

/* The report's gist for the client: the verdict, the rule ids, the first message, and how to
 * get the whole report (for the part that refused it). */
static enum MHD_Result blocked(struct MHD_Connection *c, request *r, const char *file,
			       const serve_verdict *v)
{
	char *f = serve_esc(file), *first = serve_esc(v->first), *tgt = serve_esc(v->first_target);
	char text[4096], how[2048], reason[SERVE_REASON_MAX + 1];
	bool error = !strcmp(v->verdict, "error");
	if (error) {
		snprintf(text, sizeof(text),
			 "wheelgate: %s was refused: it cannot be read as a wheel: %s\n"
			 "Nothing was uploaded. Run 'wheelgate check %s' for the details.\n",
			 f ? f : "?", first ? first : "?", f ? f : "?");
		snprintf(reason, sizeof(reason), "wheelgate refused %s: cannot be read as a wheel: "
			 "%s", f ? f : "?", first ? first : "?");
	} else {
		hint(how, sizeof(how), r->gen, f ? f : "?", v->first_target);
		snprintf(text, sizeof(text),
			 "wheelgate: %s was refused (%s%s): %s\n"
			 "%s\n"
			 "Nothing was uploaded. %s\n",
			 f ? f : "?", tgt ? "target " : "", tgt ? tgt : "publish profile",
			 v->rules ? v->rules : "", first ? first : "", how);
		snprintf(reason, sizeof(reason), "wheelgate refused %s (%s%s): %s", f ? f : "?",
			 tgt ? "target " : "", tgt ? tgt : "publish profile",
			 first ? first : v->rules ? v->rules : "");
	}
	free(f);
	free(first);
	free(tgt);
	return refuse_why(c, r, error ? "error" : "fail", v->rules, text, reason);
}

enum MHD_Result upload_finish(server *s, struct MHD_Connection *c, request *r)
{
	size_t len;
	const unsigned char *raw = body_bytes(&r->body, &len);
	if (!raw) {
		char msg[256];
		snprintf(msg, sizeof(msg), "wheelgate serve: cannot hold the body: %s\n",
			 strerror(r->body.err));
		return serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	upload_state *u = calloc(1, sizeof(*u));
	if (!u)
		return serve_answer_text(c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
					 "wheelgate serve: out of memory\n");
	r->upload = u;
	u->cfg = &r->gen->cfg;
	body_init(&u->content);
	struct MHD_PostProcessor *pp = MHD_create_post_processor(c, FEED_CHUNK, on_field, u);
	if (!pp)
		return refuse_msg(c, r, "wheelgate: the upload's body cannot be read: the "
				  "Content-Type is not multipart/form-data with a boundary\n");
	bool ok = true;
	for (size_t off = 0; off < len && ok; off += FEED_CHUNK) {
		size_t n = len - off < FEED_CHUNK ? len - off : FEED_CHUNK;
		ok = MHD_post_process(pp, (const char *)raw + off, n) == MHD_YES;
	}
	ok = MHD_destroy_post_processor(pp) == MHD_YES && ok;
	if (u->content.too_large || u->content.err) {
		char msg[256];
		snprintf(msg, sizeof(msg), "wheelgate serve: cannot hold the uploaded file: %s\n",
			 u->content.err ? strerror(u->content.err) : "too large");
		return serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	if (!ok)
		return refuse_msg(c, r, "wheelgate: the upload's multipart body is malformed (a "
				  "boundary or a part's headers cannot be read); nothing was "
				  "uploaded\n");
	if (u->content_parts == 0) {
		if (*u->action && strcmp(u->action, "file_upload")) {
			/* Not an upload of a file (another action of the protocol): the
			 * repository answers it. */
			r->verdict = "forwarded";
			return upstream_forward(c, r, raw, len);
		}
		return refuse_msg(c, r, "wheelgate: the upload has no part named 'content' (the "
				  "file); nothing was uploaded\n");
	}
	if (u->content_parts > 1)
		return refuse_msg(c, r, "wheelgate: the upload has several parts named 'content': "
				  "one file an upload; nothing was uploaded\n");
	if (u->unnamed)
		return refuse_msg(c, r, "wheelgate: the upload has a part whose name this gate "
				  "cannot read (Content-Disposition: form-data; name=\"...\" "
				  "expected); nothing was uploaded\n");
	if (u->other_files) {
		char *k = serve_esc(u->other_file), text[512];
		snprintf(text, sizeof(text), "wheelgate: the upload has a file in the part '%s' "
			 "(%d part(s) with a file besides 'content'): only the part 'content' is "
			 "judged, and no file goes on unjudged; nothing was uploaded\n",
			 k ? k : "?", u->other_files);
		free(k);
		return refuse(c, r, "refused", NULL, text);
	}
	if (u->sig_bad)
		return refuse_msg(c, r, "wheelgate: the part 'gpg_signature' is not an ASCII-"
				  "armoured OpenPGP signature of at most 64 KiB; nothing was "
				  "uploaded\n");
	const char *hidden = hidden_part_headers(raw, len, u->parts);
	if (hidden) {
		char text[512];
		snprintf(text, sizeof(text), "wheelgate: %s; nothing was uploaded\n", hidden);
		return refuse_msg(c, r, text);
	}
	const char *why = u->filename_long ? "is longer than 256 bytes" : bad_filename(u->filename);
	if (!why)
		why = unstable_filename(u->filename);
	if (why) {
		char *f = serve_esc(u->filename), text[1024];
		snprintf(text, sizeof(text), "wheelgate: the uploaded file's name '%s' %s; nothing "
			 "was uploaded\n", f ? f : "?", why);
		free(f);
		return refuse(c, r, "refused", NULL, text);
	}
	size_t clen;
	const unsigned char *content = body_bytes(&u->content, &clen);
	if (!content) {
		char msg[256];
		snprintf(msg, sizeof(msg), "wheelgate serve: cannot hold the uploaded file: %s\n",
			 strerror(u->content.err));
		return serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	if (*u->sha256) {
		char have[65];
		if (!is_hex64(u->sha256))
			return refuse_msg(c, r, "wheelgate: sha256_digest is not 64 hex digits; "
					  "nothing was uploaded\n");
		if (!sha256_buffer(content, clen, have))
			return serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
						 "wheelgate serve: SHA-256 failed\n");
		if (strcasecmp(have, u->sha256)) {
			char text[512], *f = serve_esc(u->filename);
			snprintf(text, sizeof(text), "wheelgate: %s: its sha256 is %s but the upload's "
				 "sha256_digest says %s: the file changed on its way; nothing was "
				 "uploaded\n", f ? f : "?", have, u->sha256);
			free(f);
			return refuse(c, r, "refused", NULL, text);
		}
	}
	size_t fl = strlen(u->filename);
	bool wheel = fl > 4 && !strcasecmp(u->filename + fl - 4, ".whl");
	if (!wheel && (!strcmp(u->filetype, "bdist_wheel") || looks_like_wheel(content, clen))) {
		/* Judged by its content: a wheel under another name is not let by unchecked. */
		char *f = serve_esc(u->filename), text[512];
		snprintf(text, sizeof(text), "wheelgate: %s is a wheel (%s) but is not named "
			 "NAME.whl; nothing was uploaded\n", f ? f : "?",
			 !strcmp(u->filetype, "bdist_wheel") ? "filetype bdist_wheel"
							      : "a zip with a .dist-info/WHEEL");
		free(f);
		return refuse(c, r, "refused", NULL, text);
	}
	if (!wheel) {
		if (!r->gen->cfg.forward_other) {
			char *f = serve_esc(u->filename), text[512];
			snprintf(text, sizeof(text), "wheelgate: %s is not a wheel, and this gate takes "
				 "wheels only (--check-other); nothing was uploaded\n", f ? f : "?");
			free(f);
			return refuse(c, r, "refused", NULL, text);
		}
		r->verdict = "forwarded";
		return upstream_forward(c, r, raw, len);
	}
	serve_verdict v;
	char err[512];
	if (gate_enter(s, c, err, sizeof(err)) < 0) {
		char msg[640];
		snprintf(msg, sizeof(msg), "wheelgate serve: busy: %s; nothing was uploaded, try "
			 "again later\n", err);
		return serve_answer_text(c, r, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
	}
	wg_scanner *sc = serve_scanner(s);
	if (!sc) {
		gate_leave(s);
		return serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					 "wheelgate serve: cannot make a scanner (out of memory?)\n");
	}
	int rc = serve_judge(r->gen, sc, content, clen, u->filename, NULL, NULL, true, &v, err,
			     sizeof(err));
	body_free(&u->content);
	gate_leave(s);
	if (rc < 0) {
		char msg[640];
		snprintf(msg, sizeof(msg), "wheelgate serve: %s\n", err);
		return serve_answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	/* The file's own copy is no longer needed: only the original request goes on. */
	body_free(&u->content);
	enum MHD_Result ret;
	if (strcmp(v.verdict, "pass")) {
		ret = blocked(c, r, u->filename, &v);
		r->rules = v.rules; /* for the log and the metrics */
		v.rules = NULL;
	} else {
		r->verdict = "pass";
		ret = upstream_forward(c, r, raw, len);
	}
	serve_verdict_clear(&v);
	return ret;
}

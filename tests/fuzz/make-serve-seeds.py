#!/usr/bin/env python3
# The seeds of fuzz_serve: raw HTTP/1.1 requests as clients write them to `wheelgate serve`.
# Uploads as twine sends them (multipart/form-data, :action=file_upload, the wheel as
# `content`, its sha256 right and wrong), the hostile variants (no content part, two, a
# filename with ../ and control characters, a broken or nested boundary, truncated), the check
# API (plain, chunked, with a target, without the token), the other endpoints, pipelined
# requests, a huge Content-Length, bad chunk sizes.
#   make-serve-seeds.py FIXTURES OUT
# FIXTURES: build/tests/fixtures (its wheels/); OUT: the directory of seeds (made).
# SPDX-License-Identifier: GPL-3.0-or-later
import hashlib
import os
import sys

fix, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
TOKEN = b"fuzz-token-7f3a"  # fuzz_serve.c's FZ_TOKEN
BASIC = b"Basic X190b2tlbl9fOnB5cGktc2VjcmV0"  # __token__:pypi-secret


def wheel(name):
    with open(os.path.join(fix, "wheels", name), "rb") as f:
        return f.read()


GOOD = "purepkg-0.1-py3-none-any.whl"
BAD = "wrongarch-1.0-cp312-cp312-manylinux_2_28_aarch64.whl"
good, bad = wheel(GOOD), wheel(BAD)


def request(method, path, headers=(), body=b"", length=True, version=b"HTTP/1.1"):
    h = [method + b" " + path + b" " + version, b"Host: 127.0.0.1"]
    h += list(headers)
    if length and body is not None:
        h.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(h) + b"\r\n\r\n" + (body or b"")


def chunked(body, size=4096):
    parts = [b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
             for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def multipart(fields, boundary=b"wGfUzZbOuNdArY"):
    """fields: (name, value) or (name, value, filename)."""
    out = b""
    for f in fields:
        out += b"--" + boundary + b"\r\n"
        disp = b'Content-Disposition: form-data; name="' + f[0] + b'"'
        if len(f) > 2:
            disp += b'; filename="' + f[2] + b'"'
            out += disp + b"\r\nContent-Type: application/octet-stream\r\n\r\n"
        else:
            out += disp + b"\r\n\r\n"
        out += f[1] + b"\r\n"
    return out + b"--" + boundary + b"--\r\n"


def upload_fields(data, filename, sha=None, extra=()):
    sha = sha if sha is not None else hashlib.sha256(data).hexdigest().encode()
    name, version = filename.split("-")[:2]
    return [(b":action", b"file_upload"), (b"protocol_version", b"1"),
            (b"name", name.encode()), (b"version", version.encode()),
            (b"filetype", b"bdist_wheel"), (b"pyversion", b"py3"),
            (b"metadata_version", b"2.1"), (b"summary", b"a seed"),
            (b"md5_digest", hashlib.md5(data).hexdigest().encode()),
            (b"sha256_digest", sha)] + list(extra) + [(b"content", data, filename.encode())]


def upload(body, path=b"/", boundary=b"wGfUzZbOuNdArY", auth=BASIC, ctype=None, **kw):
    ct = ctype or b"multipart/form-data; boundary=" + boundary
    hs = [b"Content-Type: " + ct, b"User-Agent: twine/5.0.0"]
    if auth:
        hs.append(b"Authorization: " + auth)
    return request(b"POST", path, hs, body, **kw)


seeds = {}
# Uploads.
seeds["upload-good"] = upload(multipart(upload_fields(good, GOOD)))
seeds["upload-legacy-path"] = upload(multipart(upload_fields(good, GOOD)), path=b"/legacy/")
seeds["upload-artifactory-path"] = upload(multipart(upload_fields(good, GOOD)),
                                          path=b"/artifactory/api/pypi/pypi-local")
seeds["upload-bad-wheel"] = upload(multipart(upload_fields(bad, BAD)))
seeds["upload-wrong-sha256"] = upload(multipart(upload_fields(good, GOOD, sha=b"0" * 64)))
seeds["upload-sdist"] = upload(multipart(upload_fields(b"\x1f\x8b\x08\0" + b"\0" * 60,
                                                       "purepkg-0.1.tar.gz")))
seeds["upload-no-content"] = upload(multipart(upload_fields(good, GOOD)[:-1]))
seeds["upload-two-contents"] = upload(multipart(upload_fields(good, GOOD) +
                                                [(b"content", bad, BAD.encode())]))
seeds["upload-traversal-name"] = upload(multipart(
    upload_fields(good, GOOD)[:-1] + [(b"content", good, b"../../etc/\x1b[31mx\x07-1.0-py3-none-any.whl")]))
seeds["upload-broken-boundary"] = upload(multipart(upload_fields(good, GOOD)),
                                         boundary=b"notTheOneUsed")
seeds["upload-quoted-boundary"] = upload(multipart(upload_fields(good, GOOD)),
                                         ctype=b'multipart/form-data; boundary="wGfUzZbOuNdArY"')
seeds["upload-no-boundary"] = upload(multipart(upload_fields(good, GOOD)),
                                     ctype=b"multipart/form-data")
nested = multipart([(b"content", multipart([(b"content", good, GOOD.encode())], b"wGfUzZ"),
                     GOOD.encode())], b"wGfUzZbOuNdArY")
seeds["upload-nested-boundary"] = upload(nested)
full = upload(multipart(upload_fields(good, GOOD)))
seeds["upload-truncated"] = full[:len(full) * 2 // 3]
seeds["upload-truncated-nolength"] = upload(multipart(upload_fields(good, GOOD))[:700],
                                            length=False)
seeds["upload-chunked"] = upload(chunked(multipart(upload_fields(good, GOOD)), 1000),
                                 length=False).replace(b"User-Agent",
                                                       b"Transfer-Encoding: chunked\r\nUser-Agent")
seeds["upload-no-auth"] = upload(multipart(upload_fields(good, GOOD)), auth=None)
seeds["upload-urlencoded"] = upload(b":action=file_upload&name=x",
                                    ctype=b"application/x-www-form-urlencoded")
seeds["upload-huge-length"] = upload(b"", length=False).replace(
    b"\r\n\r\n", b"\r\nContent-Length: 99999999999999999999\r\n\r\n", 1)
# The check API.
bearer = b"Authorization: Bearer " + TOKEN
q = b"/v1/check?filename=" + GOOD.encode()
seeds["check-good"] = request(b"POST", q, [bearer, b"Content-Type: application/octet-stream"], good)
seeds["check-bad"] = request(b"POST", b"/v1/check?filename=" + BAD.encode() +
                             b"&target=python%3D3.12%2Ctorch%3D2.9.1%2Bcu128&profile=install",
                             [bearer], bad)
seeds["check-publish"] = request(b"POST", q + b"&profile=publish", [bearer], good)
seeds["check-bad-target"] = request(b"POST", q + b"&target=python%3Dx%2C%2C", [bearer], good)
seeds["check-bad-profile"] = request(b"POST", q + b"&profile=nope", [bearer], good)
seeds["check-no-filename"] = request(b"POST", b"/v1/check", [bearer], good)
seeds["check-slash-filename"] = request(b"POST", b"/v1/check?filename=a%2F..%2Fb.whl", [bearer], good)
seeds["check-not-a-zip"] = request(b"POST", b"/v1/check?filename=x-1.0-py3-none-any.whl",
                                   [bearer], b"PK\x03\x04 not a zip at all")
seeds["check-empty"] = request(b"POST", q, [bearer], b"")
seeds["check-no-token"] = request(b"POST", q, [], good)
seeds["check-wrong-token"] = request(b"POST", q, [b"Authorization: Bearer fuzz-token-7f3b"], good)
seeds["check-chunked"] = request(b"POST", q, [bearer, b"Transfer-Encoding: chunked"],
                                 chunked(good, 700), length=False)
seeds["check-chunk-ext-trailer"] = request(
    b"POST", q, [bearer, b"Transfer-Encoding: chunked"],
    b"%x;ext=1\r\n%s\r\n0\r\nX-Trailer: t\r\n\r\n" % (len(good), good), length=False)
seeds["check-bad-chunk-size"] = request(b"POST", q, [bearer, b"Transfer-Encoding: chunked"],
                                        b"zz\r\nabc\r\n0\r\n\r\n", length=False)
seeds["check-huge-chunk"] = request(b"POST", q, [bearer, b"Transfer-Encoding: chunked"],
                                    b"FFFFFFFFFFFFFFFF\r\n" + good[:500], length=False)
seeds["check-length-and-chunked"] = request(b"POST", q, [bearer, b"Transfer-Encoding: chunked",
                                                         b"Content-Length: 5"],
                                            chunked(good), length=False)
seeds["check-expect-100"] = request(b"POST", q, [bearer, b"Expect: 100-continue"], good)
seeds["check-short-body"] = request(b"POST", q, [bearer, b"Content-Length: 100000"],
                                    good[:1000], length=False)
seeds["check-get"] = request(b"GET", q, [bearer], None)
seeds["check-url"] = request(b"POST", b"/v1/check/url", [bearer, b"Content-Type: application/json"],
                             b'{"url": "http://127.0.0.1:9/artifactory/pypi-local/x-1.0-py3-none-any.whl"}')
seeds["check-url-bad-json"] = request(b"POST", b"/v1/check/url", [bearer], b'{"url": [')
seeds["v1-unknown"] = request(b"POST", b"/v1/nope", [bearer], b"x")
# The rest of the router, and what MHD itself refuses.
seeds["healthz"] = request(b"GET", b"/healthz", [], None)
seeds["healthz-head"] = request(b"HEAD", b"/healthz", [], None)
seeds["healthz-post"] = request(b"POST", b"/healthz", [], b"x")
seeds["metrics"] = request(b"GET", b"/metrics", [], None)
seeds["get-root"] = request(b"GET", b"/", [], None, version=b"HTTP/1.0")
seeds["pipelined"] = (request(b"GET", b"/healthz", [], None) + request(b"POST", q, [bearer], good) +
                      request(b"GET", b"/metrics", [], None) + request(b"GET", b"/nope", [], None))
seeds["path-control"] = request(b"GET", b"/a%00b%0a%1b[31m\xff\xfe/../" + b"x" * 300, [], None)
seeds["path-long"] = request(b"POST", b"/" + b"p/" * 3000, [b"Content-Type: multipart/form-data; boundary=b"],
                             b"--b--\r\n")
seeds["bad-request-line"] = b"POST  HTTP/1.1\r\n\r\n"
seeds["bad-version"] = b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n"
seeds["header-no-colon"] = b"GET /healthz HTTP/1.1\r\nHost x\r\nBroken\r\n\r\n"
seeds["header-flood"] = b"GET /healthz HTTP/1.1\r\n" + b"".join(
    b"X-H%d: %s\r\n" % (i, b"v" * 50) for i in range(800)) + b"\r\n"
seeds["no-host"] = b"GET /healthz HTTP/1.1\r\n\r\n"
seeds["bare-lf"] = b"GET /healthz HTTP/1.1\nHost: x\n\n"
for name, data in seeds.items():
    assert len(data) <= 262144, name
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)

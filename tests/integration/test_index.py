#!/usr/bin/env python3
"""The simple index reader (cli/index.c, issue 28), run alone by tests/tools/index_list.c
(wg-index-list INDEX_URL PROJECT|- [TIMEOUT_S], one JSON line per file), against a real
pypiserver (../shared/tools/pypiserver: PEP 503 HTML) serving fixture wheels, whose every file
must be listed with the URL that serves it and the sha256 of its bytes (hashlib), and against a
loopback stand-in (http.server, here) answering PEP 691 JSON, HTML after a redirect with
relative hrefs, entities, yanked files, <base href>, hostile names, errors, a slow answer, an
oversized one, too many files. What the reader must do: docs/index-source.md.

Usage: test_index.py WG_INDEX_LIST FIXTURES
"""
import functools
import gzip
import hashlib
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main, need_path, test  # noqa: E402
from serve_util import PYPISERVER, PyPIServer, request, sanitized  # noqa: E402

LIST, FIX = [os.path.abspath(a) for a in sys.argv[1:3]]
W = os.path.join(FIX, "wheels")
HERE = os.path.dirname(os.path.abspath(__file__))
SYSENV = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
BODY_MAX = 64 << 20
FILES_MAX = 200000


def listing(url, project="-", timeout=20, bound=120):
    """(rc, files, stderr) of wg-index-list; files: the JSON lines read back."""
    p = subprocess.run([LIST, url, project, str(timeout)], capture_output=True, timeout=bound)
    assert p.returncode in (0, 1), (p.returncode, p.stderr.decode()[-2000:])
    files = [json.loads(l) for l in p.stdout.decode().splitlines()]
    if p.returncode:
        assert not files and p.stderr.strip(), (files, p.stderr)
    return p.returncode, files, p.stderr.decode()


def ok(url, project="-", **kw):
    rc, files, err = listing(url, project, **kw)
    assert rc == 0, err
    return files


def refused(url, project="-", **kw):
    rc, files, err = listing(url, project, **kw)
    assert rc == 1, files
    return err


def sha(data):
    return hashlib.sha256(data).hexdigest()


class Links(html.parser.HTMLParser):
    """Python's own reading of a PEP 503 page: (href, attrs) of every <a>."""

    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append(dict(attrs))


# --- A real pypiserver.

class PyPI(PyPIServer):
    def __init__(self, files):
        need_path(PYPISERVER, "pypiserver (../shared/tools/pypiserver)")
        d = tempfile.mkdtemp(prefix="wg-index-pypi-")
        for src, name in files:
            shutil.copyfile(src, os.path.join(d, name))
        super().__init__(d)

    def stop(self):
        super().stop()
        shutil.rmtree(self.dir, ignore_errors=True)


FA_FALSE = "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"
FA_TRUE = "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
BASE = "base-1.0-py3-none-any.whl"


@test
def pypiserver_lists_every_file_with_its_url_and_sha256():
    need_path(os.path.join(W, FA_FALSE), "the flash_attn fixture wheels")
    files = [(os.path.join(W, FA_FALSE), FA_FALSE), (os.path.join(W, FA_TRUE), FA_TRUE),
             # the same project under other spellings of its name, and another project
             (os.path.join(W, BASE), "Flash.Attn-2.8.2-py3-none-any.whl"),
             (os.path.join(W, BASE), "flash-attn-2.8.1.tar.gz"),
             (os.path.join(W, BASE), BASE)]
    pypi = PyPI(files)
    try:
        expect = {n: sha(open(s, "rb").read()) for s, n in files if n != BASE}
        for root, project in ((pypi.url("/simple/"), "Flash_Attn"),
                              (pypi.url("/simple"), "flash-attn"),
                              (pypi.url("/simple/flash-attn/"), "-"),
                              (pypi.url("/simple/flash-attn/"), "FLASH.attn")):
            got = ok(root, project)
            names = sorted(f["filename"] for f in got)
            assert names == sorted(expect), (root, project, names)
            for f in got:
                # the URL serves the file, byte for byte; the sha256 is that of those bytes
                status, _, data = request(f["url"])
                assert status == 200, f
                assert sha(data) == expect[f["filename"]] == f["sha256"], f
                assert f["url"].startswith(pypi.url("/")) and "#" not in f["url"], f
                assert f["size"] == -1 and f["yanked"] is False, f
        # and the URLs are those Python reads from the same page (urljoin on the hrefs)
        status, _, page = request(pypi.url("/simple/flash-attn/"))
        assert status == 200
        p = Links()
        p.feed(page.decode())
        theirs = sorted(urllib.parse.urljoin(pypi.url("/simple/flash-attn/"), a["href"])
                        .split("#")[0] for a in p.links)
        assert sorted(f["url"] for f in got) == theirs, (got, theirs)
        # another project, and one the server does not have
        assert [f["filename"] for f in ok(pypi.url("/simple/"), "base")] == [BASE]
        err = refused(pypi.url("/simple/"), "nosuchproject")
        assert "HTTP 404" in err and "/simple/nosuchproject/" in err, err
    finally:
        pypi.stop()


# --- The loopback stand-in.

SEEN = []  # (path, Accept) of each request
ROUTES = {}


def route(path):
    def put(fn):
        ROUTES[path] = fn
        return fn
    return put


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        SEEN.append((self.path, self.headers.get("Accept")))
        fn = ROUTES.get(self.path)
        if not fn:
            return self.answer(404, "text/html", b"<html>not here</html>")
        fn(self)

    def answer(self, status, ctype, body, headers=()):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


SRV = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
SRV.daemon_threads = True
threading.Thread(target=SRV.serve_forever, daemon=True).start()
ROOT = "http://127.0.0.1:%d" % SRV.server_address[1]
H1, H2, H3 = sha(b"one"), sha(b"two"), sha(b"three")


def jdoc(files, name="proj", version="1.1"):
    return json.dumps({"meta": {"api-version": version}, "name": name, "files": files}).encode()


@route("/json/simple/proj/")
def json_page(h):
    if not (h.headers.get("Accept") or "").startswith(JSON_TYPE):
        return h.answer(406, "text/plain", b"")
    h.answer(200, JSON_TYPE, jdoc([
        {"filename": "proj-1.0-py3-none-any.whl", "url": "../../files/proj-1.0-py3-none-any.whl",
         "hashes": {"sha256": H1, "md5": "0" * 32}, "size": 1234, "yanked": False,
         "requires-python": ">=3.9", "core-metadata": {"sha256": H2}},
        {"filename": "proj-1.1-py3-none-any.whl",
         "url": "https://files.example/p/proj-1.1-py3-none-any.whl#sha256=" + H3,
         "hashes": {"sha256": H2.upper()}, "yanked": "broken build", "size": "12"},
        {"filename": "proj-1.2.tar.gz", "url": "/files/proj-1.2.tar.gz", "hashes": {},
         "yanked": True, "requires-python": None},
        {"filename": "proj-1.3.tar.gz", "url": "/files/proj-1.3.tar.gz#sha256=" + H3,
         "hashes": {"sha256": "xyz"}, "size": -5},
        # hostile or malformed entries: left out
        {"filename": "../evil-1.0-py3-none-any.whl", "url": "/files/evil.whl"},
        {"filename": "ev/il-1.0.tar.gz", "url": "/files/evil.tar.gz"},
        {"filename": "evil\x1b[31m-1.0.tar.gz", "url": "/files/evil2.tar.gz"},
        {"filename": "..", "url": "/files/x"},
        {"filename": "evil-2.0.tar.gz", "url": "javascript:alert(1)"},
        {"filename": "evil-3.0.tar.gz", "url": "ftp://example/evil-3.0.tar.gz"},
        {"filename": "evil-4.0.tar.gz"},
        {"url": "/files/evil-5.0.tar.gz"},
        {"filename": 7, "url": "/files/evil-6.0.tar.gz"},
        "not an object",
    ]))


@test
def json_page_hashes_size_yanked_requires_python():
    files = ok(ROOT + "/json/simple/", "PROJ")
    got = {f["filename"]: f for f in files}
    assert sorted(got) == ["proj-1.0-py3-none-any.whl", "proj-1.1-py3-none-any.whl",
                           "proj-1.2.tar.gz", "proj-1.3.tar.gz"], sorted(got)
    a, b, c, d = (got[k] for k in sorted(got))
    assert a == {"filename": "proj-1.0-py3-none-any.whl",
                 "url": ROOT + "/json/files/proj-1.0-py3-none-any.whl", "sha256": H1, "size": 1234,
                 "yanked": False, "requires_python": ">=3.9"}, a
    # "hashes" first (lower-cased), the fragment left off the URL; a string "yanked" is yanked;
    # a size that is not an integer is unknown
    assert b == {"filename": "proj-1.1-py3-none-any.whl",
                 "url": "https://files.example/p/proj-1.1-py3-none-any.whl", "sha256": H2,
                 "size": -1, "yanked": True, "requires_python": None}, b
    assert c["url"] == ROOT + "/files/proj-1.2.tar.gz" and c["sha256"] is None and c["yanked"]
    assert c["requires_python"] is None
    # an unreadable "hashes" sha256 falls back to the URL's #sha256=; a negative size is unknown
    assert d["sha256"] == H3 and d["size"] == -1 and not d["yanked"], d
    accept = [a for p, a in SEEN if p == "/json/simple/proj/"][-1]
    assert accept.index(JSON_TYPE) < accept.index("text/html"), accept


@route("/json2/simple/proj/")
def json_v2(h):
    h.answer(200, JSON_TYPE, jdoc([], version="2.0"))


@route("/jsonother/simple/proj/")
def json_other(h):
    h.answer(200, JSON_TYPE, jdoc([{"filename": "other-1.0.tar.gz", "url": "/x"}], name="other"))


@route("/jsonbad/simple/proj/")
def json_bad(h):
    h.answer(200, JSON_TYPE + "; charset=utf-8", b'{"meta": {"api-version": "1.0"}, "files": [')


@route("/jsonlist/simple/proj/")
def json_list(h):
    h.answer(200, JSON_TYPE, b'[1, 2]')


@test
def json_pages_refused():
    assert "api-version" in refused(ROOT + "/json2/simple/", "proj")
    err = refused(ROOT + "/jsonother/simple/", "proj")
    assert '"other"' in err and "proj" in err, err
    err = refused(ROOT + "/jsonbad/simple/", "proj")
    assert "not JSON" in err and ROOT + "/jsonbad/simple/proj/" in err, err
    assert '"files"' in refused(ROOT + "/jsonlist/simple/", "proj")


PAGE = """<!DOCTYPE html>
<html><head><meta name="pypi:repository-version" content="1.1"><title>Links for proj</title></head>
<body><h1>Links for proj</h1>
<a href="../../files/proj-1.0-py3-none-any.whl#sha256=%(h1)s" data-requires-python="&gt;=3.8,&lt;4">proj-1.0-py3-none-any.whl</a><br>
<A HREF="proj-1.1-py3-none-any.whl#md5=00000000000000000000000000000000" data-yanked>proj-1.1</A>
<a href="proj-1.2.tar.gz?a=1&amp;b=2#SHA256=%(H2)s" data-yanked="bad &quot;build&quot;" data-dist-info-metadata="sha256=%(h3)s">proj-1.2</a>
<a href="/abs/proj%%2B1.3-1.0%%2Bcu12-py3-none-any.whl#sha256=%(h1)sff">x</a>
<a href="http://127.0.0.1:1/other/proj-1.4.tar.gz#sha256=zz">y</a>
<a href="proj-1.5.tar.gz#sha256=%(h3)s&amp;x=1" data-requires-python="">z</a>
<a href="http://127.0.0.1:1/sp ace/proj-1.6.tar.gz">spaces</a>
<a>no href</a>
<a href="mailto:someone@example.org">mail</a>
<a href="evil%%2F..%%2F..%%2Fetc%%2Fpasswd">slash</a>
<a href="%%2e%%2e">dots</a>
<a href="evil%%0a-1.0.tar.gz">newline</a>
<a href="evil%%zz-1.0.tar.gz">bad escape</a>
<a href="evil%%00-1.0.tar.gz">nul</a>
<a href="/dir/">a directory</a>
</body></html>
""" % {"h1": H1, "H2": H2.upper(), "h3": H3}


@route("/redir/simple/proj/")
def redirect(h):
    h.answer(301, "text/html", b"moved", [("Location", "/moved/deeper/proj/")])


@route("/moved/deeper/proj/")
def moved(h):
    h.answer(200, "text/html; charset=utf-8", PAGE.encode())


@test
def html_after_redirect_relative_entities_yanked():
    files = ok(ROOT + "/redir/simple/", "proj")
    base = ROOT + "/moved/deeper/proj/"
    # Python's reading of the same page, resolved against the URL after the redirect
    p = Links()
    p.feed(PAGE)
    hrefs = [urllib.parse.urljoin(base, a["href"]).split("#")[0].replace(" ", "%20")
             for a in p.links if a.get("href")]
    got = {f["url"]: f for f in files}
    want = {
        ROOT + "/moved/files/proj-1.0-py3-none-any.whl": ("proj-1.0-py3-none-any.whl", H1, False,
                                                    ">=3.8,<4"),
        base + "proj-1.1-py3-none-any.whl": ("proj-1.1-py3-none-any.whl", None, True, None),
        base + "proj-1.2.tar.gz?a=1&b=2": ("proj-1.2.tar.gz", H2, True, None),
        ROOT + "/abs/proj%2B1.3-1.0%2Bcu12-py3-none-any.whl":
            ("proj+1.3-1.0+cu12-py3-none-any.whl", None, False, None),
        "http://127.0.0.1:1/other/proj-1.4.tar.gz": ("proj-1.4.tar.gz", None, False, None),
        base + "proj-1.5.tar.gz": ("proj-1.5.tar.gz", None, False, None),
        "http://127.0.0.1:1/sp%20ace/proj-1.6.tar.gz": ("proj-1.6.tar.gz", None, False, None),
    }
    assert sorted(got) == sorted(want), sorted(got)
    assert all(u in hrefs for u in got), (sorted(got), hrefs)
    for u, (name, digest, yanked, rp) in want.items():
        f = got[u]
        assert (f["filename"], f["sha256"], f["yanked"], f["requires_python"]) == \
            (name, digest, yanked, rp), f
        assert f["size"] == -1, f
    # the listing keeps the page's order
    assert [f["filename"] for f in files][:3] == ["proj-1.0-py3-none-any.whl",
                                                  "proj-1.1-py3-none-any.whl", "proj-1.2.tar.gz"]
    accept = [a for p, a in SEEN if p == "/redir/simple/proj/"][-1]
    assert accept.startswith(JSON_TYPE) and "text/html" in accept, accept


@route("/based/simple/proj/")
def based(h):
    h.answer(200, "application/vnd.pypi.simple.v1+html",
             b'<html><head><base href="/store/v1/"></head><body>'
             b'<a href="proj-1.0.tar.gz#sha256=' + H1.encode() + b'">p</a>'
             b'<base href="/ignored/"><a href="../proj-2.0.tar.gz">q</a></body></html>')


@test
def html_base_href():
    got = [(f["url"], f["sha256"]) for f in ok(ROOT + "/based/simple/proj/")]
    assert got == [(ROOT + "/store/v1/proj-1.0.tar.gz", H1),
                   (ROOT + "/store/proj-2.0.tar.gz", None)], got


@route("/v2html/simple/proj/")
def v2html(h):
    h.answer(200, "text/html", b'<html><head><meta name="pypi:repository-version" '
             b'content="2.0"></head><body><a href="/p-1.0.tar.gz">p</a></body></html>')


@route("/empty/simple/proj/")
def empty(h):
    h.answer(200, "text/html", b"")


@route("/404/simple/proj/")
def e404(h):
    h.answer(404, "text/html", b"<a href='/x-1.0.tar.gz'>x</a>")


@route("/500/simple/proj/")
def e500(h):
    h.answer(500, "text/html", b"oops")


@route("/300/simple/proj/")
def e300(h):
    h.answer(300, "text/html", b"<a href='/x-1.0.tar.gz'>x</a>")


@route("/204/simple/proj/")
def e204(h):
    h.send_response(204)
    h.end_headers()


@route("/plain/simple/proj/")
def plain(h):
    h.answer(200, "text/plain", b'<a href="/x-1.0.tar.gz">x</a>')


@route("/notype/simple/proj/")
def notype(h):
    h.answer(200, None, b'<a href="/x-1.0.tar.gz">x</a>')


@route("/loop/simple/proj/")
def loop(h):
    h.answer(302, "text/html", b"", [("Location", "/loop/simple/proj/")])


@route("/ftp/simple/proj/")
def to_ftp(h):
    h.answer(302, "text/html", b"", [("Location", "ftp://127.0.0.1/simple/proj/")])


@test
def errors_named():
    err = refused(ROOT + "/v2html/simple/", "proj")
    assert "pypi:repository-version" in err and "2.0" in err, err
    assert ok(ROOT + "/empty/simple/proj/") == []
    for code in ("404", "500", "300"):
        err = refused(ROOT + "/%s/simple/" % code, "proj")
        assert "HTTP " + code in err and ROOT + "/%s/simple/proj/" % code in err, err
    assert "no Content-Type" in refused(ROOT + "/204/simple/", "proj")
    err = refused(ROOT + "/plain/simple/", "proj")
    assert "text/plain" in err and "neither" in err, err
    assert "no Content-Type" in refused(ROOT + "/notype/simple/", "proj")
    assert "redirects" in refused(ROOT + "/loop/simple/", "proj")
    refused(ROOT + "/ftp/simple/", "proj")
    # nobody listens on port 1; names and URLs that are not an index's
    err = refused("http://127.0.0.1:1/simple/", "proj")
    assert "127.0.0.1:1/simple/proj/" in err, err
    for url, project in (("file:///etc/simple/", "proj"), (ROOT + "/simple/?x=1", "proj"),
                         (ROOT + "/simple/", "../etc"), (ROOT + "/simple/", "a/b"),
                         (ROOT + "/simple/", "-x"), (ROOT + "/simple/", "-")):
        refused(url, project)
    # user:password@ never reaches the message
    err = refused("http://user:s3cret@127.0.0.1:1/simple/", "proj")
    assert "s3cret" not in err and "127.0.0.1:1" in err, err


@route("/headers")
def headers(h):
    body = json.dumps({"accept": h.headers.get("Accept"), "x": h.headers.get("X-Wg-Test")})
    h.answer(200, "application/json; charset=utf-8", body.encode())


@route("/to-headers")
def to_headers(h):
    h.answer(302, "text/html", b"", [("Location", "/headers")])


@test
def fetch_v2_into_a_file():
    """wg_fetch_v2 with a descriptor (the path index.c does not take): headers sent, the body
    written whole, the final URL and the Content-Type after a redirect; an error writes nothing
    to stdout."""
    out = os.path.join(tempfile.mkdtemp(prefix="wg-index-fetch-"), "body")
    try:
        p = subprocess.run([LIST, "--fetch-to", out, ROOT + "/to-headers", "Accept: text/x-test",
                            "X-Wg-Test: 42"], capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr
        meta = json.loads(p.stdout)
        body = open(out, "rb").read()
        assert json.loads(body) == {"accept": "text/x-test", "x": "42"}, body
        assert meta == {"final_url": ROOT + "/headers",
                        "content_type": "application/json; charset=utf-8",
                        "bytes": len(body)}, meta
        p = subprocess.run([LIST, "--fetch-to", out, ROOT + "/500/simple/proj/"],
                           capture_output=True, timeout=60)
        assert p.returncode == 1 and b"HTTP 500" in p.stderr and not p.stdout, p
    finally:
        shutil.rmtree(os.path.dirname(out), ignore_errors=True)


@route("/slow/simple/proj/")
def slow(h):
    time.sleep(6)
    h.answer(200, "text/html", b"<a href='/x-1.0.tar.gz'>x</a>")


@test
def slow_server_times_out():
    t = time.monotonic()
    err = refused(ROOT + "/slow/simple/", "proj", timeout=1)
    took = time.monotonic() - t
    assert "within 1 s" in err, err
    assert took < 5, took


@route("/big/simple/proj/")
def big_declared(h):
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Content-Length", str(BODY_MAX + 1))
    h.end_headers()
    try:
        h.wfile.write(b"<html>" + b" " * 65536)
    except (BrokenPipeError, ConnectionResetError):
        pass


@route("/bigstream/simple/proj/")
def big_stream(h):
    # no Content-Length: the bound applies as the bytes come
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Connection", "close")
    h.end_headers()
    h.close_connection = True
    chunk = b"<a href='x'>x</a>" * 4096
    try:
        for _ in range(BODY_MAX // len(chunk) + 2):
            h.wfile.write(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass


@functools.lru_cache(1)
def bomb_body():
    return gzip.compress(b"<html><body>" + b" " * (BODY_MAX + 4096), 9)


@route("/bomb/simple/proj/")
def bomb(h):
    h.answer(200, "text/html", bomb_body(), [("Content-Encoding", "gzip")])


@route("/gzip/simple/proj/")
def gz(h):
    h.answer(200, "text/html", gzip.compress(PAGE.encode()), [("Content-Encoding", "gzip")])


@test
def oversized_bodies_refused():
    for path in ("/big/", "/bigstream/", "/bomb/"):
        err = refused(ROOT + path + "simple/", "proj")
        assert "more than %d bytes" % BODY_MAX in err, (path, err)
    assert len(bomb_body()) < 1 << 20  # the bomb is small on the wire: the bound is on decoded bytes
    # a compressed page that fits is read as it is
    assert len(ok(ROOT + "/gzip/simple/proj/")) == 7


# The big pages are made when asked for, so that the test's own memory stays small.
@route("/many/simple/proj/")
def many(h):
    h.answer(200, "text/html", b"<html><body>" + b"".join(
        b'<a href="p-%d.tar.gz">p</a>' % i for i in range(FILES_MAX + 1)) + b"</body></html>")


@route("/manyjson/simple/proj/")
def many_json(h):
    h.answer(200, JSON_TYPE, jdoc([{"filename": "p-%d.tar.gz" % i, "url": "p-%d.tar.gz" % i}
                                   for i in range(FILES_MAX + 1)]))


@route("/jsonbomb/simple/proj/")
def json_bomb(h):
    h.answer(200, JSON_TYPE, b'{"files":[' + b"{}," * ((BODY_MAX - 64) // 3) + b"{}]}")


@route("/enough/simple/proj/")
def enough(h):
    h.answer(200, "text/html", b"<html><body>" + b"".join(
        b'<a href="p-%d.tar.gz">p</a>' % i for i in range(FILES_MAX)))


@route("/deep/simple/proj/")
def deep(h):
    h.answer(200, "text/html", b"<div>" * 200000 + b'<a href="deep-1.0.tar.gz">d</a>' +
             b"</div>" * 200000)


@test
def huge_counts_bounded():
    for path in ("/many/", "/manyjson/"):
        err = refused(ROOT + path + "simple/", "proj")
        assert "more than %d files" % FILES_MAX in err, (path, err)
    # 22 M empty objects (jansson took 5 GB and a minute to build them) are refused unread
    t = time.monotonic()
    err = refused(ROOT + "/jsonbomb/simple/", "proj")
    assert "more than %d objects" % (5 * FILES_MAX) in err, err
    assert time.monotonic() - t < 30
    files = ok(ROOT + "/enough/simple/", "proj")
    assert len(files) == FILES_MAX and files[-1]["filename"] == "p-%d.tar.gz" % (FILES_MAX - 1)
    # nesting deeper than any parser's stack: read or refused, never a crash (listing checks rc)
    listing(ROOT + "/deep/simple/", "proj")


@route("/bigpage/simple/proj/")
def big_page(h):
    h.answer(200, "text/html",
             b"<html><body>" + b"<div><a>x</a></div>" * ((BODY_MAX - 4096) // 19))


@test
def big_page_bounded_memory():
    """A page just under the body bound, all elements: read as a stream (no tree), so the
    peak resident size stays far below what a tree of it takes (1.8 GB when it was built)."""
    # /usr/bin/time (Debian's time) reads the peak of its own child: a child spawned from this
    # process, which holds the big test pages, would count them too
    need_path("/usr/bin/time", "/usr/bin/time (Debian's time package)")
    p = subprocess.run(["/usr/bin/time", "-f", "peak %M", LIST, ROOT + "/bigpage/simple/proj/",
                        "-", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    peak = int(p.stderr.decode().split("peak ")[-1])
    if not sanitized(LIST):  # ASan's shadow and quarantine say nothing of the reader's memory
        assert peak < 400 * 1024, "peak %d KiB" % peak


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        SRV.shutdown()

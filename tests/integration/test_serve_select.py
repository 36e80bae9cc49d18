#!/usr/bin/env python3
"""`wheelgate serve`: POST /v1/select (issue 28, point 2). A real `wheelgate serve` on
127.0.0.1:0 with a fleet (env211: the stand-in torch 2.11.0 environment of gen-variants.py as
site_packages; env212: torch 2.12.0) answers which variant of flashy works on a target,
over a real pypiserver's project page (loopback) and over a list of wheel URLs; the answer is
the wheelgate.select/1 document `wheelgate select` writes for the same target and sources.
Bad requests get clear 4xx answers: not JSON, unknown keys, no project, a source that is not
an http(s) URL, a source outside --fetch-allow (403), an unknown target (400 naming the
fleet's), no target with several, a service without a fleet (409), a page that is not there
(422 with select's message), GET (405), no token (401), a body over 1 MiB (413). A select
past $WHEELGATE_SERVE_SELECT_TIMEOUT (an index page that never comes) is stopped: 504. Every
wait is bounded.

Usage: test_serve_select.py WHEELGATE FIXTURES
"""
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from harness import main, need_path, test  # noqa: E402
from serve_util import Server, free_port, raw, request  # noqa: E402

WG, FIX = [os.path.abspath(a) for a in sys.argv[1:3]]
V = os.path.join(FIX, "variants")
WHEELS = os.path.join(V, "wheels")
HERE = os.path.dirname(os.path.abspath(__file__))
PYPISERVER = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "tools",
                                           "pypiserver", "run"))
SYSENV = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
TMP = tempfile.mkdtemp(prefix="wg-serve-select-")
STATE = {}
TOKEN = "sel-tok-77"


def pypi():
    if "pypi" in STATE:
        return STATE["pypi"]
    need_path(PYPISERVER, "pypiserver (../shared/tools/pypiserver)")
    need_path(os.path.join(V, "variants.json"), "the select variants (gen-variants.py)")
    d = os.path.join(TMP, "index")
    shutil.copytree(WHEELS, d)
    port = free_port()
    out = tempfile.TemporaryFile()
    proc = subprocess.Popen(["sh", PYPISERVER, str(port), d, "--disable-fallback"],
                            stdout=out, stderr=subprocess.STDOUT, env=SYSENV)
    STATE["proc"] = proc
    root = "http://127.0.0.1:%d/" % port
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if request(root + "simple/", timeout=2)[0] == 200:
                STATE["pypi"] = root
                return root
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("pypiserver did not start")


def server(targets=True, token=None, allow=(), env=None):
    """A serve with the fleet env211 + env212 (or none), fetching from the pypiserver."""
    root = pypi()
    cfg = os.path.join(TMP, "serve-%d-%s-%d.yaml" % (int(targets), bool(token), len(allow)))
    with open(cfg, "w") as f:
        f.write("fetch_allow: [%s]\n" % ", ".join(json.dumps(a) for a in
                                                  [root + "simple/", root + "packages/", *allow]))
        if targets:
            f.write("targets:\n  env211:\n    site_packages: %s\n  env212:\n    site_packages: %s\n"
                    % (json.dumps(os.path.join(V, "env211")), json.dumps(os.path.join(V, "env212"))))
    args = ["--config", cfg] + (["--token", token] if token else [])
    return Server(WG, *args, env=env)


def post(srv, body, headers=None, raw=False):
    data = body if raw else json.dumps(body).encode()
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    st, _, out = request(srv.url("/v1/select"), data=data, headers=h, method="POST", timeout=300)
    return st, out.decode("utf-8", "replace")


def cli(env, *sources, version=None):
    args = [WG, "select", "--format", "json", "--no-config", "--no-store", "--project", "flashy",
            "--env", os.path.join(V, env)] + (["--version", version] if version else []) + \
        ["--", *sources]
    p = subprocess.run(args, capture_output=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


def same(a, b):
    """The documents agree on what counts (timings aside)."""
    assert a["format"] == b["format"] == "wheelgate.select/1"
    assert a["chosen"] == b["chosen"], (a["chosen"], b["chosen"])
    assert a["exit"] == b["exit"]
    va = [(c["file"], c["verdict"], c["rank"], c["reasons"]) for c in a["candidates"]]
    vb = [(c["file"], c["verdict"], c["rank"], c["reasons"]) for c in b["candidates"]]
    assert va == vb, (va, vb)
    assert a["target"]["torch"] == b["target"]["torch"]


@test
def an_index_page_for_each_fleet_target():
    page = pypi() + "simple/flashy/"
    srv = server()
    try:
        for target, torch in (("env211", "2.11.0"), ("env212", "2.12.0")):
            st, out = post(srv, {"source": page, "project": "flashy", "target": target})
            assert st == 200, (st, out)
            doc = json.loads(out)
            assert doc["target"]["torch"] == torch, doc["target"]
            same(doc, cli(target, page))
            assert doc["chosen"] and doc["exit"] == 0, doc
        # --version: only that version's candidates
        st, out = post(srv, {"source": page, "project": "flashy", "version": "1.2",
                             "target": "env211"})
        assert st == 200, (st, out)
        doc = json.loads(out)
        assert {c["file"].split("-")[1].split("+")[0] for c in doc["candidates"]} == {"1.2"}, doc
        same(doc, cli("env211", page, version="1.2"))
    finally:
        assert srv.stop() == 0


@test
def a_list_of_wheel_urls():
    root = pypi()
    files = sorted(os.listdir(WHEELS))[:5]
    urls = ["%spackages/%s#sha256=%s" % (root, urllib.parse.quote(f), hashlib.sha256(
        open(os.path.join(WHEELS, f), "rb").read()).hexdigest()) for f in files]
    srv = server()
    try:
        st, out = post(srv, {"source": urls, "project": "flashy", "target": "env211"})
        assert st == 200, (st, out)
        doc = json.loads(out)
        assert sorted(c["file"] for c in doc["candidates"]) == files, doc
        same(doc, cli("env211", *urls))
    finally:
        assert srv.stop() == 0


@test
def bad_requests_are_refused_clearly():
    root = pypi()
    page = root + "simple/flashy/"
    srv = server()
    try:
        cases = [
            (b"not json", 400, "takes a JSON object"),
            ({"source": page, "project": "flashy", "target": "env211", "extra": 1}, 400,
             'unknown key "extra"'),
            ({"source": page, "target": "env211"}, 400, 'needs "project"'),
            ({"source": page, "project": "-rf", "target": "env211"}, 400, 'needs "project"'),
            ({"source": page, "project": "flashy", "version": "1.0; rm", "target": "env211"}, 400,
             "is not a version"),
            ({"source": [], "project": "flashy", "target": "env211"}, 400, 'needs "source"'),
            ({"source": 7, "project": "flashy", "target": "env211"}, 400, 'needs "source"'),
            ({"source": "/etc/passwd", "project": "flashy", "target": "env211"}, 400,
             "is an http(s) URL"),
            ({"source": "http://127.0.0.2:9/simple/flashy/", "project": "flashy",
              "target": "env211"}, 403, "not under any --fetch-allow prefix"),
            ({"source": root + "simple/../other/x/", "project": "flashy", "target": "env211"},
             403, "not under any --fetch-allow prefix"),
            ({"source": page, "project": "flashy", "target": "nope"}, 400,
             "no fleet target of that name; the fleet's targets: env211, env212"),
            ({"source": page, "project": "flashy"}, 400, 'give "target"'),
            ({"source": root + "simple/nosuchproject/", "project": "flashy", "target": "env211"},
             422, "404"),
            ({"source": page, "project": "flashy", "version": "9.9", "target": "env211"}, 422,
             "no candidate of flashy has that version"),
        ]
        for body, want, text in cases:
            st, out = post(srv, body, raw=isinstance(body, bytes))
            assert st == want and text in out, (body, st, out)
        st, _, out = request(srv.url("/v1/select"), timeout=30)
        assert st == 405 and b"/v1/select takes POST" in out, (st, out)
        # a body over 1 MiB: refused on its Content-Length, before a byte of it is read
        line, text = raw(srv.port, b"POST /v1/select HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                         % ((1 << 20) + 1))
        assert " 413 " in line and "larger than the limit of 1048576 bytes" in text, (line, text)
    finally:
        assert srv.stop() == 0
    srv = server(targets=False)
    try:
        st, out = post(srv, {"source": page, "project": "flashy"})
        assert st == 409 and "has none" in out, (st, out)
    finally:
        assert srv.stop() == 0
    srv = server(token=TOKEN)
    try:
        st, out = post(srv, {"source": page, "project": "flashy", "target": "env211"})
        assert st == 401, (st, out)
        st, out = post(srv, {"source": page, "project": "flashy", "target": "env211"},
                       headers={"Authorization": "Bearer " + TOKEN})
        assert st == 200 and json.loads(out)["chosen"], (st, out)
        st, _, metrics = request(srv.url("/metrics"), timeout=30)
        assert st == 200 and b'endpoint="select"' in metrics, metrics[-2000:]
    finally:
        assert srv.stop() == 0


@test
def a_select_past_its_time_is_stopped_504():
    """An index page that never comes: select is killed at $WHEELGATE_SERVE_SELECT_TIMEOUT
    and the answer is 504; the service goes on answering."""
    release = threading.Event()

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            release.wait(30)

        def log_message(self, *a):
            pass

    slow = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=slow.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d/" % slow.server_address[1]
    srv = server(allow=[base], env=dict(os.environ, WHEELGATE_SERVE_SELECT_TIMEOUT="2"))
    try:
        t0 = time.monotonic()
        st, out = post(srv, {"source": base + "simple/flashy/", "project": "flashy",
                             "target": "env211"})
        took = time.monotonic() - t0
        assert st == 504 and "did not finish within 2 s" in out, (st, out)
        assert took < 20, took
        st, out = post(srv, {"source": pypi() + "simple/flashy/", "project": "flashy",
                             "target": "env211"})
        assert st == 200 and json.loads(out)["chosen"], (st, out)
    finally:
        release.set()
        slow.shutdown()
        slow.server_close()
        assert srv.stop() == 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        p = STATE.get("proc")
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(TMP, ignore_errors=True)

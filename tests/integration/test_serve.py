#!/usr/bin/env python3
"""`wheelgate serve` (issue 13, point 1; first slice): the server started on 127.0.0.1 with
port 0 (the port it bound is read from its stderr), then real requests through urllib,
http.client and raw sockets: /v1/check answers the document `wheelgate check --format json`
prints for the same bytes and name, a body over --max-body is refused (Content-Length
before the body, a chunked body once counted), the bearer token, 404/405/400, and SIGTERM
(exit 0, a request under way finished first). Every wait is bounded in count and time.

Usage: test_serve.py WHEELGATE FIXTURES
Prints one line per test and closes with "N passed, N failed".
"""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from harness import main, need_path, test  # noqa: E402
import serve_util  # noqa: E402
from serve_util import TIMEOUT, raw, request  # noqa: E402

WG, FIX = [os.path.abspath(a) for a in sys.argv[1:3]]
WHEELS = os.path.join(FIX, "wheels")


class Server(serve_util.Server):
    def __init__(self, *args):
        super().__init__(WG, *args)


def check_url(srv, name, **query):
    return srv.url("/v1/check?" + urllib.parse.urlencode(dict(filename=name, **query)))


def cli_json(data, name, *args):
    """What `wheelgate check --format json` prints for the same bytes under the same name."""
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", "--stdin-filename", name]
                       + list(args) + ["-"], input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    return p.returncode, json.loads(p.stdout)


@test
def healthz_and_unknown_paths():
    need_path(WHEELS, "the wheel fixtures")
    with Server() as srv:
        st, _, body = request(srv.url("/healthz"))
        assert (st, body) == (200, b"ok\n"), (st, body)
        st, _, body = request(srv.url("/nope"))
        assert st == 404 and b"/v1/check" in body, (st, body)
        st, h, body = request(srv.url("/v1/check?filename=a.whl"))
        assert st == 405 and h["Allow"] == "POST", (st, body)
        st, _, body = request(srv.url("/v1/check"), data=b"x")
        assert st == 400 and b"filename=" in body, (st, body)
        st, _, body = request(check_url(srv, "a.whl", profile="nope"), data=b"x")
        assert st == 400 and b"profile" in body, (st, body)
        st, _, body = request(check_url(srv, "a.whl", target="python=banana"), data=b"x")
        assert st == 400 and b"target" in body, (st, body)
        assert srv.stop() == 0


@test
def check_matches_the_cli():
    need_path(WHEELS, "the wheel fixtures")
    names = sorted(n for n in os.listdir(WHEELS) if n.endswith(".whl"))
    assert len(names) >= 5, names
    cases = [(n, {}) for n in names]
    # A target and the install profile, as `check --target` takes them.
    cases += [(n, {"target": "python=3.12,torch=2.8.0+cu128,cxx11abi=0"}) for n in names
              if n.startswith("flash_attn")]
    verdicts = set()
    with Server("--workers", "2") as srv:
        for name, q in cases:
            with open(os.path.join(WHEELS, name), "rb") as f:
                data = f.read()
            st, h, body = request(check_url(srv, name, **q), data=data)
            rc, want = cli_json(data, name, *(["--target", q["target"]] if q else []))
            got = json.loads(body)
            assert h["Content-Type"] == "application/json", h
            assert got == want, (name, q, got, want)
            v = got["inputs"][0]["verdict"]
            verdicts.add(v)
            # The status says whether the body was read; the verdict is inside.
            assert st == (422 if rc == 2 else 200), (name, st, rc)
            assert (rc == 1) == (v == "fail"), (name, rc, v)
        # Bytes that are no wheel: 422 with the same document the CLI prints.
        junk = b"PK\x03\x04 not a zip" * 10
        st, _, body = request(check_url(srv, "junk-1.0-py3-none-any.whl"), data=junk)
        rc, want = cli_json(junk, "junk-1.0-py3-none-any.whl")
        assert rc == 2 and st == 422 and json.loads(body) == want, (st, rc, body)
        assert srv.stop() == 0
    # The comparison saw both answers, so it could have told them apart.
    assert {"pass", "fail"} <= verdicts, verdicts
    log = [json.loads(l) for l in srv.access.splitlines()]
    assert len(log) == len(cases) + 1, len(log)
    assert all(e["path"] == "/v1/check" and e["completed"] for e in log), log[:2]


@test
def body_over_the_cap():
    need_path(WHEELS, "the wheel fixtures")
    with Server("--max-body", "64K") as srv:
        # Content-Length past the cap: refused before the body is sent.
        head = (b"POST /v1/check?filename=a.whl HTTP/1.1\r\nHost: x\r\n"
                b"Content-Length: 10000000000\r\nConnection: close\r\n\r\n")
        status, text = raw(srv.port, head)
        assert status.startswith("HTTP/1.1 413"), status
        assert "--max-body" in text and "10000000000" in text, text
        # Chunked: counted, never held, refused once it ends.
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=TIMEOUT)
        chunks = (b"\0" * 16384 for _ in range(20))
        c.request("POST", "/v1/check?filename=a.whl", body=chunks, encode_chunked=True)
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        assert r.status == 413 and "327680 bytes" in text, (r.status, text)
        # Just under the cap is read and checked.
        st, _, body = request(check_url(srv, "a-1.0-py3-none-any.whl"), data=b"\0" * 65536)
        assert st == 422 and json.loads(body)["inputs"][0]["verdict"] == "error", st
        st, _, _ = request(srv.url("/healthz"))
        assert st == 200
        assert srv.stop() == 0


@test
def bearer_token():
    need_path(WHEELS, "the wheel fixtures")
    token = "s3cret-token-%d" % os.getpid()
    with open(os.path.join(WHEELS, "base-1.0-py3-none-any.whl"), "rb") as f:
        data = f.read()
    with Server("--token", token) as srv:
        url = check_url(srv, "base-1.0-py3-none-any.whl")
        st, h, body = request(url, data=data)
        assert st == 401 and h["WWW-Authenticate"] == "Bearer" and b"Bearer" in body, st
        st, _, _ = request(url, data=data, headers={"Authorization": "Bearer wrong"})
        assert st == 401, st
        st, _, _ = request(url, data=data, headers={"Authorization": "Bearer " + token + "x"})
        assert st == 401, st
        st, _, body = request(url, data=data, headers={"Authorization": "Bearer " + token})
        assert st == 200 and json.loads(body)["inputs"][0]["verdict"] == "pass", (st, body)
        st, _, _ = request(srv.url("/healthz"))
        assert st == 200, st
        assert srv.stop() == 0
    assert token not in srv.access and token not in srv.err.decode(), "token logged"
    assert [json.loads(l)["status"] for l in srv.access.splitlines()] == [401, 401, 401, 200, 200]


@test
def sigterm_finishes_the_request_under_way():
    need_path(WHEELS, "the wheel fixtures")
    with open(os.path.join(WHEELS, "base-1.0-py3-none-any.whl"), "rb") as f:
        data = f.read()
    srv = Server()
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=TIMEOUT)
    try:
        s.sendall(b"POST /v1/check?filename=base-1.0-py3-none-any.whl HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(data) + data[:100])
        # The server has the request (its log says nothing yet); then SIGTERM.
        time.sleep(0.5)
        srv.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert srv.proc.poll() is None, "exited with a request under way"
        # No new connection is taken.
        try:
            socket.create_connection(("127.0.0.1", srv.port), timeout=5).close()
            refused = False
        except OSError:
            refused = True
        assert refused, "a new connection was accepted after SIGTERM"
        s.sendall(data[100:])
        got = b""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    finally:
        s.close()
    assert got.startswith(b"HTTP/1.1 200"), got[:200]
    assert json.loads(got.partition(b"\r\n\r\n")[2])["inputs"][0]["verdict"] == "pass"
    rc = srv.stop()
    assert rc == 0, (rc, srv.err)


@test
def usage_errors():
    for args, want in ((["--listen", "nonsense"], "HOST:PORT"),
                       (["--listen", "127.0.0.1:99999"], "port"),
                       (["--max-body", "lots"], "--max-body"),
                       (["--workers", "0"], "--workers"),
                       (["extra"], "unexpected argument")):
        p = subprocess.run([WG, "serve"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=30)
        assert p.returncode == 2 and want in p.stderr.decode(), (args, p.returncode, p.stderr)
    p = subprocess.run([WG, "serve", "--help"], stdout=subprocess.PIPE, timeout=30)
    assert p.returncode == 0 and b"/v1/check" in p.stdout


if __name__ == "__main__":
    sys.exit(main())

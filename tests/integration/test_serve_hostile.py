#!/usr/bin/env python3
"""`wheelgate serve` against hostile clients (issue 13, point 5): raw-socket requests to a real
server on 127.0.0.1:0. Malformed request lines and headers, a header flood, a Content-Length
or a chunked body past --max-body, bad chunk sizes, a body shorter than its Content-Length, a
client that sends nothing, slowloris headers, 200 connections at once past --connections,
hostile multipart uploads, control characters and very long paths. Each case gets a clear
answer (or a bounded close), after each one the server still answers /healthz, every access-log
line stays valid JSON with the text escaped, and no credential reaches stdout or stderr.
Every wait is bounded in count and time.

Usage: test_serve_hostile.py WHEELGATE FIXTURES
Prints one line per test and closes with "N passed, N failed".
"""
import base64
import hashlib
import json
import os
import select
import socket
import sys
import threading
import time

import serve_util  # noqa: E402
from harness import main, need_path, test  # noqa: E402

WG, FIX = [os.path.abspath(a) for a in sys.argv[1:3]]
WHEELS = os.path.join(FIX, "wheels")
BOUND = 30  # seconds any one exchange may take
TOKEN = "hostile-S3CRET-%d" % os.getpid()
PASSWORD = "pypi-PW-S3CRET-%d" % os.getpid()
BASIC = base64.b64encode(("__token__:" + PASSWORD).encode()).decode()
BEARER = b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
GOOD = "purepkg-0.1-py3-none-any.whl"


class Server(serve_util.Server):
    """serve_util's server, with the token every case sends (it must never be logged)."""

    def __init__(self, *args):
        super().__init__(WG, "--token", TOKEN, *args)

    def alive(self):
        """The server answers GET /healthz with 200 "ok" on a fresh connection."""
        assert self.proc.poll() is None, "serve exited: %r" % self.err[-2000:]
        st, _, body, _ = exchange(self.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
                                  b"Connection: close\r\n\r\n", bound=10)
        assert (st, body) == (200, b"ok\n"), (st, body)


def parse(got):
    """(status or None, headers dict (lower-case names), body) of the first answer in got."""
    if b"\r\n\r\n" not in got:
        return None, {}, b""
    head, _, body = got.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    hdrs = {}
    for l in lines[1:]:
        k, _, v = l.partition(b":")
        hdrs[k.strip().lower().decode("latin1")] = v.strip().decode("latin1")
    if "content-length" in hdrs and hdrs["content-length"].isdigit():
        body = body[:int(hdrs["content-length"])]
    return status, hdrs, body


def read_answer(s, bound):
    """Reads until the server closes, or a whole answer (headers and Content-Length) came,
    or bound seconds passed. (bytes, closed)."""
    got = b""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        s.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except (ConnectionResetError, BrokenPipeError):
            return got, True
        if not chunk:
            return got, True
        got += chunk
        st, h, body = parse(got)
        if st is not None and st >= 200 and "content-length" in h and \
                len(got.partition(b"\r\n\r\n")[2]) >= int(h["content-length"]):
            return got, False
    return got, False


def exchange(port, data, bound=BOUND, shut=False):
    """Sends data on a fresh connection (then shuts the write side when shut); the first
    answer: (status or None, headers, body, closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=bound) as s:
        try:
            s.sendall(data)
            if shut:
                s.shutdown(socket.SHUT_WR)
        except (ConnectionResetError, BrokenPipeError):
            pass  # the server answered and closed before all was sent: the answer is read
        got, closed = read_answer(s, bound)
    st, h, body = parse(got)
    return st, h, body, closed


def log_lines(srv):
    """The access log, each line parsed; every one valid JSON, no control character."""
    out = []
    for line in srv.access.splitlines():
        assert not any(ord(c) < 0x20 or ord(c) == 0x7f for c in line), repr(line)
        out.append(json.loads(line))
    return out


def no_credentials(srv):
    for secret in (TOKEN, PASSWORD, BASIC):
        assert secret not in srv.access, "a credential in the access log"
        assert secret not in srv.err.decode("utf-8", "replace"), "a credential on stderr"


def wheel(name):
    with open(os.path.join(WHEELS, name), "rb") as f:
        return f.read()


def multipart(fields, boundary):
    """fields: (name, value) or (name, value, filename), as twine writes them."""
    out = b""
    for f in fields:
        out += b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"" + f[0] + b"\""
        if len(f) > 2:
            out += b"; filename=\"" + f[2] + b"\"\r\nContent-Type: application/octet-stream"
        out += b"\r\n\r\n" + f[1] + b"\r\n"
    return out + b"--" + boundary + b"--\r\n"


def upload_fields(data, filename):
    name, version = filename.split("-")[:2]
    return [(b":action", b"file_upload"), (b"protocol_version", b"1"),
            (b"name", name.encode()), (b"version", version.encode()),
            (b"filetype", b"bdist_wheel"), (b"pyversion", b"py3"),
            (b"metadata_version", b"2.1"),
            (b"md5_digest", hashlib.md5(data).hexdigest().encode()),
            (b"sha256_digest", hashlib.sha256(data).hexdigest().encode())]


def upload_request(body, boundary=b"hostileBoundary", ctype=None):
    ct = ctype or b"multipart/form-data; boundary=" + boundary
    return (b"POST /legacy/ HTTP/1.1\r\nHost: x\r\nContent-Type: " + ct + b"\r\n"
            b"Authorization: Basic " + BASIC.encode() + b"\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


@test
def malformed_request_lines_and_headers():
    with Server("--timeout", "3") as srv:
        cases = [b"GARBAGE\r\n\r\n",
                 b"GET\r\n\r\n",
                 b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n",
                 b"\x00\x01\x02 /healthz HTTP/1.1\r\n\r\n",
                 b"GET /healthz HTTP/1.1\r\nHost x\r\nno colon here\r\n\r\n",
                 b"POST /v1/check?filename=a.whl HTTP/1.1\r\nHost: x\r\n" + BEARER +
                 b"Content-Length: -5\r\n\r\n",
                 b"POST /v1/check?filename=a.whl HTTP/1.1\r\nHost: x\r\n" + BEARER +
                 b"Content-Length: 12abc\r\n\r\n"]
        for data in cases:
            st, _, _, closed = exchange(srv.port, data, bound=10, shut=True)
            # libmicrohttpd's own answers (400, 505; a request line it cannot parse at all is
            # closed without one) or ours (413 for a length that is no number): a 4xx/5xx
            # that is not a failure of the service, or a close.
            assert (st is not None and 400 <= st < 600 and st != 500) or \
                (st is None and closed), (data, st)
            srv.alive()
        assert srv.stop() == 0
    log_lines(srv)
    no_credentials(srv)


@test
def header_flood():
    with Server() as srv:
        # 2000 headers of 100 bytes (200 KB): more than a connection's buffer.
        flood = b"".join(b"X-Flood-%d: %s\r\n" % (i, b"v" * 90) for i in range(2000))
        st, _, _, _ = exchange(srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + BEARER + flood
                               + b"\r\n")
        assert st in (400, 413, 431), st
        srv.alive()
        # One header line longer than the buffer.
        st, _, _, _ = exchange(srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " +
                               b"a" * 100000 + b"\r\n\r\n")
        assert st in (400, 413, 431), st
        srv.alive()
        assert srv.stop() == 0
    log_lines(srv)
    no_credentials(srv)


@test
def bodies_past_the_cap():
    with Server("--max-body", "64K") as srv:
        # A Content-Length past the cap: 413 with the headers alone, the body never sent.
        t0 = time.monotonic()
        st, h, body, _ = exchange(srv.port, b"POST /v1/check?filename=a.whl HTTP/1.1\r\nHost: x"
                                  b"\r\n" + BEARER + b"Content-Length: 70000\r\n\r\n", bound=10)
        assert st == 413 and b"--max-body" in body and b"70000" in body, (st, body)
        assert time.monotonic() - t0 < 5
        # A Content-Length that overflows 64 bits.
        st, _, _, _ = exchange(srv.port, b"POST /v1/check?filename=a.whl HTTP/1.1\r\nHost: x\r\n"
                               + BEARER + b"Content-Length: 99999999999999999999999\r\n\r\n",
                               bound=10)
        assert st in (400, 413), st
        srv.alive()
        # A chunked body past the cap: counted, never held, 413 once it ends.
        chunk = b"4000\r\n" + b"\0" * 0x4000 + b"\r\n"
        st, _, body, _ = exchange(srv.port, b"POST /v1/check?filename=a.whl HTTP/1.1\r\nHost: x"
                                  b"\r\n" + BEARER + b"Transfer-Encoding: chunked\r\n\r\n" +
                                  chunk * 8 + b"0\r\n\r\n")
        assert st == 413 and b"131072 bytes" in body, (st, body)
        srv.alive()
        assert srv.stop() == 0
    log = log_lines(srv)
    assert [e["status"] for e in log if e["path"] == "/v1/check"][:1] == [413], log
    no_credentials(srv)


@test
def bad_chunk_sizes():
    # --timeout 3: libmicrohttpd 0.9.75 keeps a chunked body that stops mid-chunk, its client
    # half-closed, until the idle timeout (a bounded wait; the request is not completed).
    with Server("--max-body", "64K", "--timeout", "3") as srv:
        head = (b"POST /v1/check?filename=a-1.0-py3-none-any.whl HTTP/1.1\r\nHost: x\r\n" +
                BEARER + b"Transfer-Encoding: chunked\r\n\r\n")
        for chunks in (b"zz\r\nabc\r\n0\r\n\r\n",
                       b"-1\r\nabc\r\n0\r\n\r\n",
                       b"FFFFFFFFFFFFFFFFFFFF\r\nabc\r\n0\r\n\r\n",
                       b"10000000000000000\r\nabc",
                       b"3\r\nabcdef\r\n0\r\n\r\n",
                       b"3\r\nabc",
                       b"\r\n\r\n"):
            st, _, _, closed = exchange(srv.port, head + chunks, bound=10, shut=True)
            # A 4xx, or (for a body that stops) a close without an answer.
            assert (st is not None and 400 <= st < 500) or (st is None and closed), (chunks, st)
            srv.alive()
        assert srv.stop() == 0
    log_lines(srv)
    no_credentials(srv)


@test
def body_shorter_than_its_length():
    need_path(WHEELS, "the wheel fixtures")
    data = wheel(GOOD)
    # libmicrohttpd 0.9.75 may keep a body that stops, its client half-closed, until the idle
    # timeout (--timeout 3 here): the close is bounded, and nothing is answered or checked.
    with Server("--timeout", "3") as srv:
        st, _, _, closed = exchange(srv.port, b"POST /v1/check?filename=" + GOOD.encode() +
                                    b" HTTP/1.1\r\nHost: x\r\n" + BEARER +
                                    b"Content-Length: %d\r\n\r\n" % (len(data) + 1000) + data,
                                    bound=10, shut=True)
        assert st is None and closed, st
        srv.alive()
        assert srv.stop() == 0
    log = log_lines(srv)
    # The request was logged as not completed, with the bytes that came.
    cut = [e for e in log if e["path"] == "/v1/check"]
    assert len(cut) == 1 and cut[0]["completed"] is False and cut[0]["bytes"] == len(data), cut
    no_credentials(srv)


@test
def silent_and_slow_clients():
    with Server("--timeout", "2", "--connections", "16", "--workers", "2") as srv:
        # Connects and sends nothing: closed after --timeout (bounded).
        t0 = time.monotonic()
        with socket.create_connection(("127.0.0.1", srv.port), timeout=BOUND) as s:
            got, closed = read_answer(s, 15)
        waited = time.monotonic() - t0
        assert closed and 1.5 <= waited < 10, (closed, waited, got)
        srv.alive()
        # Slowloris: 8 clients trickle a header byte every 0.5 s; meanwhile the server
        # answers others, and once they stop trickling they are closed after --timeout.
        slow = [socket.create_connection(("127.0.0.1", srv.port), timeout=BOUND)
                for _ in range(8)]
        text = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 8
        for i in range(len(text)):
            if i % 2 == 0:
                for s in slow:
                    s.sendall(text[i:i + 2])
            if i % 8 == 0:
                srv.alive()
            time.sleep(0.25)
        t0 = time.monotonic()
        for s in slow:
            got, closed = read_answer(s, 15)
            assert closed, got
            s.close()
        assert time.monotonic() - t0 < 15
        srv.alive()
        assert srv.stop() == 0
    log_lines(srv)
    no_credentials(srv)


@test
def slowloris_closed_by_header_timeout():
    """Clients that keep trickling header bytes hold every connection slot; --header-timeout
    closes them though they never stop, so a waiting client is answered (without it, that
    client waits for --timeout, here 60 s, and the trickle resets even that)."""
    with Server("--timeout", "60", "--header-timeout", "2", "--connections", "8",
                "--workers", "2") as srv:
        slow = [socket.create_connection(("127.0.0.1", srv.port), timeout=BOUND)
                for _ in range(8)]
        closed_at = {}
        stop = time.monotonic() + 12
        t0 = time.monotonic()

        def trickle():
            i = 0
            while time.monotonic() < stop and len(closed_at) < len(slow):
                for k, s in enumerate(slow):
                    if k in closed_at:
                        continue
                    try:
                        s.sendall(b"GET /healthz HTTP/1.1\r\nX: "[i:i + 1] or b"x")
                    except OSError:
                        closed_at[k] = time.monotonic() - t0
                time.sleep(0.2)
                i += 1
        th = threading.Thread(target=trickle)
        th.start()
        time.sleep(0.5)
        # The slots are all taken: this one waits in the listen queue until they are closed.
        ts = time.monotonic()
        st, _, body, _ = exchange(srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
                                  b"Connection: close\r\n\r\n", bound=30)
        waited = time.monotonic() - ts
        th.join(20)
        for s in slow:
            s.close()
        assert st == 200, (st, body)
        assert waited < 6, waited
        assert len(closed_at) == len(slow), closed_at
        assert max(closed_at.values()) < 8, closed_at
        assert srv.stop() == 0
    assert b"closed for taking too long" in srv.err, srv.err
    log_lines(srv)


@test
def connections_past_the_limit():
    with Server("--connections", "16", "--workers", "2", "--timeout", "5") as srv:
        results = []
        lock = threading.Lock()

        def client():
            try:
                st, _, body, _ = exchange(srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
                                          b"Connection: close\r\n\r\n", bound=20)
            except OSError as e:
                st, body = None, repr(e).encode()
            with lock:
                results.append((st, body))

        threads = [threading.Thread(target=client) for _ in range(200)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(40)
        assert not any(t.is_alive() for t in threads), "a client still waiting after 40 s"
        assert time.monotonic() - t0 < 45
        # Each one answered, or refused (closed at once): none hangs; and the server served
        # some while refusing the rest.
        ok = [r for r in results if r[0] == 200]
        assert len(results) == 200 and len(ok) >= 16, (len(results), len(ok))
        assert all(r[0] in (200, None, 503) for r in results), \
            set(r[0] for r in results)
        srv.alive()
        assert srv.stop() == 0
    log_lines(srv)


@test
def held_connections_past_the_limit():
    # 200 clients each holding a request line without its headers' end: libmicrohttpd takes
    # --connections of them, the rest wait in the listen queue; each one taken is closed after
    # --timeout, so all 200 are let go in bounded time (about 200 / 16 rounds of 1 s), and then
    # the server answers. (While they are held, new clients wait too: a gate on the open
    # internet needs a reverse proxy with a header deadline in front.)
    with Server("--connections", "16", "--workers", "2", "--timeout", "1") as srv:
        socks = []
        try:
            for _ in range(200):
                s = socket.create_connection(("127.0.0.1", srv.port), timeout=BOUND)
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                socks.append(s)
            t0 = time.monotonic()
            open_ = set(socks)
            while open_ and time.monotonic() - t0 < 90:
                ready, _, _ = select.select(list(open_), [], [], 1.0)
                for s in ready:
                    try:
                        got = s.recv(4096)
                    except OSError:
                        got = b""
                    assert not got or got.startswith(b"HTTP/1.1 4"), got[:100]
                    if not got:
                        open_.discard(s)
            assert not open_, "%d of 200 held connections still open after 90 s" % len(open_)
        finally:
            for s in socks:
                s.close()
        srv.alive()
        assert srv.stop() == 0
    log_lines(srv)


def upload_gate(body, want_words, **kw):
    """An upload the gate refuses: 400, a text body naming the problem, upstream never
    contacted (it is a closed port: contacting it would give 502)."""
    with Server("--upstream", "http://127.0.0.1:9", "--max-body", "1M") as srv:
        st, h, text, _ = exchange(srv.port, upload_request(body, **kw))
        srv.alive()
        assert srv.stop() == 0
    assert st == 400, (st, text[:300])
    assert h.get("content-type", "").startswith("text/plain"), h
    low = text.decode("utf-8", "replace").lower()
    assert any(w in low for w in want_words), (want_words, text[:300])
    assert not any(b < 0x20 and b not in (0x0a, 0x09) for b in text), text
    log_lines(srv)
    no_credentials(srv)


@test
def upload_broken_boundary():
    need_path(WHEELS, "the wheel fixtures")
    data = wheel(GOOD)
    body = multipart(upload_fields(data, GOOD) + [(b"content", data, GOOD.encode())],
                     b"theBoundaryUsed")
    upload_gate(body, ("multipart", "boundary", "content"), boundary=b"notTheBoundaryUsed")


@test
def upload_missing_content():
    need_path(WHEELS, "the wheel fixtures")
    data = wheel(GOOD)
    upload_gate(multipart(upload_fields(data, GOOD), b"hostileBoundary"), ("content",))


@test
def upload_two_contents():
    need_path(WHEELS, "the wheel fixtures")
    data = wheel(GOOD)
    body = multipart(upload_fields(data, GOOD) + [(b"content", data, GOOD.encode())] * 2,
                     b"hostileBoundary")
    upload_gate(body, ("content",))


@test
def upload_hostile_filename():
    need_path(WHEELS, "the wheel fixtures")
    data = wheel(GOOD)
    name = b"../../etc/\x1b[31mpurepkg\x07-0.1-py3-none-any.whl"
    body = multipart(upload_fields(data, GOOD) + [(b"content", data, name)], b"hostileBoundary")
    upload_gate(body, ("filename", "name"))


@test
def hostile_paths_in_the_log():
    with Server() as srv:
        paths = [b"/a%00b", b"/%0a%0d%1b[31mred%07", b"/x\x01\x7f\x1b[2J",
                 b"/%e2%80%ae-rtl-%ff%fe", b"/" + b"long/" * 2000,
                 b"/" + "é".encode() * 200 + b"%ff"]
        for p in paths:
            st, _, _, _ = exchange(srv.port, b"GET " + p + b" HTTP/1.1\r\nHost: x\r\n" + BEARER +
                                   b"Connection: close\r\n\r\n", bound=10)
            assert st is not None and 400 <= st < 500, (p[:40], st)
            srv.alive()
            st, _, _, _ = exchange(srv.port, b"POST /v1" + p + b" HTTP/1.1\r\nHost: x\r\n" +
                                   BEARER + b"Content-Length: 0\r\nConnection: close\r\n\r\n",
                                   bound=10)
            assert st is not None and 400 <= st < 500, (p[:40], st)
        srv.alive()
        assert srv.stop() == 0
    log = log_lines(srv)
    # Each logged path came through escaped: no control character survived (log_lines), and
    # the control characters sent are shown as escapes.
    shown = [e["path"] for e in log if e["path"] not in ("/healthz",)]
    assert shown and any("\\x1b" in p or "\\x0a" in p or "\\x01" in p for p in shown), shown
    assert all(len(p) <= 4 * 256 for p in shown), [len(p) for p in shown]
    no_credentials(srv)


if __name__ == "__main__":
    sys.exit(main())

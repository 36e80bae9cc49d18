#!/usr/bin/env python3
"""`wheelgate serve` and SIGHUP (issue 26, point 4): the config file, the rules and the fleet
read again while requests are under way. Requests that started before the signal (a check
and an upload whose bodies are still coming) finish with the configuration they started
with: its rules, its fleet, its upstream; the next ones get the new one. A new configuration
with a mistake (the YAML, a rule file) is refused with the file and line on stderr, and the
old one keeps serving. Labelled `threads`: scripts/test.sh --tsan runs it on the
ThreadSanitizer build (a race ends the server with exit 66, and stop() must see 0).
The server runs on 127.0.0.1 with port 0; every wait is bounded in count and time.

Usage: test_serve_reload.py WHEELGATE FIXTURES
Prints one line per test and closes with "N passed, N failed".
"""
import hashlib
import http.server
import json
import os
import signal
import socket
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_util  # noqa: E402
from harness import main, need_path, test  # noqa: E402
from serve_util import TIMEOUT, request  # noqa: E402

WG, FIX = [os.path.abspath(a) for a in sys.argv[1:3]]
WHEELS = os.path.join(FIX, "wheels")
HOLLOW = "hollow-1.0-py3-none-any.whl"  # WG-HOL-001 under the publish profile, and only it
GOOD = "base-1.0-py3-none-any.whl"      # passes the publish profile
# Passes the publish profile; fails a target with the old C++ ABI (cxx11abi=0).
FA_TRUE = "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
NEW = "python=3.12,torch=2.8.0+cu128,cxx11abi=1"
OLD = "python=3.12,torch=2.8.0+cu128,cxx11abi=0"
TMP = tempfile.mkdtemp(prefix="wg-serve-reload-")
ENV = dict(os.environ, XDG_CACHE_HOME=os.path.join(TMP, "cache"))


def wheel(name):
    need_path(os.path.join(WHEELS, name), "the wheel fixtures")
    with open(os.path.join(WHEELS, name), "rb") as f:
        return f.read()


def write(path, text):
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)  # as an editor or a config manager replaces a file
    return path


class Server(serve_util.Server):
    def __init__(self, *args):
        super().__init__(WG, *args, env=ENV)

    def hup(self):
        self.proc.send_signal(signal.SIGHUP)


class Upstream:
    """A repository on loopback that answers every upload 200 and records its path."""

    def __init__(self, name):
        seen = self.seen = []

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(n)
                seen.append(self.path)
                body = ("stored by %s\n" % name).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self):
        return "http://127.0.0.1:%d" % self.httpd.server_address[1]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def multipart(filename, data):
    b = "wgreload%08x" % (hash(filename) & 0xffffffff)
    name, version = filename.split("-")[:2]
    out = b""
    for k, v in [(":action", "file_upload"), ("protocol_version", "1"), ("name", name),
                 ("version", version), ("filetype", "bdist_wheel"),
                 ("sha256_digest", hashlib.sha256(data).hexdigest())]:
        out += b"--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n" % (
            b.encode(), k.encode(), v.encode())
    out += (b"--%s\r\nContent-Disposition: form-data; name=\"content\"; filename=\"%s\"\r\n"
            b"Content-Type: application/octet-stream\r\n\r\n" % (b.encode(), filename.encode()))
    out += data + b"\r\n--%s--\r\n" % b.encode()
    return out, "multipart/form-data; boundary=" + b


class Slow:
    """A POST whose headers and first half of the body are sent now, the rest on finish():
    the request is under way (its request line read) until then."""

    def __init__(self, port, path, body, ctype="application/octet-stream"):
        self.rest = body[len(body) // 2:]
        self.s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.s.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n"
                       b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                       % (path.encode(), ctype.encode(), len(body)) + body[:len(body) // 2])

    def finish(self):
        """(status, headers as a dict of lower-case names, body)."""
        self.s.sendall(self.rest)
        got = b""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            chunk = self.s.recv(65536)
            if not chunk:
                break
            got += chunk
        self.s.close()
        head, _, body = got.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        assert lines and lines[0].startswith("HTTP/1."), got[:300]
        hdrs = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip()
                for l in lines[1:] if ":" in l}
        return int(lines[0].split()[1]), hdrs, body


def under_way(srv, n):
    """Waits (at most 30 s) until /metrics counts n requests under way besides its own."""
    deadline = time.monotonic() + 30
    while True:
        _, _, text = request(srv.url("/metrics"))
        got = [int(l.split()[1]) for l in text.decode().splitlines()
               if l.startswith("wheelgate_in_flight ")]
        if got and got[0] - 1 >= n:
            return
        assert time.monotonic() < deadline, "not %d requests under way: %r" % (n, got)
        time.sleep(0.05)


def check(srv, name, **query):
    url = srv.url("/v1/check?" + urllib.parse.urlencode(dict(filename=name, **query)))
    st, _, body = request(url, wheel(name))
    return st, json.loads(body)


def first_config(up):
    return ("upstream: %s\nmin_rate: 0\nworkers: 2\ntargets:\n  gen-one:\n    spec: %s\n"
            % (up, NEW))


def second_config(up, extra=""):
    # WG-HOL-001 off, another fleet, another upstream: each visible in an answer.
    return ("upstream: %s\nmin_rate: 0\nworkers: 2\ndisable: [WG-HOL-001]\n"
            "targets:\n  gen-two:\n    spec: %s\n    gpus: [H100]\n%s" % (up, OLD, extra))


@test
def sighup_lets_requests_under_way_finish_with_their_configuration():
    hollow, fa, good = wheel(HOLLOW), wheel(FA_TRUE), wheel(GOOD)
    body, ctype = multipart(GOOD, good)
    with Upstream("one") as up1, Upstream("two") as up2:
        cfg = write(os.path.join(TMP, "serve.yaml"), first_config(up1.url()))
        with Server("--config", cfg) as srv:
            # Three requests under way: a check with the rules, a check with the fleet, and
            # an upload with the upstream, each body half sent.
            a = Slow(srv.port, "/v1/check?filename=%s&profile=publish" % HOLLOW, hollow)
            b = Slow(srv.port, "/v1/check?filename=%s" % urllib.parse.quote(FA_TRUE), fa)
            c = Slow(srv.port, "/legacy/", body, ctype)
            under_way(srv, 3)
            write(cfg, second_config(up2.url()))
            srv.hup()
            said = srv.wait_err("SIGHUP: configuration 2 in use")
            assert "replacing 1; 3 request(s) under way keep the configuration they started " \
                "with" in said, said
            # Still serving across the reload.
            st, _, _ = request(srv.url("/healthz"))
            assert st == 200, st
            # The ones under way: configuration 1.
            st, _, doc = a.finish()
            doc = json.loads(doc)
            assert st == 200 and doc["inputs"][0]["verdict"] == "fail", (st, doc)
            assert [f["rule"] for f in doc["inputs"][0]["findings"]
                    if f["severity"] == "error"] == ["WG-HOL-001"], doc
            st, _, doc = b.finish()
            doc = json.loads(doc)
            assert st == 200 and doc["schema"] == "wheelgate.fleet/1", (st, doc)
            assert [t["name"] for t in doc["targets"]] == ["gen-one"], doc["targets"]
            assert doc["verdict"] == "pass", doc  # the new ABI: the wheel's own
            st, h, text = c.finish()
            assert st == 200 and b"stored by one" in text, (st, text)
            assert up1.seen == ["/legacy/"] and up2.seen == [], (up1.seen, up2.seen)
            # The next ones: configuration 2 (WG-HOL-001 off, the old-ABI target, upstream 2).
            st, doc = check(srv, HOLLOW, profile="publish")
            assert st == 200 and doc["inputs"][0]["verdict"] == "pass", doc
            st, doc = check(srv, FA_TRUE)
            assert [t["name"] for t in doc["targets"]] == ["gen-two"], doc["targets"]
            assert doc["verdict"] == "fail" and doc["first_target"] == "gen-two", doc
            st, h, text = Slow(srv.port, "/legacy/", body, ctype).finish()
            assert st == 200 and b"stored by two" in text, (st, text)
            assert up2.seen == ["/legacy/"], up2.seen
            # A second reload of the same file: configuration 3, the same answers.
            srv.hup()
            srv.wait_err("SIGHUP: configuration 3 in use")
            st, doc = check(srv, HOLLOW, profile="publish")
            assert st == 200 and doc["inputs"][0]["verdict"] == "pass", doc
            assert srv.stop() == 0, srv.err.decode()[-3000:]
        log = [json.loads(l) for l in srv.access.splitlines()]
        assert all(e["completed"] for e in log), log
        assert len([e for e in log if e["path"] != "/metrics"]) == 8, log


@test
def sighup_with_a_broken_configuration_keeps_the_old_one():
    hollow = wheel(HOLLOW)
    bad_rule = os.path.join(TMP, "bad-rules")
    os.makedirs(bad_rule, exist_ok=True)
    write(os.path.join(bad_rule, "broken.yaml"), "rules:\n  - id: WG-USR-001\n    check: [\n")
    with Upstream("one") as up1:
        cfg = write(os.path.join(TMP, "broken.yaml"), first_config(up1.url()))
        with Server("--config", cfg) as srv:
            slow = Slow(srv.port, "/v1/check?filename=%s&profile=publish" % HOLLOW, hollow)
            under_way(srv, 1)
            cases = [  # the new file, what stderr must say of it
                (first_config(up1.url()) + "workerz: 3\n", "broken.yaml:7:1: unknown key 'workerz'"),
                ("upstream: [a\n", "broken.yaml:2:1: "),
                (first_config(up1.url()).replace(NEW, "python=three"), "broken.yaml:6:11: "
                 "targets: gen-one: spec: "),
                # A rule file (the path relative to the config's directory): its own line.
                (second_config(up1.url(), "rules: [bad-rules]\n"),
                 "rules: %s:4:1: " % os.path.join(bad_rule, "broken.yaml")),
            ]
            for text, said in cases:
                write(cfg, text)
                srv.hup()
                out = srv.wait_err("stays in use")
                assert said in out, (said, out)
                assert "the new configuration is refused; configuration 1 stays in use" in out, out
                assert "in use (" not in out, out  # no generation swapped in
                # Still serving, with configuration 1: WG-HOL-001 on, the first fleet.
                st, doc = check(srv, HOLLOW, profile="publish")
                assert st == 200 and doc["inputs"][0]["verdict"] == "fail", doc
                st, doc = check(srv, FA_TRUE)
                assert [t["name"] for t in doc["targets"]] == ["gen-one"], doc
            # The request under way all along finishes, with configuration 1.
            st, _, doc = slow.finish()
            assert st == 200 and json.loads(doc)["inputs"][0]["verdict"] == "fail", doc
            # A setting that takes a restart: said, kept; the rest of the file is taken.
            write(cfg, second_config(up1.url()).replace("workers: 2", "workers: 3"))
            srv.hup()
            out = srv.wait_err("SIGHUP: configuration 2 in use")
            assert "workers 2 -> 3 takes a restart; 2 kept" in out, out
            st, doc = check(srv, HOLLOW, profile="publish")
            assert st == 200 and doc["inputs"][0]["verdict"] == "pass", doc
            assert srv.stop() == 0, srv.err.decode()[-3000:]


@test
def reloads_while_checks_run():
    """Checks from four threads while the configuration is swapped 12 times: every answer is
    whole and comes from one configuration (its rules and its fleet agree), and both are seen.
    Under ThreadSanitizer a race in the swap ends the server (exit 66)."""
    hollow, fa = wheel(HOLLOW), wheel(FA_TRUE)
    with Upstream("one") as up1, Upstream("two") as up2:
        cfg = write(os.path.join(TMP, "load.yaml"), first_config(up1.url()))
        texts = [first_config(up1.url()), second_config(up2.url())]
        with Server("--config", cfg) as srv:
            stop, seen, errors = threading.Event(), [], []

            def client():
                while not stop.is_set():
                    try:
                        st, doc = check(srv, HOLLOW)  # the fleet and the publish rules
                        assert st == 200 and doc["schema"] == "wheelgate.fleet/1", (st, doc)
                        names = [t["name"] for t in doc["targets"]]
                        seen.append((tuple(names), doc["verdict"]))
                        st, _, _ = request(srv.url("/v1/check?filename=%s&profile=publish"
                                                   % HOLLOW), hollow)
                        assert st == 200, st
                        st, _, _ = request(srv.url("/v1/check?filename=%s"
                                                   % urllib.parse.quote(FA_TRUE)), fa)
                        assert st == 200, st
                    except Exception as e:  # noqa: BLE001 (reported below)
                        errors.append(repr(e))
                        return

            threads = [threading.Thread(target=client) for _ in range(4)]
            for t in threads:
                t.start()
            try:
                for i in range(12):
                    write(cfg, texts[(i + 1) % 2])
                    srv.hup()
                    srv.wait_err("SIGHUP: configuration %d in use" % (i + 2))
                    time.sleep(0.1)
            finally:
                stop.set()
                for t in threads:
                    t.join(TIMEOUT)
            assert not errors, errors[:3]
            # A /v1/check without a profile is the fleet alone: the target's name tells the
            # configuration, and the verdict must be that configuration's: WG-HOL-001 is on
            # in the first (fail), off in the second (pass). A mix is a torn generation.
            kinds = set(seen)
            assert kinds <= {(("gen-one",), "fail"), (("gen-two",), "pass")}, kinds
            assert len(kinds) == 2, kinds
            assert srv.stop() == 0, srv.err.decode()[-3000:]
        log = [json.loads(l) for l in srv.access.splitlines()]
        assert all(e["completed"] and e["status"] == 200 for e in log), \
            [e for e in log if not e["completed"] or e["status"] != 200][:3]


if __name__ == "__main__":
    sys.exit(main())

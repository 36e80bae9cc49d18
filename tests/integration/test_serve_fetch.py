#!/usr/bin/env python3
"""`wheelgate serve`: POST /v1/check/url (issue 13, point 1). A real `wheelgate serve` on
127.0.0.1:0 fetches artifacts from a loopback HTTP server of this test (the repository):
the answer for a good and a bad wheel equals `wheelgate check --format json` for the same
bytes; the repository sees the fetch token as a bearer token; a 404 gives 502 naming the
status; a repository that never answers gives 504 within --upstream-timeout; a URL outside
--fetch-allow, a non-http scheme or a URL with a user in it is refused; an artifact over
--max-body is refused; a redirect to another host is not followed (and the token never goes
there); no --fetch-allow at all gives 403. Every wait is bounded in count and time.

Usage: test_serve_fetch.py WHEELGATE FIXTURES
"""
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_serve  # noqa: E402  (its Server, request and cli_json; it reads sys.argv[1:3])
from harness import main, need_path, test  # noqa: E402

harness.TESTS.clear()  # test_serve's own tests run under ctest `serve`, not here
from test_serve import Server, cli_json, request  # noqa: E402

WHEELS = test_serve.WHEELS
TOKEN = "fetch-tok-3f9a"
GOOD = "base-1.0-py3-none-any.whl"
BAD = "badelf-1.0-cp312-cp312-linux_x86_64.whl"


class Repo:
    """A loopback repository: GET /repo/NAME serves WHEELS/NAME; /slow/ never answers;
    /redir/NAME redirects to Location given by the test; records every request's path and
    Authorization header."""

    def __init__(self):
        self.seen = []
        self.location = None
        self.release = threading.Event()
        repo = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                repo.seen.append((self.path, self.headers.get("Authorization")))
                if self.path.startswith("/slow/"):
                    repo.release.wait(30)
                    return
                if self.path.startswith("/redir/"):
                    self.send_response(302)
                    self.send_header("Location", repo.location)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.path.startswith("/big/"):
                    self.send_response(200)
                    self.send_header("Content-Length", str(4 << 20))
                    self.end_headers()
                    try:
                        for _ in range(64):
                            self.wfile.write(b"\0" * 65536)
                    except OSError:
                        pass
                    return
                if self.path.startswith("/bigchunked/"):
                    # No Content-Length: the service must stop it by counting.
                    self.send_response(200)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    try:
                        for _ in range(64):
                            self.wfile.write(b"\0" * 65536)
                    except OSError:
                        pass
                    self.close_connection = True
                    return
                name = urllib.parse.unquote(self.path.rsplit("/", 1)[-1])
                path = os.path.join(WHEELS, name)
                if not self.path.startswith("/repo/") or not os.path.isfile(path):
                    body = b'{"errors":[{"status":404,"message":"File not found."}]}'
                    self.send_response(404)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                with open(path, "rb") as f:
                    data = f.read()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path, host="127.0.0.1"):
        return "http://%s:%d%s" % (host, self.port, path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def post(srv, obj, headers=None):
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    return request(srv.url("/v1/check/url"), data=json.dumps(obj).encode(), headers=h)


def verdict(body):
    doc = json.loads(body) if isinstance(body, bytes) else body
    return doc["inputs"][0]["verdict"]


@test
def good_and_bad_wheels_match_the_cli():
    need_path(WHEELS, "the wheel fixtures")
    with Repo() as repo, Server("--fetch-allow", repo.url("/repo/"), "--fetch-token",
                                TOKEN) as srv:
        verdicts = {}
        for name in (GOOD, BAD):
            st, _, body = post(srv, {"url": repo.url("/repo/" + name)})
            assert st == 200, (name, st, body)
            got = json.loads(body)
            with open(os.path.join(WHEELS, name), "rb") as f:
                rc, want = cli_json(f.read(), name)
            # The same document, findings and verdict included, as the CLI's for the bytes.
            assert got == want, (name, got, want)
            assert (rc == 1) == (verdict(got) == "fail"), (name, rc)
            verdicts[name] = verdict(got)
        assert verdicts == {GOOD: "pass", BAD: "fail"}, verdicts
        # The repository saw the token as a bearer token on every fetch.
        assert [a for _, a in repo.seen] == ["Bearer " + TOKEN] * 2, repo.seen
        # The filename given overrides the URL's last segment (percent-decoded by default).
        st, _, body = post(srv, {"url": repo.url("/repo/" + GOOD.replace("-", "%2D", 1))})
        assert st == 200 and verdict(body) == "pass", (st, body)
        assert json.loads(body)["inputs"][0]["path"] == GOOD, body
        other = "other-2.0-py3-none-any.whl"
        st, _, body = post(srv, {"url": repo.url("/repo/" + GOOD), "filename": other})
        assert st == 200 and json.loads(body)["inputs"][0]["path"] == other, body
        st, _, body = post(srv, {"url": repo.url("/repo/" + GOOD), "profile": "nope"})
        assert st == 400 and b"profile" in body, (st, body)
        rc = srv.stop()
    assert rc == 0, (rc, srv.err)
    assert TOKEN not in srv.access and TOKEN.encode() not in srv.err, "the token was logged"
    lines = [json.loads(l) for l in srv.access.splitlines()]
    assert [l["verdict"] for l in lines[:2]] == ["pass", "fail"], lines


@test
def repository_errors_and_timeouts():
    need_path(WHEELS, "the wheel fixtures")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # nothing listens there once closed
    with Repo() as repo, Server("--fetch-allow", repo.url("/"), "--fetch-token", TOKEN,
                                "--fetch-allow", "http://127.0.0.1:%d/" % dead,
                                "--upstream-timeout", "2", "--connect-timeout", "2") as srv:
        st, _, body = post(srv, {"url": repo.url("/repo/missing-1.0-py3-none-any.whl")})
        assert st == 502 and b"HTTP 404" in body and b"missing-1.0" in body, (st, body)
        assert b"File not found" in body and TOKEN.encode() not in body, body
        t0 = time.monotonic()
        st, _, body = post(srv, {"url": repo.url("/slow/x-1.0-py3-none-any.whl")})
        took = time.monotonic() - t0
        assert st == 504 and b"/slow/x-1.0" in body and b"in time" in body, (st, body)
        assert 1.5 < took < 10, took
        st, _, body = post(srv, {"url": "http://127.0.0.1:%d/x-1.0-py3-none-any.whl" % dead})
        assert st == 502 and b"cannot fetch" in body and str(dead).encode() in body, (st, body)
        # The service still answers after all that.
        assert request(srv.url("/healthz"))[0] == 200
        repo.release.set()
        rc = srv.stop()
    assert rc == 0, (rc, srv.err)
    assert TOKEN not in srv.access and TOKEN.encode() not in srv.err, "the token was logged"


@test
def refused_urls():
    need_path(WHEELS, "the wheel fixtures")
    with Repo() as repo:
        with Server() as srv:
            st, _, body = post(srv, {"url": repo.url("/repo/" + GOOD)})
            assert st == 403 and b"--fetch-allow" in body, (st, body)
        with Server("--fetch-allow", repo.url("/repo")) as srv:
            cases = [
                ({"url": repo.url("/other/" + GOOD)}, 403, b"--fetch-allow"),
                # A prefix ends at a '/': /repository/ is not under /repo.
                ({"url": repo.url("/repository/" + GOOD)}, 403, b"--fetch-allow"),
                # Dot segments are resolved before the prefix is compared.
                ({"url": repo.url("/repo/../other/" + GOOD)}, 403, b"--fetch-allow"),
                ({"url": repo.url("/repo/%2e%2e/other/" + GOOD)}, 400, b"encoded"),
                ({"url": "ftp://127.0.0.1:%d/repo/%s" % (repo.port, GOOD)}, 400, b"http"),
                ({"url": "file:///etc/passwd"}, 400, b"http"),
                ({"url": "http://u:p@127.0.0.1:%d/repo/%s" % (repo.port, GOOD)}, 400, b"user"),
                ({"url": repo.url("/repo/")}, 400, b"filename"),
                ({"url": repo.url("/repo/" + GOOD), "filename": "a/b.whl"}, 400, b"filename"),
                ({"url": 5}, 400, b"url"),
                ({}, 400, b"url"),
                ({"url": repo.url("/repo/" + GOOD), "target": 3}, 400, b"target"),
            ]
            for obj, want, text in cases:
                st, _, body = post(srv, obj)
                assert st == want and text in body, (obj, st, body)
            st, _, body = request(srv.url("/v1/check/url"), data=b"{not json")
            assert st == 400 and b"JSON" in body, (st, body)
            st, _, body = request(srv.url("/v1/check/url"), data=b"[1]")
            assert st == 400 and b"JSON object" in body, (st, body)
            # None of these reached the repository.
            assert repo.seen == [], repo.seen
            assert srv.proc.poll() is None
            assert request(srv.url("/healthz"))[0] == 200


@test
def oversized_artifact():
    need_path(WHEELS, "the wheel fixtures")
    with Repo() as repo, Server("--fetch-allow", repo.url("/"), "--max-body", "1048576") as srv:
        for path in ("/big/x-1.0-py3-none-any.whl", "/bigchunked/x-1.0-py3-none-any.whl"):
            st, _, body = post(srv, {"url": repo.url(path)})
            assert st == 413 and b"larger than the limit of 1048576" in body, (path, st, body)
        # A wheel under the cap still passes after that.
        st, _, body = post(srv, {"url": repo.url("/repo/" + GOOD)})
        assert st == 200 and verdict(body) == "pass", (st, body)


@test
def redirects():
    need_path(WHEELS, "the wheel fixtures")
    with Repo() as repo, Repo() as other, Server(
            "--fetch-allow", repo.url("/"), "--fetch-token", TOKEN) as srv:
        # To another host (another origin, not allowed): not followed, the other host unseen.
        repo.location = other.url("/repo/" + GOOD)
        st, _, body = post(srv, {"url": repo.url("/redir/" + GOOD)})
        assert st == 502 and b"not followed" in body and b"302" in body, (st, body)
        assert other.seen == [], other.seen
        # Within the allowed prefix: followed, with the token (the same origin).
        repo.location = repo.url("/repo/" + GOOD)
        st, _, body = post(srv, {"url": repo.url("/redir/" + GOOD)})
        assert st == 200 and verdict(body) == "pass", (st, body)
        assert repo.seen[-1] == ("/repo/" + GOOD, "Bearer " + TOKEN), repo.seen
    # Another origin that is allowed too: followed, but without the token.
    with Repo() as repo, Repo() as other, Server(
            "--fetch-allow", repo.url("/"), "--fetch-allow", other.url("/"),
            "--fetch-token", TOKEN) as srv:
        repo.location = other.url("/repo/" + GOOD)
        st, _, body = post(srv, {"url": repo.url("/redir/" + GOOD)})
        assert st == 200 and verdict(body) == "pass", (st, body)
        assert repo.seen == [("/redir/" + GOOD, "Bearer " + TOKEN)], repo.seen
        assert other.seen == [("/repo/" + GOOD, None)], other.seen
        # A loop of redirects is bounded.
        repo.location = repo.url("/redir/" + GOOD)
        st, _, body = post(srv, {"url": repo.url("/redir/" + GOOD)})
        assert st == 502 and b"redirects" in body, (st, body)


@test
def the_token_guards_v1_check_url():
    need_path(WHEELS, "the wheel fixtures")
    with Repo() as repo, Server("--fetch-allow", repo.url("/"), "--token", "svc") as srv:
        st, _, body = post(srv, {"url": repo.url("/repo/" + GOOD)})
        assert st == 401, (st, body)
        assert repo.seen == [], repo.seen
        st, _, body = post(srv, {"url": repo.url("/repo/" + GOOD)},
                           {"Authorization": "Bearer svc"})
        assert st == 200, (st, body)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The examples under docs/integrations/ (issue 13, point 2), each run as far as this machine
allows, against a real `wheelgate serve` on 127.0.0.1:0 and a loopback stand-in for
Artifactory's REST API (this test's HTTP server: GET of artifacts, PUT
/api/storage/...?properties=, POST /api/move/...):
  - artifactory-worker: the TypeScript worker compiled with tsc (typescript pinned, installed
    into the build tree) and run under node with a context whose clients are real HTTP
    clients: a good wheel gets wheelgate.verdict=pass and stays; a bad one gets fail, its
    rule ids, and is moved to quarantine.
  - artifactory-plugin: the Groovy plugin compiled with groovyc against stubs of the
    Artifactory classes it imports, then run by a harness that evaluates it as Artifactory
    does (afterCreate, beforeDownload) over a repository tree on disk.
  - jfrog-cli: stage-and-promote.sh with a stub `jf` that records its arguments and moves
    files between directories standing for the repositories.
  - systemd: the unit passes `systemd-analyze verify` and `security --offline`.
Each Artifactory example (worker, plugin, stage-and-promote.sh through WHEELGATE_URL) also
runs (issue 26, point 1) against a `wheelgate serve` with a fleet (`targets:` in its config,
answering the `wheelgate.fleet/1` envelope): a wheel that passes one target and fails the
other is quarantined under policy `every` with the failing target's rules, kept under `any`;
a wheel that passes both is kept; an unreadable wheel (422) is quarantined. And against
answers it cannot read (wheelgate down, a 500, an unknown schema, not JSON, no answer within
the timeout; for the script also a local `wheelgate check` whose report is missing): the
wheel is quarantined (and its download refused) by default, kept but marked `unchecked` with
a warning when the example's setting says warn; never kept as if it had passed.
The expected verdicts and rule ids come from `wheelgate check --format json` on the same bytes
(with `--target SPEC` for each target of a fleet).

Usage: test_integrations.py WHEELGATE FIXTURES WORKDIR
"""
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_serve  # noqa: E402  (reads sys.argv[1:3])
from harness import Missing, Skip, main, need_path, test  # noqa: E402
from test_serve import WG, Server, cli_json  # noqa: E402

harness.TESTS.clear()  # test_serve's own tests run under ctest `serve`
WHEELS = test_serve.WHEELS
WORK = os.path.abspath(sys.argv[3])
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(SRC, "docs", "integrations")
HERE = os.path.join(SRC, "tests", "integration", "integrations")
GOOD = "base-1.0-py3-none-any.whl"
BAD = "badelf-1.0-cp312-cp312-linux_x86_64.whl"
SVC = "svc-token-81"       # wheelgate serve's --token
FETCH = "art-token-4c2"    # the Artifactory access token wheelgate serve fetches with
TYPESCRIPT = "typescript@5.6.3"
BOUND = 300                # seconds any one tool run may take
# A wheel that works on one target of the fleet and not on the other: the old-ABI flash-attn
# build fails on a new-ABI torch (WG-ABI-001), passes on an old-ABI one.
SPLIT = "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"
JUNK = "notazip-1.0-py3-none-any.whl"   # unreadable: "error", 422
FLEET = [("new", "python=3.12,torch=2.8.0+cu128,cxx11abi=1"),
         ("old", "python=3.12,torch=2.8.0+cu128,cxx11abi=0")]
HANG_S = 2                 # the examples' check timeout against a wheelgate that never answers
# What answers a client cannot read look like (served by Stand-in below). "schema": a
# document of a schema no example knows, shaped so that reading inputs[0].verdict says pass.
UNREADABLE = ("down", "500", "schema", "html", "hang")


def expected(name):
    """(verdict, blocking rule ids) as `wheelgate check --format json` says."""
    with open(os.path.join(WHEELS, name), "rb") as f:
        rc, doc = cli_json(f.read(), name)
    rank = {"info": 0, "warning": 1, "error": 2}
    floor = rank.get(doc.get("fail_on"), 2)
    rules = sorted({f["rule"] for i in doc["inputs"] for f in i.get("findings", [])
                    if rank.get(f.get("severity"), -1) >= floor})
    return doc["inputs"][0]["verdict"], rules


def fleet_config(policy, targets=FLEET):
    path = os.path.join(WORK, "fleet-%s.yaml" % policy)
    with open(path, "w") as f:
        f.write("policy: %s\nworkers: 2\ntargets:\n" % policy)
        for name, spec in targets:
            f.write('  %s: {spec: "%s"}\n' % (name, spec))
    return path


def expected_fleet(name, policy, targets=FLEET):
    """(verdict, blocking rule ids, failing targets) for the fleet, each target's part as
    `wheelgate check --target SPEC` says, combined as docs/check-json.md describes."""
    with open(os.path.join(WHEELS, name), "rb") as f:
        data = f.read()
    rank = {"info": 0, "warning": 1, "error": 2}
    parts = []
    for tname, spec in targets:
        rc, doc = cli_json(data, name, "--target", spec)
        v = doc["inputs"][0]["verdict"]
        floor = rank.get(doc.get("fail_on"), 2)
        rules = {f["rule"] for f in doc["inputs"][0].get("findings", [])
                 if rank.get(f.get("severity"), -1) >= floor}
        parts.append((tname, v, rules))
    failed = [p for p in parts if p[1] != "pass"]
    if any(p[1] == "error" for p in parts):
        return "error", [], [p[0] for p in parts]
    lost = len(failed) == len(parts) if policy == "any" else bool(failed)
    if not lost:
        return "pass", [], []
    return "fail", sorted(set().union(*(p[2] for p in failed))), [p[0] for p in failed]


class StandIn:
    """A wheelgate that answers what no client can read: mode "500" (an internal error),
    "schema" (200 with a document of an unknown schema whose inputs[0].verdict is pass),
    "html" (200, not JSON), "hang" (reads the request, never answers until closed)."""

    def __init__(self, mode):
        self.mode, self.hits = mode, 0
        self.release = threading.Event()
        stand = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                stand.hits += 1
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    while True:
                        n = int(self.rfile.readline().split(b";")[0], 16)
                        self.rfile.read(n + 2)
                        if n == 0:
                            break
                else:
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if stand.mode == "hang":
                    stand.release.wait(120)
                    return
                status, ctype, body = {
                    "500": (500, "text/plain", b"internal error\n"),
                    "schema": (200, "application/json", json.dumps({
                        "schema": "wheelgate.check/2", "verdict": "pass",
                        "inputs": [{"path": "x.whl", "verdict": "pass", "findings": []}]}).encode()),
                    "html": (200, "text/html", b"<html><body>Sign in</body></html>"),
                }[stand.mode]
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self):
        return "http://127.0.0.1:%d" % self.httpd.server_address[1]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def unreadable_url(mode):
    """A context manager giving the base URL of a wheelgate that answers `mode`."""
    class Down:
        def __enter__(self):
            self.hits = 0
            return self

        def __exit__(self, *exc):
            pass

        def url(self):
            return "http://127.0.0.1:%d" % dead_port()
    return Down() if mode == "down" else StandIn(mode)


def split_unescaped(s, sep):
    out, cur, esc = [], "", False
    for ch in s:
        if esc:
            cur += ch
            esc = False
        elif ch == "\\":
            esc = True
        elif ch == sep:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


class Artifactory:
    """Artifacts in memory ("repo/path" -> bytes) behind the REST calls the examples make;
    records each call (method, path, Authorization) and the properties set."""

    def __init__(self):
        self.files, self.props, self.moves, self.seen = {}, {}, [], []
        art = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def answer(self, status, body=b"", ctype="application/json"):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def handle_any(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                u = urllib.parse.urlsplit(self.path)
                path = urllib.parse.unquote(u.path)
                q = urllib.parse.parse_qs(u.query)
                art.seen.append((self.command, path, self.headers.get("Authorization")))
                if self.command == "PUT" and path.startswith("/artifactory/api/storage/"):
                    key = path[len("/artifactory/api/storage/"):]
                    if key not in art.files:
                        return self.answer(404, b'{"errors":[{"status":404}]}')
                    for p in split_unescaped(q["properties"][0], ";"):
                        k, _, v = p.partition("=")
                        art.props.setdefault(key, {})[k] = split_unescaped(v, ",")
                    return self.answer(204)
                if self.command == "POST" and path.startswith("/artifactory/api/move/"):
                    src = path[len("/artifactory/api/move/"):]
                    dst = q["to"][0].lstrip("/")
                    if src not in art.files:
                        return self.answer(404, b'{"errors":[{"status":404}]}')
                    art.files[dst] = art.files.pop(src)
                    if src in art.props:
                        art.props[dst] = art.props.pop(src)
                    art.moves.append((src, dst))
                    return self.answer(200, b'{"messages":[]}')
                if self.command == "GET" and path.startswith("/artifactory/"):
                    key = path[len("/artifactory/"):]
                    if key in art.files:
                        return self.answer(200, art.files[key], "application/octet-stream")
                return self.answer(404, b'{"errors":[{"status":404,"message":"not found"}]}')

            do_GET = do_PUT = do_POST = handle_any

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def base(self):
        return "http://127.0.0.1:%d" % self.port

    def store(self, repo, name):
        with open(os.path.join(WHEELS, name), "rb") as f:
            self.files["%s/%s" % (repo, name)] = f.read()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=BOUND,
                          **kw)


def dead_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def typescript():
    """tsc, installed once into WORK/node (the version pinned above)."""
    if not shutil.which("node") or not shutil.which("npm"):
        raise Missing("node and npm not found (scripts/setup.sh --test installs nodejs, npm)")
    prefix = os.path.join(WORK, "node")
    tsc = os.path.join(prefix, "node_modules", ".bin", "tsc")
    if not os.path.exists(tsc):
        os.makedirs(prefix, exist_ok=True)
        p = run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund",
                 "--no-save", TYPESCRIPT])
        if p.returncode or not os.path.exists(tsc):
            raise Missing("npm could not install %s: %s" % (TYPESCRIPT, p.stderr.decode()[-500:]))
    return tsc


def compiled_worker():
    """The worker compiled with tsc into WORK/worker; the path of worker.js."""
    tsc = typescript()
    out = os.path.join(WORK, "worker")
    if not os.path.exists(os.path.join(out, "worker.js")):
        p = run([tsc, "-p", os.path.join(HERE, "tsconfig.test.json"), "--outDir", out])
        assert p.returncode == 0, (p.stdout.decode(), p.stderr.decode())
    worker = os.path.join(out, "worker.js")
    assert os.path.exists(worker), os.listdir(out)
    return worker


def call_worker(worker, art, name, wg_url, **more):
    secrets = {"wheelgate_url": wg_url, "wheelgate_token": SVC,
               "quarantine_repo": "pypi-quarantine"}
    secrets.update(more)
    p = run(["node", os.path.join(HERE, "worker_runner.js"), worker, art.base(),
             "pypi-local", name, json.dumps(secrets)])
    assert p.returncode == 0, (p.stdout.decode(), p.stderr.decode())
    return json.loads(p.stdout)["message"]


@test
def artifactory_worker():
    need_path(WHEELS, "the wheel fixtures")
    shutil.rmtree(os.path.join(WORK, "worker"), ignore_errors=True)
    worker = compiled_worker()

    def call(art, name, wg_url):
        return call_worker(worker, art, name, wg_url)

    with Artifactory() as art, Server("--token", SVC, "--fetch-token", FETCH, "--fetch-allow",
                                      art.base() + "/artifactory/") as srv:
        for name in (GOOD, BAD):
            art.store("pypi-local", name)
        msg = call(art, GOOD, srv.url(""))
        assert expected(GOOD) == ("pass", []), expected(GOOD)
        assert "pass" in msg and "quarantine" not in msg, msg
        assert art.props == {"pypi-local/" + GOOD: {"wheelgate.verdict": ["pass"]}}, art.props
        assert art.moves == [] and "pypi-local/" + GOOD in art.files, art.moves

        msg = call(art, BAD, srv.url(""))
        verdict, rules = expected(BAD)
        assert verdict == "fail" and rules, (verdict, rules)
        assert "moved to quarantine" in msg and all(r in msg for r in rules), msg
        assert art.moves == [("pypi-local/" + BAD, "pypi-quarantine/" + BAD)], art.moves
        assert "pypi-local/" + BAD not in art.files and "pypi-quarantine/" + BAD in art.files
        assert art.props["pypi-quarantine/" + BAD] == {"wheelgate.verdict": ["fail"],
                                                       "wheelgate.rules": rules}, art.props
        # wheelgate fetched each artifact itself, with the Artifactory token.
        gets = [(p, a) for m, p, a in art.seen if m == "GET"]
        assert gets == [("/artifactory/pypi-local/" + n, "Bearer " + FETCH)
                        for n in (GOOD, BAD)], gets
        # Not a wheel: untouched.
        assert call(art, "pkg-1.0.tar.gz", srv.url("")) == "not a wheel: skipped"
        assert srv.stop() == 0, srv.err
    assert FETCH not in srv.access and SVC not in srv.access, "a token was logged"


def props_of(verdict, rules=(), targets=()):
    d = {"wheelgate.verdict": [verdict]}
    if rules:
        d["wheelgate.rules"] = list(rules)
    if targets:
        d["wheelgate.targets"] = list(targets)
    return d


@test
def artifactory_worker_fleet():
    """serve with a fleet answers wheelgate.fleet/1: the worker reads its top-level verdict."""
    need_path(WHEELS, "the wheel fixtures")
    worker = compiled_worker()
    for policy, cases in (("every", (SPLIT, GOOD, JUNK)), ("any", (SPLIT,))):
        with Artifactory() as art, Server("--config", fleet_config(policy), "--token", SVC,
                                          "--fetch-token", FETCH, "--fetch-allow",
                                          art.base() + "/artifactory/") as srv:
            assert "2 target(s)" in srv.line, srv.line
            for name in cases:
                art.store("pypi-local", name)
                verdict, rules, targets = expected_fleet(name, policy)
                msg = call_worker(worker, art, name, srv.url(""))
                where = "pypi-quarantine/" if verdict != "pass" else "pypi-local/"
                assert art.props.get(where + name) == props_of(verdict, rules, targets), (
                    name, policy, msg, art.props)
                moved = ("pypi-local/" + name, "pypi-quarantine/" + name) in art.moves
                assert moved == (verdict != "pass") and (where + name) in art.files, (
                    name, policy, msg, art.moves)
                assert (("moved to quarantine" in msg) == moved and msg.split(": ")[1]
                        .startswith(verdict)), (name, msg)
            assert srv.stop() == 0, srv.err
        log = [json.loads(l) for l in srv.access.splitlines()]
        assert len(log) == len(cases), log
    # The cases say what they are meant to: SPLIT passes one target and fails the other.
    assert expected_fleet(SPLIT, "every")[:2] == ("fail", ["WG-ABI-001"]), expected_fleet(SPLIT, "every")
    assert expected_fleet(SPLIT, "any")[0] == "pass" and expected_fleet(GOOD, "every")[0] == "pass"
    assert expected_fleet(JUNK, "every")[0] == "error"


@test
def artifactory_worker_unreadable():
    """No readable answer: quarantined (verdict unchecked) unless on_unreadable=warn."""
    need_path(WHEELS, "the wheel fixtures")
    worker = compiled_worker()
    name = GOOD
    assert expected(name)[0] == "pass", expected(name)
    timeout = {"check_timeout": str(HANG_S)}
    for mode in UNREADABLE:
        for setting in ({}, {"on_unreadable": "quarantine"}, {"on_unreadable": "warn"}):
            if mode not in ("500", "schema") and setting:
                continue  # each mode once with the default; both settings with two of them
            with Artifactory() as art, unreadable_url(mode) as wg:
                art.store("pypi-local", name)
                msg = call_worker(worker, art, name, wg.url(), **dict(timeout, **setting))
                warn = setting.get("on_unreadable") == "warn"
                where = "pypi-local/" if warn else "pypi-quarantine/"
                assert art.props == {where + name: props_of("unchecked")}, (mode, setting, msg,
                                                                            art.props)
                assert (where + name) in art.files and len(art.files) == 1, (mode, art.files)
                assert msg.startswith("pypi-local:%s: unchecked" % name), (mode, msg)
                assert ("moved to quarantine" in msg) != warn, (mode, setting, msg)
                assert ("on_unreadable=warn" in msg) == warn, (mode, setting, msg)
                assert mode == "down" or wg.hits == 1, (mode, wg.hits)
                if mode == "500":
                    assert "answered 500" in msg, msg
                if mode == "schema":
                    assert "unknown schema" in msg and "wheelgate.check/2" in msg, msg
                if mode == "down":
                    assert "unreachable" in msg, msg
    # No wheelgate_url at all: not checked, so quarantined.
    with Artifactory() as art:
        art.store("pypi-local", name)
        msg = call_worker(worker, art, name, "")
        assert "no wheelgate_url" in msg and "moved to quarantine" in msg, msg
        assert art.props == {"pypi-quarantine/" + name: props_of("unchecked")}, art.props


def java_env():
    env = dict(os.environ)
    if not env.get("JAVA_HOME") or not os.path.exists(os.path.join(env["JAVA_HOME"], "bin", "java")):
        java = shutil.which("java")
        if java:
            env["JAVA_HOME"] = os.path.dirname(os.path.dirname(os.path.realpath(java)))
    return env


def compiled_plugin():
    """(classes dir, plugin path, env): the plugin compiled with groovyc against the stubs."""
    if not shutil.which("groovyc") or not shutil.which("java"):
        raise Missing("groovy and java not found (scripts/setup.sh --test installs groovy)")
    env = java_env()
    classes = os.path.join(WORK, "plugin-classes")
    plugin = os.path.join(DOCS, "artifactory-plugin", "wheelgate.groovy")
    if not os.path.exists(os.path.join(classes, "wheelgate.class")):
        shutil.rmtree(classes, ignore_errors=True)
        os.makedirs(classes)
        stubs = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(HERE, "plugin", "org"))
                 for f in fs if f.endswith(".groovy")]
        p = run(["groovyc", "-d", classes] + stubs + [plugin], env=env)
        assert p.returncode == 0, (p.stdout.decode(), p.stderr.decode())
        assert os.path.exists(os.path.join(classes, "wheelgate.class")), os.listdir(classes)
    return classes, plugin, env


def call_plugin(tmp, name, settings):
    """afterCreate, then beforeDownload, for WHEELS/name stored in pypi-local under tmp, with
    wheelgate.properties holding settings; the runner's JSON."""
    classes, plugin, env = compiled_plugin()
    etc = os.path.join(tmp, "etc")
    os.makedirs(os.path.join(etc, "plugins"), exist_ok=True)
    with open(os.path.join(etc, "plugins", "wheelgate.properties"), "w") as f:
        f.write("quarantine=pypi-quarantine\nrepos=pypi-local\n")
        for k, v in settings.items():
            f.write("%s=%s\n" % (k, v))
    root = os.path.join(tmp, "repos")
    os.makedirs(os.path.join(root, "pypi-local"), exist_ok=True)
    shutil.copy(os.path.join(WHEELS, name), os.path.join(root, "pypi-local", name))
    p = run(["groovy", "-cp", classes, os.path.join(HERE, "plugin", "run_plugin.groovy"),
             plugin, etc, root, "pypi-local", name], env=env)
    assert p.returncode == 0, (p.stdout.decode(), p.stderr.decode())
    return json.loads(p.stdout.decode().strip().splitlines()[-1])


@test
def artifactory_plugin():
    need_path(WHEELS, "the wheel fixtures")
    shutil.rmtree(os.path.join(WORK, "plugin-classes"), ignore_errors=True)
    compiled_plugin()
    with tempfile.TemporaryDirectory() as tmp, Server("--token", SVC) as srv:
        root = os.path.join(tmp, "repos")
        got = {}
        for name in (GOOD, BAD):
            got[name] = call_plugin(tmp, name, {"url": srv.url("/"), "token": SVC})
        g, b = got[GOOD], got[BAD]
        assert g["handlers"] == ["download.beforeDownload", "storage.afterCreate"], g
        assert g["props"] == {"pypi-local:" + GOOD: {"wheelgate.verdict": ["pass"]}}, g
        assert g["moves"] == [] and g["download"] == "allowed", g
        assert os.path.exists(os.path.join(root, "pypi-local", GOOD))
        verdict, rules = expected(BAD)
        assert b["props"] == {"pypi-quarantine:" + BAD: {"wheelgate.verdict": [verdict],
                                                         "wheelgate.rules": rules}}, b
        assert b["moves"] == [["pypi-local:" + BAD, "pypi-quarantine:" + BAD]], b
        assert b["download"].startswith("403: wheelgate:") and rules[0] in b["download"], b
        assert os.path.exists(os.path.join(root, "pypi-quarantine", BAD))
        assert not os.path.exists(os.path.join(root, "pypi-local", BAD))
        assert any(lvl == "warn" and "moved to" in m for lvl, m in b["log"]), b["log"]
        assert srv.stop() == 0, srv.err
    lines = [json.loads(l) for l in srv.access.splitlines()]
    assert [(l["path"], l["verdict"]) for l in lines] == [("/v1/check", "pass"),
                                                          ("/v1/check", verdict)], lines


@test
def artifactory_plugin_fleet():
    """serve with a fleet answers wheelgate.fleet/1: the plugin reads its top-level verdict."""
    need_path(WHEELS, "the wheel fixtures")
    compiled_plugin()
    for policy, cases in (("every", (SPLIT, GOOD, JUNK)), ("any", (SPLIT,))):
        with Server("--config", fleet_config(policy), "--token", SVC) as srv:
            assert "2 target(s)" in srv.line, srv.line
            for name in cases:
                verdict, rules, targets = expected_fleet(name, policy)
                with tempfile.TemporaryDirectory() as tmp:
                    got = call_plugin(tmp, name, {"url": srv.url(""), "token": SVC})
                    bad = verdict != "pass"
                    repo = "pypi-quarantine" if bad else "pypi-local"
                    assert got["props"] == {"%s:%s" % (repo, name): props_of(
                        verdict, rules, targets)}, (name, policy, got)
                    assert got["moves"] == ([["pypi-local:" + name, "pypi-quarantine:" + name]]
                                            if bad else []), (name, policy, got)
                    assert os.path.exists(os.path.join(tmp, "repos", repo, name))
                    assert (got["download"] == "allowed") != bad, (name, policy, got)
                    if rules:
                        assert all(r in got["download"] for r in rules), got
            assert srv.stop() == 0, srv.err
        log = [json.loads(l) for l in srv.access.splitlines()]
        assert [l["path"] for l in log] == ["/v1/check"] * len(cases), log


@test
def artifactory_plugin_unreadable():
    """No readable answer: quarantined and its download refused unless on_unreadable=warn."""
    need_path(WHEELS, "the wheel fixtures")
    compiled_plugin()
    name = GOOD
    assert expected(name)[0] == "pass", expected(name)
    for mode in UNREADABLE:
        for setting in ({}, {"on_unreadable": "quarantine"}, {"on_unreadable": "warn"}):
            warn = setting.get("on_unreadable") == "warn"
            if mode not in ("500", "schema") and setting:
                continue  # each mode once with the default; both settings with two of them
            with tempfile.TemporaryDirectory() as tmp, unreadable_url(mode) as wg:
                got = call_plugin(tmp, name, dict(setting, url=wg.url(), timeout=HANG_S))
                repo = "pypi-local" if warn else "pypi-quarantine"
                assert got["props"] == {"%s:%s" % (repo, name): props_of("unchecked")}, (
                    mode, setting, got)
                assert got["moves"] == ([] if warn else [["pypi-local:" + name,
                                                          "pypi-quarantine:" + name]]), got
                assert os.path.exists(os.path.join(tmp, "repos", repo, name))
                if warn:
                    assert got["download"] == "allowed", got
                    assert any(l == "warn" and "on_unreadable=warn" in m
                               for l, m in got["log"]), got["log"]
                else:
                    assert got["download"].startswith("403: wheelgate:"), (mode, got)
                assert mode == "down" or wg.hits == 1, (mode, wg.hits)
                text = " ".join(m for _, m in got["log"])
                if mode == "schema":
                    assert "unknown schema wheelgate.check/2" in text, text
                if mode == "500":
                    assert "answered 500" in text, text
    with tempfile.TemporaryDirectory() as tmp:
        got = call_plugin(tmp, name, {})
        assert got["props"] == {"pypi-quarantine:" + name: props_of("unchecked")}, got
        assert got["download"].startswith("403"), got


JF_STUB = r'''#!/usr/bin/env python3
# A stand-in for the JFrog CLI: REPOS/REPO/PATH are the repositories; every call is logged.
import os, shutil, sys
repos = os.environ["STUB_REPOS"]
with open(os.environ["STUB_LOG"], "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\n")
a = [x for x in sys.argv[1:] if x != "--flat"]
def at(p):
    return os.path.join(repos, p)
if a[:2] == ["rt", "upload"]:
    os.makedirs(os.path.dirname(at(a[3])), exist_ok=True)
    shutil.copy(a[2], at(a[3]))
elif a[:2] == ["rt", "move"]:
    if not os.path.exists(at(a[2])):
        sys.exit("[Error] not found: " + a[2])
    os.makedirs(os.path.dirname(at(a[3])), exist_ok=True)
    os.rename(at(a[2]), at(a[3]))
elif a[:2] == ["rt", "set-props"]:
    if not os.path.exists(at(a[2])):
        sys.exit("[Error] not found: " + a[2])
    with open(at(a[2]) + ".props", "w") as f:
        f.write(a[3])
else:
    sys.exit("stub jf: unexpected " + " ".join(sys.argv[1:]))
'''


@test
def jfrog_cli_stage_and_promote():
    need_path(WHEELS, "the wheel fixtures")
    script = os.path.join(DOCS, "jfrog-cli", "stage-and-promote.sh")
    verdict, rules = expected(BAD)
    with tempfile.TemporaryDirectory() as tmp:
        jf = os.path.join(tmp, "jf")
        with open(jf, "w") as f:
            f.write(JF_STUB)
        os.chmod(jf, 0o755)
        repos, log = os.path.join(tmp, "repos"), os.path.join(tmp, "jf.log")
        env = dict(os.environ, JF=jf, WHEELGATE=WG, STUB_REPOS=repos, STUB_LOG=log,
                   REPORT_DIR=os.path.join(tmp, "reports"))
        p = run(["bash", script] + [os.path.join(WHEELS, n) for n in (GOOD, BAD)], env=env)
        err = p.stderr.decode()
        assert p.returncode == 1, (p.returncode, p.stdout, err)
        assert ("%s: pass: promoted to pypi-local/base/%s" % (GOOD, GOOD)) in p.stdout.decode()
        assert "%s: fail (%s): quarantined" % (BAD, ",".join(rules)) in err, err
        found = sorted(os.path.relpath(os.path.join(d, f), repos)
                       for d, _, fs in os.walk(repos) for f in fs)
        assert found == sorted(["pypi-local/base/" + GOOD, "pypi-local/base/%s.props" % GOOD,
                                "pypi-quarantine/badelf/" + BAD,
                                "pypi-quarantine/badelf/%s.props" % BAD]), found
        with open(os.path.join(repos, "pypi-quarantine/badelf/%s.props" % BAD)) as f:
            assert f.read() == "wheelgate.verdict=fail;wheelgate.rules=" + ",".join(rules)
        with open(log) as f:
            calls = f.read().splitlines()
        assert calls[0] == "rt upload --flat %s pypi-staging/base/%s" % (
            os.path.join(WHEELS, GOOD), GOOD), calls
        assert calls[1] == "rt move --flat pypi-staging/base/%s pypi-local/base/%s" % (
            GOOD, GOOD), calls
        assert len(calls) == 6, calls
        with open(os.path.join(tmp, "reports", BAD + ".wheelgate.json")) as f:
            assert json.load(f)["inputs"][0]["verdict"] == "fail"
        # A passing wheel alone: exit 0. Not a wheel: usage error, nothing uploaded.
        p = run(["bash", script, os.path.join(WHEELS, GOOD)], env=dict(env, REPO_PATH=""))
        assert p.returncode == 0 and os.path.exists(os.path.join(repos, "pypi-local", GOOD)), p
        p = run(["bash", script, __file__], env=env)
        assert p.returncode == 2 and b"not a wheel" in p.stderr, p
        with open(log) as f:
            assert len(f.read().splitlines()) == 9


def stage(tmp, names, **env):
    """stage-and-promote.sh with a stub jf over names; (process, {repo/path: props or None})."""
    jf = os.path.join(tmp, "jf")
    if not os.path.exists(jf):
        with open(jf, "w") as f:
            f.write(JF_STUB)
        os.chmod(jf, 0o755)
    repos = os.path.join(tmp, "repos")
    shutil.rmtree(repos, ignore_errors=True)
    full = dict(os.environ, JF=jf, WHEELGATE=WG, STUB_REPOS=repos,
                STUB_LOG=os.path.join(tmp, "jf.log"), REPORT_DIR=os.path.join(tmp, "reports"),
                REPO_PATH="")
    full.update(env)
    p = run(["bash", os.path.join(DOCS, "jfrog-cli", "stage-and-promote.sh")]
            + [os.path.join(WHEELS, n) for n in names], env=full)
    found = {}
    for d, _, fs in os.walk(repos):
        for f in fs:
            if not f.endswith(".props"):
                rel = os.path.relpath(os.path.join(d, f), repos)
                found[rel] = None
                if os.path.exists(os.path.join(d, f) + ".props"):
                    with open(os.path.join(d, f) + ".props") as pf:
                        found[rel] = pf.read()
    return p, found


def script_props(verdict, rules=(), targets=()):
    return ";".join(["wheelgate.verdict=" + verdict]
                    + (["wheelgate.rules=" + ",".join(rules)] if rules else [])
                    + (["wheelgate.targets=" + ",".join(targets)] if targets else []))


@test
def jfrog_cli_fleet():
    """WHEELGATE_URL: checked by serve; with a fleet, its wheelgate.fleet/1 verdict decides."""
    need_path(WHEELS, "the wheel fixtures")
    with tempfile.TemporaryDirectory() as tmp:
        # Without a fleet: the single-target document, as `wheelgate check` says.
        with Server("--token", SVC) as srv:
            p, found = stage(tmp, (GOOD, BAD), WHEELGATE_URL=srv.url(""), WHEELGATE_TOKEN=SVC,
                             WHEELGATE="/nonexistent/wheelgate")
            verdict, rules = expected(BAD)
            assert p.returncode == 1, (p.stdout, p.stderr)
            assert found == {"pypi-local/" + GOOD: script_props("pass"),
                             "pypi-quarantine/" + BAD: script_props(verdict, rules)}, found
            assert srv.stop() == 0, srv.err
        assert len(srv.access.splitlines()) == 2, srv.access
        for policy, cases in (("every", (SPLIT, GOOD, JUNK)), ("any", (SPLIT,))):
            with Server("--config", fleet_config(policy), "--token", SVC) as srv:
                for name in cases:
                    verdict, rules, targets = expected_fleet(name, policy)
                    p, found = stage(tmp, (name,), WHEELGATE_URL=srv.url(""),
                                     WHEELGATE_TOKEN=SVC)
                    repo = "pypi-local/" if verdict == "pass" else "pypi-quarantine/"
                    assert found == {repo + name: script_props(verdict, rules, targets)}, (
                        name, policy, found, p.stderr)
                    assert p.returncode == (0 if verdict == "pass" else 1), (name, p.stderr)
                    with open(os.path.join(tmp, "reports", name + ".wheelgate.json")) as f:
                        assert json.load(f)["schema"] == "wheelgate.fleet/1"
                assert srv.stop() == 0, srv.err
            assert len(srv.access.splitlines()) == len(cases), srv.access


FAKE_WG = """#!/bin/sh
# A wheelgate check that exits %d and writes %s.
out=
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
%s
exit %d
"""


@test
def jfrog_cli_unreadable():
    """No readable answer: quarantined (exit 1) unless ON_UNREADABLE=warn (promoted, marked
    unchecked, a warning); never promoted as a pass."""
    need_path(WHEELS, "the wheel fixtures")
    name = GOOD
    assert expected(name)[0] == "pass", expected(name)
    with tempfile.TemporaryDirectory() as tmp:
        # A local `wheelgate check` whose report cannot be read or contradicts its status.
        fakes = {}
        for fname, rc, body in (
                ("noreport", 0, ""),
                ("crash", 139, ""),
                ("otherschema", 0, """echo '{"schema": "wheelgate.check/2", "inputs": []}' >"$out" """),
                ("contradicts", 0, """echo '{"schema": "wheelgate.check/1", "fail_on": "error", """
                 """"inputs": [{"verdict": "fail", "findings": []}]}' >"$out" """)):
            path = os.path.join(tmp, "wg-" + fname)
            with open(path, "w") as f:
                f.write(FAKE_WG % (rc, fname, body, rc))
            os.chmod(path, 0o755)
            fakes[fname] = path
        runs = [("local-" + k, {"WHEELGATE": v}) for k, v in fakes.items()]
        runs += [(m, {"WHEELGATE_URL": None, "WHEELGATE_TIMEOUT": str(HANG_S)})
                 for m in UNREADABLE]
        for what, env in runs:
            for setting in ({}, {"ON_UNREADABLE": "quarantine"}, {"ON_UNREADABLE": "warn"}):
                if what not in ("500", "schema", "local-noreport") and setting:
                    continue  # each once with the default; both settings with three of them
                warn = setting.get("ON_UNREADABLE") == "warn"
                mode = what if "WHEELGATE_URL" in env else None
                with unreadable_url(mode or "down") as wg:
                    e = dict(env, **setting)
                    if mode:
                        e["WHEELGATE_URL"] = wg.url()
                    p, found = stage(tmp, (name,), **e)
                    err = p.stderr.decode()
                    repo = "pypi-local/" if warn else "pypi-quarantine/"
                    assert found == {repo + name: script_props("unchecked")}, (what, setting,
                                                                               found, err)
                    assert p.returncode == (0 if warn else 1), (what, setting, p.returncode, err)
                    assert ("promoted unchecked" in err) == warn, (what, setting, err)
                    assert "unreadable answer" in err, (what, err)
                    assert not mode or mode == "down" or wg.hits == 1, (what, wg.hits)
        p, found = stage(tmp, (name,), ON_UNREADABLE="maybe")
        assert p.returncode == 2 and b"ON_UNREADABLE" in p.stderr and found == {}, p.stderr


@test
def systemd_unit():
    if not shutil.which("systemd-analyze"):
        raise Skip("systemd-analyze not found (no systemd here)")
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(DOCS, "systemd", "wheelgate-serve.service")) as f:
            text = f.read()
        # verify wants the ExecStart binary to exist: the one just built stands in.
        unit = os.path.join(tmp, "wheelgate-serve.service")
        with open(unit, "w") as f:
            f.write(text.replace("/usr/bin/wheelgate", WG))
        p = run(["systemd-analyze", "verify", unit])
        assert p.returncode == 0 and not p.stderr.strip(), p.stderr.decode()
        # The check can fail: a misspelt key is reported.
        bad = os.path.join(tmp, "bad.service")
        with open(bad, "w") as f:
            f.write(text.replace("/usr/bin/wheelgate", WG).replace("ProtectSystem=", "ProtectSystm="))
        p = run(["systemd-analyze", "verify", bad])
        assert b"ProtectSystm" in p.stderr, p.stderr
        # systemctl reload runs ExecReload with $MAINPID: run it against a serve of the
        # example config here; the configuration is read again, the service serves on.
        reload = [l.split("=", 1)[1] for l in text.splitlines() if l.startswith("ExecReload=")]
        assert len(reload) == 1, "no ExecReload= in the unit"
        cfg = os.path.join(tmp, "serve.yaml")
        with open(os.path.join(DOCS, "systemd", "serve.yaml")) as f, open(cfg, "w") as g:
            g.write(f.read().replace("listen: 127.0.0.1:8000", "listen: 127.0.0.1:0"))
        with Server("--config", cfg) as srv:
            p = run(reload[0].replace("$MAINPID", str(srv.proc.pid)).split())
            assert p.returncode == 0, p
            srv.wait_err("SIGHUP: configuration 2 in use")
            assert srv.stop() == 0, srv.err
        p = run(["systemd-analyze", "security", "--offline=true", unit])
        out = p.stdout.decode()
        line = [l for l in out.splitlines() if "Overall exposure level" in l]
        assert p.returncode == 0 and line, (out, p.stderr.decode())
        score = float(line[0].split(":")[1].split()[0])
        assert score <= 2.0, line


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The examples under docs/integrations/ (issue 13, point 2), each run as far as this machine
allows, against a real `wheelgate serve` on 127.0.0.1:0 and a loopback stand-in for
Artifactory's REST API (this test's HTTP server: GET of artifacts, PUT
/api/storage/...?properties=, POST /api/move/...):
  - artifactory-worker: the TypeScript worker compiled with tsc (typescript pinned, installed
    into the build tree) and run under node with a context whose clients are real HTTP
    clients: a good wheel gets wheelgate.verdict=pass and stays; a bad one gets fail, its
    rule ids, and is moved to quarantine; wheelgate down leaves it unchecked, unmoved.
  - artifactory-plugin: the Groovy plugin compiled with groovyc against stubs of the
    Artifactory classes it imports, then run by a harness that evaluates it as Artifactory
    does (afterCreate, beforeDownload) over a repository tree on disk.
  - jfrog-cli: stage-and-promote.sh with a stub `jf` that records its arguments and moves
    files between directories standing for the repositories.
  - systemd: the unit passes `systemd-analyze verify` and `security --offline`.
The expected verdicts and rule ids come from `wheelgate check --format json` on the same bytes.

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


def expected(name):
    """(verdict, blocking rule ids) as `wheelgate check --format json` says."""
    with open(os.path.join(WHEELS, name), "rb") as f:
        rc, doc = cli_json(f.read(), name)
    rank = {"info": 0, "warning": 1, "error": 2}
    floor = rank.get(doc.get("fail_on"), 2)
    rules = sorted({f["rule"] for i in doc["inputs"] for f in i.get("findings", [])
                    if rank.get(f.get("severity"), -1) >= floor})
    return doc["inputs"][0]["verdict"], rules


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


@test
def artifactory_worker():
    need_path(WHEELS, "the wheel fixtures")
    tsc = typescript()
    out = os.path.join(WORK, "worker")
    shutil.rmtree(out, ignore_errors=True)
    p = run([tsc, "-p", os.path.join(HERE, "tsconfig.test.json"), "--outDir", out])
    assert p.returncode == 0, (p.stdout.decode(), p.stderr.decode())
    worker = os.path.join(out, "worker.js")
    assert os.path.exists(worker), os.listdir(out)

    def call(art, name, wg_url):
        secrets = {"wheelgate_url": wg_url, "wheelgate_token": SVC,
                   "quarantine_repo": "pypi-quarantine"}
        p = run(["node", os.path.join(HERE, "worker_runner.js"), worker, art.base(),
                 "pypi-local", name, json.dumps(secrets)])
        assert p.returncode == 0, (p.stdout.decode(), p.stderr.decode())
        return json.loads(p.stdout)["message"]

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

        # wheelgate down: recorded as unchecked, not moved.
        art.props.clear()
        art.store("pypi-local", "purebin-1.0-py3-none-any.whl")
        msg = call(art, "purebin-1.0-py3-none-any.whl", "http://127.0.0.1:%d" % dead_port())
        assert "unchecked" in msg and "unreachable" in msg, msg
        assert art.props == {"pypi-local/purebin-1.0-py3-none-any.whl":
                             {"wheelgate.verdict": ["unchecked"]}}, art.props
        assert len(art.moves) == 1, art.moves
        # Not a wheel: untouched.
        assert call(art, "pkg-1.0.tar.gz", srv.url("")) == "not a wheel: skipped"
        assert srv.stop() == 0, srv.err
    assert FETCH not in srv.access and SVC not in srv.access, "a token was logged"


def java_env():
    env = dict(os.environ)
    if not env.get("JAVA_HOME") or not os.path.exists(os.path.join(env["JAVA_HOME"], "bin", "java")):
        java = shutil.which("java")
        if java:
            env["JAVA_HOME"] = os.path.dirname(os.path.dirname(os.path.realpath(java)))
    return env


@test
def artifactory_plugin():
    need_path(WHEELS, "the wheel fixtures")
    if not shutil.which("groovyc") or not shutil.which("java"):
        raise Missing("groovy and java not found (scripts/setup.sh --test installs groovy)")
    env = java_env()
    classes = os.path.join(WORK, "plugin-classes")
    shutil.rmtree(classes, ignore_errors=True)
    os.makedirs(classes)
    stubs = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(HERE, "plugin", "org"))
             for f in fs if f.endswith(".groovy")]
    plugin = os.path.join(DOCS, "artifactory-plugin", "wheelgate.groovy")
    p = run(["groovyc", "-d", classes] + stubs + [plugin], env=env)
    assert p.returncode == 0, (p.stdout.decode(), p.stderr.decode())
    assert os.path.exists(os.path.join(classes, "wheelgate.class")), os.listdir(classes)

    with tempfile.TemporaryDirectory() as tmp, Server("--token", SVC) as srv:
        etc = os.path.join(tmp, "etc")
        os.makedirs(os.path.join(etc, "plugins"))
        with open(os.path.join(etc, "plugins", "wheelgate.properties"), "w") as f:
            f.write("url=%s\ntoken=%s\nquarantine=pypi-quarantine\nrepos=pypi-local\n"
                    % (srv.url("/"), SVC))
        root = os.path.join(tmp, "repos")
        os.makedirs(os.path.join(root, "pypi-local"))
        got = {}
        for name in (GOOD, BAD):
            shutil.copy(os.path.join(WHEELS, name), os.path.join(root, "pypi-local", name))
            p = run(["groovy", "-cp", classes, os.path.join(HERE, "plugin", "run_plugin.groovy"),
                     plugin, etc, root, "pypi-local", name], env=env)
            assert p.returncode == 0, (p.stdout.decode(), p.stderr.decode())
            got[name] = json.loads(p.stdout.decode().strip().splitlines()[-1])
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

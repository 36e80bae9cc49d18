#!/usr/bin/env python3
"""`wheelgate serve --config` (issue 13, point 1): the YAML config's errors (each names
FILE:LINE:COL, exit 2), flags over the file, token_file, a fleet of targets whose policies
(every, any) answer differently for the same wheel, each target's document the one
`wheelgate check --target` prints, ?fleet=NAME, a site_packages target read once at start
(compared with `wheelgate check --env`), and /metrics parsed after known requests. The server
runs on 127.0.0.1 with port 0; every wait is bounded in count and time.

Usage: test_serve_config.py WHEELGATE FIXTURES SCHEMA_DIR [SYS_PYTHON]
Prints one line per test and closes with "N passed, N failed".
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

import serve_util  # noqa: E402
from harness import main, need_path, test, validate as _validate  # noqa: E402

WG, FIX, SCHEMAS = [os.path.abspath(a) for a in sys.argv[1:4]]
SYS_PY = sys.argv[4] if len(sys.argv) > 4 else ""
WHEELS = os.path.join(FIX, "wheels")
OLDABI_ENV = os.path.join(FIX, "envs", "oldabi")
FA_TRUE = "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
FA_FALSE = "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"
NEW = "python=3.12,torch=2.8.0+cu128,cxx11abi=1"
OLD = "python=3.12,torch=2.8.0+cu128,cxx11abi=0"
PY311 = "python=3.11,torch=2.8.0+cu128,cxx11abi=0"
TIMEOUT = 60
TMP = tempfile.mkdtemp(prefix="wg-serve-config-")
# The index cache of site_packages targets stays in this test's directory.
ENV = dict(os.environ, XDG_CACHE_HOME=os.path.join(TMP, "cache"))


def validate(doc):
    _validate(doc, os.path.join(SCHEMAS, "check.schema.json"), SYS_PY, required=False)


class Server(serve_util.Server):
    def __init__(self, *args):
        super().__init__(WG, *args, env=ENV)


def request(url, data=None, headers=None):
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def check(srv, name, data=None, headers=None, **query):
    if data is None:
        with open(os.path.join(WHEELS, name), "rb") as f:
            data = f.read()
    url = srv.url("/v1/check?" + urllib.parse.urlencode(dict(filename=name, **query)))
    st, body = request(url, data, headers)
    return st, body


def cli_json(name, *args):
    with open(os.path.join(WHEELS, name), "rb") as f:
        data = f.read()
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", "--stdin-filename", name]
                       + list(args) + ["-"], input=data, capture_output=True, timeout=TIMEOUT,
                       env=ENV)
    return p.returncode, json.loads(p.stdout)


def config(text, name="serve.yaml", mode=0o600):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def serve_fails(*args):
    """A serve that must refuse to start: (exit code, stderr)."""
    p = subprocess.run([WG, "serve", "--listen", "127.0.0.1:0"] + list(args),
                       capture_output=True, timeout=30, env=ENV)
    return p.returncode, p.stderr.decode()


@test
def config_errors_name_file_line_col():
    big = config("# " + "x" * (1 << 20) + "\n", "big.yaml")
    cases = [  # the config, what stderr must hold
        ("listen: 127.0.0.1:0\nworkerz: 2\n", ":2:1: unknown key 'workerz'"),
        ("workers: many\n", ":1:10: workers takes a number from 1 to 256, not 'many'"),
        ("workers: 2\ndrain: 1\nworkers: 3\n", ":3:1: the config: 'workers' is given twice "
         "(first at line 1)"),
        ("? [a, b]\n: c\n", ":1:3: the config: a key must be a plain value"),
        ("listen: [127.0.0.1, 0]\n", ":1:9: listen takes a string, not a list"),
        ("check_other: maybe\n", ":1:14: check_other takes true or false, not 'maybe'"),
        ("max_body: lots\n", ":1:11: max_body takes a size"),
        ("upstream: ftp://repo\n", ":1:11: upstream takes an http:// or https:// URL"),
        ("policy: most\n", ":1:9: policy takes every"),
        ("targets: [a, b]\n", ":1:10: targets must be a mapping"),
        ("targets:\n  a:\n    spec: python=three\n", ":3:11: targets: a: spec: "),
        ("targets:\n  a:\n    rocm: '6.2'\n", ":3:5: targets: a: rocm: unknown key"),
        ("targets:\n  a:\n    cxx11abi: maybe\n", ":3:15: targets: a: cxx11abi: "),
        ("targets:\n  a b: {python: '3.12'}\n", ":2:3: targets: 'a b' is not a target name"),
        ("targets:\n  a: {}\n", ":2:6: targets: a: says nothing about the machine"),
        ("targets:\n  a: {gpus: H100}\n", ":2:13: targets: a: gpus takes a list"),
        ("targets:\n  a: {python: '3.12'}\n  a: {python: '3.11'}\n",
         ":3:3: targets: 'a' is given twice"),
        ("fetch_allow: {a: b}\n", ":1:14: fetch_allow takes a list of strings"),
        ("token: abc\ntoken_file: /nonexistent/tok\n", ":2:13: token_file: /nonexistent/tok: "),
        ("x: &a 1\ny: *a\n", ":2:4: aliases (*name) are not allowed"),
        ("workers: 2\n---\nworkers: 3\n", ":3:1: a second YAML document"),
        ("workers: [1\n", ":2:1: did not find expected ',' or ']'"),
        ("- 1\n- 2\n", ":1:1: the config must be a mapping"),
    ]
    for i, (text, want) in enumerate(cases):
        path = config(text, "bad%d.yaml" % i)
        rc, err = serve_fails("--config", path)
        assert rc == 2 and path + want in err, (text, rc, err)
        assert "listening" not in err, err
    # Not a regular file, too large, missing: FILE:1:1.
    for path, want in ((TMP, ":1:1: not a regular file"), (big, ":1:1: 1048579 bytes: a "
                       "config is at most 1048576 bytes"),
                       ("/nonexistent.yaml", ":1:1: No such file or directory")):
        rc, err = serve_fails("--config", path)
        assert rc == 2 and path + want in err, (path, rc, err)
    # A target that cannot be opened is named: the environment is read at start.
    path = config("targets:\n  gone: {site_packages: /nonexistent/venv}\n", "gone.yaml")
    rc, err = serve_fails("--config", path)
    assert rc == 2 and "target gone: site_packages /nonexistent/venv" in err, (rc, err)
    path = config("targets:\n  g: {gpus: [NoSuchGPU]}\n", "gpu.yaml")
    rc, err = serve_fails("--config", path)
    assert rc == 2 and "target g: gpus: NoSuchGPU" in err, (rc, err)


@test
def flags_override_the_file_and_token_file():
    need_path(WHEELS, "the wheel fixtures")
    tok = os.path.join(TMP, "token")
    with open(tok, "w") as f:
        f.write("s3cret-from-file\nsecond line ignored\n")
    os.chmod(tok, 0o600)
    path = config("# every key the flags have\nlisten: 127.0.0.1:1\nworkers: 3\n"
                  "max_body: 1K\ntoken_file: %s\ntimeout: 30\ndeadline: 60\ndrain: 5\n"
                  "connections: 20\nupstream_timeout: 20\nconnect_timeout: 3\n"
                  "check_other: true\nspool_dir: %s\nfetch_allow: [https://repo/]\n"
                  % (tok, TMP), "flags.yaml")
    data = open(os.path.join(WHEELS, FA_TRUE), "rb").read()
    assert len(data) > 2048, len(data)
    # The file's values: 3 workers, a 1 KiB cap, the token from token_file.
    with Server("--config", path) as srv:
        assert "(3 workers, max body 1024 bytes, token required" in srv.line, srv.line
        st, body = check(srv, FA_TRUE, data, {"Authorization": "Bearer s3cret-from-file"})
        assert st == 413, (st, body)
        st, body = check(srv, FA_TRUE, data[:100], {})
        assert st == 401, (st, body)
        assert srv.stop() == 0
    # Flags win: --listen (the file's port 1 is never bound), --workers, --max-body, --token.
    with Server("--config", path, "--workers", "2", "--max-body", "10M", "--token", "flagtok") \
            as srv:
        assert "(2 workers, max body 10485760 bytes, token required" in srv.line, srv.line
        st, body = check(srv, FA_TRUE, data, {"Authorization": "Bearer s3cret-from-file"})
        assert st == 401, (st, body)
        st, body = check(srv, FA_TRUE, data, {"Authorization": "Bearer flagtok"})
        assert st == 200 and json.loads(body)["schema"] == "wheelgate.check/1", (st, body)
        assert srv.stop() == 0
    # A token written in a file others may read: a warning, still served.
    path = config("token: visible\n", "open.yaml", 0o644)
    with Server("--config", path) as srv:
        assert b"holds a token and is readable by others" in srv.err, srv.err
        assert srv.stop() == 0


def fleet_config(policy, targets, name):
    lines = ["policy: %s" % policy, "workers: 2", "targets:"]
    for tname, body in targets:
        lines.append("  %s: %s" % (tname, body))
    return config("\n".join(lines) + "\n", name)


@test
def fleet_policies_answer_differently():
    need_path(WHEELS, "the wheel fixtures")
    # The old-ABI flash-attn build fails on a new-ABI torch (WG-ABI-001) and passes on an
    # old-ABI one; on Python 3.11 it fails (WG-TAG-007) whatever the ABI.
    targets = [("new", '{spec: "%s"}' % NEW),
               ("old", "{python: '3.12', torch: 2.8.0+cu128, cxx11abi: 0}")]
    want = {}
    for tname, spec in (("new", NEW), ("old", OLD), ("py311", PY311)):
        rc, doc = cli_json(FA_FALSE, "--target", spec)
        want[tname] = (rc, doc)
    assert want["new"][0] == 1 and want["old"][0] == 0 and want["py311"][0] == 1, want
    answers = {}
    for policy in ("every", "any"):
        with Server("--config", fleet_config(policy, targets, "fleet-%s.yaml" % policy)) as srv:
            assert "2 target(s)" in srv.line, srv.line
            st, body = check(srv, FA_FALSE)
            assert st == 200, (st, body)
            doc = json.loads(body)
            assert doc["schema"] == "wheelgate.fleet/1" and doc["policy"] == policy, doc
            assert [t["name"] for t in doc["targets"]] == ["new", "old"], doc["targets"]
            assert doc["publish"] is None, doc
            for t in doc["targets"]:
                # Each target's document is the one `check --target` prints, unchanged.
                assert t["check"] == want[t["name"]][1], (t["name"], t["check"])
                assert t["verdict"] == t["check"]["inputs"][0]["verdict"], t
                validate(json.dumps(t["check"]))
            answers[policy] = doc
            # ?fleet=NAME: that target alone, a plain check document.
            for tname in ("new", "old"):
                st, body = check(srv, FA_FALSE, fleet=tname)
                assert st == 200 and json.loads(body) == want[tname][1], (tname, st, body)
            st, body = check(srv, FA_FALSE, fleet="nope")
            assert st == 400 and b"fleet=nope: no such target (the config's: new old)" in body, body
            st, body = check(srv, FA_FALSE, fleet="new", target=OLD)
            assert st == 400 and b"fleet=NAME" in body, body
            # A target in the query is judged alone, as without a fleet.
            st, body = check(srv, FA_FALSE, target=PY311)
            assert st == 200 and json.loads(body) == want["py311"][1], body
            assert srv.stop() == 0
    every, any_ = answers["every"], answers["any"]
    assert every["verdict"] == "fail" and every["first_target"] == "new", every
    assert any_["verdict"] == "pass" and any_["first_target"] is None, any_
    # Both fail: any fails too, with both targets' rules; first_target the first failing.
    targets = [("py311", '{spec: "%s"}' % PY311), ("new", '{spec: "%s"}' % NEW)]
    with Server("--config", fleet_config("any", targets, "fleet-both.yaml")) as srv:
        st, body = check(srv, FA_FALSE)
        doc = json.loads(body)
        assert st == 200 and doc["verdict"] == "fail" and doc["first_target"] == "py311", doc
        # The new-ABI-good build passes on "new" only: any passes it.
        st, body = check(srv, FA_TRUE)
        doc = json.loads(body)
        assert [t["verdict"] for t in doc["targets"]] == ["fail", "pass"], doc["targets"]
        assert doc["verdict"] == "pass", doc
        # Bytes that are no wheel: "error" for every target, 422.
        st, body = check(srv, "junk-1.0-py3-none-any.whl", b"PK\x03\x04 junk" * 10)
        doc = json.loads(body)
        assert st == 422 and doc["verdict"] == "error", (st, doc)
        assert all(t["verdict"] == "error" for t in doc["targets"]), doc
        assert srv.stop() == 0
    log = [json.loads(l) for l in srv.access.splitlines()]
    # Lines are written as requests complete: in any order.
    assert sorted(e["verdict"] for e in log) == ["error", "fail", "pass"], log
    fail = [e for e in log if e["verdict"] == "fail"][0]
    assert set(fail["rules"].split(",")) == {"WG-TAG-007", "WG-ABI-001"}, fail


@test
def site_packages_target_is_read_once():
    need_path(OLDABI_ENV, "the old-ABI environment fixture")
    rc_t, want_t = cli_json(FA_TRUE, "--env", OLDABI_ENV)
    rc_f, want_f = cli_json(FA_FALSE, "--env", OLDABI_ENV)
    assert rc_t == 1 and rc_f == 0, (rc_t, rc_f)
    assert "WG-ABI-001" in {f["rule"] for f in want_t["inputs"][0]["findings"]}, want_t
    path = config("targets:\n  oldenv:\n    site_packages: %s\n" % OLDABI_ENV, "env.yaml")
    cases = [(FA_TRUE, want_t, "fail"), (FA_FALSE, want_f, "pass")]
    with Server("--config", path, "--workers", "4") as srv:
        for name, want, verdict in cases:
            st, body = check(srv, name)
            doc = json.loads(body)
            assert st == 200 and doc["verdict"] == verdict, (name, st, doc)
            assert doc["targets"][0]["check"] == want, (name, doc["targets"][0]["check"], want)
        # One environment shared by the workers (its lock taken around each check): 16
        # requests at once, every answer the same as alone.
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(lambda c: (c, check(srv, c[0])), cases * 8, timeout=TIMEOUT))
        for (name, want, verdict), (st, body) in got:
            doc = json.loads(body)
            assert st == 200 and doc["targets"][0]["check"] == want, (name, st)
        # The environment's facts, with a declared fact over them (cxx11abi=1 here).
        assert srv.stop() == 0
    path = config("targets:\n  oldenv:\n    site_packages: %s\n    cxx11abi: 1\n" % OLDABI_ENV,
                  "env-declared.yaml")
    rc, want = cli_json(FA_TRUE, "--env", OLDABI_ENV, "--target", "cxx11abi=1")
    with Server("--config", path) as srv:
        st, body = check(srv, FA_TRUE, fleet="oldenv")
        assert st == 200 and json.loads(body) == want, body
        assert want["target"]["cxx11abi"] is True and want["target"]["torch"] == "2.4.0+cpu", want
        assert srv.stop() == 0


def parse_metrics(text):
    """{(name, frozenset(labels)): value}, the HELP/TYPE names, in exposition order."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
            continue
        if line.startswith("#") or not line:
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        assert m, line
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        key = (m.group(1), labels)
        assert key not in samples, ("a sample given twice", line)
        samples[key] = float(m.group(4))
    return samples, types


def metric(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0)


@test
def metrics_count_the_requests():
    need_path(WHEELS, "the wheel fixtures")
    path = config("targets:\n  new: {spec: \"%s\"}\n  old: {spec: \"%s\"}\n" % (NEW, OLD),
                  "metrics.yaml")
    plan = [FA_FALSE, FA_TRUE, FA_FALSE, "purepkg-0.1-py3-none-any.whl", FA_FALSE]
    with Server("--config", path, "--workers", "2") as srv:
        sent = 0
        verdicts, rules = {}, {}
        for name in plan:
            data = open(os.path.join(WHEELS, name), "rb").read()
            st, body = check(srv, name, data)
            assert st == 200, (st, body)
            doc = json.loads(body)
            v = doc["verdict"]
            verdicts[v] = verdicts.get(v, 0) + 1
            sent += len(data)
            # The blocking rules of a failed wheel: the errors of the targets it failed on
            # (policy every), each rule once per request.
            ids = {f["rule"] for t in doc["targets"] if t["verdict"] == "fail"
                   for f in t["check"]["inputs"][0]["findings"] if f["severity"] == "error"}
            assert bool(ids) == (v == "fail"), doc
            for r in ids:
                rules[r] = rules.get(r, 0) + 1
        st, _ = check(srv, "x.whl", b"x", fleet="nope")
        assert st == 400
        st, _ = request(srv.url("/nope"))
        assert st == 404
        st, _ = request(srv.url("/healthz"))
        assert st == 200
        # A client gone before its body is in: counted with status "aborted".
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"POST /v1/check?filename=a.whl HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Length: 100000\r\n\r\n" + b"x" * 10)
        # A request is counted when libmicrohttpd reports it complete, which can come after
        # the client has read the answer (another thread, a loaded machine): wait, bounded,
        # until every request sent so far is counted, then judge the counts.
        ok = len(plan)
        sent_requests = ok + 3 + 1  # the checks, 400, 404, healthz, the aborted one
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            st, text = request(srv.url("/metrics"))
            samples, types = parse_metrics(text.decode())
            counted = sum(n for (k, l), n in samples.items()
                          if k == "wheelgate_requests_total" and dict(l)["endpoint"] != "metrics")
            if counted >= sent_requests and metric(samples, "wheelgate_requests_total",
                                                   endpoint="check", status="aborted"):
                break
            time.sleep(0.1)
        assert st == 200
        assert metric(samples, "wheelgate_requests_total", endpoint="check",
                      status="aborted") == 1, text.decode()
        assert metric(samples, "wheelgate_requests_total", endpoint="check", status="200") == ok
        assert metric(samples, "wheelgate_requests_total", endpoint="check", status="400") == 1
        assert metric(samples, "wheelgate_requests_total", endpoint="none", status="404") == 1
        assert metric(samples, "wheelgate_requests_total", endpoint="healthz",
                      status="200") == 1, text.decode()
        # FA_FALSE fails on "new", FA_TRUE on "old" (both WG-ABI-001); purepkg passes.
        assert verdicts == {"fail": 4, "pass": 1} and rules.get("WG-ABI-001") == 4, \
            (verdicts, rules)
        got = {v: n for (k, l), n in samples.items() if k == "wheelgate_verdicts_total"
               for _, v in [sorted(l)[1]]}
        assert got == verdicts, (got, verdicts)
        got = {dict(l)["rule"]: n for (k, l), n in samples.items()
               if k == "wheelgate_findings_total"}
        assert got == rules, (got, rules)
        assert metric(samples, "wheelgate_request_bytes_total", endpoint="check") == \
            sent + 1 + 10, text
        # The histogram: cumulative buckets, +Inf == _count == the check requests completed
        # or not (5 judged, 1 refused, 1 aborted).
        name = "wheelgate_request_duration_seconds"
        buckets = sorted(((float(dict(l)["le"]), v) for (n, l), v in samples.items()
                          if n == name + "_bucket" and dict(l)["endpoint"] == "check"))
        assert len(buckets) == 14 and buckets[-1][0] == float("inf"), buckets
        counts = [v for _, v in buckets]
        assert counts == sorted(counts), counts
        assert counts[-1] == metric(samples, name + "_count", endpoint="check") == ok + 2
        assert metric(samples, name + "_sum", endpoint="check") > 0
        # In flight: this /metrics request alone, once the server has finished with the one
        # before it (a client has its answer a moment before the server's completion runs).
        for _ in range(50):
            if metric(samples, "wheelgate_in_flight") == 1:
                break
            time.sleep(0.1)
            st, text = request(srv.url("/metrics"))
            samples, _ = parse_metrics(text.decode())
        assert metric(samples, "wheelgate_in_flight") == 1, text
        assert metric(samples, "wheelgate_uptime_seconds") > 0
        assert metric(samples, "wheelgate_resident_memory_bytes") > 1 << 20
        assert types == {"wheelgate_requests_total": "counter",
                         "wheelgate_verdicts_total": "counter",
                         "wheelgate_findings_total": "counter",
                         "wheelgate_request_bytes_total": "counter",
                         name: "histogram", "wheelgate_in_flight": "gauge",
                         "wheelgate_uptime_seconds": "gauge",
                         "wheelgate_resident_memory_bytes": "gauge",
                         "wheelgate_connections_closed_total": "counter",
                         "wheelgate_checks_running": "gauge",
                         "wheelgate_checks_waiting": "gauge",
                         "wheelgate_checks_refused_total": "counter",
                         "wheelgate_check_wait_seconds_total": "counter",
                         "wheelgate_memory_trims_total": "counter",
                         "wheelgate_build_info": "gauge"}, types
        # The earlier /metrics requests are counted as they complete: the server's
        # completion for the one before may run a moment after its client has the answer.
        for _ in range(50):
            st, text = request(srv.url("/metrics"))
            samples2, _ = parse_metrics(text.decode())
            if metric(samples2, "wheelgate_requests_total", endpoint="metrics",
                      status="200"):
                break
            time.sleep(0.1)
        assert metric(samples2, "wheelgate_requests_total", endpoint="metrics", status="200") \
            >= 1, text
        assert srv.stop() == 0


if __name__ == "__main__":
    sys.exit(main())

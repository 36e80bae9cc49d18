#!/usr/bin/env python3
"""`wheelgate scan` (issue 17, point 1): many inputs as JSON Lines records (wheelgate.scan/1,
docs/scan.md). The verdicts and findings are check's for the same input and options (compared
with `wheelgate check --format json`); --shard I/N splits a list into disjoint shares; --from
reads a list from a file or stdin; -j changes nothing but the order; a scan killed with SIGKILL
resumes (--resume) without scanning again what it recorded, a last line cut short included.

Usage: test_scan.py WHEELGATE FIXTURES ROOT [SYS_PYTHON]
"""
import base64
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main, need_path, test, validate  # noqa: E402

WG, FIX, ROOT = [os.path.abspath(a) for a in sys.argv[1:4]]
SYS_PY = sys.argv[4] if len(sys.argv) > 4 else ""
SCHEMA = os.path.join(ROOT, "docs", "schema", "scan.schema.json")
W = os.path.join(FIX, "wheels")
TMP = tempfile.mkdtemp(prefix="wg-scan-")
KEYS = ["schema", "path", "name", "version", "tags", "sha256", "size", "targets", "facts",
        "seconds", "error"]
TARGET_KEYS = ["target", "profile", "verdict", "counts", "findings"]
FINDING_KEYS = ["rule", "severity", "message", "member", "symbol"]


def wg(*args, stdin=None):
    p = subprocess.run([WG, *args], capture_output=True, timeout=600, input=stdin)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def records(text):
    out = []
    for line in text.splitlines():
        r = json.loads(line)
        assert list(r) == KEYS, "record keys %s" % list(r)
        assert r["schema"] == "wheelgate.scan/1"
        for t in r["targets"]:
            assert list(t)[:3] == TARGET_KEYS[:3], t
        out.append(r)
    return out


def schema_array():
    """The record schema, for a JSON array of records (one validation for a whole output)."""
    with open(SCHEMA) as f:
        one = json.load(f)
    path = os.path.join(TMP, "scan-array.schema.json")
    with open(path, "w") as f:
        json.dump({"$schema": one["$schema"], "type": "array", "items": one}, f)
    return path


SCHEMA_ARRAY = schema_array()


def wheels():
    need_path(W, "the fixture wheels (build/tests/fixtures/wheels)")
    return sorted(os.path.join(W, f) for f in os.listdir(W) if f.endswith(".whl"))


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def strip(r):
    """A record without what differs run to run (its timing)."""
    r = dict(r)
    del r["seconds"]
    return json.dumps(r, sort_keys=True)


def same_as_check(recs, opts):
    """Every record's verdict, counts and findings are check's for the same path and options."""
    paths = [r["path"] for r in recs]
    rc, out, err = wg("check", "--format", "json", "--no-config", "-j2", *opts, *paths)
    assert rc in (0, 1, 2), err
    doc = json.loads(out)
    by_path = {i["path"]: i for i in doc["inputs"]}
    assert len(by_path) == len(paths), (len(by_path), len(paths))
    for r in recs:
        c = by_path[r["path"]]
        (t,) = r["targets"]
        assert t["verdict"] == c["verdict"], (r["path"], t["verdict"], c["verdict"])
        assert t["profile"] == doc["profile"], (t["profile"], doc["profile"])
        assert (r["error"] is None) == (c["error"] is None), (r["path"], r["error"], c["error"])
        if r["error"]:
            assert t["verdict"] == "error" and r["error"] == c["error"], (r["error"], c["error"])
            continue
        assert t["counts"] == c["counts"], (r["path"], t["counts"], c["counts"])
        want = [{k: f[k] for k in FINDING_KEYS} for f in c["findings"]]
        assert t["findings"] == want, (r["path"], t["findings"], want)


@test
def directory_equals_check():
    ws = wheels()
    rc, out, err = wg("scan", "--no-config", "-j2", W)
    recs = records(out)
    assert sorted(r["path"] for r in recs) == ws, "one record per wheel below the directory"
    verdicts = [r["targets"][0]["verdict"] for r in recs]
    # The fixtures hold passing, failing and unreadable wheels: every verdict is exercised.
    assert {"pass", "fail", "error"} <= set(verdicts), verdicts
    assert rc == 2, (rc, err)  # unreadable inputs among them
    for r in recs:
        assert r["sha256"] == sha(r["path"]) and r["size"] == os.path.getsize(r["path"]), r["path"]
        assert r["targets"][0]["target"] == "default"
        assert isinstance(r["seconds"], float) and r["seconds"] >= 0
    flash = [r for r in recs if r["name"] == "flash_attn"]
    assert flash and flash[0]["tags"] == ["cp312-cp312-linux_x86_64"], flash
    assert "summary" not in out
    # Every record, each verdict among them, valid against docs/schema/scan.schema.json.
    validate("[" + ",".join(out.splitlines()) + "]", SCHEMA_ARRAY, SYS_PY)
    same_as_check(recs, [])


@test
def output_to_a_device():
    """-o /dev/null (a character device, which has no fsync) is no write error."""
    ws = [w for w in wheels() if "flash_attn" in w]
    rc, out, err = wg("scan", "--no-config", "-o", os.devnull, *ws)
    assert rc in (0, 1) and "cannot write" not in err and not out, (rc, err)
    rc, out, err = wg("scan", "--no-config", "-o", "/dev/full", *ws)
    assert rc == 2 and "cannot write the records" in err, (rc, err)


@test
def target_options_equal_check():
    opts = ["--target", "python=3.12,torch=2.8.0+cu128,cxx11abi=0,glibc=2.39,glibcxx=3.4.33",
            "--gpu", "sm_90", "--fail-on", "warning"]
    rc, out, err = wg("scan", "--no-config", "-j2", *opts, W)
    recs = records(out)
    assert len(recs) == len(wheels())
    t = recs[0]["targets"][0]
    assert t["profile"] == "install" and "torch=2.8.0+cu128" in t["target"] and "gpu=sm_90" in \
        t["target"], t
    same_as_check(recs, opts)


@test
def env_equals_check():
    """--env: each wheel judged as an install of it alone into the environment, as check does."""
    env = os.path.join(FIX, "envs", "torch211")
    need_path(env, "the torch 2.11 stand-in environment (build/tests/fixtures/envs/torch211)")
    recs = records(wg("scan", "--no-config", "-j2", "--env", env, W)[1])
    assert len(recs) == len(wheels())
    assert recs[0]["targets"][0]["target"] == "env=" + env
    assert recs[0]["targets"][0]["profile"] == "install"
    same_as_check(recs, ["--env", env])


@test
def corpus_equals_check():
    """The real wheels of ../shared/corpus, for the GPU machine they were built for."""
    corpus = os.path.join(ROOT, "..", "shared", "corpus", "wheels")
    need_path(corpus, "the corpus (../shared/corpus/wheels)")
    opts = ["--target", "python=3.12,torch=2.8.0+cu128,cxx11abi=1,glibc=2.39,glibcxx=3.4.33",
            "--gpu", "H100"]
    rc, out, err = wg("scan", "--no-config", "-j2", *opts, corpus)
    recs = records(out)
    want = sorted(f for f in os.listdir(corpus) if f.endswith(".whl"))
    assert sorted(os.path.basename(r["path"]) for r in recs) == want
    # The corpus holds wheels that fail on an H100 (sm_80 only) and wheels that pass.
    assert {"pass", "fail"} <= {r["targets"][0]["verdict"] for r in recs}, recs
    same_as_check(recs, opts)


@test
def baseline_equals_check():
    """Known findings (a check report as the baseline) pass in scan as in check."""
    ws = wheels()
    base = os.path.join(TMP, "baseline.json")
    rc, _, err = wg("check", "--no-config", "--format", "json", "-o", base, *ws[:len(ws) // 2])
    recs = records(wg("scan", "--no-config", "--baseline", base, W)[1])
    same_as_check(recs, ["--baseline", base])
    passed = {r["path"] for r in recs if r["targets"][0]["verdict"] == "pass"}
    plain = {r["path"] for r in records(wg("scan", "--no-config", W)[1])
             if r["targets"][0]["verdict"] == "pass"}
    assert plain < passed, "the baseline makes known failures pass"


@test
def exit_status():
    passing = [r["path"] for r in records(wg("scan", "--no-config", W)[1])
               if r["targets"][0]["verdict"] == "pass"]
    failing = [r["path"] for r in records(wg("scan", "--no-config", W)[1])
               if r["targets"][0]["verdict"] == "fail"]
    assert wg("scan", "--no-config", *passing)[0] == 0
    assert wg("scan", "--no-config", passing[0], failing[0])[0] == 1
    rc, out, err = wg("scan", "--no-config", passing[0], os.path.join(TMP, "absent.whl"))
    assert rc == 2, rc
    (bad,) = [r for r in records(out) if r["error"]]
    assert "absent.whl" in bad["error"] and bad["sha256"] is None and \
        bad["targets"][0]["verdict"] == "error", bad
    assert wg("scan")[0] == 2  # nothing to scan
    for bad_shard in ("2/2", "1/0", "x", "1/2/3"):
        rc, _, err = wg("scan", "--shard", bad_shard, W)
        assert rc == 2 and "--shard" in err, (bad_shard, err)


@test
def shards_split_disjoint():
    ws = wheels()
    got = []
    for n in (2, 3):
        parts = []
        for i in range(n):
            rc, out, err = wg("scan", "--no-config", "--shard", "%d/%d" % (i, n), W)
            parts.append({r["path"] for r in records(out)})
        for a in range(n):
            for b in range(a + 1, n):
                assert not parts[a] & parts[b], "shards %d and %d overlap" % (a, b)
        assert set().union(*parts) == set(ws), "the shards of %d cover every input" % n
        assert all(parts), "every shard of %d has inputs (%s)" % (n, [len(p) for p in parts])
        got.append(parts)
    # Stable by file name: the same wheel under another directory lands in the same shard.
    d = os.path.join(TMP, "moved")
    os.makedirs(d, exist_ok=True)
    for w in ws:
        shutil.copy(w, d)
    moved = {os.path.basename(r["path"])
             for r in records(wg("scan", "--no-config", "--shard", "0/2", d)[1])}
    assert moved == {os.path.basename(p) for p in got[0][0]}


@test
def from_file_and_stdin():
    ws = wheels()
    lst = os.path.join(TMP, "list.txt")
    with open(lst, "w") as f:
        f.write("# the fixture wheels\n\n" + "\n".join(ws) + "\n")
    whole = sorted(strip(r) for r in records(wg("scan", "--no-config", W)[1]))
    fromfile = sorted(strip(r) for r in records(wg("scan", "--no-config", "--from", lst)[1]))
    assert fromfile == whole
    rc, out, err = wg("scan", "--no-config", "--from", "-", stdin=("\n".join(ws)).encode())
    assert sorted(strip(r) for r in records(out)) == whole
    # A URL is refused with a message, as a record of its own; the rest goes on.
    rc, out, err = wg("scan", "--no-config", "--from", "-",
                      stdin=("https://example.org/x-1.0-py3-none-any.whl\n" + ws[0]).encode())
    recs = records(out)
    assert rc == 2 and len(recs) == 2, (rc, out)
    url = [r for r in recs if r["path"].startswith("https:")][0]
    assert "URL" in url["error"], url
    rc, out, err = wg("scan", "--from", os.path.join(TMP, "nolist"))
    assert rc == 2 and "nolist" in err, err


@test
def jobs_same_records():
    one = sorted(strip(r) for r in records(wg("scan", "--no-config", "-j1", W)[1]))
    two = sorted(strip(r) for r in records(wg("scan", "--no-config", "-j2", W)[1]))
    assert one == two and len(one) == len(wheels())


N_REPO = 2000  # a few tenths of a second with -j1: time to see records appear, then kill


def make_repo(n):
    """n distinct small wheels (pure Python, RECORD right), so that a scan of them takes a
    while: something to kill."""
    d = os.path.join(TMP, "repo")
    if os.path.isdir(d):
        return d
    os.makedirs(d)
    rnd = random.Random(17)
    for i in range(n):
        name = "pkg%04d" % i
        files = {"%s/__init__.py" % name: ("V = %d\n" % i).encode(),
                 "%s/data.bin" % name: rnd.randbytes(2048),
                 "%s-1.0.dist-info/METADATA" % name:
                     ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name).encode(),
                 "%s-1.0.dist-info/WHEEL" % name:
                     b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
        rec = []
        for k, v in files.items():
            h = base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b"=").decode()
            rec.append("%s,sha256=%s,%d" % (k, h, len(v)))
        rec.append("%s-1.0.dist-info/RECORD,," % name)
        files["%s-1.0.dist-info/RECORD" % name] = ("\n".join(rec) + "\n").encode()
        with zipfile.ZipFile(os.path.join(d, "%s-1.0-py3-none-any.whl" % name), "w",
                             zipfile.ZIP_DEFLATED) as z:
            for k, v in files.items():
                z.writestr(k, v)
    return d


def lines(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")


@test
def killed_scan_resumes():
    repo = make_repo(N_REPO)
    out = os.path.join(TMP, "killed.jsonl")
    p = subprocess.Popen([WG, "scan", "--no-config", "-j1", "-o", out, repo],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None and \
            (not os.path.exists(out) or lines(out) < 20):
        time.sleep(0.002)
    assert p.poll() is None, "the scan ended before it could be killed"
    p.send_signal(signal.SIGKILL)
    p.wait()
    with open(out, "rb") as f:
        before = f.read()
    done = before.count(b"\n")
    assert 20 <= done < N_REPO, done
    whole = before[:before.rfind(b"\n") + 1]
    shas = {json.loads(x)["sha256"] for x in whole.decode().splitlines()}
    rc, _, err = wg("scan", "--no-config", "-j2", "--resume", out, repo)
    assert rc == 0, (rc, err)
    assert "%d records" % done in err, err
    with open(out, "rb") as f:
        after = f.read()
    assert after.startswith(whole), "the records already written are kept as they were"
    recs = records(after.decode())
    assert len(recs) == N_REPO, len(recs)
    assert len({r["sha256"] for r in recs}) == N_REPO, "no input scanned twice"
    assert "%d scanned" % (N_REPO - done) in err and "%d skipped" % done in err, err
    assert shas <= {r["sha256"] for r in recs}
    # Nothing left: a second --resume scans nothing and adds nothing.
    rc, _, err = wg("scan", "--no-config", "--resume", out, repo)
    assert rc == 0 and "0 scanned" in err and lines(out) == N_REPO, err


@test
def resume_cut_line():
    ws = wheels()
    full = os.path.join(TMP, "full.jsonl")
    assert wg("scan", "--no-config", "-j1", "-o", full, W)[0] == 2
    with open(full, "rb") as f:
        data = f.read().splitlines(keepends=True)
    assert len(data) == len(ws)
    # Killed while writing record 10: 9 whole lines, then half of the tenth.
    cut = os.path.join(TMP, "cut.jsonl")
    with open(cut, "wb") as f:
        f.write(b"".join(data[:9]) + data[9][:len(data[9]) // 2])
    rc, _, err = wg("scan", "--no-config", "--resume", cut, W)
    assert "cut short" in err, err
    recs = records(open(cut).read())
    assert len(recs) == len(ws), (len(recs), len(ws))
    paths = [r["path"] for r in recs]
    assert sorted(paths) == ws and len(set(paths)) == len(ws)
    # Inputs that could not be read have no sha256: they are scanned again, and nothing else.
    unread = sum(1 for x in data[:9] if json.loads(x)["sha256"] is None)
    assert "%d skipped" % (9 - unread) in err, err
    # A broken line that is not the last is no killed scan's: refused, the file untouched.
    bad = os.path.join(TMP, "bad.jsonl")
    with open(bad, "wb") as f:
        f.write(data[0] + b"{not json\n" + data[1])
    size = os.path.getsize(bad)
    rc, _, err = wg("scan", "--no-config", "--resume", bad, W)
    assert rc == 2 and "bad.jsonl:2" in err and os.path.getsize(bad) == size, (rc, err)
    # --resume and another -o: refused.
    rc, _, err = wg("scan", "--resume", cut, "-o", bad, W)
    assert rc == 2 and "--resume" in err, err


@test
def fifo_refused():
    fifo = os.path.join(TMP, "fifo.whl")
    os.mkfifo(fifo)
    rc, out, err = wg("scan", "--no-config", fifo)
    (r,) = records(out)
    assert rc == 2 and "not a regular file" in r["error"], (rc, r)


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(TMP, ignore_errors=True)

#!/usr/bin/env python3
"""`wheelgate scan` with facts kept by content and several targets (issue 17, points 1 and 2;
docs/scan.md, docs/facts-store.md).

- `scan --facts-dir DIR` stores the facts of each wheel read; a second scan judges the stored
  facts instead of reading the wheels, and its records are the first scan's (timing and the
  `facts` key apart), for every fixture and corpus wheel and several targets at once.
- `scan --from-facts --facts-dir DIR` re-judges the whole store with the wheels deleted: the
  records are those of a scan of the wheels for the same targets (sha256 and size included);
  sha256 keys on the command line and in --from lists name stored inputs; --resume skips keys.
- The same bytes under another file name are read, not judged from the store (the file name
  is a fact: tags, name, version).
- `--target-set NAME:...`: each input read once, one entry per set, each equal to a scan with
  that set's options as the single target; bad and duplicate sets are usage errors.
- A broken stored file: a warning and the wheel read (not a verdict), or with --from-facts an
  error record naming the file (exit 2).

Usage: test_scan_facts.py WHEELGATE FIXTURES CORPUS ROOT [SYS_PYTHON]
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main, need_path, test, validate  # noqa: E402

WG, FIX, CORPUS, ROOT = [os.path.abspath(a) for a in sys.argv[1:5]]
SYS_PY = sys.argv[5] if len(sys.argv) > 5 else ""
TMP = tempfile.mkdtemp(prefix="wg-scan-facts-")
SCHEMA = os.path.join(ROOT, "docs", "schema", "scan.schema.json")

# Targets as --target-set specs and as the options of a single-target scan.
SETS = [
    ("publish", "profile=publish", ["--profile", "publish"]),
    ("h100", "gpu=H100,python=3.12,torch=2.9.1+cu128,cxx11abi=1",
     ["--gpu", "H100", "--target", "python=3.12,torch=2.9.1+cu128,cxx11abi=1"]),
    ("old", "torch=2.6.0+cu124,cxx11abi=0,gpu=sm_100,gpu=sm_80",
     ["--target", "torch=2.6.0+cu124,cxx11abi=0", "--gpu", "sm_100", "--gpu", "sm_80"]),
    ("ml228", "platform=manylinux_2_28_x86_64,profile=publish",
     ["--target", "platform=manylinux_2_28_x86_64", "--profile", "publish"]),
]


def env_sets():
    env = os.path.join(FIX, "envs", "torch211")
    need_path(env, "the stand-in torch environment (build/tests/fixtures/envs/torch211)")
    return [("torch211", "env=%s,gpu=sm_90" % env, ["--env", env, "--gpu", "sm_90"])]


def wg(*args, stdin=None):
    p = subprocess.run([WG, *args], capture_output=True, timeout=600, input=stdin)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def repo():
    """Copies of the fixture and corpus wheels (each content and each file name once) in a
    directory of their own, which tests may delete."""
    need_path(os.path.join(FIX, "wheels"), "the fixture wheels")
    need_path(os.path.join(CORPUS, "wheels"), "the corpus")
    d = os.path.join(TMP, "repo")
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    seen, names = set(), set()
    for root in (FIX, os.path.join(CORPUS, "wheels")):
        for dp, _, files in os.walk(root):
            for f in sorted(files):
                p = os.path.join(dp, f)
                if not f.endswith(".whl") or not os.path.isfile(p) or os.path.islink(p):
                    continue
                h = sha(p)
                if h in seen or f in names:
                    continue
                seen.add(h)
                names.add(f)
                shutil.copyfile(p, os.path.join(d, f))
    assert len(names) >= 40, "fixture and corpus wheels: %d" % len(names)
    return d


def records(text):
    out = []
    for line in text.splitlines():
        r = json.loads(line)
        assert r["schema"] == "wheelgate.scan/1" and "facts" in r, r
        out.append(r)
    return out


def by_path(recs):
    d = {r["path"]: r for r in recs}
    assert len(d) == len(recs), "one record per path"
    return d


def bare(r):
    """A record without what differs run to run (timing) or by where facts came from."""
    r = dict(r)
    del r["seconds"]
    del r["facts"]
    return r


def valid(out):
    with open(SCHEMA) as f:
        one = json.load(f)
    arr = os.path.join(TMP, "arr.schema.json")
    with open(arr, "w") as f:
        json.dump({"$schema": one["$schema"], "type": "array", "items": one}, f)
    validate("[" + ",".join(out.splitlines()) + "]", arr, SYS_PY)


def read_ok(d):
    """The wheels below d that can be read (a publish scan has no other error)."""
    rc, out, err = wg("scan", "--no-config", "-j2", "--profile", "publish", d)
    return {r["path"] for r in records(out) if not r["error"]}


def set_args_named(sets):
    out = []
    for name, spec, _ in sets:
        out += ["--target-set", "%s:%s" % (name, spec)]
    return out


@test
def second_scan_judges_stored_facts():
    d = repo()
    store = os.path.join(TMP, "store1")
    sets = SETS + env_sets()
    args = ["scan", "--no-config", "-j2", "--facts-dir", store] + set_args_named(sets)
    ok = read_ok(d)
    rc1, out1, err1 = wg(*args, d)
    first = by_path(records(out1))
    assert rc1 in (1, 2), (rc1, err1[-2000:])
    readable = [r for r in first.values() if r["path"] in ok]
    assert all(r["facts"] is None for r in first.values()), "the first scan reads every wheel"
    assert len(readable) >= 35, len(readable)
    stored = sum(len(fs) for _, _, fs in os.walk(store))
    assert stored == len(readable), (stored, len(readable))
    assert "%d read (facts of %d stored" % (len(readable), len(readable)) in err1, err1[-500:]
    rc2, out2, err2 = wg(*args, d)
    second = by_path(records(out2))
    assert rc2 == rc1, (rc1, rc2)
    assert set(second) == set(first)
    for p, r in second.items():
        if p not in ok:
            assert r["facts"] is None, p  # unreadable inputs have no facts: read again
            continue
        want = os.path.join(store, r["sha256"][:2], r["sha256"] + ".json.zst")
        assert r["facts"] == want, (p, r["facts"], want)
        assert bare(r) == bare(first[p]), (p, bare(r), bare(first[p]))
        assert [t["target"] for t in r["targets"]] == [s[0] for s in sets]
    assert "%d judged from stored facts, 0 read" % len(readable) in err2, err2[-500:]
    verdicts = {t["verdict"] for r in second.values() for t in r["targets"]}
    assert {"pass", "fail", "error"} <= verdicts, verdicts
    valid(out1)
    valid(out2)
    # --refresh-facts reads every wheel again and stores anew
    rc3, out3, err3 = wg(*args, "--refresh-facts", d)
    third = by_path(records(out3))
    assert all(r["facts"] is None for r in third.values())
    assert all(bare(third[p]) == bare(first[p]) for p in first)
    assert "0 judged from stored facts, %d read" % len(readable) in err3, err3[-500:]


@test
def wheels_absent_rejudged_from_the_store():
    d = repo()
    store = os.path.join(TMP, "store2")
    sets = SETS + env_sets()
    rc, out, err = wg("scan", "--no-config", "-j2", "--facts-dir", store, d)
    assert rc in (1, 2), err[-2000:]
    # What a scan of the wheels says for the new targets, to compare with.
    ok = read_ok(d)
    rc_w, out_w, err_w = wg("scan", "--no-config", "-j2", *set_args_named(sets), d)
    wheels = {r["sha256"]: r for r in records(out_w) if r["path"] in ok}
    shutil.rmtree(d)  # the wheels are gone: only their facts are left
    rc_f, out_f, err_f = wg("scan", "--no-config", "-j2", "--from-facts", "--facts-dir", store,
                            *set_args_named(sets))
    recs = records(out_f)
    assert len(recs) == len(wheels), (len(recs), len(wheels))
    for r in recs:
        w = wheels[r["sha256"]]
        assert r["facts"].endswith(r["sha256"] + ".json.zst"), r["facts"]
        assert bare(r) == bare(w), (r["path"], bare(r), bare(w))
    # as the scan of the wheels: some fail, and installing torch into an environment whose
    # torch has no RECORD cannot be judged (pip refuses to uninstall it)
    assert rc_f == rc_w, (rc_f, rc_w, err_f[-1000:])
    valid(out_f)
    # sha256 keys (command line, --from list), stored files and a key not stored
    keys = sorted(k for k, r in wheels.items() if not r["error"])
    one_file = os.path.join(store, keys[1][:2], keys[1] + ".json.zst")
    lst = os.path.join(TMP, "keys.txt")
    with open(lst, "w") as f:
        f.write("# stored inputs\n%s\n\n" % keys[2])
    missing = "0" * 64
    rc_k, out_k, err_k = wg("scan", "--no-config", "-j1", "--from-facts", "--facts-dir", store,
                            "--profile", "publish", keys[0], one_file, missing, "--from", lst)
    recs = records(out_k)
    assert [r["sha256"] for r in recs] == [keys[0], keys[1], missing, keys[2]], recs
    bad = recs[2]
    assert bad["error"] and missing in bad["error"] and bad["targets"][0]["verdict"] == "error"
    assert rc_k == 2, rc_k
    for r in recs[:2] + recs[3:]:
        (t,) = r["targets"]
        assert t == wheels[r["sha256"]]["targets"][0] | {"target": t["target"]}, r["path"]
    # --resume: keys already recorded are skipped, not loaded
    res = os.path.join(TMP, "resume.jsonl")
    with open(res, "w") as f:
        f.write(out_k.splitlines()[0] + "\n")
    rc_r, out_r, err_r = wg("scan", "--no-config", "--from-facts", "--facts-dir", store,
                            "--profile", "publish", "--resume", res)
    with open(res) as f:
        recs = records(f.read())
    assert len(recs) == len(wheels), (len(recs), len(wheels))
    assert len({r["sha256"] for r in recs}) == len(wheels)
    assert "1 skipped" in err_r, err_r[-500:]
    # a sha256 without --facts-dir is no path: its record says so
    rc_n, out_n, err_n = wg("scan", "--no-config", "--from-facts", keys[0])
    (r,) = records(out_n)
    assert rc_n == 2 and r["error"] and keys[0] in r["error"], (rc_n, r)


@test
def same_bytes_other_name_is_read():
    d = repo()
    store = os.path.join(TMP, "store3")
    src = os.path.join(d, "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl")
    need_path(src, "the flash_attn fixture wheel")
    rc, out, err = wg("scan", "--no-config", "--facts-dir", store, src)
    assert rc in (0, 1), err
    other = os.path.join(TMP, "flash_attn-2.8.3-py3-none-any.whl")
    shutil.copyfile(src, other)
    rc2, out2, err2 = wg("scan", "--no-config", "-j1", "--facts-dir", store, other, src)
    r_other, r_src = records(out2)
    assert r_other["sha256"] == r_src["sha256"]
    assert r_other["facts"] is None, "another name: read, not judged from the store"
    assert r_other["tags"] == ["py3-none-any"] and r_other["version"] == "2.8.3", r_other
    # what it claims now is judged: a binary wheel named py3-none-any fails publish
    rules = {f["rule"] for f in r_other["targets"][0]["findings"]}
    assert any(x.startswith("WG-TAG") for x in rules), rules
    # ... and its facts, stored under that name, are now the store's: the old name is read
    assert r_src["facts"] is None, r_src
    rc3, out3, err3 = wg("scan", "--no-config", "--facts-dir", store, src)
    (r3,) = records(out3)
    assert r3["facts"], "stored again under its own name"


@test
def target_sets_equal_single_targets():
    d = repo()
    sets = SETS + env_sets()
    rc, out, err = wg("scan", "--no-config", "-j2", *set_args_named(sets), d)
    recs = by_path(records(out))
    valid(out)
    for i, (name, _, opts) in enumerate(sets):
        rc1, out1, err1 = wg("scan", "--no-config", "-j2", *opts, d)
        for r in records(out1):
            got = recs[r["path"]]["targets"][i]
            (want,) = r["targets"]
            assert got["target"] == name
            assert {**got, "target": None} == {**want, "target": None}, (r["path"], name)
    for bad, why in [("noname", "NAME:KEY=VALUE"), (":gpu=H100", "NAME:KEY=VALUE"),
                     ("x:gpu", "not KEY=VALUE"), ("x:profile=maybe", "profile takes"),
                     ("x:gpu=sm_1234", "gpu"), ("x:pythn=3.12", "pythn")]:
        rc, out, err = wg("scan", "--no-config", "--target-set", bad, d)
        assert rc == 2 and why in err and not out, (bad, rc, err)
    rc, out, err = wg("scan", "--no-config", "--target-set", "a:gpu=H100",
                      "--target-set", "a:gpu=L4", d)
    assert rc == 2 and "two sets are named 'a'" in err, err


@test
def broken_stored_facts():
    d = repo()
    store = os.path.join(TMP, "store4")
    w = sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("flash_attn"))[0]
    rc, out, err = wg("scan", "--no-config", "--facts-dir", store, w)
    (first,) = records(out)
    h = first["sha256"]
    f = os.path.join(store, h[:2], h + ".json.zst")
    with open(f, "r+b") as fh:
        fh.truncate(os.path.getsize(f) // 2)
    rc2, out2, err2 = wg("scan", "--no-config", "--facts-dir", store, w)
    (r,) = records(out2)
    assert rc2 == rc and r["facts"] is None and bare(r) == bare(first), (rc2, r)
    assert f in err2 and "the wheel is read instead" in err2, err2
    assert os.path.getsize(f) > 100, "stored again whole"
    with open(f, "r+b") as fh:
        fh.truncate(10)
    rc3, out3, err3 = wg("scan", "--no-config", "--from-facts", f)
    (r3,) = records(out3)
    assert rc3 == 2 and r3["error"] and f in r3["error"], (rc3, r3)
    assert r3["sha256"] == h and r3["path"] == f, r3


def restamp(f, version):
    """Rewrites the stored file f as if wheelgate `version` had stored it."""
    plain = subprocess.run(["zstd", "-dc", f], capture_output=True, check=True).stdout
    doc = json.loads(plain)
    doc["inputs"][0]["facts"]["wheelgate_version"] = version
    tmp = f + ".json"
    with open(tmp, "w") as fh:
        json.dump(doc, fh)
    subprocess.run(["zstd", "-q", "-f", tmp, "-o", f], check=True)
    os.unlink(tmp)


def stamp(f):
    plain = subprocess.run(["zstd", "-dc", f], capture_output=True, check=True).stdout
    return json.loads(plain)["inputs"][0]["facts"]["wheelgate_version"]


@test
def facts_of_another_version():
    """Facts depend on the reader that made them: another wheelgate version's are read again
    where the wheel is, and said (judged) where it is not."""
    d = repo()
    store = os.path.join(TMP, "store5")
    w = sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("flash_attn"))[0]
    rc, out, err = wg("scan", "--no-config", "--facts-dir", store, w)
    (first,) = records(out)
    h = first["sha256"]
    f = os.path.join(store, h[:2], h + ".json.zst")
    mine = stamp(f)
    restamp(f, "0.0.1-old")
    rc2, out2, err2 = wg("scan", "--no-config", "--facts-dir", store, w)
    (r,) = records(out2)
    assert r["facts"] is None and bare(r) == bare(first), r
    assert "1 inputs had facts stored by another wheelgate version" in err2, err2
    assert stamp(f) == mine, "stored anew by this version"
    rc3, out3, err3 = wg("scan", "--no-config", "--facts-dir", store, w)
    (r3,) = records(out3)
    assert r3["facts"] == f and "another wheelgate" not in err3, (r3, err3)
    restamp(f, "0.0.1-old")
    rc4, out4, err4 = wg("scan", "--no-config", "--from-facts", "--facts-dir", store)
    (r4,) = records(out4)
    assert bare(r4) == bare(first) and r4["facts"] == f, r4
    assert "warning: 1 of the stored facts were written by another wheelgate version" in err4, \
        err4
    p = subprocess.run([WG, "check", "--no-config", "--from-facts", f], capture_output=True,
                       timeout=60)
    assert b"facts stored by wheelgate 0.0.1-old, not this " + mine.encode() in p.stderr, \
        p.stderr


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

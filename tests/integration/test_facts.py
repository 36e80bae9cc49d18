#!/usr/bin/env python3
"""Facts kept by content (issue 17, point 2; docs/facts-store.md): `check --facts-dir DIR`
stores each input's facts under its sha256, and `check --from-facts` judges them again without
the input. For every fixture wheel and object and every corpus wheel, under several targets
(publish, install, torch, GPUs, a platform policy), the report from the stored facts must be
the report from the input, byte for byte apart from the input's path; and broken, truncated or
hostile facts files are refused with a message naming the file, never a crash.

Usage: test_facts.py WHEELGATE FIXTURES CORPUS SCHEMA_DIR [PYTHON_WITH_JSONSCHEMA]
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

WG = os.path.abspath(sys.argv[1])
FIX = os.path.abspath(sys.argv[2])
CORPUS = os.path.abspath(sys.argv[3])
SCHEMAS = os.path.abspath(sys.argv[4])
SYS_PYTHON = sys.argv[5] if len(sys.argv) > 5 else "/usr/bin/python3"
TMP = tempfile.mkdtemp(prefix="wg-facts-")

TARGETS = [
    [],
    ["--profile", "install"],
    ["--profile", "publish", "--gpu", "sm_80"],
    ["--target", "python=3.12,torch=2.9.1+cu128,cxx11abi=1", "--gpu", "sm_90", "--gpu", "8.0"],
    ["--target", "torch=2.6.0+cu124,cxx11abi=0", "--gpu", "sm_100"],
    ["--target", "platform=manylinux_2_28_x86_64", "--profile", "publish"],
    ["--env", os.path.join(FIX, "envs", "torch211"), "--gpu", "sm_90"],
    ["--env", os.path.join(FIX, "envs", "oldabi")],
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def inputs():
    need_path(FIX, "the fixtures")
    need_path(os.path.join(CORPUS, "wheels"), "the corpus")
    out = []
    for root in (FIX, os.path.join(CORPUS, "wheels")):
        for d, _, files in os.walk(root):
            for f in sorted(files):
                p = os.path.join(d, f)
                if (f.endswith(".whl") or ".so" in f) and os.path.isfile(p) \
                        and not os.path.islink(p):
                    out.append(p)
    # Facts are kept by content: of files with the same bytes (copies in several fixture
    # folders) the store keeps the path of the last one read, which the messages name.
    seen, uniq = set(), []
    for p in sorted(out):
        s = sha256(p)
        if s not in seen:
            seen.add(s)
            uniq.append(p)
    return uniq


def check(args):
    r = subprocess.run([WG, "check", "--no-config", "--format", "json", "-j", "2"] + args,
                       capture_output=True, timeout=600)
    assert r.returncode in (0, 1, 2), (args[:6], r.returncode, r.stderr[-2000:])
    return r, json.loads(r.stdout)


@test
def facts_judge_as_the_inputs():
    paths = inputs()
    assert len(paths) >= 50, "only %d inputs found" % len(paths)
    store = os.path.join(TMP, "store")
    compared = 0
    rules = set()
    for t in TARGETS:
        r1, d1 = check(t + ["--facts-dir", store] + paths)
        assert len(d1["inputs"]) == len(paths)
        ok = [(p, i) for p, i in zip(paths, d1["inputs"]) if not i.get("error")]
        # Unreadable inputs store nothing; most are readable.
        assert len(ok) >= len(paths) * 0.8, (len(ok), len(paths))
        shas = [sha256(p) for p, _ in ok]
        for s in shas:
            assert os.path.isfile(os.path.join(store, s[:2], s + ".json.zst")), s
        r2, d2 = check(t + ["--facts-dir", store, "--from-facts"] + shas)
        assert len(d2["inputs"]) == len(ok)
        for (p, a), b in zip(ok, d2["inputs"]):
            # the report names each input as given: the wheel's path, the facts' sha256
            assert a["path"] == p and b["path"] == sha256(p), (p, b["path"])
            a, b = dict(a, path=None), dict(b, path=None)
            assert a == b, (t, p, json.dumps(a)[:800], json.dumps(b)[:800])
            compared += 1
            rules.update(f["rule"] for f in a["findings"])
        for k in d1:
            if k not in ("inputs", "summary"):
                assert d1[k] == d2[k], (t, k)
        # the stored file itself by path gives the same
        f = os.path.join(store, shas[0][:2], shas[0] + ".json.zst")
        _, d3 = check(t + ["--from-facts", f])
        assert dict(d3["inputs"][0], path=None) == dict(ok[0][1], path=None)
    assert compared >= 50 * len(TARGETS)
    # not a comparison of empty reports: the round trip carries what these rules read
    for r in ("WG-ABI3-001", "WG-GPU-001", "WG-ABI-001", "WG-REC-001", "WG-LD-001",
              "WG-HOL-001", "WG-SYS-001", "WG-TAG-001", "WG-VAR-001", "WG-CUDA-001"):
        assert any(x.startswith(r[:-1]) for x in rules), (r, sorted(rules))
    print("  %d inputs x %d targets: identical reports from stored facts" % (
        compared // len(TARGETS), len(TARGETS)))


@test
def store_is_by_content_and_atomic():
    w = [p for p in inputs() if p.endswith(".whl")][0]
    store = os.path.join(TMP, "atomic")
    check(["--facts-dir", store, w])
    check(["--facts-dir", store, w])  # again: replaced, not duplicated
    files = [os.path.join(d, f) for d, _, fs in os.walk(store) for f in fs]
    s = sha256(w)
    assert files == [os.path.join(store, s[:2], s + ".json.zst")], files
    with open(files[0], "rb") as f:
        assert f.read(4) == b"\x28\xb5\x2f\xfd"  # a zstd frame
    # the stored document is an inspect document
    doc = subprocess.run(["zstd", "-dc", files[0]], capture_output=True)
    assert doc.returncode == 0, doc.stderr
    validate(doc.stdout, os.path.join(SCHEMAS, "inspect.schema.json"), SYS_PYTHON)
    if doc.returncode == 0:
        d = json.loads(doc.stdout)
        assert d["schema"] == "wheelgate.inspect/1" and len(d["inputs"]) == 1
        assert d["inputs"][0]["facts"]["version"] == 1


def refused(path, why):
    r = subprocess.run([WG, "check", "--no-config", "--format", "json", "--from-facts", path],
                       capture_output=True, timeout=60)
    assert r.returncode == 2, (path, r.returncode, r.stderr[-1000:])
    d = json.loads(r.stdout)
    msg = d["inputs"][0]["error"]
    msg = msg if isinstance(msg, str) else json.dumps(msg)
    assert os.path.basename(path) in msg and why in msg, (path, why, msg)


@test
def hostile_facts_are_refused():
    w = [p for p in inputs() if p.endswith(".whl")][0]
    store = os.path.join(TMP, "hostile")
    check(["--facts-dir", store, w])
    s = sha256(w)
    good = open(os.path.join(store, s[:2], s + ".json.zst"), "rb").read()
    h = os.path.join(TMP, "h")
    os.makedirs(h)

    def put(name, data):
        p = os.path.join(h, name)
        with open(p, "wb") as f:
            f.write(data)
        return p
    refused(put("cut.json.zst", good[: len(good) // 2]), "decompress")
    refused(put("flip.json.zst", good[:20] + bytes(b ^ 0x5A for b in good[20:60]) + good[60:]),
            "")
    # a frame that claims 1 TiB of content
    refused(put("huge.json.zst", b"\x28\xb5\x2f\xfd\xc0\x58" + (1 << 40).to_bytes(8, "little")
                + b"\0" * 16), "over 1 GiB")
    refused(put("empty.json", b""), "not JSON")
    # a compression bomb: a few KB that inflate to 64 MB (under 1 GiB): refused by its ratio
    # before anything is allocated for it
    spaces = put("spaces.json", b"{" + b" " * (64 << 20) + b"}")
    z = subprocess.run(["zstd", "-q", "-f", "-3", spaces, "-o", spaces + ".zst"],
                       capture_output=True)
    assert z.returncode == 0, z.stderr
    assert os.path.getsize(spaces + ".zst") < 64 << 10
    refused(spaces + ".zst", "compression bomb")
    # a FIFO where a stored file should be: refused, not waited on (the open blocked)
    fifo = os.path.join(h, "fifo.json.zst")
    os.mkfifo(fifo)
    refused(fifo, "not a regular file")
    refused(put("array.json", b"[]"), "no \"facts\"")
    refused(put("nofacts.json", b'{"inputs": [{"path": "x"}]}'), "no \"facts\"")
    plain = subprocess.run(["zstd", "-dc", os.path.join(store, s[:2], s + ".json.zst")],
                           capture_output=True)
    if plain.returncode != 0:
        return
    doc = json.loads(plain.stdout)

    def mutate(name, fn, why):
        d = json.loads(plain.stdout)
        fn(d["inputs"][0]["facts"])
        refused(put(name, json.dumps(d).encode()), why)
    mutate("v2.json", lambda f: f.update(version=2), "version")
    mutate("kind.json", lambda f: f.update(kind=9), "kind")
    mutate("fields.json", lambda f: f.update(fields=[None] * 500), "fields")
    mutate("members.json", lambda f: f.update(members=[["a", 1]]), "fields it should")
    mutate("hex.json", lambda f: f["members"][0].__setitem__(0, {"hex": "zz"}), "hexadecimal")
    mutate("nul.json", lambda f: f["members"][0].__setitem__(0, "a\u0000b"), "NUL")
    mutate("sha.json", lambda f: f["members"][0].__setitem__(9, "00"), "sha256")
    mutate("size.json", lambda f: f["members"][0].__setitem__(1, "big"), "number")
    mutate("method.json", lambda f: f["members"][0].__setitem__(3, "\u00e9"), "compression method")
    mutate("nomethod.json", lambda f: f["members"][0].__setitem__(3, None), "")
    if any(o.get("fatbin_entries") for o in doc["inputs"][0]["facts"]["objects"]):
        def bad_container(f):
            o = [o for o in f["objects"] if o.get("fatbin_entries")][0]
            o["fatbin_entries"][0][1] = 10 ** 6
        mutate("cont.json", bad_container, "container")
    if doc["inputs"][0]["facts"]["objects"]:
        mutate("syms.json", lambda f: f["objects"][0].update(syms=[[1, 2]]), "fields it should")
        mutate("abi.json", lambda f: f["objects"][0].update(abi=99), "out of range")
    # the document is still the input's inspect document: accepted as plain JSON
    p = put("ok.json", plain.stdout)
    r = subprocess.run([WG, "check", "--no-config", "--format", "json", "--from-facts", p],
                       capture_output=True, timeout=60)
    assert r.returncode in (0, 1) and not json.loads(r.stdout)["inputs"][0]["error"], r.stderr


@test
def missing_store_entry_named():
    r = subprocess.run([WG, "check", "--no-config", "--from-facts", "--facts-dir",
                        os.path.join(TMP, "none"), "0" * 64], capture_output=True, timeout=60)
    assert r.returncode == 2
    assert b"00/" + b"0" * 64 + b".json.zst" in r.stderr + r.stdout, r.stderr
    env = os.path.join(FIX, "envs", "torch211")
    r = subprocess.run([WG, "check", "--no-config", "--from-facts", "--together", "--env", env,
                        "0" * 64], capture_output=True, timeout=60)
    assert r.returncode == 2 and b"not with --together" in r.stderr, r.stderr


try:
    sys.exit(main())
finally:
    shutil.rmtree(TMP, ignore_errors=True)

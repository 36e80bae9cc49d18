#!/usr/bin/env python3
"""Members streamed and ELF objects read sparsely (issue 30) give the same facts and verdicts
as members held whole. For every wheel the test fixtures build (every *.whl under FIXTURES) and
every wheel of the shared corpus (CORPUS/wheels, when it is there):
  wheelgate inspect --json --read-stats --limit max_member_held=0 W   (every member streamed)
  wheelgate inspect --json --read-stats --limit max_member_held=1024G W   (every member held)
print the same document with the same exit status, and so do `wheelgate check --format json`
with a target both ways. The sparse path really ran: --read-stats says, per wheel, that every
ELF object of the inspect document was read sparsely in the streamed run and none in the held
one, and over all the inputs more than 50 were.
The fixtures hold no container outside the registered sections, which the fatbin reader finds
by the magics the stream saw (wg_sparse_fatbin_magics): so the test also makes a wheel per
CUDA object (the prebuilt CUDA fixtures, the corpus's objects) holding two copies of it, one
with .nv_fatbin renamed (its containers then lie outside) and one with the containers of
.nv_fatbin appended far past the end, 2 MiB of noise before them and after.
Usage: test_stream_facts.py WHEELGATE FIXTURES CORPUS CUDA_PREBUILT"""
import base64
import hashlib
import random
import shutil
import struct
import tempfile
import zipfile
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Missing, main, test  # noqa: E402

WG, FIX, CORPUS, PREBUILT = [os.path.abspath(a) for a in sys.argv[1:5]]
STREAM = ["--limit", "max_member_held=0"]
HELD = ["--limit", "max_member_held=1024G"]
TARGET = ["--target", "python=3.12,torch=2.11.0+cu130,cxx11abi=1,cuda=13.0,glibc=2.39,"
          "glibcxx=3.4.33", "--gpu", "sm_90"]
STATS = re.compile(r": (\d+) members streamed \([^)]*\); (\d+) ELF objects read sparsely "
                   r"\([^)]*\), [^;]*; (\d+) passes again over (\d+) objects, ")
TOTAL = {"outside": 0, "made": 0, "refused": 0, "inputs": 0, "corpus": 0, "objects": 0, "sparse": 0, "streamed": 0, "passes": 0,
         "objects_again": 0}


def wheels():
    found = sorted(os.path.join(d, f) for d, _, fs in os.walk(FIX) for f in fs
                   if f.endswith(".whl"))
    assert len(found) > 50, "only %d wheels under %s: are the fixtures built?" % (len(found), FIX)
    cw = os.path.join(CORPUS, "wheels")
    corpus = sorted(os.path.join(cw, f) for f in os.listdir(cw) if f.endswith(".whl")) \
        if os.path.isdir(cw) else []
    return found, corpus


def nv_fatbin(d):
    """The .nv_fatbin section of an ELF64 little-endian object: (offset, size, name offset
    in the file), or None."""
    if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
    if not shoff or shentsize != 64 or shstrndx >= shnum:
        return None
    stroff, = struct.unpack_from("<Q", d, shoff + shstrndx * 64 + 0x18)
    for i in range(shnum):
        name, = struct.unpack_from("<I", d, shoff + i * 64)
        off, size = struct.unpack_from("<QQ", d, shoff + i * 64 + 0x18)
        if d[stroff + name:stroff + name + 11] == b".nv_fatbin\0":
            return off, size, stroff + name
    return None


def derived(tmp):
    """A wheel per CUDA object: the object with .nv_fatbin renamed, and with its containers
    appended far past the end."""
    objs = sorted(os.path.join(PREBUILT, f) for f in os.listdir(PREBUILT) if f.endswith(".so"))
    cw = os.path.join(CORPUS, "wheels")
    for w in sorted(os.listdir(cw)) if os.path.isdir(cw) else []:
        with zipfile.ZipFile(os.path.join(cw, w)) as z:
            for m in z.namelist():
                if m.endswith(".so"):
                    dst = os.path.join(tmp, "%s-%s" % (w.split("-")[0], os.path.basename(m)))
                    with open(dst, "wb") as f:
                        f.write(z.read(m))
                    objs.append(dst)
    out = []
    rnd = random.Random(30)
    for path in objs:
        d = open(path, "rb").read()
        fb = nv_fatbin(d)
        if not fb:
            continue
        off, size, name = fb
        renamed = bytearray(d)
        renamed[name:name + 10] = b".nv_fatbiX"
        noise = bytes(rnd.getrandbits(8) for _ in range(4096)) * 512
        far = bytearray(d) + noise + b"\0" * (-len(d) % 8) + d[off:off + size] + noise[:5000]
        base = "wgsparse_" + os.path.basename(path)[:-3].replace("-", "_").replace(".", "_")
        files = {"%s/renamed.so" % base: bytes(renamed), "%s/far.so" % base: bytes(far)}
        out.append(write_wheel(tmp, base, files))
    assert len(out) >= 10, "only %d CUDA objects with .nv_fatbin under %s" % (len(out), PREBUILT)
    return out


def write_wheel(tmp, name, files):
    di = "%s-1.0.dist-info" % name
    files = dict(files)
    files[di + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test_stream_facts\n" \
        b"Root-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n"
    files[di + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name).encode()
    rec = ["%s,sha256=%s,%d" % (n, base64.urlsafe_b64encode(hashlib.sha256(b).digest())
                                .rstrip(b"=").decode(), len(b)) for n, b in files.items()]
    files[di + "/RECORD"] = ("\n".join(rec + [di + "/RECORD,,"]) + "\n").encode()
    path = os.path.join(tmp, "%s-1.0-cp312-cp312-linux_x86_64.whl" % name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in files.items():
            z.writestr(n, b)
    return path


def run(*args):
    p = subprocess.run([WG, *args], capture_output=True, timeout=600)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def unstats(err):
    return [ln for ln in err.splitlines() if not STATS.search(ln)]


def stats(path, err, rc):
    lines = [ln for ln in err.splitlines() if STATS.search(ln)]
    if rc == 2 and not lines:
        return [0, 0, 0, 0]
    assert len(lines) == 1, "%s: %d --read-stats lines in %r" % (path, len(lines), err[-800:])
    return [int(x) for x in STATS.search(lines[0]).groups()]


def one(path):
    """The comparisons for one wheel; returns its counts."""
    rc_s, out_s, err_s = run("inspect", "--json", "--read-stats", *STREAM, path)
    rc_h, out_h, err_h = run("inspect", "--json", "--read-stats", *HELD, path)
    assert rc_s in (0, 1, 2) and out_s, "%s: inspect rc %d: %s" % (path, rc_s, err_s[-600:])
    assert (rc_s, out_s) == (rc_h, out_h), \
        "%s: inspect differs streamed (rc %d) and held (rc %d):\n%s" % (
            path, rc_s, rc_h, first_difference(out_s, out_h))
    assert unstats(err_s) == unstats(err_h), "%s: stderr differs:\n%s\n%s" % (path, err_s, err_h)
    # A wheel refused whole (rc 2: a lying zip directory) has no --read-stats line.
    streamed, sparse, passes, again = stats(path, err_s, rc_s)
    held = stats(path, err_h, rc_h)
    assert held == [0, 0, 0, 0], "%s: max_member_held=1024G streamed: %s" % (path, err_h)
    doc = json.loads(out_s)
    objects = sum(len(i.get("objects") or []) for i in doc["inputs"])
    members = [m for i in doc["inputs"] for m in ((i.get("wheel") or {}).get("members") or [])]
    elf_read = sum(1 for m in members if m.get("elf") and m.get("sha256") and not m.get("dir"))
    assert objects == elf_read, "%s: %d objects, %d ELF members read" % (path, objects, elf_read)
    assert sparse == objects, "%s: %d ELF objects read sparsely, %d ELF members read" % (
        path, sparse, objects)
    assert streamed >= sparse
    assert again <= sparse and (passes == 0) == (again == 0), "%s: %s" % (path, err_s)
    rc_cs, out_cs, err_cs = run("check", "--no-config", "--format", "json", *TARGET, *STREAM, path)
    rc_ch, out_ch, err_ch = run("check", "--no-config", "--format", "json", *TARGET, *HELD, path)
    assert rc_cs in (0, 1, 2) and out_cs, "%s: check rc %d: %s" % (path, rc_cs, err_cs[-600:])
    assert (rc_cs, out_cs) == (rc_ch, out_ch), \
        "%s: check differs streamed (rc %d) and held (rc %d):\n%s" % (
            path, rc_cs, rc_ch, first_difference(out_cs, out_ch))
    assert unstats(err_cs) == unstats(err_ch), "%s: check's stderr differs:\n%s\n%s" % (
        path, err_cs, err_ch)
    outside = sum(1 for i in doc["inputs"] for o in i.get("objects") or []
                  for c in (o.get("cuda") or {}).get("containers") or [] if not c["registered"])
    return {"outside": outside, "refused": int(rc_s == 2), "objects": objects, "sparse": sparse, "streamed": streamed, "passes": passes,
            "objects_again": again}


def first_difference(a, b):
    a, b = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "line %d:\n  streamed: %s\n  held:     %s" % (i + 1, x[:300], y[:300])
    return "lengths %d and %d lines" % (len(a), len(b))


@test
def streamed_and_held_agree():
    fixtures, corpus = wheels()
    tmp = tempfile.mkdtemp(prefix="wg-stream-facts-")
    try:
        made = derived(tmp)
        inputs = fixtures + corpus + made
        with ThreadPoolExecutor(max_workers=2) as ex:
            results = list(ex.map(one, inputs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for path, r in zip(inputs, results):
        for k, v in r.items():
            TOTAL[k] += v
        if r["passes"]:
            print("  %s: %d passes again over %d objects" % (
                os.path.basename(path), r["passes"], r["objects_again"]))
    TOTAL["inputs"] = len(inputs)
    TOTAL["corpus"] = len(corpus)
    TOTAL["made"] = len(made)
    TOTAL["outside"] = sum(r["outside"] for r in results[len(fixtures) + len(corpus):])
    print("  %(inputs)d wheels (%(corpus)d of the corpus, %(made)d made here with %(outside)d "
          "containers outside the registered sections, %(refused)d refused whole): %(streamed)d members streamed, "
          "%(sparse)d ELF objects read sparsely of %(objects)d read; %(passes)d passes again "
          "over %(objects_again)d objects" % TOTAL)
    assert TOTAL["sparse"] == TOTAL["objects"]
    assert TOTAL["refused"] < TOTAL["inputs"] / 4
    assert TOTAL["outside"] >= 2 * TOTAL["made"], "%(outside)d containers outside" % TOTAL
    assert TOTAL["sparse"] > 50, "only %d ELF objects read sparsely" % TOTAL["sparse"]
    if not corpus:
        raise Missing("the corpus wheels (%s/wheels): only the fixtures compared" % CORPUS)


if __name__ == "__main__":
    sys.exit(main())

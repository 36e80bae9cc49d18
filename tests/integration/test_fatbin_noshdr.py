#!/usr/bin/env python3
"""CUDA fatbins read as the loader and the CUDA runtime find them (issue 25): an object whose
e_shoff, e_shnum and e_shstrndx are zeroed still loads and its kernels still run (neither ld.so
nor the CUDA runtime reads section headers: the runtime gets its fatbins through the
__fatBinC_Wrapper_t wrappers its registration code points at). So for every CUDA object here,
the zeroed copy must read the same fatbin facts as the original (containers, their entries,
registered or driver-loaded, wrapper versions, the number of wrappers) and get the same
findings for sm_80, sm_90 and sm_100 GPUs, WG-ELF-001 (the section headers lie) aside.
readelf -h checks that each zeroed copy really has no section headers left.
Objects: every .so of the CUDA fixtures (nvcc builds: plain, -rdc, PTX-only, compressed, -G,
a/f variants; fresh where nvcc is, and the prebuilt copies) and the kernel fixtures, and every
.so of the corpus wheels.
Usage: test_fatbin_noshdr.py WHEELGATE CORPUS DIR..."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Missing, main, test  # noqa: E402

WG, CORPUS = [os.path.abspath(a) for a in sys.argv[1:3]]
DIRS = []
for _d in sys.argv[3:]:  # the fresh and the prebuilt CUDA fixtures may be one folder
    if os.path.realpath(_d) not in [os.path.realpath(x) for x in DIRS]:
        DIRS.append(os.path.abspath(_d))
CUDA_FIX = DIRS[0]
GPUS = ["sm_80", "sm_90", "sm_100"]
TMP = tempfile.mkdtemp(prefix="wg-fatbin-noshdr-")
COUNTS = {"objects": 0, "cuda_objects": 0, "compared": 0}


def zero_section_headers(src, dst):
    d = bytearray(open(src, "rb").read())
    assert d[:4] == b"\x7fELF" and d[4] == 2 and d[5] == 1, src + ": not ELF64 little-endian"
    struct.pack_into("<Q", d, 0x28, 0)           # e_shoff
    struct.pack_into("<HHH", d, 0x3a, 0, 0, 0)   # e_shentsize, e_shnum, e_shstrndx
    open(dst, "wb").write(bytes(d))


def readelf_h(path):
    out = subprocess.run(["readelf", "-h", path], capture_output=True, text=True, check=True).stdout
    f = {}
    for k in ("Start of section headers", "Number of section headers",
              "Section header string table index", "Number of program headers"):
        m = re.search(r"^\s*%s:\s*(\d+)" % re.escape(k), out, re.M)
        assert m, "readelf -h %s: no %r" % (path, k)
        f[k] = int(m.group(1))
    return f


def inspect_cuda(path):
    p = subprocess.run([WG, "inspect", "--json", path], capture_output=True)
    assert p.returncode == 0, "inspect %s: rc %d %s" % (path, p.returncode, p.stderr[-400:])
    objs = json.loads(p.stdout)["inputs"][0]["objects"]
    assert len(objs) == 1, path
    cuda = objs[0]["cuda"]
    if cuda is None:
        return None
    conts = cuda["containers"]
    # containers by offset; each entry names its container by offset, not by index
    norm_c = sorted((c["offset"], c["size"], c["registered"], c["wrapper_version"], c["entries"])
                    for c in conts)
    norm_e = sorted(tuple(sorted((k, json.dumps(v)) for k, v in e.items() if k != "container"))
                    + (("container_offset", conts[e["container"]]["offset"]),)
                    for e in cuda["entries"])
    return {"containers": norm_c, "entries": norm_e, "wrappers": cuda["wrappers"],
            "sass": cuda["sass"], "ptx": cuda["ptx"], "lto_ir": cuda["lto_ir"],
            "outside": cuda["outside"], "entry_count": cuda["entry_count"]}


def findings(path, gpu):
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", "--gpu", gpu,
                        "--target", "cuda=12.4", path], capture_output=True)
    assert p.returncode in (0, 1), "check %s: rc %d %s" % (path, p.returncode, p.stderr[-400:])
    inp = json.loads(p.stdout)["inputs"][0]
    out = []
    for f in inp["findings"] + inp.get("more", []):
        out.append(json.dumps({k: (v.replace(path, "OBJ") if isinstance(v, str) else v)
                               for k, v in f.items()}, sort_keys=True))
    return sorted(out), p.returncode


def objects():
    """(name, path) of every object to compare."""
    got = []
    for i, root in enumerate(DIRS):
        if not os.path.isdir(root):
            raise Missing("no fixtures at %s" % root)
        for dirpath, _, files in sorted(os.walk(root)):
            for f in sorted(files):
                if f.endswith(".so") or ".so." in f:
                    got.append(("%d:%s" % (i, os.path.relpath(os.path.join(dirpath, f), root)),
                                os.path.join(dirpath, f)))
    wheels = os.path.join(CORPUS, "wheels")
    need_path(wheels)
    for w in sorted(os.listdir(wheels)):
        if not w.endswith(".whl"):
            continue
        with zipfile.ZipFile(os.path.join(wheels, w)) as z:
            for n in z.namelist():
                if n.endswith(".so"):
                    dst = os.path.join(TMP, "corpus", w, os.path.basename(n))
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    with z.open(n) as a, open(dst, "wb") as b:
                        shutil.copyfileobj(a, b)
                    got.append(("corpus/%s/%s" % (w, n), dst))
    return got


def need_path(p):
    if not os.path.isdir(p):
        raise Missing("the corpus is not at %s" % p)


@test
def zeroed_copies_read_the_same_fatbins_and_findings():
    objs = objects()
    assert len([o for o in objs if o[0].startswith("0:")]) >= 15, "too few CUDA fixtures"
    diffs = []
    for name, path in objs:
        COUNTS["objects"] += 1
        zdir = os.path.join(TMP, "z", name.replace("/", "_"))
        os.makedirs(zdir)
        z = os.path.join(zdir, os.path.basename(path))
        zero_section_headers(path, z)
        h = readelf_h(z)
        assert (h["Start of section headers"], h["Number of section headers"],
                h["Section header string table index"]) == (0, 0, 0), (name, h)
        assert h["Number of program headers"] > 0, name
        a, b = inspect_cuda(path), inspect_cuda(z)
        if a != b:
            diffs.append("%s: inspect fatbin facts differ:\n  original %s\n  zeroed   %s"
                         % (name, json.dumps(a)[:1500], json.dumps(b)[:1500]))
        if a is None:
            continue
        COUNTS["cuda_objects"] += 1
        assert a["containers"], name + ": a CUDA object with no container"
        for gpu in GPUS:
            COUNTS["compared"] += 1
            (fa, ra), (fb, rb) = findings(path, gpu), findings(z, gpu)
            fb = [f for f in fb if json.loads(f)["rule"] != "WG-ELF-001"]
            assert any(json.loads(f)["rule"] == "WG-ELF-001" for f in findings(z, gpu)[0]), \
                name + ": the zeroed copy has no WG-ELF-001"
            if fa != fb:
                diffs.append("%s --gpu %s: findings differ:\n  only original %s\n  only zeroed %s"
                             % (name, gpu, sorted(set(fa) - set(fb)), sorted(set(fb) - set(fa))))
    print("compared %d objects (%d with fatbins) x %d GPUs = %d checks; %d differences"
          % (COUNTS["objects"], COUNTS["cuda_objects"], len(GPUS), COUNTS["compared"], len(diffs)))
    assert not diffs, "\n".join(diffs[:10])


@test
def the_test_can_fail_a_wrapper_removed_is_seen():
    """Honesty: zero the wrapper magic of a plain build's copy and the zeroed copy must read
    differently (driver-loaded, no wrappers), so the comparison above is not vacuous."""
    src = os.path.join(CUDA_FIX, "sm80.so")
    if not os.path.exists(src):
        raise Missing("no CUDA fixture sm80.so")
    d = bytearray(open(src, "rb").read())
    n = 0
    for off in range(0, len(d) - 8, 8):
        if struct.unpack_from("<I", d, off)[0] == 0x466243B1 and \
                struct.unpack_from("<I", d, off + 4)[0] in (1, 2):
            struct.pack_into("<I", d, off, 0)
            n += 1
    assert n >= 1
    w = os.path.join(TMP, "nowrap.so")
    open(w, "wb").write(bytes(d))
    z = os.path.join(TMP, "nowrap-z", "nowrap.so")
    os.makedirs(os.path.dirname(z))
    zero_section_headers(w, z)
    b = inspect_cuda(z)
    assert b["wrappers"] == 0 and not any(c[2] for c in b["containers"]), b
    assert inspect_cuda(src) != b


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

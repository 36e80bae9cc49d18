#!/usr/bin/env python3
"""`wheelgate matrix`: cold vs stored torch facts, and the size of one stored entry for the
real torch 2.11 (issue 28; docs/matrix.md, results in bench/matrix.md).

1. N extension wheels (copies of the upgrade fixtures' flash_attn builds, each its own file)
   x the three torch stand-ins (2.11.0, 2.11.1, 2.12.0): wall clock of `wheelgate matrix`
   with --no-store (every torch wheel read), the first run with an empty --facts-dir (read
   and stored) and the second (the stored facts; no torch wheel read). Best of --repeat.
2. A torch wheel whose six libraries (libc10, libc10_cuda, libtorch, libtorch_cpu,
   libtorch_cuda, libtorch_python) export exactly the symbols that
   ../shared/corpus/torch-2.11.0-cu130/exports_*.txt.gz list (the real 2.11.0+cu130's; code
   is one `ret` per function, so the wheel is small and only the exports are real): the
   size of its stored entry, the time to read it cold and from the store.

Usage: bench/matrix.py [--wheelgate build/wheelgate] [--fixtures build/tests/fixtures]
                       [--corpus ../shared/corpus/torch-2.11.0-cu130] [-n 60] [--repeat 3]
"""
import argparse
import glob
import gzip
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures"))
from importlib import import_module  # noqa: E402

wheels = import_module("gen-wheels")
LINKER = {"_init", "_fini", "__bss_start", "_edata", "_end"}
LIBS = ["libc10.so", "libc10_cuda.so", "libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so",
        "libtorch_python.so"]


def timed(cmd, repeat, before=None):
    best = None
    for _ in range(repeat):
        if before:
            before()
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True)
        dt = time.monotonic() - t0
        assert p.returncode in (0, 1), (cmd, p.stderr)
        best = dt if best is None else min(best, dt)
    return best


def part1(wg, fix, n, repeat, tmp):
    up = os.path.join(fix, "upgrade")
    fa = sorted(glob.glob(os.path.join(up, "flash_attn-*.whl")))
    torches = [glob.glob(os.path.join(up, "torch-%s-*.whl" % v))[0]
               for v in ("2.11.0", "2.11.1", "2.12.0")]
    exts = []
    for i in range(n):
        d = os.path.join(tmp, "ext%03d" % i)
        os.makedirs(d)
        src = fa[i % len(fa)]
        shutil.copy(src, d)
        exts.append(os.path.join(d, os.path.basename(src)))
    targs = [x for t in torches for x in ("--torch", t)]
    store = os.path.join(tmp, "store1")
    base = [wg, "matrix", "--format", "json"]
    nostore = timed(base + ["--no-store"] + exts + targs, repeat)
    cold = timed(base + ["--facts-dir", store] + exts + targs, repeat,
                 before=lambda: shutil.rmtree(store, ignore_errors=True))
    subprocess.run(base + ["--facts-dir", store] + exts + targs, capture_output=True)
    warm = timed(base + ["--facts-dir", store] + exts + targs, repeat)
    return n, len(torches), nostore, cold, warm


def asm_for(rows):
    out = []
    for kind, name in rows:
        q = '"%s"' % name
        bind = ".weak" if kind in ("W", "V") else ".globl"
        if kind in ("T", "W", "t", "i"):
            out += [".text", "%s %s" % (bind, q), ".type %s, @function" % q, "%s:" % q, "ret"]
        else:
            typ = "@gnu_unique_object" if kind == "u" else "@object"
            out += [".data", "%s %s" % (bind, q), ".type %s, %s" % (q, typ), ".size %s, 8" % q,
                    "%s:" % q, ".quad 0"]
    out.append('.section .note.GNU-stack,"",@progbits')
    return "\n".join(out) + "\n"


def exports(corpus, lib):
    rows = []
    with gzip.open(os.path.join(corpus, "exports_%s.txt.gz" % lib), "rt") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[-1] not in LINKER and parts[-2] not in "Uwv":
                rows.append((parts[-2], parts[-1]))
    return rows


def part2(wg, corpus, repeat, tmp):
    d = os.path.join(tmp, "real")
    os.makedirs(d)
    payload, nsyms = {}, 0
    for lib in LIBS:
        rows = exports(corpus, lib)
        nsyms += len(rows)
        s = os.path.join(d, lib + ".s")
        with open(s, "w") as f:
            f.write(asm_for(rows))
        out = os.path.join(d, lib)
        subprocess.run([os.environ.get("CC", "gcc"), "-shared", "-nostartfiles", "-o", out, s,
                        "-Wl,-soname," + lib], check=True)
        payload["torch/lib/" + lib] = open(out, "rb").read()
    pytag = "cp%d%d" % sys.version_info[:2]
    tag = "%s-%s-linux_x86_64" % (pytag, pytag)
    payload["torch/__init__.py"] = b"import ctypes  # a stand-in\n"
    payload["torch/version.py"] = b"__version__ = '2.11.0+cu130'\ncuda = '13.0'\n"
    whl = wheels.std_wheel(d, "torch-2.11.0+cu130-%s.whl" % tag, "torch", "2.11.0+cu130", [tag],
                           payload)
    store = os.path.join(tmp, "store2")
    fa = glob.glob(os.path.join(ARGS.fixtures, "upgrade", "flash_attn-2.8.3-*.whl"))[0]
    cmd = [wg, "matrix", "--format", "json", "--facts-dir", store, fa, "--torch", whl]
    cold = timed(cmd, repeat, before=lambda: shutil.rmtree(store, ignore_errors=True))
    subprocess.run(cmd, capture_output=True)
    warm = timed(cmd, repeat)
    entry = glob.glob(os.path.join(store, "torch", "*", "*.json.zst"))[0]
    return nsyms, os.path.getsize(whl), os.path.getsize(entry), cold, warm


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheelgate", default="build/wheelgate")
    ap.add_argument("--fixtures", default="build/tests/fixtures")
    ap.add_argument("--corpus", default="../shared/corpus/torch-2.11.0-cu130")
    ap.add_argument("-n", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    ARGS = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="wg-bench-matrix-")
    try:
        n, nt, nostore, cold, warm = part1(ARGS.wheelgate, ARGS.fixtures, ARGS.n, ARGS.repeat,
                                           tmp)
        print("matrix of %d extensions x %d torch stand-ins (%d cells), best of %d:"
              % (n, nt, n * nt, ARGS.repeat))
        print("  --no-store (torch wheels read)   %.3f s" % nostore)
        print("  cold (read and stored)           %.3f s" % cold)
        print("  stored (no torch wheel read)     %.3f s" % warm)
        if os.path.isdir(ARGS.corpus):
            nsyms, wsize, esize, cold, warm = part2(ARGS.wheelgate, ARGS.corpus, ARGS.repeat,
                                                    tmp)
            print("torch 2.11.0+cu130's real export lists (%d symbols over %d libraries):"
                  % (nsyms, len(LIBS)))
            print("  stand-in wheel %d bytes; stored entry %d bytes (zstd)" % (wsize, esize))
            print("  1 extension x this torch: cold %.3f s, stored %.3f s" % (cold, warm))
        else:
            print("no %s: the real torch's entry was not measured" % ARGS.corpus)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reading wheels vs re-judging from stored facts (issue 17, point 2; docs/facts-store.md).

Runs `wheelgate check --format json` over the same inputs three ways and prints inputs per
second (best of --repeat runs, wall clock):
  read     the inputs themselves (what every new question costs without a store)
  store    the inputs themselves, their facts written to --facts-dir (the first pass)
  facts    the stored facts (--from-facts), the inputs not opened
each with -j 1 and -j 2, for the default target and for an install target with GPUs.

Usage: bench/facts.py [--wheelgate build/wheelgate] [--repeat 3] PATH...
  PATHs: wheels, ELF objects, or directories walked for *.whl (e.g. ../shared/corpus/wheels
  build/tests/fixtures).
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time


def collect(paths):
    out, seen = [], set()
    for p in paths:
        files = [p] if os.path.isfile(p) else [
            os.path.join(d, f) for d, _, fs in os.walk(p) for f in sorted(fs)
            if f.endswith(".whl")]
        for f in files:
            h = hashlib.sha256(open(f, "rb").read()).hexdigest()
            if h not in seen:
                seen.add(h)
                out.append((f, h))
    return out


def run(wg, args, repeat):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run([wg, "check", "--no-config", "--format", "json"] + args,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        dt = time.perf_counter() - t
        if r.returncode not in (0, 1, 2):
            sys.exit("wheelgate failed (%d): %s" % (r.returncode, r.stderr.decode()[-500:]))
        best = dt if best is None else min(best, dt)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheelgate", default="build/wheelgate")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    inputs = collect(a.paths)
    if not inputs:
        sys.exit("no inputs")
    size = sum(os.path.getsize(p) for p, _ in inputs)
    store = tempfile.mkdtemp(prefix="wg-facts-bench-")
    try:
        paths = [p for p, _ in inputs]
        shas = [h for _, h in inputs]
        targets = [("default", []),
                   ("torch+GPUs", ["--target", "python=3.12,torch=2.9.1+cu128,cxx11abi=1",
                                   "--gpu", "sm_90", "--gpu", "sm_80"])]
        print("%d inputs, %.1f MiB" % (len(inputs), size / 2 ** 20))
        print("| target | how | -j | seconds | inputs/s |")
        print("|---|---|---|---|---|")
        for tname, t in targets:
            for j in ("1", "2"):
                shutil.rmtree(store, ignore_errors=True)
                rows = [("read", run(a.wheelgate, t + ["-j", j] + paths, a.repeat)),
                        ("store", run(a.wheelgate, t + ["-j", j, "--facts-dir", store] + paths,
                                      a.repeat)),
                        ("facts", run(a.wheelgate, t + ["-j", j, "--facts-dir", store,
                                                        "--from-facts"] + shas, a.repeat))]
                for how, dt in rows:
                    print("| %s | %s | %s | %.3f | %.0f |" % (tname, how, j, dt,
                                                             len(inputs) / dt))
        stored = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(store)
                     for f in fs)
        print("store: %.1f MiB for %.1f MiB of inputs (%.1f%%)" % (
            stored / 2 ** 20, size / 2 ** 20, 100.0 * stored / size))
    finally:
        shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    main()

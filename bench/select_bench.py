#!/usr/bin/env python3
"""`wheelgate select` over many candidates (issue 28, point 4): the variants gen-variants.py
builds (build/tests/fixtures/variants) copied until there are N candidates, each copy with
distinct bytes (its zip comment differs: same members, another sha256), listed in a list file
and in a pylock.toml (with sha256s); then select against the stand-in torch 2.11.0 environment
with --gpu H100:

  cold         an empty facts store: every candidate hashed, read, judged, stored
  warm list    the store filled: every candidate hashed, its facts read back, judged
  warm lock    the store filled, the lock gives each sha256: no candidate opened at all
  no store     --no-store: every candidate read each time

Each is run --runs times (a cold run with a fresh store each time); the median is printed, with
what the JSON document says was read and taken from the store, and that the choice is the same.

usage: select_bench.py (not select.py: that name would shadow the standard select module)
       --wheelgate BUILD/wheelgate --fixtures BUILD/tests/fixtures/variants
                 [-n 200] [--runs 3] [-j N]
Python 3 standard library only.
"""
import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import zipfile


def copies(src, dst, n):
    """n candidates under dst/kNN/ (the variants again and again, each with its own bytes)."""
    names = sorted(os.listdir(src))
    out = []
    for i in range(n):
        d = os.path.join(dst, "k%03d" % (i // len(names)))
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, names[i % len(names)])
        shutil.copy(os.path.join(src, names[i % len(names)]), p)
        with zipfile.ZipFile(p, "a") as z:
            z.comment = b"bench copy %d" % i
        out.append(p)
    return out


def lock(paths, d):
    rows = ['lock-version = "1.0"', 'created-by = "bench/select_bench.py"', "", "[[packages]]",
            'name = "flashy"', 'version = "1.0"', "wheels = ["]
    for p in paths:
        digest = hashlib.sha256(open(p, "rb").read()).hexdigest()
        rows.append('  { path = "%s", size = %d, hashes = { sha256 = "%s" } },' %
                    (p, os.path.getsize(p), digest))
    rows += ["]", ""]
    path = os.path.join(d, "pylock.toml")
    open(path, "w").write("\n".join(rows))
    return path


def run(wg, args):
    t0 = time.monotonic()
    p = subprocess.run([wg, "select", "--format", "json", *args], capture_output=True, text=True)
    dt = time.monotonic() - t0
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    return dt, doc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheelgate", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-j", default=None)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="wg-bench-select-")
    try:
        paths = copies(os.path.join(a.fixtures, "wheels"), os.path.join(tmp, "w"), a.n)
        lst = os.path.join(tmp, "list.txt")
        open(lst, "w").write("\n".join(paths) + "\n")
        lk = lock(paths, tmp)
        target = ["--env", os.path.join(a.fixtures, "env211"), "--gpu", "H100"]
        if a.j:
            target += ["-j", a.j]
        rows = []
        store = None
        cases = [("cold (empty store)", "cold", lst), ("warm list (store filled)", "warm", lst),
                 ("warm lock (sha256 given)", "warm", lk), ("--no-store", "none", lst)]
        chosen = set()
        for label, kind, src in cases:
            times, docs = [], []
            for r in range(a.runs):
                if kind == "cold" or store is None:
                    store = tempfile.mkdtemp(dir=tmp)
                opt = ["--no-store"] if kind == "none" else ["--facts-dir", store]
                dt, doc = run(a.wheelgate, opt + target + [src])
                times.append(dt)
                docs.append(doc)
                chosen.add(os.path.basename(doc["chosen"]))
            s = docs[-1]["summary"]
            rows.append((label, statistics.median(times), s["read"], s["from_store"]))
        print("wheelgate select over %d candidates (%s), --env env211 --gpu H100, median of %d:"
              % (a.n, os.path.basename(a.fixtures), a.runs))
        print("| run | seconds | read | from the store |")
        print("|---|---|---|---|")
        for label, t, rd, st in rows:
            print("| %s | %.3f | %d | %d |" % (label, t, rd, st))
        print("chosen every run:", ", ".join(sorted(chosen)))
        assert len(chosen) == 1, chosen
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`wheelgate scan` over real wheels: read, store facts, judged from stored facts, re-judged
with --from-facts (issue 17, point 5, on real sizes; bench/repo.md).

Usage: scan-rates.py WHEELGATE WHEELS_DIR WORK_DIR [-j N ...]

WHEELS_DIR: real wheels (truth.py --out DIR leaves the environment's distributions packed in
DIR/wheels). Prints one Markdown table: inputs, GB, ELF objects, and per row the wall seconds,
wheels/s and objects/s; checks that the facts rows agree with the read rows (target, verdict,
counts, rules) and exits 1 when they do not. Python 3 standard library only.
"""
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile

TARGET = "b200:gpu=B200,python=3.12,torch=2.11.0+cu130"


def elf_objects(path):
    n = 0
    try:
        with zipfile.ZipFile(path) as z:
            for i in z.infolist():
                if i.is_dir() or i.file_size < 4:
                    continue
                with z.open(i) as f:
                    n += f.read(4) == b"\x7fELF"
    except Exception:
        pass
    return n


def key(r):
    return tuple((t["target"], t["verdict"], json.dumps(t.get("counts"), sort_keys=True),
                  tuple(sorted(f["rule"] for f in t.get("findings", []))))
                 for t in r["targets"])


def records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    wg, wheels, work = sys.argv[1:4]
    jobs = [int(j) for j in sys.argv[4:]] or [2, os.cpu_count() or 2]
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(wheels) for f in fs
                   if f.endswith(".whl"))
    if not files:
        sys.exit("scan-rates.py: no wheel below %s" % wheels)
    os.makedirs(work, exist_ok=True)
    lst = os.path.join(work, "list.txt")
    with open(lst, "w") as f:
        f.write("".join(p + "\n" for p in files))
    size = sum(os.path.getsize(p) for p in files)
    nobj = sum(elf_objects(p) for p in files)  # also brings every file into the page cache
    print("%d wheels, %.2f GB, %d ELF objects; target %s\n" % (len(files), size / 1e9, nobj,
                                                              TARGET))
    print("| row | seconds | wheels/s | objects/s |\n|---|---:|---:|---:|")
    rows = []

    def run(name, args, count):
        t0 = time.monotonic()
        p = subprocess.run([wg, "scan", "--no-config", "-q", "--target-set", TARGET] + args,
                           capture_output=True, timeout=3000)
        wall = time.monotonic() - t0
        if p.returncode not in (0, 1, 2):
            sys.exit("%s: exit %d: %s" % (name, p.returncode, p.stderr.decode()[-2000:]))
        print("| %s | %.2f | %.2f | %.1f |" % (name, wall, count / wall,
                                                nobj * count / len(files) / wall), flush=True)
        rows.append((name, wall))
    outs = {}
    for j in jobs:
        store = os.path.join(work, "facts-j%d" % j)
        shutil.rmtree(store, ignore_errors=True)
        o = os.path.join(work, "read-j%d.jsonl" % j)
        run("scan -j%d (read)" % j, ["-j%d" % j, "--from", lst, "-o", o], len(files))
        outs[j] = o
        run("scan -j%d --facts-dir (read, store)" % j,
            ["-j%d" % j, "--from", lst, "--facts-dir", store, "-o",
             os.path.join(work, "store-j%d.jsonl" % j)], len(files))
        run("scan -j%d --facts-dir (stored)" % j,
            ["-j%d" % j, "--from", lst, "--facts-dir", store, "-o",
             os.path.join(work, "stored-j%d.jsonl" % j)], len(files))
        n = sum(len(fs) for _, _, fs in os.walk(store))
        o = os.path.join(work, "facts-j%d.jsonl" % j)
        run("scan -j%d --from-facts" % j, ["-j%d" % j, "--from-facts", "--facts-dir", store,
                                           "-o", o], n)
        stored = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(store)
                     for f in fs)
        print("| (facts store, -j%d: %d files, %.1f MB) | | | |" % (j, n, stored / 1e6))
        by_sha = {r["sha256"]: key(r) for r in records(outs[j]) if r["sha256"]}
        bad = [r["path"] for r in records(o) if by_sha.get(r["sha256"]) != key(r)]
        bad += [r["path"] for r in records(os.path.join(work, "stored-j%d.jsonl" % j))
                if by_sha.get(r["sha256"]) != key(r)]
        if bad:
            print("\nscan-rates.py: %d records from facts disagree with the read ones: %s"
                  % (len(bad), bad[:5]))
            return 1
    print("\nevery record from stored facts agrees with the one read from the wheel")
    return 0


if __name__ == "__main__":
    sys.exit(main())

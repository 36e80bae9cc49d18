#!/usr/bin/env python3
"""A whole repository at once (issue 17, point 5): wheels per second for `wheelgate scan -j1`,
`-j2`, wheelgate.dask on a LocalCluster of 1 and 2 workers, the first pass that stores facts,
and re-judging from stored facts (the wheels moved away), over a generated repository of small
wheels and over the corpus; `auditwheel show` on a sample as the peer; a paper estimate for a
PyPI-sized run. docs: bench/repo.md.

Usage: bench/repo.py [--build build] [--wheels 2000] [--fixtures build/tests/fixtures]
                     [--corpus ../shared/corpus/wheels] [--auditwheel SRC] [--sample 60]
                     [--python /usr/bin/python3] [--out bench/out/repo] [--quick]

The generated repository: every distinct wheel of the test fixtures (build/tests/fixtures, the
stand-in environments apart) is a template: the corpus kinds (a good CUDA extension, the old
string ABI, SASS for the wrong GPU only, a hollow py3-none-any wrapper, mixed gencode sets, a CPU
extension) and the rest of the fixtures (manylinux claims, torch labels, variants, RECORD
lies, zip bombs, truncated and non-zip files). Copy k of a template lives in
REPO/kNNNN/<the template's file name> and differs from it in its zip comment only (a file that
Python's zipfile cannot open gets bytes appended instead), so that every copy has its own
sha256, as every wheel of a real repository does. Before timing anything, the script checks
that each copy is judged as its template (the same verdict and the same rules found).

Every timed row judges the same target, a new GPU generation for the stored wheels:
--target-set b200:gpu=B200,python=3.12,torch=2.11.0+cu130. Every file is read once before the
runs so that the page cache holds it: the rows measure wheelgate, not the disk. Exit 0 when
every run succeeded and the facts rows agree with the wheels rows, 1 else.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = "b200:gpu=B200,python=3.12,torch=2.11.0+cu130"
PYPI_OBJECTS = 8_400_000


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def templates(fixtures):
    """The distinct fixture wheels (by content and by file name), sorted."""
    seen, names, out = set(), set(), []
    for d, dirs, files in os.walk(fixtures):
        dirs[:] = sorted(x for x in dirs if x != "envs")
        for f in sorted(files):
            p = os.path.join(d, f)
            if not f.endswith(".whl") or os.path.islink(p) or not os.path.isfile(p):
                continue
            h = sha256(p)
            if h in seen or f in names:
                continue
            seen.add(h)
            names.add(f)
            out.append(p)
    return out


def make_copy(src, dst, k):
    shutil.copyfile(src, dst)
    tag = ("wheelgate bench copy %05d" % k).encode()
    try:
        # mode "a" on a file that is no zip appends a new archive to it: test it first
        with zipfile.ZipFile(dst) as z:
            pass
        with zipfile.ZipFile(dst, "a") as z:
            z.comment = tag
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        shutil.copyfile(src, dst)
        with open(dst, "ab") as f:
            f.write(tag)


def make_repo(repo, tmpls, n):
    """REPO/kNNNN/<name>: n copies in all, the templates taken in turn."""
    if os.path.isdir(repo):
        shutil.rmtree(repo)
    os.makedirs(repo)
    for k in range(n):
        t = tmpls[k % len(tmpls)]
        d = os.path.join(repo, "k%04d" % (k // len(tmpls)))
        os.makedirs(d, exist_ok=True)
        make_copy(t, os.path.join(d, os.path.basename(t)), k)


def elf_objects(path):
    """ELF members of a wheel (0 for a file zipfile cannot read)."""
    try:
        with zipfile.ZipFile(path) as z:
            n = 0
            for i in z.infolist():
                if i.is_dir() or i.file_size < 4:
                    continue
                try:
                    with z.open(i) as f:
                        n += f.read(4) == b"\x7fELF"
                except Exception:
                    pass
            return n
    except Exception:
        return 0


def warm(paths):
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass


def timed(cmd, env=None, ok=(0, 1, 2)):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, env=env, timeout=3600)
    dt = time.monotonic() - t0
    if p.returncode not in ok:
        sys.stderr.write("bench/repo.py: %s: exit %d\n%s\n" % (" ".join(cmd[:4]), p.returncode,
                                                             p.stderr.decode()[-3000:]))
        raise SystemExit(1)
    return dt, p


def records(path_or_text, is_text=False):
    text = path_or_text if is_text else open(path_or_text, encoding="utf-8").read()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def key(r):
    """What must agree between two judgements of one wheel (paths and timing apart)."""
    return tuple((t["target"], t["verdict"], json.dumps(t["counts"], sort_keys=True),
                  tuple(sorted(f["rule"] for f in t["findings"]))) for t in r["targets"])


def check_copies(wg, repo, tmpls, out):
    """Each copy is judged as its template: the verdicts and rules, not the paths."""
    base = os.path.join(out, "templates.jsonl")
    copies = os.path.join(out, "copies.jsonl")
    timed([wg, "scan", "--no-config", "-q", "-j2", "--target-set", TARGET, "-o", base] + tmpls)
    timed([wg, "scan", "--no-config", "-q", "-j2", "--target-set", TARGET, "-o", copies, repo])
    want = {os.path.basename(r["path"]): key(r) for r in records(base)}
    bad = sorted({os.path.basename(r["path"]) for r in records(copies)
                  if key(r) != want[os.path.basename(r["path"])]})
    if bad:
        sys.stderr.write("bench/repo.py: copies judged otherwise than their template: %s\n"
                         % ", ".join(bad))
        raise SystemExit(1)
    return records(base)


def dask_row(py, lib, inputs_file, out_dir, workers, env):
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    e = dict(env, WHEELGATE_LIB=lib,
             PYTHONPATH=os.path.join(ROOT, "hooks", "pip") + os.pathsep + env.get("PYTHONPATH", ""))
    wall, p = timed([py, "-m", "wheelgate.dask", "--from", inputs_file, "-o", out_dir,
                     "--workers", str(workers), "--threads", "1", "--target-set", TARGET], env=e)
    with open(os.path.join(out_dir, "summary.json")) as f:
        s = json.load(f)
    return wall, s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--wheels", type=int, default=2000)
    ap.add_argument("--fixtures", default=None)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus", "wheels"))
    ap.add_argument("--auditwheel", default=os.environ.get("WG_AUDITWHEEL_SRC"),
                    help="an auditwheel source tree (src/auditwheel): the peer row")
    ap.add_argument("--sample", type=int, default=60, help="wheels auditwheel shows (60)")
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="the python with Debian's python3-dask and python3-distributed")
    ap.add_argument("--out", default=os.path.join(HERE, "out", "repo"))
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds of every row; the median is reported (3)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test: 60 wheels, one round, no peer")
    a = ap.parse_args()
    wg = os.path.join(a.build, "wheelgate")
    lib = os.path.join(a.build, "libwheelgate.so")
    fixtures = a.fixtures or os.path.join(a.build, "tests", "fixtures")
    for p, what in ((wg, "wheelgate (cmake --build BUILD)"), (lib, "libwheelgate.so"),
                    (fixtures, "the test fixtures (cmake --build BUILD; ctest builds them)")):
        if not os.path.exists(p):
            sys.exit("bench/repo.py: %s not found at %s" % (what, p))
    probe = subprocess.run([a.python, "-c", "import dask, distributed"], capture_output=True)
    if probe.returncode != 0:
        print("bench/repo.py: %s cannot import dask and distributed (apt-get install "
              "python3-dask python3-distributed)" % a.python, file=sys.stderr)
        return 1 if os.environ.get("CI") == "true" else 77
    n = 60 if a.quick else a.wheels
    rounds = 1 if a.quick else a.rounds
    os.makedirs(a.out, exist_ok=True)
    repo = os.path.join(a.out, "wheels")
    away = os.path.join(a.out, "wheels-away")
    if os.path.isdir(away):
        shutil.rmtree(away)
    tmpls = templates(fixtures)
    print("templates: %d distinct fixture wheels; making %d copies in %s" % (len(tmpls), n, repo),
          flush=True)
    make_repo(repo, tmpls, n)
    check_copies(wg, repo, tmpls, a.out)
    env = dict(os.environ)
    rows = []
    sets = []
    corpus = sorted(os.path.join(a.corpus, f) for f in os.listdir(a.corpus)
                    if f.endswith(".whl")) if os.path.isdir(a.corpus) else []
    if corpus:
        sets.append(("corpus", corpus))
    repo_files = sorted(os.path.join(d, f) for d, _, fs in os.walk(repo) for f in fs)
    sets.insert(0, ("repository", repo_files))
    for label, files in sets:
        lst = os.path.join(a.out, "%s.txt" % label)
        with open(lst, "w") as f:
            f.write("".join(p + "\n" for p in files))
        nbytes = sum(os.path.getsize(p) for p in files)
        nobj = sum(elf_objects(p) for p in files)
        warm(files)
        print("%s: %d wheels, %.1f MB, %d ELF objects" % (label, len(files), nbytes / 1e6, nobj),
              flush=True)
        store = os.path.join(a.out, "facts-%s" % label)
        got = {}  # row -> [(wall, inputs, note)], one a round

        def row(name, wall, count, extra=""):
            got.setdefault(name, []).append((wall, count, extra))

        for _ in range(rounds):
            one_round(a, label, files, lst, store, repo, away, lib, env, row)
        for name, runs in got.items():
            walls = sorted(w for w, _, _ in runs)
            wall = walls[len(walls) // 2]
            count, extra = runs[0][1], runs[-1][2]
            rows.append({"set": label, "row": name, "inputs": count, "seconds": round(wall, 3),
                         "min_s": round(walls[0], 3), "max_s": round(walls[-1], 3),
                         "per_s": round(count / wall, 1) if wall else 0.0,
                         "objects_per_s": round(nobj * count / len(files) / wall, 1)
                         if wall else 0.0, "note": extra})
            print("  %-30s %6d inputs %7.3f s (%.3f-%.3f) %9.1f /s %s"
                  % (name, count, wall, walls[0], walls[-1], count / wall, extra), flush=True)
        if label == "repository" and a.auditwheel and not a.quick:
            peer(a, rows, files, nobj, wg, label)
    with open(os.path.join(a.out, "rows.json"), "w") as f:
        json.dump(rows, f, indent=1)
    estimate(rows)
    return 0


def one_round(a, label, files, lst, store, repo, away, lib, env, row):
    """Every row once, on a fresh facts store; the facts rows checked against the wheels'."""
    wg = os.path.join(a.build, "wheelgate")
    if os.path.isdir(store):
        shutil.rmtree(store)
    scan = [wg, "scan", "--no-config", "-q", "--target-set", TARGET, "--from", lst]
    outs = {}
    for j in (1, 2):
        o = os.path.join(a.out, "%s-j%d.jsonl" % (label, j))
        wall, _ = timed(scan + ["-j%d" % j, "-o", o])
        outs[j] = o
        row("scan -j%d" % j, wall, len(files))
    for w in (1, 2):
        wall, s = dask_row(a.python, lib, lst, os.path.join(a.out, "dask-%s-%d" % (label, w)),
                           w, env)
        row("dask LocalCluster %d worker%s" % (w, "s" if w > 1 else ""), s["scan_seconds"],
            s["scanned"], "(%.1f s with the cluster's start)" % wall)
    o = os.path.join(a.out, "%s-store.jsonl" % label)
    wall, _ = timed(scan + ["-j2", "--facts-dir", store, "-o", o])
    row("scan -j2 --facts-dir (store)", wall, len(files))
    o = os.path.join(a.out, "%s-again.jsonl" % label)
    wall, _ = timed(scan + ["-j2", "--facts-dir", store, "-o", o])
    again = records(o)
    row("scan -j2 --facts-dir (stored)", wall, len(files),
        "(%d judged from stored facts)" % sum(1 for r in again if r["facts"]))
    # the generated wheels moved away: only their facts are left (the corpus is
    # read-only: it stays, and is not opened either)
    if label == "repository":
        os.rename(repo, away)
    nstored = sum(len(fs) for _, _, fs in os.walk(store))
    ff = {}
    for j in (1, 2):
        o = os.path.join(a.out, "%s-facts-j%d.jsonl" % (label, j))
        wall, _ = timed([wg, "scan", "--no-config", "-q", "--target-set", TARGET,
                         "--from-facts", "--facts-dir", store, "-j%d" % j, "-o", o])
        ff[j] = o
        row("re-judge from facts -j%d" % j, wall, nstored)
    if label == "repository":
        os.rename(away, repo)
    # the facts rows say what the wheels rows say
    by_sha = {r["sha256"]: key(r) for r in records(outs[1]) if r["sha256"]}
    disagree = [r["path"] for r in records(ff[1]) if by_sha.get(r["sha256"]) != key(r)]
    j2 = {r["path"]: key(r) for r in records(outs[2])}
    disagree += [r["path"] for r in records(outs[1]) if j2.get(r["path"]) != key(r)]
    if disagree:
        sys.stderr.write("bench/repo.py: %s: %d records disagree, e.g. %s\n"
                         % (label, len(disagree), disagree[:3]))
        raise SystemExit(1)


def peer(a, rows, files, nobj, wg, label):
    """auditwheel show, one process a wheel as a user runs it, on an even sample of the
    repository; wheelgate scan -j1 on the same sample in the same run, for the ratio."""
    src = os.path.join(a.auditwheel, "src")
    stub = os.path.join(a.out, "auditwheel-stub")
    os.makedirs(os.path.join(stub, "auditwheel-0+src.dist-info"), exist_ok=True)
    with open(os.path.join(stub, "auditwheel-0+src.dist-info", "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: auditwheel\nVersion: 0+src\n")
    step = max(1, len(files) // a.sample)
    sample = files[::step][:a.sample]
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + stub)
    t0 = time.monotonic()
    for p in sample:
        subprocess.run([sys.executable, "-m", "auditwheel", "show", p], capture_output=True,
                       env=env, timeout=600)
    aw = time.monotonic() - t0
    lst = os.path.join(a.out, "sample.txt")
    with open(lst, "w") as f:
        f.write("".join(p + "\n" for p in sample))
    wall, _ = timed([wg, "scan", "--no-config", "-q", "-j1", "--target-set", TARGET,
                     "--from", lst, "-o", os.devnull])
    for name, w in (("auditwheel show (sample)", aw), ("scan -j1 (same sample)", wall)):
        rows.append({"set": label, "row": name, "inputs": len(sample), "seconds": round(w, 3),
                     "per_s": round(len(sample) / w, 1), "objects_per_s": None, "note": ""})
        print("  %-28s %6d inputs %8.2f s %9.1f /s" % (name, len(sample), w, len(sample) / w),
              flush=True)
    print("  auditwheel show / scan -j1 on the same %d wheels: %.1fx" % (len(sample), aw / wall),
          flush=True)


def estimate(rows):
    """8.4 million objects on N machines of 2 cores, at the measured objects per second."""
    print("\npaper estimate, %s objects (PyPI's .so files):" % format(PYPI_OBJECTS, ","))
    for label in ("repository", "corpus"):
        for name in ("scan -j2", "re-judge from facts -j2"):
            r = [x for x in rows if x["set"] == label and x["row"] == name]
            if not r or not r[0]["objects_per_s"]:
                continue
            rate = r[0]["objects_per_s"]
            hours = [PYPI_OBJECTS / rate / n / 3600 for n in (1, 10, 100)]
            print("  %-10s %-24s %8.1f objects/s: 1 machine %7.1f h, 10: %6.1f h, 100: %5.2f h"
                  % (label, name, rate, *hours))


if __name__ == "__main__":
    sys.exit(main())

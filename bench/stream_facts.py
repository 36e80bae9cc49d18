#!/usr/bin/env python3
"""Issue 30, target 3: the facts of ELF objects read as they stream (sparsely) against the facts
of the same objects read whole, on real libraries no one here wrote.

  stream_facts.py [--deflated] [--each] [--min-size MB] [--wheelgate WG] PATH...

Every ELF file of at least --min-size MB (default 8: what is streamed by default) under the
PATHs (files or directories, walked; one file per name) is packed into one wheel per batch of
about 2 GB (stored; --deflated: deflate level 6), and `wheelgate inspect --json` runs on it
twice: `--limit max_member_held=0` (every member streamed, every object read sparsely) and
`--limit max_member_held=100G` (every member read whole, as before issue 30). The two documents
must be byte-identical. `--read-stats` of the streamed run says what the objects took
(--each: one wheel per file, a line per file).
Exit 0 when every batch matched, 1 when one differed (the first differing lines are printed),
2 on a usage error. SPDX-License-Identifier: GPL-3.0-or-later"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def walk(paths, min_size):
    seen = {}
    for p in paths:
        files = [p] if os.path.isfile(p) else [
            os.path.join(d, n) for d, _, ns in os.walk(p) for n in sorted(ns)]
        for f in files:
            if os.path.islink(f) or not os.path.isfile(f):
                continue
            if os.path.getsize(f) >= min_size and is_elf(f):
                seen.setdefault(os.path.basename(f), f)
    return sorted(seen.values())


def main():
    args = sys.argv[1:]
    each, deflated, min_mb, wg = False, False, 8.0, os.path.join(os.path.dirname(HERE), "build", "wheelgate")
    while args and args[0].startswith("--"):
        a = args.pop(0)
        if a == "--deflated":
            deflated = True
        elif a == "--each":
            each = True
        elif a == "--min-size" and args:
            min_mb = float(args.pop(0))
        elif a == "--wheelgate" and args:
            wg = args.pop(0)
        else:
            sys.exit(__doc__)
    if not args:
        sys.exit(__doc__)
    files = walk(args, int(min_mb * 1e6))
    if not files:
        print("stream_facts: no ELF file of %g MB or more under %s" % (min_mb, " ".join(args)))
        return 2
    batches, cur, size = [], [], 0
    for f in files:
        cur.append(f)
        size += os.path.getsize(f)
        if size >= 2e9 or each:
            batches.append(cur)
            cur, size = [], 0
    if cur:
        batches.append(cur)
    print("%d ELF files of %g MB or more, %.2f GB, in %d wheel(s)" % (
        len(files), min_mb, sum(map(os.path.getsize, files)) / 1e9, len(batches)))
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, batch in enumerate(batches):
            w = os.path.join(tmp, "nvidia_bench-13.0.0-py3-none-manylinux_2_27_x86_64.whl")
            subprocess.run([sys.executable, os.path.join(HERE, "make-wheel.py")] +
                           ([] if deflated else ["--stored"]) + [w] + batch, check=True)
            runs = []
            for held in ("0", "100G"):
                r = subprocess.run([wg, "inspect", "--json", "--read-stats", "--limit",
                                    "max_member_held=" + held, w], capture_output=True)
                runs.append(r)
            stats = runs[0].stderr.decode(errors="replace").strip().splitlines()
            same = runs[0].stdout == runs[1].stdout and runs[0].returncode == runs[1].returncode
            print("batch %d: %s, exit %d/%d, %d bytes of JSON: %s" % (
                i + 1, os.path.relpath(batch[0], args[0]) if each else "%d files" % len(batch),
                runs[0].returncode, runs[1].returncode, len(runs[0].stdout),
                "identical" if same else "DIFFERENT"))
            for line in stats:
                print("  " + line.split(": ", 1)[-1])
            if not same:
                status = 1
                a = runs[0].stdout.decode(errors="replace").splitlines()
                b = runs[1].stdout.decode(errors="replace").splitlines()
                shown = 0
                for k, (x, y) in enumerate(zip(a, b)):
                    if x != y and shown < 10:
                        print("  line %d streamed: %s\n  line %d whole:    %s" % (k + 1, x[:200], k + 1, y[:200]))
                        shown += 1
    return status


if __name__ == "__main__":
    sys.exit(main())

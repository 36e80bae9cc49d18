#!/usr/bin/env python3
"""Rewrites the speed tables of docs/speed.md and README.md (a shorter one) from the last run of
bench/speed.sh (its raw numbers in bench/out/*.tsv): the lines between <!-- speed-table -->
and <!-- /speed-table -->.

  speed_table.py [OUT_DIR [DOC]]     (defaults: bench/out, docs/speed.md and README.md)

Each cell is the median over the run's rounds; "(N.Nx)" is the median of the per-round ratios
of that command's wall time to check's. Exit 1 when a measurement is missing.
SPDX-License-Identifier: GPL-3.0-or-later"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KINDS = (("deflated", "760 MB deflated, 3 CUDA libraries"),
         ("stored", "1,005 MB stored twin"),
         ("tiny", "20,000 tiny members"),
         ("huge", "10 MB wheel of one 1 GiB object"))


def load(path):
    runs = {}
    with open(path) as f:
        for line in f:
            r, label, wall, rss, code = line.rstrip("\n").split("\t")[:5]
            anon = int(line.rstrip("\n").split("\t")[5]) if line.count("\t") >= 5 else 0
            runs.setdefault(label, {})[int(r)] = (float(wall), int(rss), anon)
    return runs


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "out")
    doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "docs", "speed.md")
    short = ["| wheel | `wheelgate check` | `unzip -p` | peak RSS | before issue 30 |",
             "|---|---|---|---|---|"]
    rows = ["| wheel | `check` (2 threads) | `check -j 1` | `unzip -p` | ISA-L floor, 2 threads "
            "| `check` before issue 30 | peak RSS of `check` | before |",
            "|---|---|---|---|---|---|---|---|"]
    for kind, title in KINDS:
        runs = load(os.path.join(out, kind + ".tsv"))

        def med(label):
            if label not in runs:
                return None
            return statistics.median(v[0] for v in runs[label].values())

        def ratio(label):
            if label not in runs:
                return ""
            rs = [runs[label][r][0] / runs["check"][r][0] for r in runs["check"] if r in runs[label]]
            return " (%.2fx)" % statistics.median(rs)

        def cell(label, with_ratio=True):
            m = med(label)
            if m is None:
                return "—"
            return ("%.3f s" % m) + (ratio(label) if with_ratio else "")

        rss = max(v[1] for v in runs["check"].values()) / 1024
        before = runs.get("check (before)")
        rss_b = "%.0f MiB" % (max(v[1] for v in before.values()) / 1024) if before else "—"
        rows.append("| %s | %s | %s | %s | %s | %s | %.0f MiB | %s |" % (
            title, cell("check", False), cell("check -j 1", False), cell("unzip -p"),
            cell("floor -s -j 2"), cell("check (before)"), rss, rss_b))
        short.append("| %s | %s | %s | %.0f MiB | %s, %s |" % (
            title, cell("check", False), cell("unzip -p"), rss,
            cell("check (before)", False), rss_b))
    targets = [(doc, rows)]
    if len(sys.argv) <= 2:
        targets.append((os.path.join(ROOT, "README.md"), short))
    for path, lines in targets:
        text = open(path).read()
        a, b = "<!-- speed-table -->", "<!-- /speed-table -->"
        if a not in text or b not in text:
            sys.exit("%s: no %s ... %s markers" % (path, a, b))
        head, rest = text.split(a, 1)
        _, tail = rest.split(b, 1)
        with open(path, "w") as f:
            f.write(head + a + "\n" + "\n".join(lines) + "\n" + b + tail)
        print("\n".join(lines))


if __name__ == "__main__":
    main()

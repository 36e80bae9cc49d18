#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stages that hold: read the object files with nm and check the layering of lib/src.

The stage order is read from the folder table of lib/src/README.md (written there once).
A folder may reference symbols defined by its own stage or by an earlier one; `api/` is the
last stage and may call anything, `core/` is the first and is called by all. Any reference
from a folder to a symbol defined by a later stage is a violation.

It also finds circles of files: a cycle in the graph "object A references a global symbol
defined by object B", within each group of objects given with --cycles (the library's objects
are always one group).

usage: check_stages.py --readme lib/src/README.md --lib OBJDIR [--src lib/src]
                       [--cycles NAME=OBJDIR[=SRCDIR]]... [--known FILE] [--nm nm]
OBJDIR for --lib is the build tree's folder that mirrors lib/src (for example
build/CMakeFiles/wg_obj.dir/lib/src); objects of the library outside it (the embedded rule
data, wg_data.c.o, one level above lib/) belong to core/. Exit 0 when the stages hold,
1 when they do not (every offending edge and cycle is printed), 2 on a usage error.
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys


def read_order(readme):
    """The folders of lib/src in stage order: the first column of the README's folder table."""
    order = []
    with open(readme, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\|\s*`([a-z_]+)/`\s*\|", line)
            if m and m.group(1) not in order:
                order.append(m.group(1))
    return order


def objects_under(root, src=None):
    """The objects below root; with src (the source folder root mirrors), only those whose
    source is still there (a build tree keeps the objects of files moved or removed)."""
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if not name.endswith(".o"):
                continue
            path = os.path.join(dirpath, name)
            if src is not None:
                source = os.path.join(src, os.path.relpath(path, root)[:-2])
                if not os.path.exists(source):
                    print("(skipped %s: %s is gone)" % (path, source))
                    continue
            out.append(path)
    return sorted(out)


def nm_symbols(nm, path):
    """(defined global symbols, undefined symbols) of one object file."""
    res = subprocess.run([nm, "-P", "--no-sort", path], capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("check_stages: %s failed on %s: %s" % (nm, path, res.stderr.strip()))
    defined, undefined = set(), set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U" or (kind in ("w", "v") and len(parts) == 2):
            undefined.add(name)
        elif kind.isupper() and kind not in ("U", "N"):
            defined.add(name)
    return defined, undefined


def display(path, root):
    rel = os.path.relpath(path, root)
    return rel[:-2] if rel.endswith(".o") else rel


def build_graph(nm, objs, root):
    """object -> {object: [symbols]} for references resolved inside this set of objects."""
    syms = {o: nm_symbols(nm, o) for o in objs}
    definer = {}
    for o, (defined, _u) in syms.items():
        for s in defined:
            definer.setdefault(s, o)
    graph = {}
    for o, (_d, undefined) in syms.items():
        edges = {}
        for s in sorted(undefined):
            d = definer.get(s)
            if d is not None and d != o:
                edges.setdefault(d, []).append(s)
        graph[o] = edges
    return graph


def strongly_connected(graph):
    """Tarjan's algorithm (iterative): the components of more than one node."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, {})))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


def one_cycle(graph, comp):
    """A shortest cycle through the first file of a component (breadth-first)."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node]):
            if nxt not in members:
                continue
            if nxt == start:
                path = [node]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                path.reverse()
                return path + [start]
            if nxt not in prev:
                prev[nxt] = node
                queue.append(nxt)
    return comp + [start]


def read_known(path):
    """Known circles: lines 'GROUP: PATTERN... # why' (fnmatch patterns of files)."""
    known = []
    if not path:
        return known
    with open(path, encoding="utf-8") as f:
        for line in f:
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            group, _, pats = text.partition(":")
            known.append({"group": group.strip(), "patterns": pats.split(),
                          "line": line.strip(), "seen": False})
    return known


def is_known(known, name, files):
    """A circle is known when each of its files matches a pattern of one entry of its group
    and each pattern of that entry matches one of its files."""
    for k in known:
        if k["group"] != name:
            continue
        pats = k["patterns"]
        if all(any(fnmatch.fnmatch(f, p) for p in pats) for f in files) and \
           all(any(fnmatch.fnmatch(f, p) for f in files) for p in pats):
            k["seen"] = True
            return k
    return None


def report_cycles(name, graph, root, known=()):
    comps = strongly_connected(graph)
    failures = 0
    for comp in comps:
        cycle = one_cycle(graph, comp)
        files = [display(c, root) for c in comp]
        k = is_known(known, name, files)
        if k:
            print("KNOWN CYCLE of files in %s (%d files), listed in the known circles: %s"
                  % (name, len(comp), k["line"]))
            continue
        failures += 1
        print("CYCLE of files in %s (%d files: %s):" % (
            name, len(comp), ", ".join(files)))
        for a, b in zip(cycle, cycle[1:]):
            syms = graph[a][b]
            print("    %s -> %s  (%s%s)" % (display(a, root), display(b, root),
                                          ", ".join(syms[:4]),
                                          ", ..." if len(syms) > 4 else ""))
        rest = [(a, b) for a in comp for b in sorted(graph[a])
                if b in comp and (a, b) not in set(zip(cycle, cycle[1:]))]
        if rest:
            print("  and the other calls inside it:")
            for a, b in rest:
                syms = graph[a][b]
                print("    %s -> %s  (%s%s)" % (display(a, root), display(b, root),
                                              ", ".join(syms[:4]),
                                              ", ..." if len(syms) > 4 else ""))
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--readme", required=True)
    ap.add_argument("--lib", required=True, help="the build folder that mirrors lib/src")
    ap.add_argument("--cycles", action="append", default=[], metavar="NAME=OBJDIR[=SRCDIR]",
                    help="another group of objects checked for circles of files")
    ap.add_argument("--src", help="the source folder --lib mirrors (lib/src): objects "
                    "whose source is gone are left out")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--known", help="a file of known circles (GROUP: PATTERN... # why); "
                    "each must still exist, so the list only shrinks")
    args = ap.parse_args()

    order = read_order(args.readme)
    if len(order) < 2 or order[0] != "core" or order[-1] != "api":
        print("check_stages: %s: no folder table from core/ to api/ (found %s)"
              % (args.readme, order))
        return 2
    rank = {f: i for i, f in enumerate(order)}
    lib_objs = objects_under(args.lib, args.src)
    if not lib_objs:
        print("check_stages: no object files under %s (build first)" % args.lib)
        return 2
    # wg_data.c.o: the shipped rules compiled in (core/data.h), outside lib/src in the build.
    extra = [os.path.join(os.path.dirname(os.path.dirname(os.path.normpath(args.lib))), f)
             for f in ("wg_data.c.o",)]
    extra = [p for p in extra if os.path.exists(p)]

    def folder(o):
        if o in extra:
            return "core"
        return os.path.relpath(o, args.lib).split(os.sep)[0]

    failures = 0
    unknown = sorted({folder(o) for o in lib_objs} - set(rank))
    for u in unknown:
        print("FOLDER lib/src/%s/ is not in the stage table of %s" % (u, args.readme))
        failures += 1

    print("stage order (%s): %s" % (args.readme, " < ".join(order)))
    # The headers hold the same order: a file of lib/src/<folder>/ includes no header of a
    # later stage (#include "<stage>/...").
    if args.src:
        for dirpath, _dirs, names in os.walk(args.src):
            for nm_ in sorted(names):
                if not nm_.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, nm_)
                own = os.path.relpath(path, args.src).split(os.sep)[0]
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = re.match(r'\s*#\s*include\s+"([a-z_]+)/', line)
                        if m and own in rank and m.group(1) in rank and \
                           rank[m.group(1)] > rank[own]:
                            print("INCLUDE %s:%d includes %s, a later stage's header"
                                  % (os.path.relpath(path, args.src), lineno, line.strip()))
                            failures += 1
    graph = build_graph(args.nm, lib_objs + extra, args.lib)
    back = {}
    for o, edges in graph.items():
        fo = folder(o)
        for d, syms in edges.items():
            fd = folder(d)
            if fo in rank and fd in rank and rank[fd] > rank[fo]:
                back.setdefault((fo, fd), []).append((o, d, syms))
    for (fo, fd), items in sorted(back.items(), key=lambda kv: (rank[kv[0][0]], rank[kv[0][1]])):
        n = sum(len(s) for _o, _d, s in items)
        print("STAGE %s/ calls the later stage %s/ (%d symbols):" % (fo, fd, n))
        for o, d, syms in sorted(items):
            print("    %s -> %s  (%s)" % (display(o, args.lib), display(d, args.lib),
                                          ", ".join(syms)))
        failures += 1

    known = read_known(args.known)
    failures += report_cycles("lib/src", graph, args.lib, known)
    nfiles = len(lib_objs)
    for spec in args.cycles:
        name, _, path = spec.partition("=")
        path, _, src = path.partition("=")
        objs = objects_under(path, src or None)
        nfiles += len(objs)
        if not objs:
            print("check_stages: no object files under %s (%s)" % (path, name))
            return 2
        failures += report_cycles(name, build_graph(args.nm, objs, path), path, known)
    for k in known:
        if not k["seen"]:
            print("STALE known circle (no longer there: take it out of %s): %s"
                  % (args.known, k["line"]))
            failures += 1

    if failures:
        print("FAIL: %d stage or cycle problems in %d object files" % (failures, nfiles))
        return 1
    nknown = sum(1 for k in known if k["seen"])
    print("OK: %d object files, every reference goes to its own or an earlier stage, "
          "no circles of files%s" % (nfiles, " but %d known (%s)" % (nknown, args.known)
                                      if nknown else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

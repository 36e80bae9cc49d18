#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The stage checker's own test: tiny objects compiled here with cc, laid out as the build
tree lays out lib/src, with a stage table like lib/src/README.md's. A clean tree must pass; a
call into a later stage, a circle of files inside a folder and a circle in a second group
(as cli/serve is checked) must each fail, named with their files and symbols.

usage: selftest.py CHECKER [CC] [NM]
"""
import os
import subprocess
import sys
import tempfile

CHECKER = sys.argv[1]
CC = sys.argv[2] if len(sys.argv) > 2 else "cc"
NM = sys.argv[3] if len(sys.argv) > 3 else "nm"

README = """# stages
| folder | what enters | what leaves |
|---|---|---|
| `core/` | nothing | errors |
| `input/` | a path | bytes |
| `facts/` | bytes | facts |
| `api/` | the caller | everything |
"""

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)


def build(root, files):
    """files: {'core/a.c': source} -> objects under root/obj/lib/src/core/a.c.o"""
    lib = os.path.join(root, "obj", "lib", "src")
    for rel, src in files.items():
        csrc = os.path.join(root, "src", rel)
        os.makedirs(os.path.dirname(csrc), exist_ok=True)
        with open(csrc, "w") as f:
            f.write(src)
        obj = os.path.join(lib, rel + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        subprocess.run([CC, "-c", "-O0", "-I", os.path.join(root, "src"), "-o", obj, csrc],
                       check=True)
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write(README)
    return lib


def run(root, lib, extra=()):
    cmd = [sys.executable, CHECKER, "--readme", os.path.join(root, "README.md"), "--lib", lib,
           "--nm", NM] + list(extra)
    res = subprocess.run(cmd, capture_output=True, text=True)
    print("$ " + " ".join(cmd[1:]) + "\n" + res.stdout + res.stderr)
    return res.returncode, res.stdout


CLEAN = {
    "core/err.c": "int core_err(void) { return 1; }\n",
    "input/zip.c": "int core_err(void);\nint input_zip(void) { return core_err(); }\n",
    "facts/wheel.c": "int input_zip(void);\nint facts_wheel(void) { return input_zip(); }\n",
    "facts/scan.c": "int facts_wheel(void);\nint facts_scan(void) { return facts_wheel(); }\n",
    "api/scan.c": "int facts_scan(void); int core_err(void);\n"
                  "int api_scan(void) { return facts_scan() + core_err(); }\n",
}

with tempfile.TemporaryDirectory() as tmp:
    # 1. a tree that keeps its stages: passes
    lib = build(os.path.join(tmp, "clean"), CLEAN)
    rc, out = run(os.path.join(tmp, "clean"), lib)
    check(rc == 0, "a clean tree passes (rc %d)" % rc)
    check("core < input < facts < api" in out, "the order is read from the README table")

    # 2. input calls facts (a later stage): fails, naming the files and the symbol
    bad = dict(CLEAN)
    bad["input/source.c"] = ("int facts_scan(void);\n"
                             "int input_source(void) { return facts_scan(); }\n")
    lib = build(os.path.join(tmp, "back"), bad)
    rc, out = run(os.path.join(tmp, "back"), lib)
    check(rc == 1, "a call into a later stage fails (rc %d)" % rc)
    check("STAGE input/ calls the later stage facts/" in out, "the back edge is named")
    check("input/source.c -> facts/scan.c  (facts_scan)" in out,
          "the back edge names its files and symbol")
    check("CYCLE" not in out, "a back edge alone is no cycle")

    # 3. two files of one folder calling each other: a circle of files
    circ = dict(CLEAN)
    circ["facts/wheel.c"] = ("int input_zip(void); int facts_scan(void);\n"
                             "int facts_wheel(void) { return input_zip() + facts_scan(); }\n")
    lib = build(os.path.join(tmp, "circle"), circ)
    rc, out = run(os.path.join(tmp, "circle"), lib)
    check(rc == 1, "a circle of files fails (rc %d)" % rc)
    check("CYCLE of files in lib/src (2 files: facts/scan.c, facts/wheel.c)" in out,
          "the circle is named with its files")
    check("facts/scan.c -> facts/wheel.c  (facts_wheel)" in out and
          "facts/wheel.c -> facts/scan.c  (facts_scan)" in out, "the circle's edges are named")
    check("STAGE" not in out, "a circle inside a folder is no stage violation")
    # ...listed as known, it is reported and passes; a known entry that matches no circle fails
    known = os.path.join(tmp, "known.txt")
    with open(known, "w") as f:
        f.write("# why\nlib/src: facts/*.c  # a reason\n")
    rc, out = run(os.path.join(tmp, "circle"), lib, ["--known", known])
    check(rc == 0 and "KNOWN CYCLE of files in lib/src (2 files)" in out,
          "a known circle is reported and passes (rc %d)" % rc)
    with open(known, "w") as f:
        f.write("lib/src: facts/wheel.c  # one file of the two: not this circle\n")
    rc, out = run(os.path.join(tmp, "circle"), lib, ["--known", known])
    check(rc == 1 and "CYCLE of files in lib/src (2 files" in out and "STALE" in out,
          "a known entry must name the whole circle (rc %d)" % rc)
    with open(known, "w") as f:
        f.write("lib/src: facts/*.c  # a reason\n")
    clean_lib = os.path.join(tmp, "clean", "obj", "lib", "src")
    rc, out = run(os.path.join(tmp, "clean"), clean_lib, ["--known", known])
    check(rc == 1 and "STALE known circle" in out, "a stale known circle fails (rc %d)" % rc)

    # 4. a second group (as cli/serve): three files in a circle
    serve = os.path.join(tmp, "serve")
    os.makedirs(serve)
    ring = {"a.c": ("b", "a"), "b.c": ("c", "b"), "c.c": ("a", "c"), "d.c": ("a", "d")}
    for name, (callee, me) in ring.items():
        src = os.path.join(serve, name)
        with open(src, "w") as f:
            f.write("int f_%s(void);\nint f_%s(void) { return f_%s() + 1; }\n"
                    % (callee, me, callee))
        subprocess.run([CC, "-c", "-o", src + ".o", src], check=True)
    lib = build(os.path.join(tmp, "clean2"), CLEAN)
    rc, out = run(os.path.join(tmp, "clean2"), lib, ["--cycles", "serve=" + serve])
    check(rc == 1, "a circle in a second group fails (rc %d)" % rc)
    check("CYCLE of files in serve (3 files: a.c, b.c, c.c)" in out,
          "the three-file circle is named, the file outside it is not")
    check("a.c -> b.c  (f_b)" in out and "b.c -> c.c  (f_c)" in out and
          "c.c -> a.c  (f_a)" in out, "the circle's path is printed")

    # 5. a folder missing from the table fails
    extra = dict(CLEAN)
    extra["store/x.c"] = "int store_x(void) { return 0; }\n"
    lib = build(os.path.join(tmp, "unknown"), extra)
    rc, out = run(os.path.join(tmp, "unknown"), lib)
    check(rc == 1 and "FOLDER lib/src/store/ is not in the stage table" in out,
          "a folder outside the table fails")

    # 6. with --src: a header of a later stage included fails; objects of gone sources are
    # left out (a build tree keeps them)
    inc = dict(CLEAN)
    inc["input/zip.c"] = '#include "facts/facts.h"\nint input_zip(void) { return 0; }\n'
    root = os.path.join(tmp, "include")
    os.makedirs(os.path.join(root, "src", "facts"))
    with open(os.path.join(root, "src", "facts", "facts.h"), "w") as f:
        f.write("/* facts */\n")
    lib = build(root, inc)
    rc, out = run(root, lib, ["--src", os.path.join(root, "src")])
    check(rc == 1 and 'INCLUDE input/zip.c:1 includes #include "facts/facts.h"' in out,
          "a later stage's header included fails (rc %d)" % rc)
    os.remove(os.path.join(root, "src", "input", "zip.c"))
    rc, out = run(root, lib, ["--src", os.path.join(root, "src")])
    check(rc == 0 and "skipped" in out and "input/zip.c is gone" in out,
          "an object whose source is gone is left out (rc %d)" % rc)

if failures:
    print("%d self-test checks failed" % len(failures))
    sys.exit(1)
print("stage checker self-test: all checks passed")

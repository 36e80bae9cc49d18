#!/usr/bin/env python3
"""The fixed costs of an environment (issue 14, point 4): `wheelgate check --env` with an empty
library-index cache (cold) and a full one (warm), and what the pip gate adds to `pip install`
of a small wheel with a warm cache. Medians of paired runs (the programs compared alternate).

usage: env.py --wheelgate BUILD/wheelgate [--base OLD/wheelgate] [--env ENV --wheel W]...
              [--pip HOOKS_DIR] [--runs N]

  --env ENV --wheel W   one `check --env ENV W` case (repeatable, paired in order); each
                        binary's cold runs start from an empty cache directory, its warm runs
                        from the one its first run filled.
  --pip HOOKS_DIR       the gate (hooks/pip): a venv of this python (--system-site-packages,
                        its pip), a small wheel built here (a cpXY extension linked to libm and
                        libz), then `pip install --no-index --no-deps --force-reinstall W` plain
                        and through `python -m wheelgate_pip install` with each binary's
                        libwheelgate.so.0 (WHEELGATE_LIB), the gate's cache warm; and where the
                        gated run's time goes (import, context and environment, the check).
                        The gate runs from a byte-compiled copy of HOOKS_DIR, as installed.
Python 3 standard library only.
"""
import argparse
import base64
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile


def timed(cmd, env=None, cwd=None, cpu=None):
    """Wall seconds of cmd; its CPU seconds (user + system) appended to cpu when given."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    dt = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        sys.exit("%s: exit %d\n%s" % (" ".join(cmd), p.returncode, p.stderr.decode()[-2000:]))
    if cpu is not None:
        cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return dt


def med(xs):
    return statistics.median(xs)


def env_cases(args, bins, tmp):
    print("## check --env: cold (empty cache) and warm, medians of %d paired runs" % args.runs)
    print("| environment | wheel | binary | cold s | warm s | entries | cache bytes |")
    print("|---|---|---|---|---|---|---|")
    for envp, wheel in zip(args.env, args.wheel):
        cold = {b: [] for b in bins}
        warm = {b: [] for b in bins}
        caches = {b: os.path.join(tmp, "cache-%d" % i) for i, b in enumerate(bins)}
        for _ in range(args.runs):
            for b in bins:  # cold: an empty cache each time
                shutil.rmtree(caches[b], ignore_errors=True)
                e = dict(os.environ, XDG_CACHE_HOME=caches[b])
                cold[b].append(timed([b, "check", "--no-config", "--env", envp, wheel], e))
        for _ in range(args.runs):
            for b in bins:
                e = dict(os.environ, XDG_CACHE_HOME=caches[b])
                warm[b].append(timed([b, "check", "--no-config", "--env", envp, wheel], e))
        for b in bins:
            libs = os.path.join(caches[b], "wheelgate", "libs")
            files = os.listdir(libs) if os.path.isdir(libs) else []
            size = sum(os.path.getsize(os.path.join(libs, f)) for f in files)
            print("| %s | %s | %s | %.3f | %.3f | %d | %d |" % (
                envp, os.path.basename(wheel), b, med(cold[b]), med(warm[b]), len(files), size))
    print()


def small_wheel(out, tag):
    """A cpXY wheel of one extension module that needs libm and libz (the system's)."""
    src = os.path.join(out, "wgsmall.c")
    with open(src, "w") as f:
        f.write("#include <math.h>\n#include <zlib.h>\ndouble wgsmall_cos(double x)"
                " { return cos(x) + (double)zlibVersion()[0]; }\n"
                "void *PyInit_wgsmall(void) { return 0; }\n")
    so = "wgsmall%s" % sysconfig.get_config_var("EXT_SUFFIX")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", os.path.join(out, so), src, "-lm",
                    "-lz"], check=True)
    name = "wgsmall-1.0"
    whl = os.path.join(out, "wgsmall-1.0-%s-%s-linux_x86_64.whl" % (tag, tag))
    files = {so: open(os.path.join(out, so), "rb").read(),
             name + ".dist-info/METADATA": b"Metadata-Version: 2.1\nName: wgsmall\nVersion: 1.0\n",
             name + ".dist-info/WHEEL": ("Wheel-Version: 1.0\nGenerator: bench/env.py\n"
                                         "Root-Is-Purelib: false\nTag: %s-%s-linux_x86_64\n"
                                         % (tag, tag)).encode()}
    rec = []
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(n, d)
            h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
            rec.append("%s,sha256=%s,%d" % (n, h, len(d)))
        rec.append(name + ".dist-info/RECORD,,")
        z.writestr(name + ".dist-info/RECORD", "\n".join(rec) + "\n")
    return whl


BREAKDOWN = r"""
import os, sys, time
t0 = time.perf_counter()
import wheelgate_pip, wheelgate
wheelgate.library_path()
t1 = time.perf_counter()
c = wheelgate.Checker(env=sys.prefix, profile="install")
t2 = time.perf_counter()
with c:
    r = c.check([sys.argv[1]])
t3 = time.perf_counter()
print("%.1f %.1f %.1f" % ((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3))
"""


def pip_gate(args, bins, tmp):
    # A copy of the binding and the gate, byte-compiled as an installation is (without
    # .pyc files, as under PYTHONDONTWRITEBYTECODE, each run compiles them again: 5 ms).
    hooks = os.path.join(tmp, "hooks")
    shutil.copytree(os.path.abspath(args.pip), hooks,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", hooks], check=True)
    venv = os.path.join(tmp, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    tag = "cp%d%d" % sys.version_info[:2]
    whl = small_wheel(tmp, tag)
    pipargs = ["install", "--no-index", "--no-deps", "--force-reinstall", "--no-compile",
               "--disable-pip-version-check", "-q", whl]
    base = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PYTHONPATH=hooks)
    variants = {"plain pip": ([py, "-m", "pip"] + pipargs, base)}
    for i, b in enumerate(bins):
        lib = os.path.join(os.path.dirname(os.path.abspath(b)), "libwheelgate.so.0")
        e = dict(base, WHEELGATE_LIB=lib, XDG_CACHE_HOME=os.path.join(tmp, "pipcache-%d" % i))
        variants["gated, " + b] = ([py, "-m", "wheelgate_pip"] + pipargs, e)
    for cmd, e in variants.values():  # warm the caches (and the page cache)
        timed(cmd, e)
    times = {k: [] for k in variants}
    cpus = {k: [] for k in variants}
    for _ in range(args.runs):
        for k, (cmd, e) in variants.items():
            times[k].append(timed(cmd, e, cpu=cpus[k]))
    # added: the median of the paired differences (pip's own time varies by tens of ms)
    added = {k: med([g - p for g, p in zip(times[k], times["plain pip"])]) for k in variants}
    added_cpu = {k: med([g - p for g, p in zip(cpus[k], cpus["plain pip"])]) for k in variants}
    print("## pip install of a small wheel (%s, %d bytes), warm cache, medians of %d paired runs"
          % (os.path.basename(whl), os.path.getsize(whl), args.runs))
    print("| | wall s | CPU s | added wall ms | added CPU ms |")
    print("|---|---|---|---|---|")
    for k in variants:
        print("| %s | %.3f | %.3f | %s | %s |" % (
            k, med(times[k]), med(cpus[k]),
            "" if k == "plain pip" else "%.1f" % (added[k] * 1e3),
            "" if k == "plain pip" else "%.1f" % (added_cpu[k] * 1e3)))
    print("(added: the median of the paired differences to plain pip; CPU: user + system of "
          "the process tree, steadier than wall on a shared machine)")
    print()
    print("where the gated run's own time goes (in one process, medians): import + load of "
          "libwheelgate | Checker (context, rules, env) | check")
    print("| binary | import ms | Checker ms | check ms |")
    print("|---|---|---|---|")
    for i, b in enumerate(bins):
        lib = os.path.join(os.path.dirname(os.path.abspath(b)), "libwheelgate.so.0")
        e = dict(base, WHEELGATE_LIB=lib, XDG_CACHE_HOME=os.path.join(tmp, "pipcache-%d" % i))
        rows = []
        for _ in range(args.runs):
            p = subprocess.run([py, "-c", BREAKDOWN, whl], env=e, capture_output=True, text=True)
            if p.returncode:
                sys.exit(p.stderr)
            rows.append([float(x) for x in p.stdout.split()])
        print("| %s | %.1f | %.1f | %.1f |" % (b, *[med([r[j] for r in rows]) for j in range(3)]))
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheelgate", required=True)
    ap.add_argument("--base")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--wheel", action="append", default=[])
    ap.add_argument("--pip")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    if len(args.env) != len(args.wheel):
        sys.exit("--env and --wheel go in pairs")
    bins = [args.wheelgate] + ([args.base] if args.base else [])
    tmp = tempfile.mkdtemp(prefix="wg-bench-env-")
    try:
        if args.env:
            env_cases(args, bins, tmp)
        if args.pip:
            pip_gate(args, bins, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""wheelgate against reality in a real Python environment.

Every installed distribution of PY's environment whose RECORD lists an ELF file is packed back
into a wheel from its RECORD and checked with `wheelgate check --env PY --gpu auto`; reality is
measured in fresh processes of PY: every extension module imported by its dotted name, the
distribution's top-level packages imported, every other shared library loaded with ctypes after
`import torch` (unless an import or a GPU operation was seen to map it: /proc/self/maps), and
one GPU operation each for torch, cupy and jax. The confusion table compares the two.

Standard library only. Usage:
  truth.py --wheelgate PATH/TO/wheelgate [--python PY] [--out DIR] [--jobs N]
           [--only NAME...] [--timeout S]
See bench/real-env/README.md.
SPDX-License-Identifier: GPL-3.0-or-later
"""
import argparse
import base64
import collections
import concurrent.futures
import csv
import hashlib
import io
import itertools
import json
import mmap
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zipfile

MARK = "@@wheelgate-truth@@"
MSG_MAX = 300          # characters of a message kept in the table
TEXT_MAX = 2000        # characters of any captured text kept in truth.json
BIG = 64 << 20         # files above this are stored, not deflated (see README: measured)
INSTALLER_FILES = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD", "RECORD.jws",
                   "RECORD.p7s"}
T0 = time.monotonic()
DEADLINE = [float("inf")]   # --deadline: nothing starts after it, nothing runs past it
NOT_RUN = "not run: --deadline reached"
LOG_LOCK = threading.Lock()


def log(*a):
    with LOG_LOCK:
        print("[%6.1fs]" % (time.monotonic() - T0), *a, file=sys.stderr, flush=True)


def clip(s, n=TEXT_MAX):
    s = "" if s is None else str(s)
    return s if len(s) <= n else s[:n] + "... [%d more characters]" % (len(s) - n)


def dist_key(name):
    return re.sub(r"[-_.]+", "-", name or "").lower()


# --- the environment, as PY sees it -------------------------------------------------------

ENUMERATE = r'''
import csv, importlib.machinery, importlib.metadata as md, importlib.util, io, json, os, re, sys
dists, shadowed, seen = [], [], set()
for d in md.distributions():
    p = getattr(d, "_path", None)
    if p is None:
        continue
    p = os.path.abspath(str(p))
    try:
        name = d.metadata["Name"] or ""
    except Exception:
        name = ""
    key = re.sub(r"[-_.]+", "-", name).lower()
    if not key or key in seen:
        shadowed.append(p)
        continue
    seen.add(key)
    def text(f):
        try:
            return d.read_text(f)
        except Exception:
            return None
    rec = text("RECORD")
    files = [r[0] for r in csv.reader(io.StringIO(rec)) if r and r[0]] if rec else None
    wheel = text("WHEEL") or ""
    kv = [l.split(":", 1) for l in wheel.splitlines() if ":" in l]
    top = text("top_level.txt")
    dists.append({
        "name": name, "version": d.version, "dist_info": p, "site": os.path.dirname(p),
        "record": files,
        "tags": [v.strip() for k, v in kv if k.strip().lower() == "tag"],
        "root_is_purelib": any(k.strip().lower() == "root-is-purelib" and
                               v.strip().lower() == "true" for k, v in kv),
        "build": next((v.strip() for k, v in kv if k.strip().lower() == "build"), None),
        "top_level": [t.strip() for t in top.splitlines() if t.strip()] if top else None,
        "requires": list(d.requires or []),
    })
print(json.dumps({
    "python": sys.version.split()[0], "executable": sys.executable, "prefix": sys.prefix,
    "ext_suffixes": importlib.machinery.EXTENSION_SUFFIXES,
    "torch": importlib.util.find_spec("torch") is not None,
    "dists": dists, "shadowed": shadowed}))
'''


def enumerate_env(py, timeout, cwd):
    rc, out, err = run_bounded([py, "-c", ENUMERATE], timeout, cwd, probe_env())
    if rc != 0:
        sys.exit("truth: %s could not list its distributions (%s): %s" %
                 (py, "timeout" if rc is None else "exit %d" % rc,
                  clip(err.decode(errors="replace"), 1000)))
    return json.loads(out)


def probe_env():
    e = dict(os.environ)
    e["PYTHONDONTWRITEBYTECODE"] = "1"   # leave the environment as it is
    e["PYTHONNOUSERSITE"] = "1"
    e["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"   # jax must share the GPU with the others
    return e


# --- which files are ELF objects, and what kind ---------------------------------------------

def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def exports_pyinit(path, stem):
    """A plain .so is an extension module when it carries PyInit_<stem> (its dynamic string
    table does; a byte search is enough to tell a module from a library)."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size > (512 << 20):
                return False
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return m.find(b"PyInit_" + stem.encode() + b"\0") >= 0
    except (OSError, ValueError):
        return False


def classify(arc, path, suffixes):
    """(kind, dotted module name or None): kind is module, library or other (not loaded)."""
    base = arc.rsplit("/", 1)[-1]
    specific = [s for s in suffixes if s != ".so"]
    suf = next((s for s in specific if base.endswith(s)), None)
    if suf is None and base.endswith(".so") and re.search(r"\.cpython-\d+", base):
        return "other", None    # a module for another interpreter: this one never loads it
    if suf is None and base.endswith(".so") and ".so" in suffixes:
        stem = base[:-3]
        if stem.isidentifier() and exports_pyinit(path, stem):
            suf = ".so"
    if suf is not None:
        parts = arc[:-len(suf)].split("/")
        if all(p.isidentifier() for p in parts):
            return "module", ".".join(parts)
        return "library", None  # an extension no dotted name reaches: loaded by path
    if base.endswith(".so") or ".so." in base:
        return "library", None
    return "other", None


def scan_dist(d, suffixes):
    """Resolves d's RECORD: files inside the site directory (arcname -> path), files outside
    it, missing files, and the ELF members with their kind."""
    site = d["site"]
    inside, outside, missing = {}, [], []
    for rel in d["record"] or []:
        if rel.startswith("/") or os.path.normpath(rel).startswith(".."):
            outside.append(rel)
            continue
        arc = os.path.normpath(rel).replace(os.sep, "/")
        if "__pycache__" in arc.split("/"):
            continue
        path = os.path.join(site, arc)
        if not os.path.isfile(path):
            missing.append(arc)
            continue
        inside[arc] = path
    members = {}
    for arc, path in inside.items():
        if is_elf(path):
            kind, mod = classify(arc, path, suffixes)
            members[arc] = {"kind": kind, "module": mod}
    outside_elf = [r for r in outside if is_elf(os.path.normpath(os.path.join(site, r)))]
    return inside, outside, outside_elf, missing, members


def top_levels(d, inside, suffixes):
    if d["top_level"] is not None:
        names = d["top_level"]
    else:
        names = []
        for arc in inside:
            first = arc.split("/", 1)[0]
            if "/" in arc:
                if first.isidentifier():    # not <pkg>.libs, <name>.dist-info, <name>.data
                    names.append(first)
            elif first.endswith(".py"):
                names.append(first[:-3])
            else:
                suf = next((s for s in suffixes if first.endswith(s)), None)
                if suf:
                    names.append(first[:-len(suf)])
    out = []
    for n in names:
        n = n.replace("/", ".")
        if all(p.isidentifier() for p in n.split(".")) and n not in out:
            out.append(n)
    return out


# --- packing a wheel back from its RECORD -------------------------------------------------

def wheel_filename(d):
    stem = os.path.basename(d["dist_info"])[:-len(".dist-info")]
    name, _, ver = stem.partition("-")
    if not name or not ver or "-" in ver:
        name, ver = re.sub(r"[-_.]+", "_", d["name"]), d["version"].replace("-", "_")
    tags = [t.split("-") for t in d["tags"] if t.count("-") == 2] or [["py3", "none", "any"]]
    comp = []
    for i in range(3):
        seen = []
        for t in tags:
            if t[i] not in seen:
                seen.append(t[i])
        comp.append(".".join(seen))
    build = "-" + d["build"] if d.get("build") else ""
    return "%s-%s%s-%s.whl" % (name, ver, build, "-".join(comp))


def record_hash(digest):
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def add_file(zf, arc, path, level, store_all):
    st = os.stat(path)
    zi = zipfile.ZipInfo.from_file(path, arc, strict_timestamps=False)
    zi.compress_type = zipfile.ZIP_STORED if store_all or st.st_size > BIG else zipfile.ZIP_DEFLATED
    try:
        zi.compress_level = level           # Python 3.13+
    except AttributeError:
        zi._compresslevel = level           # 3.7 to 3.12
    h, n = hashlib.sha256(), 0
    with open(path, "rb") as f, zf.open(zi, "w") as w:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
            w.write(b)
            n += len(b)
    return record_hash(h.digest()), n


def pack(d, inside, outside, wheels_dir, level, store_all, reuse):
    """Writes the wheel; returns what went in and what was left out."""
    t = time.monotonic()
    fname = wheel_filename(d)
    dest = os.path.join(wheels_dir, fname)
    info = {"wheel": dest, "files": 0, "bytes": 0, "notes": []}
    if reuse and os.path.isfile(dest) and \
            os.path.getmtime(dest) >= os.path.getmtime(os.path.join(d["dist_info"], "RECORD")):
        info["notes"].append("reused")
        info["bytes"] = os.path.getsize(dest)
        return info
    di = os.path.basename(d["dist_info"])
    files = [(a, p) for a, p in sorted(inside.items()) if not a.startswith(di + "/")]
    for root, dirs, names in os.walk(d["dist_info"]):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for n in sorted(names):
            rel = os.path.relpath(os.path.join(root, n), d["dist_info"]).replace(os.sep, "/")
            if rel not in INSTALLER_FILES:
                files.append((di + "/" + rel, os.path.join(root, n)))
    if outside:
        info["notes"].append("%d file(s) outside site-packages left out (e.g. %s)" %
                             (len(outside), outside[0]))
    tmp = dest + ".tmp"
    rows = []
    with zipfile.ZipFile(tmp, "w", allowZip64=True, strict_timestamps=False) as zf:
        for arc, path in files:
            digest, size = add_file(zf, arc, path, level, store_all)
            rows.append((arc, digest, str(size)))
            info["files"] += 1
            info["bytes"] += size
        rows.append((di + "/RECORD", "", ""))
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        zf.writestr(zipfile.ZipInfo(di + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0)),
                    buf.getvalue(), compress_type=zipfile.ZIP_DEFLATED)
    os.replace(tmp, dest)
    info["seconds"] = round(time.monotonic() - t, 2)
    return info


# --- running things, bounded -------------------------------------------------------------

class Pool:
    """N worker threads taking callables by priority (lower first), so that checks of freshly
    packed wheels overtake the long queue of import probes."""

    def __init__(self, n):
        self.q = queue.PriorityQueue()
        self.seq = itertools.count()
        self.pending = 0
        self.cv = threading.Condition()
        for _ in range(n):
            threading.Thread(target=self._work, daemon=True).start()

    def submit(self, prio, fn, *args):
        with self.cv:
            self.pending += 1
        self.q.put((prio, next(self.seq), fn, args))

    def _work(self):
        while True:
            _, _, fn, args = self.q.get()
            try:
                fn(*args)
            except Exception:
                log("internal error:", traceback.format_exc())
            finally:
                with self.cv:
                    self.pending -= 1
                    self.cv.notify_all()

    def wait(self):
        with self.cv:
            while self.pending:
                self.cv.wait()


def budget(timeout):
    """Seconds a process started now may run: its timeout, cut at the deadline."""
    return min(timeout, DEADLINE[0] - time.monotonic())


def run_bounded(cmd, timeout, cwd, env=None):
    """(returncode or None on timeout, stdout, stderr); the whole process group is killed at the
    timeout so that nothing outlives it."""
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = p.communicate()
        return None, out, err


PROBE = r'''
import importlib, json, os, sys
mode, target, pre, roots = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(os.pathsep)
res = {"ok": False, "error": None, "pre_error": None, "out": None}
GPU = {
"torch": """
import torch
assert torch.cuda.is_available(), "torch.cuda.is_available() is False"
x = torch.randn(512, 512, device="cuda")
m = (x @ x).sum().item()
f = torch.fft.fft(x).abs().sum().item()
torch.cuda.synchronize()
out = "%s matmul=%.3g fft=%.3g" % (torch.cuda.get_device_name(0), m, f)
""",
"cupy": """
import cupy as cp
x = cp.arange(4096, dtype=cp.float32)
f = float(cp.abs(cp.fft.fft(x)).sum())
s = float(x.sum())
cp.cuda.Device().synchronize()
n = cp.cuda.runtime.getDeviceProperties(0)["name"]
out = "%s fft=%.3g sum=%.3g" % (n.decode() if isinstance(n, bytes) else n, f, s)
""",
"jax": """
import jax, jax.numpy as jnp
d = jax.devices()
assert d and d[0].platform == "gpu", "no GPU device: %s" % d
x = jnp.ones((512, 512))
m = float((x @ x).sum().block_until_ready())
f = float(jnp.abs(jnp.fft.fft(x)).sum())
out = "%s matmul=%.3g fft=%.3g" % (d, m, f)
""",
}
try:
    if pre == "torch":
        try:
            import torch
        except BaseException as e:
            res["pre_error"] = "%s: %s" % (type(e).__name__, e)
    if mode == "import":
        importlib.import_module(target)
    elif mode == "dlopen":
        import ctypes
        ctypes.CDLL(target)
    elif mode == "gpu":
        g = {}
        exec(GPU[target], g)
        res["out"] = g.get("out")
    res["ok"] = True
except BaseException as e:
    res["error"] = "%s: %s" % (type(e).__name__, e)
maps = set()
try:
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split(None, 5)
            if len(p) == 6:
                path = p[5].strip()
                if any(path.startswith(r + "/") for r in roots):
                    maps.add(path)
except OSError:
    pass
res["maps"] = sorted(maps)
sys.stdout.flush()
sys.stdout.write("\n" + "@@wheelgate-truth@@" + json.dumps(res) + "\n")
sys.stdout.flush()
os._exit(0)   # loading is the question; teardown crashes are not
'''


def probe(py, mode, target, pre, roots, timeout, cwd):
    t = time.monotonic()
    timeout = budget(timeout)
    if timeout < 1:
        return {"ok": None, "error": NOT_RUN, "maps": [], "seconds": 0}
    rc, out, err = run_bounded([py, "-c", PROBE, mode, target, pre, os.pathsep.join(roots)],
                               timeout, cwd, probe_env())
    out = out.decode(errors="replace")
    err = err.decode(errors="replace")
    res = {"ok": False, "error": None, "maps": []}
    i = out.rfind(MARK)
    if i >= 0:
        try:
            res = json.loads(out[i + len(MARK):].strip().splitlines()[0])
        except (ValueError, IndexError):
            res["error"] = "unreadable probe output"
    elif rc is None:
        res["error"] = "timeout after %ds" % timeout
        if time.monotonic() >= DEADLINE[0]:
            res.update(ok=None, error=NOT_RUN)
    elif rc < 0:
        res["error"] = "killed by %s; stderr: %s" % (signal.Signals(-rc).name, err[-500:])
    else:
        res["error"] = "exit %d; stderr: %s" % (rc, err[-500:])
    res["error"] = clip(res.get("error"), 1000) if res.get("error") else None
    res["seconds"] = round(time.monotonic() - t, 2)
    return res


# --- wheelgate ---------------------------------------------------------------------------

def check(wg, py, wheel, extra, timeout, cwd):
    t = time.monotonic()
    timeout = budget(timeout)
    if timeout < 1:
        return {"rc": None, "seconds": 0, "verdict": "not run", "findings": [], "counts": {}}
    cmd = [wg, "check", "--no-config", "--env", py, "--gpu", "auto", "--format", "json",
           *extra, wheel]
    rc, out, err = run_bounded(cmd, timeout, cwd)
    res = {"rc": rc, "seconds": round(time.monotonic() - t, 2),
           "stderr": clip(err.decode(errors="replace"), 1000) or None}
    if rc is None:
        res.update(verdict="timeout", findings=[], counts={})
        return res
    try:
        doc = json.loads(out)
        inp = doc["inputs"][0]
    except (ValueError, KeyError, IndexError):
        res.update(verdict="no-json", findings=[], counts={},
                   stdout=clip(out.decode(errors="replace"), 1000))
        return res
    res["verdict"] = inp.get("verdict")
    res["counts"] = inp.get("counts", {})
    res["error"] = inp.get("error")
    res["findings"] = [{"rule": f.get("rule"), "severity": f.get("severity"),
                        "member": f.get("member"), "symbol": f.get("symbol"),
                        "message": clip(f.get("message"), 1000)}
                       for f in inp.get("findings", [])]
    res["target"] = doc.get("target")
    # Whatever else the report says (the profile, the rules not applied...), kept as it is.
    res["report"] = {k: v for k, v in doc.items()
                     if k not in ("schema", "target", "inputs", "summary")}
    res["input"] = {k: v for k, v in inp.items()
                    if k not in ("path", "verdict", "error", "counts", "findings")}
    return res


def names_member(f, arc):
    m = (f.get("member") or "").lstrip("./")
    return bool(m) and (m == arc or m.endswith("/" + arc) or m.endswith("!" + arc)) or \
        arc in (f.get("message") or "")


# --- the comparison ----------------------------------------------------------------------

def judge(rec):
    """Fills rec['reality'] and rec['compare'] from the probes and the check."""
    failures = [arc for arc, m in sorted(rec["members"].items())
                if m.get("result") and m["result"]["ok"] is False]
    top_bad = {t: r["error"] for t, r in rec["top_level"].items() if r and r["ok"] is False}
    gpu_bad = {g: r["error"] for g, r in rec["gpu"].items() if r and r["ok"] is False}
    unknown = [t for t, r in list(rec["top_level"].items()) + list(rec["gpu"].items())
               if not r or r["ok"] is None]
    # works: True, False, or None where a probe that decides it did not run
    works = False if top_bad or gpu_bad else None if unknown else True
    rec["reality"] = {"works": works, "top_level_failed": top_bad, "gpu_failed": gpu_bad,
                      "failed_members": failures, "not_run": unknown}
    c = rec["check"] or {}
    findings = c.get("findings", [])
    errors = [f for f in findings if f["severity"] == "error"]
    verdict = c.get("verdict")
    rec["compare"] = {
        "verdict": verdict,
        "false_error": verdict == "fail" and works is True,
        "missed_wheel": verdict == "pass" and works is False,
        "load_failures": [],
    }
    for arc in failures:
        m = rec["members"][arc]
        if m["kind"] == "module" and m["module"].split(".")[0] in top_bad:
            m["label"] = "extension module (its package fails to import)"
        by_err = [f["rule"] for f in errors if names_member(f, arc)]
        by_warn = [f["rule"] for f in findings if f["severity"] == "warning" and names_member(f, arc)]
        rec["compare"]["load_failures"].append({
            "member": arc, "kind": m["label"], "error": m["result"]["error"],
            "errors": sorted(set(by_err)), "warnings": sorted(set(by_warn)),
            "missed": not by_err})


def md_cell(s, n=MSG_MAX):
    s = clip(str(s).splitlines()[0] if str(s).strip() else "", n)
    return s.replace("|", "\\|")


ROWS_MAX = 300


def capped(L, rows, fmt):
    for x in rows[:ROWS_MAX]:
        L.append(fmt(x))
    if len(rows) > ROWS_MAX:
        L.append("| ... %d more in truth.json |" % (len(rows) - ROWS_MAX))


def table(recs, meta):
    L = []
    ok = [r for r in recs if r["check"]]
    fails = [r for r in ok if r["compare"]["verdict"] == "fail"]
    works = [r for r in ok if r["reality"]["works"]]
    unknown = [r for r in ok if r["reality"]["works"] is None]
    fe = [r for r in ok if r["compare"]["false_error"]]
    mw = [r for r in ok if r["compare"]["missed_wheel"]]
    unj = [r for r in ok if r["compare"]["verdict"] not in ("pass", "fail")]
    lf = [(r, x) for r in ok for x in r["compare"]["load_failures"]]
    missed = [(r, x) for r, x in lf if x["missed"]]
    warned = [(r, x) for r, x in missed if x["warnings"]]
    L.append("## Totals\n")
    L.append("python %s (%s), torch %s; %s; GPUs: %s; %d distributions, %d with ELF files "
             "checked in %ss\n" % (meta["python"], meta["executable"],
                                   meta.get("torch_version") or "none",
                                   meta.get("wheelgate_version"),
                                   ", ".join(meta.get("gpus") or []) or "none",
                                   meta["distributions"], len(ok), meta.get("seconds")))
    rep = ok[0]["check"].get("report", {}) if ok else {}
    if rep:
        L.append("wheelgate's report also says: %s\n" %
                 md_cell(json.dumps({k: v for k, v in rep.items() if k != "wheelgate_version"}), 600))
    L.append("| | count |")
    L.append("|---|---:|")
    L.append("| wheels checked | %d |" % len(ok))
    L.append("| wheels wheelgate failed | %d |" % len(fails))
    L.append("| wheels that import and run (reality) | %d |" % len(works))
    if unknown:
        L.append("| wheels whose reality is unknown (--deadline reached) | %d |" % len(unknown))
    L.append("| **false errors**: wheels failed that import and run | **%d** |" % len(fe))
    L.append("| of which hold a member that fails to load | %d |" %
             sum(1 for r in fe if r["reality"]["failed_members"]))
    L.append("| broken wheels (an import or GPU operation fails) that wheelgate passed | %d |" %
             len(mw))
    L.append("| native load failures (modules and libraries) | %d |" % len(lf))
    L.append("| **native load failures missed** (no error names the member) | **%d** |" % len(missed))
    L.append("| of which a warning names it | %d |" % len(warned))
    L.append("| checks that gave no verdict (timeout, no JSON, unreadable) | %d |" % len(unj))
    L.append("| distributions with ELF files that could not be packed | %d |" %
             len(meta.get("not_packed", [])))
    L.append("")
    # per rule
    per = collections.OrderedDict()
    for r in ok:
        bad = set(r["reality"]["failed_members"])
        for f in r["check"].get("findings", []):
            k = (f["rule"], f["severity"])
            row = per.setdefault(k, {"working": 0, "working_wheels": set(), "broken_member": 0,
                                     "broken_other": 0})
            if any(names_member(f, a) for a in bad):
                row["broken_member"] += 1
            elif r["reality"]["works"]:
                row["working"] += 1
                row["working_wheels"].add(r["name"])
            else:
                row["broken_other"] += 1
    L.append("## Per rule\n")
    L.append("| rule | severity | findings on working packages (wheels) | findings naming a "
             "member that fails to load | other findings on broken wheels |")
    L.append("|---|---|---:|---:|---:|")
    for (rule, sev), row in sorted(per.items()):
        L.append("| %s | %s | %d (%d) | %d | %d |" % (rule, sev, row["working"],
                                                     len(row["working_wheels"]),
                                                     row["broken_member"], row["broken_other"]))
    L.append("")
    L.append("## Per wheel\n")
    L.append("| distribution | wheelgate | errors | warnings | reality | modules ok | "
             "libraries ok |")
    L.append("|---|---|---|---|---|---:|---:|")
    for r in ok:
        fs = r["check"].get("findings", [])
        er = collections.Counter(f["rule"] for f in fs if f["severity"] == "error")
        wa = collections.Counter(f["rule"] for f in fs if f["severity"] == "warning")
        re_ = r["reality"]
        if re_["works"]:
            real = "works"
        elif re_["works"] is None:
            real = "unknown: not run: " + ", ".join(re_["not_run"])
        else:
            what = ["import %s" % t for t in re_["top_level_failed"]] + \
                   ["%s GPU op" % g for g in re_["gpu_failed"]]
            real = "BROKEN: " + ", ".join(what)
        mods = [m for m in r["members"].values() if m["kind"] == "module"]
        libs = [m for m in r["members"].values() if m["kind"] == "library"]
        L.append("| %s %s | %s%s | %s | %s | %s | %d/%d | %d/%d |" % (
            r["name"], r["version"], r["compare"]["verdict"],
            " (FALSE ERROR)" if r["compare"]["false_error"] else
            " (MISSED)" if r["compare"]["missed_wheel"] else "",
            ", ".join("%s×%d" % kv for kv in sorted(er.items())) or "-",
            ", ".join("%s×%d" % kv for kv in sorted(wa.items())) or "-",
            md_cell(real, 120),
            sum(1 for m in mods if m["result"] and m["result"]["ok"]), len(mods),
            sum(1 for m in libs if m["result"] and m["result"]["ok"]), len(libs)))
    L.append("")
    L.append("## Native load failures\n")
    if lf:
        L.append("| distribution | member | kind | reality | errors naming it | "
                 "warnings naming it |")
        L.append("|---|---|---|---|---|---|")
        capped(L, lf, lambda rx: "| %s | %s | %s | %s | %s | %s |" % (
            rx[0]["name"], md_cell(rx[1]["member"]), rx[1]["kind"], md_cell(rx[1]["error"], 160),
            ", ".join(rx[1]["errors"]) or ("**none (missed)**" if not rx[1]["warnings"] else "none"),
            ", ".join(rx[1]["warnings"]) or "-"))
    else:
        L.append("none")
    L.append("")
    for sev, title in (("error", "Errors on working packages (each one fails a working wheel)"),
                       ("warning", "Warnings on working packages (would a maintainer agree?)")):
        L.append("## %s\n" % title)
        rows = [(r, f) for r in ok if r["reality"]["works"]
                for f in r["check"].get("findings", []) if f["severity"] == sev]
        if rows:
            L.append("| distribution | rule | member | message |")
            L.append("|---|---|---|---|")
            capped(L, rows, lambda rf: "| %s | %s | %s | %s |" % (
                rf[0]["name"], rf[1]["rule"], md_cell(rf[1]["member"] or "-", 120),
                md_cell(rf[1]["message"])))
        else:
            L.append("none")
        L.append("")
    return "\n".join(L)


# --- main --------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheelgate", required=True, help="the wheelgate CLI to judge")
    ap.add_argument("--python", default=sys.executable,
                    help="the environment's python (default: this one)")
    ap.add_argument("--out", default="truth-out", help="output folder (default: truth-out)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                    help="processes at a time (default: the number of CPUs)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="only these distributions")
    ap.add_argument("--timeout", type=int, default=300,
                    help="seconds allowed to each check and each probe process (default 300)")
    ap.add_argument("--deadline", type=float, metavar="S",
                    help="start nothing after S seconds and stop what runs then; what did not "
                    "run is reported as not run (default: none)")
    ap.add_argument("--level", type=int, default=1, help="deflate level (default 1)")
    ap.add_argument("--store", action="store_true", help="store every file, deflate none")
    ap.add_argument("--reuse-wheels", action="store_true",
                    help="keep a packed wheel that is newer than its RECORD")
    ap.add_argument("--no-gpu-ops", action="store_true", help="run no GPU operation")
    ap.add_argument("--wg-arg", action="append", default=[], metavar="ARG",
                    help="one more argument to wheelgate check (repeatable)")
    a = ap.parse_args()
    wg = os.path.abspath(a.wheelgate)
    py = a.python if os.sep not in a.python else os.path.abspath(a.python)
    out = os.path.abspath(a.out)
    wheels_dir = os.path.join(out, "wheels")
    os.makedirs(wheels_dir, exist_ok=True)
    cwd = tempfile.mkdtemp(prefix="wg-truth-")   # an empty cwd: nothing shadows a module
    jobs = max(1, a.jobs)
    if a.deadline:
        DEADLINE[0] = T0 + a.deadline

    rc, vout, verr = run_bounded([wg, "--version"], 60, cwd)
    if rc != 0:
        sys.exit("truth: %s --version failed: %s" % (wg, verr.decode(errors="replace")[-500:]))
    env = enumerate_env(py, a.timeout, cwd)
    suffixes = env["ext_suffixes"]
    only = {dist_key(n) for n in a.only} if a.only else None
    dists = [d for d in env["dists"] if only is None or dist_key(d["name"]) in only]
    if only:
        unknown = only - {dist_key(d["name"]) for d in dists}
        if unknown:
            sys.exit("truth: not installed in %s: %s" % (py, ", ".join(sorted(unknown))))
    norecord = [d["name"] for d in dists if d["record"] is None]
    log("%d distributions in %s (%d without RECORD: not packable)" %
        (len(env["dists"]), py, len(norecord)))

    # ELF scan, in parallel
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        scans = list(ex.map(lambda d: scan_dist(d, suffixes), dists))
    recs, packs = [], []
    for d, (inside, outside, outside_elf, missing, members) in zip(dists, scans):
        if not members:
            continue
        roots_note = []
        if missing:
            roots_note.append("%d RECORD file(s) missing" % len(missing))
        if outside_elf:
            roots_note.append("%d ELF file(s) outside site-packages not packed: %s" %
                              (len(outside_elf), ", ".join(outside_elf[:3])))
        for arc, m in members.items():
            m["label"] = {"module": "extension module", "library": "library (dlopen alone)",
                          "other": "not loaded (executable, object or other interpreter)"}[m["kind"]]
            m["result"] = None
        recs.append({"name": d["name"], "key": dist_key(d["name"]), "version": d["version"],
                     "dist_info": d["dist_info"], "root_is_purelib": d["root_is_purelib"],
                     "tags": d["tags"], "members": members, "notes": roots_note,
                     "top_level": {t: None for t in top_levels(d, inside, suffixes)},
                     "gpu": {}, "check": None, "pack": None})
        packs.append((d, inside, outside, recs[-1]))
    log("%d distributions ship ELF files: %s" % (len(recs), " ".join(r["name"] for r in recs)))
    if not recs:
        sys.exit("truth: no distribution in %s ships an ELF file" % py)

    roots = sorted({d["site"] for d in dists})
    rc, eout, eerr = run_bounded([wg, "env", "--json", py], max(1, budget(a.timeout)), cwd)
    wenv = None
    try:
        wenv = json.loads(eout) if rc == 0 else None
    except ValueError:
        pass
    log("wheelgate env %s: %s" % (py, "ok (index cached)" if wenv else
                                  "failed: " + eerr.decode(errors="replace")[-300:]))
    torch_first = "torch" if env["torch"] else "-"

    pool = Pool(jobs)
    lock = threading.Lock()
    done = collections.Counter()
    maps_ok = {}        # path -> what loaded it (an import or a GPU operation that succeeded)

    def note_maps(res, who):
        if res.get("ok"):
            with lock:
                for p in res.get("maps", []):
                    maps_ok.setdefault(os.path.realpath(p), who)

    def do_probe(rec, what, key, mode, target, pre):
        res = probe(py, mode, target, pre, roots, a.timeout, cwd)
        if mode != "dlopen":
            note_maps(res, "%s %s" % ("import" if mode == "import" else "GPU op", target))
        res["maps"] = len(res.get("maps", []))
        with lock:
            if what == "member":
                rec["members"][key]["result"] = res
            else:
                rec[what][key] = res
            done["probes"] += 1
            n = done["probes"]
        if n % 50 == 0 or res["ok"] is False and mode != "dlopen":
            log("probe %d/%d%s" % (n, nprobes, "" if res["ok"] else
                                   ": %s %s failed: %s" % (mode, target, clip(res["error"], 160))))

    nprobes = 0
    gpu_ops = {"torch": lambda k: k == "torch", "cupy": lambda k: k.startswith("cupy"),
               "jax": lambda k: k == "jaxlib" or k.startswith("jax-cuda")}
    if not a.no_gpu_ops:
        for op, match in gpu_ops.items():
            owners = [r for r in recs if match(r["key"])]
            if owners:
                def gpu_done(op=op, owners=owners):
                    res = probe(py, "gpu", op, "-", roots, a.timeout, cwd)
                    note_maps(res, "GPU op " + op)
                    res["maps"] = len(res.get("maps", []))
                    log("GPU op %s: %s" % (op, "ok: " + clip(res.get("out"), 200) if res["ok"]
                                           else "FAILED: " + clip(res["error"], 300)))
                    with lock:
                        for r in owners:
                            r["gpu"][op] = res
                pool.submit(0, gpu_done)
    for rec in recs:
        for t in rec["top_level"]:
            pool.submit(2, do_probe, rec, "top_level", t, "import", t, "-")
            nprobes += 1
        for arc, m in rec["members"].items():
            if m["kind"] == "module":
                pool.submit(3, do_probe, rec, "member", arc, "import", m["module"], "-")
                nprobes += 1
            elif m["kind"] == "library":
                path = os.path.join(os.path.dirname(rec["dist_info"]), arc)
                pool.submit(4, do_probe, rec, "member", arc, "dlopen", path, torch_first)
                nprobes += 1
    log("%d probe processes queued (%d jobs)" % (nprobes, jobs))

    def do_check(rec):
        res = check(wg, py, rec["pack"]["wheel"], a.wg_arg, a.timeout, cwd)
        rec["check"] = res
        with lock:
            done["checks"] += 1
        log("check %d/%d %s: %s %s (%.1fs)" % (done["checks"], len(recs), rec["name"],
                                               res["verdict"], res.get("counts"), res["seconds"]))

    # Packing in threads (zlib, sha256 and file I/O let go of the GIL), biggest first: the
    # largest wheel's pack + check is the critical path.
    def size_of(item):
        return sum(os.path.getsize(p) for p in item[1].values())
    packs.sort(key=size_of, reverse=True)
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        futs = {ex.submit(pack, d, inside, outside, wheels_dir, a.level, a.store,
                          a.reuse_wheels): rec for d, inside, outside, rec in packs}
        for i, f in enumerate(concurrent.futures.as_completed(futs), 1):
            rec = futs[f]
            try:
                rec["pack"] = f.result()
            except Exception as e:
                rec["notes"].append("packing failed: %s" % e)
                log("pack %s FAILED: %s" % (rec["name"], e))
                continue
            log("pack %d/%d %s: %d files, %.1f MiB, %ss" % (
                i, len(packs), os.path.basename(rec["pack"]["wheel"]), rec["pack"]["files"],
                rec["pack"]["bytes"] / 1048576, rec["pack"].get("seconds", "-")))
            pool.submit(1, do_check, rec)
    pool.wait()

    # A library that an import or a GPU operation mapped was loaded in its real scope.
    for rec in recs:
        site = os.path.dirname(rec["dist_info"])
        for arc, m in rec["members"].items():
            if m["kind"] != "library" or not m["result"]:
                continue
            who = maps_ok.get(os.path.realpath(os.path.join(site, arc)))
            if who:
                m["label"] = "library (loaded by %s)" % who
                m["result"]["dlopen_alone"] = {"ok": m["result"]["ok"],
                                               "error": m["result"]["error"]}
                m["result"].update(ok=True, error=None)
    unpacked = [r["name"] for r in recs if not r["check"]]
    recs = sorted((r for r in recs if r["check"]), key=lambda r: r["key"])
    for r in recs:
        judge(r)

    gpus = None
    if recs and recs[0]["check"].get("target"):
        gpus = [g.get("name") or g.get("cc") for g in recs[0]["check"]["target"].get("gpus", [])]
    meta = {"python": env["python"], "executable": env["executable"],
            "torch_version": (wenv or {}).get("torch", {}).get("version")
            if isinstance((wenv or {}).get("torch"), dict) else None,
            "wheelgate_version": vout.decode().strip() or "wheelgate ?", "gpus": gpus,
            "distributions": len(env["dists"]), "not_packed": unpacked,
            "seconds": round(time.monotonic() - T0, 1)}
    md = table(recs, meta)
    doc = {"meta": meta, "options": vars(a), "wheelgate_env": wenv, "no_record": norecord,
           "shadowed": env["shadowed"], "wheels": recs}
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(doc, f, indent=1, default=sorted)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(md + "\n")
    print(md)
    log("done in %.0fs: %s/truth.json, %s/table.md" % (time.monotonic() - T0, out, out))
    shutil.rmtree(cwd, ignore_errors=True)


if __name__ == "__main__":
    main()

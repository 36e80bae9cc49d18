#!/usr/bin/env python3
"""wheelgate against reality in a real Python environment.

Every installed distribution of PY's environment whose RECORD lists an ELF file is packed back
into a wheel from its RECORD and checked with `wheelgate check --env PY --gpu auto`; reality is
measured in fresh processes of PY: every extension module imported by its dotted name (and,
where that fails otherwise than by the loader's words about it, dlopen'ed: a native load failure
or a Python-level one), the distribution's top-level packages imported (those RECORD holds),
every other shared library loaded with ctypes after `import torch` (unless an import or a GPU
operation was seen to map it: /proc/self/maps), and one GPU operation each for torch, cupy and
jax. The confusion table compares the two.

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
import struct
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


def dynsym_defines(path, name):
    """Whether the ELF file's dynamic symbol table (.dynsym, its names in the linked .dynstr)
    defines `name`: True or False, or None when there is no section header table to read."""
    want = name.encode()
    try:
        with open(path, "rb") as f:
            h = f.read(64)
            if len(h) < 52 or h[:4] != b"\x7fELF" or h[4] not in (1, 2) or h[5] not in (1, 2):
                return None
            e = "<" if h[5] == 1 else ">"
            wide = h[4] == 2
            if wide:
                shoff, = struct.unpack_from(e + "Q", h, 0x28)
                shentsize, shnum = struct.unpack_from(e + "HH", h, 0x3A)
                fmt, symfmt = e + "IIQQQQIIQQ", e + "IBBHQQ"
            else:
                shoff, = struct.unpack_from(e + "I", h, 0x20)
                shentsize, shnum = struct.unpack_from(e + "HH", h, 0x2E)
                fmt, symfmt = e + "IIIIIIIIII", e + "IIIBBH"
            if not shoff or not shnum or shentsize < struct.calcsize(fmt):
                return None
            f.seek(shoff)
            sh = f.read(shentsize * shnum)
            if len(sh) < shentsize * shnum:
                return None
            secs = [struct.unpack_from(fmt, sh, i * shentsize) for i in range(shnum)]
            # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
            found = False
            for s in secs:
                if s[1] != 11 or s[6] >= shnum:           # SHT_DYNSYM, its string table
                    continue
                found = True
                st = secs[s[6]]
                f.seek(st[4])
                strtab = f.read(st[5])
                offs, i = set(), strtab.find(want + b"\0")
                while i >= 0:
                    offs.add(i)
                    i = strtab.find(want + b"\0", i + 1)
                if not offs:
                    continue
                size = struct.calcsize(symfmt)
                f.seek(s[4])
                syms = f.read(s[5])
                for j in range(0, len(syms) - size + 1, size):
                    sym = struct.unpack_from(symfmt, syms, j)
                    shndx = sym[3] if wide else sym[5]
                    if sym[0] in offs and shndx != 0:     # defined, not an undefined reference
                        return True
            return False if found else None
    except (OSError, struct.error):
        return None


def exports_pyinit(path, stem):
    """An object with an extension suffix is a Python module only when it defines
    PyInit_<stem> in its dynamic symbol table (torchaudio's lib/*.abi3.so do not: they are
    libraries that torch.ops.load_library loads). Without a section header table, a byte
    search of the file stands in."""
    got = dynsym_defines(path, "PyInit_" + stem)
    if got is not None:
        return got
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
        suf = ".so"
    if suf is not None:
        stem = base[:-len(suf)]
        # A suffix alone makes no module: PyInit_<stem> does.
        if not (stem.isidentifier() and exports_pyinit(path, stem)):
            return "library", None
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
    """(top-level names to import, stale names): top_level.txt's names (else those RECORD
    shows), kept only where RECORD holds them at the site root: a package directory with
    files, a module file or an extension module. top_level.txt can be stale (xxhash 4.0.1
    lists _xxhash, which no file provides): such a name is a note, not a failure."""
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
    out, stale = [], []
    for n in names:
        n = n.replace("/", ".")
        if not all(p.isidentifier() for p in n.split(".")) or n in out or n in stale:
            continue
        rel = n.replace(".", "/")
        files = {rel + s for s in [".py", ".pyc"] + list(suffixes)}
        if any(a.startswith(rel + "/") or a in files for a in inside):
            out.append(n)
        else:
            stale.append(n)
    return out, stale


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
import importlib, json, os, re, sys
mode, target, pre, roots = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(os.pathsep)
path = sys.argv[5] if len(sys.argv) > 5 else None
pre = [m for m in pre.split(",") if m and m != "-"]
res = {"ok": False, "error": None, "pre_error": None, "out": None}
# What the dynamic loader says when it cannot load an object (glibc's dl-*.c), as dlopen()'s
# error reaches Python in an ImportError (an extension) or an OSError (ctypes).
LOADER = re.compile(r"cannot open shared object file|undefined symbol|version `[^']*' not found|"
                    r"wrong ELF class|file too short|invalid ELF header|cannot enable executable "
                    r"stack|static TLS block|ELF load command|ELF file|only ET_DYN and ET_EXEC|"
                    r"cannot map zero-fill pages|failed to map segment|cannot change memory "
                    r"protections|cannot restore segment prot|unexpected reloc type|"
                    r"unsupported version .* of Verdef record|unsupported version .* of Verneed "
                    r"record|symbol .* version .* not defined in file|cannot dynamically load|"
                    r"cannot allocate memory|cannot create shared object descriptor|"
                    r"error while loading shared libraries|not a dynamic executable")


def preimport():
    for m in pre:
        try:
            importlib.import_module(m)
        except BaseException as e:
            res["pre_error"] = (res["pre_error"] + "; " if res["pre_error"] else "") + \
                "import %s: %s: %s" % (m, type(e).__name__, e)


def same(a, b):
    try:
        return os.path.samefile(a, b)
    except (OSError, TypeError):
        return False


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
    if mode == "module":
        # An extension module: its import, as Python does it (its packages first). When that
        # fails with the loader's own words about this very file, the loader failed on it;
        # when it fails otherwise (a parent package, PyInit, the package's Python code), the
        # loader is asked directly: dlopen(path, RTLD_NOW) after the same pre-imports (its
        # top-level package, torch where installed) tells a native failure from a Python one.
        try:
            importlib.import_module(target)
            res["ok"] = True
        except BaseException as e:
            res["error"] = "%s: %s" % (type(e).__name__, e)
            if isinstance(e, ImportError) and LOADER.search(str(e)) and \
                    (same(getattr(e, "path", None), path) or path in str(e)):
                res["level"] = "native"
            else:
                preimport()
                import ctypes
                try:
                    ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
                    res["dlopen"] = {"ok": True, "error": None}
                    res["level"] = "python"
                except BaseException as e2:
                    res["dlopen"] = {"ok": False, "error": "%s: %s" % (type(e2).__name__, e2)}
                    res["level"] = "native"
    else:
        preimport()
    if mode == "import":
        importlib.import_module(target)
    elif mode == "dlopen":
        import ctypes
        ctypes.CDLL(target)
    elif mode == "gpu":
        g = {}
        exec(GPU[target], g)
        res["out"] = g.get("out")
    if mode != "module":
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


def probe(py, mode, target, pre, roots, timeout, cwd, path=None):
    t = time.monotonic()
    timeout = budget(timeout)
    if timeout < 1:
        return {"ok": None, "error": NOT_RUN, "maps": [], "seconds": 0}
    rc, out, err = run_bounded([py, "-c", PROBE, mode, target, pre, os.pathsep.join(roots)] +
                               ([path] if path else []), timeout, cwd, probe_env())
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

def names_failure(text, arc, m):
    """Whether an import's error text is about member arc: its file's name, its dotted name."""
    text = text or ""
    return arc.rsplit("/", 1)[-1] in text or bool(m.get("module")) and \
        re.search(r"(?<![\w.])%s(?![\w])" % re.escape(m["module"]), text) is not None


def judge(rec):
    """Fills rec['reality'] and rec['compare'] from the probes and the check.

    A member fails natively when the dynamic loader fails on it: a library's dlopen, or an
    extension module whose import fails with the loader's words about it or, failing
    otherwise, whose dlopen(RTLD_NOW) fails too. An extension module whose import fails while
    its dlopen works failed at the Python level: no ELF check can see that, so it is listed
    apart and counted neither as a native failure nor as a miss. A native failure is blocking
    when a top-level import of the distribution fails with it, optional otherwise."""
    failed = [(arc, m) for arc, m in sorted(rec["members"].items())
              if m.get("result") and m["result"]["ok"] is False]
    native = [(a, m) for a, m in failed
              if m["kind"] != "module" or m["result"].get("level") != "python"]
    pylevel = [(a, m) for a, m in failed
               if m["kind"] == "module" and m["result"].get("level") == "python"]
    top_bad = {t: r["error"] for t, r in rec["top_level"].items() if r and r["ok"] is False}
    gpu_bad = {g: r["error"] for g, r in rec["gpu"].items() if r and r["ok"] is False}
    unknown = [t for t, r in list(rec["top_level"].items()) + list(rec["gpu"].items())
               if not r or r["ok"] is None]
    blocking = {}
    for arc, m in native:
        err = m["result"]["error"]
        blocking[arc] = sorted(t for t, e in top_bad.items()
                               if e == err or names_failure(e, arc, m))
    # works: True, False, or None where a probe that decides it did not run
    works = False if top_bad or gpu_bad else None if unknown else True
    # Broken natively: a GPU operation fails, or a native load failure blocks an import.
    # Otherwise a broken wheel is broken at the Python level (a top-level import fails with
    # no loader failure under it).
    broken_by = None if works is not False else \
        "native" if gpu_bad or any(blocking.values()) else "python"
    rec["reality"] = {"works": works, "broken_by": broken_by, "top_level_failed": top_bad,
                      "gpu_failed": gpu_bad, "failed_members": [a for a, _ in native],
                      "python_failures": [a for a, _ in pylevel], "not_run": unknown}
    c = rec["check"] or {}
    findings = c.get("findings", [])
    verdict = c.get("verdict")
    rec["compare"] = {
        "verdict": verdict,
        "false_error": verdict == "fail" and works is True,
        "missed_wheel": verdict == "pass" and broken_by == "native",
        "python_broken_passed": verdict == "pass" and broken_by == "python",
        "load_failures": [],
        "python_failures": [],
    }
    for arc, m in failed:
        if m["kind"] == "module" and m["module"].split(".")[0] in top_bad:
            m["label"] = "extension module (its package fails to import)"
    for arc, m in native:
        by_err = sorted({f["rule"] for f in findings
                         if f["severity"] == "error" and names_member(f, arc)})
        by_warn = sorted({f["rule"] for f in findings
                          if f["severity"] == "warning" and names_member(f, arc)})
        r = m["result"]
        rec["compare"]["load_failures"].append({
            "member": arc, "kind": m["label"], "error": r["error"],
            "dlopen": r.get("dlopen"), "blocking": bool(blocking[arc]),
            "blocks": blocking[arc], "errors": by_err, "warnings": by_warn,
            "missed": not by_err and not by_warn,
            "warned_only_blocking": bool(blocking[arc]) and not by_err and bool(by_warn)})
    for arc, m in pylevel:
        r = m["result"]
        rec["compare"]["python_failures"].append({
            "member": arc, "module": m["module"], "kind": m["label"], "error": r["error"],
            "dlopen": r.get("dlopen"),
            "named_by": sorted({f["rule"] for f in findings if names_member(f, arc)})})


def md_cell(s, n=MSG_MAX):
    s = clip(str(s).splitlines()[0] if str(s).strip() else "", n)
    return s.replace("|", "\\|")


ROWS_MAX = 300


def capped(L, rows, fmt):
    for x in rows[:ROWS_MAX]:
        L.append(fmt(x))
    if len(rows) > ROWS_MAX:
        L.append("| ... %d more in truth.json |" % (len(rows) - ROWS_MAX))


def wg_answer(x):
    """What wheelgate's findings amount to for one native load failure."""
    if x["errors"]:
        return "caught (error)"
    if x["warnings"]:
        return "**only a warning: it blocks the import**" if x["blocking"] else \
            "caught (warning: optional)"
    return "**missed**"


def table(recs, meta):
    L = []
    ok = [r for r in recs if r["check"]]
    fails = [r for r in ok if r["compare"]["verdict"] == "fail"]
    works = [r for r in ok if r["reality"]["works"]]
    unknown = [r for r in ok if r["reality"]["works"] is None]
    fe = [r for r in ok if r["compare"]["false_error"]]
    mw = [r for r in ok if r["compare"]["missed_wheel"]]
    pw = [r for r in ok if r["compare"]["python_broken_passed"]]
    unj = [r for r in ok if r["compare"]["verdict"] not in ("pass", "fail")]
    lf = [(r, x) for r in ok for x in r["compare"]["load_failures"]]
    blocking = [(r, x) for r, x in lf if x["blocking"]]
    by_error = [(r, x) for r, x in lf if x["errors"]]
    missed = [(r, x) for r, x in lf if x["missed"]]
    warned_opt = [(r, x) for r, x in lf if not x["errors"] and x["warnings"] and
                  not x["blocking"]]
    warned_blk = [(r, x) for r, x in lf if x["warned_only_blocking"]]
    pf = [(r, x) for r in ok for x in r["compare"]["python_failures"]]
    stale = [(r, t) for r in ok for t in r.get("stale_top_level", [])]
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
    L.append("| wheels that import and run (reality: top-level packages import, GPU operations "
             "run) | %d |" % len(works))
    L.append("| of which hold a submodule that fails to import at the Python level | %d |" %
             sum(1 for r in works if r["reality"]["python_failures"]))
    if unknown:
        L.append("| wheels whose reality is unknown (--deadline reached) | %d |" % len(unknown))
    L.append("| **false errors**: wheels failed that import and run | **%d** |" % len(fe))
    L.append("| of which hold a native load failure | %d |" %
             sum(1 for r in fe if r["reality"]["failed_members"]))
    L.append("| **broken wheels wheelgate passed** (a native load failure blocks an import, or "
             "a GPU operation fails) | **%d** |" % len(mw))
    L.append("| broken wheels wheelgate passed, broken at the Python level only (outside what "
             "an ELF check can see) | %d |" % len(pw))
    L.append("| native load failures (modules and libraries) | %d |" % len(lf))
    L.append("| native load failures: blocking / optional | %d / %d |" %
             (len(blocking), len(lf) - len(blocking)))
    L.append("| native load failures an error names | %d |" % len(by_error))
    L.append("| optional native load failures only a warning names (caught) | %d |" %
             len(warned_opt))
    L.append("| **missed** (no error and no warning names it) | **%d** |" % len(missed))
    L.append("| of which blocking | %d |" % sum(1 for _, x in missed if x["blocking"]))
    L.append("| **blocking failures with only a warning** (a miss of severity) | **%d** |" %
             len(warned_blk))
    L.append("| Python-level import failures (not a loader failure; outside what an ELF check "
             "can see) | %d |" % len(pf))
    L.append("| stale top_level.txt names (not in RECORD: not imported) | %d |" % len(stale))
    L.append("| checks that gave no verdict (timeout, no JSON, unreadable) | %d |" % len(unj))
    L.append("| distributions with ELF files that could not be packed | %d |" %
             len(meta.get("not_packed", [])))
    L.append("")
    # per rule
    per = collections.OrderedDict()
    for r in ok:
        bad = set(r["reality"]["failed_members"])
        py_bad = set(r["reality"]["python_failures"])
        for f in r["check"].get("findings", []):
            k = (f["rule"], f["severity"])
            row = per.setdefault(k, {"working": 0, "working_wheels": set(), "broken_member": 0,
                                     "python_member": 0, "broken_other": 0})
            if any(names_member(f, a) for a in bad):
                row["broken_member"] += 1
            elif any(names_member(f, a) for a in py_bad):
                row["python_member"] += 1
            elif r["reality"]["works"]:
                row["working"] += 1
                row["working_wheels"].add(r["name"])
            else:
                row["broken_other"] += 1
    L.append("## Per rule\n")
    L.append("| rule | severity | findings on working packages (wheels) | findings naming a "
             "native load failure | findings naming a Python-level failure | other findings on "
             "broken wheels |")
    L.append("|---|---|---:|---:|---:|---:|")
    for (rule, sev), row in sorted(per.items()):
        L.append("| %s | %s | %d (%d) | %d | %d | %d |" % (
            rule, sev, row["working"], len(row["working_wheels"]), row["broken_member"],
            row["python_member"], row["broken_other"]))
    L.append("")
    L.append("## Per wheel\n")
    L.append("| distribution | wheelgate | errors | warnings | reality | modules ok | "
             "libraries ok | native load failures (blocking) | Python-level failures |")
    L.append("|---|---|---|---|---|---:|---:|---:|---:|")
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
            real = "BROKEN%s: %s" % (" (Python level)" if re_["broken_by"] == "python" else "",
                                     ", ".join(what))
        mods = [m for m in r["members"].values() if m["kind"] == "module"]
        libs = [m for m in r["members"].values() if m["kind"] == "library"]
        lfs = r["compare"]["load_failures"]
        L.append("| %s %s | %s%s | %s | %s | %s | %d/%d | %d/%d | %s | %s |" % (
            r["name"], r["version"], r["compare"]["verdict"],
            " (FALSE ERROR)" if r["compare"]["false_error"] else
            " (MISSED)" if r["compare"]["missed_wheel"] else "",
            ", ".join("%s×%d" % kv for kv in sorted(er.items())) or "-",
            ", ".join("%s×%d" % kv for kv in sorted(wa.items())) or "-",
            md_cell(real, 120),
            sum(1 for m in mods if m["result"] and m["result"]["ok"]), len(mods),
            sum(1 for m in libs if m["result"] and m["result"]["ok"]), len(libs),
            "%d (%d)" % (len(lfs), sum(1 for x in lfs if x["blocking"])) if lfs else "-",
            len(r["compare"]["python_failures"]) or "-"))
    L.append("")
    L.append("## Native load failures\n")
    L.append("The dynamic loader fails on the member: a library's dlopen after `import torch`, "
             "or an extension module's import with the loader's words about it, or its "
             "dlopen(RTLD_NOW) after its top-level package (and torch) where the import fails "
             "otherwise. *Blocking*: a top-level import fails with it; *optional*: the "
             "top-level packages import without it, and a warning naming it is the right "
             "answer.\n")
    if lf:
        L.append("| distribution | member | kind | blocking | reality | errors naming it | "
                 "warnings naming it | wheelgate |")
        L.append("|---|---|---|---|---|---|---|---|")
        capped(L, lf, lambda rx: "| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            rx[0]["name"], md_cell(rx[1]["member"]), rx[1]["kind"],
            "**blocking** (import %s)" % ", ".join(rx[1]["blocks"]) if rx[1]["blocking"]
            else "optional",
            md_cell(rx[1]["error"] if not (rx[1].get("dlopen") or {}).get("error") else
                    "%s; dlopen: %s" % (rx[1]["error"], rx[1]["dlopen"]["error"]), 200),
            ", ".join(rx[1]["errors"]) or "-", ", ".join(rx[1]["warnings"]) or "-",
            wg_answer(rx[1])))
    else:
        L.append("none")
    L.append("")
    L.append("## Python-level import failures: not a loader failure, outside what an ELF check "
             "can see\n")
    if pf:
        L.append("| distribution | member | import error | dlopen(RTLD_NOW) after its top-level "
                 "package | findings naming it |")
        L.append("|---|---|---|---|---|")
        capped(L, pf, lambda rx: "| %s | %s | %s | %s | %s |" % (
            rx[0]["name"], md_cell(rx[1]["member"]), md_cell(rx[1]["error"], 200),
            "ok" if (rx[1].get("dlopen") or {}).get("ok") else "-",
            ", ".join(rx[1]["named_by"]) or "-"))
    else:
        L.append("none")
    L.append("")
    notes = [(r, n) for r in ok for n in r.get("notes", [])]
    L.append("## Notes\n")
    if notes:
        L.append("| distribution | note |")
        L.append("|---|---|")
        capped(L, notes, lambda rn: "| %s | %s |" % (rn[0]["name"], md_cell(rn[1])))
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
        tops, stale = top_levels(d, inside, suffixes)
        if stale:
            roots_note.append("top_level.txt names %s, which RECORD does not hold: not imported"
                              % ", ".join(stale))
        for arc, m in members.items():
            m["label"] = {"module": "extension module", "library": "library (dlopen alone)",
                          "other": "not loaded (executable, object or other interpreter)"}[m["kind"]]
            m["result"] = None
        recs.append({"name": d["name"], "key": dist_key(d["name"]), "version": d["version"],
                     "dist_info": d["dist_info"], "root_is_purelib": d["root_is_purelib"],
                     "tags": d["tags"], "members": members, "notes": roots_note,
                     "top_level": {t: None for t in tops}, "stale_top_level": stale,
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

    def do_probe(rec, what, key, mode, target, pre, path=None):
        res = probe(py, mode, target, pre, roots, a.timeout, cwd, path)
        if mode != "dlopen":
            note_maps(res, "%s %s" % ("GPU op" if mode == "gpu" else "import", target))
        res["maps"] = len(res.get("maps", []))
        if mode == "module" and res["ok"] is False and not res.get("level"):
            # The import crashed or hung before the probe could ask the loader: ask it in a
            # process of its own, after the same pre-imports.
            d = probe(py, "dlopen", path, pre, roots, a.timeout, cwd)
            res["dlopen"] = {"ok": d["ok"], "error": d["error"], "pre_error": d.get("pre_error")}
            res["level"] = None if d["ok"] is None else "python" if d["ok"] else "native"
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
                top = m["module"].split(".")[0]
                pre = ",".join([top] + (["torch"] if env["torch"] and top != "torch" else []))
                path = os.path.join(os.path.dirname(rec["dist_info"]), arc)
                pool.submit(3, do_probe, rec, "member", arc, "module", m["module"], pre, path)
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

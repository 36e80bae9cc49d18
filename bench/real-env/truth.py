#!/usr/bin/env python3
"""wheelgate against reality in a real Python environment.

Every installed distribution of PY's environment with a RECORD, pure or native, is judged two
ways: `wheelgate audit` of the installed distribution in place, and `wheelgate check --env PY
--gpu auto` of a wheel packed back from its RECORD (the files as they are now; files changed
after install are listed apart). Reality is measured in fresh processes of PY: the
distribution's top-level packages imported, every extension module imported by its dotted name
(and, where that fails otherwise than by the loader's words about it, dlopen'ed: a native load
failure or a Python-level one), every other shared library loaded with ctypes after `import
torch` (unless an import or a GPU operation was seen to map it: /proc/self/maps), and one GPU
operation each for torch, cupy and jax. Each error finding's claim is then executed (the
import statement a WG-HOL-001 names, in the module that holds it; the load of the object a
loader finding names; the GPU operation; the RECORD row; the tag) and judged true or false,
and what really fails with no error finding is a miss. The tables compare the two, per view
and per rule.

Standard library only. Usage:
  truth.py --wheelgate PATH/TO/wheelgate [--python PY] [--out DIR] [--jobs N]
           [--only NAME...] [--timeout S] [--deadline S] [--views audit,check]
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
    rows = [r for r in csv.reader(io.StringIO(rec)) if r and r[0]] if rec else None
    files = [r[0] for r in rows] if rows is not None else None
    wheel = text("WHEEL") or ""
    kv = [l.split(":", 1) for l in wheel.splitlines() if ":" in l]
    top = text("top_level.txt")
    dists.append({
        "name": name, "version": d.version, "dist_info": p, "site": os.path.dirname(p),
        "record": files,
        "hashes": {r[0]: r[1] for r in rows if len(r) > 1 and "=" in r[1]} if rows else {},
        "installer": (text("INSTALLER") or "").strip() or None,
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


# The tags an installer accepts for PY: packaging's sys_tags, pip's vendored copy else.
TAGS = r'''
import json
try:
    from packaging.tags import sys_tags
except ImportError:
    try:
        from pip._vendor.packaging.tags import sys_tags
    except ImportError:
        sys_tags = None
print(json.dumps([str(t) for t in sys_tags()] if sys_tags else None))
'''


def supported_tags(py, timeout, cwd):
    rc, out, _ = run_bounded([py, "-c", TAGS], timeout, cwd, probe_env())
    try:
        return set(json.loads(out) or []) if rc == 0 else set()
    except ValueError:
        return set()


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
    it, missing files (bytecode caches under __pycache__ apart: Python rewrites those), and
    the ELF members with their kind."""
    site = d["site"]
    inside, outside, missing, gone_cache = {}, [], [], []
    for rel in d["record"] or []:
        if rel.startswith("/") or os.path.normpath(rel).startswith(".."):
            outside.append(rel)
            continue
        arc = os.path.normpath(rel).replace(os.sep, "/")
        path = os.path.join(site, arc)
        if "__pycache__" in arc.split("/"):
            if not os.path.isfile(path):
                gone_cache.append(arc)
            continue
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
    return inside, outside, outside_elf, missing, gone_cache, members


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


def record_hash(digest, algo="sha256"):
    return algo + "=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def record_algo(row_hash):
    """The hash algorithm a RECORD row names (sha256, sha384...), or None: unusable."""
    algo = (row_hash or "").partition("=")[0].lower()
    return algo if algo in hashlib.algorithms_guaranteed and algo != "md5" else None


def same_hash(row_hash, computed):
    """Whether a RECORD row's hash is the computed one (its base64 padding aside)."""
    a, _, x = (row_hash or "").partition("=")
    b, _, y = computed.partition("=")
    return a.lower() == b and x.rstrip("=") == y


def add_file(zf, arc, path, level, store_all, algo=None):
    """Writes one member; returns its sha256 RECORD hash, its size, and its hash with the
    installed RECORD's algorithm (for the changed-file check) when that is not sha256."""
    st = os.stat(path)
    zi = zipfile.ZipInfo.from_file(path, arc, strict_timestamps=False)
    zi.compress_type = zipfile.ZIP_STORED if store_all or st.st_size > BIG else zipfile.ZIP_DEFLATED
    try:
        zi.compress_level = level           # Python 3.13+
    except AttributeError:
        zi._compresslevel = level           # 3.7 to 3.12
    h, n = hashlib.sha256(), 0
    other = hashlib.new(algo) if algo and algo != "sha256" else None
    with open(path, "rb") as f, zf.open(zi, "w") as w:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
            if other:
                other.update(b)
            w.write(b)
            n += len(b)
    sha = record_hash(h.digest())
    return sha, n, record_hash(other.digest(), algo) if other else sha


def file_hash(path, algo):
    h = hashlib.new(algo)
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                return record_hash(h.digest(), algo)
            h.update(b)


def changed_files(inside, hashes):
    """The installed files whose bytes differ from their RECORD row (hashed apart: a wheel
    reused from an earlier run was not read again)."""
    out = []
    for arc, path in sorted(inside.items()):
        algo = record_algo(hashes.get(arc))
        if algo:
            try:
                if not same_hash(hashes[arc], file_hash(path, algo)):
                    out.append(arc)
            except OSError:
                pass
    return out


def pack(d, inside, outside, wheels_dir, level, store_all, reuse, hashes):
    """Writes the wheel from the files as they are now: every member with a RECORD row that
    matches its current bytes, so that check judges the code as it is installed. Files whose
    bytes differ from the installed RECORD (changed after install: a replaced cacert.pem, a
    Debian-stripped .so) are listed apart in info['changed']; RECORD files that are gone are
    not packed (the caller lists them). Returns what went in and what was left out."""
    t = time.monotonic()
    fname = wheel_filename(d)
    dest = os.path.join(wheels_dir, fname)
    info = {"wheel": dest, "files": 0, "bytes": 0, "notes": []}
    if reuse and os.path.isfile(dest) and \
            os.path.getmtime(dest) >= os.path.getmtime(os.path.join(d["dist_info"], "RECORD")):
        info["notes"].append("reused")
        info["bytes"] = os.path.getsize(dest)
        info["changed"] = changed_files(inside, hashes)
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
    rows, changed = [], []
    with zipfile.ZipFile(tmp, "w", allowZip64=True, strict_timestamps=False) as zf:
        for arc, path in files:
            algo = record_algo(hashes.get(arc))
            digest, size, theirs = add_file(zf, arc, path, level, store_all, algo)
            if algo and not same_hash(hashes[arc], theirs):
                changed.append(arc)
            rows.append((arc, digest, str(size)))
            info["files"] += 1
            info["bytes"] += size
        rows.append((di + "/RECORD", "", ""))
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        zf.writestr(zipfile.ZipInfo(di + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0)),
                    buf.getvalue(), compress_type=zipfile.ZIP_DEFLATED)
    os.replace(tmp, dest)
    info["changed"] = changed
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
    elif mode == "claim":
        # What an import statement's finding claims: the module that holds the statement,
        # imported by its dotted name (which runs the statement where it is at module level),
        # then the module the statement names, in the same process (the holder's context).
        def attempt(name):
            try:
                importlib.import_module(name)
                return {"ok": True}
            except BaseException as e:
                return {"ok": False, "type": type(e).__name__,
                        "error": ("%s: %s" % (type(e).__name__, e))[:1000],
                        "name": getattr(e, "name", None) if isinstance(e, ImportError) else None}
        out = {}
        if pre:
            out["container"] = attempt(pre[0])
        if not pre or out["container"]["ok"]:
            out["module"] = attempt(target)
        res["out"] = out
        res["ok"] = True
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
    if mode not in ("module", "claim"):
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

def read_input(inp):
    """One input of a check/audit JSON report: verdict, counts, findings, what else it says."""
    return {
        "verdict": inp.get("verdict"), "counts": inp.get("counts", {}), "error": inp.get("error"),
        "findings": [{"rule": f.get("rule"), "severity": f.get("severity"),
                      "member": f.get("member"), "symbol": f.get("symbol"),
                      "file": f.get("file"), "line": f.get("line"),
                      "message": clip(f.get("message"), 1000),
                      **({"vars": f["vars"]} if isinstance(f.get("vars"), dict) else {})}
                     for f in inp.get("findings", [])],
        "input": {k: v for k, v in inp.items()
                  if k not in ("path", "verdict", "error", "counts", "findings")}}


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
    res.update(read_input(inp))
    res["target"] = doc.get("target")
    # Whatever else the report says (the profile, the rules not applied...), kept as it is.
    res["report"] = {k: v for k, v in doc.items()
                     if k not in ("schema", "target", "inputs", "summary")}
    return res


UNKNOWN_ONLY = re.compile(r"--only (\S+): no installed distribution")


def audit(wg, py, names, extra, jobs, timeout, cwd):
    """One `wheelgate audit` of the named installed distributions, in place: ({(key,
    version): result}, what the run said). A name audit does not find (a distribution outside
    the site directories it reads) makes it refuse the whole run: it is dropped and the run
    made again, once."""
    t = time.monotonic()
    run = {"names": list(names), "dropped": []}
    for attempt in (1, 2):
        left = budget(timeout)
        if left < 1:
            run.update(rc=None, verdict="not run", seconds=round(time.monotonic() - t, 2))
            return {}, run
        cmd = [wg, "audit", "--no-config", "--gpu", "auto", "--format", "json", "-j",
               str(max(1, jobs)), *extra]
        for n in names:
            cmd += ["--only", n]
        rc, out, err = run_bounded(cmd + [py], left, cwd)
        err = err.decode(errors="replace")
        run.update(rc=rc, seconds=round(time.monotonic() - t, 2), stderr=clip(err, 4000))
        try:
            doc = json.loads(out)
            break
        except ValueError:
            doc = None
        gone = set(UNKNOWN_ONLY.findall(err))
        if rc != 2 or not gone or attempt == 2:
            run["verdict"] = "timeout" if rc is None else "no-json"
            return {}, run
        run["dropped"] += sorted(gone)
        names = [n for n in names if n not in gone]
        if not names:
            run["verdict"] = "none audited"
            return {}, run
    got = {}
    for inp in doc.get("inputs", []):
        name, _, ver = (inp.get("path") or "").rpartition(" ")
        r = read_input(inp)
        r.update(rc=rc, seconds=run["seconds"], target=doc.get("target"),
                 report={k: v for k, v in doc.items()
                         if k not in ("schema", "target", "inputs", "summary", "not_audited")})
        got.setdefault((dist_key(name), ver), r)
    run["not_audited"] = doc.get("not_audited")
    run["verdict"] = "ok"
    return got, run


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


# --- what each error finding claims, executed ----------------------------------------------

VIEWS = ("audit", "check")
VIEW_TEXT = {"audit": "audit (installed, in place)", "check": "check (repacked wheel, --env)"}
# A finding's claim, by rule: what the harness runs to see whether it holds.
IMPORT_RULES = {"WG-HOL-001"}
LOAD_RULES = {"WG-LD-001", "WG-LD-002", "WG-LD-003", "WG-LD-006", "WG-SYS-001", "WG-ABI-001",
              "WG-ABI-002", "WG-ABI3-001"}
GPU_RULES = {"WG-GPU-002", "WG-GPU-003", "WG-GPU-004", "WG-CUDA-001"}
RECORD_RULES = {"WG-REC-001", "WG-REC-002", "WG-REC-003", "WG-WHL-002"}
TAG_RULES = {"WG-TAG-007"}
HOL_MESSAGE = re.compile(r"^(?P<file>.+?):(?P<line>\d+) imports (?P<module>[A-Za-z_][\w.]*),")
SO_TOKEN = re.compile(r"[^\s:'\"`(),;]+\.so(?:\.[\w.]+)?")


def claim_kind(rule):
    return "import" if rule in IMPORT_RULES else "load" if rule in LOAD_RULES else \
        "gpu" if rule in GPU_RULES else "record" if rule in RECORD_RULES else \
        "tag" if rule in TAG_RULES else "works"


def member_arc(f):
    """A finding's member as a site-relative path (a check report may prefix the wheel)."""
    m = (f.get("member") or "").rsplit("!", 1)[-1]
    while m.startswith("./"):
        m = m[2:]
    return m


def module_of_file(path):
    """The dotted module a site-relative .py file is imported as, or None (not a .py file,
    a path part that is no identifier, a __main__ module: importing it runs a program)."""
    if not path or not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or parts[-1] == "__main__" or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def parse_import_claim(f):
    """(module, file, line, the module that holds the statement) from a WG-HOL-001 finding,
    or None where neither its fields nor its message name the module."""
    v = f.get("vars") or {}
    m = HOL_MESSAGE.match(f.get("message") or "")
    module = v.get("module") or (m.group("module") if m else None)
    if not module or not all(p.isidentifier() for p in module.split(".")):
        return None
    path = v.get("file") or f.get("file") or (m.group("file") if m else None) or member_arc(f)
    line = v.get("line") or f.get("line") or (m.group("line") if m else None)
    return {"module": module, "file": path, "line": line, "container": module_of_file(path)}


def about_module(err, module):
    """Whether an import's exception says that `module` is not there: a ModuleNotFoundError
    for it or a package on its path, or "cannot import name '<last>'" from its parent."""
    if not err or err.get("type") not in ("ModuleNotFoundError", "ImportError"):
        return False
    n, text, last = err.get("name"), err.get("error") or "", module.rsplit(".", 1)[-1]
    if n == module:
        return True
    if n and module.startswith(n + "."):
        return err["type"] == "ModuleNotFoundError" and ("'%s'" % n) in text or \
            ("cannot import name '%s'" % last) in text
    return ("No module named '%s'" % module) in text


def judge_import_claim(c, res):
    """(truth, why) of an import claim from its probe: true when importing the module that
    holds the statement fails because the named module is not there; false when the named
    module imports, or the holder imports while the statement would fail (the statement runs
    later, if ever: under a function or a condition); unverified otherwise."""
    if not res or res.get("ok") is not True:
        return "unverified", "not run" if not res else (res.get("error") or "the probe failed")
    out = res.get("out") or {}
    mod, cont = c["module"], c["container"]
    ce, me = out.get("container"), out.get("module")
    if ce and not ce["ok"]:
        if about_module(ce, mod):
            return "true", "import %s fails: %s" % (cont, ce["error"])
        return "unverified", "import %s fails otherwise: %s" % (cont, ce["error"])
    if not me:
        return "unverified", "the probe said nothing of %s" % mod
    if me["ok"]:
        return "false", "%s imports" % mod
    if not about_module(me, mod):
        return "false", "%s is there (its import fails otherwise: %s)" % (mod, me["error"])
    if cont:
        return "false", ("lazy: import %s works; %s is indeed missing, but the statement does "
                         "not run on import (%s)" % (cont, mod, me["error"]))
    return "unverified", ("%s is missing (%s), but %s is no importable module" %
                          (mod, me["error"], c["file"]))


def find_members(f, rec, index, sites):
    """The ELF members (rec, arc, member) a finding names: its member field, else the .so
    paths in its message (an installed object another distribution ships: WG-LD-006)."""
    arc = member_arc(f)
    if arc and arc in rec["members"]:
        return [(rec, arc, rec["members"][arc])]
    out = []
    for tok in ([arc] if arc else []) + SO_TOKEN.findall(f.get("message") or ""):
        cands = [tok] if tok.startswith("/") else [os.path.join(s, tok) for s in sites]
        for c in cands:
            hit = index.get(os.path.realpath(c))
            if hit and hit not in out:
                out.append(hit)
    return out


def judge_load_claim(hits):
    if not hits:
        return "unverified", "names no ELF member the harness loaded"
    whys, truths = [], []
    for rec, arc, m in hits:
        r = m.get("result")
        where = arc if rec is None else "%s (%s)" % (arc, rec["name"])
        if m["kind"] == "other":
            truths.append("unverified")
            whys.append("%s: not loaded by Python (an executable, object, other interpreter)" %
                        where)
        elif not r or r.get("ok") is None:
            truths.append("unverified")
            whys.append("%s: not probed%s" % (where, "" if not r else ": " + (r.get("error") or "")))
        elif r["ok"]:
            truths.append("false")
            whys.append("%s loads (%s)" % (where, m["label"]))
        elif m["kind"] == "module" and r.get("level") == "python":
            truths.append("false")
            whys.append("%s: the loader loads it; its import fails at the Python level: %s" %
                        (where, r["error"]))
        else:
            truths.append("true")
            whys.append("%s fails to load: %s" % (where, r["error"]))
    truth = "true" if "true" in truths else "unverified" if "unverified" in truths else "false"
    return truth, "; ".join(whys)


def judge_works(rec, what="the distribution"):
    """A claim no probe of its own tests, judged by the distribution: true when a top-level
    import or GPU operation fails, false when all work."""
    re_ = rec["reality"]
    if re_["works"] is None:
        return "unverified", "%s's reality is unknown (not run: %s)" % (
            what, ", ".join(re_["not_run"]))
    if re_["works"]:
        return "false", "%s works: its top-level packages import%s" % (
            what, " and its GPU operations run" if rec["gpu"] else "")
    bad = ["import %s: %s" % kv for kv in re_["top_level_failed"].items()] + \
        ["%s GPU op: %s" % kv for kv in re_["gpu_failed"].items()]
    return "true", "%s is broken: %s" % (what, "; ".join(bad))


def judge_record_claim(view, rec, f):
    arc = member_arc(f)
    if view == "check":
        return "false", ("the repacked wheel's RECORD rows are its members' current bytes "
                         "(the harness wrote them)")
    if "__pycache__" in arc.split("/"):
        return "false", "%s is a bytecode cache: Python writes it again, nothing fails" % arc
    if arc in rec["changed_files"]:
        return "changed", "%s changed after install (its bytes differ from RECORD)" % arc
    if arc in rec["removed_files"]:
        return "changed", "%s was removed after install" % arc
    if rec.get("changed_unknown"):
        return "unverified", "the files were not hashed (%s)" % NOT_RUN
    if f["rule"] == "WG-REC-002":
        return "false", "the distribution has a RECORD (the harness read it)"
    if arc not in rec.get("_record", ()):
        return "unverified", "%s is no file RECORD lists" % (arc or "no member")
    return "false", "%s matches its RECORD row (the harness hashed it)" % arc


def judge_tag_claim(rec, supported):
    """WG-TAG-007 (the wheel is not for the target Python), asked of the installer: pip's
    own tag list for PY (packaging.tags.sys_tags, as pip installs by it)."""
    if not supported:
        return ("works",) + judge_works(rec)
    # The repacked wheel's tags: WHEEL's Tag lines (wheel_filename's py3-none-any without).
    tags = [t for t in rec["tags"] if t.count("-") == 2] or ["py3-none-any"]
    ok = [t for t in tags if t in supported]
    if ok:
        return "tag", "false", "pip installs it here: %s is among the %d tags PY supports" % (
            ok[0], len(supported))
    return "tag", "true", "pip would refuse it: none of its tags (%s) is among the %d tags " \
        "PY supports" % (", ".join(tags) or "none", len(supported))


def judge_finding(view, rec, f, claims, index, sites, supported=None):
    kind = claim_kind(f["rule"])
    if kind == "tag":
        return judge_tag_claim(rec, supported)
    if kind == "import":
        c = parse_import_claim(f)
        if c is None:
            return kind, "unverified", "claim not parsed from the message"
        return (kind,) + judge_import_claim(c, claims.get((c["container"], c["module"])))
    if kind == "load":
        return (kind,) + judge_load_claim(find_members(f, rec, index, sites))
    if kind == "gpu":
        ops = rec["gpu"]
        if ops:
            if any(not r or r.get("ok") is None for r in ops.values()):
                return kind, "unverified", "GPU operation not run"
            bad = {g: r["error"] for g, r in ops.items() if not r["ok"]}
            if bad:
                return kind, "true", "; ".join("%s GPU op fails: %s" % kv for kv in bad.items())
            return kind, "false", "GPU operations run: %s" % ", ".join(sorted(ops))
        return ("works",) + judge_works(rec)
    if kind == "record":
        return (kind,) + judge_record_claim(view, rec, f)
    return (kind,) + judge_works(rec)


def miss_class(rec, top, err, blockers):
    if blockers:
        return "native load failure: %s" % ", ".join(blockers)
    py = [a for a, m in sorted(rec["members"].items())
          if m.get("result") and m["result"].get("level") == "python" and
          m["result"]["ok"] is False and (err == m["result"]["error"] or
                                          names_failure(err, a, m))]
    if py:
        return "Python-level failure of %s (the loader loads it)" % ", ".join(py)
    m = re.search(r"No module named '([\w.]+)'", err or "")
    if m:
        name = m.group(1)
        own = name.split(".")[0] in set(rec["top_level"]) | set(rec.get("stale_top_level", []))
        return "%s module missing: %s" % ("own" if own else "dependency", name)
    return "other: %s" % (err or "?").split(":", 1)[0]


def judge_views(recs, claims, index, sites, supported=None):
    """Per view: every error finding's claim executed (true, false, changed file,
    unverified), and the misses: a top-level import or GPU operation that fails with no
    error finding standing (none, or only false ones), a native load failure no error names
    (an optional one a warning names is caught)."""
    for rec in recs:
        natives = [(arc, m) for arc, m in sorted(rec["members"].items())
                   if m.get("result") and m["result"]["ok"] is False and
                   (m["kind"] != "module" or m["result"].get("level") != "python")]
        re_ = rec["reality"]
        for view in VIEWS:
            v = rec["views"].get(view)
            if not v or v.get("verdict") not in ("pass", "fail"):
                continue
            for f in v["findings"]:
                if f["severity"] != "error":
                    continue
                f["claim"], f["truth"], f["why"] = judge_finding(view, rec, f, claims, index,
                                                                 sites, supported)
                f["why"] = clip(f["why"], 1000)
            standing = [f for f in v["findings"]
                        if f["severity"] == "error" and f["truth"] != "false"]
            misses = []
            for t, e in sorted(re_["top_level_failed"].items()):
                if not standing:
                    blk = [a for a, m in natives
                           if e == m["result"]["error"] or names_failure(e, a, m)]
                    misses.append({"what": "import " + t, "class": miss_class(rec, t, e, blk),
                                   "error": e})
            for g, e in sorted(re_["gpu_failed"].items()):
                if not standing:
                    misses.append({"what": "%s GPU op" % g, "class": "GPU operation",
                                   "error": e})
            lf = {x["member"]: x for x in rec["compare"]["load_failures"]}
            for arc, m in natives:
                blocking = lf.get(arc, {}).get("blocking", False)
                err = any(f["severity"] == "error" and names_member(f, arc)
                          for f in v["findings"])
                warn = any(f["severity"] == "warning" and names_member(f, arc)
                           for f in v["findings"])
                if not err and not (warn and not blocking):
                    misses.append({"what": "load " + arc, "class": "native load failure (%s%s)"
                                   % ("blocking" if blocking else "optional",
                                      ", only a warning names it" if warn else ""),
                                   "error": m["result"]["error"], "object": True})
            v["misses"] = misses


def view_stats(recs, view):
    st = collections.Counter()
    for r in recs:
        v = r["views"].get(view) or {}
        st["distributions"] += 1
        verdict = v.get("verdict")
        if verdict not in ("pass", "fail"):
            st["no verdict"] += 1
            continue
        st[verdict] += 1
        if verdict == "fail" and r["reality"]["works"]:
            st["failed, work"] += 1
        if r["reality"]["works"] is None:
            st["unknown"] += 1
        errs = [f for f in v["findings"] if f["severity"] == "error"]
        st["errors"] += len(errs)
        for f in errs:
            st[f["truth"]] += 1
        st["false-dists"] += any(f["truth"] == "false" for f in errs)
        ms = v.get("misses", [])
        st["missed imports"] += sum(1 for x in ms if not x.get("object"))
        st["missed objects"] += sum(1 for x in ms if x.get("object"))
        st["missed-dists"] += bool(ms)
    return st


def views_table(recs, meta, views):
    which = "Both views" if len(views) == 2 else "The %s view" % views[0]
    L = ["## %s: every distribution, every error's claim executed\n" % which]
    L.append("*audit*: `wheelgate audit` of the installed distributions in place; *check*: "
             "`wheelgate check --env` of each repacked from its RECORD (the files as they are "
             "now). An error is *true* when what it claims reproduces here (an import claim: "
             "the module that holds the statement fails to import for want of the module; a "
             "loader claim: the object fails to load; a GPU claim: the GPU operation fails; "
             "a claim no probe tests: the distribution fails to import), *false* when it does "
             "not, *changed* when it names a file changed or removed after install, "
             "*unverified* when the harness could not tell. A *miss*: a top-level import or "
             "GPU operation that fails with no standing (non-false) error, or a native load "
             "failure no error names.\n")
    L.append("| view | distributions | pass | fail | no verdict | failed, yet work | "
             "reality unknown | errors | true | **false** | changed file | unverified | "
             "distributions with a false error | **misses**: imports / objects | "
             "distributions with a miss |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for view in views:
        for label, sub in (("", recs), (" (pure)", [r for r in recs if r["kind"] == "pure"]),
                           (" (native)", [r for r in recs if r["kind"] == "native"])):
            st = view_stats(sub, view)
            L.append("| %s%s | %d | %d | %d | %d | %d | %d | %d | %d | **%d** | %d | %d | %d | "
                     "**%d / %d** | %d |" % (
                         view, label, st["distributions"], st["pass"], st["fail"],
                         st["no verdict"], st["failed, work"], st["unknown"], st["errors"],
                         st["true"], st["false"], st["changed"], st["unverified"],
                         st["false-dists"], st["missed imports"], st["missed objects"],
                         st["missed-dists"]))
    L.append("")
    nr = meta.get("not_run") or {}
    if any(nr.values()):
        L.append("**Not run** (--deadline reached): %s. A distribution whose reality is "
                 "unknown has no miss; an error whose probe did not run is unverified.\n" %
                 ", ".join("%s %d" % kv for kv in nr.items() if kv[1]))
    ch = [r for r in recs if r["changed_files"] or r["removed_files"]]
    L.append("Files changed after install (bytes differ from RECORD / removed; packed as they "
             "are now): %d in %d distributions (%d of them installed by no wheel installer: "
             "their packaging rewrote them); bytecode caches RECORD lists that are gone (not "
             "packed, no failure): %d in %d distributions. Distributions without RECORD "
             "(judged by neither view): %d.\n" % (
                 sum(len(r["changed_files"]) + len(r["removed_files"]) for r in recs), len(ch),
                 sum(1 for r in ch if not wheel_installer(r.get("installer"))),
                 sum(len(r["gone_cache"]) for r in recs),
                 sum(1 for r in recs if r["gone_cache"]), len(meta.get("no_record", []))))
    L.append("## Per rule, %s (errors judged; warnings counted)\n" % which.lower())
    L.append("| view | rule | severity | claim | findings | true | **false** | changed file | "
             "unverified | distributions |")
    L.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    per = collections.OrderedDict()
    for view in views:
        for r in recs:
            v = r["views"].get(view) or {}
            if v.get("verdict") not in ("pass", "fail"):
                continue
            for f in v["findings"]:
                k = (view, f["rule"], f["severity"])
                row = per.setdefault(k, collections.Counter())
                row["n"] += 1
                row[f.get("truth", "-")] += 1
                per.setdefault(k + ("dists",), set()).add(r["key"])
    for k in sorted(x for x in per if len(x) == 3):
        row, dists = per[k], per[k + ("dists",)]
        judged = k[2] == "error"
        L.append("| %s | %s | %s | %s | %d | %s | %s | %s | %s | %d |" % (
            k[0], k[1], k[2], claim_kind(k[1]) if judged else "-", row["n"],
            *(("**%d**" % row[t] if t == "false" else str(row[t])) if judged else "-"
              for t in ("true", "false", "changed", "unverified")), len(dists)))
    if not any(len(x) == 3 for x in per):
        L.append("| - | none | | | | | | | | |")
    L.append("")
    return "\n".join(L)


def wheel_installer(name):
    return bool(name) and name.split()[0].lower() in ("pip", "uv", "poetry", "pdm", "pipenv")


def views_lists(recs, views):
    L = []
    L.append("## Misses (per view)\n")
    rows = [(view, r, x) for view in views for r in recs
            for x in (r["views"].get(view) or {}).get("misses", [])]
    if rows:
        L.append("| view | distribution | what fails | class | error |")
        L.append("|---|---|---|---|---|")
        capped(L, rows, lambda x: "| %s | %s %s | %s | %s | %s |" % (
            x[0], x[1]["name"], x[1]["version"], md_cell(x[2]["what"], 160), x[2]["class"],
            md_cell(x[2]["error"], 200)))
    else:
        L.append("none")
    L.append("")
    for truth, title in (("false", "False errors: the claim did not reproduce"),
                         ("changed", "Errors on files changed after install"),
                         ("unverified", "Unverified errors: the harness could not tell")):
        L.append("## %s\n" % title)
        rows = [(view, r, f) for view in views for r in recs
                for f in (r["views"].get(view) or {}).get("findings", [])
                if f.get("truth") == truth]
        if rows:
            L.append("| view | distribution | rule | member | why | message |")
            L.append("|---|---|---|---|---|---|")
            capped(L, rows, lambda x: "| %s | %s %s | %s | %s | %s | %s |" % (
                x[0], x[1]["name"], x[1]["version"], x[2]["rule"],
                md_cell(member_arc(x[2]) or "-", 100), md_cell(x[2]["why"], 240),
                md_cell(x[2]["message"], 200)))
        else:
            L.append("none")
        L.append("")
    L.append("## Files changed after install\n")
    rows = [r for r in recs if r["changed_files"] or r["removed_files"] or r["gone_cache"]]
    if rows:
        L.append("| distribution | installer | changed | removed | bytecode caches gone | "
                 "changed or removed (first 3) |")
        L.append("|---|---|---:|---:|---:|---|")
        capped(L, rows, lambda r: "| %s %s | %s | %d | %d | %d | %s |" % (
            r["name"], r["version"], md_cell(r.get("installer") or "none (system packages)"),
            len(r["changed_files"]), len(r["removed_files"]), len(r["gone_cache"]),
            md_cell(", ".join((r["changed_files"] + r["removed_files"])[:3]) or "-", 200)))
    else:
        L.append("none")
    L.append("")
    L.append("## Per distribution\n")
    L.append("| distribution | kind | audit | check | reality | changed / removed files | "
             "false errors (audit / check) | misses (audit / check) |")
    L.append("|---|---|---|---|---|---|---|---|")

    def verdict(r, view):
        v = r["views"].get(view)
        if not v:
            return "-"
        errs = collections.Counter(f["rule"] for f in v.get("findings", [])
                                   if f["severity"] == "error")
        return "%s%s" % (v.get("verdict"), " (%s)" % ", ".join(
            "%s×%d" % kv for kv in sorted(errs.items())) if errs else "")

    def count(r, view, what):
        v = r["views"].get(view)
        if view not in views or not v or v.get("verdict") not in ("pass", "fail"):
            return "-"
        if what == "false":
            return sum(1 for f in v.get("findings", []) if f.get("truth") == "false")
        return len(v.get("misses", []))

    for r in recs:
        re_ = r["reality"]
        real = "works" if re_["works"] else "unknown (not run)" if re_["works"] is None else \
            "BROKEN: " + ", ".join(["import %s" % t for t in re_["top_level_failed"]] +
                                   ["%s GPU op" % g for g in re_["gpu_failed"]])
        if not r["top_level"] and not r["gpu"]:
            real = "nothing to import"
        L.append("| %s %s | %s | %s | %s | %s | %d / %d | %s | %s |" % (
            r["name"], r["version"], r["kind"], md_cell(verdict(r, "audit"), 120),
            md_cell(verdict(r, "check"), 120), md_cell(real, 120), len(r["changed_files"]),
            len(r["removed_files"]),
            " / ".join(str(count(r, v, "false")) for v in VIEWS),
            " / ".join(str(count(r, v, "misses")) for v in VIEWS)))
    L.append("")
    return "\n".join(L)


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

def chunks(items, size, k):
    """k groups of about equal total size (largest first into the lightest group)."""
    groups = [[0, []] for _ in range(max(1, min(k, len(items))))]
    for it in sorted(items, key=size, reverse=True):
        g = min(groups, key=lambda x: x[0])
        g[0] += size(it)
        g[1].append(it)
    return [g[1] for g in groups if g[1]]


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
                    help="seconds allowed to each check and each probe process (default 300; "
                    "an audit run gets twice as long)")
    ap.add_argument("--deadline", type=float, metavar="S",
                    help="start nothing after S seconds and stop what runs then; what did not "
                    "run is reported as not run (default: none)")
    ap.add_argument("--views", default="audit,check",
                    help="which views to judge: audit (installed, in place), check (repacked "
                    "wheels), or both (default audit,check)")
    ap.add_argument("--audit-runs", type=int, default=4, metavar="N",
                    help="wheelgate audit invocations the distributions are split into, by "
                    "size, each with --jobs/N threads (default 4)")
    ap.add_argument("--level", type=int, default=1, help="deflate level (default 1)")
    ap.add_argument("--store", action="store_true", help="store every file, deflate none")
    ap.add_argument("--reuse-wheels", action="store_true",
                    help="keep a packed wheel that is newer than its RECORD")
    ap.add_argument("--no-gpu-ops", action="store_true", help="run no GPU operation")
    ap.add_argument("--wg-arg", action="append", default=[], metavar="ARG",
                    help="one more argument to wheelgate check and audit (repeatable)")
    a = ap.parse_args()
    views = [v for v in VIEWS if v in a.views.split(",")]
    if not views or set(a.views.split(",")) - set(VIEWS):
        ap.error("--views: audit, check or audit,check")
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
    norecord = [{"name": d["name"], "version": d["version"], "dist_info": d["dist_info"]}
                for d in dists if d["record"] is None]
    log("%d distributions in %s (%d without RECORD: judged by neither view)" %
        (len(env["dists"]), py, len(norecord)))

    # RECORD resolved and ELF files found, in parallel
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        scans = list(ex.map(lambda d: scan_dist(d, suffixes) if d["record"] is not None
                            else None, dists))
    recs, packs = [], []
    for d, sc in zip(dists, scans):
        if sc is None:
            continue
        inside, outside, outside_elf, missing, gone_cache, members = sc
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
        hashes = {os.path.normpath(k).replace(os.sep, "/"): v for k, v in d["hashes"].items()}
        recs.append({"name": d["name"], "key": dist_key(d["name"]), "version": d["version"],
                     "kind": "native" if members else "pure", "dist_info": d["dist_info"],
                     "installer": d["installer"], "root_is_purelib": d["root_is_purelib"],
                     "tags": d["tags"], "members": members, "notes": roots_note,
                     "top_level": {t: None for t in tops}, "stale_top_level": stale,
                     "changed_files": [], "removed_files": missing, "gone_cache": gone_cache,
                     "gpu": {}, "check": None, "audit": None, "pack": None, "views": {},
                     "size": sum(os.path.getsize(p) for p in inside.values()),
                     "_record": set(inside)})
        packs.append((d, inside, outside, hashes, recs[-1]))
    nat = [r for r in recs if r["kind"] == "native"]
    log("%d distributions with RECORD, %d of them ship ELF files: %s" %
        (len(recs), len(nat), " ".join(r["name"] for r in nat)))
    if not recs:
        sys.exit("truth: no distribution in %s has a RECORD" % py)

    roots = sorted({d["site"] for d in dists})
    index = {}          # realpath of an ELF member -> (rec, arc, member)
    for rec in recs:
        site = os.path.dirname(rec["dist_info"])
        for arc, m in rec["members"].items():
            index.setdefault(os.path.realpath(os.path.join(site, arc)), (rec, arc, m))
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
    claims, claim_seen = {}, set()   # (holder module or None, module) -> its probe

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

    def do_claim(k):
        res = probe(py, "claim", k[1], k[0] or "-", roots, a.timeout, cwd)
        res["maps"] = len(res.get("maps", []))
        with lock:
            claims[k] = res
        log("claim: import %s, then %s: %s" % (k[0] or "-", k[1], clip(json.dumps(
            res.get("out") if res.get("ok") else res.get("error")), 240)))

    def submit_claims(findings):
        """Each import claim of an error finding, probed once for both views."""
        for f in findings:
            if f["severity"] != "error" or claim_kind(f["rule"]) != "import":
                continue
            c = parse_import_claim(f)
            if c is None:
                continue
            k = (c["container"], c["module"])
            with lock:
                if k in claim_seen:
                    continue
                claim_seen.add(k)
            pool.submit(2, do_claim, k)

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

    # The installed view: a few audit runs over all distributions, split by size.
    audit_runs = []
    if "audit" in views:
        groups = chunks(recs, lambda r: r["size"], a.audit_runs)

        def do_audit(group):
            got, run = audit(wg, py, [r["name"] for r in group], a.wg_arg,
                             -(-jobs // len(groups)), 2 * a.timeout, cwd)
            audit_runs.append(run)
            for r in group:
                res = got.get((r["key"], r["version"]))
                if res is None:
                    res = {"verdict": "not audited" if run["verdict"] == "ok" else run["verdict"],
                           "findings": [], "counts": {},
                           "reason": "audit dropped it (not in the site directories it reads)"
                           if r["name"] in run["dropped"] else
                           "audit did not report it" if run["verdict"] == "ok" else
                           "audit run: %s, rc %s" % (run["verdict"], run.get("rc"))}
                r["audit"] = r["views"]["audit"] = res
                submit_claims(res["findings"])
            with lock:
                done["audits"] += len(group)
            log("audit %d/%d (%d distributions, %s, %.1fs): %s" % (
                done["audits"], len(recs), len(group), run["verdict"], run["seconds"],
                collections.Counter(r["audit"]["verdict"] for r in group)))
        for g in groups:
            pool.submit(0, do_audit, g)

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
        rec["check"] = rec["views"]["check"] = res
        submit_claims(res["findings"])
        with lock:
            done["checks"] += 1
        log("check %d/%d %s: %s %s (%.1fs)" % (done["checks"], len(recs), rec["name"],
                                               res["verdict"], res.get("counts"), res["seconds"]))

    # Packing in threads (zlib, sha256 and file I/O let go of the GIL), biggest first: the
    # largest wheel's pack + check is the critical path. Without the check view only the
    # changed files are looked for.
    packs.sort(key=lambda p: p[4]["size"], reverse=True)

    def pack_one(d, inside, outside, hashes):
        if time.monotonic() >= DEADLINE[0]:
            return None
        if "check" in views:
            return pack(d, inside, outside, wheels_dir, a.level, a.store, a.reuse_wheels,
                        hashes)
        return {"changed": changed_files(inside, hashes)}
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        futs = {ex.submit(pack_one, d, inside, outside, hashes): rec
                for d, inside, outside, hashes, rec in packs}
        for i, f in enumerate(concurrent.futures.as_completed(futs), 1):
            rec = futs[f]
            try:
                info = f.result()
            except Exception as e:
                rec["notes"].append("packing failed: %s" % e)
                log("pack %s FAILED: %s" % (rec["name"], e))
                continue
            if info is None:
                rec["changed_unknown"] = True
                rec["notes"].append("not packed, changed files not looked for: " + NOT_RUN)
                continue
            rec["changed_files"] = info.pop("changed", [])
            if "check" not in views:
                continue
            rec["pack"] = info
            log("pack %d/%d %s: %d files, %.1f MiB, %ss%s" % (
                i, len(packs), os.path.basename(info["wheel"]), info["files"],
                info["bytes"] / 1048576, info.get("seconds", "-"),
                ", %d changed after install" % len(rec["changed_files"])
                if rec["changed_files"] else ""))
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
    recs.sort(key=lambda r: (r["key"], r["version"]))
    unpacked = [r["name"] for r in recs if r["kind"] == "native" and not r["check"]] \
        if "check" in views else []
    for r in recs:
        judge(r)
    supported = supported_tags(py, max(1, budget(a.timeout)), cwd)
    judge_views(recs, claims, index, roots, supported)

    def not_run(res):
        return not res or res.get("ok") is None
    meta_not_run = collections.OrderedDict([
        ("audits (distributions)", sum(1 for r in recs if "audit" in views and
                                       (r["audit"] or {}).get("verdict") in (None, "not run"))),
        ("checks", sum(1 for r in recs if "check" in views and
                       (r["check"] or {}).get("verdict") in (None, "not run"))),
        ("top-level imports", sum(not_run(x) for r in recs for x in r["top_level"].values())),
        ("module and library probes", sum(not_run(m["result"]) for r in recs
                                          for m in r["members"].values()
                                          if m["kind"] != "other")),
        ("import claims", sum(not_run(x) for x in claims.values())),
        ("GPU operations", sum(not_run(x) for r in recs for x in r["gpu"].values()))])
    gpus = None
    for r in recs:
        tgt = (r["check"] or r["audit"] or {}).get("target")
        if tgt:
            gpus = [g.get("name") or g.get("cc") for g in tgt.get("gpus", [])]
            break
    meta = {"python": env["python"], "executable": env["executable"],
            "torch_version": (wenv or {}).get("torch", {}).get("version")
            if isinstance((wenv or {}).get("torch"), dict) else None,
            "wheelgate_version": vout.decode().strip() or "wheelgate ?", "gpus": gpus,
            "distributions": len(env["dists"]), "not_packed": unpacked, "views": views,
            "no_record": norecord, "not_run": meta_not_run,
            "seconds": round(time.monotonic() - T0, 1)}
    parts = ["# wheelgate against reality: python %s (%s), torch %s; %s; GPUs: %s; %d "
             "distributions (%d with RECORD, %d of those ship ELF files), in %ss\n" % (
                 meta["python"], meta["executable"], meta.get("torch_version") or "none",
                 meta["wheelgate_version"], ", ".join(gpus or []) or "none",
                 meta["distributions"], len(recs), len(nat), meta["seconds"]),
             views_table(recs, meta, views)]
    natives = [r for r in recs if r["kind"] == "native" and r["check"]]
    nat_head, nat_tail = "", ""
    if "check" in views and natives:
        nat_head, _, nat_tail = table(natives, meta).partition("## Per wheel\n")
        nat_tail = "## Native wheels: per wheel\n" + nat_tail
        parts.append(nat_head.replace("## Totals\n", "## Native wheels, check view: totals\n")
                     .replace("## Per rule\n", "## Native wheels, check view: per rule\n")
                     .rstrip() + "\n")
    parts.append(views_lists(recs, views))
    if nat_tail:
        parts.append(nat_tail)
    md = "\n".join(parts)
    unparsed = [{"view": v, "distribution": r["name"], "message": f["message"]}
                for r in recs for v in views for f in (r["views"].get(v) or {}).get("findings", [])
                if f.get("claim") == "import" and parse_import_claim(f) is None]
    doc = {"meta": meta, "options": vars(a), "wheelgate_env": wenv, "no_record": norecord,
           "shadowed": env["shadowed"], "audit_runs": audit_runs,
           "claims": [{"holder": k[0], "module": k[1], "probe": v}
                      for k, v in sorted(claims.items(), key=lambda kv: (kv[0][0] or "", kv[0][1]))],
           "unparsed_claims": unparsed,
           "wheels": [{k: v for k, v in r.items() if k != "views" and not k.startswith("_")}
                      for r in recs]}
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(doc, f, indent=1, default=sorted)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(md + "\n")
    print(md)
    log("done in %.0fs: %s/truth.json, %s/table.md" % (time.monotonic() - T0, out, out))
    shutil.rmtree(cwd, ignore_errors=True)


if __name__ == "__main__":
    main()

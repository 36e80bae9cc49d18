#!/usr/bin/env python3
"""Makes the hostile inputs of issue 12 ("Why"), each in a few seconds and a few MB on disk
(the 4 GiB stdin is streamed, never written). Used by bench/hostile.sh and the tests.

Usage:
  hostile_gen.py meta OUT.whl [N]       N (4000) .dist-info dirs, each a 1 MiB METADATA
  hostile_gen.py init OUT.whl [MiB]     a pure wheel, a 1 MiB __init__.py of import lines
  hostile_gen.py imports OUT.whl [MiB]  a pure wheel, 1 MiB of `from x import a<spaces>!`
  hostile_gen.py rules OUT.yaml [KiB]   a 1 MB rule file of YAML aliases (billion laughs)
  hostile_gen.py stdin GiB              GiB of bytes to stdout (a zip's start, then zeros)
  hostile_gen.py symbols ENVDIR [N]     an environment whose libc10.so has N (200,000)
                                        dynamic symbols of one name (gcc, then st_name patched)
  hostile_gen.py cache ENVDIR CACHEDIR [N]  a cache entry for ENVDIR's libc10.so with N
                                        (1,500,000) definitions of one name
"""
import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile


def record_row(arc, data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arc, h, len(data))


def pure_wheel(out, name, files, extra=None):
    """A well-formed py3-none-any wheel of files {arcname: bytes}; extra(z) adds members
    without RECORD rows."""
    di = "%s-1.0.dist-info" % name
    meta = ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name).encode()
    wheel = b"Wheel-Version: 1.0\nGenerator: hostile\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    rows = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for arc, data in list(files.items()) + [(di + "/METADATA", meta), (di + "/WHEEL", wheel)]:
            z.writestr(arc, data)
            rows.append(record_row(arc, data))
        if extra:
            extra(z)
        rows.append(di + "/RECORD,,")
        z.writestr(di + "/RECORD", "\n".join(rows) + "\n")


def meta(out, n=4000):
    """Many .dist-info directories, each with a METADATA of exactly 1 MiB (the ratio check
    only looks at members over 1 MiB): every one was held to the end of the scan."""
    body = (b"Metadata-Version: 2.1\nName: x\nVersion: 1.0\n" + b"Summary: " + b"x" * 100 + b"\n") * 1
    body = (body * ((1 << 20) // len(body) + 1))[: 1 << 20]

    def extra(z):
        # One compressed copy, written n times (zipfile recompresses each: level 1 is enough).
        for i in range(n):
            info = zipfile.ZipInfo("pad%05d-1.0.dist-info/METADATA" % i, (2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, body, compresslevel=9)
    pure_wheel(out, "hostile_meta", {"hostile_meta/__init__.py": b""}, extra)


def init(out, mib=1):
    """A pure wheel whose __init__.py is mib MiB of import lines (different names)."""
    lines, size, i = [], 0, 0
    while True:
        l = ("from hostile_init.m%d import f%d_ext, g%d\nimport hostile_init.n%d_cuda as h%d\n"
             % (i, i, i, i, i))
        if size + len(l) > mib << 20:
            break  # at most mib MiB: the largest Python file read is 1 MiB
        lines.append(l)
        size += len(l)
        i += 1
    pure_wheel(out, "hostile_init", {"hostile_init/__init__.py": "".join(lines).encode()})


def imports(out, mib=1):
    """`from x import a<spaces>!`: lines the from-import pattern backtracks on."""
    line = "from x import a" + " " * 1000 + "!\n"
    n = (mib << 20) // len(line)
    pure_wheel(out, "hostile_imports", {"hostile_imports/__init__.py": (line * n).encode()})


def rules(out, kib=1024):
    """A rule file whose rules all name one 192 KB scalar by alias (title, message, fix):
    1 MB on disk, gigabytes once every alias is a copy."""
    body = "kind: rules\nversion: 1\nx: &x '" + "a" * (192 << 10) + "'\nrules:\n"
    rule = ("  - {id: WG-HOST-%05d, check: record-missing, profiles: {install: error}, "
            "title: *x, message: *x, fix: *x}\n")
    out_l, size, i = [body], len(body), 0
    while size < kib * 1024:
        r = rule % i
        out_l.append(r)
        size += len(r)
        i += 1
    with open(out, "w") as f:
        f.write("".join(out_l))


def stdin(gib):
    """gib GiB to stdout, in 1 MiB writes: the start of a zip, then zeros."""
    total = int(float(gib) * (1 << 30))
    chunk = bytearray(1 << 20)
    chunk[:4] = b"PK\x03\x04"
    w = sys.stdout.buffer
    try:
        while total > 0:
            n = min(total, len(chunk))
            w.write(chunk[:n])
            chunk[:4] = b"\0\0\0\0"
            total -= n
        w.flush()
    except BrokenPipeError:
        # The reader stopped at its cap: what this input is for.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def env_skeleton(envdir):
    lib = os.path.join(envdir, "lib", "python3.12", "site-packages", "torch", "lib")
    os.makedirs(lib, exist_ok=True)
    with open(os.path.join(envdir, "lib", "python3.12", "site-packages", "torch", "version.py"), "w") as f:
        f.write("__version__ = '2.4.0+cpu'\ncuda = None\n")
    return os.path.join(lib, "libc10.so")


def symbols(envdir, n=200000):
    """libc10.so with n defined dynamic symbols that all have one name: linked by gcc with n
    distinct names, then every .dynsym entry's st_name pointed at the first one's."""
    so = env_skeleton(envdir)
    with tempfile.TemporaryDirectory() as tmp:
        asm = os.path.join(tmp, "s.s")
        with open(asm, "w") as f:
            f.write(".text\n")
            for i in range(n):
                f.write(".globl s%07d\n.type s%07d,@function\ns%07d: ret\n" % (i, i, i))
        subprocess.run(["gcc", "-shared", "-nostdlib", "-Wl,--hash-style=sysv", "-o", so, asm],
                       check=True)
    # Where .dynsym lies, from readelf (the tool, not a parser of ours).
    out = subprocess.run(["readelf", "-W", "-S", so], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"\]\s+\.dynsym\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", out)
    off, size, ent = (int(x, 16) for x in m.groups())
    with open(so, "r+b") as f:
        f.seek(off)
        tab = bytearray(f.read(size))
        names = [int.from_bytes(tab[k:k + 4], "little") for k in range(0, size, ent)]
        first = next(x for x in names if x)  # entry 0 is the null symbol
        for k in range(ent, size, ent):
            if names[k // ent]:
                tab[k:k + 4] = first.to_bytes(4, "little")
        f.seek(off)
        f.write(tab)


def cache(envdir, cachedir, n=1500000):
    """A well-formed cache entry for envdir's libc10.so (path, size and mtime match) with n
    definitions of one name."""
    so = env_skeleton(envdir)
    if not os.path.exists(so):
        subprocess.run(["gcc", "-shared", "-nostdlib", "-o", so, "-x", "c", "/dev/null"], check=True)
    real = os.path.realpath(so)
    st = os.stat(real)
    libs = os.path.join(cachedir, "wheelgate", "libs")
    os.makedirs(libs, exist_ok=True)
    entry = os.path.join(libs, hashlib.sha256(real.encode()).hexdigest() + ".json")
    head = {"format": "wheelgate.libindex/2", "path": real, "size": st.st_size,
            "mtime": int(st.st_mtime), "soname": "libc10.so", "rpath": None, "runpath": None,
            "torch_abi": 0, "needed": [], "verdefs": [], "verneeds": [], "undefs": []}
    with open(entry, "w") as f:
        f.write(json.dumps(head)[:-1] + ', "defs": [')
        f.write(",".join(['["c10_same_name", null, 0]'] * n))
        f.write("]}")
    return entry


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what, args = sys.argv[1], sys.argv[2:]
    if what == "meta":
        meta(args[0], int(args[1]) if len(args) > 1 else 4000)
    elif what == "init":
        init(args[0], int(args[1]) if len(args) > 1 else 1)
    elif what == "imports":
        imports(args[0], int(args[1]) if len(args) > 1 else 1)
    elif what == "rules":
        rules(args[0], int(args[1]) if len(args) > 1 else 1024)
    elif what == "stdin":
        stdin(args[0])
    elif what == "symbols":
        symbols(args[0], int(args[1]) if len(args) > 1 else 200000)
    elif what == "cache":
        print(cache(args[0], args[1], int(args[2]) if len(args) > 2 else 1500000))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

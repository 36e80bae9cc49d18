#!/usr/bin/env python3
"""Makes the hostile inputs of issue 12 ("Why"), each in a few seconds and a few MB on disk
(the 4 GiB stdin is streamed, never written). Used by bench/hostile.sh and the tests.

Usage:
  hostile_gen.py meta OUT.whl [N]       N (4000) .dist-info dirs, each a 1 MiB METADATA
  hostile_gen.py init OUT.whl [MiB]     a pure wheel, a 1 MiB __init__.py of import lines
  hostile_gen.py imports OUT.whl [MiB]  a pure wheel, 1 MiB of `from x import a<spaces>!`
  hostile_gen.py names OUT.whl [MiB]    a cp312 wheel with an extension module (g++) and MiB
                                        (30) of Python, 1 MiB files each one statement of
                                        imported names (`import m0, m1, ...`, `from pkg._C
                                        import (a0, ...)` over lines)
  hostile_gen.py members OUT.whl [N]    a zip of N (1,000,000) empty members (ZIP64 end record)
  hostile_gen.py runpath ENVDIR OUTSIDE OUT.whl  a wheel whose extension's RUNPATH is OUTSIDE
                                        (not in ENVDIR), which holds the library it needs as
                                        a sparse 4 GiB non-ELF file
  hostile_gen.py rules OUT.yaml [KiB]   a 1 MB rule file of YAML aliases (billion laughs)
  hostile_gen.py stdin GiB              GiB of bytes to stdout (a zip's start, then zeros)
  hostile_gen.py symbols ENVDIR [N]     an environment whose libc10.so has N (200,000)
                                        dynamic symbols of one name (gcc, then st_name patched)
  hostile_gen.py cache ENVDIR CACHEDIR [N]  a cache entry for ENVDIR's libc10.so with N
                                        (1,500,000) definitions of one name
  hostile_gen.py overlap OUT.whl [N] [MiB]  N (256) members whose data overlap (Fifield's
                                        quoted overlap): each quotes the next local header in
                                        a stored block and all end in one deflate stream of
                                        MiB (64) inflated; N x MiB inflated (16 GiB)
  hostile_gen.py zipstruct DIR          small wheels, one per case of issue 25 point 2
                                        (overlap-small, local headers that disagree with the
                                        central directory, data descriptors, symlink members,
                                        NUL in a name, case-only collisions, '.' and empty
                                        path components); prints their names
"""
import base64
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib


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


def names(out, mib=30):
    """Millions of imported names in few lines: lines and bytes are bounded, names were not.
    The wheel ships an extension module so that the import checks (hollow wheel, how a
    compiled module is imported) really run."""
    with tempfile.TemporaryDirectory() as tmp:
        src, so = os.path.join(tmp, "c.cpp"), os.path.join(tmp, "c.so")
        with open(src, "w") as f:
            f.write('extern "C" __attribute__((visibility("default"))) void *PyInit__C() '
                    '{ return 0; }\n')
        # It needs a library the wheel does not ship: a finding whose severity depends on how
        # the package imports the module, so that the import graph is really walked.
        dep = os.path.join(tmp, "libhostile_missing.so")
        subprocess.run(["g++", "-shared", "-fPIC", "-o", dep, "-x", "c++", "/dev/null"], check=True)
        subprocess.run(["g++", "-shared", "-fPIC", "-o", so, src, "-L" + tmp, "-lhostile_missing"],
                       check=True)
        with open(so, "rb") as f:
            ext = f.read()
    files = {"hostile_names/_C.cpython-312-x86_64-linux-gnu.so": ext}
    cap = (1 << 20) - 16
    for k in range(mib):
        if k % 2 == 0:  # one line: import m0, m1, ...
            parts, size, i = ["import "], 7, 0
            while size < cap:
                w = "m%d, " % i
                parts.append(w)
                size += len(w)
                i += 1
            body = "".join(parts).rstrip(", ") + "\n"
        else:  # from hostile_names._C import (a0, a1, ... over lines of 64 names)
            parts, size, i = ["from hostile_names._C import (\n"], 32, 0
            while size < cap:
                w = ("a%d,\n" if i % 64 == 63 else "a%d, ") % i
                parts.append(w)
                size += len(w)
                i += 1
            body = "".join(parts) + ")\n"
        name = "hostile_names/__init__.py" if k == 0 else "hostile_names/n%02d.py" % k
        files[name] = body.encode()
    meta = b"Metadata-Version: 2.1\nName: hostile_names\nVersion: 1.0\n"
    wheel = (b"Wheel-Version: 1.0\nGenerator: hostile\nRoot-Is-Purelib: false\n"
             b"Tag: cp312-cp312-linux_x86_64\n")
    di = "hostile_names-1.0.dist-info"
    rows = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in list(files.items()) + [(di + "/METADATA", meta), (di + "/WHEEL", wheel)]:
            z.writestr(arc, data)
            rows.append(record_row(arc, data))
        rows.append(di + "/RECORD,,")
        z.writestr(di + "/RECORD", "\n".join(rows) + "\n")


def members(out, n=1000000):
    """A real zip of n empty stored members with ZIP64 end records, written directly
    (zipfile takes minutes for a million)."""
    import struct
    local, central = bytearray(), bytearray()
    for i in range(n):
        name = b"x/%07d" % i
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 0, 0, 0x21, 0,
                               0, 0, len(name), 0, 0, 0, 0, 0, len(local)) + name
        local += struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0x21, 0, 0, 0,
                             len(name), 0) + name
    with open(out, "wb") as f:
        f.write(local)
        f.write(central)
        cd_off, cd_len = len(local), len(central)
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, n, n, cd_len, cd_off))
        f.write(struct.pack("<IIQI", 0x07064b50, 0, cd_off + cd_len, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                            0xFFFFFFFF, 0))


def runpath(envdir, outside, out):
    """An extension whose RUNPATH points outside the environment, at a directory holding the
    library it needs as a sparse 4 GiB file that is not ELF: --env must not read it."""
    os.makedirs(os.path.join(envdir, "lib", "python3.12", "site-packages"), exist_ok=True)
    os.makedirs(outside, exist_ok=True)
    outside = os.path.abspath(outside)
    with tempfile.TemporaryDirectory() as tmp:
        src, so = os.path.join(tmp, "c.cpp"), os.path.join(tmp, "c.so")
        with open(src, "w") as f:
            f.write('extern "C" __attribute__((visibility("default"))) void *PyInit__C() '
                    '{ return 0; }\n')
        dep = os.path.join(tmp, "libhostile_big.so")
        subprocess.run(["g++", "-shared", "-fPIC", "-o", dep, "-x", "c++", "/dev/null"], check=True)
        subprocess.run(["g++", "-shared", "-fPIC", "-o", so, src, "-L" + tmp, "-lhostile_big",
                        "-Wl,--enable-new-dtags,-rpath," + outside], check=True)
        with open(so, "rb") as f:
            ext = f.read()
    big = os.path.join(outside, "libhostile_big.so")
    with open(big, "wb") as f:
        f.write(b"PK\x03\x04 not an ELF library")
        f.truncate(4 << 30)
    pure_wheel(out, "hostile_rp", {"hostile_rp/__init__.py": b"from hostile_rp import _C\n",
                                    "hostile_rp/_C.cpython-312-x86_64-linux-gnu.so": ext})


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


def cache_entry(path, size, mtime, soname, defs=(), undefs=(), needed=(), verdefs=(),
                verneeds=(), rpath=None, runpath=None, torch_abi=0):
    """The bytes of a library-index cache entry (format 3, lib/src/loader/libcache.c): defs and
    undefs are (name, version or None, flags), verneeds (file, version, weak)."""
    strs, tab = {}, bytearray()

    def off(s):
        if s is None:
            return 0xffffffff
        b = s.encode() if isinstance(s, str) else s
        if b not in strs:
            strs[b] = len(tab)
            tab.extend(b + b"\0")
        return strs[b]
    head = [off(path), off(soname), off(rpath), off(runpath), torch_abi, len(needed),
            len(verdefs), len(verneeds), len(defs), len(undefs)]
    words = [off(x) for x in needed] + [off(x) for x in verdefs]
    for f, v, w in verneeds:
        words += [off(f), off(v), int(w)]
    for name, ver, flags in list(defs) + list(undefs):
        words += [off(name), off(ver), flags]
    if not tab:
        off("")
    payload = (struct.pack("=QQ11I", size, mtime, *head, len(tab)) +
               struct.pack("=%dI" % len(words), *words) + bytes(tab))
    return (b"WGLIBIDX" + struct.pack("=IIQ", 3, zlib.crc32(payload), len(payload)) +
            payload)


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
    entry = os.path.join(libs, hashlib.sha256(real.encode()).hexdigest() + ".wgl")
    with open(entry, "wb") as f:
        f.write(cache_entry(real, st.st_size, int(st.st_mtime), "libc10.so",
                            defs=[("c10_same_name", None, 0)] * n))
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
    elif what == "names":
        names(args[0], int(args[1]) if len(args) > 1 else 30)
    elif what == "members":
        members(args[0], int(args[1]) if len(args) > 1 else 1000000)
    elif what == "runpath":
        runpath(args[0], args[1], args[2])
    elif what == "rules":
        rules(args[0], int(args[1]) if len(args) > 1 else 1024)
    elif what == "stdin":
        stdin(args[0])
    elif what == "symbols":
        symbols(args[0], int(args[1]) if len(args) > 1 else 200000)
    elif what == "cache":
        print(cache(args[0], args[1], int(args[2]) if len(args) > 2 else 1500000))
    elif what in ("overlap", "zipstruct"):  # issue 25, point 2 (the functions at the end)
        zip_struct_main(what, args)
    elif what in ("elf-noshdr", "elf-withshdr"):  # issue 25, point 3: elf_noshdr OUT.whl
        elf_noshdr(args[0], zero=what == "elf-noshdr")
    elif not budget_main(what, args):
        sys.exit(__doc__ + budget_main.__doc__)



# ---- issue 25, point 1: work and output per input (bench/hostile.sh, tests/integration/test_budget.py)

def requires(out, nreq=10000, nimp=1000, extras=False):
    """A pure wheel whose METADATA has nreq Requires-Dist lines (with extras: each behind an
    extra marker) and whose __init__.py imports nimp top-level modules it does not ship."""
    name = "hostile_req"
    di = "%s-1.0.dist-info" % name
    req = "".join("Requires-Dist: dep-%d>=1.0%s\n" % (i, '; extra == "x%d"' % i if extras else "")
                  for i in range(nreq))
    meta = ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n%s" % (name, req)).encode()
    init = "".join("import mod_%d\n" % i for i in range(nimp)).encode()
    files = {name + "/__init__.py": init, di + "/METADATA": meta,
             di + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: hostile\nRoot-Is-Purelib: true\n"
                            b"Tag: py3-none-any\n"}
    rows = [record_row(a, d) for a, d in files.items()] + [di + "/RECORD,,"]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for a, d in files.items():
            z.writestr(a, d)
        z.writestr(di + "/RECORD", "\n".join(rows) + "\n")


def record_missing(out, n=999000):
    """A pure wheel (about 2 MB at the default n) whose RECORD has n more rows, each naming a
    file the wheel does not have (one WG-REC-003 finding each)."""
    name = "hostile_rec"
    di = "%s-1.0.dist-info" % name
    files = {name + "/__init__.py": b"",
             di + "/METADATA": ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name).encode(),
             di + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: hostile\nRoot-Is-Purelib: true\n"
                            b"Tag: py3-none-any\n"}
    rows = [record_row(a, d) for a, d in files.items()]
    rows += ["g/%d,," % i for i in range(n)]  # short rows: RECORD stays under 16 MiB
    rows.append(di + "/RECORD,,")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for a, d in files.items():
            z.writestr(a, d)
        z.writestr(di + "/RECORD", "\n".join(rows) + "\n")


def hollow(out, n=69064):
    """A pure wheel (about 200 KB at the default n) whose package imports n submodules it does
    not ship (`from . import _cN`), spread over modules of at most 5,000 such lines (a Python
    file is read whole up to 1 MiB) that its __init__.py imports: one hollow-wheel finding
    (an error) per missing module."""
    name = "hostile_hollow"
    files, per = {}, 5000
    mods = ["m%d" % k for k in range((n + per - 1) // per)]
    files[name + "/__init__.py"] = "".join("from . import %s\n" % m for m in mods).encode()
    for k, m in enumerate(mods):
        files["%s/%s.py" % (name, m)] = "".join(
            "from . import _c%d\n" % i for i in range(k * per, min(n, (k + 1) * per))).encode()
    pure_wheel(out, name, files)


def fatbin_elf(n):
    """An x86-64 ELF shared object (no code) whose .nv_fatbin section holds one fatbin
    container of n SASS entries (sm_80, sm_90), each a 64-byte header with no payload
    (shared/docs/fatbin-format.md, sections 2 and 3)."""
    # Two architectures in a seeded random order: the member then deflates about 190:1,
    # under the zip-bomb ratio (250:1) that would refuse it unread.
    import random
    rnd = random.Random(25)
    archs = [struct.pack("<HHIQIIHHIIIQQQ", 2, 0x0101, 64, 0, 0, 0, 0, 1, a, 0, 0, 0x11, 0, 0)
             for a in (80, 90)]
    assert len(archs[0]) == 64
    fat = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 64 * n) + b"".join(
        archs[rnd.getrandbits(1)] for _ in range(n))
    shstr = b"\0.nv_fatbin\0.shstrtab\0"
    off_fat = 64
    off_str = off_fat + len(fat)
    off_sh = (off_str + len(shstr) + 7) & ~7
    eh = (b"\x7fELF\x02\x01\x01" + b"\0" * 9 +
          struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, off_sh, 0, 64, 0, 0, 64, 3, 2))
    sh = b"\0" * 64
    sh += struct.pack("<IIQQQQIIQQ", 1, 1, 2, 0, off_fat, len(fat), 0, 0, 8, 0)
    sh += struct.pack("<IIQQQQIIQQ", 11, 3, 0, 0, off_str, len(shstr), 0, 0, 1, 0)
    pad = b"\0" * (off_sh - off_str - len(shstr))
    return eh + fat + shstr + pad + sh


def fatbin_entries(out, n=1000000):
    """A wheel (about 330 KB at the default n) holding one ELF object whose .nv_fatbin has
    one container of n entries (fatbin_elf)."""
    name = "hostile_fatbin"
    files = {name + "/__init__.py": b"", name + "/libk.so": fatbin_elf(n)}
    pure_wheel(out, name, files)


def budget_main(what, args):
    """The subcommands of issue 25's part 1 (bench/hostile.sh, tests/integration/test_budget.py):
      requires OUT.whl [NREQ [NIMP]]        NREQ (10,000) Requires-Dist lines, NIMP (1,000)
                                            imports of modules the wheel does not ship
      requires-extras OUT.whl [NREQ [NIMP]] the same, each requirement behind an extra
                                            (100,000 x 10,000)
      record-missing OUT.whl [N]            RECORD with N (999,000) rows naming no member
      hollow OUT.whl [N]                    N (69,064) imports of missing submodules
      fatbin OUT.whl [N]                    one fatbin of N (1,000,000) entries
    Returns False for another subcommand."""
    num = lambda i, d: int(args[i]) if len(args) > i else d
    if what == "requires":
        requires(args[0], num(1, 10000), num(2, 1000))
    elif what == "requires-extras":
        requires(args[0], num(1, 100000), num(2, 10000), extras=True)
    elif what == "record-missing":
        record_missing(args[0], num(1, 999000))
    elif what == "hollow":
        hollow(args[0], num(1, 69064))
    elif what == "fatbin":
        fatbin_entries(args[0], num(1, 1000000))
    else:
        return False
    return True


# ---- issue 25, point 2: zip structure (overlapping members, local headers that disagree with
# the central directory, unsafe names). Written byte by byte: zipfile would refuse or repair
# most of these.

def _crc32_combine(crc1, crc2, len2):
    """crc32(A + B) from crc32(A), crc32(B) and len(B): the GF(2) operator that appends len2
    zero bytes, squared up (zlib's method), so a 64 MiB stream is not hashed once per member."""
    def times(mat, vec):
        s, i = 0, 0
        while vec:
            if vec & 1:
                s ^= mat[i]
            vec >>= 1
            i += 1
        return s

    def square(mat):
        return [times(mat, mat[n]) for n in range(32)]

    if len2 == 0:
        return crc1
    odd = [0xEDB88320] + [1 << n for n in range(31)]  # one zero bit
    even = square(odd)  # two zero bits
    odd = square(even)  # four
    while True:
        even = square(odd)
        if len2 & 1:
            crc1 = times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = square(even)
        if len2 & 1:
            crc1 = times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


def _local(name, method, crc, csize, usize, flags=0, extra=b""):
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0, 0x21, crc, csize,
                       usize, len(name), len(extra)) + name + extra


def _central(name, method, crc, csize, usize, off, flags=0, attr=0o100644 << 16):
    # made by 3 (Unix) 3.0: the upper 16 bits of the external attributes are st_mode
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 20, flags, method, 0, 0x21,
                       crc, csize, usize, len(name), 0, 0, 0, 0, attr, off) + name


def _end(n, cd_size, cd_off):
    return struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, cd_size, cd_off, 0)


def _member(name, data, method=8, attr=0o100644 << 16, lo=None):
    """A member of _raw_zip: name (str or bytes) and data; lo overrides fields of the local
    header only (name, method, crc, csize, usize, flags), or adds a data descriptor (dd: bytes
    after the data) and central flags (cflags)."""
    if isinstance(name, str):
        name = name.encode()
    if method == 8:
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        comp = c.compress(data) + c.flush()
    else:
        comp = data
    return dict(name=name, data=data, comp=comp, method=method, attr=attr,
                crc=zlib.crc32(data), local=dict(lo or {}))


def _raw_zip(out, members):
    """members in order; one with inside=(j, delta) writes nothing of its own: its central
    entry points delta bytes into member j's data (where j's data quotes its header)."""
    body, cd, data_at = bytearray(), bytearray(), {}
    for k, m in enumerate(members):
        lo = m["local"]
        off = len(body)
        if "inside" in m:
            j, delta = m["inside"]
            off = data_at[j] + delta
            cd += _central(m["name"], m["method"], m["crc"], len(m["comp"]), len(m["data"]),
                           off, 0, m["attr"])
            continue
        body += _local(lo.get("name", m["name"]), lo.get("method", m["method"]),
                       lo.get("crc", m["crc"]), lo.get("csize", len(m["comp"])),
                       lo.get("usize", len(m["data"])), lo.get("flags", 0))
        data_at[k] = len(body)
        body += m["comp"] + lo.get("dd", b"")
        cd += _central(m["name"], m["method"], m["crc"], len(m["comp"]), len(m["data"]), off,
                       lo.get("cflags", 0), m["attr"])
    with open(out, "wb") as f:
        f.write(bytes(body) + bytes(cd) + _end(len(members), len(cd), len(body)))


def _raw_wheel(out, name, members):
    """A py3-none-any wheel of the given _member()s, with METADATA, WHEEL and a RECORD that
    lists every member by its central directory name."""
    di = "%s-1.0.dist-info" % name
    meta = ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name).encode()
    wheel = b"Wheel-Version: 1.0\nGenerator: hostile\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    ms = list(members) + [_member(di + "/METADATA", meta), _member(di + "/WHEEL", wheel)]
    rows = [record_row(m["name"].decode("utf-8", "replace"), m["data"]) for m in ms
            if not m["name"].endswith(b"/")]
    rows.append(di + "/RECORD,,")
    ms.append(_member(di + "/RECORD", ("\n".join(rows) + "\n").encode()))
    _raw_zip(out, ms)


def overlap(out, n=256, mib=64):
    """Fifield's quoted overlap (https://www.bamsoftware.com/hacks/zipbomb/): member i's
    data is a stored block quoting member i+1's local header, then member i+1's data; the
    last member's data is the kernel, one deflate stream. Every member's CRC and sizes are
    right, so a reader that follows the central directory inflates the kernel n times."""
    import random
    r = random.Random(25)
    blk = bytearray(1 << 20)
    for i in range(0, len(blk), 512):  # ~200:1, under max_ratio's 250:1
        blk[i] = r.randrange(1, 256)
    blk = bytes(blk)
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    kernel = b"".join(c.compress(blk) for _ in range(mib)) + c.flush()
    ksize = len(blk) * mib
    kcrc = 0
    for _ in range(mib):
        kcrc = zlib.crc32(blk, kcrc)
    names = [("bomb/%05d.bin" % i).encode() for i in range(n)]
    # back to front: member i inflates to headers[i+1:] + the kernel's output
    headers = [b""] * n
    crc, usize, csize = kcrc, ksize, len(kernel)
    meta = [None] * n
    for i in range(n - 1, -1, -1):
        meta[i] = (crc, csize, usize)
        headers[i] = _local(names[i], 8, crc, csize, usize)
        crc = _crc32_combine(zlib.crc32(headers[i]), crc, usize)
        usize += len(headers[i])
        csize += 5 + len(headers[i])
    body, cd = bytearray(), bytearray()
    for i in range(n):
        off = len(body)
        body += headers[i]
        if i + 1 < n:
            q = len(headers[i + 1])
            body += b"\x00" + struct.pack("<HH", q, q ^ 0xFFFF)  # stored, not final
        cd += _central(names[i], 8, meta[i][0], meta[i][1], meta[i][2], off)
    body += kernel
    with open(out, "wb") as f:
        f.write(bytes(body) + bytes(cd) + _end(n, len(cd), len(body)))


def zipstruct(outdir):
    """One small wheel per case; the name says the case and what wheelgate must say."""
    os.makedirs(outdir, exist_ok=True)
    made = []

    def wheel(case, members):
        path = os.path.join(outdir, "zs_%s-1.0-py3-none-any.whl" % case)
        _raw_wheel(path, "zs_" + case, members)
        made.append(path)

    py = b"x = 1\n"
    # overlap-small: a.bin (stored) quotes b.py's local header and data: two members, one
    # stretch of bytes.
    inner = _member("zs_overlap/b.py", py, method=0)
    inner_bytes = _local(inner["name"], 0, inner["crc"], len(py), len(py)) + py
    inner["inside"] = (0, 0)
    wheel("overlap", [_member("zs_overlap/a.bin", inner_bytes, method=0), inner])
    # local headers that disagree with the central directory
    wheel("lh_name", [_member("zs_lh_name/a.py", py, lo=dict(name=b"zs_lh_name/b.py"))])
    wheel("lh_size", [_member("zs_lh_size/a.py", py * 10, lo=dict(usize=7))])
    wheel("lh_method", [_member("zs_lh_method/a.py", py, method=0, lo=dict(method=8))])
    wheel("lh_encrypted", [_member("zs_lh_encrypted/a.py", py, lo=dict(flags=1))])
    wheel("lh_utf8", [_member("zs_lh_utf8/\u00e9.py", py, lo=dict(cflags=0x800))])
    # data descriptors: sizes 0 in the local header, the real ones after the data; right,
    # and one whose descriptor disagrees with the central directory
    ok = _member("zs_dd/a.py", py * 50)
    ok["local"].update(flags=8, crc=0, csize=0, usize=0, cflags=8,
                       dd=struct.pack("<IIII", 0x08074B50, ok["crc"], len(ok["comp"]),
                                      len(ok["data"])))
    wheel("dd", [ok])
    # encrypted in both headers: no disagreement (wheelgate reads no encrypted member)
    wheel("encrypted", [_member("zs_encrypted/a.py", py, lo=dict(flags=1, cflags=1))])
    # not a hostile case: stored empty members (a directory entry, an empty __init__.py),
    # which libzip opens without reading their local headers
    wheel("emptymembers", [_member("zs_emptymembers/", b"", method=0, attr=0o40755 << 16),
                           _member("zs_emptymembers/__init__.py", b"", method=0)])
    bad = _member("zs_lh_dd/a.py", py * 50)
    bad["local"].update(flags=8, crc=0, csize=0, usize=0, cflags=8,
                        dd=struct.pack("<IIII", 0x08074B50, bad["crc"], len(bad["comp"]),
                                       len(bad["data"]) + 1))
    wheel("lh_dd", [bad])
    # unsafe names
    link = 0o120777 << 16
    wheel("symlink_abs", [_member("zs_symlink_abs/passwd", b"/etc/passwd", method=0, attr=link)])
    wheel("symlink_up", [_member("zs_symlink_up/up", b"../../..", method=0, attr=link)])
    wheel("nul", [_member(b"zs_nul/a.py\x00.txt", py)])
    wheel("case", [_member("zs_case/Foo.py", py), _member("zs_case/foo.py", b"y = 2\n")])
    wheel("dot", [_member("zs_dot/./a.py", py)])
    wheel("dotlead", [_member("./zs_dotlead/a.py", py)])
    wheel("empty", [_member("zs_empty//a.py", py)])
    return made


def zip_struct_main(what, args):
    if what == "overlap":
        overlap(args[0], *[int(a) for a in args[1:3]])
    else:
        for p in zipstruct(args[0]):
            print(p)



# ---- issue 25, point 3: an object whose section headers are zeroed (the loader never reads
# them): an old-ABI torch extension that must fail WG-ABI-001 as the original does.

OLD_ABI_SYMBOL = "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs"  # std::string as pre-cxx11 torch


def elf_noshdr(out, zero=True):
    """A cp312 wheel whose extension calls c10's old-ABI torchCheckFail; e_shoff, e_shnum and
    e_shstrndx zeroed unless zero is False (the original, for comparison)."""
    import struct
    with tempfile.TemporaryDirectory() as tmp:
        src, so = os.path.join(tmp, "c.c"), os.path.join(tmp, "c.so")
        with open(src, "w") as f:
            f.write('void torch_check_fail(void) __asm__("%s");\n'
                    '__attribute__((visibility("default"))) void *PyInit__C(void)\n'
                    '{ torch_check_fail(); return 0; }\n' % OLD_ABI_SYMBOL)
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", so, src], check=True)
        with open(so, "rb") as f:
            d = bytearray(f.read())
    if zero:
        struct.pack_into("<Q", d, 0x28, 0)
        struct.pack_into("<HHH", d, 0x3a, 0, 0, 0)
    di = "hostile_noshdr-1.0.dist-info"
    files = [("hostile_noshdr/__init__.py", b"from . import _C\n"),
             ("hostile_noshdr/_C.cpython-312-x86_64-linux-gnu.so", bytes(d)),
             (di + "/METADATA", b"Metadata-Version: 2.1\nName: hostile_noshdr\nVersion: 1.0\n"
                                b"Requires-Dist: torch\n"),
             (di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: hostile\nRoot-Is-Purelib: false\n"
                             b"Tag: cp312-cp312-linux_x86_64\n")]
    rows = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            z.writestr(arc, data)
            rows.append(record_row(arc, data))
        rows.append(di + "/RECORD,,")
        z.writestr(di + "/RECORD", "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Packs files into a well-formed wheel (dist-info, WHEEL, METADATA, RECORD with sha256), laid
out as an nvidia-* wheel, for the benchmarks.

  make-wheel.py [--stored] OUT.whl LIB...
      the libraries under nvidia/cu13/lib/, deflate level 6 as `pip wheel` writes them (or
      stored, uncompressed, with --stored)
  make-wheel.py --tiny N OUT.whl
      N tiny members (a few dozen bytes each: Python modules and data files), deflated: what
      the per-member costs of a reader add up to
  make-wheel.py --huge-elf MIB OUT.whl
      one shared object of about MIB MiB (cc; its .rodata a zero-filled array), deflated: a
      member far larger than its compressed bytes, for the memory a reader holds"""
import base64
import hashlib
import os
import struct
import subprocess
import sys
import tempfile
import zipfile


def huge_elf(mib, tmpdir):
    """A real shared object (a function, dynamic symbols, a .rodata of mib MiB)."""
    src = os.path.join(tmpdir, "huge.c")
    with open(src, "w") as f:
        f.write("const unsigned char wg_huge_blob[%dULL << 20] = {1};\n"
                "int wg_huge_size(void) { return (int)sizeof(wg_huge_blob); }\n" % mib)
    so = os.path.join(tmpdir, "libhuge.so")
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O1", "-o", so, src],
                   check=True)
    # Zeros deflate 1000:1, past wheelgate's zip-bomb ratio (250): 8 KiB of random bytes in
    # every MiB of .rodata make it about 110:1, like real libraries' compressible data.
    with open(so, "r+b") as f:
        ehdr = f.read(64)
        shoff, = struct.unpack_from("<Q", ehdr, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ehdr, 0x3a)
        f.seek(shoff)
        shdrs = [struct.unpack("<IIQQQQIIQQ", f.read(shentsize)) for _ in range(shnum)]
        f.seek(shdrs[shstrndx][4])
        names = f.read(shdrs[shstrndx][5])
        for sh in shdrs:
            if names[sh[0]:names.index(b"\0", sh[0])] == b".rodata":
                for at in range(sh[4], sh[4] + sh[5] - (8 << 10), 1 << 20):
                    f.seek(at)
                    f.write(os.urandom(8 << 10))
    return so


def main():
    args = sys.argv[1:]
    stored = "--stored" in args
    args = [a for a in args if a != "--stored"]
    tiny = huge = None
    if args and args[0] == "--tiny":
        tiny, args = int(args[1]), args[2:]
    elif args and args[0] == "--huge-elf":
        huge, args = int(args[1]), args[2:]
    if not args or (tiny is None and huge is None and len(args) < 2):
        sys.exit(__doc__)
    out, libs = args[0], args[1:]
    if huge is not None:
        with tempfile.TemporaryDirectory() as tmpdir:
            return pack(out, [huge_elf(huge, tmpdir)], None, stored)
    return pack(out, libs, tiny, stored)


def pack(out, libs, tiny, stored):
    name, version = "nvidia_bench", "13.0.0"
    di = "%s-%s.dist-info" % (name, version)
    rows = []
    tmp = out + ".tmp"
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(tmp, "w", method, compresslevel=None if stored else 6) as z:
        def add(arc, data=None, path=None):
            h = hashlib.sha256()
            size = 0
            # Opened by name, a member takes the archive's method (and deflate level 6).
            with z.open(arc, "w", force_zip64=path is not None) as f:
                src = open(path, "rb") if path else None
                while True:
                    chunk = src.read(1 << 20) if src else data
                    if not chunk:
                        break
                    h.update(chunk)
                    size += len(chunk)
                    f.write(chunk)
                    if not src:
                        break
                if src:
                    src.close()
            rows.append("%s,sha256=%s,%d" % (
                arc, base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode(), size))
        for lib in libs:
            add("nvidia/cu13/lib/" + os.path.basename(lib), path=lib)
        for i in range(tiny or 0):
            pkg = "nvidia_bench/p%03d" % (i // 100)
            if i % 2:
                add("%s/m%d.py" % (pkg, i), ("X_%d = %d\n" % (i, i)).encode())
            else:
                add("%s/data/d%d.txt" % (pkg, i), ("datum %d\n" % i).encode())
        add(di + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)).encode())
        add(di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\n"
            b"Tag: py3-none-manylinux_2_27_x86_64\n")
        rows.append(di + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(di + "/RECORD", (2026, 1, 1, 0, 0, 0)),
                   "\n".join(rows) + "\n", compress_type=method)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Packs files into a well-formed wheel (dist-info, WHEEL, METADATA, RECORD with sha256), laid
out as an nvidia-* wheel, for the benchmarks.

  make-wheel.py [--stored] OUT.whl LIB...
      the libraries under nvidia/cu13/lib/, deflate level 6 as `pip wheel` writes them (or
      stored, uncompressed, with --stored)
  make-wheel.py --tiny N OUT.whl
      N tiny members (a few dozen bytes each: Python modules and data files), deflated: what
      the per-member costs of a reader add up to"""
import base64
import hashlib
import os
import sys
import zipfile


def main():
    args = sys.argv[1:]
    stored = "--stored" in args
    args = [a for a in args if a != "--stored"]
    tiny = None
    if args and args[0] == "--tiny":
        tiny, args = int(args[1]), args[2:]
    if not args or (tiny is None and len(args) < 2):
        sys.exit(__doc__)
    out, libs = args[0], args[1:]
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

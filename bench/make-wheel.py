#!/usr/bin/env python3
"""Packs shared libraries into a well-formed wheel (dist-info, WHEEL, METADATA, RECORD with
sha256), deflate level 6 as `pip wheel` writes them, laid out as an nvidia-* wheel.
Usage: make-wheel.py OUT.whl LIB..."""
import base64
import hashlib
import os
import sys
import zipfile


def main():
    out, libs = sys.argv[1], sys.argv[2:]
    name, version = "nvidia_bench", "13.0.0"
    di = "%s-%s.dist-info" % (name, version)
    rows = []
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        def add(arc, data=None, path=None):
            h = hashlib.sha256()
            size = 0
            # Opened by name, a member takes the archive's deflate level 6.
            with z.open(arc, "w", force_zip64=True) as f:
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
        add(di + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)).encode())
        add(di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\n"
            b"Tag: py3-none-manylinux_2_27_x86_64\n")
        rows.append(di + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(di + "/RECORD", (2026, 1, 1, 0, 0, 0)),
                   "\n".join(rows) + "\n", compress_type=zipfile.ZIP_DEFLATED)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()

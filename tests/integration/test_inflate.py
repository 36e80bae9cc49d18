#!/usr/bin/env python3
"""Deflated members inflated whole (libdeflate, members of 256 KiB to 64 MiB) are held to the
same truth as the streaming path and as Python's zipfile (pip's reader): a wrong CRC, a
member shorter or longer than its directory entry declares, and a damaged deflate stream are
each the error WG-WHL-002 (the install would fail) naming the member, in the same words on
both paths; an intact one reads as it did.

Usage: test_inflate.py WHEELGATE
"""
import base64
import hashlib
import io
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main, test  # noqa: E402

WG = os.path.abspath(sys.argv[1])
NAME = "blob-1.0-py3-none-any.whl"
MEMBER = "blob/data.bin"


def wheel(size):
    """A pure wheel whose blob/data.bin (size bytes, compressible about 2:1) comes first."""
    rnd = random.Random(size)
    data = bytes(rnd.getrandbits(4) for _ in range(size))
    files = [(MEMBER, data), ("blob/__init__.py", b""),
             ("blob-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: blob\nVersion: 1.0\n"),
             ("blob-1.0.dist-info/WHEEL", b"Wheel-Version: 1.0\nGenerator: t\n"
                                          b"Root-Is-Purelib: true\nTag: py3-none-any\n")]
    out = io.BytesIO()
    rec = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            z.writestr(n, d)
            h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
            rec.append("%s,sha256=%s,%d" % (n, h, len(d)))
        z.writestr("blob-1.0.dist-info/RECORD", "\n".join(rec + ["blob-1.0.dist-info/RECORD,,"])
                   + "\n")
    return bytearray(out.getvalue())


def headers(b):
    """Offsets of the first member's local header and its central directory entry."""
    central = b.find(b"PK\x01\x02")
    assert b[:4] == b"PK\x03\x04" and central > 0
    return 0, central


def patch(b, local_off, central_off, crc=None, usize=None):
    if crc is not None:
        struct.pack_into("<I", b, local_off + 14, crc)
        struct.pack_into("<I", b, central_off + 16, crc)
    if usize is not None:
        struct.pack_into("<I", b, local_off + 22, usize)
        struct.pack_into("<I", b, central_off + 24, usize)
    return b


def check(b):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, NAME)
        with open(p, "wb") as f:
            f.write(b)
        r = subprocess.run([WG, "check", "--no-config", "--format", "json", p],
                           capture_output=True, timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def zipfile_reads(b):
    """Whether Python's zipfile (what pip installs with) reads the member intact."""
    try:
        with zipfile.ZipFile(io.BytesIO(bytes(b))) as z:
            z.read(MEMBER)
        return True
    except Exception:
        return False


@test
def intact_members_read_alike():
    for size in (100 * 1024, 300 * 1024, 3 << 20):  # streamed, then inflated whole
        b = wheel(size)
        rc, out, err = check(b)
        assert rc == 0, (size, rc, err)
        doc = json.loads(out)
        assert doc["inputs"][0]["verdict"] == "pass", doc["inputs"][0]


@test
def damage_is_an_install_failure():
    for size in (100 * 1024, 2 << 20):  # the streaming path and the whole-member path
        base = wheel(size)
        lo, co = headers(base)
        crc, = struct.unpack_from("<I", base, lo + 14)
        csize, = struct.unpack_from("<I", base, lo + 18)
        nlen, elen = struct.unpack_from("<HH", base, lo + 26)
        data_at = lo + 30 + nlen + elen
        damaged = bytearray(base)
        for k in range(64):  # a run of bytes in the middle of the deflate stream
            damaged[data_at + csize // 2 + k] ^= 0x5A
        # (what, bytes, words, whether Python's zipfile fails too). A member that ends before
        # its declared size is read by zipfile without complaint (it stops at the stream's
        # end and the CRC matches); wheelgate has always called that damage, on both paths.
        cases = [("a wrong CRC", patch(bytearray(base), lo, co, crc=crc ^ 1),
                  "corrupt member data at byte %d: CRC error" % size, True),
                 ("declared longer", patch(bytearray(base), lo, co, usize=size + 4096),
                  "ends after %d of the %d bytes" % (size, size + 4096), False),
                 ("declared shorter", patch(bytearray(base), lo, co, usize=size - 4096),
                  "longer than the %d bytes" % (size - 4096), True),
                 ("a damaged stream", damaged, "", True)]  # whichever check sees it first
        for what, b, text, pip_fails in cases:
            assert zipfile_reads(b) != pip_fails, (size, what, "zipfile disagrees")
            rc, out, err = check(b)
            assert rc == 1, (size, what, rc, out[-500:], err[-500:])
            found = [f for f in json.loads(out)["inputs"][0]["findings"]
                     if f["rule"] == "WG-WHL-002"]
            assert len(found) == 1 and found[0]["severity"] == "error", (size, what, found)
            msg = found[0]["message"]
            assert MEMBER in msg and text in msg, (size, what, msg)


if __name__ == "__main__":
    sys.exit(main())  # main() returns 1 on a failure: without the exit, ctest saw a pass

#!/usr/bin/env python3
"""bench_floor (bench/floor.c, the floor of bench/speed.sh) is held to Python's zipfile: on
wheels made by bench/make-wheel.py (deflated, stored, tiny members) it reports every member
with the CRC-32 and SHA-256 of its inflated bytes, with 1 and 2 threads, inflating whole with
libdeflate or streaming through ISA-L (-s), and exits 0; a byte
flipped in a member's data is reported, naming the member, with exit 1 (a CRC mismatch for a
stored member), as zipfile finds it too.

Usage: test_floor.py BENCH_FLOOR MAKE_WHEEL SMALL_SO
"""
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main, test  # noqa: E402

FLOOR, MAKE, SO = (os.path.abspath(a) for a in sys.argv[1:4])
NAME = "nvidia_bench-13.0.0-py3-none-manylinux_2_27_x86_64.whl"
MEMBER = "nvidia/cu13/lib/" + os.path.basename(SO)
TMP = tempfile.mkdtemp(prefix="wg-floor-")


def make(sub, *args):
    d = os.path.join(TMP, sub)
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, NAME)
    subprocess.run([sys.executable, MAKE] + list(args[:-1]) + [out] + list(args[-1:]),
                   check=True)
    return out


def expected(wheel):
    with zipfile.ZipFile(wheel) as z:
        rows = []
        for i in z.infolist():
            data = z.read(i)
            rows.append("%s %08x %s" % (i.filename, zlib.crc32(data), hashlib.sha256(data).hexdigest()))
        return rows, sum(i.file_size for i in z.infolist()), sum(i.compress_size for i in z.infolist())


def floor(wheel, *args):
    return subprocess.run([FLOOR] + list(args) + [wheel], capture_output=True, text=True,
                          timeout=120)


MODES = ((), ("-s",))  # libdeflate whole, ISA-L streamed
SAYS = {(): "; libdeflate whole, peak RSS ", ("-s",): "; ISA-L streamed, peak RSS "}


def agrees(wheel):
    rows, size, comp = expected(wheel)
    for mode in MODES:
        for j in ("1", "2"):
            p = floor(wheel, *mode, "-j", j, "-v")
            assert p.returncode == 0, (mode, j, p.returncode, p.stderr)
            lines = p.stdout.splitlines()
            assert lines[:-1] == rows, (mode, j, lines[:5], rows[:5])
            assert lines[-1].startswith("members %d, %d bytes inflated from %d, %s thread"
                                        % (len(rows), size, comp, j)), lines[-1]
            assert " 0 bad" + SAYS[mode] in lines[-1], lines[-1]


def data_offset(wheel, member):
    """Where member's data starts: its local header, read with zipfile's own layout."""
    with zipfile.ZipFile(wheel) as z:
        info = z.getinfo(member)
    with open(wheel, "rb") as f:
        f.seek(info.header_offset)
        fh = struct.unpack(zipfile.structFileHeader, f.read(zipfile.sizeFileHeader))
    return (info.header_offset + zipfile.sizeFileHeader + fh[zipfile._FH_FILENAME_LENGTH]
            + fh[zipfile._FH_EXTRA_FIELD_LENGTH]), info.compress_size


def flipped(wheel, member):
    """A copy of wheel with one byte in the middle of member's data flipped."""
    off, n = data_offset(wheel, member)
    bad = os.path.join(os.path.dirname(wheel), "bad-" + NAME)
    shutil.copyfile(wheel, bad)
    with open(bad, "r+b") as f:
        f.seek(off + n // 2)
        b = f.read(1)
        f.seek(off + n // 2)
        f.write(bytes([b[0] ^ 0x5a]))
    with zipfile.ZipFile(bad) as z:  # pip's reader finds it too (a CRC or a deflate error)
        try:
            z.read(member)
            raise AssertionError("zipfile read the flipped member without complaint")
        except (zipfile.BadZipFile, zlib.error):
            pass
    return bad


@test
def deflated_agrees_with_zipfile():
    agrees(make("deflated", SO))


@test
def stored_agrees_with_zipfile():
    agrees(make("stored", "--stored", SO))


@test
def tiny_members_agree_with_zipfile():
    out = os.path.join(TMP, "tiny", NAME)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run([sys.executable, MAKE, "--tiny", "300", out], check=True)
    agrees(out)


@test
def stored_flip_is_a_crc_mismatch():
    bad = flipped(make("stored2", "--stored", SO), MEMBER)
    for mode in MODES:
        for j in ("1", "2"):
            p = floor(bad, *mode, "-j", j)
            assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
            assert MEMBER + ": CRC-32 " in p.stderr and "the directory says" in p.stderr, p.stderr
            assert " 1 bad" + SAYS[mode] in p.stdout, p.stdout


@test
def deflated_flip_is_reported():
    bad = flipped(make("deflated2", SO), MEMBER)
    for mode in MODES:
        p = floor(bad, *mode, "-j", "2")
        assert p.returncode == 1, (mode, p.returncode, p.stdout, p.stderr)
        assert (MEMBER + ": CRC-32 ") in p.stderr or (MEMBER + ": does not inflate") in p.stderr, p.stderr


@test
def not_a_wheel_is_an_error():
    junk = os.path.join(TMP, "junk.whl")
    with open(junk, "wb") as f:
        f.write(b"not a zip archive\n" * 10)
    p = floor(junk)
    assert p.returncode == 2 and "junk.whl" in p.stderr and "not a zip" in p.stderr, p.stderr
    p = floor(os.path.join(TMP, "absent.whl"))
    assert p.returncode == 2 and "absent.whl" in p.stderr, p.stderr


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

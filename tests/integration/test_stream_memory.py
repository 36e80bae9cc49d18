#!/usr/bin/env python3
"""Memory that does not follow the member (issue 30, point 2): a wheel holding one 1 GiB shared
object (bench/make-wheel.py --huge-elf, made at test time: 10 MB deflated) is read by `check`,
`check -`, `inspect`, `scan`, an installed copy of it and a `serve` request, each within 100 MB of
peak RSS (the process's, from wait4, or the server's VmHWM), and the facts are the same as when
the member is read whole (`--limit max_member_held=2G`, the way before issue 30, which this
test also measures: over 1 GB, so the measurement can tell the two apart). Memory is judged in
the plain build only: AddressSanitizer's shadow and quarantine are not wheelgate's.

Usage: test_stream_memory.py WHEELGATE SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request
import zipfile

from harness import main, test  # noqa: E402
from serve_util import Server, sanitized  # noqa: E402

WG, SRC = [os.path.abspath(a) for a in sys.argv[1:3]]
SANITIZED = sanitized(WG)
LIMIT_MB = 100
NAME = "nvidia_bench-13.0.0-py3-none-manylinux_2_27_x86_64.whl"
TMP = tempfile.TemporaryDirectory()
WHEEL = os.path.join(TMP.name, NAME)


def huge_wheel():
    if not os.path.exists(WHEEL):
        subprocess.run([sys.executable, os.path.join(SRC, "bench", "make-wheel.py"),
                        "--huge-elf", "1024", WHEEL], check=True)
    return WHEEL


def peak(args, stdin=None):
    """(exit code, stdout, stderr, peak RSS in MB) of wheelgate args, this child's alone."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([WG] + args, stdin=stdin, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        out.seek(0)
        err.seek(0)
        return (os.waitstatus_to_exitcode(status), out.read(), err.read().decode(errors="replace"),
                ru.ru_maxrss * 1024 / 1e6)


def bounded(what, rss):
    print("  %s: peak RSS %.1f MB" % (what, rss))
    if not SANITIZED:
        assert rss <= LIMIT_MB, "%s: peak RSS %.1f MB, over %d MB" % (what, rss, LIMIT_MB)


@test
def check_and_inspect_stream_in_constant_memory():
    w = huge_wheel()
    rc, out, err, rss = peak(["check", "--no-config", w])
    assert rc == 0, (rc, out[-2000:], err)
    bounded("check", rss)
    rc, streamed, err, rss = peak(["inspect", "--json", "--read-stats", w])
    assert rc == 0, (rc, err)
    bounded("inspect", rss)
    # The object was read sparsely: its 1 GiB never held; the stats line says how much was.
    assert "1 members streamed" in err and "1 ELF objects read sparsely" in err, err
    rc, whole, err2, rss_whole = peak(["inspect", "--json", "--limit", "max_member_held=2G", w])
    assert rc == 0, (rc, err2)
    print("  inspect, the member read whole: peak RSS %.1f MB" % rss_whole)
    assert rss_whole > 1000, "reading 1 GiB whole should hold it: %.1f MB" % rss_whole
    assert streamed == whole, "the facts differ between a streamed and a whole read"
    doc = json.loads(streamed)
    objs = [o for i in doc["inputs"] for o in i.get("objects", [])]
    assert len(objs) == 1 and objs[0]["size"] > (1 << 30), objs


@test
def stdin_and_scan_stream_too():
    w = huge_wheel()
    with open(w, "rb") as f:
        rc, out, err, rss = peak(["check", "--no-config", "--stdin-filename", NAME, "-"], stdin=f)
    assert rc == 0, (rc, out[-2000:], err)
    bounded("check -", rss)
    d = os.path.join(TMP.name, "scan-in")
    os.makedirs(d, exist_ok=True)
    link = os.path.join(d, NAME)
    if not os.path.exists(link):
        os.link(w, link)  # scan does not follow symbolic links
    rc, out, err, rss = peak(["scan", "--no-config", d])
    assert rc in (0, 1), (rc, out[-2000:], err)
    recs = [json.loads(l) for l in out.decode().splitlines()]
    assert len(recs) == 1 and recs[0]["targets"][0]["verdict"] == "pass", (recs, err)
    bounded("scan", rss)


@test
def an_installed_copy_streams_too():
    w = huge_wheel()
    site = os.path.join(TMP.name, "site")
    if not os.path.isdir(site):
        with zipfile.ZipFile(w) as z:
            z.extractall(site)
    di = os.path.join(site, "nvidia_bench-13.0.0.dist-info")
    rc, out, err, rss = peak(["inspect", "--json", "--read-stats", di])
    assert rc == 0, (rc, err)
    assert "1 ELF objects read sparsely" in err, err
    bounded("inspect of the installed copy", rss)


@test
def a_serve_request_streams_too():
    w = huge_wheel()
    with Server(WG) as s:
        with open(w, "rb") as f:
            body = f.read()
        req = urllib.request.Request(s.url("/v1/check?filename=" + NAME), data=body, method="POST")
        with urllib.request.urlopen(req, timeout=120) as r:
            doc = json.loads(r.read())
        assert r.status == 200, r.status
        with open("/proc/%d/status" % s.proc.pid) as f:
            hwm = [int(l.split()[1]) for l in f if l.startswith("VmHWM:")][0]
        s.stop()
    verdicts = json.dumps(doc)
    assert '"pass"' in verdicts, verdicts[:2000]
    bounded("serve (the whole process, the 10 MB body included)", hwm * 1024 / 1e6)


MAKE_WALKERS = """
import struct, sys, zipfile
size = 64 << 20
b = bytearray(size)
b[0:7] = b"\\x7fELF\\x02\\x01\\x01"
struct.pack_into("<HHI", b, 16, 3, 62, 1)
for c in range(4096, 8 << 20, 80):
    fat = (size - c - 24) // 8 * 8
    struct.pack_into("<IHHQ", b, c, 0xBA55ED50, 1, 16, fat)
    struct.pack_into("<HHIQ", b, c + 16, 2, 0x101, 64, fat - 72)
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("hostile_walkers/libx.so", bytes(b))
    z.writestr("hostile_walkers-1.0.dist-info/METADATA",
               "Metadata-Version: 2.1\\nName: hostile_walkers\\nVersion: 1.0\\n")
"""


@test
def many_containers_at_once_are_not_all_walked():
    """A crafted object with 104,807 fatbin containers whose walks are all open at once (each
    one's first entry points megabytes ahead): every block used to visit every walk. Past
    MAX_WALKERS (4096) a container is not walked as it passes; the readers miss its pages and a
    pass again fetches them. The facts are the whole read's."""
    w = os.path.join(TMP.name, "hostile_walkers-1.0-py3-none-linux_x86_64.whl")
    # Made by another process: a child's ru_maxrss starts from what the forking process held
    # (Linux keeps the high-water mark across exec), and this one would have held 64 MiB.
    subprocess.run([sys.executable, "-c", MAKE_WALKERS, w], check=True)
    rc, streamed, err, rss = peak(["inspect", "--json", "--read-stats", "--limit",
                                   "max_member_held=0", w])
    rc2, whole, _, _ = peak(["inspect", "--json", "--limit", "max_member_held=1G", w])
    assert (rc, streamed) == (rc2, whole), "the facts differ between a streamed and a whole read"
    assert "1 ELF objects read sparsely" in err and "0 passes again" not in err, err
    bounded("inspect of 104,807 open containers", rss)


if __name__ == "__main__":
    main()

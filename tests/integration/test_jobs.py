#!/usr/bin/env python3
"""Threads change nothing but time: `check` and `inspect` print the same bytes, in the same
order, with the same exit status, for -j 1, 2, 3 and 8, on inputs that exercise what the
threads share out: a wheel of many members read largest first (ELF objects, stored and
deflated; metadata; Python sources; a member with a bad CRC, one cut short, one with a broken
deflate stream; a file named like a library that is not one), several inputs at once (an
installed distribution among them, whose files are streamed, not mapped), a
directory of wheels (its wheels right after it), the corpus, and the Python budget's edge (an
ELF object with a Python name before 64 x 1 MiB of Python: one thread keeps all 64, so must
any number).

Usage: test_jobs.py WHEELGATE
"""
import base64
import hashlib
import io
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main, test  # noqa: E402

WG = os.path.abspath(sys.argv[1])
LIB = os.path.join(os.path.dirname(WG), "libwheelgate.so")
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared",
                      "corpus", "wheels")
JOBS = ("1", "2", "3", "8")


def record_line(name, data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, h, len(data))


def make_wheel(path, name, files, stored=()):
    """files: (member, bytes) in order; RECORD lists each with its true hash."""
    rec = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            z.writestr(zipfile.ZipInfo(n, (2026, 1, 1, 0, 0, 0)), d,
                       compress_type=zipfile.ZIP_STORED if n in stored else zipfile.ZIP_DEFLATED)
            rec.append(record_line(n, d))
        di = "%s-1.0.dist-info" % name
        z.writestr(di + "/RECORD", "\n".join(rec + [di + "/RECORD,,"]) + "\n")


def dist(name, tag="cp312-cp312-linux_x86_64", purelib="false"):
    di = "%s-1.0.dist-info" % name
    return [(di + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name).encode()),
            (di + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: %s\nTag: %s\n"
                             % (purelib, tag)).encode())]


def damage(path, member, how):
    """Changes member's stored bytes in place: 'crc' flips a byte of a stored member's data,
    'stream' breaks a deflated member's first block header."""
    b = bytearray(open(path, "rb").read())
    with zipfile.ZipFile(io.BytesIO(bytes(b))) as z:
        info = z.getinfo(member)
    off = info.header_offset
    n, m = struct.unpack("<HH", b[off + 26:off + 30])
    data = off + 30 + n + m
    if how == "crc":
        b[data + info.compress_size // 2] ^= 0x55
    else:
        b[data] |= 0x06  # BTYPE 11: reserved, an invalid deflate block
    open(path, "wb").write(b)


def mixed_wheel(tmp):
    lib = open(LIB, "rb").read()
    rnd = random.Random(14)
    noise = bytes(rnd.getrandbits(8) for _ in range(300_000))
    files = dist("mixed")
    files += [("mixed/libone.so", lib), ("mixed/libtwo.so", lib[: len(lib) // 2] + noise),
              ("mixed/_ext.cpython-312-x86_64-linux-gnu.so", lib),
              ("mixed/stored_copy.so", lib), ("mixed/notelf.so", b"not an ELF object\n" * 100),
              ("mixed/bad_crc.bin", noise), ("mixed/bad_stream.bin", noise[:100_000] * 3),
              ("mixed/__init__.py", b"from . import _ext\nimport mixed.missing_mod\n"),
              ("mixed/top.txt", b"x" * 70_000)]
    files += [("mixed/sub%02d/__init__.py" % i, ("import os\nV = %d\n" % i).encode())
              for i in range(40)]
    files += [("mixed/data/d%03d.txt" % i, (b"%d\n" % i) * (i * 50)) for i in range(300)]
    path = os.path.join(tmp, "mixed-1.0-cp312-cp312-linux_x86_64.whl")
    make_wheel(path, "mixed", files, stored=("mixed/stored_copy.so", "mixed/bad_crc.bin"))
    damage(path, "mixed/bad_crc.bin", "crc")
    damage(path, "mixed/bad_stream.bin", "stream")
    return path


def budget_wheel(tmp, n):
    """An ELF object named like Python (it is an ELF object: no Python budget is spent on it),
    then n Python files of 1 MiB each (one line each): 64 fill the 64 MiB budget exactly."""
    elf = open(LIB, "rb").read()[: 1 << 20]
    files = dist("budget", "py3-none-any", "true") + [("budget/aaa_elf.py", elf)]
    files += [("budget/m%02d.py" % i, b"#" + b"x" * ((1 << 20) - 2) + b"\n")
              for i in range(n)]
    path = os.path.join(tmp, "budget-1.0-py3-none-any.whl")
    make_wheel(path, "budget", files)
    return path


def run(*args):
    p = subprocess.run([WG, *args], capture_output=True, env=dict(os.environ, NO_COLOR="1"))
    return p.returncode, p.stdout, p.stderr


def same_for_every_j(*args):
    """Runs WG -j N args for each N; asserts identical stdout and status; returns them."""
    first = None
    for j in JOBS:
        rc, out, err = run(args[0], "-j", j, *args[1:])
        assert rc in (0, 1), (j, rc, err.decode(errors="replace")[-2000:])
        if first is None:
            first = (rc, out, j)
        else:
            assert (rc, out) == first[:2], ("-j %s differs from -j %s" % (j, first[2]),
                                            rc, first[0], diff(first[1], out))
    return first[0], first[1]


def diff(a, b):
    al, bl = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return "line %d: %r != %r" % (i + 1, x[:200], y[:200])
    return "lengths %d != %d" % (len(al), len(bl))


@test
def a_wheel_of_many_members_reads_the_same_with_any_number_of_threads():
    with tempfile.TemporaryDirectory() as tmp:
        w = mixed_wheel(tmp)
        rc, out = same_for_every_j("check", "--no-config", "--format", "json", w)
        text = out.decode()
        # The damage is seen, whatever the threads did: each member named in its own finding.
        for member in ("mixed/bad_crc.bin", "mixed/bad_stream.bin", "mixed/notelf.so"):
            assert member in text, member
        assert "CRC error" in text and "not a valid deflate stream" in text, text[:3000]
        same_for_every_j("check", "--no-config", w)
        rc, out = same_for_every_j("inspect", "--json", "--members", w)
        assert out.count(b'"sha256"') >= 300, "every member hashed"
        same_for_every_j("inspect", "--members", "--symbols=all", w)


@test
def the_python_budget_is_spent_as_one_thread_would():
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = same_for_every_j("check", "--no-config", "--format", "json",
                                   budget_wheel(tmp, 64))
        # aaa_elf.py is an ELF object, so all 64 MiB of Python fit the 64 MiB budget: the
        # import checks saw every file (no WG-WHL-003 "saw part of the code")...
        assert b"WG-WHL-003" not in out, out[:2000]
        # ...while one more file is past it, and says so (the check can fail).
        rc, out = same_for_every_j("check", "--no-config", "--format", "json",
                                   budget_wheel(tmp, 65))
        assert b"WG-WHL-003" in out and b"budget/m64.py" in out, out[:2000]


@test
def a_large_member_is_read_alike_while_another_thread_faults_its_buffer_in():
    """An ELF object over 64 MiB, deflated: its buffer is made before the threads start and a
    second thread faults its upper part in while the first inflates into it; the bytes hashed
    are the member's (RECORD agrees, inspect's sha256 is Python's), for every -j."""
    with tempfile.TemporaryDirectory() as tmp:
        big = open(LIB, "rb").read()
        big += os.urandom((80 << 20) - len(big))  # incompressible: under the bomb ratio
        small = open(LIB, "rb").read()
        files = dist("bigone") + [("bigone/libbig.so", big), ("bigone/libsmall.so", small),
                                  ("bigone/data.bin", os.urandom(3 << 20))]
        w = os.path.join(tmp, "bigone-1.0-cp312-cp312-linux_x86_64.whl")
        with zipfile.ZipFile(w, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            rec = []
            for n, d in files:
                z.writestr(n, d)
                rec.append(record_line(n, d))
            z.writestr("bigone-1.0.dist-info/RECORD",
                       "\n".join(rec + ["bigone-1.0.dist-info/RECORD,,"]) + "\n")
        rc, out = same_for_every_j("inspect", "--json", "--members", w)
        want = base64.urlsafe_b64encode(hashlib.sha256(big).digest()).rstrip(b"=")
        assert want in out, "the large member's sha256 is its bytes'"
        rc, out = same_for_every_j("check", "--no-config", "--format", "json", w)
        # RECORD's hashes agree (WG-REC-*), and nothing was unreadable (WG-WHL-002).
        assert b"WG-REC-" not in out and b"WG-WHL-002" not in out, out[:3000]


@test
def several_inputs_and_a_directory_keep_their_order():
    with tempfile.TemporaryDirectory() as tmp:
        w = mixed_wheel(tmp)
        d = os.path.join(tmp, "dir")
        os.mkdir(d)
        for i in range(3):
            shutil.copy(w, os.path.join(d, "mixed%d-1.0-cp312-cp312-linux_x86_64.whl" % i))
        site = os.path.join(tmp, "site")
        with zipfile.ZipFile(w) as z:  # an installed distribution: its files are streamed
            for n in z.namelist():
                if "bad_" not in n:
                    z.extract(n, site)
        inputs = [w, d, LIB, os.path.join(tmp, "missing.whl"), w,
                  os.path.join(site, "mixed-1.0.dist-info")]
        if os.path.isdir(CORPUS):
            inputs += sorted(os.path.join(CORPUS, n) for n in os.listdir(CORPUS))
        # A missing input is exit 2 whatever -j is; the rest of the report is the same.
        outs = set()
        for j in JOBS:
            p = subprocess.run([WG, "check", "--no-config", "--format", "json", "-j", j, *inputs],
                               capture_output=True)
            assert p.returncode == 2, p.stderr[-500:]
            outs.add(p.stdout)
        assert len(outs) == 1, "the report differs between -j values"
        doc = outs.pop().decode()
        order = [doc.index(os.path.basename(x) if x != d else "mixed0-1.0") for x in inputs[:3]]
        assert order == sorted(order), order


@test
def bad_jobs_values_are_refused():
    for bad in ("x", "-1", "257", ""):
        rc, out, err = run("check", "-j", bad, LIB)
        assert rc == 2 and b"-j takes a number of threads" in err, (bad, rc, err)


if __name__ == "__main__":
    sys.exit(main())

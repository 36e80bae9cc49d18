#!/usr/bin/env python3
"""Zip structure (issue 25, point 2), on wheels bench/hostile_gen.py writes byte by byte:

- members that share bytes are refused as a zip bomb, from the directory, before anything is
  inflated: Fifield's quoted overlap (256 members, each inflating one 64 MiB deflate stream,
  16 GiB from 548 KB; it took minutes before) in under a second and a little memory, through
  a file and through stdin, with an error naming the file and two members;
- a local file header that disagrees with the central directory (name, method, sizes, the
  encryption and UTF-8 flags, a data descriptor's values) is an error naming the member and
  what disagrees, while Python's zipfile (pip's reader, which follows the central directory)
  reads the member: an installer that streams the local headers would install another file;
  a right data descriptor is no error;
- WG-WHL-004: symbolic-link members (to /etc/passwd, to ../../..), names equal but for case,
  '.' and empty path components; a NUL in a name is WG-WHL-001's; names are escaped;
- no finding of WG-WHL-004, and no new refusal, on the real corpus, the fixtures and the pip
  and pypiserver wheels of ../shared.

Usage: test_zipstruct.py WHEELGATE FIXTURES CORPUS
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Missing, main, need_path, test  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import hostile_gen  # noqa: E402

WG = os.path.abspath(sys.argv[1])
FIX = os.path.abspath(sys.argv[2])
CORPUS = os.path.abspath(sys.argv[3])
TMP = tempfile.mkdtemp(prefix="wg-zipstruct-")
CASES = {}


def case(name):
    if not CASES:
        for p in hostile_gen.zipstruct(os.path.join(TMP, "cases")):
            CASES[os.path.basename(p).split("-")[0][len("zs_"):]] = p
    return CASES[name]


def run(args, stdin=None):
    """wheelgate ARGS: (exit code, stdout, stderr, seconds, its own peak RSS in MiB)."""
    with tempfile.TemporaryFile() as o, tempfile.TemporaryFile() as e:
        t = time.monotonic()
        p = subprocess.Popen([WG] + args, stdin=stdin or subprocess.DEVNULL, stdout=o, stderr=e)
        _, status, ru = os.wait4(p.pid, 0)
        secs = time.monotonic() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        o.seek(0)
        e.seek(0)
        return (p.returncode, o.read().decode("utf-8", "replace"),
                e.read().decode("utf-8", "replace"), secs, ru.ru_maxrss / 1024)


def check(path, *extra):
    rc, out, err, _, _ = run(["check", "--format", "json"] + list(extra) + [path])
    doc = json.loads(out)
    assert len(doc["inputs"]) == 1, out
    return rc, doc["inputs"][0], err


def findings(inp, rule):
    return [f for f in inp["findings"] if f["rule"] == rule]


# ---- overlapping members -----------------------------------------------------------------

@test
def overlap_bomb_refused_fast():
    bomb = os.path.join(TMP, "bomb-1.0-py3-none-any.whl")
    hostile_gen.overlap(bomb)
    size = os.path.getsize(bomb)
    assert size < 1 << 20, size
    # wheelgate first (a child forked later would count this process's inflated bytes in
    # its peak RSS): refused from the directory, nothing inflated, so far less memory than
    # one member's 64 MiB and well under a second.
    for how in ("file", "stdin"):
        if how == "file":
            rc, out, err, secs, rss = run(["check", "--format", "json", bomb])
        else:
            with open(bomb, "rb") as f:
                rc, out, err, secs, rss = run(["check", "--format", "json", "--stdin-filename",
                                               os.path.basename(bomb), "-"], stdin=f)
        inp = json.loads(out)["inputs"][0]
        msg = inp["error"] or ""
        assert rc == 2, (how, rc, out[-2000:], err[-2000:])
        assert "overlap" in msg and "bomb/00000.bin" in msg and "bomb/00001.bin" in msg, msg
        assert "zip bomb" in msg, msg
        assert secs < 1.0, (how, secs)
        assert rss < 48, (how, rss)
        print("  %s: refused in %.3f s, peak RSS %.1f MiB" % (how, secs, rss))
    # It is a real bomb: every directory entry is right (zipfile opens it: 256 members of
    # 64 MiB and more), and the last member inflates to its declared size and CRC. A Python
    # with the overlap check of gh-109858 refuses member 0; one without inflates it whole.
    z = zipfile.ZipFile(bomb)
    infos = z.infolist()
    assert len(infos) == 256 and sum(i.file_size for i in infos) > 16 << 30, len(infos)
    assert len(z.read(infos[-1])) == infos[-1].file_size
    try:
        with z.open(infos[0]) as f:
            got = 0
            while True:
                b = f.read(1 << 24)
                if not b:
                    break
                got += len(b)
        assert got == infos[0].file_size, got
    except zipfile.BadZipFile as e:
        assert "Overlapped entries" in str(e), e


@test
def overlap_small_names_both_members():
    rc, inp, _ = check(case("overlap"))
    msg = inp["error"] or ""
    assert rc == 2 and "zs_overlap/a.bin" in msg and "zs_overlap/b.py" in msg, (rc, msg)
    assert "bytes 46 to 97" in msg, msg  # b.py's header and data, inside a.bin's data
    # what pip's reader makes of it: b.py reads (its bytes are a.bin's)
    z = zipfile.ZipFile(case("overlap"))
    assert z.read("zs_overlap/b.py") == b"x = 1\n"
    rc, out, err, _, _ = run(["inspect", "--json", case("overlap")])
    assert rc != 0 and "overlap" in out + err, out + err


# ---- local headers against the central directory -----------------------------------------

LH = {
    "lh_name": ("zs_lh_name/a.py", "names the member differently"),
    "lh_size": ("zs_lh_size/a.py", "the local file header says CRC"),
    "lh_method": ("zs_lh_method/a.py", "compression method 8, the central directory 0"),
    "lh_encrypted": ("zs_lh_encrypted/a.py", "says the member is encrypted"),
    "lh_utf8": ("zs_lh_utf8/\u00e9.py", "CP437 in the local file header and UTF-8"),
    "lh_dd": ("zs_lh_dd/a.py", "the data descriptor says"),
}


@test
def local_header_disagreements_are_errors():
    for name, (member, words) in LH.items():
        rc, inp, _ = check(case(name))
        msg = inp["error"] or ""
        assert rc == 2 and member in msg and words in msg, (name, rc, msg)
    # The differential is real: Python's zipfile (pip) reads these members by the central
    # directory, so pip installs them, while a reader of the local headers sees another size,
    # method, encryption or descriptor.
    for name in ("lh_size", "lh_method", "lh_encrypted", "lh_dd"):
        z = zipfile.ZipFile(case(name))
        member = LH[name][0]
        assert z.read(member) == z.read(member) and z.getinfo(member).file_size > 0, name


@test
def empty_stored_members_are_fine():
    z = zipfile.ZipFile(case("emptymembers"))
    assert [i.compress_size for i in z.infolist()[:2]] == [0, 0]
    rc, inp, _ = check(case("emptymembers"))
    assert rc == 0 and inp["error"] is None and not inp["findings"], (rc, inp)


@test
def encrypted_in_both_headers_is_not_a_disagreement():
    # libzip opens it only with a password: the layout check still finds its local header
    rc, inp, _ = check(case("encrypted"))
    f = findings(inp, "WG-WHL-002")
    assert rc == 1 and inp["error"] is None, (rc, inp)
    assert len(f) == 1 and "zs_encrypted/a.py is encrypted" in f[0]["message"], inp


@test
def data_descriptor_that_agrees_is_fine():
    z = zipfile.ZipFile(case("dd"))
    assert z.getinfo("zs_dd/a.py").flag_bits & 8
    rc, inp, _ = check(case("dd"))
    assert rc == 0 and inp["error"] is None and not inp["findings"], (rc, inp)


# ---- WG-WHL-004 and the NUL -----------------------------------------------------------------

@test
def symlinks_are_errors():
    for name, member in (("symlink_abs", "zs_symlink_abs/passwd"),
                         ("symlink_up", "zs_symlink_up/up")):
        info = zipfile.ZipFile(case(name)).getinfo(member)
        assert (info.external_attr >> 16) & 0o170000 == 0o120000  # S_IFLNK, as made
        for profile in ("publish", "install"):
            rc, inp, _ = check(case(name), "--profile", profile)
            f = findings(inp, "WG-WHL-004")
            assert rc == 1 and len(f) == 1 and f[0]["severity"] == "error", (name, inp)
            assert f[0]["member"] == member and "symbolic link" in f[0]["message"], f


@test
def ambiguous_names():
    for name, member, words in (
            ("case", "zs_case/foo.py", "case-insensitive"),
            ("dot", "zs_dot/./a.py", "installs it as zs_dot/a.py"),
            ("dotlead", "./zs_dotlead/a.py", "installs it as zs_dotlead/a.py"),
            ("empty", "zs_empty//a.py", "installs it as zs_empty/a.py")):
        rc, inp, _ = check(case(name), "--profile", "publish")
        f = findings(inp, "WG-WHL-004")
        assert rc == 1 and len(f) == 1 and f[0]["severity"] == "error", (name, inp)
        assert f[0]["member"] == member and words in f[0]["message"], (name, f)
        # pip on Linux installs them: a warning for an install, and the wheel passes
        rc, inp, _ = check(case(name), "--profile", "install")
        f = findings(inp, "WG-WHL-004")
        assert rc == 0 and len(f) == 1 and f[0]["severity"] == "warning", (name, inp)


@test
def nul_in_name_is_unsafe():
    rc, inp, _ = check(case("nul"))
    f = findings(inp, "WG-WHL-001")
    assert rc == 1 and len(f) == 1 and "NUL byte" in f[0]["message"], inp
    # pip's reader ends the name at the NUL; the archive holds more
    assert zipfile.ZipFile(case("nul")).namelist()[0] == "zs_nul/a.py"


@test
def names_are_escaped():
    rlo = "\u202e"
    path = os.path.join(TMP, "zs_esc-1.0-py3-none-any.whl")
    hostile_gen._raw_wheel(path, "zs_esc", [
        hostile_gen._member("zs_esc/%sFoo.py" % rlo, b"a = 1\n"),
        hostile_gen._member("zs_esc/%sfoo.py" % rlo, b"b = 1\n"),
        hostile_gen._member("zs_esc/%s/./x.py" % rlo, b"c = 1\n")])
    rc, out, err, _, _ = run(["check", path])
    assert rc == 1 and "WG-WHL-004" in out, out
    assert rlo not in out + err and "\\u202e" in out, out
    # and in the errors that refuse an archive
    path = os.path.join(TMP, "zs_esco-1.0-py3-none-any.whl")
    py = b"x = 1\n"
    inner = hostile_gen._member("zs_esco/%sb.py" % rlo, py, method=0)
    inner["inside"] = (0, 0)
    hostile_gen._raw_wheel(path, "zs_esco", [hostile_gen._member(
        "zs_esco/%sa.bin" % rlo, hostile_gen._local(inner["name"], 0, inner["crc"], len(py),
                                                   len(py)) + py, method=0), inner])
    rc, out, err, _, _ = run(["check", path])
    assert rc == 2 and "zs_esco/\\u202ea.bin and zs_esco/\\u202eb.py overlap" in out + err, err
    assert rlo not in out + err, out + err


@test
def self_test_and_listing_cover_the_rule():
    rc, out, err, _, _ = run(["check", "--list-rules"])
    line = [x for x in out.splitlines() if x.startswith("WG-WHL-004")]
    assert rc == 0 and line and "unsafe-name" in line[0], out
    rc, out, err, _, _ = run(["check", "--self-test"])
    assert rc == 0 and "every example agrees" in out + err, out + err


# ---- no false findings on real wheels ------------------------------------------------------

def real_wheels():
    need_path(CORPUS, "the corpus")
    shared = os.path.dirname(CORPUS)
    found = []
    for top in (os.path.join(CORPUS, "wheels"), FIX, os.path.join(shared, "tools")):
        for d, _, files in os.walk(top):
            found += [os.path.join(d, f) for f in files if f.endswith(".whl")]
    return sorted(found)


# Fixtures that lie on purpose, and must be refused: gen-wheels.py's cdlies, whose central
# directory claims 777 bytes more than its local header and data hold (libzip refused it
# before, without naming the member; zipfile reads the 6000 bytes, as its CRC is right).
LIES = {"cdlies-1.0-py3-none-any.whl": "base/__init__.py: the local file header says CRC"}


@test
def no_false_findings_on_real_wheels():
    wheels = real_wheels()
    if len(wheels) < 20:
        raise Missing("only %d wheels in the corpus, fixtures and tools" % len(wheels))
    new = 0
    refused = []
    lies = 0
    for w in wheels:
        rc, inp, _ = check(w)
        new += len(findings(inp, "WG-WHL-004"))
        msg = inp["error"] or ""
        if os.path.basename(w) in LIES:
            assert rc == 2 and LIES[os.path.basename(w)] in msg, (w, msg)
            lies += 1
        elif any(x in msg for x in ("overlap", "local file header", "data descriptor")):
            refused.append((w, msg))
    print("  %d real wheels: %d WG-WHL-004 findings, %d refused by the layout checks (and %d "
          "fixtures that lie on purpose, refused)" % (len(wheels), new, len(refused), lies))
    assert new == 0 and not refused, refused[:5]


if __name__ == "__main__":
    rc = main()
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

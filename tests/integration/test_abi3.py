#!/usr/bin/env python3
"""abi3 wheels against the stable ABI (WG-ABI3-001): the data of rules/python/stable_abi.yaml
against the running interpreter's exports, the verdicts on the honest and lying fixtures of
tests/fixtures/gen-abi3.py in both profiles, and each verdict against reality: the real
interpreter (Debian's python3) loading the extension with RTLD_NOW.

Usage: test_abi3.py WHEELGATE FIXTURES REPO_ROOT [SYSTEM_PYTHON]
"""
import json
import os
import subprocess
import sys

from harness import Missing, main, test  # noqa: E402

WG, FIX, ROOT = [os.path.abspath(a) for a in sys.argv[1:4]]
SYS_PY = sys.argv[4] if len(sys.argv) > 4 else ""
A3 = os.path.join(FIX, "abi3")
SO = os.path.join(A3, "so")
WH = os.path.join(A3, "wheels")
DATA = os.path.join(ROOT, "rules", "python", "stable_abi.yaml")


def check(*args):
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", *args],
                       capture_output=True, timeout=120)
    assert p.returncode in (0, 1), (p.returncode, p.stderr.decode())
    doc = json.loads(p.stdout)
    return [[f for f in i["findings"] if f["rule"] == "WG-ABI3-001"] for i in doc["inputs"]]


def reason(f):
    m = f["message"]
    for key, text in (("too-new", "entered the stable ABI only in Python"),
                      ("not-on-linux", "the stable ABI exports only with"),
                      ("private", "a private CPython symbol"),
                      ("not-limited", "not of the limited API")):
        if text in m:
            return key
    raise AssertionError("no reason in " + m)


def need_fixtures():
    if not os.path.exists(os.path.join(A3, ".stamp")):
        raise Missing("abi3 fixtures not built at " + A3)


def real_python():
    """(version, exports probe) of the system interpreter that loads extensions."""
    if not SYS_PY or not os.path.exists(SYS_PY):
        raise Missing("no system python3 to load the extensions with")
    out = subprocess.run([SYS_PY, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, check=True, text=True).stdout.strip()
    return out


def dlopen(path):
    """What the real interpreter says loading path with RTLD_NOW: '' or the dlerror."""
    code = ("import ctypes, sys\n"
            "try:\n ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)\nexcept OSError as e:\n"
            " print(e)\n")
    return subprocess.run([SYS_PY, "-c", code, path], capture_output=True, text=True,
                          check=True).stdout.strip()


def stable_abi():
    import yaml
    with open(DATA) as f:
        doc = yaml.safe_load(f)
    return doc


@test
def data_says_where_it_came_from_and_matches_the_interpreter():
    doc = stable_abi()
    assert doc["kind"] == "stable-abi" and doc["source"]["repository"] == "python/cpython", doc["source"]
    assert len(doc["source"]["commit"]) == 40
    syms = doc["symbols"]
    assert len(syms) > 900, len(syms)
    ver = real_python()
    vmaj, vmin = map(int, ver.split("."))
    # Every symbol the stable ABI had by this interpreter's version, on Linux, is exported by
    # it (ctypes.pythonapi is the running interpreter's own symbol table).
    want = []
    for name, flags in syms.items():
        parts = flags.split()
        maj, mn = map(int, parts[0].split("."))
        ifdef = [p[6:] for p in parts[1:] if p.startswith("ifdef=")]
        if (maj, mn) <= (vmaj, vmin) and all(i in doc["linux_features"] for i in ifdef):
            want.append(name)
    code = "import ctypes, sys\nprint(' '.join(n for n in sys.argv[1:] if not hasattr(ctypes.pythonapi, n)))"
    missing = subprocess.run([SYS_PY, "-c", code, *want], capture_output=True, text=True,
                             check=True).stdout.split()
    assert not missing, missing
    assert len(want) > 800, len(want)
    # PyUnicode_AsUTF8 was added to the limited API for 3.13 and then taken out again: it is
    # not in the stable ABI; PyUnicode_AsUTF8AndSize is, since 3.10.
    assert "PyUnicode_AsUTF8" not in syms and syms["PyUnicode_AsUTF8AndSize"] == "3.10"


@test
def publish_verdicts_on_honest_and_lying_wheels():
    need_fixtures()
    expect = {  # wheel: (reason, symbol) or None
        "wgabi3good-1.0-cp38-abi3-linux_x86_64.whl": None,
        "wgabi3new-1.0-cp310-abi3-linux_x86_64.whl": None,
        "wgabi3lie-1.0-cp38-abi3-linux_x86_64.whl": ("too-new", "PyUnicode_AsUTF8AndSize"),
        "wgabi3lie312-1.0-cp310-abi3-linux_x86_64.whl": ("too-new", "PyErr_GetRaisedException"),
        "wgabi3full-1.0-cp310-abi3-linux_x86_64.whl": ("not-limited", "PyUnicode_AsUTF8"),
        "wgabi3priv-1.0-cp38-abi3-linux_x86_64.whl": ("private", "_PyLong_Sign"),
        "wgabi3win-1.0-cp38-abi3-linux_x86_64.whl": ("not-on-linux", "PyErr_SetFromWindowsErr"),
    }
    for whl, want in expect.items():
        (fs,) = check("--profile", "publish", os.path.join(WH, whl))
        got = [(reason(f), f["symbol"]) for f in fs]
        assert got == ([want] if want else []), (whl, got)
        for f in fs:
            assert f["severity"] == "error", f
    (fs,) = check("--profile", "publish", os.path.join(WH, "wgabi3priv-1.0-cp38-abi3-linux_x86_64.whl"))
    assert "_PyUnicode_Ready" in fs[0]["message"], fs[0]["message"]


@test
def install_judges_the_target_python():
    need_fixtures()
    lie = os.path.join(WH, "wgabi3lie-1.0-cp38-abi3-linux_x86_64.whl")        # needs 3.10
    lie312 = os.path.join(WH, "wgabi3lie312-1.0-cp310-abi3-linux_x86_64.whl")  # needs 3.12
    for target, wheel, flagged in (("3.9", lie, True), ("3.10", lie, False), ("3.11", lie, False),
                                   ("3.11", lie312, True), ("3.12", lie312, False)):
        (fs,) = check("--profile", "install", "--target", "python=" + target, wheel)
        assert bool(fs) == flagged, (target, wheel, fs)
    # Outside the stable ABI is wrong whatever the target.
    (fs,) = check("--profile", "install", "--target", "python=3.13",
                  os.path.join(WH, "wgabi3full-1.0-cp310-abi3-linux_x86_64.whl"))
    assert [reason(f) for f in fs] == ["not-limited"], fs


@test
def verdicts_against_the_real_interpreter():
    """--target python=<the system python> on each bare extension: the symbols judged missing
    from that version (too new, Windows-only) are exactly those the real interpreter fails
    to bind; those outside the stable ABI bind on it (that version happens to export them)
    yet are flagged, since another version need not."""
    need_fixtures()
    ver = real_python()
    n = 0
    for name in ("good", "new310", "new312", "nonlimited", "private", "windows"):
        so = os.path.join(SO, name + ".abi3.so")
        err = dlopen(so)
        scan = os.path.join(A3, "withhelper") if name == "good" else so
        fs = check("--profile", "install", "--target", "python=" + ver, scan)[0]
        missing = [f["symbol"] for f in fs if reason(f) in ("too-new", "not-on-linux")]
        if err:
            assert "undefined symbol" in err, err
            assert len(missing) == 1 and ("undefined symbol: " + missing[0]) in err, (name, err, fs)
        else:
            assert not missing, (name, fs)
        if name in ("nonlimited", "private"):
            assert not err and fs, (name, err, fs)
        n += 1
    assert n == 6


@test
def own_symbols_and_unclaimed_objects():
    need_fixtures()
    good = os.path.join(SO, "good.abi3.so")
    # PyWg_HelperCompute is defined by libwghelper.so: with it in the same input (the wheel,
    # a directory) it is the input's own; the extension alone has nothing that defines it.
    assert check("--profile", "publish", os.path.join(A3, "withhelper"))[0] == []
    (fs,) = check("--profile", "publish", os.path.join(WH, "wgabi3good-1.0-cp38-abi3-linux_x86_64.whl"))
    assert fs == [], fs
    (fs,) = check("--profile", "publish", good)
    assert [(reason(f), f["symbol"]) for f in fs] == [("not-limited", "PyWg_HelperCompute")], fs
    # A bare .abi3.so claims no version: only membership of the stable ABI is judged.
    assert check("--profile", "publish", os.path.join(SO, "new312.abi3.so"))[0] == []


if __name__ == "__main__":
    sys.exit(main())

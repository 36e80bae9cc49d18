#!/usr/bin/env python3
"""The pip gate end to end with real pip (Debian 12's pip 23 in a fresh `python3 -m venv`,
offline): good wheels install; a hollow wheel, an ABI-mismatched extension (against a
stand-in torch installed in the venv), a GPU-mismatched wheel and an sdist whose build makes
a bad wheel are blocked with nothing of them left installed; one bad wheel among several
installs none; bypass and warn-only; enable/disable of plain `pip install`; a pip the gate
cannot hook is refused loudly; the Python binding on its own.

With $WG_TEST_PIP_WHEEL (a pip wheel of ../shared/tools/pip) every venv gets that pip
instead of Debian's (`python3 -m venv --without-pip`, then the wheel installs itself), so that
the same tests run against pip 23.0.1, 25.0, 26.2.1 and 26.3.dev0. No gated command may print
pip 26.2's "Unexpected import" warning (26.3 enforces it).

The gate's lifecycle with wheelgate's own wheel (scripts/python-wheel.py, from BUILD_DIR)
installed by that pip: `pip uninstall wheelgate` turns the gate off and every later `pip
install` works (the reinstall included); a reinstall keeps it on; a half-installed gate
fails closed, and the fix its message names works.

Usage: test_pip.py HOOKS_DIR LIBWHEELGATE FIXTURES [PYTHON [BUILD_DIR]]
"""
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

from harness import Missing, main, test  # noqa: E402

HOOKS, LIB, FIX = [os.path.abspath(a) for a in sys.argv[1:4]]
PY = sys.argv[4] if len(sys.argv) > 4 else "/usr/bin/python3"
BUILD = os.path.abspath(sys.argv[5]) if len(sys.argv) > 5 else os.path.dirname(LIB)
W = os.path.join(FIX, "wheels")
SFX = ".cpython-312-x86_64-linux-gnu.so"
TMP = tempfile.mkdtemp(prefix="wg-pip-")
STATE = {}


def make_wheel(dirpath, name, version, tag, files, purelib=False):
    di = "%s-%s.dist-info" % (name, version)
    files = dict(files)
    files[di + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)).encode()
    files[di + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: %s\nTag: %s\n"
                            % ("true" if purelib else "false", tag)).encode()
    rows = ["%s,sha256=%s,%d" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest())
                                 .rstrip(b"=").decode(), len(d)) for n, d in files.items()]
    rows.append(di + "/RECORD,,")
    path = os.path.join(dirpath, "%s-%s-%s.whl" % (name, version, tag))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(n, d)
        z.writestr(di + "/RECORD", "\n".join(rows) + "\n")
    return path


def fixtures():
    if "dir" in STATE:
        return STATE["dir"]
    d = os.path.join(TMP, "wheels")
    os.makedirs(d)
    read = lambda p: open(p, "rb").read()
    abi = os.path.join(FIX, "abi")
    make_wheel(d, "torch", "2.4.0", "py3-none-linux_x86_64",
               {"torch/__init__.py": b"", "torch/version.py": b"__version__ = '2.4.0'\ncuda = None\n",
                "torch/lib/libc10.so": read(os.path.join(abi, "torch_new", "libc10.so"))})
    make_wheel(d, "abiold", "1.0", "py3-none-linux_x86_64",
               {"abiold/_C.so": read(os.path.join(abi, "ext_string_abi0" + SFX)),
                "abiold/__init__.py": b""})
    make_wheel(d, "abinew", "1.0", "py3-none-linux_x86_64",
               {"abinew/_C.so": read(os.path.join(abi, "ext_string_abi1" + SFX)),
                "abinew/__init__.py": b""})
    make_wheel(d, "gpuext", "1.0", "py3-none-linux_x86_64",
               {"gpuext/_k.so": read(os.path.join(os.path.dirname(os.path.dirname(__file__)),
                                                  "fixtures", "cuda", "prebuilt", "sm80.so")),
                "gpuext/__init__.py": b""})
    # The package imports its extension: it cannot be imported where that fails to load.
    make_wheel(d, "newglibc", "1.0", "py3-none-linux_x86_64",
               {"newglibc/_C.abi3.so": read(os.path.join(FIX, "abi-ld", "sys",
                                                         "ext_glibc299" + SFX)),
                "newglibc/__init__.py": b"from . import _C\n"})
    # The same object as a plugin nothing imports or loads through DT_NEEDED: the package
    # imports fine, so the gate warns and installs.
    make_wheel(d, "plugglibc", "1.0", "py3-none-linux_x86_64",
               {"plugglibc/libplug.so": read(os.path.join(FIX, "abi-ld", "sys",
                                                          "ext_glibc299" + SFX)),
                "plugglibc/__init__.py": b""})
    for n in ("purepkg-0.1-py3-none-any.whl", "hollow-1.0-py3-none-any.whl", "base-1.0-py3-none-any.whl"):
        shutil.copy(os.path.join(W, n), d)
    # An sdist whose build produces a hollow wheel.
    src = io.BytesIO()
    with tarfile.open(fileobj=src, mode="w:gz") as t:
        for n, data in {"hollowsrc-1.0/setup.py": b"from setuptools import setup\n"
                        b"setup(name='hollowsrc', version='1.0', packages=['hollowsrc'])\n",
                        "hollowsrc-1.0/hollowsrc/__init__.py": b"import hollowsrc_cuda\n",
                        "hollowsrc-1.0/PKG-INFO": b"Metadata-Version: 2.1\nName: hollowsrc\nVersion: 1.0\n"}.items():
            info = tarfile.TarInfo(n)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    with open(os.path.join(d, "hollowsrc-1.0.tar.gz"), "wb") as f:
        f.write(src.getvalue())
    STATE["dir"] = d
    return d


PIPWHL = os.environ.get("WG_TEST_PIP_WHEEL")


def venv(name):
    if not os.path.exists(PY):
        raise Missing("no %s" % PY)
    path = os.path.join(TMP, name)
    if PIPWHL:
        if not os.path.exists(PIPWHL):
            raise Missing("the pip wheel %s is not there (../shared/tools/pip)" % PIPWHL)
        if "template" not in STATE:
            t = os.path.join(TMP, "template")
            p = subprocess.run([PY, "-m", "venv", "--without-pip", "--system-site-packages", t],
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise Missing("python3 -m venv failed (install python3-venv): " + p.stderr[-300:])
            p = subprocess.run([os.path.join(t, "bin", "python"), os.path.join(PIPWHL, "pip"),
                                "install", "-q", "--no-index", PIPWHL], capture_output=True,
                               text=True, env=env({"PYTHONPATH": ""}))
            assert p.returncode == 0, p.stderr
            STATE["template"] = t
        # A venv's paths are relative to its python: a copy is a venv of its own.
        shutil.copytree(STATE["template"], path, symlinks=True)
    else:
        if "template" not in STATE:  # made once (ensurepip: ~6 s of CPU), copied for each test
            t = os.path.join(TMP, "template")
            p = subprocess.run([PY, "-m", "venv", "--system-site-packages", t],
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise Missing("python3 -m venv failed (install python3-venv): " + p.stderr[-300:])
            STATE["template"] = t
        shutil.copytree(STATE["template"], path, symlinks=True)
    want = os.path.basename(PIPWHL).split("-")[1] if PIPWHL else None
    got = subprocess.run([os.path.join(path, "bin", "python"), "-c",
                          "import pip; print(pip.__version__)"], capture_output=True,
                         text=True, env=env({"PYTHONPATH": ""})).stdout.strip()
    assert got and (want is None or got == want), (want, got)
    STATE["pip"] = got
    return path


def env(extra=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    e.update({"PYTHONPATH": HOOKS, "WHEELGATE_LIB": LIB, "PIP_CONFIG_FILE": os.devnull,
              "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
              "XDG_CACHE_HOME": os.path.join(TMP, "cache"), "PYTHONDONTWRITEBYTECODE": "1"})
    e.update(extra or {})
    return e


def ran(p):
    # pip 26.2 warns of a module imported after its install began, and 26.3 refuses it:
    # the gate must have everything it needs loaded before.
    assert "Unexpected import" not in p.stderr, p.stderr[-3000:]
    return p


def gated(v, *args, extra=None):
    return ran(subprocess.run([os.path.join(v, "bin", "python"), "-m", "wheelgate_pip", *args],
                              capture_output=True, text=True, env=env(extra), timeout=600))


def pip(v, *args, extra=None):
    return ran(subprocess.run([os.path.join(v, "bin", "python"), "-m", "pip", *args],
                              capture_output=True, text=True, env=env(extra), timeout=600))


def installed(v, name, site=None):
    site = site or subprocess.run([os.path.join(v, "bin", "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True).stdout.strip()
    if not os.path.isdir(site):
        return False
    return any(e == name or e.startswith(name + "-") for e in os.listdir(site))


def w(name):
    return os.path.join(fixtures(), name)


@test
def good_wheels_install_and_bad_ones_do_not():
    v = venv("v1")
    p = gated(v, "install", "--no-deps", w("purepkg-0.1-py3-none-any.whl"))
    assert p.returncode == 0 and installed(v, "purepkg"), p.stderr
    assert "nothing blocks" in p.stderr
    p = gated(v, "install", "--no-deps", w("hollow-1.0-py3-none-any.whl"))
    assert p.returncode != 0 and not installed(v, "hollow"), (p.returncode, p.stderr)
    assert "WG-HOL-001" in p.stderr and "flash_attn_2_cuda" in p.stderr
    assert "wheelgate blocked the install" in p.stderr


@test
def abi_mismatch_against_the_installed_torch():
    v = venv("v2")
    p = gated(v, "install", "--no-deps", w("torch-2.4.0-py3-none-linux_x86_64.whl"))
    assert p.returncode == 0 and installed(v, "torch"), p.stderr
    p = gated(v, "install", "--no-deps", w("abiold-1.0-py3-none-linux_x86_64.whl"))
    assert p.returncode != 0 and not installed(v, "abiold"), p.stderr
    assert "WG-ABI-001" in p.stderr and "WG-LD-001" in p.stderr, p.stderr
    p = gated(v, "install", "--no-deps", w("abinew-1.0-py3-none-linux_x86_64.whl"))
    assert p.returncode == 0 and installed(v, "abinew"), p.stderr


@test
def gpu_mismatch_with_a_target_gpu():
    v = venv("v3")
    p = gated(v, "install", "--wheelgate-gpu", "sm_90", "--no-deps",
              w("gpuext-1.0-py3-none-linux_x86_64.whl"))
    assert p.returncode != 0 and not installed(v, "gpuext"), p.stderr
    assert "WG-GPU-002" in p.stderr and "sm_90" in p.stderr


@test
def the_gate_judges_for_this_system():
    """The running system's glibc is the target's unless one is declared (issue 7)."""
    v = venv("v7")
    p = gated(v, "install", "--no-deps", w("newglibc-1.0-py3-none-linux_x86_64.whl"))
    assert p.returncode != 0 and not installed(v, "newglibc"), p.stderr
    assert "WG-SYS-001" in p.stderr and "GLIBC_2.99" in p.stderr and "this system" in p.stderr
    p = gated(v, "install", "--wheelgate-target", "glibc=2.99", "--no-deps",
              w("newglibc-1.0-py3-none-linux_x86_64.whl"))
    assert p.returncode == 0 and installed(v, "newglibc"), p.stderr
    p = gated(v, "install", "--no-deps", w("plugglibc-1.0-py3-none-linux_x86_64.whl"))
    assert p.returncode == 0 and installed(v, "plugglibc"), p.stderr
    assert "warning[WG-SYS-001]" in p.stdout + p.stderr, p.stdout + p.stderr
    assert "nothing in the wheel loads libplug.so through DT_NEEDED" in p.stdout + p.stderr


@test
def an_sdist_built_into_a_bad_wheel_is_blocked():
    v = venv("v4")
    p = gated(v, "install", "--no-deps", "--no-build-isolation", w("hollowsrc-1.0.tar.gz"))
    if "invalid command 'bdist_wheel'" in p.stderr or "No module named 'setuptools'" in p.stderr:
        raise Missing("no setuptools/wheel to build the sdist (install python3-setuptools python3-wheel)")
    assert p.returncode != 0 and not installed(v, "hollowsrc"), p.stderr[-2000:]
    assert "WG-HOL-001" in p.stderr and "hollowsrc_cuda" in p.stderr


@test
def one_bad_wheel_installs_none():
    v = venv("v5")
    p = gated(v, "install", "--no-deps", w("purepkg-0.1-py3-none-any.whl"),
              w("base-1.0-py3-none-any.whl"), w("hollow-1.0-py3-none-any.whl"))
    assert p.returncode != 0, p.stderr
    for n in ("purepkg", "base", "hollow"):
        assert not installed(v, n), n


@test
def bypass_and_warn_only():
    v = venv("v6")
    p = gated(v, "install", "--no-deps", w("hollow-1.0-py3-none-any.whl"),
              extra={"WHEELGATE_PIP": "off"})
    assert p.returncode == 0 and installed(v, "hollow") and "not checking" in p.stderr, p.stderr
    v = venv("v6b")
    # warn-only: nothing would be blocked, so a dry run does not fail either
    p = gated(v, "install", "--dry-run", "--wheelgate-warn-only", "--no-deps",
              w("hollow-1.0-py3-none-any.whl"))
    assert p.returncode == 0 and "Would install hollow-1.0" in p.stdout, p.stderr
    assert "WG-HOL-001" in p.stderr and "would install despite" in p.stderr, p.stderr
    p = gated(v, "install", "--wheelgate-warn-only", "--no-deps", w("hollow-1.0-py3-none-any.whl"))
    assert p.returncode == 0 and installed(v, "hollow"), p.stderr
    assert "WG-HOL-001" in p.stderr and "warn-only" in p.stderr
    # Rule options pass through: the rule off, the wheel installs.
    v = venv("v6c")
    p = gated(v, "install", "--wheelgate-disable", "WG-HOL-001", "--no-deps",
              w("hollow-1.0-py3-none-any.whl"))
    assert p.returncode == 0 and installed(v, "hollow"), p.stderr


@test
def enable_gates_plain_pip_and_disable_undoes_it():
    v = venv("v8")
    p = gated(v, "enable")
    assert p.returncode == 0, p.stderr
    p = gated(v, "status")
    assert "gated: yes" in p.stdout, p.stdout
    # No PYTHONPATH and no WHEELGATE_LIB: the .pth file carries both.
    bare = {"PYTHONPATH": "", "WHEELGATE_LIB": ""}
    p = pip(v, "install", "--no-deps", w("hollow-1.0-py3-none-any.whl"), extra=bare)
    assert p.returncode != 0 and not installed(v, "hollow"), p.stderr
    assert "WG-HOL-001" in p.stderr
    p = pip(v, "install", "--no-deps", w("purepkg-0.1-py3-none-any.whl"), extra=bare)
    assert p.returncode == 0 and installed(v, "purepkg"), p.stderr
    p = pip(v, "install", "--no-deps", w("hollow-1.0-py3-none-any.whl"),
            extra=dict(bare, WHEELGATE_PIP_ARGS="--wheelgate-warn-only"))
    assert p.returncode == 0 and installed(v, "hollow") and "warn-only" in p.stderr, p.stderr
    p = pip(v, "uninstall", "-y", "hollow", extra=bare)
    p = gated(v, "disable")
    assert p.returncode == 0
    p = gated(v, "status")
    assert "gated: no" in p.stdout
    p = pip(v, "install", "--no-deps", w("hollow-1.0-py3-none-any.whl"), extra=bare)
    assert p.returncode == 0 and installed(v, "hollow") and "WG-HOL" not in p.stderr, p.stderr


@test
def a_pip_that_cannot_be_hooked_is_refused():
    fake = os.path.join(TMP, "fakepip")
    os.makedirs(os.path.join(fake, "pip", "_internal", "req"), exist_ok=True)
    with open(os.path.join(fake, "pip", "__init__.py"), "w") as f:
        f.write("__version__ = '99.0'\n")
    for d in ("pip/_internal", "pip/_internal/req"):
        open(os.path.join(fake, d, "__init__.py"), "w").close()
    p = subprocess.run([sys.executable, "-m", "wheelgate_pip", "install", "x.whl"],
                       capture_output=True, text=True,
                       env=env({"PYTHONPATH": fake + os.pathsep + HOOKS}))
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "pip 99.0 has no pip._internal.req.install_given_reqs" in p.stderr, p.stderr
    assert "refusing to run pip ungated" in p.stderr


@test
def the_binding_on_its_own():
    code = ("import wheelgate, json, sys\n"
            "r = wheelgate.check(sys.argv[1])\n"
            "print(json.dumps([r.verdict, [(f.rule, f.severity, f.file, f.line) for f in r.findings]]))\n"
            "rs = wheelgate.check_all([sys.argv[2], sys.argv[1]], gpus=['H100'])\n"
            "print(json.dumps([x.verdict for x in rs]))\n"
            "print(json.dumps([r.profile, rs[0].profile,"
            " wheelgate.check(sys.argv[1], profile='install').profile]))\n"
            "try:\n    wheelgate.check(sys.argv[1], profile='ship')\n"
            "except wheelgate.WheelgateError as e:\n    print(json.dumps(str(e)))\n")
    p = subprocess.run([sys.executable, "-c", code, w("hollow-1.0-py3-none-any.whl"),
                        w("purepkg-0.1-py3-none-any.whl")], capture_output=True, text=True,
                       env=env())
    assert p.returncode == 0, p.stderr
    first, second, profiles, bad = [json.loads(l) for l in p.stdout.splitlines()]
    # No target: the publish question; a GPU declared, or asked for: install.
    assert profiles == ["publish", "install", "install"], profiles
    assert "install, publish or auto" in bad, bad
    # (no environment: the package's own missing module; flash_attn_2_cuda may be installed)
    assert first[0] == "fail" and ["WG-HOL-001", "error", "hollow/helpers.py", 1] in first[1], first
    assert second == ["pass", "fail"], second
    p = subprocess.run([sys.executable, "-c", "import wheelgate; wheelgate.check('x')"],
                       capture_output=True, text=True,
                       env=env({"WHEELGATE_LIB": "/nonexistent/libwheelgate.so.0",
                                "LD_LIBRARY_PATH": ""}))
    assert p.returncode != 0 and "cannot find libwheelgate" in p.stderr, p.stderr
    assert "$WHEELGATE_LIB=/nonexistent/libwheelgate.so.0 (no such file)" in p.stderr


@test
def the_binding_check_bytes():
    """check_bytes(): a wheel held in memory (bytes, bytearray, memoryview) judged as the same
    file is by check(); a corrupt body gives the error a corrupt file gives; bad arguments
    are TypeError / ValueError before the library is asked."""
    code = r"""
import json, os, sys, tempfile, wheelgate
def key(r):
    return [r.verdict, r.error, r.profile,
            sorted((f.rule, f.severity, f.message, f.member, f.symbol, f.file, f.line)
                   for f in r.findings)]
out = {}
for path in sys.argv[1:]:
    name = os.path.basename(path)
    data = open(path, "rb").read()
    by_path = key(wheelgate.check(path, gpus=["H100"]))
    forms = {"bytes": data, "bytearray": bytearray(data), "memoryview": memoryview(data),
             "slice": memoryview(b"xx" + data)[2:]}
    out[name] = [by_path] + [key(wheelgate.check_bytes(v, name, gpus=["H100"]))
                             for v in forms.values()]
# a corrupt body: the same error as the same bytes in a file of the same name
tmp = tempfile.mkdtemp()
bad = os.path.join(tmp, "corrupt-1.0-py3-none-any.whl")
body = b"PK\x03\x04" + b"\x00garbage" * 50
open(bad, "wb").write(body)
os.chdir(tmp)  # the file's path is its name, as check_bytes() is given
out["corrupt"] = [key(wheelgate.check("corrupt-1.0-py3-none-any.whl")),
                  key(wheelgate.check_bytes(body, "corrupt-1.0-py3-none-any.whl"))]
errs = []
for args, exc in (((u"text", "x-1.0-py3-none-any.whl"), TypeError),
                  ((None, "x-1.0-py3-none-any.whl"), TypeError),
                  ((memoryview(b"abcd")[::2], "x-1.0-py3-none-any.whl"), TypeError),
                  ((body, ""), ValueError), ((body, "a/b-1.0-py3-none-any.whl"), ValueError),
                  ((body, "x\0-1.0-py3-none-any.whl"), ValueError),
                  ((body, "x" * 300 + ".whl"), ValueError), ((body, 3), TypeError)):
    try:
        wheelgate.check_bytes(*args)
        errs.append("no exception")
    except exc as e:
        errs.append(type(e).__name__ + ": " + str(e))
out["errors"] = errs
print(json.dumps(out))
"""
    wheels = [w("hollow-1.0-py3-none-any.whl"), w("purepkg-0.1-py3-none-any.whl")]
    corpus = os.path.join(HOOKS, "..", "..", "..", "shared", "corpus", "wheels",
                          "wgdemo_oldabi_sm90-0.1.0-cp312-cp312-linux_x86_64.whl")
    if os.path.exists(corpus):  # a real 3 MB CUDA wheel with a blocking finding, if there
        wheels.append(corpus)
    p = subprocess.run([sys.executable, "-c", code] + wheels, capture_output=True, text=True,
                       env=env(), timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    for name in [os.path.basename(x) for x in wheels] + ["corrupt"]:
        first = out[name][0]
        for other in out[name][1:]:
            assert other == first, (name, first, other)
    hollow = out["hollow-1.0-py3-none-any.whl"][0]
    assert hollow[0] == "fail" and any(f[0] == "WG-HOL-001" for f in hollow[3]), hollow
    assert out["purepkg-0.1-py3-none-any.whl"][0][0] == "pass", out
    if len(wheels) > 2:
        oldabi = out[os.path.basename(corpus)][0]
        assert oldabi[0] == "fail" and oldabi[3], oldabi
    corrupt = out["corrupt"][0]
    assert corrupt[0] == "error" and "corrupt-1.0-py3-none-any.whl" in corrupt[1], corrupt
    errs = out["errors"]
    assert [e.split(":")[0] for e in errs] == ["TypeError", "TypeError", "TypeError",
                                              "ValueError", "ValueError", "ValueError",
                                              "ValueError", "TypeError"], errs
    assert "bytes-like" in errs[0] and "contiguous" in errs[2], errs
    assert "a file's name" in errs[3] and "\\x00" in errs[5], errs


BARE = {"PYTHONPATH": "", "WHEELGATE_LIB": ""}


def enabled(name, hooks=None, lib=None):
    """A venv gated by `enable`, with the gate's package (and library) taken from copies the
    test may then break."""
    v = venv(name)
    hooks = hooks or HOOKS
    p = gated(v, "enable", extra={"PYTHONPATH": hooks, "WHEELGATE_LIB": lib or LIB})
    assert p.returncode == 0, p.stderr
    return v


def broken_copy(name):
    hooks = os.path.join(TMP, name, "hooks")
    shutil.copytree(HOOKS, hooks)
    lib = os.path.join(TMP, name, "libwheelgate.so.0")
    shutil.copy(LIB, lib)
    return hooks, lib


def assert_closed(v, why):
    """Every Python start is quiet; pip install stops with one message naming the fix and
    installs nothing; other pip commands work; WHEELGATE_PIP=off is the bypass."""
    p = subprocess.run([os.path.join(v, "bin", "python"), "-c", "print('ok')"],
                       capture_output=True, text=True, env=env(BARE))
    assert p.returncode == 0 and p.stdout == "ok\n" and p.stderr == "", (why, p.stderr)
    p = pip(v, "install", "--no-deps", w("purepkg-0.1-py3-none-any.whl"), extra=BARE)
    assert p.returncode != 0 and not installed(v, "purepkg"), (why, p.returncode, p.stderr)
    assert "Traceback" not in p.stderr, (why, p.stderr)
    assert p.stderr.count("cannot run") == 1, (why, p.stderr)
    assert "wheelgate_pip disable" in p.stderr and "reinstall wheelgate" in p.stderr, p.stderr
    # the reinstall it advises must not be refused by the gate it means to repair
    assert "WHEELGATE_PIP=off pip install --force-reinstall wheelgate" in p.stderr, p.stderr
    assert "WHEELGATE_PIP=off" in p.stderr, p.stderr
    p = pip(v, "list", extra=BARE)
    assert p.returncode == 0 and "Traceback" not in p.stderr, (why, p.stderr)
    p = pip(v, "install", "--no-deps", w("purepkg-0.1-py3-none-any.whl"),
            extra=dict(BARE, WHEELGATE_PIP="off"))
    assert p.returncode == 0 and installed(v, "purepkg"), (why, p.stderr)
    return p


@test
def fail_closed_when_the_package_is_gone():
    hooks, lib = broken_copy("gone")
    v = enabled("fc1", hooks, lib)
    shutil.rmtree(hooks)
    assert_closed(v, "package gone")


@test
def fail_closed_when_the_package_is_broken():
    hooks, lib = broken_copy("broken")
    v = enabled("fc2", hooks, lib)
    with open(os.path.join(hooks, "wheelgate", "__init__.py"), "w") as f:
        f.write("this is not python\n")
    assert_closed(v, "package broken")


@test
def fail_closed_when_the_library_is_gone():
    hooks, lib = broken_copy("nolib")
    v = enabled("fc3", hooks, lib)
    os.unlink(lib)
    assert_closed(v, "library gone")


@test
def fail_closed_when_pip_changes_what_the_gate_reads():
    """pip renames what the gate reads of a requirement (here: local_file_path hidden behind
    a proxy): the install stops instead of going on "not checked"."""
    v = enabled("fc4")
    code = r"""
import sys
import pip._internal.req as R
import pip._internal.commands.install as I
gated = I.install_given_reqs
class Renamed:
    def __init__(self, r):
        object.__setattr__(self, "_r", r)
    def __getattr__(self, n):
        if n == "local_file_path":
            raise AttributeError(n)
        return getattr(self._r, n)
    def __str__(self):
        return str(self._r)
def renamed(reqs, *a, **k):
    return gated([Renamed(r) for r in reqs], *a, **k)
I.install_given_reqs = renamed
from pip._internal.cli.main import main
sys.exit(main(sys.argv[1:]))
"""
    p = ran(subprocess.run([os.path.join(v, "bin", "python"), "-c", code, "install", "--no-deps",
                            w("hollow-1.0-py3-none-any.whl")], capture_output=True, text=True,
                           env=env(BARE), timeout=600))
    assert p.returncode != 0 and not installed(v, "hollow"), p.stderr
    assert "has no local_file_path" in p.stderr and "nothing was installed" in p.stderr, p.stderr


@test
def no_pip_status_and_enable():
    """A venv without pip (as uv makes them): status says so, enable refuses."""
    path = os.path.join(TMP, "nopip")
    p = subprocess.run([PY, "-m", "venv", "--without-pip", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise Missing("python3 -m venv failed (install python3-venv): " + p.stderr[-300:])
    p = gated(path, "status")
    assert p.returncode == 0 and "pip: none" in p.stdout and "gated: no" in p.stdout, p.stderr
    p = gated(path, "enable")
    assert p.returncode == 2 and "has no pip" in p.stderr, (p.returncode, p.stderr)
    assert not os.path.exists(os.path.join(path, "lib")) or not any(
        f.endswith("wheelgate-pip.pth") for _, _, fs in os.walk(path) for f in fs)


@test
def dry_run_says_what_would_be_blocked():
    v = enabled("dr")
    for run in (lambda *a: pip(v, *a, extra=BARE), lambda *a: gated(v, *a)):
        p = run("install", "--dry-run", "--no-deps", w("hollow-1.0-py3-none-any.whl"))
        assert p.returncode != 0, p.stdout + p.stderr
        assert "WG-HOL-001" in p.stderr and "would block" in p.stderr, p.stderr
        assert "Would install" not in p.stdout, p.stdout
        p = run("install", "--dry-run", "--no-deps", w("purepkg-0.1-py3-none-any.whl"))
        assert p.returncode == 0 and "Would install purepkg-0.1" in p.stdout, p.stdout + p.stderr
        assert "nothing would block" in p.stderr and "would blocks" not in p.stderr, p.stderr
    assert not installed(v, "purepkg") and not installed(v, "hollow")


@test
def pip_wheel_reports_and_can_block():
    v = enabled("pw")
    out = os.path.join(TMP, "pw-out")
    p = pip(v, "wheel", "--no-deps", "-w", out, w("hollow-1.0-py3-none-any.whl"), extra=BARE)
    assert p.returncode == 0 and os.path.exists(os.path.join(out, "hollow-1.0-py3-none-any.whl")), \
        p.stderr
    assert "WG-HOL-001" in p.stderr and "reported only" in p.stderr, p.stderr
    p = pip(v, "wheel", "--no-deps", "-w", out, w("hollow-1.0-py3-none-any.whl"),
            extra=dict(BARE, WHEELGATE_PIP_WHEEL="block"))
    assert p.returncode != 0 and "WG-HOL-001" in p.stderr, p.stderr
    p = pip(v, "wheel", "--no-deps", "-w", out, w("purepkg-0.1-py3-none-any.whl"),
            extra=dict(BARE, WHEELGATE_PIP_WHEEL="block"))
    assert p.returncode == 0 and "nothing blocks" in p.stderr, p.stderr


@test
def an_editable_install_is_checked_after_the_build():
    v = enabled("ed")
    for layout in ("flat", "src"):
        proj = os.path.join(TMP, "edproj-" + layout)
        pkg = os.path.join(proj, "src" if layout == "src" else "", "hollowed")
        os.makedirs(pkg)
        with open(os.path.join(pkg, "__init__.py"), "w") as f:
            f.write("from . import _hollowed_cuda\n")
        with open(os.path.join(proj, "pyproject.toml"), "w") as f:  # PEP 660, not setup.py develop
            f.write('[build-system]\nrequires = ["setuptools>=64"]\n'
                    'build-backend = "setuptools.build_meta"\n')
        with open(os.path.join(proj, "setup.py"), "w") as f:
            f.write("from setuptools import setup\nsetup(name='hollowed', version='1.0', "
                    "packages=['hollowed']%s)\n" % (", package_dir={'': 'src'}"
                                                    if layout == "src" else ""))
        p = pip(v, "install", "--no-deps", "--no-build-isolation", "-e", proj, extra=BARE)
        if "invalid command 'bdist_wheel'" in p.stderr or "editable_wheel" in p.stderr \
                or "No module named 'setuptools'" in p.stderr:
            raise Missing("no setuptools>=64/wheel for an editable build "
                          "(install python3-setuptools python3-wheel)")
        assert p.returncode != 0 and not installed(v, "hollowed"), (layout, p.stderr[-3000:])
        assert "WG-HOL-001" in p.stderr and "_hollowed_cuda" in p.stderr, (layout, p.stderr)
        with open(os.path.join(pkg, "_hollowed_cuda.py"), "w") as f:
            f.write("")
        p = pip(v, "install", "--no-deps", "--no-build-isolation", "-e", proj, extra=BARE)
        assert p.returncode == 0 and "nothing blocks" in p.stderr, (layout, p.stderr[-3000:])
        pip(v, "uninstall", "-y", "hollowed", extra=BARE)


@test
def where_the_files_go_is_judged():
    """--target, --prefix, --root and --user: the extension built against another torch ABI
    is blocked against the stand-in torch installed where the files go (the venv itself has
    no torch: judged against sys.prefix, it would install)."""
    v = venv("wh")
    py = os.path.join(v, "bin", "python")
    ver = subprocess.run([py, "-c", "import sys; print('python%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True).stdout.strip()
    home = os.path.join(TMP, "wh-home")
    user = dict(HOME=home, PYTHONUSERBASE=os.path.join(home, ".local"))
    prefix = os.path.join(TMP, "wh-prefix")
    root = os.path.join(TMP, "wh-root")
    cases = {
        "--target": (["--target", os.path.join(TMP, "wh-target")], {},
                     os.path.join(TMP, "wh-target")),
        "--prefix": (["--prefix", prefix], {},
                     os.path.join(prefix, "lib", ver, "site-packages")),
        "--root": (["--root", root], {},
                   root + subprocess.run([py, "-c", "import sysconfig; print(sysconfig."
                                          "get_paths()['purelib'])"], capture_output=True,
                                         text=True).stdout.strip()),
        "--user": (["--user"], user,
                   os.path.join(home, ".local", "lib", ver, "site-packages")),
    }
    for what, (args, extra, site) in cases.items():
        p = gated(v, "install", "--no-deps", *args, w("torch-2.4.0-py3-none-linux_x86_64.whl"),
                  extra=extra)
        assert p.returncode == 0 and installed(v, "torch", site), (what, site, p.stderr[-2000:])
        p = gated(v, "install", "--no-deps", *args, w("abiold-1.0-py3-none-linux_x86_64.whl"),
                  extra=extra)
        assert p.returncode != 0 and not installed(v, "abiold", site), (what, p.stderr[-2000:])
        assert "WG-ABI-001" in p.stderr and "judged for" in p.stderr, (what, p.stderr[-2000:])
        p = gated(v, "install", "--no-deps", *args, w("abinew-1.0-py3-none-linux_x86_64.whl"),
                  extra=extra)
        assert p.returncode == 0 and installed(v, "abinew", site), (what, p.stderr[-2000:])
    assert not installed(v, "torch") and not installed(v, "abinew")


def purelib(v):
    return subprocess.run([os.path.join(v, "bin", "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, env=env(BARE)).stdout.strip()


def wheelgate_wheel():
    """wheelgate's own wheel, built from the build tree as `--target python-wheel` does."""
    if "wheel" not in STATE:
        p = subprocess.run([os.path.join(BUILD, "wheelgate"), "--version"], capture_output=True,
                           text=True)
        assert p.returncode == 0, p.stderr
        p = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.dirname(HOOKS)),
                                                         "scripts", "python-wheel.py"),
                            BUILD, os.path.join(TMP, "dist"), p.stdout.split()[-1]],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        STATE["wheel"] = p.stdout.strip().splitlines()[-1]
    return STATE["wheel"]


@test
def uninstalling_wheelgate_turns_its_gate_off():
    """wheelgate's wheel installed by this pip and enabled: `pip uninstall wheelgate` takes the
    gate with it and says so; every later `pip install` works, the reinstall of wheelgate
    included (issue 26: it exited 2). A reinstall of wheelgate, which uninstalls the release
    before it, keeps the environment gated. Uninstalled by something that is not the gated pip
    (here pip with the gate bypassed), the next Python start notices, removes the .pth and
    says so once."""
    v = venv("life")
    whl = wheelgate_wheel()
    site = purelib(v)
    pth = os.path.join(site, "wheelgate-pip.pth")
    py = os.path.join(v, "bin", "python")
    p = pip(v, "install", "--no-deps", whl, extra=BARE)
    assert p.returncode == 0, p.stderr

    def enable():
        p = ran(subprocess.run([py, "-m", "wheelgate_pip", "enable"], capture_output=True,
                               text=True, env=env(BARE)))
        assert p.returncode == 0 and os.path.isfile(pth), p.stderr
        p = pip(v, "install", "--no-deps", w("hollow-1.0-py3-none-any.whl"), extra=BARE)
        assert p.returncode != 0 and "WG-HOL-001" in p.stderr and not installed(v, "hollow"), \
            p.stderr[-2000:]

    enable()
    p = pip(v, "install", "--no-deps", "--force-reinstall", whl, extra=BARE)
    assert p.returncode == 0 and "nothing blocks" in p.stderr, p.stderr[-2000:]
    assert os.path.isfile(pth), "a reinstall of wheelgate turned the gate off"
    p = pip(v, "install", "--no-deps", w("hollow-1.0-py3-none-any.whl"), extra=BARE)
    assert p.returncode != 0 and "WG-HOL-001" in p.stderr, p.stderr[-2000:]

    p = pip(v, "uninstall", "-y", "wheelgate", extra=BARE)
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(pth), "pip uninstall wheelgate left " + pth
    assert p.stderr.count("wheelgate was uninstalled from") == 1, p.stderr
    left = [n for n in os.listdir(site) if n.startswith("wheelgate")]
    assert not left, left

    def unlocked(wheel):
        p = subprocess.run([py, "-c", "print('ok')"], capture_output=True, text=True, env=env(BARE))
        assert p.returncode == 0 and p.stdout == "ok\n" and p.stderr == "", p.stderr
        p = pip(v, "install", "--no-deps", w(wheel), extra=BARE)
        assert p.returncode == 0 and installed(v, wheel.split("-")[0]), p.stderr[-2000:]
        assert "wheelgate" not in p.stderr, p.stderr

    unlocked("purepkg-0.1-py3-none-any.whl")
    p = pip(v, "install", "--no-deps", whl, extra=BARE)  # the reinstall: exited 2 (issue 26)
    assert p.returncode == 0 and installed(v, "wheelgate"), p.stderr[-2000:]
    enable()
    p = pip(v, "uninstall", "-y", "wheelgate", extra=dict(BARE, WHEELGATE_PIP="off"))
    assert p.returncode == 0 and os.path.isfile(pth), p.stderr
    starts = [subprocess.run([py, "-c", "print('ok')"], capture_output=True, text=True,
                             env=env(BARE)) for _ in range(2)]
    assert all(s.returncode == 0 and s.stdout == "ok\n" for s in starts), starts
    assert starts[0].stderr.count("wheelgate was uninstalled from") == 1, starts[0].stderr
    assert pth in starts[0].stderr and starts[1].stderr == "", [s.stderr for s in starts]
    assert not os.path.exists(pth)
    unlocked("base-1.0-py3-none-any.whl")
    # Where the .pth cannot be removed (here its path is a directory), Python starts quietly
    # and pip install notes it once, then goes on.
    gone = os.path.join(TMP, "life-gone")
    os.makedirs(os.path.join(gone, "wheelgate-pip.pth"))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from wheelgate_pip.__main__ import "
            "pth_line; exec(pth_line(sys.argv[2], '', sys.argv[3], 'wheelgate-0.dist-info')); "
            "sys.stderr.write('started\\n'); "
            "import pip._internal.commands.install, pip._internal.commands.install; print('ok')")
    p = subprocess.run([py, "-c", code, HOOKS, gone, os.path.join(gone, "wheelgate-pip.pth")],
                       capture_output=True, text=True, env=env(BARE))
    assert p.returncode == 0 and p.stdout == "ok\n", p.stderr
    assert p.stderr.startswith("started\n") and p.stderr.count("wheelgate was uninstalled") == 1, \
        p.stderr
    assert "its pip gate is off; delete" in p.stderr, p.stderr
    # A Python started while pip replaces wheelgate (an upgrade: the old release moved aside
    # into pip's stash, the new one not in yet) is not an uninstall: the .pth stays and a pip
    # install then is refused, never let through ungated.
    mid = os.path.join(TMP, "life-upgrading")
    os.makedirs(os.path.join(mid, "~heelgate-0.dist-info"))
    os.makedirs(os.path.join(mid, "~heelgate_pip"))
    midpth = os.path.join(mid, "wheelgate-pip.pth")
    open(midpth, "w").close()
    p = subprocess.run([py, "-c", code, HOOKS, mid, midpth], capture_output=True, text=True,
                       env=env(BARE))
    assert p.returncode == 2 and p.stdout == "" and os.path.isfile(midpth), p.stderr
    assert "enabled but cannot run" in p.stderr and "uninstalled" not in p.stderr, p.stderr


@test
def a_half_installed_gate_fails_closed_and_its_fix_works():
    """The installed wheel's .dist-info is there but the gate's package is not: not an
    uninstall but a broken gate, so pip install stops. The fix its message names (a
    reinstall with the gate bypassed for that command) gates again. (The library gone:
    fail_closed_when_the_library_is_gone.)"""
    v = venv("half")
    whl = wheelgate_wheel()
    site = purelib(v)
    p = pip(v, "install", "--no-deps", whl, extra=BARE)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([os.path.join(v, "bin", "python"), "-m", "wheelgate_pip", "enable"],
                       capture_output=True, text=True, env=env(BARE))
    assert p.returncode == 0, p.stderr
    shutil.rmtree(os.path.join(site, "wheelgate_pip"))
    assert_closed(v, "package gone, its .dist-info left")  # ends with purepkg installed, bypassed
    p = pip(v, "install", "--no-deps", "--force-reinstall", whl,
            extra=dict(BARE, WHEELGATE_PIP="off"))
    assert p.returncode == 0, p.stderr[-2000:]
    p = pip(v, "install", "--no-deps", w("hollow-1.0-py3-none-any.whl"), extra=BARE)
    assert p.returncode != 0 and "WG-HOL-001" in p.stderr, p.stderr[-2000:]
    assert not installed(v, "hollow")


@test
def gate_options_on_the_command_line_with_the_gate_enabled():
    """--wheelgate-warn-only and --wheelgate-disable given to `python -m wheelgate_pip install`
    (and `wheel`) count when the gate is enabled too (issue 26: the .pth's hook installed the
    gate first, with $WHEELGATE_PIP_ARGS alone, and the command line's were dropped)."""
    v = enabled("opts")
    hollow = w("hollow-1.0-py3-none-any.whl")
    p = gated(v, "install", "--no-deps", hollow)
    assert p.returncode != 0 and not installed(v, "hollow"), p.stderr[-2000:]
    for args in (["--wheelgate-warn-only"], ["--wheelgate-disable", "WG-HOL-001"]):
        p = gated(v, "install", *args, "--no-deps", hollow)
        assert p.returncode == 0 and installed(v, "hollow"), (args, p.stderr[-2000:])
        assert ("warn-only" in p.stderr) == (args[0] == "--wheelgate-warn-only"), p.stderr
        pip(v, "uninstall", "-y", "hollow")
        p = gated(v, "install", "--no-deps", "--dry-run", *args, hollow)
        assert p.returncode == 0 and "Would install hollow-1.0" in p.stdout, (args, p.stderr)
    out = os.path.join(TMP, "opts-out")
    p = gated(v, "wheel", "--no-deps", "-w", out, hollow, extra={"WHEELGATE_PIP_WHEEL": "block"})
    assert p.returncode != 0 and "WG-HOL-001" in p.stderr, p.stderr[-2000:]
    p = gated(v, "wheel", "--wheelgate-disable", "WG-HOL-001", "--no-deps", "-w", out, hollow,
              extra={"WHEELGATE_PIP_WHEEL": "block"})
    assert p.returncode == 0 and "nothing blocks" in p.stderr, p.stderr[-2000:]


def up(prefix):
    import glob
    found = glob.glob(os.path.join(FIX, "upgrade", prefix + "-*.whl"))
    if not found:
        raise Missing("no %s wheel (tests/fixtures/gen-upgrade.py needs ../shared/corpus)" % prefix)
    return found[0]


@test
def an_upgrade_that_breaks_an_installed_extension_is_blocked():
    """torch 2.12.0 removes symbols the installed flash_attn (built for 2.11.0) needs: the gate
    blocks it, and what it predicts is what the import then really does."""
    v = venv("vup")
    py = os.path.join(v, "bin", "python")
    p = gated(v, "install", "--no-deps", up("torch-2.11.0"), up("flash_attn-2.8.3"))
    assert p.returncode == 0, p.stderr
    p = gated(v, "install", "--no-deps", up("torch-2.12.0"))
    assert p.returncode != 0 and "WG-LD-006" in p.stderr, p.stderr
    assert "installing torch 2.12.0 breaks flash_attn 2.8.3" in p.stderr, p.stderr
    assert "defined by torch 2.11.0 but not by 2.12.0" in p.stderr, p.stderr
    assert installed(v, "torch-2.11.0.dist-info"), "the blocked upgrade changed the venv"
    # The same upgrade with the flash_attn built for it is one install that breaks nothing.
    p = gated(v, "install", "--no-deps", up("torch-2.12.0"), up("flash_attn-2.8.3+torch212"))
    assert p.returncode == 0 and installed(v, "torch-2.12.0.dist-info"), p.stderr
    p = subprocess.run([py, "-c", "import flash_attn"], capture_output=True, text=True,
                       env=env({"PYTHONPATH": ""}))
    assert p.returncode == 0, p.stderr
    # What the gate predicted for the first upgrade, done without it: the import fails so.
    w = venv("vup2")
    pw = os.path.join(w, "bin", "python")
    p = gated(w, "install", "--no-deps", up("torch-2.11.0"), up("flash_attn-2.8.3"))
    assert p.returncode == 0, p.stderr
    p = pip(w, "install", "--no-deps", up("torch-2.12.0"))
    assert p.returncode == 0, p.stderr
    p = subprocess.run([pw, "-c", "import flash_attn"], capture_output=True, text=True,
                       env=env({"PYTHONPATH": ""}))
    assert p.returncode != 0 and "undefined symbol: _ZN3c104cuda14MaybeSetDeviceEa" in p.stderr, \
        p.stderr


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(TMP, ignore_errors=True)

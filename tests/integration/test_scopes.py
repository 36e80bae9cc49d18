#!/usr/bin/env python3
"""Where each object is really loaded, and how much its failure costs the package, tested
against the real loader and a real `import` of Debian's python3 (issue 10, points 2 and 5):

- a library that another object of the wheel loads is judged inside that load group (it may
  take symbols from anything the group loads: torch's libtorch_nvshmem.so case), never alone;
- a library nothing in the wheel loads through DT_NEEDED (a plugin) is judged alone, and its
  failure is a warning that names it;
- an extension module the package imports when it is imported fails the wheel (error); one
  imported only under try/except ImportError, lazily, or never is a warning, and `import pkg`
  really works; a try/except that re-raises guards nothing;
- the loader stops at a missing library (no undefined-symbol noise after it);
- `import torch` comes first only for packages that use torch.

Every wheelgate verdict here is compared with what dlopen(RTLD_NOW) or `python3 -c "import
pkg"` does with the same files. The objects are built here with gcc.

Usage: test_scopes.py WHEELGATE SYS_PYTHON FIXTURES
"""
import base64
import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

from harness import Missing, Skip, main, test  # noqa: E402

WG = os.path.abspath(sys.argv[1])
PY = sys.argv[2] if len(sys.argv) > 2 else "/usr/bin/python3"
FIX = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else ""
CC = shutil.which("gcc") or shutil.which("cc")
TMP = tempfile.mkdtemp(prefix="wg-scopes-")


def py_info():
    p = subprocess.run([PY, "-c", "import sys,sysconfig;print(sysconfig.get_config_var("
                        "'EXT_SUFFIX'));print('cp%d%d' % sys.version_info[:2])"],
                       capture_output=True, text=True)
    if p.returncode:
        raise Missing("no %s" % PY)
    suffix, tag = p.stdout.split()
    return suffix, tag


def cc(out, src, *flags):
    """Builds a shared object from C source text."""
    if not CC:
        raise Missing("no C compiler")
    c = out + ".c"
    with open(c, "w") as f:
        f.write(src)
    subprocess.run([CC, "-shared", "-fPIC", "-o", out, c, *flags], check=True,
                   capture_output=True)
    os.unlink(c)
    return out


def wheel(path, files, tag):
    """A wheel of files {member: bytes} with a valid RECORD."""
    name, version = os.path.basename(path).split("-")[:2]
    di = "%s-%s.dist-info" % (name, version)
    files = dict(files)
    files[di + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" %
                               (name, version)).encode()
    files[di + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
                            "Tag: %s\n" % tag).encode()
    rec = []
    for m, data in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rec.append("%s,sha256=%s,%d" % (m, h, len(data)))
    rec.append(di + "/RECORD,,")
    files[di + "/RECORD"] = ("\n".join(rec) + "\n").encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for m, data in files.items():
            z.writestr(m, data)
    return path


def check(whl, *extra):
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", "--profile", "install",
                        "--env", PY, *extra, whl], capture_output=True, timeout=600)
    assert p.returncode in (0, 1), (p.returncode, p.stderr.decode())
    doc = json.loads(p.stdout)
    assert doc["profile"] == "install"
    return p.returncode, doc["inputs"][0]["findings"]


def dlopen(path):
    """What the real loader says: None when it loads, else its message."""
    code = "import ctypes,sys\ntry:\n ctypes.CDLL(sys.argv[1])\nexcept OSError as e:\n print(e)"
    p = subprocess.run([PY, "-c", code, path], capture_output=True, text=True, timeout=60)
    return p.stdout.strip() or None


def real_import(site, pkg):
    """`import pkg` in a fresh Debian python with site on its path: None or the error."""
    p = subprocess.run([PY, "-c", "import " + pkg], capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": site, "PATH": "/usr/bin:/bin"}, cwd=TMP)
    return None if p.returncode == 0 else p.stderr.strip().splitlines()[-1]


def install(whl, name):
    site = os.path.join(TMP, "site-" + name)
    shutil.rmtree(site, ignore_errors=True)
    with zipfile.ZipFile(whl) as z:
        z.extractall(site)
    return site


INIT = "void *PyInit_%s(void) { return 0; }\n"


@test
def a_library_loads_inside_its_loaders_group():
    """libb.so uses foo() without linking the library that defines it (libprov.so); the
    extension loads both, so ld.so binds foo in the extension's load group. Judged alone,
    libb.so fails: wheelgate must judge it where it is loaded (it used to fail the wheel)."""
    suffix, tag = py_info()
    d = os.path.join(TMP, "group")
    os.makedirs(d, exist_ok=True)
    prov = cc(os.path.join(d, "libprov.so"), "int foo(void) { return 7; }\n",
              "-Wl,-soname,libprov.so")
    libb = cc(os.path.join(d, "libb.so"), "extern int foo(void);\nint bar(void) { return foo(); }\n",
              "-Wl,-soname,libb.so")
    liba = cc(os.path.join(d, "liba.so"), "extern int bar(void);\nint baz(void) { return bar(); }\n",
              "-Wl,-soname,liba.so", "-L" + d, "-lb", "-Wl,-rpath,$ORIGIN")
    ext = cc(os.path.join(d, "_ext" + suffix), INIT % "_ext" + "extern int baz(void);\n"
             "int use(void) { return baz(); }\n", "-Wl,--no-as-needed", "-L" + d, "-la",
             "-lprov", "-Wl,-rpath,$ORIGIN")
    read = lambda p: open(p, "rb").read()
    whl = wheel(os.path.join(d, "grouppkg-1.0-%s-%s-linux_x86_64.whl" % (tag, tag)),
                {"grouppkg/__init__.py": b"from . import _ext\n",
                 "grouppkg/_ext" + suffix: read(ext), "grouppkg/liba.so": read(liba),
                 "grouppkg/libb.so": read(libb), "grouppkg/libprov.so": read(prov)}, tag)
    site = install(whl, "group")
    # Reality: the extension loads; libb.so alone does not.
    assert dlopen(os.path.join(site, "grouppkg", "_ext" + suffix)) is None
    alone = dlopen(os.path.join(site, "grouppkg", "libb.so"))
    assert alone and "undefined symbol: foo" in alone, alone
    rc, f = check(whl)
    ld = [x for x in f if x["rule"].startswith("WG-LD")]
    assert rc == 0 and not ld, ld


@test
def a_plugin_is_judged_alone_and_warned_about():
    """A library nothing in the wheel loads (a ctypes plugin) that cannot load: a warning
    naming it, and the package imports."""
    suffix, tag = py_info()
    d = os.path.join(TMP, "plugin")
    os.makedirs(d, exist_ok=True)
    gone = cc(os.path.join(d, "libwggone.so"), "int gone(void) { return 1; }\n",
              "-Wl,-soname,libwggone.so")
    plug = cc(os.path.join(d, "libplug.so"), "extern int gone(void);\nint p(void) { return gone(); }\n",
              "-L" + d, "-lwggone")
    os.unlink(gone)
    whl = wheel(os.path.join(d, "plugpkg-1.0-%s-%s-linux_x86_64.whl" % (tag, tag)),
                {"plugpkg/__init__.py": b"import ctypes, os\n"
                 b"def load():\n    return ctypes.CDLL(os.path.join(os.path.dirname(__file__), "
                 b"'libplug.so'))\n", "plugpkg/libplug.so": open(plug, "rb").read()}, tag)
    site = install(whl, "plugin")
    assert real_import(site, "plugpkg") is None
    alone = dlopen(os.path.join(site, "plugpkg", "libplug.so"))
    assert alone and "libwggone.so" in alone, alone
    rc, f = check(whl)
    ld = [x for x in f if x["rule"] == "WG-LD-002"]
    assert rc == 0 and len(ld) == 1 and ld[0]["severity"] == "warning", f
    assert "libwggone.so" in ld[0]["message"]
    assert "nothing in the wheel loads libplug.so through DT_NEEDED" in ld[0]["message"], ld
    # ld.so stops at the missing library: no undefined-symbol finding for gone().
    assert not [x for x in f if x["rule"] == "WG-LD-001"], f


# package, its __init__.py, whether `import pkg` must work with _fast unloadable
CASES = [
    ("reqpkg", b"from . import _fast\n", False, None),
    ("optpkg", b"try:\n    from . import _fast\nexcept ImportError:\n    _fast = None\n", True,
     "imported only under try/except, at optpkg/__init__.py:2"),
    ("lazypkg", b'"""Docs.\nimport nothing_here\n"""\n\ndef go():\n    from . import _fast\n'
                b"    return _fast\n", True,
     "imported lazily, inside a function, at lazypkg/__init__.py:6"),
    ("condpkg", b"import os\nif os.environ.get('WG_FAST'):\n    from . import _fast\n", True,
     "imported only under a condition, at condpkg/__init__.py:3"),
    ("nevpkg", b"VALUE = 1\n", True, "never imported by the package's own code"),
    # A try whose handler raises again guards nothing; one catching another exception neither.
    ("rerpkg", b"try:\n    from . import _fast\nexcept ImportError:\n    raise\n", False, None),
    ("attrpkg", b"try:\n    from . import _fast\nexcept AttributeError:\n    pass\n", False, None),
    # Imported unconditionally by a submodule the package imports: required.
    ("chainpkg", b"from .core import thing\n", False, None),
    # Multi-line parenthesised import list.
    ("parenpkg", b"from . import (\n    helpers,\n    _fast,\n)\n", False, None),
]


@test
def how_the_package_imports_an_extension_decides_error_or_warning():
    suffix, tag = py_info()
    d = os.path.join(TMP, "opt")
    os.makedirs(d, exist_ok=True)
    gone = cc(os.path.join(d, "libwgabsent.so"), "int absent(void) { return 1; }\n",
              "-Wl,-soname,libwgabsent.so")
    fast = cc(os.path.join(d, "_fast" + suffix), INIT % "_fast" +
              "extern int absent(void);\nint f(void) { return absent(); }\n", "-L" + d,
              "-lwgabsent")
    os.unlink(gone)
    data = open(fast, "rb").read()
    for pkg, init, works, how in CASES:
        files = {pkg + "/__init__.py": init, pkg + "/_fast" + suffix: data}
        if pkg == "chainpkg":
            files[pkg + "/core.py"] = b"from ._fast import f as thing\n"
        if pkg == "parenpkg":
            files[pkg + "/helpers.py"] = b""
        whl = wheel(os.path.join(d, "%s-1.0-%s-%s-linux_x86_64.whl" % (pkg, tag, tag)), files, tag)
        site = install(whl, pkg)
        err = real_import(site, pkg)
        assert (err is None) == works, (pkg, err)
        if not works:
            assert "libwgabsent.so" in err, (pkg, err)
        rc, f = check(whl)
        ld = [x for x in f if x["rule"] == "WG-LD-002"]
        assert len(ld) == 1 and ld[0]["member"] == pkg + "/_fast" + suffix, (pkg, f)
        # The verdict is the real import's: blocking exactly when `import pkg` fails.
        assert (rc == 0) == works, (pkg, rc, err, f)
        assert ld[0]["severity"] == ("warning" if works else "error"), (pkg, ld)
        if how:
            assert how in ld[0]["message"], (pkg, ld[0]["message"])
            assert "`import %s` works without it" % pkg in ld[0]["message"] or \
                   "`import %s` works" % pkg in ld[0]["message"], ld[0]["message"]


@test
def torch_comes_first_only_for_packages_that_use_it():
    """In the torch 2.11 stand-in, `import torch` loads libcudart.so.13 RTLD_GLOBAL. An
    extension that calls cudaGetDeviceCount without linking libcudart (a common slip) gets the
    symbol from that global scope: it loads after `import torch` and fails with "undefined
    symbol" in a fresh interpreter. So it is fine in a package that imports torch, and an
    error in one that does not."""
    env = os.path.join(FIX, "envs", "torch211")
    if not os.path.isdir(env):
        raise Missing("no torch stand-in in %s" % env)
    site = [os.path.join(r, x) for r, ds, _ in os.walk(env) for x in ds if x == "site-packages"]
    if not site:
        raise Skip("no site-packages in the stand-in")
    d = os.path.join(TMP, "torchfirst")
    os.makedirs(d, exist_ok=True)
    ext = cc(os.path.join(d, "_k.cpython-312-x86_64-linux-gnu.so"), INIT % "_k" +
             "extern int cudaGetDeviceCount(int *);\nint k(void) { int n; return cudaGetDeviceCount(&n); }\n")
    data = open(ext, "rb").read()
    uses = wheel(os.path.join(d, "usestorch-1.0-cp312-cp312-linux_x86_64.whl"),
                 {"usestorch/__init__.py": b"import torch\nfrom . import _k\n",
                  "usestorch/_k.cpython-312-x86_64-linux-gnu.so": data}, "cp312-cp312-linux_x86_64")
    plain = wheel(os.path.join(d, "notorch-1.0-cp312-cp312-linux_x86_64.whl"),
                  {"notorch/__init__.py": b"from . import _k\n",
                   "notorch/_k.cpython-312-x86_64-linux-gnu.so": data}, "cp312-cp312-linux_x86_64")
    run = lambda w: subprocess.run([WG, "check", "--no-config", "--format", "json", "--env",
                                    site[0], w], capture_output=True, timeout=600)
    a, b = json.loads(run(uses).stdout), json.loads(run(plain).stdout)
    la = [x for x in a["inputs"][0]["findings"] if x["rule"].startswith("WG-LD")]
    lb = [x for x in b["inputs"][0]["findings"] if x["rule"] == "WG-LD-001"]
    assert not la, la
    assert len(lb) == 1 and lb[0]["symbol"] == "cudaGetDeviceCount", lb
    assert lb[0]["severity"] == "error", lb


if __name__ == "__main__":
    rc = main()
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

#!/usr/bin/env python3
"""The real-environment truth harness (bench/real-env/truth.py) without a GPU: a venv of
Debian's python3 with small distributions built here with g++ and installed by pip from real
wheels (dist-info, RECORD): one that works (an extension and the library it needs from
<pkg>.libs), one whose extension needs a library that is not there (a blocking native load
failure), one that works with an optional extension and a ctypes plugin that cannot load
(optional native load failures), a stale top_level.txt name, a `.abi3.so` library without
PyInit (torchaudio's lib/ kind), an extension whose PyInit raises and one no import reaches
(its parent is a module, not a package) while their dlopen works (Python-level failures), one
whose package imports its extension under try/except and raises again (blocking, though it
looks optional), one whose extension fails its own initialisation (Python-level, and it breaks
the package); and pure ones: one that imports, a hollow one (its __init__ imports a _C no file
provides), one that imports its missing _C only inside a function (the finding is false), one
whose data file changes after install, one whose bytecode cache is removed after install, one
that imports a dependency that is not installed (a miss). The harness must pack each back into
a wheel of the files as installed, judge each both ways (audit in place, check of the repack),
execute each error's claim, list changed files apart, find reality, and count what wheelgate
got right and wrong: its counts are recomputed here from wheelgate's own output (check of the
same wheels, audit of the same venv) and reality measured here.

Usage: test_truth.py WHEELGATE TRUTH_PY GXX [PYTHON]
"""
import atexit
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from harness import Missing, main, test  # noqa: E402

WG, TRUTH = [os.path.abspath(a) for a in sys.argv[1:3]]
GXX = sys.argv[3]
PY = sys.argv[4] if len(sys.argv) > 4 else "/usr/bin/python3"
TMP = tempfile.mkdtemp(prefix="wg-truth-")
atexit.register(shutil.rmtree, TMP, True)
STATE = {}

# An extension module without Python.h: PyModuleDef's layout is part of the stable ABI.
EXT = r"""
#include <stddef.h>
extern "C" {
struct wg_obj { ptrdiff_t refcnt; void *type; };
struct wg_def { wg_obj base; void *init; ptrdiff_t index; void *copy; const char *name;
		const char *doc; ptrdiff_t size; void *methods, *slots, *traverse, *clear, *free_; };
void *PyModule_Create2(wg_def *, int);
%(decl)s
static wg_def def = {{1, 0}, 0, 0, 0, "%(name)s", 0, -1, 0, 0, 0, 0, 0};
__attribute__((visibility("default"))) void *PyInit_%(stem)s(void)
{
	%(body)s
	return PyModule_Create2(&def, 1013);
}
}
"""


def gxx(out, src, *args):
    path = out + ".cpp"
    with open(path, "w") as f:
        f.write(src)
    p = subprocess.run([GXX, "-shared", "-fPIC", "-O1", "-o", out, path, *args],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return open(out, "rb").read()


def make_wheel(dirpath, name, version, tag, files, top_level=True):
    di = "%s-%s.dist-info" % (name, version)
    files = dict(files)
    files[di + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" %
                               (name, version)).encode()
    files[di + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: %s\n%s" % (
        "true" if tag.endswith("any") else "false",
        "".join("Tag: %s\n" % t for t in expand(tag)))).encode()
    if top_level:
        names = [name] if top_level is True else top_level
        files[di + "/top_level.txt"] = "".join(n + "\n" for n in names).encode()
    rows = ["%s,sha256=%s,%d" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest())
                                 .rstrip(b"=").decode(), len(d)) for n, d in files.items()]
    rows.append(di + "/RECORD,,")
    path = os.path.join(dirpath, "%s-%s-%s.whl" % (name, version, tag))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(n, d)
        z.writestr(di + "/RECORD", "\n".join(rows) + "\n")
    return path


def expand(tag):
    py, abi, plat = (x.split(".") for x in tag.split("-"))
    return ["%s-%s-%s" % (a, b, c) for a in py for b in abi for c in plat]


def setup():
    """The venv with the distributions installed, and the harness's output on it (built
    once; a failure fails every test that needs it)."""
    if "failed" in STATE:
        raise STATE["failed"]
    if "out" not in STATE:
        try:
            build()
        except Exception as e:
            STATE["failed"] = e
            raise
    return STATE


def build():
    if not os.path.exists(PY):
        raise Missing("no %s" % PY)
    venv = os.path.join(TMP, "venv")
    # A venv with its own pip (ensurepip: python3-venv), as test_pip.py makes them.
    p = subprocess.run([PY, "-m", "venv", venv], capture_output=True, text=True)
    if p.returncode != 0:
        raise Missing("python3 -m venv failed (install python3-venv): " + p.stderr[-300:])
    vpy = os.path.join(venv, "bin", "python")
    sfx, ver = subprocess.run([vpy, "-c", "import sysconfig,sys;print(sysconfig.get_config_var("
                               "'EXT_SUFFIX'));print('%d%d'%sys.version_info[:2])"],
                              capture_output=True, text=True, check=True).stdout.split()
    tag = "cp%s-cp%s-manylinux_2_17_x86_64.manylinux2014_x86_64" % (ver, ver)
    b = os.path.join(TMP, "build")
    wd = os.path.join(TMP, "wheels")
    os.makedirs(b)
    os.makedirs(wd)
    helper = gxx(os.path.join(b, "libwgthelper.so"), 'extern "C" int wgt_helper(void) { return 42; }')
    gxx(os.path.join(b, "libwgtmissing.so"), 'extern "C" int wgt_missing(void) { return 7; }')

    def ext(pkg, stem, decl, body, *libs, suffix=sfx):
        name = "%s.%s" % (pkg, stem)
        return gxx(os.path.join(b, name + suffix), EXT % {"decl": decl, "name": name,
                                                        "stem": stem, "body": body}, *libs)

    uses = ('extern "C" int %s(void);', "if (%s() != %d) return 0;")
    good = ext("wgtruth_good", "_ext", uses[0] % "wgt_helper", uses[1] % ("wgt_helper", 42),
               "-L" + b, "-lwgthelper", "-Wl,-rpath,$ORIGIN/../wgtruth_good.libs")
    # A module with the plain .so suffix: only PyInit__plain tells it from a library.
    plain = ext("wgtruth_good", "_plain", "", "", suffix=".so")
    broken = ext("wgtruth_broken", "_ext", uses[0] % "wgt_missing", uses[1] % ("wgt_missing", 7),
                 "-L" + b, "-lwgtmissing")
    opt = ext("wgtruth_plugin", "_opt", uses[0] % "wgt_missing", uses[1] % ("wgt_missing", 7),
              "-L" + b, "-lwgtmissing")
    plugin = gxx(os.path.join(b, "libwgtplugin.so"),
                 'extern "C" int wgt_missing(void);\n'
                 'extern "C" int wgt_plugin(void) { return wgt_missing(); }', "-L" + b,
                 "-lwgtmissing")
    initfail = ext("wgtruth_initfail", "_ext", "", "return 0;")
    guarded = ext("wgtruth_guarded", "_ext", uses[0] % "wgt_missing", uses[1] % ("wgt_missing", 7),
                  "-L" + b, "-lwgtmissing")
    # PyInit raising: the loader loaded it, Python refused it.
    raising = ext("wgtruth_plugin", "_raise",
                  "extern void *PyExc_RuntimeError; void PyErr_SetString(void *, const char *);",
                  'PyErr_SetString(PyExc_RuntimeError, "wgtruth: refused"); return 0;')
    # A sound module that no import reaches: wgtruth_plugin.shadow is shadow.py, no package.
    shadowed = ext("wgtruth_plugin.shadow", "_mod", "", "")
    # An extension suffix on a library that defines no PyInit_: torch.ops.load_library's kind.
    ops = gxx(os.path.join(b, "_ops.abi3.so"), 'extern "C" int wgt_ops(void) { return 1; }')
    wheels = {
        "wgtruth_good": {"wgtruth_good/__init__.py": b"from . import _ext, _plain\n",
                         "wgtruth_good/_ext" + sfx: good,
                         "wgtruth_good/_plain.so": plain,
                         "wgtruth_good.libs/libwgthelper.so": helper},
        "wgtruth_broken": {"wgtruth_broken/__init__.py": b"from . import _ext\n",
                           "wgtruth_broken/_ext" + sfx: broken},
        "wgtruth_plugin": {"wgtruth_plugin/__init__.py":
                           b"try:\n    from . import _opt\nexcept ImportError:\n    _opt = None\n",
                           "wgtruth_plugin/_opt" + sfx: opt,
                           "wgtruth_plugin/plugins/libwgtplugin.so": plugin,
                           "wgtruth_plugin/_raise" + sfx: raising,
                           "wgtruth_plugin/shadow.py": b"",
                           "wgtruth_plugin/shadow/_mod" + sfx: shadowed,
                           "wgtruth_plugin/lib/_ops.abi3.so": ops},
        # Imported under try/except, yet the handler raises again: the failure blocks the
        # import, and its error names the module rather than repeating the loader's words.
        "wgtruth_guarded": {"wgtruth_guarded/__init__.py":
                            b"try:\n    from . import _ext\nexcept ImportError:\n"
                            b"    raise RuntimeError('wgtruth_guarded._ext is unavailable')\n",
                            "wgtruth_guarded/_ext" + sfx: guarded},
        "wgtruth_initfail": {"wgtruth_initfail/__init__.py": b"from . import _ext\n",
                             "wgtruth_initfail/_ext" + sfx: initfail},
    }
    # wgtruth_good has no top_level.txt: its top-level packages come from RECORD, where
    # wgtruth_good.libs/ is no package.
    # wgtruth_plugin's top_level.txt is stale: _wgtruth_gone is no file of it (xxhash 4.0.1's
    # _xxhash).
    tops = {"wgtruth_good": False, "wgtruth_plugin": ["wgtruth_plugin", "_wgtruth_gone"]}
    paths = {n: make_wheel(wd, n, "1.0", tag, f, top_level=tops.get(n, True))
             for n, f in wheels.items()}
    # Pure distributions: one that imports; a hollow one (its __init__ imports a _C that no
    # file provides: it really fails); one whose missing _C is imported only inside a
    # function (the package imports: the finding is false); one whose data file changes
    # after install; one whose bytecode cache (listed in RECORD: pip compiled it) is
    # removed after install; one that imports a dependency that is not installed (a miss:
    # no finding, and it fails); one installed in a directory a .pth file adds to sys.path,
    # which Python imports from and wheelgate audit does not read (not audited).
    pure = {
        "wgtruth_pure": {"wgtruth_pure/__init__.py": b""},
        "wgtruth_hollow": {"wgtruth_hollow/__init__.py": b"from . import _C\n"},
        "wgtruth_lazy": {"wgtruth_lazy/__init__.py": b"from . import ops\n",
                         "wgtruth_lazy/ops.py": b"def kernel():\n    from . import _C\n"
                                                b"    return _C\n"},
        "wgtruth_data": {"wgtruth_data/__init__.py": b"",
                         "wgtruth_data/data.txt": b"as built\n"},
        "wgtruth_cache": {"wgtruth_cache/__init__.py": b"VALUE = 1\n"},
        "wgtruth_missdep": {"wgtruth_missdep/__init__.py": b"import wgtruth_not_installed\n"},
        "wgtruth_elsewhere": {"wgtruth_elsewhere/__init__.py": b""},
    }
    for n, f in pure.items():
        paths[n] = make_wheel(wd, n, "1.0", "py3-none-any", f)
    pipenv = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
    pip = [vpy, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check"]
    p = subprocess.run(pip + ["--no-compile"] + [v for n, v in paths.items()
                                                  if n not in ("wgtruth_cache",
                                                               "wgtruth_elsewhere")],
                       capture_output=True, text=True, timeout=300, env=pipenv)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-1000:]
    elsewhere = os.path.join(TMP, "elsewhere")
    p = subprocess.run(pip + ["--no-compile", "--target", elsewhere, paths["wgtruth_elsewhere"]],
                       capture_output=True, text=True, timeout=300, env=pipenv)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-1000:]
    # pip compiles wgtruth_cache's module and lists the .pyc in RECORD.
    p = subprocess.run(pip + [paths["wgtruth_cache"]], capture_output=True, text=True,
                       timeout=300, env=pipenv)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-1000:]
    # Only the distributions made here: the venv's own pip and setuptools go.
    p = subprocess.run([vpy, "-m", "pip", "uninstall", "-y", "pip", "setuptools"],
                       capture_output=True, text=True, timeout=300, env=pipenv)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-1000:]
    site = subprocess.run([vpy, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    record = open(os.path.join(site, "wgtruth_cache-1.0.dist-info", "RECORD")).read()
    pyc = re.findall(r"^(wgtruth_cache/__pycache__/[^,]+\.pyc),", record, re.M)
    assert pyc, record
    for c in pyc:
        os.unlink(os.path.join(site, c))
    with open(os.path.join(site, "wgtruth_elsewhere.pth"), "w") as f:
        f.write(elsewhere + "\n")
    with open(os.path.join(site, "wgtruth_data", "data.txt"), "wb") as f:
        f.write(b"changed after install\n")
    out = os.path.join(TMP, "out")
    p = subprocess.run([PY, TRUTH, "--wheelgate", WG, "--python", vpy, "--out", out,
                        "--jobs", "2", "--timeout", "120"], capture_output=True, text=True,
                       timeout=600, env=dict(os.environ, XDG_CACHE_HOME=os.path.join(TMP, "cache")))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    STATE.update(out=out, vpy=vpy, sfx=sfx, wheels=wheels, pure=pure, paths=paths,
                 stdout=p.stdout, site=site, pyc=pyc,
                 doc=json.load(open(os.path.join(out, "truth.json"))))
    return STATE


def by_name():
    return {w["name"]: w for w in setup()["doc"]["wheels"]}


@test
def every_distribution_with_record_is_packed():
    s = setup()
    assert sorted(by_name()) == sorted(s["paths"]), sorted(by_name())
    assert sorted(os.listdir(os.path.join(s["out"], "wheels"))) == \
        sorted(os.path.basename(p) for p in s["paths"].values())
    kinds = {n: w["kind"] for n, w in by_name().items()}
    assert kinds == dict([(n, "native") for n in s["wheels"]] +
                         [(n, "pure") for n in s["pure"]]), kinds


@test
def each_wheel_is_packed_back_as_it_is_installed():
    """Each wheel holds the files as they are now (a file changed after install with its
    current bytes and a RECORD row that matches them); a bytecode cache RECORD lists but
    that is gone is not packed."""
    s = setup()
    for name in s["paths"]:
        got = os.path.join(s["out"], "wheels", os.path.basename(s["paths"][name]))
        with zipfile.ZipFile(s["paths"][name]) as orig, zipfile.ZipFile(got) as z:
            assert z.testzip() is None
            names = set(z.namelist())
            assert names == set(orig.namelist()), (name, names ^ set(orig.namelist()))
            for n in names:
                if n == "wgtruth_data/data.txt":
                    assert z.read(n) == b"changed after install\n", z.read(n)
                elif not n.endswith("/RECORD"):
                    assert z.read(n) == orig.read(n), (name, n)
            rec = z.read("%s-1.0.dist-info/RECORD" % name).decode().splitlines()
            rows = dict((r.split(",")[0], r.split(",")[1:]) for r in rec)
            assert set(rows) == names, (name, set(rows) ^ names)
            for n, (h, size) in rows.items():
                if n.endswith("/RECORD"):
                    assert (h, size) == ("", ""), (n, h, size)
                    continue
                data = z.read(n)
                assert int(size) == len(data), (n, size)
                assert h == "sha256=" + base64.urlsafe_b64encode(
                    hashlib.sha256(data).digest()).rstrip(b"=").decode(), n


@test
def reality_is_measured_in_fresh_processes():
    w = by_name()
    sfx = setup()["sfx"]
    good = w["wgtruth_good"]
    assert good["reality"]["works"] and not good["reality"]["failed_members"], good["reality"]
    assert list(good["top_level"]) == ["wgtruth_good"], good["top_level"]
    m = good["members"]["wgtruth_good/_ext" + sfx]
    assert m["kind"] == "module" and m["module"] == "wgtruth_good._ext" and m["result"]["ok"]
    m = good["members"]["wgtruth_good/_plain.so"]
    assert m["kind"] == "module" and m["module"] == "wgtruth_good._plain" and m["result"]["ok"], m
    lib = good["members"]["wgtruth_good.libs/libwgthelper.so"]
    # The helper is seen loaded by the import that needs it, in its real scope.
    assert lib["kind"] == "library" and lib["result"]["ok"], lib
    assert lib["label"].startswith("library (loaded by import wgtruth_good"), lib["label"]

    broken = w["wgtruth_broken"]
    assert not broken["reality"]["works"] and broken["reality"]["broken_by"] == "native"
    assert "libwgtmissing.so" in broken["reality"]["top_level_failed"]["wgtruth_broken"]
    assert broken["reality"]["failed_members"] == ["wgtruth_broken/_ext" + sfx]
    assert broken["members"]["wgtruth_broken/_ext" + sfx]["result"]["level"] == "native"
    assert [x["blocking"] for x in broken["compare"]["load_failures"]] == [True]

    plugin = w["wgtruth_plugin"]
    assert plugin["reality"]["works"], plugin["reality"]
    # Optional native failures: the package imports without them.
    assert sorted(plugin["reality"]["failed_members"]) == \
        ["wgtruth_plugin/_opt" + sfx, "wgtruth_plugin/plugins/libwgtplugin.so"]
    assert [x["blocking"] for x in plugin["compare"]["load_failures"]] == [False, False]
    p = plugin["members"]["wgtruth_plugin/plugins/libwgtplugin.so"]
    assert p["label"] == "library (dlopen alone)" and "libwgtmissing.so" in p["result"]["error"]
    opt = plugin["members"]["wgtruth_plugin/_opt" + sfx]["result"]
    assert opt["level"] == "native" and "libwgtmissing.so" in opt["error"], opt
    # Python-level failures: the import fails, the loader loads the file.
    assert sorted(plugin["reality"]["python_failures"]) == \
        ["wgtruth_plugin/_raise" + sfx, "wgtruth_plugin/shadow/_mod" + sfx]
    r = plugin["members"]["wgtruth_plugin/_raise" + sfx]["result"]
    assert r["level"] == "python" and r["dlopen"]["ok"], r
    assert r["error"].startswith("RuntimeError: wgtruth: refused"), r
    r = plugin["members"]["wgtruth_plugin/shadow/_mod" + sfx]["result"]
    assert r["level"] == "python" and r["dlopen"]["ok"], r
    assert r["error"].startswith("ModuleNotFoundError"), r
    # top_level.txt's stale name is a note, never imported.
    assert list(plugin["top_level"]) == ["wgtruth_plugin"], plugin["top_level"]
    assert plugin["stale_top_level"] == ["_wgtruth_gone"]
    assert any("_wgtruth_gone" in n for n in plugin["notes"]), plugin["notes"]
    # An .abi3.so without PyInit_ is a library, loaded by dlopen.
    ops = plugin["members"]["wgtruth_plugin/lib/_ops.abi3.so"]
    assert ops["kind"] == "library" and ops["module"] is None and ops["result"]["ok"], ops

    guarded = w["wgtruth_guarded"]
    assert not guarded["reality"]["works"] and guarded["reality"]["broken_by"] == "native"
    assert [(x["member"], x["blocking"]) for x in guarded["compare"]["load_failures"]] == \
        [("wgtruth_guarded/_ext" + sfx, True)], guarded["compare"]

    initfail = w["wgtruth_initfail"]
    assert not initfail["reality"]["works"] and initfail["reality"]["broken_by"] == "python"
    r = initfail["members"]["wgtruth_initfail/_ext" + sfx]["result"]
    assert "SystemError" in r["error"] and r["level"] == "python" and r["dlopen"]["ok"], r
    assert initfail["reality"]["failed_members"] == []
    assert initfail["reality"]["python_failures"] == ["wgtruth_initfail/_ext" + sfx]


def record_rows(dist_info):
    import csv
    with open(os.path.join(dist_info, "RECORD"), newline="") as f:
        return [r for r in csv.reader(f) if r]


@test
def files_changed_after_install_are_listed_apart():
    s = setup()
    w = by_name()
    # Reality, measured here: each RECORD row's hash against the installed file.
    want = {}
    for name, rec in w.items():
        changed, gone_cache = [], []
        for row in record_rows(rec["dist_info"]):
            path = os.path.join(os.path.dirname(rec["dist_info"]), row[0])
            if not os.path.exists(path):
                assert "/__pycache__/" in row[0], row
                gone_cache.append(row[0])
                continue
            if len(row) < 2 or not row[1].startswith("sha256="):
                continue        # pip lists the .pyc it compiles without a hash
            h = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(
                open(path, "rb").read()).digest()).rstrip(b"=").decode()
            if h != row[1]:
                changed.append(row[0])
        want[name] = (changed, gone_cache)
        assert (rec["changed_files"], rec["gone_cache"]) == want[name], (name, rec)
        assert rec["removed_files"] == [], (name, rec["removed_files"])
    assert want["wgtruth_data"] == (["wgtruth_data/data.txt"], [])
    assert want["wgtruth_cache"] == ([], s["pyc"])
    assert sum(1 for c, g in want.values() if c or g) == 2, want
    assert os.path.dirname(w["wgtruth_elsewhere"]["dist_info"]) != s["site"]
    table = open(os.path.join(s["out"], "table.md")).read()
    sec = table.split("\n## Files changed after install\n")[1].split("\n## ")[0]
    assert "| wgtruth_data 1.0 | pip | 1 | 0 | 0 | wgtruth_data/data.txt |" in sec, sec
    assert "| wgtruth_cache 1.0 | pip | 0 | 0 | %d | - |" % len(s["pyc"]) in sec, sec
    m = re.search(r"^Files changed after install .*: (\d+) in (\d+) distributions .*"
                  r"are gone .*: (\d+) in (\d+) distributions", table, re.M)
    assert m and m.groups() == ("1", "1", str(len(s["pyc"])), "1"), m and m.groups()


def audit_report():
    s = setup()
    if "audit" not in s:
        p = subprocess.run([WG, "audit", "--no-config", "--gpu", "auto", "--format", "json",
                            s["vpy"]], capture_output=True, timeout=300,
                           env=dict(os.environ, XDG_CACHE_HOME=os.path.join(TMP, "cache")))
        assert p.returncode in (0, 1), p.stderr
        s["audit"] = {i["path"].rsplit(" ", 1)[0]: i for i in json.loads(p.stdout)["inputs"]}
    return s["audit"]


def run_py(code):
    p = subprocess.run([setup()["vpy"], "-c", code], capture_output=True, text=True,
                       timeout=120, cwd=TMP, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    return p.returncode == 0, p.stderr.strip().splitlines()[-1:] or [""]


def errors(rec, view):
    return [f for f in rec[view]["findings"] if f["severity"] == "error"]


@test
def each_error_claim_is_executed_in_both_views():
    w = by_name()
    aud = audit_report()
    for name, rec in w.items():
        # The audit view is wheelgate audit's own answer for the installed distribution;
        # one audit does not see is not audited, and said so.
        if name not in aud:
            p = subprocess.run([WG, "audit", "--no-config", "--only", name, setup()["vpy"]],
                               capture_output=True, text=True, timeout=300)
            assert p.returncode == 2 and "no installed distribution" in p.stderr, p.stderr
            assert rec["audit"]["verdict"] == "not audited", rec["audit"]
            assert "audit dropped it" in rec["audit"]["reason"], rec["audit"]
            continue
        assert rec["audit"]["verdict"] == aud[name]["verdict"], (name, rec["audit"])
        assert len(rec["audit"]["findings"]) == len(aud[name]["findings"]), name
        for view in ("audit", "check"):
            if rec[view]["verdict"] not in ("pass", "fail"):
                continue
            for f in errors(rec, view):
                assert f["truth"] in ("true", "false", "changed", "unverified"), f
                if f["claim"] == "load":
                    # A loader claim holds exactly when the member fails to load natively.
                    arc = f["member"]
                    if arc in rec["members"]:
                        assert (f["truth"] == "true") == (arc in rec["reality"]["failed_members"]), f

    # The hollow one: importing it fails for want of _C, as the finding says.
    ok, err = run_py("import wgtruth_hollow")
    assert not ok and "_C" in err[0], err
    assert not w["wgtruth_hollow"]["reality"]["works"]
    for view in ("audit", "check"):
        hol = [f for f in errors(w["wgtruth_hollow"], view) if f["rule"] == "WG-HOL-001"]
        assert [(f["claim"], f["truth"]) for f in hol] == [("import", "true")], (view, hol)
        assert "import wgtruth_hollow fails" in hol[0]["why"], hol
        assert w["wgtruth_hollow"][view]["misses"] == [], view

    # The lazy one: the module holding the statement imports; _C is missing all the same.
    assert run_py("import wgtruth_lazy.ops")[0]
    ok, err = run_py("import wgtruth_lazy._C")
    assert not ok and "wgtruth_lazy._C" in err[0], err
    assert w["wgtruth_lazy"]["reality"]["works"]
    # wheelgate's import model knows a function body does not run at import: no error (the
    # harness's judging of such a claim as false is tested on made-up findings in
    # claims_are_parsed_and_judged).
    for view in ("audit", "check"):
        hol = [f for f in errors(w["wgtruth_lazy"], view) if f["rule"] == "WG-HOL-001"]
        assert hol == [], (view, hol)

    # The changed data file: the installed view's RECORD error names a changed file; the
    # repacked wheel's RECORD is its current bytes', and check says nothing of it.
    rec = w["wgtruth_data"]
    assert rec["reality"]["works"]
    for f in errors(rec, "audit"):
        if f["member"] == "wgtruth_data/data.txt":
            assert f["truth"] == "changed", f
    assert not [f for f in rec["check"]["findings"] if f["rule"].startswith("WG-REC")], rec
    # The gone bytecode cache: whatever an error says of it is false.
    rec = w["wgtruth_cache"]
    assert rec["reality"]["works"]
    for view in ("audit", "check"):
        for f in errors(rec, view):
            assert f["truth"] == "false", f
        assert rec[view]["misses"] == []

    # The missing dependency: it fails, and the import model says so (a module nothing in
    # the environment provides, the distribution declaring no dependency): true, no miss.
    ok, err = run_py("import wgtruth_missdep")
    assert not ok and "wgtruth_not_installed" in err[0], err
    for view in ("audit", "check"):
        rec = w["wgtruth_missdep"]
        hol = [f for f in errors(rec, view) if f["rule"] == "WG-HOL-001"]
        assert [(f["claim"], f["truth"]) for f in hol] == [("import", "true")], (view, hol)
        assert rec[view]["misses"] == [], rec[view]["misses"]
    for view in ("audit", "check"):
        rec = w["wgtruth_pure"]
        assert rec[view]["verdict"] == "pass" and rec[view]["misses"] == [], rec[view]
    # Outside audit's site directories: judged by check alone, and it imports.
    rec = w["wgtruth_elsewhere"]
    assert rec["check"]["verdict"] == "pass" and rec["reality"]["works"], rec
    assert "wgtruth_elsewhere" in [r["dropped"] for r in setup()["doc"]["audit_runs"]
                                   if r["dropped"]][0], setup()["doc"]["audit_runs"]


@test
def the_views_table_counts_each_claim():
    s = setup()
    w = by_name()
    aud = audit_report()
    table = open(os.path.join(s["out"], "table.md")).read()
    for view in ("audit", "check"):
        for label, kind in (("", None), (" (pure)", "pure"), (" (native)", "native")):
            recs = [r for n, r in w.items() if kind is None or r["kind"] == kind]
            c = dict.fromkeys(("pass", "fail", "nv", "fw", "errors", "true", "false", "changed",
                               "unverified", "fd", "mi", "mo", "md"), 0)
            for r in recs:
                # Verdicts and error counts from wheelgate's own output, run here.
                inp = aud.get(r["name"]) if view == "audit" else wheelgate(r["pack"]["wheel"])
                if inp is None:             # a distribution audit does not see
                    c["nv"] += 1
                    continue
                c[inp["verdict"]] += 1
                c["fw"] += inp["verdict"] == "fail" and bool(r["reality"]["works"])
                errs = [f for f in inp["findings"] if f["severity"] == "error"]
                c["errors"] += len(errs)
                assert len(errs) == len(errors(r, view)), (view, r["name"])
                for f in errors(r, view):
                    c[f["truth"]] += 1
                c["fd"] += any(f["truth"] == "false" for f in errors(r, view))
                ms = r[view].get("misses", [])
                c["mi"] += sum(1 for x in ms if not x.get("object"))
                c["mo"] += sum(1 for x in ms if x.get("object"))
                c["md"] += bool(ms)
            want = "| %s%s | %d | %d | %d | %d | %d | 0 | %d | %d | **%d** | %d | %d | %d | " \
                "**%d / %d** | %d |" % (view, label, len(recs), c["pass"], c["fail"], c["nv"],
                                       c["fw"],
                                       c["errors"], c["true"], c["false"], c["changed"],
                                       c["unverified"], c["fd"], c["mi"], c["mo"], c["md"])
            assert want in table, (want, [l for l in table.splitlines()
                                          if l.startswith("| %s%s |" % (view, label))])
    # The overall counts this environment must give, whatever today's wheelgate says of the
    # rest: the hollow import true in both views, the lazy one false in both, the missing
    # dependency missed in both.
    assert "| audit | %d | " % len(w) in table and \
        re.search(r"^\| audit \| \d+ \| \d+ \| \d+ \| 1 \|", table, re.M), "one not audited"
    for view in ("audit", "check"):
        hol = [(n, f["truth"]) for n, r in w.items() for f in errors(r, view)
               if f["rule"] == "WG-HOL-001"]
        # (the lazy _C is no error: the import model knows a function body is not run)
        assert sorted(hol) == [("wgtruth_hollow", "true"), ("wgtruth_missdep", "true")], hol
        rows = [l for l in table.splitlines() if l.startswith("| %s | WG-HOL-001 | error |" % view)]
        assert rows == ["| %s | WG-HOL-001 | error | import | 2 | 2 | **0** | 0 | 0 | 2 |" % view], rows
    fe = table.split("\n## False errors: the claim did not reproduce\n")[1].split("\n## ")[0]
    assert "WG-HOL-001" not in fe, fe


@test
def the_deadline_stops_everything_and_says_so():
    """--deadline reached before anything runs: no check, audit or probe runs, the harness
    still exits 0 and says what did not run; no distribution has a miss or a judged error."""
    s = setup()
    out = os.path.join(TMP, "out-deadline")
    p = subprocess.run([PY, TRUTH, "--wheelgate", WG, "--python", s["vpy"], "--out", out,
                        "--jobs", "2", "--deadline", "0.01"], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, XDG_CACHE_HOME=os.path.join(TMP, "cache")))
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.load(open(os.path.join(out, "truth.json")))
    n = len(s["paths"])
    nr = doc["meta"]["not_run"]
    assert nr["audits (distributions)"] == n and nr["checks"] == n, nr
    assert nr["top-level imports"] == sum(len(w["top_level"]) for w in doc["wheels"]) > 0, nr
    for w in doc["wheels"]:
        assert w["reality"]["works"] is None, w["name"]
        assert all(r["ok"] is None for r in w["top_level"].values()), w["top_level"]
        assert (w["audit"] or {}).get("verdict") in (None, "not run"), w["audit"]
        assert w["check"] is None and w["changed_unknown"], w["name"]
    table = open(os.path.join(out, "table.md")).read()
    assert "**Not run** (--deadline reached): audits (distributions) %d, checks %d" % (n, n) \
        in table, table[:3000]
    assert "| audit | %d | 0 | 0 | %d | 0 | 0 | 0 | 0 | **0** |" % (n, n) in table


def load_truth():
    import importlib.util
    spec = importlib.util.spec_from_file_location("truth", TRUTH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@test
def claims_are_parsed_and_judged():
    """The judgement on findings and probe results made up here: each outcome of an import
    claim, a message that names no module, the RECORD claims in both views."""
    t = load_truth()
    msg = ("pkg/sub.py:3 imports pkg._C, a compiled module this wheel does not contain (it "
           "has no compiled object at all): the import fails with ...")
    c = t.parse_import_claim({"message": msg, "member": "pkg/sub.py", "file": None})
    assert c == {"module": "pkg._C", "file": "pkg/sub.py", "line": "3",
                 "container": "pkg.sub"}, c
    c2 = t.parse_import_claim({"message": msg.replace("pkg/sub.py", "pkg/__init__.py"),
                               "file": "pkg/__init__.py", "line": 3})
    assert c2["container"] == "pkg" and c2["line"] == 3, c2
    assert t.parse_import_claim({"message": msg.replace("pkg/sub.py", "pkg/__main__.py"),
                                 "file": "pkg/__main__.py"})["container"] is None
    assert t.parse_import_claim({"message": "something else entirely"}) is None
    assert t.parse_import_claim({"message": "a.py:1 imports 1bad, x"}) is None

    def probe(container=None, module=None):
        out = {}
        if container is not None:
            out["container"] = container
        if module is not None:
            out["module"] = module
        return {"ok": True, "out": out}
    missing = {"ok": False, "type": "ModuleNotFoundError", "name": "pkg._C",
               "error": "ModuleNotFoundError: No module named 'pkg._C'"}
    cannot = {"ok": False, "type": "ImportError", "name": "pkg",
              "error": "ImportError: cannot import name '_C' from 'pkg'"}
    other_name = {"ok": False, "type": "ImportError", "name": "pkg",
                  "error": "ImportError: cannot import name 'other' from 'pkg'"}
    other = {"ok": False, "type": "RuntimeError", "name": None, "error": "RuntimeError: x"}
    cases = [(probe(missing), "true"), (probe(cannot), "true"),
             (probe(other_name), "unverified"), (probe(other), "unverified"),
             (probe({"ok": True}, missing), "false"), (probe({"ok": True}, {"ok": True}), "false"),
             (probe({"ok": True}, other), "false"), (probe({"ok": True}), "unverified"),
             ({"ok": None, "error": "not run"}, "unverified"), (None, "unverified")]
    for res, want in cases:
        got = t.judge_import_claim(c, res)
        assert got[0] == want, (res, got)
    assert t.judge_import_claim(c, probe({"ok": True}, missing))[1].startswith("lazy:")
    nocont = dict(c, container=None)
    assert t.judge_import_claim(nocont, probe(None, missing))[0] == "unverified"
    assert t.judge_import_claim(nocont, probe(None, {"ok": True}))[0] == "false"

    rec = {"changed_files": ["pkg/data.txt"], "removed_files": ["pkg/gone.py"],
           "_record": {"pkg/data.txt", "pkg/same.py"}}
    for view, member, rule, want in (
            ("audit", "pkg/__pycache__/m.cpython-311.pyc", "WG-WHL-002", "false"),
            ("audit", "pkg/data.txt", "WG-REC-001", "changed"),
            ("audit", "pkg/gone.py", "WG-WHL-002", "changed"),
            ("audit", "pkg/same.py", "WG-REC-001", "false"),
            ("audit", "pkg/unlisted.py", "WG-REC-003", "unverified"),
            ("check", "pkg/data.txt", "WG-REC-001", "false")):
        got = t.judge_record_claim(view, rec, {"rule": rule, "member": member})
        assert got[0] == want, (view, member, got)
    for rule, kind in (("WG-HOL-001", "import"), ("WG-LD-002", "load"), ("WG-GPU-002", "gpu"),
                       ("WG-REC-001", "record"), ("WG-TAG-007", "tag"), ("WG-TAG-004", "works")):
        assert t.claim_kind(rule) == kind, rule


def wheelgate(wheel):
    s = setup()
    p = subprocess.run([WG, "check", "--no-config", "--env", s["vpy"], "--gpu", "auto",
                        "--format", "json", wheel], capture_output=True, timeout=300,
                       env=dict(os.environ, XDG_CACHE_HOME=os.path.join(TMP, "cache")))
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)["inputs"][0]


def names(f, member):
    return f["member"] == member or member in f["message"]


@test
def the_table_counts_what_wheelgate_said():
    s = setup()
    w = by_name()
    c = dict.fromkeys(("false_err", "missed_wheels", "py_wheels", "failures", "blocking",
                       "by_error", "warned_opt", "missed", "warned_blk", "python"), 0)
    for name, rec in w.items():
        if rec["kind"] != "native":     # the native tables count the wheels with ELF files
            continue
        inp = wheelgate(rec["pack"]["wheel"])
        assert rec["check"]["verdict"] == inp["verdict"], (name, rec["check"]["verdict"])
        assert rec["check"]["counts"] == inp["counts"], name
        assert len(rec["check"]["findings"]) == len(inp["findings"]), name
        re_ = rec["reality"]
        works = re_["works"]
        assert rec["compare"]["false_error"] == (inp["verdict"] == "fail" and works), name
        native_broken = not works and re_["broken_by"] == "native"
        assert rec["compare"]["missed_wheel"] == (inp["verdict"] == "pass" and native_broken)
        c["false_err"] += inp["verdict"] == "fail" and works
        c["missed_wheels"] += inp["verdict"] == "pass" and native_broken
        c["py_wheels"] += inp["verdict"] == "pass" and re_["broken_by"] == "python"
        assert [x["member"] for x in rec["compare"]["load_failures"]] == re_["failed_members"]
        for x in rec["compare"]["load_failures"]:
            m = x["member"]
            err = any(f["severity"] == "error" and names(f, m) for f in inp["findings"])
            warn = any(f["severity"] == "warning" and names(f, m) for f in inp["findings"])
            assert x["missed"] == (not err and not warn), (name, x)
            assert x["warned_only_blocking"] == (x["blocking"] and not err and warn), (name, x)
            c["failures"] += 1
            c["blocking"] += x["blocking"]
            c["by_error"] += err
            c["warned_opt"] += not err and warn and not x["blocking"]
            c["missed"] += not err and not warn
            c["warned_blk"] += x["blocking"] and not err and warn
        assert [x["member"] for x in rec["compare"]["python_failures"]] == re_["python_failures"]
        c["python"] += len(re_["python_failures"])
    # A missing library is within a loader's reach: wheelgate names it.
    br = w["wgtruth_broken"]["compare"]["load_failures"]
    assert [x["missed"] for x in br] == [False], br
    assert c["failures"] == 4 and c["blocking"] == 2 and c["python"] == 3, c
    table = open(os.path.join(s["out"], "table.md")).read()
    assert table.strip() == s["stdout"].strip()

    def row(label, n=1):
        m = re.search(r"^\| (?:\*\*)?%s[^|]*\| (?:\*\*)?(\d+)(?: / (\d+))?" % re.escape(label),
                      table, re.M)
        assert m, label
        return int(m.group(1)) if n == 1 else (int(m.group(1)), int(m.group(2)))
    assert row("wheels checked") == 5
    assert row("wheels that import and run (reality") == 2
    assert row("of which hold a submodule that fails to import at the Python level") == 1
    assert row("false errors") == c["false_err"]
    assert row("broken wheels wheelgate passed**") == c["missed_wheels"]
    assert row("broken wheels wheelgate passed, broken at the Python level") == c["py_wheels"]
    assert row("native load failures (modules and libraries)") == c["failures"]
    assert row("native load failures: blocking / optional", 2) == \
        (c["blocking"], c["failures"] - c["blocking"])
    assert row("native load failures an error names") == c["by_error"]
    assert row("optional native load failures only a warning names") == c["warned_opt"]
    assert row("missed") == c["missed"]
    assert row("blocking failures with only a warning") == c["warned_blk"]
    assert row("Python-level import failures") == c["python"] == 3
    assert row("stale top_level.txt names") == 1
    # Python-level failures have their own table, never the native one.
    native = table.split("## Native load failures")[1].split("\n## ")[0]
    python = table.split("## Python-level import failures")[1].split("\n## ")[0]
    for m in ("_raise", "shadow/_mod", "wgtruth_initfail/_ext"):
        assert m in python and m not in native, m
    for m in ("wgtruth_plugin/_opt", "libwgtplugin.so", "wgtruth_broken/_ext",
              "wgtruth_guarded/_ext"):
        assert m in native and m not in python, m
    assert "| wgtruth_initfail 1.0 | %s |" % w["wgtruth_initfail"]["check"]["verdict"] in table
    assert "BROKEN (Python level): import wgtruth_initfail" in table


if __name__ == "__main__":
    sys.exit(main())

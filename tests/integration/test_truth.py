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
the package), and a pure one (not packed). The harness must pack each back into the wheel it came from, find
reality, and count what wheelgate got right and wrong: its counts are recomputed here from
wheelgate's own output on the same wheels.

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
    paths["wgtruth_pure"] = make_wheel(wd, "wgtruth_pure", "1.0", "py3-none-any",
                                       {"wgtruth_pure/__init__.py": b""})
    p = subprocess.run([vpy, "-m", "pip", "install", "--no-deps", "--no-index",
                        "--no-compile", "--disable-pip-version-check", *paths.values()],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PIP_CONFIG_FILE=os.devnull))
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-1000:]
    out = os.path.join(TMP, "out")
    p = subprocess.run([PY, TRUTH, "--wheelgate", WG, "--python", vpy, "--out", out,
                        "--jobs", "2", "--timeout", "120"], capture_output=True, text=True,
                       timeout=600, env=dict(os.environ, XDG_CACHE_HOME=os.path.join(TMP, "cache")))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    STATE.update(out=out, vpy=vpy, sfx=sfx, wheels=wheels, paths=paths, stdout=p.stdout,
                 doc=json.load(open(os.path.join(out, "truth.json"))))
    return STATE


def by_name():
    return {w["name"]: w for w in setup()["doc"]["wheels"]}


@test
def only_distributions_with_elf_files_are_packed():
    s = setup()
    assert sorted(by_name()) == sorted(s["wheels"]), sorted(by_name())
    assert sorted(os.listdir(os.path.join(s["out"], "wheels"))) == \
        sorted(os.path.basename(s["paths"][n]) for n in s["wheels"])


@test
def each_wheel_is_packed_back_as_it_was_built():
    s = setup()
    for name, files in s["wheels"].items():
        got = os.path.join(s["out"], "wheels", os.path.basename(s["paths"][name]))
        with zipfile.ZipFile(s["paths"][name]) as orig, zipfile.ZipFile(got) as z:
            assert z.testzip() is None
            names = set(z.namelist())
            assert names == set(orig.namelist()), (name, names ^ set(orig.namelist()))
            for n in names:
                if not n.endswith("/RECORD"):
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

#!/usr/bin/env python3
"""wheelgate for Python users (issue 15, point 7): `cmake --install` puts the binding and the
pip gate where the chosen interpreter imports them (Debian's python3, a venv, a non-Debian
python); the wheel built from the build tree (scripts/python-wheel.py) installs with pip and
works with no environment variable, `python -m wheelgate` runs the CLI, and the wheel passes
`wheelgate check` itself; the binding's API: __version__, py.typed, a string where a list is
meant is one item, one return type per function, errors that name keywords.

Usage: test_pypkg.py BUILD_DIR SOURCE_DIR FIXTURES
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

from harness import Missing, Skip, main, test  # noqa: E402

BUILD, SRC, FIX = [os.path.abspath(a) for a in sys.argv[1:4]]
WG = os.path.join(BUILD, "wheelgate")
W = os.path.join(FIX, "wheels")
HOLLOW = os.path.join(W, "hollow-1.0-py3-none-any.whl")
PURE = os.path.join(W, "purepkg-0.1-py3-none-any.whl")
DEBIAN = "/usr/bin/python3"
TMP = tempfile.mkdtemp(prefix="wg-pypkg-")
VERSION = None
_wheel = []


def clean_env(extra=None):
    """No WHEELGATE_LIB, no PYTHONPATH, no LD_LIBRARY_PATH: what a user has."""
    e = {k: v for k, v in os.environ.items()
         if k not in ("WHEELGATE_LIB", "PYTHONPATH", "LD_LIBRARY_PATH", "WG_PYTHON",
                      "PIP_CONFIG_FILE", "VIRTUAL_ENV")}
    e["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    e["WHEELGATE_PIP"] = "off"  # a gate enabled on this machine stays out of these installs
    e.update(extra or {})
    return e


def run(cmd, env=None, cwd="/", timeout=600):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env or clean_env(), cwd=cwd,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def version():
    global VERSION
    if VERSION is None:
        rc, out, err = run([WG, "--version"])
        assert rc == 0, err
        VERSION = out.split()[-1]
    return VERSION


def cmake_install(prefix, python, destdir=None):
    env = clean_env({"WG_PYTHON": python})
    if destdir:
        env["DESTDIR"] = destdir
    rc, out, err = run(["cmake", "--install", BUILD, "--prefix", prefix], env=env)
    assert rc == 0, (rc, out, err)
    return out


def found(root):
    """The directories under root that hold an installed wheelgate package."""
    out = []
    for d, dirs, files in os.walk(root):
        if os.path.basename(d) == "wheelgate" and "_installed.py" in files:
            out.append(os.path.dirname(d))
    return out


def sys_path(python):
    rc, out, err = run([python, "-c", "import sys, json; print(json.dumps(sys.path))"])
    assert rc == 0, err
    return [os.path.normpath(p) for p in json.loads(out) if p]


def venv(name, python=DEBIAN, pip=True):
    d = os.path.join(TMP, name)
    args = [python, "-m", "venv", d] + ([] if pip else ["--without-pip"])
    rc, out, err = run(args)
    if rc != 0:
        raise Missing("cannot make a venv with %s: %s" % (python, err.strip()[-300:]))
    return d, os.path.join(d, "bin", "python")


def non_debian_python():
    """A python that is not Debian's (no deb_system scheme): the one running the tests when
    it is pyenv's, else one of pyenv's."""
    cands = [sys.executable] + sorted(
        os.path.join(r, "bin", "python3") for base in [os.path.expanduser("~/.pyenv/versions")]
        if os.path.isdir(base) for r in [os.path.join(base, v) for v in os.listdir(base)])
    for py in cands:
        if not os.access(py, os.X_OK):
            continue
        rc, out, _ = run([py, "-c", "import sys, sysconfig; print(sys.version_info >= (3, 8) and"
                          " 'deb_system' not in sysconfig.get_scheme_names() and"
                          " sys.prefix == sys.base_prefix)"])
        if rc == 0 and out.strip() == "True":
            return os.path.realpath(py)
    return None


def need_fixtures():
    if not os.path.isfile(HOLLOW) or not os.path.isfile(PURE):
        raise Skip("no fixture wheels in %s (the build makes them)" % W)


@test
def debian_python_installs_where_it_imports():
    """Debian's python3: prefix /usr/local goes to /usr/local/lib/python3.X/dist-packages
    (not /usr/local/local/...), /usr to /usr/lib/python3/dist-packages; both on its sys.path.
    DESTDIR stands in for the real root."""
    if not os.access(DEBIAN, os.X_OK):
        raise Skip("no Debian python at %s" % DEBIAN)
    path = sys_path(DEBIAN)
    for prefix in ("/usr/local", "/usr"):
        dest = os.path.join(TMP, "destdir" + prefix.replace("/", "-"))
        cmake_install(prefix, DEBIAN, destdir=dest)
        sites = found(dest)
        assert len(sites) == 1, sites
        site = "/" + os.path.relpath(sites[0], dest)
        assert "/local/local/" not in site, site
        assert site in path, "%s is not on %s's sys.path %s" % (site, DEBIAN, path)
        want = "/usr/local/lib/python3." if prefix == "/usr/local" else "/usr/lib/python3/"
        assert site.startswith(want), site
        rec = open(os.path.join(sites[0], "wheelgate", "_installed.py")).read()
        assert "LIBRARY = '%s/lib" % prefix in rec and "CLI = '%s/bin/wheelgate'" % prefix in rec, rec
        assert os.path.isfile(os.path.join(sites[0], "wheelgate_pip", "__main__.py"))


@test
def a_venv_and_a_scratch_prefix_import_the_installed_binding():
    """cmake --install into a venv (prefix = the venv, WG_PYTHON = its python): its python
    imports wheelgate with no PYTHONPATH and no WHEELGATE_LIB, finds the venv's library and
    runs the CLI; a scratch prefix gets the posix_prefix layout."""
    need_fixtures()
    for name, base in (("venv-debian", DEBIAN), ("venv-other", non_debian_python())):
        if base is None:
            print("  note: no non-Debian python here: the second venv is skipped")
            continue
        d, py = venv(name, base, pip=False)
        cmake_install(d, py)
        rc, out, err = run([py, "-c", "import json, sys, wheelgate; r = wheelgate.check(sys.argv[1]);"
                            "print(json.dumps([wheelgate.library_path(), wheelgate.__file__,"
                            " r.verdict, [f.rule for f in r.findings]]))", HOLLOW])
        assert rc == 0, (name, err)
        lib, mod, verdict, rules = json.loads(out)
        assert lib == os.path.join(d, "lib", "libwheelgate.so.0"), (name, lib)
        assert mod.startswith(d + "/lib/python3."), (name, mod)
        assert verdict == "fail" and "WG-HOL-001" in rules, (name, verdict, rules)
        rc, out, err = run([py, "-m", "wheelgate", "--version"])
        assert rc == 0 and out.strip() == "wheelgate " + version(), (rc, out, err)
    other = non_debian_python() or sys.executable
    pfx = os.path.join(TMP, "scratch-prefix")
    cmake_install(pfx, other)
    sites = found(pfx)
    assert len(sites) == 1 and sites[0].startswith(pfx + "/lib/python3."), sites
    rc, out, err = run([other, "-c", "import wheelgate; print(wheelgate.library_path())"],
                       env=clean_env({"PYTHONPATH": sites[0]}))
    assert rc == 0 and out.strip() == pfx + "/lib/libwheelgate.so.0", (rc, out, err)


def build_wheel(out_dir):
    rc, out, err = run([sys.executable, os.path.join(SRC, "scripts", "python-wheel.py"), BUILD,
                        out_dir, version()])
    assert rc == 0, (rc, out, err)
    path = out.strip().splitlines()[-1]
    assert os.path.isfile(path), out
    return path


def the_wheel():
    if not _wheel:
        _wheel.append(build_wheel(os.path.join(TMP, "dist")))
    return _wheel[0]


@test
def the_wheel_is_well_formed_and_reproducible():
    """Its RECORD lists every member with the right sha256 and size; the native files are
    inside, executables marked so; built twice, the same bytes."""
    whl = the_wheel()
    tag = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    assert os.path.basename(whl) == "wheelgate-%s-py3-none-%s.whl" % (version(), tag), whl
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        info = "wheelgate-%s.dist-info/" % version()
        rows = [r.split(",") for r in z.read(info + "RECORD").decode().splitlines()]
        listed = {r[0] for r in rows}
        assert listed == set(names), set(names) ^ listed
        for n, h, size in rows:
            if n == info + "RECORD":
                assert h == "" and size == "", (n, h, size)
                continue
            data = z.read(n)
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert h == want and int(size) == len(data), n
        for n in ("wheelgate/py.typed", "wheelgate/__main__.py", "wheelgate/_capi.py",
                  "wheelgate_pip/__main__.py",
                  "wheelgate/_native/bin/wheelgate", "wheelgate/_native/lib/libwheelgate.so.0",
                  "wheelgate/_native/libexec/wheelgate/wheelgate-serve", info + "METADATA"):
            assert n in names, n
        assert (z.getinfo("wheelgate/_native/bin/wheelgate").external_attr >> 16) & 0o111
        assert "Version: %s\n" % version() in z.read(info + "METADATA").decode()
        assert "Tag: py3-none-%s\n" % tag in z.read(info + "WHEEL").decode()
    again = build_wheel(os.path.join(TMP, "dist2"))
    assert open(again, "rb").read() == open(whl, "rb").read(), "two builds differ"


@test
def the_wheel_installs_with_pip_and_works_without_environment_variables():
    """pip installs the wheel into a venv; from there, with no WHEELGATE_LIB, PYTHONPATH or
    LD_LIBRARY_PATH: import wheelgate judges a wheel as the build's CLI does, `python -m
    wheelgate` and the `wheelgate` script run the wheel's CLI (same output, same exit status),
    and pip uninstall removes every file (RECORD is right)."""
    need_fixtures()
    whl = the_wheel()
    d, py = venv("venv-wheel")
    rc, out, err = run([py, "-m", "pip", "install", "--no-index", "--no-deps", whl])
    assert rc == 0, (rc, out, err)
    rc, out, err = run([py, "-c", "import json, os, sys, wheelgate;"
                        "print(json.dumps([wheelgate.library_path(), wheelgate.cli_path(),"
                        " wheelgate.__version__, wheelgate.version(),"
                        " os.path.isfile(os.path.join(os.path.dirname(wheelgate.__file__), 'py.typed'))]))"])
    assert rc == 0, err
    lib, cli, pyver, libver, typed = json.loads(out)
    site = os.path.join(d, "lib")
    assert lib.startswith(site) and lib.endswith("wheelgate/_native/lib/libwheelgate.so.0"), lib
    assert cli.startswith(site) and cli.endswith("wheelgate/_native/bin/wheelgate"), cli
    assert pyver == libver == version() and typed, (pyver, libver, typed)
    ref = run([WG, "check", "--no-config", HOLLOW, PURE])
    assert ref[0] == 1, ref
    for cmd in ([py, "-m", "wheelgate"], [os.path.join(d, "bin", "wheelgate")]):
        got = run(cmd + ["check", "--no-config", HOLLOW, PURE])
        assert got == ref, (cmd, got, ref)
    rc, out, err = run([py, "-m", "wheelgate", "gpus"])
    assert rc == 0 and "H100" in out, (rc, out, err)
    rc, out, err = run([py, "-m", "wheelgate_pip", "--help"])
    assert "wheelgate_pip" in out + err, (rc, out, err)
    rc, out, err = run([py, "-m", "pip", "uninstall", "-y", "wheelgate"])
    assert rc == 0, (rc, out, err)
    left = [os.path.join(r, f) for r, _, fs in os.walk(site) for f in fs
            if "wheelgate" in os.path.relpath(os.path.join(r, f), site)]
    assert not left, left


@test
def the_wheel_passes_wheelgate_check():
    """Dogfood: the wheel, and its installed copy (the .dist-info), pass `wheelgate check`
    (publish, and install against the venv it went into): no error, no warning."""
    whl = the_wheel()
    d, py = venv("venv-dogfood")
    rc, out, err = run([py, "-m", "pip", "install", "--no-index", "--no-deps", whl])
    assert rc == 0, (rc, out, err)
    di = [os.path.join(r, n) for r, ns, _ in os.walk(d) for n in ns
          if n == "wheelgate-%s.dist-info" % version()]
    assert len(di) == 1, di
    for args in (["--format", "json", whl], ["--format", "json", "--env", d, whl],
                 ["--format", "json", "--env", d, di[0]]):
        rc, out, err = run([WG, "check", "--no-config", "--fail-on", "warning"] + args)
        doc = json.loads(out)
        assert rc == 0 and [i["verdict"] for i in doc["inputs"]] == ["pass"], (args, rc, out[-2000:], err)


@test
def a_string_where_a_list_is_meant_is_one_item():
    """disable="WG-SYS-003" disables that rule (it fires on the wheel's linux_* tag without
    it), not the rules 'W', 'G', ...; gpus="H100" is gpus=["H100"]; paths alike."""
    need_fixtures()
    whl = the_wheel()
    code = r"""
import json, sys, wheelgate
whl, hollow = sys.argv[1:3]
rules = lambda r: sorted(f.rule for f in r.findings)
out = {"plain": rules(wheelgate.check(whl)),
       "str": rules(wheelgate.check(whl, disable="WG-SYS-003")),
       "list": rules(wheelgate.check(whl, disable=["WG-SYS-003"])),
       "tuple": rules(wheelgate.check(whl, disable=("WG-SYS-003",))),
       "gpu_str": rules(wheelgate.check(hollow, gpus="H100")),
       "gpu_list": rules(wheelgate.check(hollow, gpus=["H100"])),
       "checker_str": [r.verdict for r in wheelgate.Checker().check(hollow).reports],
       "all_str": [r.verdict for r in wheelgate.check_all(hollow)]}
print(json.dumps(out))
"""
    rc, out, err = run([sys.executable, "-c", code, whl, HOLLOW],
                       env=clean_env({"PYTHONPATH": os.path.join(SRC, "hooks", "pip"),
                                      "WHEELGATE_LIB": os.path.join(BUILD, "libwheelgate.so.0")}))
    assert rc == 0, err
    o = json.loads(out)
    assert "WG-SYS-003" in o["plain"], o
    assert "WG-SYS-003" not in o["str"] and o["str"] == o["list"] == o["tuple"], o
    assert o["gpu_str"] == o["gpu_list"] and "WG-HOL-001" in o["gpu_str"], o
    assert o["checker_str"] == o["all_str"] == ["fail"], o


@test
def normalize_name_is_the_librarys():
    """wheelgate.normalize_name is wg_name_normalize (what audit's --only compares): PEP 503."""
    code = r"""
import json, wheelgate
print(json.dumps([wheelgate.normalize_name(n) for n in ("Flash_Attn", "a.-_b", "PyYAML", b"x__Y", "")]))
try:
    wheelgate.normalize_name(["x"])
except TypeError as e:
    print("TypeError")
"""
    rc, out, err = run([sys.executable, "-c", code],
                       env=clean_env({"PYTHONPATH": os.path.join(SRC, "hooks", "pip"),
                                      "WHEELGATE_LIB": os.path.join(BUILD, "libwheelgate.so.0")}))
    assert rc == 0, err
    lines = out.splitlines()
    assert json.loads(lines[0]) == ["flash-attn", "a-b", "pyyaml", "x-y", ""], out
    assert lines[1:] == ["TypeError"], out


@test
def the_binding_reads_reports_through_the_accessors():
    """Result.document, built from the report accessors (wg_report_finding, wg_report_counts,
    wg_report_more, wg_report_not_applied, wg_target_get_info), is the JSON document the
    library writes for the same reports, key for key, over every fixture wheel and object,
    for a publish target, an H100 install, a bare install, with bounds and without; and the
    binding holds no JSON parser of the library's documents."""
    code = r"""
import ctypes, glob, json, os, sys, wheelgate
fix = sys.argv[1]
paths = sorted(glob.glob(os.path.join(fix, "wheels", "*.whl")) + glob.glob(os.path.join(fix, "abi", "*.so")))
paths.append(os.path.join(fix, "wheels", "no such wheel.whl"))
checked = findings = more = 0
for opts in ({"profile": "publish"}, {"profile": "install", "gpus": ["H100"],
             "target": ["python=3.12", "torch=2.8.0+cu128", "cuda=12.8", "cxx11abi=1"]},
             {"profile": "install", "fail_on": "info"}):
    with wheelgate.Checker(**opts) as c:
        for p in paths:
            r = c.check(p)
            lib = c._lib
            n = len(r.reports)
            # the library's own JSON of the same reports: the oracle, parsed here only
            done = []
            scan = ctypes.c_void_p()
            lib.wg_scan_path(ctypes.byref(scan), c._sc, wheelgate._b(p))
            rep = ctypes.c_void_p()
            if scan.value:
                lib.wg_check(ctypes.byref(rep), c._sc, c._rs, scan, c._target)
            err = None if rep.value else lib.wg_scanner_error(c._sc)
            out = ctypes.c_void_p()
            assert lib.wg_reports_format(ctypes.byref(out), 1, c._rs, c._target,
                (ctypes.c_char_p * 1)(wheelgate._b(p)), (ctypes.c_void_p * 1)(rep.value),
                (ctypes.c_char_p * 1)(err), 1, c.fail_on) == 0
            want = json.loads(ctypes.string_at(out.value).decode())
            lib.wg_free(out)
            lib.wg_report_free(rep)
            lib.wg_scan_free(scan)
            assert r.document == want, (p, opts, r.document, want)
            rep0 = r.reports[0]
            assert rep0.counts == want["inputs"][0]["counts"], p
            checked += 1
            findings += len(rep0.findings)
            more += len(rep0.more)
print(json.dumps([checked, findings]))
"""
    rc, out, err = run([sys.executable, "-c", code, FIX],
                       env=clean_env({"PYTHONPATH": os.path.join(SRC, "hooks", "pip"),
                                      "WHEELGATE_LIB": os.path.join(BUILD, "libwheelgate.so.0")}))
    assert rc == 0, err[-3000:]
    checked, findings = json.loads(out.splitlines()[-1])
    assert checked > 60 and findings > 100, out
    # the binding parses none of the library's documents
    for name in ("__init__.py", "_capi.py", "dask.py", "report.py"):
        with open(os.path.join(SRC, "hooks", "pip", "wheelgate", name)) as f:
            text = f.read()
        assert "json.loads" not in text and "json.load(" not in text, name


@test
def one_return_type_and_errors_that_speak_python():
    """check() a Report (a list of paths is TypeError, a directory of several wheels
    ValueError: check_all's), check_all() a list; refused arguments are InvalidArgument
    (ValueError) naming the keyword, not a CLI flag, with the library's error code and class
    when the library refused them (.code, .error_class; None when Python did); a missing env a
    WheelgateError with .path; a library that cannot be found a LibraryError (OSError)."""
    need_fixtures()
    two = os.path.join(TMP, "two")
    os.makedirs(two, exist_ok=True)
    for p in (HOLLOW, PURE):
        shutil.copy(p, two)
    code = r"""
import json, sys, wheelgate
hollow, pure, two = sys.argv[1:4]
out = {}
out["check"] = type(wheelgate.check(hollow)).__name__
out["check_all"] = [type(r).__name__ for r in wheelgate.check_all([hollow, pure])]
out["check_all_dir"] = sorted(r.verdict for r in wheelgate.check_all(two))
def err(fn):
    try:
        fn()
        return "no exception"
    except Exception as e:
        return [type(e).__name__, str(e), isinstance(e, wheelgate.WheelgateError),
                isinstance(e, ValueError), getattr(e, "argument", None), getattr(e, "path", None),
                getattr(e, "code", None), getattr(e, "error_class", None)]
out["list"] = err(lambda: wheelgate.check([hollow, pure]))
out["dir"] = err(lambda: wheelgate.check(two))
out["disable"] = err(lambda: wheelgate.check(hollow, disable="W"))
out["gpus"] = err(lambda: wheelgate.check(hollow, gpus="Q999"))
out["target"] = err(lambda: wheelgate.check(hollow, target="bogus"))
out["profile"] = err(lambda: wheelgate.check(hollow, profile="ship"))
out["type"] = err(lambda: wheelgate.check(hollow, disable=3))
out["env"] = err(lambda: wheelgate.check(hollow, env=two + "/nothere"))
print(json.dumps(out))
"""
    env = clean_env({"PYTHONPATH": os.path.join(SRC, "hooks", "pip"),
                     "WHEELGATE_LIB": os.path.join(BUILD, "libwheelgate.so.0")})
    rc, out, err = run([sys.executable, "-c", code, HOLLOW, PURE, two], env=env)
    assert rc == 0, err
    o = json.loads(out)
    assert o["check"] == "Report" and o["check_all"] == ["Report", "Report"], o
    assert o["check_all_dir"] == ["fail", "pass"], o
    assert o["list"][0] == "TypeError" and "check_all()" in o["list"][1], o
    assert o["dir"][0] == "ValueError" and "2 inputs" in o["dir"][1], o
    # code and class from the library's error record (wg_error_last_info): -3 WG_EINVAL,
    # -8 WG_ENOTFOUND; the profile is refused by Python, before the library is asked
    for k, kw, text, code, klass in (
            ("disable", "disable", "no rule 'W'", -3, "rules"),
            ("gpus", "gpus", "unknown GPU 'Q999'", -8, "gpu"),
            ("target", "target", "'bogus' is not key=value", -3, "target"),
            ("profile", "profile", "install, publish or auto", None, None)):
        name, msg, is_wg, is_value, arg, _, got_code, got_class = o[k]
        assert name == "InvalidArgument" and is_wg and is_value and arg == kw, (k, o[k])
        assert msg.startswith(kw + ": ") and text in msg and "--" not in msg, (k, msg)
        assert (got_code, got_class) == (code, klass), (k, o[k])
    assert o["type"][0] == "TypeError" and "disable" in o["type"][1], o
    name, msg, is_wg, _, _, path, got_code, got_class = o["env"]
    assert name == "WheelgateError" and is_wg and path == two + "/nothere", o["env"]
    # a scanner call's failure is in the record too: -8 WG_ENOTFOUND, class env
    assert (got_code, got_class) == (-8, "env"), o["env"]
    assert "nothere" in msg and "No such file" in msg, msg
    rc, out, err = run([sys.executable, "-c", "import wheelgate\ntry:\n    wheelgate.library_path()\n"
                        "except OSError as e:\n    print(type(e).__name__, e)"],
                       env=clean_env({"PYTHONPATH": os.path.join(SRC, "hooks", "pip"),
                                      "WHEELGATE_LIB": "/nonexistent/libwheelgate.so.0"}))
    assert rc == 0 and out.startswith("LibraryError cannot find libwheelgate"), (rc, out, err)


@test
def the_binding_is_typed_and_versioned():
    """__version__ is the project's; every public function and method has annotations;
    py.typed is there for type checkers."""
    code = r"""
import inspect, json, wheelgate
missing = []
for name in ("check", "check_all", "check_bytes", "escape", "library_path", "cli_path", "version"):
    sig = inspect.signature(getattr(wheelgate, name))
    if sig.return_annotation is inspect.Signature.empty or any(
            p.annotation is inspect.Parameter.empty for p in sig.parameters.values()):
        missing.append(name)
for name in ("__init__", "check", "check_bytes", "close"):
    sig = inspect.signature(getattr(wheelgate.Checker, name))
    if any(p.annotation is inspect.Parameter.empty for n, p in sig.parameters.items() if n != "self"):
        missing.append("Checker." + name)
print(json.dumps([wheelgate.__version__, missing]))
"""
    rc, out, err = run([sys.executable, "-c", code],
                       env=clean_env({"PYTHONPATH": os.path.join(SRC, "hooks", "pip")}))
    assert rc == 0, err
    ver, missing = json.loads(out)
    assert ver == version() and not missing, (ver, version(), missing)
    assert os.path.isfile(os.path.join(SRC, "hooks", "pip", "wheelgate", "py.typed"))
    # mypy (Debian's python3-mypy, scripts/setup.sh --test): the package passes --strict, and
    # a user's code type-checked against the wheel installed in a venv (py.typed makes mypy
    # read its hints) has a wrong use caught.
    rc, out, err = run([DEBIAN, "-m", "mypy", "--version"])
    if rc != 0:
        raise Missing("no mypy for %s (apt-get install python3-mypy)" % DEBIAN)
    mypy = [DEBIAN, "-m", "mypy", "--no-incremental", "--cache-dir=/dev/null"]
    rc, out, err = run(mypy + ["--strict", "-p", "wheelgate"], cwd=os.path.join(SRC, "hooks", "pip"))
    assert rc == 0, (out, err)
    d, py = venv("venv-typed")
    rc, out, err = run([py, "-m", "pip", "install", "--no-index", "--no-deps", the_wheel()])
    assert rc == 0, (rc, out, err)
    user = os.path.join(TMP, "user.py")
    with open(user, "w") as f:
        f.write("import wheelgate\n"
                "r: wheelgate.Report = wheelgate.check('x.whl', disable='WG-SYS-003')\n"
                "rs: list = wheelgate.check_all(['a.whl', 'b.whl'], gpus='H100')\n"
                "n: int = wheelgate.check('x.whl')\n")
    rc, out, err = run(mypy + ["--python-executable", py, user], cwd=TMP)
    assert rc == 1 and out.count("error:") == 1, (rc, out, err)
    assert "user.py:4: error: Incompatible types in assignment (expression has type " \
        "\"Report\", variable has type \"int\")" in out, out


if __name__ == "__main__":
    rc = main()
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

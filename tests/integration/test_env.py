#!/usr/bin/env python3
"""End-to-end tests of environments: `wheelgate env`, `wheelgate check --env` on the faithful
torch 2.11 stand-in against the corpus README, the index cache (cold, warm, corrupt,
concurrent), and --gpu auto without a GPU.

Usage: test_env.py WHEELGATE FIXTURES CORPUS
"""
import base64
import glob
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib

from harness import Missing, Skip, main, test  # noqa: E402

WG, FIX, CORPUS = [os.path.abspath(a) for a in sys.argv[1:4]]
ENV = os.path.join(FIX, "envs", "torch211")
CW = os.path.join(CORPUS, "wheels")
SUF = "-0.1.0-cp312-cp312-linux_x86_64.whl"
NAMES = ["wgdemo_good_sm90" + SUF, "wgcpu_cpu_good" + SUF, "wgdemo_oldabi_sm90" + SUF,
         "wgdemo_sm80_only" + SUF, "wgdemo_mixed" + SUF]


def run(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([WG, *args], capture_output=True, timeout=600, env=e)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def need_env():
    if not os.path.isdir(ENV) or not os.path.isdir(CW):
        raise Missing("no faithful torch stand-in (it needs ../shared/corpus)")
    if not os.path.exists(os.path.join(ENV, "lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13")):
        raise Skip("no CUDA toolkit: libcudart.so.13 was not copied into the stand-in")


def check_env(cache, *args):
    rc, out, err = run("check", "--no-config", "--format", "json", "--env", ENV, *args,
                       *[os.path.join(CW, n) for n in NAMES], env={"XDG_CACHE_HOME": cache})
    assert rc in (0, 1), (rc, err)
    doc = json.loads(out)
    return {os.path.basename(i["path"]): i["findings"] for i in doc["inputs"]}, doc


@test
def env_reads_the_stand_in():
    need_env()
    for path in (ENV, os.path.join(ENV, "lib/python3.12/site-packages"),
                 os.path.join(ENV, "bin/python3.12")):
        rc, out, err = run("env", "--json", "--no-cache", path)
        assert rc == 0, err
        d = json.loads(out)
        assert d["python_version"] == "3.12" and d["ext_suffix"] == ".cpython-312-x86_64-linux-gnu.so"
        assert d["torch"] == {"dir": os.path.join(ENV, "lib/python3.12/site-packages/torch"),
                              "version": "2.11.0+cu130", "cuda": "13.0", "cxx11abi": True}, d["torch"]
        assert any(p.endswith("nvidia/cu13/lib/libcudart.so.13") for p in d["cuda_libraries"])
        assert d["library_dirs"][0].endswith("site-packages/torch/lib")
    rc, out, err = run("env", os.path.join(FIX, "envs", "oldabi"))
    assert rc == 0 and "old (cxx11abi=0)" in out and "2.4.0+cpu" in out, out
    rc, out, err = run("env", "/nonexistent")
    assert rc == 2 and "/nonexistent" in err


@test
def the_system_line_is_what_readelf_reads():
    """`wheelgate env`'s system: the highest version each runtime library defines."""
    import shutil
    import subprocess
    if not shutil.which("readelf"):
        raise Missing("no readelf")
    rc, out, err = run("env", os.path.join(FIX, "envs", "oldabi"))
    line = [l for l in out.splitlines() if l.startswith("system")]
    assert rc == 0 and len(line) == 1 and line[0].endswith("(this system)"), out
    ours = dict(v.split("_", 1) for v in line[0].split()[1:-2])
    want = {}
    for lib in ("libc.so.6", "libstdc++.so.6", "libgcc_s.so.1"):
        path = next(os.path.join(d, lib) for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64")
                    if os.path.exists(os.path.join(d, lib)))
        defs = subprocess.run(["readelf", "-V", "-W", path], capture_output=True, text=True).stdout
        for tok in defs.split():
            fam, _, ver = tok.partition("_")
            if fam in ("GLIBC", "GLIBCXX", "CXXABI", "GCC") and ver[:1].isdigit():
                t = tuple(int(x) for x in ver.split("."))
                if fam not in want or t > tuple(int(x) for x in want[fam].split(".")):
                    want[fam] = ver
    assert ours == want, (ours, want)
    assert ours["GLIBC"] == os.confstr("CS_GNU_LIBC_VERSION").split()[1]


@test
def corpus_judged_in_the_stand_in_as_on_debian_12():
    need_env()
    with tempfile.TemporaryDirectory() as cache:
        got, doc = check_env(cache, "--gpu", "sm_90")
    t = doc["target"]
    assert (t["python"], t["torch"], t["cuda"], t["cxx11abi"]) == ("3.12", "2.11.0+cu130", "13.0", True), t
    glibc = tuple(int(x) for x in os.confstr("CS_GNU_LIBC_VERSION").split()[1].split("."))
    for name, findings in got.items():
        ld = [f for f in findings if f["rule"].startswith("WG-LD-")]
        rules = {f["rule"] for f in ld}
        # The system is this one (Debian 12: glibc 2.36): every corpus extension needs
        # GLIBC_2.38 (README: "Mind the system"), reported once, as WG-SYS-001, not WG-LD-003.
        v = [f for f in findings if f["rule"] == "WG-SYS-001"]
        if glibc < (2, 38) and not name.startswith("wgdemo_wrapper"):
            assert v and all("GLIBC_2.38" in f["message"] and "libc.so.6" in f["message"]
                             for f in v), (name, findings)
        else:
            assert not v, (name, v)
        assert "WG-LD-003" not in rules, (name, ld)
        assert "WG-LD-002" not in rules, (name, ld)  # libc10, libtorch_*, libcudart all found
        if name.startswith("wgdemo_oldabi"):
            u = [f for f in ld if f["rule"] == "WG-LD-001"]
            assert len(u) == 1 and u[0]["symbol"] == "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs", u
            assert "libc10.so" in u[0]["message"] and "_GLIBCXX_USE_CXX11_ABI=1" in u[0]["message"]
        else:
            assert "WG-LD-001" not in rules, (name, ld)
    # The GPU machine declared (Ubuntu 24.04: glibc 2.39, GLIBCXX 3.4.33): exactly the README's
    # outcomes: good_sm90 and cpu_good pass, oldabi on torchCheckFail, sm80_only and mixed on
    # the GPU.
    with tempfile.TemporaryDirectory() as cache:
        got, doc = check_env(cache, "--gpu", "sm_90", "--target", "glibc=2.39,glibcxx=3.4.33")
    errors = {n: sorted({f["rule"] for f in fs if f["severity"] == "error"}) for n, fs in got.items()}
    want = {"wgdemo_good_sm90": [], "wgcpu_cpu_good": [],
            "wgdemo_oldabi_sm90": ["WG-ABI-001", "WG-LD-001"],
            "wgdemo_sm80_only": ["WG-GPU-002"], "wgdemo_mixed": ["WG-GPU-002"]}
    assert {n.split("-")[0]: e for n, e in errors.items()} == want, errors
    # --target overrides the environment's facts.
    with tempfile.TemporaryDirectory() as cache:
        got, doc = check_env(cache, "--target", "cxx11abi=0,python=3.11")
    assert doc["target"]["cxx11abi"] is False and doc["target"]["python"] == "3.11"
    assert any(f["rule"] == "WG-TAG-007" for f in got["wgcpu_cpu_good" + SUF])


@test
def a_debian_dist_packages_without_a_minor_version():
    """/usr/lib/python3/dist-packages (no minor in the path) crashed `wheelgate env`: the
    version comes from the interpreter's name, or stays unknown."""
    with tempfile.TemporaryDirectory() as tmp:
        site = os.path.join(tmp, "usr", "lib", "python3", "dist-packages")
        os.makedirs(site)
        os.makedirs(os.path.join(tmp, "usr", "bin"))
        p = subprocess.run([WG, "env", "--json", site], capture_output=True, timeout=120)
        assert p.returncode in (0, 1, 2) and p.returncode >= 0, (p.returncode, p.stderr)
        assert b"Segmentation" not in p.stderr
    real = "/usr/lib/python3/dist-packages"
    if os.path.isdir(real):
        p = subprocess.run([WG, "env", real], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, (p.returncode, p.stderr)
        line = [l for l in p.stdout.splitlines() if l.startswith("python ")][0]
        py = os.path.realpath("/usr/bin/python3")
        want = os.path.basename(py)[len("python"):] if os.path.basename(py).startswith("python3.") else None
        if want:
            assert line.split()[1] == want, (line, want)
            assert ".cpython-%s-" % want.replace(".", "") in p.stdout, p.stdout


def entry_ok(path):
    """Whether the cache entry at path is whole: magic, format 3, payload length and CRC-32."""
    with open(path, "rb") as f:
        d = f.read()
    if len(d) < 24 or d[:8] != b"WGLIBIDX":
        return False
    version, crc, n = struct.unpack_from("=IIQ", d, 8)
    return version == 3 and n == len(d) - 24 and zlib.crc32(d[24:]) == crc


@test
def the_index_cache():
    need_env()
    with tempfile.TemporaryDirectory() as cache:
        t0 = time.time()
        cold, cold_doc = check_env(cache)
        t1 = time.time()
        files = glob.glob(os.path.join(cache, "wheelgate", "libs", "*.wgl"))
        assert len(files) >= 10, files  # torch's 12 libraries, libcudart, the system's
        warm, warm_doc = check_env(cache)
        t2 = time.time()
        assert warm == cold and warm_doc == cold_doc  # the whole document, not only findings
        print("  cold %.2f s, warm %.2f s, %d entries" % (t1 - t0, t2 - t1, len(files)))
        # Corrupt entries are ignored and rewritten; the verdicts do not change.
        whole = {f: open(f, "rb").read() for f in files}
        for i, f in enumerate(files):
            with open(f, "wb") as fh:
                fh.write([b"{not json", b"", whole[f][:len(whole[f]) // 2],
                          whole[f][:-1] + b"x"][i % 4])
        again, _ = check_env(cache)
        assert again == cold
        for f in files:
            assert entry_ok(f) and open(f, "rb").read() == whole[f], f
        # A FIFO (or anything not a regular file) in place of an entry is never waited on:
        # it is rebuilt from the library and replaced.
        for f in files:
            os.unlink(f)
            os.mkfifo(f)
        t3 = time.time()
        again, _ = check_env(cache)
        assert again == cold and time.time() - t3 < 120, time.time() - t3
        for f in files:
            assert entry_ok(f), f
        # Two runs at once on an empty cache: both right, the cache whole.
        for f in files:
            os.unlink(f)
        procs = [subprocess.Popen([WG, "check", "--no-config", "--format", "json", "--env", ENV,
                                   *[os.path.join(CW, n) for n in NAMES]],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=dict(os.environ, XDG_CACHE_HOME=cache)) for _ in range(3)]
        for p in procs:
            out, err = p.communicate(timeout=600)
            doc = json.loads(out)
            assert {os.path.basename(i["path"]): i["findings"] for i in doc["inputs"]} == cold
        for f in glob.glob(os.path.join(cache, "wheelgate", "libs", "*")):
            assert f.endswith(".wgl"), f  # no temporary file left behind
            assert entry_ok(f), f


def patch_name(path, old, new):
    data = open(path, "rb").read()
    assert old in data and len(old) == len(new)
    open(path, "wb").write(data.replace(old, new))


@test
def the_cache_keeps_names_that_are_not_utf8():
    """A warm run gave another total than a cold one: the index cache (JSON) dropped the names
    jansson refused (not UTF-8), so a symbol found cold was missing warm (WG-LD-001)."""
    need_env()
    tmp = tempfile.mkdtemp()
    lib = os.path.join(tmp, "libwgbad.so")
    ext = os.path.join(tmp, "wgbad.cpython-312-x86_64-linux-gnu.so")
    with open(os.path.join(tmp, "lib.c"), "w") as f:
        f.write("int wgbadsymQQQQ(int x) { return x + 1; }\n")
    with open(os.path.join(tmp, "ext.c"), "w") as f:
        f.write("int wgbadsymQQQQ(int x);\nint PyInit_wgbad(void) { return wgbadsymQQQQ(1); }\n")
    for cmd in (["gcc", "-shared", "-fPIC", "-o", lib, os.path.join(tmp, "lib.c"),
                 "-Wl,-soname,libwgbad.so"],
                ["gcc", "-shared", "-fPIC", "-o", ext, os.path.join(tmp, "ext.c"), "-L" + tmp,
                 "-lwgbad", "-Wl,-rpath," + tmp]):
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            raise Skip("no gcc to build the fixture")
    # The same bytes, not UTF-8 and with an escape sequence, in both the definition and the
    # reference: the loader binds them (the names match byte for byte).
    for f in (lib, ext):
        patch_name(f, b"wgbadsymQQQQ", b"wgbadsym\xff\xfe\x1b[")
    with tempfile.TemporaryDirectory() as cache:
        docs = []
        for _ in range(3):  # cold, warm, warm
            rc, out, err = run("check", "--no-config", "--format", "json", "--env", ENV, ext,
                               env={"XDG_CACHE_HOME": cache})
            assert rc == 0, (rc, out, err)
            docs.append(json.loads(out))
        assert docs[0]["inputs"][0]["findings"] == [], docs[0]
        assert docs[1] == docs[0] and docs[2] == docs[0], (docs[0]["summary"], docs[1]["summary"])
        # The entry of libwgbad.so holds the name, byte for byte.
        assert any(b"wgbadsym\xff\xfe\x1b[\0" in open(f, "rb").read()
                   for f in glob.glob(os.path.join(cache, "wheelgate", "libs", "*.wgl")))


@test
def python_api_resolved_against_the_interpreter():
    need_env()
    pyapi = os.path.join(FIX, "abi-ld", "ext_pyapi.cpython-312-x86_64-linux-gnu.so")
    # The stand-in's bin/python3.12 exports PyLong_FromLong: resolved, nothing to say.
    rc, out, err = run("check", "--no-config", "--format", "json", "--env", ENV, pyapi)
    f = json.loads(out)["inputs"][0]["findings"]
    assert rc == 0 and not [x for x in f if x["rule"].startswith("WG-LD")], f
    # An environment without an interpreter (the g++ one): taken as provided, and said.
    rc, out, err = run("check", "--no-config", "--format", "json", "--env",
                       os.path.join(FIX, "envs", "oldabi"), pyapi)
    f = json.loads(out)["inputs"][0]["findings"]
    assert rc == 0 and [x["rule"] for x in f] == ["WG-LD-004"], f


def shimmed_venv(tmp):
    """A venv (Debian's python3) with one installed distribution, reached through a directory
    of launchers the way pyenv does it: bin/python3 there is a shell script that execs the
    venv's interpreter; python3.99 is a shim whose version is not installed."""
    venv = os.path.join(tmp, "venv")
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", venv], check=True,
                   timeout=120)
    site = subprocess.run([os.path.join(venv, "bin", "python3"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    info = os.path.join(site, "shimdemo-1.0.dist-info")
    os.makedirs(info)
    files = {"shimdemo.py": b"X = 1\n",
             "shimdemo-1.0.dist-info/METADATA":
                 b"Metadata-Version: 2.1\nName: shimdemo\nVersion: 1.0\n",
             "shimdemo-1.0.dist-info/WHEEL":
                 b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                 b"Tag: py3-none-any\n",
             "shimdemo-1.0.dist-info/INSTALLER": b"pip\n"}
    record = []
    for rel, data in files.items():
        with open(os.path.join(site, rel), "wb") as f:
            f.write(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        record.append("%s,sha256=%s,%d" % (rel, digest.decode(), len(data)))
    with open(os.path.join(info, "RECORD"), "w") as f:
        f.write("\n".join(record + ["shimdemo-1.0.dist-info/RECORD,,"]) + "\n")
    shims = os.path.join(tmp, "shims")
    os.makedirs(shims)
    for name, body in (("python3", 'exec "%s" "$@"\n' % os.path.join(venv, "bin", "python3")),
                       ("python3.99", 'echo "pyenv: python3.99: command not found" >&2\n'
                                      'exit 127\n')):
        with open(os.path.join(shims, name), "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(os.path.join(shims, name), 0o755)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = shims + ":/usr/bin:/bin"
    return os.path.realpath(site), env


def run_in(env, *args):
    p = subprocess.run([WG, *args], capture_output=True, timeout=600, env=env)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


@test
def a_python_on_path_is_asked_through_its_shim():
    """env, audit and --env find the environment of the python3 on PATH when that file is a
    launcher (pyenv, asdf, a wrapper): the interpreter is run and asked, not the file read."""
    if not os.access("/usr/bin/python3", os.X_OK):
        raise Missing("no /usr/bin/python3")
    with tempfile.TemporaryDirectory() as tmp:
        site, env = shimmed_venv(tmp)
        for args in (["env", "--json", "--no-cache"], ["env", "--json", "--no-cache", "python3"]):
            rc, out, err = run_in(env, *args)
            assert rc == 0, (args, rc, err)
            assert os.path.realpath(json.loads(out)["site_packages"]) == site, (args, out)
        rc, out, err = run_in(env, "env", "--no-cache")
        assert rc == 0 and "shims/python3, asked: Python 3." in out, (rc, out, err)
        # audit with no ENV: the venv's one distribution, audited.
        rc, out, err = run_in(env, "audit", "--no-config", "--format", "json")
        assert rc == 0, (rc, err)
        doc = json.loads(out)
        assert [i["path"] for i in doc["inputs"]] == ["shimdemo 1.0"], doc["inputs"]
        # check --env python3: a bare name, looked up on PATH.
        wheel = os.path.join(FIX, "wheels", "purepkg-0.1-py3-none-any.whl")
        rc, out, err = run_in(env, "check", "--no-config", "--format", "json", "--env",
                              "python3", wheel)
        assert rc == 0, (rc, err)
        assert json.loads(out)["target"]["python"] == json.loads(
            run_in(env, "env", "--json", "python3")[1])["python_version"]
        rc, out, err = run_in(env, "scan", "--no-config", "--env", "python3", wheel)
        rec = json.loads(out.splitlines()[0])
        assert rc == 0 and [t["verdict"] for t in rec["targets"]] == ["pass"], (rc, out, err)
        # A shim whose interpreter is missing: exit 2, its own words, the file named.
        rc, out, err = run_in(env, "env", "python3.99")
        assert rc == 2 and "python3.99: command not found" in err and "shims/python3.99" in err, \
            (rc, err)
        rc, out, err = run_in(env, "check", "--no-config", "--env", "python3.99", wheel)
        assert rc == 2 and "command not found" in err, (rc, err)
        rc, out, err = run_in(env, "env", "nosuchpython")
        assert rc == 2 and "no 'nosuchpython' on PATH" in err, (rc, err)


@test
def gpu_auto_without_a_gpu():
    if os.path.exists("/dev/nvidia0"):
        raise Skip("this machine has a GPU")
    rc, out, err = run("check", "--no-config", "--gpu", "auto",
                       os.path.join(FIX, "wheels", "purepkg-0.1-py3-none-any.whl"))
    assert rc == 0 and "no local GPU" in err, (rc, err)


if __name__ == "__main__":
    sys.exit(main())

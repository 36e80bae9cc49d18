#!/usr/bin/env python3
"""`wheelgate audit [ENV]`: every installed distribution of an environment checked in place,
judged against that environment (issue 15, point 5). The environments are made here: the
torch 2.11 stand-in (build/tests/fixtures/envs/torch211) with wheels installed into it as an
installer leaves them (members extracted, RECORD as written), one broken each way; and
Debian's /usr/bin/python3 as it is.

Usage: test_audit.py WHEELGATE FIXTURES CORPUS ROOT [SYS_PYTHON]
"""
import base64
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

from harness import Missing, Skip, main, need_path, test, validate as _validate  # noqa: E402

WG, FIX, CORPUS, ROOT = [os.path.abspath(a) for a in sys.argv[1:5]]
SYS_PY = sys.argv[5] if len(sys.argv) > 5 else ""
W = os.path.join(FIX, "wheels")
CW = os.path.join(CORPUS, "wheels")
SUF = "-0.1.0-cp312-cp312-linux_x86_64.whl"
# The corpus wheels were built for the GPU machine of ../shared/corpus/README.md (Ubuntu
# 24.04): its C runtime is declared, the rest comes from the environment.
SYSTEM = ["--target", "glibc=2.39,glibcxx=3.4.33"]
CHECK_SCHEMA = os.path.join(ROOT, "docs", "schema", "check.schema.json")
SARIF_SCHEMA = os.path.join(ROOT, "tests", "schemas", "sarif-2.1.0.json")
TMP = tempfile.mkdtemp(prefix="wg-audit-")


def wg(*args, env=None):
    p = subprocess.run([WG, *args], capture_output=True, timeout=600, env=env)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def validate(doc, schema):
    _validate(doc, schema, SYS_PY, required=False)


def b64(data):
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def install(site, whl, installer="pip"):
    """What an installer leaves: the members under the site directory, RECORD as written, and
    INSTALLER naming it (None: none, as Debian's packages have)."""
    with zipfile.ZipFile(whl) as z:
        z.extractall(site)
        di = [n.split("/")[0] for n in z.namelist() if n.split("/")[0].endswith(".dist-info")][0]
    if installer is not None:
        with open(os.path.join(site, di, "INSTALLER"), "w") as f:
            f.write(installer + "\n")
    return di


def write_record(site, top, dist_info):
    """A RECORD for what the stand-in env holds without one (pip writes it on install)."""
    rows = []
    for d in (top, dist_info):
        for dp, _, files in os.walk(os.path.join(site, d)):
            for f in sorted(files):
                p = os.path.join(dp, f)
                rel = os.path.relpath(p, site)
                with open(p, "rb") as fh:
                    data = fh.read()
                rows.append([rel, "sha256=" + b64(data), str(len(data))])
    rows.append([dist_info + "/RECORD", "", ""])
    with open(os.path.join(site, dist_info, "RECORD"), "w", newline="") as f:
        csv.writer(f).writerows(rows)


BROKEN = {"wgdemo_oldabi_sm90": "WG-ABI-001", "hollow": "WG-HOL-001"}
GOOD = ["wgcpu_cpu_good", "purepkg", "torch"]


def make_env(name):
    """torch211 + the oldabi corpus wheel (old std::string ABI against a new-ABI torch),
    the hollow fixture wheel (imports a compiled module it lacks), and two good ones."""
    env0 = os.path.join(FIX, "envs", "torch211")
    need_path(env0, "the torch211 stand-in environment (build the fixtures)")
    need_path(CW, "the corpus")
    env = os.path.join(TMP, name)
    shutil.rmtree(env, ignore_errors=True)
    shutil.copytree(env0, env, symlinks=True)
    site = os.path.join(env, "lib", "python3.12", "site-packages")
    di = [d for d in os.listdir(site) if d.startswith("torch-") and d.endswith(".dist-info")][0]
    if not os.path.exists(os.path.join(site, di, "RECORD")):
        # what pip leaves beside METADATA: WHEEL, INSTALLER and RECORD
        with open(os.path.join(site, di, "WHEEL"), "w") as f:
            f.write("Wheel-Version: 1.0\nGenerator: bdist_wheel\nRoot-Is-Purelib: false\n"
                    "Tag: cp312-cp312-manylinux_2_28_x86_64\n")
        with open(os.path.join(site, di, "INSTALLER"), "w") as f:
            f.write("pip\n")
        write_record(site, "torch", di)
    for whl in (os.path.join(CW, "wgdemo_oldabi_sm90" + SUF), os.path.join(CW, "wgcpu_cpu_good" + SUF),
                os.path.join(W, "hollow-1.0-py3-none-any.whl"), os.path.join(W, "purepkg-0.1-py3-none-any.whl")):
        need_path(whl, "a wheel of the audited environment")
        install(site, whl)
    os.symlink("python3.12", os.path.join(env, "bin", "python3"))
    return env, site


def dist_of(site, label):
    """The dist-info directory whose METADATA names the report's label ("Name Version")."""
    for d in os.listdir(site):
        if d.endswith(".dist-info"):
            md = open(os.path.join(site, d, "METADATA"), errors="replace").read()
            fields = {}
            for line in md.split("\n\n")[0].splitlines():
                k, sep, v = line.partition(": ")
                if sep and not line[0].isspace():
                    fields.setdefault(k, v.strip())
            if "%s %s" % (fields.get("Name"), fields.get("Version")) == label:
                return d.split("-")[0].lower()
    return None


def audit_json(*args, env=None):
    rc, out, err = wg("audit", "--no-config", "--format", "json", *args, env=env)
    assert rc in (0, 1, 2), (rc, err)
    validate(out, CHECK_SCHEMA)
    return rc, json.loads(out), err


@test
def the_broken_distributions_are_named_the_others_pass():
    env, site = make_env("named")
    rc, doc, err = audit_json(*SYSTEM, env)
    verdicts = {}
    for i in doc["inputs"]:
        d = dist_of(site, i["path"])
        assert d, ("a report not named by its distribution's name and version", i["path"])
        verdicts[d] = (i["verdict"], sorted({f["rule"] for f in i["findings"] if f["severity"] == "error"}))
    assert sorted(verdicts) == sorted(list(BROKEN) + GOOD), verdicts
    for d, rule in BROKEN.items():
        assert verdicts[d][0] == "fail" and rule in verdicts[d][1], (d, verdicts[d])
    for d in GOOD:
        assert verdicts[d] == ("pass", []), (d, verdicts[d])
    assert rc == 1, (rc, err)
    # the environment audited is said, with its facts, on stderr (the document stays pure)
    assert "site-packages (python 3.12" in err and "torch 2.11.0+cu130" in err and "5 of 5" in err, err
    # the facts come from the environment, as with check --env: nothing lacks torch or CUDA
    lacks = {x["rule"] for i in doc["inputs"] for x in i["not_applied"] if "env" in x["lacks"] or "cuda" in x["lacks"]}
    assert not lacks, lacks


@test
def audit_agrees_with_check_env_on_each_distribution():
    env, site = make_env("agree")
    rc, doc, err = audit_json(*SYSTEM, env)
    for i in doc["inputs"]:
        d = [x for x in os.listdir(site) if x.endswith(".dist-info") and
             x.split("-")[0].lower() == dist_of(site, i["path"])][0]
        rc2, out2, _ = wg("check", "--no-config", "--format", "json", *SYSTEM, "--env", env, os.path.join(site, d))
        one = json.loads(out2)["inputs"][0]
        assert sorted((f["rule"], f["member"]) for f in one["findings"]) == \
            sorted((f["rule"], f["member"]) for f in i["findings"]), (d, one["findings"], i["findings"])


@test
def only_sarif_quiet_and_the_exit_status():
    env, site = make_env("only")
    # --only: as pip compares names; a good one alone passes
    rc, doc, err = audit_json(*SYSTEM, "--only", "WGCPU-cpu.good,purepkg", env)
    assert rc == 0 and len(doc["inputs"]) == 2 and "2 of 5" in err, (rc, err, [i["path"] for i in doc["inputs"]])
    rc, doc, err = audit_json(*SYSTEM, "--only", "hollow", env)
    assert rc == 1 and [i["verdict"] for i in doc["inputs"]] == ["fail"], (rc, err)
    rc, out, err = wg("audit", "--no-config", "--only", "nosuch", env)
    assert rc == 2 and "--only nosuch: no installed distribution" in err, (rc, err)
    # --fail-on and --quiet as check: warnings do not fail a good environment
    rc, out, err = wg("audit", "--no-config", "-q", *SYSTEM, "--only", "hollow,purepkg", env)
    assert rc == 1 and "FAIL hollow 1.0" in out and "purepkg" not in out.split("\n2 inputs")[0], out
    rc, out, err = wg("audit", "--no-config", "--format", "sarif", "-o", os.path.join(TMP, "a.sarif"), *SYSTEM, env)
    assert rc == 1 and out == "", (rc, out, err)
    validate(open(os.path.join(TMP, "a.sarif")).read(), SARIF_SCHEMA)
    # one thread or several: the same document
    a = wg("audit", "--no-config", "--format", "json", "-j", "1", *SYSTEM, env)
    b = wg("audit", "--no-config", "--format", "json", "-j", "4", *SYSTEM, env)
    assert a[:2] == b[:2], (a[0], b[0])
    # what is not an environment, and a distribution that cannot be read: exit 2, named
    rc, out, err = wg("audit", "--no-config", os.path.join(TMP, "nowhere"))
    assert rc == 2 and "nowhere" in err, (rc, err)
    os.makedirs(os.path.join(site, "norec-1.0.dist-info"))
    rc, out, err = wg("audit", "--no-config", *SYSTEM, env)
    assert rc == 2 and "norec-1.0.dist-info/RECORD" in out, (rc, out)
    rc, out, err = wg("audit", "--no-config", "--env", env)
    assert rc == 2 and "ENV argument" in err, (rc, err)


@test
def the_default_environment_is_the_python3_on_path_and_is_named():
    env, site = make_env("default")
    e = dict(os.environ, PATH=os.path.join(env, "bin"))
    e.pop("VIRTUAL_ENV", None)
    rc, out, err = wg("audit", "--no-config", *SYSTEM, "--only", "purepkg", env=e)
    assert rc == 0 and site in err and os.path.join(env, "bin") in err, (rc, err)
    e["VIRTUAL_ENV"] = env
    e["PATH"] = "/nonexistent"
    rc, out, err = wg("audit", "--no-config", *SYSTEM, "--only", "purepkg", env=e)
    assert rc == 0 and site in err, (rc, err)


@test
def a_record_with_hexadecimal_digests_is_verified():
    """Debian's dist-packages RECORDs spell sha256 in hexadecimal: verified, not flagged; a
    wrong digest in that spelling still is."""
    env, site = make_env("hex")
    rec = os.path.join(site, "purepkg-0.1.dist-info", "RECORD")
    rows = list(csv.reader(open(rec)))
    for r in rows:
        if r[1].startswith("sha256="):
            raw = base64.urlsafe_b64decode(r[1][7:] + "=" * (-len(r[1][7:]) % 4))
            r[1] = "sha256=" + raw.hex()
    with open(rec, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    rc, doc, err = audit_json(*SYSTEM, "--only", "purepkg", env)
    assert rc == 0 and doc["inputs"][0]["verdict"] == "pass", (rc, doc["inputs"][0]["findings"])
    r = [r for r in rows if r[1].startswith("sha256=")][0]
    r[1] = r[1][:-1] + ("0" if r[1][-1] != "0" else "1")
    with open(rec, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    rc, doc, err = audit_json(*SYSTEM, "--only", "purepkg", env)
    bad = [(f["member"], f["severity"]) for f in doc["inputs"][0]["findings"] if f["rule"] == "WG-REC-004"]
    assert rc == 0 and bad == [(r[0], "warning")], (rc, doc["inputs"][0]["findings"])
    rc, doc, err = audit_json(*SYSTEM, "--only", "purepkg", "--profile", "publish", env)
    bad = [(f["member"], f["severity"]) for f in doc["inputs"][0]["findings"] if f["rule"] == "WG-REC-004"]
    assert rc == 1 and bad == [(r[0], "error")], (rc, doc["inputs"][0]["findings"])


@test
def an_empty_installed_file_is_read():
    """An empty Python file listed in RECORD (jeepney/tests/__init__.py) maps to no data:
    read as empty (under --sanitize a memcpy from NULL was UBSan's error here)."""
    env, site = make_env("empty")
    os.makedirs(os.path.join(site, "purepkg", "tests"))
    open(os.path.join(site, "purepkg", "tests", "__init__.py"), "w").close()
    with open(os.path.join(site, "purepkg-0.1.dist-info", "RECORD"), "a") as f:
        f.write("purepkg/tests/__init__.py,sha256=%s,0\n" % b64(b""))
    rc, doc, err = audit_json(*SYSTEM, "--only", "purepkg", env)
    assert rc == 0 and doc["inputs"][0]["verdict"] == "pass", (rc, err, doc["inputs"][0]["findings"])


def system_site(name, installer):
    """A site directory as a system's packaging leaves it: a dist-info whose RECORD was
    written over the built extension, which was then stripped (dh_strip), RECORD naming a
    build-tree script installed elsewhere (scripts-3.11/sysmod-tool), and INSTALLER as given
    (None: none, as Debian's)."""
    if not shutil.which("gcc") or not shutil.which("strip"):
        raise Skip("no gcc and strip to build the stripped extension")
    site = os.path.join(TMP, name, "dist-packages")
    shutil.rmtree(os.path.dirname(site), ignore_errors=True)
    os.makedirs(os.path.join(site, "sysmod"))
    di = "sysmod-1.0.dist-info"
    os.makedirs(os.path.join(site, di))
    src = os.path.join(TMP, name, "native.c")
    with open(src, "w") as f:
        f.write("int sysmod_answer(void) { return 42; }\nvoid *PyInit__native(void) { return 0; }\n")
    so = os.path.join(site, "sysmod", "_native.abi3.so")
    subprocess.run(["gcc", "-g", "-shared", "-fPIC", "-o", so, src], check=True)
    with open(os.path.join(site, "sysmod", "__init__.py"), "w") as f:
        f.write("from . import _native\n")
    with open(os.path.join(site, di, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: sysmod\nVersion: 1.0\n")
    with open(os.path.join(site, di, "WHEEL"), "w") as f:
        f.write("Wheel-Version: 1.0\nGenerator: bdist_wheel\nRoot-Is-Purelib: false\n"
                "Tag: cp311-abi3-linux_x86_64\n")
    with open(os.path.join(site, di, "top_level.txt"), "w") as f:
        f.write("sysmod\n")
    rows = []
    for rel in ("sysmod/__init__.py", "sysmod/_native.abi3.so", di + "/METADATA", di + "/WHEEL",
                di + "/top_level.txt"):
        data = open(os.path.join(site, rel), "rb").read()
        rows.append([rel, "sha256=" + b64(data), str(len(data))])
    rows.append(["scripts-3.11/sysmod-tool", "sha256=" + b64(b"#!/bin/sh\n"), "10"])
    rows.append([di + "/RECORD", "", ""])
    with open(os.path.join(site, di, "RECORD"), "w", newline="") as f:
        csv.writer(f).writerows(rows)
    before = os.path.getsize(so)
    subprocess.run(["strip", "--strip-unneeded", so], check=True)
    assert os.path.getsize(so) < before, "strip changed nothing"
    if installer is not None:
        with open(os.path.join(site, di, "INSTALLER"), "w") as f:
            f.write(installer + "\n")
    return site


@test
def a_system_package_rewritten_by_its_packaging_is_no_false_error():
    """Debian's packages (no INSTALLER) are stripped after RECORD is written: no WG-REC-004,
    the build-tree script is a RECORD orphan (a warning), and a note says what was treated
    differently, in the text after the report and on stderr beside JSON."""
    site = system_site("sys-none", None)
    rc, doc, err = audit_json(site)
    (i,) = doc["inputs"]
    errors = [f for f in i["findings"] if f["severity"] == "error"]
    assert rc == 0 and i["verdict"] == "pass" and not errors, (rc, err, i["findings"])
    orphans = [f for f in i["findings"] if f["rule"] == "WG-REC-003"]
    assert [f["member"] for f in orphans] == ["scripts-3.11/sysmod-tool"], i["findings"]
    assert orphans[0]["severity"] == "warning", orphans
    assert "sysmod 1.0: note: no INSTALLER" in err and "1 file differs from RECORD" in err, err
    assert i["note"].startswith("no INSTALLER: installed by a system's packages; 1 file differs"), i
    assert doc["not_audited"] == [] and doc["summary"]["not_audited"] == 0, doc["summary"]
    rc, out, err = wg("audit", "--no-config", site)
    assert rc == 0 and "PASS sysmod 1.0" in out, (rc, out, err)
    assert "  note: no INSTALLER: installed by a system's packages; 1 file differs" in out, out
    # inspect says it of the facts: the stripped file is 'repackaged', not a mismatch (its
    # exit status 1 is the build-tree script RECORD lists, a problem as inspect counts them)
    rc, out, err = wg("inspect", os.path.join(site, "sysmod-1.0.dist-info"))
    assert rc == 1 and "1 repackaged, 1 listed but absent (no INSTALLER, a system's packages" in out, (rc, out, err)
    assert "sha256" not in out and "RECORD lists scripts-3.11/sysmod-tool" in out, out
    # another packager's INSTALLER (conda) is treated alike, and named
    site = system_site("sys-conda", "conda")
    rc, doc, err = audit_json(site)
    assert rc == 0 and "installed by 'conda'" in err, (rc, err, doc["inputs"][0]["findings"])


@test
def the_same_stripped_file_installed_by_pip_is_still_a_mismatch():
    """What pip or uv installed is as its wheel was built: a file that differs is reported as
    changed since it was installed (a warning for an install, an error for publish), and a
    file RECORD lists that is gone is an error that names it."""
    for installer in ("pip", "uv"):
        site = system_site("sys-" + installer, installer)
        rc, doc, err = audit_json(site)
        (i,) = doc["inputs"]
        rec = [(f["member"], f["severity"]) for f in i["findings"] if f["rule"] == "WG-REC-004"]
        assert rec == [("sysmod/_native.abi3.so", "warning")], (installer, rc, i["findings"])
        gone = [f for f in i["findings"] if f["rule"] == "WG-REC-005"]
        assert rc == 1 and [(f["member"], f["severity"]) for f in gone] == \
            [("scripts-3.11/sysmod-tool", "error")], (installer, i["findings"])
        assert os.path.join(site, "scripts-3.11/sysmod-tool") in gone[0]["message"], gone
        assert not [f for f in i["findings"] if f["rule"] in ("WG-REC-001", "WG-WHL-002")], i["findings"]
        assert "note:" not in err and "note" not in i, (err, i)


# ---- what the real pip leaves (issue 24, point 2) ----

TRUTH = {"truthpkg/__init__.py": b"from . import sub\nfrom .sub import mod\n",
         "truthpkg/sub/__init__.py": b"",
         "truthpkg/sub/mod.py": b"VALUE = 42\n",
         "truthpkg/data.txt": b"hello\n",
         "truthpkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: truthpkg\nVersion: 1.0\n",
         "truthpkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: wheelgate-tests (1.0)\n"
                                         b"Root-Is-Purelib: true\nTag: py3-none-any\n",
         "truthpkg-1.0.dist-info/top_level.txt": b"truthpkg\n"}
_PIP_VENV = []


def truth_wheel(path, change=None):
    """A pure wheel with a package, a subpackage and a data file; change: a member whose
    bytes differ from what RECORD says (a wheel altered after it was built)."""
    rows = "".join("%s,sha256=%s,%d\n" % (n, b64(d), len(d)) for n, d in TRUTH.items())
    with zipfile.ZipFile(path, "w") as z:
        for n, d in TRUTH.items():
            z.writestr(n, d + b"# altered\n" if n == change else d)
        z.writestr("truthpkg-1.0.dist-info/RECORD", rows + "truthpkg-1.0.dist-info/RECORD,,\n")
    return path


def pip_venv(name):
    """A venv (python3 -m venv --without-pip) with truthpkg installed by Debian's real pip
    (`python3 -m pip --python VENV/bin/python install`): INSTALLER, RECORD and the
    __pycache__/*.pyc files it compiled, as pip writes them. Made once, copied for each test."""
    py = SYS_PY or "/usr/bin/python3"
    if not _PIP_VENV:
        if not os.access(py, os.X_OK):
            raise Missing("no %s to make a venv with" % py)
        v = os.path.join(TMP, "pipvenv")
        p = subprocess.run([py, "-m", "venv", "--without-pip", v], capture_output=True, timeout=300)
        if p.returncode:
            raise Missing("python3 -m venv failed (install python3-venv): " + p.stderr.decode()[-300:])
        whl = truth_wheel(os.path.join(TMP, "truthpkg-1.0-py3-none-any.whl"))
        env = {k: x for k, x in os.environ.items() if not k.startswith("PIP_")}
        env["PIP_CONFIG_FILE"] = os.devnull  # this machine's pip.conf names find-links
        p = subprocess.run([py, "-m", "pip", "--python", os.path.join(v, "bin", "python"), "install",
                            "--no-index", "--no-deps", "--disable-pip-version-check", whl],
                           capture_output=True, timeout=300, env=env)
        if p.returncode:
            raise Missing("pip install failed (install python3-pip >= 22.3 for --python): " +
                          p.stderr.decode()[-300:])
        _PIP_VENV.append(v)
    v = os.path.join(TMP, name)
    shutil.rmtree(v, ignore_errors=True)
    shutil.copytree(_PIP_VENV[0], v, symlinks=True)
    sites = [os.path.join(v, "lib", d, "site-packages") for d in os.listdir(os.path.join(v, "lib"))]
    return v, sites[0], os.path.join(v, "bin", "python")


def record_rows(site):
    with open(os.path.join(site, "truthpkg-1.0.dist-info", "RECORD"), newline="") as f:
        return list(csv.reader(f))


def imports(py):
    """Whether `import truthpkg` works in the venv: the ground truth of a finding."""
    env = {k: x for k, x in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    p = subprocess.run([py, "-c", "import truthpkg, sys; sys.exit(truthpkg.mod.VALUE != 42)"],
                       capture_output=True, timeout=120, env=env)
    return p.returncode == 0, p.stderr.decode()


def inspect_doc(path):
    rc, out, err = wg("inspect", "--json", path)
    doc = json.loads(out)
    return rc, (doc["inputs"][0] if "inputs" in doc else doc), err


def findings(doc):
    (i,) = doc["inputs"]
    return [(f["rule"], f["member"], f["severity"]) for f in i["findings"]]


@test
def a_real_pip_install_audits_clean_and_its_caches_are_no_finding():
    """pip lists the .pyc files it compiled in RECORD without a hash; Python rewrites and
    removes them. A fresh install audits clean, and so does one whose caches are gone."""
    v, site, py = pip_venv("caches")
    pyc = [r[0] for r in record_rows(site) if r[0].endswith(".pyc")]
    assert len(pyc) == 3 and all(r[1] == "" for r in record_rows(site) if r[0] in pyc), record_rows(site)
    assert all(os.path.isfile(os.path.join(site, p)) for p in pyc), pyc
    assert open(os.path.join(site, "truthpkg-1.0.dist-info", "INSTALLER")).read().strip() == "pip"
    rc, doc, err = audit_json(v)
    assert rc == 0 and findings(doc) == [] and doc["inputs"][0]["verdict"] == "pass", (rc, err, doc["inputs"])
    # inspect says nothing of them either (an unhashed .pyc row is what pip writes)
    di = os.path.join(site, "truthpkg-1.0.dist-info")
    rc, doc, err = inspect_doc(di)
    assert rc == 0 and doc["problems"] == [], (rc, doc["problems"], err)
    for p in pyc:
        os.unlink(os.path.join(site, p))
    for args in ([], ["--profile", "publish"], ["--fail-on", "info"]):
        rc, doc, err = audit_json(*args, v)
        assert rc == 0 and findings(doc) == [], (args, rc, err, findings(doc))
    rc, out, err = wg("audit", "--no-config", v)
    assert rc == 0 and "PASS truthpkg 1.0" in out and ".pyc" not in out + err, (rc, out, err)
    rc, out, err = wg("check", "--no-config", "--format", "json", "--fail-on", "info", di)
    assert rc == 0 and findings(json.loads(out)) == [], (rc, out[-600:])
    rc, doc, err = inspect_doc(di)
    assert rc == 0 and doc["problems"] == [] and not doc["wheel"]["record"]["orphans"], (rc, doc["problems"])
    assert not [m for m in doc["wheel"]["members"] if m["name"].endswith(".pyc")], doc["wheel"]["members"]
    # the truth: the package imports (and Python writes its caches again), still clean
    ok, why = imports(py)
    assert ok, why
    assert all(os.path.isfile(os.path.join(site, p)) for p in pyc), "python wrote no cache again"
    rc, doc, err = audit_json("--fail-on", "info", v)
    assert rc == 0 and findings(doc) == [], (rc, findings(doc))


@test
def a_file_changed_since_it_was_installed_warns_for_install_and_fails_publish():
    """A file whose hash differs from RECORD in what pip installed (pip's and certifi's
    cacert.pem, replaced by the machine) changed since it was installed: a warning for an
    install (it still imports), an error for publish; a wheel keeps its own words."""
    v, site, py = pip_venv("changed")
    data = os.path.join(site, "truthpkg", "data.txt")
    with open(data, "a") as f:
        f.write("changed after the install\n")
    rc, doc, err = audit_json(v)
    assert rc == 0 and findings(doc) == [("WG-REC-004", "truthpkg/data.txt", "warning")], (rc, findings(doc))
    (f,) = doc["inputs"][0]["findings"]
    assert f["message"] == data + ": its sha256 differs from RECORD: the file changed since it was installed", f
    assert "'truthpkg==1.0'" in f["fix"], f
    assert (doc["summary"]["errors"], doc["summary"]["warnings"], doc["summary"]["passed"]) == (0, 1, 1), doc["summary"]
    rc, doc, err = audit_json("--fail-on", "warning", v)
    assert rc == 1 and doc["inputs"][0]["verdict"] == "fail", (rc, doc["inputs"][0]["verdict"])
    rc, doc, err = audit_json("--profile", "publish", v)
    assert rc == 1 and findings(doc) == [("WG-REC-004", "truthpkg/data.txt", "error")], (rc, findings(doc))
    rc, out, err = wg("audit", "--no-config", v)
    assert rc == 0 and "warning[WG-REC-004] A file changed since it was installed" in out, (rc, out)
    assert "altered after it was built" not in out, out
    # check of the dist-info path: the same words; no target declared is publish's question
    di = os.path.join(site, "truthpkg-1.0.dist-info")
    rc, out, err = wg("check", "--no-config", "--format", "json", di)
    assert rc == 1 and findings(json.loads(out)) == [("WG-REC-004", "truthpkg/data.txt", "error")], (rc, out[-600:])
    rc, out, err = wg("check", "--no-config", "--format", "json", "--profile", "install", di)
    assert rc == 0 and findings(json.loads(out)) == [("WG-REC-004", "truthpkg/data.txt", "warning")], (rc, out[-600:])
    ok, why = imports(py)
    assert ok, why  # a warning: it still works
    # a wheel whose member differs from RECORD was altered after it was built: an error in
    # both profiles, with WG-REC-001's words
    os.makedirs(os.path.join(TMP, "altered"), exist_ok=True)
    whl = truth_wheel(os.path.join(TMP, "altered", "truthpkg-1.0-py3-none-any.whl"), change="truthpkg/data.txt")
    for profile in ("install", "publish"):
        rc, out, err = wg("check", "--no-config", "--format", "json", "--profile", profile, whl)
        doc = json.loads(out)
        assert rc == 1 and findings(doc) == [("WG-REC-001", "truthpkg/data.txt", "error")], (profile, findings(doc))
        assert doc["inputs"][0]["findings"][0]["message"].endswith("the wheel was altered after it was built"), doc


@test
def a_file_removed_from_the_install_is_named():
    """A file RECORD lists that is gone from what pip installed (not a cache) is an error
    that names it as missing from the installed distribution; and it breaks the import."""
    v, site, py = pip_venv("removed")
    os.unlink(os.path.join(site, "truthpkg", "sub", "mod.py"))
    for p in [r[0] for r in record_rows(site) if r[0].endswith(".pyc")]:
        os.unlink(os.path.join(site, p))  # the caches too: none is a finding
    for profile in ("install", "publish"):
        rc, doc, err = audit_json("--profile", profile, v)
        assert rc == 1 and findings(doc) == [("WG-REC-005", "truthpkg/sub/mod.py", "error")], (profile, rc, findings(doc))
        msg = doc["inputs"][0]["findings"][0]["message"]
        assert msg == "%s: RECORD lists truthpkg/sub/mod.py, but it is missing from the installed " \
            "distribution" % os.path.join(site, "truthpkg", "sub", "mod.py"), msg
    rc, out, err = wg("audit", "--no-config", v)
    assert rc == 1 and "FAIL truthpkg 1.0" in out and "error[WG-REC-005]" in out, (rc, out)
    assert "WG-WHL-002" not in out and "could not be read" not in out, out
    # inspect shows the member as absent, and says so as a problem
    rc, doc, err = inspect_doc(os.path.join(site, "truthpkg-1.0.dist-info"))
    absent = [m["name"] for m in doc["wheel"]["members"] if m["record"] == "absent"]
    assert absent == ["truthpkg/sub/mod.py"], doc["wheel"]["members"]
    assert [p["where"] for p in doc["problems"]] == ["truthpkg/sub/mod.py"], doc["problems"]
    ok, why = imports(py)
    assert not ok and "ImportError" in why, why  # the truth: the error is real


@test
def an_egg_info_is_named_as_not_audited():
    """An .egg-info lists no RECORD: it is named as not audited and counted, not skipped
    silently; it does not change the exit status (the audited ones decide it)."""
    site = system_site("sys-egg", None)
    egg = os.path.join(site, "Old_Thing-0.3.egg-info")
    os.makedirs(egg)
    with open(os.path.join(egg, "PKG-INFO"), "w") as f:
        f.write("Metadata-Version: 1.1\nName: Old-Thing\nVersion: 0.3\n")
    rc, doc, err = audit_json(site)
    assert rc == 0 and len(doc["inputs"]) == 1, (rc, err, doc["inputs"])
    # counted in one line, not named one line each (issue 29); --verbose names each
    assert "1 distribution installed as .egg-info has no RECORD: not audited (--verbose " \
        "lists them" in err and egg not in err, err
    assert "1 of 1 installed distributions\n" in err, err
    assert doc["not_audited"] == [{"path": egg, "reason": "an .egg-info has no RECORD of the files it installed"}], doc
    assert doc["summary"]["not_audited"] == 1, doc["summary"]
    rc, out, err = wg("audit", "--no-config", "--verbose", site)
    assert rc == 0 and "%s: not audited" % egg in err, (rc, err)
    # Many: still one line, however many there are.
    for i in range(5):
        os.makedirs(os.path.join(site, "more%d-1.0.egg-info" % i))
    rc, out, err = wg("audit", "--no-config", site)
    lines = [x for x in err.splitlines() if ".egg-info" in x]
    assert rc == 0 and lines == ["wheelgate audit: 6 distributions installed as .egg-info have "
                                 "no RECORD: not audited (--verbose lists them; JSON's "
                                 "not_audited too)"], err
    rc, doc, err = audit_json(site)
    assert len(doc["not_audited"]) == 6 and doc["summary"]["not_audited"] == 6, doc
    for i in range(5):
        os.rmdir(os.path.join(site, "more%d-1.0.egg-info" % i))
    # audit's own reports never suggest what audit has: --env, --stdin-filename
    rc, out, err = wg("audit", "--no-config", site)
    assert "--env" not in out and "--stdin-filename" not in out, out


@test
def debians_python_is_audited_without_a_false_error():
    """The real-environment truth check: Debian's /usr/bin/python3 (its dist-packages were
    stripped by dh_strip after RECORD was written, have no INSTALLER, and RECORDs that name
    build-tree scripts) audits clean: exit 0, no error finding, each difference noted."""
    py = SYS_PY or "/usr/bin/python3"
    if not os.path.exists(py) or not os.path.isdir("/usr/lib/python3/dist-packages"):
        raise Skip("no Debian python3 (%s) with /usr/lib/python3/dist-packages" % py)
    rc, doc, err = audit_json(py)
    assert not [i for i in doc["inputs"] if i["verdict"] == "error"], [i for i in doc["inputs"] if i["error"]]
    dirs = ["/usr/lib/python3/dist-packages"] + [os.path.join("/usr/local/lib", d, "dist-packages")
                                                 for d in os.listdir("/usr/local/lib") if d.startswith("python3")]
    # every distribution of both of its site directories is audited, every .egg-info counted
    dists = [d for s in dirs if os.path.isdir(s) for d in os.listdir(s) if d.endswith(".dist-info")]
    eggs = [os.path.join(s, d) for s in dirs if os.path.isdir(s) for d in os.listdir(s) if d.endswith(".egg-info")]
    assert len(doc["inputs"]) == len(dists) and "%d of %d" % (len(dists), len(dists)) in err, (err, dists)
    # counted in one line (--verbose names each), listed whole in JSON
    assert not [e for e in eggs if e in err], err
    if eggs:
        assert "%d distribution%s installed as .egg-info" % (len(eggs), "s" if len(eggs) > 1 else "") \
            in err, err
    assert sorted(n["path"] for n in doc["not_audited"]) == sorted(eggs), doc["not_audited"]
    assert doc["summary"]["not_audited"] == len(eggs), doc["summary"]
    errors = [(i["path"], f["rule"], f["message"][:200]) for i in doc["inputs"] for f in i["findings"]
              if f["severity"] == "error"]
    warnings = sum(i["counts"]["warning"] for i in doc["inputs"])
    notes = err.count(": note: ")
    print("NOTE: %s: %d distributions audited, %d .egg-info not audited, %d errors, %d warnings, "
          "%d notes, rc %d" % (py, len(dists), len(eggs), len(errors), warnings, notes, rc))
    assert rc == 0 and not errors, (rc, errors)
    # what was treated differently is said: a note for each distribution the packaging changed
    changed = [i["path"] for i in doc["inputs"] if i["counts"]["warning"]]
    for c in changed:
        assert "%s: note: no INSTALLER" % c in err, (c, err)
    noted = [i for i in doc["inputs"] if "note" in i]
    assert set(changed) <= {i["path"] for i in noted}, (changed, noted)


if __name__ == "__main__":
    rc = main()
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

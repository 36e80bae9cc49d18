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


def install(site, whl):
    """What an installer leaves: the members under the site directory, RECORD as written."""
    with zipfile.ZipFile(whl) as z:
        z.extractall(site)


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
    assert rc == 2 and "norec-1.0.dist-info/RECORD" in err, (rc, err)
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
    bad = [f for f in doc["inputs"][0]["findings"] if f["rule"] == "WG-REC-001"]
    assert rc == 1 and [f["member"] for f in bad] == [r[0]], (rc, doc["inputs"][0]["findings"])


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


def dpkg_explains(f, member, site_dirs):
    """Why a finding on a Debian package's file is Debian's doing, or None: the file is as
    Debian's package shipped it (dpkg's md5sums) though it differs from RECORD (dh_strip ran
    after the RECORD was written), or RECORD names a build-tree file the package does not
    ship (scripts-3.X/...)."""
    if f["rule"] == "WG-WHL-002" and ": listed in RECORD but not installed" in f["message"]:
        path = f["message"].split(": listed in RECORD")[0]
        own = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        return "RECORD names a build-tree file Debian does not ship" \
            if own.returncode != 0 and any(path.startswith(d + "/scripts-3.") for d in site_dirs) else None
    path = None
    for d in site_dirs:
        if member and path is None and os.path.exists(os.path.join(d, member)):
            path = os.path.join(d, member)
    if not path:
        return None
    own = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
    if f["rule"] != "WG-REC-001" or own.returncode != 0:
        return None
    pkg = own.stdout.split(":")[0]
    rel = os.path.relpath(path, "/")
    for sums in ("/var/lib/dpkg/info/%s.md5sums" % pkg, "/var/lib/dpkg/info/%s:amd64.md5sums" % pkg):
        if os.path.exists(sums):
            for line in open(sums):
                s, _, p = line.rstrip("\n").partition("  ")
                if p == rel:
                    with open(path, "rb") as fh:
                        if hashlib.md5(fh.read()).hexdigest() == s:
                            return "as %s shipped it: changed by Debian's build after RECORD" % pkg
                    return None
    return None


@test
def debians_python_is_audited_without_a_crash_or_a_false_error():
    py = SYS_PY or "/usr/bin/python3"
    if not os.path.exists(py) or not shutil.which("dpkg"):
        raise Skip("no Debian python3 (%s) with dpkg" % py)
    rc, doc, err = audit_json(py)
    assert rc in (0, 1), (rc, err)
    assert not [i for i in doc["inputs"] if i["verdict"] == "error"], [i for i in doc["inputs"] if i["error"]]
    dirs = ["/usr/lib/python3/dist-packages"] + [os.path.join("/usr/local/lib", d, "dist-packages")
                                                 for d in os.listdir("/usr/local/lib") if d.startswith("python3")]
    # every distribution of both of its site directories is audited
    dists = [d for s in dirs if os.path.isdir(s) for d in os.listdir(s) if d.endswith(".dist-info")]
    assert len(doc["inputs"]) == len(dists) and "%d of %d" % (len(dists), len(dists)) in err, (err, dists)
    unexplained, explained = [], 0
    for i in doc["inputs"]:
        for f in i["findings"]:
            if f["severity"] != "error":
                continue
            why = dpkg_explains(f, f.get("member") or "", dirs)
            if why:
                explained += 1
            else:
                unexplained.append((i["path"], f["rule"], f["message"][:200]))
    # Every error is either Debian's packaging (explained above) or a file changed on this
    # machine after dpkg installed it: the latter is what audit is for, and is reported here.
    changed = [u for u in unexplained if u[1] == "WG-REC-001"]
    assert len(unexplained) == len(changed), [u for u in unexplained if u[1] != "WG-REC-001"]
    for u in changed:
        print("NOTE: changed on this machine since dpkg installed it:", u[0], u[2])
    assert rc == (1 if explained or changed else 0), (rc, explained, changed)


if __name__ == "__main__":
    rc = main()
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

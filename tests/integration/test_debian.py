#!/usr/bin/env python3
"""A CPU-only real-code corpus (issue 24, point 6b): Debian's own pure-Python python3-*
packages, repacked into py3-none-any wheels by tests/debian/repack.py (its rule chooses them:
every installed python3-* package with modules in dist-packages, no compiled file, and whose
modules all import in Debian's python3), judged by `wheelgate check --profile install` with
`--env /usr/bin/python3` and without it:

- every original passes with no error: each one imports in Debian's python3 (the repack ran
  the imports), so an error on one is a false claim; a failure names each error, with what
  running the import statement it names really does;
- every hollow twin (a chosen package with `from . import _C` appended to its __init__.py)
  fails with WG-HOL-001 at that line, and the claim is proven true: the twin's files, first on
  sys.path of Debian's python3, do not import (ImportError), while the original's import;
- the wheels are what they say: RECORD's sha256 and sizes (read here with zipfile and
  hashlib), py3-none-any, METADATA naming the file's name and version, members equal to the
  package's own files under dist-packages (dpkg -L, on a sample), no ELF member;
- the chosen packages whose dist-info Debian ships with a RECORD are audited in place
  (`wheelgate audit /usr/bin/python3 --only ...`): no error; the others are counted.

At least 80 packages must be chosen: scripts/setup.sh --test installs enough on a fresh
Debian 12. Fewer, no Debian python3 or no dpkg: skipped outside CI, failed in CI.
The repack's output stays in OUT (wheels/, twins/, manifest.json, the reports).

Usage: test_debian.py WHEELGATE ROOT OUT [SYS_PYTHON]
"""
import base64
import concurrent.futures
import csv
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

from harness import Missing, main, test  # noqa: E402

WG, ROOT, OUT = [os.path.abspath(a) for a in sys.argv[1:4]]
SYS_PY = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else "/usr/bin/python3"
SITE = "/usr/lib/python3/dist-packages"
REPACK = os.path.join(ROOT, "tests", "debian", "repack.py")
MIN_CHOSEN, MIN_TWINS = 80, 5
JOBS = str(len(os.sched_getaffinity(0)))
TMP = tempfile.mkdtemp(prefix="wg-debian-")
STATE = {}
TIMES = []


def timed(what, fn, *a, **kw):
    t0 = time.monotonic()
    r = fn(*a, **kw)
    TIMES.append((what, time.monotonic() - t0))
    return r


def repacked():
    """The repack's manifest (run once): Missing without Debian's python3 and dpkg, or with
    fewer than MIN_CHOSEN packages chosen."""
    if "manifest" in STATE:
        return STATE["manifest"]
    if not os.access(SYS_PY, os.X_OK) or not os.path.isdir(SITE):
        raise Missing("no Debian python3 at %s with %s" % (SYS_PY, SITE))
    if not shutil.which("dpkg-query") or not shutil.which("dpkg"):
        raise Missing("no dpkg-query (not a Debian system)")
    p = timed("repack", subprocess.run, [SYS_PY, REPACK, OUT, "--jobs", JOBS],
              capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    print(p.stdout.strip())
    with open(os.path.join(OUT, "manifest.json")) as f:
        m = json.load(f)
    STATE["manifest"] = m
    if len(m["chosen"]) < MIN_CHOSEN:
        raise Missing("only %d qualifying python3-* packages installed (at least %d wanted: "
                      "scripts/setup.sh --test installs them)" % (len(m["chosen"]), MIN_CHOSEN))
    return m


def check(what, env):
    """wheelgate check --profile install [--env SYS_PY] on a folder of OUT: {file: input}."""
    key = (what, env)
    if key in STATE:
        return STATE[key]
    repacked()
    doc_path = os.path.join(OUT, "check-%s-%s.json" % (what, "env" if env else "noenv"))
    cmd = [WG, "check", "--profile", "install", "--format", "json", "-o", doc_path, "-j", JOBS]
    if env:
        cmd += ["--env", SYS_PY]
    p = timed("check %s %s" % (what, "--env" if env else "(no --env)"), subprocess.run,
              cmd + [os.path.join(OUT, what)], capture_output=True, text=True, timeout=900)
    assert p.returncode in (0, 1), (p.returncode, p.stderr[-2000:])
    with open(doc_path) as f:
        doc = json.load(f)
    res = {os.path.basename(i["path"]): i for i in doc["inputs"]}
    STATE[key] = res
    return res


# --- what an import really does -----------------------------------------------------------

def extract(whl, dest):
    shutil.rmtree(dest, ignore_errors=True)
    with zipfile.ZipFile(whl) as z:
        z.extractall(dest)
    return dest


def run_py(code, d, timeout=300):
    """Runs code in Debian's python3 (isolated from the environment) with d first on
    sys.path: (exit status, last line of stderr)."""
    pre = "import sys; sys.path.insert(0, %r)\n" % d
    p = subprocess.run([SYS_PY, "-I", "-c", pre + code], capture_output=True, text=True,
                       timeout=timeout)
    lines = [x for x in p.stderr.strip().splitlines() if x.strip()]
    return p.returncode, (lines[-1] if lines else "")


def statement_at(text, line):
    """The import statement that starts at line (1-based) of a source, parentheses and
    backslashes followed; None when the line holds none."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    stmt, i = lines[line - 1].strip(), line
    while (stmt.count("(") > stmt.count(")") or stmt.endswith("\\")) and i < len(lines):
        stmt = stmt.rstrip("\\") + " " + lines[i].strip()
        i += 1
    stmt = re.sub(r"\s+", " ", stmt.split("#")[0]).strip()
    return stmt if re.match(r"(from|import)\s", stmt) else None


def absolute(stmt, member):
    """A relative `from .x import y` made absolute for the module at member."""
    m = re.match(r"from (\.+)(\S*) import (.*)$", stmt)
    if not m:
        return stmt
    pkg = member[:-3].split("/") if member.endswith(".py") else member.split("/")
    pkg = pkg[:-1]      # the module's package (an __init__.py's too: its folder)
    up = len(m.group(1)) - 1
    base = pkg[:len(pkg) - up] if up else pkg
    mod = ".".join(base + ([m.group(2)] if m.group(2) else []))
    return "from %s import %s" % (mod, m.group(3))


def truth(whl, finding):
    """What running the import statement a WG-HOL-001 finding names does, from the wheel's
    files first on sys.path of Debian's python3 (dependencies from dist-packages)."""
    member, line = finding.get("file"), finding.get("line")
    if not member or not line:
        return "no file:line to run"
    d = os.path.join(TMP, "truth", os.path.basename(whl))
    if not os.path.isdir(d):
        extract(whl, d)
    with open(os.path.join(d, member), encoding="utf-8", errors="replace") as f:
        stmt = statement_at(f.read(), line)
    if not stmt:
        return "no import statement at %s:%d" % (member, line)
    stmt = absolute(stmt, member)
    rc, last = run_py(stmt, d)
    return ("FALSE: `%s` runs" % stmt) if rc == 0 else ("true: `%s`: %s" % (stmt, last))


# --- the tests ------------------------------------------------------------------------------

@test
def the_rule_chooses_and_says_why():
    """Every installed python3-* package is chosen or excluded with a reason; enough are
    chosen; the files a wheel holds are its package's own (dpkg -L, every 5th package)."""
    m = repacked()
    p = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${db:Status-Status}\n",
                        "python3-*"], capture_output=True, text=True, check=True)
    installed = sorted(line.split("\t")[0] for line in p.stdout.splitlines()
                       if line.endswith("\tinstalled"))
    chosen = [c["package"] for c in m["chosen"]]
    excluded = [e["package"] for e in m["excluded"]]
    assert sorted(chosen + excluded) == installed, (set(installed) ^ set(chosen + excluded))
    assert all(e["reason"] for e in m["excluded"]), m["excluded"]
    reasons = {}
    for e in m["excluded"]:
        reasons.setdefault(re.split(r" /|:| \(", e["reason"])[0], []).append(e["package"])
    print("NOTE: %d installed python3-* packages: %d chosen, %d excluded (%s)" % (
        len(installed), len(chosen), len(excluded),
        "; ".join("%s: %d" % (k, len(v)) for k, v in sorted(reasons.items()))))
    for e in m["excluded"]:
        if not e["reason"].startswith(("no Python module", "compiled file")):
            print("NOTE: excluded %s: %s" % (e["package"], e["reason"]))
    for c in m["chosen"][::5]:
        p = subprocess.run(["dpkg", "-L", c["package"]], capture_output=True, text=True,
                           check=True)
        own = set()
        for f in p.stdout.splitlines():
            if not f.startswith(SITE + "/") or (os.path.isdir(f) and not os.path.islink(f)):
                continue
            rel = f[len(SITE) + 1:]
            if rel.split("/")[0] == c["metadata_dir"] or "__pycache__" in rel.split("/"):
                continue
            if not os.path.isfile(f):
                continue    # a link to a directory, a broken link: the manifest says
            own.add(rel)
        with zipfile.ZipFile(os.path.join(OUT, "wheels", c["wheel"])) as z:
            members = {n for n in z.namelist() if not n.split("/")[0].endswith(".dist-info")}
        assert members == own, (c["package"], sorted(members ^ own)[:10])


@test
def the_rule_parts_work_both_ways():
    """The repack's rule on inputs made here: a module that does not import is told (the
    real packages all import, so this way is not seen otherwise), namespace folders are looked
    into, *-stubs and data folders are not modules; requires.txt sections become markers."""
    if not os.access(SYS_PY, os.X_OK):
        raise Missing("no Debian python3 at %s" % SYS_PY)
    spec = importlib.util.spec_from_file_location("repack", REPACK)
    rp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rp)
    name, err, _ = rp.try_import(SYS_PY, "json", 60)
    assert err is None, err
    name, err, _ = rp.try_import(SYS_PY, "wg_no_such_module", 60)
    assert err == "ModuleNotFoundError: No module named 'wg_no_such_module'", err
    names, regular = rp.import_names([
        "six.py", "ns/a/__init__.py", "ns/a/x.py", "ns/b.py", "ns/c/d/__init__.py",
        "apt_pkg-stubs/__init__.pyi", "data/x.txt", "foo-1.0.egg-info/PKG-INFO", "pkg/__init__.py",
        "pkg/sub/y.py", "not-ident.py", "_priv/__init__.py"])
    assert names == ["_priv", "ns.a", "ns.b", "ns.c.d", "pkg", "six"], names
    assert regular == {"_priv": "_priv/__init__.py", "ns.a": "ns/a/__init__.py",
                       "ns.c.d": "ns/c/d/__init__.py", "pkg": "pkg/__init__.py"}, regular
    reqs, extras = rp.requires_txt("a>=1\n\n[:python_version < \"3.8\"]\nb\n[x]\nc\n"
                                   "[y:sys_platform == \"win32\"]\nd\n")
    assert reqs == ["a>=1", 'b; python_version < "3.8"', 'c; extra == "x"',
                    'd; (sys_platform == "win32") and extra == "y"'], reqs
    assert extras == ["x", "y"], extras
    assert [rp.debian_version(v) for v in ("1:2.4.16-2", "1.0~rc1+dfsg-3", "2022.12.1+ds.1-1",
                                           "0.99.30", "3.2-1~bpo")] == \
        ["2.4.16", "1.0rc1+dfsg", "2022.12.1+ds.1", "0.99.30", "3.2"]


@test
def the_wheels_are_what_they_say():
    """RECORD matches every member (sha256, size), WHEEL is py3-none-any, METADATA names
    the file's name and version, one dist-info, no ELF member."""
    m = repacked()
    for c in m["chosen"] + [dict(t, twin=True) for t in m["twins"]]:
        path = os.path.join(OUT, "twins" if c.get("twin") else "wheels", c["wheel"])
        name, version = c["wheel"].split("-")[:2]
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            dis = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
            assert dis == {"%s-%s.dist-info" % (name, version)}, (c["wheel"], dis)
            di = dis.pop()
            rows = list(csv.reader(io.StringIO(z.read(di + "/RECORD").decode())))
            assert sorted(r[0] for r in rows) == sorted(names), c["wheel"]
            for r in rows:
                data = z.read(r[0])
                assert data[:4] != b"\x7fELF", (c["wheel"], r[0])
                if r[0] == di + "/RECORD":
                    assert r[1:] == ["", ""], r
                    continue
                h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                assert r[1] == "sha256=" + h.decode() and r[2] == str(len(data)), (c["wheel"], r)
            wheel = z.read(di + "/WHEEL").decode()
            assert "Tag: py3-none-any\n" in wheel and "Root-Is-Purelib: true\n" in wheel, wheel
            head = z.read(di + "/METADATA").decode("utf-8", "replace").split("\n\n")[0]
            fields = dict(line.split(": ", 1) for line in head.splitlines()
                          if ": " in line and not line[0].isspace())
            assert re.sub(r"[-_.]+", "_", fields["Name"]).lower() == name, (c["wheel"], fields)
            assert fields["Version"].replace("-", "_") == version, (c["wheel"], fields)


def originals_pass(env):
    m = repacked()
    res = check("wheels", env)
    assert sorted(res) == sorted(c["wheel"] for c in m["chosen"]), sorted(res)
    errors, counts = [], {"error": 0, "warning": 0, "info": 0}
    by_wheel = {c["wheel"]: c for c in m["chosen"]}
    for w, i in sorted(res.items()):
        for k in counts:
            counts[k] += i["counts"][k]
        for f in i["findings"]:
            if f["severity"] != "info":
                print("NOTE: %s %s[%s] %s: %s" % ("--env" if env else "no --env",
                      f["severity"], f["rule"], by_wheel[w]["package"], f["message"]))
            if f["severity"] == "error":
                t = truth(os.path.join(OUT, "wheels", w), f) if f["rule"] == "WG-HOL-001" else ""
                errors.append("%s (%s): %s %s%s" % (by_wheel[w]["package"], w, f["rule"],
                                                   f["message"], " [%s]" % t if t else ""))
        assert i["verdict"] == "pass" or i["counts"]["error"], (w, i["verdict"], i.get("error"))
    print("NOTE: originals, %s: %d wheels, %d errors, %d warnings, %d info" % (
        "--env " + SYS_PY if env else "no --env", len(res), counts["error"], counts["warning"],
        counts["info"]))
    assert not errors, "%d errors on wheels that import:\n  %s" % (len(errors),
                                                                    "\n  ".join(errors))


@test
def the_originals_pass_with_env():
    originals_pass(True)


@test
def the_originals_pass_without_env():
    originals_pass(False)


def twins_fail(env):
    m = repacked()
    assert len(m["twins"]) >= MIN_TWINS, m["twin_rule"]
    res = check("twins", env)
    assert sorted(res) == sorted(t["wheel"] for t in m["twins"]), sorted(res)
    for t in m["twins"]:
        i = res[t["wheel"]]
        hol = [f for f in i["findings"] if f["rule"] == "WG-HOL-001" and f["severity"] == "error"
               and f["file"] == t["init"] and f["line"] == t["line"]]
        assert i["verdict"] == "fail" and hol, (t, i["verdict"], i["findings"])
        assert "%s._C" % t["module"] in hol[0]["message"], hol[0]["message"]


@test
def the_twins_fail_with_env():
    twins_fail(True)


@test
def the_twins_fail_without_env():
    twins_fail(False)


@test
def the_twins_really_do_not_import():
    """The claim is true: the twin's files first on sys.path, the import fails; the
    original's the same way import (from those files, not dist-packages')."""
    m = repacked()
    # The module must come from the extracted files (found there before it runs: a module
    # may replace itself in sys.modules, as pythran's omp does).
    code = ("import importlib, importlib.util, os; s = importlib.util.find_spec(%r); "
            "assert os.path.abspath(s.origin).startswith(sys.path[0] + os.sep), s.origin; "
            "importlib.import_module(s.name)")

    def one(t):
        out = []
        for kind in ("wheels", "twins"):
            d = extract(os.path.join(OUT, kind, t["wheel"]),
                        os.path.join(TMP, kind, t["wheel"]))
            out.append(run_py(code % t["module"], d))
        return t, out

    with concurrent.futures.ThreadPoolExecutor(int(JOBS)) as ex:
        results = timed("imports of the twins", lambda: list(ex.map(one, m["twins"])))
    msgs = {}
    for t, ((rc0, err0), (rc1, err1)) in results:
        assert rc0 == 0, ("the original does not import", t, err0)
        assert rc1 != 0 and re.match(r"(ModuleNotFound|Import)Error: .*\b_C\b", err1), (
            "the twin imports", t, rc1, err1)
        msgs[t["package"]] = err1
    # What wheelgate quotes against what Python says (reported, not asserted here).
    doc = check("twins", True)
    for t in m["twins"]:
        f = [f for f in doc[t["wheel"]]["findings"] if f["rule"] == "WG-HOL-001"][0]
        said = re.search(r'fails with "([^"]*)"', f["message"])
        if said and said.group(1) not in msgs[t["package"]]:
            print("NOTE: %s: wheelgate quotes %r, python3 says %r" % (
                t["package"], said.group(1), msgs[t["package"]]))


@test
def the_installed_ones_audit_in_place():
    """The chosen packages whose dist-info Debian ships with a RECORD, audited where they
    are: each one audited, no error. Those without a RECORD are counted."""
    m = repacked()
    rec = [c for c in m["chosen"] if c["installed_record"]]
    no_rec = [c for c in m["chosen"] if not c["installed_record"]]
    assert rec, "no chosen package has a dist-info with a RECORD"
    doc_path = os.path.join(OUT, "audit.json")
    p = timed("audit", subprocess.run,
              [WG, "audit", SYS_PY, "--only", ",".join(c["name"] for c in rec), "--format",
               "json", "-o", doc_path, "-j", JOBS], capture_output=True, text=True, timeout=600)
    assert p.returncode in (0, 1), (p.returncode, p.stderr[-2000:])
    with open(doc_path) as f:
        doc = json.load(f)
    norm = lambda s: re.sub(r"[-_.]+", "-", s).lower()  # noqa: E731
    got = sorted(norm(i["path"].rsplit(" ", 1)[0]) for i in doc["inputs"])
    assert got == sorted(norm(c["name"]) for c in rec), got
    errors = ["%s: %s %s" % (i["path"], f["rule"], f["message"]) for i in doc["inputs"]
              for f in i["findings"] if f["severity"] == "error"]
    print("NOTE: audit in place: %d audited (%d errors, %d warnings), %d chosen without a "
          "RECORD not audited (%d *.egg-info, %d no metadata, %d dist-info without RECORD)" % (
              len(doc["inputs"]), doc["summary"]["errors"], doc["summary"]["warnings"],
              len(no_rec), sum(c["metadata_from"] == "egg-info" for c in no_rec),
              sum(c["metadata_from"] == "debian" for c in no_rec),
              sum(c["metadata_from"] == "dist-info" for c in no_rec)))
    assert p.returncode == 0 and not errors, (p.returncode, errors)


if __name__ == "__main__":
    t0 = time.monotonic()
    rc = main()
    print("NOTE: times: " + ", ".join("%s %.1f s" % t for t in TIMES)
          + "; whole test %.1f s" % (time.monotonic() - t0))
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

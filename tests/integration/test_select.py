#!/usr/bin/env python3
"""Rule selection, ignores, baselines and configuration lookup (issue 16, point 5): rules
picked by id, id prefix, name and glob in any case (CLI, configuration, Python binding), a
selector that picks nothing refused with a "did you mean", mistyped commands and options,
--gpu capabilities outside the known range, per-input ignores, --baseline/--write-baseline,
and the configuration found by walking up from the current directory.

Usage: test_select.py WHEELGATE FIXTURES REPO_ROOT LIBWHEELGATE [PYTHON_WITH_JSONSCHEMA]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from harness import main, test, validate  # noqa: E402

WG, FIX, ROOT, LIB = [os.path.abspath(a) for a in sys.argv[1:5]]
SYS_PY = sys.argv[5] if len(sys.argv) > 5 else ""
W = os.path.join(FIX, "wheels")
# A manylinux_2_28 wheel whose extension needs GLIBC_2.38 (WG-SYS-002, one finding), and a
# wheel altered after its build (WG-REC-001 twice, WG-REC-003 twice).
SYS = "ml228new-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"
REC = "badrec-1.0-py3-none-any.whl"


def run(*args, cwd=None):
    p = subprocess.run([WG, *args], capture_output=True, timeout=300, cwd=cwd)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def rules_of(path, *args, cwd=None):
    """The rule ids of the findings of `check --format json` on path, and the document."""
    rc, out, err = run("check", "--format", "json", *args, path, cwd=cwd)
    assert rc in (0, 1), (rc, err)
    doc = json.loads(out)
    return sorted(f["rule"] for i in doc["inputs"] for f in i["findings"]), doc, err


def workdir():
    """A temporary repository (.git) holding copies of the two fixture wheels."""
    d = tempfile.mkdtemp(prefix="wg-select-")
    os.mkdir(os.path.join(d, ".git"))
    for w in (SYS, REC):
        shutil.copy(os.path.join(W, w), d)
    return d


@test
def fixtures_have_their_findings():
    got, _, _ = rules_of(os.path.join(W, SYS), "--no-config")
    assert got == ["WG-SYS-002"], got
    got, _, _ = rules_of(os.path.join(W, REC), "--no-config")
    assert got == ["WG-REC-001", "WG-REC-001", "WG-REC-003", "WG-REC-003"], got


@test
def selectors_id_prefix_name_glob_any_case():
    sysw = os.path.join(W, SYS)
    # a rule's name is its check kind, as --list-rules shows it
    rc, out, err = run("check", "--no-config", "--list-rules")
    row = [line.split() for line in out.splitlines() if line.startswith("WG-SYS-002 ")]
    assert rc == 0 and len(row) == 1, (rc, out, err)
    name = row[0][4]
    assert name == "platform-tag-versions", row
    for sel in ("WG-SYS-002", "wg-sys-002", "WG-SYS", "wg-sys", "WG-SYS-*", "wg-sys-00?",
                name, name.upper().replace("-", "_"), name[:9] + "*", "WG"):
        got, _, err = rules_of(sysw, "--no-config", "--disable", sel)
        assert got == [], (sel, got, err)
    # selectors that pick other rules leave it
    for sel in ("WG-REC", "WG-SYS-001", "hollow-wheel", "WG-SYS-00[13]"):
        got, _, err = rules_of(sysw, "--no-config", "--disable", sel)
        assert got == ["WG-SYS-002"], (sel, got, err)
    # a comma list, and --enable after --disable of a prefix is not what disables it again
    got, _, _ = rules_of(os.path.join(W, REC), "--no-config", "--disable", "wg-rec-001,WG-SYS")
    assert got == ["WG-REC-003", "WG-REC-003"], got


@test
def selector_matching_nothing_is_refused_with_a_suggestion():
    for sel, near in (("WG-SIS", "WG-SYS"), ("WG-SYS-02", "WG-SYS-002"),
                      ("hollow-weel", "hollow-wheel"), ("WG-SY", "WG-SYS")):
        rc, out, err = run("check", "--no-config", "--disable", sel, os.path.join(W, SYS))
        assert rc == 2 and "no rule '%s'" % sel in err, (sel, rc, err)
        assert "did you mean '%s'?" % near in err, (sel, err)
    rc, out, err = run("check", "--no-config", "--enable", "XYZ-*", os.path.join(W, SYS))
    assert rc == 2 and "--enable: no rule 'XYZ-*'" in err and "did you mean" not in err, err


@test
def selectors_in_the_configuration():
    d = workdir()
    with open(os.path.join(d, "wheelgate.yaml"), "w") as f:
        f.write("disable: [wg-sys-*]\n")
    got, _, err = rules_of(SYS, cwd=d)
    assert got == [], (got, err)
    with open(os.path.join(d, "wheelgate.yaml"), "w") as f:
        f.write("disable: [WG-SIS]\n")
    rc, out, err = run("check", SYS, cwd=d)
    assert rc == 2 and "did you mean 'WG-SYS'?" in err and "wheelgate.yaml" in err, (rc, err)
    shutil.rmtree(d)


@test
def python_binding_selectors():
    code = ("import sys, wheelgate\n"
            "r = wheelgate.check(sys.argv[1], disable='wg-sys')\n"
            "print(len(r.findings))\n"
            "r = wheelgate.check(sys.argv[1], disable=['Platform-Tag-Versions'])\n"
            "print(len(r.findings))\n"
            "r = wheelgate.check(sys.argv[1], disable=['WG-REC-*'])\n"
            "print(len(r.findings))\n"
            "try:\n"
            "    wheelgate.check(sys.argv[1], disable='WG-SIS')\n"
            "except ValueError as e:\n"
            "    print('refused', e)\n")
    env = dict(os.environ, WHEELGATE_LIB=LIB, PYTHONPATH=os.path.join(ROOT, "hooks", "pip"))
    if os.environ.get("WG_LIBASAN"):
        # a sanitizer build: Python loads the instrumented library, the runtime goes first
        env.update(LD_PRELOAD=os.environ["WG_LIBASAN"], ASAN_OPTIONS="detect_leaks=0")
    p = subprocess.run([sys.executable, "-c", code, os.path.join(W, SYS)], capture_output=True,
                       env=env, timeout=300)
    lines = p.stdout.decode().splitlines()
    assert p.returncode == 0 and lines[:3] == ["0", "0", "1"], (lines, p.stderr.decode())
    assert lines[3].startswith("refused") and "did you mean 'WG-SYS'?" in lines[3], lines


@test
def did_you_mean_commands_and_options():
    rc, out, err = run("chekc", "x")
    assert rc == 2 and "unknown command 'chekc'; did you mean 'check'?" in err, err
    rc, out, err = run("frobnicate")
    assert rc == 2 and "unknown command 'frobnicate'" in err and "did you mean" not in err, err
    rc, out, err = run("check", "--disbale", "WG-SYS", "x.whl")
    assert rc == 2 and "did you mean '--disable'?" in err, err
    rc, out, err = run("check", "--basline=x.json", "x.whl")
    assert rc == 2 and "did you mean '--baseline'?" in err, err
    rc, out, err = run("inspect", "--jsn", "x")
    assert rc == 2 and "did you mean '--json'?" in err, err
    rc, out, err = run("check", "--zzzzzzzz", "x.whl")
    assert rc == 2 and "did you mean" not in err, err


@test
def gpu_outside_the_known_range_refused():
    sysw = os.path.join(W, SYS)
    for g in ("sm_999", "99.0", "sm_20", "2.1", "13.0", "compute_150"):
        rc, out, err = run("check", "--no-config", "--gpu", g, sysw)
        assert rc == 2 and "outside the known range 3.0 to 12.9" in err, (g, rc, err)
    for g in ("sm_5", "sm_9x"):
        rc, out, err = run("check", "--no-config", "--gpu", g, sysw)
        assert rc == 2 and "unknown GPU" in err, (g, rc, err)
    for g in ("sm_30", "3.0", "sm_90", "12.1", "sm_120a", "B200"):
        rc, out, err = run("check", "--no-config", "--gpu", g, sysw)
        assert rc == 1, (g, rc, err)


@test
def configuration_found_walking_up():
    d = workdir()
    sub = os.path.join(d, "a", "b")
    os.makedirs(sub)
    with open(os.path.join(d, "wheelgate.yaml"), "w") as f:
        f.write("disable: [WG-SYS]\n")
    got, _, err = rules_of(os.path.join(d, SYS), cwd=sub)
    assert got == [] and "configuration from %s/wheelgate.yaml" % d in err, (got, err)
    # a pyproject.toml without [tool.wheelgate] on the way is passed over, one with it is used
    with open(os.path.join(d, "a", "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "x"\n')
    got, _, err = rules_of(os.path.join(d, SYS), cwd=sub)
    assert got == [] and "%s/wheelgate.yaml" % d in err, (got, err)
    with open(os.path.join(d, "a", "pyproject.toml"), "w") as f:
        f.write('[tool.wheelgate]\ndisable = ["WG-REC"]\n')
    got, _, err = rules_of(os.path.join(d, SYS), cwd=sub)
    assert got == ["WG-SYS-002"] and "%s/a/pyproject.toml" % d in err, (got, err)
    # a .git directory ends the search: nothing above it is read
    os.mkdir(os.path.join(sub, ".git"))
    got, _, err = rules_of(os.path.join(d, SYS), cwd=sub)
    assert got == ["WG-SYS-002"] and "configuration from" not in err, (got, err)
    # in the current directory: used, and not named (as before)
    got, _, err = rules_of(SYS, cwd=d)
    assert got == [] and "configuration from" not in err, (got, err)
    shutil.rmtree(d)


@test
def ignores_per_input():
    d = workdir()
    with open(os.path.join(d, "wheelgate.yaml"), "w") as f:
        f.write('ignore:\n  - path: "badrec-*.whl"\n    rules: [wg-rec-001, record-unlisted]\n'
                '  - path: "other-*.whl"\n    rules: WG-SYS\n')
    got, doc, err = rules_of(REC, cwd=d)
    assert got == [] and doc["summary"]["ignored"] == 4, (got, doc["summary"], err)
    assert doc["inputs"][0]["ignored"] == 4 and doc["inputs"][0]["verdict"] == "pass", doc
    validate(json.dumps(doc), os.path.join(ROOT, "docs", "schema", "check.schema.json"), SYS_PY,
             required=False)
    # the ignore is for badrec only: WG-SYS-002 of the other wheel stays
    got, doc, _ = rules_of(SYS, cwd=d)
    assert got == ["WG-SYS-002"] and doc["summary"]["ignored"] == 0, got
    rc, out, err = run("check", REC, cwd=d)
    assert rc == 0 and "0 known findings baselined (no --baseline), 4 ignored" in out, out
    # pyproject.toml's [[tool.wheelgate.ignore]]
    os.unlink(os.path.join(d, "wheelgate.yaml"))
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write('[[tool.wheelgate.ignore]]\npath = "*.whl"\nrules = ["WG-REC-003"]\n')
    got, doc, err = rules_of(REC, cwd=d)
    assert got == ["WG-REC-001", "WG-REC-001"] and doc["summary"]["ignored"] == 2, (got, err)
    # broken entries and unknown rules are errors naming the file
    for text, what in (("ignore: [{path: x}]\n", "ignore: each entry is"),
                       ("ignore: x\n", "ignore: a list of"),
                       ("ignore: [{path: x, rules: [WG-RCE-001]}]\n",
                        "did you mean 'WG-REC-001'?")):
        os.unlink(os.path.join(d, "pyproject.toml")) if os.path.exists(
            os.path.join(d, "pyproject.toml")) else None
        with open(os.path.join(d, "wheelgate.yaml"), "w") as f:
            f.write(text)
        rc, out, err = run("check", REC, cwd=d)
        assert rc == 2 and "wheelgate.yaml" in err and what in err, (text, rc, err)
    shutil.rmtree(d)


@test
def baseline_known_findings_pass_new_ones_fail():
    d = workdir()
    base = os.path.join(d, "base.json")
    rc, out, err = run("check", "--no-config", "--write-baseline", base, SYS, REC, cwd=d)
    assert rc == 1, (rc, err)
    with open(base) as f:
        b = json.load(f)
    assert b["schema"] == "wheelgate.baseline/1", b
    assert sorted(x["rule"] for x in b["findings"]) == ["WG-REC-001", "WG-REC-001", "WG-REC-003",
                                                         "WG-REC-003", "WG-SYS-002"], b
    # inputs without their version
    assert {x["input"] for x in b["findings"]} == {"badrec-py3-none-any.whl",
                                                   "ml228new-cp312-cp312-manylinux_2_28_x86_64.whl"}
    rc, out, err = run("check", "--no-config", "--baseline", base, SYS, REC, cwd=d)
    assert rc == 0 and "5 known findings baselined (%s)" % base in out, (rc, out, err)
    got, doc, _ = rules_of(SYS, "--no-config", "--baseline", base, cwd=d)
    assert got == [] and doc["summary"]["baselined"] == 1, doc["summary"]
    validate(json.dumps(doc), os.path.join(ROOT, "docs", "schema", "check.schema.json"), SYS_PY,
             required=False)
    # a new release of the same wheel keeps its baseline (the version is not matched); its
    # new finding (the filename's version differs from METADATA: WG-TAG-006) fails
    os.rename(os.path.join(d, REC), os.path.join(d, "badrec-2.0-py3-none-any.whl"))
    got, doc, _ = rules_of("badrec-2.0-py3-none-any.whl", "--no-config", "--baseline", base, cwd=d)
    assert got == ["WG-TAG-006"] and doc["summary"]["baselined"] == 4, (got, doc["summary"])
    assert doc["inputs"][0]["verdict"] == "fail", doc["inputs"][0]
    # a baseline of one wheel does not cover the other
    half = os.path.join(d, "half.json")
    run("check", "--no-config", "--write-baseline", half, SYS, cwd=d)
    rc, out, err = run("check", "--no-config", "--baseline", half, "badrec-2.0-py3-none-any.whl",
                       cwd=d)
    assert rc == 1 and "0 known findings baselined" in out, out
    # a --format json report is a baseline too
    rep = os.path.join(d, "report.json")
    run("check", "--no-config", "--format", "json", "-o", rep, SYS, cwd=d)
    rc, out, err = run("check", "--no-config", "--baseline", rep, SYS, cwd=d)
    assert rc == 0 and "1 known finding baselined" in out, (rc, out, err)
    # bad baselines are errors naming the file
    for text, what in (('{"x": 1}', "neither a baseline"), ("{", "--baseline: "),
                       ('{"schema": "wheelgate.baseline/1", "findings": [{"rule": 1}]}',
                        "needs 'rule' and 'input'")):
        with open(base, "w") as f:
            f.write(text)
        rc, out, err = run("check", "--no-config", "--baseline", base, SYS, cwd=d)
        assert rc == 2 and base in err and what in err, (text, rc, err)
    rc, out, err = run("check", "--no-config", "--baseline", os.path.join(d, "nope.json"), SYS)
    assert rc == 2 and "nope.json" in err, err
    shutil.rmtree(d)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""An installed distribution (a `*.dist-info` directory and the files its RECORD lists) is a
source like a wheel file: the same readers, the same facts, the same verdicts, apart from the
filename, which an install does not keep (issue 11, point 3).

Usage: test_installed.py WHEELGATE FIXTURES [CORPUS]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

from harness import Skip, main, test  # noqa: E402

WG, FIX = [os.path.abspath(a) for a in sys.argv[1:3]]
CORPUS = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else ""
W = os.path.join(FIX, "wheels")
TMP = tempfile.mkdtemp(prefix="wg-installed-")


def install(whl, name):
    """What an installer leaves: the members under a site directory (RECORD as written)."""
    site = os.path.join(TMP, name, "site-packages")
    shutil.rmtree(os.path.dirname(site), ignore_errors=True)
    with zipfile.ZipFile(whl) as z:
        z.extractall(site)
        di = [n.split("/")[0] for n in z.namelist() if n.split("/")[0].endswith(".dist-info")][0]
    # pip writes INSTALLER (a distribution without one is a system's package: test_audit.py)
    with open(os.path.join(site, di, "INSTALLER"), "w") as f:
        f.write("pip\n")
    return site, os.path.join(site, di)


def wg(*args):
    p = subprocess.run([WG, *args], capture_output=True, timeout=600)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def facts(path):
    rc, out, err = wg("inspect", "--json", "--symbols=all", path)
    assert rc in (0, 1), (rc, err)
    return json.loads(out)["inputs"][0] if "inputs" in json.loads(out) else json.loads(out)


def strip(doc):
    """What must agree between a wheel and its installed copy: objects and metadata."""
    w = doc["wheel"] or {}
    return {"objects": doc["objects"],
            "metadata": {k: w.get(k) for k in ("dist_info", "wheel", "metadata", "top_level")}}


def wheels():
    out = [os.path.join(W, "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"),
           os.path.join(W, "hollow-1.0-py3-none-any.whl")]
    good = os.path.join(CORPUS, "wheels", "wgdemo_good_sm90-0.1.0-cp312-cp312-linux_x86_64.whl")
    if os.path.isfile(good):
        out.append(good)
    return [w for w in out if os.path.isfile(w)]


@test
def an_installed_distribution_gives_its_wheels_facts():
    ws = wheels()
    if not ws:
        raise Skip("no fixture wheels in %s" % W)
    for whl in ws:
        site, di = install(whl, os.path.basename(whl)[:20])
        a, b = facts(whl), facts(di)
        assert b["kind"] == "installed" and a["kind"] == "wheel", (a["kind"], b["kind"])
        sa, sb = strip(a), strip(b)
        assert sa == sb, (whl, json.dumps(sa)[:300], json.dumps(sb)[:300])
        # every RECORD row verified, none orphaned
        assert not b["problems"], b["problems"]


@test
def the_same_verdicts_filename_rules_not_applied():
    ws = wheels()
    if not ws:
        raise Skip("no fixture wheels")
    for whl in ws:
        site, di = install(whl, "v" + os.path.basename(whl)[:20])
        for profile in ("install", "publish"):
            args = ["check", "--no-config", "--format", "json", "--profile", profile,
                    "--target", "python=3.12,torch=2.11.0+cu130,cxx11abi=1,glibc=2.39,glibcxx=3.4.33",
                    "--gpu", "sm_90"]
            ra, oa, _ = wg(*args, whl)
            rb, ob, _ = wg(*args, di)
            da, db = json.loads(oa)["inputs"][0], json.loads(ob)["inputs"][0]
            # the rules that read the filename are not applied to an installed copy, and say so
            lacking = {x["rule"] for x in db["not_applied"] if "filename" in x["lacks"]}
            fa = sorted((f["rule"], f["member"]) for f in da["findings"] if f["rule"] not in lacking)
            fb = sorted((f["rule"], f["member"]) for f in db["findings"])
            assert fa == fb, (whl, profile, fa, fb)
            assert not [f for f in db["findings"] if f["rule"] in lacking]
            if profile == "publish":
                assert "WG-TAG-005" in lacking, db["not_applied"]


@test
def the_text_report_says_what_it_read():
    whl = os.path.join(W, "hollow-1.0-py3-none-any.whl")
    if not os.path.isfile(whl):
        raise Skip("no fixture wheel")
    site, di = install(whl, "text")
    rc, out, err = wg("inspect", di)
    assert rc == 0 and "(installed distribution)" in out.splitlines()[0], out
    assert "no filename: an installed distribution" in out and "(null)" not in out, out
    assert "METADATA    hollow 1.0" in out, out


@test
def a_changed_installed_file_is_named():
    whl = os.path.join(W, "hollow-1.0-py3-none-any.whl")
    if not os.path.isfile(whl):
        raise Skip("no fixture wheel")
    site, di = install(whl, "tamper")
    with open(os.path.join(site, "hollow", "__init__.py"), "a") as f:
        f.write("# changed\n")
    # changed since it was installed (WG-REC-004, not the wheel's WG-REC-001): an error for
    # publish, a warning for install, the file named by its path
    for profile, rc_want, sev in (("publish", 1, "error"), ("install", 0, "warning")):
        # (the hollow wheel's own error, WG-HOL-001, is not this test's)
        rc, out, err = wg("check", "--no-config", "--format", "json", "--profile", profile,
                          "--disable", "WG-HOL-001", di)
        doc = json.loads(out)["inputs"][0]
        rec = [(f["rule"], f["member"], f["severity"]) for f in doc["findings"]]
        assert rc == rc_want and rec == [("WG-REC-004", "hollow/__init__.py", sev)], (profile, rc, doc["findings"])
        msg = [f["message"] for f in doc["findings"] if f["rule"] == "WG-REC-004"][0]
        assert msg == os.path.join(site, "hollow", "__init__.py") + ": its sha256 differs from RECORD: " \
            "the file changed since it was installed", msg
    # relative to the current directory, the path is the site's as given
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", os.path.basename(di)],
                       capture_output=True, timeout=600, cwd=site)
    msg = [f["message"] for f in json.loads(p.stdout)["inputs"][0]["findings"] if f["rule"] == "WG-REC-004"]
    assert msg and msg[0].startswith("hollow/__init__.py: its sha256"), (p.returncode, msg)


@test
def record_paths_outside_the_site_and_odd_files_are_safe():
    whl = os.path.join(W, "hollow-1.0-py3-none-any.whl")
    if not os.path.isfile(whl):
        raise Skip("no fixture wheel")
    site, di = install(whl, "odd")
    # A script installed outside site-packages (as pip writes it), a FIFO and a symbolic link
    # named in RECORD, and a path that would climb out: none is read, nothing hangs.
    os.mkfifo(os.path.join(site, "hollow", "pipe"))
    os.symlink("/etc/passwd", os.path.join(site, "hollow", "link"))
    with open(os.path.join(di, "RECORD"), "a") as f:
        f.write("../../../bin/hollow-tool,sha256=AAAA,10\nhollow/pipe,,\nhollow/link,,\n"
                "/etc/shadow,,\n")
    rc, out, err = wg("inspect", "--json", di)
    assert rc in (0, 1), (rc, err)
    doc = json.loads(out)
    doc = doc["inputs"][0] if "inputs" in doc else doc
    probs = " ".join(p["message"] for p in doc["problems"])
    assert "hollow/pipe" in probs and "not a regular file" in probs, probs
    assert "hollow/link" in probs and "symbolic link" in probs, probs
    names = {m["name"] for m in (doc["wheel"] or {}).get("members", [])} or set()
    assert "../../../bin/hollow-tool" not in names and "/etc/shadow" not in names, names
    # what an installer writes outside site-packages is not an orphan of the package
    assert "hollow-tool" not in probs and "/etc/shadow" not in probs, probs


@test
def a_record_that_is_a_symbolic_link_is_not_followed():
    """RECORD is read as the files it lists are: a link in its place (pip writes a regular
    file) would have wheelgate read, and quote, a file the distribution does not own."""
    whl = os.path.join(W, "hollow-1.0-py3-none-any.whl")
    if not os.path.isfile(whl):
        raise Skip("no fixture wheel")
    site, di = install(whl, "recordlink")
    rec = os.path.join(di, "RECORD")
    os.rename(rec, os.path.join(site, "elsewhere"))
    os.symlink(os.path.join(site, "elsewhere"), rec)
    rc, out, err = wg("check", "--no-config", di)
    assert rc == 2 and "RECORD: a symbolic link: not read" in out, (rc, out, err)


@test
def a_dist_info_without_record_is_a_clear_error():
    d = os.path.join(TMP, "norecord", "x-1.0.dist-info")
    os.makedirs(d)
    rc, out, err = wg("check", "--no-config", d)
    assert rc == 2 and "x-1.0.dist-info/RECORD" in out, (rc, out)


if __name__ == "__main__":
    rc = main()
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

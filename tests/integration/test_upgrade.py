#!/usr/bin/env python3
"""An upgrade that breaks what is installed (issue 15, point 4), predicted and then done.

The fixtures (tests/fixtures/gen-upgrade.py): an environment with a stand-in torch 2.11.0
(the real release's export lists) and flash_attn 2.8.3 built against it; torch 2.11.1 (same
exports), torch 2.12.0 (MaybeSetDevice removed, SetDevice's signature changed) and flash_attn
rebuilt for 2.12.0. wheelgate's verdict on each install is compared with what the install
really does: the environment copied, the wheels installed by Debian's pip, and flash_attn
imported by Debian's python (dlopen with RTLD_NOW of the same files).

Usage: test_upgrade.py WHEELGATE LIBWHEELGATE HOOKS_DIR FIXTURES PYTHON
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from harness import Missing, main, test  # noqa: E402

WG, LIB, HOOKS, FIX, PY = sys.argv[1:6]
UP = os.path.join(FIX, "upgrade")
ENV = os.path.join(UP, "env")
TMP = tempfile.mkdtemp(prefix="wg-upgrade-")


def wheel(prefix):
    found = glob.glob(os.path.join(UP, prefix + "-*.whl"))
    if not found:
        raise Missing("no %s wheel in %s (the fixtures need ../shared/corpus)" % (prefix, UP))
    return found[0]


def check(*args, env=ENV):
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", "--env", env, *args],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), (p.returncode, p.stderr)
    return p.returncode, json.loads(p.stdout)


def findings(doc, i, rule="WG-LD-006"):
    return [f for f in doc["inputs"][i]["findings"] if f["rule"] == rule]


def really(*wheels):
    """Installs wheels into a copy of ENV with Debian's pip; then imports flash_attn with the
    copy's site-packages: (returncode, the import's stderr)."""
    if not os.path.exists(PY):
        raise Missing("no " + PY)
    d = tempfile.mkdtemp(dir=TMP)
    env = os.path.join(d, "env")
    shutil.copytree(ENV, env, symlinks=True)
    site = glob.glob(os.path.join(env, "lib", "python3*", "site-packages"))[0]
    p = subprocess.run([PY, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                        "--disable-pip-version-check", "--target", site, "--upgrade", *wheels],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([PY, "-S", "-c", "import sys; sys.path.insert(0, %r); import flash_attn"
                        % site], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


@test
def a_patch_release_breaks_nothing_and_really_does_not():
    rc, doc = check(wheel("torch-2.11.1"))
    assert rc == 0 and not findings(doc, 0), doc["inputs"][0]["findings"]
    got, err = really(wheel("torch-2.11.1"))
    assert got == 0, err


@test
def torch_2_12_breaks_flash_attn_and_really_does():
    rc, doc = check(wheel("torch-2.12.0"))
    f = findings(doc, 0)
    assert rc == 1 and len(f) == 1, doc["inputs"][0]["findings"]
    m = f[0]["message"]
    assert m.startswith("installing torch 2.12.0 breaks flash_attn 2.8.3: "
                        "flash_attn_2_cuda.cpython-"), m
    # Named first: the symbol the import really fails on; the evidence; the other one counted.
    assert "undefined symbol _ZN3c104cuda14MaybeSetDeviceEa" in m, m
    assert "defined by torch 2.11.0 but not by 2.12.0" in m and "(and 1 more)" in m, m
    assert f[0]["severity"] == "error" and f[0]["symbol"] == "_ZN3c104cuda14MaybeSetDeviceEa"
    got, err = really(wheel("torch-2.12.0"))
    assert got != 0 and "undefined symbol: _ZN3c104cuda14MaybeSetDeviceEa" in err, err


@test
def upgrading_both_together_breaks_nothing_and_really_does_not():
    fa = wheel("flash_attn-2.8.3+torch212")
    rc, doc = check("--together", wheel("torch-2.12.0"), fa)
    assert rc == 0, [i["findings"] for i in doc["inputs"]]
    got, err = really(wheel("torch-2.12.0"), fa)
    assert got == 0, err
    # Alone, the rebuilt flash_attn resolves against the installed torch 2.11.0: it would not
    # import (WG-LD-001), and it really does not.
    rc, doc = check(fa)
    assert rc == 1 and findings(doc, 0, "WG-LD-001"), doc["inputs"][0]["findings"]
    got, err = really(fa)
    assert got != 0 and "undefined symbol: _ZN3c104cuda9SetDeviceEib" in err, err


@test
def together_blames_the_wheel_that_breaks():
    rc, doc = check("--together", wheel("other-1.0"), wheel("torch-2.12.0"))
    assert rc == 1 and not findings(doc, 0) and len(findings(doc, 1)) == 1, doc
    # Separately, the same: each wheel judged as installed on its own.
    rc, doc = check(wheel("other-1.0"), wheel("torch-2.12.0"))
    assert rc == 1 and not findings(doc, 0) and len(findings(doc, 1)) == 1, doc


@test
def an_install_that_shadows_another_site_directory():
    """Debian's layout: torch 2.11.0 and flash_attn in <prefix>/lib/python3/dist-packages, the
    install going to <prefix>/lib/python3.X/site-packages, first on sys.path. pip removes
    nothing there; the new torch is the one `import torch` finds."""
    d = tempfile.mkdtemp(dir=TMP)
    old_site = glob.glob(os.path.join(ENV, "lib", "python3*", "site-packages"))[0]
    new_site = os.path.join(d, "lib", os.path.basename(os.path.dirname(old_site)), "site-packages")
    dist = os.path.join(d, "lib", "python3", "dist-packages")
    os.makedirs(new_site)
    shutil.copytree(old_site, dist, symlinks=True)
    os.makedirs(os.path.join(d, "bin"))
    py = glob.glob(os.path.join(ENV, "bin", "python3*"))[0]
    os.symlink(os.path.realpath(py), os.path.join(d, "bin", os.path.basename(py)))
    for w, broken in (("torch-2.11.1", False), ("torch-2.12.0", True)):
        rc, doc = check(wheel(w), env=d)
        f = findings(doc, 0)
        assert rc == (1 if broken else 0) and len(f) == (1 if broken else 0), doc
        if broken:
            assert "breaks flash_attn 2.8.3" in f[0]["message"] and \
                "libc10_cuda.so of torch 2.12.0 loaded in place" in f[0]["message"], f
        t = tempfile.mkdtemp(dir=TMP)
        p = subprocess.run([PY, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                            "--disable-pip-version-check", "--target", t, wheel(w)],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        p = subprocess.run([PY, "-S", "-c", "import sys; sys.path[:0] = [%r, %r]; "
                            "import torch; assert torch.__version__ == %r; import flash_attn"
                            % (t, dist, w.split("-")[1])], capture_output=True, text=True)
        assert (p.returncode != 0) == broken, p.stderr
        assert not broken or "undefined symbol: _ZN3c104cuda14MaybeSetDeviceEa" in p.stderr, \
            p.stderr


def lock_file(*wheels):
    """A pylock.toml listing wheels by path, with their sha256 (PEP 751)."""
    import hashlib
    d = tempfile.mkdtemp(dir=TMP)
    rows = ['lock-version = "1.0"', 'created-by = "test_upgrade"', ""]
    for w in wheels:
        name, version = os.path.basename(w).split("-")[:2]
        digest = hashlib.sha256(open(w, "rb").read()).hexdigest()
        rows += ["[[packages]]", 'name = "%s"' % name, 'version = "%s"' % version,
                 'wheels = [{ path = "%s", hashes = { sha256 = "%s" } }]' % (w, digest), ""]
    path = os.path.join(d, "pylock.toml")
    with open(path, "w") as f:
        f.write("\n".join(rows))
    return path


@test
def a_lock_file_is_one_install():
    """check --lock --env: the lock's wheels are what `uv pip sync` installs at once."""
    rc, doc = check("--lock", lock_file(wheel("torch-2.12.0")))
    assert rc == 1 and len(findings(doc, 0)) == 1, doc
    rc, doc = check("--lock", lock_file(wheel("torch-2.12.0"), wheel("flash_attn-2.8.3+torch212")))
    assert rc == 0, [i["findings"] for i in doc["inputs"]]


@test
def together_refuses_what_is_not_one_install():
    p = subprocess.run([WG, "check", "--no-config", "--together", wheel("torch-2.12.0")],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "give --env" in p.stderr, p.stderr
    p = subprocess.run([WG, "check", "--no-config", "--env", ENV, "--together",
                        wheel("torch-2.12.0"), wheel("torch-2.11.1")], capture_output=True,
                       text=True)
    assert p.returncode == 2 and "one install takes one wheel of a distribution" in p.stderr, \
        p.stderr
    p = subprocess.run([WG, "check", "--no-config", "--env", ENV, "--together", UP],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "wheel files" in p.stderr, p.stderr
    p = subprocess.run([WG, "audit", "--no-config", "--together", ENV], capture_output=True,
                       text=True)
    assert p.returncode == 2, p.stderr


@test
def without_an_environment_the_rule_says_why():
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", "--profile", "install",
                        wheel("torch-2.12.0")], capture_output=True, text=True)
    doc = json.loads(p.stdout)
    na = {n["rule"]: n["lacks"] for n in doc["inputs"][0]["not_applied"]}
    assert na.get("WG-LD-006") == ["env"], na


@test
def the_binding_judges_one_install_too():
    sys.path.insert(0, HOOKS)
    os.environ["WHEELGATE_LIB"] = LIB
    import wheelgate
    with wheelgate.Checker(env=ENV) as c:
        r = c.check([wheel("torch-2.12.0"), wheel("flash_attn-2.8.3+torch212")], together=True)
        assert [x.verdict for x in r.reports] == ["pass", "pass"], r.text
        r = c.check([wheel("torch-2.12.0")])
        assert r.reports[0].verdict == "fail", r.text
        assert any(f.rule == "WG-LD-006" for f in r.reports[0].findings), r.text
        # The install is forgotten after each check: the next one sees the environment.
        r = c.check([wheel("torch-2.11.1")])
        assert r.reports[0].verdict == "pass", r.text
        # A wheel in memory is judged as an install too.
        data = open(wheel("torch-2.12.0"), "rb").read()
        r = c.check_bytes(data, os.path.basename(wheel("torch-2.12.0")))
        assert any(f.rule == "WG-LD-006" for f in r.reports[0].findings), r.text


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(TMP, ignore_errors=True)

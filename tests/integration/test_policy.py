#!/usr/bin/env python3
"""The platform policies against auditwheel's (WG-SYS-003, WG-SYS-004).

- rules/platform/manylinux.yaml is exactly what scripts/gen-platform-policy.py makes of
  auditwheel's policy files (copies in tests/fixtures/auditwheel/);
- on the fixtures of tests/fixtures/gen-policy.py (and the corpus where it is), every verdict is
  what auditwheel's policy selection gives, reimplemented here from auditwheel's JSON over what
  readelf says of the objects: the library each object needs from outside the wheel that the
  claimed policy's lib_whitelist refuses (WG-SYS-004), and the lowest policy a linux_* wheel
  meets (WG-SYS-003: auditwheel's versioned_symbols_policy and lib_whitelist);
- and the cases the brief names, literally (a test of both implementations at once).

Usage: test_policy.py WHEELGATE FIXTURES REPO_ROOT
"""
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from harness import Missing, main, test  # noqa: E402

WG, FIX, ROOT = [os.path.abspath(a) for a in sys.argv[1:4]]
POL = os.path.join(FIX, "policy", "wheels")
AW = os.path.join(ROOT, "tests", "fixtures", "auditwheel")
CORPUS = os.path.join(ROOT, "..", "shared", "corpus", "wheels")
ML217 = "manylinux_2_17_x86_64.manylinux2014_x86_64"

# The exceptions the fixtures exercise, as facts: the CUDA driver's library, and which
# distribution ships which library (nvidia-cuda-runtime-cu12's wheel has libcudart.so.12,
# torch's has libc10.so).
DRIVER = {"libcuda.so.1", "libnvidia-ml.so.1"}
SHIPPED_BY = {"libcudart.so.12": {"nvidia-cuda-runtime-cu12"}, "libc10.so": {"torch"},
              "libcudart.so.13": {"nvidia-cuda-runtime"},
              "libtorch_cpu.so": {"torch"}, "libtorch_python.so": {"torch"},
              "libc10_cuda.so": {"torch"}}


def need_fixtures():
    if not os.path.exists(os.path.join(FIX, "policy", ".stamp")):
        raise Missing("policy fixtures not built at " + FIX)
    if not shutil.which("readelf"):
        raise Missing("readelf (binutils) not found")


def check(*paths):
    p = subprocess.run([WG, "check", "--no-config", "--profile", "publish", "--format", "json",
                        *paths], capture_output=True, timeout=300)
    assert p.returncode in (0, 1), (p.returncode, p.stderr.decode())
    return {os.path.basename(i["path"]): i["findings"] for i in json.loads(p.stdout)["inputs"]}


# ---- auditwheel's policies, from its own files ----

def policies(arch):
    """auditwheel's glibc and musl policies that exist on arch, most compatible first."""
    out = []
    for fn, libc in (("manylinux-policy.json", "glibc"), ("musllinux-policy.json", "musl")):
        for p in json.load(open(os.path.join(AW, fn))):
            if p["name"] == "linux" or arch not in p["symbol_versions"]:
                continue
            wl = set(p["lib_whitelist"])
            if libc == "musl" and "libc.so" in wl:  # auditwheel's _fixup_musl_libc_soname
                wl = (wl - {"libc.so"}) | {"libc.musl-%s.so.1" % arch}
            sv = {k: {k + "_" + v for v in vs} for k, vs in p["symbol_versions"][arch].items()}
            out.append({"name": p["name"], "aliases": p["aliases"], "libc": libc,
                        "priority": p["priority"], "whitelist": wl, "versions": sv})
    return sorted(out, key=lambda p: (p["libc"], -p["priority"]))


def policy_of_tag(tag):
    for arch in ("x86_64", "aarch64"):
        if tag.endswith("_" + arch):
            base = tag[:-len(arch) - 1]
            for p in policies(arch):
                if base == p["name"] or base in p["aliases"]:
                    return p
    return None


def allows_versions(p, needed):
    """auditwheel's policy_is_satisfied: every need of a family the policy lists is in it."""
    for v in needed:
        fam = v.partition("_")[0]
        if fam in p["versions"] and v not in p["versions"][fam]:
            return False
    return True


# ---- the objects, as readelf sees them ----

def readelf(path):
    d = subprocess.run(["readelf", "-W", "-d", path], capture_output=True, text=True).stdout
    v = subprocess.run(["readelf", "-W", "-V", path], capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", d)
    soname = re.findall(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", d)
    paths = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\]", d)
    verneeds, section, lib = [], False, None
    for line in v.splitlines():
        if "'.gnu.version_r'" in line:
            section = True
        elif line.startswith("Version") or line.startswith("Symbol"):
            section = False
        m = re.search(r"File: (\S+)", line)
        if section and m:
            lib = m.group(1)
        m = re.search(r"Name: (\S+)\s+Flags: (\S+)", line)
        if section and m and lib:
            verneeds.append((lib, m.group(1), "WEAK" in m.group(2)))
    return {"needed": needed, "soname": soname[0] if soname else None,
            "paths": [x for p in paths for x in p.split(":")], "verneeds": verneeds}


def wheel_objects(whl, tmp):
    """{member: readelf facts} of the wheel's ELF members, and its metadata's requirements."""
    objs, reqs, tags = {}, [], []
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            data = z.read(name)
            if name.endswith(".dist-info/METADATA"):
                reqs = [l[len("Requires-Dist: "):] for l in data.decode().splitlines()
                        if l.startswith("Requires-Dist: ")]
            if data[:4] != b"\x7fELF":
                continue
            path = os.path.join(tmp, name.replace("/", "_"))
            with open(path, "wb") as f:
                f.write(data)
            objs[name] = readelf(path)
    tags = os.path.basename(whl)[:-4].split("-")[-1].split(".")
    return objs, reqs, tags


def required(reqs):
    out = set()
    for r in reqs:
        name, _, marker = r.partition(";")
        if "extra" in marker:
            continue
        m = re.match(r"[A-Za-z0-9._-]+", name.strip())
        if m:
            out.add(re.sub(r"[-_.]+", "-", m.group(0)).lower())
    return out


def ships(objs, member, lib):
    """An object of the wheel answers lib (SONAME, else file name), or a member of that file
    name lies on member's $ORIGIN RUNPATH/RPATH inside the wheel."""
    for name, o in objs.items():
        if (o["soname"] or posixpath.basename(name)) == lib:
            return True
    origin = posixpath.dirname(member)
    for p in objs[member]["paths"]:
        if not (p.startswith("$ORIGIN") or p.startswith("${ORIGIN}")):
            continue
        d = posixpath.normpath(posixpath.join(origin, p.replace("${ORIGIN}", ".").replace("$ORIGIN", ".")))
        if not d.startswith("..") and posixpath.normpath(posixpath.join(d, lib)) in objs:
            return True
    return False


def outside(objs, reqs):
    """(member, lib) pairs the policy must allow: not shipped, not the loader, not the
    driver's, not shipped by a required distribution."""
    req = required(reqs)
    for member, o in objs.items():
        for lib in dict.fromkeys(o["needed"]):
            if lib.startswith("ld-linux") or lib in ("ld64.so.1", "ld64.so.2"):
                continue
            if ships(objs, member, lib) or lib in DRIVER or SHIPPED_BY.get(lib, set()) & req:
                continue
            yield member, lib


def expected_sys004(whl, tmp):
    objs, reqs, tags = wheel_objects(whl, tmp)
    claimed = [p for p in map(policy_of_tag, tags) if p]
    return {(m, lib) for m, lib in outside(objs, reqs)
            if any(lib not in p["whitelist"] for p in claimed)}


def expected_sys003(whl, tmp):
    objs, reqs, tags = wheel_objects(whl, tmp)
    libs = {lib for _, lib in outside(objs, reqs)}
    vers = {v for m, o in objs.items() for lib, v, weak in o["verneeds"]
            if not weak and not ships(objs, m, lib)}
    for p in policies("x86_64"):
        if p["libc"] == "glibc" and allows_versions(p, vers) and libs <= p["whitelist"]:
            return p["name"] + "_x86_64"
    return "no manylinux policy"


def got_sys004(findings):
    return {(f["member"], re.match(r".* needs (\S+), which the wheel", f["message"]).group(1))
            for f in findings if f["rule"] == "WG-SYS-004"}


def got_sys003(findings):
    f = [f for f in findings if f["rule"] == "WG-SYS-003"]
    assert len(f) == 1 and f[0]["severity"] == "info", f
    m = re.search(r"so it meets (manylinux_\w+|no manylinux policy) \(", f[0]["message"])
    assert m, f[0]["message"]
    return m.group(1), f[0]["message"]


# ---- the tests ----

@test
def data_is_auditwheels():
    """manylinux.yaml regenerates byte for byte from auditwheel's files."""
    data = open(os.path.join(ROOT, "rules", "platform", "manylinux.yaml")).read()
    commit = re.search(r"commit: ([0-9a-f]{40})\}", data).group(1)
    assert commit in open(os.path.join(AW, "README.md")).read(), commit
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen-platform-policy.py"),
                        os.path.join(AW, "manylinux-policy.json"),
                        os.path.join(AW, "musllinux-policy.json"), commit],
                       capture_output=True, text=True, check=True)
    assert p.stdout == data, "rules/platform/manylinux.yaml differs from its generator's output"
    # What the policies are: 2_38 exists (GLIBC_2.38 first allowed there), no GLIBC_2.37 at all.
    names = [p["name"] for p in policies("x86_64") if p["libc"] == "glibc"]
    assert "manylinux_2_38" in names and "manylinux_2_26" in names, names
    first = [p["name"] for p in policies("x86_64") if "GLIBC_2.38" in p["versions"].get("GLIBC", ())][0]
    assert first == "manylinux_2_38", first
    assert not [p for p in policies("x86_64") if "GLIBC_2.37" in p["versions"].get("GLIBC", ())]


@test
def sys004_agrees_with_auditwheels_whitelists():
    need_fixtures()
    wheels = sorted(f for f in os.listdir(POL) if f.endswith(".whl"))
    got = check(*[os.path.join(POL, w) for w in wheels])
    with tempfile.TemporaryDirectory() as tmp:
        for w in wheels:
            want = expected_sys004(os.path.join(POL, w), tmp)
            assert got_sys004(got[w]) == want, (w, got_sys004(got[w]), want)


@test
def sys004_the_cases():
    """The brief's cases, literally."""
    need_fixtures()
    got = check(*[os.path.join(POL, f) for f in os.listdir(POL) if f.endswith(".whl")])
    ext = lambda pkg, e: "%s/%s.cpython-312-x86_64-linux-gnu.so" % (pkg, e)

    def sys004(name, tag=ML217):
        return got_sys004(got["%s-1.0-cp312-cp312-%s.whl" % (name, tag)])
    assert sys004("polfoo") == {(ext("polfoo", "ext_foo"), "libfoo.so.1")}
    msg = [f["message"] for f in got["polfoo-1.0-cp312-cp312-%s.whl" % ML217]
           if f["rule"] == "WG-SYS-004"][0]
    assert "the manylinux_2_17 policy of its tag" in msg and "manylinux2014_x86_64" in msg, msg
    assert sys004("polfooship") == set() and sys004("polfoorpath") == set()
    assert sys004("polfooaside") == {(ext("polfoo", "ext_foo"), "libfoo.so.1")}
    assert sys004("polcudart") == set()
    for name in ("polcudartnoreq", "polcudartextra"):
        assert sys004(name) == {(ext("polcudart", "ext_cudart"), "libcudart.so.12")}, name
        msg = [f["message"] for f in got["%s-1.0-cp312-cp312-%s.whl" % (name, ML217)]
               if f["rule"] == "WG-SYS-004"][0]
        assert "nvidia-cuda-runtime-cu12 ships it" in msg, msg
    assert sys004("polcuda") == set()  # the driver
    assert sys004("polc10") == set()
    assert sys004("polc10noreq") == {(ext("polc10", "ext_c10"), "libc10.so")}
    assert sys004("polmvec217") == {(ext("polmvec", "ext_mvec"), "libmvec.so.1")}
    assert sys004("polmvec224", "manylinux_2_24_x86_64") == set()
    both = "manylinux_2_17_x86_64.manylinux_2_24_x86_64"
    assert sys004("polmvecboth", both) == {(ext("polmvec", "ext_mvec"), "libmvec.so.1")}
    msg = [f["message"] for f in got["polmvecboth-1.0-cp312-cp312-%s.whl" % both]
           if f["rule"] == "WG-SYS-004"][0]
    assert "tagged manylinux_2_17_x86_64," in msg and "2_24" not in msg, msg
    assert {lib for _, lib in sys004("polmusl", "musllinux_1_2_x86_64")} == \
        {"libc.so.6", "libstdc++.so.6", "libgcc_s.so.1"}
    assert sys004("polwfoo", "linux_x86_64") == set()  # linux_* claims no policy
    assert sys004("polml218") == set()  # WG-SYS-002's
    if shutil.which("patchelf"):
        assert sys004("polfoograft") == set()
    # The install question is the loader's (WG-LD-002): WG-SYS-004 is off there.
    p = subprocess.run([WG, "check", "--no-config", "--profile", "install", "--format", "json",
                        os.path.join(POL, "polfoo-1.0-cp312-cp312-%s.whl" % ML217)],
                       capture_output=True, timeout=120)
    doc = json.loads(p.stdout)
    assert not [f for f in doc["inputs"][0]["findings"] if f["rule"] == "WG-SYS-004"], doc


@test
def sys003_agrees_with_auditwheels_selection():
    need_fixtures()
    wheels = sorted(f for f in os.listdir(POL) if f.endswith("linux_x86_64.whl")
                    and "manylinux" not in f and "musllinux" not in f)
    assert len(wheels) >= 10, wheels
    got = check(*[os.path.join(POL, w) for w in wheels])
    with tempfile.TemporaryDirectory() as tmp:
        for w in wheels:
            policy, msg = got_sys003(got[w])
            want = expected_sys003(os.path.join(POL, w), tmp)
            assert policy == want, (w, policy, want, msg)


@test
def sys003_the_cases():
    need_fixtures()
    got = check(*[os.path.join(POL, f) for f in os.listdir(POL) if f.endswith("linux_x86_64.whl")])

    def meets(name):
        return got_sys003(got["%s-1.0-cp312-cp312-linux_x86_64.whl" % name])
    # GLIBC_2.18 is not in manylinux_2_17's x86_64 list: manylinux_2_24, not 2_17
    policy, msg = meets("polw218")
    assert policy == "manylinux_2_24_x86_64" and "allowing GLIBC_2.18" in msg, msg
    assert "manylinux_2_17_x86_64 does not" in msg, msg
    # no glibc defines GLIBC_2.37 on x86-64: no policy lists it
    policy, msg = meets("polw237")
    assert policy == "no manylinux policy" and "GLIBC_2.37" in msg, msg
    assert meets("polwrelr")[0] == "manylinux_2_36_x86_64"
    assert meets("polwcxx")[0] == "manylinux_2_35_x86_64"
    assert meets("polwtm")[0] == "manylinux_2_17_x86_64"
    # a library outside the wheel in no whitelist rules out every policy; shipped, it does not
    policy, msg = meets("polwfoo")
    assert policy == "no manylinux policy" and "libfoo.so.1" in msg, msg
    assert "on its symbol versions alone it would meet manylinux_2_24_x86_64" in msg, msg
    assert meets("polwfooship")[0] == "manylinux_2_24_x86_64"
    # the driver and a required distribution's library are named as taken from outside
    policy, msg = meets("polwcuda")
    assert policy == "manylinux_2_24_x86_64" and "libcuda.so.1 (the CUDA driver" in msg, msg
    policy, msg = meets("polwc10")
    assert "libc10.so (from torch, which it requires)" in msg, msg
    # libmvec.so.1 is whitelisted from manylinux_2_24 on
    policy, msg = meets("polwmvec")
    assert policy == "manylinux_2_24_x86_64" and "libmvec.so.1 (by" in msg, msg


@test
def sys003_glibc238():
    """GLIBC_2.38 alone (gen-abi.sh's ext_glibc238 in a linux_x86_64 wheel): manylinux_2_38,
    the policy that first lists it (no skipping to 2_39)."""
    w = os.path.join(FIX, "wheels", "ml228new-1.0-cp312-cp312-manylinux_2_28_x86_64.whl")
    if not os.path.exists(w):
        raise Missing("wheel fixtures not built")
    with tempfile.TemporaryDirectory() as tmp:
        lw = os.path.join(tmp, "g238-1.0-cp312-cp312-linux_x86_64.whl")
        with zipfile.ZipFile(w) as zi, zipfile.ZipFile(lw, "w") as zo:
            for i in zi.infolist():
                data = zi.read(i)
                if i.filename.endswith("/WHEEL"):
                    data = data.replace(b"manylinux_2_28_x86_64", b"linux_x86_64")
                zo.writestr(i, data)
        policy, msg = got_sys003(check(lw)[os.path.basename(lw)])
        assert policy == "manylinux_2_38_x86_64", msg
        assert "allowing GLIBC_2.38" in msg and "manylinux_2_37_x86_64 does not" in msg, msg
        assert expected_sys003(lw, tmp) == policy


@test
def corpus_in_the_publish_profile():
    """The corpus wheels (linux_x86_64, no Requires-Dist) need torch's and CUDA's libraries
    from outside: no policy; on versions alone (GLIBC_2.38) manylinux_2_38."""
    if not os.path.isdir(CORPUS):
        raise Missing("the corpus not found at " + CORPUS)
    wheels = sorted(f for f in os.listdir(CORPUS) if f.endswith("linux_x86_64.whl"))
    got = check(*[os.path.join(CORPUS, w) for w in wheels])
    with tempfile.TemporaryDirectory() as tmp:
        for w in wheels:
            policy, msg = got_sys003(got[w])
            assert policy == expected_sys003(os.path.join(CORPUS, w), tmp) == \
                "no manylinux policy", (w, msg)
            assert "libc10.so (by" in msg and "shipped by torch" in msg, msg
            assert "alone it would meet manylinux_2_38_x86_64" in msg, msg
            assert not got_sys004(got[w]), w


if __name__ == "__main__":
    sys.exit(main())

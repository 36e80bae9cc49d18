#!/usr/bin/env python3
"""Hugging Face hub kernel trees (tests/fixtures/gen-kernels.py; docs/kernels.md): every build
variant directory is an input of its own, named by its path, and what its name and metadata.json
claim is held to what readelf and the nvcc fixture matrix say its objects are:
  - cxx11 / cxx98 against the std::string ABI of the c10 symbols the objects import (readelf);
  - cu<XY> (and cpu) against the libcudart.so.N the objects need (readelf -d);
  - metadata.json's backend.archs against the SASS/PTX each object was built with (matrix.txt);
  - --gpu B200 on a build without an image for it is an install error (WG-GPU-002);
  - a broken metadata.json is a problem naming the file, never a crash.

Usage: test_kernels.py WHEELGATE FIXTURES CUDA_FIXTURE_SRC
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Missing, main, need_path, test  # noqa: E402

WG, FIX, CUDASRC = (os.path.abspath(a) for a in sys.argv[1:4])
KERN = os.path.join(FIX, "kernels")
NAME = re.compile(r"^torch(\d)(\d+)-(cxx11|cxx98)-(cu(\d+)|cpu)-(\w+)-linux$")


def check(*args, profile="publish"):
    p = subprocess.run([WG, "check", "--format", "json", "--profile", profile] + list(args),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), (p.returncode, p.stderr[-2000:])
    return json.loads(p.stdout), p


def readelf(path, *opts):
    return subprocess.run(["readelf", "-W"] + list(opts) + [path], capture_output=True,
                          text=True, check=True).stdout


def matrix():
    """The nvcc fixture matrix: name -> (SASS set, PTX set) as 'XY' / 'XYa' strings."""
    rows = {}
    with open(os.path.join(CUDASRC, "matrix.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, flags = line.split(None, 1)
                sass, ptx = set(), set()
                for codes in re.findall(r"code=\[?([\w,]+)\]?", flags):
                    for c in codes.split(","):
                        (sass if c.startswith("sm_") else ptx).add(c.split("_", 1)[1])
                rows[name] = (sass, ptx)
    return rows


def covers(sass, ptx, major, minor):
    """Whether SASS of the same major at or below the minor (a/f only exactly), or PTX at or
    below the arch (plain only), gives an image for capability major.minor."""
    want = major * 10 + minor
    for s in sass:
        digits = int(re.match(r"\d+", s).group())
        if digits == want or (s.isdigit() and digits // 10 == major and digits <= want):
            return True
    return any(p.isdigit() and int(p) <= want for p in ptx)


def variants():
    need_path(KERN, "the kernel fixtures (tests/fixtures/gen-kernels.py)")
    out = []
    for tree in sorted(os.listdir(KERN)):
        b = os.path.join(KERN, tree, "build")
        if os.path.isdir(b):
            out += [os.path.join(b, v) for v in sorted(os.listdir(b))]
    return out


def objects(vdir):
    pkg = os.path.join(vdir, "relu")
    return [os.path.join(pkg, f) for f in sorted(os.listdir(pkg)) if f.endswith(".so")]


def expected(vdir):
    """The (rule, object) lies of a variant, from readelf and matrix.txt alone."""
    m = NAME.match(os.path.basename(vdir))
    if not m:
        return set()
    cxx11, cu = m.group(3) == "cxx11", m.group(5)
    with open(os.path.join(vdir, "metadata.json")) as f:
        archs = json.load(f).get("backend", {}).get("archs", [])
    rows, lies = matrix(), set()
    for o in objects(vdir):
        und = [ln.split()[-1] for ln in readelf(o, "--dyn-syms").splitlines()
               if " UND " in ln and "3c10" in ln]
        new = any("__cxx11" in s for s in und)
        old = any("__cxx11" not in s and re.search(r"Ss|basic_string", s) for s in und)
        if (cxx11 and old) or (not cxx11 and new):
            lies.add(("WG-KRN-001", o))
        rt = re.findall(r"\[libcudart\.so\.(\d+)", readelf(o, "-d"))
        if rt and (cu is None or int(rt[0]) != int(cu[:-1])):
            lies.add(("WG-KRN-001", o))
        row = rows.get(os.path.basename(o)[:-3])
        for a in archs:
            ma, mi = (int(x) for x in re.match(r"(\d+)\.(\d+)", a).groups())
            if row and not covers(row[0], row[1], ma, mi):
                lies.add(("WG-KRN-002", o))
    return lies


def found(doc):
    got = {}
    for i in doc["inputs"]:
        for f in i["findings"]:
            if f["rule"].startswith("WG-KRN"):
                objs = re.findall(r"(/\S+\.so)", f["message"])
                assert objs, f["message"]
                got.setdefault(i["path"], set()).add((f["rule"], objs[0]))
    return got


@test
def every_variant_is_an_input_named_by_its_path():
    vs = variants()
    doc, _ = check(KERN)
    paths = [i["path"] for i in doc["inputs"]]
    assert sorted(paths) == sorted(vs), (paths, vs)
    # the same variants from the repository, its build/ and the variant itself
    v = vs[0]
    for root in (os.path.dirname(os.path.dirname(v)), os.path.dirname(v), v):
        d, _ = check(root)
        assert v in [i["path"] for i in d["inputs"]], (root, d["inputs"])


@test
def claims_against_readelf_and_the_matrix():
    vs = variants()
    doc, _ = check(KERN)
    got = found(doc)
    lying = 0
    for v in vs:
        want = expected(v)
        assert got.get(v, set()) == want, (v, got.get(v), want)
        verdict = [i["verdict"] for i in doc["inputs"] if i["path"] == v][0]
        assert verdict == ("fail" if want else "pass"), (v, verdict, want)
        tree = v.split(os.sep)[-3]
        assert bool(want) == tree.startswith("lying-"), (v, want)
        lying += bool(want)
    assert lying == 4, lying


@test
def the_message_names_the_claim_and_the_evidence():
    doc, _ = check(os.path.join(KERN, "lying-cuda"))
    msg = doc["inputs"][0]["findings"][0]["message"]
    assert "cu126 (CUDA 12.6)" in msg and "libcudart.so.13" in msg, msg
    doc, _ = check(os.path.join(KERN, "lying-abi"))
    msg = doc["inputs"][0]["findings"][0]["message"]
    assert "cxx11" in msg and "ext_string_abi0" in msg and "old-ABI" in msg, msg
    doc, _ = check(os.path.join(KERN, "lying-archs"))
    msg = doc["inputs"][0]["findings"][0]["message"]
    assert "arch 9.0" in msg and "SASS sm_80" in msg, msg


@test
def lies_are_publish_errors_and_install_warnings():
    for profile, sev in (("publish", "error"), ("install", "warning")):
        doc, _ = check(os.path.join(KERN, "lying-archs"), profile=profile)
        sevs = {f["severity"] for f in doc["inputs"][0]["findings"] if f["rule"] == "WG-KRN-002"}
        assert sevs == {sev}, (profile, sevs)


@test
def a_gpu_the_build_has_no_image_for_is_an_install_error():
    # B200 is sm_100: sm80.so has SASS sm_80 only; multi.so carries sm_100 (matrix.txt).
    rows = matrix()
    assert not covers(*rows["sm80"], 10, 0) and covers(*rows["multi"], 10, 0)
    doc, p = check("--gpu", "B200", os.path.join(KERN, "sm80"), profile="install")
    assert p.returncode == 1
    rules = {(f["rule"], f["severity"]) for f in doc["inputs"][0]["findings"]}
    assert ("WG-GPU-002", "error") in rules, rules
    honest = os.path.join(KERN, "honest", "build", "torch29-cxx11-cu130-x86_64-linux")
    doc, p = check("--gpu", "B200", honest, profile="install")
    assert p.returncode == 0 and not doc["inputs"][0]["findings"], doc["inputs"][0]


@test
def a_broken_metadata_json_is_named():
    src = os.path.join(KERN, "honest", "build", "torch29-cxx11-cu130-x86_64-linux")
    need_path(src, "the kernel fixtures")
    tmp = tempfile.mkdtemp(prefix="wg-kernels-")
    try:
        for i, text in enumerate(['{"backend": ', '{"backend": {"archs": "8.0"}}', '[1]']):
            d = os.path.join(tmp, str(i), "torch29-cxx11-cu130-x86_64-linux")
            shutil.copytree(src, d)
            with open(os.path.join(d, "metadata.json"), "w") as f:
                f.write(text)
            p = subprocess.run([WG, "check", "--profile", "publish", d], capture_output=True,
                               text=True, timeout=300)
            assert p.returncode in (0, 1, 2), (p.returncode, p.stderr)
            assert "metadata.json" in p.stdout + p.stderr, (text, p.stdout, p.stderr)
    finally:
        shutil.rmtree(tmp)


@test
def names_that_are_no_variant_are_walked_as_directories():
    src = os.path.join(CUDASRC, "prebuilt", "sm80.so")
    tmp = tempfile.mkdtemp(prefix="wg-kernels-")
    try:
        cases = {"torchvision-extra": False, "torch29-cxx11-cu126-x86_64": False,
                 "torch29-foo-cu126-x86_64-linux": False, "torch210-cxx98-cu118-aarch64-linux": True,
                 "torch28-cpu-aarch64-darwin": True}
        for name, is_variant in cases.items():
            d = os.path.join(tmp, name.replace("-", "_"), name)
            os.makedirs(d)
            shutil.copy(src, d)
            doc, _ = check(os.path.dirname(d))
            paths = [i["path"] for i in doc["inputs"]]
            assert paths == [d if is_variant else os.path.dirname(d)], (name, paths)
            krn = [f["message"] for i in doc["inputs"] for f in i["findings"]
                   if f["rule"] == "WG-KRN-001"]
            if name.startswith("torch210"):
                # cu118 is CUDA 11.8; sm80.so needs libcudart.so.13; an x86_64 object
                assert any("cu118 (CUDA 11.8)" in m and "libcudart.so.13" in m for m in krn), krn
                assert any("aarch64-linux" in m and "x86_64 object" in m for m in krn), krn
            if name.startswith("torch28-cpu"):
                assert any("cpu (no CUDA)" in m for m in krn), krn
            if not is_variant:
                assert not krn, (name, krn)
    finally:
        shutil.rmtree(tmp)


@test
def inspect_shows_what_each_variant_claims():
    vs = [v for v in variants() if NAME.match(os.path.basename(v))]
    p = subprocess.run([WG, "inspect"] + vs, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    blocks = p.stdout.split("  (directory)\n")
    for v, block in zip(vs, blocks[1:]):
        m = NAME.match(os.path.basename(v))
        with open(os.path.join(v, "metadata.json")) as f:
            archs = json.load(f).get("backend", {}).get("archs", [])
        line = "torch %s.%s, %s, %s" % (m.group(1), m.group(2), m.group(3), m.group(4))
        assert line in block, (v, block[:300])
        assert ("archs " + " ".join(archs)) in block if archs else "archs none" in block or \
            "metadata    none" in block, (v, block[:400])


if __name__ == "__main__":
    if not shutil.which("readelf"):
        raise SystemExit("readelf is needed (binutils)")
    sys.exit(main())

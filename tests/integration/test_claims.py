#!/usr/bin/env python3
"""Claims against content (issue 16): PEP 825 variant wheels (variant.json, the filename's
variant label, the index file {name}-{version}-variants.json) and local version labels
(+cu12torch2.8cxx11abiFALSE), each claim kind on an honest and a lying fixture of
tests/fixtures/gen-claims.py. The expected verdicts are not wheelgate's own: they come from
cuobjdump's recorded listing of the CUDA fixtures (tests/fixtures/cuda/truth), readelf's
DT_NEEDED and nm's undefined symbols of the very objects in each wheel.

Usage: test_claims.py WHEELGATE FIXTURES REPO_ROOT [PYTHON_WITH_JSONSCHEMA]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from harness import Missing, main, test, validate

WG, FIX, ROOT = [os.path.abspath(a) for a in sys.argv[1:4]]
SYS_PY = sys.argv[4] if len(sys.argv) > 4 else ""
C = os.path.join(FIX, "claims")
TRUTH = os.path.join(ROOT, "tests", "fixtures", "cuda", "truth", "cuobjdump-fixtures.txt")
TAG = "-cp312-cp312-linux_x86_64"
SCHEMA = os.path.join(ROOT, "docs", "schema", "check.schema.json")


def whl(name, version, label=None):
    return os.path.join(C, "%s-%s%s%s.whl" % (name, version, TAG, "-" + label if label else ""))


def check(*args, profile="publish"):
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", "--profile", profile,
                        *args], capture_output=True, timeout=300)
    assert p.returncode in (0, 1), (p.returncode, p.stderr.decode())
    validate(p.stdout, SCHEMA, SYS_PY, required=False)
    doc = json.loads(p.stdout)
    return p.returncode, doc


def findings(doc, prefix):
    return [(f["rule"], f["severity"], f["message"]) for i in doc["inputs"]
            for f in i["findings"] if f["rule"].startswith(prefix)]


def members(path):
    """The ELF members of a wheel, extracted: {member: path}."""
    out = tempfile.mkdtemp()
    got = {}
    with zipfile.ZipFile(path) as z:
        for n in z.namelist():
            if n.endswith(".so"):
                p = os.path.join(out, n.replace("/", "_"))
                open(p, "wb").write(z.read(n))
                got[n] = p
    return got


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def cuda_majors(path):
    return {int(m) for lib in needed(path) for m in re.findall(r"^libcudart\.so\.(\d+)", lib)}


def torch_string_abi(path):
    """'new' / 'old' / None: the std::string ABI of the c10/torch symbols path imports (nm)."""
    out = subprocess.run(["nm", "-D", "--undefined-only", "-C", path], capture_output=True,
                         text=True).stdout
    kinds = set()
    for line in out.splitlines():
        # c++filt writes the old ABI's std::basic_string<char> as std::string
        if re.search(r"\b(c10|at|torch)::", line) and re.search(r"basic_string|std::string", line):
            kinds.add("new" if "__cxx11" in line else "old")
    assert len(kinds) <= 1, (path, kinds)
    return kinds.pop() if kinds else None


def cuobjdump_images():
    """{object: {("sass"|"ptx", "sm_90"), ...}} from the recorded cuobjdump listing."""
    if not os.path.exists(TRUTH):
        raise Missing("cuobjdump truth not found at " + TRUTH)
    blocks, cur = {}, None
    for line in open(TRUTH):
        if line.startswith("== "):
            cur = line[3:].split()[0]
            blocks[cur] = set()
        m = re.match(r"(ELF|PTX) file\s+\d+: .*\.(sm_\d+a?)\.(cubin|ptx)$", line.strip())
        if cur and m:
            blocks[cur].add(("sass" if m.group(1) == "ELF" else "ptx", m.group(2)))
    return blocks


def need_fixtures():
    if not os.path.exists(os.path.join(C, ".stamp")):
        raise Missing("claim fixtures not found at " + C + " (gen-claims.py)")


# which fixture object each variant wheel holds (gen-claims.py) and what its variant.json claims
SM_ARCH = [  # (name, label, objects, claimed sm_arch values)
    ("wgvar", "sm80", ["sass80ptx80.so"], ["80_real", "80_virtual"]),
    ("wgvar", "sm90", ["sm90.so"], ["90_real"]),
    ("wgvar", "sm100a", ["sm100a.so"], ["100a_real"]),
    ("wgvar", "multi", ["multi.so"], ["80_real", "90_real", "100_real", "90_virtual"]),
    ("wgvarlie", "sm100", ["sm90.so"], ["100_real"]),
    ("wgvarlie", "ptx90", ["sm90.so"], ["90_virtual"]),
    ("wgvarlie", "two", ["sm80.so", "sm90.so"], ["80_real"]),
]


@test
def sm_arch_claims_against_cuobjdump():
    need_fixtures()
    images = cuobjdump_images()
    honest = lying = 0
    for name, label, objs, claims in SM_ARCH:
        expect_lies = set()
        for c in claims:
            m = re.match(r"(\d+a?)_(real|virtual)$", c)
            want = ("sass" if m.group(2) == "real" else "ptx", "sm_" + m.group(1))
            if any(want not in images[o] for o in objs):
                expect_lies.add(c)
        rc, doc = check(whl(name, "1.0", label))
        got = {re.search(r":: sm_arch :: (\S+)'", m).group(1)
               for r, s, m in findings(doc, "WG-VAR-002")}
        assert got == expect_lies, (label, got, expect_lies)
        assert (rc == 1) == bool(expect_lies), (label, rc)
        if expect_lies:
            lying += 1
        else:
            honest += 1
    assert honest >= 4 and lying >= 3, (honest, lying)
    # a value that names no architecture, and an sm_arch claim on a wheel without CUDA code
    # (its object links no CUDA: readelf)
    rc, doc = check(whl("wgvarlie", "1.0", "badval"))
    got = findings(doc, "WG-VAR-002")
    assert rc == 1 and len(got) == 1 and "'nvidia :: sm_arch :: sm_90'" in got[0][2], got
    path = whl("wgvarlie", "1.0", "nocuda")
    assert not any(cuda_majors(p) for p in members(path).values())
    rc, doc = check(path)
    got = findings(doc, "WG-VAR-002")
    assert rc == 1 and len(got) == 1 and "no object holding CUDA code" in got[0][2], got


@test
def cuda_bounds_against_readelf():
    need_fixtures()
    cases = [("wgvar", "sm80", "13.0", "14"), ("wgvar", "sm90", "13.0", "14"),
             ("wgvarlie", "cu128", "12.8", None), ("wgvarlie", "upper", None, "12.9")]
    for name, label, lo, hi in cases:
        path = whl(name, "1.0", label)
        majors = set()
        for p in members(path).values():
            majors |= cuda_majors(p)
        assert majors == {13}, majors  # every fixture object needs libcudart.so.13
        lie = (lo is not None and int(lo.split(".")[0]) not in majors) or \
              (hi is not None and int(hi.split(".")[0]) < max(majors))
        rc, doc = check(path)
        got = findings(doc, "WG-VAR-003")
        assert bool(got) == lie, (label, got)
        if lie:
            assert any("libcudart.so.13" in m for _, _, m in got), got
    # the PTX ISA too: sass80ptx80's PTX is CUDA 13's (ISA 9.x), so 12.8 lies twice
    rc, doc = check(whl("wgvarlie", "1.0", "cu128"))
    assert any("PTX is ISA 9." in m for _, _, m in findings(doc, "WG-VAR-003")), doc


@test
def torch_abi_claims_against_nm():
    need_fixtures()
    for label, version, lie in [("t28", "2.8.0", False), ("t26", "2.6", False),
                                ("lie28", "2.8.0", True)]:
        path = whl("wgvart", "1.0", label)
        (obj,) = members(path).values()
        abi = torch_string_abi(obj)
        want = "new" if tuple(map(int, version.split(".")[:2])) >= (2, 7) else "old"
        assert (abi != want) == lie, (label, abi, want)
        rc, doc = check(path)
        got = findings(doc, "WG-VAR-004")
        assert bool(got) == lie and (rc == 1) == lie, (label, got)
        if lie:
            assert "c10::" in got[0][2] and "old std::string ABI" in got[0][2], got


@test
def unverifiable_properties_are_listed():
    need_fixtures()
    rc, doc = check(whl("wgvart", "1.0", "x86v3"))
    got = findings(doc, "WG-VAR-005")
    props = {re.search(r"'([^']+)'", m).group(1) for _, s, m in got if s == "info"}
    assert props == {"x86_64 :: level :: v3", "abi_dependency :: torch :: 2.8"}, got
    assert rc == 0
    # the install profile does not list them
    rc, doc = check(whl("wgvart", "1.0", "x86v3"), profile="install")
    assert not findings(doc, "WG-VAR-005")
    # checked properties are not listed as unverified
    rc, doc = check(whl("wgvar", "1.0", "sm90"))
    assert not findings(doc, "WG-VAR-")


@test
def filename_label_against_variant_json():
    need_fixtures()
    cases = [(whl("wgvarlabel", "1.0", "sm90"), "describes variant 'sm80'"),
             (whl("wgvarlabel", "1.0", "nojson"), "has no wgvarlabel-1.0.dist-info/variant.json"),
             (whl("wgvarlabel", "1.0"), "the filename carries no variant label"),
             (whl("wgvarlabel", "1.0", "broken"), "not valid JSON"),
             (whl("wgvarlabel", "1.0", "two"), "describes 2 variants")]
    for path, what in cases:
        rc, doc = check(path)
        got = findings(doc, "WG-VAR-001")
        assert rc == 1 and len(got) == 1 and what in got[0][2], (path, got)
        assert got[0][1] == "error"
        rc, doc = check(path, profile="install")
        assert findings(doc, "WG-VAR-001") and rc == 1
    for name, label, _, _ in SM_ARCH:
        rc, doc = check(whl(name, "1.0", label))
        assert not findings(doc, "WG-VAR-001"), label


@test
def index_file_against_wheels():
    need_fixtures()
    wheels = [whl("wgvar", "1.0", l) for l in ("sm80", "sm90", "sm100a", "multi")]
    rc, doc = check(*wheels, os.path.join(C, "wgvar-1.0-variants.json"))
    assert rc == 0 and not findings(doc, "WG-VAR-"), findings(doc, "WG-VAR-")
    assert len(doc["inputs"]) == 4  # the index is no input of its own
    rc, doc = check(*wheels, os.path.join(C, "badindex", "wgvar-1.0-variants.json"))
    got = findings(doc, "WG-VAR-006")
    assert rc == 1 and len(got) == 1 and "90a_real" in got[0][2], got
    # a wheel whose label the index lacks
    tmp = tempfile.mkdtemp()
    idx = json.load(open(os.path.join(C, "wgvar-1.0-variants.json")))
    del idx["variants"]["multi"]
    json.dump(idx, open(os.path.join(tmp, "wgvar-1.0-variants.json"), "w"))
    rc, doc = check(*wheels, os.path.join(tmp, "wgvar-1.0-variants.json"))
    got = findings(doc, "WG-VAR-006")
    assert rc == 1 and len(got) == 1 and "'multi'" in got[0][2] and "no such variant" in got[0][2]
    # an index no wheel given belongs to, and a broken one, are usage errors naming the file
    p = subprocess.run([WG, "check", "--no-config", whl("wgvart", "1.0", "t28"),
                        os.path.join(C, "wgvar-1.0-variants.json")], capture_output=True, text=True)
    assert p.returncode == 2 and "wgvar-1.0-variants.json: no wheel" in p.stderr, p.stderr
    open(os.path.join(tmp, "wgvar-1.0-variants.json"), "w").write("{")
    p = subprocess.run([WG, "check", "--no-config", wheels[0],
                        os.path.join(tmp, "wgvar-1.0-variants.json")], capture_output=True, text=True)
    assert p.returncode == 2 and "variants.json: not valid JSON" in p.stderr, p.stderr
    shutil.rmtree(tmp)


@test
def local_labels_against_content():
    need_fixtures()
    cases = [("flash_attn", "2.8.3+cu13torch2.8cxx11abiTRUE"),
             ("flash_attn", "2.8.3+cu13torch2.8cxx11abiFALSE"),
             ("flash_attn", "2.8.3+cu13torch2.6cxx11abiTRUE"),
             ("wgcu", "1.0+cu130"), ("wgcu", "1.0+cu12")]
    lies = 0
    for name, version in cases:
        path = whl(name, version)
        label = version.split("+")[1]
        expect = []
        for obj in members(path).values():
            m = re.search(r"cxx11abi(TRUE|FALSE)", label)
            abi = torch_string_abi(obj)
            if m and abi and abi != ("new" if m.group(1) == "TRUE" else "old"):
                expect.append("cxx11abi" + m.group(1))
            c = re.search(r"cu(\d+)", label)
            major = int(c.group(1)) // 10 if int(c.group(1)) >= 100 else int(c.group(1))
            if cuda_majors(obj) - {major}:
                expect.append("cu" + c.group(1))
        rc, doc = check(path)
        got = [re.search(r"says (\S+),", m).group(1) for _, _, m in findings(doc, "WG-LABEL-001")]
        assert sorted(got) == sorted(expect), (version, got, expect)
        assert (rc == 1) == bool(expect)
        lies += bool(expect)
    assert lies == 3
    # the gen-wheels.py flash-attn wheels tell the truth: TRUE holds the new ABI, FALSE the old
    for label in ("TRUE", "FALSE"):
        p = os.path.join(FIX, "wheels",
                         "flash_attn-2.8.3+cu12torch2.8cxx11abi%s%s.whl" % (label, TAG))
        (obj,) = members(p).values()
        assert torch_string_abi(obj) == ("new" if label == "TRUE" else "old")
        rc, doc = check(p)
        assert not findings(doc, "WG-LABEL-001")


@test
def variant_facts_in_inspect():
    need_fixtures()
    p = subprocess.run([WG, "inspect", "--json", whl("wgvart", "1.0", "x86v3")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    validate(p.stdout, os.path.join(ROOT, "docs", "schema", "inspect.schema.json"), SYS_PY,
             required=False)
    w = json.loads(p.stdout)
    w = w["inputs"][0] if "inputs" in w else w
    v = w["wheel"]["variant"]
    assert v["label"] == "x86v3" and v["json_label"] == "x86v3", v
    assert "x86_64 :: level :: v3" in v["properties"], v
    p = subprocess.run([WG, "inspect", whl("wgvart", "1.0", "x86v3")], capture_output=True,
                       text=True)
    assert "label x86v3, variant.json x86v3" in p.stdout and "x86_64 :: level :: v3" in p.stdout
    # a wheel that is no variant says nothing of variants
    p = subprocess.run([WG, "inspect", "--json", whl("wgcu", "1.0+cu130")], capture_output=True,
                       text=True)
    w = json.loads(p.stdout)
    w = w["inputs"][0] if "inputs" in w else w
    assert "variant" not in w["wheel"]


if __name__ == "__main__":
    sys.exit(main())

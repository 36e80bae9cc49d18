#!/usr/bin/env python3
"""End-to-end tests of `wheelgate check`: the corpus verdicts of ../shared/corpus/README.md,
every shipped rule on a fixture that triggers it and one that must not, JSON against
docs/schema/check.schema.json and SARIF against the vendored SARIF 2.1.0 schema, rule files,
configuration files, and usage errors.

Usage: test_check.py WHEELGATE FIXTURES CORPUS REPO_ROOT [PYTHON_WITH_JSONSCHEMA]
Prints one line per test and closes with "N passed, N failed".
"""
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from harness import Missing, Skip, main, test, validate as _validate  # noqa: E402

WG, FIX, CORPUS, ROOT = [os.path.abspath(a) for a in sys.argv[1:5]]
SYS_PY = sys.argv[5] if len(sys.argv) > 5 else ""
W = os.path.join(FIX, "wheels")
KB = os.path.join(FIX, "kernels", "%s", "build")
CW = os.path.join(CORPUS, "wheels")
SUF = "-0.1.0-cp312-cp312-linux_x86_64.whl"
EXT = ".cpython-312-x86_64-linux-gnu.so"
# The GPU machine of ../shared/corpus/README.md: Ubuntu 24.04 (glibc 2.39, GLIBCXX up to
# 3.4.33), torch 2.11.0+cu130, an H100 (sm_90).
GPU_MACHINE = "glibc=2.39,glibcxx=3.4.33"
TARGET = ["--target", "python=3.12,torch=2.11.0+cu130,cxx11abi=1,cuda=13.0," + GPU_MACHINE,
          "--gpu", "sm_90"]





def run(*args, cwd=None, stdin=None):
    p = subprocess.run([WG, "check", *args], capture_output=True, timeout=600, cwd=cwd,
                       input=stdin)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def validate(doc, schema, draft="Draft7Validator"):
    _validate(doc, schema, SYS_PY, draft, required=False)


CHECK_SCHEMA = os.path.join(ROOT, "docs", "schema", "check.schema.json")
SARIF_SCHEMA = os.path.join(ROOT, "tests", "schemas", "sarif-2.1.0.json")


def installed_copy(tmp, name, change=None, remove=None):
    """The base fixture wheel as pip installs it (members under a site directory, INSTALLER
    pip), with a file changed or removed since; its .dist-info."""
    import zipfile
    site = os.path.join(tmp, name, "site-packages")
    with zipfile.ZipFile(os.path.join(W, "base-1.0-py3-none-any.whl")) as z:
        z.extractall(site)
    with open(os.path.join(site, "base-1.0.dist-info", "INSTALLER"), "w") as f:
        f.write("pip\n")
    if change:
        with open(os.path.join(site, change), "ab") as f:
            f.write(b"changed since it was installed\n")
    if remove:
        os.unlink(os.path.join(site, remove))
    return os.path.join(site, "base-1.0.dist-info")


def check_json(*args, cwd=None):
    rc, out, err = run("--format", "json", "--no-config", *args, cwd=cwd)
    assert rc in (0, 1, 2), (rc, err)
    validate(out, CHECK_SCHEMA)
    return rc, json.loads(out), err


def need_corpus():
    if not os.path.isdir(CW):
        raise Missing("corpus not found at " + CW)


@test
def corpus_verdicts_match_the_readme():
    need_corpus()
    expect = {"wgdemo_good_sm90" + SUF: 0, "wgcpu_cpu_good" + SUF: 0,
              "wgdemo_oldabi_sm90" + SUF: 1, "wgdemo_sm80_only" + SUF: 1,
              "wgdemo_wrapper-0.1.0-py3-none-any.whl": 1, "wgdemo_mixed" + SUF: 1}
    for name, want in expect.items():
        rc, doc, err = check_json(*TARGET, os.path.join(CW, name))
        assert rc == want, (name, rc, err, doc["inputs"][0]["findings"])
        errors = [f for f in doc["inputs"][0]["findings"] if f["severity"] == "error"]
        rules = {f["rule"] for f in errors}
        if name.startswith("wgdemo_oldabi"):
            assert rules == {"WG-ABI-001"}, rules
            assert "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs" in errors[0]["message"]
            assert errors[0]["symbol"] == "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs"
            assert "-D_GLIBCXX_USE_CXX11_ABI=1" in errors[0]["fix"]
        elif name.startswith("wgdemo_sm80"):
            assert rules == {"WG-GPU-002"}, rules
            assert "sm_90" in errors[0]["message"] and "sm_80" in errors[0]["message"]
            assert "arch=compute_90,code=sm_90" in errors[0]["fix"]
        elif name.startswith("wgdemo_wrapper"):
            assert rules == {"WG-HOL-001"}, rules
            assert "wgdemo_cuda" in errors[0]["message"]
            assert errors[0]["file"] == "wgdemo/__init__.py" and errors[0]["line"] == 1
        elif name.startswith("wgdemo_mixed"):
            assert rules == {"WG-GPU-002"}, rules
            assert all(e["member"].startswith("wgdemo_aux_cuda.") for e in errors), errors
        else:
            assert errors == [], errors
    # All six at once: the summary and the exit code of the worst.
    rc, out, err = run(*TARGET, "--no-config", *[os.path.join(CW, n) for n in expect])
    assert rc == 1
    assert "6 inputs: 2 passed, 4 failed, 0 unreadable" in out, out[-300:]


def local_glibc():
    name, ver = os.confstr("CS_GNU_LIBC_VERSION").split()
    assert name == "glibc"
    return tuple(int(x) for x in ver.split("."))


@test
def corpus_on_this_system_and_on_a_declared_platform():
    """Without the GPU machine's declaration the target system is this one: on glibc < 2.38
    (Debian 12: 2.36) every corpus extension needs GLIBC_2.38 it lacks, as the README says."""
    need_corpus()
    binaries = ["wgdemo_good_sm90", "wgcpu_cpu_good", "wgdemo_oldabi_sm90", "wgdemo_sm80_only",
                "wgdemo_mixed"]
    old = local_glibc() < (2, 38)
    for name in binaries:
        rc, doc, err = check_json("--target", "python=3.12,torch=2.11.0+cu130,cxx11abi=1",
                                  "--gpu", "sm_90", os.path.join(CW, name + SUF))
        sys_ = [f for f in doc["inputs"][0]["findings"] if f["rule"] == "WG-SYS-001"]
        if old:
            assert rc == 1 and sys_, (name, doc["inputs"][0]["findings"])
            for f in sys_:
                assert "GLIBC_2.38" in f["message"] and "libc.so.6" in f["message"], f
                assert f["symbol"] == "__isoc23_strtoul" and "this system" in f["message"], f
                assert "GLIBC_%d.%d" % local_glibc()[:2] in f["message"], f
        else:
            assert not sys_, (name, sys_)
        # A declared manylinux_2_28 system: glibc 2.28, named with the version.
        rc, doc, err = check_json("--target", "platform=manylinux_2_28_x86_64",
                                  os.path.join(CW, name + SUF))
        sys_ = [f for f in doc["inputs"][0]["findings"] if f["rule"] == "WG-SYS-001"]
        assert rc == 1 and sys_, (name, doc["inputs"][0]["findings"])
        assert all("manylinux_2_28_x86_64" in f["message"] and "GLIBC_2.38" in f["message"]
                   and "GLIBC_2.28" in f["message"] for f in sys_), sys_
        # linux_x86_64: the tightest manylinux tag they meet, as information to a publisher
        # (the install question does not ask it).
        assert not [f for f in doc["inputs"][0]["findings"] if f["rule"] == "WG-SYS-003"]
        rc, doc, err = check_json("--profile", "publish", os.path.join(CW, name + SUF))
        info = [f for f in doc["inputs"][0]["findings"] if f["rule"] == "WG-SYS-003"]
        assert len(info) == 1 and info[0]["severity"] == "info", info
        # torch's and CUDA's libraries from outside the wheel, required by no Requires-Dist:
        # no policy; GLIBC_2.38 alone: manylinux_2_38 (auditwheel's, test_policy.py)
        assert "no manylinux policy" in info[0]["message"], info
        assert "alone it would meet manylinux_2_38_x86_64" in info[0]["message"], info
    rc, out, err = run("--no-config", "--target", "platform=manylinux_2_28_x86_64",
                       os.path.join(CW, "wgdemo_good_sm90" + SUF))
    assert rc == 1 and "manylinux_2_28_x86_64" in out and "GLIBC_2.38" in out, out
    rc, out, err = run("--no-config", "--target", "platform=manylinux_9_x86_64", "x.whl")
    assert rc == 2 and "platform=manylinux_9_x86_64" in err, err


@test
def platform_tags_against_what_objects_need():
    """WG-SYS-002: a manylinux/musllinux tag promising less than the objects need."""
    def findings(name, *extra):
        rc, doc, err = check_json("--profile", "publish", *(extra or ("--target", "glibc=2.99")),
                                  os.path.join(W, name))
        return rc, {f["rule"]: f for f in doc["inputs"][0]["findings"]}
    rc, f = findings("ml228new-1.0-cp312-cp312-manylinux_2_28_x86_64.whl")
    m = f["WG-SYS-002"]["message"]
    assert rc == 1 and "GLIBC_2.38" in m and "manylinux_2_28_x86_64" in m and "GLIBC_2.28" in m, m
    assert f["WG-SYS-002"]["symbol"] == "__isoc23_strtoul"
    rc, f = findings("ml2014new-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
    m = f["WG-SYS-002"]["message"]
    assert "manylinux_2_17_x86_64, manylinux2014_x86_64" in m and "GLIBC_2.17" in m, m
    rc, f = findings("muslglibc-1.0-cp312-cp312-musllinux_1_2_x86_64.whl")
    assert "musllinux_1_2_x86_64" in f["WG-SYS-002"]["message"], f
    rc, f = findings("ml228old-1.0-cp312-cp312-manylinux_2_28_x86_64.whl")
    assert rc == 0 and not f, f
    # A linux_* wheel of old needs meets the oldest policy.
    rc, f = findings("linuxold-1.0-cp312-cp312-linux_x86_64.whl")
    assert rc == 0 and "manylinux_2_5_x86_64" in f["WG-SYS-003"]["message"], f
    # --target platform= judges the wheel against that system, naming it and the version
    # (an explicit glibc= would win over the platform's).
    rc, f = findings("ml228new-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", "--target",
                     "platform=manylinux_2_28_x86_64", "--profile", "install")
    assert rc == 1 and "WG-SYS-001" in f, f


def nocode_object(tmp):
    """The sm80 CUDA fixture with its SASS entries relabelled LTO-IR: fatbins, no code."""
    src = os.path.join(ROOT, "tests", "fixtures", "cuda", "prebuilt", "sm80.so")
    data = bytearray(open(src, "rb").read())
    pos = 0
    while True:
        pos = data.find(b"\x50\xed\x55\xba\x01\x00\x10\x00", pos)
        if pos < 0:
            break
        fat = struct.unpack_from("<Q", data, pos + 8)[0]
        e = pos + 16
        while e < pos + 16 + fat:
            hs, ps = struct.unpack_from("<IQ", data, e + 4)
            struct.pack_into("<H", data, e, 8)
            e += hs + ps
        pos += 16 + fat
    out = os.path.join(tmp, "nocode.so")
    open(out, "wb").write(bytes(data))
    return out


def zipstruct_case(tmp, name):
    """One of bench/hostile_gen.py's zip-structure wheels, made in tmp."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "bench"))
    import hostile_gen
    for p in hostile_gen.zipstruct(os.path.join(tmp, "zipstruct")):
        if os.path.basename(p).startswith("zs_%s-" % name):
            return p
    raise AssertionError("no zip-structure case " + name)


@test
def every_rule_triggers_and_stays_quiet():
    need_corpus()
    tmp = tempfile.mkdtemp()
    nocode = nocode_object(tmp)
    ptx = os.path.join(ROOT, "tests", "fixtures", "cuda", "prebuilt", "ptx80.so")
    fa_t = os.path.join(W, "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl")
    fa_f = os.path.join(W, "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl")
    good = os.path.join(CW, "wgdemo_good_sm90" + SUF)
    fa_target = ["--target", "python=3.12,torch=2.8.0+cu128,cxx11abi=1"]
    cases = [  # rule, triggering input, quiet input, extra arguments
        ("WG-ABI-001", fa_f, fa_t, fa_target),
        ("WG-ABI-001", os.path.join(CW, "wgdemo_oldabi_sm90" + SUF), good, TARGET),
        # An old-ABI extension that imports no string-taking torch symbol loads fine.
        ("WG-ABI-001", fa_f, os.path.join(W, "charptr-1.0-cp312-cp312-linux_x86_64.whl"),
         fa_target),
        ("WG-ABI-002", os.path.join(W, "mixedabi-1.0-cp312-cp312-linux_x86_64.whl"), fa_t, []),
        ("WG-HOL-001", os.path.join(W, "hollow-1.0-py3-none-any.whl"),
         os.path.join(W, "optional-1.0-py3-none-any.whl"), []),
        # The compiled module comes from a Requires-Dist dependency (not one behind an extra).
        # (in an environment that has neither: without one, whatever else is installed may)
        ("WG-HOL-001", os.path.join(W, "wrapextra-1.0-py3-none-any.whl"),
         os.path.join(W, "wrapdep-1.0-py3-none-any.whl"), ["--env", "/usr/bin/python3"]),
        ("WG-TAG-001", os.path.join(W, "purebin-1.0-py3-none-any.whl"),
         os.path.join(W, "purepkg-0.1-py3-none-any.whl"), []),
        # Root-Is-Purelib: true on a manylinux wheel of libraries (the nvidia-* wheels).
        ("WG-TAG-001", os.path.join(W, "purebin-1.0-py3-none-any.whl"),
         os.path.join(W, "nvstyle-1.0-py3-none-manylinux_2_28_x86_64.whl"), []),
        ("WG-TAG-002", os.path.join(W, "nobin-1.0-cp312-cp312-linux_x86_64.whl"), fa_t, []),
        ("WG-TAG-003", os.path.join(W, "wrongpy-1.0-cp312-cp312-linux_x86_64.whl"), fa_t, []),
        ("WG-TAG-004", os.path.join(W, "wrongarch-1.0-cp312-cp312-manylinux_2_28_aarch64.whl"),
         fa_t, []),
        ("WG-TAG-005", os.path.join(W, "tagmis-1.0-cp312-cp312-linux_x86_64.whl"), fa_t, []),
        ("WG-TAG-006", os.path.join(W, "namemis-1.0-cp312-cp312-linux_x86_64.whl"), fa_t, []),
        ("WG-TAG-007", fa_t, os.path.join(W, "purepkg-0.1-py3-none-any.whl"),
         ["--target", "python=3.11"]),
        ("WG-GPU-001", os.path.join(CW, "wgdemo_mixed" + SUF), good, []),
        ("WG-GPU-002", os.path.join(CW, "wgdemo_sm80_only" + SUF), good, ["--gpu", "H100"]),
        ("WG-GPU-003", ptx, os.path.join(ROOT, "tests", "fixtures", "cuda", "prebuilt", "sm90.so"),
         ["--target", "cuda=12.8", "--gpu", "sm_90"]),
        ("WG-GPU-004", nocode, os.path.join(ROOT, "tests", "fixtures", "cuda", "prebuilt",
                                           "sm80.so"), []),
        ("WG-CUDA-001", good, os.path.join(CW, "wgcpu_cpu_good" + SUF), ["--target", "cuda=12.8"]),
        ("WG-CUDA-002", fa_t, os.path.join(W, "purepkg-0.1-py3-none-any.whl"),
         ["--target", "torch=2.11.0+cu130"]),
        ("WG-REC-001", os.path.join(W, "badrec-1.0-py3-none-any.whl"),
         os.path.join(W, "base-1.0-py3-none-any.whl"), []),
        ("WG-REC-002", os.path.join(W, "norecord-1.0-py3-none-any.whl"),
         os.path.join(W, "base-1.0-py3-none-any.whl"), []),
        ("WG-REC-003", os.path.join(W, "badrec-1.0-py3-none-any.whl"),
         os.path.join(W, "base-1.0-py3-none-any.whl"), []),
        # An installed copy of base (as pip leaves it): a file changed since, one removed, and
        # the intact copy (a wheel's RECORD rules are for wheels: none fires on it).
        ("WG-REC-004", installed_copy(tmp, "changed", change="base/data.bin"),
         installed_copy(tmp, "intact"), []),
        ("WG-REC-005", installed_copy(tmp, "removed", remove="base/data.bin"),
         installed_copy(tmp, "intact2"), []),
        ("WG-WHL-001", os.path.join(W, "escape-1.0-py3-none-any.whl"),
         os.path.join(W, "base-1.0-py3-none-any.whl"), []),
        ("WG-WHL-002", os.path.join(W, "badelf-1.0-cp312-cp312-linux_x86_64.whl"), fa_t, []),
        # badelf/_sect: its .dynsym section header points past the end of the file; ld.so
        # never reads it, so the object is read from its dynamic segment and the lie said.
        ("WG-ELF-001", os.path.join(W, "badelf-1.0-cp312-cp312-linux_x86_64.whl"), fa_t, []),
        # a symbolic-link member (an error in both profiles; tests/integration/test_zipstruct.py)
        ("WG-WHL-004", zipstruct_case(tmp, "symlink_abs"),
         os.path.join(W, "base-1.0-py3-none-any.whl"), []),
        # More Python than the import checks examine (2,000,000 lines): said, as a warning.
        ("WG-WHL-003", make_wheel(os.path.join(tmp, "bigpy-1.0-py3-none-any.whl"),
                                  {"bigpy/m%d.py" % i: b"\n" * (1 << 20) for i in range(2)}),
         make_wheel(os.path.join(tmp, "smallpy-1.0-py3-none-any.whl"),
                    {"smallpy/m0.py": b"\n" * (1 << 20)}), []),
        ("WG-LD-001", os.path.join(FIX, "abi", "ext_string_abi1" + EXT),
         os.path.join(FIX, "abi", "ext_charptr_abi0" + EXT),
         ["--env", os.path.join(FIX, "envs", "oldabi")]),
        ("WG-LD-002", os.path.join(FIX, "abi-ld", "ext_missing" + EXT),
         os.path.join(FIX, "abi", "ext_plain" + EXT), ["--env", os.path.join(FIX, "envs", "oldabi")]),
        # A RUNPATH outside the environment is not searched, and said (not "missing").
        ("WG-LD-005", os.path.join(FIX, "abi-ld", "ext_outside" + EXT),
         os.path.join(FIX, "abi", "ext_plain" + EXT), ["--env", os.path.join(FIX, "envs", "oldabi")]),
        ("WG-LD-003", os.path.join(FIX, "abi-ld", "vers", "ext_newver" + EXT),
         os.path.join(FIX, "abi", "ext_plain" + EXT), ["--env", os.path.join(FIX, "envs", "oldabi")]),
        ("WG-SYS-001", os.path.join(FIX, "abi-ld", "sys", "ext_glibc299" + EXT),
         os.path.join(FIX, "abi-ld", "sys", "ext_glibcold" + EXT), []),
        ("WG-SYS-002", os.path.join(W, "ml228new-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"),
         os.path.join(W, "ml228old-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"), []),
        ("WG-SYS-003", os.path.join(W, "linuxold-1.0-cp312-cp312-linux_x86_64.whl"),
         os.path.join(W, "ml228old-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"), []),
        # A manylinux wheel needing libfoo.so.1 it does not ship; shipped in polfoo.libs/
        # where its RUNPATH leads (gen-policy.py; test_policy.py checks it against auditwheel's).
        ("WG-SYS-004", os.path.join(FIX, "policy", "wheels", "polfoo-1.0-cp312-cp312-"
                                    "manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
         os.path.join(FIX, "policy", "wheels", "polfooship-1.0-cp312-cp312-"
                      "manylinux_2_17_x86_64.manylinux2014_x86_64.whl"), []),
        # torch 2.12.0 removes and changes symbols flash_attn 2.8.3 (installed) needs; 2.11.1
        # does not (gen-upgrade.py).
        ("WG-LD-006", glob.glob(os.path.join(FIX, "upgrade", "torch-2.12.0-*.whl"))[0],
         glob.glob(os.path.join(FIX, "upgrade", "torch-2.11.1-*.whl"))[0],
         ["--env", os.path.join(FIX, "upgrade", "env")]),
        # Hugging Face kernel build variants (gen-kernels.py): a name and a metadata.json
        # that lie about the objects; the honest variant of the same kernel is quiet.
        ("WG-KRN-001", os.path.join(KB % "lying-cuda", "torch29-cxx11-cu126-x86_64-linux"),
         os.path.join(KB % "honest", "torch29-cxx11-cu130-x86_64-linux"), []),
        ("WG-KRN-002", os.path.join(KB % "lying-archs", "torch29-cxx11-cu130-x86_64-linux"),
         os.path.join(KB % "honest", "torch29-cxx11-cu130-x86_64-linux"), []),
        # A cp38-abi3 wheel importing PyUnicode_AsUTF8AndSize (stable ABI since 3.10): the
        # same object tagged cp310-abi3 tells the truth (gen-abi3.py).
        ("WG-ABI3-001", os.path.join(FIX, "abi3", "wheels", "wgabi3lie-1.0-cp38-abi3-linux_x86_64.whl"),
         os.path.join(FIX, "abi3", "wheels", "wgabi3new-1.0-cp310-abi3-linux_x86_64.whl"), []),
        # No interpreter in the g++ environment: PyLong_FromLong is taken as provided, and said.
        ("WG-LD-004", os.path.join(FIX, "abi-ld", "ext_pyapi" + EXT),
         os.path.join(FIX, "abi", "ext_plain" + EXT), ["--env", os.path.join(FIX, "envs", "oldabi")]),
    ]
    # Claims against content (tests/fixtures/gen-claims.py; test_claims.py checks each kind).
    CL = os.path.join(FIX, "claims")
    cw = lambda n, l=None: os.path.join(CL, "%s-1.0-cp312-cp312-linux_x86_64%s.whl"
                                        % (n, "-" + l if l else ""))
    cases += [
        ("WG-VAR-001", cw("wgvarlabel", "sm90"), cw("wgvar", "sm90"), []),
        ("WG-VAR-002", cw("wgvarlie", "sm100"), cw("wgvar", "sm90"), []),
        ("WG-VAR-003", cw("wgvarlie", "cu128"), cw("wgvar", "sm80"), []),
        ("WG-VAR-004", cw("wgvart", "lie28"), cw("wgvart", "t28"), []),
        ("WG-VAR-005", cw("wgvart", "x86v3"), cw("wgvart", "t28"), []),
        ("WG-VAR-006", cw("wgvar", "sm90"), cw("wgvar", "sm80"),
         [os.path.join(CL, "badindex", "wgvar-1.0-variants.json")]),
        ("WG-LABEL-001",
         os.path.join(CL, "flash_attn-2.8.3+cu13torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"),
         os.path.join(CL, "flash_attn-2.8.3+cu13torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"),
         []),
    ]
    # Each rule's severity per profile, as --list-rules shows it ("-": not in that profile).
    rc, out, err = run("--list-rules", "--no-config")
    sev = {l.split()[0]: {"install": l.split()[1], "publish": l.split()[2]}
           for l in out.splitlines()[1:] if l.strip()}
    covered = set()
    for rule, bad, ok, extra in cases:
        # The rule fires (with its severity) in each profile it belongs to, never in the other.
        for profile in ("install", "publish"):
            rc, doc, err = check_json(*extra, "--profile", profile, bad, ok)
            assert doc["profile"] == profile, doc["profile"]
            got_bad = {f["rule"]: f["severity"] for f in doc["inputs"][0]["findings"]}
            got_ok = [f["rule"] for f in doc["inputs"][1]["findings"]]
            if sev[rule][profile] == "-":
                assert rule not in got_bad, (rule, profile, bad, got_bad)
                continue
            assert got_bad.get(rule) == sev[rule][profile], (rule, profile, bad, got_bad)
            assert rule not in got_ok, (rule, profile, ok, got_ok)
        covered.add(rule)
    shipped = {l.split()[0] for l in out.splitlines()[1:] if l.strip()}
    assert out.splitlines()[0].split()[:3] == ["ID", "INSTALL", "PUBLISH"], out
    assert shipped == covered, shipped ^ covered
    shutil.rmtree(tmp)


@test
def messages_name_what_is_wrong():
    # Without an environment, only the package's own missing module is certain: any other
    # installed distribution may provide flash_attn_2_cuda (the flash-attn wheel does).
    rc, doc, err = check_json(os.path.join(W, "hollow-1.0-py3-none-any.whl"))
    f = {x["message"].split(" imports ")[1].split(",")[0]: x for x in doc["inputs"][0]["findings"]}
    assert set(f) == {"hollow._C"}, f.keys()
    assert f["hollow._C"]["file"] == "hollow/helpers.py" and f["hollow._C"]["line"] == 1
    # helpers runs while hollow/__init__.py does: Python's own words for that
    assert "cannot import name '_C' from partially initialized module 'hollow'" in \
        f["hollow._C"]["message"], f["hollow._C"]["message"]
    # In an environment that does not have it (Debian's python), it is missing too.
    rc, doc, err = check_json("--env", "/usr/bin/python3", os.path.join(W, "hollow-1.0-py3-none-any.whl"))
    f = {x["message"].split(" imports ")[1].split(",")[0]: x for x in doc["inputs"][0]["findings"]
         if x["rule"] == "WG-HOL-001"}
    assert set(f) == {"flash_attn_2_cuda", "hollow._C"}, f.keys()
    assert f["flash_attn_2_cuda"]["file"] == "hollow/__init__.py" and f["flash_attn_2_cuda"]["line"] == 4
    assert "No module named 'flash_attn_2_cuda'" in f["flash_attn_2_cuda"]["message"]
    rc, doc, err = check_json("--target", "torch=2.11.0+cu130,cxx11abi=1",
                              os.path.join(W, "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"))
    msgs = [x["message"] for x in doc["inputs"][0]["findings"] if x["rule"] == "WG-CUDA-002"]
    assert any("CUDA 12 (cu12)" in m and "CUDA 13.0" in m for m in msgs), msgs
    assert any("torch 2.8" in m and "torch 2.11.0+cu130" in m for m in msgs), msgs
    assert any("cxx11abiFALSE" in m for m in msgs), msgs
    abi = [x for x in doc["inputs"][0]["findings"] if x["rule"] == "WG-ABI-001"][0]
    assert "FLASH_ATTENTION_FORCE_CXX11_ABI=TRUE" in abi["fix"] and "cxx11abiTRUE" in abi["fix"]


@test
def sarif_validates_and_carries_the_findings():
    need_corpus()
    rc, out, err = run(*TARGET, "--format", "sarif", "--no-config", "--profile", "publish",
                       os.path.join(CW, "wgdemo_oldabi_sm90" + SUF),
                       os.path.join(CW, "wgdemo_wrapper-0.1.0-py3-none-any.whl"),
                       os.path.join(W, "truncated-1.0-py3-none-any.whl"))
    assert rc == 2, (rc, err)  # an unreadable input
    validate(out, SARIF_SCHEMA, "Draft4Validator")
    doc = json.loads(out)
    assert doc["version"] == "2.1.0"
    run0 = doc["runs"][0]
    rules = [r["id"] for r in run0["tool"]["driver"]["rules"]]
    results = run0["results"]
    assert {r["ruleId"] for r in results} == {"WG-ABI-001", "WG-HOL-001", "WG-SYS-003"}, results
    for r in results:
        assert rules[r["ruleIndex"]] == r["ruleId"]
        assert r["level"] == ("note" if r["ruleId"] == "WG-SYS-003" else "error"), r
    hol = [r for r in results if r["ruleId"] == "WG-HOL-001"][0]
    # a member of the wheel: a nested artifact of the wheel with the import's line (no
    # region into the .whl's bytes), its file and line in the message too
    phys = hol["locations"][0]["physicalLocation"]
    art = run0["artifacts"][phys["artifactLocation"]["index"]]
    assert phys["artifactLocation"]["uri"] == art["location"]["uri"] == "wgdemo/__init__.py"
    assert run0["artifacts"][art["parentIndex"]]["location"]["uri"] == \
        "wgdemo_wrapper-0.1.0-py3-none-any.whl", run0["artifacts"]
    assert phys["region"] == {"startLine": 1}, phys
    assert hol["message"]["text"].startswith("wgdemo/__init__.py:1 "), hol
    notes = run0["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == 1 and "truncated-1.0" in notes[0]["message"]["text"]
    assert run0["invocations"][0]["executionSuccessful"] is False


@test
def rule_files_override_extend_and_fail_clearly():
    need_corpus()
    tmp = tempfile.mkdtemp()
    sm80 = os.path.join(CW, "wgdemo_sm80_only" + SUF)
    # Same id: replaces the shipped rule (an error becomes a warning).
    with open(os.path.join(tmp, "soft.yaml"), "w") as f:
        f.write("kind: rules\nrules:\n  - id: WG-GPU-002\n    check: gpu-cannot-run\n"
                "    severity: warning\n    title: soft\n    message: '{object} not on {gpu}'\n"
                "    fix: later\n    when: {gpu: known}\n    patterns:\n"
                "      objects: ['\\.so$']\n    examples:\n      objects:\n"
                "        match: [a.so]\n        no_match: [a.py]\n")
    rc, doc, err = check_json(*TARGET, "--rules", os.path.join(tmp, "soft.yaml"), sm80)
    assert rc == 0 and doc["inputs"][0]["findings"][0]["severity"] == "warning", doc
    assert doc["inputs"][0]["findings"][0]["message"].endswith("not on sm_90")
    rc, out, err = run(*TARGET, "--no-config", "--rules", os.path.join(tmp, "soft.yaml"),
                       "--fail-on", "warning", sm80)
    assert rc == 1
    # --disable switches a rule off; unknown ids are usage errors.
    rc, doc, err = check_json(*TARGET, "--disable", "WG-GPU-002", "--disable", "WG-SYS-003", sm80)
    assert rc == 0 and doc["inputs"][0]["findings"] == [], doc["inputs"][0]["findings"]
    for opt in ("--disable", "--enable"):
        rc, out, err = run(opt, "WG-NOPE-999", "--no-config", sm80)
        assert rc == 2 and "no rule 'WG-NOPE-999'" in err, (rc, err)
    broken = {
        "syntax.yaml": ("kind: rules\nrules: [\n", "syntax.yaml:3:1:"),
        "kind.yaml": ("kind: other\n", "kind.yaml:1:1: a rule file starts with 'kind: rules'"),
        "check.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: nope\n    severity: error\n"
                       "    title: t\n    message: m\n    fix: f\n",
                       "check.yaml:4:12: rule X-1: unknown check 'nope'"),
        "sev.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: record-missing\n"
                     "    severity: fatal\n    title: t\n    message: m\n    fix: f\n",
                     "sev.yaml:5:15: rule X-1: severity must be error, warning or info"),
        "placeholder.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: record-missing\n"
                             "    severity: error\n    title: t\n    message: '{nosuch}'\n"
                             "    fix: f\n", "placeholder.yaml:7:14: message: unknown placeholder {nosuch}"),
        "regex.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: gpu-no-code\n"
                       "    severity: error\n    title: t\n    message: m\n    fix: f\n"
                       "    patterns:\n      runtime: ['(']\n",
                       "regex.yaml:10:17: bad pattern at offset 1"),
        "noexamples.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: gpu-no-code\n"
                            "    severity: error\n    title: t\n    message: m\n    fix: f\n"
                            "    patterns:\n      runtime: ['x']\n",
                            "rule X-1: pattern list 'runtime' needs examples"),
        "missing.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: gpu-no-code\n"
                         "    severity: error\n    title: t\n    fix: f\n",
                         "missing.yaml:3:5: rule needs 'message'"),
        # a key that is a list (fuzz_rules: a NULL key reached strcmp, UBSan)
        "listkey.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: record-missing\n"
                         "    severity: error\n    title: t\n    message: m\n    fix: f\n"
                         "    scope: {? [members] : '.'}\n",
                         "listkey.yaml:9:15: a key must be a plain value, not a list or a mapping"),
        "field.yaml": ("kind: rules\nrules:\n  - id: X-1\n    colour: red\n",
                       "field.yaml:4:13: unknown rule field 'colour'"),
        "profname.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: record-missing\n"
                          "    profiles: {ship: error}\n    title: t\n    message: m\n    fix: f\n",
                          "profname.yaml:5:22: rule X-1: unknown profile 'ship' (known: install, "
                          "publish)"),
        "profsev.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: record-missing\n"
                         "    profiles: {install: loud}\n    title: t\n    message: m\n    fix: f\n",
                         "rule X-1: profile install: severity must be error, warning, info or "
                         "off, not 'loud'"),
        "profmap.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: record-missing\n"
                         "    profiles: install\n    title: t\n    message: m\n    fix: f\n",
                         "rule X-1: 'profiles' must map install and/or publish"),
        "nosev.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: record-missing\n"
                       "    title: t\n    message: m\n    fix: f\n",
                       "rule needs 'severity'"),
        "when.yaml": ("kind: rules\nrules:\n  - id: X-1\n    check: record-missing\n"
                      "    severity: error\n    title: t\n    message: m\n    fix: f\n"
                      "    when: {rocm: known}\n", "when.yaml:9:18: when: 'rocm' is not a target fact"),
    }
    for name, (text, want) in broken.items():
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        rc, out, err = run("--no-config", "--rules", path, sm80)
        assert rc == 2 and want in err, (name, rc, err)
    # A rule whose example contradicts its pattern: --self-test says which.
    with open(os.path.join(tmp, "badex.yaml"), "w") as f:
        f.write("kind: rules\nrules:\n  - id: X-2\n    check: gpu-no-code\n    severity: error\n"
                "    title: t\n    message: m\n    fix: f\n    patterns:\n      runtime: ['^libcudart']\n"
                "    examples:\n      runtime:\n        match: [libcuda.so]\n        no_match: [x]\n")
    rc, out, err = run("--no-config", "--rules", os.path.join(tmp, "badex.yaml"), "--self-test")
    assert rc == 2 and "X-2" in err and "'libcuda.so' does not match" in err, err
    rc, out, err = run("--no-config", "--self-test")
    assert rc == 0 and "every example agrees" in out
    # A directory of rule files loads every *.yaml in it.
    d = os.path.join(tmp, "dir")
    os.mkdir(d)
    shutil.copy(os.path.join(tmp, "soft.yaml"), d)
    rc, doc, err = check_json(*TARGET, "--rules", d, sm80)
    assert rc == 0, err
    # A directory of more rule files than any person writes is refused, not loaded in part
    # (the first 512 were loaded and the rest silently dropped).
    for i in range(600):
        shutil.copy(os.path.join(tmp, "soft.yaml"), os.path.join(d, "r%03d.yaml" % i))
    rc, out, err = run("--no-config", "--rules", d, sm80)
    assert rc == 2 and "more than 512 rule files" in err and d in err, (rc, err)
    shutil.rmtree(tmp)


@test
def configuration_files():
    need_corpus()
    tmp = tempfile.mkdtemp()
    sm80 = os.path.join(CW, "wgdemo_sm80_only" + SUF)
    with open(os.path.join(tmp, "wheelgate.yaml"), "w") as f:
        f.write("target: python=3.12,cuda=13.0,glibc=2.39,glibcxx=3.4.33\ngpu: [H100]\nformat: json\n")
    rc, out, err = run(sm80, cwd=tmp)
    doc = json.loads(out)
    assert rc == 1 and doc["target"]["gpus"][0]["name"] == "H100", (rc, err)
    rc, out, err = run("--disable", "WG-GPU-002", sm80, cwd=tmp)
    assert rc == 0, (rc, err)
    os.unlink(os.path.join(tmp, "wheelgate.yaml"))
    with open(os.path.join(tmp, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "x"\n\n[tool.wheelgate]\ngpu = ["sm_90"]\n'
                'target = "glibc=2.39,glibcxx=3.4.33"\n'
                'disable = ["WG-GPU-002"]\nfail-on = "warning"\n')
    rc, out, err = run(sm80, cwd=tmp)
    assert rc == 0 and "fail-on: warning" in out, (rc, out, err)
    rc, out, err = run(os.path.join(CW, "wgdemo_mixed" + SUF), cwd=tmp)
    assert rc == 0 and "profile: install" in out, (rc, out)  # WG-GPU-001: publish only
    with open(os.path.join(tmp, "pyproject.toml"), "a") as f:
        f.write('profile = "publish"\n')
    rc, out, err = run(os.path.join(CW, "wgdemo_mixed" + SUF), cwd=tmp)
    # WG-GPU-001 is a warning, which fails with fail-on: warning
    assert rc == 1 and "profile: publish" in out, (rc, out)
    with open(os.path.join(tmp, "pyproject.toml"), "w") as f:
        f.write('[tool.wheelgate]\ngpu = ["sm_90"\n')
    rc, out, err = run(sm80, cwd=tmp)
    assert rc == 2 and "pyproject.toml:" in err, (rc, err)
    with open(os.path.join(tmp, "pyproject.toml"), "w") as f:
        f.write('[tool.wheelgate]\ncolour = "red"\n')
    rc, out, err = run(sm80, cwd=tmp)
    assert rc == 2 and "pyproject.toml:2:" in err and "'colour'" in err, (rc, err)
    rc, out, err = run("--no-config", "--target", GPU_MACHINE, sm80, cwd=tmp)
    assert rc == 0, (rc, err)
    shutil.rmtree(tmp)


@test
def usage_errors():
    good = os.path.join(W, "purepkg-0.1-py3-none-any.whl")
    cases = [
        (["--target", "python=three"], "python=three: expected a version like 3.12"),
        (["--target", "cxx11abi=maybe"], "cxx11abi=maybe: expected 1 or 0"),
        (["--target", "rocm=6.2"], "unknown key 'rocm'"),
        (["--target", "torch"], "'torch' is not key=value"),
        (["--gpu", "Voodoo5"], "unknown GPU 'Voodoo5'"),
        (["--format", "xml"], "--format takes text, json, sarif or github"),
        (["--fail-on", "never"], "--fail-on takes error, warning or info"),
        (["--config", "/nonexistent/wheelgate.yaml"], "/nonexistent/wheelgate.yaml: not found"),
    ]
    for args, want in cases:
        rc, out, err = run(*args, good)
        assert rc == 2 and want in err, (args, rc, err)
    # a usage error is one line and a hint, not the whole help (issue 29)
    rc, out, err = run("--no-config")
    assert rc == 2 and err == ("wheelgate check: no input given (a wheel, an ELF object, a "
                               "directory or -)\nTry 'wheelgate check --help'.\n"), err
    rc, out, err = run("--help")
    assert rc == 0 and "usage: wheelgate check" in out and "exit status" in out
    rc, out, err = run("--no-config", os.path.join(W, "notazip-1.0-py3-none-any.whl"), good)
    assert rc == 2 and "ERROR" in out and "1 unreadable" in out, (rc, out)
    with open(good, "rb") as f:
        rc, out, err = run("--no-config", "-", stdin=f.read())
    assert rc == 0 and "PASS -" in out, (rc, out, err)



# ---- no silent pass; nothing lost in output (issue 10, points 6 and 7) ----

def make_wheel(path, files, record_extra=b""):
    """A wheel with files {name: bytes} and a RECORD of them (plus raw rows record_extra)."""
    import base64
    import hashlib
    import zipfile
    name = os.path.basename(path).split("-")[0] + "-" + os.path.basename(path).split("-")[1]
    di = name + ".dist-info"
    files = dict(files)
    files.setdefault(di + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
                                        % tuple(name.split("-"))).encode())
    files.setdefault(di + "/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\n"
                     b"Tag: py3-none-any\n")
    rows = b""
    for n, data in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        rows += b"%s,sha256=%s,%d\n" % (n.encode(), h, len(data))
    with zipfile.ZipFile(path, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)
        z.writestr(di + "/RECORD", rows + record_extra + di.encode() + b"/RECORD,,\n")
    return path


def dlopen_after_import_torch(c10, ext):
    """Loads c10 RTLD_LOCAL (as `import torch` loads torch's libraries), then ext, in a fresh
    interpreter: "" when it loaded, else the loader's error."""
    code = ("import ctypes,sys\nctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_LOCAL)\n"
            "try:\n ctypes.CDLL(sys.argv[2], mode=ctypes.RTLD_LOCAL)\nexcept OSError as e:\n"
            " print(e)\n")
    p = subprocess.run([sys.executable, "-c", code, c10, ext], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


@test
def torch_facing_by_symbol_not_by_dt_needed():
    """An old-ABI extension linked -Wl,--as-needed against a stub libc10.so (no DT_NEEDED on
    torch) that imports c10::detail::torchCheckFail(..., std::string const&) passed
    --target cxx11abi=1 while inspect called it torch-facing old ABI. Its c10 symbols count
    whatever DT_NEEDED says; a copy of c10 of its own (auditwheel's grafted
    libc10-<hash>.so) is what it binds to instead, and is not judged against the target."""
    ld = os.path.join(FIX, "abi-ld")
    unlinked = os.path.join(ld, "unlinked", "ext_unlinked_abi0" + EXT)
    ext_b = os.path.join(ld, "bundled", "ext_bundled" + EXT)
    lib_b = os.path.join(ld, "bundled", "libc10-1a2b3c4d.so")
    c10_new = os.path.join(FIX, "abi", "torch_new", "libc10.so")
    tmp = tempfile.mkdtemp()
    platform_whl = b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n"
    wu = make_wheel(os.path.join(tmp, "unlinked-1.0-cp312-cp312-linux_x86_64.whl"),
                    {"ext_unlinked_abi0" + EXT: open(unlinked, "rb").read(),
                     "unlinked-1.0.dist-info/WHEEL": platform_whl})
    wb = make_wheel(os.path.join(tmp, "bundled-1.0-cp312-cp312-linux_x86_64.whl"),
                    {"ext_bundled" + EXT: open(ext_b, "rb").read(),
                     "libc10-1a2b3c4d.so": open(lib_b, "rb").read(),
                     "bundled-1.0.dist-info/WHEEL": platform_whl})
    # Ground truth: after `import torch` (new ABI), the unlinked one fails on an old-ABI c10
    # symbol; the bundled one loads (its RUNPATH $ORIGIN finds its own copy).
    err = dlopen_after_import_torch(c10_new, unlinked)
    assert "undefined symbol: " in err, err
    failing = err.split("undefined symbol: ")[1].split()[0]
    assert dlopen_after_import_torch(c10_new, ext_b) == "", "bundled did not load"
    # inspect: the symbol the loader names is a torch-facing old-ABI import; no torch library
    # in DT_NEEDED.
    p = subprocess.run([WG, "inspect", "--json", unlinked], capture_output=True, text=True)
    o = json.loads(p.stdout)["inputs"][0]["objects"][0]
    assert not [n for n in o["needed"] if "c10" in n or "torch" in n], o["needed"]
    assert o["string_abi"]["torch_abi"] == "old", o["string_abi"]
    sym = {y["name"]: y for y in o["symbols"]}[failing]
    assert sym["torch"] and sym["string_abi"] == "old" and not sym["defined"], sym
    for path in (unlinked, wu):
        rc, doc, _ = check_json("--target", "cxx11abi=1", path)
        f = [x for x in doc["inputs"][0]["findings"] if x["rule"] == "WG-ABI-001"]
        assert rc == 1 and len(f) == 1, (path, doc["inputs"][0]["findings"])
        assert f[0]["symbol"] in {y["name"] for y in o["symbols"]
                                  if y["torch"] and y["string_abi"] == "old"}, f
        assert "nor does it list torch's libraries in DT_NEEDED" in f[0]["message"], f
        assert "Link it against torch's libraries" in f[0]["fix"], f
        # Its own ABI is no finding.
        rc, doc, _ = check_json("--target", "cxx11abi=0", path)
        assert "WG-ABI-001" not in {x["rule"] for x in doc["inputs"][0]["findings"]}, doc
    # The bundled copy: alone (its copy outside the input, named like torch's), in its folder
    # and in a wheel (the copy read: it defines the c10 symbols), nothing against the target.
    for path in (ext_b, os.path.join(ld, "bundled"), wb):
        rc, doc, _ = check_json("--target", "cxx11abi=1", path)
        assert "WG-ABI-001" not in {x["rule"] for x in doc["inputs"][0]["findings"]}, \
            (path, doc["inputs"][0]["findings"])
    # The same wheel with a copy that defines no c10 symbol (a stub): judged again.
    stub = make_wheel(os.path.join(tmp, "stubbed-1.0-cp312-cp312-linux_x86_64.whl"),
                      {"ext_bundled" + EXT: open(ext_b, "rb").read(),
                       "libc10-1a2b3c4d.so": open(os.path.join(ld, "ext_pyapi" + EXT), "rb").read(),
                       "stubbed-1.0.dist-info/WHEEL": platform_whl})
    rc, doc, _ = check_json("--target", "cxx11abi=1", stub)
    assert "WG-ABI-001" in {x["rule"] for x in doc["inputs"][0]["findings"]}, doc["inputs"][0]


def gen_wheels():
    """tests/fixtures/gen-wheels.py as a module: its raw zip writer makes members a zip reader
    refuses (a CRC or a deflate stream that lies)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "gen_wheels", os.path.join(ROOT, "tests", "fixtures", "gen-wheels.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@test
def an_unreadable_object_is_not_a_missing_one():
    """A platform wheel whose only ELF member could not be read (CRC mismatch, corrupt deflate
    stream) got WG-TAG-002, "contains no compiled object ... mis-tagged": false, the object is
    there. It gets the unreadable finding (WG-WHL-002) alone; a platform wheel with truly no
    object (nothing ELF among what was read, and no unread member named like one) still gets
    WG-TAG-002."""
    import zipfile
    import zlib
    gw = gen_wheels()
    elf = open(os.path.join(FIX, "abi", "ext_plain" + EXT), "rb").read()
    assert elf[:4] == b"\x7fELF"
    so = "pkg/_C" + EXT
    tmp = tempfile.mkdtemp()

    def entry(name, data, method=8, crc=None, raw=None):
        comp = raw if raw is not None else gw.deflate_raw(data) if method == 8 else data
        return {"name": name, "data": comp, "method": method, "csize": len(comp),
                "usize": len(data), "crc": zlib.crc32(data) if crc is None else crc}

    def wheel(name, *members):
        di = name + "-1.0.dist-info"
        meta = "Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name
        files = {di + "/METADATA": meta.encode(),
                 di + "/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
                                b"Tag: cp312-cp312-linux_x86_64\n"}
        ents = [entry(n, d) for n, d in files.items()] + list(members)
        rec = "".join("%s,,\n" % e["name"] for e in ents) + di + "/RECORD,,\n"
        ents.append(entry(di + "/RECORD", rec.encode()))
        path = os.path.join(tmp, name + "-1.0-cp312-cp312-linux_x86_64.whl")
        open(path, "wb").write(gw.raw_zip(ents))
        return path

    def unreadable(path, member):
        """Ground truth: Python's zipfile refuses the member too."""
        with zipfile.ZipFile(path) as z:
            try:
                z.read(member)
            except (zipfile.BadZipFile, zlib.error, EOFError):
                return True
        return False

    bad = bytearray(gw.deflate_raw(elf))
    bad[len(bad) // 2:len(bad) // 2 + 16] = b"\xff" * 16  # the head still inflates
    assert zlib.decompressobj(-15).decompress(bytes(bad), 4) == b"\x7fELF"
    garbage = b"\xff" * 64  # not a deflate stream from its first byte
    text = b"just data\n" * 100
    quiet = {  # unreadable, but an object is there: WG-WHL-002 alone
        "crcstored": (so, entry(so, elf, method=0, crc=zlib.crc32(elf) ^ 1)),
        "crcdeflated": (so, entry(so, elf, crc=zlib.crc32(elf) ^ 1)),
        "baddeflate": (so, entry(so, elf, raw=bytes(bad))),
        # no shared-object name: its first bytes say ELF
        "crcnoext": ("pkg/tool", entry("pkg/tool", elf, method=0, crc=zlib.crc32(elf) ^ 1)),
        "baddeflatenoext": ("pkg/tool", entry("pkg/tool", elf, raw=bytes(bad))),
        # not one byte readable: its name says it is an object
        "garbageso": (so, entry(so, elf, raw=garbage)),
    }
    for name, (member, e) in quiet.items():
        path = wheel(name, e)
        assert unreadable(path, member), name
        rc, doc, _ = check_json("--profile", "publish", path)
        rules = [f["rule"] for f in doc["inputs"][0]["findings"]]
        assert "WG-WHL-002" in rules and "WG-TAG-002" not in rules, (name, rules)
        assert any(member in f["message"] for f in doc["inputs"][0]["findings"]
                   if f["rule"] == "WG-WHL-002"), (name, doc["inputs"][0]["findings"])
        p = subprocess.run([WG, "inspect", "--json", path], capture_output=True, text=True)
        m = {x["name"]: x for x in json.loads(p.stdout)["inputs"][0]["wheel"]["members"]}[member]
        # The member's bytes are ELF's when any of them could be read.
        assert m["elf"] == (name != "garbageso"), (name, m)
    # A truncated ELF object reads, and is an object with an error: no WG-TAG-002 either.
    path = wheel("truncelf", entry(so, elf[:200]))
    rc, doc, _ = check_json("--profile", "publish", path)
    rules = [f["rule"] for f in doc["inputs"][0]["findings"]]
    assert "WG-WHL-002" in rules and "WG-TAG-002" not in rules, rules
    # Truly no object: Python only; a corrupt member that is neither ELF nor named like an
    # object; a .so read whole that is not ELF.
    loud = {"noobj": (None, entry("pkg/__init__.py", b"x = 1\n")),
            "crcdata": ("pkg/data.bin", entry("pkg/data.bin", text, crc=zlib.crc32(text) ^ 1)),
            "notelf": (None, entry(so, b"not an ELF object at all"))}
    for name, (member, e) in loud.items():
        path = wheel(name, e)
        if member:
            assert unreadable(path, member), name
        rc, doc, _ = check_json("--profile", "publish", path)
        rules = [f["rule"] for f in doc["inputs"][0]["findings"]]
        assert "WG-TAG-002" in rules, (name, rules)


@test
def a_directory_checks_every_wheel_below_it():
    """check DIR used to walk ELF files only: a folder of wheels passed unread."""
    need_corpus()
    rc, doc, err = check_json(*TARGET, CW)
    names = sorted(n for n in os.listdir(CW) if n.endswith(".whl"))
    assert [os.path.basename(i["path"]) for i in doc["inputs"]] == names, doc["inputs"]
    # Each wheel judged exactly as when it is named on its own.
    rc2, alone, err2 = check_json(*TARGET, *[os.path.join(CW, n) for n in names])
    assert rc == rc2 == 1 and doc["inputs"] == alone["inputs"], (rc, rc2)
    assert doc["summary"] == alone["summary"]
    # A mixed folder: loose ELF objects are one input (the folder), each wheel another;
    # links are skipped, other files ignored; a wheel in a subfolder is found.
    tmp = tempfile.mkdtemp()
    os.makedirs(os.path.join(tmp, "sub", "deeper"))
    shutil.copy(os.path.join(W, "purepkg-0.1-py3-none-any.whl"), os.path.join(tmp, "sub", "deeper"))
    shutil.copy(os.path.join(W, "hollow-1.0-py3-none-any.whl"), tmp)
    shutil.copy(nocode_object(tempfile.mkdtemp()), os.path.join(tmp, "sub", "nocode.so"))
    os.symlink(os.path.join(tmp, "hollow-1.0-py3-none-any.whl"), os.path.join(tmp, "link.whl"))
    open(os.path.join(tmp, "notes.txt"), "w").write("not an input\n")
    rc, doc, err = check_json(tmp)
    got = [(i["path"], i["verdict"]) for i in doc["inputs"]]
    assert got == [(tmp, "fail"), (os.path.join(tmp, "hollow-1.0-py3-none-any.whl"), "fail"),
                   (os.path.join(tmp, "sub", "deeper", "purepkg-0.1-py3-none-any.whl"), "pass")], got
    assert rc == 1 and doc["summary"]["inputs"] == 3
    assert {f["rule"] for f in doc["inputs"][0]["findings"]} >= {"WG-GPU-004"}, doc["inputs"][0]
    # A broken .whl below a folder is reported, not skipped.
    open(os.path.join(tmp, "broken-1.0-py3-none-any.whl"), "wb").write(b"PK\x03\x04 no zip")
    rc, doc, err = check_json(tmp)
    assert rc == 2 and doc["summary"]["unreadable"] == 1, doc["summary"]


@test
def an_empty_directory_is_not_a_pass():
    tmp = tempfile.mkdtemp()
    for setup in (lambda: None, lambda: open(os.path.join(tmp, "README"), "w").write("x\n")):
        setup()
        rc, out, err = run("--no-config", tmp)
        # said once, in the report (it was said on stderr too), and the exit status 2
        assert rc == 2 and out.count("no wheel or ELF object found in " + tmp) == 1, (rc, out)
        assert "no wheel or ELF object found" not in err, err
        assert "ERROR " + tmp in out and "1 unreadable" in out, out
        rc, doc, err = check_json(tmp)
        assert rc == 2 and doc["inputs"][0]["verdict"] == "error", doc
        assert "no wheel or ELF object found" in doc["inputs"][0]["error"]
        assert "no wheel or ELF object found" not in err and "1 unreadable" in err, err
    rc, out, err = subprocess_inspect(tmp)
    assert rc == 2 and "no wheel or ELF object found in " + tmp in err, (rc, err)


def subprocess_inspect(*args):
    p = subprocess.run([WG, "inspect", *args], capture_output=True, timeout=600)
    return p.returncode, p.stdout, p.stderr.decode()


def glibc_needs(so_bytes):
    """The GLIBC_x.y versions an object needs, as readelf -V lists them (ground truth)."""
    tmp = tempfile.mkdtemp()
    try:
        path = os.path.join(tmp, "o.so")
        with open(path, "wb") as f:
            f.write(so_bytes)
        out = subprocess.run(["readelf", "-V", "--wide", path], capture_output=True,
                             text=True).stdout
    finally:
        shutil.rmtree(tmp)
    return {tuple(int(x) for x in v.split(".")) for v in
            re.findall(r"Name: GLIBC_([0-9.]+)", out)}


@test
def gpu_auto_without_a_gpu_keeps_the_install_question():
    """--gpu auto on a machine without a GPU left the target without a fact: the profile
    flipped to publish, the system rules went off, and the sm_80-only wheel (its extension
    needs GLIBC_2.38) passed on glibc 2.36. The local machine is the target: install, the
    system rules judge this system, and the GPU rules say that no GPU was found."""
    need_corpus()
    import ctypes
    import zipfile
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        raise Skip("this machine has an NVIDIA driver: --gpu auto may find a GPU")
    except OSError:
        pass
    if not shutil.which("readelf"):
        raise Missing("no readelf")
    sm80 = os.path.join(CW, "wgdemo_sm80_only" + SUF)
    with zipfile.ZipFile(sm80) as z:
        needs = glibc_needs(z.read("wgdemo_cuda" + EXT))
    too_new = sorted(v for v in needs if v > local_glibc()[:2])
    rc, doc, err = check_json("--gpu", "auto", sm80)
    assert doc["profile"] == "install", doc["profile"]
    assert doc["target"]["gpus"] == [] and doc["target"]["gpu_auto"]["found"] == 0, doc["target"]
    why = doc["target"]["gpu_auto"]["none"]
    assert why and "libnvidia-ml.so.1" in why, doc["target"]
    inp = doc["inputs"][0]
    sys_ = [f for f in inp["findings"] if f["rule"] == "WG-SYS-001"]
    if too_new:  # Debian 12: GLIBC_2.38 > 2.36, importing it fails here
        assert rc == 1 and inp["verdict"] == "fail" and len(sys_) == 1, (rc, inp)
        assert "GLIBC_%d.%d" % too_new[-1] in sys_[0]["message"], sys_
        assert "this system" in sys_[0]["message"], sys_
    else:
        assert not sys_, sys_
    na = {x["rule"]: x for x in inp["not_applied"]}
    for rule in ("WG-GPU-002", "WG-GPU-003"):
        assert "gpu" in na[rule]["lacks"], na
        assert "no GPU found by --gpu auto (%s)" % why in na[rule]["message"], na[rule]
    assert "WG-SYS-001" not in na, na
    assert "GPU rules do not apply" in err, err
    # The text report names the profile and the GPU rules left out.
    rc2, out, err = run("--no-config", "--gpu", "auto", sm80)
    assert rc2 == rc and "(profile: install, fail-on: error)" in out, out
    line = [x for x in out.splitlines() if "not applied:" in x and "WG-GPU-002" in x]
    assert len(line) == 1 and "WG-GPU-002 (no GPU found by --gpu auto (" in line[0], out
    assert ("error[WG-SYS-001]" in out) == bool(too_new), out
    # An explicit profile still wins: publish stays publish (the system rules are not in it).
    rc, doc, err = check_json("--gpu", "auto", "--profile", "publish", sm80)
    assert doc["profile"] == "publish", doc["profile"]
    assert rc == 0 and not [f for f in doc["inputs"][0]["findings"]
                            if f["rule"] == "WG-SYS-001"], doc["inputs"][0]
    assert "gpu" in {k for x in doc["inputs"][0]["not_applied"] for k in x["lacks"]}
    # scan: a target set of gpu=auto alone is this machine too; with profile=publish, publish.
    p = subprocess.run([WG, "scan", "-q", "--no-config", "--target-set", "here:gpu=auto",
                        "--target-set", "pub:gpu=auto,profile=publish", sm80],
                       capture_output=True, text=True, timeout=600)
    tg = {t["target"]: t for t in json.loads(p.stdout)["targets"]}
    assert tg["here"]["profile"] == "install" and tg["pub"]["profile"] == "publish", tg
    assert ("WG-SYS-001" in {f["rule"] for f in tg["here"]["findings"]}) == bool(too_new), tg
    assert "WG-SYS-001" not in {f["rule"] for f in tg["pub"]["findings"]}, tg
    assert "here: gpu=auto: no local GPU" in p.stderr, p.stderr


@test
def reports_list_the_rules_not_applied():
    """--target glibc=2.39 alone passed the old-ABI and the sm_80-only wheels without saying
    that the ABI and GPU rules were skipped for lack of facts."""
    need_corpus()
    old, sm80 = os.path.join(CW, "wgdemo_oldabi_sm90" + SUF), os.path.join(CW, "wgdemo_sm80_only" + SUF)
    rc, doc, err = check_json("--target", GPU_MACHINE, old, sm80)
    assert rc == 0, (rc, doc)
    for inp in doc["inputs"]:
        na = {x["rule"]: x for x in inp["not_applied"]}
        assert na["WG-ABI-001"]["lacks"] == ["cxx11abi"], na
        assert "--target cxx11abi=" in na["WG-ABI-001"]["message"]
        assert na["WG-GPU-002"]["lacks"] == ["gpu"] and "--gpu" in na["WG-GPU-002"]["message"]
        assert na["WG-GPU-003"]["lacks"] == ["cuda", "gpu"], na
        assert {r for r, x in na.items() if x["lacks"] == ["env"]} == \
            {"WG-LD-001", "WG-LD-002", "WG-LD-003", "WG-LD-004", "WG-LD-005", "WG-LD-006"}, na
    rc, out, err = run("--no-config", "--target", GPU_MACHINE, old)
    # text: each reason once, after the inputs' blocks and before the summary
    lines = out.splitlines()
    na = [x for x in lines if x.startswith("not applied:")]
    assert "not applied: WG-ABI-001 (no target torch C++ ABI: --target cxx11abi= or --env)" \
        in na and "not applied: WG-GPU-002 (no target GPU: --gpu)" in na, out
    assert "not applied: WG-LD-001..006 (no Python environment to load the objects in: --env)" \
        in na, out
    assert lines.index(na[0]) == len(lines) - 1 - len(na) and "1 input:" in lines[-1], out
    # Two inputs: each reason still once, with the inputs it concerns counted; the rules
    # that could have found nothing in an input are not listed for it (a wheel without
    # objects has nothing to load, a wheel without CUDA code nothing to launch).
    wrap = os.path.join(CW, "wgdemo_wrapper-0.1.0-py3-none-any.whl")
    cpu = os.path.join(CW, "wgcpu_cpu_good" + SUF)
    rc, out, err = run("--no-config", *TARGET, old, cpu, wrap)
    na = [x for x in out.splitlines() if "not applied" in x]
    assert na == ["not applied: WG-LD-001..005 to 2 inputs, WG-LD-006 to all 3 inputs (no "
                  "Python environment to load the objects in: --env)"], out
    rc, doc, err = check_json(*TARGET, cpu, wrap)
    na = {i["path"]: [x["rule"] for x in i["not_applied"]] for i in doc["inputs"]}
    assert na == {cpu: ["WG-LD-001", "WG-LD-002", "WG-LD-003", "WG-LD-004", "WG-LD-005",
                        "WG-LD-006"], wrap: ["WG-LD-006"]}, na
    # With --env given, no reason suggests --env.
    if SYS_PY:
        rc, out, err = run("--no-config", "--env", SYS_PY, old)
        na = [x for x in out.splitlines() if "not applied" in x]
        assert na and not [x for x in na if "--env" in x], out
    # With every fact given but an environment, only the loader rules are left out; a rule
    # switched off is not "not applied".
    rc, doc, err = check_json(*TARGET, "--disable", "WG-LD-004", old)
    assert [x["rule"] for x in doc["inputs"][0]["not_applied"]] == \
        ["WG-LD-001", "WG-LD-002", "WG-LD-003", "WG-LD-005", "WG-LD-006"], doc["inputs"][0]["not_applied"]
    # SARIF: configuration notifications naming the rule and the lacking facts.
    rc, out, err = run("--no-config", "--format", "sarif", "--target", GPU_MACHINE, old)
    validate(out, SARIF_SCHEMA, "Draft4Validator")
    inv = json.loads(out)["runs"][0]["invocations"][0]
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    notes = {n["associatedRule"]["id"]: n for n in inv["toolConfigurationNotifications"]}
    assert notes["WG-ABI-001"]["properties"]["lacks"] == ["cxx11abi"], notes
    for rid, n in notes.items():
        assert rules[n["associatedRule"]["index"]]["id"] == rid
        assert n["message"]["text"].startswith(rid + " not applied: ")


@test
def findings_lead_with_their_cause():
    """A cp312 wheel checked against a Python 3.11 environment: the tag finding that says
    why (WG-TAG-007) came after the loader errors it causes; now causes first, the same
    order in text, JSON, SARIF and GitHub commands (issue 29)."""
    need_corpus()
    if not SYS_PY:
        raise Skip("no system python")
    old = os.path.join(CW, "wgdemo_oldabi_sm90" + SUF)
    rc, doc, err = check_json("--env", SYS_PY, old)
    if doc["target"].get("python") == "3.12":
        raise Skip("the system python is 3.12: the wheel is for it")
    rules = [f["rule"] for f in doc["inputs"][0]["findings"]]
    ld = [i for i, r in enumerate(rules) if r.startswith("WG-LD-")]
    assert rules[0] == "WG-TAG-007" and ld, rules
    # what the objects need of the system (glibc) before what the loader then does
    sys_ = [i for i, r in enumerate(rules) if r.startswith("WG-SYS-")]
    assert all(i < ld[0] for i in sys_), rules
    rc, out, err = run("--no-config", "--env", SYS_PY, old)
    text = re.findall(r"^  (?:error|warning|info)\[([A-Z0-9-]+)\]", out, re.M)
    assert text == rules, (text, rules)
    rc, out, err = run("--no-config", "--format", "sarif", "--env", SYS_PY, old)
    sarif = [r["ruleId"] for r in json.loads(out)["runs"][0]["results"]
             if not r.get("suppressions")]
    assert sarif == rules, (sarif, rules)
    rc, out, err = run("--no-config", "--format", "github", "--env", SYS_PY, old)
    gh = re.findall(r"^::(?:error|warning|notice) file=[^\n]*?title=([A-Z0-9-]+) ", out, re.M)
    assert gh == rules, (gh, rules)


@test
def a_gpu_name_typo_names_the_closest():
    """--gpu H2O (the letter O): one line naming H20; new names accepted as spelled."""
    base = os.path.join(FIX, "wheels", "base-1.0-py3-none-any.whl")
    rc, out, err = run("--no-config", "--gpu", "H2O", base)
    assert rc == 2 and out == "" and err.count("\n") == 1, (rc, out, err)
    assert "unknown GPU 'H2O': did you mean H20 (9.0)?" in err, err
    for name, cc in (("H20", "9.0"), ("rtx 5070 ti", "12.0"), ("GB300", "10.3"), ("gb10", "12.1")):
        rc, doc, err = check_json("--gpu", name, base)
        assert [g["cc"] for g in doc["target"]["gpus"]] == [cc], (name, doc["target"])
    p = subprocess.run([WG, "gpus"], capture_output=True, text=True, timeout=60)
    rows = {ln.rsplit(None, 2)[0]: ln.split()[-2] for ln in p.stdout.splitlines()}
    assert rows["RTX PRO 6000 Blackwell"] == "12.0" and rows["B200"] == "10.0", rows
    assert rows["Jetson Thor"] == "11.0" and rows["RTX 5050"] == "12.0", rows


@test
def a_directory_with_a_trailing_slash_names_its_wheels_once_slashed():
    """`wheelgate check dist/` printed dist//x.whl (issue 29)."""
    tmp = tempfile.mkdtemp()
    try:
        base = os.path.join(FIX, "wheels", "base-1.0-py3-none-any.whl")
        shutil.copy(base, tmp)
        for arg in (tmp + "/", tmp + "//", tmp):
            rc, out, err = run("--no-config", arg)
            assert "//" not in out + err, (arg, out, err)
            assert tmp + "/base-1.0-py3-none-any.whl" in out, (arg, out)
            rc, doc, err = check_json(arg)
            assert [i["path"] for i in doc["inputs"]] == [tmp + "/base-1.0-py3-none-any.whl"], doc
    finally:
        shutil.rmtree(tmp)


@test
def a_fifo_is_refused_not_waited_on():
    """A FIFO given as input blocked forever in open(): now an unreadable input (exit 2)."""
    tmp = tempfile.mkdtemp()
    fifo = os.path.join(tmp, "pipe.whl")
    os.mkfifo(fifo)
    try:
        p = subprocess.run([WG, "check", "--no-config", fifo], capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 2 and "not a regular file" in p.stdout + p.stderr, p
        p = subprocess.run([WG, "inspect", fifo], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "not a regular file" in p.stderr, p
    finally:
        shutil.rmtree(tmp)


@test
def stdin_takes_a_filename():
    """`check -` lost the filename facts; --stdin-filename gives them back."""
    name = "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"
    path = os.path.join(W, name)
    tgt = ["--target", "torch=2.11.0+cu130,cxx11abi=1", "--profile", "publish"]
    data = open(path, "rb").read()
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", *tgt, "-"], input=data,
                       capture_output=True)
    bare = json.loads(p.stdout)["inputs"][0]
    validate(p.stdout, CHECK_SCHEMA)
    assert bare["path"] == "-" and "WG-CUDA-002" not in {f["rule"] for f in bare["findings"]}
    na = {x["rule"]: x["lacks"] for x in bare["not_applied"]}
    assert na["WG-CUDA-002"] == ["filename"] and na["WG-TAG-005"] == ["filename"], na
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", *tgt, "--stdin-filename",
                        name, "-"], input=data, capture_output=True)
    named = json.loads(p.stdout)["inputs"][0]
    rc, doc, err = check_json(*tgt, path)
    byfile = doc["inputs"][0]
    assert named["path"] == name and named["findings"] == byfile["findings"], named
    assert named["not_applied"] == byfile["not_applied"]
    assert "WG-CUDA-002" in {f["rule"] for f in named["findings"]}
    assert "filename" not in {k for x in named["not_applied"] for k in x["lacks"]}
    p = subprocess.run([WG, "inspect", "--json", "--stdin-filename", name, "-"], input=data,
                       capture_output=True)
    w = json.loads(p.stdout)["inputs"][0]["wheel"]["filename"]
    assert w["name"] == "flash_attn" and w["local_version"] == "cu12torch2.8cxx11abiFALSE", w


@test
def output_file_in_every_format():
    """-o FILE in text format wrote an empty file."""
    good = os.path.join(W, "hollow-1.0-py3-none-any.whl")
    tmp = tempfile.mkdtemp()
    for fmt in ("text", "json", "sarif"):
        out_file = os.path.join(tmp, "report." + fmt)
        rc, out, err = run("--no-config", "--format", fmt, "-o", out_file, good)
        rc2, out2, err2 = run("--no-config", "--format", fmt, good)
        assert rc == rc2 == 1 and out == "", (fmt, rc, out)
        text = open(out_file).read()
        assert text == out2 and text.strip(), (fmt, text)
        if fmt == "text":
            assert "FAIL " + good in text and "1 input: 0 passed, 1 failed" in text
            assert "1 input: 0 passed, 1 failed" in err  # the summary also on the terminal
    rc, out, err = run("--no-config", "-o", "/nonexistent/dir/r.txt", good)
    assert rc == 2 and "/nonexistent/dir/r.txt" in err, (rc, err)


@test
def text_that_is_not_utf8_is_escaped_never_dropped():
    """JSON and SARIF dropped findings whose text is not UTF-8 while counting them (OpenCV:
    counts 5, 3 listed); a wheel's bytes reached the terminal raw."""
    tmp = tempfile.mkdtemp()
    whl = make_wheel(os.path.join(tmp, "weird-1.0-py3-none-any.whl"),
                     {"weird/__init__.py": b"x = 1\n"},
                     b"weird/ghost\xff\xfe.py,sha256=AAAA,1\n"
                     b"weird/\x1b[2J\x1b]0;pwned\x07.py,sha256=AAAA,1\n"
                     b"weird/plain.py,sha256=AAAA,1\n")
    rc, doc, err = check_json("--fail-on", "warning", whl)
    inp = doc["inputs"][0]
    listed = len(inp["findings"])
    assert listed == sum(inp["counts"].values()) >= 3, inp
    assert doc["summary"]["errors"] + doc["summary"]["warnings"] + doc["summary"]["infos"] == listed
    members = [f["member"] for f in inp["findings"] if f["member"]]
    assert "weird/ghost\\xff\\xfe.py" in members, members
    assert "weird/\x1b[2J\x1b]0;pwned\x07.py" in members, members  # JSON escapes controls itself
    rc, out, err = run("--no-config", "--format", "sarif", whl)
    validate(out, SARIF_SCHEMA, "Draft4Validator")
    assert len(json.loads(out)["runs"][0]["results"]) == listed
    p = subprocess.run([WG, "check", "--no-config", whl], capture_output=True)
    assert b"\x1b" not in p.stdout and b"\xff" not in p.stdout and b"\x07" not in p.stdout
    assert b"weird/ghost\\xff\\xfe.py" in p.stdout and b"\\x1b[2J\\x1b]0;pwned\\x07" in p.stdout
    rc, out, err = subprocess_inspect("--members", whl)
    assert b"\x1b" not in out and b"\xff" not in out and b"ghost\\xff\\xfe.py" in out, out
    rc, out, err = subprocess_inspect("--json", whl)
    orphans = json.loads(out)["inputs"][0]["wheel"]["record"]["orphans"]
    assert "weird/ghost\\xff\\xfe.py" in orphans and len(orphans) == 3, orphans
    # The Python binding and what the pip gate prints: no UnicodeDecodeError.
    lib = os.path.join(os.path.dirname(WG), "libwheelgate.so.0")
    code = ("import sys,wheelgate; r=wheelgate.check(sys.argv[1], fail_on='warning');"
            "print(len(r.findings), r.verdict); wheelgate.Checker().check([sys.argv[1]]).text")
    env = dict(os.environ, WHEELGATE_LIB=lib, PYTHONPATH=os.path.join(ROOT, "hooks", "pip"))
    if b"libasan.so" in open(lib, "rb").read():  # a sanitizer build: its runtime comes first
        asan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                              text=True).stdout.strip()
        env.update(LD_PRELOAD=asan, ASAN_OPTIONS="detect_leaks=0")
    p = subprocess.run([sys.executable, "-c", code, whl], capture_output=True, env=env)
    assert p.returncode == 0 and p.stdout.decode().split() == [str(listed), "fail"], p


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The fatbin reader and the GPU model against ground truth:
  - the nvcc fixture matrix (tests/fixtures/cuda/matrix.txt): the sets reported for every object
    equal the -gencode flags it was built with; compression and debug follow the flags;
    the prebuilt copies always, fresh nvcc builds when nvcc is there;
  - cuobjdump's listing of every fixture and of the CUDA 13.0 libraries (recorded on the GPU
    machine, tests/fixtures/cuda/truth/), and the corpus README's cuobjdump counts;
  - what the fixtures really did on an H200 (sm_90): the verdict for sm_90 must agree;
  - the corpus wheels on sm_90, per the corpus README.

Usage: test_cuda.py WHEELGATE FIXTURE_SRC_DIR BUILT_FIXTURES_DIR|- CORPUS CUDA_LIB_DIR [PYTHON]
Prints one line per test and closes with "N passed, N failed".
"""
import collections
import hashlib
import json
import os
import re
import subprocess
import sys

from harness import Missing, Skip, main, test, validate as _validate  # noqa: E402

WG, SRC, BUILT, CORPUS, CUDALIB = sys.argv[1:6]
PREBUILT = os.path.join(SRC, "prebuilt")
TRUTH = os.path.join(SRC, "truth")





SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "schema",
                      "inspect.schema.json")
SYS_PY = sys.argv[6] if len(sys.argv) > 6 else ""


def validate(raw):
    """Validates an inspect document against the schema (python3-jsonschema)."""
    _validate(raw, SCHEMA, SYS_PY, required=False)


def inspect(*paths, gpus=(), entries=True):
    args = [WG, "inspect", "--json", "--symbols=none"]
    for g in gpus:
        args += ["--gpu", g]
    # every entry listed (inspect lists 1,000 an object by default; the counts compared
    # with cuobjdump here are of all of them)
    args.append("--entries=all" if entries else "--entries=none")
    p = subprocess.run(args + list(paths), capture_output=True, timeout=900)
    assert p.returncode in (0, 1), (p.returncode, p.stderr.decode()[-2000:])
    if len(p.stdout) < (64 << 20):
        validate(p.stdout)
    return json.loads(p.stdout)["inputs"]


def matrix():
    rows = []
    with open(os.path.join(SRC, "matrix.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, flags = line.split(None, 1)
                rows.append((name, flags.split()))
    return rows


def expected_sets(flags):
    """The SASS, PTX and LTO-IR sets that -gencode ... code=... asks nvcc for."""
    sass, ptx, lto = set(), set(), set()
    for i, f in enumerate(flags):
        if f != "-gencode":
            continue
        code = re.search(r"code=\[?([^\]]+)\]?", flags[i + 1]).group(1)
        for c in code.split(","):
            (sass if c.startswith("sm_") else ptx if c.startswith("compute_") else lto).add(c)
    return sass, ptx, lto


def check_matrix(directory):
    rows = matrix()
    items = inspect(*[os.path.join(directory, n + ".so") for n, _ in rows])
    for (name, flags), item in zip(rows, items):
        assert item["problems"] == [], (name, item["problems"])
        cuda = item["objects"][0]["cuda"]
        sass, ptx, lto = expected_sets(flags)
        got = (set(cuda["sass"]), set(cuda["ptx"]), set(cuda["lto_ir"]))
        assert got == (sass, ptx, lto), (name, got, (sass, ptx, lto))
        entries = cuda["entries"]
        rdc = "-rdc=true" in flags
        sections = {c["section"] for c in cuda["containers"]}
        assert sections == ({".nv_fatbin", "__nv_relfatbin"} if rdc else {".nv_fatbin"}), name
        for e in entries:
            c = cuda["containers"][e["container"]]
            if e["kind"] == "ptx":
                want = "zstd"
                if "--compress-mode=speed" in flags:
                    want = "lz4"
                if "--no-compress" in flags:
                    want = "none"
                assert e["compression"] == want, (name, e)
                # The PTX text agrees with the entry header.
                assert e["ptx_target"] == e["arch"].replace("compute_", "sm_"), (name, e)
                assert e["ptx_version"] == e["version"], (name, e)
            elif e["kind"] == "sass":
                zstd = ("-compress-all" in flags or "-G" in flags or
                        (rdc and c["section"] == "__nv_relfatbin"))
                assert e["compression"] == ("zstd" if zstd else "none"), (name, e)
            assert e["debug"] == ("-G" in flags), (name, e)
        if rdc:
            linked = [c for c in cuda["containers"] if c["section"] == ".nv_fatbin"]
            assert [c["wrapper_version"] for c in linked] == [2], (name, linked)
        else:
            assert 1 in [c["wrapper_version"] for c in cuda["containers"]], name


@test
def prebuilt_matrix_matches_flags():
    check_matrix(PREBUILT)


@test
def fresh_nvcc_matrix_matches_flags():
    if BUILT == "-" or not os.path.exists(os.path.join(BUILT, ".stamp")):
        raise Skip("nvcc not found: the prebuilt copies were checked instead")
    check_matrix(BUILT)


def cuobjdump_blocks(path):
    blocks, cur = {}, None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("== "):
            cur = line[3:].split()[0]
            blocks[cur] = []
        elif cur is not None and line:
            blocks[cur].append(line)
    return blocks


@test
def fixtures_agree_with_cuobjdump():
    blocks = cuobjdump_blocks(os.path.join(TRUTH, "cuobjdump-fixtures.txt"))
    names = sorted(blocks)
    items = inspect(*[os.path.join(PREBUILT, n) for n in names])
    for name, item in zip(names, items):
        theirs = collections.Counter()
        for l in blocks[name]:
            m = re.match(r"(ELF|PTX) file\s+\d+: .*\.(sm_\d+a?)\.(cubin|ptx)$", l)
            if m:
                theirs[("sass" if m.group(1) == "ELF" else "ptx", m.group(2))] += 1
        cuda = item["objects"][0]["cuda"]
        ours = collections.Counter()
        for e in cuda["entries"]:
            # cuobjdump 13.0 lists a shared object's .nv_fatbin, not its __nv_relfatbin
            # (seen on the -rdc=true fixtures: only the linked cubins are listed).
            if cuda["containers"][e["container"]]["section"] == ".nv_fatbin":
                # cuobjdump names PTX sm_XX and drops the family suffix
                arch = re.sub(r"^(sm|compute)_(\d+)(a?)f?$", r"sm_\2\3", e["arch"])
                ours[(e["kind"], arch)] += 1
        assert ours == theirs, (name, ours, theirs)


@test
def verdicts_agree_with_the_h200():
    outcomes = {}
    for line in open(os.path.join(TRUTH, "outcomes-sm_90.txt")):
        if not line.startswith("#"):
            name, res = line.split()
            outcomes[name] = res
    names = sorted(outcomes)
    items = inspect(*[os.path.join(PREBUILT, n + ".so") for n in names], gpus=["sm_90"],
                    entries=False)
    ran = 0
    for name, item in zip(names, items):
        v = item["objects"][0]["cuda"]["gpus"][0]
        predicted = v["runs"] != "none"
        assert predicted == (outcomes[name] == "ok"), (name, v, outcomes[name])
        if outcomes[name] != "ok":
            assert outcomes[name] == "cudaErrorNoKernelImageForDevice", (name, outcomes[name])
        ran += predicted
    # Both outcomes are represented, so agreement means something.
    assert 0 < ran < len(names), ran


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def registered_counts(obj):
    c = collections.Counter()
    cuda = obj["cuda"] or {"entries": [], "containers": []}
    for e in cuda["entries"]:
        if cuda["containers"][e["container"]]["registered"]:
            kind = "ELF" if e["kind"] == "sass" else "PTX" if e["kind"] == "ptx" else "LTO"
            c[(kind, re.sub(r"^(sm|compute)_(\d+)(a?)f?$", r"sm_\2\3", e["arch"]))] += 1
    return c


def need_cuda():
    if not os.path.isdir(CUDALIB):
        raise Skip("no CUDA toolkit libraries at " + CUDALIB)


@test
def cuda_libraries_agree_with_cuobjdump():
    need_cuda()
    truth = {}
    cur = None
    for line in open(os.path.join(TRUTH, "cuobjdump-libs.txt")):
        parts = line.split()
        if parts[0] == "==":
            cur = parts[2]
            truth[cur] = collections.Counter()
        else:
            truth[cur][(parts[0], parts[1])] = int(parts[2])
    compared = 0
    for f in sorted(os.listdir(CUDALIB)):
        path = os.path.join(CUDALIB, f)
        if os.path.islink(path) or ".so" not in f:
            continue
        h = sha256(path)
        if h not in truth:
            continue
        obj = inspect(path, entries=True)[0]["objects"][0]
        assert registered_counts(obj) == truth[h], (f, registered_counts(obj), truth[h])
        compared += 1
    assert compared >= 5, "only %d libraries matched the recorded ones" % compared


@test
def corpus_readme_cuobjdump_counts():
    need_cuda()
    readme = {
        "libcublas.so.13": "ELF sm_75 190, sm_80 191, sm_86 114, sm_90 191, sm_100 191, "
                           "sm_120 192; PTX sm_120 188",
        "libcurand.so.10": "ELF sm_75, sm_80, sm_86, sm_89, sm_90, sm_100, sm_103, sm_120, "
                           "sm_121 11 each; PTX sm_121 10",
    }
    want = {
        "libcublas.so.13": {("ELF", "sm_75"): 190, ("ELF", "sm_80"): 191, ("ELF", "sm_86"): 114,
                            ("ELF", "sm_90"): 191, ("ELF", "sm_100"): 191,
                            ("ELF", "sm_120"): 192, ("PTX", "sm_120"): 188},
        "libcurand.so.10": dict([(("ELF", "sm_%d" % a), 11) for a in
                                 (75, 80, 86, 89, 90, 100, 103, 120, 121)] +
                                [(("PTX", "sm_121"), 10)]),
    }
    for lib, w in want.items():
        path = os.path.join(CUDALIB, lib)
        if not os.path.exists(path):
            raise Skip(path + " not found")
        obj = inspect(path)[0]["objects"][0]
        assert registered_counts(obj) == collections.Counter(w), (lib, readme[lib])


@test
def every_cuda_library_reads_cleanly_and_cufft_is_found():
    need_cuda()
    libs = [os.path.join(CUDALIB, f) for f in sorted(os.listdir(CUDALIB))
            if ".so" in f and not os.path.islink(os.path.join(CUDALIB, f))]
    items = inspect(*libs, gpus=["sm_90"], entries=False)
    outside = {}
    for item in items:
        assert item["problems"] == [], (item["path"], item["problems"])
        o = item["objects"][0]
        assert o["error"] is None, item["path"]
        cuda = o["cuda"]
        if cuda:
            outside[os.path.basename(item["path"])] = (
                sum(1 for c in cuda["containers"] if not c["registered"]),
                cuda["outside"], cuda["gpus"][0])
    # fatbin-format.md section 5: containers found by the whole-file scan.
    expect = {"libcufft.so.12": 23983, "libcublasLt.so.13": 383, "libcusparse.so.12": 34,
              "libcupti.so.13": 3, "libcheckpoint.so": 3,
              "libcudnn_engines_precompiled.so.9": 122}
    for lib, n in expect.items():
        if lib in outside or os.path.exists(os.path.join(CUDALIB, lib)):
            assert outside[lib][0] == n, (lib, outside[lib][0], n)
    # cuFFT's .nv_fatbin holds sm_75 only; its real kernels (outside) go far beyond, and they
    # are what it runs on an H100 (torch.fft, cupy.fft and cufftw work there).
    n, sets, verdict = outside["libcufft.so.12"]
    assert {"sm_80", "sm_90", "sm_100", "sm_120"} <= set(sets["sass"]), sets
    assert verdict["other_runnable"] > 0 and verdict["runs"] == "all", verdict


@test
def corpus_wheels_on_sm90():
    wheels = os.path.join(CORPUS, "wheels")
    if not os.path.isdir(wheels):
        raise Missing("corpus not found")
    suf = "-0.1.0-cp312-cp312-linux_x86_64.whl"
    names = ["wgdemo_good_sm90", "wgdemo_sm80_only", "wgdemo_mixed", "wgdemo_oldabi_sm90"]
    items = inspect(*[os.path.join(wheels, n + suf) for n in names], gpus=["sm_90", "H200"])
    runs = {}
    for n, item in zip(names, items):
        for o in item["objects"]:
            v = o["cuda"]["gpus"]
            assert v[0]["runs"] == v[1]["runs"] and v[1]["gpu"] == "H200"
            runs[(n, o["python_extension"]["module"])] = v[0]["runs"]
    assert runs == {("wgdemo_good_sm90", "wgdemo_cuda"): "all",
                    ("wgdemo_sm80_only", "wgdemo_cuda"): "none",
                    ("wgdemo_mixed", "wgdemo_cuda"): "all",
                    ("wgdemo_mixed", "wgdemo_aux_cuda"): "none",
                    ("wgdemo_oldabi_sm90", "wgdemo_cuda"): "all"}, runs



def check(*args):
    p = subprocess.run([WG, "check", "--format", "json", "--no-config", *args],
                       capture_output=True, timeout=900)
    assert p.returncode in (0, 1), (p.returncode, p.stderr.decode()[-2000:])
    return json.loads(p.stdout)["inputs"][0]["findings"]


def write_wheel(path, name, files):
    """A wheel (WHEEL, METADATA, RECORD with sha256) of files: {archive name: local path}.
    Stored, not deflated: the CUDA libraries are hundreds of MB."""
    import base64
    import zipfile
    di = name + "-0.1.0.dist-info"
    rows = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        def add(arc, data):
            z.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            rows.append("%s,sha256=%s,%d" % (arc, digest.decode(), len(data)))
        for arc, src in sorted(files.items()):
            with open(src, "rb") as f:
                add(arc, f.read())
        add(di + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: 0.1.0\n" % name).encode())
        add(di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: test_cuda\nRoot-Is-Purelib: false\n"
            b"Tag: cp312-cp312-linux_x86_64\n")
        rows.append(di + "/RECORD,,")
        z.writestr(di + "/RECORD", "\n".join(rows) + "\n")
    return path


def corpus_member(tmp, wheel, member):
    """Extracts one member of a corpus wheel into tmp; returns its path."""
    import zipfile
    path = os.path.join(CORPUS, "wheels", wheel + "-0.1.0-cp312-cp312-linux_x86_64.whl")
    if not os.path.exists(path):
        raise Missing("corpus not found at " + path)
    out = os.path.join(tmp, wheel + "-" + member)
    with zipfile.ZipFile(path) as z, open(out, "wb") as f:
        f.write(z.read(member))
    return out


EXT = ".cpython-312-x86_64-linux-gnu.so"


@test
def cufft_runs_on_sm90_from_the_kernels_it_loads_itself():
    """libcufft.so.12 on sm_90: it runs (torch.fft, cupy.fft and cufftw work on an H100), from
    the containers outside .nv_fatbin; the registered-only answer was none (sm_75 SASS only,
    the same set as the sm75 fixture, which failed on the H200), and WG-GPU-002 said so."""
    import tempfile
    need_cuda()
    lib = os.path.join(CUDALIB, "libcufft.so.12")
    if not os.path.exists(lib):
        raise Skip(lib + " not found")
    sm75 = os.path.join(PREBUILT, "sm75.so")
    cufft, fixture = inspect(lib, sm75, gpus=["sm_90"], entries=False)
    cuda = cufft["objects"][0]["cuda"]
    # What the registered sections hold: one sm_75 image, no PTX, and no wrapper anywhere.
    assert cuda["sass"] == ["sm_75"] and cuda["ptx"] == [], (cuda["sass"], cuda["ptx"])
    assert cuda["wrappers"] == 0, cuda["wrappers"]
    assert "sm_90" in cuda["outside"]["sass"], cuda["outside"]
    v = cuda["gpus"][0]
    assert v["runs"] == "all" and v["how"] == "sass-exact", v
    assert v["from"] == "driver-loaded" and v["other_runnable"] > 0, v
    # The same registered set alone: none, as on the H200 (outcomes-sm_90.txt: sm75 failed).
    fv = fixture["objects"][0]["cuda"]["gpus"][0]
    assert fixture["objects"][0]["cuda"]["sass"] == ["sm_75"], fixture["objects"][0]["cuda"]
    assert fv["runs"] == "none" and fv["from"] == "none", fv
    text = subprocess.run([WG, "inspect", "--symbols=none", "--gpu", "sm_90", lib],
                          capture_output=True, timeout=900).stdout.decode()
    assert "sm_90       runs: sass-exact" in text, text[-2000:]
    # check on a wheel holding it: no WG-GPU-002; the fixture in the same layout gets one.
    tmp = tempfile.mkdtemp()
    try:
        w = write_wheel(os.path.join(tmp, "nvidia_cufft-0.1.0-cp312-cp312-linux_x86_64.whl"),
                        "nvidia_cufft", {"nvidia/cufft/lib/libcufft.so.12": lib})
        rules = [f["rule"] for f in check("--gpu", "sm_90", w)]
        assert "WG-GPU-002" not in rules, rules
        w = write_wheel(os.path.join(tmp, "nvidia_sm75-0.1.0-cp312-cp312-linux_x86_64.whl"),
                        "nvidia_sm75", {"nvidia/sm75/lib/libsm75.so.1": sm75})
        rules = [f["rule"] for f in check("--gpu", "sm_90", w)]
        assert rules.count("WG-GPU-002") == 1, rules
    finally:
        import shutil
        shutil.rmtree(tmp)


@test
def gencode_mismatch_is_about_extensions_that_run_on_different_gpus():
    """WG-GPU-001 compares the Python extension modules of a wheel by the GPUs they run on:
    corpus mixed fires (wgdemo_aux_cuda sm_80 fails on sm_90 where wgdemo_cuda runs); an
    extension shipped with CUDA libraries of other arch sets is quiet; two extensions with
    different sets but the same GPUs are quiet; sm_80 and sm_90 extensions both fire."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp()
    try:
        corpus = os.path.join(CORPUS, "wheels")
        if not os.path.isdir(corpus):
            raise Missing("corpus not found at " + corpus)
        for name in sorted(os.listdir(corpus)):
            findings = [f for f in check(os.path.join(corpus, name))
                        if f["rule"] == "WG-GPU-001"]
            if name.startswith("wgdemo_mixed"):
                assert len(findings) == 1, findings
                m = findings[0]["message"]
                assert m.startswith("wgdemo_aux_cuda" + EXT + " carries sm_80 but wgdemo_cuda" +
                                    EXT + " carries sm_80 sm_90: on sm_90 (H100"), m
            else:
                assert findings == [], (name, findings)
        good = corpus_member(tmp, "wgdemo_good_sm90", "wgdemo_cuda" + EXT)  # sm_90
        # Two extensions, sm_90 and sm_90a: different sets, the same GPUs (9.0).
        w = write_wheel(os.path.join(tmp, "two-0.1.0-cp312-cp312-linux_x86_64.whl"), "two",
                        {"wgdemo_cuda" + EXT: good,
                         "wgdemo_a" + EXT: os.path.join(PREBUILT, "sm90a.so")})
        items = inspect(w)
        sets = sorted(tuple(o["cuda"]["sass"]) for o in items[0]["objects"])
        assert sets == [("sm_90",), ("sm_90a",)], sets
        assert [o["python_extension"]["module"] is not None for o in items[0]["objects"]] == \
            [True, True]
        assert [f for f in check(w) if f["rule"] == "WG-GPU-001"] == []
        # sm_80 next to sm_90: each fails where the other runs.
        w = write_wheel(os.path.join(tmp, "apart-0.1.0-cp312-cp312-linux_x86_64.whl"), "apart",
                        {"wgdemo_cuda" + EXT: good,
                         "wgdemo_b" + EXT: os.path.join(PREBUILT, "sm80.so")})
        msgs = sorted(f["message"] for f in check(w) if f["rule"] == "WG-GPU-001")
        assert len(msgs) == 2, msgs
        assert msgs[0].startswith("wgdemo_b" + EXT + " carries sm_80 but wgdemo_cuda" + EXT +
                                  " carries sm_90: on sm_90 (H100"), msgs[0]
        assert msgs[1].startswith("wgdemo_cuda" + EXT + " carries sm_90 but wgdemo_b" + EXT +
                                  " carries sm_80: on sm_80 (A100"), msgs[1]
        # One extension and CUDA libraries with other arch sets (what the old rule compared):
        # cuBLAS runs on sm_80 where the extension does not, yet nothing is wrong.
        need_cuda()
        libs = {l: os.path.join(CUDALIB, l) for l in ("libcublas.so.13", "libcurand.so.10")}
        for l, p in libs.items():
            if not os.path.exists(p):
                raise Skip(p + " not found")
        w = write_wheel(os.path.join(tmp, "withlibs-0.1.0-cp312-cp312-linux_x86_64.whl"),
                        "withlibs", dict([("wgdemo_cuda" + EXT, good)] +
                                         [("withlibs.libs/" + l, p) for l, p in libs.items()]))
        objs = {os.path.basename(o["path"]): o["cuda"] for o in
                inspect(w, gpus=["sm_80"], entries=False)[0]["objects"]}
        assert objs["libcublas.so.13"]["sass"] != objs["libcurand.so.10"]["sass"], objs.keys()
        assert objs["libcublas.so.13"]["gpus"][0]["runs"] != "none"
        assert objs["wgdemo_cuda" + EXT]["gpus"][0]["runs"] == "none"
        assert [f for f in check(w) if f["rule"] == "WG-GPU-001"] == []
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())

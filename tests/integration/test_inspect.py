#!/usr/bin/env python3
"""End-to-end tests of `wheelgate inspect`: exit codes, text and JSON output, the JSON schema
(docs/schema/inspect.schema.json, validated with python3-jsonschema), stdin input, and the
facts cross-checked against independent tools (readelf, nm) and the corpus README.

Usage: test_inspect.py WHEELGATE FIXTURES CORPUS SCHEMA_DIR [PYTHON_WITH_JSONSCHEMA]
Prints one line per test and closes with "N passed, N failed".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from harness import Missing, main, test, validate as _validate  # noqa: E402

WG, FIX, CORPUS, SCHEMA_DIR = sys.argv[1:5]
SYS_PY = sys.argv[5] if len(sys.argv) > 5 else ""
WHEELS = os.path.join(FIX, "wheels")
ABI = os.path.join(FIX, "abi")
CW = os.path.join(CORPUS, "wheels")
SUF = "-0.1.0-cp312-cp312-linux_x86_64.whl"





def run(*args, stdin=None):
    p = subprocess.run([WG, *args], input=stdin, capture_output=True, timeout=600)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def inspect_json(*paths, extra=()):
    rc, out, err = run("inspect", "--json", *extra, *paths)
    return rc, json.loads(out), err


def validate(doc):
    """Validates an inspect document against the schema, in the interpreter that has jsonschema."""
    _validate(json.dumps(doc), os.path.join(SCHEMA_DIR, "inspect.schema.json"), SYS_PY)


def need_corpus():
    if not os.path.isdir(CW):
        raise Missing("corpus not found at " + CW)


def objects_by_module(item):
    return {o["python_extension"]["module"]: o for o in item["objects"] if o["python_extension"]}


@test
def corpus_json_matches_readme():
    need_corpus()
    names = ["wgdemo_good_sm90" + SUF, "wgdemo_oldabi_sm90" + SUF, "wgdemo_sm80_only" + SUF,
             "wgdemo_mixed" + SUF, "wgcpu_cpu_good" + SUF, "wgdemo_wrapper-0.1.0-py3-none-any.whl"]
    rc, doc, err = inspect_json(*[os.path.join(CW, n) for n in names])
    assert rc == 0, (rc, err)
    validate(doc)
    assert doc["schema"] == "wheelgate.inspect/1"
    items = {os.path.basename(i["path"]): i for i in doc["inputs"]}
    for n, item in items.items():
        assert item["kind"] == "wheel" and item["problems"] == [], (n, item["problems"])
        w = item["wheel"]
        assert w["record"]["present"] and not w["record"]["orphans"]
        for m in w["members"]:
            assert m["record"] == ("unhashed" if m["name"].endswith("/RECORD") else "ok"), m
    good = objects_by_module(items[names[0]])["wgdemo_cuda"]
    assert good["string_abi"]["abi"] == "new" and good["string_abi"]["torch_abi"] == "new"
    old = objects_by_module(items[names[1]])["wgdemo_cuda"]
    assert old["string_abi"]["abi"] == "old" and old["string_abi"]["torch_abi"] == "old"
    sym = [s for s in old["symbols"] if s["name"] == "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs"]
    assert len(sym) == 1 and not sym[0]["defined"] and sym[0]["torch"], sym
    assert sym[0]["string_abi"] == "old"
    assert sym[0]["demangled"] == ("c10::detail::torchCheckFail(char const*, char const*, "
                                   "unsigned int, std::basic_string<char, std::char_traits<char>,"
                                   " std::allocator<char> > const&)")
    mixed = objects_by_module(items[names[3]])
    assert sorted(mixed) == ["wgdemo_aux_cuda", "wgdemo_cuda"], sorted(mixed)
    cpu = objects_by_module(items[names[4]])["wgcpu_ext"]
    assert "libcudart.so.13" not in cpu["needed"] and "libc10.so" in cpu["needed"]
    wrapper = items[names[5]]
    assert wrapper["objects"] == [] and wrapper["wheel"]["top_level"] == ["wgdemo"]
    assert wrapper["wheel"]["filename"]["platform_tags"] == ["any"]
    assert wrapper["wheel"]["wheel_file"]["root_is_purelib"] is True


def nm_dynamic(path):
    """{name: (defined, version)} from binutils' nm, an independent reader."""
    out = subprocess.run(["nm", "-D", "--with-symbol-versions", path], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if not parts:
            continue
        kind, name = parts[-2], parts[-1]
        ver = None
        if "@" in name:
            name, _, ver = name.partition("@")
            ver = ver.lstrip("@") or None
        syms[name] = (kind not in ("U", "w", "v") or False, ver)
    return syms


def readelf_needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                         check=True).stdout
    return [l.split("[", 1)[1].rstrip("]") for l in out.splitlines() if "(NEEDED)" in l]


@test
def facts_agree_with_nm_and_readelf():
    if not shutil.which("nm") or not shutil.which("readelf"):
        raise Missing("binutils nm/readelf not found")
    paths = [os.path.join(ABI, f) for f in sorted(os.listdir(ABI)) if f.endswith(".so")]
    paths += [os.path.join(ABI, "torch_new/libc10.so"), os.path.join(ABI, "torch_old/libc10.so")]
    if os.path.isdir(CW):
        tmp = tempfile.mkdtemp()
        subprocess.run(["unzip", "-q", "-o", os.path.join(CW, "wgdemo_oldabi_sm90" + SUF),
                        "-d", tmp], check=True)
        paths.append(os.path.join(tmp, "wgdemo_cuda.cpython-312-x86_64-linux-gnu.so"))
    rc, doc, err = inspect_json(*paths)
    assert rc == 0, err
    validate(doc)
    for item in doc["inputs"]:
        o = item["objects"][0]
        path = item["path"]
        assert o["needed"] == readelf_needed(path), (path, o["needed"])
        ours = {s["name"]: s for s in o["symbols"]}
        theirs = nm_dynamic(path)
        assert set(ours) == set(theirs), (path, set(ours) ^ set(theirs))
        for name, (defined, ver) in theirs.items():
            assert ours[name]["defined"] == defined, (path, name)
            assert (ours[name]["version"] or None) == ver, (path, name, ours[name]["version"], ver)
        assert o["symbol_counts"]["total"] == len(theirs)


def readelf_versions(path):
    """[(library, version, weak)] from readelf -V's version needs section, in its order."""
    out = subprocess.run(["readelf", "-V", "-W", path], capture_output=True, text=True,
                         check=True).stdout
    got, lib, inside = [], None, False
    for line in out.splitlines():
        if line.startswith("Version needs section"):
            inside = True
        elif line.startswith("Version") and "section" in line:
            inside = False
        elif inside and "File:" in line:
            lib = line.split("File:")[1].split()[0]
        elif inside and "Name:" in line:
            got.append((lib, line.split("Name:")[1].split()[0], "WEAK" in line.split("Flags:")[1]))
    return got


def version_tuple(v):
    return tuple(int(x) for x in v.rsplit("_", 1)[1].split("."))


@test
def versions_needed_agree_with_readelf():
    """Issue 7: every version needed per library, and the highest of each family, against
    readelf -V on the glibc fixtures, the corpus and the CUDA toolkit's libraries."""
    if not shutil.which("readelf"):
        raise Missing("binutils readelf not found")
    sysd = os.path.join(FIX, "abi-ld", "sys")
    paths = [os.path.join(sysd, f) for f in sorted(os.listdir(sysd))]
    cuda = "/usr/local/cuda/lib64"
    for lib in ("libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13", "libnvrtc.so.13",
                "libcufft.so.12", "libnvJitLink.so.13"):
        if os.path.exists(os.path.join(cuda, lib)):
            paths.append(os.path.realpath(os.path.join(cuda, lib)))
    if os.path.isdir(CW):
        tmp = tempfile.mkdtemp()
        subprocess.run(["unzip", "-q", "-o", os.path.join(CW, "wgdemo_good_sm90" + SUF),
                        "-d", tmp], check=True)
        paths.append(os.path.join(tmp, "wgdemo_cuda.cpython-312-x86_64-linux-gnu.so"))
    rc, doc, err = inspect_json(*paths)
    assert rc == 0, err
    validate(doc)
    checked = 0
    for item in doc["inputs"]:
        o = item["objects"][0]
        theirs = readelf_versions(item["path"])
        ours = [(v["library"], v["version"], v["weak"]) for v in o["versions"]["needed"]]
        assert sorted(ours) == sorted(theirs), (item["path"], set(ours) ^ set(theirs))
        families = {}
        for lib, ver, weak in theirs:
            fam = ver.rsplit("_", 1)[0]
            try:
                t = version_tuple(ver)
            except (ValueError, IndexError):
                continue  # "libcudart.so.13", "GLIBC_PRIVATE": not a family with numbers
            if fam not in families or t > version_tuple(families[fam]):
                families[fam] = ver
        highest = {h["family"]: h["version"] for h in o["versions"]["highest"]}
        assert highest == families, (item["path"], highest, families)
        checked += 1
    name = lambda p: os.path.basename(p)
    by = {name(i["path"]): i["objects"][0]["versions"] for i in doc["inputs"]}
    h = {x["family"]: x["version"] for x in by["ext_glibc299.cpython-312-x86_64-linux-gnu.so"]["highest"]}
    assert h == {"GLIBC": "GLIBC_2.99"}, h
    if os.path.isdir(CW):
        h = {x["family"]: x["version"] for x in by["wgdemo_cuda.cpython-312-x86_64-linux-gnu.so"]["highest"]}
        assert h["GLIBC"] == "GLIBC_2.38", h  # the corpus README: __isoc23_strtoul@GLIBC_2.38
    # The text output: the highest line and one line per library.
    rc, out, err = run("inspect", os.path.join(sysd, "ext_glibc238.cpython-312-x86_64-linux-gnu.so"))
    assert rc == 0 and "versions    GLIBC_2.38 (the highest of each family)" in out, out
    assert [l.split() for l in out.splitlines() if l.strip().startswith("libc.so.6")] == \
        [["libc.so.6", "GLIBC_2.38"]], out
    if os.path.isdir(CW):  # numerically sorted: 2.4 before 2.14 before 2.38
        rc, out, err = run("inspect", "--symbols=none", os.path.join(CW, "wgdemo_good_sm90" + SUF))
        line = [l.split()[1:] for l in out.splitlines() if l.strip().startswith("libc.so.6")][0]
        assert line == sorted(line, key=version_tuple) and line[-1] == "GLIBC_2.38", line
    print("  %d objects' version needs agree with readelf -V" % checked)


@test
def broken_inputs_exit_codes_and_json():
    good = os.path.join(WHEELS, "purepkg-0.1-py3-none-any.whl")
    bad = os.path.join(WHEELS, "badrec-1.0-py3-none-any.whl")
    unreadable = os.path.join(WHEELS, "truncated-1.0-py3-none-any.whl")
    assert run("inspect", good)[0] == 0
    rc, doc, err = inspect_json(good, bad)
    assert rc == 1, rc
    validate(doc)
    assert len(doc["inputs"][1]["problems"]) == 4
    assert {p["code"] for p in doc["inputs"][1]["problems"]} == {"integrity"}
    rc, doc, err = inspect_json(good, unreadable, bad)
    assert rc == 2, rc
    validate(doc)
    assert doc["inputs"][1]["error"]["code"] == "format"
    assert "no end-of-central-directory record" in doc["inputs"][1]["error"]["message"]
    assert "truncated-1.0-py3-none-any.whl" in err
    # Every broken fixture is read or refused with a message, never a crash.
    for f in sorted(os.listdir(WHEELS)):
        if f.startswith("."):
            continue
        rc, out, err = run("inspect", "--json", os.path.join(WHEELS, f))
        assert rc in (0, 1, 2), (f, rc, err)
        doc = json.loads(out)
        validate(doc)
        if rc == 2:
            assert f in err and "wheelgate: " in err, (f, err)


@test
def stdin_gives_the_same_facts():
    path = os.path.join(WHEELS, "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl")
    with open(path, "rb") as f:
        data = f.read()
    rc, out, err = run("inspect", "--json", "-", stdin=data)
    assert rc == 0, err
    a = json.loads(out)["inputs"][0]
    b = inspect_json(path)[1]["inputs"][0]
    assert a["path"] == "-"
    a["path"] = b["path"]
    # Read from stdin there is no filename to parse; everything else is the same.
    a["wheel"].pop("filename"), b["wheel"].pop("filename")
    assert a == b


@test
def text_output_names_the_abi_surface():
    need_corpus()
    rc, out, err = run("inspect", os.path.join(CW, "wgdemo_oldabi_sm90" + SUF))
    assert rc == 0, err
    assert "string ABI  old  (torch-facing: 0 new, 1 old -> old" in out, out
    assert "U global old  torch _ZN3c106detail14torchCheckFailEPKcS2_jRKSs" in out, out
    assert "module wgdemo_cuda for cpython-312 on x86_64-linux-gnu" in out
    assert "\x1b[" not in out  # no colour when not on a terminal
    rc, out, err = run("inspect", "--members", "--symbols=none",
                       os.path.join(WHEELS, "badrec-1.0-py3-none-any.whl"))
    assert rc == 1
    assert "bad-hash" in out and "bad-size" in out and "missing" in out
    assert "[integrity]" in out and "4 problems:" in out


@test
def directory_and_usage():
    rc, doc, err = inspect_json(ABI)
    assert rc == 0
    validate(doc)
    assert doc["inputs"][0]["kind"] == "directory" and len(doc["inputs"][0]["objects"]) == 11
    rc, out, err = run("inspect", "--help")
    assert rc == 0 and "usage: wheelgate inspect" in out and "exit status" in out
    rc, out, err = run("--help")
    assert rc == 0 and "inspect" in out
    assert run()[0] == 2
    assert run("inspect")[0] == 2
    rc, out, err = run("inspect", "--symbols=some", ABI)
    assert rc == 2 and "--symbols takes all, abi or none" in err
    rc, out, err = run("frobnicate")
    assert rc == 2 and "unknown command 'frobnicate'" in err
    rc, out, err = run("inspect", "/nonexistent/x.whl")
    assert rc == 2 and "/nonexistent/x.whl: No such file or directory" in err
    rc, out, err = run("--version")
    assert rc == 0 and out.startswith("wheelgate ")




if __name__ == "__main__":
    sys.exit(main())

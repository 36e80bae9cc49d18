#!/usr/bin/env python3
"""`wheelgate matrix` (issue 28, points 3 and 4): every cell checked against a real load.

The stand-ins: gen-upgrade.py's torch 2.11.0, 2.11.1 and 2.12.0 (the real 2.11.0's libc10
exports; 2.12.0 drops MaybeSetDevice and changes SetDevice's signature) and flash_attn built
against 2.11.0 and 2.12.0; gen-matrix.py's torch 2.11.0+cu130 (CUDA 13.0), an old-ABI
extension, a CUDA 12 one and one for another CPython. For every (extension, torch) pair both
wheels are unpacked into directories of their own and Debian's python really runs
`import torch; import EXT` with them on sys.path (dlopen with RTLD_NOW of the same files):
the cell's "loads" must be what happens, and the symbol or library a cell names must be in
the real error's text.

Usage: test_matrix.py WHEELGATE FIXTURES PYTHON
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

from harness import Missing, main, test, validate  # noqa: E402

WG, FIX, PY = sys.argv[1:4]
UP = os.path.join(FIX, "upgrade")
MX = os.path.join(FIX, "matrix")
TMP = tempfile.mkdtemp(prefix="wg-matrix-")


def wheels():
    """(extension wheels, torch wheels), sorted by name."""
    exts = sorted(glob.glob(os.path.join(UP, "flash_attn-*.whl")) +
                  glob.glob(os.path.join(MX, "*_ext-*.whl")))
    torches = sorted(glob.glob(os.path.join(UP, "torch-*.whl")) +
                     glob.glob(os.path.join(MX, "torch-*.whl")))
    if len(exts) != 5 or len(torches) != 4:
        raise Missing("the matrix fixtures are not built (%d extensions, %d torches; they "
                      "need ../shared/corpus)" % (len(exts), len(torches)))
    return exts, torches


def matrix(*args, fmt="json", rc=(0, 1)):
    p = subprocess.run([WG, "matrix", "--format", fmt, *args], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode in rc, (p.returncode, p.stderr, p.stdout[-2000:])
    if p.returncode == 2:
        return p.returncode, None, p.stderr
    return p.returncode, (json.loads(p.stdout) if fmt == "json" else p.stdout), p.stderr


def torch_args(paths):
    return [x for t in paths for x in ("--torch", t)]


def unpack(whl):
    """The wheel unpacked as an installer lays it out (a directory for sys.path), once."""
    d = os.path.join(TMP, "unpacked", os.path.basename(whl))
    if not os.path.isdir(d):
        with zipfile.ZipFile(whl) as z:
            z.extractall(d)
    return d


def really(ext, torch):
    """`import torch; import EXT` with both unpacked: (returncode, stderr)."""
    if not os.path.exists(PY):
        raise Missing("no " + PY)
    name = os.path.basename(ext).split("-")[0]
    p = subprocess.run([PY, "-S", "-c", "import sys; sys.path[:0] = [%r, %r]; import torch; "
                        "import %s" % (unpack(ext), unpack(torch), name)],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


def essence(cell):
    return {k: cell[k] for k in ("verdict", "loads", "object", "symbol", "demangled", "missing",
                                 "library", "have", "want", "rules")}


STORE = os.path.join(TMP, "store")


@test
def every_cell_agrees_with_a_real_import():
    exts, torches = wheels()
    rc, doc, _ = matrix("--facts-dir", STORE, *exts, *torch_args(torches))
    assert doc["schema"] == "wheelgate.matrix/1", doc
    assert [e["path"] for e in doc["extensions"]] == exts
    assert [t["source"] for t in doc["torch"]] == torches
    verdicts = set()
    for i, ext in enumerate(exts):
        for j, torch in enumerate(torches):
            cell = doc["cells"][i][j]
            got, err = really(ext, torch)
            where = (os.path.basename(ext), os.path.basename(torch), cell, err[-600:])
            assert cell["loads"] == (got == 0) == (cell["verdict"] == "loads"), where
            verdicts.add(cell["verdict"])
            if cell["verdict"] == "symbol":
                assert cell["symbol"] and "undefined symbol: " + cell["symbol"] in err, where
                assert cell["missing"] >= 1 and cell["demangled"], where
                assert cell["object"] and cell["object"] in err, where
            if cell["verdict"] == "library":
                assert cell["library"] and cell["library"] + ": cannot open" in err, where
            if cell["verdict"] == "abi":
                assert cell["have"] == "old" and cell["want"] == "new", where
                # the old-ABI symbol torch does not export is what the import fails on
                assert cell["symbol"] and "undefined symbol: " + cell["symbol"] in err, where
            if cell["verdict"] == "cuda":
                want = doc["torch"][j]["cuda"].split(".")[0]
                assert cell["want"] == want and cell["have"] != want, where
                assert "libcudart.so.%s: cannot open" % cell["have"] in err, where
            if cell["verdict"] == "python":
                assert cell["want"] == doc["torch"][j]["python"], where
                assert "No module named" in err, where
    # the fixtures reach every kind of cell the stand-ins can show
    assert verdicts == {"loads", "symbol", "library", "abi", "cuda", "python"}, verdicts
    assert rc == 1


@test
def the_2_12_signature_change_is_named():
    exts, torches = wheels()
    fa = [e for e in exts if os.path.basename(e).startswith("flash_attn-2.8.3-")]
    t212 = [t for t in torches if "-2.12.0-" in t]
    _, doc, _ = matrix("--no-store", *fa, *torch_args(t212))
    cell = doc["cells"][0][0]
    # torch's symbol first: the one the real import names; two are missing.
    assert cell["symbol"] == "_ZN3c104cuda14MaybeSetDeviceEa", cell
    assert cell["demangled"] == "c10::cuda::MaybeSetDevice(signed char)", cell
    assert cell["missing"] == 2 and cell["rules"] == ["WG-LD-001"], cell


def make_env(torch):
    """A prefix where the torch wheel is installed as an installer leaves it, with a python."""
    d = os.path.join(TMP, "envs", os.path.basename(torch))
    if os.path.isdir(d):
        return d
    site = os.path.join(d, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    os.makedirs(site)
    with zipfile.ZipFile(torch) as z:
        z.extractall(site)
        di = [n for n in z.namelist() if n.endswith(".dist-info/RECORD")][0]
    with open(os.path.join(site, os.path.dirname(di), "INSTALLER"), "w") as f:
        f.write("pip\n")
    os.makedirs(os.path.join(d, "bin"))
    os.symlink(os.path.realpath(PY), os.path.join(d, "bin", "python%d.%d" % sys.version_info[:2]))
    return d


@test
def torch_given_three_ways_gives_the_same_cells():
    exts, torches = wheels()
    store = os.path.join(TMP, "three")
    _, by_wheel, _ = matrix("--facts-dir", store, *exts, *torch_args(torches))
    shas = [t["sha256"] for t in by_wheel["torch"]]
    assert all(re.fullmatch("[0-9a-f]{64}", s) for s in shas), shas
    _, by_sha, _ = matrix("--facts-dir", store, *exts, *torch_args(shas))
    files = [glob.glob(os.path.join(store, "torch", s[:2], s + ".json.zst"))[0] for s in shas]
    _, by_file, _ = matrix("--no-store", *exts, *torch_args(files))
    _, by_env, _ = matrix("--no-store", *exts, *torch_args([make_env(t) for t in torches]))
    # py_other_ext's python cell: an environment's python is its interpreter's, the same
    for other in (by_sha, by_file, by_env):
        for i in range(len(exts)):
            for j in range(len(torches)):
                a, b = essence(by_wheel["cells"][i][j]), essence(other["cells"][i][j])
                assert a == b, (exts[i], torches[j], a, b)
        for k in ("version", "cxx11abi", "cuda", "python"):
            assert [t[k] for t in other["torch"]] == [t[k] for t in by_wheel["torch"]], k
    assert [t["from"] for t in by_sha["torch"]] == ["facts"] * 4
    assert [t["from"] for t in by_env["torch"]] == ["env"] * 4
    cuda = {t["version"]: t["cuda"] for t in by_wheel["torch"]}
    assert cuda == {"2.11.0": None, "2.11.1": None, "2.12.0": None, "2.11.0+cu130": "13.0"}, cuda


@test
def a_second_run_reads_no_torch_wheel():
    exts, torches = wheels()
    d = os.path.join(TMP, "second")
    os.makedirs(d)
    copies = []
    for t in torches:
        shutil.copy2(t, d)
        copies.append(os.path.join(d, os.path.basename(t)))
    store = os.path.join(TMP, "second-store")
    t0 = time.monotonic()
    _, first, _ = matrix("--facts-dir", store, *exts, *torch_args(copies))
    cold = time.monotonic() - t0
    assert [t["stored"] for t in first["torch"]] == [False] * 4, first["torch"]
    # The wheels' bytes replaced by zeros, their size and mtime kept: a run that read them
    # could not judge anything.
    for c in copies:
        st = os.stat(c)
        with open(c, "r+b") as f:
            f.write(b"\0" * st.st_size)
        os.utime(c, ns=(st.st_atime_ns, st.st_mtime_ns))
    t0 = time.monotonic()
    _, second, _ = matrix("--facts-dir", store, *exts, *torch_args(copies))
    warm = time.monotonic() - t0
    assert [t["stored"] for t in second["torch"]] == [True] * 4, second["torch"]
    assert [[essence(c) for c in r] for r in second["cells"]] == \
        [[essence(c) for c in r] for r in first["cells"]]
    # ... and reading them is what fails without the store (the test can fail)
    rc, _, err = matrix("--no-store", *exts, *torch_args(copies[:1]), rc=(2,))
    assert "--torch" in err, err
    # a wheel changed in place (another mtime) is read again
    st = os.stat(copies[0])
    os.utime(copies[0], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    rc, _, err = matrix("--facts-dir", store, *exts, *torch_args(copies[:1]), rc=(2,))
    print("cold %.3fs, stored %.3fs" % (cold, warm))


@test
def text_is_an_aligned_table_with_notes_and_a_legend():
    exts, torches = wheels()
    rc, out, _ = matrix("--facts-dir", STORE, *exts, *torch_args(torches), fmt="text")
    lines = out.splitlines()
    header, rows = lines[0], lines[1:1 + len(exts)]
    cols = [m.start() for m in re.finditer(r"torch \S+", header)]
    assert len(cols) == len(torches), header
    for row in rows:
        for c in cols:
            # each cell starts where its column does, after two spaces
            assert row[c - 2:c] == "  " and row[c] != " ", (row, c)
    _, doc, _ = matrix("--facts-dir", STORE, *exts, *torch_args(torches))
    notes = [x for x in lines if re.match(r"\[\d+\] ", x)]
    fails = sum(not c["loads"] for r in doc["cells"] for c in r)
    assert len(notes) == fails, notes
    assert any("_ZN3c104cuda14MaybeSetDeviceEa" in n and "and 1 more" in n for n in notes)
    assert any(x.startswith("legend: ") for x in lines)


@test
def markdown_is_one_table():
    exts, torches = wheels()
    _, out, _ = matrix("--facts-dir", STORE, *exts, *torch_args(torches), fmt="markdown")
    lines = out.splitlines()
    assert len(lines) == 2 + len(exts), lines
    for x in lines:
        # cells split on the pipes Markdown reads (escaped ones are text)
        cells = re.split(r"(?<!\\)\|", x)
        assert cells[0] == "" and cells[-1] == "" and len(cells) == len(torches) + 3, x
    assert lines[1] == "|---|" + "---|" * len(torches)
    assert "**symbol**" in out and "**abi**" in out and "**cuda**" in out


@test
def json_fields_are_the_documented_ones():
    exts, torches = wheels()
    _, doc, _ = matrix("--facts-dir", STORE, *exts, *torch_args(torches))
    assert set(doc) == {"schema", "wheelgate_version", "torch", "extensions", "cells", "summary"}
    for t in doc["torch"]:
        assert set(t) == {"label", "source", "from", "sha256", "stored", "version", "cxx11abi",
                          "cuda", "python", "libraries", "error"}, t
        assert t["libraries"] == 3 and t["cxx11abi"] is True, t
    for r in doc["cells"]:
        for c in r:
            assert set(c) == {"verdict", "loads", "object", "symbol", "demangled", "missing",
                              "library", "have", "want", "rules", "message"}, c
    s = doc["summary"]
    assert s["cells"] == len(exts) * len(torches) == s["load"] + s["fail"]
    schema = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "schema",
                          "matrix.schema.json")
    validate(json.dumps(doc), schema, PY)
    # the schema can fail: a cell that says it loads with a rule
    bad = json.loads(json.dumps(doc))
    bad["cells"][0][0].update(verdict="loads", loads=True, rules=["WG-LD-001"])
    try:
        validate(json.dumps(bad), schema, PY)
    except AssertionError:
        pass
    else:
        raise AssertionError("the schema took a loading cell with a rule")
    # the document's field list is docs/matrix.md's
    doc_md = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "matrix.md")).read()
    for k in list(doc) + list(doc["torch"][0]) + list(doc["cells"][0][0]):
        assert "`%s`" % k in doc_md, k


@test
def a_directory_is_its_wheels():
    exts, torches = wheels()
    d = os.path.join(TMP, "dist")
    os.makedirs(d)
    mine = [e for e in exts if "_ext-" in e]
    for e in mine:
        shutil.copy(e, d)
    with open(os.path.join(d, "README"), "w") as f:
        f.write("not a wheel\n")
    _, doc, _ = matrix("--facts-dir", STORE, d, *torch_args(torches[:1]))
    assert [os.path.basename(e["path"]) for e in doc["extensions"]] == \
        sorted(os.path.basename(e) for e in mine), doc["extensions"]
    empty = os.path.join(TMP, "empty")
    os.makedirs(empty)
    rc, _, err = matrix("--facts-dir", STORE, empty, *torch_args(torches[:1]), rc=(2,))
    assert "no wheel" in err, err


@test
def lists_locks_and_urls_are_sources():
    """EXT given as select's sources: a list of file: URLs with pip's #sha256=, a pylock.toml
    with hashes: the same cells as the wheels given by path; a wrong sha256 is refused before
    the wheel is read, naming it; an http(s) URL without a sha256 is not fetched."""
    import hashlib
    exts, torches = wheels()
    _, direct, _ = matrix("--facts-dir", STORE, *exts, *torch_args(torches))
    d = os.path.join(TMP, "sources")
    os.makedirs(d)
    sums = {e: hashlib.sha256(open(e, "rb").read()).hexdigest() for e in exts}
    listed = os.path.join(d, "wheels.txt")
    with open(listed, "w") as f:
        f.write("# the extensions, as URLs\n")
        for e in exts:
            f.write("file://%s#sha256=%s\n" % (os.path.abspath(e), sums[e]))
    rows = ['lock-version = "1.0"', 'created-by = "test_matrix"']
    for e in exts:
        name, version = os.path.basename(e).split("-")[:2]
        rows += ["", "[[packages]]", 'name = "%s"' % name, 'version = "%s"' % version,
                 "wheels = [", '  { path = "%s", hashes = { sha256 = "%s" } },' % (os.path.abspath(e), sums[e]),
                 "]"]
    lock = os.path.join(d, "pylock.toml")
    open(lock, "w").write("\n".join(rows) + "\n")
    want = sorted(json.dumps([essence(c) for c in row]) for row in direct["cells"])
    for source in (listed, lock):
        _, doc, _ = matrix("--facts-dir", STORE, source, *torch_args(torches))
        got = sorted(json.dumps([essence(c) for c in row]) for row in doc["cells"])
        assert got == want, (source, got, want)
    bad = os.path.join(d, "bad.txt")
    with open(bad, "w") as f:
        f.write("file://%s#sha256=%s\n" % (os.path.abspath(exts[0]), "0" * 64))
    rc, _, err = matrix("--facts-dir", STORE, bad, *torch_args(torches[:1]), rc=(2,))
    assert "sha256" in err and os.path.basename(exts[0]) in err, err
    rc, _, err = matrix("--facts-dir", STORE, "http://127.0.0.1:9/x-1.0-py3-none-any.whl",
                        *torch_args(torches[:1]), rc=(2,))
    assert "no sha256: not fetched" in err, err


@test
def text_from_wheels_is_escaped():
    exts, torches = wheels()
    d = os.path.join(TMP, "evil")
    os.makedirs(d)
    src = [e for e in exts if "oldabi_ext-" in e][0]
    evil = os.path.join(d, os.path.basename(src))
    # the extension module's member renamed (a UTF-8 name: U+202E reverses what follows on a
    # terminal): the cells' notes name it
    bad = "oldabi_ext_C\u202e|x."
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(evil, "w") as out:
        for n in z.namelist():
            out.writestr(n.replace("oldabi_ext_C.", bad), z.read(n))
    for fmt in ("text", "markdown"):
        rc, out, _ = matrix("--facts-dir", STORE, evil, *torch_args(torches[:1]), fmt=fmt)
        assert "\u202e" not in out, out
        if fmt == "text":
            assert "oldabi_ext_c\\u202e|x." in out.lower(), out
        else:  # the escape's backslash and the pipe escaped for Markdown
            assert re.search(r"\\\\u202e\\\|x", out.lower()), out
    _, doc, _ = matrix("--facts-dir", STORE, evil, *torch_args(torches[:1]))
    # JSON keeps the text exact (JSON escapes it)
    assert doc["cells"][0][0]["object"].startswith(bad), doc["cells"]


@test
def exit_status():
    exts, torches = wheels()
    fa = [e for e in exts if os.path.basename(e).startswith("flash_attn-2.8.3-")]
    t211 = [t for t in torches if "-2.11." in t]
    rc, _, _ = matrix("--facts-dir", STORE, *fa, *torch_args(t211), rc=(0,))
    rc, _, err = matrix(*fa, rc=(2,))
    assert "--torch" in err
    rc, _, err = matrix("--torch", t211[0], rc=(2,))
    rc, _, err = matrix("--format", "yaml", *fa, *torch_args(t211), rc=(2,))
    rc, _, err = matrix("--no-store", *fa, "--torch", os.path.join(TMP, "nothing-here"), rc=(2,))
    p = subprocess.run([WG, "matrix", "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "--torch" in p.stdout and "exit status" in p.stdout


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(TMP, ignore_errors=True)

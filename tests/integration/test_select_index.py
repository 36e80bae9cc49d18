#!/usr/bin/env python3
"""`wheelgate select` over a simple index (issue 28): the project page of a real pypiserver
(../shared/tools/pypiserver, loopback) as a SOURCE gives the same choice as the directory of
the same wheels, every file fetched by its URL and verified by the page's #sha256=; a page
that is not there is exit 2 naming it; `--version V` keeps only the candidates == V (PEP 440:
1.0 matches every 1.0+LABEL, a label given matches only itself, 1.0.0 is 1.0), and a version
no candidate has is exit 2 naming those there.

Usage: test_select_index.py WHEELGATE FIXTURES
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

from harness import main, need_path, test  # noqa: E402
from serve_util import PYPISERVER, PyPIServer  # noqa: E402

WG, FIX = [os.path.abspath(a) for a in sys.argv[1:3]]
V = os.path.join(FIX, "variants")
WHEELS = os.path.join(V, "wheels")
ENV = os.path.join(V, "env211")
HERE = os.path.dirname(os.path.abspath(__file__))
SYSENV = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
TMP = tempfile.mkdtemp(prefix="wg-select-index-")
STATE = {}


def select(*args):
    p = subprocess.run([WG, "select", "--no-store", "--format", "json", "--env", ENV, *args],
                       capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def pypi():
    if "pypi" not in STATE:
        need_path(PYPISERVER, "pypiserver (../shared/tools/pypiserver)")
        d = os.path.join(TMP, "index")
        shutil.copytree(WHEELS, d)
        STATE["server"] = PyPIServer(d)
        STATE["pypi"] = STATE["server"].url("/simple/")
    return STATE["pypi"]


def by_file(doc):
    return {c["file"]: c for c in doc["candidates"]}


@test
def an_index_page_chooses_as_the_directory_does():
    page = pypi() + "flashy/"
    rc_d, out_d, err_d = select(WHEELS)
    rc_i, out_i, err_i = select(page)
    assert rc_d == 0 and rc_i == 0, (rc_d, err_d, rc_i, err_i)
    d, i = json.loads(out_d), json.loads(out_i)
    assert len(d["candidates"]) == len(os.listdir(WHEELS)) == len(i["candidates"]), (d, i)
    # the same verdicts, file by file, and the same choice (by its file name)
    assert {f: c["verdict"] for f, c in by_file(d).items()} == \
        {f: c["verdict"] for f, c in by_file(i).items()}
    chosen = urllib.parse.unquote(i["chosen"].rsplit("/", 1)[1])
    assert chosen == os.path.basename(d["chosen"]), (i["chosen"], d["chosen"])
    assert i["chosen"].startswith(pypi().replace("/simple/", "/")), i["chosen"]
    for c in i["candidates"]:
        assert c["source"] == page and c["error"] is None, c
        # verified by the page's hash: the sha256 the bytes have is the file's
        assert c["sha256"] == by_file(d)[c["file"]]["sha256"], c


@test
def matrix_over_an_index_page_gives_the_directory_s_cells():
    """wheelgate matrix reads select's sources: the project page's wheels (fetched, verified
    by the page's sha256) give, wheel by wheel, the cells the directory's give."""
    import glob
    page = pypi() + "flashy/"
    torches = [x for t in sorted(glob.glob(os.path.join(FIX, "upgrade", "torch-2.1[12].0-*.whl")))
               for x in ("--torch", t)]
    assert len(torches) == 4, torches

    def cells(src):
        p = subprocess.run([WG, "matrix", "--no-store", "--format", "json", src, *torches],
                           capture_output=True, timeout=300)
        assert p.returncode in (0, 1), (src, p.returncode, p.stderr.decode()[-2000:])
        doc = json.loads(p.stdout)
        names = [urllib.parse.unquote(e["path"].rsplit("/", 1)[1]) for e in doc["extensions"]]
        return {n: [(c["verdict"], c["symbol"], c["library"]) for c in row]
                for n, row in zip(names, doc["cells"])}
    d, i = cells(WHEELS), cells(page)
    assert len(d) == len(os.listdir(WHEELS)) and d == i, (d, i)
    # the cells tell variants apart: not every wheel loads with every torch
    assert len({str(v) for v in d.values()}) > 1, d


@test
def a_page_that_is_not_there_is_exit_2():
    page = pypi() + "nosuchproject/"
    rc, out, err = select(page)
    assert rc == 2 and out == "" and "nosuchproject" in err and "404" in err, (rc, out, err)


@test
def version_keeps_the_candidates_of_that_version():
    page = pypi() + "flashy/"
    files = os.listdir(WHEELS)
    ver = lambda f: f.split("-")[1]
    for want, match in (("1.0", lambda v: v.split("+")[0] == "1.0"),
                        ("1.0.0", lambda v: v.split("+")[0] == "1.0"),
                        ("1.2", lambda v: v.split("+")[0] == "1.2"),
                        ("1.0+cu13torch2.12cxx11abiTRUE", lambda v: v == "1.0+cu13torch2.12cxx11abiTRUE"),
                        ("1.0+CU13TORCH2-12CXX11ABITRUE", lambda v: v == "1.0+cu13torch2.12cxx11abiTRUE")):
        expect = sorted(f for f in files if match(ver(f)))
        assert expect, want
        for src in (WHEELS, page):
            rc, out, err = select("--version", want, src)
            assert rc in (0, 1), (want, rc, err)
            got = sorted(c["file"] for c in json.loads(out)["candidates"])
            assert got == expect, (want, src, got, expect)
    # 1.0 over the page: a variant of 1.0 is chosen (not the newer 1.3 liar or 1.2)
    rc, out, err = select("--version", "1.0", page)
    doc = json.loads(out)
    assert rc == 0 and ("/flashy-1.0%2B" in doc["chosen"] or "/flashy-1.0+" in doc["chosen"]), doc["chosen"]
    rc, out, err = select("--version", "9.9", page)
    assert rc == 2 and out == "" and "--version 9.9: no candidate of flashy" in err, (rc, err)
    assert "1.0+cu13torch2.11cxx11abiTRUE" in err, err
    rc, out, err = select("--version", "not a version", WHEELS)
    assert rc == 2 and "is not a PEP 440 version" in err, (rc, err)


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        if "server" in STATE:
            STATE["server"].stop()
        shutil.rmtree(TMP, ignore_errors=True)

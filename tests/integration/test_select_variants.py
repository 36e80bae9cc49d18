#!/usr/bin/env python3
"""`wheelgate select` over the variants of one release (issue 28, points 1 and 4): the wheels
gen-variants.py builds (flashy: torch 2.11.0/2.11.1/2.12.0 stand-ins, both C++ ABIs, cudart 12
and 13, sm_80/sm_90/PTX, cp311/cp312, one whose label lies) and its two environments.

The expected choice is derived here from what each variant really is (variants.json, written
by the generator from how it built each one), never from select's output; the choice is then
checked against a real `import torch, flashy` with the stand-in torch, and the rejected ones
against the same import failing for the reason select gave.

Usage: test_select_variants.py WHEELGATE FIXTURES REPO_ROOT [PYTHON_WITH_JSONSCHEMA]
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

from harness import main, test, validate  # noqa: E402

WG, FIX, ROOT = [os.path.abspath(a) for a in sys.argv[1:4]]
SYS_PY = sys.argv[4] if len(sys.argv) > 4 else ""
V = os.path.join(FIX, "variants")
WHEELS = os.path.join(V, "wheels")
VARIANTS = json.load(open(os.path.join(V, "variants.json")))
ENV = {"2.11": os.path.join(V, "env211"), "2.12": os.path.join(V, "env212")}
SCHEMA = os.path.join(ROOT, "docs", "schema", "select.schema.json")
TMP = tempfile.mkdtemp(prefix="wg-select-")
ARCH = {"H100": "sm90", "A100": "sm80"}
PY_MINOR = [n for n in os.listdir(os.path.join(ENV["2.11"], "bin")) if n.startswith("python3.")][0]


def select(*args, store=None):
    """(exit status, stdout, stderr); every run gets a store of its own unless one is given."""
    store = store or tempfile.mkdtemp(dir=TMP)
    opt = [] if "--no-store" in args else ["--facts-dir", store]
    p = subprocess.run([WG, "select", *opt, *args], capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def select_json(*args, store=None):
    rc, out, err = select("--format", "json", *args, store=store)
    assert rc in (0, 1), (rc, err)
    return rc, json.loads(out), err


def works(v, torch, python, gpu=None):
    """Whether variant v loads and runs for the target, from how it was built."""
    kern_ok = gpu is None or v["kernels"] in ("multi", "ptx80", ARCH[gpu])
    return (v["python"] == python and v["torch"][:4] == torch and v["cxx11abi"] == 1 and
            v["cuda"] == 13 and kern_ok)


def expected(torch, python, gpu=None, among=None):
    """The variant select must choose: of those that work, the newest, then the smallest
    (the tags of every variant for one python are the same), then the file name."""
    ok = [v for v in VARIANTS if works(v, torch, python, gpu) and (among is None or v["file"] in among)]
    key = lambda v: (tuple(-int(x) for x in v["version"].split(".")), v["size"], v["file"])
    return sorted(ok, key=key)[0]["file"] if ok else None


def installed(w):
    """The wheel unpacked as an installer lays it out (purelib: the site directory)."""
    d = tempfile.mkdtemp(dir=TMP)
    with zipfile.ZipFile(os.path.join(WHEELS, w)) as z:
        z.extractall(d)
    return d


def real_import(torch, w):
    """`import torch, flashy` with the environment's stand-in torch and wheel w installed:
    (exit status, stderr)."""
    env = ENV[torch]
    site = os.path.join(env, "lib", PY_MINOR, "site-packages")
    py = os.path.join(env, "bin", PY_MINOR)
    p = subprocess.run([py, "-S", "-c", "import sys; sys.path[:0] = [%r, %r]; import torch, flashy"
                        % (installed(w), site)], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stderr


def liar():
    return [v["file"] for v in VARIANTS if v["liar"]][0]


@test
def fixture_has_the_variety_asked_for():
    """At least 12 variants of one project across what the issue names."""
    assert len(VARIANTS) >= 12 and {v["file"].split("-")[0] for v in VARIANTS} == {"flashy"}
    for key, values in (("torch", {"2.11.0", "2.11.1", "2.12.0"}), ("cxx11abi", {0, 1}),
                        ("cuda", {12, 13}), ("kernels", {"multi", "sm80", "sm90", "ptx80"})):
        assert {v[key] for v in VARIANTS} == values, key
    assert len({v["python"] for v in VARIANTS}) == 2
    # the liar: the newest version, labelled cxx11abiTRUE, built with the old ABI
    lie = [v for v in VARIANTS if v["liar"]]
    assert len(lie) == 1 and "cxx11abiTRUE" in lie[0]["label"] and lie[0]["cxx11abi"] == 0
    assert lie[0]["version"] == max(v["version"] for v in VARIANTS)


CASES = [
    # (torch env, extra args, gpu)
    ("2.11", [], None),
    ("2.12", [], None),
    ("2.11", ["--gpu", "H100"], "H100"),
    ("2.11", ["--gpu", "A100"], "A100"),
    ("2.12", ["--gpu", "H100"], "H100"),
]


@test
def picks_the_variant_that_works():
    """For each target the one derived from the build facts; never the liar; the choice
    imports for real with the stand-in torch."""
    py = "3.%s" % PY_MINOR.split(".")[1]
    for torch, extra, gpu in CASES:
        want = expected(torch, py, gpu)
        rc, out, err = select("--env", ENV[torch], *extra, WHEELS)
        assert want and rc == 0, (torch, extra, rc, err)
        assert out == os.path.join(WHEELS, want) + "\n", (torch, extra, out, want, err)
        assert liar() not in out
        # the table on stderr: every candidate once, the chosen one marked
        assert err.count(".whl") >= len(VARIANTS) and re.search(r"chosen +" + re.escape(want), err), err
        rc, e = real_import(torch, want)
        assert rc == 0, (want, e)


@test
def python_312_target():
    """--target python=3.12 over --env's 3.11: the cp312 variant built for 2.11 (the import
    cannot be run: the interpreter here is another)."""
    other = "3.%d" % (int(PY_MINOR.split(".")[1]) + 1)
    want = expected("2.11", other)
    rc, doc, err = select_json("--env", ENV["2.11"], "--target", "python=" + other, WHEELS)
    assert rc == 0 and doc["chosen"] == os.path.join(WHEELS, want), (doc["chosen"], want)
    assert doc["target"]["python"] == other
    own = [c for c in doc["candidates"] if ("cp3%s" % PY_MINOR.split(".")[1]) in c["file"]]
    assert own and all(c["verdict"] == "rejected" and not c["tags_supported"] and
                       any("Python tag" in r for r in c["reasons"]) for c in own), own


REASONS = [
    # (what the variant is, the reason select must give, what the real import says)
    (lambda v: v["cxx11abi"] == 0 and v["torch"][:4] == "2.11", "wrong C++ ABI",
     "undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs"),
    (lambda v: v["cuda"] == 12 and v["cxx11abi"] == 1 and v["torch"][:4] == "2.11", "CUDA major",
     "libcudart.so.12: cannot open shared object file"),
    (lambda v: v["torch"][:4] == "2.12" and v["cxx11abi"] == 1 and v["cuda"] == 13,
     "torch symbol missing", "undefined symbol: _ZN3c104cuda9SetDeviceEib"),
]


@test
def rejected_ones_fail_for_the_reason_given():
    """On the 2.11.0 environment: each rejected variant of this python has the reason its
    build predicts, and its real import fails with what that reason says; the liar is
    rejected for its ABI whatever its label says."""
    py = "3.%s" % PY_MINOR.split(".")[1]
    rc, doc, err = select_json("--env", ENV["2.11"], "--gpu", "H100", WHEELS)
    by_file = {c["file"]: c for c in doc["candidates"]}
    checked = 0
    for pred, reason, failure in REASONS:
        for v in VARIANTS:
            if v["python"] != py or not pred(v):
                continue
            c = by_file[v["file"]]
            assert c["verdict"] == "rejected" and any(r.startswith(reason) for r in c["reasons"]), c
            rc, e = real_import("2.11", v["file"])
            assert rc != 0 and failure in e, (v["file"], e)
            checked += 1
    assert checked >= 4, checked
    c = by_file[liar()]
    assert c["verdict"] == "rejected" and any(r.startswith("wrong C++ ABI") for r in c["reasons"])
    # GPU code: sm_80 only cannot run on H100 (no real GPU here: the reason alone)
    sm80 = [v["file"] for v in VARIANTS if v["kernels"] == "sm80"][0]
    assert any(r.startswith("no kernel image for sm_90") for r in by_file[sm80]["reasons"]), \
        by_file[sm80]
    # the working ones really import
    for c in doc["candidates"]:
        if c["verdict"] in ("chosen", "works"):
            assert real_import("2.11", c["file"])[0] == 0, c["file"]


@test
def none_works_exit_1_with_the_closest():
    """2.12.0 and an A100 over variants none of which fits: exit 1, nothing on stdout, at most
    three closest candidates, each with what it lacks."""
    pick = [v["file"] for v in VARIANTS if v["kernels"] == "sm90" or v["cuda"] == 12 or v["liar"]]
    assert expected("2.12", "3.%s" % PY_MINOR.split(".")[1], "A100", among=pick) is None
    rc, out, err = select("--env", ENV["2.12"], "--gpu", "A100", *[os.path.join(WHEELS, w) for w in pick])
    assert rc == 1 and out == "", (rc, out, err)
    assert "no candidate would work here; the closest" in err, err
    listed = re.findall(r"^  rejected (\S+)", err, re.M)
    assert 1 <= len(listed) <= 3 and all(w in pick for w in listed), err
    rc, doc, _ = select_json("--env", ENV["2.12"], "--gpu", "A100", *[os.path.join(WHEELS, w) for w in pick])
    assert rc == 1 and doc["chosen"] is None and doc["exit"] == 1
    errs = [c["errors"] + (not c["tags_supported"]) for c in doc["candidates"]]
    assert errs == sorted(errs) and all(c["reasons"] for c in doc["candidates"]), doc


@test
def usage_errors_exit_2():
    other = os.path.join(FIX, "upgrade", "other-1.0-py3-none-any.whl")
    two = tempfile.mkdtemp(dir=TMP)
    shutil.copy(other, two)
    shutil.copy(os.path.join(WHEELS, VARIANTS[0]["file"]), two)
    for args, says in ((["--env", ENV["2.11"]], "no SOURCE"),
                       (["--env", ENV["2.11"], "--format", "sarif", WHEELS], "--format"),
                       (["--env", ENV["2.11"], two], "several projects"),
                       (["--env", ENV["2.11"], "--project", "nope", WHEELS], "no candidate of it"),
                       (["--env", ENV["2.11"], "--bogus", WHEELS], "unknown"),
                       (["--env", ENV["2.11"], os.path.join(TMP, "missing")], "No such file"),
                       (["--env", ENV["2.11"], "--profile", "publish", WHEELS], "install only"),
                       # a simple index page is read now (test_select_index.py): one that
                       # cannot be reached is exit 2 naming it
                       (["--env", ENV["2.11"], "https://127.0.0.1:9/simple/flashy/"],
                        "https://127.0.0.1:9/simple/flashy/: Failed to connect")):
        rc, out, err = select(*args)
        assert rc == 2 and out == "" and says in err, (args, rc, err)
    # --project picks one (PEP 503: Flashy_ is flashy)
    rc, out, err = select("--env", ENV["2.11"], "--project", "FLASHY", two)
    assert rc == 0 and out.strip().endswith(VARIANTS[0]["file"]), err


@test
def list_file_with_file_urls():
    """A list of file: URLs (comments, blank lines); pip's #sha256= verifies; a wrong one is
    that candidate's error, not a choice."""
    d = tempfile.mkdtemp(dir=TMP)
    lst = os.path.join(d, "wheels.txt")
    want = expected("2.11", "3.%s" % PY_MINOR.split(".")[1])
    rows = ["# the release", ""]
    for v in VARIANTS:
        path = os.path.join(WHEELS, v["file"])
        url = "file://" + path.replace("+", "%2B")
        if v["file"] == want:
            digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
            rows.append(url + "#sha256=" + digest)
        elif v["kernels"] == "ptx80":
            rows.append(url + "#sha256=" + "0" * 64)  # lies about its bytes
        else:
            rows.append(url)
    open(lst, "w").write("\n".join(rows) + "\n")
    rc, doc, err = select_json("--env", ENV["2.11"], lst)
    assert rc == 0 and doc["chosen"] == "file://" + os.path.join(WHEELS, want).replace("+", "%2B"), \
        (doc["chosen"], err)
    bad = [c for c in doc["candidates"] if "ptx80" in c["file"]][0]
    assert bad["verdict"] == "error" and "sha256 mismatch" in bad["error"], bad
    validate(json.dumps(doc), SCHEMA, SYS_PY)


@test
def http_urls_fetched_once():
    """A list of http URLs with #sha256= (a local server counting its GETs): fetched and
    verified on the first run; the second run, the store filled, fetches nothing. A URL with no
    sha256 is not fetched without --allow-unhashed."""
    import functools
    import http.server
    import threading
    gets = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            gets.append(self.path)
            return super().do_GET()

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                          functools.partial(Handler, directory=WHEELS))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        base = "http://127.0.0.1:%d/" % srv.server_address[1]
        d = tempfile.mkdtemp(dir=TMP)
        lst = os.path.join(d, "urls.txt")
        want = expected("2.11", "3.%s" % PY_MINOR.split(".")[1], "A100")
        rows, unhashed = [], None
        for v in VARIANTS:
            url = base + v["file"].replace("+", "%2B")
            if v["kernels"] == "ptx80":
                unhashed = url
                rows.append(url)
                continue
            digest = hashlib.sha256(open(os.path.join(WHEELS, v["file"]), "rb").read()).hexdigest()
            rows.append(url + "#sha256=" + digest)
        open(lst, "w").write("\n".join(rows) + "\n")
        store = tempfile.mkdtemp(dir=TMP)
        rc, doc, err = select_json("--env", ENV["2.11"], "--gpu", "A100", lst, store=store)
        assert rc == 0 and doc["chosen"] == base + want.replace("+", "%2B"), (doc["chosen"], err)
        # fetched: the hashed ones the target's python can install; a wheel for another
        # python is rejected by its name, not fetched (the issue: only the bytes needed)
        tag = "-cp3%s-" % PY_MINOR.split(".")[1]
        fits = [v["file"] for v in VARIANTS if tag in v["file"] and v["kernels"] != "ptx80"]
        other = [v["file"] for v in VARIANTS if tag not in v["file"]]
        assert other and sorted(g.lstrip("/").replace("%2B", "+") for g in gets) == sorted(fits), \
            (gets, fits)
        for c in doc["candidates"]:
            if c["file"] in other:
                assert c["verdict"] == "rejected" and any("not fetched" in r for r in
                                                          c["reasons"]), c
        c = [c for c in doc["candidates"] if c["location"] == unhashed][0]
        assert c["verdict"] == "error" and "no sha256" in c["error"], c
        del gets[:]
        rc, warm, err = select_json("--env", ENV["2.11"], "--gpu", "A100", lst, store=store)
        assert rc == 0 and warm["chosen"] == doc["chosen"] and gets == [], gets
        assert warm["summary"]["from_store"] == len(fits), warm["summary"]
        rc, doc, err = select_json("--allow-unhashed", "--env", ENV["2.11"], "--gpu", "A100", lst,
                                   store=store)
        assert rc == 0 and len(gets) == 1 and gets[0].endswith("ptx80-cp311-cp311-linux_x86_64.whl"
                                                               .replace("cp311", "cp3" + PY_MINOR.split(".")[1])), gets
    finally:
        srv.shutdown()


def lock_file(d, files):
    rows = ['lock-version = "1.0"', 'created-by = "test_select_variants"', "",
            "[[packages]]", 'name = "flashy"', 'version = "1.0"', "wheels = ["]
    for f in files:
        digest = hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()
        rows.append('  { path = "%s", hashes = { sha256 = "%s" } },' % (f, digest))
    rows += ["]", ""]
    path = os.path.join(d, "pylock.toml")
    open(path, "w").write("\n".join(rows))
    return path


@test
def lock_source_and_the_store():
    """A pylock.toml: every wheel of the package is a candidate. The second run takes every
    candidate's facts from the store by the lock's sha256: the wheels may then be gone."""
    d = tempfile.mkdtemp(dir=TMP)
    for v in VARIANTS:
        shutil.copy(os.path.join(WHEELS, v["file"]), d)
    lock = lock_file(d, [v["file"] for v in VARIANTS])
    store = tempfile.mkdtemp(dir=TMP)
    want = expected("2.11", "3.%s" % PY_MINOR.split(".")[1], "H100")
    t0 = time.monotonic()
    rc, cold, err = select_json("--env", ENV["2.11"], "--gpu", "H100", lock, store=store)
    t_cold = time.monotonic() - t0
    assert rc == 0 and cold["chosen"] == os.path.join(d, want), (cold["chosen"], want, err)
    assert not any(c["from_store"] for c in cold["candidates"])
    assert cold["summary"]["read"] == len(VARIANTS)
    for v in VARIANTS:
        os.unlink(os.path.join(d, v["file"]))
    t0 = time.monotonic()
    rc, warm, err = select_json("--env", ENV["2.11"], "--gpu", "H100", lock, store=store)
    t_warm = time.monotonic() - t0
    assert rc == 0 and warm["chosen"] == cold["chosen"], err
    assert all(c["from_store"] for c in warm["candidates"]) and warm["summary"]["read"] == 0
    assert [c["file"] for c in warm["candidates"]] == [c["file"] for c in cold["candidates"]]
    print("  lock of %d: cold %.3f s, from the store %.3f s (wheels deleted)" %
          (len(VARIANTS), t_cold, t_warm))
    # a lock whose sha256 differs from the file: an error for that candidate, not read
    d2 = tempfile.mkdtemp(dir=TMP)
    shutil.copy(os.path.join(WHEELS, want), d2)
    lock2 = lock_file(d2, [want])
    with open(os.path.join(d2, want), "ab") as f:
        f.write(b"\0")
    rc, doc, err = select_json("--env", ENV["2.11"], lock2)
    assert rc == 1 and "sha256 mismatch" in doc["candidates"][0]["error"] and \
        "size" not in doc["candidates"][0]["error"], doc


@test
def a_directory_second_run_reads_no_wheel():
    """A directory: the second run hashes each file but reads (unzips, parses) none."""
    store = tempfile.mkdtemp(dir=TMP)
    rc, cold, _ = select_json("--env", ENV["2.11"], WHEELS, store=store)
    rc2, warm, _ = select_json("--env", ENV["2.11"], WHEELS, store=store)
    assert rc == rc2 == 0 and cold["chosen"] == warm["chosen"]
    assert cold["summary"]["read"] == len(VARIANTS) and cold["summary"]["from_store"] == 0
    assert warm["summary"]["read"] == 0 and warm["summary"]["from_store"] == len(VARIANTS)
    # --no-store: read every time
    rc, out, err = select("--no-store", "--env", ENV["2.11"], WHEELS)
    assert rc == 0 and out.strip() == cold["chosen"] and "0 from the store, %d read" % len(VARIANTS) in err, err


@test
def json_document_matches_the_docs():
    """The document validates against docs/schema/select.schema.json, and docs/select.md names
    every field it has."""
    rc, doc, _ = select_json("--env", ENV["2.11"], "--gpu", "H100", WHEELS)
    validate(json.dumps(doc), SCHEMA, SYS_PY)
    text = open(os.path.join(ROOT, "docs", "select.md")).read()
    keys = set(doc) | set(doc["target"]) | set(doc["summary"])
    for c in doc["candidates"]:
        keys |= set(c)
        for f in c["findings"]:
            keys |= set(f)
    for na in doc["not_applied"]:
        keys |= set(na)
    missing = sorted(k for k in keys if "`%s`" % k not in text)
    assert not missing, missing
    assert doc["format"] == "wheelgate.select/1"
    ranks = [c["rank"] for c in doc["candidates"] if c["rank"] is not None]
    assert ranks == list(range(1, len(ranks) + 1))


@test
def what_is_not_judged_is_said():
    """--env gives the torch: nothing but the GPU rules is left unjudged (no --gpu). Without
    --env, facts declared with --target: the loader rules are named as not judged, and the
    2.12 build (its torch symbols unchecked) may work; with no torch fact at all the ABI is not
    judged either and the liar's label contradiction is shown under it."""
    rc, doc, err = select_json("--env", ENV["2.11"], WHEELS)
    assert {n["rule"] for n in doc["not_applied"]} == {"WG-GPU-002", "WG-GPU-003"}, doc["not_applied"]
    py = "3.%s" % PY_MINOR.split(".")[1]
    rc, doc, err = select_json("--target", "python=%s,torch=2.11.0,cxx11abi=1,cuda=13.0" % py,
                               WHEELS)
    na = {n["rule"]: n for n in doc["not_applied"]}
    assert "WG-LD-001" in na and "env" in na["WG-LD-001"]["lacks"] and "WG-ABI-001" not in na, na
    lie = [c for c in doc["candidates"] if c["file"] == liar()][0]
    assert lie["verdict"] == "rejected", lie  # the ABI is judged from cxx11abi=1
    rc, out, err = select("--target", "python=" + py, WHEELS)
    assert "not judged, for lack of a fact: " in err and "WG-ABI-001" in err, err
    # each reason once, naming every rule it leaves out (issue 29: said once)
    line = [l for l in err.splitlines() if "not judged, for lack of a fact: " in l][0]
    reasons = re.findall(r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)(?:; |$)", line)
    assert reasons and len(reasons) == len(set(reasons)), line
    assert re.search(r"WG-LD-001, WG-LD-002, [^;]*WG-LD-005", line), line
    if liar() in out:
        assert "WG-LABEL-001" in err.split(liar())[1].split("\n  ")[1], err


@test
def escapes_text_from_wheel_names():
    """A wheel named with an escape sequence: the table shows it escaped."""
    d = tempfile.mkdtemp(dir=TMP)
    w = VARIANTS[0]["file"]
    bad = w.replace("flashy-1.0+", "flashy-1.0+x\x1b]0;owned\x07")
    shutil.copy(os.path.join(WHEELS, w), os.path.join(d, bad))
    rc, out, err = select("--env", ENV["2.11"], d)
    assert "\x1b" not in err and "\x07" not in err, repr(err)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`wheelgate check` in CI (docs/ci.md): SARIF as GitHub code scanning reads it (stable
partialFingerprints, help without raw placeholders, helpUri into docs/rules.md, security
severity only on the integrity rules, relative URIs under declared bases, regions with the
line (a member of a wheel as a nested artifact), baselined results kept suppressed, the exit
code) validated
against the SARIF 2.1.0 schema over the whole corpus, and --format github (workflow commands
escaped per GitHub's rules, hostile names included).

Usage: test_sarif.py WHEELGATE FIXTURES CORPUS REPO_ROOT [PYTHON_WITH_JSONSCHEMA]
"""
import base64
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import zipfile

from harness import Missing, main, need_path, test, validate as _validate  # noqa: E402

WG, FIX, CORPUS, ROOT = [os.path.abspath(a) for a in sys.argv[1:5]]
SYS_PY = sys.argv[5] if len(sys.argv) > 5 else ""
W = os.path.join(FIX, "wheels")
CW = os.path.join(CORPUS, "wheels")
SARIF_SCHEMA = os.path.join(ROOT, "tests", "schemas", "sarif-2.1.0.json")
FP = "wheelgate/v1"
SRCROOT = "%SRCROOT%"
FLASH = "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_.]*\}")


def run(*args, cwd=None):
    p = subprocess.run([WG, "check", "--no-config", *args], capture_output=True, timeout=600,
                       cwd=cwd)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def sarif(*args, cwd=None):
    rc, out, err = run("--format", "sarif", *args, cwd=cwd)
    assert rc in (0, 1, 2), (rc, err)
    _validate(out, SARIF_SCHEMA, SYS_PY, "Draft4Validator", required=True)
    return rc, json.loads(out)["runs"][0]


def fingerprints(run0, rule=None):
    return [r["partialFingerprints"][FP] for r in run0["results"]
            if rule is None or r["ruleId"] == rule]


def make_wheel(path, files, record_extra=b""):
    """A wheel with files {name: bytes}, METADATA and WHEEL for its filename, and a RECORD."""
    base = os.path.basename(path).split("-")
    di = base[0] + "-" + base[1] + ".dist-info"
    files = dict(files)
    files.setdefault(di + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
                                        % (base[0], base[1])).encode())
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


def security_rules():
    """The shipped rules whose YAML says `security: true` (the data, rules/default/*.yaml)."""
    ids = set()
    for y in sorted(glob.glob(os.path.join(ROOT, "rules", "default", "*.yaml"))):
        for block in re.split(r"^  - id: ", open(y).read(), flags=re.M)[1:]:
            if re.search(r"^    security: true$", block, re.M):
                ids.add(block.split("\n", 1)[0].strip())
    return ids


def resolve(run0, al):
    """An artifactLocation as a path on this machine (SARIF 2.1.0 3.4.4: its uri resolved
    against its uriBaseId in originalUriBaseIds); a nested artifact as (wheel path, member)."""
    uri = al["uri"]
    assert not re.match(r"[a-z][a-z0-9+.-]*:", uri) and not uri.startswith("/"), al
    assert ".." not in uri.split("/") and "." not in uri.split("/"), al  # 3.10.2
    if "uriBaseId" not in al:
        art = run0["artifacts"][al["index"]]
        assert art["location"]["uri"] == uri and "uriBaseId" not in art["location"], (al, art)
        return resolve(run0, run0["artifacts"][art["parentIndex"]]["location"]), \
            urllib.parse.unquote(uri)
    base = run0["originalUriBaseIds"][al["uriBaseId"]]["uri"]  # declared
    assert base.startswith("file:///") and base.endswith("/"), base
    return urllib.parse.unquote(urllib.parse.urlparse(base).path + uri)


def assert_located(run0, al, what):
    """al names an artifact of run.artifacts by index, and by the same relative uri."""
    assert "uriBaseId" in al or "index" in al, (what, al)
    art = run0["artifacts"][al["index"]]
    assert {k: v for k, v in al.items() if k != "index"} == art["location"], (what, al, art)
    resolve(run0, al)


@test
def the_corpus_sarif_validates_with_fingerprints_and_help_links():
    need_path(CW, "the corpus")
    wheels = sorted(glob.glob(os.path.join(CW, "*.whl")))
    assert len(wheels) >= 6, wheels
    rc, run0 = sarif("--profile", "publish", *wheels)
    assert rc == 1, rc  # the corpus has broken wheels (../shared/corpus/README.md)
    assert run0["invocations"][0]["exitCode"] == rc
    assert run0["invocations"][0]["executionSuccessful"] is True
    results = run0["results"]
    assert len(results) >= 5, len(results)
    fps = fingerprints(run0)
    assert len(fps) == len(results) and len(set(fps)) == len(fps), fps
    assert all(re.fullmatch(r"[0-9a-f]{32}:[0-9]+", f) for f in fps), fps
    base = run0["originalUriBaseIds"][SRCROOT]["uri"]
    assert base.startswith("file:///") and base.endswith("/"), base
    for r in results:
        loc = r["locations"][0]["physicalLocation"]
        # the wheel is the artifact, relative to a declared base (the corpus is outside the
        # working directory: a base of its own), and no region into the .whl's bytes; or a
        # member with a line, nested in the wheel, its region that line
        assert_located(run0, loc["artifactLocation"], r["ruleId"])
        if "region" not in loc:
            assert loc["artifactLocation"]["uri"].endswith(".whl"), r
            continue
        wheel, member = resolve(run0, loc["artifactLocation"])
        line = zipfile.ZipFile(wheel).read(member).decode().splitlines()[
            loc["region"]["startLine"] - 1]
        assert wheel.endswith(".whl") and "import" in line, (r, line)
    rules = run0["tool"]["driver"]["rules"]
    security = security_rules()
    for r in rules:
        assert r["helpUri"].endswith("/rules.md#" + r["id"].lower()), r["helpUri"]
        sev = {"error": "8.0", "warning": "5.0", "note": "2.0"}[r["defaultConfiguration"]["level"]]
        if r["id"] in security:
            assert r["properties"]["security-severity"] == sev, r
            assert r["properties"]["tags"][-1] == "security", r
        else:
            assert "security-severity" not in r["properties"], r
            assert "security" not in r["properties"]["tags"], r
        assert r["properties"]["tags"][:2] == [r["id"].split("-")[1].lower(), r["name"]], r


@test
def fingerprints_are_stable_across_runs_directories_and_messages():
    need_path(W, "the fixtures")
    src = os.path.join(W, FLASH)
    tmp = tempfile.mkdtemp()
    try:
        target = ["--target", "torch=2.11.0+cu130,cxx11abi=1", "--profile", "publish"]
        rc, a = sarif(*target, src)
        rc, b = sarif(*target, src)
        assert fingerprints(a) == fingerprints(b) and fingerprints(a), fingerprints(a)
        # the same wheel in another directory, given by another relative path
        other = os.path.join(tmp, "renamed", "dist")
        os.makedirs(other)
        shutil.copy(src, other)
        rc, c = sarif(*target, os.path.join("dist", FLASH), cwd=os.path.join(tmp, "renamed"))
        assert fingerprints(c) == fingerprints(a), (fingerprints(c), fingerprints(a))
        al = c["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        assert {k: al[k] for k in ("uri", "uriBaseId")} == \
            {"uri": "dist/" + FLASH, "uriBaseId": SRCROOT}, c["results"][0]
        assert c["artifacts"][al["index"]]["location"] == \
            {"uri": "dist/" + FLASH, "uriBaseId": SRCROOT}, c["artifacts"]
        # another target changes WG-CUDA-002's message (it names the target's torch), not the
        # alert
        rc, d = sarif("--target", "torch=2.10.0+cu130,cxx11abi=1", "--profile", "publish", src)
        ma = [r["message"]["text"] for r in a["results"] if r["ruleId"] == "WG-CUDA-002"]
        md = [r["message"]["text"] for r in d["results"] if r["ruleId"] == "WG-CUDA-002"]
        assert ma and md and ma != md, (ma, md)
        assert fingerprints(a, "WG-CUDA-002") == fingerprints(d, "WG-CUDA-002")
        # a new release of the same wheel: the findings of its code are the same alerts
        hollow = os.path.join(W, "hollow-1.0-py3-none-any.whl")
        h2 = os.path.join(tmp, "hollow-1.1-py3-none-any.whl")
        shutil.copy(hollow, h2)
        # (in an environment without flash_attn_2_cuda: both of its imports are missing there)
        rc, e = sarif("--env", "/usr/bin/python3", hollow)
        rc, f = sarif("--env", "/usr/bin/python3", h2)
        assert len(fingerprints(e, "WG-HOL-001")) == 2, e["results"]
        assert fingerprints(e, "WG-HOL-001") == fingerprints(f, "WG-HOL-001")
        # ... and another wheel's finding is another alert
        rc, g = sarif(os.path.join(W, "badrec-1.0-py3-none-any.whl"))
        assert not set(fingerprints(g)) & set(fingerprints(e)), (fingerprints(g), fingerprints(e))
    finally:
        shutil.rmtree(tmp)


@test
def every_rule_help_is_rendered_and_linked():
    need_path(W, "the fixtures")
    rc, run0 = sarif(os.path.join(W, "hollow-1.0-py3-none-any.whl"))
    rules = run0["tool"]["driver"]["rules"]
    shipped = []
    for y in sorted(glob.glob(os.path.join(ROOT, "rules", "default", "*.yaml"))):
        shipped += re.findall(r"^  - id: (\S+)", open(y).read(), re.M)
    assert sorted(r["id"] for r in rules) == sorted(shipped), (len(rules), len(shipped))
    docs = open(os.path.join(ROOT, "docs", "rules.md")).read()
    described = 0
    for r in rules:
        texts = [r["shortDescription"]["text"], r["fullDescription"]["text"],
                 r["help"]["text"], r["help"]["markdown"]]
        for t in texts:
            assert not PLACEHOLDER.search(t), (r["id"], t)
        described += "<" in r["fullDescription"]["text"]
        assert "Fix: " in r["help"]["text"] and r["helpUri"] in r["help"]["markdown"], r
        anchor = r["helpUri"].split("#")[1]
        assert '<a id="%s"></a>' % anchor in docs, "docs/rules.md has no anchor " + anchor
    # a rule of the user's: its help rendered too, no link to a page that does not document it
    tmp = tempfile.mkdtemp()
    try:
        rf = os.path.join(tmp, "acme.yaml")
        with open(rf, "w") as f:
            f.write("kind: rules\nversion: 1\nrules:\n  - id: ACME_NORECORD\n"
                    "    check: record-missing\n    profiles: {install: error, publish: error}\n"
                    "    title: No RECORD in {dist_info}\n"
                    "    message: \"{dist_info} has no RECORD ({{literal}})\"\n"
                    "    fix: Rebuild {dist_info}.\n")
        rc, u = sarif("--rules", rf, os.path.join(W, "norecord-1.0-py3-none-any.whl"))
        acme = [r for r in u["tool"]["driver"]["rules"] if r["id"] == "ACME_NORECORD"]
        assert len(acme) == 1 and "helpUri" not in acme[0], acme
        # '{{' is a literal brace, as the engine renders the finding's message
        assert acme[0]["fullDescription"]["text"] == "<dist_info> has no RECORD ({literal}})", acme
        assert acme[0]["shortDescription"]["text"] == "No RECORD in <dist_info>", acme
        assert acme[0]["properties"]["tags"] == ["record-missing"], acme
        assert "docs/rules.md" not in acme[0]["help"]["markdown"], acme
        found = [r for r in u["results"] if r["ruleId"] == "ACME_NORECORD"]
        assert len(found) == 1 and "norecord-1.0.dist-info has no RECORD ({literal}})" in \
            found[0]["message"]["text"], u["results"]
    finally:
        shutil.rmtree(tmp)
    # most rules' messages have placeholders: they are named (<object>), not dropped
    assert described >= len(rules) // 2, described
    ld3 = [r for r in rules if r["id"] == "WG-LD-003"][0]
    assert "<object> needs <version> from <library>" in ld3["fullDescription"]["text"], ld3


@test
def a_file_on_disk_gets_a_region_a_member_the_message():
    need_path(W, "the fixtures")
    tmp = tempfile.mkdtemp()
    try:
        hollow = os.path.join(W, "hollow-1.0-py3-none-any.whl")
        with zipfile.ZipFile(hollow) as z:
            z.extractall(os.path.join(tmp, "site"))
        # the wheel: the member a nested artifact of it, with the line; the member's file and
        # line in the message too (a viewer may not open the wheel)
        rc, w = sarif("--env", "/usr/bin/python3", hollow, cwd=tmp)
        hol = [r for r in w["results"] if r["ruleId"] == "WG-HOL-001"]
        assert len(hol) == 2, w["results"]
        for r in hol:
            phys = r["locations"][0]["physicalLocation"]
            parent = w["artifacts"][w["artifacts"][phys["artifactLocation"]["index"]]
                                    ["parentIndex"]]
            assert parent["location"]["uri"].endswith(".whl"), parent
            assert phys["artifactLocation"]["uri"].endswith(".py") and phys["region"], phys
        texts = sorted(r["message"]["text"] for r in hol)
        assert texts[0].startswith("hollow/__init__.py:4 ") and \
            texts[1].startswith("hollow/helpers.py:1 "), texts
        # installed (its .dist-info): the Python file on disk, with the line
        rc, d = sarif("--env", "/usr/bin/python3", "site/hollow-1.0.dist-info", cwd=tmp)
        locs = sorted((r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                       r["locations"][0]["physicalLocation"]["region"]["startLine"])
                      for r in d["results"] if r["ruleId"] == "WG-HOL-001")
        assert locs == [("site/hollow/__init__.py", 4), ("site/hollow/helpers.py", 1)], locs
        for uri, line in locs:  # the line is the import it names
            assert "import" in open(os.path.join(tmp, uri)).read().splitlines()[line - 1]
        # a member without a line: named in the message when the message does not name it
        bad = make_wheel(os.path.join(tmp, "memb-1.0-py3-none-any.whl"),
                         {"memb/__init__.py": b"x = 1\n"}, b"memb/gone.py,sha256=AAAA,1\n")
        rc, m = sarif("--profile", "publish", bad, cwd=tmp)
        rec = [r for r in m["results"] if r["ruleId"] == "WG-REC-003"]
        assert rec and all("memb/gone.py" in r["message"]["text"] for r in rec), m["results"]
    finally:
        shutil.rmtree(tmp)


def zipstruct_case(tmp, name):
    """One of bench/hostile_gen.py's zip-structure wheels, made in tmp."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import hostile_gen
    for p in hostile_gen.zipstruct(os.path.join(tmp, "zipstruct")):
        if os.path.basename(p).startswith("zs_%s-" % name):
            return p
    raise AssertionError("no zip-structure case " + name)


@test
def security_severity_only_on_integrity_rules():
    """A rule's `security: true` (its YAML) makes it a security alert, and nothing else: a
    tag that does not match or a hollow import is an error, not a High security alert."""
    need_path(W, "the fixtures")
    security = security_rules()
    # the data says so: RECORD, unsafe names, the zip structure; no correctness rule
    assert {"WG-REC-001", "WG-REC-003", "WG-WHL-001", "WG-WHL-002", "WG-WHL-004"} <= security
    assert not security & {"WG-TAG-001", "WG-TAG-004", "WG-TAG-005", "WG-HOL-001",
                           "WG-ABI-001", "WG-LD-001", "WG-SYS-004"}, security
    tmp = tempfile.mkdtemp()
    try:
        wheels = [os.path.join(W, "purebin-1.0-py3-none-any.whl"),          # WG-TAG-001
                  os.path.join(W, "wrongarch-1.0-cp312-cp312-manylinux_2_28_aarch64.whl"),
                  os.path.join(W, "hollow-1.0-py3-none-any.whl"),           # WG-HOL-001
                  os.path.join(W, "badrec-1.0-py3-none-any.whl"),           # RECORD
                  zipstruct_case(tmp, "symlink_abs"),                        # unsafe name
                  zipstruct_case(tmp, "encrypted")]                          # zip structure
        rc, run0 = sarif("--profile", "publish", "--env", "/usr/bin/python3", *wheels)
        rules = {r["id"]: r for r in run0["tool"]["driver"]["rules"]}
        fired = {}
        for r in run0["results"]:
            fired.setdefault(r["ruleId"], set()).add(r["level"])
        for rid in ("WG-TAG-001", "WG-TAG-004", "WG-HOL-001"):  # correctness, as errors
            assert "error" in fired.get(rid, ()), (rid, fired)
            props = rules[rid]["properties"]
            assert "security-severity" not in props and "security" not in props["tags"], props
        for rid in ("WG-REC-001", "WG-WHL-004", "WG-WHL-002"):  # integrity, as errors: high
            assert "error" in fired.get(rid, ()), (rid, fired)
            props = rules[rid]["properties"]
            assert props["security-severity"] == "8.0" and "security" in props["tags"], props
        # a rule file of the user's decides too: `security: true` on any check kind
        rf = os.path.join(tmp, "acme.yaml")
        with open(rf, "w") as f:
            f.write("kind: rules\nversion: 1\nrules:\n  - id: ACME-SEC-1\n"
                    "    check: record-missing\n    severity: warning\n    security: true\n"
                    "    title: t\n    message: m\n    fix: f\n  - id: ACME-COR-1\n"
                    "    check: record-missing\n    severity: error\n"
                    "    title: t\n    message: m\n    fix: f\n")
        rc, u = sarif("--rules", rf, os.path.join(W, "norecord-1.0-py3-none-any.whl"))
        urules = {r["id"]: r for r in u["tool"]["driver"]["rules"]}
        assert urules["ACME-SEC-1"]["properties"]["security-severity"] == "5.0", urules
        assert "security-severity" not in urules["ACME-COR-1"]["properties"], urules
        with open(rf, "w") as f:
            f.write("kind: rules\nversion: 1\nrules:\n  - id: ACME-SEC-1\n"
                    "    check: record-missing\n    severity: warning\n    security: yes\n"
                    "    title: t\n    message: m\n    fix: f\n")
        rc, out, err = run("--rules", rf, os.path.join(W, "norecord-1.0-py3-none-any.whl"))
        assert rc == 2 and "acme.yaml:7:" in err and "'security' must be true or false" in err, \
            (rc, err)
    finally:
        shutil.rmtree(tmp)


@test
def every_uri_is_relative_to_a_declared_base():
    """%SRCROOT% is the working directory; an input outside it (given absolute, or through
    '..') gets a base of its own directory; every artifactLocation resolves to its file."""
    need_path(W, "the fixtures")
    tmp = tempfile.mkdtemp()
    try:
        work = os.path.join(tmp, "checkout")
        os.makedirs(os.path.join(work, "dist"))
        inside = os.path.join(work, "dist", "badrec-1.0-py3-none-any.whl")
        shutil.copy(os.path.join(W, "badrec-1.0-py3-none-any.whl"), inside)
        os.makedirs(os.path.join(tmp, "elsewhere"))
        up = os.path.join(tmp, "elsewhere", "norecord-1.0-py3-none-any.whl")
        shutil.copy(os.path.join(W, "norecord-1.0-py3-none-any.whl"), up)
        outside = os.path.join(W, "purebin-1.0-py3-none-any.whl")
        gone = os.path.join(tmp, "elsewhere", "gone-1.0-py3-none-any.whl")
        given = ["dist/badrec-1.0-py3-none-any.whl", inside,
                 "../elsewhere/./norecord-1.0-py3-none-any.whl", outside, gone]
        rc, run0 = sarif("--profile", "publish", *given, cwd=work)
        bases = run0["originalUriBaseIds"]
        assert SRCROOT in bases, bases
        assert urllib.parse.unquote(bases[SRCROOT]["uri"]) == "file://" + \
            os.path.realpath(work) + "/", bases
        locs = [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"])
                for r in run0["results"]]
        locs += [("unreadable", n["locations"][0]["physicalLocation"]["artifactLocation"])
                 for n in run0["invocations"][0]["toolExecutionNotifications"]]
        seen = set()
        for what, al in locs:
            assert_located(run0, al, what)
            path = resolve(run0, al)
            seen.add(path)
            assert os.path.exists(path) or path == os.path.realpath(gone), (what, al, path)
        for g in (inside, up, outside):
            assert any(os.path.exists(p) and os.path.samefile(p, g) for p in seen), (g, seen)
        assert os.path.realpath(gone) in seen, seen
        # the inputs inside the working directory are relative to %SRCROOT%; the one given
        # twice is one artifact
        tops = [a["location"] for a in run0["artifacts"] if "parentIndex" not in a]
        assert tops.count({"uri": "dist/badrec-1.0-py3-none-any.whl", "uriBaseId": SRCROOT}) \
            == 1, tops
        assert len({json.dumps(t, sort_keys=True) for t in tops}) == len(tops), tops
        assert set(bases) == {SRCROOT} | {t["uriBaseId"] for t in tops}, (bases, tops)
        assert not any(t["uri"].startswith("file:") for t in tops), tops
    finally:
        shutil.rmtree(tmp)


def import_lines(source, module):
    """The lines of the statements that import module (Python's own parser)."""
    import ast
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name == module for a in node.names):
            lines.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and (node.module == module or any(
                (node.module or "") + "." + a.name == module for a in node.names)):
            lines.append(node.lineno)
    return lines


@test
def a_hollow_import_in_a_wheel_has_its_line():
    need_path(W, "the fixtures")
    hollow = os.path.join(W, "hollow-1.0-py3-none-any.whl")
    rc, run0 = sarif("--env", "/usr/bin/python3", hollow)
    hol = [r for r in run0["results"] if r["ruleId"] == "WG-HOL-001"]
    assert len(hol) == 2, run0["results"]
    z = zipfile.ZipFile(hollow)
    got = set()
    for r in hol:
        phys = r["locations"][0]["physicalLocation"]
        assert "region" in phys and "uriBaseId" not in phys["artifactLocation"], r
        wheel, member = resolve(run0, phys["artifactLocation"])
        assert os.path.samefile(wheel, hollow), (wheel, hollow)
        module = re.search(r"imports (\S+),", r["message"]["text"]).group(1)
        want = import_lines(z.read(member).decode(), module)
        assert len(want) == 1 and phys["region"]["startLine"] == want[0], (r, want)
        got.add((member, module, want[0]))
    assert {(m, mod) for m, mod, _ in got} == {("hollow/__init__.py", "flash_attn_2_cuda"),
                                                ("hollow/helpers.py", "hollow._C")}, got


@test
def a_baselined_finding_is_kept_suppressed():
    need_path(W, "the fixtures")
    tmp = tempfile.mkdtemp()
    try:
        badrec = os.path.join(W, "badrec-1.0-py3-none-any.whl")
        hollow = os.path.join(W, "hollow-1.0-py3-none-any.whl")
        base = os.path.join(tmp, "baseline.json")
        env = ["--env", "/usr/bin/python3", "--profile", "publish"]
        rc, out, err = run(*env, "--write-baseline", base, badrec)
        assert rc == 1 and os.path.exists(base), (rc, err)
        rc0, before = sarif(*env, badrec, hollow)
        rc1, after = sarif(*env, "--baseline", base, badrec, hollow)
        rcj, doc, _ = run(*env, "--baseline", base, "--format", "json", badrec, hollow)
        # the exit status as before: hollow's findings are new and fail; badrec's pass
        assert rc0 == rc1 == rcj == 1, (rc0, rc1, rcj)
        assert after["invocations"][0]["exitCode"] == 1
        known = [r for r in after["results"] if r.get("suppressions")]
        new = [r for r in after["results"] if not r.get("suppressions")]
        summary = json.loads(doc)["summary"]
        assert len(known) == summary["baselined"] and len(known) >= 3, (known, summary)
        assert after["properties"]["suppressed"] == len(known)
        assert all(r["ruleId"] == "WG-HOL-001" for r in new) and len(new) == 2, new
        for r in known:
            assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] \
                .endswith("badrec-1.0-py3-none-any.whl"), r
            (s,) = r["suppressions"]
            assert s["kind"] == "external" and s["status"] == "accepted" and \
                base in s["justification"], s
        # the same results, the same alerts: a baseline changes no fingerprint
        assert sorted(fingerprints(before)) == sorted(fingerprints(after)), \
            (fingerprints(before), fingerprints(after))
        # everything known: the run passes, every result is there, suppressed
        rc2, only = sarif(*env, "--baseline", base, badrec)
        assert rc2 == 0 and only["invocations"][0]["exitCode"] == 0, rc2
        assert len(only["results"]) == len(known) and \
            all(r["suppressions"] for r in only["results"]), only["results"]
        # the other formats leave them out, as before
        rc3, gh, _ = run(*env, "--baseline", base, "--format", "github", badrec)
        assert rc3 == 0 and gh.decode().count("::error") == 0, gh
    finally:
        shutil.rmtree(tmp)


@test
def github_output_ends_with_one_newline():
    need_path(W, "the fixtures")
    for args in (["--env", "/usr/bin/python3", os.path.join(W, "hollow-1.0-py3-none-any.whl")],
                 [os.path.join(W, "base-1.0-py3-none-any.whl")],
                 [os.path.join(W, "nope-1.0-py3-none-any.whl")]):
        rc, out, err = run("--format", "github", *args)
        assert out.endswith(b"\n") and not out.endswith(b"\n\n"), (args, out[-80:])
        assert out.decode().split("\n")[-2].startswith("::notice title=wheelgate::"), out


def gh_unescape(s, prop):
    for a, b in ([("%3A", ":"), ("%2C", ",")] if prop else []) + \
            [("%0D", "\r"), ("%0A", "\n"), ("%25", "%")]:
        s = s.replace(a, b)
    return s


def gh_parse(line):
    """::level prop=v,prop=v::message -> (level, {prop: v}, message), unescaped."""
    m = re.fullmatch(r"::(error|warning|notice)( [^:]*)?::(.*)", line)
    assert m, line
    props = {}
    for kv in (m.group(2) or "").strip().split(","):
        if kv:
            k, v = kv.split("=", 1)
            props[k] = gh_unescape(v, True)
    return m.group(1), props, gh_unescape(m.group(3), False)


@test
def github_annotations_one_line_per_finding_escaped():
    need_path(W, "the fixtures")
    tmp = tempfile.mkdtemp()
    try:
        # a hostile directory name: %, ',', ':', CR and LF, and a terminal escape
        d = os.path.join(tmp, "a%25b,c:d\r\n::error::pwned\x1b[2J")
        os.makedirs(d)
        whl = make_wheel(os.path.join(d, "weird-1.0-py3-none-any.whl"),
                         {"weird/__init__.py": b"x = 1\n"},
                         b'"weird/a%0A,b:c.py",sha256=AAAA,1\n'
                         b'"weird/\n::error::x\r.py",sha256=AAAA,1\n'
                         b"weird/\x1b]0;pwned\x07.py,sha256=AAAA,1\n")
        rc, out, err = run("--format", "github", "--fail-on", "warning", whl)
        assert rc == 1, (rc, err)
        rc2, doc, _ = run("--format", "json", "--fail-on", "warning", whl)
        findings = json.loads(doc)["inputs"][0]["findings"]
        assert b"\x1b" not in out and b"\x07" not in out and b"\r" not in out, out
        lines = out.decode().rstrip("\n").split("\n")
        assert len(lines) == len(findings) + 1 and len(findings) >= 3, (lines, findings)
        for line, f in zip(lines, findings):
            level, props, msg = gh_parse(line)
            assert level == {"error": "error", "warning": "warning", "info": "notice"}[f["severity"]]
            assert props["file"] == whl.replace("\r", "\\x0d").replace("\n", "\\x0a") \
                .replace("\x1b", "\\x1b"), (props["file"], whl)
            assert props["title"].startswith(f["rule"] + " "), props
            assert msg.endswith(" Fix: " + f["fix"]), (msg, f)
        msgs = [gh_parse(x)[2] for x in lines]
        assert any("weird/a%0A,b:c.py" in m for m in msgs), msgs  # '%' survives the escape
        assert any("weird/\\x0a::error::x\\x0d.py" in m for m in msgs), msgs
        level, props, msg = gh_parse(lines[-1])
        assert level == "notice" and props == {"title": "wheelgate"}, lines[-1]
        assert msg.startswith("1 input: 0 passed, 1 failed"), msg
        # an unreadable input is an error annotation on it
        rc, out, err = run("--format", "github", os.path.join(tmp, "nope-1.0-py3-none-any.whl"))
        level, props, msg = gh_parse(out.decode().split("\n")[0])
        assert rc == 2 and level == "error" and props["file"].endswith("nope-1.0-py3-none-any.whl")
        assert props["title"] == "wheelgate: unreadable input", props
    finally:
        shutil.rmtree(tmp)


@test
def github_is_a_format_of_the_cli_and_the_config():
    need_path(W, "the fixtures")
    tmp = tempfile.mkdtemp()
    try:
        hollow = os.path.join(W, "hollow-1.0-py3-none-any.whl")
        with open(os.path.join(tmp, "wheelgate.yaml"), "w") as f:
            f.write("format: github\n")
        p = subprocess.run([WG, "check", "--config", os.path.join(tmp, "wheelgate.yaml"),
                            "--env", "/usr/bin/python3", hollow],
                           capture_output=True, cwd=tmp)
        lines = p.stdout.decode().splitlines()
        assert p.returncode == 1 and len(lines) == 3, (p.returncode, lines, p.stderr)
        assert all(x.startswith("::error file=") for x in lines[:2]), lines
        rc, out, err = run("--format", "gitlab", hollow)
        assert rc == 2 and "text, json, sarif or github" in err, (rc, err)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())

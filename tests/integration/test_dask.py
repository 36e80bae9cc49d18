#!/usr/bin/env python3
"""wheelgate.dask and wheelgate.report (issue 17, points 3 and 4) on a LocalCluster of 2
worker processes over the fixture wheels: every record's verdicts and findings are those of
the binding's check_all() for the same file and target; sha256, size, name, version and tags
are the file's; the same scan through the scheduler's address (the path a real cluster takes)
with the client writing gives the same records; a partition removed is redone by resume=True
and the others are kept. The report built from the records: its Markdown tables count what
the records hold, the HTML page parses (html.parser), has its charts as inline <svg> and
loads nothing from anywhere; hostile text from a record is escaped in both.

Issue 26, point 3: `python3 -m wheelgate.dask --target-set` with two and with three sets over
the whole corpus (../shared/corpus/wheels) gives, for every (wheel, target), the record entry
`wheelgate scan` gives with the same sets (no set's facts leak into another); the report of
two scans of the same wheels (a `wheelgate scan` and a wheelgate.dask run: the docs' example)
keeps every target of both; its charts give fail and error colours of their own, and the
legend covers no bar (SVG geometry: the legend's box against every bar's visible box).

Debian's python3-dask, python3-distributed and python3-matplotlib (scripts/setup.sh --test):
missing, the tests are skipped outside CI and fail in CI.

Usage: test_dask.py LIBWHEELGATE HOOKS_DIR FIXTURES WHEELGATE_CLI CORPUS
"""
import glob
import hashlib
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from harness import Missing, main, test  # noqa: E402

LIB, HOOKS, FIX, CLI, CORPUS = [os.path.abspath(a) for a in sys.argv[1:6]]
W = os.path.join(FIX, "wheels")
TMP = tempfile.mkdtemp(prefix="wg-dask-")
os.environ["WHEELGATE_LIB"] = LIB
os.environ["PYTHONPATH"] = HOOKS + os.pathsep + os.environ.get("PYTHONPATH", "")
sys.path.insert(0, HOOKS)
import wheelgate  # noqa: E402

# Two targets: the default question (publish) and an install for an H100 with CUDA 12.
TARGETS = {"default": {},
           "h100-cu12": {"target": ["cuda=12.4", "python=3.12"], "gpus": ["H100"],
                         "profile": "install"}}
STATE = {}


def need_dask():
    for m in ("dask", "distributed", "matplotlib"):
        try:
            __import__(m)
        except ImportError:
            raise Missing("python3-%s is not installed for %s (scripts/setup.sh --test)"
                          % (m, sys.executable))
    if not os.path.isdir(W) or not glob.glob(os.path.join(W, "*.whl")):
        raise Missing("no fixture wheels in %s (cmake --build builds them)" % W)


def records(out_dir):
    recs = []
    for p in sorted(glob.glob(os.path.join(out_dir, "part-*.jsonl"))):
        with open(p, encoding="utf-8") as f:
            recs += [json.loads(line) for line in f]
    return recs


def scanned():
    """The scan on a LocalCluster of 2 worker processes (built here, always closed)."""
    if "recs" in STATE:
        return STATE["recs"], STATE["summary"]
    need_dask()
    import distributed
    from wheelgate import dask as wgdask
    out = os.path.join(TMP, "scan")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    try:
        with distributed.Client(cluster, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
            summary = wgdask.scan(W, out, client=client, partitions=8, targets=TARGETS,
                                  timeout=240)
            # The same scan through the scheduler's address, the client writing the parts.
            out2 = os.path.join(TMP, "scan-addr")
            summary2 = wgdask.scan(W, out2, client=cluster.scheduler_address, partitions=3,
                                   targets=TARGETS, write="client", timeout=240)
    finally:
        cluster.close(timeout=60)
    STATE.update(recs=records(out), summary=summary, out=out,
                 recs2=records(out2), summary2=summary2)
    return STATE["recs"], summary


def strip(rec):
    return {k: v for k, v in rec.items() if k != "seconds"}


@test
def scan_matches_check_all():
    recs, summary = scanned()
    wheels = sorted(glob.glob(os.path.join(W, "*.whl")))
    assert sorted(r["path"] for r in recs) == wheels, [r["path"] for r in recs]
    assert summary["inputs"] == len(wheels) and summary["listed"] == len(wheels), summary
    # the tasks ran on both workers (processes), one partition a task
    assert len({t["worker"] for t in summary["tasks"]}) == 2, summary["tasks"]
    assert len(summary["tasks"]) == 8 and sum(t["inputs"] for t in summary["tasks"]) == len(wheels)
    by_path = {r["path"]: r for r in recs}
    seen = {"pass": 0, "fail": 0, "error": 0}
    for name, opts in TARGETS.items():
        reports = wheelgate.check_all(wheels, **opts)
        assert len(reports) == len(wheels)
        for rep in reports:
            rec = by_path[rep.path]
            (t,) = [t for t in rec["targets"] if t["target"] == name]
            assert t["verdict"] == rep.verdict, (rep.path, name, t["verdict"], rep.verdict)
            assert t["profile"] == rep.profile, (t["profile"], rep.profile)
            assert t["findings"] == [{"rule": f.rule, "severity": f.severity,
                                      "message": f.message, "member": f.member,
                                      "symbol": f.symbol} for f in rep.findings], rep.path
            assert t["counts"] == {s: sum(1 for f in rep.findings if f.severity == s)
                                   for s in ("error", "warning", "info")}, t["counts"]
            seen[rep.verdict] += 1
            if rep.verdict == "error":
                assert rec["error"] == rep.error and rep.error, (rec["error"], rep.error)
        assert summary["targets"][name] == {v: sum(1 for r in recs for t in r["targets"]
                                                   if t["target"] == name and t["verdict"] == v)
                                            for v in ("pass", "fail", "error")}
    # the fixtures hold all three verdicts, and the targets judge differently
    assert all(seen.values()), seen
    assert any(r["targets"][0]["verdict"] != r["targets"][1]["verdict"] for r in recs)
    for r in recs:
        assert r["schema"] == "wheelgate.scan/1"
        data = open(r["path"], "rb").read()
        assert r["sha256"] == hashlib.sha256(data).hexdigest() and r["size"] == len(data)
        assert r["seconds"] >= 0
    flash = [r for r in recs if os.path.basename(r["path"]).startswith("flash_attn-2.8.3+cu12")]
    assert flash and all(r["name"] == "flash_attn" and r["version"].startswith("2.8.3+cu12")
                         and r["tags"] == ["cp312-cp312-linux_x86_64"] for r in flash), flash
    multi = [r for r in recs if os.path.basename(r["path"]).startswith("multi-")]
    assert multi and multi[0]["tags"] == [
        "py2-none-manylinux_2_28_x86_64", "py2-none-manylinux2014_x86_64",
        "py3-none-manylinux_2_28_x86_64", "py3-none-manylinux2014_x86_64"], multi[0]["tags"]
    bad = [r for r in recs if os.path.basename(r["path"]) == "not-a-valid-name.whl"]
    assert bad and bad[0]["name"] is None and bad[0]["tags"] == []


@test
def scheduler_address_and_client_writes():
    recs, _ = scanned()
    recs2, summary2 = STATE["recs2"], STATE["summary2"]
    assert len(summary2["partitions"]) == 3 and len(glob.glob(
        os.path.join(TMP, "scan-addr", "part-*.jsonl"))) == 3
    a = sorted((strip(r) for r in recs), key=lambda r: r["path"])
    b = sorted((strip(r) for r in recs2), key=lambda r: r["path"])
    assert a == b


@test
def resume_keeps_finished_partitions():
    scanned()
    from wheelgate import dask as wgdask
    out = os.path.join(TMP, "resume")
    shutil.copytree(STATE["out"], out)
    gone = os.path.join(out, "part-00003.jsonl")
    before = open(gone).read()
    os.unlink(gone)
    # A partition file left half-written by a killed task is never taken as done.
    with open(gone + ".tmp", "w") as f:
        f.write(before.splitlines()[0][:20])
    kept = {p: os.stat(p).st_mtime_ns for p in glob.glob(os.path.join(out, "part-*.jsonl"))}
    summary = wgdask.scan(W, out, partitions=8, targets=TARGETS, resume=True, workers=2,
                          processes=False, timeout=240)
    assert sorted(summary["resumed"]) == sorted(os.path.basename(p) for p in kept), summary
    assert [t["part"] for t in summary["tasks"]] == ["part-00003.jsonl"], summary["tasks"]
    assert {p: os.stat(p).st_mtime_ns for p in kept} == kept
    redone = [strip(json.loads(x)) for x in open(gone)]
    assert redone == [strip(json.loads(x)) for x in before.splitlines()]
    assert summary["inputs"] == len(STATE["recs"])
    assert summary["targets"] == STATE["summary"]["targets"]


def md_table(md, heading):
    """The rows of the table under '## heading', each a list of cells (unescaped)."""
    part = md.split("## " + heading + "\n", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in part.splitlines() if ln.startswith("|")][2:]
    return [[re.sub(r"\\(.)", r"\1", c.strip()) for c in re.split(r"(?<!\\)\|", ln)[1:-1]]
            for ln in rows]


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []
        self.attrs = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v) for k, v in attrs]

    def handle_data(self, data):
        self.text.append(data)


def report(files, name):
    md, page = os.path.join(TMP, name + ".md"), os.path.join(TMP, name + ".html")
    p = subprocess.run([sys.executable, "-m", "wheelgate.report", *files, "-o", md,
                        "--html", page], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    return open(md, encoding="utf-8").read(), open(page, encoding="utf-8").read()


@test
def report_counts_and_page():
    recs, _ = scanned()
    md, page = report(sorted(glob.glob(os.path.join(STATE["out"], "part-*.jsonl"))), "report")
    assert "\n%d inputs.\n" % len(recs) in md
    verdicts = {r[0]: [int(x) for x in r[1:]] for r in md_table(md, "Verdicts by target")}
    assert verdicts == {t: [STATE["summary"]["targets"][t][v] for v in ("pass", "fail", "error")]
                        for t in TARGETS}, verdicts
    want = {}
    for r in recs:
        for t in r["targets"]:
            for f in t["findings"]:
                c = want.setdefault(f["rule"], {"error": 0, "warning": 0, "info": 0})
                c[f["severity"]] += 1
    rows = md_table(md, "Findings by rule and severity")
    got = {r[0]: dict(zip(("error", "warning", "info"), map(int, r[1:4]))) for r in rows[:-1]}
    assert got == want, (got, want)
    assert rows[-1][0] == "**all**" and int(rows[-1][4]) == sum(sum(c.values()) for c in want.values())
    blocking = {}
    for r in recs:
        for t in r["targets"]:
            if t["verdict"] == "fail":
                n = sum(1 for f in t["findings"] if f["severity"] == "error")
                if n:
                    label = "%s %s" % (r["name"], r["version"]) if r["name"] else r["path"]
                    blocking[label] = blocking.get(label, 0) + n
    top = md_table(md, "Packages with the most blocking findings")
    assert top and int(top[0][1]) == max(blocking.values()), (top, blocking)
    assert all(blocking[p] == int(n) for p, n in top), (top, blocking)
    for t in TARGETS:
        section = md.split("## Target %s\n" % t, 1)[1].split("\n## ", 1)[0]
        fails = sorted(r["path"] for r in recs for x in r["targets"]
                       if x["target"] == t and x["verdict"] == "fail")
        listed = re.findall(r"^- (.*)$", section.split("Unreadable")[0], re.M)
        assert sorted(re.sub(r"\\(.)", r"\1", x) for x in listed) == fails, (t, listed)
    # The page: parses, has both charts as inline SVG, loads nothing.
    p = Page()
    p.feed(page)
    p.close()
    assert p.tags.count("svg") == 2 and p.tags.count("figure") == 2, p.tags.count("svg")
    assert p.tags.count("rect") + p.tags.count("path") > 10  # bars were drawn
    assert "script" not in p.tags and "link" not in p.tags and "img" not in p.tags
    for tag, k, v in p.attrs:
        if k.startswith("xmlns"):
            continue
        v = v or ""
        # a link or source elsewhere (internal "#id" references are what the charts use)
        if k.split(":")[-1] in ("href", "src", "srcset", "action", "formaction", "data",
                                "poster", "resource", "background"):
            assert v.startswith("#"), (tag, k, v)
        assert not re.search(r"(?i)url\(\s*['\"]?(?!#)", v), (tag, k, v)
    outside = re.sub(r'xmlns(:\w+)?="[^"]*"', "", page)
    assert not re.search(r"(?i)(https?|ftp)://|//[a-z0-9.-]+\.[a-z]{2,}/", outside), \
        re.search(r"(?i).{40}(https?|ftp)://.{40}", outside)
    text = "".join(p.text)
    fails = [r["path"] for r in recs if any(t["verdict"] == "fail" for t in r["targets"])]
    assert fails and all(f in text for f in fails)


@test
def report_escapes_hostile_text():
    need_dask()
    rec = {"schema": "wheelgate.scan/1", "path": "/x/<script>alert(1)</script>\x1b[31m|x.whl",
           "name": "ev<b>il\u202e", "version": "1.0", "tags": [], "sha256": "00", "size": 1,
           "targets": [{"target": "t<i>\x07", "profile": "publish", "verdict": "fail",
                        "counts": {"error": 1, "warning": 0, "info": 0},
                        "findings": [{"rule": "WG-X-<001>", "severity": "error",
                                      "message": "m", "member": None, "symbol": None}]}],
           "seconds": 0.1, "error": None}
    f = os.path.join(TMP, "hostile.jsonl")
    with open(f, "w", encoding="utf-8") as out:
        out.write(json.dumps(rec) + "\n")
    md, page = report([f], "hostile")
    for text in (md, page):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        assert "<script>" not in text and "<b>" not in text and "<i>" not in text
    assert "\\x1b" in md and "\\u202e" in md and "\\x1b" in page
    p = Page()
    p.feed(page)
    assert "script" not in p.tags and "b" not in p.tags
    assert "/x/<script>alert(1)</script>\\x1b[31m|x.whl" in "".join(p.text)
    # a line that is no record: exit 2, the file and line named
    bad = os.path.join(TMP, "bad.jsonl")
    with open(bad, "w") as out:
        out.write(json.dumps(rec) + "\n{\"schema\": \"other\"}\n")
    q = subprocess.run([sys.executable, "-m", "wheelgate.report", bad], capture_output=True,
                       text=True, timeout=60)
    assert q.returncode == 2 and "bad.jsonl:2: not a wheelgate.scan/1 record" in q.stderr, q
    # a record whose finding is not one (the library's reader names the field): refused too
    odd = dict(rec, targets=[dict(rec["targets"][0], findings=[{"rule": "R", "severity": "fatal"}])])
    with open(bad, "w") as out:
        out.write(json.dumps(rec) + "\n" + json.dumps(odd) + "\n")
    q = subprocess.run([sys.executable, "-m", "wheelgate.report", bad], capture_output=True,
                       text=True, timeout=60)
    assert q.returncode == 2 and "bad.jsonl:2: not a wheelgate.scan/1 record: " \
        "targets[0].findings[0]: not a finding" in q.stderr, q


@test
def report_counts_findings_past_the_bound():
    """Findings counted past a report's bound ("more") are in the tables as the records'
    counts have them: by rule, by severity and as blocking findings."""
    need_dask()
    def rec(path, verdict, findings, more):
        c = {"error": 0, "warning": 0, "info": 0}
        for f in findings:
            c[f["severity"]] += 1
        for m in more:
            for k in c:
                c[k] += m["counts"][k]
        return {"schema": "wheelgate.scan/1", "path": path, "name": path[:-4], "version": "1",
                "tags": [], "sha256": None, "size": 1, "facts": None, "seconds": 0.1,
                "error": None, "targets": [{"target": "t", "profile": "install",
                                            "verdict": verdict, "counts": c,
                                            "findings": findings, "more": more}]}
    f = [{"rule": "WG-REC-003", "severity": "error", "message": "m", "member": "a",
          "symbol": None}]
    m = [{"rule": "WG-REC-003", "count": 4000, "counts": {"error": 3990, "warning": 10, "info": 0}},
         {"rule": "WG-ELF-009", "count": 7, "counts": {"error": 0, "warning": 0, "info": 7}}]
    path = os.path.join(TMP, "more.jsonl")
    with open(path, "w") as out:
        out.write(json.dumps(rec("big.whl", "fail", f, m)) + "\n")
        out.write(json.dumps(rec("small.whl", "fail", f * 2, [])) + "\n")
    md, _ = report([path], "more")
    rows = {r[0]: [int(x) for x in r[1:]] for r in md_table(md, "Findings by rule and severity")}
    assert rows["WG-REC-003"] == [1 + 3990 + 2, 10, 0, 4003], rows
    assert rows["WG-ELF-009"] == [0, 0, 7, 7], rows
    assert rows["**all**"] == [3993, 10, 7, 4010], rows
    top = md_table(md, "Packages with the most blocking findings")
    assert [(p, int(n)) for p, n in top] == [("big 1", 3991), ("small 1", 2)], top


@test
def cli_and_imports():
    need_dask()
    p = subprocess.run([sys.executable, "-m", "wheelgate.dask", "--help"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and "--scheduler" in p.stdout and "--resume" in p.stdout, p
    # the CLI end to end: threads of this process, one named target
    out = os.path.join(TMP, "cli")
    p = subprocess.run([sys.executable, "-m", "wheelgate.dask", "-o", out, "--threads-only",
                        "--workers", "2", "--timeout", "240", "--target-set",
                        "h100:gpu=H100,cuda=12.4,python=3.12,profile=install", W],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and "h100: %d inputs" % len(glob.glob(os.path.join(W, "*.whl"))) \
        in p.stdout, p
    summary = json.load(open(os.path.join(out, "summary.json")))
    assert list(summary["targets"]) == ["h100"], summary
    if "summary" in STATE:
        assert summary["targets"]["h100"] == STATE["summary"]["targets"]["h100-cu12"]
    # a URL in the list: a record with the error, not a crash
    lst = os.path.join(TMP, "urls.txt")
    with open(lst, "w") as f:
        f.write("# a comment\nhttps://example.invalid/x-1.0-py3-none-any.whl\n\n%s\n"
                % os.path.join(W, "base-1.0-py3-none-any.whl"))
    out = os.path.join(TMP, "urls")
    p = subprocess.run([sys.executable, "-m", "wheelgate.dask", "-o", out, "--threads-only",
                        "--from", lst, "--timeout", "120"], capture_output=True, text=True,
                       timeout=300)
    recs = [json.loads(x) for f in sorted(glob.glob(os.path.join(out, "part-*.jsonl")))
            for x in open(f)]
    assert p.returncode == 1 and len(recs) == 2, (p, recs)
    assert recs[0]["targets"][0]["verdict"] == "error" and "a URL" in recs[0]["error"], recs[0]
    assert recs[1]["targets"][0]["verdict"] == "pass" and recs[1]["error"] is None, recs[1]
    # a bad option fails before the cluster starts, naming it
    p = subprocess.run([sys.executable, "-m", "wheelgate.dask", "-o", out, "--gpu", "H999", W],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "H999" in p.stderr, p
    # --target-set as wheelgate scan reads it: two sets of one name, or a KEY without a
    # value, are refused (exit 2) before the cluster starts
    for sets in (["a:gpu=H100", "a:gpu=L4"], ["a:gpu=H100,cuda="]):
        p = subprocess.run([sys.executable, "-m", "wheelgate.dask", "-o", out, "--gpu", "H999",
                            *[x for t in sets for x in ("--target-set", t)], W],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and ("two sets are named 'a'" in p.stderr
                                      or "'cuda=' is not KEY=VALUE" in p.stderr), p
    # the base package imports neither Dask nor matplotlib
    code = ("import sys, wheelgate; wheelgate.check_all(sys.argv[1]); "
            "print(sorted(m for m in ('dask', 'distributed', 'matplotlib') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code, W], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p


# --- issue 26, point 3 --------------------------------------------------------------------

# Named targets, as --target-set takes them. h200 is the machine the corpus wheels were run
# on (H200, torch 2.11.0+cu130, CUDA 13.0, C++11 ABI, glibc 2.39: corpus README); the others
# differ from it in GPU, torch, CUDA, C++ ABI or profile, so that a fact of one set leaking
# into another changes verdicts. --target python=3.12 applies to every set (the sets' own on
# top), in both programs.
SETS = {"h200": "gpu=H200,torch=2.11.0+cu130,cuda=13.0,cxx11abi=1,glibc=2.39,profile=install",
        "l4": "gpu=L4,torch=2.8.0+cu128,cuda=12.8,cxx11abi=0",
        "a100": "gpu=A100,torch=2.11.0+cu130,cuda=13.0,glibc=2.39",
        "publish": "profile=publish"}
RUNS = (("h200", "l4"), ("a100", "publish", "h200"))
COMMON = ["--target", "python=3.12"]
# What happened to each corpus wheel on the H200 (corpus README): it imported and its kernel
# ran, or not.
RAN_ON_H200 = {"wgdemo_good_sm90": True, "wgcpu_cpu_good": True, "wgdemo_oldabi_sm90": False,
               "wgdemo_sm80_only": False, "wgdemo_wrapper": False, "wgdemo_mixed": False}


def corpus_wheels():
    d = os.path.join(CORPUS, "wheels")
    if not os.path.isdir(d):
        raise Missing("the corpus not found at %s" % CORPUS)
    found = sorted(os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs if f.endswith(".whl"))
    assert found, d
    return d, found


def cli_scan(out, sets, paths, common=()):
    """`wheelgate scan` (the C CLI) with these --target-sets; its records by path."""
    args = [x for n in sets for x in ("--target-set", "%s:%s" % (n, SETS[n]))]
    p = subprocess.run([CLI, "scan", "--no-config", "-q", "-j", "2", "-o", out, *common, *args,
                        *paths], capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1, 2) and os.path.isfile(out), (p.returncode, p.stderr[-2000:])
    with open(out, encoding="utf-8") as f:
        recs = [json.loads(line) for line in f]
    return p.returncode, recs


def comparable(rec):
    return {k: v for k, v in rec.items() if k not in ("seconds", "facts")}


@test
def target_sets_equal_scan_over_corpus():
    need_dask()
    import distributed
    wheel_dir, wheels = corpus_wheels()
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    try:
        for sets in RUNS:
            tag = "-".join(sets)
            rc, want = cli_scan(os.path.join(TMP, "corpus-%s.jsonl" % tag), sets, [wheel_dir],
                                COMMON)
            assert sorted(r["path"] for r in want) == wheels, [r["path"] for r in want]
            out = os.path.join(TMP, "corpus-dask-%s" % tag)
            args = [x for n in sets for x in ("--target-set", "%s:%s" % (n, SETS[n]))]
            p = subprocess.run([sys.executable, "-m", "wheelgate.dask", "-o", out, "--scheduler",
                                cluster.scheduler_address, "--partitions", "4", "--timeout",
                                "240", *COMMON, *args, wheel_dir], capture_output=True, text=True,
                               timeout=300)
            got = {r["path"]: r for r in records(out)}
            assert sorted(got) == wheels, (p, sorted(got))
            assert p.returncode == min(rc, 1), (rc, p.returncode, p.stderr[-2000:])
            differ = []
            for w in want:
                d = got[w["path"]]
                assert [t["target"] for t in w["targets"]] == list(sets), w["targets"]
                assert [t["target"] for t in d["targets"]] == list(sets), d["targets"]
                for a, b in zip(w["targets"], d["targets"]):
                    if a["verdict"] != b["verdict"]:
                        differ.append((os.path.basename(w["path"]), a["target"], a["verdict"],
                                       b["verdict"]))
            assert not differ, "%d (wheel, target) verdicts differ from wheelgate scan's " \
                "(wheel, target, scan, dask): %s" % (len(differ), differ)
            # and the whole entries: profile, counts, findings; the file's name, tags, hash
            for w in want:
                assert comparable(got[w["path"]]) == comparable(w), (w["path"], got[w["path"]], w)
            # one writer (the library's wg_scan_record_format): the very same bytes, but the
            # time taken
            def lines(files):
                out = {}
                for fn in files:
                    with open(fn, encoding="ascii") as f:
                        for line in f:
                            out[json.loads(line)["path"]] = re.sub(r'"seconds":[-+.e0-9]+,',
                                                                   '"seconds":0,', line)
                return out
            raw_cli = lines([os.path.join(TMP, "corpus-%s.jsonl" % tag)])
            raw_dask = lines(sorted(glob.glob(os.path.join(out, "part-*.jsonl"))))
            assert raw_cli == raw_dask, [(k, raw_cli[k], raw_dask.get(k)) for k in raw_cli
                                         if raw_cli[k] != raw_dask.get(k)][:1]
            # The comparison means something: the sets judge the corpus differently, and
            # the corpus holds passes and failures.
            by = {n: [next(t["verdict"] for t in r["targets"] if t["target"] == n) for r in want]
                  for n in sets}
            assert len({tuple(v) for v in by.values()}) == len(sets), by
            assert {"pass", "fail"} <= {v for vs in by.values() for v in vs}, by
            # h200 is the machine the corpus ran on: a wheel passes exactly when it ran there.
            h200 = {r["name"]: next(t["verdict"] for t in r["targets"] if t["target"] == "h200")
                    for r in want}
            assert {n: v == "pass" for n, v in h200.items()} == RAN_ON_H200, h200
    finally:
        cluster.close(timeout=60)


def verdict_rows(md):
    return {r[0]: [int(x) for x in r[1:]] for r in md_table(md, "Verdicts by target")}


@test
def report_combines_scans_of_the_same_wheels():
    """The docs' example: `wheelgate scan` records and wheelgate.dask partitions of the same
    wheels, for other targets, in one report: every target of both, each input once."""
    recs, summary = scanned()
    rc, cli = cli_scan(os.path.join(TMP, "fixtures-scan.jsonl"), ("l4", "publish"), [W])
    assert {r["path"] for r in cli} == {r["path"] for r in recs}, "not the same wheels"
    parts = sorted(glob.glob(os.path.join(STATE["out"], "part-*.jsonl")))
    md, _ = report([os.path.join(TMP, "fixtures-scan.jsonl")] + parts, "combined")
    assert "\n%d inputs.\n" % len(recs) in md, md[:200]
    want = {}
    for source in (cli, recs):
        for r in source:
            for t in r["targets"]:
                want.setdefault(t["target"], [0, 0, 0])[VERDICT_ORDER[t["verdict"]]] += 1
    assert set(want) == {"l4", "publish"} | set(TARGETS), want
    assert verdict_rows(md) == want, (verdict_rows(md), want)
    for t in want:
        section = md.split("## Target %s\n" % t, 1)[1].split("\n## ", 1)[0]
        source = cli if t in ("l4", "publish") else recs
        fails = sorted(r["path"] for r in source for x in r["targets"]
                       if x["target"] == t and x["verdict"] == "fail")
        listed = re.findall(r"^- (.*)$", section.split("Unreadable")[0], re.M)
        assert sorted(re.sub(r"\\(.)", r"\1", x) for x in listed if x != "none") == fails, t
        bad = [(r["path"], r["error"]) for r in source for x in r["targets"]
               if x["target"] == t and x["verdict"] == "error"]
        unread = section.split("Unreadable", 1)[1]
        assert all(re.sub(r"\\(.)", r"\1", line).startswith("- %s: %s" % (p, e))
                   for (p, e), line in zip(sorted(bad), re.findall(r"^- .*$", unread, re.M)))
        assert len(re.findall(r"^- .*$", unread, re.M)) == max(1, len(bad)), (t, bad)
    # a record seen again (a resumed scan, or the same file given twice) still counts once
    md2, _ = report([os.path.join(TMP, "fixtures-scan.jsonl")] + parts
                    + [os.path.join(TMP, "fixtures-scan.jsonl")], "combined2")
    assert verdict_rows(md2) == want and "\n%d inputs.\n" % len(recs) in md2


VERDICT_ORDER = {"pass": 0, "fail": 1, "error": 2}
SVG = "{http://www.w3.org/2000/svg}"


def _box(d):
    """The bounding box (x0, y0, x1, y1) of an SVG path's points (M/L/Q/C/z, absolute)."""
    assert re.fullmatch(r"[\sMLQCZz0-9.eE+-]*", d), d  # no relative or arc commands
    nums = [float(x) for x in re.findall(r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?", d)]
    xs, ys = nums[0::2], nums[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def _fill(el):
    m = re.search(r"fill:\s*(#[0-9a-fA-F]{6}|none)", el.get("style") or "")
    return m.group(1).lower() if m else None


def _overlap(a, b):
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def chart_geometry(svg):
    """From one matplotlib SVG chart: the visible box of every bar (a clipped patch of the
    axes, cut to its clip rectangle), the legend's box (its frame and entries), the legend's
    entries (label, colour) and the picture's box (viewBox)."""
    root = ET.fromstring(svg)
    clips = {}
    for cp in root.iter(SVG + "clipPath"):
        (rect,) = cp.findall(SVG + "rect")
        x, y = float(rect.get("x")), float(rect.get("y"))
        clips[cp.get("id")] = (x, y, x + float(rect.get("width")), y + float(rect.get("height")))
    for el in root.iter():
        if el.tag in (SVG + "path", SVG + "g", SVG + "rect"):
            assert el.get("transform") is None, ("a transform the boxes do not follow", el.attrib)
    (axes,) = [g for g in root.iter(SVG + "g") if (g.get("id") or "").startswith("axes_")]
    bars = []
    for g in axes.findall(SVG + "g"):
        if not (g.get("id") or "").startswith("patch_"):
            continue
        for path in g.findall(SVG + "path"):
            m = re.fullmatch(r"url\(#(.+)\)", path.get("clip-path") or "")
            if not m or _fill(path) in (None, "none"):
                continue
            b, c = _box(path.get("d")), clips[m.group(1)]
            vis = (max(b[0], c[0]), max(b[1], c[1]), min(b[2], c[2]), min(b[3], c[3]))
            if vis[2] > vis[0] and vis[3] > vis[1]:
                bars.append((vis, _fill(path)))
    (legend,) = [g for g in axes.iter(SVG + "g") if (g.get("id") or "").startswith("legend_")]
    boxes = [_box(p.get("d")) for p in legend.iter(SVG + "path")]
    box = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
           max(b[3] for b in boxes))
    handles, labels = [], []
    for g in legend.findall(SVG + "g")[1:]:  # the first is the frame
        if g.get("id", "").startswith("patch_"):
            handles.append(_fill(g.find(SVG + "path")))
        elif g.get("id", "").startswith("text_"):
            labels.append("".join(g.find(SVG + "text").itertext()))
    assert len(handles) == len(labels), (handles, labels)
    view = tuple(float(x) for x in root.get("viewBox").split())
    return bars, box, list(zip(labels, handles)), (view[0], view[1], view[0] + view[2],
                                                   view[1] + view[3])


@test
def report_chart_colours_and_legend():
    recs, _ = scanned()
    pages = []
    for name, files in (("charts", sorted(glob.glob(os.path.join(STATE["out"], "part-*.jsonl")))),
                        ("charts-combined", [os.path.join(TMP, "fixtures-scan.jsonl")]
                         + sorted(glob.glob(os.path.join(STATE["out"], "part-*.jsonl"))))):
        if not os.path.exists(files[0]):
            cli_scan(files[0], ("l4", "publish"), [W])
        pages.append(report(files, name)[1])
    for page in pages:
        svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
        assert len(svgs) == 2, len(svgs)
        for svg, series in zip(svgs, (("error", "warning", "info"), ("pass", "fail", "error"))):
            bars, legend, entries, view = chart_geometry(svg)
            # every series in the legend, each a colour of its own, and its bars in it
            assert [label for label, _ in entries] == list(series), entries
            colours = dict(entries)
            assert len(set(colours.values())) == len(series), entries
            assert len(bars) > len(series), bars
            assert {c for _, c in bars} <= set(colours.values()), (bars, colours)
            # the legend covers no bar, and lies inside the picture
            covered = [(b, c) for b, c in bars if _overlap(b, legend)]
            assert not covered, ("the legend %r covers bars %r" % (legend, covered))
            assert view[0] <= legend[0] and view[1] <= legend[1] and legend[2] <= view[2] \
                and legend[3] <= view[3], (legend, view)
        # the verdict chart: fail and error told apart, and both drawn (the fixtures hold both)
        _, _, entries, _ = chart_geometry(svgs[1])
        colours = dict(entries)
        assert colours["fail"] != colours["error"], colours
        drawn = {c for _, c in chart_geometry(svgs[1])[0]}
        assert colours["fail"] in drawn and colours["error"] in drawn, (drawn, colours)


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

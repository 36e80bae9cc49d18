#!/usr/bin/env python3
"""wheelgate.dask and wheelgate.report (issue 17, points 3 and 4) on a LocalCluster of 2
worker processes over the fixture wheels: every record's verdicts and findings are those of
the binding's check_all() for the same file and target; sha256, size, name, version and tags
are the file's; the same scan through the scheduler's address (the path a real cluster takes)
with the client writing gives the same records; a partition removed is redone by resume=True
and the others are kept. The report built from the records: its Markdown tables count what
the records hold, the HTML page parses (html.parser), has its charts as inline <svg> and
loads nothing from anywhere; hostile text from a record is escaped in both.

Debian's python3-dask, python3-distributed and python3-matplotlib (scripts/setup.sh --test):
missing, the tests are skipped outside CI and fail in CI.

Usage: test_dask.py LIBWHEELGATE HOOKS_DIR FIXTURES
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

from harness import Missing, main, test  # noqa: E402

LIB, HOOKS, FIX = [os.path.abspath(a) for a in sys.argv[1:4]]
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
    # the base package imports neither Dask nor matplotlib
    code = ("import sys, wheelgate; wheelgate.check_all(sys.argv[1]); "
            "print(sorted(m for m in ('dask', 'distributed', 'matplotlib') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code, W], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

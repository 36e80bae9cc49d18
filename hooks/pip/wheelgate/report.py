"""A report on a whole repository from the JSON Lines of `wheelgate scan` or wheelgate.dask
(records of schema "wheelgate.scan/1", docs/scan.md):

    python3 -m wheelgate.report scan.jsonl out/part-*.jsonl -o report.md --html report.html

It gives the inputs by target and verdict, the findings counted by rule and severity, the
packages with the most blocking findings (findings of severity error, in a target the input
fails), and, for each target, the stored wheels that fail it and those that could not be read.
Records of the same input (same sha256 and path) from several files are one input with the
targets of all of them (scans of the same wheels for other targets combine).
The HTML page holds the same tables and charts drawn by matplotlib as inline SVG: it loads
nothing from anywhere. Text from the wheels is escaped (control characters as \\xNN, then
HTML or Markdown). Only this module imports matplotlib, and only for the HTML page.
"""
from __future__ import annotations

import argparse
import html
import importlib
import io
import re
import sys
from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Tuple

import wheelgate
from wheelgate import escape

__all__ = ["load", "summarize", "markdown", "html_page", "main"]

SEVERITIES = ("error", "warning", "info")
VERDICTS = ("pass", "fail", "error")


def load(paths: Iterable[str]) -> List[Dict[str, Any]]:
    """The records of JSON Lines files, one per input (same sha256 and path); a line that is
    not a wheelgate.scan/1 record raises ValueError naming the file and line.

    Records of the same input are merged by target: the scans of the same wheels for other
    targets (a `wheelgate scan` and a wheelgate.dask run, say) add their targets to it, in
    the order first seen, and a target seen again (as a resumed scan may leave) counts once:
    the last entry is kept. A target entry whose verdict is "error" carries "error": why (its
    record's error); a merged record's error is the first such target's."""
    out: Dict[Tuple[Any, Any], Dict[str, Any]] = {}
    for p in paths:
        with open(p, "rb") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = wheelgate.read_record(line.rstrip(b"\r\n"))  # the library's reader
                except ValueError as e:
                    raise ValueError("%s:%d: %s" % (escape(p), n, e)) from None
                targets = []
                for t in rec["targets"]:
                    if t["verdict"] == "error":
                        t.setdefault("error", rec.get("error"))
                    targets.append(t)
                key = (rec.get("sha256"), rec.get("path"))
                old = out.get(key)
                if old is not None:
                    merged = {str(t.get("target")): t for t in old["targets"]}
                    for t in targets:
                        merged[str(t.get("target"))] = t  # a new name is added at the end
                    targets = list(merged.values())
                rec = dict(rec, targets=targets)
                if old is not None:  # the first target that could not be judged, as scan says
                    rec["error"] = next((t["error"] for t in targets
                                         if t.get("verdict") == "error" and t.get("error")),
                                        None)
                out[key] = rec
    return list(out.values())


def _label(rec: Dict[str, Any]) -> str:
    if rec.get("name"):
        return "%s %s" % (rec["name"], rec.get("version") or "")
    return str(rec.get("path"))


def summarize(records: List[Dict[str, Any]], top: int = 20) -> Dict[str, Any]:
    """What the report says, as data: {"inputs", "targets": {name: {verdict: n}},
    "by_rule": [(rule, {severity: n}, total)], "by_severity": {severity: n},
    "top": [(package, blocking findings)], "failing": {target: [path]},
    "unreadable": {target: [(path, error)]}}."""
    targets: Dict[str, Counter[str]] = {}
    rules: Dict[str, Counter[str]] = {}
    severity: Counter[str] = Counter()
    blocking: Counter[str] = Counter()
    failing: Dict[str, List[str]] = {}
    unreadable: Dict[str, List[Tuple[str, str]]] = {}
    for rec in records:
        for t in rec["targets"]:
            name = str(t.get("target"))
            targets.setdefault(name, Counter())[t["verdict"]] += 1
            failing.setdefault(name, [])
            unreadable.setdefault(name, [])
            if t["verdict"] == "fail":
                failing[name].append(str(rec.get("path")))
            elif t["verdict"] == "error":
                why = t.get("error") or rec.get("error") or ""
                unreadable[name].append((str(rec.get("path")), str(why)))
            # the findings kept, and those counted past the report's bound ("more"): the
            # tables agree with the records' counts
            found = [(f["rule"], f["severity"], 1) for f in t["findings"]]
            found += [(m["rule"], sev, m["counts"][sev]) for m in t["more"] for sev in SEVERITIES
                      if m["counts"][sev]]
            for rule, sev, k in found:
                rules.setdefault(str(rule), Counter())[sev] += k
                severity[sev] += k
                if t["verdict"] == "fail" and sev == "error":
                    blocking[_label(rec)] += k
    by_rule = sorted(((r, dict(c), sum(c.values())) for r, c in rules.items()),
                     key=lambda x: (-x[2], x[0]))
    return {"inputs": len(records),
            "targets": {t: {v: c.get(v, 0) for v in VERDICTS} for t, c in sorted(targets.items())},
            "by_rule": by_rule,
            "by_severity": {s: severity.get(s, 0) for s in SEVERITIES},
            "top": sorted(blocking.items(), key=lambda x: (-x[1], x[0]))[:top],
            "failing": {t: sorted(v) for t, v in sorted(failing.items())},
            "unreadable": {t: sorted(v) for t, v in sorted(unreadable.items())}}


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def _md(text: Any) -> str:
    """A Markdown table cell: control characters escaped, Markdown's characters too."""
    return _MD_SPECIAL.sub(r"\\\1", escape(str(text)))


def markdown(s: Dict[str, Any]) -> str:
    out = ["# wheelgate report", "", "%d inputs." % s["inputs"], "",
           "## Verdicts by target", "", "| target | pass | fail | error |", "|---|---:|---:|---:|"]
    out += ["| %s | %d | %d | %d |" % (_md(t), v["pass"], v["fail"], v["error"])
            for t, v in s["targets"].items()]
    out += ["", "## Findings by rule and severity", "",
            "| rule | error | warning | info | total |", "|---|---:|---:|---:|---:|"]
    out += ["| %s | %d | %d | %d | %d |" % (_md(r), c.get("error", 0), c.get("warning", 0),
                                            c.get("info", 0), n) for r, c, n in s["by_rule"]]
    bs = s["by_severity"]
    out += ["| **all** | %d | %d | %d | %d |" % (bs["error"], bs["warning"], bs["info"],
                                                  sum(bs.values()))]
    out += ["", "## Packages with the most blocking findings", ""]
    if s["top"]:
        out += ["| package | blocking findings |", "|---|---:|"]
        out += ["| %s | %d |" % (_md(p), n) for p, n in s["top"]]
    else:
        out += ["None."]
    for t in s["targets"]:
        out += ["", "## Target %s" % _md(t), "", "Fail (%d):" % len(s["failing"][t]), ""]
        out += ["- %s" % _md(p) for p in s["failing"][t]] or ["- none"]
        out += ["", "Unreadable (%d):" % len(s["unreadable"][t]), ""]
        out += ["- %s: %s" % (_md(p), _md(e)) for p, e in s["unreadable"][t]] or ["- none"]
    return "\n".join(out) + "\n"


def _svg(fig: Any) -> str:
    """A figure as inline SVG: no XML header, DOCTYPE (a URL) or RDF metadata (URLs)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)


# Colours of the charts: severities in one, verdicts in the other; within each chart every
# series has a colour of its own (a failing input and one that could not be read look apart).
SEVERITY_COLORS = {"error": "#c0392b", "warning": "#e67e22", "info": "#2980b9"}
VERDICT_COLORS = {"pass": "#27ae60", "fail": "#c0392b", "error": "#7d3c98"}
OTHER_COLOR = "#7f8c8d"


def _legend_outside(ax: Any) -> None:
    """The legend to the right of the axes, its top at theirs: the bars are drawn (and
    clipped) inside the axes, so the legend can cover none of them, whatever the data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def _charts(s: Dict[str, Any]) -> List[Tuple[str, str]]:
    matplotlib = importlib.import_module("matplotlib")
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text, not paths
    matplotlib.rcParams["svg.hashsalt"] = "wheelgate"  # the same page for the same records
    plt = importlib.import_module("matplotlib.pyplot")
    charts = []
    # Findings by rule, stacked by severity (the 25 most frequent rules).
    rows = s["by_rule"][:25][::-1]
    fig, ax = plt.subplots(figsize=(7, 0.3 * max(len(rows), 3) + 1))
    left = [0] * len(rows)
    for sev in SEVERITIES:
        vals = [c.get(sev, 0) for _, c, _ in rows]
        ax.barh([escape(r) for r, _, _ in rows], vals, left=left, color=SEVERITY_COLORS[sev],
                label=sev)
        left = [a + b for a, b in zip(left, vals)]
    ax.set_xlabel("findings")
    ax.set_title("Findings by rule and severity")
    _legend_outside(ax)
    charts.append(("Findings by rule and severity", _svg(fig)))
    plt.close(fig)
    # Verdicts by target.
    names = list(s["targets"])
    fig, ax = plt.subplots(figsize=(7, 0.5 * max(len(names), 2) + 1))
    left = [0] * len(names)
    for v in VERDICTS:
        vals = [s["targets"][t][v] for t in names]
        ax.barh([escape(t) for t in names], vals, left=left,
                color=VERDICT_COLORS.get(v, OTHER_COLOR), label=v)
        left = [a + b for a, b in zip(left, vals)]
    ax.set_xlabel("inputs")
    ax.set_title("Verdicts by target")
    _legend_outside(ax)
    charts.append(("Verdicts by target", _svg(fig)))
    plt.close(fig)
    return charts


def _h(text: Any) -> str:
    return html.escape(escape(str(text)), quote=True)


def _table(head: List[str], rows: List[List[Any]]) -> str:
    out = ["<table><thead><tr>"] + ["<th>%s</th>" % _h(h) for h in head] + ["</tr></thead><tbody>"]
    for r in rows:
        out.append("<tr>" + "".join("<td>%s</td>" % _h(c) for c in r) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def html_page(s: Dict[str, Any]) -> str:
    parts = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>wheelgate report</title>",
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
             "margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
             "figure{margin:1em 0}</style></head><body>",
             "<h1>wheelgate report</h1><p>%d inputs.</p>" % s["inputs"]]
    for title, svg in _charts(s):
        parts.append("<figure>%s<figcaption>%s</figcaption></figure>" % (svg, _h(title)))
    parts.append("<h2>Verdicts by target</h2>")
    parts.append(_table(["target", "pass", "fail", "error"],
                        [[t, v["pass"], v["fail"], v["error"]] for t, v in s["targets"].items()]))
    parts.append("<h2>Findings by rule and severity</h2>")
    parts.append(_table(["rule", "error", "warning", "info", "total"],
                        [[r, c.get("error", 0), c.get("warning", 0), c.get("info", 0), n]
                         for r, c, n in s["by_rule"]]))
    parts.append("<h2>Packages with the most blocking findings</h2>")
    parts.append(_table(["package", "blocking findings"], [list(x) for x in s["top"]]))
    for t in s["targets"]:
        parts.append("<h2>Target %s</h2>" % _h(t))
        parts.append("<h3>Fail (%d)</h3><ul>%s</ul>" % (
            len(s["failing"][t]), "".join("<li>%s</li>" % _h(p) for p in s["failing"][t])))
        parts.append("<h3>Unreadable (%d)</h3><ul>%s</ul>" % (
            len(s["unreadable"][t]),
            "".join("<li>%s: %s</li>" % (_h(p), _h(e)) for p, e in s["unreadable"][t])))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m wheelgate.report",
        description="A report (Markdown, and an HTML page with charts) from the JSON Lines "
                    "of wheelgate scan or wheelgate.dask.")
    ap.add_argument("jsonl", nargs="+", help="JSON Lines files (wheelgate.scan/1 records)")
    ap.add_argument("-o", "--output", default="-", help="the Markdown report ('-': stdout)")
    ap.add_argument("--html", help="also an HTML page with charts (needs matplotlib)")
    ap.add_argument("--top", type=int, default=20, help="packages listed by blocking findings")
    a = ap.parse_args(argv)
    try:
        s = summarize(load(a.jsonl), top=a.top)
        md = markdown(s)
        page = html_page(s) if a.html else None
    except (OSError, ValueError, ImportError) as e:
        print("wheelgate.report: %s" % escape(str(e)), file=sys.stderr)
        return 2
    if a.output == "-":
        sys.stdout.write(md)
    else:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(md)
    if page is not None:
        with open(a.html, "w", encoding="utf-8") as f:
            f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())

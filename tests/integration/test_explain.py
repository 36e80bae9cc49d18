#!/usr/bin/env python3
"""`wheelgate explain` and `check --explain` (issue 29, docs/explain.md): every rule that
`check --list-rules` lists explained in text and JSON, every section there and not empty,
the severities those of --list-rules; the JSON against docs/schema/explain.schema.json;
user rules that leave the explanations out (said so); unknown rules with the closest;
`check --explain` on fixtures that fire rules; `help COMMAND`; usage errors as one line and
a hint for every command; --list-rules sorted; WG-TAG-006's grammar for name, version and
both.

Usage: test_explain.py WHEELGATE FIXTURES REPO_ROOT [SYS_PYTHON]
Prints one line per test and closes with "N passed, N failed".
"""
import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main, test, validate  # noqa: E402

WG, FIX, ROOT = [os.path.abspath(a) for a in sys.argv[1:4]]
PY = sys.argv[4] if len(sys.argv) > 4 else "/usr/bin/python3"
WHEELS = os.path.join(FIX, "wheels")
SCHEMA = os.path.join(ROOT, "docs", "schema", "explain.schema.json")
TMP = tempfile.mkdtemp(prefix="wg-explain-")
SECTIONS = ["Severity", "Looks at", "Why it matters", "Example that fails",
            "Example that passes", "Message", "How to fix", "How to silence it"]


def run(*args, env=None):
    e = dict(os.environ, COLUMNS="80")
    e.update(env or {})
    p = subprocess.run([WG, *args], capture_output=True, timeout=120, env=e,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def list_rules():
    """{id: (install, publish, on, name, title)} and the ids in --list-rules' order."""
    rc, out, err = run("check", "--no-config", "--list-rules")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:5] == ["ID", "INSTALL", "PUBLISH", "ON", "CHECK"], lines[0]
    rules, order = {}, []
    for line in lines[1:]:
        f = line.split(None, 5)
        rules[f[0]] = tuple(f[1:6])
        order.append(f[0])
    return rules, order


def sections(text):
    """The explanation's sections: {heading: body}, each heading a line of its own (a title
    that says more in parentheses is keyed by what comes before them)."""
    out, cur = {}, None
    for line in text.splitlines():
        head = re.sub(r" \(.*$", "", line)
        if line and not line.startswith(" ") and head in SECTIONS + ["Pattern examples"]:
            cur = head
            out[cur] = []
        elif cur and line.startswith("  "):
            out[cur].append(line.strip())
        elif line:
            cur = None
    return {k: " ".join(v) for k, v in out.items()}


def sev(s):
    return "off" if s == "-" else s


@test
def every_rule_explained_text_and_json():
    rules, order = list_rules()
    assert len(rules) >= 40, len(rules)
    for rid, (install, publish, on, name, title) in rules.items():
        rc, out, err = run("explain", rid)
        assert rc == 0 and not err, (rid, rc, err)
        first = out.splitlines()[:2]
        assert first[0].split() == [rid, name], (rid, first)
        s = sections(out)
        for h in SECTIONS:
            assert s.get(h), "%s: section %r missing or empty:\n%s" % (rid, h, out)
            assert "(not given in the rule file)" not in s[h], (rid, h)
        assert ("install profile: %s; publish profile: %s; %s by default"
                % (sev(install), sev(publish), on)) in s["Severity"], (rid, s["Severity"])
        assert "--disable %s" % rid in s["How to silence it"], rid
        assert "ignore:" in s["How to silence it"] and "--baseline" in s["How to silence it"]
        assert "its rule file does not give" not in out, rid
        # the same rule by its id in another case
        assert run("explain", rid.lower())[1] == out, rid
        rc, doc, err = run("explain", "--format", "json", rid)
        assert rc == 0, (rid, err)
        validate(doc, SCHEMA, PY)
        d = json.loads(doc)
        assert d["schema"] == "wheelgate.explain/1" and len(d["rules"]) == 1, rid
        r = d["rules"][0]
        assert (r["id"], r["name"]) == (rid, name), (rid, r["id"], r["name"])
        assert r["title"] == title.strip(), (rid, r["title"], title)
        assert r["severity"] == {"install": sev(install), "publish": sev(publish)}, (rid, r)
        assert r["enabled"] == (on == "on") and r["missing"] == [], (rid, r)
        for k in ("looks_at", "why", "message", "fix"):
            assert isinstance(r[k], str) and r[k].strip(), (rid, k)
        assert r["example"]["fails"].strip() and r["example"]["passes"].strip(), rid
        assert r["example"]["fails"] != r["example"]["passes"], rid
        # the text says what the JSON says, wrapped
        for k, h in (("looks_at", "Looks at"), ("why", "Why it matters"),
                     ("message", "Message"), ("fix", "How to fix")):
            assert s[h] == " ".join(r[k].split()), (rid, h, s[h], r[k])
        assert s["Example that fails"] == " ".join(r["example"]["fails"].split()), rid
        assert s["Example that passes"] == " ".join(r["example"]["passes"].split()), rid
        # the pattern examples shown are the ones --self-test verifies
        for pl in r["pattern_examples"]:
            assert pl["match"] and pl["no_match"], (rid, pl)
            for ex in pl["match"] + pl["no_match"]:
                assert ex in s["Pattern examples"], (rid, ex)
        if not r["pattern_examples"]:
            assert "Pattern examples" not in s, rid
    rc, out, err = run("check", "--no-config", "--self-test")
    assert rc == 0, err
    print("  %d rules explained (from --list-rules)" % len(rules))


@test
def names_and_several_rules():
    rules, _ = list_rules()
    by_name = {}
    for rid, f in rules.items():
        by_name.setdefault(f[3], []).append(rid)
    # a name picks every rule of that name, in any case and with '_' for '-'
    for name, ids in by_name.items():
        rc, doc, err = run("explain", "--format", "json", name.upper().replace("-", "_"))
        assert rc == 0, (name, err)
        assert sorted(r["id"] for r in json.loads(doc)["rules"]) == sorted(ids), name
    assert any(len(v) > 1 for v in by_name.values())  # record-mismatch: WG-REC-001, -004
    rc, out, err = run("explain", "WG-ABI-001", "hollow-wheel")
    assert rc == 0 and out.count("\n----\n") == 1, out
    assert out.startswith("WG-ABI-001 ") and "\nWG-HOL-001  hollow-wheel\n" in out


@test
def unknown_rule_one_line_and_closest():
    for word, line in (("WG-ABI-01", "wheelgate explain: no rule 'WG-ABI-01'; did you mean "
                        "'WG-ABI-001'?"),
                       ("wg-hol-01", "wheelgate explain: no rule 'wg-hol-01'; did you mean "
                        "'WG-HOL-001'?"),
                       ("hollow_whel", "wheelgate explain: no rule 'hollow_whel'; did you mean "
                        "'hollow-wheel'?"),
                       ("zzzzzzzzzzzz", "wheelgate explain: no rule 'zzzzzzzzzzzz'")):
        rc, out, err = run("explain", "WG-ABI-001", word)
        assert rc == 2 and out == "", (word, rc, out)
        assert err.splitlines() == [line, "Try 'wheelgate check --list-rules'."], (word, err)
    rc, out, err = run("explain")
    assert rc == 2 and len(err.splitlines()) == 2 and "no rule given" in err, err
    rc, out, err = run("explain", "--format", "yaml", "WG-ABI-001")
    assert rc == 2 and "--format takes text or json" in err, err


USER_RULE = """kind: rules
rules:
  - id: ACME-GPU-1
    check: gpu-no-code
    severity: warning
    title: No GPU code, the ACME way
    message: "{object} carries no GPU code"
    fix: Build it with -gencode.
    patterns: {runtime: ['^libcudart\\\\.so']}
    examples: {runtime: {match: [libcudart.so.12], no_match: [libc.so.6]}}
%s"""


@test
def user_rules_may_leave_explanations_out():
    path = os.path.join(TMP, "acme.yaml")
    with open(path, "w") as f:
        f.write(USER_RULE % "")
    rc, out, err = run("explain", "--rules", path, "acme-gpu-1")
    assert rc == 0, err
    s = sections(out)
    assert s["Looks at"] == "(not given in the rule file)" and s["Why it matters"], s
    assert ("(its rule file does not give: looks_at, why, example.fails, example.passes)"
            in " ".join(out.split())), out
    assert "install profile: warning; publish profile: warning" in s["Severity"]
    rc, doc, err = run("explain", "--rules", path, "--format", "json", "ACME-GPU-1")
    assert rc == 0, err
    validate(doc, SCHEMA, PY)
    r = json.loads(doc)["rules"][0]
    assert r["missing"] == ["looks_at", "why", "example.fails", "example.passes"], r
    assert r["why"] is None and r["example"] == {"fails": None, "passes": None}, r
    # what a user's rule gives is shown; a given field must not be empty
    with open(path, "w") as f:
        f.write(USER_RULE % "    why: Kernels cannot launch.\n")
    rc, doc, err = run("explain", "--rules", path, "--format", "json", "ACME-GPU-1")
    r = json.loads(doc)["rules"][0]
    assert rc == 0 and r["why"] == "Kernels cannot launch." and "why" not in r["missing"], r
    for extra, says in (("    why: ''\n", "needs a text in 'why'"),
                        ("    example: {fails: x}\n", "'example' needs 'passes'"),
                        ("    example: {fails: x, passes: y, sometimes: z}\n",
                         "unknown example field 'sometimes'"),
                        ("    looks_after: x\n", "unknown rule field 'looks_after'")):
        with open(path, "w") as f:
            f.write(USER_RULE % extra)
        rc, out, err = run("explain", "--rules", path, "ACME-GPU-1")
        assert rc == 2 and says in err and "acme.yaml:" in err, (extra, rc, err)


def fired(*args):
    rc, out, err = run("check", "--no-config", "--format", "json", *args)
    assert rc in (0, 1), err
    return {f["rule"] for i in json.loads(out)["inputs"] for f in i["findings"]}


@test
def check_explain_once_per_rule_that_fired():
    ins = [os.path.join(WHEELS, w) for w in ("namemis-1.0-cp312-cp312-linux_x86_64.whl",
                                             "hollow-1.0-py3-none-any.whl",
                                             "linuxold-1.0-cp312-cp312-linux_x86_64.whl")]
    args = ["--profile", "publish", *ins]
    want = fired(*args)
    assert {"WG-TAG-006", "WG-HOL-001", "WG-SYS-003"} <= want, want
    rc, out, err = run("check", "--no-config", "--explain", *args)
    assert rc == 1, err
    report, sep, expl = out.partition("\nRules that produced findings, explained:\n")
    assert sep and "3 inputs:" in report and "explained" not in expl, out[-300:]
    heads = re.findall(r"^(WG-[A-Z0-9]+-\d+)  [a-z0-9-]+$", expl, re.M)
    assert sorted(heads) == heads and set(heads) == want and len(heads) == len(want), heads
    for rid in heads:
        _, one, _ = run("explain", rid)
        assert one in expl, rid
    # without --explain: the report alone, the same
    rc2, plain, _ = run("check", "--no-config", *args)
    assert rc2 == 1 and plain == report, (plain[-200:], report[-200:])
    # JSON stays one document; the explanations go to stderr, as the summary does
    rc, doc, err = run("check", "--no-config", "--explain", "--format", "json", *args)
    assert rc == 1 and json.loads(doc)["schema"] == "wheelgate.check/1"
    assert "Rules that produced findings, explained:" in err and "WG-TAG-006  metadata-name" in err
    # nothing fired: nothing explained
    good = os.path.join(WHEELS, "base-1.0-py3-none-any.whl")
    rc, out, err = run("check", "--no-config", "--explain", "--profile", "install", good)
    assert not fired("--profile", "install", good) and "explained" not in out, out


def make_wheel(path, name, version, meta_name, meta_version, tag="py3-none-any", extra=None,
               unlisted=None, record=True, edit=None):
    """A wheel of a package `name` whose METADATA says meta_name/meta_version and whose
    WHEEL says tag; extra: more members (in RECORD), unlisted: members RECORD does not list,
    edit: members whose content changes after RECORD was written; record: False for none."""
    dist = "%s-%s.dist-info" % (name, version)
    files = {"%s/__init__.py" % name: b"x = 1\n",
             dist + "/METADATA":
             ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (meta_name, meta_version)).encode(),
             dist + "/WHEEL": ("Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: %s\n"
                               % tag).encode()}
    files.update(extra or {})
    rec = dist + "/RECORD"
    rows = []
    with zipfile.ZipFile(path, "w") as z:
        for n, b in files.items():
            h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
            rows.append("%s,sha256=%s,%d" % (n, h, len(b)))
            z.writestr(n, (edit or {}).get(n, b))
        for n, b in (unlisted or {}).items():
            z.writestr(n, b)
        if record:
            z.writestr(rec, "\n".join(rows + [rec + ",,"]) + "\n")


# The prose examples (`example: {fails, passes}`) that this test builds as wheels and checks:
# (rule, words of its `fails` and of its `passes` text that the wheels follow, check's
# arguments, the wheel that fails, the wheel that passes). The words are asserted in the
# explanation, so that an example rewritten without its wheel here fails the test.
def _w(fn, *a, **k):
    return lambda d: (make_wheel(os.path.join(d, fn), *a, **k), os.path.join(d, fn))[1]


BUILT_EXAMPLES = [
    ("WG-TAG-006", "foo-2.0-py3-none-any.whl whose METADATA says Version: 1.0",
     "foo-1.0-py3-none-any.whl whose METADATA says Name: Foo and Version: 1.0",
     ["--profile", "publish"], _w("foo-2.0-py3-none-any.whl", "foo", "2.0", "foo", "1.0"),
     _w("foo-1.0-py3-none-any.whl", "foo", "1.0", "Foo", "1.0")),
    ("WG-REC-001", "A wheel whose foo/__init__.py was edited after the build",
     "The wheel as its build backend wrote it", ["--profile", "publish"],
     _w("foo-1.0-py3-none-any.whl", "foo", "1.0", "foo", "1.0",
        edit={"foo/__init__.py": b"x = 2\n"}),
     _w("foo-1.0-py3-none-any.whl", "foo", "1.0", "foo", "1.0")),
    ("WG-REC-002", "with METADATA and WHEEL but no RECORD", "standard backend (they write RECORD)",
     ["--profile", "publish"], _w("foo-1.0-py3-none-any.whl", "foo", "1.0", "foo", "1.0",
                                  record=False),
     _w("foo-1.0-py3-none-any.whl", "foo", "1.0", "foo", "1.0")),
    ("WG-REC-003", "added foo/patch.so after it was built, without updating RECORD",
     "RECORD lists exactly its members", ["--profile", "publish"],
     _w("foo-1.0-py3-none-any.whl", "foo", "1.0", "foo", "1.0",
        unlisted={"foo/patch.so": b"not really\n"}),
     _w("foo-1.0-py3-none-any.whl", "foo", "1.0", "foo", "1.0")),
    ("WG-TAG-002", "foo-1.0-cp312-cp312-linux_x86_64.whl containing only .py files",
     "a py3-none-any wheel of the .py files", ["--profile", "publish"],
     _w("foo-1.0-cp312-cp312-linux_x86_64.whl", "foo", "1.0", "foo", "1.0",
        tag="cp312-cp312-linux_x86_64"),
     _w("foo-1.0-py3-none-any.whl", "foo", "1.0", "foo", "1.0")),
    ("WG-TAG-005", "foo-1.0-py3-none-manylinux_2_28_x86_64.whl whose WHEEL says Tag: "
     "py3-none-linux_x86_64", "rewrites the filename and WHEEL together", ["--profile", "publish"],
     _w("foo-1.0-py3-none-manylinux_2_28_x86_64.whl", "foo", "1.0", "foo", "1.0",
        tag="py3-none-linux_x86_64"),
     _w("foo-1.0-py3-none-manylinux_2_28_x86_64.whl", "foo", "1.0", "foo", "1.0",
        tag="py3-none-manylinux_2_28_x86_64")),
    ("WG-TAG-007", "foo-1.0-cp311-cp311-linux_x86_64.whl checked with --target python=3.12",
     "foo-1.0-cp312-cp312-linux_x86_64.whl", ["--target", "python=3.12"],
     _w("foo-1.0-cp311-cp311-linux_x86_64.whl", "foo", "1.0", "foo", "1.0",
        tag="cp311-cp311-linux_x86_64"),
     _w("foo-1.0-cp312-cp312-linux_x86_64.whl", "foo", "1.0", "foo", "1.0",
        tag="cp312-cp312-linux_x86_64")),
    ("WG-WHL-001", "a member named ../../etc/cron.d/job",
     "plain relative paths under the package and its .dist-info", ["--profile", "publish"],
     _w("foo-1.0-py3-none-any.whl", "foo", "1.0", "foo", "1.0",
        extra={"../../etc/cron.d/job": b"* * * * * root true\n"}),
     _w("foo-1.0-py3-none-any.whl", "foo", "1.0", "foo", "1.0")),
]


@test
def prose_examples_built_and_checked():
    for rid, fails_words, passes_words, args, bad, good in BUILT_EXAMPLES:
        rc, doc, err = run("explain", "--format", "json", rid)
        ex = json.loads(doc)["rules"][0]["example"]
        assert fails_words in " ".join(ex["fails"].split()), (rid, ex["fails"])
        assert passes_words in " ".join(ex["passes"].split()), (rid, ex["passes"])
        for make, want in ((bad, True), (good, False)):
            path = make(tempfile.mkdtemp(dir=TMP))
            rc, out, err = run("check", "--no-config", "--format", "json", *args, path)
            assert rc in (0, 1), (rid, path, rc, err)
            got = {f["rule"] for i in json.loads(out)["inputs"] for f in i["findings"]}
            assert (rid in got) == want, (rid, os.path.basename(path), want, got)
    print("  %d prose examples built as wheels and checked" % len(BUILT_EXAMPLES))


@test
def metadata_name_message_grammar():
    for mname, mver, what in (("other", "1.0", "name"), ("foo", "1.1", "version"),
                              ("other", "1.1", "name and version")):
        d = tempfile.mkdtemp(dir=TMP)
        w = os.path.join(d, "foo-1.0-py3-none-any.whl")
        make_wheel(w, "foo", "1.0", mname, mver)
        rc, out, err = run("check", "--no-config", "--format", "json", "--profile", "publish", w)
        msgs = [f["message"] for i in json.loads(out)["inputs"] for f in i["findings"]
                if f["rule"] == "WG-TAG-006"]
        assert msgs == ["The filename and METADATA disagree on the %s: the filename says foo "
                        "1.0, METADATA says %s %s" % (what, mname, mver)], (what, msgs)


COMMANDS = ["check", "select", "scan", "matrix", "audit", "inspect", "env", "serve", "gpus",
            "explain"]


@test
def help_command():
    rc, general, err = run("--help")
    assert rc == 0 and general.startswith("usage: wheelgate")
    listed = re.findall(r"^  ([a-z]+) ", general.split("commands:\n")[1], re.M)
    assert sorted(listed) == sorted(COMMANDS), listed
    assert run("help") == (0, general, "")
    for c in COMMANDS:
        rc, out, err = run("help", c)
        assert rc == 0 and out.startswith("usage: wheelgate %s" % c) and not err, (c, rc, err)
        assert run(c, "--help") == (0, out, ""), c
    rc, out, err = run("help", "chekc")
    assert rc == 2 and out == "" and err.splitlines() == [
        "wheelgate: unknown command 'chekc'; did you mean 'check'?", "Try 'wheelgate --help'."]
    rc, out, err = run()
    assert rc == 2 and err.splitlines() == ["wheelgate: no command given",
                                            "Try 'wheelgate --help'."], err


@test
def usage_errors_one_line_and_a_hint():
    no_input = {
        "check": "wheelgate check: no input given (a wheel, an ELF object, a directory or -)",
        "inspect": "wheelgate inspect: no input given (a wheel, an ELF object, a directory or -)",
        "scan": "wheelgate scan: no PATH and no --from list given",
        "select": "wheelgate select: no SOURCE given",
        "matrix": "wheelgate matrix: give the extension wheels",
        "explain": "wheelgate explain: no rule given",
    }
    for c, line in no_input.items():
        rc, out, err = run(c, "--no-config") if c == "check" else run(c)
        lines = err.splitlines()
        assert rc == 2 and len(lines) == 2 and lines[0].startswith(line), (c, rc, err)
        assert lines[1] == "Try 'wheelgate %s --help'." % c and "usage:" not in err, (c, err)
    for c in COMMANDS:
        rc, out, err = run(c, "--frobnicate")
        lines = err.splitlines()
        assert rc == 2 and len(lines) == 2 and "'--frobnicate'" in lines[0], (c, rc, err)
        assert lines[1] == "Try 'wheelgate %s --help'." % c, (c, err)
    for c, typo, near in (("check", "--formt", "--format"), ("inspect", "--jsn", "--json"),
                          ("explain", "--rulez", "--rules"), ("scan", "--resme", "--resume"),
                          ("select", "--projct", "--project"), ("audit", "--onyl", "--only"),
                          ("serve", "--listn", "--listen"), ("env", "--jsn", "--json")):
        rc, out, err = run(c, typo, "x")
        assert rc == 2 and err.splitlines() == [
            "wheelgate %s: unknown option '%s'; did you mean '%s'?" % (c, typo, near),
            "Try 'wheelgate %s --help'." % c], (c, err)
    rc, out, err = run("check", "--format")
    assert rc == 2 and err.splitlines()[0] == "wheelgate check: option '--format' needs a value"


@test
def list_rules_sorted_by_id():
    _, order = list_rules()
    assert order == sorted(order) and len(order) == len(set(order)), order


@test
def no_donot_in_what_is_printed():
    rules, _ = list_rules()
    texts = [run("help", c)[1] for c in COMMANDS] + [run("--help")[1]]
    texts.append(run("explain", *rules)[1])
    for t in texts:
        assert t and not re.search(r"donot|\b(\w+) \1\b", t), re.search(r"donot|\b(\w+) \1\b", t)


if __name__ == "__main__":
    sys.exit(main())

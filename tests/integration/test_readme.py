#!/usr/bin/env python3
"""README.md is the front page (issue 29, point 2): at most 300 lines, every link in it and in
docs/ leads somewhere, every count it states is the program's, and every example it shows is
what the program prints.

- Examples: a ```console block holds `$ COMMAND` lines, each followed by what it prints (stdout
  and stderr together, as a terminal shows them). The command runs in the repository's root
  with the built `wheelgate` first on PATH. A shown line must equal the printed line, except
  that a shown line ending in " ..." need only start the printed line, and a shown line "..."
  stands for any number of printed lines. A command must not fail as a usage error (exit 2).
- Commands in the other blocks: every `--option` given to `wheelgate COMMAND` must be one that
  `wheelgate COMMAND --help` documents, and `python -m wheelgate_pip` subcommands must exist.
- Counts: "The N shipped rules" is the number `wheelgate check --list-rules` lists.

Usage: test_readme.py WHEELGATE REPO_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import main, need_path, test

WG, ROOT = [os.path.abspath(a) for a in sys.argv[1:3]]
README = os.path.join(ROOT, "README.md")
MAX_LINES = 300
FENCE = re.compile(r"^```(\w*)\s*$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def blocks(text):
    """[(language, [lines])] of the fenced blocks of a Markdown text."""
    out, cur, lang = [], None, None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if m and cur is None:
            cur, lang = [], m.group(1)
        elif line.startswith("```") and cur is not None:
            out.append((lang, cur))
            cur = None
        elif cur is not None:
            cur.append(line)
    assert cur is None, "an unclosed ``` block"
    return out


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    text = open(path, encoding="utf-8").read()
    inside, out = False, set()
    for line in text.split("\n"):
        if line.startswith("```"):
            inside = not inside
        elif not inside and line.startswith("#"):
            out.add(slug(line.lstrip("#")))
    return out


def readme():
    return open(README, encoding="utf-8").read()


def matches(shown, printed):
    """Whether the printed lines are what the shown lines say (see the module's doc)."""
    if not shown:
        return not printed
    head = shown[0]
    if head == "...":
        return any(matches(shown[1:], printed[i:]) for i in range(len(printed) + 1))
    if not printed:
        return False
    line = printed[0]
    ok = line.startswith(head[:-4]) if head.endswith(" ...") else line == head
    return ok and matches(shown[1:], printed[1:])


def bin_dir(tmp):
    """A directory holding `wheelgate`, the CLI under test, for PATH."""
    d = os.path.join(tmp, "bin")
    os.mkdir(d)
    os.symlink(WG, os.path.join(d, "wheelgate"))
    return d


@test
def front_page_size():
    n = readme().count("\n")
    assert n <= MAX_LINES, "README.md has %d lines (at most %d)" % (n, MAX_LINES)


@test
def links_lead_somewhere():
    """Every relative link of README.md and docs/*.md names a file that exists, and every
    #anchor a heading of the file it points into."""
    pages = [README] + [os.path.join(ROOT, "docs", f) for f in sorted(os.listdir(
        os.path.join(ROOT, "docs"))) if f.endswith(".md")]
    bad, seen = [], 0
    for page in pages:
        text = open(page, encoding="utf-8").read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target):
                continue
            seen += 1
            path, _, frag = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(full):
                bad.append("%s: %s (no such file)" % (os.path.relpath(page, ROOT), target))
            elif frag and full.endswith(".md") and frag not in anchors(full):
                bad.append("%s: %s (no such heading)" % (os.path.relpath(page, ROOT), target))
    assert seen > 50, seen
    assert not bad, "\n".join(bad)


@test
def rule_count_is_the_programs():
    p = subprocess.run([WG, "check", "--no-config", "--list-rules"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    ids = [l.split()[0] for l in p.stdout.splitlines() if l.startswith("WG-")]
    assert len(ids) > 10, p.stdout
    m = re.findall(r"The (\d+) shipped rules", readme())
    assert m, "README.md states no rule count ('The N shipped rules')"
    for n in m:
        assert int(n) == len(ids), "README.md says %s shipped rules, --list-rules lists %d" % (
            n, len(ids))


@test
def examples_print_what_they_show():
    need_path(os.path.join(ROOT, "..", "shared", "corpus", "wheels"), "the corpus")
    shown = [b for lang, b in blocks(readme()) if lang == "console"]
    assert shown, "README.md shows no example"
    tmp = tempfile.mkdtemp(prefix="wg-readme-")
    try:
        env = dict(os.environ, PATH=bin_dir(tmp) + os.pathsep + os.environ["PATH"])
        ran = 0
        for block in shown:
            cmds = [i for i, l in enumerate(block) if l.startswith("$ ")]
            assert cmds and cmds[0] == 0, "a console block that does not start with $: %r" % block
            for k, i in enumerate(cmds):
                end = cmds[k + 1] if k + 1 < len(cmds) else len(block)
                cmd, want = block[i][2:], block[i + 1:end]
                p = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=env, timeout=300,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                got = p.stdout.decode("utf-8", "replace").rstrip("\n").split("\n")
                assert p.returncode not in (2, 126, 127), "%s: exit %d\n%s" % (
                    cmd, p.returncode, "\n".join(got))
                assert any(l != "..." for l in want), "%s: README shows nothing of it" % cmd
                assert matches(want, got), "%s\nREADME shows:\n%s\nit prints:\n%s" % (
                    cmd, "\n".join(want), "\n".join(got))
                ran += 1
        print("  %d examples of README.md print what it shows" % ran)
    finally:
        shutil.rmtree(tmp)


def helps(cmd, cache={}):
    if cmd not in cache:
        p = subprocess.run([WG, cmd, "--help"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, "wheelgate %s --help: exit %d %s" % (cmd, p.returncode,
                                                                       p.stderr)
        cache[cmd] = p.stdout
    return cache[cmd]


@test
def commands_use_options_that_exist():
    seen, bad = 0, []
    text = readme()
    for lang, block in blocks(text):
        for line in block:
            line = line[2:] if line.startswith("$ ") else line
            for m in re.finditer(r"(?:^|[\s\"(|;&])wheelgate (\w+)((?: +[^|;&#)\"]*)?)", line):
                cmd, rest = m.group(1), m.group(2)
                if cmd in ("check", "inspect", "audit", "scan", "select", "matrix", "serve",
                           "env", "gpus", "explain"):
                    for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
                        seen += 1
                        if opt not in helps(cmd):
                            bad.append("wheelgate %s %s" % (cmd, opt))
                elif cmd not in ("help",):
                    bad.append("wheelgate %s: no such command" % cmd)
    for sub in re.findall(r"python -m wheelgate_pip (\w+)", text):
        seen += 1
        if sub not in ("enable", "disable", "status", "install", "wheel"):
            bad.append("python -m wheelgate_pip %s" % sub)
    assert seen >= 10, seen
    assert not bad, "README.md uses what the program lacks:\n" + "\n".join(bad)


@test
def matcher_refuses_what_differs():
    """The comparison can fail: a changed line, a missing line and an extra line all do."""
    printed = ["PASS a", "FAIL b", "  error[X] y", "summary"]
    assert matches(["PASS a", "...", "summary"], printed)
    assert matches(["PASS a", "FAIL b", "  error[X] ...", "summary"], printed)
    assert not matches(["PASS a", "FAIL c", "...", "summary"], printed)
    assert not matches(["PASS a", "FAIL b", "summary"], printed)
    assert not matches(["PASS a", "...", "summary", "more"], printed)
    assert not matches(["PASS a ...", "FAIL b"], printed)


sys.exit(main())

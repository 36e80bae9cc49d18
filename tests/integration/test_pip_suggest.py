#!/usr/bin/env python3
"""The pip gate's suggestion (issue 28, point 2): a real pypiserver on loopback holds variants
of one release (tests/fixtures/gen-variants.py's flashy 1.0), a venv holds the stand-in torch
2.11.0 (C++11 ABI, CUDA 13) of the variants' env211. pip picks, by its own order (the greatest
local label), a variant built for torch 2.12; the gate refuses it, and the refusal names the
variant that `wheelgate select` finds works here, with the command that installs it. That
command, run through the gate, installs it, and `import torch, flashy` really works; the
refused variant, installed without the gate, really fails to import.

Also: --wheelgate-no-suggest (and in $WHEELGATE_PIP_ARGS) says nothing more than the
refusal; an index whose page is gone after pip read it (a loopback server that answers the
page once, then 404) leaves the refusal and one line saying why there is no suggestion; a
timeout too short says it ran out; a page where no variant works says so in one line.

With $WG_TEST_PIP_WHEEL (a pip wheel of ../shared/tools/pip) the venv gets that pip instead
of Debian's, as test_pip.py does. No gated command may print pip 26.2's "Unexpected import".

Usage: test_pip_suggest.py HOOKS_DIR LIBWHEELGATE FIXTURES [PYTHON]
"""
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse

from harness import Missing, main, need_path, test  # noqa: E402
from serve_util import PYPISERVER, PyPIServer  # noqa: E402

HOOKS, LIB, FIX = [os.path.abspath(a) for a in sys.argv[1:4]]
PY = sys.argv[4] if len(sys.argv) > 4 else "/usr/bin/python3"
V = os.path.join(FIX, "variants")
HERE = os.path.dirname(os.path.abspath(__file__))
SYSENV = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
PIPWHL = os.environ.get("WG_TEST_PIP_WHEEL")
TMP = tempfile.mkdtemp(prefix="wg-pip-suggest-")
STATE = {}


def variants():
    need_path(os.path.join(V, "variants.json"), "the select variants (gen-variants.py)")
    return json.load(open(os.path.join(V, "variants.json")))


def works(v, torch="2.11"):
    """Whether variant v loads with env211's torch, from how it was built (no GPU given)."""
    minor = "3.%d" % int(STATE["minor"])
    return v["python"] == minor and v["torch"][:4] == torch and v["cxx11abi"] == 1 and v["cuda"] == 13


def pick(label):
    """The cp3X variant of flashy 1.0 with that local label."""
    minor = STATE["minor"]
    for v in variants():
        if v["version"] == "1.0" and v["label"] == label and v["python"] == "3.%s" % minor:
            return v
    raise AssertionError("no variant 1.0+%s for python 3.%s" % (label, minor))


def env(extra=None, drop=()):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "WHEELGATE_PIP"))}
    e.update({"PYTHONPATH": HOOKS, "WHEELGATE_LIB": LIB, "PIP_CONFIG_FILE": os.devnull,
              "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1",
              "XDG_CACHE_HOME": os.path.join(TMP, "cache"), "PYTHONDONTWRITEBYTECODE": "1"})
    e.update(extra or {})
    for k in drop:
        e.pop(k, None)
    return e


def ran(p):
    assert "Unexpected import" not in p.stderr, p.stderr[-3000:]
    return p


def venv(name):
    """A venv (this pip) with env211's stand-in torch 2.11.0 in its site-packages."""
    if not os.path.exists(PY):
        raise Missing("no %s" % PY)
    if "template" not in STATE:
        t = os.path.join(TMP, "template")
        args = ["--without-pip"] if PIPWHL else []
        if PIPWHL:
            need_path(PIPWHL, "the pip wheel (../shared/tools/pip)")
        p = subprocess.run([PY, "-m", "venv", *args, t], capture_output=True, text=True)
        if p.returncode != 0:
            raise Missing("python3 -m venv failed (install python3-venv): " + p.stderr[-300:])
        if PIPWHL:
            p = subprocess.run([os.path.join(t, "bin", "python"), os.path.join(PIPWHL, "pip"),
                                "install", "-q", "--no-index", PIPWHL], capture_output=True,
                               text=True, env=env({"PYTHONPATH": ""}))
            assert p.returncode == 0, p.stderr
        site = subprocess.run([os.path.join(t, "bin", "python"), "-c",
                               "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True).stdout.strip()
        minor = site.split("/python3.")[1].split("/")[0]
        STATE["minor"] = minor
        src = os.path.join(V, "env211", "lib", "python3.%s" % minor, "site-packages")
        need_path(src, "env211 for python 3.%s (gen-variants.py runs with the same python)"
                  % minor)
        for n in os.listdir(src):
            if n.startswith("torch"):
                shutil.copytree(os.path.join(src, n), os.path.join(site, n), symlinks=True)
        STATE["template"] = t
    path = os.path.join(TMP, name)
    shutil.copytree(STATE["template"], path, symlinks=True)
    want = os.path.basename(PIPWHL).split("-")[1] if PIPWHL else None
    got = subprocess.run([os.path.join(path, "bin", "python"), "-c",
                          "import pip; print(pip.__version__)"], capture_output=True,
                         text=True, env=env({"PYTHONPATH": ""})).stdout.strip()
    assert got and (want is None or got == want), (want, got)
    p = imports(path, "torch")
    assert p.returncode == 0, p.stderr
    return path


def imports(v, what):
    return subprocess.run([os.path.join(v, "bin", "python"), "-c", "import " + what],
                          capture_output=True, text=True, env=env({"PYTHONPATH": ""}),
                          timeout=120)


def gated(v, *args, extra=None, drop=()):
    return ran(subprocess.run([os.path.join(v, "bin", "python"), "-m", "wheelgate_pip", *args],
                              capture_output=True, text=True, env=env(extra, drop),
                              timeout=600))


def installed(v, name):
    site = subprocess.run([os.path.join(v, "bin", "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True).stdout.strip()
    return any(e == name or e.startswith(name + "-") for e in os.listdir(site))


class PyPI(PyPIServer):
    """../shared/tools/pypiserver serving copies of the given wheels on 127.0.0.1."""

    def __init__(self, files):
        need_path(PYPISERVER, "pypiserver (../shared/tools/pypiserver)")
        d = tempfile.mkdtemp(dir=TMP)
        for f in files:
            shutil.copyfile(os.path.join(V, "wheels", f), os.path.join(d, f))
        super().__init__(d)


class OncePage:
    """A loopback index whose project page answers once (pip's read), then 404: the index
    gone after pip resolved. Its files are always served."""

    def __init__(self, files):
        self.files = {f: open(os.path.join(V, "wheels", f), "rb").read() for f in files}
        self.page_gets = 0
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                path = urllib.parse.unquote(self.path.split("?")[0])
                if path == "/simple/flashy/":
                    outer.page_gets += 1
                    if outer.page_gets > 1:
                        return self.answer(404, b"gone", "text/plain")
                    links = "".join('<a href="../../packages/%s#sha256=%s">%s</a>\n' % (
                        urllib.parse.quote(f), hashlib.sha256(d).hexdigest(), f)
                        for f, d in outer.files.items())
                    return self.answer(200, ("<html><body>%s</body></html>" % links).encode(),
                                       "text/html")
                name = path.rsplit("/", 1)[-1]
                if path.startswith("/packages/") and name in outer.files:
                    return self.answer(200, outer.files[name], "application/octet-stream")
                return self.answer(404, b"no", "text/plain")

            def answer(self, code, body, ctype):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path="/simple/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def install_from(v, index, *args, extra=None, drop=()):
    return gated(v, "install", "--no-deps", "--index-url", index.url(), *args, "flashy==1.0",
                 extra=extra, drop=drop)


def suggestion_lines(stderr):
    return [line for line in stderr.splitlines()
            if "has a variant that works here" in line or "no suggestion" in line
            or "no variant of" in line or "no other variant" in line]


def blocked_file(stderr):
    line = [l for l in stderr.splitlines() if "wheelgate blocked the install:" in l]
    assert line, stderr[-3000:]
    return line[0].split("wheelgate blocked the install: ")[1].split(" (")[0]


def three():
    """The working variant and two that do not work with torch 2.11.0 whose local labels
    pip ranks higher (2.12 > 2.11 as labels compare) or alike."""
    good = pick("cu13torch2.11cxx11abiTRUE")
    bad = [pick("cu13torch2.12cxx11abiTRUE"), pick("cu13torch2.11cxx11abiFALSE")]
    assert works(good) and not any(works(b) for b in bad), (good, bad)
    return good, bad


@test
def the_refusal_names_the_variant_that_works_and_its_command_installs_it():
    v = venv("s1")
    good, bad = three()
    index = PyPI([good["file"]] + [b["file"] for b in bad])
    try:
        p = install_from(v, index)
        assert p.returncode != 0 and "wheelgate blocked the install" in p.stderr, p.stderr[-3000:]
        refused = blocked_file(p.stderr)
        # pip's own choice was a broken variant (the test's premise)
        assert refused in [b["file"] for b in bad], (refused, p.stderr[-3000:])
        assert not installed(v, "flashy"), "a refused install left flashy installed"
        lines = [l for l in p.stderr.splitlines() if "has a variant that works here: " in l]
        assert len(lines) == 1, p.stderr[-3000:]
        assert lines[0].startswith("wheelgate: flashy 1.0 has a variant that works here: "), lines
        url = lines[0].split("works here: ", 1)[1].strip()
        assert url.startswith(index.url("/")), url
        assert urllib.parse.unquote(url.rsplit("/", 1)[1].split("#")[0]) == good["file"], url
        cmd = p.stderr.splitlines()[p.stderr.splitlines().index(lines[0]) + 1]
        assert cmd == "  pip install '%s'" % url, (cmd, p.stderr[-2000:])
        # --dry-run says the same
        d = install_from(v, index, "--dry-run")
        assert d.returncode != 0 and "wheelgate would block the install" in d.stderr, \
            d.stderr[-3000:]
        assert lines[0] in d.stderr.splitlines(), d.stderr[-3000:]
        # the command, through the gate: installs, and the import really works
        q = gated(v, "install", "--no-deps", url)
        assert q.returncode == 0 and "nothing blocks" in q.stderr, q.stderr[-3000:]
        r = imports(v, "torch, flashy")
        assert r.returncode == 0, r.stderr[-2000:]
        # what the gate refused, installed without it: the import really fails
        w = venv("s1-ungated")
        q = gated(w, "install", "--no-deps", "--index-url", index.url(), "flashy==1.0",
                  extra={"WHEELGATE_PIP": "off"})
        assert q.returncode == 0, q.stderr[-2000:]
        r = imports(w, "torch, flashy")
        assert r.returncode != 0 and ("undefined symbol" in r.stderr or "ImportError" in r.stderr), \
            r.stderr[-2000:]
    finally:
        index.stop()


@test
def no_suggest_switch():
    v = venv("s2")
    good, bad = three()
    index = PyPI([good["file"]] + [b["file"] for b in bad])
    try:
        p = install_from(v, index, "--wheelgate-no-suggest")
        assert p.returncode != 0 and "wheelgate blocked the install" in p.stderr, p.stderr[-3000:]
        assert suggestion_lines(p.stderr) == [], p.stderr[-3000:]
        p = install_from(v, index, extra={"WHEELGATE_PIP_ARGS": "--wheelgate-no-suggest"})
        assert p.returncode != 0 and "wheelgate blocked the install" in p.stderr, p.stderr[-3000:]
        assert suggestion_lines(p.stderr) == [], p.stderr[-3000:]
        # and without it, the same install does suggest (the switch is what made the difference)
        p = install_from(v, index)
        assert any("has a variant that works here" in l for l in suggestion_lines(p.stderr)), \
            p.stderr[-3000:]
    finally:
        index.stop()


@test
def a_page_gone_after_pip_read_it_leaves_the_refusal_and_says_why():
    v = venv("s3")
    good, bad = three()
    index = OncePage([good["file"]] + [b["file"] for b in bad])
    try:
        p = install_from(v, index)
        assert index.page_gets >= 2, index.page_gets  # pip's read, then select's
        assert p.returncode != 0 and "wheelgate blocked the install" in p.stderr, p.stderr[-3000:]
        assert blocked_file(p.stderr) in [b["file"] for b in bad], p.stderr[-3000:]
        lines = suggestion_lines(p.stderr)
        assert len(lines) == 1 and lines[0].startswith("wheelgate: no suggestion for flashy 1.0: "
                                                       "wheelgate select over "), p.stderr[-3000:]
        assert "failed (exit 2)" in lines[0] and "404" in lines[0], lines
        assert not installed(v, "flashy")
    finally:
        index.stop()


@test
def a_timeout_too_short_says_it_ran_out():
    v = venv("s4")
    good, bad = three()
    index = PyPI([good["file"]] + [b["file"] for b in bad])
    try:
        p = install_from(v, index, "--wheelgate-suggest-timeout", "0.001")
        assert p.returncode != 0 and "wheelgate blocked the install" in p.stderr, p.stderr[-3000:]
        lines = suggestion_lines(p.stderr)
        assert len(lines) == 1 and "--wheelgate-suggest-timeout" in lines[0], p.stderr[-3000:]
        assert "did not finish within 0.001 s" in lines[0] or "ran out" in lines[0], lines
        p = install_from(v, index, "--wheelgate-suggest-timeout", "soon")
        assert p.returncode != 0 and "--wheelgate-suggest-timeout takes seconds" in p.stderr, \
            p.stderr[-2000:]
    finally:
        index.stop()


@test
def none_works_says_so_in_one_line():
    v = venv("s5")
    _, bad = three()
    index = PyPI([b["file"] for b in bad])
    try:
        p = install_from(v, index)
        assert p.returncode != 0 and "wheelgate blocked the install" in p.stderr, p.stderr[-3000:]
        lines = suggestion_lines(p.stderr)
        assert lines == ["wheelgate: no variant of flashy 1.0 on %s works here (2 judged by "
                         "wheelgate select)" % index.url("/simple/flashy/")], p.stderr[-3000:]
    finally:
        index.stop()


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(TMP, ignore_errors=True)

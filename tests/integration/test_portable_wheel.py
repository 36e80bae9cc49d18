#!/usr/bin/env python3
"""The self-contained manylinux wheel (issue 29, point 1; docs/install.md), built by
`cmake --build build-wheel --target python-wheel` with -DWG_PORTABLE=ON: it is tagged
manylinux_2_34 or older; its RECORD matches its files; wheelgate's publish profile passes it
with the platform policy rules judging it (and a copy tagged older than its content fails);
pip installs it offline into a fresh venv of /usr/bin/python3, and there, with
LD_LIBRARY_PATH empty and LD_DEBUG=libs,files, the console script and `python -m wheelgate`
check wheels, the binding checks one, the pip gate (enabled in the venv) blocks a broken
wheel and installs a good one, `wheelgate select` reads a local index through the fetch
module (libcurl, libxml2) and `wheelgate serve` answers a check: every library loaded on behalf of wheelgate's objects
(LD_DEBUG's "needed by" / "dynamically loaded by") is a file of the installed wheel, or one
of the C and C++ runtime (glibc's libraries, libstdc++, libgcc_s: the `families` of
rules/platform/manylinux.yaml) that the wheel's manylinux policy allows from the system.

Usage: test_portable_wheel.py SOURCE_DIR WHEEL|DIST_DIR
"""
import base64
import contextlib
import csv
import functools
import glob
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zipfile

from harness import main, test  # noqa: E402

SRC, WHEEL = [os.path.abspath(a) for a in sys.argv[1:3]]
if os.path.isdir(WHEEL):  # the dist/ folder of the build: its one wheel
    _found = glob.glob(os.path.join(WHEEL, "wheelgate-*.whl"))
    if len(_found) != 1:
        sys.exit("test_portable_wheel.py: %s holds %d wheels, not one (cmake --build build-wheel "
                 "--target python-wheel)" % (WHEEL, len(_found)))
    WHEEL = _found[0]
sys.path.insert(0, os.path.join(SRC, "scripts"))
import wheel_vendor  # noqa: E402  (reads rules/platform/manylinux.yaml)

TMP = tempfile.mkdtemp(prefix="wg-portable-")
PY = "/usr/bin/python3"
STATE = {}
TAG_RE = re.compile(r"-py3-none-(manylinux_2_(\d+)_x86_64)\.whl$")


def env(extra=None):
    e = {k: v for k, v in os.environ.items()
         if k not in ("WHEELGATE_LIB", "PYTHONPATH", "WG_PYTHON", "PIP_CONFIG_FILE", "VIRTUAL_ENV",
                      "LD_PRELOAD")}
    e.update({"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1", "LD_LIBRARY_PATH": ""})
    e.update(extra or {})
    return e


def run(cmd, extra=None, cwd=None, timeout=600):
    return subprocess.run(cmd, capture_output=True, text=True, env=env(extra), cwd=cwd or TMP,
                          timeout=timeout)


def make_wheel(name, files):
    di = "%s-1.0.dist-info" % name
    files = dict(files)
    files[di + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name).encode()
    files[di + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    rows = ["%s,sha256=%s,%d" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest())
                                 .rstrip(b"=").decode(), len(d)) for n, d in files.items()]
    path = os.path.join(TMP, "%s-1.0-py3-none-any.whl" % name)
    with zipfile.ZipFile(path, "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
        z.writestr(di + "/RECORD", "\n".join(rows + [di + "/RECORD,,"]) + "\n")
    return path


def good_wheel():
    return make_wheel("purepkg", {"purepkg/__init__.py": b"VALUE = 1\n"})


def broken_wheel():
    # imports a compiled module the wheel does not hold: WG-HOL-001, an error
    return make_wheel("hollowpkg", {"hollowpkg/__init__.py": b"from . import _hollow_cuda\n"})


def policy():
    m = TAG_RE.search(os.path.basename(WHEEL))
    assert m, "not a manylinux_2_X_x86_64 wheel: %s" % WHEEL
    policies = {p["name"]: p for p in wheel_vendor.load_policies(
        os.path.join(SRC, "rules", "platform", "manylinux.yaml"))}
    return policies[m.group(1)[:-len("_x86_64")]]


def installed():
    """(venv, python, site-packages, {real path: wheel path} of the installed wheel's files)"""
    if "venv" not in STATE:
        v = os.path.join(TMP, "venv")
        p = run([PY, "-m", "venv", v])
        assert p.returncode == 0, p.stderr
        py = os.path.join(v, "bin", "python")
        p = run([py, "-m", "pip", "install", "--no-index", "--no-deps", WHEEL])
        assert p.returncode == 0, p.stdout + p.stderr
        site = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"]).stdout.strip()
        rec = glob.glob(os.path.join(site, "wheelgate-*.dist-info", "RECORD"))
        assert len(rec) == 1, rec
        files = {}
        for row in csv.reader(open(rec[0])):
            if row and not row[0].endswith(".pyc"):
                files[os.path.realpath(os.path.join(site, row[0]))] = row[0]
        STATE["venv"] = (v, py, site, files)
    return STATE["venv"]


def traced(cmd, name, extra=None, cwd=None, timeout=600, background=None):
    """Runs cmd with LD_DEBUG=libs,files into TMP/ld-NAME/ (a file per process); with
    background (a file for its stderr), starts it and returns the process."""
    d = os.path.join(TMP, "ld-" + name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    e = {"LD_DEBUG": "libs,files", "LD_DEBUG_OUTPUT": os.path.join(d, "trace")}
    e.update(extra or {})
    if background:
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=background,
                                env=env(e), cwd=cwd or TMP), d
    return run(cmd, e, cwd, timeout), d


LINE_NEED = re.compile(r"file=(\S+) \[\d+\];\s+(?:needed by|dynamically loaded by) (\S+) \[")
LINE_FIND = re.compile(r"find library=(\S+) \[\d+\]; searching")
LINE_TRY = re.compile(r"trying file=(\S+)")
LINE_MAP = re.compile(r"file=(\S+) \[\d+\];\s+generating link map")


def loads(d):
    """[(name, path or None, requester)] of every load LD_DEBUG saw, per process."""
    out = []
    for f in sorted(glob.glob(os.path.join(d, "trace.*"))):
        loaded, events, cand = {}, [], None
        for line in open(f, errors="replace"):
            m = LINE_NEED.search(line)
            if m:
                events.append((m.group(1), m.group(2)))
                continue
            m = LINE_FIND.search(line)
            if m:
                cand = None
                continue
            m = LINE_TRY.search(line)
            if m:
                cand = m.group(1)
                continue
            m = LINE_MAP.search(line)
            if m:
                path = m.group(1) if "/" in m.group(1) else cand
                if path:
                    path = os.path.realpath(path)
                    loaded[m.group(1)] = loaded[os.path.basename(path)] = path
        for name, req in events:
            out.append((name, loaded.get(name) or loaded.get(os.path.basename(name)),
                        os.path.realpath(req) if "/" in req else req))
    return out


def judge(d, must_load=()):
    """Every load on behalf of the wheel's objects is a file of the wheel or one the policy
    allows from the system; returns (loads seen, on behalf of the wheel, from the wheel,
    from the system). must_load: patterns of the base names of wheel files that must have been
    loaded (or, for an executable, have loaded libraries). A library already loaded (libc in
    a Python process) is not traced again: LD_DEBUG names a requester only for new loads."""
    _, _, site, files = installed()
    allowed = (policy()["whitelist"] & wheel_vendor.runtime_libraries(
        os.path.join(SRC, "rules", "platform", "manylinux.yaml"))) | {"ld-linux-x86-64.so.2"}
    every = loads(d)
    assert every, "LD_DEBUG wrote nothing under %s" % d
    # A main program is named as it was started (argv[0]): wheelgate-serve, exec'd by the
    # CLI, is "wheelgate"; a requester without a path that is the name of a file of the
    # wheel is taken for that file.
    names = {os.path.basename(w): w for w in files.values()}
    files = dict(files, **{n: w for n, w in names.items()})
    ours = [(n, p, r) for n, p, r in every if r in files]
    bad, inside, outside = [], set(), set()
    for name, path, req in ours:
        if path is None:
            bad.append("%s (needed by %s): not found" % (name, files[req]))
        elif path in files:
            inside.add(files[path])
        elif os.path.basename(name) in allowed and not path.startswith(site):
            outside.add(path)
        else:
            bad.append("%s (needed by %s) loaded from %s" % (name, files[req], path))
    assert not bad, "loads the wheel's policy does not allow:\n  " + "\n  ".join(sorted(set(bad)))
    seen = {os.path.basename(p) for _, p, _ in every if p in files} | \
        {os.path.basename(r) for _, _, r in ours}
    for n in must_load:
        assert any(re.fullmatch(n, s) for s in seen), "%s was not loaded from the wheel: %s" % (n, sorted(seen))
    print("    %s: %d loads traced, %d on behalf of the wheel's objects: %d files of the wheel, "
          "system: %s" % (os.path.basename(d), len(every), len(ours), len(inside),
                          ", ".join(sorted(os.path.basename(p) for p in outside))))
    return len(every), len(ours), inside, outside


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def index_server(root, cert=None):
    """An HTTP(S) server of the folder root on 127.0.0.1; yields its port."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    if cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*cert)
        httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()


@test
def the_wheel_is_manylinux_2_34_or_older_and_its_record_is_right():
    m = TAG_RE.search(os.path.basename(WHEEL))
    assert m and int(m.group(2)) <= 34, "tag of %s" % os.path.basename(WHEEL)
    with zipfile.ZipFile(WHEEL) as z:
        names = [i.filename for i in z.infolist()]
        rec = [n for n in names if n.endswith(".dist-info/RECORD")]
        assert len(rec) == 1, rec
        rows = {r[0]: r[1:] for r in csv.reader(io.StringIO(z.read(rec[0]).decode())) if r}
        assert set(rows) == set(names), set(rows) ^ set(names)
        for n in names:
            if n == rec[0]:
                continue
            data = z.read(n)
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert rows[n] == [want, str(len(data))], (n, rows[n])
        libs = [n for n in names if n.startswith("wheelgate.libs/")]
        assert libs and all(re.fullmatch(r"wheelgate\.libs/[^/]+-[0-9a-f]{8}\.so(\.\S+)?", n) for n in libs), libs
        assert any(n.startswith("wheelgate.libs/libzip-") for n in libs), libs
        wheel = z.read([n for n in names if n.endswith(".dist-info/WHEEL")][0]).decode()
        assert "Tag: py3-none-%s\n" % m.group(1) in wheel, wheel


@test
def the_statically_linked_libraries_export_nothing():
    """libwheelgate.so.0 is loaded into Python processes that also load the system's libcrypto,
    libz, ...: the archives linked into it (--exclude-libs,ALL) define no dynamic symbol."""
    _, _, site, files = installed()
    foreign = re.compile(r"^(EVP_|OPENSSL_|SSL_|CRYPTO_|SHA\d|ERR_|BIO_|inflate|deflate|crc32|adler32|"
                         r"zlibVersion|gz|ZSTD_|LZ4|libdeflate_|pcre2_|yaml_|json_|bfd_|csv_|sframe_)")
    libs = [p for p, w in files.items() if w.startswith("wheelgate/_native/") and
            (w.endswith(".so") or ".so." in w)]
    assert len(libs) >= 3, libs
    for lib in libs:
        p = run(["nm", "-D", "--defined-only", lib])
        assert p.returncode == 0, p.stderr
        syms = [ln.split()[-1] for ln in p.stdout.splitlines() if ln.strip()]
        bad = [x for x in syms if foreign.match(x)]
        assert not bad, (files[lib], bad[:20])
        if files[lib].endswith("libwheelgate.so.0"):
            assert syms and all(x.startswith("wg_") for x in syms), [x for x in syms if not x.startswith("wg_")]


@test
def the_publish_profile_passes_it_and_its_policy_rules_judge_it():
    _, _, site, _ = installed()
    cli = os.path.join(site, "wheelgate", "_native", "bin", "wheelgate")
    p = run([cli, "check", "--no-config", "--profile", "publish", "--format", "json", WHEEL])
    doc = json.loads(p.stdout)
    i = doc["inputs"][0]
    assert p.returncode == 0 and i["verdict"] == "pass" and i["counts"]["error"] == 0, (p.returncode, p.stdout[-3000:], p.stderr)
    skipped = {n["rule"] for n in i["not_applied"]}
    assert not skipped & {"WG-SYS-002", "WG-SYS-003", "WG-SYS-004"}, skipped
    # The same content tagged manylinux_2_17: the policy rules find the newer glibc needs.
    old = os.path.join(TMP, TAG_RE.sub("-py3-none-manylinux_2_17_x86_64.whl", os.path.basename(WHEEL)))
    shutil.copy(WHEEL, old)
    p = run([cli, "check", "--no-config", "--profile", "publish", "--format", "json", old])
    doc = json.loads(p.stdout)
    ids = {f["rule"] for f in doc["inputs"][0]["findings"]}
    assert p.returncode != 0 and "WG-SYS-002" in ids, (p.returncode, ids)


@test
def the_cli_and_python_m_check_load_only_the_wheel_and_allowed_libraries():
    v, py, site, _ = installed()
    good = good_wheel()
    p, d = traced([os.path.join(v, "bin", "wheelgate"), "check", "--no-config", good, WHEEL], "cli")
    assert p.returncode == 0 and "PASS" in p.stdout, (p.returncode, p.stdout, p.stderr[-2000:])
    judge(d, must_load=[r"libwheelgate\.so\.0", r"libzip-[0-9a-f]{8}\.so\.4"])
    p, d = traced([py, "-m", "wheelgate", "check", "--no-config", broken_wheel()], "python-m")
    assert p.returncode != 0 and "WG-HOL-001" in p.stdout, (p.returncode, p.stdout, p.stderr[-2000:])
    judge(d, must_load=[r"libwheelgate\.so\.0"])
    # pyproject.toml in the working directory: the TOML module is loaded
    proj = os.path.join(TMP, "proj")
    os.makedirs(proj, exist_ok=True)
    open(os.path.join(proj, "pyproject.toml"), "w").write('[tool.wheelgate]\nformat = "json"\n')
    p, d = traced([os.path.join(v, "bin", "wheelgate"), "check", good], "toml", cwd=proj)
    assert p.returncode == 0 and json.loads(p.stdout)["inputs"], (p.returncode, p.stdout, p.stderr[-2000:])
    judge(d, must_load=[r"wheelgate-toml\.so"])


@test
def the_binding_checks_a_wheel_in_process():
    _, py, _, _ = installed()
    code = ("import sys, wheelgate\n"
            "with wheelgate.Checker() as c:\n"
            "    r = c.check([sys.argv[1], sys.argv[2]])\n"
            "print(wheelgate.__file__)\n"
            "print([x.verdict for x in r.reports], r.blocking)\n")
    p, d = traced([py, "-c", code, good_wheel(), broken_wheel()], "binding")
    assert p.returncode == 0 and "['pass', 'fail'] True" in p.stdout, (p.stdout, p.stderr[-2000:])
    judge(d, must_load=[r"libwheelgate\.so\.0", r"libjansson-[0-9a-f]{8}\.so\.4"])


@test
def the_pip_gate_enabled_in_the_venv_blocks_a_broken_wheel_and_installs_a_good_one():
    v, py, site, _ = installed()
    p = run([py, "-m", "wheelgate_pip", "enable"], {"WHEELGATE_PIP": ""})
    assert p.returncode == 0, p.stderr
    try:
        p, d = traced([py, "-m", "pip", "install", "--no-deps", broken_wheel()], "gate-broken",
                      {"WHEELGATE_PIP": ""})
        assert p.returncode != 0 and "WG-HOL-001" in p.stderr, (p.returncode, p.stderr[-3000:])
        assert not os.path.exists(os.path.join(site, "hollowpkg")), "installed anyway"
        judge(d, must_load=[r"libwheelgate\.so\.0"])
        p, d = traced([py, "-m", "pip", "install", "--no-deps", good_wheel()], "gate-good",
                      {"WHEELGATE_PIP": ""})
        assert p.returncode == 0 and os.path.isdir(os.path.join(site, "purepkg")), p.stderr[-3000:]
        judge(d, must_load=[r"libwheelgate\.so\.0"])
    finally:
        run([py, "-m", "wheelgate_pip", "disable"])


@test
def select_reads_an_index_through_the_fetch_module_and_serve_answers_a_check():
    v, _, _, _ = installed()
    cli = os.path.join(v, "bin", "wheelgate")
    # A PEP 503 page (declared ISO-8859-1, with a byte that is not UTF-8) and its wheel on a
    # local HTTP server: the fetch module reads the page with the wheel's libcurl and libxml2
    # (libxml2 converts through glibc's iconv; ICU's stand-in is loaded, never needed).
    root = os.path.join(TMP, "index")
    os.makedirs(os.path.join(root, "simple", "purepkg"), exist_ok=True)
    os.makedirs(os.path.join(root, "files"), exist_ok=True)
    good = good_wheel()
    shutil.copy(good, os.path.join(root, "files"))
    sha = hashlib.sha256(open(good, "rb").read()).hexdigest()
    page = ('<!DOCTYPE html><html><head><meta charset="iso-8859-1"><title>purepkg \xe9</title>'
            '</head><body><a href="../../files/%s#sha256=%s">%s</a></body></html>\n'
            % (os.path.basename(good), sha, os.path.basename(good)))
    open(os.path.join(root, "simple", "purepkg", "index.html"), "wb").write(page.encode("latin-1"))
    with index_server(root) as port:
        url = "http://127.0.0.1:%d/simple/purepkg/" % port
        p, d = traced([cli, "select", "--project", "purepkg", url], "fetch")
    want = "http://127.0.0.1:%d/files/%s" % (port, os.path.basename(good))
    assert p.returncode == 0 and p.stdout.strip() == want, (p.returncode, p.stdout, p.stderr[-2000:])
    judge(d, must_load=[r"wheelgate-fetch\.so", r"libcurl-[0-9a-f]{8}\.so\.4",
                        r"libxml2-[0-9a-f]{8}\.so\.2", r"libicuuc-[0-9a-f]{8}\.so\.\d+"])
    log = os.path.join(TMP, "serve.err")
    with open(log, "w") as err:
        srv, d = traced([cli, "serve", "--listen", "127.0.0.1:0"], "serve", background=err)
    try:
        port = None
        for _ in range(300):
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", open(log).read())
            if m or srv.poll() is not None:
                port = m and m.group(1)
                break
            time.sleep(0.1)
        assert port, "serve did not start: %s" % open(log).read()[-2000:]
        req = urllib.request.Request("http://127.0.0.1:%s/v1/check?filename=%s" % (port, os.path.basename(good)),
                                     data=open(good, "rb").read())
        with urllib.request.urlopen(req, timeout=60) as r:
            assert r.status == 200 and json.loads(r.read())["inputs"], r.status
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=60)
    judge(d, must_load=[r"libmicrohttpd-[0-9a-f]{8}\.so\.12",
                        r"libgnutls-[0-9a-f]{8}\.so\.30"])


@test
def https_verifies_with_the_bundle_ssl_cert_file_names():
    """The wheel's libcurl (and OpenSSL) over https: a server whose self-signed certificate is
    in no system bundle is refused, and verified when $SSL_CERT_FILE names it (cli/ca_bundle.c:
    the wheel's libcurl names Debian's bundle, which other systems keep elsewhere)."""
    v, _, _, _ = installed()
    cli = os.path.join(v, "bin", "wheelgate")
    root = os.path.join(TMP, "index")
    if not os.path.isdir(os.path.join(root, "simple", "purepkg")):
        raise AssertionError("select_reads_an_index... makes the index first")
    key, crt = os.path.join(TMP, "key.pem"), os.path.join(TMP, "cert.pem")
    p = run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
             "-keyout", key, "-out", crt])
    assert p.returncode == 0, p.stderr
    with index_server(root, (crt, key)) as port:
        url = "https://127.0.0.1:%d/simple/purepkg/" % port
        p = run([cli, "select", "--project", "purepkg", url], {"SSL_CERT_FILE": "", "CURL_CA_BUNDLE": ""})
        assert p.returncode != 0 and "certificate" in p.stderr.lower(), (p.returncode, p.stderr[-2000:])
        p, d = traced([cli, "select", "--project", "purepkg", url], "https",
                      {"SSL_CERT_FILE": crt, "CURL_CA_BUNDLE": ""})
    assert p.returncode == 0 and p.stdout.strip().startswith("https://127.0.0.1:%d/files/" % port), \
        (p.returncode, p.stdout, p.stderr[-2000:])
    judge(d, must_load=[r"libssl-[0-9a-f]{8}\.so\.3", r"libcrypto-[0-9a-f]{8}\.so\.3"])


if __name__ == "__main__":
    print("  wheel: %s (%d bytes)" % (os.path.basename(WHEEL), os.path.getsize(WHEEL)))
    rc = main()
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

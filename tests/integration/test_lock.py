#!/usr/bin/env python3
"""`wheelgate check --lock pylock.toml` (issue 15, point 6): PEP 751 lock files written here,
their wheels (the fixture wheels) given by `path`, by `file:` URL (a space in the path) and by
`http://127.0.0.1` URL of a real pypiserver (../shared/tools/pypiserver); the verdicts must be
those of `wheelgate check` on the same files. Wrong digests and sizes are refused before the
wheel is read; a 404 and a port nobody listens on, broken TOML, lock-version 2.0, sdist-only
packages, markers and the choice among several wheels by the target python.

Usage: test_lock.py WHEELGATE FIXTURES [SYSTEM_PYTHON]
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import time  # noqa: E402
from harness import main, need_path, test  # noqa: E402
from serve_util import free_port, request  # noqa: E402

WG, FIX = [os.path.abspath(a) for a in sys.argv[1:3]]
W = os.path.join(FIX, "wheels")
GOOD = "base-1.0-py3-none-any.whl"    # passes
BAD = "hollow-1.0-py3-none-any.whl"   # WG-HOL-001
HERE = os.path.dirname(os.path.abspath(__file__))
PYPISERVER = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "tools",
                                           "pypiserver", "run"))
SYSENV = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
TMP = tempfile.mkdtemp(prefix="wg lock ")  # a space in every path below it
NOCONF = ["--no-config"]


class PyPI:
    """pypiserver on a free loopback port serving a fresh directory (its /packages/FILE)."""

    def __init__(self):
        need_path(PYPISERVER, "pypiserver (../shared/tools/pypiserver)")
        self.dir = tempfile.mkdtemp(prefix="wg-pypi-")
        self.port = free_port()
        self.out = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(["sh", PYPISERVER, str(self.port), self.dir],
                                     stdout=self.out, stderr=subprocess.STDOUT, env=SYSENV)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if request(self.url("/simple/"), timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise AssertionError("pypiserver did not start")

    def url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.out.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def wg(*args, env=None):
    p = subprocess.run([WG, *args], capture_output=True, timeout=300, env=env, cwd=TMP)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def q(s):
    return json.dumps(s)  # a TOML basic string is a JSON string for these values


def wheel_entry(path, key, value, digest=None, size=True, name=True):
    fields = ["%s = %s" % (key, q(value))]
    if name:
        fields.append("name = %s" % q(os.path.basename(path)))
    if size:
        fields.append("size = %d" % os.path.getsize(path))
    if digest is not False:
        fields.append("hashes = {sha256 = %s}" % q(digest or sha(path)))
    return "{" + ", ".join(fields) + "}"


def package(name, version, wheels=(), extra=""):
    s = "[[packages]]\nname = %s\nversion = %s\n" % (q(name), q(version))
    if wheels:
        s += "wheels = [\n  " + ",\n  ".join(wheels) + ",\n]\n"
    return s + extra


def write_lock(*packages, version="1.0", name="pylock.toml", where=TMP):
    path = os.path.join(where, name)
    with open(path, "w") as f:
        f.write('lock-version = %s\ncreated-by = "test_lock.py"\nrequires-python = ">=3.8"\n\n'
                % q(version) + "\n".join(packages))
    return path


def copy(name, dest_name=None, where=TMP):
    dst = os.path.join(where, dest_name or name)
    shutil.copyfile(os.path.join(W, name), dst)
    return dst


def verdicts(out):
    return [(i["verdict"], sorted(f["rule"] for f in i["findings"])) for i in json.loads(out)["inputs"]]


def reference():
    """`wheelgate check` on the same two wheels: what the lock must give."""
    rc, out, err = wg("check", *NOCONF, "--format", "json", os.path.join(W, GOOD), os.path.join(W, BAD))
    assert rc == 1, (rc, err)
    v = verdicts(out)
    assert v[0] == ("pass", []) and v[1][0] == "fail" and "WG-HOL-001" in v[1][1], v
    return rc, v


def lock_check(lock, *args):
    return wg("check", *NOCONF, "--lock", lock, "--format", "json", *args)


@test
def path_entries():
    ref_rc, ref = reference()
    d = os.path.join(TMP, "by path")
    os.makedirs(d)
    g, b = copy(GOOD, where=d), copy(BAD, where=d)
    lock = write_lock(package("base", "1.0", [wheel_entry(g, "path", GOOD)]),
                      package("hollow", "1.0", [wheel_entry(b, "path", "./" + BAD)]), where=d)
    rc, out, err = lock_check(lock)
    assert (rc, verdicts(out)) == (ref_rc, ref), (rc, out, err)
    paths = [i["path"] for i in json.loads(out)["inputs"]]
    assert paths == ["base 1.0 (%s)" % GOOD, "hollow 1.0 (./%s)" % BAD], paths
    # text: the same labels, and the exit status as check's
    rc, out, err = wg("check", *NOCONF, "--lock", lock)
    assert rc == 1 and "PASS base 1.0 (%s)" % GOOD in out and "FAIL hollow 1.0" in out, (rc, out, err)
    # -o and --fail-on as check
    rc, out, err = wg("check", *NOCONF, "--lock", lock, "--format", "sarif", "-o", os.path.join(d, "r.sarif"))
    assert rc == 1 and out == "" and json.load(open(os.path.join(d, "r.sarif")))["version"] == "2.1.0", (rc, err)
    # no PATH with --lock
    rc, out, err = wg("check", *NOCONF, "--lock", lock, g)
    assert rc == 2 and "no PATH with it" in err, (rc, err)


@test
def file_urls():
    ref_rc, ref = reference()
    g, b = copy(GOOD), copy(BAD)
    assert " " in g
    url_g = "file://" + urllib.parse.quote(g)           # %20 for the space
    url_b = "file://localhost" + b                       # a raw space
    assert "%20" in url_g
    lock = write_lock(package("base", "1.0", [wheel_entry(g, "url", url_g)]),
                      package("hollow", "1.0", [wheel_entry(b, "url", url_b)]), name="files.toml")
    rc, out, err = lock_check(lock)
    assert (rc, verdicts(out)) == (ref_rc, ref), (rc, out, err)
    # another host's file: URL is not read
    lock = write_lock(package("base", "1.0", [wheel_entry(g, "url", "file://example.org" + g)]),
                      name="otherhost.toml")
    rc, out, err = lock_check(lock)
    assert rc == 2 and "another host" in out + err, (rc, out, err)


@test
def pypiserver_urls():
    ref_rc, ref = reference()
    with PyPI() as pypi:
        g = copy(GOOD, where=pypi.dir)
        b = copy(BAD, where=pypi.dir)
        lock = write_lock(package("base", "1.0", [wheel_entry(g, "url", pypi.url("/packages/" + GOOD))]),
                          package("hollow", "1.0", [wheel_entry(b, "url", pypi.url("/packages/" + BAD))]),
                          name="http.toml")
        rc, out, err = lock_check(lock)
        assert (rc, verdicts(out)) == (ref_rc, ref), (rc, out, err)
        assert json.loads(out)["inputs"][0]["path"] == "base 1.0 (%s)" % pypi.url("/packages/" + GOOD)
        # libcurl is loaded for this lock (the fetch module), never for a lock of paths
        env = dict(os.environ, LD_DEBUG="files")
        rc, _, err = wg("check", *NOCONF, "--lock", lock, env=env)
        assert rc == 1 and "wheelgate-fetch.so" in err and "libcurl" in err, rc
        d = os.path.join(TMP, "local")
        os.makedirs(d, exist_ok=True)
        local = write_lock(package("base", "1.0", [wheel_entry(copy(GOOD, where=d), "path", GOOD)]), where=d)
        rc, _, err = wg("check", *NOCONF, "--lock", local, env=env)
        assert rc == 0 and "libcurl" not in err and "wheelgate-fetch" not in err, rc
        # a 404: a clear error naming the package and URL, exit 2; the other wheel judged
        missing = pypi.url("/packages/gone-1.0-py3-none-any.whl")
        lock = write_lock(package("gone", "1.0", ["{url = %s, hashes = {sha256 = %s}}" % (q(missing), q("0" * 64))]),
                          package("base", "1.0", [wheel_entry(g, "url", pypi.url("/packages/" + GOOD))]),
                          name="404.toml")
        rc, out, err = lock_check(lock)
        doc = json.loads(out)
        assert rc == 2 and doc["inputs"][0]["verdict"] == "error" and doc["inputs"][1]["verdict"] == "pass", (rc, out)
        e = doc["inputs"][0]["error"]
        assert "gone" in e and missing in e and "HTTP 404" in e, e
    # nobody listening
    url = "http://127.0.0.1:%d/packages/%s" % (free_port(), GOOD)
    lock = write_lock(package("base", "1.0", [wheel_entry(os.path.join(W, GOOD), "url", url)]), name="down.toml")
    rc, out, err = lock_check(lock)
    e = json.loads(out)["inputs"][0]["error"]
    assert rc == 2 and url in e and "onnect" in e, (rc, e)


@test
def wrong_digest_and_size():
    d = os.path.join(TMP, "wrong")
    os.makedirs(d)
    b = copy(BAD, where=d)
    good_digest = sha(b)
    bad_digest = "ab" * 32
    lock = write_lock(package("hollow", "1.0", [wheel_entry(b, "path", "wrong/" + BAD, digest=bad_digest)]),
                      name="sha.toml")
    rc, out, err = lock_check(lock)
    i = json.loads(out)["inputs"][0]
    # refused before reading: an error, not the hollow wheel's findings
    assert rc == 2 and i["verdict"] == "error" and not i["findings"], (rc, out)
    assert "hollow" in i["error"] and bad_digest in i["error"] and good_digest in i["error"], i["error"]
    assert "wrong/" + BAD in i["error"], i["error"]
    # not a zip at all, with a wrong digest: the digest is what is said, nothing about a zip
    junk = os.path.join(TMP, "junk-1.0-py3-none-any.whl")
    with open(junk, "wb") as f:
        f.write(b"not a zip\n")
    lock = write_lock(package("junk", "1.0", [wheel_entry(junk, "path", os.path.basename(junk), digest=bad_digest)]),
                      name="junk.toml")
    rc, out, err = lock_check(lock)
    e = json.loads(out)["inputs"][0]["error"]
    assert rc == 2 and "sha256 mismatch" in e and "zip" not in e.lower(), e
    # a size that differs from the lock's
    lock = write_lock(package("hollow", "1.0", ["{path = %s, size = 5, hashes = {sha256 = %s}}" % (q("wrong/" + BAD), q(good_digest))]),
                      name="size.toml")
    rc, out, err = lock_check(lock)
    e = json.loads(out)["inputs"][0]["error"]
    assert rc == 2 and "the lock says 5" in e, e
    # no sha256: an error unless --allow-unhashed
    lock = write_lock(package("hollow", "1.0", [wheel_entry(b, "path", "wrong/" + BAD, digest=False)]), name="nohash.toml")
    rc, out, err = lock_check(lock)
    e = json.loads(out)["inputs"][0]["error"]
    assert rc == 2 and "no sha256" in e, e
    rc, out, err = lock_check(lock, "--allow-unhashed")
    assert rc == 1 and json.loads(out)["inputs"][0]["verdict"] == "fail" and "unverified" in err, (rc, err)


@test
def broken_lock_files():
    bad = os.path.join(TMP, "broken.toml")
    with open(bad, "w") as f:
        f.write('lock-version = "1.0"\n\n[[packages]\nname = "x"\n')
    rc, out, err = wg("check", *NOCONF, "--lock", bad)
    assert rc == 2 and out == "" and "broken.toml:3:" in err and "not TOML" in err, (rc, err)
    v2 = write_lock(package("base", "1.0"), version="2.0", name="v2.toml")
    rc, out, err = wg("check", *NOCONF, "--lock", v2)
    assert rc == 2 and "v2.toml:1:" in err and 'lock-version "2.0"' in err and "1.x" in err, (rc, err)
    none = os.path.join(TMP, "none.toml")
    with open(none, "w") as f:
        f.write('[[packages]]\nname = "x"\n')
    rc, out, err = wg("check", *NOCONF, "--lock", none)
    assert rc == 2 and "none.toml" in err and "lock-version" in err, (rc, err)
    rc, out, err = wg("check", *NOCONF, "--lock", os.path.join(TMP, "absent.toml"))
    assert rc == 2 and "absent.toml" in err and "No such file" in err, (rc, err)


@test
def sdist_only_and_markers():
    g = copy(GOOD)
    lock = write_lock(package("base", "1.0", [wheel_entry(g, "path", GOOD)]),
                      package("src", "2.0", extra='sdist = {url = "https://example.org/src-2.0.tar.gz", '
                              'hashes = {sha256 = "%s"}}\n' % ("0" * 64)),
                      package("winonly", "1.0", [wheel_entry(g, "path", GOOD)],
                              extra="marker = \"sys_platform == 'win32'\"\n"),
                      name="sdist.toml")
    rc, out, err = lock_check(lock)
    doc = json.loads(out)
    assert rc == 2 and [i["verdict"] for i in doc["inputs"]] == ["pass", "error"], (rc, out)
    assert "src: the lock gives no wheel (sdist): not checked" in doc["inputs"][1]["error"]
    # the package skipped for its marker is told, never dropped silently
    assert "winonly: skipped" in err and "win32" in err, err
    rc, out, err = lock_check(lock, "--allow-no-wheel")
    assert rc == 0 and len(json.loads(out)["inputs"]) == 1 and "src: the lock gives no wheel" in err, (rc, err)


@test
def choice_by_python():
    d = os.path.join(TMP, "choice")
    os.makedirs(d)
    names = ["base-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
             "base-1.0-cp311-cp311-manylinux_2_17_x86_64.whl",
             "base-1.0-cp39-abi3-manylinux_2_17_x86_64.whl",
             "base-1.0-py3-none-any.whl",
             "base-1.0-cp312-cp312-win_amd64.whl",
             "base-1.0-cp312-cp312-macosx_11_0_arm64.whl"]
    entries = [wheel_entry(copy(GOOD, n, where=d), "path", n) for n in names]
    lock = write_lock(package("base", "1.0", entries), where=d)

    def chosen(*args):
        rc, out, err = lock_check(lock, *args)
        assert rc in (0, 1), (rc, err)
        return json.loads(out)["inputs"][0]["path"], err
    assert chosen("--target", "python=3.12")[0] == "base 1.0 (%s)" % names[0]
    assert chosen("--target", "python=3.11")[0] == "base 1.0 (%s)" % names[1]
    assert chosen("--target", "python=3.10")[0] == "base 1.0 (%s)" % names[2]   # abi3 over pure
    assert chosen("--target", "python=3.8")[0] == "base 1.0 (%s)" % names[3]    # abi3 needs 3.9
    # without --env or --target: the python3 on PATH, and it says so
    py = subprocess.run(["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                        capture_output=True, text=True).stdout.strip()
    label, err = chosen()
    assert "python %s" % py in err and "python3 on PATH" in err, err
    # none fits: an error naming the python and the wheels listed
    only = write_lock(package("base", "1.0", [entries[4], entries[5]]), name="none.toml", where=d)
    rc, out, err = lock_check(only, "--target", "python=3.12")
    e = json.loads(out)["inputs"][0]["error"]
    assert rc == 2 and "no wheel of base in the lock fits python 3.12 on linux_" in e and names[4] in e \
        and names[5] in e, e


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)

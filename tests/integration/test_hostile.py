#!/usr/bin/env python3
"""Output that cannot be turned against the reader (issue 12, point 4): wheels, an ELF object
and an installed distribution whose every name carries terminal escapes (ESC sequences, C1
CSI, BEL, BS, CR, DEL), bidi overrides (U+202E, U+2066: "Trojan Source") and bytes that are
not UTF-8, made here with zipfile, g++ and patchelf; every command and format of the CLI,
the Python binding and the pip gate read them. No output may carry a control character
other than our own newlines and tabs (and, in colour, our own SGR codes), a C1 control, a
bidi control or invalid UTF-8, and the escaped form of the hostile text must be there (the
information is not lost). JSON and SARIF list every finding they count.

Usage: test_hostile.py WHEELGATE LIBWHEELGATE HOOKS_DIR [PYTHON_WITH_JSONSCHEMA]
"""
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from harness import Missing, Skip, main, test, validate  # noqa: E402

WG, LIB, HOOKS = [os.path.abspath(a) for a in sys.argv[1:4]]
SYS_PY = sys.argv[4] if len(sys.argv) > 4 else "/usr/bin/python3"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SARIF_SCHEMA = os.path.join(ROOT, "tests", "schemas", "sarif-2.1.0.json")
CHECK_SCHEMA = os.path.join(ROOT, "docs", "schema", "check.schema.json")
TMP = tempfile.mkdtemp(prefix="wg-hostile-")
STATE = {}

RLO, LRI = "\u202e".encode(), "\u2066".encode()
# What a hostile name carries: clear screen, a window title (OSC ... BEL), C1 CSI (U+009B)
# with a colour, a right-to-left override, an isolate, bytes that are not UTF-8, DEL, BS, CR.
H = b"\x1b[2J\x1b]0;pwn\x07\xc2\x9b31m" + RLO + b"gpj" + LRI + b"\xff\xfe\x7f\x08\r"
# ... and as escaped text shows it (the library's \xNN and \u00NN / \uNNNN forms).
H_ESC = (r"\x1b[2J\x1b]0;pwn\x07\u009b31m\u202egpj\u2066\xff\xfe\x7f\x08\x0d").encode()
# What always survives (a METADATA or WHEEL line loses its closing \r), escaped and in JSON.
H_ESC_CORE = H_ESC[:-len(rb"\x08\x0d")]
H_JSON = H[:-2].decode("utf-8", "surrogateescape").replace("\udcff", "\\xff").replace("\udcfe", "\\xfe")
# A member name: UTF-8 (see RawName), so without the bytes that are not; libzip also refuses
# a UTF-8 name with C0 controls other than CR, LF and tab (the archive is unreadable: tested
# as such below), so C1, bidi, DEL, CR (LF is added where it is used).
H_MEMBER = b"\xc2\x9b31m" + RLO + b"gpj" + LRI + b"\x7f\r"
H_MEMBER_ESC = rb"\u009b31m\u202egpj\u2066\x7f\x0d"
# The same in an ELF string table, padded to one length with placeholders of that length.
SYM_H = b"wg_" + H + b"_sym"
SYM_PH = b"wg_" + b"Q" * len(H) + b"_sym"
SEC_H = b".wg" + H
SEC_PH = b".wg" + b"S" * len(H)
NEEDED = b"libwg" + H + b".so"
SONAME = b"libself" + H + b".so"
RUNPATH = b"$ORIGIN/rp" + H

BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}
SGR = re.compile(rb"\x1b\[(?:0|1|2|31|32|33)m")  # our own colours


def assert_safe(out, where, color=False, escaped=True):
    """out (bytes) is valid UTF-8 with no control character but \\n and \\t, no C1 and no bidi
    control; with escaped, the hostile text is there in its escaped form."""
    if color:
        out = SGR.sub(b"", out)
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AssertionError("%s: not UTF-8 (%s): %r" % (where, e, out[max(0, e.start - 40):e.end + 40]))
    for i, ch in enumerate(text):
        c = ord(ch)
        if (c < 0x20 and ch not in "\n\t") or 0x7F <= c <= 0x9F or c in BIDI:
            raise AssertionError("%s: raw U+%04X at %d: %r" % (where, c, i, text[max(0, i - 60):i + 60]))
    if escaped == "json":
        strings = []
        walk_strings(json.loads(text, strict=True), strings)
        # in the value: controls as they are, bytes that were not UTF-8 as \xNN
        assert any(H_JSON in x for x in strings), "%s: %r not in %s" % (where, H_JSON, strings)
    elif escaped:
        assert H_ESC_CORE in out, "%s: the escaped form is missing:\n%s" % (where, text[:3000])


def walk_strings(v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            out.append(k)
            walk_strings(x, out)
    elif isinstance(v, list):
        for x in v:
            walk_strings(x, out)
    elif isinstance(v, str):
        out.append(v)


def csv_field(b):
    return b'"' + b.replace(b'"', b'""') + b'"' if any(c in b for c in b'\n\r,"') else b


def record(files):
    rows = [b"%s,sha256=%s,%d" % (csv_field(n), base64.urlsafe_b64encode(hashlib.sha256(d).digest())
                                  .rstrip(b"="), len(d)) for n, d in files.items()]
    return rows


def zip_wheel(path, files, extra_rows=()):
    """A wheel of files ({bytes name: bytes}) and RECORD rows for them, extra_rows added."""
    di = [n for n in files if n.endswith(b".dist-info/METADATA")][0][:-len(b"METADATA")]
    rows = record(files) + list(extra_rows) + [di + b"RECORD,,"]
    files = dict(files)
    files[di + b"RECORD"] = b"\n".join(rows) + b"\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(RawName(n), d)
    return path


def _utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


class RawName(zipfile.ZipInfo):
    """A member name written byte for byte (zipfile would encode a str as UTF-8)."""

    def __init__(self, raw):
        super().__init__(raw.decode("latin-1"))
        self.raw = raw
        self.compress_type = zipfile.ZIP_DEFLATED

    def _encodeFilenameFlags(self):
        # A name that is UTF-8 is flagged so (else libzip, like Python's zipfile, reads it as
        # CP437: ESC becomes an arrow); one that is not cannot be (libzip and pip refuse the
        # archive) and is read as CP437, every byte a printable character.
        return self.raw, self.flag_bits | (0x800 if _utf8(self.raw) else 0)


def build_elf():
    """A g++ extension with a hostile exported symbol, undefined symbol and section name
    (patched in place of placeholders of the same length), DT_NEEDED, SONAME and RUNPATH
    (patchelf)."""
    if "elf" in STATE:
        return STATE["elf"]
    gxx, patchelf = shutil.which("g++"), shutil.which("patchelf")
    if not gxx or not patchelf:
        raise Missing("g++ and patchelf are needed (scripts/setup.sh --test installs them)")
    d = os.path.join(TMP, "elf")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "ext.cpp")
    with open(src, "w") as f:
        f.write('extern "C" int def_%s(int x) { return x + 1; }\n'
                'extern "C" int undef_%s(int x);\n'
                '__attribute__((section("%s"))) int wg_data = 7;\n'
                'extern "C" int PyInit_hostile(void) { return undef_%s(wg_data); }\n'
                % (SYM_PH.decode(), SYM_PH.decode(), SEC_PH.decode(), SYM_PH.decode()))
    so = os.path.join(d, "hostile.cpython-312-x86_64-linux-gnu.so")
    p = subprocess.run([gxx, "-shared", "-fPIC", "-O1", "-o", so, src], capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
    data = open(so, "rb").read()
    assert SYM_PH in data and SEC_PH in data
    open(so, "wb").write(data.replace(SYM_PH, SYM_H).replace(SEC_PH, SEC_H))
    # One change per run: patchelf 0.14 given several writes them all with one string.
    for change in (["--set-soname", SONAME], ["--set-rpath", RUNPATH], ["--add-needed", NEEDED]):
        p = subprocess.run([patchelf, *change, so], capture_output=True)
        assert p.returncode == 0, p.stderr.decode()
    # What we made is what readelf reads (so the test tests what it says it does).
    p = subprocess.run(["readelf", "-dW", so], capture_output=True)
    assert all(b"[%s]" % x in p.stdout for x in (NEEDED, SONAME, RUNPATH)), p.stdout[-2000:]
    STATE["elf"] = so
    return so


def hostile_wheels():
    """Two wheels: one whose FILENAME is hostile, one with a plain filename whose contents
    (member names, RECORD rows, METADATA Name/Version, WHEEL Tag, the ELF) are."""
    if "wheels" in STATE:
        return STATE["wheels"]
    d = os.path.join(TMP, "wheels")
    os.makedirs(d, exist_ok=True)
    so = open(build_elf(), "rb").read()
    di = b"hostile-1.0.dist-info/"
    files = {
        b"hostile/__init__.py": b"from . import x\n",
        b"hostile/" + H_MEMBER + b"\n.py": b"x = 1\n",
        b"hostile/hostile.cpython-312-x86_64-linux-gnu.so": so,
        di + b"METADATA": b"Metadata-Version: 2.1\nName: hostile" + H + b"\nVersion: 1.0" + H + b"\n",
        di + b"WHEEL": b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: cp312-cp312-"
                       + H + b"\n",
    }
    ghosts = [csv_field(b"hostile/ghost" + H + b".py") + b",sha256=AAAA,1"]
    a = zip_wheel(os.path.join(d, "hostile-1.0-cp312-cp312-linux_x86_64.whl"), files, ghosts)
    b = zip_wheel(os.fsdecode(os.path.join(d.encode(), b"evil" + H + b"-1.0-py3-none-any.whl")),
                  {b"evil/__init__.py": b"",
                   b"evil-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
                   b"evil-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: t\n"
                                                b"Root-Is-Purelib: true\nTag: py3-none-any\n"},
                  ghosts)
    STATE["wheels"] = (a, b)
    return a, b


def hostile_env():
    """A site-packages with an installed distribution whose names are hostile."""
    if "env" in STATE:
        return STATE["env"]
    env = os.path.join(TMP, "env")
    sp = os.path.join(env, "lib", "python3.12", "site-packages").encode()
    di = os.path.join(sp, b"evildist-1.0.dist-info")
    os.makedirs(os.path.join(sp, b"evildist"), exist_ok=True)
    os.makedirs(di, exist_ok=True)
    so_rel = b"evildist/x" + H + b".cpython-312-x86_64-linux-gnu.so"
    shutil.copy(build_elf(), os.path.join(sp, so_rel))
    files = {so_rel: open(os.path.join(sp, so_rel), "rb").read(), b"evildist/__init__.py": b""}
    open(os.path.join(sp, b"evildist/__init__.py"), "wb").write(b"")
    open(os.path.join(di, b"METADATA"), "wb").write(
        b"Metadata-Version: 2.1\nName: evildist" + H + b"\nVersion: 1.0\n")
    open(os.path.join(di, b"WHEEL"), "wb").write(
        b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n")
    rows = record(files) + [csv_field(b"evildist/ghost" + H + b".py") + b",sha256=AAAA,1",
                            b"evildist-1.0.dist-info/RECORD,,"]
    open(os.path.join(di, b"RECORD"), "wb").write(b"\n".join(rows) + b"\n")
    STATE["env"] = env
    return env


def wg(*args, env=None):
    p = subprocess.run([WG, *args], capture_output=True, timeout=600,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def inputs():
    a, b = hostile_wheels()
    return [a, b, build_elf()]


@test
def check_text_and_summary_escape_every_name():
    """check's text report and summary on the hostile wheels, the hostile ELF and against
    an environment with a hostile distribution (DT_NEEDED of the object is not there)."""
    rc, out, err = wg("check", "--no-config", "--env", hostile_env(), *inputs())
    assert rc == 1, (rc, err)
    assert_safe(out, "check text")
    assert_safe(err, "check stderr", escaped=False)
    for piece in (b"ghost" + H_ESC, b"evil" + H_ESC, b"libwg" + H_ESC):
        assert piece in out, (piece, out.decode())
    rc, out, err = wg("check", "--no-config", "--profile", "publish", *inputs())
    assert_safe(out, "check text (publish)")
    assert b"evil" + H_ESC in out and b"hostile" + H_ESC_CORE in out, out.decode()


@test
def check_on_a_directory_escapes_the_paths_it_found():
    a, b = hostile_wheels()
    rc, out, err = wg("check", "--no-config", os.path.dirname(a))
    assert_safe(out, "check DIR")
    assert_safe(err, "check DIR stderr", escaped=False)
    assert out.count(b"evil" + H_ESC) >= 1, out.decode()


def _json_every_finding(doc, what):
    n = 0
    for inp in doc["inputs"]:
        listed = len(inp["findings"])
        assert listed == sum(inp["counts"].values()), (what, inp["path"], inp["counts"], listed)
        n += listed
    s = doc["summary"]
    assert s["errors"] + s["warnings"] + s["infos"] == n, (what, s, n)
    return n


@test
def check_json_and_sarif_carry_every_finding_escaped():
    args = ("--no-config", "--env", hostile_env(), *inputs())
    rc, out, err = wg("check", "--format", "json", *args)
    assert_safe(out, "check json", escaped="json")
    assert_safe(err, "check json stderr", escaped=False)
    doc = json.loads(out.decode("utf-8"), strict=True)
    n = _json_every_finding(doc, "json")
    assert n >= 5, n
    validate(out, CHECK_SCHEMA, SYS_PY, required=False)
    # The decoded strings keep what the wheel said (controls as they are, other bytes \xNN).
    text = json.dumps(doc)
    assert "\\u001b[2J" in text and "\\u202e" in text.lower() and "\\\\xff\\\\xfe" in text, text[:2000]
    rc, out, err = wg("check", "--format", "sarif", *args)
    assert_safe(out, "check sarif", escaped="json")
    sarif = json.loads(out.decode("utf-8"), strict=True)
    assert len(sarif["runs"][0]["results"]) == n, (len(sarif["runs"][0]["results"]), n)
    validate(out, SARIF_SCHEMA, SYS_PY, "Draft4Validator", required=False)


@test
def inspect_text_and_json_escape_every_name():
    a, b = hostile_wheels()
    for args in (("--members", "--symbols=all"), ("--json", "--symbols=all"),
                 ("--json", "--compact")):
        rc, out, err = wg("inspect", *args, a, b, build_elf())
        what = "inspect " + " ".join(args)
        assert_safe(out, what, escaped="json" if "--json" in args else True)
        assert_safe(err, what + " stderr", escaped=False)
        if "--json" not in args:
            # the symbol, section, DT_NEEDED, SONAME, RUNPATH, member and filename
            for piece in (b"wg_" + H_ESC + b"_sym", b"libwg" + H_ESC, b"libself" + H_ESC,
                          b"rp" + H_ESC, H_MEMBER_ESC + b"\\x0a.py", b"evil" + H_ESC):
                assert piece in out, (piece, out.decode()[:4000])


@test
def env_text_and_json_escape_installed_names():
    env = hostile_env()
    for args in ((), ("--json",), ("--no-cache",)):
        rc, out, err = wg("env", *args, env)
        what = "env " + " ".join(args)
        assert rc == 0, (what, rc, err)
        assert_safe(out, what, escaped=False)
        assert_safe(err, what + " stderr", escaped=False)
        if "--json" in args:
            json.loads(out.decode("utf-8"), strict=True)
        assert b"evildist" in out, out.decode()
    # check --env with the installed distribution's hostile names in its findings
    rc, out, err = wg("check", "--no-config", "--env", env, "--format", "json",
                      os.path.join(env, "lib", "python3.12", "site-packages",
                                   "evildist-1.0.dist-info"))
    assert_safe(out, "check installed dist json", escaped="json")
    assert_safe(err, "check installed dist stderr", escaped=False)


@test
def errors_on_stderr_escape_the_input_name():
    """An input that cannot be read: its name, from a directory listing or a stranger, in the
    message (check: in the report, once; inspect: on stderr)."""
    d = os.path.join(TMP, "bad")
    os.makedirs(d, exist_ok=True)
    bad = os.path.join(d.encode(), b"broken" + H + b".whl")
    open(bad, "wb").write(b"PK\x03\x04 not a zip")
    missing = os.path.join(d.encode(), b"missing" + H + b".whl")
    for cmd in (["check", "--no-config"], ["inspect"], ["check", "--no-config", "--format", "json"],
                ["check", "--no-config", "--format", "sarif"], ["inspect", "--json"]):
        rc, out, err = wg(*cmd, bad, missing)
        assert rc == 2, (cmd, rc, err)
        # check says an unreadable input once, in its report (the text's ERROR block, the
        # documents' error); inspect on stderr
        text_report = cmd == ["check", "--no-config"]
        assert_safe(out, " ".join(cmd), escaped=text_report)
        assert_safe(err, " ".join(cmd) + " stderr", escaped=cmd[0] == "inspect")
    rc, out, err = wg("env", missing)
    assert rc == 2
    assert_safe(err, "env stderr")
    rc, out, err = wg("check", "--no-config", "--env", missing, inputs()[0])
    assert rc == 2
    assert_safe(err, "check --env stderr")
    # A wheel of two members with one hostile name.
    dup = os.path.join(d, "dup-1.0-py3-none-any.whl")
    with zipfile.ZipFile(dup, "w") as z:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(2):
                z.writestr(RawName(b"dup/" + H + b".py"), b"x")
    for cmd in (["check", "--no-config"], ["inspect"]):
        rc, out, err = wg(*cmd, dup)
        assert_safe(out, " ".join(cmd) + " dup", escaped=False)
        assert_safe(err, " ".join(cmd) + " dup stderr", escaped=False)


def py(code, *args, extra_env=None):
    env = dict(os.environ, WHEELGATE_LIB=LIB, PYTHONPATH=HOOKS, PYTHONIOENCODING="utf-8")
    env.update(extra_env or {})
    if b"libasan.so" in open(LIB, "rb").read():  # a sanitizer build: its runtime comes first
        asan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                              text=True).stdout.strip()
        env.update(LD_PRELOAD=asan, ASAN_OPTIONS="detect_leaks=0")
    p = subprocess.run([SYS_PY, "-c", code, *args], capture_output=True, env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr


@test
def the_binding_decodes_and_escapes():
    """wheelgate.check on the hostile inputs: no UnicodeDecodeError; the text it hands out
    (Result.text, the reprs, the errors) is safe; the findings keep what the wheel said."""
    code = r"""
import ctypes, sys, wheelgate
paths = sys.argv[1:4]
with wheelgate.Checker(env=sys.argv[4]) as c:
    r = c.check(paths)
sys.stdout.write(r.text)
for rep in r.reports:
    print(repr(rep))
    for f in rep.findings:
        print(repr(f))
        print(wheelgate.escape(f.message))
assert any("\x1b[2J" in f.message for rep in r.reports for f in rep.findings)
try:
    wheelgate.Checker(env=sys.argv[5])
    raise SystemExit("no error for a missing environment")
except wheelgate.WheelgateError as e:
    print(str(e))
# The coloured text of the library: our SGR codes only.
lib = wheelgate._load()
print(wheelgate.escape("\x1b]0;t\x07\x9b\u202e\udcff"))
"""
    a, b = hostile_wheels()
    missing = os.path.join(os.fsencode(TMP), b"nothere" + H)
    rc, out, err = py(code, a, b, build_elf(), hostile_env(), os.fsdecode(missing))
    assert rc == 0, err.decode("utf-8", "replace")
    assert_safe(out, "binding")
    assert b"nothere" + H_ESC in out, out.decode()
    assert b"\\x1b]0;t\\x07\\u009b\\u202e\\xff" in out, out.decode()[-500:]
    # The colour text format through the C API: only our own SGR codes are raw.
    code = r"""
import ctypes, sys, wheelgate
lib = wheelgate._load()
c = wheelgate.Checker()
sc, rs = c._sc, c._rs
scan, rep, out = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
assert lib.wg_scan_path(ctypes.byref(scan), sc, sys.argv[1].encode("utf-8", "surrogateescape")) == 0
assert lib.wg_check(ctypes.byref(rep), sc, rs, scan, c._target) == 0
paths = (ctypes.c_char_p * 1)(sys.argv[1].encode("utf-8", "surrogateescape"))
reps = (ctypes.c_void_p * 1)(rep.value)
assert lib.wg_reports_format(ctypes.byref(out), 4, rs, c._target, paths, reps, None, 1, 2) == 0
sys.stdout.buffer.write(ctypes.string_at(out.value))
"""
    rc, out, err = py(code, a)
    assert rc == 0, err.decode("utf-8", "replace")
    assert b"\x1b[31m" in out or b"\x1b[33m" in out, out
    assert_safe(out, "colour text", color=True)


@test
def the_pip_gate_prints_only_escaped_text():
    """The gate's messages (blocked: the wheel names; not a wheel: the requirement) and the
    report it prints, with the environment a hostile site-packages."""
    code = r"""
import sys, wheelgate_pip
class Req:
    def __init__(self, path, wheel=True):
        self.local_file_path, self.is_wheel = path, wheel
    def __str__(self):
        return "req " + self.local_file_path
sys.prefix = sys.argv[3]
try:
    wheelgate_pip.gate([Req(sys.argv[1]), Req(sys.argv[2]), Req(sys.argv[2] + ".tar.gz", False)])
    print("not blocked")
except BaseException as e:  # pip's InstallationError, or SystemExit without pip
    print("blocked:", e, file=sys.stderr)
"""
    a, b = hostile_wheels()
    rc, out, err = py(code, a, b, hostile_env())
    assert rc == 0, err.decode("utf-8", "replace")
    assert b"blocked:" in err, err.decode("utf-8", "replace")
    assert_safe(out, "gate stdout", escaped=False)
    assert_safe(err, "gate stderr")
    assert b"evil" + H_ESC + b"-1.0-py3-none-any.whl" in err.split(b"blocked:")[1], err.decode()


if __name__ == "__main__":
    sys.exit(main())

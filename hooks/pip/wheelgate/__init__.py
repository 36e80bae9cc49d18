"""wheelgate for Python: the C library through ctypes, for scanners written in Python.

    import wheelgate
    report = wheelgate.check("flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl",
                             env="/path/to/venv", gpus=["H100"])
    for f in report.findings:
        print(f.severity, f.rule, f.message)

    reports = wheelgate.check_all(["a.whl", "wheels/"], disable="WG-SYS-003")

libwheelgate is found through $WHEELGATE_LIB, then the library inside the package (the wheel
built by `cmake --build build --target python-wheel`) or the path recorded by `cmake --install`,
then the system's library path. All verdicts come from the library: this module only moves
data. `python -m wheelgate ARGS` runs the `wheelgate` CLI installed with it.

Where a list is meant (paths, gpus, rules, disable, enable, target) a list or tuple of strings
or a single string (one item) is taken. check() and check_bytes() return a Report, check_all()
a list of Reports, Checker.check() a Result. Arguments the library refuses raise
InvalidArgument (a ValueError), files it cannot read WheelgateError with .path, a library that
cannot be loaded LibraryError (an OSError); all are WheelgateError.
"""
from __future__ import annotations

import ctypes
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ._capi import (_CountsInfo, _FindingInfo, _Gpu, _MoreInfo, _NotAppliedInfo, _PyBuffer,
                    _RulesetOptions, _ScanRecord, _ScanRecordTarget, _ScanrecInfo,
                    _ScanrecFindingInfo, _ScanrecMoreInfo, _ScanrecTargetInfo, _TargetInfo, _get_buffer, _load, _release_buffer,
                    _strv, cli_path, library_path)

__version__ = "0.1.0"  # the project's version; tests compare it with the library's

__all__ = ["check", "check_all", "check_bytes", "Checker", "Finding", "Report", "Result",
           "WheelgateError", "InvalidArgument", "LibraryError", "escape", "library_path",
           "cli_path", "version", "__version__", "normalize_name", "scan_record", "read_record"]

StrPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
#: a list of names/paths, or one (a str is one item, never its characters)
Names = Union[StrPath, Iterable[StrPath], None]

# What a terminal obeys or reorders for: C0, DEL, C1, the bidi marks, embeddings, overrides
# and isolates ("Trojan Source"), and the line/paragraph separators. The library's
# wg_escape(WG_ESCAPE_CONTROL) escapes the same set, the same way.
_UNSAFE = {c: ("\\x%02x" % c if c < 0x80 else "\\u%04x" % c)
           for c in [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F,
                     *range(0x2028, 0x202F), *range(0x2066, 0x206A)]}
_UNSAFE_TEXT = {k: v for k, v in _UNSAFE.items() if k not in (0x09, 0x0A)}


def _surrogate(c: int) -> str:
    # a byte that was not UTF-8 (surrogateescape) as the library writes it: \\xNN
    return "\\x%02x" % (c - 0xDC00) if 0xDC80 <= c <= 0xDCFF else "\\u%04x" % c


def escape(text: Union[str, bytes, None], keep_newlines: bool = False) -> str:
    """text (str or bytes) made safe to print to a terminal: control characters, bidi
    controls and bytes that are not UTF-8 written as \\xNN / \\uNNNN, as the library's text
    output writes them; keep_newlines leaves newlines and tabs (text of several lines)."""
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    out = str(text).translate(_UNSAFE_TEXT if keep_newlines else _UNSAFE)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in out):
        out = "".join(_surrogate(ord(c)) if 0xD800 <= ord(c) <= 0xDFFF else c for c in out)
    return out


class WheelgateError(Exception):
    """libwheelgate could not be loaded, or refused an argument or a file (the message says
    why, with names from inputs escaped). .problem is the message; .path the file concerned,
    when there is one. When the library's error record says why (wg_error_last_info):
    .code, its negative error code (-3 for an invalid argument, ...), and .error_class, what
    failed ("invalid", "rules", "target", "gpu", "data", ...); both None otherwise."""

    code: Optional[int] = None
    error_class: Optional[str] = None

    def __init__(self, message: str, path: Optional[StrPath] = None):
        super().__init__(escape(message))
        self.problem = escape(message)
        self.path = os.fsdecode(path) if path is not None else None


class InvalidArgument(WheelgateError, ValueError):
    """An argument the library refuses (an unknown rule, GPU, target key or profile);
    .argument is the keyword's name."""

    def __init__(self, argument: str, message: str):
        super().__init__("%s: %s" % (argument, message))
        self.argument = argument


class LibraryError(WheelgateError, OSError):
    """libwheelgate cannot be found or loaded."""


# The library's messages name the CLI's flags; the binding's callers gave keywords.
_FLAGS = {"--disable": "disable", "--enable": "enable", "--target": "target",
          "--gpu": "gpus", "--rules": "rules", "--profile": "profile", "--env": "env"}


def _refused(argument: str, message: str) -> InvalidArgument:
    for flag, kw in _FLAGS.items():
        if message.startswith(flag + ":"):
            message = message[len(flag) + 1:].lstrip()
            break
    message = message.replace("'wheelgate gpus' lists them", "`python -m wheelgate gpus` lists them")
    return InvalidArgument(argument, message)


def _last_error() -> str:
    """The message of this thread's last failure (the library's error record)."""
    return _s(_load().wg_error_last_info().contents.message)


def _recorded(exc: WheelgateError) -> WheelgateError:
    """exc with the code and class of this thread's error record: call it right after the
    failing call, on the same thread (the record is per thread)."""
    lib = _load()
    rec = lib.wg_error_last_info().contents
    if rec.version >= 1 and rec.code < 0:
        exc.code = rec.code
        exc.error_class = _s(lib.wg_error_class_name(rec.klass))
    return exc


def _names(value: Names, argument: str) -> List[bytes]:
    """A list where one is meant: None is none, a str/bytes/path one item, else each item."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError("%s must be a string or a list of strings, not %s"
                        % (argument, type(value).__name__)) from None
    out = []
    for i in items:
        if not isinstance(i, (str, bytes, os.PathLike)):
            raise TypeError("%s must be a string or a list of strings; it holds a %s"
                            % (argument, type(i).__name__))
        b = _b(os.fspath(i))
        if b"\0" in b:
            raise ValueError("%s: %s holds a NUL byte" % (argument, escape(repr(i))))
        out.append(b)
    return out


_PROFILES = ("auto", "install", "publish")
_SEVERITIES = ("info", "warning", "error")  # by wg_severity
_VERDICTS = ("pass", "fail", "error")  # by wg_verdict


def normalize_name(name: Union[str, bytes]) -> str:
    """A distribution name as pip compares them (PEP 503), by the library's
    wg_name_normalize: "Flash_Attn" and "flash.attn" are "flash-attn"."""
    if not isinstance(name, (str, bytes)):
        raise TypeError("normalize_name: a str or bytes, not %s" % type(name).__name__)
    raw = name.encode("utf-8", "surrogateescape") if isinstance(name, str) else name
    out = ctypes.create_string_buffer(len(raw) + 1)
    n = _load().wg_name_normalize(out, len(out), raw, len(raw))
    if n < 0:
        raise _recorded(WheelgateError("normalize_name: %s" % _last_error()))
    return out.raw[:n].decode("utf-8", "surrogateescape")


def _b(s: Union[str, bytes]) -> bytes:
    return os.fsencode(s) if isinstance(s, str) else s


_BY_NAME = ((2, "error"), (1, "warning"), (0, "info"))  # the documents' order


def _n(b: Optional[bytes]) -> Optional[str]:
    """Text from the library, or None where it has none."""
    return _s(b) if b is not None else None


def _s(b: Optional[bytes]) -> str:
    """Text from the library: valid UTF-8 (it escapes a wheel's other bytes), but a message
    is never worth a UnicodeDecodeError."""
    return b.decode("utf-8", "backslashreplace") if b is not None else ""



def _bytes_name(data: Any, filename: Union[str, bytes]) -> bytes:
    """Checks check_bytes()'s arguments: TypeError for data that is not bytes-like (or not
    contiguous), ValueError for a filename the library cannot take as a file's name."""
    try:
        mv = memoryview(data)
    except TypeError:
        raise TypeError("check_bytes: data must be a bytes-like object (bytes, bytearray, "
                        "memoryview), not %s" % type(data).__name__) from None
    with mv:
        if not mv.contiguous:
            raise TypeError("check_bytes: data must be a contiguous buffer")
    if isinstance(filename, bytes):
        name = filename
    elif isinstance(filename, str):
        name = os.fsencode(filename)
    else:
        raise TypeError("check_bytes: filename must be str or bytes, not %s"
                        % type(filename).__name__)
    if not name or len(name) > 255 or b"/" in name or b"\0" in name or name in (b".", b".."):
        raise ValueError("check_bytes: filename must be a file's name (not empty, no '/' or "
                         "NUL, at most 255 bytes), as NAME-VERSION-TAGS.whl: a wheel's name, "
                         "version and tags come from it; got %s" % escape(repr(filename)))
    return name


class Finding:
    """One finding: a rule that says something about an input."""
    __slots__ = ("rule", "severity", "title", "message", "fix", "member", "symbol", "file", "line")
    rule: str
    severity: str
    title: Optional[str]
    message: str
    fix: Optional[str]
    member: Optional[str]
    symbol: Optional[str]
    file: Optional[str]
    line: Optional[int]

    def __init__(self, d: Dict[str, Any]):
        for k in self.__slots__:
            setattr(self, k, d.get(k))

    def __repr__(self) -> str:
        return "Finding(%s %s: %s)" % (escape(self.severity), escape(self.rule),
                                       escape(self.message))


class Report:
    """The verdict on one input: pass, fail, or error (unreadable: .error names the file
    and the problem)."""

    def __init__(self, d: Dict[str, Any]):
        self.path: str = d["path"]
        self.verdict: str = d["verdict"]
        self.error: Optional[str] = d["error"]
        self.findings: List[Finding] = [Finding(f) for f in d["findings"]]
        # Rules a missing fact left out: [{"rule", "lacks": [...], "message"}].
        self.not_applied: List[Dict[str, Any]] = d.get("not_applied", [])
        # Every finding by severity, those counted past a bound too: {"error": n, ...}.
        self.counts: Dict[str, int] = dict(d.get("counts") or {})
        # Findings past a bound, counted: [{"rule", "count", "counts": {...}}].
        self.more: List[Dict[str, Any]] = d.get("more", [])
        self.profile: Optional[str] = None

    @property
    def blocking(self) -> bool:
        return self.verdict != "pass"

    def __repr__(self) -> str:
        return "Report(%s: %s, %d findings)" % (escape(self.path), self.verdict,
                                                len(self.findings))


class Result:
    """Reports of several inputs, with the text `wheelgate check` prints for them."""

    def __init__(self, doc: Dict[str, Any], text: str):
        self.document: Dict[str, Any] = doc
        self.reports: List[Report] = [Report(i) for i in doc["inputs"]]
        self.target: Dict[str, Any] = doc["target"]
        # The question answered: "install" (will it work here?) or "publish" (is the wheel
        # what it claims?).
        self.profile: Optional[str] = doc.get("profile")
        for r in self.reports:
            r.profile = self.profile
        self.text: str = text

    @property
    def blocking(self) -> bool:
        return any(r.blocking for r in self.reports)


class Checker:
    """A loaded rule set and target, for checking any number of inputs (one thread).

    env: an environment (venv, prefix or site-packages) to judge against; target: KEY=VALUE
    specs (python, torch, cxx11abi, cuda); gpus: GPU names, sm_XY or compute capabilities;
    rules: extra rule files; disable / enable: rule selectors (an id, an id prefix such as
    "WG-SYS", a name such as "hollow-wheel" or a glob; any case). Each of target, gpus, rules,
    disable and enable takes a list or a single string."""

    def __init__(self, env: Optional[StrPath] = None, target: Names = None, gpus: Names = (),
                 rules: Names = (), disable: Names = (), enable: Names = (),
                 fail_on: str = "error", profile: str = "auto"):
        self._ctx = ctypes.c_void_p()
        self._rs = ctypes.c_void_p()
        self._sc = ctypes.c_void_p()
        self._env = ctypes.c_void_p()
        self._target = ctypes.c_void_p()
        # Arguments are checked before the library is loaded: a TypeError is a TypeError.
        level = {"info": 0, "warning": 1, "error": 2}.get(fail_on)
        if level is None:
            raise InvalidArgument("fail_on", "must be error, warning or info, not %r" % (fail_on,))
        self.fail_on: int = level
        if profile not in _PROFILES:
            raise InvalidArgument("profile", "must be install, publish or auto, not %r" % (profile,))
        lists = {k: _names(v, k) for k, v in (("rules", rules), ("disable", disable),
                                               ("enable", enable), ("target", target),
                                               ("gpus", gpus))}
        self._lib = lib = _load()
        if lib.wg_context_new(ctypes.byref(self._ctx), None) < 0:
            raise _recorded(WheelgateError(_last_error()))
        opts = _RulesetOptions()
        opts.version = 1
        self._keep = [_strv(lists["rules"]), _strv(lists["disable"]), _strv(lists["enable"])]
        opts.rule_paths, opts.nrule_paths = self._keep[0]
        opts.disable, opts.ndisable = self._keep[1]
        opts.enable, opts.nenable = self._keep[2]
        if lib.wg_ruleset_new(ctypes.byref(self._rs), self._ctx, ctypes.byref(opts)) < 0:
            msg = _last_error()
            for kw in ("disable", "enable"):
                if msg.startswith("--%s:" % kw):
                    raise _recorded(_refused(kw, msg))
            # a rule file that cannot be read or parsed: the message starts with its path
            path = next((r for r in lists["rules"] if msg.startswith(_s(r) + ":")), None)
            raise _recorded(WheelgateError("rules: " + msg, path))
        if lib.wg_scanner_new(ctypes.byref(self._sc), self._ctx) < 0:
            raise _recorded(WheelgateError(_last_error()))
        if lib.wg_target_new(ctypes.byref(self._target)) < 0:
            raise _recorded(WheelgateError(_last_error()))
        if lib.wg_target_set(self._target, b"profile", _b(profile)) < 0:
            raise _recorded(_refused("profile", _last_error()))
        if env is not None:
            env_b = _names(env, "env")
            if len(env_b) != 1:
                raise TypeError("env must be one path, not %d" % len(env_b))
            if lib.wg_env_open(ctypes.byref(self._env), self._sc, env_b[0], None) < 0:
                raise _recorded(WheelgateError("env: " + _s(lib.wg_scanner_error(self._sc)),
                                               env_b[0]))
            lib.wg_target_set_env(self._target, self._env)
        for spec in lists["target"]:
            if lib.wg_target_parse(self._target, spec) < 0:
                raise _recorded(_refused("target", _last_error()))
        for g in lists["gpus"]:
            if lib.wg_target_add_gpu(self._target, self._ctx, g) < 0:
                raise _recorded(_refused("gpus", _last_error()))

    def check(self, paths: Names, together: bool = False) -> Result:
        """Checks every path (wheel, .so, installed .dist-info, directory; a list, or one
        path); returns a Result. A directory stands for every wheel below it (each an input
        of its own) and its loose ELF objects. With an environment, each wheel is judged as
        installed there in place of the installed release of its name, and what that breaks
        among the installed distributions is reported (WG-LD-006); together=True judges the
        wheels as one install (pip install a.whl b.whl), each against the others."""
        lib = self._lib
        queue = _names(paths, "paths")
        done: List[Tuple[bytes, Any, Any]] = []  # (path, report handle or None, error or None)
        scans: List[Tuple[bytes, Any, Any]] = []  # (path, scan handle or None, error or None)
        try:
            while queue:
                p = queue.pop(0)
                scan = ctypes.c_void_p()
                if lib.wg_scan_path(ctypes.byref(scan), self._sc, p) < 0:
                    scans.append((p, None, lib.wg_scanner_error(self._sc)))
                    continue
                wheels = [lib.wg_scan_wheel_path(scan, k)
                          for k in range(lib.wg_scan_wheel_count(scan))]
                queue[0:0] = wheels
                if not wheels or lib.wg_scan_object_count(scan) or \
                        lib.wg_scan_problem_count(scan):
                    scans.append((p, scan, None))
                else:
                    lib.wg_scan_free(scan)
            wheel_scans = [s for _, s, _ in scans
                           if s is not None and lib.wg_scan_get_kind(s) == 1]
            if self._env.value and together and wheel_scans:
                arr = (ctypes.c_void_p * len(wheel_scans))(*[w.value for w in wheel_scans])
                if lib.wg_env_set_install(self._env, self._sc, arr, len(wheel_scans)) < 0:
                    raise _recorded(WheelgateError(_s(lib.wg_scanner_error(self._sc))))
            for p, scan, err in scans:
                if scan is None:
                    done.append((p, None, err))
                    continue
                alone = bool(self._env.value) and not together and lib.wg_scan_get_kind(scan) == 1
                if alone:
                    one = (ctypes.c_void_p * 1)(scan.value)
                    if lib.wg_env_set_install(self._env, self._sc, one, 1) < 0:
                        done.append((p, None, lib.wg_scanner_error(self._sc)))
                        continue
                rep = ctypes.c_void_p()
                rc = lib.wg_check(ctypes.byref(rep), self._sc, self._rs, scan, self._target)
                if alone:
                    lib.wg_env_set_install(self._env, self._sc, None, 0)
                if rc < 0:
                    done.append((p, None, lib.wg_scanner_error(self._sc)))
                else:
                    done.append((p, rep.value, None))
            return self._result(done)
        finally:
            if self._env.value:
                lib.wg_env_set_install(self._env, self._sc, None, 0)
            for _, scan, _ in scans:
                if scan is not None:
                    lib.wg_scan_free(scan)
            for d in done:
                if d[1]:
                    lib.wg_report_free(d[1])

    def check_bytes(self, data: Any, filename: Union[str, bytes]) -> Result:
        """Checks a wheel (or an ELF object) held in memory: data is bytes-like (bytes,
        bytearray, memoryview; read in place, not copied) and filename the file's name, which
        a wheel's name, version and tags come from. Returns a Result, as check() does."""
        lib = self._lib
        name = _bytes_name(data, filename)
        view = _PyBuffer()
        _get_buffer(data, ctypes.byref(view), 0)  # PyBUF_SIMPLE: contiguous bytes, in place
        done: List[Tuple[bytes, Any, Any]] = []
        try:
            scan = ctypes.c_void_p()
            rep = ctypes.c_void_p()
            rc = lib.wg_scan_buffer(ctypes.byref(scan), self._sc, view.buf, view.len, name)
            if rc == 0:
                # With an environment, a wheel is judged as installed there (as check()).
                alone = bool(self._env.value) and lib.wg_scan_get_kind(scan) == 1
                one = (ctypes.c_void_p * 1)(scan.value)
                if alone:
                    rc = lib.wg_env_set_install(self._env, self._sc, one, 1)
                if rc == 0:
                    rc = lib.wg_check(ctypes.byref(rep), self._sc, self._rs, scan,
                                      self._target)
                if alone:
                    lib.wg_env_set_install(self._env, self._sc, None, 0)
                lib.wg_scan_free(scan)
            if rc < 0:
                done.append((name, None, lib.wg_scanner_error(self._sc)))
            else:
                done.append((name, rep.value, None))
            return self._result(done)
        finally:
            _release_buffer(ctypes.byref(view))
            for d in done:
                if d[1]:
                    lib.wg_report_free(d[1])

    def _input(self, path: bytes, rep: Any, error: Optional[bytes]) -> Dict[str, Any]:
        """One input of the check document ("wheelgate.check/1", docs/check-json.md), read
        through the report's accessors."""
        lib = self._lib
        zero = {"error": 0, "warning": 0, "info": 0}
        if not rep:
            return {"path": _s(path), "verdict": "error",
                    "error": _s(error) if error else "unreadable", "counts": zero,
                    "findings": [], "not_applied": []}
        c = _CountsInfo(version=1)
        if lib.wg_report_counts(ctypes.byref(c), rep) < 0:
            raise _recorded(WheelgateError(_last_error()))
        findings = []
        for i in range(lib.wg_report_count(rep)):
            f = _FindingInfo(version=2)
            if lib.wg_report_finding(ctypes.byref(f), rep, i) < 0:
                raise _recorded(WheelgateError(_last_error()))
            findings.append({"rule": _s(f.rule), "severity": _SEVERITIES[f.severity],
                             "title": _n(f.title), "message": _n(f.message), "fix": _n(f.fix),
                             "member": _n(f.member), "symbol": _n(f.symbol), "file": _n(f.file),
                             "line": f.line or None})
        more = []
        for i in range(lib.wg_report_more_count(rep)):
            m = _MoreInfo(version=1)
            if lib.wg_report_more(ctypes.byref(m), rep, i) < 0:
                raise _recorded(WheelgateError(_last_error()))
            more.append({"rule": _s(m.rule), "count": m.count,
                         "counts": {k: m.severity[i] for i, k in _BY_NAME}})
        not_applied = []
        for i in range(lib.wg_report_not_applied_count(rep)):
            a = _NotAppliedInfo(version=1)
            if lib.wg_report_not_applied(ctypes.byref(a), rep, i) < 0:
                raise _recorded(WheelgateError(_last_error()))
            not_applied.append({"rule": _s(a.rule),
                                "lacks": [k for k in _s(a.lacks).split(",") if k],
                                "message": _s(a.message)})
        return {"path": _s(path),
                "verdict": _VERDICTS[lib.wg_report_verdict(rep, self.fail_on)], "error": None,
                "counts": {k: c.severity[i] for i, k in _BY_NAME}, "findings": findings,
                "more": more, "not_applied": not_applied}

    def _target_doc(self) -> Dict[str, Any]:
        """The check document's "target": what the checks assumed."""
        lib = self._lib
        t = _TargetInfo(version=1)
        if lib.wg_target_get_info(ctypes.byref(t), self._target) < 0:
            raise _recorded(WheelgateError(_last_error()))
        gpus = []
        for i in range(lib.wg_target_gpu_count(self._target)):
            g = _Gpu(version=1)
            if lib.wg_target_gpu(ctypes.byref(g), self._target, i) == 0:
                gpus.append({"name": _n(g.name), "cc": "%u.%u" % (g.cc_major, g.cc_minor)})
        buf = ctypes.create_string_buffer(256)
        source = ctypes.c_char_p()
        lib.wg_target_system(self._target, buf, len(buf), ctypes.byref(source))
        doc: Dict[str, Any] = {
            "python": "%u.%u" % (t.python_major, t.python_minor) if t.python_major else None,
            "torch": _n(t.torch), "cxx11abi": None if t.cxx11abi < 0 else bool(t.cxx11abi),
            "cuda": "%u.%u" % (t.cuda_major, t.cuda_minor) if t.cuda_major else None,
            "gpus": gpus,
            "system": {"source": _s(source.value), "versions": _s(buf.value).split()}}
        if t.gpu_auto:
            doc["gpu_auto"] = {"found": t.gpu_auto_found, "none": _n(t.gpu_auto_none)}
        return doc

    def _result(self, done: List[Tuple[bytes, Any, Any]]) -> Result:
        """done: (path, report handle or None, error or None) for each input; the Result:
        the check document built from the reports' accessors, and the text the library
        writes."""
        lib = self._lib
        n = len(done)
        inputs = [self._input(*d) for d in done]
        totals = {k: sum(i["counts"][k] for i in inputs) for k in ("error", "warning", "info")}
        doc = {"schema": "wheelgate.check/1", "wheelgate_version": _s(lib.wg_version_string()),
               "profile": _s(lib.wg_profile_name(lib.wg_target_profile(self._target))),
               "target": self._target_doc(), "fail_on": _SEVERITIES[self.fail_on],
               "inputs": inputs,
               "summary": {"inputs": n,
                           "passed": sum(1 for i in inputs if i["verdict"] == "pass"),
                           "failed": sum(1 for i in inputs if i["verdict"] == "fail"),
                           "unreadable": sum(1 for i in inputs if i["verdict"] == "error"),
                           "errors": totals["error"], "warnings": totals["warning"],
                           "infos": totals["info"]}}
        cpaths = (ctypes.c_char_p * max(1, n))(*[d[0] for d in done])
        reports = (ctypes.c_void_p * max(1, n))(*[d[1] for d in done])
        errors = (ctypes.c_char_p * max(1, n))(*[d[2] for d in done])
        out = ctypes.c_void_p()
        if lib.wg_reports_format(ctypes.byref(out), 3, self._rs, self._target,  # text
                                 cpaths, reports, errors, n, self.fail_on) < 0:
            raise WheelgateError("cannot format the report")
        text = _s(ctypes.string_at(out.value or 0))
        lib.wg_free(out)
        return Result(doc, text)

    def close(self) -> None:
        lib = getattr(self, "_lib", None)
        if lib is None:
            return
        # The target borrows the environment: it goes first.
        for name, h in (("wg_target_free", "_target"), ("wg_env_free", "_env"),
                        ("wg_scanner_free", "_sc"), ("wg_ruleset_free", "_rs"),
                        ("wg_context_free", "_ctx")):
            handle = getattr(self, h, None)
            if handle:
                getattr(lib, name)(handle)
                setattr(self, h, ctypes.c_void_p())

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def check(path: StrPath, env: Optional[StrPath] = None, target: Names = None, gpus: Names = (),
          rules: Names = (), disable: Names = (), enable: Names = (), fail_on: str = "error",
          profile: str = "auto") -> Report:
    """Checks one input (a wheel, an ELF object, an installed .dist-info directory, or a
    directory that holds one input) and returns its Report. A list of paths, or a directory
    with several wheels below it, is check_all()'s: TypeError / ValueError say so. profile:
    "install" (will it work here?), "publish" (is the wheel what it claims?) or "auto"
    (install with an env or a declared target, else publish)."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError("check() takes one path (str, bytes or os.PathLike), not %s: "
                        "check_all() takes several" % type(path).__name__)
    reports = check_all(path, env=env, target=target, gpus=gpus, rules=rules, disable=disable,
                        enable=enable, fail_on=fail_on, profile=profile)
    if len(reports) != 1:
        raise ValueError("check(): %s holds %d inputs; check_all() returns a Report for each"
                         % (escape(os.fsdecode(path)), len(reports)))
    return reports[0]


def check_all(paths: Names, env: Optional[StrPath] = None, target: Names = None,
              gpus: Names = (), rules: Names = (), disable: Names = (), enable: Names = (),
              fail_on: str = "error", profile: str = "auto",
              together: bool = False) -> List[Report]:
    """Checks a list of paths (or one path), with the options of check(); returns a list of
    Reports, one for each input: a directory stands for every wheel below it and its loose
    ELF objects. together: with env, the wheels are one install (Checker.check)."""
    with Checker(env=env, target=target, gpus=gpus, rules=rules, disable=disable, enable=enable,
                 fail_on=fail_on, profile=profile) as c:
        return c.check(paths, together=together).reports


def check_bytes(data: Any, filename: Union[str, bytes], env: Optional[StrPath] = None,
                target: Names = None, gpus: Names = (), rules: Names = (), disable: Names = (),
                enable: Names = (), fail_on: str = "error", profile: str = "auto") -> Report:
    """Checks a wheel held in memory (a Report), with the options of check(): data is
    bytes-like (bytes, bytearray, memoryview; read in place, not copied), filename the
    file's name (NAME-VERSION-TAGS.whl: a wheel's name, version and tags come from it).
    TypeError for data that is not bytes-like, ValueError for a filename that is not a
    file's name; a body that is no wheel gives a Report with verdict "error", as check()
    does for such a file."""
    name = _bytes_name(data, filename)
    with Checker(env=env, target=target, gpus=gpus, rules=rules, disable=disable, enable=enable,
                 fail_on=fail_on, profile=profile) as c:
        return c.check_bytes(data, name).reports[0]


def _file_sha256(path: bytes) -> Tuple[Optional[str], Optional[int]]:
    import hashlib
    h = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as f:
            while True:
                block = f.read(1 << 20)
                if not block:
                    break
                h.update(block)
                size += len(block)
    except OSError:
        return None, None  # the library's message says why (its scan fails too)
    return h.hexdigest(), size


def scan_record(path: StrPath, targets: Sequence[Tuple[str, "Checker"]],
                error: Optional[str] = None) -> Tuple[str, Dict[str, str]]:
    """The "wheelgate.scan/1" record of one input (docs/scan.md) as the library writes it
    (wg_scan_record_format, the writer of `wheelgate scan`): one line of JSON, without its
    newline, and {target name: verdict}. targets: (name, Checker) pairs, each judging the
    input as Checker.check does (with its environment, as an install); error: why the input
    is not judged at all (then no target is)."""
    import time
    t0 = time.monotonic()
    (pb,) = _names(path, "path")
    lib = _load()
    sha, size = _file_sha256(pb) if error is None else (None, None)
    scans: List[Any] = []
    reps: List[Any] = []
    first: Optional[bytes] = None
    if error is not None:
        first = error.encode("utf-8", "surrogateescape")
    try:
        for _, c in targets:
            scan, rep = ctypes.c_void_p(), ctypes.c_void_p()
            scans.append(scan)
            reps.append(rep)
            if error is not None:
                continue
            if lib.wg_scan_path(ctypes.byref(scan), c._sc, pb) < 0:
                first = first or lib.wg_scanner_error(c._sc) or b"cannot be read"
                continue
            alone = bool(c._env.value) and lib.wg_scan_get_kind(scan) == 1
            rc = 0
            if alone:
                rc = lib.wg_env_set_install(c._env, c._sc, (ctypes.c_void_p * 1)(scan.value), 1)
            if rc == 0:
                rc = lib.wg_check(ctypes.byref(rep), c._sc, c._rs, scan, c._target)
            if alone:
                lib.wg_env_set_install(c._env, c._sc, None, 0)
            if rc < 0:
                rep.value = None
                first = first or lib.wg_scanner_error(c._sc) or b"cannot be checked"
        fails = [ctypes.c_int(c.fail_on) for _, c in targets]
        names = [_b(n) for n, _ in targets]
        arr = (_ScanRecordTarget * max(1, len(targets)))()
        for i, (_, c) in enumerate(targets):
            arr[i] = _ScanRecordTarget(2, names[i], c._target.value, reps[i].value,
                                       ctypes.pointer(fails[i]))
        read = next((s.value for s in scans if s.value), None)
        rec = _ScanRecord(version=1, path=pb, scan=read, sha256=sha.encode() if sha else None,
                          size=size if size is not None else -1, targets=arr,
                          ntargets=len(targets), fail_on=2, facts=None,
                          seconds=time.monotonic() - t0, error=first)
        out = ctypes.c_void_p()
        if lib.wg_scan_record_format(ctypes.byref(out), ctypes.byref(rec)) < 0:
            raise _recorded(WheelgateError(_last_error()))
        line = ctypes.string_at(out.value or 0).decode("ascii")
        lib.wg_free(out)
        verdicts = {n: _VERDICTS[lib.wg_report_verdict(reps[i].value, c.fail_on)]
                    for i, (n, c) in enumerate(targets)}
        return line, verdicts
    finally:
        for r in reps:
            if r.value:
                lib.wg_report_free(r)
        for s in scans:
            if s.value:
                lib.wg_scan_free(s)


def read_record(line: Union[str, bytes]) -> Dict[str, Any]:
    """A "wheelgate.scan/1" record read back by the library (wg_scanrec_parse): path, name,
    version, sha256, size, facts, error and targets [{"target", "profile", "verdict",
    "counts", "findings": [{"rule", "severity", "message", "member", "symbol"}], "more":
    [{"rule", "count", "counts"}]}]; ValueError, naming the first field that is wrong, for a
    line that is not such a record."""
    raw = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
    lib = _load()
    h = ctypes.c_void_p()
    if lib.wg_scanrec_parse(ctypes.byref(h), raw, len(raw)) < 0:
        raise ValueError(_last_error())
    try:
        i = _ScanrecInfo(version=1)
        lib.wg_scanrec_get(ctypes.byref(i), h)
        targets = []
        for k in range(i.ntargets):
            t = _ScanrecTargetInfo(version=2)
            if lib.wg_scanrec_target(ctypes.byref(t), h, k) != 0:
                continue
            findings, more = [], []
            f = _ScanrecFindingInfo(version=1)
            for n in range(t.nfindings):
                if lib.wg_scanrec_finding(ctypes.byref(f), h, k, n) == 0:
                    findings.append({"rule": _n(f.rule), "severity": _SEVERITIES[f.severity],
                                     "message": _n(f.message), "member": _n(f.member),
                                     "symbol": _n(f.symbol)})
            m = _ScanrecMoreInfo(version=1)
            for n in range(t.nmore):
                if lib.wg_scanrec_more(ctypes.byref(m), h, k, n) == 0:
                    more.append({"rule": _n(m.rule), "count": m.count,
                                 "counts": {name: m.severity[s] for s, name in _BY_NAME}})
            targets.append({"target": _n(t.target), "profile": _n(t.profile),
                            "verdict": _VERDICTS[t.verdict],
                            "counts": {name: t.counts[s] for s, name in _BY_NAME},
                            "findings": findings, "more": more})
        return {"path": _n(i.path), "name": _n(i.name), "version": _n(i.pkg_version),
                "sha256": _n(i.sha256), "size": i.size if i.size >= 0 else None,
                "facts": _n(i.facts), "error": _n(i.error), "targets": targets}
    finally:
        lib.wg_scanrec_free(h)


def version() -> str:
    """The loaded library's version (__version__ is the package's; they match when
    installed together)."""
    return _s(_load().wg_version_string())

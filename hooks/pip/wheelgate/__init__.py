"""wheelgate for Python: the C library through ctypes, for scanners written in Python.

    import wheelgate
    report = wheelgate.check("flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl",
                             env="/path/to/venv", gpus=["H100"])
    for f in report.findings:
        print(f.severity, f.rule, f.message)

libwheelgate is found through $WHEELGATE_LIB, then the path recorded at installation, then
the system's library path. All verdicts come from the library: this module only moves data.
"""
import ctypes
import ctypes.util
import json
import os

__all__ = ["check", "check_bytes", "Checker", "Finding", "Report", "WheelgateError", "escape", "library_path"]

# What a terminal obeys or reorders for: C0, DEL, C1, the bidi marks, embeddings, overrides
# and isolates ("Trojan Source"), and the line/paragraph separators. The library's
# wg_escape(WG_ESCAPE_CONTROL) escapes the same set, the same way.
_UNSAFE = {c: ("\\x%02x" % c if c < 0x80 else "\\u%04x" % c)
           for c in [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F,
                     *range(0x2028, 0x202F), *range(0x2066, 0x206A)]}
_UNSAFE_TEXT = {k: v for k, v in _UNSAFE.items() if k not in (0x09, 0x0A)}


def _surrogate(c):
    # a byte that was not UTF-8 (surrogateescape) as the library writes it: \\xNN
    return "\\x%02x" % (c - 0xDC00) if 0xDC80 <= c <= 0xDCFF else "\\u%04x" % c


def escape(text, keep_newlines=False):
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
    """libwheelgate could not be loaded, or refused an argument (the message says why, with
    names from inputs escaped)."""

    def __init__(self, message):
        super().__init__(escape(message))


def library_path():
    """Where libwheelgate is taken from, or raises WheelgateError saying what was tried."""
    tried = []
    env = os.environ.get("WHEELGATE_LIB")
    if env:
        if os.path.exists(env):
            return env
        tried.append("$WHEELGATE_LIB=%s (no such file)" % env)
    try:
        from . import _installed  # written by `cmake --install`
        if os.path.exists(_installed.LIBRARY):
            return _installed.LIBRARY
        tried.append("%s (recorded at installation; gone)" % _installed.LIBRARY)
    except ImportError:
        tried.append("no installation record")
    found = ctypes.util.find_library("wheelgate")
    if found:
        return found
    tried.append("no libwheelgate on the system's library path")
    raise WheelgateError("cannot find libwheelgate: " + "; ".join(tried) +
                         ". Set WHEELGATE_LIB to the path of libwheelgate.so.0 (in a build "
                         "tree: build/libwheelgate.so.0) or install wheelgate.")


_PROFILES = ("auto", "install", "publish")


class _RulesetOptions(ctypes.Structure):  # wg_ruleset_options, version 1
    _fields_ = [("version", ctypes.c_uint),
                ("rule_paths", ctypes.POINTER(ctypes.c_char_p)), ("nrule_paths", ctypes.c_size_t),
                ("disable", ctypes.POINTER(ctypes.c_char_p)), ("ndisable", ctypes.c_size_t),
                ("enable", ctypes.POINTER(ctypes.c_char_p)), ("nenable", ctypes.c_size_t),
                ("no_default_rules", ctypes.c_int)]


_lib = None


def _load():
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise WheelgateError("cannot load %s: %s" % (path, e))
    P = ctypes.c_void_p
    PP = ctypes.POINTER(ctypes.c_void_p)
    sigs = {
        "wg_version_string": ([], ctypes.c_char_p), "wg_error_last": ([], ctypes.c_char_p),
        "wg_free": ([P], None),
        "wg_context_new": ([PP, P], ctypes.c_int), "wg_context_free": ([P], None),
        "wg_scanner_new": ([PP, P], ctypes.c_int), "wg_scanner_free": ([P], None),
        "wg_scanner_error": ([P], ctypes.c_char_p),
        "wg_ruleset_new": ([PP, P, ctypes.POINTER(_RulesetOptions)], ctypes.c_int),
        "wg_ruleset_free": ([P], None),
        # wg_target is opaque: set through functions, so that it can grow.
        "wg_target_new": ([PP], ctypes.c_int), "wg_target_free": ([P], None),
        "wg_target_set": ([P, ctypes.c_char_p, ctypes.c_char_p], ctypes.c_int),
        "wg_target_parse": ([P, ctypes.c_char_p], ctypes.c_int),
        "wg_target_add_gpu": ([P, P, ctypes.c_char_p], ctypes.c_int),
        "wg_target_set_env": ([P, P], ctypes.c_int),
        "wg_env_open": ([PP, P, ctypes.c_char_p, P], ctypes.c_int), "wg_env_free": ([P], None),
        "wg_scan_path": ([PP, P, ctypes.c_char_p], ctypes.c_int), "wg_scan_free": ([P], None),
        "wg_scan_buffer": ([PP, P, P, ctypes.c_size_t, ctypes.c_char_p], ctypes.c_int),
        "wg_scan_wheel_count": ([P], ctypes.c_size_t),
        "wg_scan_wheel_path": ([P, ctypes.c_size_t], ctypes.c_char_p),
        "wg_scan_object_count": ([P], ctypes.c_size_t),
        "wg_scan_problem_count": ([P], ctypes.c_size_t),
        "wg_check": ([PP, P, P, P, P], ctypes.c_int),
        "wg_report_free": ([P], None), "wg_report_worst": ([P], ctypes.c_int),
        "wg_reports_format": ([PP, ctypes.c_int, P, P,
                               ctypes.POINTER(ctypes.c_char_p), PP,
                               ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.c_int],
                              ctypes.c_int),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res
    _lib = lib
    return lib


def _b(s):
    return os.fsencode(s) if isinstance(s, str) else s


def _s(b):
    """Text from the library: valid UTF-8 (it escapes a wheel's other bytes), but a message
    is never worth a UnicodeDecodeError."""
    return b.decode("utf-8", "backslashreplace") if b is not None else ""


def _strv(items):
    items = [_b(os.fspath(i)) for i in items]
    return (ctypes.c_char_p * max(1, len(items)))(*items), len(items)


class _PyBuffer(ctypes.Structure):  # Py_buffer (stable ABI since Python 3.11, same since 3.3)
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.py_object),
                ("len", ctypes.c_ssize_t), ("itemsize", ctypes.c_ssize_t),
                ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("suboffsets", ctypes.c_void_p),
                ("internal", ctypes.c_void_p)]


_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
_get_buffer.restype = ctypes.c_int
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [ctypes.POINTER(_PyBuffer)]
_release_buffer.restype = None


def _bytes_name(data, filename):
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

    def __init__(self, d):
        for k in self.__slots__:
            setattr(self, k, d.get(k))

    def __repr__(self):
        return "Finding(%s %s: %s)" % (escape(self.severity), escape(self.rule),
                                       escape(self.message))


class Report:
    """The verdict on one input: pass, fail, or error (unreadable)."""

    def __init__(self, d):
        self.path = d["path"]
        self.verdict = d["verdict"]
        self.error = d["error"]
        self.findings = [Finding(f) for f in d["findings"]]
        # Rules a missing fact left out: [{"rule", "lacks": [...], "message"}].
        self.not_applied = d.get("not_applied", [])

    @property
    def blocking(self):
        return self.verdict != "pass"

    def __repr__(self):
        return "Report(%s: %s, %d findings)" % (escape(self.path), self.verdict,
                                                len(self.findings))


class Result:
    """Reports of several inputs, with the text `wheelgate check` prints for them."""

    def __init__(self, doc, text):
        self.document = doc
        self.reports = [Report(i) for i in doc["inputs"]]
        self.target = doc["target"]
        # The question answered: "install" (will it work here?) or "publish" (is the wheel
        # what it claims?).
        self.profile = doc.get("profile")
        for r in self.reports:
            r.profile = self.profile
        self.text = text

    @property
    def blocking(self):
        return any(r.blocking for r in self.reports)


class Checker:
    """A loaded rule set and target, for checking any number of inputs (one thread)."""

    def __init__(self, env=None, target=None, gpus=(), rules=(), disable=(), enable=(),
                 fail_on="error", profile="auto"):
        self._lib = lib = _load()
        self._ctx = ctypes.c_void_p()
        self._rs = ctypes.c_void_p()
        self._sc = ctypes.c_void_p()
        self._env = ctypes.c_void_p()
        self._target = ctypes.c_void_p()
        self.fail_on = {"info": 0, "warning": 1, "error": 2}.get(fail_on)
        if self.fail_on is None:
            raise WheelgateError("fail_on must be error, warning or info, not %r" % fail_on)
        if lib.wg_context_new(ctypes.byref(self._ctx), None) < 0:
            raise WheelgateError(_s(lib.wg_error_last()))
        opts = _RulesetOptions()
        opts.version = 1
        self._keep = [_strv(rules), _strv(disable), _strv(enable)]
        opts.rule_paths, opts.nrule_paths = self._keep[0]
        opts.disable, opts.ndisable = self._keep[1]
        opts.enable, opts.nenable = self._keep[2]
        if lib.wg_ruleset_new(ctypes.byref(self._rs), self._ctx, ctypes.byref(opts)) < 0:
            raise WheelgateError(_s(lib.wg_error_last()))
        if lib.wg_scanner_new(ctypes.byref(self._sc), self._ctx) < 0:
            raise WheelgateError(_s(lib.wg_error_last()))
        if lib.wg_target_new(ctypes.byref(self._target)) < 0:
            raise WheelgateError(_s(lib.wg_error_last()))
        if profile not in _PROFILES:
            raise WheelgateError("profile must be install, publish or auto, not %r" % (profile,))
        if lib.wg_target_set(self._target, b"profile", _b(profile)) < 0:
            raise WheelgateError(_s(lib.wg_error_last()))
        if env is not None:
            if lib.wg_env_open(ctypes.byref(self._env), self._sc, _b(os.fspath(env)), None) < 0:
                raise WheelgateError(_s(lib.wg_scanner_error(self._sc)))
            lib.wg_target_set_env(self._target, self._env)
        for spec in ([target] if isinstance(target, str) else list(target or [])):
            if lib.wg_target_parse(self._target, _b(spec)) < 0:
                raise WheelgateError(_s(lib.wg_error_last()))
        for g in gpus:
            if lib.wg_target_add_gpu(self._target, self._ctx, _b(g)) < 0:
                raise WheelgateError(_s(lib.wg_error_last()))

    def check(self, paths):
        """Checks every path (wheel, .so, directory); returns a Result. A directory stands
        for every wheel below it (each an input of its own) and its loose ELF objects."""
        lib = self._lib
        queue = [_b(os.fspath(p)) for p in paths]
        done = []  # (path, report handle or None, error or None)
        try:
            while queue:
                p = queue.pop(0)
                scan = ctypes.c_void_p()
                rep = ctypes.c_void_p()
                rc = lib.wg_scan_path(ctypes.byref(scan), self._sc, p)
                judged = True
                if rc == 0:
                    wheels = [lib.wg_scan_wheel_path(scan, k)
                              for k in range(lib.wg_scan_wheel_count(scan))]
                    queue[0:0] = wheels
                    judged = not wheels or lib.wg_scan_object_count(scan) or \
                        lib.wg_scan_problem_count(scan)
                    if judged:
                        rc = lib.wg_check(ctypes.byref(rep), self._sc, self._rs, scan,
                                          self._target)
                    lib.wg_scan_free(scan)
                if not judged:
                    continue
                if rc < 0:
                    done.append((p, None, lib.wg_scanner_error(self._sc)))
                else:
                    done.append((p, rep.value, None))
            return self._result(done)
        finally:
            for d in done:
                if d[1]:
                    lib.wg_report_free(d[1])

    def check_bytes(self, data, filename):
        """Checks a wheel (or an ELF object) held in memory: data is bytes-like (bytes,
        bytearray, memoryview; read in place, not copied) and filename the file's name, which
        a wheel's name, version and tags come from. Returns a Result, as check() does."""
        lib = self._lib
        name = _bytes_name(data, filename)
        view = _PyBuffer()
        _get_buffer(data, ctypes.byref(view), 0)  # PyBUF_SIMPLE: contiguous bytes, in place
        done = []
        try:
            scan = ctypes.c_void_p()
            rep = ctypes.c_void_p()
            rc = lib.wg_scan_buffer(ctypes.byref(scan), self._sc, view.buf, view.len, name)
            if rc == 0:
                rc = lib.wg_check(ctypes.byref(rep), self._sc, self._rs, scan, self._target)
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

    def _result(self, done):
        """done: (path, report handle or None, error or None) for each input; the Result."""
        lib = self._lib
        n = len(done)
        cpaths = (ctypes.c_char_p * max(1, n))(*[d[0] for d in done])
        reports = (ctypes.c_void_p * max(1, n))(*[d[1] for d in done])
        errors = (ctypes.c_char_p * max(1, n))(*[d[2] for d in done])
        docs = []
        for fmt in (1, 3):  # JSON, then the text of `wheelgate check`
            out = ctypes.c_void_p()
            if lib.wg_reports_format(ctypes.byref(out), fmt, self._rs, self._target,
                                     cpaths, reports, errors, n, self.fail_on) < 0:
                raise WheelgateError("cannot format the report")
            docs.append(_s(ctypes.string_at(out.value)))
            lib.wg_free(out)
        return Result(json.loads(docs[0]), docs[1])

    def close(self):
        lib = self._lib
        # The target borrows the environment: it goes first.
        for name, h in (("wg_target_free", "_target"), ("wg_env_free", "_env"),
                        ("wg_scanner_free", "_sc"), ("wg_ruleset_free", "_rs"),
                        ("wg_context_free", "_ctx")):
            handle = getattr(self, h, None)
            if handle:
                getattr(lib, name)(handle)
                setattr(self, h, ctypes.c_void_p())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def check(path, env=None, target=None, gpus=(), rules=(), disable=(), enable=(),
          fail_on="error", profile="auto"):
    """Checks one path (a Report), or a list of paths or a directory (a list of Reports: a
    directory stands for the wheels below it, and its loose ELF objects). profile: "install"
    (will it work here?), "publish" (is the wheel what it claims?) or "auto" (install with an
    env or a declared target, else publish)."""
    with Checker(env=env, target=target, gpus=gpus, rules=rules, disable=disable, enable=enable,
                 fail_on=fail_on, profile=profile) as c:
        if isinstance(path, (list, tuple)) or os.path.isdir(path):
            return c.check(path if isinstance(path, (list, tuple)) else [path]).reports
        return c.check([path]).reports[0]


def check_bytes(data, filename, env=None, target=None, gpus=(), rules=(), disable=(), enable=(),
                fail_on="error", profile="auto"):
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


def version():
    return _s(_load().wg_version_string())

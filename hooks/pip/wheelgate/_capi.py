"""The ctypes plumbing of the wheelgate binding (private): where libwheelgate and the CLI are
found, loading the library with the prototype of every function the binding calls, and the
layouts of the versioned structs it passes (wheelgate.h: wg_finding_info, wg_scan_record, ...)
and of Py_buffer. The package re-exports library_path and cli_path; nothing here is public.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Any, List, Optional, Tuple

class _Error(ctypes.Structure):  # wg_error, version 1
    _fields_ = [("version", ctypes.c_uint), ("code", ctypes.c_int), ("klass", ctypes.c_int),
                ("message", ctypes.c_char_p)]


def _package_file(rel: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), rel)


def _installed_record() -> Tuple[Optional[str], Optional[str], str]:
    """(library, cli, where they were recorded) from _installed.py: written by `cmake --install`
    (absolute paths) or into the wheel (paths relative to this package)."""
    try:
        from . import _installed  # type: ignore[attr-defined]  # written at installation
    except ImportError:
        return None, None, "no installation record"
    lib = getattr(_installed, "LIBRARY", None)
    cli = getattr(_installed, "CLI", None)
    if getattr(_installed, "RELATIVE", False):
        lib = _package_file(lib) if lib else None
        cli = _package_file(cli) if cli else None
        return lib, cli, "inside the package"
    return lib, cli, "recorded at installation"


def library_path() -> str:
    """Where libwheelgate is taken from, or raises LibraryError saying what was tried."""
    from . import LibraryError  # the package's: imported when called, as the package imports us
    tried = []
    env = os.environ.get("WHEELGATE_LIB")
    if env:
        if os.path.exists(env):
            return env
        tried.append("$WHEELGATE_LIB=%s (no such file)" % env)
    lib, _, where = _installed_record()
    if lib and os.path.exists(lib):
        return lib
    tried.append("%s (%s; gone)" % (lib, where) if lib else where)
    found = ctypes.util.find_library("wheelgate")
    if found:
        return found
    tried.append("no libwheelgate on the system's library path")
    raise LibraryError("cannot find libwheelgate: " + "; ".join(tried) +
                       ". Set WHEELGATE_LIB to the path of libwheelgate.so.0 (in a build "
                       "tree: build/libwheelgate.so.0) or install wheelgate.")


def cli_path() -> str:
    """The `wheelgate` executable installed with this package (the wheel's, or the one
    `cmake --install` recorded), else the one next to $WHEELGATE_LIB (a build tree), else
    the one on PATH; LibraryError if none."""
    import shutil
    from . import LibraryError
    _, cli, where = _installed_record()
    tried = []
    if cli:
        if os.access(cli, os.X_OK):
            return cli
        tried.append("%s (%s; gone)" % (cli, where))
    else:
        tried.append(where)
    env = os.environ.get("WHEELGATE_LIB")
    if env:
        near = os.path.join(os.path.dirname(os.path.abspath(env)), "wheelgate")
        if os.access(near, os.X_OK) and os.path.isfile(near):
            return near
        tried.append("%s (next to $WHEELGATE_LIB; none)" % near)
    found = shutil.which("wheelgate")
    if found:
        return found
    tried.append("no wheelgate on PATH")
    raise LibraryError("cannot find the wheelgate CLI: " + "; ".join(tried) +
                       ". Install wheelgate (the wheel, or cmake --install).")


# The report read through the library's accessors (wheelgate.h: wg_report_finding,
# wg_report_counts, ...), never by parsing a document it wrote.
_P = ctypes.c_char_p


class _FindingInfo(ctypes.Structure):  # wg_finding_info, version 2
    _fields_ = [("version", ctypes.c_uint), ("rule", _P), ("title", _P), ("message", _P),
                ("fix", _P), ("severity", ctypes.c_int), ("path", _P), ("member", _P),
                ("symbol", _P), ("file", _P), ("line", ctypes.c_uint), ("suppressed", _P)]


class _MoreInfo(ctypes.Structure):  # wg_more_info, version 1
    _fields_ = [("version", ctypes.c_uint), ("rule", _P), ("count", ctypes.c_size_t),
                ("severity", ctypes.c_size_t * 3)]


class _NotAppliedInfo(ctypes.Structure):  # wg_not_applied_info, version 1
    _fields_ = [("version", ctypes.c_uint), ("rule", _P), ("lacks", _P), ("message", _P)]


class _CountsInfo(ctypes.Structure):  # wg_counts_info, version 1
    _fields_ = [("version", ctypes.c_uint), ("severity", ctypes.c_size_t * 3),
                ("kept", ctypes.c_size_t * 3), ("more", ctypes.c_size_t * 3),
                ("suppressed", ctypes.c_size_t * 3)]


class _TargetInfo(ctypes.Structure):  # wg_target_info, version 1
    _fields_ = [("version", ctypes.c_uint), ("python_major", ctypes.c_uint),
                ("python_minor", ctypes.c_uint), ("torch", _P), ("cxx11abi", ctypes.c_int),
                ("cuda_major", ctypes.c_uint), ("cuda_minor", ctypes.c_uint),
                ("gpu_auto", ctypes.c_int), ("gpu_auto_found", ctypes.c_size_t),
                ("gpu_auto_none", _P)]


class _Gpu(ctypes.Structure):  # wg_gpu, version 1
    _fields_ = [("version", ctypes.c_uint), ("cc_major", ctypes.c_uint),
                ("cc_minor", ctypes.c_uint), ("name", _P)]


class _ScanRecordTarget(ctypes.Structure):  # wg_scan_record_target, version 2
    _fields_ = [("version", ctypes.c_uint), ("name", _P), ("target", ctypes.c_void_p),
                ("report", ctypes.c_void_p), ("fail_on", ctypes.POINTER(ctypes.c_int))]


class _ScanrecInfo(ctypes.Structure):  # wg_scanrec_info, version 1
    _fields_ = [("version", ctypes.c_uint), ("path", _P), ("name", _P), ("pkg_version", _P),
                ("sha256", _P), ("size", ctypes.c_int64), ("facts", _P), ("error", _P),
                ("ntargets", ctypes.c_size_t)]


class _ScanrecTargetInfo(ctypes.Structure):  # wg_scanrec_target_info, version 2
    _fields_ = [("version", ctypes.c_uint), ("target", _P), ("profile", _P),
                ("verdict", ctypes.c_int), ("counts", ctypes.c_size_t * 3),
                ("nfindings", ctypes.c_size_t), ("nmore", ctypes.c_size_t)]


class _ScanrecFindingInfo(ctypes.Structure):  # wg_scanrec_finding_info, version 1
    _fields_ = [("version", ctypes.c_uint), ("rule", _P), ("severity", ctypes.c_int),
                ("message", _P), ("member", _P), ("symbol", _P)]


class _ScanrecMoreInfo(ctypes.Structure):  # wg_scanrec_more_info, version 1
    _fields_ = [("version", ctypes.c_uint), ("rule", _P), ("count", ctypes.c_size_t),
                ("severity", ctypes.c_size_t * 3)]


class _ScanRecord(ctypes.Structure):  # wg_scan_record, version 1
    _fields_ = [("version", ctypes.c_uint), ("path", _P), ("scan", ctypes.c_void_p),
                ("sha256", _P), ("size", ctypes.c_int64),
                ("targets", ctypes.POINTER(_ScanRecordTarget)), ("ntargets", ctypes.c_size_t),
                ("fail_on", ctypes.c_int), ("facts", _P), ("seconds", ctypes.c_double),
                ("error", _P)]


class _RulesetOptions(ctypes.Structure):  # wg_ruleset_options, version 1
    _fields_ = [("version", ctypes.c_uint),
                ("rule_paths", ctypes.POINTER(ctypes.c_char_p)), ("nrule_paths", ctypes.c_size_t),
                ("disable", ctypes.POINTER(ctypes.c_char_p)), ("ndisable", ctypes.c_size_t),
                ("enable", ctypes.POINTER(ctypes.c_char_p)), ("nenable", ctypes.c_size_t),
                ("no_default_rules", ctypes.c_int)]


_lib = None


def _load() -> Any:
    """libwheelgate, loaded once with the prototypes below."""
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        from . import LibraryError
        raise LibraryError("cannot load %s: %s" % (path, e), path)
    P = ctypes.c_void_p
    PP = ctypes.POINTER(ctypes.c_void_p)
    sigs = {
        "wg_version_string": ([], ctypes.c_char_p), "wg_error_last": ([], ctypes.c_char_p),
        "wg_error_last_info": ([], ctypes.POINTER(_Error)),
        "wg_error_class_name": ([ctypes.c_int], ctypes.c_char_p),
        "wg_free": ([P], None),
        "wg_name_normalize": ([ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t],
                              ctypes.c_int),
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
        "wg_scan_get_kind": ([P], ctypes.c_int),
        "wg_env_set_install": ([P, P, PP, ctypes.c_size_t], ctypes.c_int),
        "wg_check": ([PP, P, P, P, P], ctypes.c_int),
        "wg_report_free": ([P], None), "wg_report_worst": ([P], ctypes.c_int),
        "wg_report_count": ([P], ctypes.c_size_t),
        "wg_report_finding": ([ctypes.POINTER(_FindingInfo), P, ctypes.c_size_t], ctypes.c_int),
        "wg_report_more_count": ([P], ctypes.c_size_t),
        "wg_report_more": ([ctypes.POINTER(_MoreInfo), P, ctypes.c_size_t], ctypes.c_int),
        "wg_report_not_applied_count": ([P], ctypes.c_size_t),
        "wg_report_not_applied": ([ctypes.POINTER(_NotAppliedInfo), P, ctypes.c_size_t],
                                  ctypes.c_int),
        "wg_report_counts": ([ctypes.POINTER(_CountsInfo), P], ctypes.c_int),
        "wg_report_verdict": ([P, ctypes.c_int], ctypes.c_int),
        "wg_target_profile": ([P], ctypes.c_int),
        "wg_profile_name": ([ctypes.c_int], ctypes.c_char_p),
        "wg_target_get_info": ([ctypes.POINTER(_TargetInfo), P], ctypes.c_int),
        "wg_target_gpu_count": ([P], ctypes.c_size_t),
        "wg_target_gpu": ([ctypes.POINTER(_Gpu), P, ctypes.c_size_t], ctypes.c_int),
        "wg_target_system": ([P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p)],
                             ctypes.c_size_t),
        "wg_scan_record_format": ([PP, ctypes.POINTER(_ScanRecord)], ctypes.c_int),
        "wg_scanrec_parse": ([PP, ctypes.c_char_p, ctypes.c_size_t], ctypes.c_int),
        "wg_scanrec_free": ([P], None),
        "wg_scanrec_get": ([ctypes.POINTER(_ScanrecInfo), P], ctypes.c_int),
        "wg_scanrec_target": ([ctypes.POINTER(_ScanrecTargetInfo), P, ctypes.c_size_t],
                              ctypes.c_int),
        "wg_scanrec_finding": ([ctypes.POINTER(_ScanrecFindingInfo), P, ctypes.c_size_t,
                                ctypes.c_size_t], ctypes.c_int),
        "wg_scanrec_more": ([ctypes.POINTER(_ScanrecMoreInfo), P, ctypes.c_size_t,
                             ctypes.c_size_t], ctypes.c_int),
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


def _strv(items: List[bytes]) -> Tuple[Any, int]:
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

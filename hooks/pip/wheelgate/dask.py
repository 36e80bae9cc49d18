"""wheelgate on a Dask cluster: a whole repository of wheels judged at once (issue 17).

    from wheelgate import dask as wgdask
    summary = wgdask.scan("wheels.txt", out_dir="scan-out", partitions=64,
                          targets={"h100": {"target": ["torch=2.11.0+cu130", "cuda=13.0"],
                                            "gpus": ["H100"]},
                                   "l4": {"gpus": ["L4"]}})
    # on a real cluster: client="tcp://scheduler:8786"

The list (paths, directories, or a file that names one path a line; "-" for stdin) is split
into partitions; each partition is one Dask task, which judges its inputs with one
wheelgate.Checker per worker thread and target (a Checker is for one thread: they are kept in
a thread-local cache, built once per thread) and writes out_dir/part-NNNNN.jsonl, one JSON
Lines record a input (schema "wheelgate.scan/1", the record `wheelgate scan` writes:
docs/scan.md), flushed as it goes and renamed into place when the partition is done. A rerun
with resume=True keeps the partitions already written. out_dir/summary.json counts the inputs
by target and verdict.

client: None (a LocalCluster of `workers` workers with `threads` threads each, closed at the
end), a scheduler's address, or a distributed.Client. On a real cluster, the workers need
wheelgate importable and libwheelgate (see wheelgate.library_path), the paths readable and,
with write="worker", out_dir on storage they share with the client; write="client" sends the
records back to the client, which writes the partitions itself.

Only this module imports Dask (Debian's python3-dask and python3-distributed): `import
wheelgate` does not. `python3 -m wheelgate.dask --help` is its command line.
"""
from __future__ import annotations

import argparse
import copy
import importlib
import json
import os
import re
import sys
import threading
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import wheelgate

__all__ = ["scan", "scan_partition", "record", "read_list", "expand", "wheel_filename", "main"]

SCHEMA = "wheelgate.scan/1"
SUMMARY_SCHEMA = "wheelgate.scan-summary/1"
# Options of a target, as wheelgate.Checker takes them.
_TARGET_KEYS = ("env", "target", "gpus", "rules", "disable", "enable", "fail_on", "profile")
Targets = Dict[str, Dict[str, Any]]

_local = threading.local()
# wheel filename: NAME-VERSION(-BUILD)?-PY-ABI-PLAT.whl (PEP 427)
_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(?:-(?P<build>\d[^-]*))?-"
                    r"(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")


def _import(name: str) -> Any:
    """A module of Dask, typed Any (Dask has no hints mypy --strict reads); ImportError with
    what to install when it is missing."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError("wheelgate.dask needs Dask: apt-get install python3-dask "
                          "python3-distributed (or pip install 'dask[distributed]'): %s" % e) \
            from None


def wheel_filename(path: str) -> Tuple[Optional[str], Optional[str], List[str]]:
    """(name, version, tags) from a wheel's file name, tags expanded as PEP 425 compressed
    tag sets expand ("py2.py3-none-any" is ["py2-none-any", "py3-none-any"]); (None, None, [])
    for a name that is not a wheel's."""
    m = _WHEEL.match(os.path.basename(path))
    if not m:
        return None, None, []
    tags = ["%s-%s-%s" % (p, a, pl) for p in m["py"].split(".") for a in m["abi"].split(".")
            for pl in m["plat"].split(".")]
    return m["name"], m["version"], tags


def _checker(index: int, options: Dict[str, Any]) -> wheelgate.Checker:
    """This thread's Checker for a target: built on first use, kept for the thread's life."""
    cache: Optional[Dict[Tuple[int, str], wheelgate.Checker]] = getattr(_local, "checkers", None)
    if cache is None:
        cache = _local.checkers = {}
    key = (index, json.dumps(options, sort_keys=True))
    c = cache.get(key)
    if c is None:
        c = cache[key] = wheelgate.Checker(**options)
    return c


def record(path: str, targets: Targets) -> Tuple[str, Dict[str, str]]:
    """The wheelgate.scan/1 record of one input, judged for each target by this thread's
    Checkers, as the library writes it for `wheelgate scan` (wheelgate.scan_record: one
    writer): the line (no newline) and {target: verdict}."""
    checkers = [(tname, _checker(i, options)) for i, (tname, options) in enumerate(targets.items())]
    error = None
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path):
        # The workers read files (local, or shared storage); fetching is `wheelgate scan`'s.
        error = "%s: a URL: wheelgate.dask reads files only (download it first)" \
            % wheelgate.escape(path)
    return wheelgate.scan_record(path, checkers, error=error)


def _part_name(index: int) -> str:
    return "part-%05d.jsonl" % index


def scan_partition(index: int, paths: Sequence[str], targets: Targets,
                   out_dir: Optional[str]) -> Dict[str, Any]:
    """One Dask task: judges paths on this worker thread and writes out_dir/part-INDEX.jsonl
    (one record a line, flushed after each, renamed into place at the end), or, with out_dir
    None, returns the lines. Returns {"part", "inputs", "verdicts": {target: {verdict: n}},
    "seconds", "worker", "thread"[, "lines"]}."""
    t0 = time.monotonic()
    verdicts: Dict[str, Dict[str, int]] = {t: {"pass": 0, "fail": 0, "error": 0} for t in targets}
    lines: List[str] = []
    out = None
    final = tmp = ""
    if out_dir is not None:
        final = os.path.join(out_dir, _part_name(index))
        tmp = final + ".tmp"
        out = open(tmp, "w", encoding="utf-8")
    try:
        for p in paths:
            line, judged = record(p, targets)
            for tname, verdict in judged.items():
                verdicts[tname][verdict] += 1
            line += "\n"
            if out is not None:
                out.write(line)
                out.flush()
            else:
                lines.append(line)
    finally:
        if out is not None:
            out.close()
    if out is not None:
        os.replace(tmp, final)
    res: Dict[str, Any] = {"part": _part_name(index), "inputs": len(paths), "verdicts": verdicts,
                           "seconds": round(time.monotonic() - t0, 6),
                           "worker": os.getpid(), "thread": threading.get_ident()}
    if out is None:
        res["lines"] = lines
    return res


def read_list(source: Union[str, "os.PathLike[str]"]) -> List[str]:
    """The paths a list file names, one a line (blank lines and lines starting with # left
    out); "-" reads stdin."""
    src = os.fspath(source)
    if src == "-":
        text = sys.stdin.read()
    else:
        with open(src, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def expand(paths: Iterable[str]) -> List[str]:
    """Paths with each directory replaced by the wheels below it (sorted); other paths are
    kept as given (an ELF object, or a file that is missing: its record says so)."""
    out: List[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                found += [os.path.join(root, f) for f in files if f.endswith(".whl")]
            out += sorted(found)
        else:
            out.append(p)
    return out


def _targets(targets: Optional[Targets], options: Dict[str, Any]) -> Targets:
    if targets is None:
        targets = {"default": options}
    elif options:
        raise TypeError("scan(): give target options inside targets={name: {...}}, or "
                        "without targets, not both (%s)" % ", ".join(sorted(options)))
    if not targets:
        raise ValueError("scan(): targets is empty")
    out: Targets = {}
    for name, opts in targets.items():
        bad = sorted(set(opts) - set(_TARGET_KEYS))
        if bad:
            raise TypeError("scan(): target %r: unknown option %s (known: %s)"
                            % (name, ", ".join(bad), ", ".join(_TARGET_KEYS)))
        # Checked here, on the client, so that a bad rule or GPU fails before the cluster.
        wheelgate.Checker(**opts).close()
        # A copy of its own: no list is shared with another target or with the caller's.
        out[str(name)] = copy.deepcopy(dict(opts))
    return out


def scan(paths: Union[str, "os.PathLike[str]", Iterable[str]], out_dir: str,
         client: Any = None, partitions: Optional[int] = None, workers: int = 2,
         threads: int = 1, processes: bool = True, targets: Optional[Targets] = None,
         resume: bool = False, write: str = "worker", timeout: Optional[float] = None,
         **options: Any) -> Dict[str, Any]:
    """Judges every input on a Dask cluster; writes out_dir/part-NNNNN.jsonl and
    out_dir/summary.json and returns the summary.

    paths: a list of paths (directories stand for the wheels below them), or one str/path:
    a directory, or a file that lists paths one a line ("-": stdin). client: None (a
    LocalCluster of `workers` processes, or threads with processes=False, each with `threads`
    threads), a scheduler address ("tcp://host:8786") or a distributed.Client. partitions:
    how many tasks (default: 4 per worker thread, at most one per input). targets:
    {name: Checker options}; without it, the Checker options given as keywords (env, target,
    gpus, rules, disable, enable, fail_on, profile) are one target named "default". resume:
    keep the partitions out_dir already has (the same list and partitions give the same
    split). write: "worker" (the workers write the partitions: out_dir is shared) or
    "client". timeout: seconds to wait for the whole scan (None: no limit)."""
    distributed = _import("distributed")
    if write not in ("worker", "client"):
        raise ValueError("scan(): write must be 'worker' or 'client', not %r" % (write,))
    tg = _targets(targets, options)
    if isinstance(paths, (str, os.PathLike)):
        p = os.fspath(paths)
        items = expand([p]) if os.path.isdir(p) else read_list(p)
    else:
        items = list(paths)
    items = expand(items)
    out_dir = os.path.abspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.monotonic()
    own = None
    if client is None:
        own = distributed.LocalCluster(n_workers=workers, threads_per_worker=threads,
                                       processes=processes, dashboard_address=None)
        client_obj = distributed.Client(own)
    elif isinstance(client, str):
        client_obj = distributed.Client(client, timeout=timeout if timeout else 30)
    else:
        client_obj = client
    try:
        nthreads = max(1, sum(client_obj.nthreads().values()))
        n = partitions if partitions else 4 * nthreads
        n = max(1, min(n, len(items))) if items else 0
        # Contiguous slices: the same list and n give the same partitions (resume).
        bounds = [(len(items) * i // n, len(items) * (i + 1) // n) for i in range(n)]
        futures = []
        kept = []
        t1 = time.monotonic()  # the cluster is up: the scan itself from here
        for i, (a, b) in enumerate(bounds):
            if resume and os.path.exists(os.path.join(out_dir, _part_name(i))):
                kept.append(_part_name(i))
                continue
            futures.append(client_obj.submit(scan_partition, i, items[a:b], tg,
                                             out_dir if write == "worker" else None,
                                             key="wheelgate-scan-%05d-%s" % (i, os.urandom(4).hex()),
                                             pure=False))
        if futures and timeout is not None:
            # TimeoutError (distributed's, a subclass of the builtin's) past the deadline
            distributed.wait(futures, timeout=timeout)
        results = client_obj.gather(futures) if futures else []
        scan_seconds = time.monotonic() - t1
    finally:
        if own is not None:
            client_obj.close()
            own.close()
        elif isinstance(client, str):
            client_obj.close()
    for r in results:
        lines = r.pop("lines", None)
        if lines is not None:
            with open(os.path.join(out_dir, r["part"]), "w", encoding="utf-8") as f:
                f.writelines(lines)
    verdicts: Dict[str, Dict[str, int]] = {t: {"pass": 0, "fail": 0, "error": 0} for t in tg}
    inputs = 0
    for name in sorted([r["part"] for r in results] + kept):
        with open(os.path.join(out_dir, name), encoding="utf-8") as f:
            for line in f:
                rec = wheelgate.read_record(line)  # the library's reader
                inputs += 1
                for t in rec["targets"]:
                    verdicts.setdefault(t["target"], {"pass": 0, "fail": 0, "error": 0})
                    verdicts[t["target"]][t["verdict"]] += 1
    summary = {"schema": SUMMARY_SCHEMA, "inputs": inputs, "listed": len(items),
               "partitions": [_part_name(i) for i in range(n)], "resumed": kept,
               "targets": verdicts, "threads": nthreads,
               "seconds": round(time.monotonic() - t0, 3),
               "scan_seconds": round(scan_seconds, 3),
               "scanned": sum(r["inputs"] for r in results),
               "tasks": [{k: r[k] for k in ("part", "inputs", "seconds", "worker")}
                         for r in results]}
    with open(os.path.join(out_dir, "summary.json.tmp"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    os.replace(os.path.join(out_dir, "summary.json.tmp"), os.path.join(out_dir, "summary.json"))
    return summary


def _kv_targets(specs: List[str], common: Dict[str, Any]) -> Optional[Targets]:
    """--target-set NAME:KEY=VALUE,... (repeatable): one named target each, as `wheelgate
    scan --target-set` reads it: the common options (--target, --gpu, --env, --profile...)
    with the set's own on top. Each set starts from its own deep copy of the common options,
    so that one set's facts or GPUs never reach another set, nor the common options."""
    if not specs:
        return None
    out: Targets = {}
    for spec in specs:
        name, sep, rest = spec.partition(":")
        if not sep or not name:
            raise ValueError("--target-set: NAME:KEY=VALUE[,KEY=VALUE...], not %r" % spec)
        if name in out:
            raise ValueError("--target-set: two sets are named %r" % name)
        opts: Dict[str, Any] = copy.deepcopy(common)
        for key in ("target", "gpus"):
            opts[key] = list(opts.get(key) or [])
        for kv in filter(None, rest.split(",")):
            k, eq, v = kv.partition("=")
            if not eq or not k or not v:
                raise ValueError("--target-set %s: %r is not KEY=VALUE" % (name, kv))
            if k == "gpu":
                opts["gpus"].append(v)
            elif k in ("profile", "env", "fail_on"):
                opts[k] = v
            else:
                opts["target"].append("%s=%s" % (k, v))
        out[name] = opts
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m wheelgate.dask",
        description="Judge many wheels on a Dask cluster: JSON Lines partitions "
                    "(OUT/part-NNNNN.jsonl, schema wheelgate.scan/1) and OUT/summary.json.")
    ap.add_argument("paths", nargs="*", help="wheels, ELF objects or directories of wheels")
    ap.add_argument("--from", dest="from_file", metavar="FILE",
                    help="a file naming one path a line ('-': stdin)")
    ap.add_argument("-o", "--out-dir", required=True, help="where the partitions go")
    ap.add_argument("--scheduler", metavar="ADDRESS",
                    help="a running cluster's scheduler (tcp://host:8786); default: a "
                         "LocalCluster")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster workers (2)")
    ap.add_argument("--threads", type=int, default=1, help="threads per LocalCluster worker (1)")
    ap.add_argument("--threads-only", action="store_true",
                    help="LocalCluster workers as threads of this process, not processes")
    ap.add_argument("--partitions", type=int, help="tasks (default: 4 per worker thread)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the partitions OUT already has")
    ap.add_argument("--write", choices=("worker", "client"), default="worker",
                    help="who writes the partitions (worker: OUT is shared storage)")
    ap.add_argument("--timeout", type=float, help="seconds to wait for the scan")
    ap.add_argument("--target", action="append", default=[], metavar="KEY=VALUE",
                    help="a target fact (python, torch, cuda, cxx11abi), as wheelgate check")
    ap.add_argument("--gpu", action="append", default=[], help="a target GPU")
    ap.add_argument("--env", help="an environment to judge against")
    ap.add_argument("--rules", action="append", default=[], help="an extra rule file")
    ap.add_argument("--disable", action="append", default=[], help="rule selectors to disable")
    ap.add_argument("--enable", action="append", default=[], help="rule selectors to enable")
    ap.add_argument("--fail-on", default="error", choices=("error", "warning", "info"))
    ap.add_argument("--profile", default="auto", choices=("auto", "install", "publish"))
    ap.add_argument("--target-set", action="append", default=[], metavar="NAME:KEY=VALUE,...",
                    help="a named target (repeatable), as wheelgate scan --target-set: gpu=, "
                         "profile=, env= and target facts; the options above apply to each, "
                         "the set's own on top")
    a = ap.parse_args(argv)
    if not a.paths and not a.from_file:
        ap.error("no inputs: PATH... or --from FILE")
    items: List[str] = list(a.paths)
    if a.from_file:
        items += read_list(a.from_file)
    common: Dict[str, Any] = {"target": a.target, "gpus": a.gpu, "env": a.env,
                              "rules": a.rules, "disable": a.disable, "enable": a.enable,
                              "fail_on": a.fail_on, "profile": a.profile}
    try:
        named = _kv_targets(a.target_set, common)
        summary = scan(items, a.out_dir, client=a.scheduler, partitions=a.partitions,
                       workers=a.workers, threads=a.threads, processes=not a.threads_only,
                       targets=named, resume=a.resume, write=a.write, timeout=a.timeout,
                       **({} if named else common))
    except (wheelgate.WheelgateError, ImportError, OSError, ValueError) as e:
        print("wheelgate.dask: %s" % wheelgate.escape(str(e)), file=sys.stderr)
        return 2
    for t, v in summary["targets"].items():
        print("%s: %d inputs: %d pass, %d fail, %d error" % (wheelgate.escape(t),
              summary["inputs"], v["pass"], v["fail"], v["error"]))
    rate = summary["scanned"] / summary["scan_seconds"] if summary["scan_seconds"] else 0.0
    print("%d scanned in %.2f s on %d threads (%.0f inputs/s; %.2f s in all); %s"
          % (summary["scanned"], summary["scan_seconds"], summary["threads"], rate,
             summary["seconds"], os.path.join(a.out_dir, "summary.json")))
    return 1 if any(v["fail"] or v["error"] for v in summary["targets"].values()) else 0


if __name__ == "__main__":
    # Through the package's module, not __main__: the tasks Dask sends to workers are then
    # wheelgate.dask's functions, which the workers import.
    from wheelgate.dask import main as _main
    sys.exit(_main())

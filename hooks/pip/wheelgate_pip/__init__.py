"""The pip gate: every wheel pip is about to install (downloaded, from the cache, or built
from an sdist) is checked by wheelgate against the environment pip installs into, all of
them before the first is installed. One blocking finding stops the install before anything
is written. The gate holds no check logic: the verdicts are libwheelgate's (`wheelgate`).

Ways in:
    python -m wheelgate_pip install ARGS...     pip install ARGS..., gated
    python -m wheelgate_pip enable|disable|status
                                                every `pip install` of this environment
                                                gated (a .pth file), or not
Options (before or among the pip arguments): --wheelgate-warn-only, --wheelgate-gpu GPU,
--wheelgate-disable ID, --wheelgate-enable ID, --wheelgate-rules PATH,
--wheelgate-target SPEC, --wheelgate-fail-on LEVEL, --wheelgate-no-suggest,
--wheelgate-suggest-timeout SECONDS; $WHEELGATE_PIP_ARGS holds the same for gated plain
`pip install`; WHEELGATE_PIP=off bypasses the gate.

A refused wheel that pip found on an index page gets a suggestion: `wheelgate select` over
that page for the same project and version, judged for the same target; the variant it
chooses is named with the command that installs it (docs/select.md, "The pip gate").
"""
import os
import shlex
import sys

SUPPORTED = "pip 23.0 to 26.3 (pip._internal.req.install_given_reqs)"
SUGGEST_TIMEOUT = 60.0  # seconds `wheelgate select` may take for the suggestions of one refusal
_options = None
# What pip's `install` command was run with (captured by the wrapped InstallCommand.run).
_state = {"options": None, "preparer": None}


def bypassed():
    return os.environ.get("WHEELGATE_PIP", "").lower() in ("off", "0", "no")


class GateUnavailable(Exception):
    """This pip cannot be gated; the install is refused rather than left ungated."""


def parse_options(argv):
    """Splits --wheelgate-* options (and $WHEELGATE_PIP_ARGS) from pip's arguments."""
    opts = {"warn_only": False, "gpus": [], "disable": [], "enable": [], "rules": [],
            "target": [], "fail_on": "error", "suggest": True,
            "suggest_timeout": SUGGEST_TIMEOUT}
    lists = {"--wheelgate-gpu": "gpus", "--wheelgate-disable": "disable",
             "--wheelgate-enable": "enable", "--wheelgate-rules": "rules",
             "--wheelgate-target": "target"}
    rest = []
    args = shlex.split(os.environ.get("WHEELGATE_PIP_ARGS", "")) + list(argv)
    i = 0
    while i < len(args):
        a = args[i]
        key, eq, val = a.partition("=")
        if a == "--wheelgate-warn-only":
            opts["warn_only"] = True
        elif a == "--wheelgate-no-suggest":
            opts["suggest"] = False
        elif key in lists or key in ("--wheelgate-fail-on", "--wheelgate-suggest-timeout"):
            if not eq:
                if i + 1 >= len(args):
                    raise SystemExit("wheelgate: %s needs a value" % key)
                i += 1
                val = args[i]
            if key == "--wheelgate-fail-on":
                opts["fail_on"] = val
            elif key == "--wheelgate-suggest-timeout":
                try:
                    opts["suggest_timeout"] = float(val)
                except ValueError:
                    opts["suggest_timeout"] = -1.0
                if not 0 < opts["suggest_timeout"] <= 3600:
                    raise SystemExit("wheelgate: --wheelgate-suggest-timeout takes seconds "
                                     "(more than 0, at most 3600), not %r" % val)
            else:
                opts[lists[key]].append(val)
        elif a.startswith("--wheelgate-"):
            raise SystemExit("wheelgate: unknown option %s" % a)
        else:
            rest.append(a)
        i += 1
    return opts, rest


def _wheel_paths(requirements):
    """The wheel file of each requirement. A requirement the gate cannot read (pip renamed
    what it reads) raises GateUnavailable: never an install that was not checked."""
    paths, editables, unchecked = [], [], []
    for req in requirements:
        if not hasattr(req, "local_file_path") or not hasattr(req, "is_wheel"):
            raise GateUnavailable("pip's requirement %s has no local_file_path/is_wheel: "
                                  "wheelgate supports %s" % (req, SUPPORTED))
        path = req.local_file_path
        if path and req.is_wheel and path.endswith(".whl"):
            if getattr(req, "editable", False):
                editables.append(path)
            else:
                paths.append(path)
        else:
            unchecked.append(str(req))
    return paths, editables, unchecked


def _editable_wheel(path, tmpdir):
    """An editable wheel holds only a .pth or a finder pointing at the source tree: the
    wheel as it will import is made of its members and the source files they point at."""
    import zipfile
    roots = []  # (name in the wheel, path on disk)
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    for n, data in members.items():
        if "/" in n:
            continue
        text = data.decode("utf-8", "replace")
        if n.endswith(".pth"):
            for line in text.splitlines():
                line = line.strip()
                if line and not line.startswith(("#", "import")) and os.path.isdir(line):
                    for e in sorted(os.listdir(line)):
                        full = os.path.join(line, e)
                        if os.path.isfile(os.path.join(full, "__init__.py")):
                            roots.append((e, full))
        elif n.startswith("__editable__") and n.endswith("_finder.py"):
            import ast
            for node in ast.parse(text).body:
                if (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and getattr(node.targets[0], "id", "") == "MAPPING"):
                    try:
                        mapping = ast.literal_eval(node.value)
                    except ValueError:
                        mapping = {}
                    for name, where in sorted(mapping.items()):
                        roots.append((name, where))
    files = {}
    for name, where in roots:
        if os.path.isfile(where):
            files[name + os.path.splitext(where)[1]] = where
            continue
        for d, dirs, fs in os.walk(where):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__" and not x.startswith("."))
            for f in sorted(fs):
                rel = os.path.relpath(os.path.join(d, f), where)
                files[name + "/" + rel.replace(os.sep, "/")] = os.path.join(d, f)
    out = os.path.join(tmpdir, os.path.basename(path))
    # The editable wheel's RECORD lists only what it installs: the wheel judged gets a RECORD
    # of its own, of what it holds.
    import base64
    import hashlib
    record = None
    body = {}
    for n, data in members.items():
        if n.endswith(".dist-info/RECORD"):
            record = n
        else:
            body[n] = data
    for n, f in files.items():
        if n not in body:
            with open(f, "rb") as fh:
                body[n] = fh.read()
    rows = ["%s,sha256=%s,%d" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest())
                                 .rstrip(b"=").decode(), len(d)) for n, d in body.items()]
    with zipfile.ZipFile(out, "w") as z:
        for n, data in body.items():
            z.writestr(n, data)
        if record:
            z.writestr(record, "\n".join(rows + [record + ",,"]) + "\n")
    return out


def _install_env(root=None, home=None, prefix=None, user=False):
    """The environment that will import what pip installs: sys.prefix, unless --target
    (home), --prefix, --root or --user send the files elsewhere. Where that place holds
    nothing yet, nothing there can break: the interpreter's own environment is judged."""
    options = _state["options"]
    where = None
    if home:
        where = getattr(options, "target_dir", None) or home
    elif root or prefix or user:
        from pip._internal.locations import get_scheme
        scheme = get_scheme("", user=bool(user), home=None, root=root, prefix=prefix)
        where = scheme.platlib if _has_files(scheme.platlib) else scheme.purelib
    return where if where and _has_files(where) else sys.prefix


def _has_files(path):
    try:
        return any(True for _ in os.scandir(path))
    except OSError:
        return False


def _page_of(req):
    """The index page pip found req's file on (pip's Link.comes_from: the page URL in pip 23.0
    to 26.3), when it is an http(s) URL; else None (a local file, a direct URL)."""
    link = getattr(req, "link", None)
    page = getattr(link, "comes_from", None)
    if page is not None and not isinstance(page, str):
        page = getattr(page, "url", None)  # an IndexContent, in older pips
    if isinstance(page, str) and page.lower().startswith(("http://", "https://")):
        return page
    return None


def _sh_quote(url):
    return "'" + url.replace("'", "'\\''") + "'"


def _select_args(opts, env):
    """`wheelgate select`'s target options: the gate's own (what gate() gives the Checker)."""
    args = ["--no-config", "--fail-on", opts["fail_on"]]
    if env:
        args += ["--env", env]
    for key, flag in (("target", "--target"), ("gpus", "--gpu"), ("rules", "--rules"),
                      ("disable", "--disable"), ("enable", "--enable")):
        for v in opts[key]:
            args += [flag, v]
    return args


def _suggest_one(req, page, path, opts, env, deadline):
    """One line (or two) about the variants of the refused wheel's release on its page."""
    import json
    import subprocess
    import time
    import wheelgate
    e = wheelgate.escape
    parts = os.path.basename(path)[:-4].split("-")
    if len(parts) < 5:
        return "wheelgate: no suggestion for %s: not a wheel file name" % e(os.path.basename(path))
    name, version = parts[0], parts[1].split("+")[0]
    what = "%s %s" % (e(name), e(version))
    left = deadline - time.monotonic()
    if left <= 0:
        return ("wheelgate: no suggestion for %s: the suggestions' %g s ran out "
                "(--wheelgate-suggest-timeout)" % (what, opts["suggest_timeout"]))
    cli = _state.get("cli")
    if not cli:
        return "wheelgate: no suggestion for %s: %s" % (what, e(_state.get("cli_error")
                                                               or "no wheelgate CLI"))
    cmd = [cli, "select", "--format", "json", "--allow-unhashed", "--project", name,
           "--version", version] + _select_args(opts, env) + [page]
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=left)
    except subprocess.TimeoutExpired:
        return ("wheelgate: no suggestion for %s: wheelgate select over %s did not finish "
                "within %g s (--wheelgate-suggest-timeout)" % (what, e(page), opts["suggest_timeout"]))
    if p.returncode not in (0, 1):
        why = [line for line in p.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        return ("wheelgate: no suggestion for %s: wheelgate select over %s failed (exit %d): %s"
                % (what, e(page), p.returncode, e(why[-1] if why else "no message")))
    doc = json.loads(p.stdout.decode("utf-8"))
    chosen = doc.get("chosen")
    n = len(doc.get("candidates") or [])
    link = getattr(req, "link", None)
    refused = getattr(link, "url_without_fragment", None) or str(getattr(link, "url", ""))
    refused = refused.split("#", 1)[0]
    if chosen and chosen.split("#", 1)[0] != refused:
        return ("wheelgate: %s has a variant that works here: %s\n  pip install %s"
                % (what, e(chosen), e(_sh_quote(chosen))))
    if chosen:
        return ("wheelgate: no other variant of %s on %s: wheelgate select finds the refused "
                "one works when installed alone" % (what, e(page)))
    return ("wheelgate: no variant of %s on %s works here (%d judged by wheelgate select)"
            % (what, e(page), n))


def suggest(blocking, requirements, opts, env):
    """For each refused wheel pip found on an index page: the variant of the same project and
    version that `wheelgate select` chooses on that page for the gate's own target, as lines
    to add to the refusal. Bounded by opts["suggest_timeout"] in all; never raises: a failure
    is one line saying why there is no suggestion."""
    if not opts.get("suggest", True):
        return []
    lines = []
    try:
        import time
        # options made by an older caller lack some keys: the defaults of parse_options
        opts = dict({"gpus": [], "disable": [], "enable": [], "rules": [], "target": [],
                     "fail_on": "error", "suggest_timeout": SUGGEST_TIMEOUT}, **opts)
        deadline = time.monotonic() + opts.get("suggest_timeout", SUGGEST_TIMEOUT)
        byfile = {}
        for req in requirements:
            path = getattr(req, "local_file_path", None)
            if path and not getattr(req, "editable", False):
                byfile[os.path.abspath(path)] = req
        for r in blocking:
            req = byfile.get(os.path.abspath(r.path))
            page = _page_of(req) if req is not None else None
            if page is None:
                continue
            try:
                lines.append(_suggest_one(req, page, r.path, opts, env, deadline))
            except Exception as ex:  # noqa: BLE001 - a suggestion never changes the refusal
                lines.append("wheelgate: no suggestion for %s: %s: %s" % (
                    _esc(os.path.basename(r.path)), type(ex).__name__, _esc(str(ex))))
    except Exception as ex:  # noqa: BLE001
        lines.append("wheelgate: no suggestion: %s: %s" % (type(ex).__name__, _esc(str(ex))))
    return lines


def _esc(text):
    try:
        import wheelgate
        return wheelgate.escape(text)
    except Exception:  # noqa: BLE001
        return text.encode("ascii", "backslashreplace").decode("ascii")


def gate(requirements, options=None, env=sys.prefix, dry_run=False, report_only=False):
    """Checks the wheels of requirements; raises pip's InstallationError when one blocks.
    dry_run: says what would be blocked; report_only (pip wheel): returns the blocking names."""
    import tempfile
    import wheelgate
    opts = options or _options or parse_options([])[0]
    paths, editables, unchecked = _wheel_paths(requirements)
    for u in unchecked:
        if dry_run:
            print("wheelgate: %s is not a wheel yet (pip builds it only to install it): "
                  "not checked by --dry-run" % wheelgate.escape(u), file=sys.stderr)
        else:
            _refuse("wheelgate cannot check %s: not a wheel (a legacy setup.py install); "
                    "install with --use-pep517, or WHEELGATE_PIP=off bypasses the gate"
                    % wheelgate.escape(u))
    if not paths and not editables:
        return []
    tmp = tempfile.TemporaryDirectory(prefix="wheelgate-editable-") if editables else None
    try:
        if tmp is not None:
            paths = paths + [_editable_wheel(e, tmp.name) for e in editables]
        try:
            checker = wheelgate.Checker(env=env, target=opts["target"], gpus=opts["gpus"],
                                        rules=opts["rules"], disable=opts["disable"],
                                        enable=opts["enable"], fail_on=opts["fail_on"],
                                        profile="install")
            with checker:
                # One install: each wheel resolves against the others, and what it breaks
                # among the installed distributions is told (WG-LD-006).
                result = checker.check(paths, together=True)
        except wheelgate.WheelgateError as e:
            _refuse("wheelgate cannot check the wheels: %s" % e)
    finally:
        if tmp is not None:
            tmp.cleanup()
    blocking = [r for r in result.reports if r.blocking]
    # Warnings are shown even when nothing blocks: an optional module or plugin that will not
    # load is worth knowing before it is needed.
    warned = sum(1 for r in result.reports for f in r.findings if f.severity == "warning")
    sys.stderr.write(result.text if blocking or warned or opts["warn_only"] or dry_run
                     or report_only else "")
    # The paths as the report has them (bytes not UTF-8 already \\xNN), escaped for pip's
    # terminal: a wheel's name is a stranger's text.
    names = ", ".join(wheelgate.escape(os.path.basename(r.path)) for r in blocking)
    where = "" if env == sys.prefix or env is None else " (judged for %s)" % wheelgate.escape(env)
    if blocking and report_only:
        pass
    elif blocking and opts["warn_only"]:
        print("wheelgate: warn-only: %s despite blocking findings in %s"
              % ("would install" if dry_run else "installing", names), file=sys.stderr)
    elif blocking and dry_run:
        _refuse("\n".join(["wheelgate would block the install: %s%s" % (names, where)] +
                          suggest(blocking, requirements, opts, env)))
    elif blocking:
        _refuse("\n".join(["wheelgate blocked the install: %s%s (nothing was installed; "
                           "WHEELGATE_PIP=off bypasses the gate)" % (names, where)] +
                          suggest(blocking, requirements, opts, env)))
    else:
        print("wheelgate: %d wheel(s) checked%s, nothing %s%s" %
              (len(paths), where, "would block" if dry_run else "blocks",
               " (%d warning(s) above)" % warned if warned else ""), file=sys.stderr)
    return [os.path.basename(r.path) for r in blocking]


def preload():
    """Imports and loads everything the gate uses, before pip's install starts: pip 26.2
    warns on, and 26.3 refuses, a module imported after it (its audit hook)."""
    import ast  # noqa: F401 (stdlib: imported early all the same)
    import base64  # noqa: F401
    import hashlib  # noqa: F401
    import inspect  # noqa: F401
    import json  # noqa: F401 (the suggestions: `wheelgate select`'s document)
    import subprocess  # noqa: F401
    import tempfile  # noqa: F401
    import time  # noqa: F401
    import zipfile  # noqa: F401
    import wheelgate
    load = getattr(wheelgate, "_load", None)
    if load is not None:
        load()
    else:
        wheelgate.library_path()
    # The CLI the suggestions run (`wheelgate select`), found now: finding it imports.
    try:
        _state["cli"] = wheelgate.cli_path()
    except Exception as e:  # noqa: BLE001 - only the suggestions need it
        _state["cli"], _state["cli_error"] = None, "no wheelgate CLI: %s" % e
    from pip._internal.exceptions import InstallationError  # noqa: F401
    try:
        from pip._internal.locations import get_scheme  # noqa: F401
    except ImportError as e:
        raise GateUnavailable("pip has no pip._internal.locations.get_scheme (%s): wheelgate "
                              "supports %s" % (e, SUPPORTED))


def patch_install_command(module):
    """Wraps pip's InstallCommand: its options (where the files go, --dry-run) are kept, and
    --dry-run judges what it resolved."""
    cls = getattr(module, "InstallCommand", None)
    gated = getattr(module, "install_given_reqs", None)
    if cls is None or not callable(getattr(cls, "run", None)):
        raise GateUnavailable("pip's install command has no InstallCommand.run: wheelgate "
                              "supports %s" % SUPPORTED)
    if not getattr(gated, "__wheelgate__", False):
        raise GateUnavailable("pip's install command does not call the gated "
                              "install_given_reqs: wheelgate supports %s" % SUPPORTED)
    if getattr(cls.run, "__wheelgate__", False):
        return
    original = cls.run

    def run(self, options, args):
        _state["options"] = options
        if getattr(options, "dry_run", False) and not bypassed():
            make_resolver = self.make_resolver

            def gated_make_resolver(*a, **kw):
                resolver = make_resolver(*a, **kw)
                _state["preparer"] = kw.get("preparer")
                resolve = resolver.resolve

                def gated_resolve(*ra, **rkw):
                    requirement_set = resolve(*ra, **rkw)
                    reqs = list(requirement_set.requirements_to_install)
                    preparer = _state["preparer"]
                    if preparer is not None and any(not r.local_file_path for r in reqs):
                        preparer.prepare_linked_requirements_more(reqs)
                    gate(reqs, _options, env=_install_env(
                        options.root_path, options.target_dir, options.prefix_path,
                        options.use_user_site), dry_run=True)
                    return requirement_set

                resolver.resolve = gated_resolve
                return resolver

            self.make_resolver = gated_make_resolver
        return original(self, options, args)

    run.__wheelgate__ = True
    cls.run = run


def wheel_mode():
    mode = os.environ.get("WHEELGATE_PIP_WHEEL", "report").lower()
    if mode not in ("report", "block", "off"):
        raise SystemExit("wheelgate: WHEELGATE_PIP_WHEEL is report, block or off, not %r"
                         % mode)
    return mode


def patch_wheel_command(module):
    """`pip wheel`: the wheels it writes are reported on (WHEELGATE_PIP_WHEEL=block: a
    blocking finding makes it exit 1; =off: not checked)."""
    cls = getattr(module, "WheelCommand", None)
    if cls is None or getattr(cls.run, "__wheelgate__", False):
        return
    original = cls.run

    def run(self, options, args):
        mode = "off" if bypassed() else wheel_mode()
        resolved = []
        if mode != "off":
            make_resolver = self.make_resolver

            def capturing_make_resolver(*a, **kw):
                resolver = make_resolver(*a, **kw)
                resolve = resolver.resolve

                def capturing_resolve(*ra, **rkw):
                    requirement_set = resolve(*ra, **rkw)
                    resolved.extend(requirement_set.requirements.values())
                    return requirement_set

                resolver.resolve = capturing_resolve
                return resolver

            self.make_resolver = capturing_make_resolver
        rc = original(self, options, args)
        if mode == "off":
            return rc
        # the wheels pip wrote (or found already there) in the wheel directory
        new = []
        for r in resolved:
            f = getattr(r, "local_file_path", None)
            if f and f.endswith(".whl"):
                f = os.path.join(options.wheel_dir, os.path.basename(f))
                if os.path.isfile(f) and f not in new:
                    new.append(f)

        class _Wheel:
            def __init__(self, p):
                self.local_file_path, self.is_wheel, self.editable = p, True, False

            def __str__(self):
                return self.local_file_path
        blocking = gate([_Wheel(p) for p in new], _options, env=sys.prefix, report_only=True)
        if blocking:
            import wheelgate
            print("wheelgate: pip wheel wrote wheels with blocking findings: %s%s"
                  % (", ".join(wheelgate.escape(b) for b in blocking),
                     "" if mode == "block" else " (reported only; WHEELGATE_PIP_WHEEL=block "
                     "makes pip wheel fail)"), file=sys.stderr)
            if mode == "block":
                return rc or 1
        return rc

    run.__wheelgate__ = True
    cls.run = run


def _refuse(message):
    try:
        from pip._internal.exceptions import InstallationError
    except ImportError:  # pragma: no cover - pip is there when the gate runs
        raise SystemExit(message)
    raise InstallationError(message)


def install_hook(options=None):
    """Wraps pip's install_given_reqs so that the gate sees the whole list first; options are
    the gate's from then on (None: $WHEELGATE_PIP_ARGS, read when the gate runs)."""
    global _options
    try:
        import pip
        import pip._internal.req as req
    except ImportError as e:
        raise GateUnavailable("pip is not importable here: %s" % e)
    # Only now: with the gate enabled, the import above ran the .pth's hook, which installs
    # the gate with the options of $WHEELGATE_PIP_ARGS; the caller's (the command line of
    # `python -m wheelgate_pip install`) come after, and win.
    _options = options
    original = getattr(req, "install_given_reqs", None)
    if original is None or getattr(original, "__wheelgate__", False):
        if original is None:
            raise GateUnavailable("pip %s has no pip._internal.req.install_given_reqs: "
                                  "wheelgate supports %s" % (pip.__version__, SUPPORTED))
        return
    preload()
    import inspect
    signature = inspect.signature(original)
    params = list(signature.parameters)
    if not params or params[0] != "requirements":
        raise GateUnavailable("pip %s changed install_given_reqs%s: wheelgate supports %s"
                              % (pip.__version__, tuple(params), SUPPORTED))

    def gated(requirements, *args, **kwargs):
        if bypassed():
            print("wheelgate: WHEELGATE_PIP=off: not checking", file=sys.stderr)
        else:
            try:
                bound = signature.bind(requirements, *args, **kwargs).arguments
            except TypeError:
                bound = kwargs
            try:
                gate(requirements, _options, env=_install_env(
                    bound.get("root"), bound.get("home"), bound.get("prefix"),
                    bound.get("use_user_site")))
            except GateUnavailable as e:
                _refuse("wheelgate cannot check this install: %s (nothing was installed; "
                        "WHEELGATE_PIP=off bypasses the gate)" % e)
        return original(requirements, *args, **kwargs)

    gated.__wheelgate__ = True
    req.install_given_reqs = gated
    cmd = sys.modules.get("pip._internal.commands.install")
    if cmd is not None:
        cmd.install_given_reqs = gated

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
--wheelgate-target SPEC, --wheelgate-fail-on LEVEL; $WHEELGATE_PIP_ARGS holds the same for
gated plain `pip install`; WHEELGATE_PIP=off bypasses the gate.
"""
import os
import shlex
import sys

SUPPORTED = "pip 20.3 to 24 (pip._internal.req.install_given_reqs)"
_options = None


class GateUnavailable(Exception):
    """This pip cannot be gated; the install is refused rather than left ungated."""


def parse_options(argv):
    """Splits --wheelgate-* options (and $WHEELGATE_PIP_ARGS) from pip's arguments."""
    opts = {"warn_only": False, "gpus": [], "disable": [], "enable": [], "rules": [],
            "target": [], "fail_on": "error"}
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
        elif key in lists or key == "--wheelgate-fail-on":
            if not eq:
                if i + 1 >= len(args):
                    raise SystemExit("wheelgate: %s needs a value" % key)
                i += 1
                val = args[i]
            if key == "--wheelgate-fail-on":
                opts["fail_on"] = val
            else:
                opts[lists[key]].append(val)
        elif a.startswith("--wheelgate-"):
            raise SystemExit("wheelgate: unknown option %s" % a)
        else:
            rest.append(a)
        i += 1
    return opts, rest


def _wheel_paths(requirements):
    paths, unchecked = [], []
    for req in requirements:
        path = getattr(req, "local_file_path", None)
        is_wheel = getattr(req, "is_wheel", False)
        if path and is_wheel and path.endswith(".whl"):
            paths.append(path)
        else:
            unchecked.append(str(req))
    return paths, unchecked


def gate(requirements, options=None):
    """Checks the wheels of requirements; raises pip's InstallationError when one blocks."""
    import wheelgate
    opts = options or _options or parse_options([])[0]
    paths, unchecked = _wheel_paths(requirements)
    for u in unchecked:
        print("wheelgate: %s is not a wheel (an editable or legacy install): not checked"
              % wheelgate.escape(u),
              file=sys.stderr)
    if not paths:
        return
    try:
        checker = wheelgate.Checker(env=sys.prefix, target=opts["target"], gpus=opts["gpus"],
                                    rules=opts["rules"], disable=opts["disable"],
                                    enable=opts["enable"], fail_on=opts["fail_on"],
                                    profile="install")
        with checker:
            result = checker.check(paths)
    except wheelgate.WheelgateError as e:
        _refuse("wheelgate cannot check the wheels: %s" % e)
    blocking = [r for r in result.reports if r.blocking]
    # Warnings are shown even when nothing blocks: an optional module or plugin that will not
    # load is worth knowing before it is needed.
    warned = sum(1 for r in result.reports for f in r.findings if f.severity == "warning")
    sys.stderr.write(result.text if blocking or warned or opts["warn_only"] else "")
    # The paths as the report has them (bytes not UTF-8 already \\xNN), escaped for pip's
    # terminal: a wheel's name is a stranger's text.
    names = ", ".join(wheelgate.escape(os.path.basename(r.path)) for r in blocking)
    if blocking and opts["warn_only"]:
        print("wheelgate: warn-only: installing despite blocking findings in %s" % names,
              file=sys.stderr)
    elif blocking:
        _refuse("wheelgate blocked the install: %s (nothing was installed; "
                "WHEELGATE_PIP=off bypasses the gate)" % names)
    else:
        print("wheelgate: %d wheel(s) checked, nothing blocks%s" %
              (len(paths), " (%d warning(s) above)" % warned if warned else ""), file=sys.stderr)


def _refuse(message):
    try:
        from pip._internal.exceptions import InstallationError
    except ImportError:  # pragma: no cover - pip is there when the gate runs
        raise SystemExit(message)
    raise InstallationError(message)


def install_hook(options=None):
    """Wraps pip's install_given_reqs so that the gate sees the whole list first."""
    global _options
    _options = options
    try:
        import pip
        import pip._internal.req as req
    except ImportError as e:
        raise GateUnavailable("pip is not importable here: %s" % e)
    original = getattr(req, "install_given_reqs", None)
    if original is None or getattr(original, "__wheelgate__", False):
        if original is None:
            raise GateUnavailable("pip %s has no pip._internal.req.install_given_reqs: "
                                  "wheelgate supports %s" % (pip.__version__, SUPPORTED))
        return
    import inspect
    params = list(inspect.signature(original).parameters)
    if not params or params[0] != "requirements":
        raise GateUnavailable("pip %s changed install_given_reqs%s: wheelgate supports %s"
                              % (pip.__version__, tuple(params), SUPPORTED))

    def gated(requirements, *args, **kwargs):
        if os.environ.get("WHEELGATE_PIP", "").lower() in ("off", "0", "no"):
            print("wheelgate: WHEELGATE_PIP=off: not checking", file=sys.stderr)
        else:
            gate(requirements, _options)
        return original(requirements, *args, **kwargs)

    gated.__wheelgate__ = True
    req.install_given_reqs = gated
    cmd = sys.modules.get("pip._internal.commands.install")
    if cmd is not None:
        cmd.install_given_reqs = gated

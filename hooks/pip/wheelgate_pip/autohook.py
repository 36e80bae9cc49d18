"""Loaded by the .pth file `python -m wheelgate_pip enable` writes. At Python start it only
registers an import finder (nothing else is imported, nothing happens in processes that never
run pip). When pip imports pip._internal.req, the binding and the library are loaded and the
gate put in front of install_given_reqs, before pip's install starts (pip 26.2+ watches for
imports after that). When pip loads its install command and the gate could not be put in
place, pip stops there with one message: never an ungated install. When `pip uninstall`
removes wheelgate itself, the .pth goes with it (the gate is off, and pip says so)."""
import importlib.abc
import importlib.machinery
import os
import sys

_ERROR = []
_PTH = []


def fail_closed_message(why, pth=None):
    return ("wheelgate: the pip gate of %s is enabled but cannot run: %s\n"
            "wheelgate: pip install refused, nothing installed. Fix: reinstall wheelgate with "
            "the gate bypassed (WHEELGATE_PIP=off pip install --force-reinstall wheelgate), or "
            "turn the gate off with 'python -m wheelgate_pip disable'%s; WHEELGATE_PIP=off "
            "bypasses it for one command.\n"
            % (sys.prefix, why, " (or delete %s)" % pth if pth else ""))


def _fail(why):
    sys.stderr.write(fail_closed_message(why, _PTH[0] if _PTH else None))
    raise SystemExit(2)


def _on_req(module):
    import wheelgate_pip
    try:
        # Options already given (`python -m wheelgate_pip wheel --wheelgate-...`, or install's,
        # set after this import) are kept: $WHEELGATE_PIP_ARGS alone is for plain pip.
        opts = wheelgate_pip._options
        wheelgate_pip.install_hook(opts if opts is not None else wheelgate_pip.parse_options([])[0])
    except Exception as e:  # the package broken, the library not loadable, pip changed
        _ERROR.append("%s: %s" % (type(e).__name__, e))


def _on_install(module):
    if _ERROR:
        _fail(_ERROR[0])
    import wheelgate_pip
    try:
        wheelgate_pip.patch_install_command(module)
    except Exception as e:
        _fail("%s: %s" % (type(e).__name__, e))


def _on_wheel(module):
    import wheelgate_pip
    if _ERROR:
        sys.stderr.write("wheelgate: pip wheel: the wheels are not checked: %s\n" % _ERROR[0])
        return
    try:
        wheelgate_pip.patch_wheel_command(module)
    except Exception as e:
        sys.stderr.write("wheelgate: pip wheel: the wheels are not checked: %s\n" % e)


# Where the gate's own files are: the site directory wheelgate was installed into.
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def dist_installed(site):
    """Whether site holds a wheelgate distribution (its .dist-info, any version)."""
    try:
        names = os.listdir(site)
    except OSError:
        return False
    return any(n.lower().startswith("wheelgate-") and n.endswith(".dist-info") for n in names)


def uninstalled_message(pth):
    return ("wheelgate: wheelgate was uninstalled from %s: its pip gate is off (%s removed)\n"
            % (sys.prefix, pth))


def _on_uninstall(module):
    """`pip uninstall wheelgate` with the gate enabled: once wheelgate's distribution and the
    gate's package are gone, the .pth goes too and pip's output says so. (The .pth is not in
    the RECORD: a reinstall or upgrade of wheelgate, which uninstalls the release before it,
    keeps the environment gated.)"""
    cls = getattr(module, "UninstallCommand", None)
    if cls is None or not callable(getattr(cls, "run", None)) \
            or getattr(cls.run, "__wheelgate__", False):
        return
    original = cls.run

    def run(self, options, args):
        before = dist_installed(_HERE)
        try:
            return original(self, options, args)
        finally:
            if (before and _PTH and not dist_installed(_HERE)
                    and not os.path.exists(os.path.abspath(__file__))):
                try:
                    os.unlink(_PTH[0])
                    sys.stderr.write(uninstalled_message(_PTH[0]))
                except FileNotFoundError:
                    pass
                except OSError as e:
                    sys.stderr.write("wheelgate: wheelgate was uninstalled from %s but its pip "
                                     "gate's %s cannot be removed (%s): delete it\n"
                                     % (sys.prefix, _PTH[0], e))

    run.__wheelgate__ = True
    cls.run = run


_TARGETS = {"pip._internal.req": _on_req, "pip._internal.commands.install": _on_install,
            "pip._internal.commands.wheel": _on_wheel,
            "pip._internal.commands.uninstall": _on_uninstall}


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        hook = _TARGETS.get(name)
        if hook is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            if name == "pip._internal.req":
                _ERROR.append("pip has no pip._internal.req")
            return spec
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module):
            original(module)
            hook(module)

        loader.exec_module = exec_module
        return spec


def arm(lib=None, pth=None):
    if lib and not os.environ.get("WHEELGATE_LIB"):
        os.environ["WHEELGATE_LIB"] = lib
    if pth:
        _PTH[:] = [pth]
    if os.environ.get("WHEELGATE_PIP", "").lower() in ("off", "0", "no"):
        return
    for name, hook in _TARGETS.items():
        if name in sys.modules:
            hook(sys.modules[name])
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())

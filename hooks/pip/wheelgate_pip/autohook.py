"""Loaded by the .pth file `python -m wheelgate_pip enable` writes: waits for pip's
pip._internal.req to be imported (nothing happens in processes that never run pip), then
puts the gate in front of install_given_reqs."""
import importlib.abc
import importlib.machinery
import os
import sys

_TARGET = "pip._internal.req"


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module):
            original(module)
            _arm_now()

        loader.exec_module = exec_module
        return spec


def _arm_now():
    import wheelgate_pip
    try:
        wheelgate_pip.install_hook(wheelgate_pip.parse_options([])[0])
    except wheelgate_pip.GateUnavailable as e:
        sys.stderr.write("\n*** wheelgate: %s\n*** this pip cannot be gated: refusing to run "
                         "(WHEELGATE_PIP=off to bypass, or 'python -m wheelgate_pip disable')\n"
                         % e)
        raise SystemExit(2)


def arm(lib=None):
    if lib and not os.environ.get("WHEELGATE_LIB"):
        os.environ["WHEELGATE_LIB"] = lib
    if os.environ.get("WHEELGATE_PIP", "").lower() in ("off", "0", "no"):
        return
    if _TARGET in sys.modules:
        _arm_now()
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())

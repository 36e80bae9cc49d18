"""python -m wheelgate_pip install ARGS... | enable | disable | status"""
import os
import sys
import sysconfig

import wheelgate_pip

PTH = "wheelgate-pip.pth"
USAGE = """usage: python -m wheelgate_pip install [--wheelgate-OPTION...] PIP-ARGS...
       python -m wheelgate_pip wheel [--wheelgate-OPTION...] PIP-ARGS...
       python -m wheelgate_pip enable | disable | status

install  runs `pip install PIP-ARGS`, checking every wheel with wheelgate before anything
         is installed; a blocking finding stops the install.
enable   gates every `pip install` of this environment (writes %s into site-packages);
         options for it go in $WHEELGATE_PIP_ARGS.
         If it cannot run (wheelgate gone or broken, pip changed), pip install stops.
wheel    runs `pip wheel PIP-ARGS` and reports on the wheels it writes
         (WHEELGATE_PIP_WHEEL=block: exit 1 on a blocking finding; =off: no check).
disable  removes that file (uninstalling wheelgate does too; a reinstall or an upgrade
         of wheelgate keeps it).     status  says whether this environment is gated.
options: --wheelgate-warn-only, --wheelgate-gpu GPU, --wheelgate-disable ID,
         --wheelgate-enable ID, --wheelgate-rules PATH, --wheelgate-target SPEC,
         --wheelgate-fail-on error|warning|info,
         --wheelgate-no-suggest (a refused wheel from an index page: no 'wheelgate
         select' for the variant that works), --wheelgate-suggest-timeout SECONDS (60).
         WHEELGATE_PIP=off bypasses the gate.
""" % PTH


# The .pth line runs this with exec() at every Python start of the environment: it must never
# raise (a traceback at every start) and, when wheelgate's package is gone or broken, it makes
# `pip install` stop with one message instead of installing ungated (fail-closed). One case is
# not a broken gate: wheelgate, installed as a distribution (DIST: its .dist-info when enabled),
# was uninstalled (pip uninstall, uv, by hand): its .dist-info and the gate's package are gone
# from HERE. Then the gate is off: the .pth removes itself and says so once (where it cannot
# be removed, `pip install` says so and goes on). A .dist-info left without the package, or a
# package that does not import, is broken: closed. A reinstall or an upgrade of wheelgate keeps
# the .pth (it is not in the RECORD) and the environment gated; a Python started while pip
# replaces wheelgate sees pip's stash of the old release and stays closed, not off.
GUARD = """import os, sys
HERE, LIB, PTH, DIST = %r, %r, %r, %r
def _at_pip_install(then):
    class _Hook:
        def find_spec(self, name, path=None, target=None):
            if name == "pip._internal.commands.install":
                then()
            return None
    sys.meta_path.insert(0, _Hook())
def _closed(why):
    msg = ("wheelgate: the pip gate of %%s is enabled but cannot run: %%s\\n"
           "wheelgate: pip install refused, nothing installed. Fix: reinstall wheelgate with "
           "the gate bypassed (WHEELGATE_PIP=off pip install --force-reinstall wheelgate), or "
           "turn the gate off by deleting %%s ('python -m wheelgate_pip disable' where "
           "wheelgate is importable); WHEELGATE_PIP=off bypasses it for one command.\\n"
           %% (sys.prefix, why, PTH))
    def refuse():
        sys.stderr.write(msg)
        raise SystemExit(2)
    _at_pip_install(refuse)
def _uninstalled():
    if not DIST or os.path.exists(os.path.join(HERE, "wheelgate_pip", "autohook.py")):
        return False
    try:
        names = os.listdir(HERE)
    except OSError:
        return False
    # pip moves what it uninstalls aside first (~heelgate_pip, ~heelgate-X.dist-info) and
    # removes it once the new release is in: while such a stash is there, an upgrade or a
    # reinstall is under way, not an uninstall (closed for that moment, not turned off).
    if any(len(n) > 1 and n[0] in "-~.=%%0123456789" and n[1:].lower().startswith("heelgate")
           for n in names):
        return False
    return not any(n.lower().startswith("wheelgate-") and n.endswith(".dist-info") for n in names)
def _off():
    try:
        os.unlink(PTH)
    except FileNotFoundError:
        return
    except OSError as e:
        said, why = [], str(e)
        def note():
            if not said:
                said.append(1)
                sys.stderr.write("wheelgate: wheelgate was uninstalled from %%s: its pip gate is "
                                 "off; delete %%s (%%s) to stop this note\\n" %% (sys.prefix, PTH, why))
        _at_pip_install(note)
        return
    sys.stderr.write("wheelgate: wheelgate was uninstalled from %%s: its pip gate is off "
                     "(%%s removed)\\n" %% (sys.prefix, PTH))
if os.environ.get("WHEELGATE_PIP", "").lower() not in ("off", "0", "no"):
    if _uninstalled():
        _off()
    else:
        try:
            if HERE not in sys.path:
                sys.path.append(HERE)
            import wheelgate_pip.autohook as _wg
            _wg.arm(lib=LIB, pth=PTH)
        except Exception as e:
            _closed("wheelgate_pip cannot be imported from %%s (%%s: %%s)" %% (HERE, type(e).__name__, e))
"""


def dist_info(here):
    """The .dist-info in here of the wheelgate distribution that installed wheelgate_pip
    (its RECORD lists the gate), or "" (cmake --install, a source tree: no distribution)."""
    try:
        names = sorted(os.listdir(here))
    except OSError:
        return ""
    for n in names:
        if n.lower().startswith("wheelgate-") and n.endswith(".dist-info"):
            try:
                with open(os.path.join(here, n, "RECORD"), encoding="utf-8") as f:
                    if any(line.startswith("wheelgate_pip/autohook.py,") for line in f):
                        return n
            except OSError:
                continue
    return ""


def pth_line(here, lib, pth, dist=""):
    return ("import sys; exec(%r, {'__name__': 'wheelgate_pip_guard'})\n"
            % (GUARD % (here, lib, pth, dist)))


def pip_version():
    """pip's version in this environment, or None (a venv made by uv has no pip)."""
    try:
        import pip
        return pip.__version__
    except ImportError:
        return None


def pth_path():
    return os.path.join(sysconfig.get_paths()["purelib"], PTH)


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    cmd, args = argv[0], argv[1:]
    if cmd == "install":
        opts, pip_args = wheelgate_pip.parse_options(args)
        if wheelgate_pip.bypassed():
            print("wheelgate: WHEELGATE_PIP=off: not checking", file=sys.stderr)
        else:
            try:
                # everything loaded now, clearly, not in the middle of pip
                wheelgate_pip.install_hook(opts)
                import pip._internal.commands.install as install_cmd
                wheelgate_pip.patch_install_command(install_cmd)
            except Exception as e:
                print("wheelgate: %s: %s\nwheelgate: refusing to run pip ungated "
                      "(WHEELGATE_PIP=off to bypass)" % (type(e).__name__, e), file=sys.stderr)
                return 2
        from pip._internal.cli.main import main as pip_main
        return pip_main(["install"] + pip_args)
    if cmd == "wheel":
        opts, pip_args = wheelgate_pip.parse_options(args)
        wheelgate_pip._options = opts
        try:
            wheelgate_pip.preload()
            import pip._internal.commands.wheel as wheel_cmd
            wheelgate_pip.patch_wheel_command(wheel_cmd)
        except Exception as e:
            print("wheelgate: %s: %s" % (type(e).__name__, e), file=sys.stderr)
            return 2
        from pip._internal.cli.main import main as pip_main
        return pip_main(["wheel"] + pip_args)
    if cmd == "enable":
        import wheelgate
        if pip_version() is None:
            print("wheelgate: %s has no pip (a venv made by uv?): there is no pip install to "
                  "gate, nothing enabled. Check what uv installs with "
                  "'wheelgate check --lock pylock.toml' before 'uv pip sync'." % sys.prefix,
                  file=sys.stderr)
            return 2
        try:
            wheelgate_pip.install_hook(None)  # this pip can be gated, the library loads
        except Exception as e:
            print("wheelgate: cannot gate pip here: %s: %s; nothing enabled"
                  % (type(e).__name__, e), file=sys.stderr)
            return 2
        lib = os.path.abspath(wheelgate.library_path())
        here = os.path.dirname(os.path.dirname(os.path.abspath(wheelgate_pip.__file__)))
        with open(pth_path(), "w") as f:
            f.write(pth_line(here, lib, pth_path(), dist_info(here)))
        print("wheelgate: every pip install of %s is gated now (%s)" % (sys.prefix, pth_path()))
        return 0
    if cmd == "disable":
        try:
            os.unlink(pth_path())
            print("wheelgate: %s is not gated any more" % sys.prefix)
        except FileNotFoundError:
            print("wheelgate: %s was not gated" % sys.prefix)
        return 0
    if cmd == "status":
        version = pip_version()
        gated = os.path.exists(pth_path())
        print("environment: %s\npip: %s\ngated: %s" % (
            sys.prefix, version or "none (nothing to gate: no pip install here)",
            "yes (%s)" % pth_path() if gated else "no"))
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""python -m wheelgate_pip install ARGS... | enable | disable | status"""
import os
import sys
import sysconfig

import wheelgate_pip

PTH = "wheelgate-pip.pth"
USAGE = """usage: python -m wheelgate_pip install [--wheelgate-OPTION...] PIP-ARGS...
       python -m wheelgate_pip enable | disable | status

install  runs `pip install PIP-ARGS`, checking every wheel with wheelgate before anything
         is installed; a blocking finding stops the install.
enable   gates every `pip install` of this environment (writes %s into site-packages);
         options for it go in $WHEELGATE_PIP_ARGS.
disable  removes that file.     status  says whether this environment is gated.
options: --wheelgate-warn-only, --wheelgate-gpu GPU, --wheelgate-disable ID,
         --wheelgate-enable ID, --wheelgate-rules PATH, --wheelgate-target SPEC,
         --wheelgate-fail-on error|warning|info.   WHEELGATE_PIP=off bypasses the gate.
""" % PTH


def pth_path():
    return os.path.join(sysconfig.get_paths()["purelib"], PTH)


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    cmd, args = argv[0], argv[1:]
    if cmd == "install":
        opts, pip_args = wheelgate_pip.parse_options(args)
        if os.environ.get("WHEELGATE_PIP", "").lower() in ("off", "0", "no"):
            print("wheelgate: WHEELGATE_PIP=off: not checking", file=sys.stderr)
        else:
            try:
                import wheelgate
                wheelgate.library_path()  # fail now, clearly, not in the middle of pip
                wheelgate_pip.install_hook(opts)
            except (wheelgate_pip.GateUnavailable, wheelgate.WheelgateError) as e:
                print("wheelgate: %s\nwheelgate: refusing to run pip ungated "
                      "(WHEELGATE_PIP=off to bypass)" % e, file=sys.stderr)
                return 2
        from pip._internal.cli.main import main as pip_main
        return pip_main(["install"] + pip_args)
    if cmd == "enable":
        import wheelgate
        lib = os.path.abspath(wheelgate.library_path())
        here = os.path.dirname(os.path.dirname(os.path.abspath(wheelgate_pip.__file__)))
        with open(pth_path(), "w") as f:
            f.write("%s\nimport wheelgate_pip.autohook as _wg; _wg.arm(lib=%r)\n" % (here, lib))
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
        import pip
        gated = os.path.exists(pth_path())
        print("environment: %s\npip: %s\ngated: %s" % (sys.prefix, pip.__version__,
                                                      "yes (%s)" % pth_path() if gated else "no"))
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

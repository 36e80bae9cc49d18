"""python -m wheelgate ARGS: runs the `wheelgate` CLI installed with this package (the
wheel's own, or the one `cmake --install` put next to the library), with ARGS, in place of
this process: its output, formats and exit status are the CLI's."""
import os
import sys

from . import LibraryError, cli_path, escape


def main() -> None:
    try:
        cli = cli_path()
    except LibraryError as e:
        sys.stderr.write("wheelgate: %s\n" % e)
        sys.exit(2)
    args = sys.argv[1:]
    try:
        os.execv(cli, [cli] + args)
    except OSError as e:
        sys.stderr.write("wheelgate: cannot run %s: %s\n" % (escape(cli), e.strerror))
        sys.exit(2)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: GPL-3.0-or-later
"""Prints where a Python package installed under PREFIX goes for the interpreter running this
script (`cmake --install` asks WG_PYTHON): the directory it imports pure packages from when
PREFIX is one of its own prefixes, else the scheme pip's --prefix uses.

    python3 scripts/python-sitedir.py PREFIX

- The default scheme's purelib, if PREFIX is that scheme's base: a venv (PREFIX = the venv),
  pyenv's or a distribution's python (PREFIX = sys.prefix), Debian's python with PREFIX
  /usr/local (/usr/local/lib/python3.X/dist-packages, its posix_local scheme).
- Debian's python with PREFIX /usr: deb_system (/usr/lib/python3/dist-packages).
- Any other PREFIX: posix_prefix ({PREFIX}/lib/python3.X/site-packages), not
  posix_local, whose {base}/local/lib/... made /usr/local/local/lib/... of /usr/local.
A second line says whether the interpreter imports from there (yes/no).
"""
import os
import sys
import sysconfig


def sitedir(prefix):
    prefix = os.path.normpath(os.path.abspath(prefix))
    paths = sysconfig.get_paths()
    # "data" is the default scheme's base: /usr/local for Debian's posix_local, the venv...
    if os.path.normpath(paths["data"]) == prefix:
        return os.path.normpath(paths["purelib"])
    names = sysconfig.get_scheme_names()
    if "deb_system" in names and prefix == os.path.normpath(sys.base_prefix):
        scheme = "deb_system"
    else:
        scheme = "posix_prefix"
    return os.path.normpath(sysconfig.get_paths(scheme, vars={"base": prefix, "platbase": prefix,
                                                              "installed_base": prefix,
                                                              "installed_platbase": prefix})["purelib"])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python-sitedir.py PREFIX")
    d = sitedir(sys.argv[1])
    print(d)
    print("yes" if d in [os.path.normpath(p) for p in sys.path if p] else "no")

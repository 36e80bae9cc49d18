# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the wheel of wheelgate for Python users from a build tree, without network:

    python3 scripts/python-wheel.py BUILD_DIR OUT_DIR VERSION   (cmake --build build --target python-wheel)
    python3 scripts/python-wheel.py --portable [--replace SONAME=FILE]... BUILD_DIR OUT_DIR VERSION
                        (-DWG_PORTABLE=ON: cmake --build build-wheel --target portable-wheel)

The wheel holds the binding (wheelgate) and the pip gate (wheelgate_pip) with the library,
the CLI and its helpers under wheelgate/_native/, laid out as `cmake --install --strip` lays
them out under a prefix (bin/, lib/, libexec/wheelgate/), so that the CLI's RUNPATH
($ORIGIN/../lib) and its helpers' lookup work unchanged. wheelgate/_installed.py names them
relative to the package: no environment variable is needed. The native files link Debian's
system libraries (libzip, libbfd, ...), so the tag is the plain platform (linux_x86_64), not
manylinux: the wheel is for machines with those packages (scripts/setup.sh), not for PyPI.
With --portable (a build configured with -DWG_PORTABLE=ON, scripts/portable.cmake), the
libraries the native files still need of the system are copied into the wheel the way
auditwheel does it (scripts/wheel_vendor.py) and the tag is the manylinux policy the content
allows (docs/install.md).
Written with zipfile and a RECORD of sha256 digests and sizes; entries are sorted and dated
SOURCE_DATE_EPOCH (default 1980-01-01), so the same build gives the same bytes.
"""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
HOOKS = os.path.join(os.path.dirname(HERE), "hooks", "pip")


def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main(build, out, version, portable=False, replace=None):
    tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    dist = "wheelgate-%s" % version
    files = {}  # path in the wheel -> (bytes, executable)
    for pkg in ("wheelgate", "wheelgate_pip"):
        root = os.path.join(HOOKS, pkg)
        for dirpath, dirnames, names in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for n in names:
                if n.endswith((".pyc", ".pyo")) or n == "_installed.py":
                    continue
                p = os.path.join(dirpath, n)
                rel = os.path.relpath(p, HOOKS).replace(os.sep, "/")
                files[rel] = (open(p, "rb").read(), False)
    with tempfile.TemporaryDirectory() as stage:
        p = subprocess.run(["cmake", "--install", build, "--prefix", stage, "--strip"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, DESTDIR=""))
        if p.returncode != 0:
            sys.exit("python-wheel.py: cmake --install %s failed: %s" % (build, p.stderr))
        cli = os.path.join(stage, "bin", "wheelgate")
        libs = [os.path.join(d, "libwheelgate.so.0") for d, _, names in os.walk(stage)
                if "libwheelgate.so.0" in names]
        helpers = os.path.join(stage, "libexec", "wheelgate")
        if not os.path.isfile(cli) or len(libs) != 1 or not os.path.isdir(helpers):
            sys.exit("python-wheel.py: %s has no bin/wheelgate, one libwheelgate.so.0 and "
                     "libexec/wheelgate/ after cmake --install" % build)
        native = {os.path.relpath(cli, stage): cli, os.path.relpath(libs[0], stage): libs[0]}
        for n in sorted(os.listdir(helpers)):
            native[os.path.relpath(os.path.join(helpers, n), stage)] = os.path.join(helpers, n)
        if portable:
            sys.path.insert(0, HERE)
            import wheel_vendor
            try:
                vendored, platform, _ = wheel_vendor.vendor(
                    stage, {"wheelgate/_native/" + rel: os.path.realpath(path)
                            for rel, path in native.items()},
                    os.path.join(os.path.dirname(HERE), "rules", "platform", "manylinux.yaml"),
                    replace=replace)
            except wheel_vendor.VendorError as e:
                sys.exit("python-wheel.py: %s" % e)
            tag = "py3-none-" + platform
            for rel, path in vendored.items():
                files[rel] = (open(path, "rb").read(), False)
        for rel, path in native.items():
            # the real file under the link's name: a wheel holds no symbolic links
            files["wheelgate/_native/" + rel] = (open(os.path.realpath(path), "rb").read(),
                                                 os.access(path, os.X_OK) and not rel.endswith(".so.0"))
        lib_rel = "_native/" + os.path.relpath(libs[0], stage)
    files["wheelgate/_installed.py"] = (
        ("# written by scripts/python-wheel.py: paths relative to this package\n"
         "RELATIVE = True\nLIBRARY = %r\nCLI = %r\n" % (lib_rel, "_native/bin/wheelgate")).encode(), False)
    info = dist + ".dist-info/"
    readme = ("wheelgate catches broken CUDA/C++ Python wheels before they are installed.\n\n"
              "This wheel holds the Python binding (`import wheelgate`), the pip gate\n"
              "(`python -m wheelgate_pip enable`) and the `wheelgate` CLI with its library\n"
              "(`python -m wheelgate check x.whl`). " +
              ("It needs of the system only glibc: the other libraries are inside\n"
               "(linked statically, or in wheelgate.libs/).\n" if portable else
               "It links Debian 12's libzip, libbfd,\n"
               "PCRE2, libyaml, jansson, libcrypto, libcsv, zstd, lz4 and libdeflate.\n"))
    files[info + "METADATA"] = ((
        "Metadata-Version: 2.1\nName: wheelgate\nVersion: %s\n"
        "Summary: Catch broken CUDA/C++ Python wheels before they are installed\n"
        "License: GPL-3.0-or-later\nRequires-Python: >=3.8\n"
        "Classifier: License :: OSI Approved :: GNU General Public License v3 or later (GPLv3+)\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Typing :: Typed\n"
        "Description-Content-Type: text/markdown\n\n%s" % (version, readme)).encode(), False)
    files[info + "WHEEL"] = (("Wheel-Version: 1.0\nGenerator: wheelgate scripts/python-wheel.py\n"
                              "Root-Is-Purelib: false\nTag: %s\n" % tag).encode(), False)
    files[info + "entry_points.txt"] = (b"[console_scripts]\nwheelgate = wheelgate.__main__:main\n", False)
    files[info + "top_level.txt"] = (b"wheelgate\nwheelgate_pip\n", False)
    lic = os.path.join(os.path.dirname(HERE), "LICENSE")
    if os.path.exists(lic):
        files[info + "LICENSE"] = (open(lic, "rb").read(), False)
    record = info + "RECORD"
    rows = ["%s,%s,%d" % (n, digest(d), len(d)) for n, (d, _) in sorted(files.items())]
    rows.append(record + ",,")
    files[record] = (("\n".join(rows) + "\n").encode(), False)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "%s-%s.whl" % (dist, tag))
    stamp = time.gmtime(max(315532800, int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))))[:6]
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        # RECORD last, the .dist-info files after the packages, as the spec recommends
        order = sorted(files, key=lambda n: (n.startswith(info), n == record, n))
        for n in order:
            data, exe = files[n]
            zi = zipfile.ZipInfo(n, stamp)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = ((0o755 if exe else 0o644) | 0o100000) << 16
            z.writestr(zi, data)
    os.replace(tmp, path)
    print(path)


if __name__ == "__main__":
    args = sys.argv[1:]
    portable = args[:1] == ["--portable"]
    replace = {}
    if portable:
        args = args[1:]
        while args[:1] == ["--replace"] and len(args) > 1 and "=" in args[1]:
            name, _, path = args[1].partition("=")
            replace[name] = path
            args = args[2:]
    if len(args) != 3:
        sys.exit("usage: python-wheel.py [--portable [--replace SONAME=FILE]...] BUILD_DIR OUT_DIR VERSION")
    main(*args, portable=portable, replace=replace)

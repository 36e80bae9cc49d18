# SPDX-License-Identifier: GPL-3.0-or-later
"""The manylinux part of scripts/python-wheel.py --portable: copies the shared libraries the
wheel's native files need from the system, and the platform policy does not allow, into the
wheel, the way auditwheel repair lays them out, and names the wheel's platform tag.

- The allowed libraries and symbol versions are wheelgate's own policy data,
  rules/platform/manylinux.yaml (generated from auditwheel's policy files by
  scripts/gen-platform-policy.py): the glibc policies of x86_64, up to manylinux_2_34.
- Only the C and C++ runtime the policy allows (glibc's libraries, libstdc++, libgcc_s) is
  left to the system; any other library, zlib included, goes to wheelgate.libs/ at the top of the wheel as
  NAME-HASH.so.X (HASH: the first 8 hex digits of the SHA-256 of the system's file), its
  SONAME set to that name and its RUNPATH to $ORIGIN; every object that needs it names it so
  (DT_NEEDED rewritten with patchelf), and the wheel's own objects get a RUNPATH entry
  $ORIGIN/<path to wheelgate.libs>. What a copied library needs is copied too.
- A library of the build may stand in for a system library (REPLACE): it is copied the same way.
- The tag is the oldest policy that allows every symbol version any object (copied ones
  included) needs of the families the policy data judges (GLIBC, GLIBCXX, CXXABI, GCC) and
  every library still needed from the system.
"""
import hashlib
import os
import re
import shutil
import subprocess

ARCH = "x86_64"
NEWEST = "manylinux_2_34"  # the newest tag the wheel may have (issue 29)
LIBS_DIR = "wheelgate.libs"


class VendorError(Exception):
    pass


def _flow_list(text):
    return [x.strip().strip("'\"") for x in text.split(",") if x.strip()]


def load_policies(path, arch=ARCH):
    """The glibc policies of ARCH from rules/platform/manylinux.yaml, oldest first, each as
    {name, whitelist: set (cumulative), versions: {family: set (cumulative)}}. The file is
    generated with one policy per line and one version list per line (see its header), which
    is all this reads: no YAML module is needed to build the wheel."""
    policies, versions = [], {}
    section = arch_now = family = None
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            section = line.split(":", 1)[0]
            continue
        if section == "policies":
            m = re.match(r"\s*- \{name: (\S+?), .*libc: (\w+), .*arches: \[([^\]]*)\], "
                         r"lib_whitelist: \[([^\]]*)\]\}", line)
            if not m:
                raise VendorError("%s: unexpected policy line: %s" % (path, line.strip()))
            if m.group(2) == "glibc":
                policies.append({"name": m.group(1), "arches": set(_flow_list(m.group(3))),
                                 "adds": set(_flow_list(m.group(4)))})
        elif section == "symbol_versions":
            key, _, rest = line.strip().partition(":")
            if indent == 2:
                arch_now = key
            elif indent == 4:
                family = key
            elif indent == 6 and arch_now == arch:
                versions.setdefault(family, {})[key] = set(_flow_list(rest.strip().strip("[]")))
    if not policies or not versions:
        raise VendorError("%s: no glibc policy or no symbol versions for %s" % (path, arch))
    out, whitelist, allowed = [], set(), {f: set() for f in versions}
    for p in policies:  # every policy allows what the one before it does (checked at generation)
        whitelist |= p["adds"]
        for f in versions:
            allowed[f] |= versions[f].get(p["name"], set())
        if arch in p["arches"]:
            out.append({"name": p["name"], "whitelist": set(whitelist),
                        "versions": {f: set(v) for f, v in allowed.items()}})
    return out


def runtime_libraries(path):
    """The C and C++ runtime's libraries (glibc's, libstdc++, libgcc_s): the `families` of
    rules/platform/manylinux.yaml, the libraries that carry the GLIBC, GLIBCXX, CXXABI and GCC
    symbol versions."""
    out, section = set(), None
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            section = line.split(":", 1)[0]
        elif section == "families":
            out |= set(_flow_list(line.split(":", 1)[1].strip().strip("[]")))
    if not out:
        raise VendorError("%s: no families" % path)
    return out


def _run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise VendorError("%s failed: %s" % (" ".join(args), p.stderr.strip()))
    return p.stdout


def needed(path):
    return _run(["patchelf", "--print-needed", path]).split()


def runpath(path):
    return _run(["patchelf", "--print-rpath", path]).strip()


def version_needs(path):
    """[(file, version)] of the object's version needs (.gnu.version_r), from readelf."""
    out, in_needs, lib = [], False, None
    for line in _run(["readelf", "-V", "--wide", path]).splitlines():
        if line.startswith("Version needs section"):
            in_needs = True
        elif line.startswith("Version ") and "section" in line:
            in_needs = False
        elif in_needs:
            m = re.search(r"File: (\S+)", line)
            if m:
                lib = m.group(1)
            m = re.search(r"Name: (\S+)", line)
            if m:
                out.append((lib, m.group(1)))
    return out


def _system_libraries():
    found = {}
    for line in _run(["/sbin/ldconfig", "-p"]).splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if m and "x86-64" in m.group(2):
            found.setdefault(m.group(1), m.group(3))
    return found


def vendored_name(soname, data):
    base, dot, ext = soname.partition(".so")
    return "%s-%s%s%s" % (base, hashlib.sha256(data).hexdigest()[:8], dot, ext)


def choose_tag(policies, objects, still_needed, copied=()):
    # pylint: disable=undefined-loop-variable
    """The oldest policy allowing every (family, version) need of OBJECTS of a library from
    the system (not of one of the COPIED names) and every library in STILL_NEEDED; the needs
    and, for each, the first object that has it (for the report)."""
    needs = set()
    where = {}
    for path in objects:
        for lib, v in version_needs(path):
            if lib in copied:
                continue
            family, _, ver = v.partition("_")
            needs.add((family, ver))
            where.setdefault((family, ver), os.path.basename(path))
    families = set(policies[0]["versions"])
    for p in policies:
        if all(ver in p["versions"][f] for f, ver in needs if f in families) and \
                still_needed <= p["whitelist"]:
            return p["name"], needs, where
        if p["name"] == NEWEST:
            break
    bad = sorted("%s_%s" % n for n in needs if n[0] in families and
                 n[1] not in p["versions"][n[0]])
    still_needed = still_needed - p["whitelist"]
    raise VendorError("no policy up to %s allows the wheel: versions %s, libraries %s"
                      % (NEWEST, bad, sorted(still_needed)))


def vendor(stage, native, policy_file, replace=None, log=print):
    """STAGE: a scratch folder; NATIVE: {path in the wheel: file under STAGE} of the wheel's
    ELF files (patched in place); REPLACE: {soname: file of this build} copied instead of the
    system's library of that soname (the ICU stand-in, cli/portable/icu_stub.c). Copies the
    libraries into STAGE/wheelgate.libs and returns ({path in the wheel: file} of the copies,
    platform tag, report lines)."""
    policies = load_policies(policy_file)
    cap = [p["name"] for p in policies].index(NEWEST)
    # Of what the policy allows from the system, only the C and C++ runtime is taken from it
    # (zlib, which the policy allows too, is copied: the wheel must not depend on the
    # system's). The dynamic loader is the program interpreter, not a library a policy lists.
    allowed = (policies[cap]["whitelist"] & runtime_libraries(policy_file)) | {"ld-linux-x86-64.so.2"}
    system = _system_libraries()
    own = set()
    for path in native.values():
        m = re.search(r"SONAME\)\s+Library soname: \[(\S+)\]", _run(["readelf", "-d", path]))
        if m:
            own.add(m.group(1))
    libs = os.path.join(stage, LIBS_DIR)
    os.makedirs(libs, exist_ok=True)
    copies = {}  # needed name -> (new name, path of the copy)
    queue = list(native.values())
    still = set()
    while queue:
        obj = queue.pop(0)
        for n in needed(obj):
            if n in own or n in copies:
                continue
            if n in allowed:
                if n in policies[cap]["whitelist"]:
                    still.add(n)
                continue
            src = (replace or {}).get(n) or system.get(n)
            if not src:
                raise VendorError("%s needs %s, which is neither on this system nor allowed "
                                  "by %s" % (obj, n, NEWEST))
            data = open(os.path.realpath(src), "rb").read()
            new = vendored_name(n, data)
            dst = os.path.join(libs, new)
            with open(dst, "wb") as f:
                f.write(data)
            os.chmod(dst, 0o755)
            copies[n] = (new, dst, src)
            queue.append(dst)
    for n, (new, dst, _) in copies.items():
        _run(["patchelf", "--set-soname", new, dst])
        _run(["patchelf", "--set-rpath", "$ORIGIN", dst])
    for obj in list(native.values()) + [c[1] for c in copies.values()]:
        args = []
        for n in needed(obj):
            if n in copies:
                args += ["--replace-needed", n, copies[n][0]]
        if args:
            _run(["patchelf"] + args + [obj])
    names = {c[0] for c in copies.values()}
    for rel, obj in native.items():
        if not names & set(needed(obj)):
            continue
        to_libs = os.path.relpath(LIBS_DIR, os.path.dirname(rel))
        entries = [e for e in runpath(obj).split(":") if e]
        entries.append("$ORIGIN/" + to_libs)
        _run(["patchelf", "--set-rpath", ":".join(entries), obj])
    objects = list(native.values()) + [c[1] for c in copies.values()]
    tag, needs, where = choose_tag(policies, objects, still, names)
    report = ["%s <- %s (%d bytes)" % (new, src, os.path.getsize(dst))
              for n, (new, dst, src) in sorted(copies.items())]
    newest = {}
    for f, v in needs:
        if f not in policies[0]["versions"]:
            continue
        key = tuple((0, int(x), "") if x.isdigit() else (1, 0, x) for x in v.split("."))
        if f not in newest or key > newest[f][0]:
            newest[f] = (key, v)
    report.append("needed of the system: %s" % ", ".join(sorted(still)))
    report.append("newest versions needed: %s" % ", ".join(
        "%s_%s (%s)" % (f, newest[f][1], where[(f, newest[f][1])])
        for f in sorted(newest)))
    for line in report:
        log("  " + line)
    out = {LIBS_DIR + "/" + new: dst for n, (new, dst, _) in copies.items()}
    return out, tag + "_" + ARCH, report

#!/usr/bin/python3
"""Repacks Debian's own pure-Python python3-* packages into py3-none-any wheels: a real-code
corpus of pure wheels that import on this machine (issue 24, point 6b). Python 3 standard
library only; run it with Debian's /usr/bin/python3, whose packages live in
/usr/lib/python3/dist-packages.

Which packages (the rule; no list of names anywhere):
  every installed Debian package named python3-* (dpkg-query) whose files (what dpkg -L
  lists: dpkg-query's db-fsys:Files)
  1. include Python modules (*.py) under the site directory;
  2. include no compiled file anywhere: no ELF object (by its magic) and nothing named *.so
     or *.so.N (a *.cpython-*.so is both);
  3. give at least one importable name (below), and every one of them imports in Debian's
     python3 (`python3 -I -c 'import NAME'`, a subprocess each, with a timeout);
  4. have at most one metadata directory of their own (*.dist-info or *.egg-info), and give a
     wheel file name no package before them (in sorted order) gave.
  Installed python3-* packages that fail a point are excluded and listed with the reason.
Importable names: a top-level NAME.py owned by the package is module NAME; a top-level NAME/
with NAME/__init__.py owned by the package is package NAME; a NAME/ without it is a namespace
package (Debian's python3-lazr.uri and python3-lazr.restfulclient share lazr/): its children
are looked at the same way (NAME.CHILD). Names that are not identifiers (*-stubs) and
directories without any *.py below them are not modules.

Each chosen package becomes one wheel of the files it owns under the site directory (symbolic
links to files read through; compiled bytecode and __pycache__ left out), with:
  - its *.dist-info as Debian ships it (METADATA, entry_points.txt, licenses...; RECORD,
    INSTALLER, REQUESTED, direct_url.json and WHEEL are an installer's or regenerated), or
    its *.egg-info converted: METADATA from PKG-INFO, Requires-Dist/Provides-Extra from
    requires.txt (its [extra], [:marker] and [extra:marker] sections as the markers
    setuptools writes), entry_points.txt and top_level.txt kept; without either, METADATA
    with the name and version of the Debian package (its upstream version, normalised);
  - a WHEEL file (py3-none-any, Root-Is-Purelib: true) and a RECORD with each member's
    sha256 and size. The dist-info directory is named after the normalised name and version,
    as the wheel file is. Wheels are byte-for-byte reproducible (fixed dates and order).

The hollow twins: the chosen packages in sorted order that have a regular package (an
__init__.py of their own) not imported at Debian python3's start-up, no member named _C
in it, and an __init__.py that does not put another object in its own place
(`sys.modules[__name__] = ...`, as pythran's omp does: what `from . import _C` then finds is
that object's business, which no reading of the source can know); every STEP-th of them (STEP = 10, less when that gives fewer than 5) is copied with
`from . import _C` appended to that package's __init__.py (RECORD rewritten to match). The
twin cannot import (there is no _C), and wheelgate must say so (WG-HOL-001).

Output in OUT: wheels/ (the originals), twins/ (the twins, same file names), manifest.json
(what was chosen, excluded and why, the twins, the timings).

Usage: repack.py OUT [--site DIR] [--python PY] [--jobs N] [--timeout S] [--step N]
                     [--min-twins N]
"""
import argparse
import base64
import concurrent.futures
import csv
import hashlib
import io
import json
import keyword
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import time
import zipfile

SITE = "/usr/lib/python3/dist-packages"
GENERATOR = "wheelgate-tests-debian-repack (1)"
ZIP_DATE = (2020, 1, 1, 0, 0, 0)
# Members of a *.dist-info an installer writes (or that are regenerated here).
INSTALLER_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "WHEEL"}
# What an *.egg-info holds that a wheel's *.dist-info keeps under the same name.
EGG_KEPT = ("entry_points.txt", "top_level.txt")
SO_NAME = re.compile(r"\.so(\.\d+)*$")
PEP440 = re.compile(
    r"^([1-9][0-9]*!)?(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*((a|b|rc)(0|[1-9][0-9]*))?"
    r"(\.post(0|[1-9][0-9]*))?(\.dev(0|[1-9][0-9]*))?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$", re.I)
# Loose PEP 440 (as packaging accepts it): what a METADATA Version may be.
PEP440_LOOSE = re.compile(
    r"^v?(\d+!)?\d+(\.\d+)*([-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?"
    r"([-_.]?(post|rev|r)[-_.]?\d*|-\d+)?([-_.]?dev[-_.]?\d*)?(\+[a-z0-9]+([-_.][a-z0-9]+)*)?$",
    re.I)


def run(cmd, timeout=120):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def installed_packages():
    """Installed Debian packages named python3-*: {name: (version, [files])}. The files are
    what `dpkg -L NAME` lists, read for every package in one dpkg-query call (its
    db-fsys:Files field; dpkg -L once per package costs 50 ms each)."""
    p = run(["dpkg-query", "-W", "-f=${Package}\t${Version}\t${db:Status-Status}\n"
             "${db-fsys:Files}", "python3-*"])
    if p.returncode != 0:
        raise RuntimeError("dpkg-query: " + p.stderr.strip())
    out, cur = {}, None
    for line in p.stdout.splitlines():
        if line.startswith(" "):
            if cur is not None:
                cur.append(line[1:])
            continue
        name, version, status = (line.split("\t") + ["", ""])[:3]
        cur = None
        if status == "installed":
            cur = []
            out[name] = (version, cur)
    return out


def compiled_file(paths):
    """The first file named *.so[.N] or holding an ELF object, or None."""
    for path in paths:
        if SO_NAME.search(os.path.basename(path)):
            if os.path.lexists(path) and not os.path.isdir(path):
                return path
            continue
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_size < 4:
            continue
        try:
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return path
        except OSError:
            continue
    return None


def is_ident(name):
    return name.isidentifier() and not keyword.iskeyword(name)


def import_names(rels):
    """The importable names of a package's files (paths relative to the site directory):
    see the module docstring. Returns (names sorted, regular packages {name: init path})."""
    rels = set(rels)
    names, regular = set(), {}

    def walk(prefix, parts_of):
        # parts_of: relative paths (below prefix) of the files under it
        children = {}
        for r in parts_of:
            head, sep, rest = r.partition("/")
            children.setdefault(head, []).append(rest if sep else None)
        for head, rests in sorted(children.items()):
            if None in rests:       # a file directly under prefix
                if head.endswith(".py") and is_ident(head[:-3]):
                    names.add(prefix + head[:-3])
                continue
            if not is_ident(head) or not any(r.endswith(".py") for r in rests):
                continue
            sub = [r for r in rests if r is not None]
            if "__init__.py" in sub:
                names.add(prefix + head)
                regular[prefix + head] = (prefix + head).replace(".", "/") + "/__init__.py"
            else:
                walk(prefix + head + ".", sub)

    walk("", [r for r in rels if not r.split("/")[0].endswith((".dist-info", ".egg-info"))])
    return sorted(names), regular


def try_import(python, name, timeout):
    t0 = time.monotonic()
    try:
        p = run([python, "-I", "-c", "import " + name], timeout=timeout)
    except subprocess.TimeoutExpired:
        return name, "timed out after %ds" % timeout, time.monotonic() - t0
    if p.returncode == 0:
        return name, None, time.monotonic() - t0
    lines = [line for line in p.stderr.strip().splitlines() if line.strip()]
    return name, (lines[-1] if lines else "exit status %d" % p.returncode), time.monotonic() - t0


def startup_modules(python):
    p = run([python, "-I", "-c", "import sys; print('\\n'.join(sorted(sys.modules)))"])
    return set(p.stdout.split())


# --- metadata ---------------------------------------------------------------------------

def parse_headers(text):
    """The header fields of an email-style metadata file: [(key, value)], and the body."""
    head, sep, body = text.partition("\n\n")
    fields = []
    for line in head.splitlines():
        if line[:1] in (" ", "\t") and fields:
            fields[-1] = (fields[-1][0], fields[-1][1] + "\n" + line)
        elif ":" in line:
            k, _, v = line.partition(":")
            fields.append((k.strip(), v.strip()))
    return fields, body if sep else ""


def field(fields, key):
    for k, v in fields:
        if k.lower() == key.lower():
            return v
    return None


def requires_txt(text):
    """requires.txt as Requires-Dist and Provides-Extra values, as setuptools writes them."""
    reqs, extras, section = [], [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            extra = section.partition(":")[0].strip()
            if extra and extra not in extras:
                extras.append(extra)
            continue
        extra, _, marker = section.partition(":")
        extra, marker = extra.strip(), marker.strip()
        conds = []
        if marker:
            conds.append("(%s)" % marker if extra else marker)
        if extra:
            conds.append('extra == "%s"' % extra)
        reqs.append(line + ("; " + " and ".join(conds) if conds else ""))
    return reqs, extras


def norm_name(name):
    return re.sub(r"[-_.]+", "_", name).lower()


def debian_version(v):
    """A Debian version as PEP 440: epoch and Debian revision dropped, ~ (before) joined,
    +dfsg-style repack suffixes as a local label; else its leading release numbers."""
    up = v.split(":", 1)[-1]
    if "-" in up:
        up = up.rsplit("-", 1)[0]
    cand = up.replace("~", "")
    base, _, local = cand.partition("+")
    if local:
        local = re.sub(r"[^A-Za-z0-9]+", ".", local).strip(".").lower()
        cand = base + ("+" + local if local else "")
    if PEP440.match(cand):
        return cand
    m = re.match(r"\d+(\.\d+)*", up)
    return m.group(0) if m else "0"


def metadata_for(pkg, deb_version, meta_dirs, site):
    """(name, version, {dist-info member name: bytes}, how) for a package."""
    if len(meta_dirs) == 1:
        md = meta_dirs[0]
        path = os.path.join(site, md)
        if md.endswith(".dist-info"):
            with open(os.path.join(path, "METADATA"), "rb") as f:
                text = f.read()
            fields, _ = parse_headers(text.decode("utf-8", "replace"))
            extra = {}
            for dp, dns, fns in os.walk(path):
                dns.sort()
                for fn in sorted(fns):
                    full = os.path.join(dp, fn)
                    rel = os.path.relpath(full, path)
                    if rel in INSTALLER_FILES or rel == "METADATA" or "__pycache__" in rel:
                        continue
                    with open(full, "rb") as f:
                        extra[rel] = f.read()
            extra["METADATA"] = text
            return field(fields, "Name"), field(fields, "Version"), extra, "dist-info"
        # *.egg-info: a directory, or a single PKG-INFO file
        if os.path.isdir(path):
            with open(os.path.join(path, "PKG-INFO"), "rb") as f:
                pkg_info = f.read().decode("utf-8", "replace")
            req_path = os.path.join(path, "requires.txt")
            reqs, extras = [], []
            if os.path.exists(req_path):
                with open(req_path, encoding="utf-8", errors="replace") as f:
                    reqs, extras = requires_txt(f.read())
        else:
            with open(path, "rb") as f:
                pkg_info = f.read().decode("utf-8", "replace")
            reqs, extras = [], []
        fields, body = parse_headers(pkg_info)
        have = {k.lower() for k, _ in fields}
        add = []
        if "provides-extra" not in have:
            add += [("Provides-Extra", e) for e in extras]
        if "requires-dist" not in have:
            add += [("Requires-Dist", r) for r in reqs]
        if add:
            mv = field(fields, "Metadata-Version") or "1.0"
            try:
                newer = tuple(int(x) for x in mv.split(".")) < (2, 1)
            except ValueError:
                newer = True
            if newer:   # Requires-Dist and Provides-Extra need 2.1 (Provides-Extra)
                fields = [(k, "2.1" if k.lower() == "metadata-version" else v)
                          for k, v in fields]
                if "metadata-version" not in have:
                    fields.insert(0, ("Metadata-Version", "2.1"))
        # Added after the last header (Description's place in old PKG-INFO is a header too).
        out = fields + add
        text = "".join("%s: %s\n" % kv for kv in out)
        if body:
            text += "\n" + body
        extra = {"METADATA": text.encode("utf-8")}
        if os.path.isdir(path):
            for fn in EGG_KEPT:
                fp = os.path.join(path, fn)
                if os.path.isfile(fp):
                    with open(fp, "rb") as f:
                        extra[fn] = f.read()
        return field(fields, "Name"), field(fields, "Version"), extra, "egg-info"
    name = pkg[len("python3-"):]
    version = debian_version(deb_version)
    text = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)
    return name, version, {"METADATA": text.encode()}, "debian"


# --- wheels -----------------------------------------------------------------------------

def b64sha(data):
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(path, members, dist_info):
    """members: [(name, bytes, mode)] of the package; dist_info's files are already among
    them. WHEEL and RECORD are added here."""
    wheel = ("Wheel-Version: 1.0\nGenerator: %s\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
             % GENERATOR).encode()
    members = [m for m in members if m[0] not in (dist_info + "/WHEEL", dist_info + "/RECORD")]
    members.append((dist_info + "/WHEEL", wheel, 0o644))
    rec = io.StringIO()
    w = csv.writer(rec, lineterminator="\n")
    for name, data, _ in members:
        w.writerow([name, "sha256=" + b64sha(data), len(data)])
    w.writerow([dist_info + "/RECORD", "", ""])
    members.append((dist_info + "/RECORD", rec.getvalue().encode(), 0o644))
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for name, data, mode in members:
            zi = zipfile.ZipInfo(name, ZIP_DATE)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = ((mode & 0o777) | stat.S_IFREG) << 16
            z.writestr(zi, data)
    os.replace(tmp, path)


def package_members(site, rels, dist_info, meta_files, meta_dirs):
    """The wheel's members: the package's own files (read through links to files), then
    its dist-info; members sorted, dist-info last (as build backends write them)."""
    out, skipped = [], []
    for rel in sorted(rels):
        top = rel.split("/")[0]
        if top in meta_dirs or "__pycache__" in rel.split("/") or rel.endswith((".pyc", ".pyo")):
            continue
        full = os.path.join(site, rel)
        if os.path.isdir(full):      # directories, and links to directories
            if os.path.islink(full):
                skipped.append(rel + " (a link to a directory)")
            continue
        if not os.path.isfile(full):
            skipped.append(rel + " (" + ("a broken link" if os.path.islink(full)
                                         else "not a regular file") + ")")
            continue
        with open(full, "rb") as f:
            data = f.read()
        mode = 0o755 if os.stat(full).st_mode & 0o111 else 0o644
        out.append((rel, data, mode))
    for fn in sorted(meta_files):
        out.append((dist_info + "/" + fn, meta_files[fn], 0o644))
    return out, skipped


# --- the run ----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--site", default=SITE)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--timeout", type=int, default=120, help="seconds per import")
    ap.add_argument("--step", type=int, default=10)
    ap.add_argument("--min-twins", type=int, default=5)
    a = ap.parse_args()
    t_start = time.monotonic()
    site = os.path.abspath(a.site).rstrip("/")
    wheels_dir, twins_dir = os.path.join(a.out, "wheels"), os.path.join(a.out, "twins")
    for d in (wheels_dir, twins_dir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)

    excluded, cands = [], []
    pkgs = installed_packages()
    for pkg in sorted(pkgs):
        ver, files = pkgs[pkg]
        rels = sorted({f[len(site) + 1:] for f in files if f.startswith(site + "/")})
        own = [r for r in rels if not os.path.isdir(os.path.join(site, r))
               or os.path.islink(os.path.join(site, r))]
        if not any(r.endswith(".py") for r in own):
            excluded.append({"package": pkg, "version": ver,
                             "reason": "no Python module under " + site})
            continue
        so = compiled_file(files)
        if so:
            excluded.append({"package": pkg, "version": ver, "reason": "compiled file " + so})
            continue
        names, regular = import_names(own)
        if not names:
            excluded.append({"package": pkg, "version": ver,
                             "reason": "no importable name among its modules"})
            continue
        meta_dirs = sorted({r.split("/")[0] for r in rels
                            if r.split("/")[0].endswith((".dist-info", ".egg-info"))})
        if len(meta_dirs) > 1:
            excluded.append({"package": pkg, "version": ver,
                             "reason": "more than one metadata directory: " + ", ".join(meta_dirs)})
            continue
        cands.append({"package": pkg, "version": ver, "own": own, "names": names,
                      "regular": regular, "meta_dirs": meta_dirs})

    t_imp = time.monotonic()
    scan_seconds = t_imp - t_start
    jobs = [(c["package"], n) for c in cands for n in c["names"]]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        futs = {ex.submit(try_import, a.python, n, a.timeout): (p, n) for p, n in jobs}
        for fut in concurrent.futures.as_completed(futs):
            p, n = futs[fut]
            results[(p, n)] = fut.result()
    import_seconds = time.monotonic() - t_imp
    t_wheels = time.monotonic()

    chosen, seen = [], {}
    for c in cands:
        bad = [(n, results[(c["package"], n)][1]) for n in c["names"]
               if results[(c["package"], n)][1] is not None]
        if bad:
            excluded.append({"package": c["package"], "version": c["version"],
                             "reason": "does not import: " + "; ".join(
                                 "%s: %s" % nb for nb in bad)})
            continue
        name, version, meta_files, how = metadata_for(c["package"], c["version"],
                                                      c["meta_dirs"], site)
        if not name or not version or not PEP440_LOOSE.match(version.strip()):
            excluded.append({"package": c["package"], "version": c["version"],
                             "reason": "metadata without a usable name and version (%r, %r)"
                                       % (name, version)})
            continue
        version = version.strip().replace("-", "_")
        wname = "%s-%s-py3-none-any.whl" % (norm_name(name), version)
        if wname in seen:
            excluded.append({"package": c["package"], "version": c["version"],
                             "reason": "same wheel name as " + seen[wname]})
            continue
        seen[wname] = c["package"]
        dist_info = "%s-%s.dist-info" % (norm_name(name), version)
        members, skipped = package_members(site, c["own"], dist_info, meta_files, c["meta_dirs"])
        write_wheel(os.path.join(wheels_dir, wname), members, dist_info)
        rec_dir = None
        if c["meta_dirs"] and c["meta_dirs"][0].endswith(".dist-info") and os.path.isfile(
                os.path.join(site, c["meta_dirs"][0], "RECORD")):
            rec_dir = c["meta_dirs"][0]
        chosen.append({
            "package": c["package"], "debian_version": c["version"], "wheel": wname,
            "name": name, "version": version, "metadata_from": how,
            "metadata_dir": c["meta_dirs"][0] if c["meta_dirs"] else None,
            "installed_record": rec_dir, "imports": c["names"],
            "regular_packages": c["regular"],
            "import_seconds": round(sum(results[(c["package"], n)][2] for n in c["names"]), 3),
            "members": len(members) + 2, "bytes": sum(len(m[1]) for m in members),
            "left_out": skipped, "_members": members, "_dist_info": dist_info})

    wheel_seconds = time.monotonic() - t_wheels

    # The hollow twins.
    at_start = startup_modules(a.python)
    eligible = []
    for c in chosen:
        for mod in sorted(c["regular_packages"]):
            if mod in at_start or mod.split(".")[0] in at_start:
                continue
            init = c["regular_packages"][mod]
            src = next((d for n, d, _ in c["_members"] if n == init), b"")
            if re.search(rb"sys\.modules\[\s*__name__\s*\]\s*=", src):
                continue
            pre = mod.replace(".", "/") + "/_C"
            if any(m[0] == pre or m[0].startswith(pre + ".") or m[0].startswith(pre + "/")
                   for m in c["_members"]):
                continue
            eligible.append((c, mod))
            break
    step = a.step
    while step > 1 and len(eligible[::step]) < a.min_twins:
        step -= 1
    twins = []
    for c, mod in eligible[::step]:
        init = c["regular_packages"][mod]
        members = []
        for name, data, mode in c["_members"]:
            if name == init:
                data = data + (b"" if not data or data.endswith(b"\n") else b"\n") \
                    + b"from . import _C\n"
            members.append((name, data, mode))
        write_wheel(os.path.join(twins_dir, c["wheel"]), members, c["_dist_info"])
        twins.append({"package": c["package"], "wheel": c["wheel"], "module": mod,
                      "init": init, "line": members[[m[0] for m in members].index(init)][1]
                      .count(b"\n")})
    for c in chosen:
        del c["_members"], c["_dist_info"]

    ru_self = resource.getrusage(resource.RUSAGE_SELF)
    ru_kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    manifest = {
        "python": a.python, "site": site, "installed_python3_packages": len(pkgs),
        "chosen": chosen, "excluded": excluded, "twins": twins,
        "twin_rule": {"eligible": len(eligible), "step": step},
        "seconds": {"total": round(time.monotonic() - t_start, 2),
                    "dpkg": round(scan_seconds, 2), "imports": round(import_seconds, 2),
                    "wheels": round(wheel_seconds, 2),
                    "cpu_self": round(ru_self.ru_utime + ru_self.ru_stime, 2),
                    "cpu_children": round(ru_kids.ru_utime + ru_kids.ru_stime, 2)},
    }
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print("repack: %d installed python3-* packages: %d chosen, %d excluded; %d twins "
          "(every %d of %d eligible); %.1f s (imports %.1f s on %d jobs); CPU %.1f s "
          "(imports and dpkg %.1f s)"
          % (len(pkgs), len(chosen), len(excluded), len(twins), step, len(eligible),
             manifest["seconds"]["total"], import_seconds, a.jobs,
             manifest["seconds"]["cpu_self"] + manifest["seconds"]["cpu_children"],
             manifest["seconds"]["cpu_children"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

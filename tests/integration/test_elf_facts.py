#!/usr/bin/env python3
"""ELF facts against readelf -W, field by field (issue 10, point 1): NEEDED, SONAME, RPATH and
RUNPATH (readelf -d), the versions needed and defined (readelf -V, which reads the version
sections by section header, where wheelgate follows DT_VERNEED/DT_VERDEF through the PT_LOAD
segments) and the dynamic symbols (readelf --dyn-syms: name, defined or not, version, default
or hidden, binding, type), on
  - objects with DWARF rewritten by patchelf the way auditwheel repairs a wheel (.dynstr moved
    after the .debug_* sections), built by tests/fixtures/gen-patchelf.sh;
  - every ELF member of the corpus wheels;
  - every shared object under /usr/lib/x86_64-linux-gnu and the CUDA toolkit's lib64.
Usage: test_elf_facts.py WHEELGATE FIXTURES CORPUS CUDA_LIB64"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Missing, Skip, main, test  # noqa: E402

WG, FIX, CORPUS, CUDA_LIB = sys.argv[1:5]
PATCHED = os.path.join(FIX, "patchelf")
SYSTEM_DIRS = ["/usr/lib/x86_64-linux-gnu", CUDA_LIB]
BATCH = 100
SUF = ".cpython-312-x86_64-linux-gnu.so"


def have_readelf():
    if not shutil.which("readelf"):
        raise Missing("binutils readelf not found (scripts/setup.sh --test installs it)")


# --- readelf -W -d -V --dyn-syms, parsed -------------------------------------------------

SYM = re.compile(r"^\s*(\d+): ([0-9a-fA-F]+)\s+(\S+)\s+(\S+)\s+(<[^>]*>: \d+|\S+)\s+(\S+)\s+"
                 r"(\S+)(?: (.*))?$")
DYN = re.compile(r"^\s*0x[0-9a-f]+ \((NEEDED|SONAME|RPATH|RUNPATH)\)\s+[^:]+: \[(.*)\]$")
BINDINGS = {"GLOBAL": "global", "WEAK": "weak", "LOCAL": "local", "UNIQUE": "unique",
            "<OS specific>: 10": "unique"}
TYPES = {"FUNC": "func", "OBJECT": "object", "TLS": "tls", "IFUNC": "ifunc", "NOTYPE": "notype",
         "COMMON": "common"}


def empty_facts():
    return {"needed": [], "soname": None, "rpath": None, "runpath": None, "verneed": [],
            "verdef": [], "symbols": [], "warnings": []}


def parse_readelf(text):
    """{path: facts} from the output of one readelf run over several files (each begins with
    'File: PATH'; a run over one file has no such line and is keyed by '')."""
    out = {}
    cur = out.setdefault("", empty_facts())
    mode = None
    vlib = None
    for line in text.splitlines():
        if line.startswith("File: "):
            cur = out.setdefault(line[6:].strip(), empty_facts())
            mode = None
            continue
        if line.startswith("Dynamic section at offset"):
            mode = "dyn"
        elif line.startswith("Version definition section"):
            mode = "verdef"
        elif line.startswith("Version needs section"):
            mode = "verneed"
        elif line.startswith("Version symbols section"):
            mode = None
        elif line.startswith("Symbol table '.dynsym'"):
            mode = "syms"
        elif line.startswith("Symbol table"):
            mode = None
        elif mode == "dyn":
            m = DYN.match(line)
            if m:
                tag, val = m.groups()
                if tag == "NEEDED":
                    cur["needed"].append(val)
                else:
                    cur[tag.lower()] = val
        elif mode == "verdef" and "Name:" in line and "Flags:" in line:
            flags = line.split("Flags:")[1].split("Index:")[0].split()
            if "BASE" not in flags:  # the base version is the soname; wheelgate leaves it out
                cur["verdef"].append(line.split("Name:")[1].split()[0])
        elif mode == "verneed" and "File:" in line:
            vlib = line.split("File:")[1].split()[0]
        elif mode == "verneed" and "Name:" in line:
            cur["verneed"].append((vlib, line.split("Name:")[1].split()[0],
                                   "WEAK" in line.split("Flags:")[1]))
        elif mode == "syms":
            m = SYM.match(line)
            if m:
                cur["symbols"].append(m.groups())
    return out


def readelf_symbol(g):
    """One --dyn-syms row as (name, defined, version, hidden, binding, type), or None for the
    rows wheelgate does not list: index 0 (the null symbol), section and file symbols, and
    symbols without a name. readelf writes versions as name@VER (hidden or undefined,
    undefined ones followed by ' (index)') and name@@VER (the default definition)."""
    num, value, size, typ, bind, vis, ndx, name = g
    name = name or ""
    if num == "0" or typ in ("SECTION", "FILE") or not name:
        return None
    name = re.sub(r" \(\d+\)$", "", name)
    version, hidden = None, False
    if "@@" in name:
        name, version = name.split("@@", 1)
    elif "@" in name:
        name, version = name.split("@", 1)
        hidden = True
    defined = ndx != "UND"
    if not defined:
        hidden = False  # a reference is never a default definition: '@' says nothing more
    if ndx == "COM":
        typ = "COMMON"
    return (name, defined, version, hidden, BINDINGS.get(bind, bind), TYPES.get(typ, typ))


def wheelgate_symbol(s):
    return (s["name"], s["defined"], s["version"], s["version_hidden"] if s["defined"] else False,
            s["binding"], s["type"])


# --- the comparison ---------------------------------------------------------------------

def run_wheelgate(paths):
    """{path: object} from wheelgate inspect --json over paths, in batches."""
    got = {}
    for i in range(0, len(paths), BATCH):
        part = paths[i:i + BATCH]
        p = subprocess.run([WG, "inspect", "--json", "--symbols=all", "--entries=none"] + part,
                           capture_output=True)
        doc = json.loads(p.stdout.decode("utf-8"))
        for item in doc["inputs"]:
            if "error" in item and "objects" not in item:
                got[item["path"]] = {"error": item["error"]["message"]}
            else:
                assert item["kind"] == "object", (item["path"], item["kind"])
                got[item["path"]] = item["objects"][0]
    return got


def run_readelf(paths):
    got = {}
    for i in range(0, len(paths), BATCH):
        part = paths[i:i + BATCH]
        p = subprocess.run(["readelf", "-W", "-d", "-V", "--dyn-syms"] + part,
                           capture_output=True, text=True, errors="surrogateescape")
        facts = parse_readelf(p.stdout)
        if len(part) == 1:
            facts = {part[0]: facts[""]}
        for path in part:
            got[path] = facts.get(path, empty_facts())
        if p.stderr.strip():
            # readelf's warnings do not always name the file: find whose they are.
            for path in part:
                q = subprocess.run(["readelf", "-W", "-d", "-V", "--dyn-syms", path],
                                   capture_output=True, text=True, errors="surrogateescape")
                got[path]["warnings"] += q.stderr.splitlines()
    return got


def compare(path, ours, theirs):
    """The differences between wheelgate's object and readelf's facts, as lines."""
    diffs = []
    if ours.get("error"):
        return ["%s: wheelgate could not read it: %s" % (path, ours["error"])]

    def same(field, a, b):
        if a != b:
            diffs.append("%s: %s: wheelgate %r, readelf %r" % (path, field, a, b))
    for f in ("needed", "soname", "rpath", "runpath"):
        same(f, ours.get(f, "(absent)"), theirs[f])
    versions = ours.get("versions", {})
    same("versions needed",
         [(v["library"], v["version"], v["weak"]) for v in versions.get("needed", [])],
         theirs["verneed"])
    same("versions defined", versions.get("defined"), theirs["verdef"])
    a = [wheelgate_symbol(s) for s in ours.get("symbols", [])]
    b = [x for x in (readelf_symbol(g) for g in theirs["symbols"]) if x]
    if a != b:
        sa, sb = set(a), set(b)
        extra, missing = sorted(sa - sb, key=str)[:3], sorted(sb - sa, key=str)[:3]
        diffs.append("%s: dynamic symbols differ (wheelgate %d, readelf %d); only wheelgate: %r; "
                     "only readelf: %r%s" % (path, len(a), len(b), extra, missing,
                                             "; same set, other order" if sa == sb else ""))
    same("symbol count", ours.get("symbol_counts", {}).get("total"), len(b))
    return diffs


def check_all(paths, label):
    t0 = time.time()
    ours, theirs = run_wheelgate(paths), run_readelf(paths)
    diffs, compared, unreadable, nsyms = [], 0, [], 0
    for path in paths:
        if theirs[path]["warnings"]:
            # readelf itself finds the object corrupt: there is no reference to compare with.
            unreadable.append(path)
            continue
        d = compare(path, ours[path], theirs[path])
        diffs += d
        compared += 1
        nsyms += len(theirs[path]["symbols"])
    print("  %s: %d objects (%d dynamic symbols) compared with readelf in %.1fs%s" %
          (label, compared, nsyms, time.time() - t0,
           "; %d that readelf warns about left out: %s" % (len(unreadable), unreadable[:3])
           if unreadable else ""))
    assert not diffs, "%d differences, the first:\n  %s" % (len(diffs), "\n  ".join(diffs[:8]))
    return compared


# --- the tests --------------------------------------------------------------------------

def patched_paths():
    if not os.path.isdir(PATCHED):
        raise Missing("no patchelf fixtures in %s (install patchelf: scripts/setup.sh --test)"
                   % PATCHED)
    return sorted(os.path.join(PATCHED, d, f) for d in os.listdir(PATCHED)
                  if os.path.isdir(os.path.join(PATCHED, d)) and d != "other"
                  for f in os.listdir(os.path.join(PATCHED, d)) if f.endswith(".so"))


@test
def patchelf_fixtures_read_as_written():
    """What patchelf was told to write, read back; independent of readelf. Before the PT_LOAD
    mapping, .dynstr was looked up in .debug_info (address 0) on these: needed ['!\\x08', ...]."""
    paths = patched_paths()
    p = subprocess.run([WG, "inspect", "--json", "--symbols=none"] + paths, capture_output=True)
    doc = json.loads(p.stdout.decode("utf-8"))
    by = {os.path.relpath(i["path"], PATCHED): i["objects"][0] for i in doc["inputs"]}
    base = ["libwgpedep.so", "libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6"]
    lib = lambda d: by[d + "/libwgpe.so"]  # noqa: E731
    for d in ("orig", "add-needed", "replace-needed", "long-rpath", "force-rpath", "soname",
              "auditwheel", "twice"):
        assert lib(d)["error"] is None, (d, lib(d)["error"])
    assert lib("orig")["needed"] == base, lib("orig")["needed"]
    assert lib("add-needed")["needed"] == ["libwgextra.so.3"] + base
    assert lib("replace-needed")["needed"] == ["libwgpedep-8a5f3c.so.1"] + base[1:]
    assert lib("soname")["soname"] == "libwgpe-9e1c2a7b.so.1.2.3"
    rpath = lib("long-rpath")["runpath"]
    assert rpath and len(rpath) > 200 and rpath.startswith("$ORIGIN/../../wgpe.libs:"), rpath
    assert lib("long-rpath")["rpath"] is None
    assert lib("force-rpath")["rpath"] == rpath and lib("force-rpath")["runpath"] is None
    aw = lib("auditwheel")
    assert aw["needed"] == ["libwgextra.so.3", "libwgpedep-8a5f3c.so.1"] + base[1:], aw["needed"]
    assert aw["soname"] == "libwgpe-9e1c2a7b.so.1" and aw["runpath"] == rpath
    tw = lib("twice")
    assert tw["needed"] == ["libwgsecond.so"] + aw["needed"] and tw["runpath"] == rpath + ":/opt/second"
    for d in ("orig", "auditwheel", "twice"):
        v = lib(d)["versions"]
        assert v["defined"] == ["WGPE_1.0", "WGPE_2.0"], (d, v["defined"])
        libs = {x["library"] for x in v["needed"]}
        assert {"libc.so.6", "libstdc++.so.6"} <= libs, (d, libs)
        ext = by[d + "/ext_wgpe" + SUF]
        assert ("libwgpe.so.1", "WGPE_2.0") in {(x["library"], x["version"])
                                                for x in ext["versions"]["needed"]}, (d, ext)
    # The layout under test really is the auditwheel one: .dynstr after the .debug_* sections,
    # at an address that .debug_info's range (from address 0) covers.
    if shutil.which("readelf"):
        out = subprocess.run(["readelf", "-SW", os.path.join(PATCHED, "auditwheel/libwgpe.so")],
                             capture_output=True, text=True, check=True).stdout
        secs = {}
        for l in out.splitlines():
            m = re.match(r"\s*\[\s*(\d+)\] (\S+)\s+\S+\s+([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+)", l)
            if m:
                secs[m.group(2)] = (int(m.group(1)), int(m.group(3), 16), int(m.group(5), 16))
        assert secs[".dynstr"][0] > secs[".debug_info"][0], secs
        assert secs[".dynstr"][1] < secs[".debug_info"][2], secs


@test
def patchelf_fixtures_agree_with_readelf():
    have_readelf()
    paths = patched_paths()
    assert len(paths) >= 16, paths
    assert check_all(paths, "patchelf fixtures") == len(paths)


@test
def corpus_objects_agree_with_readelf():
    have_readelf()
    wheels = os.path.join(CORPUS, "wheels")
    if not os.path.isdir(wheels):
        raise Missing("corpus absent: %s" % wheels)
    tmp = tempfile.mkdtemp()
    paths = []
    try:
        for w in sorted(os.listdir(wheels)):
            if not w.endswith(".whl"):
                continue
            with zipfile.ZipFile(os.path.join(wheels, w)) as z:
                for i, info in enumerate(z.infolist()):
                    with z.open(info) as f:
                        if f.read(4) != b"\x7fELF":
                            continue
                    dest = os.path.join(tmp, "%s-%d-%s" % (w[:-4], i,
                                                           os.path.basename(info.filename)))
                    with z.open(info) as f, open(dest, "wb") as o:
                        shutil.copyfileobj(f, o)
                    paths.append(dest)
        assert len(paths) >= 6, paths  # the corpus README: one extension or two per wheel
        check_all(paths, "corpus wheels")
    finally:
        shutil.rmtree(tmp)


@test
def objects_without_dynamic_section():
    """A relocatable object (no program headers) and a static executable (no PT_DYNAMIC, no
    .dynamic) read without error; the .o's interface is its .symtab's global, weak and
    undefined symbols, as readelf -s lists them."""
    have_readelf()
    other = os.path.join(PATCHED, "other")
    if not os.path.isdir(other):
        raise Missing("no patchelf fixtures in %s (install patchelf: scripts/setup.sh --test)"
                   % PATCHED)
    o_path, exe = os.path.join(other, "wgpe.o"), os.path.join(other, "nodyn.elf")
    ours = run_wheelgate([o_path, exe])
    o, x = ours[o_path], ours[exe]
    assert o.get("error") is None and x.get("error") is None, (o.get("error"), x.get("error"))
    assert (o["type"], x["type"]) == ("rel", "exec")
    for obj in (o, x):
        assert obj["needed"] == [] and obj["soname"] is None and obj["runpath"] is None
        assert obj["versions"]["needed"] == [] and obj["versions"]["defined"] == []
    out = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True).stdout
    assert "There is no dynamic section" in out, out
    assert x["symbol_counts"]["total"] == 0
    out = subprocess.run(["readelf", "-sW", o_path], capture_output=True, text=True,
                         check=True).stdout
    theirs = []
    for line in out.splitlines():
        m = SYM.match(line)
        if not m:
            continue
        num, value, size, typ, bind, vis, ndx, name = m.groups()
        if num == "0" or typ in ("SECTION", "FILE") or not name:
            continue
        if bind in ("GLOBAL", "WEAK", "UNIQUE", "<OS specific>: 10") or ndx == "UND":
            # .symver in a .o names the symbol name@VER or name@@VER
            ver, hidden = None, False
            if "@" in name:
                name, sep, ver = name.partition("@")
                hidden = not ver.startswith("@")
                ver = ver.lstrip("@")
            theirs.append((name, ndx != "UND", ver, hidden))
    mine = [(s["name"], s["defined"], s["version"], s["version_hidden"]) for s in o["symbols"]]
    assert len(theirs) > 100 and sorted(mine) == sorted(theirs), \
        (len(mine), len(theirs), sorted(set(mine) ^ set(theirs))[:5])


# --- corrupt objects: a clear error naming the object, never a crash --------------------

class Elf64:
    """Just enough of an ELF64 little-endian file to corrupt it on purpose."""

    def __init__(self, path):
        self.b = bytearray(open(path, "rb").read())
        assert self.b[4] == 2 and self.b[5] == 1, path
        self.phoff, = struct.unpack_from("<Q", self.b, 0x20)
        self.phentsize, self.phnum = struct.unpack_from("<HH", self.b, 0x36)

    def phdrs(self):
        for i in range(self.phnum):
            off = self.phoff + i * self.phentsize
            t, = struct.unpack_from("<I", self.b, off)
            o, v, _, fs = struct.unpack_from("<QQQQ", self.b, off + 8)
            yield off, t, o, v, fs

    def set_phdr(self, at, typ=None, offset=None):
        if typ is not None:
            struct.pack_into("<I", self.b, at, typ)
        if offset is not None:
            struct.pack_into("<Q", self.b, at + 8, offset)

    def dynamic(self):
        """[(file offset of the entry, tag, value)] through PT_DYNAMIC."""
        dyn = [p for p in self.phdrs() if p[1] == 2][0]
        out = []
        for k in range(0, dyn[4], 16):
            tag, val = struct.unpack_from("<QQ", self.b, dyn[2] + k)
            out.append((dyn[2] + k, tag, val))
            if tag == 0:
                break
        return out

    def set_dyn(self, tag, value):
        for off, t, _ in self.dynamic():
            if t == tag:
                struct.pack_into("<Q", self.b, off + 8, value)
                return
        raise KeyError(hex(tag))

    def dyn(self, tag):
        return [v for _, t, v in self.dynamic() if t == tag][0]

    def vaddr_to_offset(self, addr):
        for _, t, o, v, fs in self.phdrs():
            if t == 1 and v <= addr < v + fs:
                return o + addr - v
        raise KeyError(hex(addr))

    def save(self, path):
        open(path, "wb").write(self.b)
        return path


@test
def corrupt_dynamic_addresses_are_named_errors():
    paths = patched_paths()
    src = [p for p in paths if p.endswith("auditwheel/libwgpe.so")][0]
    good = run_wheelgate([src])[src]
    tmp = tempfile.mkdtemp()
    try:
        cases = {}

        def case(name, mutate):
            e = Elf64(src)
            mutate(e)
            cases[name] = e.save(os.path.join(tmp, name + ".so"))
        case("strtab-nowhere", lambda e: e.set_dyn(5, 0x7fff0000))
        case("strsz-short", lambda e: e.set_dyn(10, 1))

        def past_end(e):
            strtab = e.dyn(5)
            at = [p for p in e.phdrs() if p[1] == 1 and p[3] <= strtab < p[3] + p[4]][0]
            e.set_phdr(at[0], offset=len(e.b) - 16)
        case("strtab-past-end", past_end)

        def dynamic_past_end(e):
            at = [p for p in e.phdrs() if p[1] == 2][0]
            e.set_phdr(at[0], offset=len(e.b) - 8)
        case("dynamic-past-end", dynamic_past_end)
        case("verneed-nowhere", lambda e: e.set_dyn(0x6ffffffe, 0x7ffe0000))
        case("verneednum-huge", lambda e: e.set_dyn(0x6fffffff, 0xffffffff))
        case("verdefnum-huge", lambda e: e.set_dyn(0x6ffffffd, 0xffffffff))

        def vn_next_huge(e):
            off = e.vaddr_to_offset(e.dyn(0x6ffffffe))
            struct.pack_into("<I", e.b, off + 12, 0x7fffffff)
        case("verneed-next-huge", vn_next_huge)

        def no_pt_dynamic(e):
            at = [p for p in e.phdrs() if p[1] == 2][0]
            e.set_phdr(at[0], typ=0)  # PT_NULL: the .dynamic section is what is left
        case("no-pt-dynamic", no_pt_dynamic)
        got = run_wheelgate(list(cases.values()))
        err = lambda n: got[cases[n]].get("error") or ""  # noqa: E731
        assert err("strtab-nowhere") == "%s: dynamic entry DT_STRTAB (address 0x7fff0000) lies " \
            "in no loadable segment" % cases["strtab-nowhere"], err("strtab-nowhere")
        assert err("verneed-nowhere") == "%s: dynamic entry DT_VERNEED (address 0x7ffe0000) " \
            "lies in no loadable segment" % cases["verneed-nowhere"], err("verneed-nowhere")
        assert err("strtab-past-end").startswith(cases["strtab-past-end"] + ": dynamic entry "
                                                 "DT_STRTAB (address 0x") and \
            "maps past the end of the file" in err("strtab-past-end"), err("strtab-past-end")
        assert err("dynamic-past-end").startswith(cases["dynamic-past-end"] + ": the dynamic "
                                                  "segment (offset "), err("dynamic-past-end")
        assert err("strsz-short").startswith(cases["strsz-short"] + ": dynamic entry ") and \
            "points outside the string table (offset" in err("strsz-short"), err("strsz-short")
        # Counts that overstate the chains: the chains still end where they end.
        for n in ("verneednum-huge", "verdefnum-huge", "no-pt-dynamic"):
            o = got[cases[n]]
            assert o.get("error") is None, (n, o.get("error"))
            for f in ("needed", "soname", "runpath", "versions"):
                assert o[f] == good[f], (n, f, o[f], good[f])
        # A chain link past the table: ld.so would follow it out of the table; wheelgate reads
        # the dynamic segment as ld.so does (issue 25) and names the record.
        assert err("verneed-next-huge") == "%s: DT_VERNEED record 0 links past the end of its " \
            "table" % cases["verneed-next-huge"], err("verneed-next-huge")
    finally:
        shutil.rmtree(tmp)


def system_objects():
    seen, paths, missing = set(), [], []
    for root in SYSTEM_DIRS:
        if not os.path.isdir(root):
            missing.append(root)
            continue
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(d, f)
                if os.path.islink(p) or not (f.endswith(".so") or ".so." in f):
                    continue
                r = os.path.realpath(p)
                if r in seen or not os.path.isfile(r):
                    continue
                try:
                    with open(r, "rb") as fh:
                        if fh.read(4) != b"\x7fELF":
                            continue  # linker scripts (libc.so, libm.so)
                except OSError:
                    continue
                seen.add(r)
                paths.append(r)
    return paths, missing


@test
def system_objects_agree_with_readelf():
    have_readelf()
    paths, missing = system_objects()
    if missing:
        print("  absent, not walked: %s" % ", ".join(missing))
    if not paths:
        raise Skip("no shared objects under %s" % ", ".join(SYSTEM_DIRS))
    n = check_all(paths, "system and CUDA shared objects")
    assert n >= len(paths) * 0.99, (n, len(paths))


if __name__ == "__main__":
    sys.exit(main())

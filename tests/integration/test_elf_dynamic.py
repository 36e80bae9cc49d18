#!/usr/bin/env python3
"""ELF objects read as the loader reads them (issue 25, point 3): symbols, versions and NEEDED
come from the dynamic segment (PT_DYNAMIC through the PT_LOAD segments), the section headers
are only a cross-check, and where they disagree WG-ELF-001 says they lie. Every object here is
checked against reality: readelf -h / --use-dynamic --dyn-syms say what the file holds, a
ctypes dlopen (RTLD_LAZY, in a child process) that it still loads, and the original object
what the facts and findings must be.
  - an old-ABI (-D_GLIBCXX_USE_CXX11_ABI=0) extension importing a c10 symbol, built with g++,
    its e_shoff/e_shnum/e_shstrndx zeroed: the same WG-ABI-001 findings and exit code as the
    original, plus WG-ELF-001;
  - a section table cut short (.dynsym intact, no .dynamic header), a .dynsym header pointing
    at an empty or a different table, a section header past the end of the file;
  - hostile dynamic segments (hash tables and relocations that point past the file): an
    error naming the object, at once;
  - both views on every ELF object of the corpus and of /usr/lib/x86_64-linux-gnu: the same
    symbols, entry by entry (no WG-ELF-001), the same counts as readelf --dyn-syms, and the
    corpus objects with their section headers zeroed read exactly as before.
Usage: test_elf_dynamic.py WHEELGATE FIXTURES CORPUS"""
import base64
import hashlib
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
from harness import Missing, main, test  # noqa: E402

WG, FIX, CORPUS = [os.path.abspath(a) for a in sys.argv[1:4]]
SUF = ".cpython-312-x86_64-linux-gnu.so"
TARGET = ["--target", "python=3.12,torch=2.11.0+cu130,cxx11abi=1,glibc=2.39,glibcxx=3.4.33"]
SYSTEM_DIR = "/usr/lib/x86_64-linux-gnu"

# An extension like a torch one built with the old std::string ABI: it imports
# c10::detail::torchCheckFail(const char*, const char*, unsigned, const std::string&), whose
# mangled name ends in RKSs under -D_GLIBCXX_USE_CXX11_ABI=0 (as the corpus' oldabi wheel).
EXT_SRC = r"""
#include <string>
#include <Python.h>
namespace c10 { namespace detail {
[[noreturn]] void torchCheckFail(const char *, const char *, unsigned, const std::string &);
} }
void check(bool ok, const std::string &msg)
{
	if (!ok)
		c10::detail::torchCheckFail(__func__, __FILE__, __LINE__, msg);
}
extern "C" PyObject *PyInit_oldext(void) { return nullptr; }
"""
OLD_SYMBOL = "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs"


def need(tool):
    if not shutil.which(tool):
        raise Missing("%s not found (scripts/setup.sh --test installs it)" % tool)


def run(*args, timeout=120):
    p = subprocess.run([WG] + list(args), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


# --- the ELF header and section headers, as the test's own ground truth ------------------

def ehdr(d):
    assert d[:4] == b"\x7fELF" and d[4] == 2 and d[5] == 1, "a 64-bit little-endian ELF"
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
    return shoff, shentsize, shnum, shstrndx


def zero_sections(d):
    """e_shoff, e_shnum and e_shstrndx zeroed: the loader never reads them."""
    d = bytearray(d)
    struct.pack_into("<Q", d, 0x28, 0)
    struct.pack_into("<HH", d, 0x3c, 0, 0)
    return bytes(d)


def sections(d):
    """{name: (header offset, index, type, offset, size)}"""
    shoff, size, num, strndx = ehdr(d)
    stroff, = struct.unpack_from("<Q", d, shoff + strndx * size + 0x18)
    out = {}
    for i in range(num):
        o = shoff + i * size
        nm, typ = struct.unpack_from("<II", d, o)
        off, sz = struct.unpack_from("<QQ", d, o + 0x18)
        name = bytes(d[stroff + nm:d.index(0, stroff + nm)]).decode()
        out[name] = (o, i, typ, off, sz)
    return out


def readelf_header(path):
    out = subprocess.run(["readelf", "-h", path], capture_output=True, text=True).stdout
    f = {}
    for line in out.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            f[k.strip()] = v.strip()
    return f


# Num: Value Size Type Bind Vis Ndx Name (a size in hex when large; STB_GNU_UNIQUE binding
# printed "<OS specific>: 10")
SYMLINE = re.compile(r"^\s*(\d+): [0-9a-fA-F]+\s+(?:0x[0-9a-f]+|\d+)\s+(\S+)\s+"
                     r"(<[^>]*>: \d+|\S+)\s+\S+\s+(\S+)\s+(\S+)")


def readelf_dynsyms(path, use_dynamic):
    """(name without version, defined) of the dynamic symbols wheelgate keeps, as readelf
    reads them: from the dynamic segment (--use-dynamic) or the .dynsym section."""
    # readelf 2.40 prints nothing for --use-dynamic --dyn-syms; --use-dynamic -s is the table
    # of the image (the dynamic segment) alone
    args = ["readelf", "-W"] + (["--use-dynamic", "-s"] if use_dynamic else ["--dyn-syms"]) + [path]
    out = subprocess.run(args, capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        m = SYMLINE.match(line)
        if not m or m.group(1) == "0" or m.group(2) in ("SECTION", "FILE"):
            continue
        name = re.sub(r"@.*$", "", m.group(5))
        if name:
            syms.append((name, m.group(4) != "UND"))
    return syms


def loads(path):
    """Whether the object dlopen()s (RTLD_LAZY), in a child: the loader's verdict."""
    code = ("import ctypes,os,sys\n"
            "try:\n ctypes.CDLL(sys.argv[1], mode=os.RTLD_LAZY|os.RTLD_LOCAL); print('ok')\n"
            "except OSError as e: print('no', e)")
    p = subprocess.run([sys.executable, "-c", code, os.path.abspath(path)],
                       capture_output=True, text=True, timeout=60)
    return p.stdout.strip()


def inspect(*paths):
    rc, out, err = run("inspect", "--json", "--compact", "--symbols=all", *paths)
    assert rc in (0, 1), (rc, err[-500:])
    return [o for i in json.loads(out)["inputs"] for o in i["objects"]]


def symlist(o):
    return [(s["name"], s["defined"], s["version"], s["version_hidden"], s["binding"], s["type"])
            for s in o["symbols"]]


# --- the fixtures -------------------------------------------------------------------------

def build_ext(tmp, name="oldext", extra=()):
    need("g++")
    inc = subprocess.run([sys.executable, "-c", "import sysconfig;print(sysconfig.get_paths()"
                          "['include'])"], capture_output=True, text=True).stdout.strip()
    src = os.path.join(tmp, name + ".cpp")
    with open(src, "w") as f:
        f.write(EXT_SRC.replace("PyInit_oldext", "PyInit_" + name))
    so = os.path.join(tmp, name + SUF)
    cmd = ["g++", "-shared", "-fPIC", "-O1", "-D_GLIBCXX_USE_CXX11_ABI=0", "-Wl,-z,lazy",
           "-I", inc, src, "-o", so] + list(extra)
    if not os.path.exists(os.path.join(inc, "Python.h")):
        cmd = [c for c in cmd if c != inc and c != "-I"]
        with open(src, "w") as f:
            f.write(EXT_SRC.replace("#include <Python.h>", "typedef struct _object PyObject;")
                    .replace("PyInit_oldext", "PyInit_" + name))
    subprocess.run(cmd, check=True)
    with open(so, "rb") as f:
        return f.read()


def make_wheel(folder, so_name, so_bytes, name="oldext"):
    """A wheel with one extension and a RECORD that matches it."""
    os.makedirs(folder, exist_ok=True)
    whl = os.path.join(folder, "%s-1.0-cp312-cp312-linux_x86_64.whl" % name)
    di = "%s-1.0.dist-info" % name
    files = {so_name: so_bytes,
             di + "/METADATA": b"Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name.encode(),
             di + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
                            b"Tag: cp312-cp312-linux_x86_64\n"}
    rows = []
    for n, b in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
        rows.append("%s,sha256=%s,%d" % (n, h, len(b)))
    rows.append(di + "/RECORD,,")
    files[di + "/RECORD"] = ("\n".join(rows) + "\n").encode()
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in files.items():
            z.writestr(n, b)
    return whl


def check(path):
    rc, out, err = run("check", "--format", "json", "--no-config", "--profile", "install",
                       *TARGET, path)
    assert rc in (0, 1), (rc, err[-500:])
    return rc, json.loads(out)["inputs"][0]["findings"]


def without(findings, rule):
    return [f for f in findings if f["rule"] != rule]


# --- the tests ----------------------------------------------------------------------------

@test
def zeroed_section_headers_old_abi_extension_fails_as_the_original():
    need("readelf")
    tmp = tempfile.mkdtemp()
    try:
        orig = build_ext(tmp)
        zeroed = zero_sections(orig)
        so = os.path.join(tmp, "zeroed" + SUF)
        with open(so, "wb") as f:
            f.write(zeroed)
        # reality: no section headers, the symbol still there for the loader, and it loads
        h = readelf_header(so)
        assert h["Number of section headers"] == "0" and h["Start of section headers"].startswith(
            "0 "), h
        dyn = readelf_dynsyms(so, True)
        assert (OLD_SYMBOL, False) in dyn, dyn
        assert readelf_dynsyms(so, False) == [], "readelf still sees a .dynsym section"
        assert loads(os.path.join(tmp, "oldext" + SUF)) == "ok"
        assert loads(so) == "ok", loads(so)
        # the facts: the loader's symbols, the section headers said to lie
        a, b = inspect(os.path.join(tmp, "oldext" + SUF), so)
        assert a["sections_lie"] is None, a["sections_lie"]
        assert b["sections_lie"] == "it has no section headers", b["sections_lie"]
        assert symlist(a) == symlist(b) and len(symlist(a)) == len(dyn), (len(symlist(a)),
                                                                            len(dyn))
        assert [(s[0], s[1]) for s in symlist(b)] == dyn
        assert a["needed"] == b["needed"] and a["versions"] == b["versions"]
        assert b["string_abi"]["torch_old"] >= 1 and b["string_abi"] == a["string_abi"]
        # the wheels: WG-ABI-001 exactly as the original's, the same exit code
        w1 = make_wheel(os.path.join(tmp, "orig"), "oldext" + SUF, orig)
        w2 = make_wheel(os.path.join(tmp, "zero"), "oldext" + SUF, zeroed)
        rc1, f1 = check(w1)
        rc2, f2 = check(w2)
        abi1 = [f for f in f1 if f["rule"] == "WG-ABI-001"]
        abi2 = [f for f in f2 if f["rule"] == "WG-ABI-001"]
        assert abi1 and OLD_SYMBOL in abi1[0]["message"], f1
        assert abi1 == abi2, (abi1, abi2)
        assert rc1 == rc2 == 1, (rc1, rc2)
        assert without(f1, "WG-ELF-001") == without(f2, "WG-ELF-001"), (f1, f2)
        lie = [f for f in f2 if f["rule"] == "WG-ELF-001"]
        assert not [f for f in f1 if f["rule"] == "WG-ELF-001"], f1
        assert len(lie) == 1 and lie[0]["severity"] == "error", f2
        assert "no section headers" in lie[0]["message"], lie
        # the text report of the loose object says it too
        rc, out, _ = run("inspect", so)
        assert "the section headers lie: it has no section headers" in out, out
    finally:
        shutil.rmtree(tmp)


def rewrite_wheel(src, dst, change):
    """src's members, change(name, bytes) -> bytes applied, RECORD rewritten to match."""
    with zipfile.ZipFile(src) as z:
        files = {n: change(n, z.read(n)) for n in z.namelist()}
    record = [n for n in files if n.endswith(".dist-info/RECORD")][0]
    rows = []
    for n, b in files.items():
        if n == record:
            continue
        h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
        rows.append("%s,sha256=%s,%d" % (n, h, len(b)))
    rows.append(record + ",,")
    files[record] = ("\n".join(rows) + "\n").encode()
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in files.items():
            z.writestr(n, b)


@test
def corpus_old_abi_wheel_zeroed_fails_as_the_original():
    """The corpus' wgdemo_oldabi_sm90 (ImportError on the GPU machine: undefined symbol
    ..._ZN3c106detail14torchCheckFailEPKcS2_jRKSs) with its extension's section headers
    zeroed: WG-ABI-001 word for word, the same exit code, and WG-ELF-001 besides."""
    name = "wgdemo_oldabi_sm90-0.1.0-cp312-cp312-linux_x86_64.whl"
    src = os.path.join(CORPUS, "wheels", name)
    if not os.path.exists(src):
        raise Missing("the corpus not found at " + CORPUS)
    tmp = tempfile.mkdtemp()
    try:
        os.makedirs(os.path.join(tmp, "orig"))
        os.makedirs(os.path.join(tmp, "zero"))
        a, b = os.path.join(tmp, "orig", name), os.path.join(tmp, "zero", name)
        rewrite_wheel(src, a, lambda n, d: d)
        rewrite_wheel(src, b, lambda n, d: zero_sections(d) if d[:4] == b"\x7fELF" else d)
        for profile in ("install", "publish"):
            out = []
            for w in (a, b):
                rc, o, err = run("check", "--format", "json", "--no-config", "--profile",
                                 profile, "--target", "python=3.12,torch=2.11.0+cu130,"
                                 "cxx11abi=1,cuda=13.0,glibc=2.39,glibcxx=3.4.33", "--gpu",
                                 "sm_90", w)
                assert rc in (0, 1), (rc, err[-500:])
                out.append((rc, json.loads(o)["inputs"][0]["findings"]))
            (rc1, f1), (rc2, f2) = out
            abi = [f for f in f1 if f["rule"] == "WG-ABI-001"]
            assert abi and OLD_SYMBOL in abi[0]["message"], f1
            assert abi == [f for f in f2 if f["rule"] == "WG-ABI-001"], (profile, f1, f2)
            assert without(f1, "WG-ELF-001") == without(f2, "WG-ELF-001"), (profile, f1, f2)
            assert rc1 == rc2 == 1, (profile, rc1, rc2)
            assert [f["rule"] for f in f2 if f["rule"] == "WG-ELF-001"] == ["WG-ELF-001"], f2
            assert not [f for f in f1 if f["rule"] == "WG-ELF-001"], f1
    finally:
        shutil.rmtree(tmp)


@test
def section_table_cut_short_dynsym_intact():
    need("readelf")
    tmp = tempfile.mkdtemp()
    try:
        orig = build_ext(tmp)
        secs = sections(orig)
        keep = max(secs[".dynsym"][1], secs[".dynstr"][1]) + 1
        assert keep <= secs[".dynamic"][1], "the test expects .dynamic after .dynsym/.dynstr"
        d = bytearray(orig)
        shoff, shentsize, _, strndx = ehdr(orig)
        # the first sections (.dynsym and .dynstr among them) and .shstrtab after them
        d[shoff + keep * shentsize:shoff + (keep + 1) * shentsize] = \
            orig[shoff + strndx * shentsize:shoff + (strndx + 1) * shentsize]
        struct.pack_into("<HH", d, 0x3c, keep + 1, keep)
        so = os.path.join(tmp, "cut" + SUF)
        with open(so, "wb") as f:
            f.write(d)
        assert readelf_header(so)["Number of section headers"] == str(keep + 1)
        assert ".dynsym" in subprocess.run(["readelf", "-S", so], capture_output=True,
                                           text=True).stdout
        assert loads(so) == "ok"
        a, b = inspect(os.path.join(tmp, "oldext" + SUF), so)
        assert symlist(a) == symlist(b) and a["needed"] == b["needed"]
        assert b["sections_lie"] and "dynamic segment" in b["sections_lie"], b["sections_lie"]
        rc, f = check(so)
        assert "WG-ELF-001" in {x["rule"] for x in f} and rc == 1, f
    finally:
        shutil.rmtree(tmp)


@test
def dynsym_or_dynamic_header_pointing_at_less_or_another_table():
    need("readelf")
    tmp = tempfile.mkdtemp()
    try:
        orig = build_ext(tmp)
        secs = sections(orig)
        hdr, _, _, off, size = secs[".dynsym"]
        cases = {}
        d = bytearray(orig)
        struct.pack_into("<Q", d, hdr + 0x20, 0)  # sh_size 0: an empty table
        cases["empty"] = (bytes(d), "the section headers list 0 dynamic symbols")
        d = bytearray(orig)
        struct.pack_into("<Q", d, hdr + 0x20, size - 2 * 24)  # two symbols fewer
        n = len(readelf_dynsyms(os.path.join(tmp, "oldext" + SUF), True))
        cases["short"] = (bytes(d), "the section headers list %d dynamic symbols" % (n - 2))
        d = bytearray(orig)
        struct.pack_into("<Q", d, hdr + 0x18, len(orig))  # the header points at a copy of
        d += bytes(orig[off:off + size])  # the table appended, whose symbol 1 is renamed
        struct.pack_into("<I", d, len(orig) + 24, struct.unpack_from("<I", orig, off + 48)[0])
        cases["other"] = (bytes(d), "dynamic symbol 1 is ")
        d = bytearray(orig)  # a .dynamic header that leaves out all but the first entry
        struct.pack_into("<Q", d, secs[".dynamic"][0] + 0x20, 16)
        cases["dynamic"] = (bytes(d), "the .dynamic section header holds 1 of the ")
        for name, (data, want) in cases.items():
            so = os.path.join(tmp, name + SUF)
            with open(so, "wb") as f:
                f.write(data)
            assert loads(so) == "ok", (name, loads(so))
            a, b = inspect(os.path.join(tmp, "oldext" + SUF), so)
            assert symlist(a) == symlist(b), name
            assert b["sections_lie"] and want in b["sections_lie"], (name, b["sections_lie"])
            assert b["string_abi"] == a["string_abi"], name
    finally:
        shutil.rmtree(tmp)


@test
def section_header_past_the_end_is_read_as_the_loader_reads_it():
    tmp = tempfile.mkdtemp()
    try:
        orig = build_ext(tmp)
        hdr = sections(orig)[".dynsym"][0]
        d = bytearray(orig)
        struct.pack_into("<Q", d, hdr + 0x18, len(d) + 0x100000)
        so = os.path.join(tmp, "pastend" + SUF)
        with open(so, "wb") as f:
            f.write(d)
        assert loads(so) == "ok"
        a, b = inspect(os.path.join(tmp, "oldext" + SUF), so)
        assert b["error"] is None and symlist(a) == symlist(b)
        assert "section .dynsym" in b["sections_lie"] and "past the end" in b["sections_lie"]
        # with no dynamic segment there is no loader's view: the sections are all there is
        obj = os.path.join(tmp, "x.o")
        with open(os.path.join(tmp, "x.c"), "w") as f:
            f.write("int f(void) { return 1; }\n")
        subprocess.run(["gcc", "-c", "-o", obj, os.path.join(tmp, "x.c")], check=True)
        o = bytearray(open(obj, "rb").read())
        struct.pack_into("<Q", o, sections(o)[".text"][0] + 0x18, len(o) + 0x100000)
        with open(obj, "wb") as f:
            f.write(o)
        c, = inspect(obj)
        assert c["error"] and "section .text" in c["error"], c
    finally:
        shutil.rmtree(tmp)


@test
def hash_styles_and_zeroed_headers_agree_with_readelf():
    """DT_HASH alone, DT_GNU_HASH alone, both: the count from the dynamic segment is
    readelf's, with the section headers and without them."""
    need("readelf")
    tmp = tempfile.mkdtemp()
    try:
        for style in ("sysv", "gnu", "both"):
            data = build_ext(tmp, "h" + style, ["-Wl,--hash-style=" + style])
            so = os.path.join(tmp, "h" + style + SUF)
            z = os.path.join(tmp, "z" + style + SUF)
            with open(z, "wb") as f:
                f.write(zero_sections(data))
            want = readelf_dynsyms(so, False)
            assert want == readelf_dynsyms(z, True), style
            a, b = inspect(so, z)
            assert a["sections_lie"] is None, (style, a["sections_lie"])
            assert [(s[0], s[1]) for s in symlist(b)] == want, style
            assert symlist(a) == symlist(b), style
    finally:
        shutil.rmtree(tmp)


def dyn_entries(d):
    """[(offset of the entry, tag, value)] of the PT_DYNAMIC array."""
    phoff, = struct.unpack_from("<Q", d, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
    for i in range(phnum):
        typ, = struct.unpack_from("<I", d, phoff + i * phentsize)
        if typ == 2:
            off, = struct.unpack_from("<Q", d, phoff + i * phentsize + 8)
            size, = struct.unpack_from("<Q", d, phoff + i * phentsize + 32)
            out = []
            for o in range(off, off + size, 16):
                tag, val = struct.unpack_from("<qQ", d, o)
                out.append((o, tag, val))
                if tag == 0:
                    break
            return out
    raise AssertionError("no PT_DYNAMIC")


def vaddr_to_offset(d, addr):
    phoff, = struct.unpack_from("<Q", d, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
    for i in range(phnum):
        typ, _, off, va, _, filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
        if typ == 1 and va <= addr < va + filesz:
            return off + addr - va
    raise AssertionError("address %#x in no PT_LOAD" % addr)


def segment_end(d, off):
    """The file offset where the PT_LOAD segment holding file offset off ends."""
    phoff, = struct.unpack_from("<Q", d, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
    for i in range(phnum):
        typ, _, o, _, _, filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
        if typ == 1 and o <= off < o + filesz:
            return o + filesz
    raise AssertionError("offset %#x in no PT_LOAD" % off)


@test
def hostile_dynamic_segments_are_errors_at_once():
    """Hash tables, relocations and the symbol table pointing past what the file holds: an
    error naming the object (WG-WHL-002), never a hang, a crash or an empty read."""
    tmp = tempfile.mkdtemp()
    try:
        orig = zero_sections(build_ext(tmp, "hx", ["-Wl,--hash-style=gnu"]))
        ents = dyn_entries(orig)
        tags = {t: (o, v) for o, t, v in ents}
        DT_GNU_HASH, DT_RELA, DT_RELASZ, DT_SYMTAB = 0x6ffffef5, 7, 8, 6
        gh = vaddr_to_offset(orig, tags[DT_GNU_HASH][1])
        cases = {}
        d = bytearray(orig)
        struct.pack_into("<I", d, gh, 0x7fffffff)  # nbuckets
        cases["buckets"] = (d, "DT_GNU_HASH")
        d = bytearray(orig)
        nb, symoff, bloom = struct.unpack_from("<III", d, gh)
        chains = gh + 16 + bloom * 8 + 4 * nb
        for k in range(chains, segment_end(d, gh) - 3, 4):  # no chain ends in the segment
            struct.pack_into("<I", d, k, struct.unpack_from("<I", d, k)[0] & ~1)
        cases["chain"] = (d, "chain")
        d = bytearray(orig)
        rela = vaddr_to_offset(d, tags[DT_RELA][1])
        struct.pack_into("<Q", d, rela + 8, (100000 << 32) | 1)  # r_info: symbol 100000
        cases["reloc"] = (d, "fit")
        d = bytearray(orig)
        struct.pack_into("<Q", d, tags[DT_RELASZ][0] + 8, 1 << 40)
        cases["relasz"] = (d, "DT_RELA")
        d = bytearray(orig)
        struct.pack_into("<Q", d, tags[DT_SYMTAB][0] + 8, 0x7fff0000)
        cases["symtab"] = (d, "DT_SYMTAB")
        for name, (data, want) in cases.items():
            so = os.path.join(tmp, name + SUF)
            with open(so, "wb") as f:
                f.write(data)
            t = time.monotonic()
            c, = inspect(so)
            assert time.monotonic() - t < 10, name
            assert c["error"] and want in c["error"], (name, c["error"])
            rc, f = check(so)
            assert rc == 1 and "WG-WHL-002" in {x["rule"] for x in f}, (name, f)
    finally:
        shutil.rmtree(tmp)


@test
def no_hash_table_the_relocations_still_count_the_imports():
    """DT_GNU_HASH's tag overwritten (DT_DEBUG) on an object without DT_HASH and without
    section headers: ld.so still binds every import through its relocations, so wheelgate
    still reads every undefined symbol the relocations name, and WG-ABI-001 still fires."""
    need("readelf")
    tmp = tempfile.mkdtemp()
    try:
        orig = build_ext(tmp, "nohash", ["-Wl,--hash-style=gnu"])
        d = bytearray(zero_sections(orig))
        ents = dyn_entries(d)
        at = [o for o, t, _ in ents if t == 0x6ffffef5]  # DT_GNU_HASH
        assert at and not [o for o, t, _ in ents if t == 4], "DT_GNU_HASH alone expected"
        struct.pack_into("<q", d, at[0], 21)  # DT_DEBUG: ignored by wheelgate and ld.so
        so = os.path.join(tmp, "nohash-z" + SUF)
        with open(so, "wb") as f:
            f.write(d)
        assert loads(so) == "ok", loads(so)
        rela = subprocess.run(["readelf", "-W", "-r", os.path.join(tmp, "nohash" + SUF)],
                              capture_output=True, text=True).stdout
        a, b = inspect(os.path.join(tmp, "nohash" + SUF), so)
        undef_a = [s for s in symlist(a) if not s[1]]
        assert undef_a and all(s[0] in rela for s in undef_a), "every import has a relocation"
        assert [s for s in symlist(b) if not s[1]] == undef_a
        assert OLD_SYMBOL in [s[0] for s in undef_a]
        assert b["string_abi"]["torch_old"] == a["string_abi"]["torch_old"] >= 1
        rc, f = check(so)
        assert rc == 1 and "WG-ABI-001" in {x["rule"] for x in f}, f
    finally:
        shutil.rmtree(tmp)


def elf_files(folder, limit=None):
    out = []
    for root, _, files in os.walk(folder):
        for n in sorted(files):
            p = os.path.join(root, n)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            try:
                with open(p, "rb") as f:
                    h = f.read(18)
                if h[:4] == b"\x7fELF" and h[16] == 3:  # ET_DYN: shared objects
                    out.append(p)
            except OSError:
                pass
            if limit and len(out) >= limit:
                return out
    return out


def corpus_objects(tmp):
    wheels = os.path.join(CORPUS, "wheels")
    if not os.path.isdir(wheels):
        raise Missing("the corpus not found at " + CORPUS)
    out = []
    for w in sorted(os.listdir(wheels)):
        if not w.endswith(".whl"):
            continue
        with zipfile.ZipFile(os.path.join(wheels, w)) as z:
            for n in z.namelist():
                b = z.read(n)
                if b[:4] == b"\x7fELF":
                    p = os.path.join(tmp, w[:-4] + "--" + n.replace("/", "_"))
                    with open(p, "wb") as f:
                        f.write(b)
                    out.append(p)
    return out


@test
def both_views_agree_on_every_real_object():
    """The corpus and the system's libraries: no WG-ELF-001, and the count is readelf's
    (.dynsym section). The corpus objects with zeroed section headers read exactly as before."""
    need("readelf")
    tmp = tempfile.mkdtemp()
    try:
        corpus = corpus_objects(tmp)
        assert corpus, "no ELF object in the corpus wheels"
        system = elf_files(SYSTEM_DIR, 400) if os.path.isdir(SYSTEM_DIR) else []
        objs, total = [], 0
        for i in range(0, len(corpus + system), 100):
            objs += inspect(*(corpus + system)[i:i + 100])
        for o in objs:
            if o["error"]:
                continue
            assert o["sections_lie"] is None, (o["path"], o["sections_lie"])
            want = readelf_dynsyms(o["path"], False)
            assert [(s[0], s[1]) for s in symlist(o)] == want, o["path"]
            total += len(want)
        print("  %d objects (%d of the corpus), %d dynamic symbols: both views agree"
              % (len([o for o in objs if not o["error"]]), len(corpus), total))
        zeroed = []
        for p in corpus:
            z = p + ".zeroed.so"
            with open(p, "rb") as f, open(z, "wb") as g:
                g.write(zero_sections(f.read()))
            zeroed.append(z)
        for a, b in zip(inspect(*corpus), inspect(*zeroed)):
            assert b["sections_lie"] == "it has no section headers", b["path"]
            assert symlist(a) == symlist(b) and a["needed"] == b["needed"], b["path"]
            assert a["versions"] == b["versions"] and a["string_abi"] == b["string_abi"]
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())

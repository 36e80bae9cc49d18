#!/usr/bin/python3
# The touch map computed from an object's layout (docs/stream-touchmap.md), for machines where
# wg-touchmap cannot run: the sizes of the ranges the ELF readers read (the dynamic tables,
# the relocations), of what the fatbin scan skips (code) and of .nv_fatbin, and what the
# fatbin readers read inside it (container and entry headers, PTX heads of at most 4 KiB),
# by the same walk as lib/src/facts/fatbin_container.c. Little-endian ELF64 only.
# Usage: touchmap_model.py FILE...   (one line per object)
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import sys

FATBIN_MAGIC = 0xBA55ED50
PTX_HEAD = 4096
DYN_TABLES = ('.dynsym', '.dynstr', '.gnu.version', '.gnu.version_r', '.gnu.version_d',
              '.gnu.hash', '.hash')


def model(path):
    with open(path, 'rb') as f:
        d = f.read()

    def u(o, n):
        return int.from_bytes(d[o:o + n], 'little')

    shoff, shnum, shstrndx = u(40, 8), u(60, 2), u(62, 2)
    shdrs = [(u(h, 4), u(h + 4, 4), u(h + 8, 8), u(h + 24, 8), u(h + 32, 8))
             for h in (shoff + i * 64 for i in range(shnum))]
    names = shdrs[shstrndx][3]
    sections = {}
    size = dict(dyn=0, rel=0, code=0, debug=0, fatbin=0)
    for name, stype, flags, off, sz in shdrs:
        n = d[names + name:d.index(b'\0', names + name)].decode()
        sections[n] = (off, sz)
        if stype == 8:  # SHT_NOBITS
            continue
        if n in DYN_TABLES:
            size['dyn'] += sz
        elif n.startswith('.rela') or n.startswith('.rel.'):
            size['rel'] += sz
        elif n.startswith('.debug'):
            size['debug'] += sz
        elif n in ('.nv_fatbin', '__nv_relfatbin'):
            size['fatbin'] += sz
        elif flags & 4:  # SHF_EXECINSTR
            size['code'] += sz
    containers = entries = header_bytes = ptx = ptx_bytes = 0
    for sec in ('.nv_fatbin', '__nv_relfatbin'):
        if sec not in sections:
            continue
        p, sz = sections[sec]
        end = p + sz
        while p + 16 <= end:
            if u(p, 4) != FATBIN_MAGIC:
                p += 8
                continue
            hsize, fat = u(p + 6, 2), u(p + 8, 8)
            q, cend = p + hsize, p + hsize + fat
            containers += 1
            header_bytes += hsize
            while q + 64 <= cend:
                ehs, psize, kind, csize = u(q + 4, 4), u(q + 8, 8), u(q, 2), u(q + 16, 4)
                entries += 1
                header_bytes += ehs
                if kind == 1:  # PTX: its head, decompressed if it must be
                    ptx += 1
                    ptx_bytes += min(PTX_HEAD, csize or psize)
                if ehs < 64:
                    break
                q += ehs + psize
            p = (cend + 7) & ~7
    dynamic = sections.get('.dynamic', (0, 0))[0]
    dynsym = sections.get('.dynsym', (0, 0))[0]
    print(f"MODEL\t{os.path.basename(path)}\tsize={len(d)}\tdyntables={size['dyn']}"
          f"\trela={size['rel']}\tcode={size['code']}\tdebug={size['debug']}"
          f"\tnv_fatbin={size['fatbin']}\tcontainers={containers}\tentries={entries}"
          f"\theaders={header_bytes}\tptx={ptx}\tptx_heads={ptx_bytes}"
          f"\tdynsym_before_dynamic={int(dynsym < dynamic)}"
          f"\tshoff_pct={100 * shoff / len(d):.1f}", flush=True)


for a in sys.argv[1:]:
    try:
        model(a)
    except (OSError, ValueError, IndexError) as e:
        print(f"ERR\t{a}\t{e}")

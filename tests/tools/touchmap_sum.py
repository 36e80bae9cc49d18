#!/usr/bin/python3
# Sums wg-touchmap's output (docs/stream-touchmap.md) per class of bytes over a set of objects:
# the class's size, the bytes under the pages the ELF readers and the fatbin readers touched,
# the bytes libbfd read, and whether the class's offset is known from bytes before it.
# Usage: wg-touchmap FILE... > set.tsv; touchmap_sum.py set.tsv...
# SPDX-License-Identifier: GPL-3.0-or-later
import collections
import sys

CLASSES = ('ehdr', 'phdrs', 'dynamic', 'dyntables', 'shdrs', 'shstrtab', 'nv_fatbin', 'fatbinseg',
           'notes', 'debug', 'symtab', 'code', 'rodata', 'other', 'nosection')
MB = 1e6

for fn in sys.argv[1:]:
    objs = {}
    tot = collections.defaultdict(lambda: [0, 0, 0, 0])
    known = collections.defaultdict(set)
    with open(fn) as f:
        for line in f:
            x = line.rstrip('\n').split('\t')
            if x[0] == 'OBJ':
                objs[x[1]] = dict([('size', x[2])] + [tuple(kv.split('=')) for kv in x[3:]])
            elif x[0] == 'CLS':
                for i in range(4):
                    tot[x[2]][i] += int(x[3 + i])
                known[x[2]].add(x[7])
    size = sum(int(o['size']) for o in objs.values())
    elf = sum(int(o['elf_pages']) for o in objs.values()) * 4096
    fb = sum(int(o['fatbin_pages']) for o in objs.values()) * 4096
    bfd = sum(int(o['bfd_bytes']) for o in objs.values())
    print(f'## {fn}: {len(objs)} objects, {size / MB:.1f} MB')
    print(f'ELF readers {elf / MB:.1f} MB ({100 * elf / size:.1f}%), fatbin readers '
          f'{fb / MB:.1f} MB ({100 * fb / size:.1f}%), libbfd {bfd / MB:.2f} MB '
          f'({100 * bfd / size:.2f}%)')
    print('| class | size MB | ELF readers MB | fatbin readers MB | libbfd MB | offset known |')
    print('|---|---:|---:|---:|---:|---|')
    for c in CLASSES:
        if c in tot:
            t = tot[c]
            print(f'| {c} | {t[0] / MB:.3f} | {t[1] / MB:.3f} | {t[2] / MB:.3f} | '
                  f'{t[3] / MB:.3f} | {"/".join(sorted(known[c]))} |')

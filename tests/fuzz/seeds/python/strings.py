s = f"{x!r:>{w}} {f'{y}'} {{}}"
t = rb"\d" """doc
from . import _C
"""
x = 1; import pkg.sub.mod

from .sub import (
    mod,  # c
    other as o,
)
from .. import nothing
import a.b.c as d, e
class K:
    from . import _C
with suppress(ImportError): import z
if (n := 3): pass
match = 1
match n:
    case 1: import q
sys.modules[__name__] = 1
__path__ = extend_path(__path__, __name__)

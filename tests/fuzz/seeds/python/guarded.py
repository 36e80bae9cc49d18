from . import _C
try:
    import x_cuda
except ImportError:
    x_cuda = None

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from .sub import mod
__all__ = ["a", "b"]
def __getattr__(n):
    return n

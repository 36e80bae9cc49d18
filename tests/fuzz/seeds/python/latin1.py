# -*- coding: latin-1 -*-
s = "été"
from \
  . import _C

#!/usr/bin/env python3
"""The Python import model (lib/src/facts/pyimports.c, pytoken.c) and WG-HOL-001 against the
interpreter itself (issue 24, point 1).

Each case is a small package packed as a py3-none-any wheel. wheelgate judges every wheel at
once (`check --env PY`), then each package is installed into a directory of its own and
imported for real by Debian's python (PY). The contract, checked case by case:
  - WG-HOL-001 is an error  <=>  `import <package>` fails, with the exception the finding names;
  - a WG-HOL-001 warning names a module of the wheel whose import really fails;
  - every case also says what it expects, so that the cases keep covering both sides (a model
    that claims nothing would agree with every import that works, and fail the cases that
    must fail).
Usage: test_pyimports.py WHEELGATE [PYTHON]"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import main, test, need_path  # noqa: E402

WG = sys.argv[1]
PY = sys.argv[2] if len(sys.argv) > 2 else "/usr/bin/python3"

# name -> (files relative to site-packages, expect: "ok" | "error" | "warning:<module>")
CASES = {
    # The minimal case: `from M import C` of a class is an attribute, never a module.
    "purepkg": ({"purepkg/__init__.py": "from purepkg.user import f\n",
                 "purepkg/contrasts.py": "class C:\n    pass\n",
                 "purepkg/user.py": "from purepkg.contrasts import C\n\ndef f():\n    return C\n"},
                "ok"),
    "selfc": ({"selfc/__init__.py": "import os\nfrom . import _C\n"}, "error"),
    # a name bound in __init__ (a function named like a kernel, a class named C)
    "bound": ({"bound/__init__.py": "from .hub import is_kernel\nclass C: pass\nfast_ext = 1\n",
               "bound/hub.py": "def is_kernel():\n    return True\n",
               "bound/user.py": "from bound import C, is_kernel, fast_ext\n",
               "bound/x.py": "import bound.user\n"}, "ok"),
    "paren": ({"paren/__init__.py": "from paren import (  # names\n    helper,\n    _C,\n)\n",
               "paren/helper.py": "X = 1\n"}, "error"),
    "backslash": ({"backslash/__init__.py": "from backslash import \\\n    _ext\n"}, "error"),
    "docstring": ({"docstring/__init__.py":
                   '"""Usage:\n\nfrom . import _C\nimport docstring_cuda\n"""\nVALUE = 1\n'
                   "s = '''\nfrom . import _C\n'''\n"}, "ok"),
    "semicolon": ({"semicolon/__init__.py": "x = 1; from . import _C\n"}, "error"),
    "comment": ({"comment/__init__.py": "# from . import _C\nx = 1  # import comment_cuda\n"},
                "ok"),
    "guarded": ({"guarded/__init__.py":
                 "try:\n    from . import _C\nexcept ImportError:\n    _C = None\n"}, "ok"),
    "guardtuple": ({"guardtuple/__init__.py":
                    "try:\n    from ._C import f\nexcept (AttributeError, ModuleNotFoundError) as e:\n"
                    "    f = None\n"}, "ok"),
    "reraise": ({"reraise/__init__.py":
                 "try:\n    from . import _C\nexcept ImportError:\n    raise\n"}, "error"),
    "wronghandler": ({"wronghandler/__init__.py":
                      "try:\n    from . import _C\nexcept ValueError:\n    pass\n"}, "error"),
    "inline_try": ({"inline_try/__init__.py":
                    "try: from . import _C\nexcept ImportError: _C = None\n"}, "ok"),
    "typing": ({"typing_only/__init__.py":
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import _C\n"
                "import typing\nif typing.TYPE_CHECKING:\n    from ._C import thing\n"}, "ok"),
    "lazy": ({"lazy/__init__.py": "def load():\n    from . import _C\n    return _C\n"
              "@staticmethod\ndef other():\n    import lazy_cuda\n"}, "ok"),
    "suppress": ({"suppress/__init__.py":
                  "import contextlib\nwith contextlib.suppress(ImportError):\n    from . import _C\n"},
                 "ok"),
    "classbody": ({"classbody/__init__.py": "class A:\n    from . import _C\n"}, "error"),
    "star": ({"star/__init__.py": "from .impl import *\n",
              "star/impl.py": "class C:\n    pass\n__all__ = ['C']\n",
              "star/user.py": "from star import C\n",
              "star/z.py": "from star import user\n"}, "ok"),
    # a module file's binds are read (again) only when a star import brings them in: through
    # a chain of two, a name bound at the end is found, one that is not is missing
    "star_chain": ({"star_chain/__init__.py": "from .a import *\nfrom star_chain import helper\n",
                    "star_chain/a.py": "from .b import *\n",
                    "star_chain/b.py": "def helper():\n    pass\n"}, "ok"),
    "star_chain_missing": ({"star_chain_missing/__init__.py":
                            "from .a import *\nfrom star_chain_missing import helper\n",
                            "star_chain_missing/a.py": "from .b import *\n",
                            "star_chain_missing/b.py": "def other():\n    pass\n"}, "error"),
    "star_unbound": ({"star_unbound/__init__.py": "from .impl import *\nfrom . import C, D\n",
                      "star_unbound/impl.py": "C = 1\n"}, "error"),
    "getattr": ({"getattr_lazy/__init__.py":
                 "__all__ = ['fast_ext']\n\ndef __getattr__(name):\n    return 42\n",
                 "getattr_lazy/user.py": "from getattr_lazy import fast_ext, anything_C\n"}, "ok"),
    # flask's: a __getattr__ for deprecated names, AttributeError for the rest
    "getattr_raises": ({"getattr_raises/__init__.py":
                        "def __getattr__(name):\n    if name == 'old':\n        return 1\n"
                        "    raise AttributeError(name)\n\nfrom . import _C\n"}, "error"),
    # a lazy loader: whatever name it is asked for, it imports
    "getattr_lazyload": ({"getattr_lazyload/__init__.py":
                          "import importlib\n\ndef __getattr__(attr):\n"
                          "    if attr.startswith('_'):\n        raise AttributeError(attr)\n"
                          "    return importlib.import_module('.' + attr, __name__)\n",
                          "getattr_lazyload/sub.py": "X = 1\n",
                          "getattr_lazyload/user.py": "from getattr_lazyload import sub\n"}, "ok"),
    "getattr_flask": ({"getattr_flask/__init__.py":
                       "def __getattr__(name):\n    if name == 'old':\n        import warnings\n"
                       "        from .old import thing\n        return thing\n"
                       "    raise AttributeError(name)\n\nfrom . import _C\n",
                       "getattr_flask/old.py": "thing = 1\n"}, "error"),
    "getattr_named": ({"getattr_named/__init__.py":
                       "def __getattr__(name):\n    if name == '_C':\n        return 1\n"
                       "    raise AttributeError(name)\n\nfrom . import _C\n"}, "ok"),
    "allname": ({"allname/__init__.py": "__all__ = ['thing']\nthing = 1\n",
                 "allname/user.py": "from allname import thing\n"}, "ok"),
    "subpkg": ({"subpkg/__init__.py": "from . import inner\nfrom .inner import deep\n",
                "subpkg/inner/__init__.py": "", "subpkg/inner/deep.py": "V = 2\n"}, "ok"),
    "missingsub": ({"missingsub/__init__.py": "import missingsub.native_ops\n"}, "error"),
    "relup": ({"relup/__init__.py": "from .a import b\n", "relup/a/__init__.py": "",
               "relup/a/b.py": "from .. import _C\n"}, "error"),
    # a submodule the package import does not run: `import pkg` works, the module does not
    "notreached": ({"notreached/__init__.py": "X = 1\n",
                    "notreached/extra.py": "from . import _C\n"}, "warning:notreached.extra"),
    "fstring": ({"fstring/__init__.py":
                 "name = 'x'\ns = f\"{'from . import _C'} {name!r:>{10}} {{literal}}\"\n"
                 "t = rb'\\d' + b'import nothing_cuda'\n"}, "ok"),
    "tabs": ({"tabs/__init__.py": "if True:\n\tx = 1\n\tif x:\n\t\ty = 2\nfrom . import _C\n"},
             "error"),
    "matchsoft": ({"matchsoft/__init__.py":
                   "import re\nmatch = re.match('a', 'a')\ncase = 1\nfrom . import _C\n"}, "error"),
    "withas": ({"withas/__init__.py": "import io\nwith io.StringIO() as buf:\n    pass\n"
                "for i, j in [(1, 2)]:\n    pass\n",
                "withas/user.py": "from withas import buf, i, j\n",
                "withas/zz.py": "from withas import user\n"}, "ok"),
    "mainguard": ({"mainguard/__init__.py":
                   "X = 1\nif __name__ == '__main__':\n    from . import _C\n"}, "ok"),
    "pkgmodule": ({"pkgmodule/__init__.py": "from pkgmodule.util import _C\n",
                   "pkgmodule/util.py": "_C = object()\n"}, "ok"),
    "topmissing": ({"topmissing/__init__.py": "import topmissing_cuda\n"}, "error"),
    "initmodule": ({"initmodule/__init__.py": "X = 1\n",
                    "initmodule/__main__.py": "from .__init__ import X\n"}, "ok"),
    "walrus": ({"walrus/__init__.py": "if (n := 3):\n    pass\n",
                "walrus/user.py": "from walrus import n\n", "walrus/z.py": "import walrus.user\n"},
               "ok"),
    # a namespace package's regular package is what users import (`import nsroot.core`)
    "nsroot": ({"nsroot/core/__init__.py": "from nsroot.core import _C\n"}, "error",
               "nsroot.core"),
    # setuptools puts its _vendor/ on sys.path: jaraco is found there
    "vendored": ({"vendored/__init__.py": "import os, sys\n"
                  "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '_vendor'))\n"
                  "import vendored_jaraco\n",
                  "vendored/_vendor/vendored_jaraco/__init__.py": ""}, "ok"),
    # a module of the package makes up another one in sys.modules (cuda-core's cu13/)
    "madeup": ({"madeup/__init__.py": "from . import impl\nfrom madeup._ctx import X\n",
                "madeup/impl.py": "import sys\nfrom . import real\n"
                                  "sys.modules[__package__ + '._ctx'] = real\n",
                "madeup/real.py": "X = 1\n"}, "ok"),
    # setuptools: vendored on sys.path, and declared behind an extra as well
    "vendextra": ({"vendextra/__init__.py": "import os, sys\n"
                   "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '_vendor'))\n"
                   "import vendextra_dirs\n",
                   "vendextra/_vendor/vendextra_dirs/__init__.py": "",
                   "__requires__": "vendextra-dirs; extra == 'core'"}, "ok"),
    # cuda-core: a versioned subpackage's namespace, __path__ included, copied in
    "versioned": ({"versioned/__init__.py":
                   "def _load():\n    import importlib\n"
                   "    mod = importlib.import_module('.cu13', __package__)\n"
                   "    globals().update(mod.__dict__)\n_load()\nfrom versioned._context import X\n",
                   "versioned/cu13/__init__.py": "",
                   "versioned/cu13/_context.py": "X = 1\n"}, "ok"),
    # flax ships a source tree: `import strayns.src.lib` is nothing users do (a warning)
    "srctree": ({"srctree/__init__.py": "X = 1\n",
                 "srctree_src/src/lib/__init__.py": "from . import lib_cpp\n"},
                "warning:srctree_src.src.lib"),
    # names the import system sets
    "dunder": ({"dunder/__init__.py": "X = 1\n",
                "dunder/user.py": "from dunder import __file__, __name__\n",
                "dunder/zz.py": "import dunder.user\n"}, "ok"),
}
# A file in another encoding (PEP 263): bytes that are not UTF-8 in a string.
LATIN1 = ("latin1", {"latin1/__init__.py": b"# -*- coding: latin-1 -*-\ns = '\xe9t\xe9'\n"
                                           b"from . import _C\n"}, "error")


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(out, name, files):
    dist = "%s-1.0.dist-info" % name
    requires = files.get("__requires__")
    files = {k: (v.encode() if isinstance(v, str) else v) for k, v in files.items()
             if k != "__requires__"}
    files[dist + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n%s" % (
        name, "Requires-Dist: %s\n" % requires if requires else "")).encode()
    files[dist + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    rows = ["%s,%s,%d" % (k, record_hash(v), len(v)) for k, v in files.items()]
    files[dist + "/RECORD"] = ("\n".join(rows + [dist + "/RECORD,,"]) + "\n").encode()
    path = os.path.join(out, "%s-1.0-py3-none-any.whl" % name)
    with zipfile.ZipFile(path, "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
    return path


def real_import(site, module):
    """The exception `import module` raises with site first on sys.path, or None."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); sys.dont_write_bytecode = True\n"
            "try:\n    __import__(sys.argv[2])\nexcept BaseException as e:\n"
            "    print(type(e).__name__ + ': ' + str(e).split(' (')[0]); sys.exit(3)\n")
    p = subprocess.run([PY, "-c", code, site, module], capture_output=True, text=True, timeout=60)
    assert p.returncode in (0, 3), (module, p.stdout, p.stderr)
    return p.stdout.strip() if p.returncode == 3 else None


@test
def import_model_agrees_with_the_interpreter():
    need_path(PY, "Debian's python3")
    tmp = tempfile.mkdtemp()
    cases = dict(CASES)
    cases[LATIN1[0]] = LATIN1[1:]
    wheels = {}
    for name, case in sorted(cases.items()):
        files, expect = case[0], case[1]
        top = case[2] if len(case) > 2 else sorted(f for f in files if "/" in f)[0].split("/")[0]
        wheels[make_wheel(tmp, name, files)] = (name, files, expect, top)
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", "--env", PY, "-j", "2",
                        *sorted(wheels)], capture_output=True, text=True)
    assert p.returncode in (0, 1), p.stderr
    doc = json.loads(p.stdout)
    seen = 0
    for rep in doc["inputs"]:
        name, files, expect, top = wheels[rep["path"]]
        hol = [f for f in rep["findings"] if f["rule"] == "WG-HOL-001"]
        errors = [f for f in hol if f["severity"] == "error"]
        warnings = [f for f in hol if f["severity"] == "warning"]
        site = os.path.join(tmp, "site-" + name)
        os.makedirs(site)
        for rel, data in files.items():
            if rel == "__requires__":
                continue
            os.makedirs(os.path.dirname(os.path.join(site, rel)), exist_ok=True)
            with open(os.path.join(site, rel), "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)
        got = real_import(site, top)
        # the contract: an error iff the real import fails, with the exception it names
        assert bool(errors) == bool(got), (name, got, errors)
        if got:
            exc = got.split(":")[0]
            assert any(exc in e["message"] for e in errors), (name, got, errors)
        for w in warnings:
            mod = w["message"].split("importing ")[1].split(" ")[0]
            assert real_import(site, mod), (name, "the warning's module imports fine", w)
        # and what the case expects, so both sides stay covered
        if expect == "ok":
            assert not hol, (name, hol)
        elif expect == "error":
            assert errors, name
        else:
            assert not errors and warnings and expect.split(":")[1] in warnings[0]["message"], \
                (name, hol)
        seen += 1
    assert seen == len(cases), (seen, len(cases))
    shutil.rmtree(tmp)


@test
def hostile_sources_stay_linear():
    """Deep nesting, an unterminated string, 10^5 imports on one line, unbalanced brackets:
    judged, in bounded time, without a crash."""
    tmp = tempfile.mkdtemp()
    deep = "".join(" " * i + "if x:\n" for i in range(300)) + " " * 300 + "from . import _C\n"
    files = {"hostile/__init__.py": "x = 1\n",
             "hostile/deep.py": deep,
             "hostile/unterminated.py": "s = '''never closed\nfrom . import _C\n",
             "hostile/wide.py": "import " + ", ".join("m%d" % i for i in range(100000)) + "\n",
             "hostile/fwide.py": "from hostile import (" + ", ".join("n%d" % i for i in range(100000)) + ")\n",
             "hostile/brackets.py": "x = ((((((((\nfrom . import _C\n" + "]" * 1000 + "\n",
             "hostile/fstr.py": "s = f'" + "{f'" * 200 + "x" + "'}" * 200 + "'\n"}
    w = make_wheel(tmp, "hostile", files)
    p = subprocess.run([WG, "check", "--no-config", "--format", "json", w], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode in (0, 1), p.stderr
    doc = json.loads(p.stdout)
    hol = [f for f in doc["inputs"][0]["findings"] if f["rule"] == "WG-HOL-001"]
    # fwide.py names 100,000 attributes of a package that binds none of them: at most
    # max_rule_findings (100) listed, the rest counted in `more`, never lost
    assert len(hol) <= 100, len(hol)
    more = sum(m["count"] for m in doc["inputs"][0].get("more", []) if m["rule"] == "WG-HOL-001")
    assert len(hol) + more >= 100000, (len(hol), more)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())

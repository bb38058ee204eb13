"""Run a script as ``python script.py`` runs it: ``__main__`` with an absolute ``__file__``
(so tracebacks and warnings name the absolute path) while ``sys.argv[0]`` stays as given.
``runpy.run_path`` would set ``sys.argv[0]`` to the path too; it still runs directories and
zip files (their ``__main__.py``). Used by ``python -m disttorch.as_torch`` and the launcher."""

from __future__ import annotations

import builtins
import io
import os
import runpy
import sys
import types
from importlib.machinery import SourceFileLoader


def run_script(script: str) -> None:
    """Run ``script`` as the program's ``__main__`` module, ``sys.path[0]`` its directory."""
    path = os.path.abspath(script)
    sys.path[0] = os.path.dirname(path)
    if not os.path.isfile(path) or not path.endswith(".py"):
        runpy.run_path(script, run_name="__main__")
        return
    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=path,
        __builtins__=builtins,
        __loader__=SourceFileLoader("__main__", path),
        __spec__=None,
        __cached__=None,
    )
    with io.open_code(path) as source:
        code = compile(source.read(), path, "exec")
    sys.modules["__main__"] = main
    exec(code, main.__dict__)

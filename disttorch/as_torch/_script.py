"""Run a program file as ``__main__`` the way ``python prog.py`` does.

Python names the main module's file ``prog.py`` joined to the working directory (absolute, not
normalised), so ``__file__``, tracebacks and the ``file:line:`` of warnings show that path;
``runpy.run_path`` would keep the path as given and also rewrite ``sys.argv[0]``. This file
imports nothing from disttorch (the alias loads it before disttorch is imported).
"""

from __future__ import annotations

import builtins
import importlib.machinery
import io
import os
import runpy
import sys
import types
import zipfile

__all__ = ["run_script"]


def run_script(path: str) -> None:
    """Run the file ``path`` as ``__main__`` (``sys.argv`` and ``sys.path`` are the caller's to
    set); a directory or zip file with a ``__main__.py`` goes through ``runpy``."""
    if not os.path.isfile(path) or zipfile.is_zipfile(path):
        runpy.run_path(path, run_name="__main__")
        return
    full = os.path.join(os.getcwd(), path)
    with io.open_code(full) as f:
        code = compile(f.read(), full, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=full,
        __loader__=importlib.machinery.SourceFileLoader("__main__", full),
        __builtins__=builtins,
        __spec__=None,
        __package__=None,
        __cached__=None,
    )
    sys.modules["__main__"] = main  # pickling and multiprocessing find the program's names here
    exec(code, main.__dict__)

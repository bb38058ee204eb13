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


def run_script(path: str, report_errors: bool = False) -> None:
    """Run the file ``path`` as ``__main__`` (``sys.argv`` and ``sys.path`` are the caller's to
    set); a directory or zip file with a ``__main__.py`` goes through ``runpy``.

    With ``report_errors``, an exception the program does not catch is printed as Python
    prints it, its traceback starting at the program's own frame (not at the frames that
    started it), and ends the process with status 1; so does a program that does not compile
    (its ``SyntaxError`` alone, without a traceback)."""
    if not os.path.isfile(path) or zipfile.is_zipfile(path):
        runpy.run_path(path, run_name="__main__")
        return
    full = os.path.join(os.getcwd(), path)
    with io.open_code(full) as f:
        source = f.read()
    try:
        code = compile(source, full, "exec", dont_inherit=True)
    except SyntaxError as error:
        if not report_errors:
            raise
        # Python reports a program that does not compile without a traceback: its file, line,
        # the line itself with a caret, and the error
        sys.excepthook(type(error), error.with_traceback(None), None)
        raise SystemExit(1) from None
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
    if not report_errors:
        exec(code, main.__dict__)
        return
    try:
        exec(code, main.__dict__)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as error:
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code is not code:
            tb = tb.tb_next
        if tb is not None:
            error.with_traceback(tb)  # the hook prints the exception's own traceback
        sys.excepthook(type(error), error, error.__traceback__)
        raise SystemExit(1) from None

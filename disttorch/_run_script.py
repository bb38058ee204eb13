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


def run_script(script: str, report_errors: bool = False) -> None:
    """Run ``script`` as the program's ``__main__`` module, ``sys.path[0]`` its directory.

    With ``report_errors``, an exception the script does not catch is printed as Python
    prints it, its traceback starting at the script's own frame (not at the frames that
    started it), and ends the process with status 1."""
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

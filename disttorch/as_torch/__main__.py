"""``python -m disttorch.as_torch prog.py ARGS`` / ``python -m disttorch.as_torch -m pkg.mod ARGS`` /
``python -m disttorch.as_torch -c CODE ARGS``:
run an unmodified PyTorch program on disttorch in this process, as ``python prog.py`` would
(``sys.argv``, ``sys.path[0]``, ``__main__`` and its absolute ``__file__`` as Python sets them), with the alias on here
and in every Python process the program starts."""

from __future__ import annotations

import os
import runpy
import sys
import types

from . import enable_for_children, install
from ._script import run_script

USAGE = "usage: python -m disttorch.as_torch (prog.py | -m module | -c code) [ARGS...]"


def main(argv: list[str] | None = None) -> None:
    """Run the program named by ``argv`` (default ``sys.argv[1:]``) with the alias installed."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE + "\n\n" + (__doc__ or ""), file=sys.stderr if not args else sys.stdout)
        raise SystemExit(2 if not args else 0)
    enable_for_children()
    install()
    if args[0] in ("-m", "-c") and len(args) < 2:
        print(
            f"{USAGE}\nerror: {args[0]} needs {'a module name' if args[0] == '-m' else 'the code'}",
            file=sys.stderr,
        )
        raise SystemExit(2)
    if args[0] == "-c":  # as python -c: argv[0] is "-c", the current directory comes first on the path
        sys.argv = ["-c", *args[2:]]
        sys.path[0] = ""
        main_module = types.ModuleType("__main__")
        sys.modules["__main__"] = main_module
        exec(compile(args[1], "<string>", "exec"), vars(main_module))  # noqa: S102
        return
    if args[0] == "-m":
        sys.argv = args[1:]
        sys.path[0] = os.getcwd()
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        return
    script = args[0]
    if not os.path.exists(script):
        print(f"{USAGE}\nerror: can't open file {os.path.abspath(script)!r}: no such file", file=sys.stderr)
        raise SystemExit(2)
    sys.argv = args
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    run_script(script, report_errors=True)


if __name__ == "__main__":
    main()

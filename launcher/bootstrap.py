"""The first thing every worker runs: pins cores, arms faulthandler, runs the user's program.

The launcher starts each rank as::

    python -u -m disttorch.launcher.bootstrap script.py args...     # a script, like `python script.py`
    python -u -m disttorch.launcher.bootstrap -m package.module args...
    python -u -m disttorch.launcher.bootstrap --exec program args... # --no-python: exec a program

It then:

0. arranges to be killed if the launcher dies (``DISTTORCH_AGENT_PID``, see disttorch.launcher.reaper),
   or, when the launcher has a guardian (``DISTTORCH_GUARDIAN_PID``), to be stopped, with every
   process it starts kept below it (a child subreaper), for the guardian to end them all; a
   thread then reaps the orphans it adopts as they exit (never its own children);
1. pins this process to the cores in ``DISTTORCH_CPU_AFFINITY`` (e.g. ``"0,1"``), before
   any library starts its threads;
2. enables :mod:`faulthandler`, so a rank that dies of SIGSEGV, SIGABRT, SIGBUS, SIGFPE or
   SIGILL prints every thread's Python stack, and ``kill -USR1 <pid>`` prints it on demand;
3. runs the script as ``__main__`` with :mod:`runpy` (``sys.argv`` and ``sys.path[0]`` as
   ``python`` would set them);
4. if the script raises, writes the traceback with rank, host, pid, time and the line of the
   user's code it came from to ``DISTTORCH_ERROR_FILE`` (see :mod:`disttorch._error_file`),
   prints it and exits with 1 (``sys.exit("message")`` is recorded too, Python prints it). A rank that only reports a peer's failure (``PeerDiedError``)
   prints the user's frames and the message, not the library's internals (the launcher's
   summary shows the user's frames too; the full traceback stays in the error file).

No decorator is needed in user code. Standard library only.
"""

from __future__ import annotations

import faulthandler
import os
import runpy
import signal
import sys
import sysconfig
import traceback
from types import TracebackType
from typing import List, Optional

from disttorch import _error_file, _fd_limit
from disttorch._error_file import write_error_file
from disttorch._mp_temp_dir import remove_at_sigterm
from disttorch.as_torch import _script
from disttorch.as_torch._script import run_script

from .guardian import GUARDIAN_PID_ENV
from .reaper import become_subreaper, die_with_parent, reap_adopted_orphans

AFFINITY_ENV = "DISTTORCH_CPU_AFFINITY"
AGENT_PID_ENV = "DISTTORCH_AGENT_PID"
#: Frames under these folders are not the user's code: disttorch, the launcher, the standard
#: library and installed packages.
_LIBRARY_ROOTS = tuple(
    os.path.abspath(p) + os.sep
    for p in {
        os.path.dirname(os.path.abspath(_error_file.__file__)),  # the disttorch package
        os.path.dirname(os.path.abspath(__file__)),
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
    }
)
#: The frames that start the program, left out of its traceback as ``python script.py`` shows it.
_SKIPPED_FILES = {
    os.path.abspath(__file__),
    os.path.abspath(_script.__file__),
    os.path.abspath(runpy.__file__),
    "<frozen runpy>",
}


def _pin_cores() -> None:
    cores = os.environ.get(AFFINITY_ENV)
    if cores:
        os.sched_setaffinity(0, {int(c) for c in cores.split(",")})


def _user_traceback(tb: Optional[TracebackType]) -> Optional[TracebackType]:
    """Drop the bootstrap, script-runner and runpy frames from the front, as ``python
    script.py`` shows it."""
    while tb is not None and (
        tb.tb_frame.f_code.co_filename in _SKIPPED_FILES
        or os.path.abspath(tb.tb_frame.f_code.co_filename) in _SKIPPED_FILES
    ):
        tb = tb.tb_next
    return tb


def _in_user_code(filename: str) -> bool:
    """Is this frame the user's (not disttorch's, the standard library's or an installed package's)?"""
    path = os.path.abspath(filename)
    return not filename.startswith("<") and not any(path.startswith(root) for root in _LIBRARY_ROOTS)


def _one_line(exc: BaseException) -> str:
    """``"ValueError: bad shape"``: the exception's type and the first line of its message
    (a SyntaxError's message names the file and line)."""
    name = type(exc).__qualname__
    message = str(exc).strip().split("\n")[0]
    return f"{name}: {message}" if message else name


def _where(exc: BaseException, tb: Optional[TracebackType]) -> Optional[str]:
    """The line of the user's code the exception came from, with its source:
    ``"train.py, line 12, in step: raise ValueError(...)"``."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}, line {exc.lineno}"
    frames = [f for f in traceback.extract_tb(tb) if _in_user_code(f.filename)]
    if not frames:
        return None
    f = frames[-1]
    return f"{f.filename}, line {f.lineno}, in {f.name}" + (f": {f.line.strip()}" if f.line else "")


def _user_frames(exc: BaseException, tb: Optional[TracebackType]) -> str:
    """The traceback as the user's code sees it: its frames and the message, without the
    frames inside disttorch or other libraries and the exceptions chained to it."""
    frames = [f for f in traceback.extract_tb(tb) if _in_user_code(f.filename)]
    head = "Traceback (most recent call last, library frames left out):\n" if frames else ""
    return (
        head
        + "".join(traceback.format_list(frames))
        + "".join(traceback.format_exception_only(type(exc), exc))
    )


def _add_hint(exc: BaseException) -> None:
    """A PyTorch program run without the alias fails at ``import torch``: say how to run it."""
    if (
        isinstance(exc, ModuleNotFoundError)
        and exc.name == "torch"
        and os.environ.get("DISTTORCH_AS_TORCH") != "1"
    ):
        exc.msg = (
            f"{exc.msg} (to run a PyTorch program on disttorch, launch it with "
            "disttorch-launch --as-torch, or write import disttorch as torch)"
        )


def _run(argv: List[str]) -> None:
    if argv[0] == "-m":
        module = argv[1]
        sys.argv = [module, *argv[2:]]  # runpy replaces argv[0] with the module's path
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script = argv[0]
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        run_script(script)


def main(argv: Optional[List[str]] = None) -> None:
    """Run ``argv`` (``script args...``, ``-m module args...`` or ``--exec program args...``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] in ("-m", "--exec") and len(argv) < 2):
        sys.exit(
            "usage: python -m disttorch.launcher.bootstrap (script.py | -m module | --exec program) [args...]"
        )
    guarded = False
    if os.environ.get(AGENT_PID_ENV):
        guarded = bool(os.environ.get(GUARDIAN_PID_ENV)) and become_subreaper()
        die_with_parent(int(os.environ[AGENT_PID_ENV]), signal.SIGSTOP if guarded else signal.SIGKILL)
    _pin_cores()
    if argv[0] == "--exec":
        os.execvp(argv[1], argv[1:])
    if guarded:  # orphans of its descendants become its children: reap them as they exit
        reap_adopted_orphans()
    remove_at_sigterm()  # the launcher stops a rank's process group with SIGTERM
    faulthandler.enable(all_threads=True)
    faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)
    _fd_limit.reserve()
    try:
        _run(argv)
    except SystemExit as exc:
        if exc.code is not None and not isinstance(exc.code, int):  # sys.exit("message"): status 1
            tb = _user_traceback(exc.__traceback__)
            full = "".join(traceback.format_exception(type(exc), exc, tb))
            extra = {"user_traceback": _user_frames(exc, tb), "where": _where(exc, tb)}
            write_error_file("exception", _one_line(exc), full, **extra)
        raise
    except BaseException as exc:  # noqa: B902 - KeyboardInterrupt is a failure worth recording too
        _fd_limit.release()  # a rank out of descriptors can still write its record
        _add_hint(exc)
        tb = _user_traceback(exc.__traceback__)
        # A peer's death or silence reported here names that peer: the launcher blames it, and
        # this rank's report is a consequence, shown without disttorch's internals.
        blamed = getattr(exc, "rank", None) if type(exc).__name__ == "PeerDiedError" else None
        full = "".join(traceback.format_exception(type(exc), exc, tb))
        short = _user_frames(exc, tb)
        extra = {"user_traceback": short, "where": _where(exc, tb)}
        if isinstance(blamed, int):
            extra["blamed_rank"] = blamed
        line = _one_line(exc)
        if _fd_limit.is_exhaustion(exc) and "RLIMIT_NOFILE" not in line:
            line += f" ({_fd_limit.describe()})"
        write_error_file("exception", line, full, **extra)
        sys.stderr.write(short if isinstance(blamed, int) else full)
        sys.stderr.flush()
        sys.exit(1)


if __name__ == "__main__":
    main()

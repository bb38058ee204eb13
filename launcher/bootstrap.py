"""The first thing every worker runs: pins cores, arms faulthandler, runs the user's program.

The launcher starts each rank as::

    python -u -m disttorch.launcher.bootstrap script.py args...     # a script, like `python script.py`
    python -u -m disttorch.launcher.bootstrap -m package.module args...
    python -u -m disttorch.launcher.bootstrap --exec program args... # --no-python: exec a program

It then:

0. arranges to be killed if the launcher dies (``DISTTORCH_AGENT_PID``, see disttorch.launcher.reaper);
1. pins this process to the cores in ``DISTTORCH_CPU_AFFINITY`` (e.g. ``"0,1"``), before
   any library starts its threads;
2. enables :mod:`faulthandler`, so a rank that dies of SIGSEGV, SIGABRT, SIGBUS, SIGFPE or
   SIGILL prints every thread's Python stack, and ``kill -USR1 <pid>`` prints it on demand;
3. runs the script as ``__main__`` with :mod:`runpy` (``sys.argv`` and ``sys.path[0]`` as
   ``python`` would set them);
4. if the script raises, writes the traceback with rank, host, pid and time to
   ``DISTTORCH_ERROR_FILE`` (see :mod:`disttorch._error_file`), prints it and exits with 1.

No decorator is needed in user code. Standard library only.
"""

from __future__ import annotations

import faulthandler
import os
import runpy
import signal
import sys
import traceback
from types import TracebackType
from typing import List, Optional

from disttorch._error_file import write_error_file

from .reaper import die_with_parent

AFFINITY_ENV = "DISTTORCH_CPU_AFFINITY"
AGENT_PID_ENV = "DISTTORCH_AGENT_PID"
_SKIPPED_FILES = {os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>"}


def _pin_cores() -> None:
    cores = os.environ.get(AFFINITY_ENV)
    if cores:
        os.sched_setaffinity(0, {int(c) for c in cores.split(",")})


def _user_traceback(tb: Optional[TracebackType]) -> Optional[TracebackType]:
    """Drop the bootstrap and runpy frames from the front, as ``python script.py`` shows it."""
    while tb is not None and (
        tb.tb_frame.f_code.co_filename in _SKIPPED_FILES
        or os.path.abspath(tb.tb_frame.f_code.co_filename) in _SKIPPED_FILES
    ):
        tb = tb.tb_next
    return tb


def _run(argv: List[str]) -> None:
    if argv[0] == "-m":
        module = argv[1]
        sys.argv = [module, *argv[2:]]  # runpy replaces argv[0] with the module's path
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script = argv[0]
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name="__main__")


def main(argv: Optional[List[str]] = None) -> None:
    """Run ``argv`` (``script args...``, ``-m module args...`` or ``--exec program args...``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] in ("-m", "--exec") and len(argv) < 2):
        sys.exit(
            "usage: python -m disttorch.launcher.bootstrap (script.py | -m module | --exec program) [args...]"
        )
    if os.environ.get(AGENT_PID_ENV):
        die_with_parent(int(os.environ[AGENT_PID_ENV]))
    _pin_cores()
    if argv[0] == "--exec":
        os.execvp(argv[1], argv[1:])
    faulthandler.enable(all_threads=True)
    faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)
    try:
        _run(argv)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: B902 - KeyboardInterrupt is a failure worth recording too
        text = "".join(traceback.format_exception(type(exc), exc, _user_traceback(exc.__traceback__)))
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        # A peer's death or silence reported here names that peer: the launcher blames it.
        blamed = getattr(exc, "rank", None) if type(exc).__name__ == "PeerDiedError" else None
        write_error_file(
            "exception", error, text, **({"blamed_rank": blamed} if isinstance(blamed, int) else {})
        )
        sys.stderr.write(text)
        sys.stderr.flush()
        sys.exit(1)


if __name__ == "__main__":
    main()

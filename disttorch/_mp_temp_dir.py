"""multiprocessing's temporary directory of this process (``multiprocessing.util.get_temp_dir``),
removed when SIGTERM ends the process.

A process that passes shared-memory tensors to another (a DataLoader worker, a rank feeding
``torch.multiprocessing`` children) opens its resource sharer's listening socket in a
``pymp-*`` directory there, which Python removes only when the process exits normally: the
launcher stopping its ranks' process groups (SIGTERM) left one per process in ``/tmp``.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
from multiprocessing import process as mp_process
from typing import Any

__all__ = ["remove_at_sigterm", "temp_dir"]


def temp_dir() -> str | None:
    """This process's multiprocessing temporary directory, if made (a forked child inherits its
    parent's)."""
    return mp_process.current_process()._config.get("tempdir")  # util.get_temp_dir()'s


def remove_at_sigterm() -> None:
    """On SIGTERM, remove the temporary directory this process made (not the one it inherited
    now, its parent's), then die of the signal as before. Call from the main thread."""
    signal.signal(signal.SIGTERM, functools.partial(_die_of_sigterm, temp_dir()))


def _die_of_sigterm(inherited: str | None, signum: int, frame: Any) -> None:
    made = temp_dir()
    if made and made != inherited:
        shutil.rmtree(made, ignore_errors=True)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)

"""The per-rank error file: what a failing worker records for the launcher.

The launcher gives every worker its own path in ``DISTTORCH_ERROR_FILE``. When a
worker dies of an uncaught exception (see ``disttorch.launcher.bootstrap``) or of an injected
fault (see ``disttorch._faults``), it writes one JSON object there::

    {"kind": "exception" | "fault", "rank": 1, "local_rank": 1, "host": "node7",
     "pid": 4242, "time": 1795000000.5, "error": "ValueError: bad shape",
     "traceback": "Traceback (most recent call last): ..."}

An uncaught exception adds ``"where"`` (the line of the user's code that raised:
``"train.py, line 12, in step: ..."``) and ``"user_traceback"`` (the traceback without
disttorch's own frames), which the launcher's summary leads with.

A rank that goes on to exit may also record a ``"lost_save"``: an ``async_save`` that failed
while nobody asked its future (the exit status stays PyTorch's), which the launcher names. It
is a record of that kind, or, where the rank recorded its exception first, that record's
``"lost_save"`` field.

The launcher reads it back to name the root cause of a failed job. Standard library only.
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Any, Optional

ERROR_FILE_ENV = "DISTTORCH_ERROR_FILE"
#: Where a launcher started by ``torch.distributed.run.run`` writes, when its job fails for
#: good, the failed ranks of the last attempt as JSON, the root cause first (``{"failures":
#: [{"rank", "local_rank", "pid", "returncode", "time", "record"}...], "notes": [...]}``;
#: ``record``: the rank's error file, or null), from which ``run`` raises ``ChildFailedError``.
LAUNCH_FAILURES_ENV = "DISTTORCH_LAUNCH_FAILURES_FILE"
#: The kind of a record that is no error of the rank's own: a checkpoint it lost unseen.
LOST_SAVE = "lost_save"


def _env_int(name: str) -> Optional[int]:
    value = os.environ.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def write_error_file(kind: str, error: str, traceback_text: str = "", **extra: Any) -> Optional[str]:
    """Record why this worker is about to die in the file named by ``DISTTORCH_ERROR_FILE``.

    Args:
        kind: ``"exception"`` for an uncaught exception, ``"fault"`` for an injected fault,
            :data:`LOST_SAVE` for a failed ``async_save`` nobody asked about.
        error: one line, e.g. ``"ValueError: bad shape"``.
        traceback_text: the formatted Python traceback, if there is one.
        **extra: more JSON-serialisable fields to store.

    Returns:
        The path written, or ``None`` when the variable is unset (not started by the launcher)
        or the file cannot be written (a full disk: the worker still reports its exception on
        stderr). The first record wins: an existing file is left alone, so the original cause
        survives; a :data:`LOST_SAVE` after it is added to it as its ``"lost_save"`` field.
    """
    path = os.environ.get(ERROR_FILE_ENV)
    if not path:
        return None
    if os.path.exists(path):
        first = read_error_file(path) if kind == LOST_SAVE else None
        return None if first is None else _write(path, {**first, LOST_SAVE: error})
    record = {
        "kind": kind,
        "rank": _env_int("RANK"),
        "local_rank": _env_int("LOCAL_RANK"),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "time": time.time(),
        "error": error,
        "traceback": traceback_text,
        **extra,
    }
    return _write(path, record)


def _write(path: str, record: dict) -> Optional[str]:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(tmp, path)  # atomic: the launcher never reads half a record
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return None
    return path


def read_error_file(path: str) -> Optional[dict]:
    """Return the record a worker wrote at ``path``, or ``None`` if there is none (or it is unreadable)."""
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None

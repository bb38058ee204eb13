"""``torch.backends.cudnn``: cuDNN is never available; its flags are kept and change nothing.

``import torch.backends.cudnn as cudnn; cudnn.benchmark = True`` works as on a CPU build of
PyTorch (defaults: ``enabled=True``, ``benchmark=False``, ``deterministic=False``,
``allow_tf32=True``).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

__all__ = [
    "allow_tf32",
    "benchmark",
    "benchmark_limit",
    "deterministic",
    "enabled",
    "flags",
    "is_acceptable",
    "is_available",
    "version",
]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit: int | None = None


def is_available() -> bool:
    """False: no cuDNN (disttorch computes on the CPU)."""
    return False


def version() -> None:
    """None: no cuDNN."""
    return


def is_acceptable(tensor: Any) -> bool:
    """False: cuDNN accepts no tensor here (all are CPU tensors)."""
    return False


@contextlib.contextmanager
def flags(
    enabled: bool = False,
    benchmark: bool = False,
    benchmark_limit: int | None = 10,
    deterministic: bool = False,
    allow_tf32: bool = True,
) -> Iterator[None]:
    """Set the cuDNN flags inside a ``with`` block, restoring them after."""
    mod = sys.modules[__name__]
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    old = {n: getattr(mod, n) for n in names}
    for n, v in zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)):
        setattr(mod, n, v)
    try:
        yield
    finally:
        for n, v in old.items():
            setattr(mod, n, v)

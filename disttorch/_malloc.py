"""Keep large arrays' memory in the process instead of handing it back to the OS at every free.

A training step allocates and frees the same few-megabyte arrays (activations, gradients)
hundreds of times. glibc's malloc serves blocks above its mmap threshold with fresh
``mmap`` pages and unmaps them again on free, so every step pays for page faults and
zeroing: on the GPT of ``benchmarks/train_step.py`` that is over a third of the step.
Raising the mmap threshold and the trim threshold makes freed blocks reusable, the way
PyTorch users get it from jemalloc or tcmalloc.

Applied once when ``disttorch``'s names load (``disttorch/_facade.py``, before NumPy), on glibc only, unless the user tunes malloc
through its own ``MALLOC_*`` environment variables or sets ``DISTTORCH_MALLOC_TUNING=0``.
The cost is memory: up to ``TRIM_THRESHOLD`` bytes of freed blocks may stay mapped.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["tune_malloc", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

_M_TRIM_THRESHOLD = -1  # mallopt parameter numbers from glibc's <malloc.h>
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's largest dynamic threshold on 64-bit machines
TRIM_THRESHOLD = 256 << 20


def tune_malloc() -> bool:
    """Raise glibc's mmap and trim thresholds; True when they were changed."""
    if not sys.platform.startswith("linux") or os.environ.get("DISTTORCH_MALLOC_TUNING") == "0":
        return False
    if any(
        k in os.environ
        for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "LD_PRELOAD")
    ):
        return False  # the user chose an allocator or its settings
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library already loaded into Python
    except (OSError, AttributeError):
        return False  # not glibc (musl has no mallopt tuning to do)
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )

"""Optional compilation of the kernels' hottest loops with numba (the ``fast`` extra:
``pip install 'disttorch[fast]'``).

A kernel that has a compiled form hands a *builder* to :func:`compiled`: a function that
imports numba, compiles the loops and returns them. :func:`compiled` runs each builder once
per process and returns its result, or ``None`` when numba is not installed, cannot be
imported, fails to compile, or ``DISTTORCH_JIT=0`` is set (read at every call, so it can be
switched at run time). With ``None`` the kernel runs its NumPy form: both forms compute the
same numbers, and the tests run both. (The op pool's spin-wait, ``spin_wait.py``, has no
NumPy form: without it the pool's threads sleep between ops instead of spinning.) Compiled code is cached on disk (numba's
``cache=True``), so only the first process on a machine pays for compiling.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["compiled", "njit"]

logger = logging.getLogger("disttorch.kernels")

_built: dict[Callable[[], Any], Any] = {}


def compiled(build: Callable[[], Any]) -> Any:
    """``build()``'s result (compiled once), or ``None`` to use the NumPy form."""
    if os.environ.get("DISTTORCH_JIT", "1") == "0":
        return None
    if build not in _built:
        try:
            if not _built:
                _load_numba_target()
            _built[build] = build()
        except ImportError:  # numba missing, or too old/new for this NumPy
            _built[build] = None
        except Exception as error:  # noqa: BLE001 - e.g. no writable cache directory
            logger.warning("%s: compiled loops unavailable (%s); using NumPy", build.__module__, error)
            _built[build] = None
    return _built[build]


def _load_numba_target() -> None:
    """Load numba's CPU target now, keeping Python's record of the warnings it has shown.

    The first compile or cache load does this loading, which imports ``numba.np.linalg`` and
    through it SciPy, whose import changes the warning filters and puts them back
    (``catch_warnings``). Python forgets at every such change which warnings each line has
    shown, so a warning of the program's loop (a deprecation, a DataLoader's) that PyTorch
    prints once came back once after the first kernel. Changes that leave the filters as
    they were are not counted here; a lasting change still is."""
    from numba.core.registry import cpu_target

    mutated = getattr(warnings, "_filters_mutated", None)  # CPython's hook (3.8-3.13)
    if mutated is None:
        cpu_target.target_context.refresh()
        return
    before = list(warnings.filters)
    warnings._filters_mutated = lambda: None
    try:
        cpu_target.target_context.refresh()
    finally:
        warnings._filters_mutated = mutated
        if warnings.filters != before:
            mutated()


def njit(contract: bool = True, numpy_division: bool = False) -> Callable:
    """numba's ``njit`` as the kernels use it: cached on disk, no GIL, fused multiply-adds
    allowed (the only fast-math liberty: NaN and infinity behave as in NumPy). With
    ``contract=False``, for a loop that must give a NumPy form's bits, every multiply and
    add rounds on its own, as NumPy's passes do. With ``contract=False`` or
    ``numpy_division``, a division by zero gives NumPy's infinity or NaN instead of raising
    (without that check, divisions vectorise)."""
    import numba

    error_model = "numpy" if numpy_division or not contract else "python"
    fastmath = {"contract"} if contract else False
    return numba.njit(cache=True, nogil=True, fastmath=fastmath, error_model=error_model)

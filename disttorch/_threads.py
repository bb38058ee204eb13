"""``torch.set_num_threads`` and friends: this process's compute threads.

The intra-op budget lives in ``kernels/threads.py``: how many threads one op may use, for
the kernels it splits across its own pool, matrix products included; NumPy's BLAS (reached
through ``threadpoolctl``) is held to one thread, except while a large LAPACK routine runs.
disttorch runs no inter-op thread pool:
``set_num_interop_threads`` is kept for ``get_num_interop_threads`` with PyTorch's rule
that it may be set once.
"""

from __future__ import annotations

import os
from typing import Any

from .kernels import threads as _intraop

__all__ = [
    "get_num_interop_threads",
    "get_num_threads",
    "init_num_threads",
    "set_num_interop_threads",
    "set_num_threads",
]

_interop: dict[str, int | None] = {"threads": None}


def _controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        raise ImportError(
            "torch.set_num_threads/get_num_threads need the threadpoolctl package to "
            "reach NumPy's BLAS threads: pip install 'disttorch[threads]' "
            "(or pip install threadpoolctl)"
        ) from None
    return ThreadpoolController()


def _check_count(name: str, n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")  # noqa: TRY004
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def set_num_threads(int: int) -> None:
    """Set the number of threads used for intra-op parallelism: the ops that split their
    work (matrix products, convolution, pooling, large element-wise ops, softmax, norms...)
    over disttorch's pool, LAPACK's routines through BLAS, and OpenMP libraries' pools."""
    n = _check_count("set_num_threads", int)
    _controller().limit(limits=n, user_api="openmp")
    _intraop.set_num_threads(n)


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism (``OMP_NUM_THREADS`` at start,
    else the usable cores; PyTorch counts physical cores)."""
    return _intraop.get_num_threads()


def set_num_interop_threads(int: int) -> None:
    """Set the inter-op thread count once, before it is read, as in PyTorch (RuntimeError on
    a second call). disttorch has no inter-op pool: the value is only reported back."""
    n = _check_count("set_num_interop_threads", int)
    if _interop["threads"] is not None:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started "
            "or set_num_interop_threads called"
        )
    _interop["threads"] = n


def get_num_interop_threads() -> int:
    """The inter-op thread count: the value set, else the number of usable cores (PyTorch's
    default)."""
    if _interop["threads"] is None:
        _interop["threads"] = (
            len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        )
    return _interop["threads"]


def init_num_threads() -> None:
    """Initialise this thread's compute threads. NumPy's BLAS pools start on first use, so
    there is nothing to do (PyTorch calls it in new threads for OpenMP)."""

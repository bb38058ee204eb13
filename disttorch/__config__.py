"""``torch.__config__``: how this build was made, as text: ``show()`` and ``parallel_info()``.

PyTorch lists its compiler, BLAS and build flags; disttorch lists what it runs on instead
(NumPy and NumPy's BLAS) and the same ``KEY=VALUE`` build settings, answered for a NumPy
stack: no CUDA, MKL, MKL-DNN or OpenMP of its own (libraries test these, e.g. PyG looks for
``USE_MKL=OFF`` to pick its sparse layout).
"""

from __future__ import annotations

import os
import platform

import numpy as np

from . import __version__
from ._threads import get_num_interop_threads, get_num_threads

__all__ = ["parallel_info", "show"]

_SETTINGS = {
    "BUILD_TYPE": "Release",
    "USE_CUDA": "OFF",
    "USE_CUDNN": "OFF",
    "USE_DISTRIBUTED": "ON",
    "USE_GLOO": "OFF",
    "USE_MKL": "OFF",
    "USE_MKLDNN": "OFF",
    "USE_MPI": "OFF",
    "USE_NCCL": "OFF",
    "USE_OPENMP": "OFF",
}


def _blas() -> str:
    """NumPy's BLAS, as NumPy's build configuration names it."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()
    except (TypeError, KeyError, AttributeError):  # NumPy without the dict form
        return "unknown"


def show() -> str:
    """A human-readable description of this build."""
    settings = ", ".join(f"{k}={v}" for k, v in _SETTINGS.items())
    return (
        f"disttorch {__version__.split('+disttorch.')[-1]} (the PyTorch API on NumPy) built with:\n"
        f"  - Python {platform.python_version()}\n"
        f"  - NumPy {np.__version__}\n"
        f"  - BLAS: {_blas()} (NumPy's)\n"
        "  - Distributed: ZeroMQ process groups\n"
        f"  - Build settings: {settings}, \n"
    )


def parallel_info() -> str:
    """The thread settings of this process, as PyTorch's ``parallel_info`` prints them."""
    return (
        "ATen/Parallel:\n"
        f"\tat::get_num_threads() : {get_num_threads()}\n"
        f"\tat::get_num_interop_threads() : {get_num_interop_threads()}\n"
        f"NumPy {np.__version__} with {_blas()}\n"
        "std::thread::hardware_concurrency() : "
        f"{os.cpu_count()}\n"
        "Environment variables:\n"
        f"\tOMP_NUM_THREADS : {os.environ.get('OMP_NUM_THREADS', '[not set]')}\n"
        "ATen parallel backend: disttorch (NumPy kernels, BLAS threads)\n"
    )

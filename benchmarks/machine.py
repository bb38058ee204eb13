"""One line describing what a benchmark ran on, printed above its table: the NumPy and
PyTorch versions and the kernels NumPy's OpenBLAS selected.

OpenBLAS picks its kernels from the CPU when it loads, unless ``OPENBLAS_CORETYPE`` names
them: on an AVX-512 CPU, pinning the AVX2 ("Haswell") kernels makes matrix products about
half as fast, so a table means little without this line.
"""
from __future__ import annotations

import ctypes
import os

import numpy as np

__all__ = ["openblas_core", "describe"]


def openblas_core() -> str | None:
    """The kernel set of the OpenBLAS loaded into this process (e.g. ``"SkylakeX"``), or
    None when NumPy uses another BLAS or the platform has no ``/proc/self/maps``."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower()
                            and ".so" in line})
    except OSError:
        return None
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol in ("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                       "openblas_get_corename"):
            fn = getattr(lib, symbol, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return None


def describe(torch_module=None) -> str:
    """``numpy 2.4.6 (OpenBLAS SkylakeX kernels), torch 2.13.0+cpu, 2 cores``."""
    core = openblas_core()
    pinned = os.environ.get("OPENBLAS_CORETYPE")
    blas = f" (OpenBLAS {core} kernels{', pinned by OPENBLAS_CORETYPE' if pinned else ''})" if core else ""
    torch_part = f", torch {torch_module.__version__}" if torch_module is not None else ""
    return f"numpy {np.__version__}{blas}{torch_part}, {os.cpu_count()} cores"

"""How the benchmarks set up the BLAS, and one line describing what a benchmark ran on,
printed above its table: the NumPy and PyTorch versions and the kernels NumPy's OpenBLAS
selected.

OpenBLAS picks its kernels from the CPU when it loads, unless ``OPENBLAS_CORETYPE`` names
them: on an AVX-512 CPU, pinning the AVX2 ("Haswell") kernels makes matrix products about
1.5x slower. PyTorch's own kernels ignore that variable, so a comparison of the two is only
like for like when OpenBLAS is left to choose too. :func:`prepare_blas` therefore clears the
pin before NumPy loads, unless the benchmark is given ``--keep-openblas-coretype``; the
table's header line says which kernels ran and whether a pin was cleared.

Import this module before NumPy: it loads NumPy only when :func:`describe` is called.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["KEEP_FLAG", "prepare_blas", "openblas_core", "describe", "peer_torch", "print_ratios"]

KEEP_FLAG = "--keep-openblas-coretype"
_THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
_cleared: str | None = None  # the OPENBLAS_CORETYPE value prepare_blas removed, if any


def prepare_blas() -> None:
    """Before NumPy (or PyTorch) loads: one BLAS thread, and OpenBLAS's own kernel choice
    for this CPU unless the command line holds ``--keep-openblas-coretype``. Child processes
    started afterwards inherit both. Once NumPy is loaded its BLAS is set up for good, so
    this does nothing (a benchmark imported by another keeps its importer's setup;
    :func:`describe` reports the kernels that really run)."""
    global _cleared
    if "numpy" in sys.modules:
        return
    for name in _THREAD_VARS:
        os.environ[name] = "1"
    if KEEP_FLAG not in sys.argv:
        _cleared = os.environ.pop("OPENBLAS_CORETYPE", None)


def openblas_core() -> str | None:
    """The kernel set of the OpenBLAS loaded into this process (e.g. ``"SkylakeX"``), or
    None when NumPy uses another BLAS or the platform has no ``/proc/self/maps``."""
    import numpy  # noqa: F401  (loads OpenBLAS)

    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line})
    except OSError:
        return None
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol in ("scipy_openblas_get_corename64_", "openblas_get_corename64_", "openblas_get_corename"):
            fn = getattr(lib, symbol, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return None


def describe(torch_module=None) -> str:
    """``numpy 2.4.6 (OpenBLAS SkylakeX kernels, OPENBLAS_CORETYPE=Haswell cleared),
    torch 2.13.0+cpu, 2 cores``."""
    import numpy as np

    core = openblas_core()
    pinned = os.environ.get("OPENBLAS_CORETYPE")
    if pinned:
        how = f", pinned by OPENBLAS_CORETYPE={pinned}"
    elif _cleared:
        how = f", OPENBLAS_CORETYPE={_cleared} cleared ({KEEP_FLAG} keeps it)"
    else:
        how = ""
    blas = f" (OpenBLAS {core} kernels{how})" if core else ""
    torch_part = f", torch {torch_module.__version__}" if torch_module is not None else ""
    return f"numpy {np.__version__}{blas}{torch_part}, {os.cpu_count()} cores"


def peer_torch():
    """PyTorch on one thread, the peer of a comparison; ``None`` when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def print_ratios(names, time_case, torch_module) -> None:
    """One row per case name: ``time_case(lib, name)`` milliseconds for disttorch and, when
    ``torch_module`` is given, for PyTorch, and their ratio (disttorch / torch; < 1 is faster)."""
    import disttorch

    width = max(map(len, names))
    print(describe(torch_module))
    print(f"{'case':{width}s} {'disttorch ms':>13s} {'torch ms':>10s} {'ratio':>7s}")
    for name in names:
        ours = time_case(disttorch, name)
        if torch_module is None:
            print(f"{name:{width}s} {ours:13.2f}")
            continue
        theirs = time_case(torch_module, name)
        print(f"{name:{width}s} {ours:13.2f} {theirs:10.2f} {ours / theirs:7.2f}")

"""The ``1 + exp(-x)`` of float32 ``sigmoid`` and ``silu``, as PyTorch's vectorised CPU kernels
compute it.

Those kernels compute ``1 / (1 + exp(-x))`` and ``x / (1 + exp(-x))`` 32 elements at a time
with SLEEF's ``expf`` (its 1-ulp variant: a degree-6 polynomial after reducing by ln 2 split
in two parts, each step one float32 rounding, a multiply feeding an add fused) and the last
``n % 32`` elements with the C library's ``expf`` (correctly rounded). With numba (the
``fast`` extra) the compiled loops of :mod:`disttorch.kernels.vec_exp_loops` make the same
steps: PyTorch's bits for a contiguous tensor (one that PyTorch splits over threads may take
the scalar path at the threads' boundaries too). Without numba the callers keep their NumPy
forms (NumPy's ``exp``: a unit in the last place off for some 15% of the elements).
"""

from __future__ import annotations

import numpy as np

from .jit import compiled
from .tensor_iterator import by_inner_loops, by_rows

__all__ = ["compiled_exp", "loop_exp", "loop_expm1", "one_plus_exp_neg", "sleef_exp"]


def _load_loops():
    from . import vec_exp_loops

    return vec_exp_loops


def compiled_exp() -> bool:
    """Whether :func:`one_plus_exp_neg` has its compiled loops (numba)."""
    return compiled(_load_loops) is not None


def one_plus_exp_neg(x: np.ndarray, rows: bool = False) -> np.ndarray | None:
    """``1 + exp(-x)`` of float32 ``x`` as PyTorch's kernels compute it (``x`` walked as
    ``TensorIterator`` walks it; with ``rows``, ``x`` is a C-contiguous 2-D array whose rows
    are the inner loops), or ``None`` without numba. ``1 / that`` is their ``sigmoid``,
    ``x / that`` ``silu``."""
    loops = compiled(_load_loops)
    if loops is None:
        return None

    def compute(flat: np.ndarray, cut: int) -> np.ndarray:  # (the rest is the scalar loop's)
        u, q = np.empty(cut, np.float32), np.empty(cut, np.int32)
        loops.reduce(flat[:cut], u, q)
        with np.errstate(over="ignore"):
            e = np.ldexp(u, q, out=u)  # SLEEF's scaling, two exact steps or one rounding: the same
        out = np.empty(flat.shape, np.float32)
        loops.one_plus(flat, e, out)
        return out

    if rows:
        return by_rows(x, compute)
    return by_inner_loops(np.asarray(x, np.float32), compute)


def sleef_exp(x: np.ndarray) -> np.ndarray:
    """Float32 ``exp(x)`` with SLEEF's 1-ulp ``expf`` on every element (PyTorch's vectorised
    ``map`` of ``exp``, which takes a short tail as a partial vector): 0 below -104, inf
    above 100. Without numba, NumPy's ``exp``."""
    loops = compiled(_load_loops)
    if loops is None:
        return np.exp(x)
    flat = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
    out = np.empty(flat.shape, np.float32)
    loops.exp(flat, out)
    return out.reshape(np.shape(x))


def loop_exp(x: np.ndarray) -> np.ndarray:
    """Float32 ``exp(x)`` as a PyTorch kernel that calls ``exp`` inside its element loop
    (``elu``'s backward) computes it, ``x`` walked as ``TensorIterator`` walks it: SLEEF's
    ``expf`` on whole 32-element blocks, the C library's on the elements after them. Without
    numba, NumPy's."""
    loops = compiled(_load_loops)

    def compute(flat: np.ndarray, cut: int) -> np.ndarray:
        out = np.empty(flat.shape, np.float32)
        out[:cut] = sleef_exp(flat[:cut])
        if loops is None:
            out[cut:] = np.exp(flat[cut:].astype(np.float64))
        else:
            loops.c_exp(flat[cut:], out[cut:])
        return out

    return by_inner_loops(np.asarray(x, np.float32), compute)


def _load_expm1_loop():
    from . import vec_expm1_loops

    return vec_expm1_loops


def loop_expm1(x: np.ndarray, like: np.ndarray | None = None) -> np.ndarray:
    """Float32 ``expm1(x)`` as a PyTorch kernel that calls it inside its element loop
    (``elu``) computes it, ``x`` walked as ``TensorIterator`` walks it (or walks ``like``, the
    operand ``x`` was computed from): SLEEF's ``expm1f`` on whole 32-element blocks, the C
    library's on the elements after them. Without numba, NumPy's."""
    loops = compiled(_load_expm1_loop)
    if loops is None:
        return np.expm1(x)

    def compute(flat: np.ndarray, cut: int) -> np.ndarray:
        out = np.empty(flat.shape, np.float32)
        loops.expm1(flat[:cut], out[:cut])
        loops.c_expm1(flat[cut:], out[cut:])
        return out

    return by_inner_loops(np.asarray(x, np.float32), compute, like)

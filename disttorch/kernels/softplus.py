"""Float32 ``softplus`` and ``logsigmoid`` as PyTorch's CPU kernels compute them
(``Activation.cpp``), forward and backward.

``softplus(x) = log1p(exp(beta * x)) / beta`` (``x`` where ``beta * x > threshold``) and its
gradient ``g * z / (z + 1)`` with ``z = exp(beta * x)`` are ``cpu_kernel_vec`` loops: whole
32-element blocks of each inner loop take SLEEF's 1-ulp ``expf``/``log1pf``, the elements
after them the C library's ``expf``/``log1pf`` (``x`` walked as ``TensorIterator`` walks it,
:func:`.tensor_iterator.by_inner_loops`). ``logsigmoid`` is a flat vectorised loop over the
contiguous input, a short tail as a partial vector: every element by SLEEF,
``buffer = exp(-|x|)``, ``out = min(x, 0) - log1p(buffer)``; its gradient
``(max_deriv - sign * buffer / (1 + buffer)) * g`` (``max_deriv, sign = 1, 1`` for
``x < 0``, else ``0, -1``) is plain float32 arithmetic. With numba (the ``fast`` extra) these
are PyTorch's bits; without it (:func:`.vec_exp.compiled_exp` False) the callers keep their
NumPy forms (NumPy's ``exp``/``log1p``: a unit in the last place off in some 10% of the
outputs, 40-50% of the gradients).
"""

from __future__ import annotations

import numpy as np

from .jit import compiled
from .tensor_iterator import by_inner_loops
from .vec_exp import sleef_exp
from .vml import sleef_log1p

__all__ = ["log_sigmoid", "log_sigmoid_backward", "sleef_exp_neg_abs", "softplus", "softplus_backward"]

_F32 = np.float32


def _load_loops() -> tuple:
    from . import vec_exp_loops, vec_log_loops

    return vec_exp_loops, vec_log_loops


def softplus(x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    """PyTorch's float32 ``softplus`` of ``x`` (with numba: :func:`.vec_exp.compiled_exp`)."""
    loops = compiled(_load_loops)
    b, t = _F32(beta), _F32(threshold)

    def compute(flat: np.ndarray, cut: int) -> np.ndarray:
        bx = flat * b
        e = _split(loops[0].exp, loops[0].c_exp, bx, cut)
        with np.errstate(invalid="ignore", divide="ignore"):
            soft = _split(loops[1].log1p, loops[1].c_log1p, e, cut) / b
        return np.where(bx > t, flat, soft)

    return by_inner_loops(np.asarray(x, _F32), compute)


def softplus_backward(g: np.ndarray, x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    """PyTorch's float32 gradient of ``softplus`` at ``x`` for the output gradient ``g`` (of
    ``x``'s shape; with numba)."""
    loops = compiled(_load_loops)
    b, t = _F32(beta), _F32(threshold)

    def compute(flat: np.ndarray, cut: int) -> np.ndarray:
        return _split(loops[0].exp, loops[0].c_exp, flat * b, cut)

    z = by_inner_loops(np.asarray(x, _F32), compute, (g, x))  # (the kernel's operands)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(x * b > t, g, g * z / (z + _F32(1)))


def _split(vector, scalar, values: np.ndarray, cut: int) -> np.ndarray:
    """``vector`` (a SLEEF loop) over ``values[:cut]``, ``scalar`` (the C library's) after."""
    out = np.empty(values.shape, _F32)
    vector(values[:cut], out[:cut])
    scalar(values[cut:], out[cut:])
    return out


def sleef_exp_neg_abs(x: np.ndarray) -> np.ndarray:
    """``logsigmoid``'s ``buffer = exp(-|x|)`` (float32, SLEEF's ``expf``), which its gradient
    reads."""
    return sleef_exp(-np.abs(x))


def log_sigmoid(x: np.ndarray, buffer: np.ndarray) -> np.ndarray:
    """PyTorch's float32 ``logsigmoid`` of ``x``: ``min(x, 0) - log1p(buffer)`` (SLEEF's
    ``log1pf``) with :func:`sleef_exp_neg_abs`'s ``buffer``."""
    return np.minimum(x, _F32(0)) - sleef_log1p(buffer)


def log_sigmoid_backward(g: np.ndarray, x: np.ndarray, buffer: np.ndarray) -> np.ndarray:
    """The gradient of ``logsigmoid`` at ``x`` from the forward's ``buffer = exp(-|x|)``:
    ``(max_deriv - sign * buffer / (1 + buffer)) * g`` in ``x``'s dtype, as PyTorch's kernel."""
    one = x.dtype.type(1)
    q = buffer / (one + buffer)
    return np.multiply(np.where(x < 0, one - q, q), g, out=q)  # (0 - -q is q, to the bit)

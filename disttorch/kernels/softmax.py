"""Softmax and log-softmax along one axis, stably (the maximum subtracted first), split
over the op's threads along another axis (``threads.parallel_over``): every row is
computed whole by one thread, so results are bitwise the same for any thread count.

float16 and bfloat16 rows are computed in float32 and rounded as PyTorch's kernels round
them: a softmax once at the end; a log-softmax along the last dim with its row sum and
its log each rounded to the 16-bit type (PyTorch keeps them in a tensor of the input's
type) before the result, along another dim (PyTorch's other kernel) once at the end.
(PyTorch's softmax along another dim rounds ``exp(x - max)`` to 16 bits first in the part
of a row that does not fill its CPU vectors: not replayed, a 16-bit ulp apart there.)

float32 rows along the last dim, with numba, take PyTorch's kernel's steps on this CPU's
vectors (:func:`.cpu_features.float_lanes`: 16 float32s with AVX-512, 8 with AVX2): SLEEF's
``expf`` of ``x - max``, the row summed in its vectorised ``reduce_all`` order
(:mod:`disttorch.kernels.softmax_loops`), then times ``1 / sum`` (softmax) or minus SLEEF's
``logf`` of the sum (log-softmax): PyTorch's bits (NumPy's ``exp``, pairwise sum and
division were off in 50-100% of a softmax's elements, by up to 30 ulps on long rows); so does
a log-softmax's gradient (:func:`log_softmax_backward`, was off in some 10%). A float32
log-softmax along another dim, and its gradient, take PyTorch's column kernel's steps
(:func:`.softmax_loops.log_softmax_columns`)."""

from __future__ import annotations

import math

import numpy as np

from .cpu_features import float_lanes
from .jit import compiled
from .threads import elementwise, parallel_over

__all__ = ["log_softmax", "log_softmax_backward", "softmax"]

#: Units of work (see ``threads.py``) per element: a max, an ``exp``, a sum and a division;
#: a row softmax split over 2 threads pays from about 256k elements (benchmarks/threads.py).
SOFTMAX_WORK = 16


def _is_16_bit(a: np.ndarray) -> bool:
    return a.dtype.itemsize == 2 and a.dtype.kind in "fV"  # float16, bfloat16 (ml_dtypes)


def _last(a: np.ndarray, dim: int) -> bool:
    """Whether ``dim`` is ``a``'s last dim (PyTorch's last-dim kernel; 0-d arrays too)."""
    return a.ndim == 0 or dim % a.ndim == a.ndim - 1


def _load_loops():
    from . import softmax_loops

    return softmax_loops


def _rows(x: np.ndarray) -> np.ndarray:
    """``x`` as C-ordered rows along its last dim (a copy only where it is not so)."""
    return np.ascontiguousarray(x).reshape(-1, x.shape[-1])


def softmax(a: np.ndarray, dim: int) -> np.ndarray:
    """``exp(a - max) / sum(exp(a - max))`` along ``dim``."""
    if _is_16_bit(a):
        return softmax(a.astype(np.float32), dim).astype(a.dtype)
    out = np.empty(a.shape, a.dtype)  # row-major whatever the input's layout, as PyTorch's
    if not a.size:  # (an empty row has no maximum)
        return out

    def part(index: tuple) -> None:
        x, e = a[index], out[index]
        loops = compiled(_load_loops) if a.dtype == np.float32 and a.ndim and _last(a, dim) else None
        if loops is not None:
            rows = np.empty(x.shape, np.float32)
            loops.softmax(_rows(x), rows.reshape(-1, x.shape[-1]), float_lanes())
            e[...] = rows
            return
        np.subtract(x, x.max(axis=dim, keepdims=True), out=e)
        np.exp(e, out=e)
        e /= e.sum(axis=dim, keepdims=True)

    parallel_over(a.shape, part, skip=(dim,), work=SOFTMAX_WORK * a.size)
    return out


def log_softmax(a: np.ndarray, dim: int) -> tuple:
    """``(a - max - log(sum(exp(a - max))), softmax(a))`` along ``dim``: the result and the
    probabilities backward needs, from one ``exp``. For float16/bfloat16 the probabilities
    are PyTorch's backward's: ``exp`` of the rounded result, in float32."""
    low = a.dtype if _is_16_bit(a) else None
    rounds_sum = low is not None and _last(a, dim)
    if low is not None:
        a = a.astype(np.float32)
    out, probs = np.empty(a.shape, a.dtype), np.empty(a.shape, a.dtype)  # row-major, as PyTorch's
    if not a.size:  # (an empty row has no maximum)
        return (out, probs) if low is None else (out.astype(low), probs)
    loops = compiled(_load_loops) if low is None and a.dtype == np.float32 and not _last(a, dim) else None
    if loops is not None:  # PyTorch's kernel for another dim than the last
        out = _by_columns(loops.log_softmax_columns, dim, a)
        return out, elementwise(np.exp, out)

    def part(index: tuple) -> None:
        x, shifted, e = a[index], out[index], probs[index]
        torch_steps = low is None and a.dtype == np.float32 and a.ndim and _last(a, dim)
        loops = compiled(_load_loops) if torch_steps else None
        if loops is not None:
            rows, p = np.empty(x.shape, np.float32), np.empty(x.shape, np.float32)
            loops.log_softmax(
                _rows(x), rows.reshape(-1, x.shape[-1]), p.reshape(-1, x.shape[-1]), float_lanes()
            )
            shifted[...], e[...] = rows, p
            return
        np.subtract(x, x.max(axis=dim, keepdims=True), out=shifted)
        np.exp(shifted, out=e)
        s = e.sum(axis=dim, keepdims=True)
        if low is None:
            e /= s
            shifted -= np.log(s)
            return
        if rounds_sum:  # the sum and its log pass through the 16-bit type
            s = s.astype(low).astype(np.float32)
            shifted -= np.log(s).astype(low).astype(np.float32)
        else:
            shifted -= np.log(s)
        np.exp(shifted.astype(low).astype(np.float32), out=e)

    parallel_over(a.shape, part, skip=(dim,), work=SOFTMAX_WORK * a.size)
    return (out, probs) if low is None else (out.astype(low), probs)


def log_softmax_backward(g: np.ndarray, out: np.ndarray, dim: int) -> np.ndarray | None:
    """The gradient of a float32 log-softmax along ``dim`` from its output ``out`` and the
    output gradient ``g``, ``g - exp(out) * sum(g)``, with PyTorch's kernel's steps (see the
    module's note); None where those are not followed (another dim or dtype, no numba)."""
    loops = compiled(_load_loops)
    if loops is None or not out.ndim or not g.dtype == out.dtype == np.float32:
        return None
    gx = np.empty(out.shape, np.float32)
    if not out.size:
        return gx
    g = np.broadcast_to(g, out.shape)
    if not _last(out, dim):
        return _by_columns(loops.log_softmax_columns_backward, dim, g, out)

    def part(index: tuple) -> None:
        rows = np.empty(gx[index].shape, np.float32)
        loops.log_softmax_backward(
            _rows(g[index]), _rows(out[index]), rows.reshape(-1, out.shape[-1]), float_lanes()
        )
        gx[index] = rows

    parallel_over(out.shape, part, skip=(-1,), work=SOFTMAX_WORK * out.size)
    return gx


def _by_columns(loop, dim: int, *arrays: np.ndarray) -> np.ndarray:
    """``loop(*arrays as (outer, dim, inner), out, chunk, lanes)`` for PyTorch's kernels along
    another dim than the last (C-contiguous copies where needed; ``chunk``: its columns a
    block, 128 KiB of float32 rows rounded down to whole vectors of ``lanes`` columns,
    :func:`.cpu_features.float_lanes`), split over the op's threads
    along ``outer``; the result laid out row-major, as PyTorch's."""
    shape = arrays[0].shape
    n = shape[dim]
    inner = math.prod(shape[dim + 1 :])
    views = [np.ascontiguousarray(a).reshape(-1, n, inner) for a in arrays]
    lanes = float_lanes()
    chunk = min(max(131072 // n // 4, lanes) // lanes * lanes, inner)
    out = np.empty(views[0].shape, np.float32)
    parallel_over(
        out.shape, lambda index: loop(*(v[index] for v in views), out[index], chunk, lanes), skip=(1, 2)
    )
    return out.reshape(shape)


def softmax_last_(s: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, in place on ``s`` (attention's weights). ``fmax.reduce``
    is the faster row max: a NaN row still ends up NaN through ``exp``; the row sums are a
    matrix-vector product. A row whose every key is masked out (all -inf: left padding)
    gets weights 0, so its output is 0 and not NaN, as PyTorch's CPU kernels give."""

    def part(index: tuple) -> None:
        rows = s[index]
        row_max = np.fmax.reduce(rows, axis=-1, keepdims=True)
        masked = row_max == -np.inf
        any_masked = masked.any()
        if any_masked:
            row_max[masked] = 0.0
        rows -= row_max
        np.exp(rows, out=rows)
        total = rows @ np.ones(rows.shape[-1], dtype=rows.dtype)
        if any_masked:
            total[masked[..., 0]] = 1.0  # a row of zeros stays zeros
        rows *= (1.0 / total)[..., None]

    parallel_over(s.shape, part, skip=(-1,), work=SOFTMAX_WORK * s.size)
    return s


def softmax_backward_last_(gp: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The gradient through a softmax over the last axis, ``P * (dP - rowsum(dP * P))``,
    in place on ``gp`` (``dP``)."""

    def part(index: tuple) -> None:
        g, q = gp[index], p[index]
        g -= np.einsum("...ij,...ij->...i", g, q)[..., None]
        g *= q

    parallel_over(gp.shape, part, skip=(-1,), work=SOFTMAX_WORK * gp.size)
    return gp

"""Segments of a sorted axis, given by lengths or CSR pointers (offsets).

``torch._segment_reduce`` reduces consecutive runs of ``data`` along an axis; graph libraries
(PyG's ``segment``, aggregations over a ``ptr``) call it. ``_convert_indices_from_coo_to_csr``
turns sorted row indices into such pointers and ``_convert_indices_from_csr_to_coo`` back.

``_segment_reduce`` is ``scatter_reduce`` into one slot per segment, so its gradient is
``scatter_reduce``'s (``amax``/``amin`` ties share the gradient evenly, ``prod`` exact with
zeros), as PyTorch's ``SegmentReduceBackward0`` computes it; its graph nodes are those of
``scatter_reduce`` (and of the division, for ``"mean"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ._helpers import wrap_dim
from .scatter_reduce import scatter_reduce

__all__ = ["_convert_indices_from_coo_to_csr", "_convert_indices_from_csr_to_coo", "_segment_reduce"]

_REDUCES = {
    "sum": "sum",
    "mean": "mean",
    "prod": "prod",
    "max": "amax",
    "amax": "amax",
    "min": "amin",
    "amin": "amin",
}


def _indices(arr: np.ndarray, out_int32: bool) -> Tensor:
    return Tensor._make(np.ascontiguousarray(arr, dtype=np.int32 if out_int32 else np.int64))


def _check_integer_vector(name: str, what: str, t: Any) -> np.ndarray:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(t).__name__}")
    if t._data.dtype.kind not in "iu":
        raise NotImplementedError(f'"{name}" not implemented for {t.dtype}: {what} must be an integer tensor')
    return t._data


def _convert_indices_from_coo_to_csr(input: Tensor, size: int, *, out_int32: bool = False) -> Tensor:
    """CSR pointers (``size + 1`` of them) of sorted row indices: ``out[i]`` is the number of
    indices below ``i``. ``input`` must be sorted, as PyTorch assumes."""
    rows = _check_integer_vector("_convert_indices_from_coo_to_csr", "input", input)
    if rows.ndim != 1:
        raise RuntimeError(f"Input is supposed to be a vector, but got {rows.ndim} dimensional tensor.")
    ptr = np.searchsorted(rows, np.arange(int(size) + 1), side="left")
    return _indices(ptr, out_int32)


def _convert_indices_from_csr_to_coo(
    crow_indices: Tensor, col_indices: Tensor, *, out_int32: bool = False, transpose: bool = False
) -> Tensor:
    """The ``(2, nnz)`` COO indices of CSR ``crow_indices``/``col_indices``: rows on top,
    columns below (swapped with ``transpose=True``)."""
    crow = _check_integer_vector("_convert_indices_from_csr_to_coo", "crow_indices", crow_indices)
    col = _check_integer_vector("_convert_indices_from_csr_to_coo", "col_indices", col_indices)
    if crow.ndim != 1 or col.ndim != 1:
        raise RuntimeError(
            f"_convert_indices_from_csr_to_coo: expected 1-D crow_indices and col_indices, got "
            f"{crow.ndim}-D and {col.ndim}-D (batched CSR is not supported)"
        )
    rows = np.repeat(np.arange(crow.size - 1), np.diff(crow))
    pair = (col, rows) if transpose else (rows, col)
    return _indices(np.stack(pair), out_int32)


def _segment_lengths(lengths: Any, offsets: Any) -> np.ndarray:
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if lengths is not None:
        return _check_integer_vector("_segment_reduce", "lengths", lengths)
    return np.diff(_check_integer_vector("_segment_reduce", "offsets", offsets), axis=-1)


def _segment_reduce(
    data: Tensor,
    reduce: str,
    *,
    lengths: Tensor | None = None,
    offsets: Tensor | None = None,
    axis: int = 0,
    unsafe: bool = False,
    initial: float | None = None,
) -> Tensor:
    """Reduce consecutive segments of ``data`` along ``axis`` (``lengths[..., s]`` elements
    each, or ``offsets[..., s]:offsets[..., s+1]``) with ``"sum"``, ``"mean"``, ``"prod"``,
    ``"amax"``/``"max"`` or ``"amin"``/``"min"``. ``lengths``/``offsets`` may carry the
    leading dimensions of ``data`` (``axis`` is then their last). ``initial`` joins every
    segment's reduction and is the value of an empty one (else 0 for sums, 1 for products,
    NaN for means, -inf/inf for max/min)."""
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    op = _REDUCES[reduce]
    if not isinstance(data, Tensor):
        raise TypeError(f"_segment_reduce(): argument 'data' must be Tensor, not {type(data).__name__}")
    if not data.is_floating_point():
        raise NotImplementedError(
            f'"_segment_reduce_cpu" not implemented for {data.dtype}: data must be floating'
        )
    lens = _segment_lengths(lengths, offsets)
    axis = wrap_dim(axis, data.dim())
    if axis != lens.ndim - 1:
        raise RuntimeError(
            f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}."
        )
    if not unsafe and (np.any(lens < 0) or np.any(lens.sum(-1) != data.shape[axis])):
        raise RuntimeError(
            "segment_reduce(): Expected all rows of lengths along axis to sum to "
            "data.size(lengths.dim()-1) when !unsafe."
        )
    ends = np.cumsum(lens, axis=-1)
    position = np.arange(data.shape[axis])
    # the segment of each element along the axis (one row per leading index of lengths)
    seg = np.stack([np.searchsorted(row, position, side="right") for row in ends.reshape(-1, ends.shape[-1])])
    seg = seg.reshape((*lens.shape[:-1], data.shape[axis]) + (1,) * (data.dim() - axis - 1))
    index = _indices(np.broadcast_to(seg, data.shape), out_int32=False)
    out_shape = (*data.shape[:axis], lens.shape[-1], *data.shape[axis + 1 :])
    if op == "mean":
        total = _segment_reduce(
            data, "sum", lengths=_indices(lens, False), axis=axis, unsafe=True, initial=initial
        )
        count = Tensor._make(
            np.expand_dims(lens, tuple(range(lens.ndim, len(out_shape)))).astype(data._data.dtype)
        )
        mean = total / count
        return mean if initial is None else mean.masked_fill(count == 0, initial)
    if initial is not None:
        return scatter_reduce(data.new_full(out_shape, initial), axis, index, data, op, include_self=True)
    start = {"sum": 0.0, "prod": 1.0, "amax": -np.inf, "amin": np.inf}[op]
    return scatter_reduce(
        data.new_full(out_shape, start), axis, index, data, op, include_self=op in ("sum", "prod")
    )

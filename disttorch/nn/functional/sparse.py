"""Lookups by integer index: ``embedding`` (rows of a weight matrix; backward
scatter-adds into the rows that were read) and ``one_hot``."""

from __future__ import annotations

import numpy as np

from ... import _dtype
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.function import Function
from ...kernels.threads import parallel_for
from ...ops.sparse import SparseTensor

__all__ = ["embedding", "one_hot"]


class EmbeddingFunction(Function):
    """``weight[indices]``; the gradient of row ``padding_idx`` stays zero. With
    ``scale_grad_by_freq`` each looked-up row's gradient is divided by how often its index
    occurs in ``indices``; with ``sparse`` the weight's gradient is a sparse COO tensor
    holding one row per looked-up index (uncoalesced, ``padding_idx`` left out)."""

    _raw = True
    _node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, indices, weight, padding_idx, scale_grad_by_freq=False, sparse=False):
        idx = indices._data
        w = weight._data
        if idx.size and (idx.min() < 0 or idx.max() >= w.shape[0]):
            raise IndexError("index out of range in self")
        ctx.idx, ctx.num_weights, ctx.padding_idx = idx, w.shape[0], padding_idx
        ctx.scale_grad_by_freq, ctx.sparse = scale_grad_by_freq, sparse
        return np.take(w, idx, axis=0)

    @staticmethod
    def backward(ctx, g):
        idx = ctx.idx
        if ctx.scale_grad_by_freq:
            _, inverse, counts = np.unique(idx.reshape(-1), return_inverse=True, return_counts=True)
            g = g * Tensor._make((1.0 / counts[inverse]).astype(g._data.dtype).reshape(idx.shape + (1,)))
        if ctx.sparse:
            grad = _sparse_rows(g, idx, ctx.num_weights, ctx.padding_idx)
        else:
            grad = EmbeddingBackward.apply(g, idx, ctx.num_weights, ctx.padding_idx)
        return None, grad, None, None, None


def _sparse_rows(g: Tensor, idx: np.ndarray, num_weights: int, padding_idx: int | None) -> Tensor:
    """The gradient of an embedding table as a sparse COO tensor: row ``idx[i]`` gets
    ``g[i]`` (repeated indices are kept, uncoalesced, as PyTorch's sparse gradient). It
    is not itself differentiable (no double backward through a sparse gradient)."""
    rows = idx.reshape(-1).astype(np.int64)
    values = g._data.reshape(rows.size, g._data.shape[-1])
    if padding_idx is not None:
        keep = rows != padding_idx
        rows, values = rows[keep], values[keep]
    values = Tensor._make(np.array(values))  # its own memory: optimisers and clipping write into it
    return SparseTensor._build(rows[None, :], values, (num_weights, values.shape[1]), False)


class EmbeddingBackward(Function):
    """Scatter-add output gradients into the rows they were read from (row
    ``padding_idx`` excluded). Its own backward reads the rows again: ``embedding``.
    16-bit gradients are summed in their own dtype, each addition rounded, in the order the
    indices occur (as PyTorch's CPU kernel adds row after row into a 16-bit table:
    :func:`_rounded_sums`)."""

    _raw = True
    _own_16_bit = True

    @staticmethod
    def forward(ctx, g, idx, num_weights, padding_idx):
        gd = g._data
        rows = idx.reshape(-1)
        flat = gd.reshape(rows.size, gd.shape[-1])
        if padding_idx is not None:
            keep = rows != padding_idx
            rows, flat = rows[keep], flat[keep]
        out = np.zeros((num_weights, flat.shape[1]), dtype=gd.dtype)
        if rows.size:
            # Sum equal rows with one sort and one segmented sum (much faster than np.add.at);
            # the op's threads take ranges of segments, each summed whole by one thread in
            # the same order: the same numbers for every thread count.
            order = np.argsort(rows, kind="stable")
            sorted_rows = rows[order]
            starts = np.flatnonzero(np.concatenate(([True], sorted_rows[1:] != sorted_rows[:-1])))
            ends = np.append(starts[1:], rows.size)

            def segments(first: int, last: int) -> None:
                picked = flat[order[starts[first] : ends[last - 1]]]
                sums = np.add.reduceat(picked, starts[first:last] - starts[first], axis=0)
                out[sorted_rows[starts[first:last]]] = sums

            if gd.dtype.itemsize == 2 and gd.dtype.kind in "fV":
                out[sorted_rows[starts]] = _rounded_sums(flat, order, starts, ends - starts)
            else:
                parallel_for(len(starts), segments, work=2 * flat.size)
        ctx.idx = idx
        return out.reshape((num_weights,) + gd.shape[idx.ndim :])

    @staticmethod
    def backward(ctx, gg):
        return EmbeddingFunction.apply(Tensor._make(ctx.idx), gg, None), None, None, None


def _rounded_sums(flat: np.ndarray, order: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The sums of the 16-bit rows ``flat[order[start : start + count]]`` for each segment,
    added one after another in float32 and rounded to the rows' dtype after each addition."""
    low = flat.dtype
    acc = np.zeros((starts.size, flat.shape[1]), np.float32)
    for r in range(int(counts.max())):
        live = np.flatnonzero(counts > r)
        acc[live] = (acc[live] + flat[order[starts[live] + r]].astype(np.float32)).astype(low)
    return acc.astype(low)


def _padding_index(padding_idx: int | None, num_embeddings: int) -> int | None:
    """``padding_idx`` as a non-negative row number, checked against the table size."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def _renorm_rows(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Rescale in place (no graph) the rows of ``weight`` read by ``idx`` whose
    ``norm_type``-norm exceeds ``max_norm``, as PyTorch's ``max_norm`` does."""
    rows = np.unique(idx)
    w = weight._data
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1)
    over = norms > max_norm
    if over.any():
        w[rows[over]] *= (max_norm / (norms[over] + 1e-7))[:, None].astype(w.dtype)
        weight._bump_version()


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` (``(num_embeddings, embedding_dim)``) picked by the integer
    ``input`` of any shape; the result has shape ``input.shape + (embedding_dim,)``.

    ``padding_idx`` rows receive no gradient; ``max_norm`` renormalises (in place) the
    rows that are read; ``scale_grad_by_freq`` divides each row's gradient by the number of
    times its index occurs in ``input``; ``sparse=True`` makes ``weight.grad`` a sparse COO
    tensor (for ``optim.SGD``, ``optim.SparseAdam``, ``optim.Adagrad``).
    """
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    padding_idx = _padding_index(padding_idx, weight._data.shape[0])
    if input.dtype not in (_dtype.int64, _dtype.int32):
        # PyTorch names the type as its legacy tensor type, or its C++ type name
        name = input.dtype.name
        kind = {"bool": "CPUBoolType", "bfloat16": "CPUBFloat16Type"}.get(name, input.type())
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {kind} instead (while checking arguments for embedding)"
        )
    if max_norm is not None:
        with grad_mode.no_grad():
            _renorm_rows(weight, np.asarray(input._data), max_norm, norm_type)
    return EmbeddingFunction.apply(input, weight, padding_idx, scale_grad_by_freq, sparse)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each index
    (``num_classes=-1``: one more than the largest index)."""
    idx = tensor._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if not idx.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    elif idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(idx.shape + (num_classes,), dtype=np.int64)
    np.put_along_axis(out, idx[..., None].astype(np.int64), 1, axis=-1)
    return Tensor._make(out)

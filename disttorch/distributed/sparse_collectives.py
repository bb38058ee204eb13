"""``all_reduce`` of a sparse COO tensor, as PyTorch's gloo backend does it.

Every rank coalesces its tensor, the ranks exchange their shapes and numbers of stored
elements, then all-gather every rank's indices and values (blocks of different sizes),
concatenate them and coalesce: the sum. Each rank's tensor is replaced in place by the
coalesced sum. Only ``ReduceOp.SUM`` is defined for sparse tensors (as in gloo). DDP uses
this to average the sparse gradients of ``nn.Embedding(sparse=True)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .algorithms import select
from .engine.work import Work
from .groups import resolve_group
from .reduce_ops import ReduceOp
from .wire import frames as wire

__all__ = ["all_reduce_sparse", "sparse_sum_across_ranks"]

_MAX_DIMS = 64  # NumPy's limit: the shape travels padded to this many entries


def _gather_blocks(pg: Any, block: np.ndarray, counts: list[int]) -> list[np.ndarray]:
    """All-gather 1-D blocks whose sizes differ by rank (``counts``, known to every rank)."""
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    buf = np.empty(int(offsets[-1]), block.dtype)

    def body(ch) -> None:
        buf[offsets[ch.rank] : offsets[ch.rank + 1]] = block
        if buf.size:
            select.all_gather(ch, buf, counts)

    pg.collective("all_gather", block.dtype, -1, -1, body, None, False)
    return [buf[offsets[r] : offsets[r + 1]] for r in range(len(counts))]


def sparse_sum_across_ranks(
    indices: np.ndarray, values: np.ndarray, shape: tuple, group: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Sum COO data (``indices`` ``(sparse_dim, nnz)`` int64, ``values`` ``(nnz, *dense)``)
    over the ranks of ``group``; return the concatenation of every rank's indices and
    values, in group-rank order (not coalesced). Every rank must call it.

    Raises:
        RuntimeError: the ranks' tensors differ in shape, sparse dimensions or dtype.
    """
    pg = resolve_group(group)
    size = pg.size()
    if len(shape) > _MAX_DIMS:
        raise RuntimeError(
            f"all_reduce of a sparse tensor supports at most {_MAX_DIMS} dims, got {len(shape)}"
        )
    meta = np.full(4 + _MAX_DIMS, -1, np.int64)
    meta[:4] = (indices.shape[1], indices.shape[0], len(shape), wire.dtype_code(values.dtype))
    meta[4 : 4 + len(shape)] = shape
    metas = _gather_blocks(pg, meta, [meta.size] * size)
    for r, m in enumerate(metas):
        if not np.array_equal(m[1:], metas[0][1:]):
            raise RuntimeError(
                "all_reduce of a sparse tensor: the ranks' tensors differ: group rank 0 has "
                f"{_describe(metas[0])} but group rank {r} has {_describe(m)}; every rank must "
                "pass a sparse tensor of the same size, sparse dims and dtype"
            )
    nnz = [int(m[0]) for m in metas]
    sd = indices.shape[0]
    row = int(np.prod(values.shape[1:], dtype=np.int64))
    idx_blocks = _gather_blocks(pg, np.ascontiguousarray(indices).reshape(-1), [n * sd for n in nnz])
    val_blocks = _gather_blocks(pg, np.ascontiguousarray(values).reshape(-1), [n * row for n in nnz])
    all_idx = np.concatenate([b.reshape(sd, n) for b, n in zip(idx_blocks, nnz)], axis=1)
    all_val = np.concatenate([b.reshape((n,) + values.shape[1:]) for b, n in zip(val_blocks, nnz)])
    return all_idx, all_val


def _describe(meta: np.ndarray) -> str:
    ndim = int(meta[2])
    return (
        f"size {meta[4 : 4 + ndim].tolist()}, sparse_dim {int(meta[1])}, dtype {wire.dtype_of(int(meta[3]))}"
    )


def all_reduce_sparse(tensor: Any, op: ReduceOp, group: Any, async_op: bool) -> Work | None:
    """Sum a sparse COO ``tensor`` over ``group`` in place (coalesced result).

    With ``async_op`` the exchange still runs at once; the returned ``Work`` is completed.
    """
    from .._tensor import Tensor
    from ..ops.sparse import SparseTensor

    pg = resolve_group(group)
    if pg is None:
        return None
    if not isinstance(tensor, SparseTensor):
        raise TypeError(
            f"all_reduce supports the strided and sparse_coo layouts, got {tensor.layout} "
            "(convert with .to_sparse() or .to_dense())"
        )
    if op is not ReduceOp.SUM:
        raise RuntimeError(
            "ProcessGroupGloo::allreduce: unsupported reduction operation (allreduce of sparse tensors "
            f"only works with ReduceOp.SUM), got {op!r}"
        )
    local = tensor.coalesce()
    idx, val = sparse_sum_across_ranks(local._sp_indices, local._sp_values._data, local._sp_shape, pg)
    out = SparseTensor._build(idx, Tensor._make(val), local._sp_shape, False).coalesce()
    tensor._sp_indices, tensor._sp_values, tensor._coalesced = out._sp_indices, out._sp_values, True
    if not async_op:
        return None
    work = Work(f"all_reduce(sparse_coo {list(local._sp_shape)})", [tensor])
    work._complete()
    return work

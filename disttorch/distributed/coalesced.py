"""The deprecated coalesced collectives: :func:`all_reduce_coalesced` and
:func:`all_gather_coalesced` (PyTorch's gloo runs each as one collective over the tensors
laid end to end; so do these, and warn as PyTorch does that they will go)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .algorithms import select
from .collectives import _agree_on_signature, _finish_average, _reduce_op
from .comm_record import record
from .engine.work import Future, Work
from .groups import member_group
from .reduce_ops import ReduceOp
from .tensor_io import Flat

__all__ = ["all_gather_coalesced", "all_reduce_coalesced"]


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`torch.distributed.{name}` will be deprecated. If you must use it, please revisit our "
        "documentation later at https://pytorch.org/docs/main/distributed.html#collective-functions",
        FutureWarning,
        stacklevel=3,
    )


def _same_dtype(flats: list[Flat]) -> None:
    dtypes = {f.flat.dtype for f in flats}
    if len(dtypes) > 1:
        first, other = sorted(map(str, dtypes))[:2]
        raise ValueError(f"Invalid usage of tensors with different dtypes: found {first} and {other}")


def all_reduce_coalesced(
    tensors: Any, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False
) -> Future | None:
    """Reduce every tensor of ``tensors`` (one dtype) over ``group`` in place, as one
    all-reduce of them laid end to end. With ``async_op`` returns a ``Future``."""
    _deprecated("all_reduce_coalesced")
    work = reduce_coalesced(tensors, op, group, async_op)
    return work.get_future() if async_op and work is not None else None


def reduce_coalesced(tensors: Any, op: ReduceOp, group, async_op: bool) -> Work | None:
    """:func:`all_reduce_coalesced` without its warning, returning the ``Work`` (or ``None``
    where this rank is not in ``group``)."""
    record("c10d.allreduce_coalesced_")
    tensors = list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]
    pg = member_group(group, "all_reduce_coalesced")
    if pg is None:
        return None
    flats = [Flat(t) for t in tensors]
    _same_dtype(flats)
    buf = np.concatenate([f.flat for f in flats]) if flats else np.empty(0, np.float32)
    op, ufunc = _reduce_op(op, buf.dtype, "all_reduce_coalesced")
    edges = np.cumsum([0, *(f.flat.size for f in flats)])

    def body(ch) -> None:
        if buf.size:
            select.all_reduce(ch, buf, ufunc)
            _finish_average(op, buf, ch.size)
        else:
            _agree_on_signature(ch)
        for f, lo, hi in zip(flats, edges[:-1], edges[1:]):
            f.flat[...] = buf[lo:hi]
            f.write_back()

    return pg.collective(
        "all_reduce_coalesced", buf.dtype, buf.size, -1, body, tensors, async_op, redop=op.name
    )


def all_gather_coalesced(
    output_tensor_lists: list, input_tensor_list: list, group=None, async_op: bool = False
) -> Future | None:
    """Every rank's ``input_tensor_list`` (one dtype) into ``output_tensor_lists``: entry
    ``[r][i]`` receives rank ``r``'s ``i``-th tensor (same number of elements). With
    ``async_op`` returns a ``Future``."""
    _deprecated("all_gather_coalesced")
    work = gather_coalesced(output_tensor_lists, input_tensor_list, group, async_op)
    return work.get_future() if async_op and work is not None else None


def gather_coalesced(
    output_tensor_lists: list, input_tensor_list: list, group, async_op: bool
) -> Work | None:
    """:func:`all_gather_coalesced` without its warning, returning the ``Work`` (or ``None``
    where this rank is not in ``group``)."""
    record("c10d.allgather_coalesced_")
    if not isinstance(output_tensor_lists, list):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    pg = member_group(group, "all_gather_coalesced")
    if pg is None:
        return None
    inputs = [Flat(t, "input_tensor_list", write=False) for t in input_tensor_list]
    _same_dtype(inputs)
    if len(output_tensor_lists) != pg.size():
        raise ValueError(
            f"all_gather_coalesced: output_tensor_lists must hold one list per rank ({pg.size()}), "
            f"got {len(output_tensor_lists)}"
        )
    outputs = [[Flat(t, "output_tensor_lists", read=False) for t in row] for row in output_tensor_lists]
    for r, row in enumerate(outputs):
        _same_dtype(row + inputs)
        sizes, expected = [f.flat.size for f in row], [f.flat.size for f in inputs]
        if sizes != expected:
            raise ValueError(
                f"all_gather_coalesced: output_tensor_lists[{r}] has tensors of {sizes} elements, "
                f"the inputs {expected}: each output list must match the input list"
            )
    dtype = inputs[0].flat.dtype if inputs else np.dtype(np.float32)
    n = sum(f.flat.size for f in inputs)
    edges = np.cumsum([0, *(f.flat.size for f in inputs)])

    def body(ch) -> None:
        gathered = np.empty(ch.size * n, dtype)
        piece = gathered[ch.rank * n : (ch.rank + 1) * n]
        for f, lo, hi in zip(inputs, edges[:-1], edges[1:]):
            piece[lo:hi] = f.flat
        if n and ch.size > 1:
            select.all_gather(ch, gathered, [n] * ch.size)
        elif not n:
            _agree_on_signature(ch)
        for r, row in enumerate(outputs):
            for f, lo, hi in zip(row, edges[:-1], edges[1:]):
                f.flat[...] = gathered[r * n + lo : r * n + hi]
                f.write_back()

    return pg.collective("all_gather_coalesced", dtype, n, -1, body, output_tensor_lists, async_op)

"""``default_collate``: stack a list of samples into a batch, recursively through tuples,
lists and dicts (tensors and NumPy arrays are stacked, numbers become tensors), with
PyTorch's container types in the result."""

from __future__ import annotations

import collections.abc
import copy
from typing import Any

import numpy as np

from ..._tensor import Tensor
from ..._torch_function import handle_torch_function, has_torch_function
from ...kernels.threads import stack
from ...ops.shape import stack as stack_tensors

__all__ = ["default_collate", "default_convert"]


def default_collate(batch: Any) -> Any:
    """Collate samples as PyTorch's ``default_collate``: tensors and NumPy arrays -> stacked
    tensor (new first dim), NumPy scalars -> tensor of their dtype, floats -> float64, ints ->
    int64, bools -> bool; strings -> the batch as given; mappings (their own type kept),
    namedtuples and lists -> the same structure of collated fields; tuples -> a list."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        bad = next((i for i, b in enumerate(batch) if b._data.shape != elem._data.shape), None)
        if bad is not None:  # (torch.stack's message)
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(elem._data.shape)} at entry 0 "
                f"and {list(batch[bad]._data.shape)} at entry {bad}"
            )
        if type(elem) is not Tensor and has_torch_function(batch):
            # a subclass's batch is of its type: torch.stack dispatches, as in PyTorch
            return handle_torch_function(stack_tensors, batch, batch)
        return Tensor._make(stack([b._data for b in batch]))
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OSU":
            raise TypeError(_unsupported(elem.dtype))
        return Tensor._make(stack(batch))
    if isinstance(elem, (np.number, np.bool_)):
        return Tensor._make(np.array(batch))
    if isinstance(elem, bool):
        return Tensor._make(np.array(batch, dtype=np.bool_))
    if isinstance(elem, int):
        return Tensor._make(np.array(batch, dtype=np.int64))
    if isinstance(elem, float):
        return Tensor._make(np.array(batch, dtype=np.float64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuilt_mapping(elem, {k: default_collate([b[k] for b in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [default_collate(s) for s in zip(*batch)]
        return collated if isinstance(elem, tuple) else _rebuilt_sequence(elem, collated)
    raise TypeError(_unsupported(type(elem)))


def _unsupported(found: Any) -> str:
    return (
        f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {found}"
    )


def _rebuilt_mapping(like: Any, values: dict) -> Any:
    """``values`` in a mapping of ``like``'s type: a copy of a mutable one updated (it may
    carry more than its items), else built from ``values``; a dict when neither works."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _rebuilt_sequence(like: Any, values: list) -> Any:
    """``values`` in a sequence of ``like``'s type where it can be built from a list."""
    try:
        return values if type(like) is list else type(like)(values)
    except TypeError:
        return values


def default_convert(data: Any) -> Any:
    """Used when batching is off: NumPy arrays and scalars become tensors, structures are
    kept (tuples become lists, as PyTorch's)."""
    if isinstance(data, (np.ndarray, np.number, np.bool_)):
        return (
            data
            if isinstance(data, np.ndarray) and data.dtype.kind in "OSU"
            else Tensor._make(np.asarray(data))
        )
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt_mapping(data, {k: default_convert(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt_sequence(data, [default_convert(d) for d in data])
    return data

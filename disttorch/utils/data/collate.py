"""``default_collate``: stack a list of samples into a batch, recursively through tuples,
lists and dicts (tensors and NumPy arrays are stacked, numbers become tensors)."""

from __future__ import annotations

import collections.abc
from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...kernels.threads import stack

__all__ = ["default_collate", "default_convert"]


def default_collate(batch: list) -> Any:
    """Collate samples: tensors -> stacked tensor (new first dim), NumPy arrays -> tensor,
    floats -> float64 tensor, ints -> int64 tensor, bools -> bool tensor, strings -> list,
    mappings/tuples/lists -> the same structure of collated fields."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        shapes = {b._data.shape for b in batch}
        if len(shapes) != 1:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got "
                f"{[list(s) for s in shapes]} in the batch"
            )
        return Tensor._make(stack([b._data for b in batch]))
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OSU":
            raise TypeError(
                f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                f"dicts or lists; found {elem.dtype}"
            )
        return Tensor._make(stack(batch))
    if isinstance(elem, (bool, np.bool_)):
        return Tensor._make(np.array(batch, dtype=np.bool_))
    if isinstance(elem, (int, np.integer)):
        return Tensor._make(np.array(batch, dtype=np.int64))
    if isinstance(elem, (float, np.floating)):
        return Tensor._make(np.array(batch, dtype=np.float64))
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        collated = {k: default_collate([b[k] for b in batch]) for k in elem}
        return collated if type(elem) is dict else type(elem)(collated)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [default_collate(list(s)) for s in zip(*batch)]
        return tuple(collated) if isinstance(elem, tuple) else collated
    raise TypeError(
        f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
        f"or lists; found {type(elem).__name__}"
    )


def default_convert(data: Any) -> Any:
    """Used when batching is off: NumPy arrays become tensors, structures are kept."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OSU":
        return Tensor._make(data)
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(d) for d in data)
    return data

"""Splitting a batch into microbatches and merging the last stage's outputs back.

Every tensor argument is split along dimension 0 into ``n`` chunks (``tensor_split``: the
first chunks one larger when the batch does not divide evenly, as PyTorch's default
``TensorChunkSpec(0)``); any other argument is handed whole to every microbatch.
"""

from __future__ import annotations

from typing import Any

from ...._tensor import Tensor
from ....ops.mathfns import tensor_split
from ....ops.shape import cat

__all__ = ["split_args_kwargs_into_chunks", "merge_chunks"]


def _split(value: Any, n: int) -> list:
    if not isinstance(value, Tensor):
        return [value] * n
    if value.dim() == 0 or value.shape[0] < n:
        raise ValueError(
            f"Tensor size {tuple(value.shape)} is not enough to be split into {n} chunks along dimension 0"
        )
    return list(tensor_split(value, n, 0))


def split_args_kwargs_into_chunks(args: tuple, kwargs: dict | None, chunks: int) -> tuple[list, list]:
    """``chunks`` microbatches of ``args`` and ``kwargs``: (list of arg tuples, list of kwarg dicts)."""
    kwargs = kwargs or {}
    split_args = [_split(a, chunks) for a in args]
    split_kwargs = {k: _split(v, chunks) for k, v in kwargs.items()}
    return (
        [tuple(s[i] for s in split_args) for i in range(chunks)],
        [{k: s[i] for k, s in split_kwargs.items()} for i in range(chunks)],
    )


def merge_chunks(chunks: list) -> Any:
    """The outputs of the microbatches as one batch: tensors concatenated along dimension 0
    (tuples element by element)."""
    first = chunks[0]
    if isinstance(first, Tensor):
        return cat(chunks, 0)
    if isinstance(first, (tuple, list)):
        return type(first)(merge_chunks([c[i] for c in chunks]) for i in range(len(first)))
    return chunks

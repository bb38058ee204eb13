"""Communication hooks: how a DDP bucket of gradients is reduced across ranks.

A hook is ``hook(state, bucket: GradBucket) -> Future`` whose value is the reduced flat
buffer. DDP calls it when a bucket is full and waits on the future at the end of
backward. ``register_comm_hook(state, hook)`` on a DDP model swaps the default
(``allreduce_hook``) for another, e.g. ``fp16_compress_hook`` (or ``bf16_compress_hook``)
which halves the bytes on the wire; ``fp16_compress_wrapper(hook)`` and
``bf16_compress_wrapper(hook)`` run any hook on a half-precision copy of the bucket.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._dtype import bfloat16
from ..._tensor import Tensor
from ...distributed.grad_bucket import GradBucket

__all__ = [
    "GradBucket",
    "allreduce_hook",
    "bf16_compress_hook",
    "bf16_compress_wrapper",
    "fp16_compress_hook",
    "fp16_compress_wrapper",
]


def _group_size(process_group: Any) -> int:
    from ... import distributed as dist

    return dist.get_world_size(process_group)


def allreduce_hook(process_group: Any, bucket: GradBucket):
    """Average the bucket: divide by the world size, then all-reduce (sum) asynchronously."""
    from ...distributed.algorithms.ddp_comm_hooks.default_hooks import _allreduce_fut

    return _allreduce_fut(process_group, bucket.buffer())


def _half_precision(values: np.ndarray, np_dtype: Any) -> np.ndarray:
    """``values`` rounded to ``np_dtype`` as they travel: float16 itself; bfloat16, which the
    wire does not carry, as the float32 numbers it stands for (same rounding, not fewer bytes)."""
    half = values.astype(np_dtype)
    return half if half.dtype == np.float16 else half.astype(np.float32)


def _compressed_hook(np_dtype: Any, process_group: Any, bucket: GradBucket):
    from ... import distributed as dist

    buf = bucket.buffer()
    compressed = Tensor._make(_half_precision(buf._data / _group_size(process_group), np_dtype))
    work = dist.all_reduce(compressed, group=process_group, async_op=True)

    def decompress(fut: Any) -> Tensor:
        fut.value()  # raise the all-reduce's failure, if any
        np.copyto(buf._data, compressed._data.astype(np_dtype, copy=False), casting="unsafe")
        return buf

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group: Any, bucket: GradBucket):
    """Like ``allreduce_hook`` but sends float16: half the bytes, ~3 significant digits.
    The gradients are divided by the world size before casting, so sums do not overflow."""
    return _compressed_hook(np.float16, process_group, bucket)


def bf16_compress_hook(process_group: Any, bucket: GradBucket):
    """Like ``fp16_compress_hook`` with bfloat16: float32's range, ~2-3 significant digits.
    disttorch's wire carries no bfloat16, so the rounded values travel as float32 and the sum
    is rounded to bfloat16 again (PyTorch sends half the bytes and sums in bfloat16)."""
    return _compressed_hook(bfloat16.numpy, process_group, bucket)


def _compress_wrapper(np_dtype: Any, hook: Any) -> Any:
    def compressing(state: Any, bucket: GradBucket):
        half = _half_precision(bucket._buffer, np_dtype)
        small = GradBucket(bucket._index, half, bucket._params, bucket._offsets, bucket._is_last)

        def decompress(fut: Any) -> Tensor:
            buf = bucket.buffer()
            reduced = fut.value()._data.reshape(-1).astype(np_dtype, copy=False)
            np.copyto(buf._data, reduced, casting="unsafe")
            return buf

        return hook(state, small).then(decompress)

    short = {"float16": "fp16", "bfloat16": "bf16"}[np.dtype(np_dtype).name]
    compressing.__name__ = compressing.__qualname__ = f"{short}_compress_wrapper_hook"  # PyTorch's names
    return compressing


def fp16_compress_wrapper(hook: Any) -> Any:
    """``hook`` run on a float16 copy of each bucket, its result cast back to the gradients'
    dtype (``fp16_compress_wrapper(allreduce_hook)`` is ``fp16_compress_hook``)."""
    return _compress_wrapper(np.float16, hook)


def bf16_compress_wrapper(hook: Any) -> Any:
    """``hook`` run on a bfloat16 copy of each bucket, its result cast back."""
    return _compress_wrapper(bfloat16.numpy, hook)

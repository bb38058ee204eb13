"""DDP communication hooks that would send gradients as 8-bit integers (published as
``torch.distributed.algorithms.ddp_comm_hooks.quantization_hooks``). In PyTorch 2.13 both
fail at their first bucket: each all-gathers every rank's scale and zero point (from a min/max
observer, per tensor or per row of ``bucket_size`` elements), then reads the gathered list as
if it were one stacked tensor and raises ``IndexError`` inside its ``then`` callback, which
backward re-raises as ``RuntimeError``. disttorch's hooks do the same all-gather and raise the
same error, so a program sees what it sees with PyTorch."""

from __future__ import annotations

from typing import Any

from ... import distributed as dist
from ..._creation import tensor as as_tensor
from ..._creation import zeros_like
from ..._dtype import float32
from ..._tensor import Tensor
from ...ao.quantization import MinMaxObserver, PerChannelMinMaxObserver
from ...futures import Future
from ...ops.shape import stack
from ..functional.padding import pad
from .comm_hooks import GradBucket

__all__ = ["quantization_perchannel_hook", "quantization_pertensor_hook"]


def _gather_then_fail(scale_and_zero_point: Tensor, process_group: Any, error: str) -> Future:
    """All-gather every rank's ``scale_and_zero_point``; then the future fails as PyTorch's
    callbacks do (``error``, wrapped by each of the two ``then`` callbacks)."""
    group = process_group if process_group is not None else dist.group.WORLD
    out = [zeros_like(scale_and_zero_point) for _ in range(dist.get_world_size(group))]
    dist.all_gather(out, scale_and_zero_point, group=group)
    wrap = "Got the following error when running the callback: "
    fut: Future = Future()
    fut.set_exception(RuntimeError(f"{wrap}RuntimeError: {wrap}IndexError: {error}"))
    return fut


def quantization_pertensor_hook(process_group: Any, bucket: GradBucket) -> Future:
    """PyTorch 2.13's per-tensor 8-bit hook: the scale and zero point all-gathered, then the
    ``IndexError`` of reading rank 0's pair as the gathered list."""
    observer = MinMaxObserver()
    observer(bucket.buffer())
    scale, zero_point = observer.calculate_qparams()
    return _gather_then_fail(
        as_tensor([float(scale), float(zero_point)], dtype=float32),
        process_group,
        "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
        "to convert a 0-dim tensor to a number",
    )


def quantization_perchannel_hook(process_group: Any, bucket: GradBucket, bucket_size: int = 512) -> Future:
    """PyTorch 2.13's per-channel 8-bit hook (a scale per row of ``bucket_size`` elements, the
    bucket padded with zeros): the scales and zero points all-gathered, then the ``IndexError``
    of indexing rank 0's 2-D table with three indices."""
    tensor = bucket.buffer()
    rows = pad(tensor, (0, bucket_size - tensor.shape[0] % bucket_size), mode="constant", value=0)
    observer = PerChannelMinMaxObserver()
    observer(rows.view(-1, bucket_size))
    scales, zero_points = observer.calculate_qparams()
    return _gather_then_fail(
        stack((scales, zero_points.to(scales.dtype))),
        process_group,
        "too many indices for tensor of dimension 2",
    )

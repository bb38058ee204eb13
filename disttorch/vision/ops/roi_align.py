"""``torchvision.ops.roi_align``: bilinearly pooled regions of a feature map (Mask R-CNN's
RoI Align), differentiable with respect to the feature map (the kernel is
``disttorch.kernels.roi_align``)."""

from __future__ import annotations

import numpy as np

import disttorch as torch
from disttorch import nn
from disttorch._tensor import Tensor
from disttorch.autograd.function import Function
from disttorch.kernels import roi_align as kernel

__all__ = ["RoIAlign", "roi_align"]


class _RoIAlign(Function):
    """Forward: the kernel's pooled regions; backward: its scatter back into the input."""

    _raw = True

    @staticmethod
    def forward(ctx, input, rois, spatial_scale, out_h, out_w, sampling_ratio, aligned):
        boxes = rois._data
        out, weights = kernel.roi_align_forward(
            np.ascontiguousarray(input._data), boxes, spatial_scale, out_h, out_w, sampling_ratio, aligned
        )
        ctx.boxes, ctx.weights, ctx.shape = boxes, weights, input._data.shape
        return out

    @staticmethod
    def backward(ctx, g):
        grad = kernel.roi_align_backward(g._data, ctx.boxes, ctx.weights, ctx.shape)
        return (Tensor._make(grad),) + (None,) * 6


def _roi_format(boxes: Tensor | list[Tensor]) -> Tensor:
    """``[K, 5]`` rows ``(batch index, x1, y1, x2, y2)`` from a tensor of them or a list of
    per-image ``[L, 4]`` boxes."""
    if isinstance(boxes, (list, tuple)):
        for b in boxes:
            if b.size(1) != 4:
                raise AssertionError(
                    "The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]"
                )
        ids = torch.cat([torch.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
        return torch.cat([ids, torch.cat(list(boxes), dim=0)], dim=1)
    if isinstance(boxes, Tensor):
        if boxes.size(1) != 5:
            raise AssertionError("The boxes tensor shape is not correct as Tensor[K, 5]")
        return boxes
    raise AssertionError("boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")


def roi_align(
    input: Tensor,
    boxes: Tensor | list[Tensor],
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
    aligned: bool = False,
) -> Tensor:
    """Regions ``boxes`` (``Tensor[K, 5]`` of ``(batch index, x1, y1, x2, y2)``, or a list of
    ``Tensor[L, 4]`` per image) of ``input`` ``[N, C, H, W]`` pooled to ``output_size``:
    each bin averages ``sampling_ratio`` x ``sampling_ratio`` bilinear samples (adaptive when
    ``<= 0``); box coordinates are scaled by ``spatial_scale``, and shifted by half a pixel
    when ``aligned``. Returns ``[K, C, oh, ow]``."""
    rois = _roi_format(boxes)
    out_h, out_w = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if input.dim() != 4:
        raise RuntimeError(
            f"roi_align expects an input of 4 dimensions [N, C, H, W], got {tuple(input.shape)}"
        )
    if input.dtype != rois.dtype:
        raise RuntimeError(
            f"Expected tensor for argument #1 'input' to have the same type as tensor for argument #2 'rois'; "
            f"but type {input.dtype} does not equal {rois.dtype} (while checking arguments for roi_align)"
        )
    if not input.is_floating_point():
        raise RuntimeError(f"roi_align takes floating-point inputs, got {input.dtype}")
    return _RoIAlign.apply(
        input, rois, float(spatial_scale), int(out_h), int(out_w), int(sampling_ratio), bool(aligned)
    )


class RoIAlign(nn.Module):
    """See :func:`roi_align`."""

    def __init__(
        self,
        output_size: int | tuple[int, int],
        spatial_scale: float,
        sampling_ratio: int,
        aligned: bool = False,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input: Tensor, rois: Tensor | list[Tensor]) -> Tensor:
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
            f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned})"
        )

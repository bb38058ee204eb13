"""``torchvision.ops.boxes``: axis-aligned box arithmetic (areas, IoU, format conversions,
clipping) and non-maximum suppression. Boxes are ``[..., 4]`` tensors; ``xyxy`` is
``(x1, y1, x2, y2)``, ``xywh`` ``(x1, y1, w, h)``, ``cxcywh`` ``(cx, cy, w, h)``. Rotated
boxes (``xywhr``, ``cxcywhr``, ``xyxyxyxy``) are not provided."""

from __future__ import annotations

import disttorch as torch
from disttorch._tensor import Tensor
from disttorch.kernels import boxes as kernels

__all__ = [
    "batched_nms",
    "box_area",
    "box_convert",
    "box_iou",
    "clip_boxes_to_image",
    "complete_box_iou",
    "distance_box_iou",
    "generalized_box_iou",
    "nms",
    "remove_small_boxes",
]

_AXIS_ALIGNED = ("xyxy", "xywh", "cxcywh")
_ROTATED = ("xywhr", "cxcywhr", "xyxyxyxy")


def _upcast(t: Tensor) -> Tensor:
    """Half floats to float32, narrow integers to int32 (products would overflow)."""
    if t.is_floating_point():
        return t if t.dtype in (torch.float32, torch.float64) else t.float()
    return t if t.dtype in (torch.int32, torch.int64) else t.int()


def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """Non-maximum suppression: the int64 indices of the ``xyxy`` boxes ``[N, 4]`` kept, in
    decreasing order of ``scores`` ``[N]``; a box is dropped when a kept box of higher score
    overlaps it with IoU > ``iou_threshold``."""
    if boxes.dim() != 2:
        raise RuntimeError(f"boxes should be a 2d tensor, got {boxes.dim()}D")
    if boxes.size(1) != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {boxes.size(1)}")
    if scores.dim() != 1:
        raise RuntimeError(f"scores should be a 1d tensor, got {scores.dim()}D")
    if scores.size(0) != boxes.size(0):
        raise RuntimeError(
            "boxes and scores should have same number of elements in dimension 0, "
            f"got {boxes.size(0)} and {scores.size(0)}"
        )
    if not boxes.is_floating_point():
        raise RuntimeError(
            f'"nms_kernel" not implemented for {str(boxes.dtype).split(".")[-1]!r}: boxes must be floats'
        )
    keep = kernels.nms(boxes.detach().numpy(), scores.detach().numpy(), float(iou_threshold))
    return torch.from_numpy(keep)


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """:func:`nms` within each category ``idxs`` ``[N]`` (never between two): the kept
    indices, in decreasing order of score."""
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64)
    # shifting each category by more than the largest coordinate keeps categories apart
    offsets = idxs.to(boxes) * (boxes.max() + torch.tensor(1).to(boxes))
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def remove_small_boxes(boxes: Tensor, min_size: float) -> Tensor:
    """Indices of the ``xyxy`` boxes whose width and height are both at least ``min_size``."""
    widths, heights = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    return torch.where((widths >= min_size) & (heights >= min_size))[0]


def clip_boxes_to_image(boxes: Tensor, size: tuple[int, int]) -> Tensor:
    """``xyxy`` boxes clamped into an image of ``size`` ``(height, width)``."""
    height, width = size
    xs = boxes[..., 0::2].clamp(min=0, max=width)
    ys = boxes[..., 1::2].clamp(min=0, max=height)
    return torch.stack((xs, ys), dim=boxes.dim()).reshape(boxes.shape)


def _to_xyxy(boxes: Tensor, fmt: str) -> Tensor:
    a, b, c, d = boxes.unbind(-1)
    if fmt == "xywh":
        return torch.stack([a, b, a + c, b + d], dim=-1)
    return torch.stack((a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d), dim=-1)  # cxcywh


def _from_xyxy(boxes: Tensor, fmt: str) -> Tensor:
    x1, y1, x2, y2 = boxes.unbind(-1)
    if fmt == "xywh":
        return torch.stack((x1, y1, x2 - x1, y2 - y1), dim=-1)
    return torch.stack(((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1), dim=-1)  # cxcywh


def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
    """Boxes ``[..., 4]`` converted from ``in_fmt`` to ``out_fmt`` (``"xyxy"``, ``"xywh"``,
    ``"cxcywh"``); a copy when the two are the same."""
    if in_fmt not in _AXIS_ALIGNED + _ROTATED or out_fmt not in _AXIS_ALIGNED + _ROTATED:
        raise ValueError(
            f"Unsupported Bounding Box Conversions for given in_fmt {in_fmt} and out_fmt {out_fmt}"
        )
    if in_fmt == out_fmt:
        return boxes.clone()
    if in_fmt in _ROTATED or out_fmt in _ROTATED:
        raise NotImplementedError(
            f"box_convert from {in_fmt} to {out_fmt}: disttorch.vision converts only the "
            f"axis-aligned formats {_AXIS_ALIGNED}"
        )
    if in_fmt != "xyxy":
        boxes = _to_xyxy(boxes, in_fmt)
    return boxes if out_fmt == "xyxy" else _from_xyxy(boxes, out_fmt)


def box_area(boxes: Tensor, fmt: str = "xyxy") -> Tensor:
    """The areas of boxes ``[..., 4]`` in ``fmt`` (``"xyxy"``, ``"xywh"`` or ``"cxcywh"``)."""
    if fmt not in _AXIS_ALIGNED:
        raise ValueError(f"Unsupported Bounding Box area for given format {fmt}")
    boxes = _upcast(boxes)
    if fmt == "xyxy":
        return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    return boxes[..., 2] * boxes[..., 3]


def _corners(boxes: Tensor, fmt: str) -> tuple[Tensor, Tensor]:
    """Top-left and bottom-right corners ``[..., 2]`` of boxes in an axis-aligned ``fmt``."""
    if fmt == "xyxy":
        return boxes[..., :2], boxes[..., 2:]
    if fmt == "xywh":
        return boxes[..., :2], boxes[..., :2] + boxes[..., 2:]
    half = boxes[..., 2:] / 2
    return boxes[..., :2] - half, boxes[..., :2] + half


def _inter_union(boxes1: Tensor, boxes2: Tensor, fmt: str = "xyxy") -> tuple[Tensor, Tensor]:
    """Pairwise intersections and unions ``[..., N, M]`` of boxes ``[..., N, 4]``, ``[..., M, 4]``."""
    area1, area2 = box_area(boxes1, fmt=fmt), box_area(boxes2, fmt=fmt)
    (lt1, rb1), (lt2, rb2) = _corners(boxes1, fmt), _corners(boxes2, fmt)
    lt = torch.max(lt1[..., :, None, :], lt2[..., None, :, :])
    rb = torch.min(rb1[..., :, None, :], rb2[..., None, :, :])
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter, area1[..., None] + area2[..., None, :] - inter


def box_iou(boxes1: Tensor, boxes2: Tensor, fmt: str = "xyxy") -> Tensor:
    """Pairwise intersection over union ``[..., N, M]`` of boxes ``[..., N, 4]`` and
    ``[..., M, 4]`` in ``fmt``."""
    if fmt in _AXIS_ALIGNED:
        inter, union = _inter_union(boxes1, boxes2, fmt)
        return inter / union
    if fmt in _ROTATED:
        raise NotImplementedError(f"box_iou of rotated boxes ({fmt}) is not in disttorch.vision")
    raise ValueError(
        f"Unsupported format '{fmt}'. Supported axis-aligned formats: {_AXIS_ALIGNED}. "
        f"Supported rotated formats: {_ROTATED}."
    )


def _enclosing_wh(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    """Width and height ``[..., N, M, 2]`` of the smallest box enclosing each pair of ``xyxy`` boxes."""
    lt = torch.min(boxes1[..., :, None, :2], boxes2[..., None, :, :2])
    rb = torch.max(boxes1[..., :, None, 2:], boxes2[..., None, :, 2:])
    return _upcast(rb - lt).clamp(min=0)


def generalized_box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    """Pairwise generalized IoU ``[..., N, M]`` of ``xyxy`` boxes: IoU minus the share of the
    enclosing box that the union leaves empty."""
    inter, union = _inter_union(boxes1, boxes2)
    iou = inter / union
    wh = _enclosing_wh(boxes1, boxes2)
    enclosing = wh[..., 0] * wh[..., 1]
    return iou - (enclosing - union) / enclosing


def _diou_iou(boxes1: Tensor, boxes2: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """Distance IoU (IoU less the squared distance of the centres over the enclosing box's
    squared diagonal, plus ``eps``) and IoU, pairwise."""
    iou = box_iou(boxes1, boxes2)
    wh = _enclosing_wh(boxes1, boxes2)
    diagonal = (wh[..., 0] ** 2) + (wh[..., 1] ** 2) + eps
    cx1, cy1 = (boxes1[..., 0] + boxes1[..., 2]) / 2, (boxes1[..., 1] + boxes1[..., 3]) / 2
    cx2, cy2 = (boxes2[..., 0] + boxes2[..., 2]) / 2, (boxes2[..., 1] + boxes2[..., 3]) / 2
    centres = (_upcast(cx1[..., None] - cx2[..., None, :]) ** 2) + (
        _upcast(cy1[..., None] - cy2[..., None, :]) ** 2
    )
    return iou - (centres / diagonal), iou


def distance_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
    """Pairwise distance IoU ``[..., N, M]`` of ``xyxy`` boxes (arXiv:1911.08287)."""
    return _diou_iou(_upcast(boxes1), _upcast(boxes2), eps)[0]


def complete_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
    """Pairwise complete IoU ``[..., N, M]`` of ``xyxy`` boxes: the distance IoU less a
    weighted difference of the aspect ratios' arctangents (the weight not differentiated)."""
    boxes1, boxes2 = _upcast(boxes1), _upcast(boxes2)
    diou, iou = _diou_iou(boxes1, boxes2, eps)
    w1, h1 = boxes1[..., None, 2] - boxes1[..., None, 0], boxes1[..., None, 3] - boxes1[..., None, 1]
    w2, h2 = (
        boxes2[..., None, :, 2] - boxes2[..., None, :, 0],
        boxes2[..., None, :, 3] - boxes2[..., None, :, 1],
    )
    v = (4 / (torch.pi**2)) * torch.pow(torch.atan(w1 / h1) - torch.atan(w2 / h2), 2)
    with torch.no_grad():
        alpha = v / (1 - iou + v + eps)
    return diou - alpha * v

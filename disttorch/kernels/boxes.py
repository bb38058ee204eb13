"""Greedy non-maximum suppression over ``(x1, y1, x2, y2)`` boxes, as torchvision's CPU
kernel computes it: boxes in descending score order (a stable sort, so ties keep their
input order); a box survives unless an earlier survivor overlaps it with IoU above the
threshold; areas and IoU in the boxes' own dtype, ``inter / (area_i + area_j - inter)``
(a box of zero area gives NaN, which suppresses nothing); the IoU is compared with the
threshold in float64."""

from __future__ import annotations

import numpy as np

__all__ = ["nms"]


def nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Indices (int64) of the boxes ``[N, 4]`` kept, in descending order of ``scores`` ``[N]``."""
    order = _stable_descending(scores)
    x1, y1, x2, y2 = (np.ascontiguousarray(boxes[order, k]) for k in range(4))
    areas = (x2 - x1) * (y2 - y1)
    suppressed = np.zeros(len(order), dtype=bool)
    kept = []
    threshold = np.float64(iou_threshold)  # compared in double, as the kernel does
    for i in range(len(order)):
        if suppressed[i]:
            continue
        kept.append(order[i])
        rest = slice(i + 1, None)
        width = np.maximum(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0)
        height = np.maximum(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0)
        inter = width * height
        with np.errstate(divide="ignore", invalid="ignore"):
            iou = inter / (areas[i] + areas[rest] - inter)
        suppressed[rest] |= iou > threshold
    return np.asarray(kept, dtype=np.int64)


def _stable_descending(scores: np.ndarray) -> np.ndarray:
    """The order of a stable descending sort (NaN first, as PyTorch's descending sort puts it)."""
    nan = np.isnan(scores)
    key = np.where(nan, -np.inf, -scores)
    order = np.argsort(key, kind="stable")
    return np.concatenate([np.flatnonzero(nan), order[~nan[order]]])

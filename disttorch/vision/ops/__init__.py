"""``torchvision.ops``: boxes and NMS, RoI Align, the focal loss, stochastic depth and the
model building blocks of ``misc``."""

from .boxes import (
    batched_nms,
    box_area,
    box_convert,
    box_iou,
    clip_boxes_to_image,
    complete_box_iou,
    distance_box_iou,
    generalized_box_iou,
    nms,
    remove_small_boxes,
)
from .focal_loss import sigmoid_focal_loss
from .misc import (
    MLP,
    Conv2dNormActivation,
    Conv3dNormActivation,
    FrozenBatchNorm2d,
    Permute,
    SqueezeExcitation,
)
from .roi_align import RoIAlign, roi_align
from .stochastic_depth import StochasticDepth, stochastic_depth

__all__ = [
    "Conv2dNormActivation",
    "Conv3dNormActivation",
    "FrozenBatchNorm2d",
    "MLP",
    "Permute",
    "RoIAlign",
    "SqueezeExcitation",
    "StochasticDepth",
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
    "roi_align",
    "sigmoid_focal_loss",
    "stochastic_depth",
]

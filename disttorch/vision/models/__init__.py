"""``torchvision.models``: the ResNets and VGGs, their ``*_Weights`` enums (checkpoints load
from the hub cache) and ``get_weight``; ``feature_extraction`` (imported on its own, as
torchvision's). Not provided: the other architectures, detection, segmentation and video models."""

from ._api import Weights, WeightsEnum
from .resnet import *  # noqa: F403
from .resnet import __all__ as _resnet_names
from .vgg import *  # noqa: F403
from .vgg import __all__ as _vgg_names

__all__ = ["Weights", "WeightsEnum", "get_weight", *_resnet_names, *_vgg_names]


def get_weight(name: str) -> WeightsEnum:
    """The weights named ``"ResNet50_Weights.IMAGENET1K_V2"`` (``.DEFAULT`` too)."""
    enum_name, _, member = name.partition(".")
    found = globals().get(enum_name)
    if not (isinstance(found, type) and issubclass(found, WeightsEnum)):
        raise ValueError(f"Unknown weight enum: {enum_name!r}")
    return found.verify(member)

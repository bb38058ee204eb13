"""``torchvision.models._api``: pretrained weights as enum members (``ResNet18_Weights.IMAGENET1K_V1``)
holding their URL and facts. Their state dicts load through ``torch.hub``: disttorch never
downloads, so a checkpoint loads when it is already in the hub cache (``<hub dir>/checkpoints``,
where PyTorch's downloader leaves it) and ``torch.hub`` says what to put where otherwise."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["Weights", "WeightsEnum"]

IMAGENET_CLASSES = 1000


@dataclass
class Weights:
    """A checkpoint's ``url`` and ``meta`` (``num_params``; ``num_classes`` of its classifier,
    None for a feature extractor's)."""

    url: str
    meta: dict[str, Any] = field(default_factory=dict)


class WeightsEnum(Enum):
    """Base of the ``<Model>_Weights`` enums; ``DEFAULT`` names the recommended member."""

    @classmethod
    def verify(cls, obj: Any) -> Any:
        """``obj`` as a member of this enum: a member, ``"NAME"`` or ``"Class.NAME"`` (None stays None)."""
        if obj is None or isinstance(obj, cls):
            return obj
        if isinstance(obj, str):
            name = obj.replace(cls.__name__ + ".", "")
            if name in cls.__members__:
                return cls[name]
        raise TypeError(
            f"Invalid Weight class provided; expected {cls.__name__} but received {type(obj).__name__}."
        )

    def get_state_dict(self, progress: bool = True, check_hash: bool = False) -> dict:
        from disttorch import hub

        return hub.load_state_dict_from_url(self.url, progress=progress, check_hash=check_hash)

    @property
    def url(self) -> str:
        return self.value.url

    @property
    def meta(self) -> dict[str, Any]:
        return self.value.meta

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self._name_}"


def _weights(url: str, num_params: int, num_classes: int | None = IMAGENET_CLASSES) -> Weights:
    return Weights(
        "https://download.pytorch.org/models/" + url, {"num_params": num_params, "num_classes": num_classes}
    )


def build(constructor, enum: type[WeightsEnum], weights: Any, kwargs: dict) -> Any:
    """``constructor(**kwargs)``, then the weights' state dict loaded into it (the classifier
    sized to the weights' classes). The deprecated ``pretrained=True`` means the enum's
    ``IMAGENET1K_V1``, with torchvision's warning."""
    kwargs.pop("progress", None)
    if "pretrained" in kwargs:
        warnings.warn(
            "The parameter 'pretrained' is deprecated since 0.13 and may be removed in the future, "
            "please use 'weights' instead.",
            UserWarning,
            stacklevel=3,
        )
        if kwargs.pop("pretrained"):
            weights = enum.IMAGENET1K_V1
    weights = enum.verify(weights)
    if weights is not None:
        classes = weights.meta.get("num_classes")
        if classes is not None and kwargs.setdefault("num_classes", classes) != classes:
            raise ValueError(
                f"The parameter 'num_classes' expected value {classes} but got {kwargs['num_classes']} instead."
            )
    state = None if weights is None else weights.get_state_dict(progress=True, check_hash=True)
    model = constructor(**kwargs)  # built after the checkpoint is found: a missing one costs nothing
    if state is not None:
        model.load_state_dict(state)
    return model

"""``torch.ao.nn.quantized``: quantized modules (``dynamic`` holds the dynamically
quantized ones)."""

from . import dynamic, functional
from .modules import (
    BatchNorm2d,
    Conv2d,
    DeQuantize,
    Embedding,
    EmbeddingBag,
    FloatFunctional,
    Linear,
    LinearPackedParams,
    QFunctional,
    Quantize,
    ReLU6,
)

__all__ = [
    "BatchNorm2d",
    "dynamic",
    "functional",
    "Conv2d",
    "DeQuantize",
    "Embedding",
    "EmbeddingBag",
    "FloatFunctional",
    "QFunctional",
    "Linear",
    "LinearPackedParams",
    "Quantize",
    "ReLU6",
]

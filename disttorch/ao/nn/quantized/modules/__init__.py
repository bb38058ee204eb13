"""Quantized modules (PyTorch's ``torch.ao.nn.quantized.modules``): static ``Linear``, ``Conv2d``,
``BatchNorm2d``, ``ReLU6``, ``Quantize``/``DeQuantize``, weight-only ``Embedding``/``EmbeddingBag``,
and the packed weights the linear layers share."""

from .activation import ReLU6
from .batchnorm import BatchNorm2d
from .conv import Conv2d
from .embedding_ops import Embedding, EmbeddingBag, EmbeddingPackedParams
from .functional_modules import FloatFunctional, QFunctional
from .linear import Linear, LinearPackedParams
from .quantize import DeQuantize, Quantize

__all__ = [
    "BatchNorm2d",
    "Conv2d",
    "DeQuantize",
    "Embedding",
    "EmbeddingBag",
    "EmbeddingPackedParams",
    "FloatFunctional",
    "QFunctional",
    "Linear",
    "LinearPackedParams",
    "Quantize",
    "ReLU6",
]

"""Which quantized module replaces which float module."""

from __future__ import annotations

from ...nn.modules.activation import ReLU6
from ...nn.modules.batchnorm import BatchNorm2d
from ...nn.modules.conv import Conv2d
from ...nn.modules.linear import Linear
from ...nn.modules.rnn import GRU, LSTM
from ...nn.modules.sparse import Embedding, EmbeddingBag
from ..nn import intrinsic as nni
from ..nn import qat as nnqat
from ..nn import quantized as nnq
from ..nn.intrinsic import qat as nniqat
from ..nn.intrinsic import quantized as nniq
from ..nn.quantized import dynamic as nnqd
from .stubs import DeQuantStub, QuantStub

__all__ = [
    "DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS",
    "DEFAULT_QAT_MODULE_MAPPINGS",
    "DEFAULT_STATIC_QUANT_MODULE_MAPPINGS",
    "get_default_dynamic_quant_module_mappings",
    "get_default_qat_module_mappings",
    "get_default_static_quant_module_mappings",
]

#: float module class -> its dynamically quantized class (``quantize_dynamic``'s default)
DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS: dict = {
    Linear: nnqd.Linear,
    LSTM: nnqd.LSTM,
    GRU: nnqd.GRU,
    Embedding: nnq.Embedding,
    EmbeddingBag: nnq.EmbeddingBag,
}
#: float module class -> its static quantized class (``convert``'s default); ``nn.ReLU``,
#: pooling and ``Flatten`` stay float modules that take quantized tensors
DEFAULT_STATIC_QUANT_MODULE_MAPPINGS: dict = {
    QuantStub: nnq.Quantize,
    DeQuantStub: nnq.DeQuantize,
    Linear: nnq.Linear,
    Conv2d: nnq.Conv2d,
    BatchNorm2d: nnq.BatchNorm2d,
    nni.ConvReLU2d: nniq.ConvReLU2d,
    nnq.FloatFunctional: nnq.QFunctional,
    ReLU6: nnq.ReLU6,
    Embedding: nnq.Embedding,
    EmbeddingBag: nnq.EmbeddingBag,
    nni.LinearReLU: nniq.LinearReLU,
    nnqat.Linear: nnq.Linear,
    nnqat.Conv2d: nnq.Conv2d,
    nniqat.ConvBn2d: nnq.Conv2d,
    nniqat.ConvBnReLU2d: nniq.ConvReLU2d,
    nniqat.ConvReLU2d: nniq.ConvReLU2d,
    nniqat.LinearReLU: nniq.LinearReLU,
}
#: float module class -> its QAT class (``prepare_qat``'s default)
DEFAULT_QAT_MODULE_MAPPINGS: dict = {
    Linear: nnqat.Linear,
    Conv2d: nnqat.Conv2d,
    nni.ConvBn2d: nniqat.ConvBn2d,
    nni.ConvBnReLU2d: nniqat.ConvBnReLU2d,
    nni.ConvReLU2d: nniqat.ConvReLU2d,
    nni.LinearReLU: nniqat.LinearReLU,
}
#: the float modules whose outputs ``prepare`` observes (the stubs' and layers' outputs)
OBSERVED = (
    QuantStub,
    Linear,
    nni.LinearReLU,
    Conv2d,
    nni.ConvReLU2d,
    BatchNorm2d,
    ReLU6,
    nnqat.Linear,
    nnqat.Conv2d,
    nniqat.ConvBn2d,
    nniqat.ConvBnReLU2d,
    nniqat.ConvReLU2d,
    nniqat.LinearReLU,
)


def get_default_dynamic_quant_module_mappings() -> dict:
    """A copy of the default float -> dynamically quantized module mapping."""
    return dict(DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS)


def get_default_qat_module_mappings() -> dict:
    """A copy of the default float -> QAT module mapping."""
    return dict(DEFAULT_QAT_MODULE_MAPPINGS)


def get_default_static_quant_module_mappings() -> dict:
    """A copy of the default float -> static quantized module mapping."""
    return dict(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS)

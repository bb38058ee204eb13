"""Quantization schemes: ``disttorch.per_tensor_affine`` and friends, as
``QuantizedTensor.qscheme()`` and observers report them."""

from __future__ import annotations

from ._public_name import package_name

__all__ = [
    "qscheme",
    "per_tensor_affine",
    "per_channel_affine",
    "per_tensor_symmetric",
    "per_channel_symmetric",
    "per_channel_affine_float_qparams",
]


class qscheme:
    """How a quantized tensor maps integers to reals: one scale and zero point for the whole
    tensor (``per_tensor_*``) or one per slice along an axis (``per_channel_*``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{package_name()}.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickles as the global ``torch.per_tensor_affine``, as PyTorch's does


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")


def _by_name(name: str) -> qscheme:
    """The quantization scheme named ``name``: how disttorch pickled schemes before they
    pickled as PyTorch's globals (such pickles still load)."""
    schemes = (
        per_tensor_affine,
        per_channel_affine,
        per_tensor_symmetric,
        per_channel_symmetric,
        per_channel_affine_float_qparams,
    )
    return {s.name: s for s in schemes}[name]

"""``torch.ao.nn.qat``: float layers that fake-quantize their weights during training
(quantization-aware training); ``prepare_qat`` swaps them in, ``convert`` quantizes them."""

from .modules import Conv2d, Linear

__all__ = ["Conv2d", "Linear"]

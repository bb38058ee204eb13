"""``torch.ao.nn``: the quantized counterparts of ``torch.nn`` modules, and the fused
(``intrinsic``) modules quantization works on."""

from . import intrinsic, qat, quantized

__all__ = ["intrinsic", "qat", "quantized"]

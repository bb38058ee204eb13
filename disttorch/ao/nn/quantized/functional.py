"""``torch.ao.nn.quantized.functional``: functions of quantized tensors that keep the
input's scale and zero point (they raise for a float input)."""

from ....nn.functional.quantized import adaptive_avg_pool2d, avg_pool2d, clamp, hardtanh, max_pool2d

__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "clamp", "hardtanh", "max_pool2d"]

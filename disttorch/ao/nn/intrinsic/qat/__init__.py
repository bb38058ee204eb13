"""``torch.ao.nn.intrinsic.qat``: fused modules for quantization-aware training."""

from .modules import ConvBn2d, ConvBnReLU2d, ConvReLU2d, LinearReLU, freeze_bn_stats, update_bn_stats

__all__ = ["ConvBn2d", "ConvBnReLU2d", "ConvReLU2d", "LinearReLU", "freeze_bn_stats", "update_bn_stats"]

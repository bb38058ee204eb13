"""Automatic mixed precision: ``autocast`` (ops run in a lower-precision dtype where
PyTorch's autocast runs them so) and ``GradScaler`` (loss scaling against float16
gradient underflow), as ``torch.amp``."""

from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

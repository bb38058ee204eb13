"""``torch.backends.cuda``: CUDA is not built in; its flags are kept and change nothing.

``matmul.allow_tf32`` is tied to ``torch.set_float32_matmul_precision`` as in PyTorch
(``"highest"`` <-> False); the scaled-dot-product-attention switches (``enable_flash_sdp``,
``flash_sdp_enabled``, ``sdp_kernel``, ...) are kept and read back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .. import _runtime_flags

__all__ = [
    "cudnn_sdp_enabled",
    "enable_cudnn_sdp",
    "enable_flash_sdp",
    "enable_math_sdp",
    "enable_mem_efficient_sdp",
    "flash_sdp_enabled",
    "is_built",
    "math_sdp_enabled",
    "matmul",
    "mem_efficient_sdp_enabled",
    "sdp_kernel",
]


def is_built() -> bool:
    """False: disttorch is not built with CUDA."""
    return False


class _Matmul:
    """``torch.backends.cuda.matmul``: cuBLAS flags."""

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True
    fp32_precision = "none"

    @property
    def allow_tf32(self) -> bool:
        """Whether float32 matrix products may use TF32: True unless the float32 matmul
        precision is ``"highest"``."""
        return _runtime_flags.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _runtime_flags.set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be used (a kept flag)."""
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the flash attention kernel (a kept flag)."""
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be used (a kept flag)."""
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient attention kernel (a kept flag)."""
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    """Whether the math attention kernel may be used (a kept flag)."""
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the math attention kernel (a kept flag)."""
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN attention kernel may be used (a kept flag)."""
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid the cuDNN attention kernel (a kept flag)."""
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(
    enable_flash: bool = True,
    enable_math: bool = True,
    enable_mem_efficient: bool = True,
    enable_cudnn: bool = True,
) -> Iterator[None]:
    """Set the attention kernel switches inside a ``with`` block, restoring them after."""
    old = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(old)

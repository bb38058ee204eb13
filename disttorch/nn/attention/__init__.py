"""``torch.nn.attention``: choosing the scaled-dot-product-attention backend, and
:mod:`.flex_attention` (attention with user score and mask functions).

``sdpa_kernel(backends)`` sets the switches of ``torch.backends.cuda`` (``flash_sdp_enabled``,
``math_sdp_enabled``, ...) inside a ``with`` block and restores them after, as PyTorch does.
``scaled_dot_product_attention`` reads them as PyTorch's CPU build: the flash and math kernels
run on CPU (disttorch computes both alike; flash lays its output out like the query), and
with neither enabled, or flash alone for inputs it does not take, it raises as PyTorch does.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterable, Iterator

from ...backends import cuda as _cuda

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

#: PyTorch warns when a fused kernel cannot be used only when this is True
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The implementations of ``scaled_dot_product_attention`` (PyTorch's names and values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self) -> str:
        return f"SDPBackend.{self.name}"


#: each backend's switch, as the keyword of ``torch.backends.cuda.sdp_kernel``
_SWITCHES = {
    SDPBackend.MATH: "enable_math",
    SDPBackend.FLASH_ATTENTION: "enable_flash",
    SDPBackend.EFFICIENT_ATTENTION: "enable_mem_efficient",
    SDPBackend.CUDNN_ATTENTION: "enable_cudnn",
}


@contextlib.contextmanager
def sdpa_kernel(backends: SDPBackend | Iterable[SDPBackend], set_priority: bool = False) -> Iterator[None]:
    """Within the block, enable exactly ``backends`` (one or a list) for
    ``scaled_dot_product_attention``; the previous switches come back afterwards."""
    chosen = (
        [backends]
        if isinstance(backends, SDPBackend)
        else list(backends)
        if isinstance(backends, list)
        else None
    )
    if chosen is None or not all(isinstance(b, SDPBackend) for b in chosen):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
            f"got {type(backends).__name__}"
        )
    with _cuda.sdp_kernel(**{switch: backend in chosen for backend, switch in _SWITCHES.items()}):
        yield

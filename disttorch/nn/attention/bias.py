"""``torch.nn.attention.bias``: causal attention masks as tensors for
``scaled_dot_product_attention``.

``causal_upper_left(L, S)`` lets query ``i`` see keys ``0..i`` (``is_causal=True``);
``causal_lower_right(L, S)`` aligns the last query with the last key, so query ``i`` sees keys
``0..i + S - L`` (the mask of decoding ``L`` new tokens after ``S - L`` cached ones). A
:class:`CausalBias` is a boolean tensor (True = may attend) that remembers its variant; it
shows and computes as that mask. PyTorch's is a lazy wrapper; disttorch materialises it.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from ..._tensor import Tensor

__all__ = ["CausalBias", "CausalVariant", "causal_lower_right", "causal_upper_left"]


class CausalVariant(IntEnum):
    """Where the causal triangle is anchored: the upper-left or the lower-right corner."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias(Tensor):
    """A ``(seq_len_q, seq_len_kv)`` boolean causal mask of the given variant."""

    def __new__(cls, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> "CausalBias":
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {variant!r}")
        self = object.__new__(cls)
        Tensor._init_state(self, _causal_mask(variant, seq_len_q, seq_len_kv))
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        return self

    def _materialize(self, device: object = None) -> Tensor:
        """The mask as a plain boolean tensor."""
        return Tensor._make(self._data.copy())


def _causal_mask(variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> np.ndarray:
    diagonal = 0 if variant == CausalVariant.UPPER_LEFT else seq_len_kv - seq_len_q
    return np.tril(np.ones((seq_len_q, seq_len_kv), dtype=bool), diagonal)


def causal_upper_left(*size: int) -> CausalBias:
    """The causal mask anchored at the upper-left corner: ``causal_upper_left(L, S)``."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size: int) -> CausalBias:
    """The causal mask anchored at the lower-right corner: ``causal_lower_right(L, S)``."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)

"""``LinearCrossEntropyOptions``: the options of PyTorch's chunked ``linear_cross_entropy``."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """Options of PyTorch's chunked ``linear_cross_entropy``; accepted for compatibility
    (disttorch computes the logits in one piece, so they do not change the result)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

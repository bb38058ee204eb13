"""``HuggingFaceStorageReader``/``Writer`` (names of ``torch.distributed.checkpoint.hf_storage``):
importable, but reading or writing Hugging Face safetensors checkpoints through
``distributed.checkpoint`` is not supported here; constructing one says so."""

from __future__ import annotations

from typing import Any

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


class _Unsupported:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"{type(self).__name__} is not supported by disttorch.distributed.checkpoint; save and load "
            "with checkpoint_id=<directory> (disttorch's own format), or safetensors directly"
        )


class HuggingFaceStorageReader(_Unsupported):
    """Not supported (see the module header)."""


class HuggingFaceStorageWriter(_Unsupported):
    """Not supported (see the module header)."""

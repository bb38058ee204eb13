"""``torch._dynamo.exc``: the compiler's exceptions (defined in :mod:`disttorch._compile_errors`,
where ``torch.compile`` raises :class:`InvalidBackend` for a backend name that does not exist)."""

from __future__ import annotations

from .._compile_errors import (
    BackendCompilerFailed,
    InternalTorchDynamoError,
    InvalidBackend,
    TorchDynamoException,
    TorchRuntimeError,
    Unsupported,
)

__all__ = [
    "BackendCompilerFailed",
    "InternalTorchDynamoError",
    "InvalidBackend",
    "TorchDynamoException",
    "TorchRuntimeError",
    "Unsupported",
]

"""``torch._dynamo.exc``: the compiler's exceptions (raised by no code here; libraries catch
them by name)."""

from __future__ import annotations

__all__ = [
    "BackendCompilerFailed",
    "InternalTorchDynamoError",
    "TorchDynamoException",
    "TorchRuntimeError",
    "Unsupported",
]


class TorchDynamoException(RuntimeError):
    """Base of the compiler's errors."""


class Unsupported(TorchDynamoException):
    """Code the compiler cannot trace."""


class InternalTorchDynamoError(TorchDynamoException):
    """A bug inside the compiler."""


class TorchRuntimeError(TorchDynamoException):
    """An error raised while running traced code."""


class BackendCompilerFailed(TorchDynamoException):
    """A compiler backend failed."""

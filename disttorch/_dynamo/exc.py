"""``torch._dynamo.exc``: the compiler's exceptions (libraries catch them by name; only
``InvalidBackend`` is raised here, for a backend name that does not exist)."""

from __future__ import annotations

__all__ = [
    "BackendCompilerFailed",
    "InternalTorchDynamoError",
    "InvalidBackend",
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


class InvalidBackend(TorchDynamoException):
    """A backend name that is not one of ``torch._dynamo.list_backends()``'s."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends."
        )

"""The compiler's exceptions, which ``torch._dynamo.exc`` publishes (libraries catch them by
name). Only :class:`InvalidBackend` is raised, by ``torch.compile`` (:mod:`disttorch._compile`)
for a backend name that does not exist; they live at this layer so that it can."""

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

    __module__ = "disttorch._dynamo.exc"  # where they are published (each subclass says so too)


class Unsupported(TorchDynamoException):
    """Code the compiler cannot trace."""

    __module__ = TorchDynamoException.__module__


class InternalTorchDynamoError(TorchDynamoException):
    """A bug inside the compiler."""

    __module__ = TorchDynamoException.__module__


class TorchRuntimeError(TorchDynamoException):
    """An error raised while running traced code."""

    __module__ = TorchDynamoException.__module__


class BackendCompilerFailed(TorchDynamoException):
    """A compiler backend failed."""

    __module__ = TorchDynamoException.__module__


class InvalidBackend(TorchDynamoException):
    """A backend name that is not one of ``torch._dynamo.list_backends()``'s."""

    __module__ = TorchDynamoException.__module__

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends."
        )

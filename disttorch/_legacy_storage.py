"""PyTorch's legacy typed storage classes: ``torch.FloatStorage``, ``torch.LongStorage``, ...

As in PyTorch, each is a subclass of :class:`TypedStorage` of metaclass
:class:`_LegacyStorageMeta`, and calling it makes a plain ``TypedStorage`` of its dtype
(``FloatStorage(3)``: three elements, ``FloatStorage([1, 2])``: those values,
``FloatStorage(wrap_storage=untyped)``: those bytes), which ``isinstance(s,
torch.FloatStorage)`` recognises by its dtype. Checkpoints name them (``torch.save`` writes
``torch.FloatStorage`` for a float32 tensor's memory), so code that unpickles a checkpoint
itself finds them by name and asks for their dtype: ``cls().dtype`` (lit-llama's lazy
loader), ``torch.FloatStorage.dtype``.
"""

from __future__ import annotations

from typing import Any

from ._storage import LEGACY_STORAGE_NAMES, TypedStorage, UntypedStorage, _warn_typed_storage

__all__ = [name for name, _ in LEGACY_STORAGE_NAMES]


class _LegacyStorageMeta(type):
    """Metaclass of the legacy storage classes: their ``dtype``, and ``isinstance`` by it."""

    _dtype: Any

    @property
    def dtype(cls) -> Any:
        _warn_typed_storage()
        return cls._dtype

    def __instancecheck__(cls, instance: Any) -> bool:
        return (
            type(instance) is TypedStorage and instance.device.type == "cpu" and instance.dtype == cls._dtype
        )


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """Base of the legacy storage classes; calling one makes a ``TypedStorage`` of its dtype."""

    def __new__(cls, *args: Any, wrap_storage: UntypedStorage | None = None, **kwargs: Any) -> TypedStorage:
        if kwargs or len(args) > 1 or (args and wrap_storage is not None):
            wrong = (
                f"Keyword argument '{next(iter(kwargs))}' cannot be specified"
                if kwargs
                else "Too many arguments"
            )
            raise RuntimeError(
                f"{cls!r}.__new__ received an invalid combination of arguments. Expected one of:\n"
                " * no arguments\n * (int size)\n * (Sequence data)\n"
                f" * (*, UntypedStorage wrap_storage)\n{wrong}"
            )
        _warn_typed_storage()
        return TypedStorage(*args, wrap_storage=wrap_storage, dtype=cls._dtype, _internal=True)


def _legacy_class(name: str, dtype: Any) -> type:
    return _LegacyStorageMeta(
        name,
        (_LegacyStorage,),
        {"_dtype": dtype, "__module__": "torch", "__doc__": f"Legacy storage of {dtype} elements."},
    )


_CLASSES = {name: _legacy_class(name, dtype) for name, dtype in LEGACY_STORAGE_NAMES}
(
    BFloat16Storage,
    BoolStorage,
    ByteStorage,
    CharStorage,
    ComplexDoubleStorage,
    ComplexFloatStorage,
    DoubleStorage,
    FloatStorage,
    HalfStorage,
    IntStorage,
    LongStorage,
    ShortStorage,
) = (_CLASSES[name] for name in sorted(_CLASSES))

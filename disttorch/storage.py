"""``torch.storage``: ``UntypedStorage`` and ``TypedStorage`` under PyTorch's module path (they
live in the core, beside ``Tensor``, whose ``untyped_storage()`` returns them)."""

from ._storage import (  # noqa: F401 (the warning's switches, under PyTorch's names)
    TypedStorage,
    UntypedStorage,
    _reset_warn_typed_storage_removal,
    _set_always_warn_typed_storage_removal,
    is_storage,
)

__all__ = ["TypedStorage", "UntypedStorage", "is_storage"]

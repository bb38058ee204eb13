"""``torch.storage``: ``UntypedStorage`` and ``TypedStorage`` under PyTorch's module path (they
live in the core, beside ``Tensor``, whose ``untyped_storage()`` returns them)."""

from ._storage import TypedStorage, UntypedStorage, is_storage

__all__ = ["TypedStorage", "UntypedStorage", "is_storage"]

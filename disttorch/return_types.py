"""``torch.return_types``: the named-tuple types of ops with several results
(``torch.return_types.max`` is the type of ``torch.max(x, dim)``'s ``(values, indices)``)."""

from __future__ import annotations

from typing import Any

from .ops._helpers import RETURN_TYPES

# the types made so far, in the namespace (the import alias gives them ``torch.`` paths)
globals().update(RETURN_TYPES)


def __getattr__(name: str) -> Any:
    if name in RETURN_TYPES:
        return RETURN_TYPES[name]
    raise AttributeError(f"module 'disttorch.return_types' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(RETURN_TYPES)

"""``torch.jit._recursive``: the store of concrete module types that scripting shares
between instances of one class (``concrete_type_store.type_store``).

``script`` here keeps the Python module (see ``disttorch.jit``), so nothing is compiled and
no type is shared: the store stays empty, and code that evicts its class from it (to keep
two instances' types apart) runs as under PyTorch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ConcreteTypeStore", "concrete_type_store"]


class ConcreteTypeStore:
    """``type_store``: module class -> its concrete types; ``methods_compiled``: those compiled."""

    def __init__(self) -> None:
        self.type_store: dict[type, list[Any]] = {}
        self.methods_compiled: set[Any] = set()


concrete_type_store = ConcreteTypeStore()

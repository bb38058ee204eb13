"""``Stateful``: an object ``dcp.save``/``dcp.load`` checkpoint through its own
``state_dict()`` and ``load_state_dict()`` (a top-level value of the state dict that has
both, e.g. an application-state wrapper, a module or an optimiser)."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["Stateful", "StatefulT"]


@runtime_checkable
class Stateful(Protocol):
    """Objects that can be checkpointed and restored."""

    def state_dict(self) -> dict[str, Any]:
        """The object's state, written by ``save`` (also called by ``load``, which loads
        into it in place)."""
        ...

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the object's state from ``state_dict``."""
        ...


StatefulT = TypeVar("StatefulT", bound=Stateful)


def stateful_to_state_dict(state_dict: dict) -> dict:
    """``state_dict`` with each top-level ``Stateful`` value replaced by its ``state_dict()``."""
    return {k: v.state_dict() if isinstance(v, Stateful) else v for k, v in state_dict.items()}

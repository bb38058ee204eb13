"""``torch.jit``'s executor and fuser settings: ``optimized_execution``, ``fuser``,
``set_fusion_strategy``, ``enable_onednn_fusion``.

Nothing is compiled or fused in disttorch, so these only keep the state PyTorch's keep (what
a program reads back is what it set) and check their arguments as PyTorch does."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = [
    "enable_onednn_fusion",
    "fuser",
    "onednn_fusion_enabled",
    "optimized_execution",
    "set_fusion_strategy",
]

_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")
_state: dict = {"optimize": True, "onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """Whether the JIT's executor optimizes, inside the block (no effect on results here)."""
    stored, _state["optimize"] = _state["optimize"], bool(should_optimize)
    try:
        yield
    finally:
        _state["optimize"] = stored


@contextlib.contextmanager
def fuser(name: str) -> Iterator[None]:
    """Switch the fusion backend inside the block: ``fuser0`` (legacy), ``fuser1`` (NNC),
    ``fuser2`` (nvFuser), ``fuser3`` (oneDNN Graph) or ``none``; nothing fuses here."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002 (PyTorch's type)
    stored = _state["onednn"]
    _state["onednn"] = name == "fuser3"
    try:
        yield
    finally:
        _state["onednn"] = stored


def set_fusion_strategy(strategy: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Set how many static and dynamic specialisations the fuser compiles; returns the
    previous strategy, as PyTorch's."""
    for kind, depth in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
        if not isinstance(depth, int):
            raise TypeError(f"fusion depth must be an int, got {type(depth).__name__}")
    previous, _state["strategy"] = _state["strategy"], [(k, int(d)) for k, d in strategy]
    return previous


def enable_onednn_fusion(enabled: bool) -> None:
    """Turn oneDNN Graph fusion on or off (remembered; nothing fuses here)."""
    _state["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """Whether oneDNN Graph fusion was turned on."""
    return _state["onednn"]

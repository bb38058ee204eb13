"""``torch.utils.module_tracker``: ``ModuleTracker`` knows which modules' ``forward`` are
running, by dotted name (the outermost module's class name, then attribute names:
``"Net.encoder.0"``), through the global module forward hooks.

``tracker.parents`` is the set of those names plus ``"Global"``. disttorch tracks the forward
pass only (PyTorch's tracker also re-enters modules during their backward)."""

from __future__ import annotations

import weakref
from typing import Any

from ..nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

__all__ = ["ModuleTracker"]


class ModuleTracker:
    """``with ModuleTracker() as tracker: model(x)``; inside, ``tracker.parents`` names the
    modules whose forward is running."""

    def __init__(self) -> None:
        self.parents: set[str] = {"Global"}
        self._names: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._named_children: weakref.WeakSet = weakref.WeakSet()
        self._handles: list = []

    @property
    def is_bw(self) -> bool:
        """Whether a backward pass is running (never, for this forward-only tracker)."""
        return False

    def _name(self, mod: Any) -> str:
        name = self._names.get(mod)
        if name is None:
            name = self._names[mod] = type(mod).__name__
        if mod not in self._named_children:  # its children are named after it once
            self._named_children.add(mod)
            for child_name, child in mod.named_children():
                self._names[child] = f"{name}.{child_name}"
        return name

    def _enter(self, mod: Any, args: Any) -> None:
        self.parents.add(self._name(mod))

    def _leave(self, mod: Any, args: Any, output: Any) -> None:
        self.parents.discard(self._name(mod))

    def __enter__(self) -> ModuleTracker:
        self._handles = [
            register_module_forward_pre_hook(self._enter),
            register_module_forward_hook(self._leave, always_call=True),
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

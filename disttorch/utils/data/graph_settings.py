"""``torch.utils.data.graph_settings``: switch shuffling on or off in every shuffler of a
DataPipe graph (``apply_shuffle_settings``) and seed its random pipes (``apply_random_seed``);
the graph is the pipes reachable through attributes, also inside lists, tuples, sets and
dicts."""

from __future__ import annotations

import warnings
from typing import Any

from ... import _creation, _dtype
from .datapipes.datapipe import IterDataPipe

__all__ = ["apply_random_seed", "apply_shuffle_settings", "get_all_graph_pipes"]


def get_all_graph_pipes(datapipe: Any) -> list:
    """Every DataPipe reachable from ``datapipe`` (itself first), each once."""
    seen: set[int] = set()
    found: list = []

    def visit(obj: Any) -> None:
        if isinstance(obj, IterDataPipe):
            if id(obj) in seen:
                return
            seen.add(id(obj))
            found.append(obj)
            for value in vars(obj).values():
                visit(value)
        elif isinstance(obj, (list, tuple, set)):
            for value in obj:
                visit(value)
        elif isinstance(obj, dict):
            for value in obj.values():
                visit(value)

    visit(datapipe)
    return found


def apply_shuffle_settings(datapipe: Any, shuffle: bool | None = None) -> Any:
    """Call ``set_shuffle(shuffle)`` on every shuffler in ``datapipe``'s graph (nothing when
    ``shuffle`` is None); with ``shuffle=True`` and no shuffler, one is added at the end."""
    if shuffle is None:
        return datapipe
    shufflers = [
        p for p in get_all_graph_pipes(datapipe) if hasattr(p, "set_shuffle") and hasattr(p, "set_seed")
    ]
    if not shufflers and shuffle:
        warnings.warn(
            "`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. Adding one at the end. "
            "Be aware that the default buffer size might not be sufficient for your task.",
            stacklevel=2,
        )
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for shuffler in shufflers:
        shuffler.set_shuffle(shuffle)
    return datapipe


def apply_random_seed(datapipe: Any, rng: Any) -> Any:
    """Seed every random DataPipe of the graph (those with ``set_seed``) with one int64
    drawn from the generator ``rng`` each, in graph order (what the DataLoader does with
    a seed drawn from its own generator at the start of every epoch)."""
    for pipe in get_all_graph_pipes(datapipe):
        if callable(getattr(pipe, "set_seed", None)):
            pipe.set_seed(int(_creation.empty((), dtype=_dtype.int64).random_(generator=rng).item()))
    return datapipe

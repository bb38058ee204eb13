"""What PyTorch's compiler would hold compiled, so that a program sees its events: for each
compiled function's code, the guards of the graphs compiled for it (each tensor input's
dtype, ``requires_grad`` and sizes, a size that changed between compiles marked dynamic as
PyTorch's automatic dynamic shapes mark it; and grad mode), and ``counters``, the
compiler's event counts (``counters["stats"]["unique_graphs"]``, ``["calls_captured"]``,
``counters["frames"]["total"]``, ``counters["aot_autograd"]``). A call whose guards no graph passes "compiles": it is
counted, and the call is the graph. Nothing is compiled: the code runs eagerly."""

from __future__ import annotations

import weakref
from collections import Counter, defaultdict
from typing import Any

__all__ = ["compiled", "counters", "record", "reset"]

counters: defaultdict[str, Counter] = defaultdict(Counter)

#: code (a function's, a module's ``forward``'s) -> (guards, whether AOTAutograd made it) of its graphs
_graphs: weakref.WeakKeyDictionary[Any, list[tuple[tuple, Any]]] = weakref.WeakKeyDictionary()

Guards = tuple  # (grad mode, ((dtype, requires_grad, sizes with None where dynamic), ...))


def _passes(guards: Guards, key: Guards) -> bool:
    """Whether a call with ``key`` passes a graph's ``guards`` (a dynamic size takes any
    size but 0 and 1, which PyTorch specialises)."""
    if guards[0] != key[0] or len(guards[1]) != len(key[1]):
        return False
    for (dtype, rg, sizes), (dtype2, rg2, sizes2) in zip(guards[1], key[1]):
        if dtype != dtype2 or rg != rg2 or len(sizes) != len(sizes2):
            return False
        if any(s is not None and s != t or s is None and t < 2 for s, t in zip(sizes, sizes2)):
            return False
    return True


def compiled(code: Any, key: Guards) -> bool | None:
    """Whether the graph compiled for ``code`` that takes a call with guards ``key`` went
    through AOTAutograd; None if there is none."""
    return next((aot for guards, aot in _graphs.get(code, ()) if _passes(guards, key)), None)


def record(code: Any, key: Guards, calls: int, aot: bool) -> None:
    """Count a compile of ``code`` for ``key`` that captured ``calls`` operations (``aot``:
    by a backend through AOTAutograd); sizes that differ from an earlier graph's of the same
    inputs become dynamic."""
    graphs = _graphs.setdefault(code, [])
    dynamic = [[False] * len(sizes) for _, _, sizes in key[1]]
    for old, _ in graphs:
        if old[0] == key[0] and [(d, r, len(s)) for d, r, s in old[1]] == [
            (d, r, len(s)) for d, r, s in key[1]
        ]:
            for marks, (_, _, was), (_, _, now) in zip(dynamic, old[1], key[1]):
                for i, (a, b) in enumerate(zip(was, now)):
                    marks[i] = marks[i] or (a != b and b > 1)
    tensors = tuple(
        (d, r, tuple(None if m else n for m, n in zip(marks, sizes)))
        for marks, (d, r, sizes) in zip(dynamic, key[1])
    )
    guards = (key[0], tensors)
    graphs.append((guards, aot))
    counters["frames"]["total"] += 1
    counters["frames"]["ok"] += 1
    counters["stats"]["calls_captured"] += calls
    counters["stats"]["unique_graphs"] += 1
    if aot:
        counters["aot_autograd"]["total"] += 1
        counters["aot_autograd"]["ok"] += 1


def reset() -> None:
    """Forget every graph (``torch._dynamo.reset()``; the counters stay, as PyTorch's)."""
    _graphs.clear()

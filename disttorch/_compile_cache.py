"""What PyTorch's compiler would hold compiled, so that a program sees its events: for each
compiled function's code, the guards of the graphs compiled for it (each tensor input's
dtype, ``requires_grad`` and sizes, a size that changed between compiles marked dynamic as
PyTorch's automatic dynamic shapes mark it; grad mode; the inputs' nesting (list or tuple,
dict keys); each other input's type, and its value where it is a bool, ``None``, string or
number (a number that changed between compiles is dynamic, as PyTorch's) or a function or
class (its identity)), and ``counters``, the
compiler's event counts (``counters["stats"]["unique_graphs"]``, ``["calls_captured"]``,
``counters["frames"]["total"]``, ``counters["aot_autograd"]``). A call whose guards no graph passes "compiles": it is
counted, and the call is the graph; one that captured no operation makes no graph, and its
code is then skipped, as PyTorch's compiler skips a frame with nothing in it: a later call no
graph takes runs as plain Python, uncounted. Nothing is compiled: the code runs eagerly."""

from __future__ import annotations

import weakref
from collections import Counter, defaultdict
from typing import Any

__all__ = ["compiled", "counters", "record", "reset", "skipped"]

counters: defaultdict[str, Counter] = defaultdict(Counter)

#: code (a function's, a module's ``forward``'s) -> (guards, whether AOTAutograd made it) of its graphs
_graphs: weakref.WeakKeyDictionary[Any, list[tuple[tuple, Any]]] = weakref.WeakKeyDictionary()
#: code whose compile captured nothing
_skipped: weakref.WeakSet[Any] = weakref.WeakSet()

#: (grad mode, ((dtype, requires_grad, sizes with None where dynamic), ...), the inputs'
#: nesting, ((type, value with DYNAMIC where dynamic), ...) of the other inputs)
Guards = tuple
DYNAMIC = object()  # a number input that any number passes (an int but 0 and 1)


def _value_passes(guard: tuple, value: tuple) -> bool:
    if guard[0] is not value[0]:
        return False
    if guard[1:] == (DYNAMIC,):
        return guard[0] is not int or value[1] not in (0, 1)
    return guard[1:] == value[1:]


def _passes(guards: Guards, key: Guards) -> bool:
    """Whether a call with ``key`` passes a graph's ``guards`` (a dynamic size takes any
    size but 0 and 1, which PyTorch specialises)."""
    if guards[0] != key[0] or len(guards[1]) != len(key[1]) or guards[2] != key[2]:
        return False
    for (dtype, rg, sizes), (dtype2, rg2, sizes2) in zip(guards[1], key[1]):
        if dtype != dtype2 or rg != rg2 or len(sizes) != len(sizes2):
            return False
        if any(s is not None and s != t or s is None and t < 2 for s, t in zip(sizes, sizes2)):
            return False
    return all(_value_passes(g, v) for g, v in zip(guards[3], key[3]))


def compiled(code: Any, key: Guards) -> bool | None:
    """Whether the graph compiled for ``code`` that takes a call with guards ``key`` went
    through AOTAutograd; None if there is none."""
    return next((aot for guards, aot in _graphs.get(code, ()) if _passes(guards, key)), None)


def skipped(code: Any) -> bool:
    """Whether a compile of ``code`` captured nothing (its calls no graph takes run uncompiled)."""
    return code in _skipped


def record(code: Any, key: Guards, calls: int, aot: bool) -> None:
    """Count a compile of ``code`` for ``key`` that captured ``calls`` operations (``aot``:
    by a backend through AOTAutograd); sizes that differ from an earlier graph's of the same
    inputs become dynamic. No operation: no graph, and ``code`` is skipped from then on."""
    counters["frames"]["total"] += 1
    counters["frames"]["ok"] += 1
    if not calls:
        _skipped.add(code)
        return
    graphs = _graphs.setdefault(code, [])
    dynamic = [[False] * len(sizes) for _, _, sizes in key[1]]
    numbers = [False] * len(key[3])
    for old, _ in graphs:
        if (
            old[0] == key[0]
            and old[2] == key[2]
            and [(d, r, len(s)) for d, r, s in old[1]] == [(d, r, len(s)) for d, r, s in key[1]]
            and [v[0] for v in old[3]] == [v[0] for v in key[3]]
        ):
            for marks, (_, _, was), (_, _, now) in zip(dynamic, old[1], key[1]):
                for i, (a, b) in enumerate(zip(was, now)):
                    marks[i] = marks[i] or (a != b and b > 1)
            for i, (was, now) in enumerate(zip(old[3], key[3])):
                numbers[i] = numbers[i] or (now[0] in (int, float) and was[1:] != now[1:])
    tensors = tuple(
        (d, r, tuple(None if m else n for m, n in zip(marks, sizes)))
        for marks, (d, r, sizes) in zip(dynamic, key[1])
    )
    values = tuple((v[0], DYNAMIC) if m else v for m, v in zip(numbers, key[3]))
    guards = (key[0], tensors, key[2], values)
    graphs.append((guards, aot))
    counters["stats"]["calls_captured"] += calls
    counters["stats"]["unique_graphs"] += 1
    if aot:
        counters["aot_autograd"]["total"] += 1
        counters["aot_autograd"]["ok"] += 1


def reset() -> None:
    """Forget every graph and skipped code (``torch._dynamo.reset()``; the counters stay, as
    PyTorch's)."""
    _graphs.clear()
    _skipped.clear()

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
graph takes runs as plain Python, uncounted. ``torch.compile(dynamic=True)`` makes every size
(but 0 and 1) and number dynamic from the first compile, ``dynamic=False`` none ever;
``mark_dynamic``'s dims are dynamic from the first compile, ``mark_static``'s never. A code
with ``config.recompile_limit`` graphs that needs another runs eagerly from then on, after
PyTorch's warning (logged). Nothing is compiled: the code runs eagerly."""

from __future__ import annotations

import logging
import weakref
from collections import Counter, defaultdict
from typing import Any

__all__ = ["compiled", "counters", "give_up", "marks", "record", "reset", "skipped"]

log = logging.getLogger(__name__)


def recompile_limit() -> int:
    """``torch._dynamo.config.recompile_limit`` (``disttorch._dynamo`` installs its reader
    in this one's place; PyTorch's default until then)."""
    return 8


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


def marks(tensors: list) -> tuple:
    """Each tensor's dims marked dynamic (``mark_dynamic``) and static (``mark_static``)."""
    return tuple(
        (
            getattr(t, "_dynamo_dynamic_indices", frozenset()),
            getattr(t, "_dynamo_static_indices", frozenset()),
        )
        for t in tensors
    )


def give_up(code: Any) -> bool:
    """Whether ``code`` has as many graphs as ``config.recompile_limit`` allows; then the
    attempt is counted, PyTorch's warning logged, and ``code`` is skipped from then on (its
    calls no graph takes run eagerly, as PyTorch falls back to eager)."""
    limit = recompile_limit()
    if len(_graphs.get(code, ())) < limit:
        return False
    counters["frames"]["total"] += 1
    _skipped.add(code)
    log.warning(
        "torch._dynamo hit config.recompile_limit (%s)\n   function: %r (%s:%s)\n"
        'To log all recompilation reasons, use TORCH_LOGS="recompiles".\n'
        "To diagnose recompilation issues, see "
        "https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html",
        limit,
        code.co_name,
        code.co_filename,
        code.co_firstlineno,
    )
    return True


def record(
    code: Any, key: Guards, calls: int, aot: bool, dynamic: bool | None = None, marked: tuple = ()
) -> None:
    """Count a compile of ``code`` for ``key`` that captured ``calls`` operations (``aot``:
    by a backend through AOTAutograd). ``dynamic``: ``torch.compile``'s (``None``: sizes and
    numbers that differ from an earlier graph's of the same inputs become dynamic; ``True``:
    all are; ``False``: none), ``marked``: :func:`marks` of the tensors. No operation: no
    graph, and ``code`` is skipped from then on."""
    counters["frames"]["total"] += 1
    counters["frames"]["ok"] += 1
    if not calls:
        _skipped.add(code)
        return
    graphs = _graphs.setdefault(code, [])
    dynamic_marks = [
        [bool(dynamic) and n > 1 or i in (marked[k][0] if marked else ()) for i, n in enumerate(sizes)]
        for k, (_, _, sizes) in enumerate(key[1])
    ]
    numbers = [bool(dynamic) and v[0] in (int, float) and v[1:] not in ((0,), (1,)) for v in key[3]]
    for old, _ in graphs if dynamic is None else ():
        if (
            old[0] == key[0]
            and old[2] == key[2]
            and [(d, r, len(s)) for d, r, s in old[1]] == [(d, r, len(s)) for d, r, s in key[1]]
            and [v[0] for v in old[3]] == [v[0] for v in key[3]]
        ):
            for dims, (_, _, was), (_, _, now) in zip(dynamic_marks, old[1], key[1]):
                for i, (a, b) in enumerate(zip(was, now)):
                    dims[i] = dims[i] or (a != b and b > 1)
            for i, (was, now) in enumerate(zip(old[3], key[3])):
                numbers[i] = numbers[i] or (now[0] in (int, float) and was[1:] != now[1:])
    for dims, (_, static) in zip(dynamic_marks, marked):
        for i in static:
            if 0 <= i < len(dims):
                dims[i] = False
    tensors = tuple(
        (d, r, tuple(None if m else n for m, n in zip(dims, sizes)))
        for dims, (d, r, sizes) in zip(dynamic_marks, key[1])
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

"""``autograd.grad(..., is_grads_batched=True)`` (and a ``vjp_fn`` or a Jacobian-vector product
called under ``vmap`` with batched cotangents or tangents) as one backward pass.

The cotangents' leading dim becomes a ``vmap`` level (:mod:`._batched`): the engine walks the
graph once and each node's backward formula, written with tensor ops, runs on batched
gradients through the batching rules. A fused NumPy backward that has a batched form
(``autograd.fused_backward``'s ``batched``) takes the gradients' arrays with the batch in
front (:func:`_fused`). A node whose backward cannot take them (one that reads its
gradient's NumPy array, so that it returns an unbatched gradient or raises) runs once per
batch entry, and its results are stacked: the rest of the pass stays batched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import engine, grad_mode
from ..autograd.fused_backward import BATCHED_FUSED
from ..autograd.grad_reads import WRAPPED
from ._batch_rules import activate
from ._batched import Level, level_of, pop_level, push_level, wrap

__all__ = ["batched_grad", "batched_pass"]


def batched_grad(grad: Callable, outs: list, ins: list, gos: list, n: int, **options: Any) -> tuple:
    """``grad(outs, ins, gos, **options)`` for cotangents ``gos`` whose first dim (of size ``n``)
    is a batch: the gradients of ``ins``, each with that batch dim in front."""
    level = push_level(n, "error")
    outer = grad_mode.grads_batched[0]
    grad_mode.grads_batched[0] = True
    try:
        with batched_pass(level):
            result = grad(outs, ins, [wrap(g, level) for g in gos], **options)
    finally:
        grad_mode.grads_batched[0] = outer
        pop_level(level)
    return tuple(_unbatched(r, level) for r in result)


@contextmanager
def batched_pass(level: Level) -> Iterator[None]:
    """Backward passes run inside take gradients batched at the running vmap ``level`` (one
    pass for the batch; a node that cannot take them runs once per entry)."""
    activate()
    outer = engine.BACKWARD_CALLERS[-1] if engine.BACKWARD_CALLERS else engine._call_backward
    engine.BACKWARD_CALLERS.append(lambda node, grads: _call(node, grads, level, outer))
    before = grad_mode.tensor_backwards[0]
    grad_mode.tensor_backwards[0] = True  # backwards of tensor ops, not of the arrays forward kept
    try:
        yield
    finally:
        grad_mode.tensor_backwards[0] = before
        engine.BACKWARD_CALLERS.pop()


def _fused(batched: Callable, grads: tuple) -> Any:
    """A fused NumPy backward's gradients by its ``batched`` form (see
    ``autograd.fused_backward``): one call on the arrays of ``grads``, batched at one level
    (an unbatched gradient is broadcast to the batch)."""
    levels = {level_of(g) for g in grads if level_of(g) is not None}
    if len(levels) != 1:
        return NotImplemented  # (no batched gradient, only another subclass; or several levels)
    level = levels.pop()
    if any(level_of(g) is not None and type(g._bt_value) is not Tensor for g in grads):
        return NotImplemented  # nested levels: once per entry
    arrays = []
    for g in grads:
        if g is None or level_of(g) is level:
            arrays.append(None if g is None else g._bt_value._data)
        else:
            arrays.append(np.broadcast_to(g._data, (level.size, *g.shape)))
    out = batched(*arrays)
    return tuple(None if a is None else wrap(Tensor._make(a), level) for a in out)


BATCHED_FUSED.append(_fused)


def _inside(g: Any, fn: Callable[[Tensor], Any]) -> Any:
    """A batched gradient with ``fn`` applied to the tensor it wraps (see
    ``autograd.grad_reads.WRAPPED``)."""
    level = level_of(g)
    return NotImplemented if level is None else wrap(fn(g._bt_value), level)


WRAPPED.append(_inside)


def _unbatched(r: Tensor | None, level: Level) -> Tensor | None:
    """A gradient of the pass as a tensor with the batch dim in front."""
    if r is None:
        return None
    if level_of(r) is level:
        return r._bt_value
    return r.unsqueeze(0).expand(level.size, *r.shape).clone()  # the same for every entry


def _call(node: Any, grads: list, level: Level, call: Callable) -> tuple:
    """A node's backward on batched gradients, or else once per batch entry (stacked);
    ``call`` runs the backward (the caller of an enclosing batched pass, if any)."""
    if not any(level_of(g) is level for g in grads):
        return call(node, grads)
    try:
        out = call(node, grads)
    except Exception:  # a backward that reads the gradient's array: per entry (raising there if it must)
        out = None
    if out is not None and all(g is None or level_of(g) is level for g in out):
        return out
    return _per_entry(node, grads, level, call)


def _per_entry(node: Any, grads: list, level: Level, call: Callable) -> tuple:
    from ..ops.shape import stack

    if level.size == 0:  # no entries (the Jacobian of an empty output): one of zeros, for the shapes
        row = call(
            node, [g._bt_value.new_zeros(g._bt_value.shape[1:]) if level_of(g) is level else g for g in grads]
        )
        return tuple(None if r is None else wrap(r.unsqueeze(0)[:0], level) for r in row)
    rows = [
        call(node, [g._bt_value[i] if level_of(g) is level else g for g in grads]) for i in range(level.size)
    ]
    return tuple(
        None if rows[0][j] is None else wrap(stack([r[j] for r in rows]), level) for j in range(len(rows[0]))
    )

"""Gradients that PyTorch's backward formula computes from an op's inputs as well as from the
incoming gradient (``threshold_backward(grad, self)``, ``max_pool2d_with_indices_backward(grad,
self, ...)``, ``nll_loss_backward(grad, self, ...)``).

Under ``create_graph=True`` PyTorch's gradient then requires grad whenever such an input does,
even where its derivative w.r.t. that input is zero (a piecewise-linear op: ``relu``, pooling,
``abs``) or not defined at all. An op's backward that disttorch computes from constants (a mask,
the indices of the maxima) declares it with ``Function._grad_reads`` (on its class, or on one
node with :func:`reads_inputs`), and the engine passes the recorded gradients through
:func:`connect`: the same values, on a node whose edges lead to the op's inputs too, which gives
them what PyTorch's double backward gives:

- ``"zero"``: zeros (``autograd.grad(g, x)`` is 0, not an error);
- ``"undefined"``: nothing (``allow_unused=True`` gives None);
- ``"aten::<op>"``: PyTorch's ``derivative for aten::<op> is not implemented`` (except in a
  forward-mode pass, which reads the derivative w.r.t. the gradient only);
- ``"'<op>'"``: PyTorch's ``NotImplementedError`` of a backward op declared without a
  derivative of its own (``the derivative for '_cdist_backward' is not implemented.``), when
  differentiated w.r.t. the gradient too (the gradient's own history passes through the node).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import grad_mode
from .function import Function, _seq, gradient_edge
from .node_types import show_name

__all__ = ["connect", "reads_inputs"]


class _ReadsInputs(Function):
    """An op's gradient, as the result of its backward formula of the gradient and the op's
    inputs (see the module docstring); its name is PyTorch's double-backward node's."""

    _raw = True

    def name(self) -> str:
        return self.op_name.replace("Backward", "BackwardBackward", 1)

    @staticmethod
    def backward(ctx: Any, gg: Any) -> tuple:
        kind, n = ctx.kind, len(ctx.next_edges) - 1
        if kind.startswith("aten::") and not grad_mode.forward_mode_pass[0]:
            raise RuntimeError(f"derivative for {kind} is not implemented")
        if kind.startswith("'"):
            raise NotImplementedError(f"the derivative for {kind} is not implemented.")
        if kind == "zero":
            zeros = tuple(
                Tensor._make(np.zeros(m[0], dtype=m[1])) if m is not None else None
                for m in ctx._input_meta[1:]
            )
            return (gg, *zeros)
        return (gg,) + (None,) * n


def reads_inputs(out: Any, kind: str = "zero") -> Any:
    """``out`` (a tensor, or a tuple led by one), whose node's backward is declared to read the
    node's inputs (``kind``: see the module docstring), as PyTorch's op that one node of a
    composite stands for (``threshold`` as a ``where``)."""
    first = out[0] if isinstance(out, tuple) else out
    if isinstance(first, Tensor) and first.grad_fn is not None:
        first.grad_fn._grad_reads = kind
    return out


def connect(node: Function, grads: tuple) -> tuple:
    """``grads`` (the result of ``node``'s recorded backward, which declares ``_grad_reads``)
    with each plain tensor passed through a node that also leads to ``node``'s inputs."""
    inputs = [(e, m) for e, m in zip(node.next_edges, node._input_meta) if e is not None]
    if not inputs:
        return grads
    return tuple(_connected(g, node, inputs) for g in grads)


#: ``inside(g, fn)``: a wrapper gradient (``vmap``'s batched tensor, in a pass of batched
#: gradients) with ``fn`` applied to the tensor it wraps, or NotImplemented for anything else
#: (``func._batched_backward``, a layer above, sets it)
WRAPPED: list[Callable[[Any, Callable[[Tensor], Any]], Any]] = []


def _connected(g: Any, node: Function, inputs: list) -> Any:
    if type(g) is Tensor:
        return _through(g, node, inputs)
    if g is not None and WRAPPED:
        out = WRAPPED[0](g, lambda inner: _connected(inner, node, inputs))
        if out is not NotImplemented:
            return out
    return g


def _through(g: Tensor, node: Function, inputs: list) -> Tensor:
    ctx = _ReadsInputs.__new__(_ReadsInputs)
    own = gradient_edge(g) if g._rg else None
    ctx.next_edges = (own, *(e for e, _ in inputs))
    ctx.needs_input_grad = tuple(e is not None for e in ctx.next_edges)
    ctx._input_meta = ((g._data.shape, g._data.dtype) if g._rg else None, *(m for _, m in inputs))
    ctx._seq_nr = next(_seq)
    ctx.kind, ctx.op_name = node._grad_reads, node.name()
    show_name(ctx)
    return Tensor._make(g._data.copy(), ctx, 0)

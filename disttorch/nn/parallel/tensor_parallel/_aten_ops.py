"""The ATen operators PyTorch runs for one disttorch op, as ``CommDebugMode`` lists them.

PyTorch's CommDebugMode records every ATen operator by the module running it, with the
global shapes and placements of its DTensor arguments. disttorch's ops are Functions, not
ATen operators; here each op is named as the ATen operator(s) PyTorch runs for it, forward
and backward, with the arguments PyTorch passes them (``F.linear`` of a 2-D input is
``addmm(bias, input, weight.t())``; its backward two ``mm`` and a ``sum``). Ops without an
entry are named after their Function (``aten.<name>.default``); the layout Functions of
DTensor (redistribution, ``from_local``, ``to_local``) and the module-hook identities are
no ATen operators.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ...._tensor import Size
from ....distributed.tensor import Replicate, Shard

__all__ = ["ATenOp", "forward_ops", "backward_ops"]

#: (name, [(global shape, placements) of each DTensor argument], device mesh or None)
ATenOp = tuple[str, list[tuple[Size, tuple]], Any]

_LAYOUT = frozenset({"Redistribute", "SumGradients", "_FromLocal", "_ToLocal"})
_FORWARD = {
    "LinearFunction": None,  # below
    "Relu": "aten.relu.default",
    "Gelu": "aten.gelu.default",
    "Silu": "aten.silu.default",
    "Add": "aten.add.Tensor",
    "Sub": "aten.sub.Tensor",
    "Mul": "aten.mul.Tensor",
    "Div": "aten.div.Tensor",
    "Neg": "aten.neg.default",
    "Tanh": "aten.tanh.default",
    "Sigmoid": "aten.sigmoid.default",
    "Matmul": "aten.mm.default",
    "Bmm": "aten.bmm.default",
    "Softmax": "aten._softmax.default",
    "LogSoftmax": "aten._log_softmax.default",
    "LayerNormFn": "aten.native_layer_norm.default",
    "EmbeddingFunction": "aten.embedding.default",
    "Clone": "aten.clone.default",
    "Cast": "aten._to_copy.default",
}
#: backward ATen op of an op, with which of (grad, forward arguments..., output) it takes
_BACKWARD = {
    "Relu": ("aten.threshold_backward.default", ("grad", "out")),
    "Gelu": ("aten.gelu_backward.default", ("grad", 0)),
    "Silu": ("aten.silu_backward.default", ("grad", 0)),
    "Tanh": ("aten.tanh_backward.default", ("grad", "out")),
    "Sigmoid": ("aten.sigmoid_backward.default", ("grad", "out")),
    "Softmax": ("aten._softmax_backward_data.default", ("grad", "out")),
    "LogSoftmax": ("aten._log_softmax_backward_data.default", ("grad", "out")),
    "EmbeddingFunction": ("aten.embedding_dense_backward.default", ("grad", 1)),
    "Neg": ("aten.neg.default", ("grad",)),
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _spec(t: Any) -> tuple[Size, tuple] | None:
    """(global shape, placements) of a DTensor, None for anything else."""
    placements = getattr(t, "_placements", None)
    return None if placements is None else (Size(t._global_shape), placements)


def _grad_layout(placements: tuple) -> tuple:
    """A gradient's placements: the output's, a partial sum's gradient replicated."""
    return tuple(Replicate() if p.is_partial() else p for p in placements)


def _as_2d(placements: tuple, ndim: int) -> tuple:
    """Placements of a tensor of ``ndim`` dimensions viewed as a matrix (leading ones merged)."""
    return tuple(Shard(1 if p.dim == ndim - 1 else 0) if p.is_shard() else p for p in placements)


def _transposed(placements: tuple) -> tuple:
    return tuple(Shard(1 - p.dim) if p.is_shard() else p for p in placements)


def _mesh(args: tuple) -> Any:
    return next((a._mesh for a in args if hasattr(a, "_placements")), None)


def _linear(args: tuple, out: Any, backward: bool) -> list[ATenOp]:
    """``F.linear(x, w, b)``: ``addmm(b, x2d, w.t())`` (``mm`` without bias); backward
    ``mm(g, w)`` (x's gradient), ``mm(g.t(), x2d)`` (w's), ``sum(g, 0)`` (b's)."""
    x, w = args[0], args[1]
    b = args[2] if len(args) > 2 else None
    mesh = _mesh(args)
    if mesh is None:
        if not backward:
            return [("aten.addmm.default" if b is not None else "aten.mm.default", [], None)]
        needs = [t is not None and t.requires_grad for t in (x, w, b)]
        names = ["aten.mm.default", "aten.mm.default", "aten.sum.dim_IntList"]
        return [(name, [], None) for name, need in zip(names, needs) if need]
    shape = x._global_shape
    rows = math.prod(shape[:-1])
    x2 = (Size((rows, shape[-1])), _as_2d(x._placements, len(shape)))
    w_t = (Size(w._global_shape[::-1]), _transposed(w._placements))
    if not backward:
        specs = ([_spec(b)] if b is not None else []) + [x2, w_t]
        return [("aten.addmm.default" if b is not None else "aten.mm.default", specs, mesh)]
    g = _as_2d(_grad_layout(out._placements), len(shape))
    g2 = (Size((rows, w._global_shape[0])), g)
    ops: list[ATenOp] = []
    if x.requires_grad:
        ops.append(("aten.mm.default", [g2, _spec(w)], mesh))
    if w.requires_grad:
        ops.append(("aten.mm.default", [(Size(g2[0][::-1]), _transposed(g)), x2], mesh))
    if b is not None and b.requires_grad:
        ops.append(("aten.sum.dim_IntList", [g2], mesh))
    return ops


def _layer_norm_backward(args: tuple, out: Any, grad: Any, mesh: Any) -> list[ATenOp]:
    """``native_layer_norm_backward(grad, input, shape, mean, rstd, weight, bias, mask)``:
    ``mean`` and ``rstd`` are the input's shape with the normalised dimensions kept as 1."""
    x, weight, bias, ndim = args[0], args[1], args[2], args[3]
    shape = x._global_shape
    stats = (Size(shape[: len(shape) - ndim] + (1,) * ndim), x._placements)
    specs = [grad, _spec(x), stats, stats] + [s for s in (_spec(weight), _spec(bias)) if s is not None]
    return [("aten.native_layer_norm_backward.default", specs, mesh)]


def _reduction_name(cls_name: str, args: tuple) -> str:
    whole = len(args) < 2 or args[1] is None
    if cls_name == "Sum":
        return "aten.sum.default" if whole else "aten.sum.dim_IntList"
    return "aten.mean.default" if whole else "aten.mean.dim"


def forward_ops(cls: type, args: tuple, out: Any) -> list[ATenOp] | None:
    """The ATen operators op ``cls`` on ``args`` (giving ``out``) stands for; None for a
    Function that is no operator (layouts, module hooks)."""
    name = cls.__name__
    if name in _LAYOUT or getattr(cls, "_layout_preserving", False):
        return None
    if name == "LinearFunction":
        return _linear(args, out, backward=False)
    aten = _reduction_name(name, args) if name in ("Sum", "Mean") else _FORWARD.get(name)
    aten = aten or f"aten.{_snake(name)}.default"
    specs = [s for s in map(_spec, args) if s is not None]
    return [(aten, specs, _mesh(args))]


def backward_ops(cls: type, args: tuple, out: Any) -> list[ATenOp]:
    """The ATen operators the backward of op ``cls`` runs (best effort beyond the table)."""
    name = cls.__name__
    if name == "LinearFunction":
        return _linear(args, out, backward=True)
    mesh = _mesh(args)
    grad = (Size(out._global_shape), _grad_layout(out._placements)) if mesh is not None else None
    if name in ("Sum", "Mean"):
        return [("aten.expand.default", [grad] if grad else [], mesh)]
    if name == "LayerNormFn":
        if mesh is None or not hasattr(args[0], "_placements"):
            return [("aten.native_layer_norm_backward.default", [], mesh)]
        return _layer_norm_backward(args, out, grad, mesh)
    if name not in _BACKWARD:
        return []
    aten, inputs = _BACKWARD[name]
    if mesh is None:
        return [(aten, [], None)]
    specs = []
    for which in inputs:
        spec = grad if which == "grad" else _spec(out if which == "out" else args[which])
        if spec is not None:
            specs.append(spec)
    return [(aten, specs, mesh)]

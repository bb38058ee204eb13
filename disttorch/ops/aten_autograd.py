"""ATen operator calls on wrapper subclasses, with autograd recorded above the dispatch.

:func:`call` hands an operator to the ``__torch_dispatch__`` of its wrapper-subclass
arguments, with autograd off below it, and, when an input requires grad, gives the outputs
a node named as PyTorch's (``MmBackward0``), as PyTorch's autograd layer does above its
dispatcher. The derivatives are those of PyTorch's ``derivatives.yaml`` for the operators
listed here; a node's backward computes each input's gradient with ATen calls (which reach the subclass again, as in PyTorch: ``aten.t``
and ``aten.mm`` for ``mm``). Saved outputs are detached when recorded (``aten.detach``),
saved inputs are kept as they are. An operator without a derivative here records a node
whose backward says so."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._grad_flag import grad_enabled
from .._tensor import Tensor
from .._torch_function import DISPATCH_MODES, dispatch_args, handle_torch_dispatch
from ..autograd.function import Function, _seq, gradient_edge
from . import aten_impls  # noqa: F401  (registers the operators used below)

__all__ = ["call"]


def _aten() -> Any:
    from . import aten  # (the namespace is made on first use)

    return aten


def call(func: Any, *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)``: through ``__torch_dispatch__`` when an argument is a wrapper
    subclass (run below autograd), recording a node on its outputs when an input requires
    grad; a plain call otherwise."""
    if DISPATCH_MODES:
        return _to_mode(func, args, kwargs)
    wrapped = dispatch_args(args, kwargs)
    if not wrapped:
        return func(*args, **kwargs)
    enabled = grad_enabled[0]
    record = enabled and any(t._rg for t in _tensors(args))
    grad_enabled[0] = False
    try:
        out = handle_torch_dispatch(func, wrapped, args, kwargs)
    finally:
        grad_enabled[0] = enabled
    if record:
        _record(func, args, kwargs, out)
    return out


def _to_mode(func: Any, args: tuple, kwargs: dict) -> Any:
    """``func`` handed to the innermost dispatch mode, which is off while it runs (its own
    calls reach the modes below it, then the subclasses); autograd records what it runs."""
    mode = DISPATCH_MODES.pop()
    try:
        kinds = tuple(dict.fromkeys(type(a) for a in dispatch_args(args, kwargs)))
        return mode.__torch_dispatch__(func, kinds, args, kwargs)
    finally:
        DISPATCH_MODES.append(mode)


def _tensors(args: tuple) -> list[Tensor]:
    """The tensor arguments, directly or in a list (``aten.cat``'s)."""
    found = []
    for a in args:
        if isinstance(a, Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(x for x in a if isinstance(x, Tensor))
    return found


class _DispatchedBackward(Function):
    """The node of one operator call on wrapper subclasses (named as PyTorch's node)."""

    _jvp_from_backward = True

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        if ctx._rule is None:
            raise NotImplementedError(
                f"disttorch has no derivative of {ctx._func} for tensor subclasses that compute in "
                "__torch_dispatch__ (its inputs required grad)"
            )
        raw = ctx._rule(ctx, *grads)
        out = [raw[p] if s is None else raw[p][s] for p, s in ctx._slots]
        # broadcast inputs' gradients are summed back after the derivative, as PyTorch's engine does
        return tuple(g if g is None else _reduce(g, meta[0]) for g, meta in zip(out, ctx._input_meta))


def _needs(node: Any, i: int) -> bool:
    a = node._args[i] if i < len(node._args) else None
    return isinstance(a, Tensor) and a._rg


def _arg(node: Any, i: int, name: str, default: Any) -> Any:
    return node._args[i] if i < len(node._args) else node._kwargs.get(name, default)


def _reduce(g: Tensor, shape: Any) -> Tensor:
    """``g`` summed back to ``shape`` (undoing broadcasting), as PyTorch's ``sum_to``."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1]
    a = _aten()
    out = call(a.sum.dim_IntList, g, dims, True)
    return call(a.view.default, out, list(shape)) if lead else out


def _column_major(t: Tensor) -> bool:
    """Whether ``t`` is a transposed (column-major) matrix, such as a weight's ``t()``."""
    data = t._data
    return (
        isinstance(data, np.ndarray)
        and data.ndim == 2
        and data.flags.f_contiguous
        and not data.flags.c_contiguous
    )


def _mm(n: Any, g: Tensor) -> tuple:
    """PyTorch's ``mm_mat1_backward``/``mm_mat2_backward``: a column-major input gets its
    gradient computed transposed, so it has the input's layout."""
    a, (x, y) = _aten(), n._args[:2]
    gx = gy = None
    if _needs(n, 0):
        if _column_major(x):
            gx = call(a.t.default, call(a.mm.default, y, call(a.t.default, g)))
        else:
            gx = call(a.mm.default, g, call(a.t.default, y))
    if _needs(n, 1):
        if _column_major(y):
            gy = call(a.t.default, call(a.mm.default, call(a.t.default, g), x))
        else:
            gy = call(a.mm.default, call(a.t.default, x), g)
    return gx, gy


def _addmm(n: Any, g: Tensor) -> tuple:
    return (g if _needs(n, 0) else None, *_mm(_Shifted(n), g))


class _Shifted:
    """A node's view from its second argument on (``addmm``'s matrices as ``mm``'s)."""

    def __init__(self, node: Any) -> None:
        self._args, self._kwargs = node._args[1:], node._kwargs


def _bmm(n: Any, g: Tensor) -> tuple:
    a, (x, y) = _aten(), n._args[:2]
    gx = call(a.bmm.default, g, call(a.transpose.int, y, 1, 2)) if _needs(n, 0) else None
    gy = call(a.bmm.default, call(a.transpose.int, x, 1, 2), g) if _needs(n, 1) else None
    return gx, gy


def _sum_back(n: Any, g: Tensor, dims: list, keepdim: bool) -> Tensor:
    a, x = _aten(), n._args[0]
    if not keepdim:
        for d in sorted(d % max(x.dim(), 1) for d in dims):
            g = call(a.unsqueeze.default, g, d)
    return call(a.expand.default, g, list(x.shape))


def _sum(n: Any, g: Tensor) -> tuple:
    if len(n._args) < 2:
        return (_sum_back(n, g, list(range(n._args[0].dim())), True),)
    return (_sum_back(n, g, list(n._args[1]), _arg(n, 2, "keepdim", False)),)


def _mean(n: Any, g: Tensor) -> tuple:
    x = n._args[0]
    dims = list(range(x.dim())) if len(n._args) < 2 else list(n._args[1])
    count = 1
    for d in dims:
        count *= x.shape[d]
    (expanded,) = _sum(n, g)
    return (call(_aten().div.Scalar, expanded, count),)


def _add(sign: int) -> Callable:
    def rule(n: Any, g: Tensor) -> tuple:
        a = _aten()
        alpha = sign * _arg(n, 2, "alpha", 1)
        gx = g if _needs(n, 0) else None
        gy = None
        if _needs(n, 1):
            gy = g if alpha == 1 else call(a.neg.default, g) if alpha == -1 else call(a.mul.Scalar, g, alpha)
        return gx, gy

    return rule


def _rsub(n: Any, g: Tensor) -> tuple:
    alpha = _arg(n, 2, "alpha", 1)
    a = _aten()
    return (call(a.neg.default, g) if alpha == 1 else call(a.mul.Scalar, g, -alpha),)


def _mul(n: Any, g: Tensor) -> tuple:
    a, (x, y) = _aten(), n._args[:2]
    gx = call(a.mul.Tensor, g, y) if _needs(n, 0) else None
    gy = call(a.mul.Tensor, g, x) if _needs(n, 1) else None
    return gx, gy


def _div(n: Any, g: Tensor) -> tuple:
    a, (x, y) = _aten(), n._args[:2]
    gx = call(a.div.Tensor, g, y) if _needs(n, 0) else None
    gy = None
    if _needs(n, 1):
        ratio = call(a.div.Tensor, call(a.div.Tensor, x, y), y)
        gy = call(a.mul.Tensor, call(a.neg.default, g), ratio)
    return gx, gy


def _result(n: Any) -> Tensor:
    """The op's saved output, unpacked (PyTorch's unpacking of a saved output detaches it)."""
    return call(_aten().detach.default, n._result)


def _of_result(op: str, *extra: Any) -> Callable:
    """``op(grad, result, *extra)``: derivatives written with the op's (saved) output."""

    def rule(n: Any, g: Tensor) -> tuple:
        return (call(getattr(_aten(), op).default, g, _result(n), *extra),)

    return rule


def _softmax_rule(op: str) -> Callable:
    def rule(n: Any, g: Tensor) -> tuple:
        x, dim = n._args[:2]
        return (call(getattr(_aten(), op).default, g, _result(n), dim, x.dtype),)

    return rule


def _of_input(op: str) -> Callable:
    def rule(n: Any, g: Tensor) -> tuple:
        return (call(getattr(_aten(), op).default, g, n._args[0], **n._kwargs),)

    return rule


def _exp(n: Any, g: Tensor) -> tuple:
    return (call(_aten().mul.Tensor, g, _result(n)),)


def _pow(n: Any, g: Tensor) -> tuple:
    a, (x, e) = _aten(), n._args[:2]
    if e == 0:
        return (call(a.zeros_like.default, x),)
    return (call(a.mul.Tensor, g, call(a.mul.Scalar, call(a.pow.Tensor_Scalar, x, e - 1), e)),)


def _view(n: Any, g: Tensor) -> tuple:
    return (call(_aten().view.default, g, list(n._args[0].shape)),)


def _expand(n: Any, g: Tensor) -> tuple:
    return (_reduce(g, n._args[0].shape),)


def _unsqueeze(n: Any, g: Tensor) -> tuple:
    return (call(_aten().squeeze.dim, g, n._args[1]),)


def _squeeze_dim(n: Any, g: Tensor) -> tuple:
    x, d = n._args[:2]
    return (call(_aten().unsqueeze.default, g, d) if x.shape[d] == 1 else g,)


def _transpose(n: Any, g: Tensor) -> tuple:
    return (call(_aten().transpose.int, g, *n._args[1:3]),)


def _permute(n: Any, g: Tensor) -> tuple:
    dims = [d % len(n._args[1]) for d in n._args[1]]
    return (call(_aten().permute.default, g, [dims.index(i) for i in range(len(dims))]),)


def _t(n: Any, g: Tensor) -> tuple:
    return (call(_aten().t.default, g),)


def _neg(n: Any, g: Tensor) -> tuple:
    return (call(_aten().neg.default, g),)


def _clone(n: Any, g: Tensor) -> tuple:
    return (g,)


def _to_copy(n: Any, g: Tensor) -> tuple:
    return (call(_aten()._to_copy.default, g, dtype=n._args[0].dtype),)


def _select(n: Any, g: Tensor) -> tuple:
    x, d, i = n._args[:3]
    return (call(_aten().select_backward.default, g, list(x.shape), d, i),)


def _slice(n: Any, g: Tensor) -> tuple:
    x = n._args[0]
    d = _arg(n, 1, "dim", 0)
    start, end, step = _arg(n, 2, "start", None), _arg(n, 3, "end", None), _arg(n, 4, "step", 1)
    size = x.shape[d]
    start, end, _ = slice(start, end).indices(size)
    return (call(_aten().slice_backward.default, g, list(x.shape), d, start, end, step),)


def _cat(n: Any, g: Tensor) -> tuple:
    tensors, dim = n._args[0], _arg(n, 1, "dim", 0)
    out, offset = [], 0
    for t in tensors:
        size = t.shape[dim]
        out.append(call(_aten().slice.Tensor, g, dim, offset, offset + size) if t._rg else None)
        offset += size
    return (out,)


def _masked_fill(n: Any, g: Tensor) -> tuple:
    return (call(_aten().masked_fill.Scalar, g, n._args[1], 0) if _needs(n, 0) else None, None, None)


def _nll_loss(n: Any, g: Tensor, total_weight: Any = None) -> tuple:
    x, target, weight, reduction, ignore = n._args[:5]
    back = call(_aten().nll_loss_backward.default, g, x, target, weight, reduction, ignore, n._total_weight)
    return (back, None, None)


def _op(name: str, overload: str = "default") -> Any:
    return getattr(getattr(_aten(), name), overload)


def _log(n: Any, g: Tensor) -> tuple:
    return (call(_op("div", "Tensor"), g, n._args[0]),)


def _sqrt(n: Any, g: Tensor) -> tuple:
    return (call(_op("div", "Tensor"), g, call(_op("mul", "Tensor"), _result(n), 2)),)


def _rsqrt(n: Any, g: Tensor) -> tuple:
    cube = call(_op("pow", "Tensor_Scalar"), _result(n), 3)
    return (call(_op("mul", "Tensor"), call(_op("mul", "Scalar"), g, -0.5), cube),)


def _abs(n: Any, g: Tensor) -> tuple:
    return (call(_op("mul", "Tensor"), g, call(_op("sgn"), n._args[0])),)


def _sin(n: Any, g: Tensor) -> tuple:
    return (call(_op("mul", "Tensor"), g, call(_op("cos"), n._args[0])),)


def _cos(n: Any, g: Tensor) -> tuple:
    return (call(_op("mul", "Tensor"), g, call(_op("neg"), call(_op("sin"), n._args[0]))),)


def _mse_loss(n: Any, g: Tensor) -> tuple:
    x, target = n._args[:2]
    reduction = _arg(n, 2, "reduction", 1)
    gx = call(_op("mse_loss_backward"), g, x, target, reduction)
    gt = call(_op("neg"), gx) if _needs(n, 1) else None
    return gx if _needs(n, 0) else None, gt


def _stack(n: Any, g: Tensor) -> tuple:
    return (list(call(_op("unbind", "int"), g, _arg(n, 1, "dim", 0))),)


def _unbind(n: Any, *grads: Tensor) -> tuple:
    return (call(_op("stack"), list(grads), *n._args[1:2]),)


def _split(n: Any, *grads: Tensor) -> tuple:
    return (call(_op("cat"), list(grads), _arg(n, 2, "dim", 0)),)


def _where(n: Any, g: Tensor) -> tuple:
    c = n._args[0]
    zero = call(_op("zeros_like"), g)
    ga = call(_op("where", "self"), c, g, zero) if _needs(n, 1) else None
    gb = call(_op("where", "self"), c, zero, g) if _needs(n, 2) else None
    return None, ga, gb


def _index_select(n: Any, g: Tensor) -> tuple:
    x, dim, index = n._args[:3]
    return (call(_op("index_select_backward"), g, list(x.shape), dim, index), None, None)


def _embedding(n: Any, g: Tensor) -> tuple:
    weight, indices = n._args[:2]
    return (call(_op("embedding_dense_backward"), g, indices, weight.shape[0], -1, False), None)


def _layer_norm(n: Any, g: Tensor, *unused: Any) -> tuple:
    x, shape, weight, bias = n._args[:4]
    mask = [_needs(n, 0), _needs(n, 2), _needs(n, 3)]
    mean, rstd = n._stats
    back = call(_op("native_layer_norm_backward"), g, x, shape, mean, rstd, weight, bias, mask)
    return back[0], None, back[1], back[2], None


def _clamp(n: Any, g: Tensor) -> tuple:
    x = n._args[0]
    low, high = _arg(n, 1, "min", None), _arg(n, 2, "max", None)
    bounds = [call(_op("ge", "Scalar"), x, low)] if low is not None else []
    bounds += [call(_op("le", "Scalar"), x, high)] if high is not None else []
    keep = bounds[0] if len(bounds) == 1 else call(_op("logical_and"), *bounds)
    return (call(_op("where", "self"), keep, g, call(_op("zeros_like"), g)),)


#: operator (``packet.overload``) -> (PyTorch's node name, derivative, whether it saves its output)
_FORMULAS: dict[str, tuple[str, Callable, bool]] = {
    "t.default": ("TBackward0", _t, False),
    "mm.default": ("MmBackward0", _mm, False),
    "addmm.default": ("AddmmBackward0", _addmm, False),
    "bmm.default": ("BmmBackward0", _bmm, False),
    "relu.default": ("ReluBackward0", _of_result("threshold_backward", 0), True),
    "sum.default": ("SumBackward0", _sum, False),
    "sum.dim_IntList": ("SumBackward1", _sum, False),
    "mean.default": ("MeanBackward0", _mean, False),
    "mean.dim": ("MeanBackward1", _mean, False),
    "add.Tensor": ("AddBackward0", _add(1), False),
    "sub.Tensor": ("SubBackward0", _add(-1), False),
    "rsub.Scalar": ("RsubBackward1", _rsub, False),
    "mul.Tensor": ("MulBackward0", _mul, False),
    "div.Tensor": ("DivBackward0", _div, False),
    "neg.default": ("NegBackward0", _neg, False),
    "exp.default": ("ExpBackward0", _exp, True),
    "tanh.default": ("TanhBackward0", _of_result("tanh_backward"), True),
    "sigmoid.default": ("SigmoidBackward0", _of_result("sigmoid_backward"), True),
    "_softmax.default": ("SoftmaxBackward0", _softmax_rule("_softmax_backward_data"), True),
    "_log_softmax.default": ("LogSoftmaxBackward0", _softmax_rule("_log_softmax_backward_data"), True),
    "gelu.default": ("GeluBackward0", _of_input("gelu_backward"), False),
    "silu.default": ("SiluBackward0", _of_input("silu_backward"), False),
    "pow.Tensor_Scalar": ("PowBackward0", _pow, False),
    "view.default": ("ViewBackward0", _view, False),
    "_unsafe_view.default": ("UnsafeViewBackward0", _view, False),
    "expand.default": ("ExpandBackward0", _expand, False),
    "unsqueeze.default": ("UnsqueezeBackward0", _unsqueeze, False),
    "squeeze.dim": ("SqueezeBackward1", _squeeze_dim, False),
    "transpose.int": ("TransposeBackward0", _transpose, False),
    "permute.default": ("PermuteBackward0", _permute, False),
    "clone.default": ("CloneBackward0", _clone, False),
    "_to_copy.default": ("ToCopyBackward0", _to_copy, False),
    "select.int": ("SelectBackward0", _select, False),
    "slice.Tensor": ("SliceBackward0", _slice, False),
    "cat.default": ("CatBackward0", _cat, False),
    "nll_loss_forward.default": ("NllLossBackward0", _nll_loss, False),
    "masked_fill.Scalar": ("MaskedFillBackward0", _masked_fill, False),
    "log.default": ("LogBackward0", _log, False),
    "sqrt.default": ("SqrtBackward0", _sqrt, True),
    "rsqrt.default": ("RsqrtBackward0", _rsqrt, True),
    "abs.default": ("AbsBackward0", _abs, False),
    "sin.default": ("SinBackward0", _sin, False),
    "cos.default": ("CosBackward0", _cos, False),
    "mse_loss.default": ("MseLossBackward0", _mse_loss, False),
    "stack.default": ("StackBackward0", _stack, False),
    "unbind.int": ("UnbindBackward0", _unbind, False),
    "split.Tensor": ("SplitBackward0", _split, False),
    "where.self": ("WhereBackward0", _where, False),
    "index_select.default": ("IndexSelectBackward0", _index_select, False),
    "embedding.default": ("EmbeddingBackward0", _embedding, False),
    "native_layer_norm.default": ("NativeLayerNormBackward0", _layer_norm, False),
    "clamp.default": ("ClampBackward1", _clamp, False),
}
#: operators whose outputs never carry a gradient
_NON_DIFFERENTIABLE = frozenset(("detach", "ones_like", "zeros_like", "new_zeros", "new_ones", "new_empty"))


_NODE_CLASSES: dict[str, type] = {}  # node name -> its class (``type(t.grad_fn).__name__``)


def _record(func: Any, args: tuple, kwargs: dict, out: Any) -> None:
    """Give the floating outputs of ``func(*args, **kwargs)`` (inputs requiring grad) a node."""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", str(func))
    if name in _NON_DIFFERENTIABLE:
        return
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if not any(isinstance(o, Tensor) and o._data.dtype.kind in "fc" for o in outs):
        return
    key = str(func).removeprefix("aten.")
    node_name, rule, saves_result = _FORMULAS.get(
        key, (f"{name.title().replace('_', '')}Backward0", None, False)
    )
    kind = _NODE_CLASSES.get(node_name)
    if kind is None:
        kind = _NODE_CLASSES[node_name] = type(
            node_name, (_DispatchedBackward,), {"__module__": "torch.autograd"}
        )
    node = kind.__new__(kind)
    slots, inputs = [], []
    for p, a in enumerate(args):
        if isinstance(a, Tensor):
            slots.append((p, None))
            inputs.append(a)
        elif isinstance(a, (list, tuple)):
            for s, x in enumerate(a):
                if isinstance(x, Tensor):
                    slots.append((p, s))
                    inputs.append(x)
    node.next_edges = tuple(gradient_edge(t) if t._rg else None for t in inputs)
    node.needs_input_grad = tuple(t._rg for t in inputs)
    node._input_meta = tuple((t._data.shape, t._data.dtype) for t in inputs)
    node._seq_nr = next(_seq)
    node._slots, node._rule, node._func = slots, rule, func
    node._args, node._kwargs, node._node_name = args, kwargs, node_name
    if saves_result:
        node._result = call(_aten().detach.default, outs[0])
    if key == "nll_loss_forward.default":
        node._total_weight = outs[1]
    if key == "native_layer_norm.default":
        node._stats = outs[1:]
    node._n_outputs = len(outs)
    node._output_meta = [(o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None for o in outs]
    for i, o in enumerate(outs):
        if isinstance(o, Tensor) and o._data.dtype.kind in "fc":
            o.grad_fn, o._output_nr, o._rg = node, i, True

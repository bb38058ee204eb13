"""``vmap``'s batching rules for the matrix products: ``matmul`` and its fixed-rank forms
(``mm``, ``bmm``, ``mv``, ``dot``), ``linear``, the ``add*`` products, ``outer`` and
``einsum``. The batch becomes a leading batch dim of one matrix product (a 1-D operand is
made a matrix first); the ``add*`` forms are their definitions in batched ops.

An operand whose batch dims are broadcast copies (the inputs a transform inside ``vmap``
expanded, see ``_inputs``) gets its values from one matrix product over a single copy, as
the unbatched function computes them (a larger product may round differently); the
gradients still come from the batched product, one per copy (:func:`_from_one_copy`)."""

from __future__ import annotations

from collections.abc import Callable
from string import ascii_letters
from typing import Any

from .. import autograd
from .._tensor import Tensor
from ._batched import Level, level_of, wrap

__all__ = ["LINALG_FUNCTION_RULES", "LINALG_RULES"]


def _operand(x: Tensor, level: Level, vector_at: int, rank: int) -> Tensor:
    """``x`` as a real operand of a batched matrix product of logical ``rank``: a vector made a
    matrix (its size-1 dim at ``vector_at``), a batched value padded after its batch dim."""
    if level_of(x) is not level:
        return x.unsqueeze(vector_at) if x.dim() == 1 else x
    v = x._bt_value
    shape = tuple(x.shape)
    if len(shape) == 1:
        shape = (1, *shape) if vector_at == 0 else (*shape, 1)
    return v.reshape((level.size,) + (1,) * (rank - len(shape)) + shape)


def _one_copy(t: Tensor, keep: int) -> Tensor | None:
    """``t`` (a plain tensor) with its broadcast dims (stride 0, size > 1) among the first
    ``t.dim() - keep`` cut to size 1, or None when it has none."""
    if t is None or type(t) is not Tensor:
        return None
    strides, shape = t.stride(), t.shape
    dims = [d for d in range(t.dim() - keep) if strides[d] == 0 and shape[d] > 1]
    for d in dims:
        t = t.narrow(d, 0, 1)
    return t if dims else None


def _linear_values(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    from ..nn.functional import linear

    return linear(x, w, b)


def _rows_times(g: Tensor, m: Tensor) -> Tensor:
    """``g @ m`` for a matrix ``m``, as one product of ``g``'s rows (not one per leading index)."""
    return (g.reshape(-1, g.shape[-1]) @ m).reshape(*g.shape[:-1], m.shape[-1])


def _matmul_grads(g: Tensor, a: Tensor, b: Tensor, needs: tuple) -> tuple:
    ga = None
    if needs[0]:
        ga = (_rows_times(g, b.mT) if b.dim() == 2 else g @ b.mT).sum_to_size(a.shape)
    gb = (a.mT @ g).sum_to_size(b.shape) if needs[1] else None
    return ga, gb


def _linear_grads(g: Tensor, x: Tensor, w: Tensor, b: Tensor | None, needs: tuple) -> tuple:
    rows = g.reshape(-1, g.shape[-1])
    gx = _rows_times(g, w) if needs[0] else None
    gw = rows.mT @ x.reshape(-1, x.shape[-1]) if needs[1] else None
    gb = rows.sum(0) if b is not None and needs[2] else None
    return gx, gw, gb


def _matmul_values(a: Tensor, b: Tensor) -> Tensor:
    return a @ b  # (the operator, which a batched operand of an outer level dispatches)


#: product kind -> (its values, its gradients w.r.t. its operands)
_PRODUCTS = {"matmul": (_matmul_values, _matmul_grads), "linear": (_linear_values, _linear_grads)}


class _CopiesProduct(autograd.Function):
    """A matrix product whose operands hold broadcast copies: its values from one copy
    (expanded to ``shape``), its gradients those of the full product (one per copy)."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx: Any, kind: str, shape: tuple, copies: list, *operands: Tensor) -> Tensor:
        ctx.kind = kind
        ctx.save_for_backward(*operands)
        return _PRODUCTS[kind][0](*copies).expand(shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple:
        operands = ctx.saved_tensors
        return (None, None, None, *_PRODUCTS[ctx.kind][1](g, *operands, ctx.needs_input_grad[3:]))


def _from_one_copy(kind: str, operands: list, keeps: list[int], shape: tuple) -> Tensor:
    """The product ``kind`` of ``operands`` (result ``shape``), computed on one copy of the
    operands' broadcast dims (see the module docstring)."""
    values = _PRODUCTS[kind][0]
    if not all(t is None or type(t) is Tensor for t in operands):
        return values(*operands)
    copies = [_one_copy(t, k) for t, k in zip(operands, keeps)]
    if all(c is None for c in copies):
        return values(*operands)
    copies = [t if c is None else c for t, c in zip(operands, copies)]
    if autograd.is_grad_enabled() and any(t is not None and t.requires_grad for t in operands):
        return _CopiesProduct.apply(kind, shape, [c if c is None else c.detach() for c in copies], *operands)
    return values(*copies).expand(shape)


def _matmul_shape(a: Tensor, b: Tensor) -> tuple:
    from ..ops.mathfns import broadcast_shapes

    return (*broadcast_shapes(a.shape[:-2], b.shape[:-2]), a.shape[-2], b.shape[-1])


def matmul(a: Tensor, b: Tensor, level: Level) -> Tensor:
    """``a @ b`` (logical operands, at least one batched at ``level``) as a batched tensor."""
    ra, rb = len(a.shape), len(b.shape)
    if ra == 0 or rb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {ra}D and {rb}D")
    rank = max(ra, rb, 2)
    x, y = _operand(a, level, 0, rank), _operand(b, level, -1, rank)
    out = _from_one_copy("matmul", [x, y], [2, 2], _matmul_shape(x, y))
    if ra == 1:
        out = out.squeeze(-2)
    if rb == 1:
        out = out.squeeze(-1)
    return wrap(out, level)


def _matmul_rule(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    if kwargs or len(args) != 2:
        return NotImplemented
    a, b = args if func.__name__ != "__rmatmul__" else args[::-1]
    return matmul(a, b, level)


def _linear(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    x, weight = args[0], args[1] if len(args) > 1 else kwargs["weight"]
    bias = args[2] if len(args) > 2 else kwargs.get("bias")
    if level_of(weight) is not level and level_of(bias) is not level and level_of(x) is level:
        v = x._bt_value
        shape = (*v.shape[:-1], weight.shape[0])
        return wrap(_from_one_copy("linear", [v, weight, bias], [1, 2, 1], shape), level)
    out = x @ (weight.transpose(-1, -2) if weight.dim() > 1 else weight)
    return out if bias is None else out + bias


def _linear_grad(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``linear``'s backward node (``LinearGrad``) for a batched incoming gradient: the three
    products with the batch as a leading dim (a batched backward pass, ``is_grads_batched``)."""
    g, x, w, needs = args
    if level_of(g) is not level or level_of(x) is level or level_of(w) is level:
        return NotImplemented
    rows = g._bt_value.reshape(level.size, -1, g.shape[-1])
    gx = (rows @ w).reshape(level.size, *x.shape) if needs[0] else None
    gw = rows.mT @ x.reshape(-1, x.shape[-1]) if needs[1] else None
    gb = rows.sum(1) if needs[2] else None
    return tuple(None if t is None else wrap(t, level) for t in (gx, gw, gb))


def _scaled_sum(product: Tensor, base: Tensor, beta: Any, alpha: Any) -> Tensor:
    out = product if alpha == 1 else product * alpha
    if beta == 0:
        return out
    return out + (base if beta == 1 else base * beta)


def _add_product(reduce_batch: bool) -> Callable:
    """``addmm``, ``addmv``, ``baddbmm`` (``beta * input + alpha * m1 @ m2``), and ``addbmm``
    (summing the products over their batch, ``reduce_batch``)."""

    def rule(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
        if len(args) != 3 or set(kwargs) - {"beta", "alpha"}:
            return NotImplemented
        base, m1, m2 = args
        product = m1 @ m2
        if reduce_batch:
            product = product.sum(0)
        return _scaled_sum(product, base, kwargs.get("beta", 1), kwargs.get("alpha", 1))

    return rule


def _outer(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    if kwargs or len(args) != 2:
        return NotImplemented
    return args[0].unsqueeze(-1) * args[1]


def _einsum(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if kwargs or not isinstance(equation, str):
        return NotImplemented
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        return NotImplemented
    if not arrow:  # the implicit output: the letters used once, in order (broadcast dims first)
        once = sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1)
        rhs = ("..." if "..." in lhs else "") + "".join(once)
    letter = next(c for c in ascii_letters if c not in equation)
    terms = [letter + t if level_of(op) is level else t for t, op in zip(terms, operands)]
    values = [op._bt_value if level_of(op) is level else op for op in operands]
    return wrap(func(",".join(terms) + "->" + letter + rhs, *values), level)


LINALG_RULES: dict[str, Callable] = {
    **dict.fromkeys(("matmul", "mm", "bmm", "mv", "dot", "__matmul__", "__rmatmul__"), _matmul_rule),
    "linear": _linear,
    "addmm": _add_product(False),
    "addmv": _add_product(False),
    "baddbmm": _add_product(False),
    "addbmm": _add_product(True),
    "outer": _outer,
    "ger": _outer,
    "einsum": _einsum,
}

#: rules for autograd Functions applied to batched tensors, by class name
LINALG_FUNCTION_RULES: dict[str, Callable] = {
    "LinearGrad": _linear_grad,
    # a matrix product's backward (``Matmul.apply`` of batched gradients): the operator's rule
    "Matmul": lambda func, level, args, kwargs: args[0] @ args[1] if len(args) == 2 else NotImplemented,
}

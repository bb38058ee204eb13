"""Affine maps: ``linear`` (one fused Function: a single matrix product plus the bias),
``bilinear`` and ``grouped_mm``."""

from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from ...autograd.autocast_state import autocast_op
from ...autograd.function import Function, ShownNode
from ...autograd.saved_fields import operand_fields, saved
from ...kernels.reductions import column_sum
from ...kernels.threads import matmul as blas_matmul
from ...kernels.threads import matmuls
from ...ops.grouped_mm import _grouped_mm
from ...ops.linalg import check_addmm_dtypes
from ...ops.sparse_base import SparseBase

__all__ = ["linear", "bilinear", "grouped_mm"]


def _rows(a: Any) -> Any:
    """An array or tensor ``(*, n)`` as the matrix of its rows (``(0, n)`` and ``(m, 0)`` too,
    which ``reshape(-1, n)`` cannot tell apart when ``n`` is 0)."""
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def _linear_node(ndim: int, bias: bool) -> str:
    """PyTorch's node for a linear layer: addmm or mm for a 2-D input, else a reshape of
    their result (a squeeze for a 1-D input without bias)."""
    if ndim == 2:
        return "AddmmBackward0" if bias else "MmBackward0"
    if bias:
        return "ViewBackward0"
    return "SqueezeBackward4" if ndim == 1 else "UnsafeViewBackward0"


def _transposed_weight(ctx: Function) -> Tensor | None:
    """``weight.t()``, the second operand of PyTorch's product for a linear layer (None when
    not kept: the input needed no gradient)."""
    weight = saved(1).value(ctx)
    return None if weight is None else Tensor._make(weight._data.T)


def _input_geometry(ctx: Function) -> tuple:
    return ctx.operand_geometry[0]


def _weight_geometry(ctx: Function) -> tuple:
    return ctx.operand_geometry[1]


def _linear_fields(ctx: Function) -> dict:
    """What PyTorch's ``AddmmBackward0``/``MmBackward0`` for a 2-D input saves."""
    name = ctx.name()
    if name == "AddmmBackward0":
        return {
            "alpha": lambda ctx: 1,
            "beta": lambda ctx: 1,
            **operand_fields("mat1", saved(0), _input_geometry),
            **operand_fields("mat2", _transposed_weight, _weight_geometry),
        }
    if name == "MmBackward0":
        return {
            **operand_fields("self", saved(0), _input_geometry),
            **operand_fields("mat2", _transposed_weight, _weight_geometry),
        }
    return {}


class LinearFunction(Function):
    """``y = x @ W.T + b`` over the last dim of ``x``; leading dims are flattened into one
    matrix product. Backward: ``dx = g @ W``, ``dW = g.T @ x``, ``db = g.sum(leading)``,
    computed by the node ``LinearGrad`` (differentiable again under ``create_graph=True``)."""

    _raw = True
    _blas = True  # float16 computed in float32 (NumPy has no float16 BLAS)
    _backward_saves = _linear_fields
    _profiled_as = "aten::linear"
    _kept_transposed = (1,)  # PyTorch's addmm/mm keeps W.t()

    @staticmethod
    def forward(ctx, x, w, b):
        xa, wa = x._data, w._data
        if xa.ndim == 0 or xa.shape[-1] != wa.shape[1]:
            rows = xa.size // xa.shape[-1] if xa.ndim and xa.shape[-1] else 1
            cols = xa.shape[-1] if xa.ndim else 1
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({rows}x{cols} and {wa.shape[1]}x{wa.shape[0]})"
            )
        bias = None if b is None else b._data  # (added by each thread to its part of the product)
        if xa.ndim == 2:
            out = blas_matmul(xa, wa.T, bias=bias)
        else:
            out = blas_matmul(_rows(xa), wa.T, bias=bias).reshape(xa.shape[:-1] + wa.shape[:1])
        # as PyTorch's addmm/mm: the input only for the weight's gradient, the weight only for
        # the input's (so changing the other in place before backward is no error)
        need_x, need_w = ctx.needs_input_grad[:2] or (True, True)  # (nothing recorded: no matter)
        ctx.save_for_backward(x if need_w else None, w if need_x else None)
        ctx.operand_geometry = (  # the product's operands: sizes, and strides where one needs a gradient
            (xa.shape, x.stride() if need_x else ()),
            (wa.shape[::-1], w.stride()[::-1] if need_w else ()),
        )
        ctx._node_name = _linear_node(xa.ndim, b is not None)
        ctx.input_ndim = xa.ndim
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx._checked_saved()  # each kept only where the other's gradient reads it
        return LinearGrad.apply(g, x, w, ctx.needs_input_grad)

    @property
    def next_functions(self) -> tuple:
        """PyTorch's graph of the layer: ``addmm(bias, input, weight.t())`` (``mm`` without
        bias), for other than 2-D input over a view of the input and under a view of the
        product (an unsqueeze and a squeeze for a 1-D input without bias)."""
        edges = super().next_functions
        x, w = (e if e[0] is not None else None for e in edges[:2])
        bias = edges[2:]
        product = (*bias, x, (ShownNode("TBackward0", w), 0) if w is not None else None)
        ndim = getattr(self, "input_ndim", 2)
        if ndim == 2:
            return tuple(e or (None, 0) for e in product)
        if x is not None:
            flat = "UnsqueezeBackward0" if ndim == 1 and not bias else "ViewBackward0"
            product = (*bias, (ShownNode(flat, x), 0), product[-1])
        return ((ShownNode("AddmmBackward0" if bias else "MmBackward0", *product), 0),)


class LinearGrad(Function):
    """The gradients of ``linear`` as one node: ``dx = g @ W``, ``dW = g.T @ x`` and
    ``db = g.sum(leading)`` (three BLAS calls; ``None`` where ``needs`` says no). Its own
    backward, reached when ``create_graph=True`` records it, is the derivative of those
    products with respect to ``g``, ``x`` and ``W``, written as tensor ops."""

    _raw = True
    _blas = True

    @staticmethod
    def forward(ctx, g, x, w, needs):
        need_x, need_w, need_b = needs
        ga = _rows(g._data)
        ctx.save_for_backward(g, x, w)
        ctx.set_materialize_grads(False)  # an unused gradient stays None, not zeros of shape ()
        products = {"x": (ga, w._data)} if need_x else {}
        if need_w:
            products["w"] = (ga.T, _rows(x._data))
        bias: list = []  # (summed by this thread while the op's other threads finish the products)
        meanwhile = (lambda: bias.append(column_sum(ga))) if need_b else None
        grads = dict(zip(products, matmuls(list(products.values()), meanwhile=meanwhile)))  # side by side
        gx = grads["x"].reshape(g.shape[:-1] + w.shape[1:]) if need_x else None
        return gx, grads.get("w"), bias[0] if need_b else None

    @staticmethod
    def backward(ctx, ggx, ggw, ggb):
        g, x, w = ctx._checked_saved()
        need_g, need_x, need_w = ctx.needs_input_grad[:3]
        g2 = _rows(g)  # x was kept only when the weight needed a gradient (then ggw may exist)
        ggx2 = _rows(ggx) if ggx is not None else None
        dg = None
        if need_g:  # d<ggx, g W> + d<ggw, g.T x> + d<ggb, sum g>
            terms = [
                t
                for t in (
                    ggx2.matmul(w.t()) if ggx2 is not None else None,
                    _rows(x).matmul(ggw.t()) if ggw is not None else None,
                    ggb.expand(g2.shape) if ggb is not None else None,
                )
                if t is not None
            ]
            dg = sum(terms[1:], terms[0]).reshape(g.shape) if terms else None
        dx = g2.matmul(ggw).reshape(x.shape) if need_x and ggw is not None else None
        dw = g2.t().matmul(ggx2) if need_w and ggx2 is not None else None
        return dg, dx, dw, None


@autocast_op("lower")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""Apply :math:`y = xA^T + b`.

    Args:
        input: ``(*, in_features)``.
        weight: ``(out_features, in_features)``.
        bias: ``(out_features)`` or ``None``.

    Returns:
        ``(*, out_features)``.
    """
    if weight._data.ndim == 1 or isinstance(input, SparseBase):
        # PyTorch accepts a 1-D weight (a dot product over the last dim) and a sparse input
        out = input.matmul(weight if weight._data.ndim == 1 else weight.t())
        return out + bias if bias is not None else out
    if weight._data.dtype.kind == "c":  # complex: through matmul, whose gradients conjugate
        out = input.matmul(weight.mT)
        return out + bias if bias is not None else out
    check_addmm_dtypes(input._data.dtype, weight._data.dtype, None if bias is None else bias._data.dtype)
    return LinearFunction.apply(input, weight, bias)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""Apply :math:`y = x_1^T A x_2 + b` for every leading index.

    Args:
        input1: ``(*, in1_features)``.
        input2: ``(*, in2_features)``.
        weight: ``(out_features, in1_features, in2_features)``.
        bias: ``(out_features)`` or ``None``.
    """
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2:
        raise RuntimeError(
            f"bilinear(): input sizes ({input1.shape[-1]}, {input2.shape[-1]}) do "
            f"not match weight sizes ({in1}, {in2})"
        )
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got "
            f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}"
        )
    # x1 @ A_o for every output o in one product: (*, in1) @ (in1, out*in2)
    mixed = input1.matmul(weight.permute(1, 0, 2).reshape(in1, out_f * in2))
    out = (mixed.reshape(*input1.shape[:-1], out_f, in2) * input2.unsqueeze(-2)).sum(-1)
    return out + bias if bias is not None else out


def grouped_mm(
    mat_a: Tensor,
    mat_b: Tensor,
    *,
    offs: Tensor | None = None,
    bias: Tensor | None = None,
    out_dtype: Any = None,
) -> Tensor:
    """One matrix product per group of rows or columns cut by ``offs`` (``torch._grouped_mm``)."""
    return _grouped_mm(mat_a, mat_b, offs=offs, bias=bias, out_dtype=out_dtype)

"""ATen operators with no disttorch function of their own name, run on plain tensors.

A wrapper subclass's ``__torch_dispatch__`` is handed PyTorch's operators
(``aten._softmax.default``, ``aten.threshold_backward.default`` in backward, see
:mod:`.aten_dispatch`) and calls them on its inner tensors; each is registered here under
its qualified name and computed with disttorch's public ops."""

from __future__ import annotations

import math
from typing import Any

from .. import _creation
from .._tensor import Tensor
from . import linalg_functions
from .op_namespace import REGISTERED

__all__: list[str] = []


def _to_copy(self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None, **_: Any) -> Tensor:
    """``aten::_to_copy``: a copy, in ``dtype`` when given (disttorch tensors are on the CPU)."""
    return self.to(dtype=dtype or self.dtype, copy=True)


def _softmax(self: Tensor, dim: int, half_to_float: bool = False) -> Tensor:
    return self.softmax(dim)


def _log_softmax(self: Tensor, dim: int, half_to_float: bool = False) -> Tensor:
    return self.log_softmax(dim)


def _softmax_backward_data(grad: Tensor, output: Tensor, dim: int, input_dtype: Any = None) -> Tensor:
    return output * (grad - (grad * output).sum(dim, keepdim=True))


def _log_softmax_backward_data(grad: Tensor, output: Tensor, dim: int, input_dtype: Any = None) -> Tensor:
    return grad - output.exp() * grad.sum(dim, keepdim=True)


def threshold_backward(grad: Tensor, self: Tensor, threshold: float) -> Tensor:
    return grad.masked_fill(self <= threshold, 0)


def tanh_backward(grad: Tensor, output: Tensor) -> Tensor:
    return grad * (1 - output * output)


def sigmoid_backward(grad: Tensor, output: Tensor) -> Tensor:
    return grad * output * (1 - output)


def gelu_backward(grad: Tensor, self: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        inner = k * (self + 0.044715 * self**3)
        t = inner.tanh()
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * k * (1 + 3 * 0.044715 * self * self))
    cdf = 0.5 * (1 + (self / math.sqrt(2)).erf())
    pdf = (-0.5 * self * self).exp() / math.sqrt(2 * math.pi)
    return grad * (cdf + self * pdf)


def silu(self: Tensor) -> Tensor:
    return self * self.sigmoid()


def silu_backward(grad: Tensor, self: Tensor) -> Tensor:
    s = self.sigmoid()
    return grad * s * (1 + self * (1 - s))


def select_backward(grad: Tensor, input_sizes: list, dim: int, index: int) -> Tensor:
    out = _creation.zeros(list(input_sizes), dtype=grad.dtype)
    out.select(dim, index).copy_(grad)
    return out


def slice_backward(grad: Tensor, input_sizes: list, dim: int, start: int, end: int, step: int) -> Tensor:
    out = _creation.zeros(list(input_sizes), dtype=grad.dtype)
    key = (slice(None),) * (dim % len(input_sizes)) + (slice(start, end, step),)
    out[key] = grad
    return out


def native_layer_norm(
    input: Tensor, normalized_shape: list, weight: Tensor | None, bias: Tensor | None, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    """``aten::native_layer_norm``: the output, and the mean and reciprocal standard
    deviation of each normalised row (kept as size-1 dims)."""
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    mean = input.mean(dims, keepdim=True)
    rstd = (input.var(dims, correction=0, keepdim=True) + eps).rsqrt()
    out = (input - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def linalg_vector_norm(
    self: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    return linalg_functions.vector_norm(self, ord, dim, keepdim, dtype=dtype)


def rsub(self: Tensor, other: Any, alpha: float = 1) -> Tensor:
    """``aten::rsub``: ``other - alpha * self``."""
    return other - (self if alpha == 1 else alpha * self)


def nll_loss_backward(
    grad: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
    total_weight: Tensor,
) -> Tensor:
    """``aten::nll_loss_backward``: the loss's gradient with respect to the log-probabilities."""
    kept = target != ignore_index
    scale = kept.to(self.dtype) if weight is None else weight[target.clamp(min=0)] * kept
    if reduction == 1:  # (ATen's reduction enum: none, mean, sum)
        scale = scale / total_weight
    rows = _creation.zeros(list(self.shape), dtype=self.dtype)
    index = target.clamp(min=0).unsqueeze(1 if self.dim() > 1 else 0)
    rows.scatter_(1 if self.dim() > 1 else 0, index, -(scale * grad).unsqueeze(1 if self.dim() > 1 else 0))
    return rows


def mse_loss_backward(grad: Tensor, self: Tensor, target: Tensor, reduction: int) -> Tensor:
    """``aten::mse_loss_backward``: ``2 (self - target) grad``, over the count for a mean."""
    scale = 2.0 / self.numel() if reduction == 1 else 2.0
    return (self - target) * grad * scale


def index_select_backward(grad: Tensor, input_sizes: list, dim: int, index: Tensor) -> Tensor:
    return _creation.zeros(list(input_sizes), dtype=grad.dtype).index_add(dim, index, grad)


def embedding_dense_backward(
    grad: Tensor, indices: Tensor, num_weights: int, padding_idx: int, scale_grad_by_freq: bool
) -> Tensor:
    """``aten::embedding_dense_backward``: each row's gradients summed into its table row."""
    rows = grad.reshape(-1, grad.shape[-1])
    out = _creation.zeros([num_weights, grad.shape[-1]], dtype=grad.dtype)
    return out.index_add(0, indices.reshape(-1), rows)


def native_layer_norm_backward(
    grad: Tensor,
    input: Tensor,
    normalized_shape: list,
    mean: Tensor,
    rstd: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    output_mask: list,
) -> tuple:
    """``aten::native_layer_norm_backward``: the gradients of the input, weight and bias
    (None where ``output_mask`` says not wanted)."""
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    lead = list(range(input.dim() - len(normalized_shape)))
    xhat = (input - mean) * rstd
    g = grad if weight is None else grad * weight
    n = 1
    for s in normalized_shape:
        n *= s
    gx = rstd * (g - g.sum(dims, keepdim=True) / n - xhat * (g * xhat).sum(dims, keepdim=True) / n)
    gw = (grad * xhat).sum(lead) if weight is not None else None
    gb = grad.sum(lead) if bias is not None else None
    return tuple(v if want else None for v, want in zip((gx, gw, gb), output_mask))


def where(condition: Tensor, self: Any, other: Any) -> Tensor:
    from . import elementwise

    return elementwise.where(condition, self, other)


def _like(fill: Any) -> Any:
    def like(self: Tensor, *args: Any, dtype: Any = None, pin_memory: bool = False, **options: Any) -> Tensor:
        return fill(self, *args, dtype=dtype)

    return like


REGISTERED.update(
    {
        f"aten::{fn.__name__}": fn
        for fn in (
            _to_copy,
            _softmax,
            _log_softmax,
            _softmax_backward_data,
            _log_softmax_backward_data,
            threshold_backward,
            tanh_backward,
            sigmoid_backward,
            gelu_backward,
            silu,
            silu_backward,
            select_backward,
            slice_backward,
            native_layer_norm,
            linalg_vector_norm,
            rsub,
            nll_loss_backward,
            where,
            mse_loss_backward,
            index_select_backward,
            embedding_dense_backward,
            native_layer_norm_backward,
        )
    }
)
REGISTERED["aten::_unsafe_view"] = Tensor.view

REGISTERED.update(
    {
        f"aten::{name}_like": _like(getattr(_creation, f"{name}_like"))
        for name in ("ones", "zeros", "empty", "full")
    }
)

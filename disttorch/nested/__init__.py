"""``torch.nested``: batches of tensors of different sizes.

``nested_tensor([a, b])`` (copies, a leaf), ``as_nested_tensor([a, b])`` (gradients flow
back to ``a`` and ``b``), ``nested_tensor_from_jagged(values, offsets)``, ``narrow``,
``masked_select`` and ``to_padded_tensor``; ``layout=torch.jagged`` for one ragged dim
(PyTorch's recommended layout), ``torch.strided`` (the default) for any number. The
constituents are ordinary tensors (see :mod:`disttorch.nested._nested_tensor`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import _dtype, _layout
from .._tensor import Tensor, _check_device
from ._nested_tensor import NestedTensor

__all__ = [
    "as_nested_tensor",
    "masked_select",
    "narrow",
    "nested_tensor",
    "nested_tensor_from_jagged",
    "to_padded_tensor",
]


def _layout_arg(layout: Any) -> Any:
    layout = _layout.strided if layout is None else layout
    if layout not in (_layout.strided, _layout.jagged):
        raise RuntimeError(f"Specified layout is unsupported for nested tensors: {layout}")
    return layout


def nested_tensor(
    tensor_list: Sequence[Any],
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> NestedTensor:
    """A nested tensor (a leaf) of copies of ``tensor_list``'s tensors (or nested lists of
    numbers); ``layout=torch.jagged`` allows a single ragged dim."""
    from .._creation import tensor

    if device is not None:
        _check_device(device)
    if isinstance(tensor_list, Tensor) or not isinstance(tensor_list, (list, tuple)):
        raise TypeError(f"nested_tensor(): expected a list of tensors, got {type(tensor_list).__name__}")
    parts = []
    for t in tensor_list:
        t = t.detach() if isinstance(t, Tensor) else tensor(t)
        parts.append(Tensor._make(np.array(t._data, dtype=None if dtype is None else _dtype.to_numpy(dtype))))
    if requires_grad:
        for p in parts:
            p.requires_grad_(True)
    return NestedTensor._build(parts, _layout_arg(layout))


def as_nested_tensor(ts: Any, dtype: Any = None, device: Any = None, layout: Any = None) -> NestedTensor:
    """A nested tensor of ``ts`` (a list of tensors, or a tensor whose dim 0 is the batch)
    that stays in the autograd graph: gradients flow back to ``ts``."""
    if device is not None:
        _check_device(device)
    if isinstance(ts, NestedTensor):
        return ts if dtype is None else ts.to(dtype)
    if isinstance(ts, Tensor):
        parts = list(ts.unbind(0))
    elif isinstance(ts, (list, tuple)) and all(isinstance(t, Tensor) for t in ts):
        parts = [t.clone() for t in ts]
    else:
        raise TypeError("as_nested_tensor(): expected a tensor or a list/tuple of tensors")
    if dtype is not None:
        parts = [p.to(dtype) for p in parts]
    return NestedTensor._build(parts, _layout_arg(layout))


def nested_tensor_from_jagged(
    values: Tensor,
    offsets: Tensor | None = None,
    lengths: Tensor | None = None,
    jagged_dim: int | None = None,
    min_seqlen: int | None = None,
    max_seqlen: int | None = None,
) -> NestedTensor:
    """A jagged nested tensor over ``values`` ``(sum of lengths, *rest)``: constituent ``i`` is
    ``values[offsets[i]:offsets[i] + lengths[i]]`` (``lengths`` default: the offsets'
    differences) along dim ``jagged_dim - 1`` (default 1 - 1 = 0); views of ``values``."""
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): At least one of offsets or lengths is required.")
        offsets = Tensor._make(np.concatenate([[0], np.cumsum(lengths._data)]).astype(np.int64))
    off = np.asarray(offsets._data, dtype=np.int64)
    lens = np.diff(off) if lengths is None else np.asarray(lengths._data, dtype=np.int64)
    if off.ndim != 1 or len(off) < 2:
        raise ValueError(
            f"nested_tensor_from_jagged(): offsets must be 1-D with at least 2 entries, got {off.shape}"
        )
    dim = 0 if jagged_dim is None else jagged_dim - 1
    parts = [values.narrow(dim, int(o), int(n)) for o, n in zip(off[:-1], lens)]
    return NestedTensor._build(parts, _layout.jagged, dim + 1)


def narrow(tensor: Tensor, dim: int, start: Any, length: Any, layout: Any = _layout.strided) -> NestedTensor:
    """A nested tensor of ``tensor[i]`` narrowed along ``dim`` (a non-batch dim) from
    ``start[i]`` for ``length[i]`` elements; ``start``/``length`` are ints or, for the jagged
    layout, one entry per batch element."""
    layout = _layout_arg(layout)
    if isinstance(tensor, NestedTensor):
        raise RuntimeError("narrow(): expected a dense tensor whose dim 0 is the batch")
    if layout is _layout.strided and not (isinstance(start, int) and isinstance(length, int)):
        raise RuntimeError("start and length must be integers for the strided layout NT impl")
    if not 1 <= dim % tensor.dim() < tensor.dim():
        raise RuntimeError(f"narrow(): dim must be a non-batch dim of the {tensor.dim()}-d tensor, got {dim}")
    b = tensor.shape[0]
    starts = np.broadcast_to(np.asarray(start._data if isinstance(start, Tensor) else start), (b,))
    lengths = np.broadcast_to(np.asarray(length._data if isinstance(length, Tensor) else length), (b,))
    d = dim % tensor.dim() - 1
    parts = [row.narrow(d, int(s), int(n)) for row, s, n in zip(tensor.unbind(0), starts, lengths)]
    return NestedTensor._build(parts, layout, d + 1)


def masked_select(tensor: Tensor, mask: Tensor) -> NestedTensor:
    """A jagged nested tensor: for every row of ``tensor`` (its last dim), the elements where
    ``mask`` is True (rows of all leading dims, flattened)."""
    if isinstance(tensor, NestedTensor) or tensor.dim() == 0:
        raise RuntimeError("masked_select(): expected a dense tensor of at least one dim")
    if not isinstance(mask, Tensor) or mask.dtype != _dtype.bool or tuple(mask.shape) != tuple(tensor.shape):
        raise RuntimeError(
            f"masked_select(): mask must be a bool tensor of the tensor's shape {list(tensor.shape)}, got "
            f"{getattr(mask, 'dtype', type(mask).__name__)} of shape {list(getattr(mask, 'shape', ()))}"
        )
    rows = tensor.reshape(-1, tensor.shape[-1])
    keep = mask._data.reshape(-1, tensor.shape[-1])
    counts = keep.sum(1)
    values = rows[Tensor._make(keep)]
    offsets = Tensor._make(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))
    return nested_tensor_from_jagged(values, offsets)


def to_padded_tensor(input: NestedTensor, padding: float, output_size: Sequence[int] | None = None) -> Tensor:
    """A dense tensor ``(B, max sizes...)`` holding each constituent in its leading corner
    and ``padding`` elsewhere; ``output_size`` (each entry at least the padded size) makes it
    larger. Differentiable: the gradient of each constituent is its corner."""
    from ..nn.functional.padding import pad
    from ..ops.shape import cat, stack

    if not isinstance(input, NestedTensor):
        raise RuntimeError(f"to_padded_tensor(): expected a nested tensor, got {type(input).__name__}")
    parts = input._parts
    full = np.max(np.array([p._data.shape for p in parts], dtype=np.int64).reshape(len(parts), -1), axis=0)
    shape = (len(parts), *full.tolist())
    if output_size is not None:
        output_size = tuple(int(s) for s in output_size)
        if len(output_size) != len(shape) or any(o < s for o, s in zip(output_size, shape)):
            raise RuntimeError(
                "Value in output_size is less than NestedTensor padded size. Truncation is not supported. "
                f"(padded size {list(shape)}, output_size {list(output_size)})"
            )
        shape = output_size
    rows = []
    for p in parts:
        widths = [w for d in reversed(range(p.dim())) for w in (0, shape[d + 1] - p.shape[d])]
        rows.append(pad(p, widths, value=float(padding)) if any(widths) else p)
    out = stack(rows, 0)
    if shape[0] > len(parts):
        from .._creation import full as full_tensor

        out = cat([out, full_tensor((shape[0] - len(parts), *shape[1:]), float(padding), dtype=out.dtype)], 0)
    return out

"""PyTorch-style printing of tensors: ``tensor([[1., 2.]], requires_grad=True)``."""
from __future__ import annotations

import numpy as np

from . import _dtype

_DEFAULT_SHOWN = {"float32", "int64", "bool"}


def _format_array(arr: np.ndarray) -> str:
    if arr.size == 0:
        return "[]" if arr.ndim <= 1 else np.array2string(arr, separator=", ")
    kw: dict = {"separator": ", ", "threshold": 1000, "edgeitems": 3, "max_line_width": 75}
    if arr.dtype.kind == "f":
        finite = arr[np.isfinite(arr)]
        if finite.size and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e8:
            kw["formatter"] = {"float_kind": lambda v: _integral(v)}
        else:
            big = finite.size and (np.abs(finite).max() >= 1e8 or
                                   (np.abs(finite[finite != 0]).min() < 1e-4 if np.any(finite != 0) else False))
            kw["formatter"] = {"float_kind": (lambda v: f"{v:.4e}") if big else (lambda v: f"{v:.4f}")}
    elif arr.dtype.kind == "b":
        kw["formatter"] = {"bool": lambda v: "True" if v else "False"}
    return np.array2string(arr, prefix="tensor(", **kw)


def _integral(v: float) -> str:
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.0f}."


def tensor_repr(t) -> str:
    """The ``repr`` of a tensor in PyTorch's form."""
    arr = t._data
    body = _format_array(arr)
    extras = []
    name = arr.dtype.name
    if arr.size == 0 and arr.ndim > 1:
        extras.append(f"size={tuple(arr.shape)}")
    default_float = _dtype.get_default_dtype().name
    if name not in {default_float, "int64", "bool"}:
        extras.append(f"dtype=disttorch.{name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"

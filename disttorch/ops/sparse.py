"""Sparse COO tensors: ``sparse_coo_tensor``, ``Tensor.to_sparse``/``to_dense``, ``coalesce``,
``indices``/``values``, sparse-dense products (``spmm``, ``sparse @ dense``, ``dense @ sparse``)
and sums.

A :class:`SparseTensor` holds an int64 index array of shape ``(sparse_dim, nnz)`` and a
values tensor of shape ``(nnz, *dense_shape)``; the values tensor carries autograd, so
gradients of products and conversions flow to the values (and to the dense operand).
Ops a sparse tensor does not support raise ``NotImplementedError`` naming the layout,
as PyTorch's do; ``.to_dense()`` converts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype, _native_warnings
from .._layout import sparse_coo
from .._tensor import Tensor, _check_device
from ..autograd.function import Function
from ..kernels import sparse as _kernels
from .sparse_base import SparseBase

__all__ = ["SparseTensor", "sparse_coo_tensor", "spmm"]  # to_sparse: sparse_compressed.py

TENSOR_METHODS = ("to_dense",)


class SparseTensor(SparseBase):
    """A sparse tensor in COO layout (``layout=disttorch.sparse_coo``)."""

    is_sparse = True

    @classmethod
    def _build(cls, indices: np.ndarray, values: Tensor, shape: tuple, coalesced: bool) -> SparseTensor:
        s = cls._blank()
        s._sp_indices = np.ascontiguousarray(indices, dtype=np.int64)
        s._sp_values = values
        s._sp_shape = tuple(int(n) for n in shape)
        s._coalesced = coalesced
        return s

    @property
    def layout(self):
        return sparse_coo

    def sparse_dim(self) -> int:
        """Number of sparse dimensions (rows of ``indices``)."""
        return self._sp_indices.shape[0]

    def dense_dim(self) -> int:
        """Number of dense dimensions (trailing dims of each value)."""
        return len(self._sp_shape) - self._sp_indices.shape[0]

    def _nnz(self) -> int:
        return self._sp_indices.shape[1]

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _indices(self) -> Tensor:
        return Tensor._make(self._sp_indices)

    def _values(self) -> Tensor:
        return self._sp_values

    def indices(self) -> Tensor:
        """The ``(sparse_dim, nnz)`` int64 indices of a coalesced tensor."""
        self._need_coalesced("indices")
        return Tensor._make(self._sp_indices)

    def values(self) -> Tensor:
        """The ``(nnz, *dense_shape)`` values of a coalesced tensor (carries autograd)."""
        self._need_coalesced("values")
        return self._sp_values

    def _need_coalesced(self, what: str) -> None:
        if not self._coalesced:
            raise RuntimeError(f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first")

    def __repr__(self) -> str:
        ind = repr(Tensor._make(self._sp_indices)).replace("\n", "\n" + " " * 15)
        val = repr(self._sp_values.detach()).replace("\n", "\n" + " " * 14)
        return (
            f"tensor(indices={ind},\n       values={val},\n       size={self._sp_shape}, "
            f"nnz={self._nnz()}, layout={sparse_coo})"
        )

    __str__ = __repr__

    def __deepcopy__(self, memo: dict) -> SparseTensor:
        import copy

        return SparseTensor._build(
            self._sp_indices.copy(), copy.deepcopy(self._sp_values, memo), self._sp_shape, self._coalesced
        )

    def __reduce_ex__(self, protocol: int):
        return (
            _rebuild_sparse,
            (self._sp_indices, self._sp_values.detach(), self._sp_shape, self._coalesced),
        )

    # ------------------------------------------------------------------ conversion
    def to_dense(self, dtype: Any = None, *, masked_grad: bool = True) -> Tensor:
        """The dense (strided) tensor; gradients flow back to the values."""
        out = ToDense.apply(self._sp_values, self._sp_indices, self._sp_shape)
        return out if dtype is None else out.to(dtype)

    def coalesce(self) -> SparseTensor:
        """Sort the indices (row-major) and sum the values of repeated indices."""
        if self._coalesced:
            return self
        if self._nnz() == 0:
            return SparseTensor._build(self._sp_indices, self._sp_values, self._sp_shape, True)
        sd = self.sparse_dim()
        flat = np.ravel_multi_index(tuple(self._sp_indices), self._sp_shape[:sd])
        uniq, inverse = np.unique(flat, return_inverse=True)
        values = _segment_sum(self._sp_values, inverse, uniq.size)
        idx = np.stack(np.unravel_index(uniq, self._sp_shape[:sd])).reshape(sd, -1)
        return SparseTensor._build(idx, values, self._sp_shape, True)

    def type(self, dtype: Any = None) -> Any:
        if dtype is None:
            return "disttorch.sparse." + self._sp_values.type().split(".")[-1]
        return self.to(dtype)

    def _with_values(self, values: Tensor) -> SparseTensor:
        return SparseTensor._build(self._sp_indices, values, self._sp_shape, self._coalesced)

    # ------------------------------------------------------------------ shape
    def transpose(self, dim0: int, dim1: int) -> SparseTensor:
        """Swap two sparse dimensions (the result is not coalesced)."""
        n, sd = self.dim(), self.sparse_dim()
        d0, d1 = dim0 % n, dim1 % n
        if d0 >= sd or d1 >= sd:
            raise RuntimeError(
                "transpose: only sparse dimensions of a sparse tensor can be "
                f"transposed (sparse_dim={sd}), got dims {dim0} and {dim1}"
            )
        idx = self._sp_indices.copy()
        idx[[d0, d1]] = idx[[d1, d0]]
        shape = list(self._sp_shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return SparseTensor._build(idx, self._sp_values, tuple(shape), d0 == d1 and self._coalesced)

    def index_select(self, dim: int, index: Tensor) -> SparseTensor:
        """The slices at ``index`` along ``dim``, as PyTorch's: along a sparse dimension the
        entries come by position in ``index``, then in their order here; coalesced only with
        at most one entry; negative entries count from the end. Gradients reach the values."""
        n, sd = self.dim(), self.sparse_dim()
        if not -n <= dim < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
            )
        d = dim % n
        idx = index._data if isinstance(index, Tensor) and not index.is_sparse else None
        if idx is None or idx.ndim != 1 or idx.dtype not in (np.int64, np.int32):
            raise IndexError("index_select() argument index must be 1-D strided (non-sparse) long-tensor.")
        size = self._sp_shape[d]
        if idx.size and (idx.min() < -size or idx.max() >= size):
            bad = idx[(idx < -size) | (idx >= size)][0]
            raise IndexError(
                f"index_select(): index contains {bad} that is out of range for tensor of size "
                f"{list(self._sp_shape)} at dimension {d}"
            )
        idx = np.where(idx < 0, idx + size, idx).astype(np.int64, copy=False)
        shape = self._sp_shape[:d] + (idx.size,) + self._sp_shape[d + 1 :]
        if d >= sd:  # a dense dimension: the values' own selection
            values = self._sp_values.index_select(d - sd + 1, Tensor._make(idx))
            return SparseTensor._build(self._sp_indices, values, shape, self._nnz() <= 1)
        position, entry = _kernels.select_entries(self._sp_indices[d], idx)
        indices = self._sp_indices[:, entry]
        indices[d] = position
        return self._entries(entry, indices, shape)

    def _entries(self, keep: np.ndarray, indices: np.ndarray, shape: tuple) -> SparseTensor:
        """The entries ``keep`` (positions) with ``indices`` and ``shape``, values alongside."""
        values = self._sp_values.index_select(0, Tensor._make(keep.astype(np.int64, copy=False)))
        return SparseTensor._build(indices, values, shape, keep.size <= 1)

    def select(self, dim: int, index: int) -> SparseTensor:
        """The slice at ``index`` along ``dim`` (one dimension fewer)."""
        n, sd = self.dim(), self.sparse_dim()
        d = _wrapped(dim, n)
        size = self._sp_shape[d]
        if not -size <= index < size:
            raise IndexError(
                f"select(): index {index} out of range for tensor of size {list(self._sp_shape)} "
                f"at dimension {d}"
            )
        index %= size
        shape = self._sp_shape[:d] + self._sp_shape[d + 1 :]
        if d >= sd:
            values = self._sp_values.select(d - sd + 1, index)
            return SparseTensor._build(self._sp_indices, values, shape, self._nnz() <= 1)
        keep = np.flatnonzero(self._sp_indices[d] == index)
        return self._entries(keep, np.delete(self._sp_indices[:, keep], d, axis=0), shape)

    def narrow_copy(self, dim: int, start: int, length: int) -> SparseTensor:
        """The entries with ``start <= index < start + length`` along ``dim``, shifted to 0."""
        n, sd = self.dim(), self.sparse_dim()
        d = _wrapped(dim, n)
        size = self._sp_shape[d]
        start = start + size if start < 0 else start
        if start < 0 or length < 0 or start + length > size:
            raise RuntimeError(
                f"Invalid range to narrow. range(start, start+length) must be a subset of range(0, {size})."
            )
        shape = self._sp_shape[:d] + (length,) + self._sp_shape[d + 1 :]
        if d >= sd:
            values = self._sp_values.narrow(d - sd + 1, start, length).clone()
            return SparseTensor._build(self._sp_indices, values, shape, self._coalesced)
        coord = self._sp_indices[d]
        keep = np.flatnonzero((coord >= start) & (coord < start + length))
        indices = self._sp_indices[:, keep]
        indices[d] -= start
        out = self._entries(keep, indices, shape)
        out._coalesced = self._coalesced
        return out

    def unsqueeze(self, dim: int) -> SparseTensor:
        """A size-1 dimension at ``dim``: a sparse one (index 0) up to ``sparse_dim()``, else dense."""
        n, sd = self.dim(), self.sparse_dim()
        d = _wrapped(dim, n + 1)
        shape = self._sp_shape[:d] + (1,) + self._sp_shape[d:]
        if d > sd:
            values = self._sp_values.unsqueeze(d - sd + 1)
            return SparseTensor._build(self._sp_indices, values, shape, self._nnz() <= 1)
        indices = np.insert(self._sp_indices, d, 0, axis=0)
        return SparseTensor._build(indices, self._sp_values, shape, self._nnz() <= 1)

    def permute(self, *dims: Any) -> SparseTensor:
        """Sparse dimensions reordered among themselves (dense ones stay in place)."""
        dims = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else dims
        n, sd = self.dim(), self.sparse_dim()
        if len(dims) != n:
            raise RuntimeError(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the "
                "length of the desired ordering of dimensions i.e. input.dim() = "
                f"{n} is not equal to len(dims) = {len(dims)}"
            )
        dims = tuple(_wrapped(x, n) for x in dims)
        if len(set(dims)) != n:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        if any(dims[i] != i for i in range(sd, n)):
            raise RuntimeError(
                "permute(sparse_coo): transpositions between sparse and dense dimensions are not "
                "allowed.Only transpositions within sparse and dense dimensions are supported."
            )
        shape = tuple(self._sp_shape[x] for x in dims)
        same = dims[:sd] == tuple(range(sd))
        return SparseTensor._build(
            self._sp_indices[list(dims[:sd])], self._sp_values, shape, same and self._coalesced
        )

    def t(self) -> SparseTensor:
        if self.dim() > 2:
            raise RuntimeError(
                f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                f"but self is {self.sparse_dim()} sparse and {self.dense_dim()} "
                "dense dimensions"
            )
        return self if self.dim() < 2 else self.transpose(0, 1)

    # ------------------------------------------------------------------ arithmetic
    def mm(self, mat2: Tensor) -> Tensor:
        return _sparse_mm(self, mat2)

    matmul = mm

    def __matmul__(self, other: Any) -> Any:
        return _sparse_mm(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _dense_sparse_mm(other, self)

    def __add__(self, other: Any) -> Tensor:
        if isinstance(other, SparseTensor):
            if other.shape != self.shape:
                raise RuntimeError(
                    f"add: expected 'self' and 'other' to have same size, but "
                    f"self has size {list(self.shape)} while other has size "
                    f"{list(other.shape)}"
                )
            vals = _cat_values(self._sp_values, other._sp_values)
            idx = np.concatenate([self._sp_indices, other._sp_indices], axis=1)
            return SparseTensor._build(idx, vals, self._sp_shape, False).coalesce()
        if isinstance(other, Tensor):
            return self.to_dense() + other
        raise TypeError(
            f"add(sparse, {type(other).__name__}): adding a scalar to a sparse "
            "tensor is not supported (it would make it dense); use .to_dense()"
        )

    def __rsub__(self, other: Any) -> Tensor:
        return other + (-self)

    def sum(self, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
        return _sparse_sum(self, dim, dtype)


def _wrapped(dim: int, n: int) -> int:
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def _cat_values(a: Tensor, b: Tensor) -> Tensor:
    from .shape import cat

    dt = _dtype.promote_types(a.dtype, b.dtype)
    return cat([a.to(dt), b.to(dt)])


def _rebuild_sparse(indices, values, shape, coalesced) -> SparseTensor:
    return SparseTensor._build(indices, values, shape, coalesced)


# ---------------------------------------------------------------------- Functions
class ToDense(Function):
    """Scatter values to a dense array of ``shape`` (repeated indices add); the gradient of
    the values is the upstream gradient read at the indices."""

    _raw = True

    @staticmethod
    def forward(ctx, values, indices, shape):
        v = values._data
        out = np.zeros(shape, dtype=v.dtype)
        if indices.shape[1]:
            np.add.at(out, tuple(indices), v)
        ctx.indices = indices
        return out

    @staticmethod
    def backward(ctx, g):
        return g[tuple(ctx.indices)], None, None


class SpMM(Function):
    """``A @ D`` for a 2-D sparse ``A`` (given by ``indices``, ``shape`` and ``values``) and a
    2-D dense ``D``. Gradients: ``A^T @ g`` for ``D`` and ``g[rows] . D[cols]`` for the
    values, both Functions with backwards of their own."""

    _raw = True

    @staticmethod
    def forward(ctx, values, dense, indices, shape):
        rows, cols = indices
        out = _kernels.spmm(rows, cols, values._data, dense._data, shape[0])
        if ctx.needs_input_grad:
            ctx.save_for_backward(values, dense)
            ctx.indices, ctx.shape = indices, shape
        return out

    @staticmethod
    def backward(ctx, g):
        values, dense = ctx._checked_saved()
        rows, cols = ctx.indices
        nv, nd = ctx.needs_input_grad[:2]
        gv = SampledDot.apply(g, dense, rows, cols) if nv else None
        gd = None
        if nd:
            gd = SpMM.apply(values, g, ctx.indices[::-1], (ctx.shape[1], ctx.shape[0]))
        return gv, gd, None, None


class SampledDot(Function):
    """``out[k] = a[rows[k]] . b[cols[k]]``: the entries of ``a @ b.T`` at the given positions.
    Gradients: ``S @ b`` for ``a`` and ``S^T @ a`` for ``b``, ``S`` sparse with values ``g``."""

    _raw = True

    @staticmethod
    def forward(ctx, a, b, rows, cols):
        if ctx.needs_input_grad:
            ctx.save_for_backward(a, b)
            ctx.rows, ctx.cols = rows, cols
        return _kernels.sampled_dot(rows, cols, a._data, b._data)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx._checked_saved()
        na, nb = ctx.needs_input_grad[:2]
        n, m = a.shape[0], b.shape[0]
        ga = SpMM.apply(g, b, (ctx.rows, ctx.cols), (n, m)) if na else None
        gb = SpMM.apply(g, a, (ctx.cols, ctx.rows), (m, n)) if nb else None
        return ga, gb, None, None


def _segment_sum(values: Tensor, segment: np.ndarray, n: int) -> Tensor:
    """Sum rows of ``values`` that share a ``segment`` id into ``n`` rows (differentiable)."""
    zeros = Tensor._make(np.zeros((n,) + tuple(values.shape[1:]), dtype=values._data.dtype))
    return zeros.index_add(0, Tensor._make(segment.astype(np.int64)), values)


# ---------------------------------------------------------------------- products and sums
def _check_mm(a_shape: tuple, b_shape: tuple) -> None:
    if len(a_shape) != 2 or len(b_shape) != 2:
        raise RuntimeError(f"sparse mm: expected 2-D operands, got {len(a_shape)}-D and {len(b_shape)}-D")
    if a_shape[1] != b_shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a_shape[0]}x"
            f"{a_shape[1]} and {b_shape[0]}x{b_shape[1]})"
        )


def _sparse_mm(a: SparseTensor, b: Any) -> Any:
    """sparse @ dense (dense result), sparse @ sparse (sparse result), sparse @ vector."""
    if isinstance(b, SparseTensor):
        _check_mm(a.shape, b.shape)
        return to_coo(_sparse_mm(a, b.to_dense()), None)
    if not isinstance(b, Tensor):
        raise TypeError(f"mm(): argument 'mat2' must be Tensor, not {type(b).__name__}")
    if a.dense_dim():
        raise RuntimeError("sparse mm: the sparse operand must have 0 dense dimensions")
    if b.dim() == 1:
        return _sparse_mm(a, b.unsqueeze(1)).squeeze(1)
    _check_mm(a.shape, tuple(b.shape))
    return SpMM.apply(a._sp_values, b, a._sp_indices, a._sp_shape)


def _dense_sparse_mm(a: Any, b: SparseTensor) -> Tensor:
    """dense @ sparse = (sparse^T @ dense^T)^T (dense result)."""
    if not isinstance(a, Tensor):
        raise TypeError(f"matmul(): argument 'input' must be Tensor, not {type(a).__name__}")
    if a.dim() == 1:
        return _dense_sparse_mm(a.unsqueeze(0), b).squeeze(0)
    _check_mm(tuple(a.shape), b.shape)
    return _sparse_mm(b.t(), a.t()).t()


def _sparse_sum(s: SparseTensor, dim: Any, dtype: Any) -> Any:
    """``sum()`` of all elements (dense 0-dim), or over ``dim`` (sparse while sparse dims
    remain, dense once they are all summed)."""
    vals = s._sp_values if dtype is None else s._sp_values.to(dtype)
    if vals.dtype.is_floating_point is False and dtype is None:
        vals = vals.to(_dtype.int64)
    if dim is None:
        return vals.sum()
    dims = sorted({d % s.dim() for d in ((dim,) if isinstance(dim, int) else dim)})
    sd = s.sparse_dim()
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        vals = vals.sum(dense_dims)
    keep = [d for d in range(sd) if d not in dims]
    shape = tuple(n for d, n in enumerate(s._sp_shape) if d not in dims)
    if not keep:
        return vals.sum(0)
    return SparseTensor._build(s._sp_indices[keep], vals, shape, False).coalesce()


# ---------------------------------------------------------------------- public functions
#: ``torch.sparse.check_sparse_tensor_invariants``'s setting: [enabled, chosen by the program]
#: (disttorch's constructors check the invariants either way)
INVARIANT_CHECKS = [False, False]


def warn_unchecked(check_invariants: bool | None) -> None:
    """PyTorch's once-per-process warning for a sparse constructor called without
    ``check_invariants`` while the program never chose the global setting."""
    if check_invariants is None and not INVARIANT_CHECKS[1]:
        _native_warnings.warn(
            "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur when "
            "operating on a sparse tensor which violates the invariants, but checks incur performance "
            "overhead. To silence this warning, explicitly opt in or out. See "
            "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.  (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/Context.cpp:816.)",
            once=True,
        )


def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> SparseTensor:
    """A sparse COO tensor with ``values[k]`` at position ``indices[:, k]``.

    ``indices`` is ``(sparse_dim, nnz)`` integers; ``values`` is ``(nnz, *dense_shape)``;
    ``size`` defaults to the smallest shape that holds every index. Repeated indices add
    up (after ``coalesce()``). If ``values`` requires grad, gradients flow to it.
    """
    if device is not None:
        _check_device(device)
    from .._creation import tensor as _tensor

    warn_unchecked(check_invariants)
    idx = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"indices must be an int64 tensor, got {idx.dtype}")
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    vals = values if isinstance(values, Tensor) else _tensor(values)
    if dtype is not None:
        vals = vals.to(dtype)
    if vals.dim() == 0:
        raise RuntimeError("values must have at least 1 dimension (nnz)")
    if vals.shape[0] != idx.shape[1]:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: "
            f"{idx.shape[1]}, nnz from values: {vals.shape[0]}"
        )
    sd = idx.shape[0]
    if idx.size and idx.min() < 0:
        raise RuntimeError(f"found negative index {int(idx.min())} for dim {int(np.argmin(idx.min(axis=1)))}")
    if size is None:
        sparse_shape = tuple(int(m) + 1 for m in idx.max(axis=1)) if idx.size else (0,) * sd
        shape = sparse_shape + tuple(vals.shape[1:])
    else:
        shape = tuple(int(n) for n in size)
        if len(shape) != sd + vals.dim() - 1:
            raise RuntimeError(
                f"number of dimensions must be sparse_dim ({sd}) + dense_dim "
                f"({vals.dim() - 1}), but got {len(shape)}"
            )
        if tuple(vals.shape[1:]) != shape[sd:]:
            raise RuntimeError(
                f"values has incorrect size, expected {list((idx.shape[1],) + shape[sd:])}"
                f", got {list(vals.shape)}"
            )
        if idx.size:
            hi = idx.max(axis=1)
            for d in range(sd):
                if hi[d] >= shape[d]:
                    raise RuntimeError(
                        f"size is inconsistent with indices: for dim {d}, size is "
                        f"{shape[d]} but found index {int(hi[d])}"
                    )
    if requires_grad:
        vals = vals.detach().requires_grad_(True)
    return SparseTensor._build(idx.astype(np.int64), vals, shape, bool(is_coalesced) or idx.shape[1] <= 1)


def to_coo(input: Tensor, sparse_dim: int | None = None) -> SparseTensor:
    """The sparse COO form of a dense tensor (coalesced; the first ``sparse_dim`` dims are
    sparse, all by default). Gradients of the values flow back to ``input``."""
    if isinstance(input, SparseTensor):
        if sparse_dim is not None and sparse_dim != input.sparse_dim():
            raise RuntimeError(
                f"to_sparse: conversion from Sparse to Sparse with sparse_dim "
                f"argument !=self.sparse_dim() is not supported (got "
                f"{sparse_dim}, expected {input.sparse_dim()})"
            )
        return input
    x = input._data
    sd = x.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 < sd <= x.ndim:
        raise RuntimeError(f"sparse_dim must be in [1, {x.ndim}], got {sd}")
    nz = x.reshape(x.shape[:sd] + (-1,)) != 0
    mask = nz.any(-1) if sd < x.ndim else nz[..., 0]
    idx = np.stack(np.nonzero(mask)).reshape(sd, -1).astype(np.int64)
    vals = (
        input[tuple(Tensor._make(i) for i in idx)]
        if idx.size
        else Tensor._make(np.zeros((0,) + x.shape[sd:], dtype=x.dtype))
    )
    return SparseTensor._build(idx, vals, x.shape, True)


def to_dense(input: Tensor, dtype: Any = None, *, masked_grad: bool = True) -> Tensor:
    """A dense tensor is already dense: returns ``input`` (or a cast)."""
    if isinstance(input, SparseBase):
        return input.to_dense(dtype)
    return input if dtype is None else input.to(dtype)


def spmm(input: SparseTensor, mat2: Tensor) -> Tensor:
    """Sparse ``input`` (2-D COO) times dense ``mat2``: a dense result."""
    if not isinstance(input, SparseTensor):
        from .linalg import mm

        return mm(input, mat2)
    return _sparse_mm(input, mat2)


def _dense_only(what: str) -> Any:
    def method(self: Tensor, *args: Any) -> Any:
        raise RuntimeError(f"{what} expected sparse coordinate tensor layout but got Strided")

    method.__name__ = what
    return method


TENSOR_OPERATORS = {
    "sparse_dim": lambda self: 0,
    "dense_dim": lambda self: self.dim(),
    "is_coalesced": _dense_only("is_coalesced"),
    "coalesce": _dense_only("coalesce"),
    "indices": _dense_only("indices"),
    "values": _dense_only("values"),
}

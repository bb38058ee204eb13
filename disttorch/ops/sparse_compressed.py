"""Sparse compressed tensors: the CSR, CSC, BSR and BSC layouts (``torch.sparse_csr_tensor``
and friends, ``Tensor.to_sparse_csr``/``csc``/``bsr``/``bsc``, ``to_sparse(layout=...)``),
conversions between every sparse layout, products with dense operands and ``sparse_mask``.

A :class:`SparseCompressedTensor` of shape ``(*batch, nrows, ncols, *dense)`` holds

- ``compressed_indices`` ``(*batch, ncompressed + 1)``: ``crow_indices`` (CSR/BSR) or
  ``ccol_indices`` (CSC/BSC); segment ``i`` of the plain indices belongs to row (column) ``i``;
- ``plain_indices`` ``(*batch, nnz)``: ``col_indices`` or ``row_indices``, sorted and
  distinct within each segment;
- ``values`` ``(*batch, nnz, *blocksize, *dense)``: one element (CSR/CSC) or one
  ``blocksize`` block (BSR/BSC) per specified position; it carries autograd, so gradients of
  conversions and products flow to the values, as in PyTorch.

The index arithmetic is vectorised: a segment's row is ``np.repeat`` of the row numbers by
the segment lengths, sums per segment are ``np.bincount``/``np.add.at``.

Differences from PyTorch: the invariants are always checked (PyTorch checks them only with
``check_invariants=True``), since an invalid tensor would otherwise index out of bounds; the
``.grad`` of a compressed leaf is compressed with the leaf's indices (the gradient of its
values), where PyTorch's is sometimes dense; products also accept BSC operands.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import numpy as np

from .. import _dtype, _native_warnings
from .._layout import layout as _layout_cls
from .._layout import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from .._public_name import package_name
from .._repr import array_body, with_suffixes
from .._tensor import Tensor, _check_device
from .sparse import SparseTensor, SpMM, ToDense, _check_mm, to_coo, warn_unchecked
from .sparse_base import SparseBase

__all__ = [
    "SparseCompressedTensor",
    "sparse_bsc_tensor",
    "sparse_bsr_tensor",
    "sparse_compressed_tensor",
    "sparse_csc_tensor",
    "sparse_csr_tensor",
]

TENSOR_METHODS = (
    "to_sparse",
    "to_sparse_coo",
    "to_sparse_csr",
    "to_sparse_csc",
    "to_sparse_bsr",
    "to_sparse_bsc",
    "sparse_mask",
)

_COMPRESSED = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
_ROW_MAJOR = (sparse_csr, sparse_bsr)
_BLOCKED = (sparse_bsr, sparse_bsc)
_KIND = {
    strided: "Strided",
    sparse_coo: "Sparse",
    sparse_csr: "SparseCsr",
    sparse_csc: "SparseCsc",
    sparse_bsr: "SparseBsr",
    sparse_bsc: "SparseBsc",
}


def _kind(t: Any) -> str:
    return _KIND.get(t.layout, str(t.layout))


def _index_names(layout: _layout_cls) -> tuple[str, str]:
    return ("crow_indices", "col_indices") if layout in _ROW_MAJOR else ("ccol_indices", "row_indices")


class SparseCompressedTensor(SparseBase):
    """A sparse tensor in a compressed layout (``disttorch.sparse_csr``, ``sparse_csc``,
    ``sparse_bsr`` or ``sparse_bsc``)."""

    is_sparse = False  # as PyTorch: is_sparse means COO

    @classmethod
    def _build(
        cls, layout: _layout_cls, cidx: np.ndarray, pidx: np.ndarray, values: Tensor, shape: tuple
    ) -> SparseCompressedTensor:
        _native_warnings.warn(
            "Sparse CSR tensor support is in beta state. If you miss a functionality in the sparse tensor "
            "support, please submit a feature request to https://github.com/pytorch/pytorch/issues. (Triggered "
            "internally at /__w/pytorch/pytorch/aten/src/ATen/SparseCsrTensorImpl.cpp:49.)",
            once=True,
        )
        s = cls._blank()
        s._sp_layout = layout
        s._cidx, s._pidx = cidx, pidx
        s._sp_values = values
        s._sp_shape = tuple(int(n) for n in shape)
        return s

    def _with_values(self, values: Tensor) -> SparseCompressedTensor:
        return SparseCompressedTensor._build(self._sp_layout, self._cidx, self._pidx, values, self._sp_shape)

    # ------------------------------------------------------------------ attributes
    @property
    def layout(self) -> _layout_cls:
        return self._sp_layout

    @property
    def is_sparse_csr(self) -> bool:
        return self._sp_layout is sparse_csr

    @property
    def _nb(self) -> int:
        return self._cidx.ndim - 1

    @property
    def _blocksize(self) -> tuple:
        nb = self._nb
        return tuple(self._sp_values.shape[nb + 1 : nb + 3]) if self._sp_layout in _BLOCKED else (1, 1)

    def sparse_dim(self) -> int:
        """Always 2: the row and column dimensions."""
        return 2

    def dense_dim(self) -> int:
        """Number of trailing dense dimensions of each value."""
        return len(self._sp_shape) - self._nb - 2

    def _nnz(self) -> int:
        return self._pidx.shape[-1]

    def values(self) -> Tensor:
        """The ``(*batch, nnz, *blocksize, *dense)`` values (carries autograd)."""
        return self._sp_values

    def _indices_of(self, name: str, compressed: bool) -> Tensor:
        want = _index_names(sparse_csr if name in ("crow_indices", "col_indices") else sparse_csc)
        if _index_names(self._sp_layout) != want:
            family = "row" if want[0] == "crow_indices" else "column"
            raise RuntimeError(
                f"{name} expected sparse {family} compressed tensor layout but got {_kind(self)}"
            )
        return Tensor._make(self._cidx if compressed else self._pidx)

    def crow_indices(self) -> Tensor:
        """The compressed row indices of a CSR or BSR tensor."""
        return self._indices_of("crow_indices", True)

    def col_indices(self) -> Tensor:
        """The column indices of a CSR or BSR tensor."""
        return self._indices_of("col_indices", False)

    def ccol_indices(self) -> Tensor:
        """The compressed column indices of a CSC or BSC tensor."""
        return self._indices_of("ccol_indices", True)

    def row_indices(self) -> Tensor:
        """The row indices of a CSC or BSC tensor."""
        return self._indices_of("row_indices", False)

    def _coo_only(self, what: str) -> Any:
        raise RuntimeError(f"{what} expected sparse coordinate tensor layout but got {_kind(self)}")

    def indices(self) -> Tensor:
        return self._coo_only("indices")

    def coalesce(self) -> Tensor:
        return self._coo_only("coalesce")

    def is_coalesced(self) -> bool:
        return self._coo_only("is_coalesced")

    def type(self, dtype: Any = None) -> Any:
        return self._sp_values.type() if dtype is None else self.to(dtype)

    # ------------------------------------------------------------------ repr, copy, pickle
    def __repr__(self) -> str:
        cname, pname = _index_names(self._sp_layout)
        parts = []
        for name, arr in ((cname, self._cidx), (pname, self._pidx)):
            prefix = f"{name}=tensor("
            text = array_body(arr, 7 + len(prefix))
            if arr.size == 0:
                text += f", size={tuple(arr.shape)}"
            if arr.dtype != np.int64:
                text += f", dtype={package_name()}.{arr.dtype.name}"
            parts.append(prefix + text + ")")
        vals = self._sp_values.detach()._data
        text = "values=tensor(" + array_body(vals, 21)
        if vals.size == 0:
            text += f", size={tuple(vals.shape)}"
        suffixes = [f"size={self._sp_shape}", f"nnz={self._nnz()}"]
        if vals.dtype.name not in (_dtype.get_default_dtype().name, "int64", "bool"):
            suffixes.append(f"dtype={package_name()}.{vals.dtype.name}")
        suffixes.append(f"layout={self._sp_layout}")
        if self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            suffixes.append("requires_grad=True")
        body = ",\n       ".join(parts + [text + ")"])
        return with_suffixes("tensor(" + body, suffixes, 7)

    __str__ = __repr__

    def __deepcopy__(self, memo: dict) -> SparseCompressedTensor:
        return SparseCompressedTensor._build(
            self._sp_layout,
            self._cidx.copy(),
            self._pidx.copy(),
            copy.deepcopy(self._sp_values, memo),
            self._sp_shape,
        )

    def __reduce_ex__(self, protocol: int):
        return (
            _rebuild,
            (self._sp_layout, self._cidx, self._pidx, self._sp_values.detach(), self._sp_shape),
        )

    # ------------------------------------------------------------------ coordinates
    def _block_coords(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Batch number (flattened), block row and block column of every stored value, in
        storage order."""
        nc = self._cidx.shape[-1] - 1
        cidx = self._cidx.reshape(-1, nc + 1).astype(np.int64)
        nbatch, nnz = cidx.shape[0], self._nnz()
        comp = np.repeat(np.tile(np.arange(nc), nbatch), np.diff(cidx, axis=1).ravel())
        plain = self._pidx.reshape(-1).astype(np.int64)
        batch = np.repeat(np.arange(nbatch), nnz)
        return (batch, comp, plain) if self._sp_layout in _ROW_MAJOR else (batch, plain, comp)

    def _coo_parts(self) -> tuple[np.ndarray, Tensor]:
        """Element-level COO form: indices ``(n_batch_dims + 2, M)`` and values ``(M, *dense)``
        (a differentiable reshape of the stored values), blocks expanded element-wise."""
        nb = self._nb
        batch, r, c = self._block_coords()
        br, bc = self._blocksize
        dense = tuple(self._sp_shape[nb + 2 :])
        if self._sp_layout in _BLOCKED:
            shape = (batch.size, br, bc)
            r = (r[:, None, None] * br + np.arange(br)[:, None]) + np.zeros(shape, np.int64)
            c = (c[:, None, None] * bc + np.arange(bc)) + np.zeros(shape, np.int64)
            batch = np.broadcast_to(batch[:, None, None], shape)
        bidx = np.unravel_index(batch.ravel(), self._sp_shape[:nb]) if nb else ()
        idx = np.stack([*bidx, r.ravel(), c.ravel()]).reshape(nb + 2, -1)
        return idx, self._sp_values.reshape((idx.shape[1],) + dense)

    # ------------------------------------------------------------------ conversion
    def to_dense(self, dtype: Any = None, *, masked_grad: bool = True) -> Tensor:
        """The dense (strided) tensor; gradients flow back to the values."""
        idx, vals = self._coo_parts()
        out = ToDense.apply(vals, idx, self._sp_shape)
        return out if dtype is None else out.to(dtype)

    def transpose(self, dim0: int, dim1: int) -> SparseCompressedTensor:
        """Swap the row and column dimensions: CSR <-> CSC (BSR <-> BSC) over the same index
        arrays, blocks transposed. Other pairs of dimensions are refused, as in PyTorch."""
        n, nb = self.dim(), self._nb
        d0, d1 = sorted((dim0 % n, dim1 % n))
        if d0 == d1:
            return self
        kinds = ["Batch"] * nb + ["Sparse"] * 2 + ["Dense"] * self.dense_dim()
        if kinds[d0] != kinds[d1]:
            raise RuntimeError(
                "transpose(): can only transpose dimensions of the same type (Batch, Sparse, Dense), "
                f"got {d0}({kinds[d0]}) and {d1}({kinds[d1]})"
            )
        if kinds[d0] != "Sparse":
            raise RuntimeError(
                f"transpose(): only the row and column dimensions of a {_kind(self)} tensor swap"
            )
        lay = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc, sparse_bsc: sparse_bsr}
        vals = self._sp_values.transpose(nb + 1, nb + 2) if self._sp_layout in _BLOCKED else self._sp_values
        shape = list(self._sp_shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return SparseCompressedTensor._build(lay[self._sp_layout], self._cidx, self._pidx, vals, tuple(shape))

    def t(self) -> SparseCompressedTensor:
        """The transpose of a 2-D compressed tensor (see :meth:`transpose`)."""
        if self.dim() != 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
        return self.transpose(0, 1)

    @property
    def mT(self) -> SparseCompressedTensor:
        return self.transpose(-2 - self.dense_dim(), -1 - self.dense_dim())

    # ------------------------------------------------------------------ batches
    def select(self, dim: int, index: int) -> SparseCompressedTensor:
        """One batch of a batched compressed tensor (``dim`` a batch dimension)."""
        nb = self._nb
        d = dim % self.dim() if -self.dim() <= dim < self.dim() else dim
        if not 0 <= d < nb:
            raise RuntimeError(
                f"select(): selecting dimension {dim} of a {_kind(self)} tensor with {nb} batch dimensions is "
                "supported for batch dimensions only; convert with .to_dense() or .to_sparse_coo() first"
            )
        n = self._sp_shape[d]
        if not -n <= index < n:
            raise IndexError(
                f"select(): index {index} out of range for tensor of size {list(self.shape)} at dimension {d}"
            )
        key = (slice(None),) * d + (index % n,)
        shape = self._sp_shape[:d] + self._sp_shape[d + 1 :]
        vals = self._sp_values.select(d, index % n)
        return SparseCompressedTensor._build(self._sp_layout, self._cidx[key], self._pidx[key], vals, shape)

    def __getitem__(self, index: Any) -> SparseCompressedTensor:
        if isinstance(index, int):
            return self.select(0, index)
        if isinstance(index, tuple) and index and all(isinstance(i, int) for i in index):
            out = self
            for i in index:
                out = out.select(0, i)
            return out
        raise RuntimeError(
            f"indexing a {_kind(self)} tensor supports integers over its batch dimensions only; convert with "
            ".to_dense() first"
        )

    def unbind(self, dim: int = 0) -> tuple:
        """The batches along batch dimension ``dim``."""
        return tuple(self.select(dim, i) for i in range(self._sp_shape[dim]))

    def __len__(self) -> int:
        return self._sp_shape[0]

    # ------------------------------------------------------------------ arithmetic
    def mm(self, mat2: Tensor) -> Tensor:
        return compressed_mm(self, mat2)

    matmul = mm

    def __matmul__(self, other: Any) -> Tensor:
        return compressed_mm(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        if not isinstance(other, Tensor):
            raise TypeError(f"matmul(): argument 'input' must be Tensor, not {type(other).__name__}")
        if other.dim() == 1:
            return compressed_mm(self.t(), other)
        return compressed_mm(self.t(), other.t()).t()

    def __add__(self, other: Any) -> Tensor:
        if isinstance(other, SparseCompressedTensor):
            if other.shape != self.shape:
                raise RuntimeError(
                    f"add: expected 'self' and 'other' to have same size, but self has size "
                    f"{list(self.shape)} while other has size {list(other.shape)}"
                )
            if other.layout is not self.layout:
                raise RuntimeError(
                    f"add: expected 'self' and 'other' to have the same layout, got {_kind(self)} "
                    f"and {_kind(other)}"
                )
            return _convert(self.to_dense() + other.to_dense(), self.layout, self._blocksize_arg(), None)
        if isinstance(other, Tensor):
            return self.to_dense() + other
        raise TypeError(
            f"add(sparse, {type(other).__name__}): adding a scalar to a sparse tensor is not supported "
            "(it would make it dense); use .to_dense()"
        )

    def sum(self, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
        """The sum of all elements (a dense 0-dim tensor); with ``dim``, the dense sum."""
        if dim is None:
            vals = self._sp_values if dtype is None else self._sp_values.to(dtype)
            return vals.sum(dtype=None if vals.is_floating_point() or dtype else _dtype.int64)
        return self.to_dense().sum(dim, keepdim=keepdim, dtype=dtype)

    def _blocksize_arg(self) -> tuple | None:
        return self._blocksize if self._sp_layout in _BLOCKED else None


def _rebuild(layout, cidx, pidx, values, shape) -> SparseCompressedTensor:
    return SparseCompressedTensor._build(layout, cidx, pidx, values, shape)


# ---------------------------------------------------------------------- construction
def _as_index_array(x: Any, name: str) -> np.ndarray:
    arr = x._data if isinstance(x, Tensor) else np.asarray(x)
    if arr.size == 0 and arr.dtype.kind == "f" and not isinstance(x, Tensor):
        arr = arr.astype(np.int64)  # an empty list
    if arr.dtype.kind not in "iu" or arr.dtype.itemsize not in (4, 8):
        raise RuntimeError(
            f"{name} must be an int32 or int64 tensor, but got {_dtype.scalar_type_name(arr.dtype)}"
        )
    return arr


def _check_invariants(
    layout: _layout_cls, cidx: np.ndarray, pidx: np.ndarray, vals: Tensor, shape: tuple
) -> None:
    """PyTorch's invariants of a compressed tensor, with its wording."""
    cname, pname = _index_names(layout)
    if cidx.dtype != pidx.dtype:
        raise RuntimeError(
            f"{cname} and {pname} must have the same dtype, bot got "
            f"{_dtype.scalar_type_name(cidx.dtype)} and {_dtype.scalar_type_name(pidx.dtype)}, respectively"
        )
    if cidx.ndim != pidx.ndim:
        raise RuntimeError(
            f"{cname} and {pname} dimensionalities must be equal but got {cidx.ndim} and {pidx.ndim}, respectively"
        )
    if cidx.ndim < 1:
        raise RuntimeError(f"{cname} must have dimensionality >= 1 but got {cidx.ndim}")
    nb = cidx.ndim - 1
    nblock = 2 if layout in _BLOCKED else 0
    if vals.dim() < nb + 1 + nblock:
        raise RuntimeError(
            f"values must have dimensionality > sum of batch and block dimensionalities (={nb} + {nblock}) "
            f"but got {vals.dim()}"
        )
    dd = vals.dim() - nb - 1 - nblock
    if len(shape) != nb + 2 + dd:
        raise RuntimeError(
            f"tensor dimensionality must be sum of batch, base, and dense dimensionalities "
            f"(={nb} + 2 + {dd}) but got {len(shape)}"
        )
    batch = list(shape[:nb])
    if list(cidx.shape[:nb]) != batch or list(pidx.shape[:nb]) != batch or list(vals.shape[:nb]) != batch:
        raise RuntimeError(
            f"all batch dimensions of {cname} (={list(cidx.shape[:nb])}), {pname} (={list(pidx.shape[:nb])}), "
            f"and values (={list(vals.shape[:nb])}) must be equal to tensor batch dimensions (={batch})"
        )
    nrows, ncols = shape[nb : nb + 2]
    br, bc = tuple(vals.shape[nb + 1 : nb + 3]) if nblock else (1, 1)
    for i, (n, b) in enumerate(((nrows, br), (ncols, bc))):
        if b == 0 or n % b:
            raise RuntimeError(
                f"tensor shape[{nb + i}] (={n}) must be divisible with blocksize[{i}] (={b}) as defined by "
                "values shape"
            )
    if tuple(vals.shape[nb + 1 + nblock :]) != tuple(shape[nb + 2 :]):
        raise RuntimeError(
            f"dense dimensions of values (={list(vals.shape[nb + 1 + nblock :])}) must be equal to the "
            f"dense dimensions of the tensor (={list(shape[nb + 2 :])})"
        )
    ncomp, nplain = (nrows // br, ncols // bc) if layout in _ROW_MAJOR else (ncols // bc, nrows // br)
    what = "rows" if layout in _ROW_MAJOR else "columns"
    if cidx.shape[-1] != ncomp + 1:
        raise RuntimeError(
            f"{cname}.shape[-1] must be equal to the number of {what} + 1 (={ncomp + 1}), but got {cidx.shape[-1]}"
        )
    nnz = vals.shape[nb]
    if pidx.shape[-1] != nnz:
        raise RuntimeError(
            f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[{nb}], "
            f"but got {pidx.shape[-1]}"
        )
    nbatch = int(np.prod(batch, dtype=np.int64))
    c = cidx.reshape(nbatch, ncomp + 1).astype(np.int64)
    p = pidx.reshape(nbatch, nnz).astype(np.int64)
    if c.size and (c[:, 0] != 0).any():
        raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
    if c.size and (c[:, -1] != nnz).any():
        raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
    plain_name, comp_name = ("ncols", "nrows") if layout in _ROW_MAJOR else ("nrows", "ncols")
    seg = np.diff(c, axis=1)
    if (seg < 0).any() or (seg > nplain).any():
        raise RuntimeError(f"`0 <= {cname}[..., 1:] - {cname}[..., :-1] <= {plain_name}` is not satisfied.")
    if p.size and ((p < 0).any() or (p >= nplain).any()):
        raise RuntimeError(f"`0 <= {pname} < {plain_name}` is not satisfied.")
    if p.size:
        # sorted and distinct within each segment: each step inside a segment increases
        starts = np.zeros(p.shape, dtype=bool)
        starts[:, 0] = True
        inner = c[:, 1:-1]
        rows = np.repeat(np.arange(c.shape[0]), inner.shape[1])
        ok = inner.ravel() < nnz
        starts[rows[ok], inner.ravel()[ok]] = True
        steps = np.diff(p, axis=1) > 0
        if not (steps | starts[:, 1:]).all():
            raise RuntimeError(
                f"`{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i = 1, ..., {comp_name} are "
                "sorted and distinct along the last dimension values` is not satisfied."
            )


def sparse_compressed_tensor(
    compressed_indices: Any,
    plain_indices: Any,
    values: Any,
    size: Any = None,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
) -> SparseCompressedTensor:
    """A sparse tensor in the compressed ``layout`` (``disttorch.sparse_csr``, ``sparse_csc``,
    ``sparse_bsr`` or ``sparse_bsc``).

    ``compressed_indices`` is ``(*batch, ncompressed + 1)``, ``plain_indices`` ``(*batch, nnz)``
    (int32 or int64, the same dtype), ``values`` ``(*batch, nnz, *blocksize, *dense)``. Without
    ``size`` the smallest shape that holds every index is used. The invariants are always
    checked (``check_invariants`` is accepted for compatibility). If ``values`` requires grad,
    gradients flow to it.
    """
    if layout not in _COMPRESSED:
        got = "none" if layout is None else _KIND.get(layout, str(layout))
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout but got {got}")
    if device is not None:
        _check_device(device)
    from .._creation import tensor as _tensor

    warn_unchecked(check_invariants)
    cname, pname = _index_names(layout)
    cidx = _as_index_array(compressed_indices, cname)
    pidx = _as_index_array(plain_indices, pname)
    vals = values if isinstance(values, Tensor) else _tensor(values)
    if dtype is not None:
        vals = vals.to(dtype)
    if size is None:
        size = _inferred_size(layout, cidx, pidx, vals)
    shape = tuple(int(n) for n in size)
    _check_invariants(layout, cidx, pidx, vals, shape)
    if requires_grad:
        vals = vals.detach().requires_grad_(True)
    return SparseCompressedTensor._build(layout, cidx, pidx, vals, shape)


def _inferred_size(layout: _layout_cls, cidx: np.ndarray, pidx: np.ndarray, vals: Tensor) -> tuple:
    nb = cidx.ndim - 1
    block = tuple(vals.shape[nb + 1 : nb + 3]) if layout in _BLOCKED else (1, 1)
    ncomp = cidx.shape[-1] - 1
    nplain = int(pidx.max()) + 1 if pidx.size else 0
    nr, nc = (ncomp, nplain) if layout in _ROW_MAJOR else (nplain, ncomp)
    dense = tuple(vals.shape[nb + 1 + (2 if layout in _BLOCKED else 0) :])
    return tuple(cidx.shape[:nb]) + (nr * block[0], nc * block[1]) + dense


def _constructor(layout: _layout_cls, cname: str, pname: str) -> Any:
    """``sparse_<layout>_tensor(cname, pname, values, size=None, *, ...)``: its index
    arguments named as PyTorch names them (``crow_indices=...`` works as a keyword)."""
    generic = inspect.signature(sparse_compressed_tensor)
    names = {"compressed_indices": cname, "plain_indices": pname}
    signature = generic.replace(
        parameters=[
            p.replace(name=names.get(p.name, p.name))
            for p in generic.parameters.values()
            if p.name != "layout"
        ]
    )

    def make(*args: Any, **kwargs: Any) -> SparseCompressedTensor:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{make.__name__}(): {error} (signature: {make.__name__}{signature})") from None
        given = bound.arguments
        compressed, plain = given.pop(cname), given.pop(pname)
        return sparse_compressed_tensor(compressed, plain, **given, layout=layout)

    make.__name__ = make.__qualname__ = f"sparse_{layout.name[7:]}_tensor"
    make.__signature__ = signature  # type: ignore[attr-defined]
    make.__doc__ = (
        f"A sparse tensor in {layout.name[7:].upper()} layout from ``{cname}``, ``{pname}`` and "
        f"``values`` (see :func:`sparse_compressed_tensor`; ``{layout}``)."
    )
    return make


sparse_csr_tensor = _constructor(sparse_csr, "crow_indices", "col_indices")
sparse_csc_tensor = _constructor(sparse_csc, "ccol_indices", "row_indices")
sparse_bsr_tensor = _constructor(sparse_bsr, "crow_indices", "col_indices")
sparse_bsc_tensor = _constructor(sparse_bsc, "ccol_indices", "row_indices")


# ---------------------------------------------------------------------- conversions
def _norm_blocksize(blocksize: Any) -> tuple | None:
    if blocksize is None:
        return None
    if isinstance(blocksize, int):
        return (blocksize, blocksize)
    b = tuple(int(n) for n in blocksize)
    if len(b) != 2:
        raise RuntimeError(f"blocksize needs to be a tuple of size 2, but got {len(b)}")
    return b


def _from_dense(x: Tensor, layout: _layout_cls, blocksize: tuple | None, dense_dim: int | None) -> Tensor:
    """Dense ``(*batch, R, C, *dense)`` to ``layout``: a position (block) is specified when any of
    its elements is nonzero. The values are a differentiable gather from ``x``."""
    name = f"dense_to_sparse_{layout.name[7:]}"
    if layout in _BLOCKED and blocksize is None:
        raise RuntimeError(
            f"dense_to_sparse: conversion from Strided to {_KIND[layout]} without blocksize argument given "
            "is not supported"
        )
    nd = x.dim()
    dd = 0 if dense_dim is None else int(dense_dim)
    if nd < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions, but got {nd}")
    if not 0 <= dd <= nd - 2:
        raise RuntimeError(f"{name}: dense_dim argument must be in [0,{nd - 2}] range, but {dd} is given")
    nb = nd - 2 - dd
    batch, (nr, nc), dense = x.shape[:nb], x.shape[nb : nb + 2], tuple(x.shape[nb + 2 :])
    br, bc = blocksize or (1, 1)
    if nr % br or nc % bc:
        raise RuntimeError(
            f"{name}: tensor sparse size ({nr},{nc}) must be divisible by given blocksize ({br},{bc})"
        )
    nbatch = int(np.prod(batch, dtype=np.int64))
    blocks = x.reshape((nbatch, nr // br, br, nc // bc, bc) + dense)
    blocks = blocks.permute((0, 1, 3, 2, 4) + tuple(range(5, 5 + len(dense))))
    per_block = br * bc * int(np.prod(dense, dtype=np.int64))
    mask = (blocks._data != 0).reshape(nbatch, nr // br, nc // bc, per_block).any(-1)
    b, r, c = (a.astype(np.int64) for a in np.nonzero(mask))
    if b.size:
        flat = blocks[Tensor._make(b), Tensor._make(r), Tensor._make(c)]
    else:
        flat = Tensor._make(np.zeros((0, br, bc) + dense, dtype=x._data.dtype))
    if layout not in _BLOCKED:
        flat = flat.reshape((b.size,) + dense)
    return _assemble(layout, x.shape, nb, b, r, c, flat, (br, bc))


def _assemble(
    layout: _layout_cls,
    shape: tuple,
    nb: int,
    b: np.ndarray,
    r: np.ndarray,
    c: np.ndarray,
    flat: Tensor,
    blocksize: tuple,
) -> SparseCompressedTensor:
    """A compressed tensor of ``shape`` (``nb`` batch dims) from the (flattened) batch number,
    block row and block column of each specified position, in any order, each once, with
    ``flat[k]`` the value (block) at position ``k``; the values are a differentiable reorder."""
    batch = tuple(shape[:nb])
    nbatch = int(np.prod(batch, dtype=np.int64))
    nr, nc = shape[nb] // blocksize[0], shape[nb + 1] // blocksize[1]
    comp, plain, ncomp = (r, c, nr) if layout in _ROW_MAJOR else (c, r, nc)
    order = np.lexsort((plain, comp, b))
    b, comp, plain = b[order], comp[order], plain[order]
    per_batch = np.bincount(b, minlength=nbatch)
    if nbatch and (per_batch != per_batch[0]).any():
        raise RuntimeError("Expect the same number of specified elements per batch.")
    nnz = int(per_batch[0]) if nbatch else 0
    counts = np.bincount(b * ncomp + comp, minlength=nbatch * ncomp).reshape(nbatch, ncomp)
    cidx = np.zeros((nbatch, ncomp + 1), dtype=np.int64)
    np.cumsum(counts, axis=1, out=cidx[:, 1:])
    if order.size and (order != np.arange(order.size)).any():
        flat = flat[Tensor._make(order)]
    vals = flat.reshape(batch + (nnz,) + tuple(flat.shape[1:]))
    return SparseCompressedTensor._build(
        layout, cidx.reshape(batch + (ncomp + 1,)), plain.reshape(batch + (nnz,)), vals, shape
    )


def _from_compressed(s: SparseCompressedTensor, layout: _layout_cls, blocksize: tuple | None, dense_dim: Any):
    """Compressed to compressed: CSR <-> CSC and BSR <-> BSC reorder the stored values
    (explicit zeros kept, as PyTorch); CSR/CSC to BSR/BSC go through the dense form."""
    src, name = s.layout, f"to_sparse_{layout.name[7:]}"
    if dense_dim is not None:
        raise RuntimeError(
            f"{name}: conversion from {_kind(s)} to {_KIND[layout]} with dense_dim argument given is not supported"
        )
    if layout not in _BLOCKED and src in _BLOCKED:
        raise RuntimeError(
            f"sparse_compressed_to_sparse_{layout.name[7:]}: expected SparseCsr or SparseCsc layout but got "
            f"{_kind(s)}"
        )
    if layout in _BLOCKED and src in _BLOCKED and blocksize is not None and blocksize != s._blocksize:
        raise RuntimeError(
            f"{name}: conversion from {_kind(s)} to {_KIND[layout]} with blocksize changed from "
            f"{list(s._blocksize)} to {list(blocksize)} is not supported"
        )
    if layout is src:
        return s
    if (layout in _BLOCKED) == (src in _BLOCKED):
        nb = s._nb
        b, r, c = s._block_coords()
        flat = s._sp_values.reshape((b.size,) + tuple(s._sp_values.shape[nb + 1 :]))
        return _assemble(layout, s._sp_shape, nb, b, r, c, flat, s._blocksize)
    return _from_dense(s.to_dense(), layout, blocksize, s.dense_dim())


def _from_coo(s: SparseTensor, layout: _layout_cls, blocksize: tuple | None, dense_dim: Any) -> Tensor:
    """COO with two sparse dims to CSR/CSC (values reordered, explicit zeros kept); to BSR/BSC
    through the dense form."""
    if s.sparse_dim() != 2:
        raise RuntimeError(
            f"coo_to_sparse_{layout.name[7:]}: conversion from Sparse to {_KIND[layout]} for input tensors "
            "with sparse_dim()!=2 is not supported"
        )
    if layout in _BLOCKED:
        return _from_dense(s.to_dense(), layout, blocksize, s.dense_dim())
    s = s.coalesce()
    r, c = s._sp_indices
    return _assemble(layout, s._sp_shape, 0, np.zeros_like(r), r, c, s._sp_values, (1, 1))


def _convert(x: Tensor, layout: Any, blocksize: Any, dense_dim: Any) -> Tensor:
    """``x`` in ``layout`` (any sparse layout or strided), from any layout."""
    blocksize = _norm_blocksize(blocksize)
    if layout is None or layout is sparse_coo:
        if blocksize is not None:
            raise RuntimeError(
                "to_sparse: blocksize is only meaningful for the sparse_bsr and sparse_bsc layouts"
            )
        if isinstance(x, SparseCompressedTensor):
            idx, vals = x._coo_parts()
            return SparseTensor._build(idx, vals, x._sp_shape, x.layout is sparse_csr)
        return to_coo(x, None if dense_dim is None else x.dim() - int(dense_dim))
    if layout is strided:
        return x.to_dense()
    if layout not in _COMPRESSED:
        raise RuntimeError(f"to_sparse: unsupported layout {layout}")
    if layout not in _BLOCKED and blocksize is not None:
        raise RuntimeError(
            f"to_sparse_{layout.name[7:]}: blocksize is only meaningful for the sparse_bsr and sparse_bsc "
            f"layouts, got {list(blocksize)}"
        )
    if isinstance(x, SparseCompressedTensor):
        return _from_compressed(x, layout, blocksize, dense_dim)
    if isinstance(x, SparseTensor):
        return _from_coo(x, layout, blocksize, dense_dim)
    return _from_dense(x, layout, blocksize, dense_dim)


def to_sparse(
    input: Tensor,
    sparse_dim: int | None = None,
    *,
    layout: Any = None,
    blocksize: Any = None,
    dense_dim: int | None = None,
) -> Tensor:
    """``input`` as a sparse tensor: COO by default (the first ``sparse_dim`` dims sparse, all
    by default), or in ``layout`` (``disttorch.sparse_csr``/``csc``/``bsr``/``bsc``, with
    ``blocksize`` for the block layouts and ``dense_dim`` trailing dense dims). Gradients of
    the values flow back to ``input``."""
    if sparse_dim is not None:
        if layout not in (None, sparse_coo):
            raise RuntimeError(
                f"to_sparse: layout {layout} takes no sparse_dim argument (it always has 2 sparse dims)"
            )
        if isinstance(input, SparseCompressedTensor):
            if sparse_dim != 2:
                raise RuntimeError(
                    f"sparse_compressed_to_sparse: conversion from {_kind(input)} to Sparse with sparse_dim "
                    "argument !=2 is not supported"
                )
            return _convert(input, sparse_coo, None, None)
        return to_coo(input, sparse_dim)
    return _convert(input, layout, blocksize, dense_dim)


def to_sparse_coo(input: Tensor) -> SparseTensor:
    """``input`` in COO layout (``to_sparse()``)."""
    return _convert(input, sparse_coo, None, None)


def _to_layout(layout: _layout_cls, block: bool) -> Any:
    if block:

        def convert(input: Tensor, blocksize: Any, dense_dim: int | None = None) -> SparseCompressedTensor:
            return _convert(input, layout, blocksize, dense_dim)

    else:

        def convert(input: Tensor, dense_dim: int | None = None) -> SparseCompressedTensor:
            return _convert(input, layout, None, dense_dim)

    short = layout.name[7:]
    convert.__name__ = convert.__qualname__ = f"to_sparse_{short}"
    convert.__doc__ = (
        f"``input`` in {short.upper()} layout (``{layout}``) from any layout"
        + (", ``blocksize`` ``(rows, cols)`` or an int" if block else "")
        + "; ``dense_dim`` trailing dims stay dense. Gradients flow back to ``input``'s values."
    )
    return convert


to_sparse_csr = _to_layout(sparse_csr, False)
to_sparse_csc = _to_layout(sparse_csc, False)
to_sparse_bsr = _to_layout(sparse_bsr, True)
to_sparse_bsc = _to_layout(sparse_bsc, True)


# ---------------------------------------------------------------------- products
def compressed_mm(a: SparseCompressedTensor, b: Any) -> Tensor:
    """``a @ b`` for a 2-D compressed ``a`` (no dense dims) and a dense matrix or vector ``b``;
    gradients flow to ``b`` and to ``a``'s values."""
    if not isinstance(b, Tensor):
        raise TypeError(f"mm(): argument 'mat2' must be Tensor, not {type(b).__name__}")
    if isinstance(b, SparseBase):
        return _convert(compressed_mm(a, b.to_dense()), a.layout, a._blocksize_arg(), None)
    if a.dim() != 2 or a.dense_dim():
        raise RuntimeError(
            f"mm: a {_kind(a)} operand must be a 2-D matrix without dense dimensions, got shape {list(a.shape)}"
        )
    if b.dim() == 1:
        return compressed_mm(a, b.unsqueeze(1)).squeeze(1)
    _check_mm(a._sp_shape, tuple(b.shape))
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype.scalar_name} but found {b.dtype.scalar_name}")
    idx, vals = a._coo_parts()
    return SpMM.apply(vals, b, idx, a._sp_shape)


# ---------------------------------------------------------------------- sparse_mask
def sparse_mask(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` at the positions ``mask`` specifies, in ``mask``'s layout
    (COO or compressed; ``mask``'s values are ignored). Gradients flow back to ``input``."""
    if not isinstance(mask, SparseBase):
        raise RuntimeError(f"sparse_mask expected a sparse mask, but got layout {_kind(mask)}")
    if tuple(input.shape) != mask._sp_shape:
        raise RuntimeError(
            f"sparse_mask(): operands have incompatible sizes; self has size {list(input.shape)} "
            f"but mask has size {list(mask.shape)}"
        )
    dense = input.to_dense() if isinstance(input, SparseBase) else input
    if isinstance(mask, SparseTensor):
        idx = mask._sp_indices
        vals = dense[tuple(Tensor._make(i) for i in idx)] if idx.shape[1] else _empty_like_values(dense, idx)
        return SparseTensor._build(idx, vals, mask._sp_shape, mask._coalesced)
    idx, mvals = mask._coo_parts()
    vals = dense[tuple(Tensor._make(i) for i in idx)] if idx.shape[1] else _empty_like_values(dense, idx)
    return mask._with_values(vals.reshape(tuple(mask._sp_values.shape)))


def _empty_like_values(dense: Tensor, idx: np.ndarray) -> Tensor:
    return Tensor._make(np.zeros((0,) + tuple(dense.shape[idx.shape[0] :]), dtype=dense._data.dtype))


def _strided_only(what: str, family: str) -> Any:
    def method(self: Tensor, *args: Any) -> Any:
        raise RuntimeError(f"{what} expected sparse {family} compressed tensor layout but got {_kind(self)}")

    method.__name__ = what
    return method


TENSOR_OPERATORS = {
    "crow_indices": _strided_only("crow_indices", "row"),
    "col_indices": _strided_only("col_indices", "row"),
    "ccol_indices": _strided_only("ccol_indices", "column"),
    "row_indices": _strided_only("row_indices", "column"),
}

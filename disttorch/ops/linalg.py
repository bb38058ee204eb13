"""Matrix products: matmul (1-D, 2-D and batched with broadcasting) and its special
cases mm, bmm, mv, dot, outer (and addmm); ``einsum`` and ``tensordot`` are one Function
each, and so is ``trace``. One Function (Matmul) does all the matmul cases; the public
functions only add PyTorch's argument checks."""

from __future__ import annotations

import string
from collections import Counter
from typing import Any

import numpy as np

from .._dtype import c_type_name, from_numpy, result_type, scalar_type_name
from .._tensor import Tensor, _wrap_dim
from ..autograd.autocast_state import autocast_op
from ..autograd.function import Function, named_node
from ..autograd.grad_mode import recording
from ..autograd.saved_fields import operand_fields, saved
from ..kernels.small_bmm import is_small_bmm, small_bmm
from ..kernels.tensor_iterator import dim_order
from ..kernels.threads import matmul as blas_matmul
from ._helpers import broadcast_error
from .deprecated_overloads import scales_first
from .dtype_rules import refuse_kernel, require_same_scalar_type
from .opmath import computed_in_float32
from .sparse_base import SparseBase

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "outer", "addmm", "einsum", "tensordot", "trace"]

TENSOR_METHODS = ("matmul", "mm", "bmm", "mv", "dot", "outer", "addmm", "trace")


def _shape_str(s: tuple) -> str:
    return "x".join(str(d) for d in s)


def _mT(t: Tensor) -> Tensor:
    """``t.mT``; a plain NumPy view when the backward pass is not itself recorded."""
    return t.mT if recording() else Tensor._make(t._data.swapaxes(-1, -2))


def _mismatch(sx: tuple, sy: tuple) -> RuntimeError:
    """PyTorch's message for operands whose inner dimensions differ, naming both shapes."""
    if len(sx) == 1 and len(sy) == 1:
        return RuntimeError(
            f"inconsistent tensor size, expected tensor [{sx[0]}] and src "
            f"[{sy[0]}] to have the same number of elements, but got {sx[0]} "
            f"and {sy[0]} elements respectively"
        )
    if len(sy) == 1 and len(sx) == 2:
        return RuntimeError(f"size mismatch, got input ({sx[0]}), mat ({_shape_str(sx)}), vec ({sy[0]})")
    if len(sx) <= 2 and len(sy) <= 2:
        return RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied "
            f"({_shape_str(sx if len(sx) == 2 else (1,) + sx)} and "
            f"{_shape_str(sy)})"
        )
    return RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: "
        f"[{sx[-1]}] but got: [{sy[-2] if len(sy) > 1 else sy[0]}] (matmul of "
        f"shapes {list(sx)} and {list(sy)})"
    )


#: PyTorch's node for a matrix product, by the operands' dims (3 standing for 3 or more)
_MATMUL_NODE = {
    (2, 2): "MmBackward0",
    (2, 1): "MvBackward0",
    (1, 2): "SqueezeBackward4",
    (1, 1): "DotBackward0",
}


#: what PyTorch's node for each kind of matrix product saves
_MATMUL_FIELDS = {
    "MmBackward0": {
        **operand_fields("mat2", saved(1), lambda node: node.operand_geometry[1]),
        **operand_fields("self", saved(0), lambda node: node.operand_geometry[0]),
    },
    "MvBackward0": {"self": saved(0), "vec": saved(1)},
    "DotBackward0": {"self": saved(0), "tensor": saved(1)},
}


class Matmul(Function):
    _raw = True
    _blas = True  # float16 computed in float32 (NumPy has no float16 BLAS)

    @staticmethod
    def _backward_saves(ctx: Any) -> dict:
        return _MATMUL_FIELDS.get(ctx.name(), {})

    @staticmethod
    def forward(ctx, a, b):
        x, y = a._data, b._data
        if x.ndim == 0 or y.ndim == 0:
            raise RuntimeError(
                f"both arguments to matmul need to be at least 1D, but they are {x.ndim}D and {y.ndim}D"
            )
        if x.dtype != y.dtype:
            raise RuntimeError(
                f"expected m1 and m2 to have the same dtype, but got: "
                f"{c_type_name(x.dtype)} != {c_type_name(y.dtype)}"
            )
        refuse_kernel("addmm_impl_cpu_", a, "b")
        ctx._node_name = _MATMUL_NODE.get((min(x.ndim, 3), min(y.ndim, 3)), "UnsafeViewBackward0")
        kx = x.shape[-1]
        ky = y.shape[-2] if y.ndim > 1 else y.shape[0]
        if kx != ky:
            raise _mismatch(x.shape, y.shape)
        if ctx.needs_input_grad:  # each operand only for the other's gradient, as PyTorch's
            na, nb = ctx.needs_input_grad
            ctx.save_for_backward(a if nb else None, b if na else None)
            ctx.ndims = (x.ndim, y.ndim)
            ctx.operand_geometry = ((x.shape, a.stride() if na else ()), (y.shape, b.stride() if nb else ()))
        try:
            return small_bmm(x, y) if is_small_bmm(x, y) else blas_matmul(x, y)
        except ValueError:
            raise broadcast_error(x.shape[:-2], y.shape[:-2]) from None

    @staticmethod
    def backward(ctx, g):
        a, b = ctx._checked_saved()  # (a kept only for b's gradient, b only for a's)
        if g._data.dtype.kind == "c":  # complex: grad @ conj(b)^T and conj(a)^T @ grad
            a, b = (t.conj() if t is not None else None for t in (a, b))
        na, nb = ctx.needs_input_grad
        da, db = ctx.ndims
        if da == 2 and db == 2:
            return (Matmul.apply(g, _mT(b)) if na else None), (Matmul.apply(_mT(a), g) if nb else None)
        if da == 1 and db == 1:
            return (g * b if na else None), (g * a if nb else None)
        # 1-D operands are matrices with a size-1 dim (dropped again from their gradients);
        # the engine sums gradients of broadcast batch dims back to each operand's shape.
        g2 = g
        if da == 1:
            g2 = g2.unsqueeze(-2)
        if db == 1:
            g2 = g2.unsqueeze(-1)
        ga = gb = None
        if na:
            ga = Matmul.apply(g2, _mT(b.unsqueeze(-1) if db == 1 else b))
            if da == 1:
                ga = ga.squeeze(-2)
        if nb:
            gb = Matmul.apply(_mT(a.unsqueeze(0) if da == 1 else a), g2)
            if db == 1:
                gb = gb.squeeze(-1)
        return ga, gb


@autocast_op("lower")
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy/PyTorch semantics for 1-D, 2-D and batched operands."""
    if isinstance(input, SparseBase) or isinstance(other, SparseBase):
        return input.__matmul__(other) if isinstance(input, SparseBase) else other.__rmatmul__(input)
    return Matmul.apply(input, other)


@autocast_op("lower")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two 2-D matrices (either may be sparse: COO, CSR, CSC, BSR or BSC)."""
    if isinstance(input, SparseBase) or isinstance(mat2, SparseBase):
        return matmul(input, mat2)
    if input._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError("self must be a matrix" if input._data.ndim != 2 else "mat2 must be a matrix")
    return Matmul.apply(input, mat2)


@autocast_op("lower")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched product of two 3-D tensors with equal batch sizes."""
    if input._data.ndim != 3 or mat2._data.ndim != 3:
        raise RuntimeError(
            "batch1 must be a 3D tensor" if input._data.ndim != 3 else "batch2 must be a 3D tensor"
        )
    (b1, _, k1), (b2, k2, _) = input._data.shape, mat2._data.shape
    if b1 != b2 or k1 != k2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b1}, {k1}] but got: [{b2}, {k2}]."
        )
    refuse_kernel("bmm", input, "b")
    require_same_scalar_type(input, mat2)
    return named_node(Matmul.apply(input, mat2), "BmmBackward0")


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Product of a matrix (dense or sparse) and a vector."""
    if isinstance(input, SparseBase):
        if input.dim() != 2 or vec.dim() != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}")
        return input @ vec
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, {vec._data.ndim}")
    return Matmul.apply(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors."""
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {tensor._data.ndim}D tensors"
        )
    if input._data.dtype != tensor._data.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found "
            f"{scalar_type_name(input._data.dtype)} and {scalar_type_name(tensor._data.dtype)}"
        )
    refuse_kernel("dot", input, "b")
    return Matmul.apply(input, tensor)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``."""
    for name, v in (("vec1", input), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    return input.unsqueeze(1) * vec2.unsqueeze(0)  # a product: promotes dtypes as PyTorch's


def check_addmm_dtypes(x: np.dtype, w: np.dtype, b: np.dtype | None) -> None:
    """PyTorch's errors for a matrix product's operands of different dtypes: those of
    ``addmm`` with an added ``b`` (``mat1`` against ``mat2``, then ``self`` against ``mat2``),
    of ``mm`` without."""
    if b is None and x != w:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {c_type_name(x)} != {c_type_name(w)}"
        )
    for first, name in ((x, "mat1"), (b, "self")):
        if b is not None and first != w:
            raise RuntimeError(
                f"{name} and mat2 must have the same dtype, but got {scalar_type_name(first)} and {scalar_type_name(w)}"
            )


@autocast_op("lower")
@scales_first
@computed_in_float32
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` (``input`` broadcast to the product's shape)."""
    if not any(isinstance(t, SparseBase) for t in (input, mat1, mat2)):
        check_addmm_dtypes(mat1._data.dtype, mat2._data.dtype, input._data.dtype)
    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    if beta != 0:  # as PyTorch: with beta 0 input is ignored, even its NaNs
        prod = (input if beta == 1 else input * beta) + prod
    return named_node(prod, "AddmmBackward0")


# ---------------------------------------------------------------------- einsum
def _einsum_subscripts(equation: str, shapes: list) -> tuple[list, str]:
    """Each operand's subscripts and the output's, with ``...`` spelled out as letters the
    equation does not use (right-aligned, so operands broadcast as in PyTorch) and an
    implicit output made explicit (ellipsis dims, then letters used once, sorted)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    n_ell = max([len(sh) - (len(t) - 3) for t, sh in zip(terms, shapes) if "..." in t] + [0])
    spare = [c for c in string.ascii_letters if c not in eq]
    ell = "".join(spare[:n_ell])
    subs = []
    for i, (t, sh) in enumerate(zip(terms, shapes)):
        if "..." in t:
            t = t.replace("...", ell[n_ell - (len(sh) - (len(t) - 3)) :])
        elif len(t) != len(sh):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(t)}) "
                f"does not match the number of dimensions ({len(sh)}) for "
                f"operand {i} and no ellipsis was given"
            )
        subs.append(t)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = Counter("".join(subs))
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return subs, out


class Einsum(Function):
    """``einsum`` over operands whose subscripts are already explicit (see
    :func:`_einsum_subscripts`). The gradient of each operand is itself an einsum of the
    upstream gradient with the other operands."""

    _raw = True
    _blas = True  # float16 computed in float32 (NumPy has no float16 BLAS)

    @staticmethod
    def forward(ctx, subs, out_sub, *operands):
        arrays = [o._data for o in operands]
        if ctx.needs_input_grad:  # (an operand requiring grad repeats no subscript: see einsum)
            needs = ctx.needs_input_grad[2:]  # an operand is kept only for another's gradient
            kept = [
                o if any(n for j, n in enumerate(needs) if j != i) else None for i, o in enumerate(operands)
            ]
            ctx.save_for_backward(*kept)
            ctx.subs, ctx.out_sub, ctx.shapes = subs, out_sub, [a.shape for a in arrays]
        eq = ",".join(subs) + "->" + out_sub
        # NumPy's contraction planner (BLAS where it can) pays off beyond tiny operands; sizes
        # that do not broadcast raise its ValueError (einsum names them as PyTorch does)
        big = len(arrays) > 2 or max(a.size for a in arrays) > 256
        out = np.asarray(np.einsum(eq, *arrays, optimize=big))
        return _pytorch_layout(out, subs, out_sub, [a.shape for a in arrays])

    @staticmethod
    def backward(ctx, g):
        operands = ctx._checked_saved()
        grads = []
        for i in range(len(operands)):
            if not ctx.needs_input_grad[2 + i]:
                grads.append(None)
                continue
            others = [j for j in range(len(operands)) if j != i]
            seen = set(ctx.out_sub).union(*(ctx.subs[j] for j in others))
            mine = ctx.subs[i]
            kept = "".join(c for c in mine if c in seen)  # letters summed in op alone drop out
            gi = Einsum.apply(  # complex operands enter conjugated (holomorphic in each)
                [ctx.out_sub] + [ctx.subs[j] for j in others], kept, g, *(operands[j].conj() for j in others)
            )
            if kept != mine:  # constant along the dropped letters: broadcast back over them
                shape = ctx.shapes[i]
                gi = gi.reshape(tuple(s if c in seen else 1 for c, s in zip(mine, shape)))
                gi = gi.expand(shape)
            grads.append(gi)
        return (None, None) + tuple(grads)


def _pytorch_layout(out: np.ndarray, subs: list, out_sub: str, shapes: list) -> np.ndarray:
    """An einsum's result laid out in memory as PyTorch's, so a later ``view`` works where
    PyTorch's does (Longformer views ``einsum("bcwd,bcdh->bcwh", ...)``), ``stride()``
    agrees and layout-following ops (dropout's mask) draw as PyTorch's.

    PyTorch aligns the operands to the output's letters, then the summed ones (A-Z, a-z);
    one operand with letters to sum is reduced (a contiguous result); more are multiplied
    pairwise from the left (as PyTorch does without ``opt_einsum``), each operand's own
    summed letters summed first, so the result is the last pair's (see :func:`_pair_layout`),
    whose left side holds the letters of those before it that are still needed."""
    if len(subs) == 1:  # (one operand with nothing to sum is a view: see einsum)
        return out if out.flags.c_contiguous else out.copy()
    if out.ndim < 2:
        return out
    summed = sorted(set("".join(subs)) - set(out_sub), key=lambda c: (c.islower(), c))
    if len(subs) > 2:  # the left: what the pairs before made (taken as contiguous in aligned order)
        keep = set(out_sub) | set(subs[-1])
        sizes = {c: n for t, sh in zip(subs[:-1], shapes[:-1]) for c, n in zip(t, sh) if n != 1}
        left = [c for c in list(out_sub) + summed if c in keep and c in sizes]
        subs, shapes = ["".join(left), subs[-1]], [tuple(sizes[c] for c in left), shapes[-1]]
    return _pair_layout(out, subs, out_sub, shapes, summed)


def _pair_layout(out: np.ndarray, subs: list, out_sub: str, shapes: list, summed: list) -> np.ndarray:
    """``out`` laid out as PyTorch's product of two operands aligned to the output's
    letters and then all the ``summed`` ones. With letters summed in both, one ``bmm``
    whose result holds the letters non-trivial (size not 1) in both, then the left's own,
    then the right's own (size-1 letters, summed ones too, count as the right's), each in
    aligned order; when all of the right's own precede the left's, the operands swap.
    Otherwise a broadcast ``mul``, whose result follows its operands' strides as PyTorch's
    elementwise ops order dims (``TensorIterator``'s order, :func:`~disttorch.kernels.tensor_iterator.dim_order`)."""
    sizes = [dict(zip(t, sh)) for t, sh in zip(subs, shapes)]
    aligned = list(out_sub) + summed
    lro, lo, ro, bmm_summed = [], [], [], False
    for k, c in enumerate(aligned):
        sl, sr = sizes[0].get(c, 1) != 1, sizes[1].get(c, 1) != 1
        if c in summed:
            bmm_summed |= sl and sr
            if not (sl and sr):  # summed beforehand, or by an earlier pair: a size-1 dim of the right's
                ro.append(k)
        elif sl and sr:
            lro.append(k)
        elif sl:
            lo.append(k)
        else:
            ro.append(k)
    if bmm_summed:
        if lo and ro and ro[-1] < lo[0]:
            lo, ro = ro, lo
        perm = [k for k in lro + lo + ro if k < len(out_sub)]
    else:
        strides = [_aligned_strides(t, sh, out_sub, summed, out.shape) for t, sh in zip(subs, shapes)]
        perm = dim_order(out.shape, *strides)  # (slowest first)
    return np.ascontiguousarray(out.transpose(perm)).transpose(np.argsort(perm))


def _aligned_strides(sub: str, shape: tuple, out_sub: str, summed: list, common: tuple) -> list[int]:
    """An operand's strides (in elements) over the output's letters, as PyTorch's einsum
    multiplies it: its own summed letters summed first (a contiguous result), a letter it
    lacks or holds once where the product has more broadcast (stride 0)."""
    size = dict(zip(sub, shape))
    dims = [size.get(c, 1) for c in out_sub]
    if any(c in summed for c in sub):
        strides = np.cumprod([1, *dims[::-1]])[:-1][::-1].tolist()
    else:
        own = dict(zip(sub, np.empty(shape, np.int8).strides if shape else ()))
        strides = [own.get(c, 0) for c in out_sub]
    return [0 if n == 1 and m != 1 else st for st, n, m in zip(strides, dims, common)]


def _einsum_size_error(subs: list, arrays: list, ellipsis: str) -> RuntimeError:
    """PyTorch's message naming the first subscript, or dimension covered by the ellipsis
    (``ellipsis``: the letters standing for its dims), whose sizes do not broadcast between
    two operands, scanning each operand's dims in order."""
    sizes: dict = {}
    for i, (t, a) in enumerate(zip(subs, arrays)):
        for d, (c, n) in enumerate(zip(t, a.shape)):
            seen = sizes.get(c, 1)
            if n != 1 and seen not in (1, n):
                if c in ellipsis:
                    return RuntimeError(
                        f"einsum(): dimension {d} covered by ellipsis in operand {i}has size {n} which does "
                        f"not broadcast with previously seen ellipsis with size {seen} for the respective dimension"
                    )
                return RuntimeError(
                    f"einsum(): subscript {c} has size {n} for operand {i} "
                    f"which does not broadcast with previously seen size {seen}"
                )
            if seen == 1:
                sizes[c] = n
    return RuntimeError(
        f"einsum(): operands of shapes {[list(a.shape) for a in arrays]} do not fit the subscripts {subs}"
    )


@autocast_op("lower")
def einsum(equation: str, *operands: Any) -> Tensor:
    """Sum of products over the subscripts of ``equation`` (NumPy/PyTorch notation, with
    ``...`` and implicit output), e.g. ``einsum('bij,bjk->bik', a, b)``.

    Operands may also be given as one list. An operand that requires grad and repeats a
    subscript (``'ii'``) enters as that diagonal, a view (as in PyTorch).
    """
    if not isinstance(equation, str):  # the sublist form: einsum(a, [0, 1], b, [1, 2], [0, 2])
        equation, operands = _sublist_equation((equation, *operands))
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    subs, out = _einsum_subscripts(equation, [o._data.shape for o in operands])
    contracted = _contracted_operands(subs, out)
    if contracted:  # contracted by bmm in PyTorch: one dtype, and not bool
        refuse_kernel("bmm", operands[contracted[0]], "b")
        require_same_scalar_type(*(operands[i] for i in contracted))
    dtype = _promoted_dtype([o._data for o in operands])
    operands = tuple(o if o._data.dtype == dtype else o.to(from_numpy(dtype)) for o in operands)
    if len(operands) == 1 and set(subs[0]) <= set(out):  # nothing summed: a view, as PyTorch's
        sub, view = _diagonals(0, subs[0], operands[0])
        return view.permute([sub.index(c) for c in out])
    for i, (t, o) in enumerate(zip(subs, operands)):
        if o.requires_grad and len(set(t)) != len(t):
            subs[i], o = _diagonals(i, t, o)
            operands = operands[:i] + (o,) + operands[i + 1 :]
    try:
        return Einsum.apply(subs, out, *operands)
    except ValueError:
        ellipsis = "".join({c for t in subs for c in t} - set(equation))
        raise _einsum_size_error(subs, [o._data for o in operands], ellipsis) from None


_SUBLIST_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_equation(args: tuple) -> tuple[str, tuple]:
    """The equation and operands of einsum's sublist form (operands each followed by a list
    of subscripts, integers below 52 or ``...``; optionally the output's list last)."""

    def letters(sub: Any) -> str:
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < len(_SUBLIST_LETTERS):
                out.append(_SUBLIST_LETTERS[s])
            else:
                raise ValueError(f"einsum(): expected subscript to be within the range [0, 52), but got {s}")
        return "".join(out)

    operands, subs = args[0:-1:2] if len(args) % 2 else args[0::2], args[1::2]
    inputs = ",".join(letters(sub) for sub in subs[: len(operands)])
    output = "->" + letters(args[-1]) if len(args) % 2 else ""
    return inputs + output, tuple(operands)


def _diagonals(i: int, sub: str, operand: Tensor) -> tuple[str, Tensor]:
    """Operand ``i`` with each subscript it repeats (``'ii'``) taken as that diagonal (a view,
    as PyTorch's einsum does), and its subscripts without the repeats."""
    while len(set(sub)) != len(sub):
        c = next(c for c in sub if sub.count(c) > 1)
        j, k = sub.index(c), sub.index(c, sub.index(c) + 1)
        n, m = operand.shape[j], operand.shape[k]
        if n != m:
            raise RuntimeError(
                f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't match, {m} != {n}"
            )
        operand, sub = operand.diagonal(0, j, k).movedim(-1, j), sub[:k] + sub[k + 1 :]
    return sub, operand


def _contracted_operands(subs: list, out: str) -> list[int]:
    """The operands that share a summed subscript: PyTorch multiplies those with ``bmm``
    (one dtype); the others meet by broadcast multiplication, which promotes dtypes."""
    shared = [c for c in set("".join(subs)) - set(out) if sum(c in t for t in subs) > 1]
    return sorted({i for c in shared for i, t in enumerate(subs) if c in t})


def _promoted_dtype(arrays: list) -> np.dtype:
    """The dtype of multiplying ``arrays`` one after another (PyTorch's promotion; einsum
    first aligns every operand to all subscripts, so a 0-dim operand counts in full)."""
    acc = np.empty(0, arrays[0].dtype)
    for a in arrays[1:]:
        acc = np.empty(0, result_type(acc, np.empty(0, a.dtype)))
    return acc.dtype


# ---------------------------------------------------------------------- tensordot, trace
class Tensordot(Function):
    """Sum of products over the paired dims ``dims_a`` of ``a`` and ``dims_b`` of ``b``
    (wrapped, equal sizes); the result has ``a``'s other dims, then ``b``'s. Each gradient
    is a tensordot of the upstream gradient with the other operand, permuted back."""

    _raw = True
    _blas = True  # float16 computed in float32 (NumPy has no float16 BLAS)

    @staticmethod
    def forward(ctx, a, b, dims_a, dims_b):
        if ctx.needs_input_grad:
            ctx.save_for_backward(a, b)
            ctx.dims = (dims_a, dims_b)
        return np.asarray(np.tensordot(a._data, b._data, axes=(dims_a, dims_b)))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx._checked_saved()
        a, b = a.conj(), b.conj()  # complex: the gradient is g contracted with the conjugates
        da, db = ctx.dims
        free_a = [i for i in range(a._data.ndim) if i not in da]
        free_b = [j for j in range(b._data.ndim) if j not in db]
        na, nb = ctx.needs_input_grad[:2]
        ga = gb = None
        if na:  # axes: a's free dims, then b's contracted dims in b's order (as a's dims)
            ga = Tensordot.apply(g, b, list(range(len(free_a), g._data.ndim)), free_b)
            order = free_a + [da[db.index(j)] for j in sorted(db)]
            ga = ga.permute(tuple(np.argsort(order)))
        if nb:  # axes: a's contracted dims in a's order (as b's dims), then b's free dims
            gb = Tensordot.apply(a, g, free_a, list(range(len(free_a))))
            order = [db[da.index(i)] for i in sorted(da)] + free_b
            gb = gb.permute(tuple(np.argsort(order)))
        return ga, gb, None, None


_DIMS_MSG = (
    "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
    "containing two lists, but got dims={}"
)


def _tensordot_dims(a: Tensor, b: Tensor, dims: Any) -> tuple[list, list]:
    """The two lists of dims to contract, from an int, a pair of lists or a tensor."""
    if isinstance(dims, Tensor):
        dims = dims._data.tolist() if dims._data.size > 1 else int(dims._data.reshape(()))
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        dims = int(dims)
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a._data.ndim, b._data.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    if not isinstance(dims, (tuple, list)) or len(dims) != 2:
        raise RuntimeError(_DIMS_MSG.format(dims))
    lists = []
    for (name, pos), d in zip((("dims_self", 3), ("dims_other", 4)), dims):
        if isinstance(d, Tensor):
            d = d._data.tolist()
        if not isinstance(d, (tuple, list)):
            raise TypeError(
                f"tensordot(): argument '{name}' (position {pos}) must be tuple of "
                f"ints, not {type(d).__name__}"
            )
        lists.append([int(i) for i in d])
    return lists[0], lists[1]


@autocast_op("lower")
def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Contract ``a`` and ``b`` over dims: an int ``d`` pairs the last ``d`` dims of ``a``
    with the first ``d`` of ``b``; a pair of lists ``([i, ...], [j, ...])`` names the
    paired dims. The result has ``a``'s remaining dims, then ``b``'s. As in PyTorch, a
    paired dim of size 1 is summed against the other operand's dim of any size."""
    given_a, given_b = _tensordot_dims(a, b, dims)
    if len(given_a) != len(given_b):
        raise RuntimeError("both dimension lists should have same length")
    x, y = a._data, b._data
    if x.dtype != y.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if x.dtype.kind == "b":
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    da = [_wrap_dim(d, x.ndim) for d in given_a]
    db = [_wrap_dim(d, y.ndim) for d in given_b]
    for wrapped in (da, db):
        for d in wrapped:
            if wrapped.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    for i, j, gi, gj in zip(da, db, given_a, given_b):
        si, sj = x.shape[i], y.shape[j]
        if si == sj:
            continue
        if si == 1:
            b = b.sum(j, keepdim=True)
        elif sj == 1:
            a = a.sum(i, keepdim=True)
        else:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {si} in "
                f"dim {gi} and second has size {sj} in dim {gj}"
            )
    return Tensordot.apply(a, b, da, db)


class Trace(Function):
    """Sum of the main diagonal of a matrix; the gradient is ``g`` on that diagonal."""

    _raw = True

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
        if x.dtype.kind == "b":
            raise NotImplementedError("\"trace\" not implemented for 'Bool'")
        ctx.shape = x.shape
        return np.asarray(np.trace(x, dtype=np.int64 if x.dtype.kind in "iu" else x.dtype))

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make(np.eye(*ctx.shape, dtype=g._data.dtype))


@autocast_op("fp32")
def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a 2-D tensor (integers sum to int64)."""
    return Trace.apply(input)

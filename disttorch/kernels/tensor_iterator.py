"""How PyTorch's ``TensorIterator`` walks an elementwise kernel's operands, for kernels whose
bits depend on it (SLEEF's functions on whole blocks of each vectorised inner loop, 32
elements with PyTorch's AVX512 kernels and 16 with its AVX2 ones, the C library's on the
rest: :func:`vector_block`): the order of the dims (by strides: a transposed operand in its
memory order), the elements each inner loop takes (the trailing dims it coalesces), and
whether that loop is vectorised (a strided inner dim, such as a column slice, is not)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .cpu_features import float_lanes

__all__ = [
    "by_inner_loops",
    "by_rows",
    "dim_order",
    "in_memory_order",
    "inner_run",
    "iteration",
    "vector_block",
]


def inner_run(shape: tuple[int, ...], *strides: tuple[int, ...]) -> int:
    """How many elements PyTorch's ``TensorIterator`` hands its inner loop at once for
    operands of these (broadcast) ``strides``, the dims of ``shape`` in its order (outermost
    first): the trailing dimensions it coalesces (each operand's stride there the product of
    the ones inside it, or 0 throughout)."""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    if not dims:
        return 1
    run, inner = shape[dims[-1]], [s[dims[-1]] for s in strides]
    for d in reversed(dims[:-1]):
        if any(s[d] != run * i for s, i in zip(strides, inner)):
            break
        run *= shape[d]
    return run


def dim_order(shape: tuple[int, ...], *strides: tuple[int, ...]) -> list[int]:
    """The dims, outermost first, as ``TensorIterator`` orders them for operands of these
    (broadcast) ``strides``: by stride, the first operand deciding that is not broadcast in
    either dim, then by size (its insertion sort, from the last dim). With one operand, the
    dense layout PyTorch infers for an overlapping or holed tensor (``preserve_format``)."""

    def swap(d0: int, d1: int) -> int:
        for s in strides:
            if s[d0] and s[d1]:
                if s[d0] != s[d1]:
                    return 1 if s[d0] > s[d1] else -1
                if shape[d0] > shape[d1]:
                    return 1
        return 0

    perm = list(reversed(range(len(shape))))  # (innermost first)
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            way = swap(perm[d0], perm[d1])
            if way < 0:
                break
            if way > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
    return perm[::-1]


def iteration(shape: tuple[int, ...], *operands: np.ndarray) -> tuple[list[int], int, bool]:
    """How PyTorch's ``TensorIterator`` walks ``operands`` broadcast to ``shape`` (a result
    laid out before the loop among them, first): the dims outermost first, the elements its
    inner loop takes at once, and whether that loop is vectorised (each operand's innermost
    stride its element's size, or 0). A negatively strided view (a flip, which PyTorch
    copies) counts as contiguous."""
    views = [np.broadcast_to(a, shape) for a in operands]
    order = list(range(len(shape)))
    if any(s < 0 for v in views for s in v.strides):  # (np.asarray keeps a 0-d operand 0-d)
        views = [np.broadcast_to(np.asarray(a, order="C"), shape) for a in operands]
    else:
        order = dim_order(shape, *(v.strides for v in views))
        views = [v.transpose(order) for v in views]
    run = inner_run(views[0].shape, *(v.strides for v in views))
    inner = [d for d, n in enumerate(views[0].shape) if n != 1]
    vectorised = not inner or all(v.strides[inner[-1]] in (0, v.itemsize) for v in views)
    return order, run, vectorised


def vector_block() -> int:
    """The elements of one block of PyTorch's vectorised inner loop (``vectorized_loop``: two
    vectors at a time), the scalar loop taking what is left after the last whole block: 32
    with its AVX512 kernels, 16 with its AVX2 ones (:func:`.cpu_features.float_lanes`)."""
    return 2 * float_lanes()


def by_inner_loops(
    x: np.ndarray,
    compute: Callable[[np.ndarray, int], np.ndarray],
    like: np.ndarray | tuple[np.ndarray, ...] | None = None,
) -> np.ndarray:
    """A float32 unary kernel over ``x`` as PyTorch runs it: ``compute(flat, cut)`` gives
    ``flat``'s results, its first ``cut`` elements taken as whole vector blocks and the rest
    by the scalar loop; it is handed ``x``'s elements in ``TensorIterator``'s order, the blocks
    of every inner loop together, and the results come back in ``x``'s shape. ``like``: the
    operand whose layout decides that order, where ``x`` was computed from it in a fresh
    array (PyTorch's kernel computes that argument inside its loop over the operand), or a
    tuple of the kernel's operands of ``x``'s shape, in its order (a binary kernel's). The
    result is laid out in that order (a channels-last input gives a channels-last result)."""
    if not x.size:
        return compute(x.reshape(-1), 0).reshape(x.shape)
    operands = (x,) if like is None else like if isinstance(like, tuple) else (like,)
    order, run, vectorised = iteration(x.shape, *operands)
    walked = np.transpose(x, order)
    done = by_rows(np.ascontiguousarray(walked).reshape(-1, run), compute, vectorised)
    if order == sorted(order):
        return done.reshape(x.shape)
    # the results are in x's memory order: laid out as x is (PyTorch's output of a dense input)
    return done.reshape(walked.shape).transpose(np.argsort(order))


def in_memory_order(kernel: Callable, x: np.ndarray, *args: object) -> object:
    """``kernel(x, *args)`` for an element-wise kernel that walks ``x`` flat in C order (its
    result an array, or a tuple of arrays or None, of ``x``'s shape): run on ``x``'s dims in
    its memory order when that makes it dense, the results transposed back, so that they are
    laid out as ``x`` is (a channels-last input gives a channels-last result, as PyTorch's)."""
    if x.ndim < 2 or x.flags.c_contiguous:
        return kernel(x, *args)
    order = dim_order(x.shape, x.strides)
    walked = x.transpose(order)
    if not walked.flags.c_contiguous:
        return kernel(x, *args)
    back = np.argsort(order)
    out = kernel(walked, *args)
    if isinstance(out, tuple):
        return tuple(None if o is None else o.transpose(back) for o in out)
    return out.transpose(back)


def by_rows(
    rows: np.ndarray, compute: Callable[[np.ndarray, int], np.ndarray], vectorised: bool = True
) -> np.ndarray:
    """:func:`by_inner_loops` where each row of the C-contiguous 2-D ``rows`` is one inner loop
    (vectorised or not): the results, of ``rows``' shape."""
    run = rows.shape[1]
    cut = run - run % vector_block() if vectorised else 0
    if cut in (0, run) or rows.shape[0] == 1:
        return compute(rows.reshape(-1), cut if rows.shape[0] == 1 else cut and rows.size).reshape(rows.shape)
    blocks = compute(np.ascontiguousarray(rows[:, :cut]).reshape(-1), rows.shape[0] * cut)
    rest = compute(np.ascontiguousarray(rows[:, cut:]).reshape(-1), 0)
    return np.concatenate([blocks.reshape(-1, cut), rest.reshape(-1, run - cut)], axis=1)

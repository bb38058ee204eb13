"""Intra-op threads: how many threads one op may use, and the pool that runs its parts.

One budget per process (``torch.set_num_threads``; at start ``OMP_NUM_THREADS``, which the
launcher sets to each rank's cores, else the usable cores, where PyTorch counts physical
cores). A kernel with more work than one thread should do splits it along a leading axis
with :func:`parallel_for`: the parts run on a small pool of Python threads, each calling
NumPy, which releases the GIL in its loops, copies and BLAS calls
(:mod:`disttorch.kernels.thread_pool`: with the ``fast`` extra its threads spin briefly
between ops instead of sleeping, as OpenMP's do).

This pool is the process's only one. NumPy's BLAS is held to one thread, on the thread
that calls it, and :func:`matmul` splits a large product over the pool like any other op.
With the ``fast`` extra the parts of products go to the pool as data, not Python
(:mod:`disttorch.kernels.gemm_parts`): each thread calls BLAS from compiled code, and a
worker starts its part without waiting for the GIL.
Two pools would fight over the cores: OpenBLAS's threads keep spinning on a core for a
while after each product they share, and an op split right after one runs its parts at
about half speed (measured on 2 cores: a 2048x128 by 128x384 product split over this pool
took 1.26 ms right after OpenBLAS's own 2 threads had worked, 0.64 ms after a pause).

Rules that keep results and costs predictable:

- Parts are consecutive slices of the leading axis and every element is computed by the
  same NumPy call whatever the split, so element-wise results are bitwise identical for
  every thread count. A reduction across parts (a weight gradient's sum over images) adds
  the parts' partial sums in a fixed order: deterministic for a thread count, within float
  tolerance across thread counts (PyTorch documents the same of its own reductions).
- An op splits only when each part gets at least :data:`MIN_PART_ELEMENTS` units of work
  (measured by ``benchmarks/threads.py``); smaller ops run as before, paying one comparison.
  A unit is what a float32 multiply does to one element (about 0.1 ns of a core); a kernel
  counts its work in these units: an ``exp`` costs some 8 per element, a multiply-add of a
  matrix product 1/4.
- One split op at a time: a part that calls another op, or a second Python thread starting
  an op while one is split, runs that op on its own thread (no nesting, no oversubscription).
- A forked child (data-loader workers) starts without the parent's pool and makes its own.
"""

from __future__ import annotations

import math
import os
import threading
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from disttorch.kernels import vml
from disttorch.kernels.gemm_parts import Gemm, find_gemm
from disttorch.kernels.product_cuts import cut_bounds, cut_rule
from disttorch.kernels.thread_pool import MAX_PRODUCTS, OpPool

__all__ = [
    "MIN_PART_ELEMENTS",
    "astype",
    "blas_gemm",
    "concatenate",
    "copy",
    "default_num_threads",
    "elementwise",
    "get_num_threads",
    "lapack",
    "parallel_for",
    "parallel_over",
    "map_rows",
    "row_major",
    "matmul",
    "matmuls",
    "stack",
    "parts_for",
    "set_num_threads",
]

#: Units of work (float32 multiplies of one element) a part must get: handing a part to the
#: pool and waiting for it costs some 25-80 us (see ``thread_pool``: a GIL hand-off when the
#: pool spins, two thread wake-ups when it sleeps), 250k-800k such units. benchmarks/threads.py
#: measures where a split starts to pay: on 2 cores a multiply at 1-2M elements, an exp or a
#: row softmax at about 256k. At 768k a part the CNN of ``benchmarks/train_step.py`` splits
#: its ReLUs (1.6M elements, 1.4x faster split) and ran 2-5% faster at 2 threads than at 1M
#: a part, the MLP and the GPT the same within the noise (an in-process A/B); at 512k the
#: MLP and the GPT lost 2-3%.
MIN_PART_ELEMENTS = 3 << 18


#: A matrix product's multiply-adds per unit of work (BLAS does some 40 a nanosecond on
#: one core), so a product splits once each part gets about 4M of them.
MACS_PER_ELEMENT = 4

#: The dtypes whose single matrix products :func:`matmul` cuts by the rows or the columns of
#: the result, where :mod:`disttorch.kernels.product_cuts` found that NumPy's BLAS computes
#: a part with the bits of the same rows or columns of the whole product (float32 and
#: complex64: some 750 float32 and 330 complex64 random shapes, layouts and cuts kept their
#: bits with OpenBLAS's SkylakeX, Cooperlake and SapphireRapids kernels; row cuts at
#: multiples of 12 rows with its Haswell kernels on an AMD EPYC), as long as the part is no
#: matrix-vector product and not small enough for its small-matrix kernels (up to some 1M
#: multiply-adds): hence :data:`MIN_CUT_ROWS` and :data:`MIN_CUT_MACS`. In float64 40-60% of
#: the cuts rounded otherwise (where the result has an odd number of columns, say), so a
#: float64 product runs whole (a stack of them still splits by its products).
#: ``tests/runtime/test_intraop_threads.py`` checks the bits of the cuts at 1 to 4 threads.
CUT_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.complex64))
MIN_CUT_ROWS = 16
MIN_CUT_MACS = 1 << 22

#: Element-wise functions that cost about one unit per element; any other function (an
#: ``exp``, a division, a power) counts :data:`COSTLY_ELEMENT` units per element.
CHEAP_ELEMENTWISE = frozenset(
    {
        np.add,
        np.subtract,
        np.multiply,
        np.negative,
        np.positive,
        np.absolute,
        np.square,
        np.maximum,
        np.minimum,
        np.fmax,
        np.fmin,
        np.greater,
        np.greater_equal,
        np.less,
        np.less_equal,
        np.equal,
        np.not_equal,
        np.logical_and,
        np.logical_or,
        np.logical_not,
        np.logical_xor,
        np.bitwise_and,
        np.bitwise_or,
        np.bitwise_xor,
        np.invert,
        np.sign,
        np.floor,
        np.ceil,
        np.trunc,
        np.rint,
        np.copysign,
        np.isnan,
        np.isinf,
        np.isfinite,
        np.where,
        np.clip,
    }
)
COSTLY_ELEMENT = 8


def default_num_threads() -> int:
    """``OMP_NUM_THREADS`` when it is a positive integer, else the cores this process may use."""
    text = os.environ.get("OMP_NUM_THREADS", "").strip()
    if text.isdigit() and int(text) > 0:
        return int(text)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class _Budget:
    """The process's thread count, its worker pool and the BLAS pools it holds to one thread."""

    def __init__(self) -> None:
        self.threads = default_num_threads()
        self.pool: Optional[OpPool] = None
        self.region = threading.Lock()  # held while one op is split
        self.blas: Optional[List[Any]] = None  # threadpoolctl's BLAS controllers (hold_blas)
        self.gemm: Optional[Gemm] = None  # their CBLAS products, for compiled code to call

    def workers(self) -> OpPool:
        if self.pool is None:
            self.pool = OpPool(self.threads - 1)
        return self.pool

    def hold_blas(self) -> None:
        """Find NumPy's BLAS libraries (those loaded by now) and hold each to one thread;
        nothing without threadpoolctl."""
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            self.blas = []
            return
        mine = {os.path.realpath(path) for path in vml.LOADED}  # vml.py's MKL: NumPy does not use it
        controllers = ThreadpoolController().lib_controllers
        self.blas = [
            c for c in controllers if c.user_api == "blas" and os.path.realpath(c.filepath) not in mine
        ]
        for lib in self.blas:
            lib.set_num_threads(1)
        self.gemm = find_gemm([lib.filepath for lib in self.blas])

    def forget_pool(self) -> None:
        """In a forked child: the parent's threads did not come along."""
        self.pool = None
        self.region = threading.Lock()


_budget = _Budget()
_budget.hold_blas()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_budget.forget_pool)


def get_num_threads() -> int:
    """The number of threads an op may use in this process."""
    return _budget.threads


def set_num_threads(n: int) -> None:
    """Let every op use ``n`` threads (matrix products too; BLAS stays on one thread, also
    in libraries loaded since the start). An op split on another thread finishes first."""
    with _budget.region:
        if n != _budget.threads and _budget.pool is not None:
            _budget.pool.close()
            _budget.pool = None
        _budget.threads = n
        _budget.hold_blas()


def blas_gemm(dtype: Any) -> Optional[Tuple[int, int]]:
    """``(kind, address)`` of NumPy's BLAS ``gemm`` for ``dtype``, for compiled code to call
    (see :mod:`disttorch.kernels.gemm_parts`), or ``None``."""
    return None if _budget.gemm is None else _budget.gemm.addresses.get(np.dtype(dtype))


def parts_for(rows: int, work: int) -> int:
    """How many parts an op over ``rows`` leading rows touching ``work`` elements in all
    splits into: 1 when the budget is one thread or the work is too small to share."""
    if _budget.threads == 1:
        return 1
    return max(1, min(_budget.threads, rows, work // MIN_PART_ELEMENTS))


def parallel_for(rows: int, body: Callable[[int, int], Any], work: int) -> None:
    """Run ``body(start, stop)`` over consecutive slices of ``range(rows)`` that cover it,
    on up to :func:`get_num_threads` threads (see :func:`parts_for`); ``work`` is the
    number of elements the whole op touches. The calling thread runs the first slice; the
    first exception raised by any slice is raised here, after every slice has finished."""
    parts = parts_for(rows, work)
    if parts == 1 or not _budget.region.acquire(blocking=False):
        body(0, rows)
        return
    try:
        parts = min(parts, _budget.threads)  # (as the budget is now: it may have just changed)
        bounds = [rows * i // parts for i in range(parts + 1)]
        _budget.workers().run([(body, bounds[i], bounds[i + 1]) for i in range(parts)])
    finally:
        _budget.region.release()


def parallel_over(
    shape: tuple, body: Callable[[tuple], Any], skip: Tuple[int, ...] = (), work: int = 0
) -> None:
    """Run ``body(index)`` over slices of an array of ``shape`` that cover it, each slice
    taking a range of one axis that is not in ``skip`` (the axes the op reduces or mixes
    along): the first with at least one row per thread, else the longest. ``work``: the
    elements the op touches (default: the array's size)."""
    free = [i for i in range(len(shape)) if i not in skip and i - len(shape) not in skip]
    if not free:
        body((Ellipsis,))
        return
    axis = next((i for i in free if shape[i] >= _budget.threads), max(free, key=lambda i: shape[i]))
    lead = (slice(None),) * axis
    parallel_for(shape[axis], lambda i, j: body(lead + (slice(i, j),)), work or int(np.prod(shape)))


def map_rows(fn: Callable[..., tuple], *arrays: np.ndarray, work: int = 0, into: bool = False) -> tuple:
    """``fn(*arrays)`` for a function returning a tuple of arrays whose row ``i`` (leading
    axis) depends only on row ``i`` of every argument: pooling over a batch, say. Split
    over threads by rows when large (``work``: elements touched, default the arguments'
    size); each thread copies its rows of the results into place, or with ``into`` writes
    them there itself: ``fn`` then takes ``out=``, a tuple of the results' rows to fill
    (``None`` when it should return new arrays)."""
    n = len(arrays[0])
    call = (lambda *rows, out=None: fn(*rows, out=out)) if into else (lambda *rows, out=None: fn(*rows))
    if parts_for(n, work or sum(a.size for a in arrays)) == 1:
        return call(*arrays)
    outs = [np.empty((n,) + r.shape[1:], dtype=r.dtype) for r in call(*(a[:0] for a in arrays))]

    def part(start: int, stop: int) -> None:
        if into:
            fn(*(a[start:stop] for a in arrays), out=tuple(out[start:stop] for out in outs))
            return
        for out, rows in zip(outs, fn(*(a[start:stop] for a in arrays))):
            out[start:stop] = rows

    parallel_for(n, part, work or sum(a.size for a in arrays))
    return tuple(outs)


def elementwise(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> np.ndarray:
    """``fn(*args, **kwargs)`` for an element-wise NumPy function (a ufunc, or any function
    whose every output element depends only on the inputs' elements at the same index),
    split over threads when the result is large. Array arguments broadcast as NumPy
    broadcasts them; scalars pass through. Bitwise the same result as the plain call, but
    always an array: a ufunc of 0-d arrays gives a 0-d array, not a NumPy scalar."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if not arrays or _budget.threads == 1:
        return _whole(fn, args, kwargs)
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        try:  # (in C: np.broadcast_shapes takes some 5 us, more than a small op itself)
            shape = np.broadcast(*arrays).shape
        except ValueError:  # shapes that do not broadcast (or over 64 arrays): NumPy's own error
            return _whole(fn, args, kwargs)
    size = math.prod(shape)
    work = size * (1 if fn in CHEAP_ELEMENTWISE else COSTLY_ELEMENT)
    if work < 2 * MIN_PART_ELEMENTS:  # too small to split (parts_for's test, without its cost)
        return _whole(fn, args, kwargs)
    whole = all(a.shape == shape and a.flags.c_contiguous for a in arrays)  # split the flat buffer
    if not shape or parts_for(size if whole else shape[0], work) == 1:
        return _whole(fn, args, kwargs)
    if not whole and not all(_c_ordered(a) for a in arrays if a.shape == shape):
        return _whole(fn, args, kwargs)  # NumPy keeps their layout (channels-last, say)
    with np.errstate(all="ignore"):  # the result's dtype, from one element
        probe = fn(*(a.reshape(-1)[:1] if isinstance(a, np.ndarray) else a for a in args), **kwargs)
    out = np.empty(shape, dtype=probe.dtype)
    if whole:
        flat = [a.reshape(-1) if isinstance(a, np.ndarray) else a for a in args]
        dst = out.reshape(-1)
    else:
        flat = [np.broadcast_to(a, shape) if isinstance(a, np.ndarray) else a for a in args]
        dst = out

    def part(start: int, stop: int) -> None:
        pieces = [a[start:stop] if isinstance(a, np.ndarray) else a for a in flat]
        if isinstance(fn, np.ufunc):
            fn(*pieces, out=dst[start:stop], **kwargs)
        else:
            dst[start:stop] = fn(*pieces, **kwargs)

    parallel_for(len(dst), part, work)
    return out


def _whole(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``fn`` on the whole arguments, a NumPy scalar result made a 0-d array."""
    out = fn(*args, **kwargs)
    return np.asarray(out) if isinstance(out, np.generic) else out


def _c_ordered(a: np.ndarray) -> bool:
    """Whether NumPy gives an element-wise result of ``a`` C order: its strides (those of
    dims longer than one, and not broadcast) shrink from the first dim to the last, as in a
    C-contiguous array, a slice of one or an expanded one. (A channels-last tensor's do not:
    NumPy keeps its layout, and so must the split.)"""
    steps = [abs(s) for s, n in zip(a.strides, a.shape) if n > 1 and s]
    return all(x >= y for x, y in zip(steps, steps[1:]))


def row_major(x: Any) -> Any:
    """``x`` laid out row-major: ``x`` itself when already so (a NumPy scalar or a 0-d
    array included), else a C-ordered :func:`copy`. For results PyTorch makes contiguous
    whatever the input's strides (a reduction's, ``masked_fill``'s, ``tril``'s), where
    NumPy's follow the input's dim order: a contiguous input costs no copy."""
    if isinstance(x, np.ndarray) and not x.flags.c_contiguous:
        return copy(x)
    return x


def copy(x: np.ndarray, dtype: Any = None) -> np.ndarray:
    """A new C-ordered array with the values of ``x`` (any strides: a transposed, sliced or
    expanded view), cast to ``dtype`` when given, the copy split over the op's threads when
    large (``contiguous``, ``clone``, a ``reshape`` that cannot be a view). Every element
    goes through the same NumPy copy or cast, so the bits are the same for every thread
    count."""
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    # units per element (benchmarks/threads.py): a flat copy as a multiply, a strided read
    # (a transposed view) 2, a cast as a costly function. (On 2 cores a (B, H, T, D) copy of a
    # (B, T, H, D) view split lost at 512k elements, 1.45x faster at 1M.)
    work = x.size * (COSTLY_ELEMENT if dtype != x.dtype else 1 if x.flags.c_contiguous else 2)
    if _budget.threads == 1 or not x.ndim or work < 2 * MIN_PART_ELEMENTS:
        return np.array(x, dtype=dtype, order="C")
    out = np.empty(x.shape, dtype=dtype)
    if x.flags.c_contiguous:  # split the flat buffers, whatever the shape
        src, dst = x.reshape(-1), out.reshape(-1)
        parallel_for(x.size, lambda i, j: np.copyto(dst[i:j], src[i:j], casting="unsafe"), work)
    else:
        parallel_over(x.shape, lambda index: np.copyto(out[index], x[index], casting="unsafe"), work=work)
    return out


def astype(x: np.ndarray, dtype: Any) -> np.ndarray:
    """``x.astype(dtype)`` (a new array in the layout of ``x``), the conversion split over
    the op's threads when ``x`` is C-contiguous and large (see :func:`copy`: bfloat16
    autocast's casts to and from float32, ``Tensor.to``)."""
    return copy(x, dtype) if x.flags.c_contiguous else x.astype(dtype)


def concatenate(arrays: List[np.ndarray], axis: int, dtype: Any) -> np.ndarray:
    """``np.concatenate(arrays, axis, dtype=dtype, casting="unsafe")``, the copies split
    over the op's threads along another dim when the result is large (``cat``; bits as the
    plain call's)."""
    first = arrays[0].shape
    others = first[:axis] + first[axis + 1 :]  # the dims every array must share
    if (
        _budget.threads == 1
        or len(first) < 2
        or any(a.ndim != len(first) or a.shape[:axis] + a.shape[axis + 1 :] != others for a in arrays)
    ):
        return np.concatenate(arrays, axis=axis, dtype=dtype, casting="unsafe")  # (its error)
    shape = list(first)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    # each part copies strided blocks of every array, as a flat copy costs: on 2 cores a cat
    # of three (R, 128) float32 arrays split lost at 786k elements (0.77x), won from 1.5M
    work = math.prod(shape)
    if work < 2 * MIN_PART_ELEMENTS:
        return np.concatenate(arrays, axis=axis, dtype=dtype, casting="unsafe")
    out = np.empty(shape, dtype=dtype)
    lead, offset, places = (slice(None),) * axis, 0, []
    for a in arrays:
        places.append((out[lead + (slice(offset, offset + a.shape[axis]),)], a))
        offset += a.shape[axis]

    def part(index: tuple) -> None:
        for dst, src in places:
            np.copyto(dst[index], src[index], casting="unsafe")

    parallel_over(tuple(shape), part, skip=(axis,), work=work)
    return out


def matmul(
    a: np.ndarray, b: np.ndarray, out: Optional[np.ndarray] = None, bias: Optional[np.ndarray] = None
) -> np.ndarray:
    """``np.matmul(a, b, out=out)`` on as many threads as its size is worth, with the bits of
    one thread, then ``out += bias`` when a bias is given. BLAS itself runs on one thread
    (see the module docstring); a float product splits over the op's threads instead: a
    stack of products by its first batch dim longer than one (each product the same BLAS
    call whatever the split), a single product by the rows or the columns of its result
    where that keeps the bits (see :mod:`~disttorch.kernels.product_cuts`); each thread
    then adds the bias to its own part. Inside a split op's part it is the plain call."""
    if _budget.threads == 1:  # (the common case, without the lists of ``matmuls``)
        return _add_bias(np.matmul(a, b, out=out), bias)
    return matmuls([(a, b)], [out], biases=[bias])[0]


def _add_bias(out: np.ndarray, bias: Optional[np.ndarray]) -> np.ndarray:
    if bias is not None:
        out += bias
    return out


def matmuls(
    products: Sequence[Tuple[np.ndarray, np.ndarray]],
    outs: Optional[Sequence[Optional[np.ndarray]]] = None,
    meanwhile: Optional[Callable[[], Any]] = None,
    biases: Optional[Sequence[Optional[np.ndarray]]] = None,
) -> List[np.ndarray]:
    """``[np.matmul(a, b, out=out) for (a, b), out in zip(products, outs)]`` for independent
    products (a layer's input and weight gradients, say), each then plus its entry of
    ``biases`` (added in place, ``None``: none) when given, run side by side on the op's
    threads: each thread takes whole products while there are at least as many as threads
    (the same BLAS calls as one thread makes, so the same numbers), and a product left to
    several threads is split as :func:`matmul` splits one. Two threads each computing a
    whole product run faster than both splitting each product in turn: every part of a
    split product packs the shared operand again, and there is one hand-off, not two.

    ``meanwhile()``, work that does not depend on the products (a linear layer's bias
    gradient), runs once on this thread: after its own share of the products, while it
    would otherwise wait for the other threads' (a worker starts its share tens of
    microseconds late, and may run it slower), or after the products when they do not
    split.

    A thread that computes a part of a cut product adds the bias to what it computed (in
    compiled code a whole product's thread too), while its rows are still in its cache;
    otherwise the biases are added once the products are done. Either way each element is rounded once more, as ``out += bias``."""
    outs = list(outs) if outs is not None else [None] * len(products)
    biases = list(biases) if biases is not None else [None] * len(products)
    if _budget.threads > 1 and not _budget.region.locked():
        works = [_product_work(a, b) for a, b in products]
        parts = min(_budget.threads, sum(works) // MIN_PART_ELEMENTS)
        if parts > len(products) and 0 not in works:  # some product must be cut
            shares = [min(k, _most_parts(a, b)) for (a, b), k in zip(products, _shares(works, parts))]
            parts = max(sum(shares), min(parts, len(products)))  # (none may be cut: each whole)
        if parts >= 2 and 0 not in works:
            for i, ((a, b), out) in enumerate(zip(products, outs)):
                if out is None:
                    outs[i] = np.empty(_product_shape(a, b), dtype=a.dtype)
            operands = _operands(products, outs, biases)
            if parts <= len(products):
                groups = _whole_products(works, parts)
                if _run_compiled(_whole_rows(products, outs, biases, groups), operands, meanwhile):
                    return outs
                _run([_products_task(products, outs, group) for group in groups], meanwhile)
            else:
                if _run_compiled(_split_rows(products, outs, biases, shares), operands, meanwhile):
                    return outs
                in_parts = [_part_bias(out, bias) for out, bias in zip(outs, biases)]
                _run(
                    [
                        task
                        for p, out, bias, k in zip(products, outs, in_parts, shares)
                        for task in _split_product(*p, out, k, bias)
                    ],
                    meanwhile,
                )
                biases = [None if part is not None else bias for bias, part in zip(biases, in_parts)]
            return [_add_bias(out, bias) for out, bias in zip(outs, biases)]
    results = [_add_bias(np.matmul(a, b, out=out), bias) for (a, b), out, bias in zip(products, outs, biases)]
    if meanwhile is not None:
        meanwhile()
    return results


def _product_work(a: np.ndarray, b: np.ndarray) -> int:
    """Units of work of ``a @ b`` when the op's threads may share it, else 0 (not a float
    product of matrices of one dtype)."""
    if a.ndim < 2 or b.ndim < 2 or a.dtype != b.dtype or a.dtype.kind not in "fc":
        return 0
    shape = _product_shape(a, b)
    return math.prod(shape[:-1]) * a.shape[-1] * shape[-1] // MACS_PER_ELEMENT


def _most_parts(a: np.ndarray, b: np.ndarray) -> int:
    """Into how many parts ``a @ b`` may be cut with the bits of the whole product: a stack,
    one a product along its first batch dim longer than one; a single product of
    :data:`CUT_DTYPES`, parts of at least :data:`MIN_CUT_ROWS` rows (or columns) and
    :data:`MIN_CUT_MACS` multiply-adds; any other single product, none (one part)."""
    if a.ndim > 2 or b.ndim > 2:
        stack = next((n for n in _product_shape(a, b)[:-2] if n > 1), 0)
        if stack:
            return stack
    if a.dtype not in CUT_DTYPES or a.ctypes.data == b.ctypes.data:
        return 1  # (NumPy computes ``x.T @ x`` with syrk, whose bits its gemm parts lack)
    m, n = a.shape[-2], b.shape[-1]
    cut = cut_bounds(m, n, m * n * a.shape[-1] // MIN_CUT_MACS, cut_rule(a.dtype), MIN_CUT_ROWS)
    return 1 if cut is None else len(cut[1]) - 1


def _product_shape(a: np.ndarray, b: np.ndarray) -> tuple:
    """The shape of ``a @ b`` (2-D or more), NumPy's broadcasting error if there is none."""
    lead = a.shape[:-2] if a.shape[:-2] == b.shape[:-2] else np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return lead + (a.shape[-2], b.shape[-1])


def _shares(works: List[int], parts: int) -> List[int]:
    """``parts`` threads shared out among products by their work, at least one each."""
    shares = [max(1, parts * w // sum(works)) for w in works]
    while sum(shares) < parts:  # the rounding's leftovers go to the most work per thread
        shares[max(range(len(works)), key=lambda i: works[i] / shares[i])] += 1
    while sum(shares) > parts:
        shares[max(range(len(works)), key=lambda i: shares[i])] -= 1
    return shares


def _whole_products(works: List[int], parts: int) -> List[List[int]]:
    """The products (indices) each of ``parts`` threads computes whole: the largest first,
    each to the thread with the least work so far."""
    loads: List[Tuple[int, List[int]]] = [(0, []) for _ in range(parts)]
    for i in sorted(range(len(works)), key=lambda i: -works[i]):
        t = min(range(parts), key=lambda t: loads[t][0])
        loads[t] = (loads[t][0] + works[i], loads[t][1] + [i])
    return [indices for _, indices in loads]


def _products_task(products: Sequence, outs: List[np.ndarray], indices: List[int]) -> Callable[[], Any]:
    return lambda: [np.matmul(*products[i], out=outs[i]) for i in indices]


def _whole_rows(
    products: Sequence, outs: List[np.ndarray], biases: List[Optional[np.ndarray]], groups: List[List[int]]
) -> Optional[Tuple[np.ndarray, List[int]]]:
    """The products (each with its bias) as rows for compiled code, each thread's ``groups``
    in turn, and where each thread's rows start and end; ``None`` when there is no compiled
    code or some product or bias does not qualify (see ``gemm_parts``)."""
    if _budget.gemm is None:
        return None
    rows = [_budget.gemm.rows(a, b, out, bias) for (a, b), out, bias in zip(products, outs, biases)]
    if any(r is None for r in rows):
        return None
    tables = [np.concatenate([rows[i] for i in group]) for group in groups]
    return np.concatenate(tables), np.cumsum([0] + [len(t) for t in tables]).tolist()


def _split_rows(
    products: Sequence, outs: List[np.ndarray], biases: List[Optional[np.ndarray]], shares: List[int]
) -> Optional[Tuple[np.ndarray, List[int]]]:
    """The parts of the products, ``shares[i]`` threads for product ``i``, each thread's
    rows in turn (see :func:`_whole_rows`)."""
    if _budget.gemm is None:
        return None
    works = [
        _budget.gemm.split(a, b, out, k, bias, None if _stack_dim(out) is not None else _single_cut(out, k))
        for (a, b), out, bias, k in zip(products, outs, biases, shares)
    ]
    if any(work is None for work in works):
        return None
    if len(works) == 1:
        return works[0]
    bounds, offset = [0], 0
    for rows, own in works:
        bounds.extend(offset + bound for bound in own[1:])
        offset += len(rows)
    return np.concatenate([rows for rows, _ in works]), bounds


def _part_bias(out: np.ndarray, bias: Optional[np.ndarray]) -> Optional[np.ndarray]:
    """``bias`` when each part of a product split by :func:`_split_product` may add its own
    slice of it: a vector along the result's last dim, apart from ``out``; else ``None``."""
    if bias is None or bias.shape != out.shape[-1:] or np.may_share_memory(out, bias):
        return None
    return bias


def _split_product(
    a: np.ndarray, b: np.ndarray, out: np.ndarray, k: int, bias: Optional[np.ndarray] = None
) -> List[Callable[[], Any]]:
    """``a @ b`` (each part then plus its slice of ``bias``, a vector along the last dim, when
    given) into ``out`` as ``k`` tasks (or fewer): a stack of products by its first batch dim
    longer than one, a single product as :func:`~disttorch.kernels.product_cuts.cut_bounds`
    places the cuts."""
    batch = out.shape[:-2]
    stack = _stack_dim(out)
    if stack is not None:
        a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
        k = min(k, batch[stack])
        axis, bounds = "stack", [batch[stack] * i // k for i in range(k + 1)]
    else:
        axis, bounds = _single_cut(out, k)

    def part(i: int, j: int) -> None:
        if axis == "stack":
            cut = (slice(None),) * stack + (slice(i, j),)
            x, y, into, added = a[cut], b[cut], out[cut], bias
        elif axis == "rows":
            x, y, into, added = a[..., i:j, :], b, out[..., i:j, :], bias
        else:
            x, y, into, added = a, b[..., i:j], out[..., i:j], None if bias is None else bias[i:j]
        _add_bias(np.matmul(x, y, out=into), added)

    return [lambda i=i, j=j: part(i, j) for i, j in zip(bounds, bounds[1:])]


def _stack_dim(out: np.ndarray) -> Optional[int]:
    """The first batch dim longer than one of a product's result ``out``, if any."""
    return next((d for d, n in enumerate(out.shape[:-2]) if n > 1), None)


def _single_cut(out: np.ndarray, k: int) -> Tuple[str, List[int]]:
    """Where the single product ``out`` is cut into at most ``k`` parts with the whole
    product's bits (:func:`~disttorch.kernels.product_cuts.cut_bounds`); one part if nowhere."""
    return cut_bounds(*out.shape[-2:], k, cut_rule(out.dtype), MIN_CUT_ROWS) or ("rows", [0, out.shape[-2]])


def _run(tasks: List[Callable[[], Any]], meanwhile: Optional[Callable[[], Any]] = None) -> None:
    """Run ``tasks`` on the op's threads, the first on this one; one task each. Runs them in
    turn on this thread when another op is split right now. ``meanwhile``: see :func:`matmuls`."""
    split = len(tasks) > 1 and _budget.region.acquire(blocking=False)
    try:
        if split and len(tasks) <= _budget.threads:  # (the budget may have just changed)
            parts = [(lambda i, _: tasks[i](), t, t + 1) for t in range(len(tasks))]
            _budget.workers().run(parts, meanwhile)
        else:
            for task in tasks:
                task()
            if meanwhile is not None:
                meanwhile()
    finally:
        if split:
            _budget.region.release()


def _operands(
    products: Sequence, outs: List[np.ndarray], biases: List[Optional[np.ndarray]]
) -> List[np.ndarray]:
    return [x for pair in products for x in pair] + outs + [bias for bias in biases if bias is not None]


def _run_compiled(
    work: Optional[Tuple[np.ndarray, List[int]]],
    operands: List[np.ndarray],
    meanwhile: Optional[Callable[[], Any]] = None,
) -> bool:
    """Run the rows of matrix products ``work[0][bounds[t]:bounds[t + 1]]`` on thread ``t``
    of the op's threads (``bounds = work[1]``), in compiled code (:meth:`OpPool.run_products`),
    and ``meanwhile`` (see :func:`matmuls`); False, having run nothing, when there is no such
    work, the pool has no compiled code, or another op is split right now."""
    if (
        work is None
        or len(work[1]) - 1 > _budget.threads
        or max(stop - start for start, stop in zip(work[1], work[1][1:])) > MAX_PRODUCTS
        or not _budget.region.acquire(blocking=False)
    ):
        return False
    try:
        pool = _budget.workers()
        if not pool.runs_products:
            return False
        pool.run_products(*work, operands, meanwhile)
        return True
    finally:
        _budget.region.release()


def lapack(fn: Callable[..., Any], a: np.ndarray, *args: Any, **kwargs: Any) -> Any:
    """``fn(a, *args, **kwargs)`` for a NumPy LAPACK routine (a decomposition, a solve,
    an inverse). Its blocked algorithms thread only through BLAS, so while it runs on large
    matrices (some ``n^3`` multiply-adds each, batches included, worth a part per thread),
    BLAS gets up to the op budget and no other op splits; otherwise it runs as called."""
    n = a.shape[-1] if a.ndim >= 2 else 0
    parts = parts_for(_budget.threads, a.size * n // MACS_PER_ELEMENT)
    if parts == 1 or not _budget.blas or not _budget.region.acquire(blocking=False):
        return fn(a, *args, **kwargs)
    try:
        for lib in _budget.blas:
            lib.set_num_threads(parts)
        return fn(a, *args, **kwargs)
    finally:
        for lib in _budget.blas:
            lib.set_num_threads(1)
        _budget.region.release()


def stack(arrays: List[np.ndarray]) -> np.ndarray:
    """``np.stack(arrays)`` (equal shapes and dtypes: a batch of samples), the copies split
    over the op's threads when the batch is large."""
    if (
        parts_for(len(arrays), len(arrays) * arrays[0].size) == 1
        or len({(a.shape, a.dtype) for a in arrays}) > 1
    ):
        return np.stack(arrays)  # (its error for unequal shapes)
    out = np.empty((len(arrays),) + arrays[0].shape, dtype=arrays[0].dtype)

    def copy(first: int, last: int) -> None:
        for i in range(first, last):
            out[i] = arrays[i]

    parallel_for(len(arrays), copy, len(arrays) * arrays[0].size)
    return out

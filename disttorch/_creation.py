"""Creating tensors: from data (``tensor``, ``as_tensor``, ``from_numpy``), filled ones
(``zeros``, ``ones``, ``full``, ``empty``, ``arange``, ``linspace``, ``eye`` and ``_like``),
and the ``Tensor.new_*`` methods (attached to ``Tensor`` at the end of this file)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _dtype, _memory_format, _native_warnings
from ._dtype import dtype as _dtype_cls
from ._linspace import linspace_values
from ._ndarray_sequences import holds, warn_if_holds_ndarrays
from ._storage import is_storage, storage_elements
from ._tensor import Size, Tensor, _as_meta, _tensor_arg, _wants_meta

__all__ = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "full",
    "empty",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "arange",
    "linspace",
    "eye",
]


def _infer_np_dtype(data: Any) -> np.dtype:
    """PyTorch's inference: bools -> bool, ints -> int64, floats -> default float dtype,
    complex numbers -> the default float dtype's complex type."""
    if isinstance(data, (np.ndarray, np.generic)):  # NumPy data keeps its dtype
        return _dtype.from_numpy(data.dtype).numpy
    if isinstance(data, (list, tuple)) and holds(data, (np.ndarray, np.generic)):
        held = _held_dtypes(data, {})
        if held is not None:  # NumPy scalars or arrays inside: every element's dtype, promoted
            out = None
            for d in held:
                out = d if out is None else _dtype.promote_types(out, d)
            return out.numpy
    arr = np.asarray(data)
    k = arr.dtype.kind
    if k in "uO" or (k == "f" and (np.abs(arr) >= 2.0**63).any()):
        k = _python_kind(data)  # Python ints past int64 (NumPy makes them uint64, float64 or objects)
    if k == "b":
        return np.dtype(np.bool_)
    if k in "iu":
        return np.dtype(np.int64)
    if k == "f":
        return _dtype.get_default_dtype().numpy
    if k == "c":
        return _dtype.default_complex()
    if k == "O":
        raise RuntimeError(f"Could not infer dtype of {type(_first_odd(data)).__name__}")
    raise TypeError(f"can't convert data of type {arr.dtype}")


def _python_kind(data: Any) -> str:
    """The NumPy kind PyTorch infers for nested sequences of Python numbers from their types
    alone (``b``, ``i``, ``f``, ``c``: the widest present), as its parser does, so a Python int
    past int64 among floats is a float; among ints only it is the parser's ``ValueError``. An
    element that is not a number is PyTorch's ``Could not infer dtype`` error."""
    kinds = "bifc"
    widest, huge, todo = 0, False, [data]
    while todo:
        x = todo.pop()
        if isinstance(x, (list, tuple)):
            todo.extend(x)
        elif isinstance(x, (bool, int, float, complex)):
            widest = max(widest, kinds.index(np.asarray(x).dtype.kind if type(x) is not int else "i"))
            huge = huge or (type(x) is int and not -(2**63) <= x < 2**63)
        else:
            raise RuntimeError(f"Could not infer dtype of {type(_first_odd(data)).__name__}")
    if huge and widest < 2:
        raise ValueError("Overflow when unpacking long long")  # PyTorch's parser reads an int64
    return kinds[widest]


def _first_odd(data: Any) -> Any:
    """The first element of nested sequences ``data`` that is neither a number nor a
    sequence (``data`` itself if not a list or tuple): what PyTorch names when it cannot
    infer a dtype; ``data`` when there is none."""
    if not isinstance(data, (list, tuple)):
        return data
    for x in data:
        odd = _first_odd(x)
        if isinstance(x, (list, tuple)) and odd is x:
            continue  # nothing odd inside x
        if not isinstance(odd, (bool, int, float, complex, np.generic, np.ndarray, Tensor)):
            return odd
    return data


def _held_dtypes(seq: Any, out: dict) -> dict | None:
    """The dtypes of the elements of the nested sequence ``seq`` as PyTorch infers them, in
    order (the keys of ``out``), when one is a NumPy scalar or array (its own dtype, as
    PyTorch's ``[np.float64(1.0)]`` is float64 and ``[np.int32(1), 2]`` int64); None when
    all are Python numbers."""
    types = set(map(type, seq))
    numpy_held = False
    for tp in types:
        if tp in _PYTHON_NUMBER_DTYPES:
            out[_PYTHON_NUMBER_DTYPES[tp]()] = None
    for x in seq if types - _PYTHON_NUMBER_DTYPES.keys() else ():
        if isinstance(x, (np.ndarray, np.generic)):
            out[_dtype.from_numpy(x.dtype)] = None
            numpy_held = True
        elif isinstance(x, (list, tuple)):
            numpy_held = _held_dtypes(x, out) is not None or numpy_held
    return out if numpy_held else None


_PYTHON_NUMBER_DTYPES = {
    bool: lambda: _dtype.bool,
    int: lambda: _dtype.int64,
    float: _dtype.get_default_dtype,
    complex: lambda: _dtype.from_numpy(_dtype.default_complex()),
}


def _from_data(data: Any, nested: bool = False) -> Any:
    """Replace tensors nested in lists by their values: a one-element tensor in a list is a
    number, as PyTorch reads it (``tensor([tensor([1]), tensor([2])])`` has shape ``(2,)``)."""
    if isinstance(data, Tensor):
        return data._data.reshape(()) if nested and data._data.size == 1 else data._data
    if isinstance(data, (list, tuple)) and data and any(isinstance(d, (Tensor, list, tuple)) for d in data):
        return [_from_data(d, True) for d in data]
    return data


def _warn_copy_construct(call: str) -> None:
    _native_warnings.warn(
        "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
        f"sourceTensor.detach().clone().requires_grad_(True), rather than {call}."
    )


_NOT_WRITABLE = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
    "This means writing to this tensor will result in undefined behavior. You may want to copy "
    "the array to protect its data or make it writable before converting it to a tensor. This "
    "type of warning will be suppressed for the rest of this program. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/utils/tensor_numpy.cpp:213.)"
)


def _shared(ndarray: np.ndarray) -> Tensor:
    """A tensor over ``ndarray``'s memory; a read-only array warns once, as PyTorch's."""
    _dtype.from_numpy(ndarray.dtype)
    if not ndarray.flags.writeable:
        _native_warnings.warn(_NOT_WRITABLE, once=True)
    return Tensor._make(ndarray)


def tensor(
    data: Any,
    *,
    dtype: _dtype_cls | None = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested list, array or tensor)."""
    if isinstance(data, Tensor):
        _warn_copy_construct("torch.tensor(sourceTensor)")
    meta = _wants_meta(device)
    given, data = data, _from_data(data)
    try:
        t = _converted(data, dtype)
    except ValueError:
        ragged = _ragged_error(given)
        if ragged is None:
            raise
        raise ragged from None
    warn_if_holds_ndarrays(given, t._data.size)
    if meta:
        t._data = _placed(t._data, True)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _converted(data: Any, dtype: _dtype_cls | None) -> Tensor:
    """``torch.tensor``'s conversion of ``data`` (tensors already replaced by their values)."""
    if dtype in _dtype.OWN_CONVERSION:
        return Tensor._make(_dtype.convert(np.array(data, dtype=np.float64), dtype))
    np_dt = _dtype.to_numpy(dtype) if dtype is not None else _infer_np_dtype(data)
    with np.errstate(over="ignore"):  # beyond float16's range: inf, as PyTorch, without a warning
        try:
            return Tensor._make(np.array(data, dtype=np_dt))
        except (OverflowError, ValueError):
            if np_dt.kind not in "iu":
                raise
            return Tensor._make(_checked_integers(data, np_dt))


def _ragged_error(data: Any) -> Exception | None:
    """PyTorch's error for nested sequences of uneven lengths (``[[1, 2], [3]]``): the sizes
    are read down the first elements, then each sequence must have its dim's size; None
    where the nesting is even."""

    def is_sequence(x: Any) -> bool:
        return isinstance(x, (list, tuple)) or isinstance(x, np.ndarray) and x.ndim > 0

    sizes, first = [], data
    while is_sequence(first):
        sizes.append(len(first))
        if not len(first):
            break
        first = first[0]

    def check(seq: Any, dim: int) -> Exception | None:
        if dim == len(sizes):
            return None
        if not is_sequence(seq):
            return TypeError("not a sequence")
        if len(seq) != sizes[dim]:
            return ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(seq)})")
        return next((e for e in (check(item, dim + 1) for item in seq) if e is not None), None)

    return check(data, 0)


def _checked_integers(data: Any, np_dt: np.dtype) -> np.ndarray:
    """``data`` as integers of ``np_dt`` where NumPy refused a value: PyTorch's overflow error
    for a value past the type (NaN too), a negative int into an unsigned type wrapped; a
    Python int beyond int64 is the ValueError of PyTorch's parser (uint64 aside)."""
    values = np.array(data, dtype=object)
    if np_dt != np.uint64 and any(type(v) is int and not -(2**63) <= v < 2**63 for v in values.flat):
        raise ValueError("Overflow when unpacking long long")  # PyTorch's parser reads an int64
    checked = [_dtype.checked_scalar(v, np_dt, np_dt.name) for v in values.flat]
    return np.array(checked, dtype=np_dt).reshape(values.shape)


def as_tensor(data: Any, dtype: _dtype_cls | None = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array or tensor when the dtype fits."""
    if isinstance(data, Tensor):
        return data if dtype is None or dtype.numpy == data._data.dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.numpy == data.dtype):
        return _shared(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray``."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _shared(ndarray)


def _sizes(fn: str, sizes: tuple, size: Any) -> tuple:
    """The shape from ``fn(*sizes)`` or ``fn(size=...)`` (PyTorch accepts either, not both)."""
    if size is not None:
        if sizes:
            raise TypeError(f"{fn}() got multiple values for argument 'size'")
        return _size((size,), fn, keyword=True)
    return _size(sizes, fn)


def int_sizes(size: Any) -> tuple:
    """The sizes in ``size`` as Python ints: ints and integer scalars (NumPy ints, one-element
    integer tensors) pass; a float, a float tensor or another object is PyTorch's TypeError."""
    if all(type(s) is int for s in size):  # the common case, without a call per entry
        return tuple(size)
    out = []
    for s in size:
        try:
            out.append(s.__index__())
        except (AttributeError, TypeError):
            raise TypeError(f"size must be tuple of ints, but got {type(s).__name__}") from None
    return tuple(out)


def _size(size: tuple, fn: str | None = None, keyword: bool = False) -> tuple:
    """The shape from a creation call's sizes (one tuple or list, or the sizes themselves);
    with ``fn`` named, a non-integer raises PyTorch's argument parser's words for ``fn``."""
    packed = len(size) == 1 and isinstance(size[0], (tuple, list))
    if packed:
        size = size[0]
    try:
        out = int_sizes(size)
    except TypeError:
        if fn is None:
            raise
        raise _parser_size_error(fn, size, packed, keyword) from None
    if any(s < 0 for s in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {list(out)}")
    return out


def _is_index(s: Any) -> bool:
    try:
        s.__index__()
    except (AttributeError, TypeError):
        return False
    return True


def _parser_size_error(fn: str, size: Any, packed: bool, keyword: bool) -> TypeError:
    """PyTorch's message for a non-integer size of ``fn``: its parser picks the overload by the
    first entry alone, then names a later bad entry by its 1-based place while unpacking."""
    bad = next(i for i, s in enumerate(size) if not _is_index(s))
    kind = type(size[bad]).__name__
    if bad > 0:
        return TypeError(
            f"{fn}(): argument 'size' failed to unpack the object at pos {bad + 1} with error "
            f'"type must be tuple of ints,but got {kind}"'
        )
    if keyword:
        container = type(size).__name__ if packed else kind
        return TypeError(f"{fn}(): argument 'size' must be tuple of ints, not {container}")
    if packed:
        return TypeError(
            f"{fn}(): argument 'size' (position 1) must be tuple of ints, "
            f"but found element of type {kind} at pos 0"
        )
    if len(size) == 1:
        return TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, not {kind}")
    return TypeError(f"{fn}() takes 1 positional argument but {len(size)} were given")


def check_layout(fn: str, layout: Any = None, pin_memory: bool = False) -> None:
    """PyTorch's ``layout=`` and ``pin_memory=`` arguments of the factories: these make dense
    (``strided``) CPU tensors; another layout or pinned memory is a clear error."""
    if layout is not None and getattr(layout, "name", None) != "strided":
        raise RuntimeError(
            f"{fn}(...) is not implemented for layout {layout}: create a strided tensor and "
            "convert it (e.g. .to_sparse())"
        )
    if pin_memory:
        raise RuntimeError(
            "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
            "allocator is available on this system."
        )


def _placed(arr: np.ndarray, meta: bool) -> np.ndarray:
    """``arr`` as the array of a meta tensor, or of a CPU one (a plain ndarray, also when it
    was made like a meta tensor's)."""
    if meta:
        return _as_meta(arr)
    return arr if type(arr) is np.ndarray else arr.view(np.ndarray)


def _filled(
    fill: Any, size: tuple, dtype: Any, requires_grad: bool, device: Any = None, like: Any = None
) -> Tensor:
    """A new tensor of ``size`` (uninitialised when ``fill`` is None); ``like`` is a memory
    format or, for the ``*_like`` functions, the array whose layout ``preserve_format`` keeps."""
    meta = _wants_meta(device)
    if fill is not None and dtype is _dtype.float8_e8m0fnu:  # zero is its bit pattern 0, 2**-127
        fill = _dtype.convert(np.array(fill, dtype=np.float64), dtype)[()]
    np_dt = _dtype.to_numpy(dtype) if dtype is not None else _dtype.get_default_dtype().numpy
    if fill is not None and (type(fill) is not int or not 0 <= fill <= 1):
        fill = _dtype.checked_scalar(fill, np_dt)  # (-1 as uint8: 255, as PyTorch casts it)
    if like is None:
        if fill is None:  # a meta tensor's zeros (lazily allocated): ops on it compute on them
            arr = (np.zeros if meta else np.empty)(size, dtype=np_dt)
        else:
            arr = np.full(size, fill, dtype=np_dt)
    else:
        if isinstance(like, np.ndarray):
            arr = _memory_format.empty_like_dense(like, np_dt)
        else:
            arr = _memory_format.empty_in_format(size, np_dt, like)
        if fill is not None or meta:
            arr[...] = 0 if fill is None else fill
    t = Tensor._make(_placed(arr, meta))
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros(
    *sizes: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """A tensor of zeros of the given size (``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``)."""
    check_layout("zeros", layout, pin_memory)
    return _filled(0, _sizes("zeros", sizes, size), dtype, requires_grad, device)


def ones(
    *sizes: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """A tensor of ones of the given size (``ones(2, 3)``, ``ones((2, 3))`` or ``ones(size=(2, 3))``)."""
    check_layout("ones", layout, pin_memory)
    return _filled(1, _sizes("ones", sizes, size), dtype, requires_grad, device)


def empty(
    *sizes: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """An uninitialised tensor of the given size (``empty(2, 3)``, ``empty((2, 3))`` or
    ``empty(size=(2, 3))``), laid out in ``memory_format`` (default row-major)."""
    check_layout("empty", layout, pin_memory)
    return _filled(None, _sizes("empty", sizes, size), dtype, requires_grad, device, memory_format)


def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype is inferred from it when not given."""
    check_layout("full", layout, pin_memory)
    fill_value = _number(fill_value)
    if dtype is None:  # an int is int64 whatever its value (one past it then fails to convert)
        dtype = _dtype.int64 if type(fill_value) is int else _dtype.from_numpy(_infer_np_dtype(fill_value))
    return _filled(fill_value, _size((size,)), dtype, requires_grad, device)


def _like(
    fill: Any, input: Tensor, dtype: Any, requires_grad: bool, device: Any, memory_format: Any = None
) -> Tensor:
    """A new tensor shaped as ``input``; ``preserve_format`` (the default) keeps its layout."""
    keep = memory_format is None or memory_format is _memory_format.preserve_format
    dtype = dtype if dtype is not None else input.dtype
    device = device if device is not None else input.device
    return _filled(
        fill, input._data.shape, dtype, requires_grad, device, input._data if keep else memory_format
    )


def zeros_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    memory_format: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """Zeros with ``input``'s shape (and dtype unless given)."""
    check_layout("zeros_like", layout, pin_memory)
    return _like(0, _tensor_arg("zeros_like", input), dtype, requires_grad, device, memory_format)


def ones_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    memory_format: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """Ones with ``input``'s shape (and dtype unless given)."""
    check_layout("ones_like", layout, pin_memory)
    return _like(1, _tensor_arg("ones_like", input), dtype, requires_grad, device, memory_format)


def empty_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    memory_format: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """An uninitialised tensor with ``input``'s shape (and dtype unless given)."""
    check_layout("empty_like", layout, pin_memory)
    return _like(None, _tensor_arg("empty_like", input), dtype, requires_grad, device, memory_format)


def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    memory_format: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """``fill_value`` everywhere, with ``input``'s shape (and dtype unless given)."""
    check_layout("full_like", layout, pin_memory)
    return _like(
        _number(fill_value), _tensor_arg("full_like", input), dtype, requires_grad, device, memory_format
    )


def _number(v: Any) -> Any:
    """A Python number from a number, a NumPy scalar (as PyTorch reads it: ``np.True_`` is
    1.0) or a one-element tensor."""
    _dtype.check_python_int(v)  # PyTorch reads an int as int64, then uint64
    return v.item() if isinstance(v, Tensor) else _dtype.python_scalar(v)


def check_range_dtype(kernel: str, dtype: Any, complex_too: bool = False) -> None:
    """PyTorch's ``NotImplementedError`` of the range factories (``"arange_cpu" not implemented
    for 'Bool'``): no bool values, and no complex ones for ``arange``/``range``."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or (complex_too and dtype.kind == "c"):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_type_name(dtype)}'")


def _arange_values(start: Any, end: Any, step: Any, dtype: np.dtype) -> np.ndarray:
    """PyTorch's arange values: integer dtypes step by the bounds cast to integers, int64
    counting the elements in integers too, the others in doubles (``arange(0, 3, 1.5,
    dtype=int64)`` is ``[0, 1, 2]``, with int32 ``[0, 1]``)."""
    if dtype.kind not in "iu":
        return np.arange(start, end, step).astype(dtype)
    if dtype == np.int64:
        if not int(step):  # (a fractional step counted in integers)
            raise ValueError("step must be nonzero")
        return np.arange(int(start), int(end), int(step), dtype=dtype)
    n = max(math.ceil((end - start) / step), 0)
    return (int(start) + int(step) * np.arange(n)).astype(dtype)


def arange(
    start: Any = None,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a bound is a float
    (then the default float dtype)."""
    check_layout("arange", layout, pin_memory)
    if end is None:
        if start is None:
            raise TypeError("arange() missing required argument 'end'")
        start, end = 0, start
    elif start is None:  # arange(end=n)
        start = 0
    start, end, step = _number(start), _number(end), _number(step)
    meta = _wants_meta(device)
    if dtype is None:
        is_float = any(isinstance(v, (float, np.floating)) for v in (start, end, step))
        dtype = _dtype.get_default_dtype() if is_float else _dtype.int64
    np_dt = np.dtype(_dtype.to_numpy(dtype))
    check_range_dtype("arange_cpu", np_dt, complex_too=True)  # (before the bounds, as PyTorch)
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    t = Tensor._make(_placed(_arange_values(start, end, step, np_dt), meta))
    return t.requires_grad_(True) if requires_grad else t


def linspace(
    start: float,
    end: float,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    check_layout("linspace", layout, pin_memory)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    meta = _wants_meta(device)
    start, end = _number(start), _number(end)
    if dtype is None and any(isinstance(v, complex) for v in (start, end)):
        dtype = _dtype.from_numpy(_dtype.default_complex())  # (complex ends: a complex result)
    np_dt = _dtype.to_numpy(dtype) if dtype is not None else _dtype.get_default_dtype().numpy
    if steps > 1:  # (one value needs no kernel: a bool one too)
        check_range_dtype("linspace_cpu", np_dt)
    t = Tensor._make(_placed(linspace_values(start, end, int(steps), np.dtype(np_dt)), meta))
    return t.requires_grad_(True) if requires_grad else t


def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """An identity matrix of ``n`` rows (and ``m`` columns)."""
    check_layout("eye", layout, pin_memory)
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"n must be greater or equal to 0, got {n if n < 0 else m}")
    meta = _wants_meta(device)
    np_dt = _dtype.to_numpy(dtype) if dtype is not None else _dtype.get_default_dtype().numpy
    t = Tensor._make(_placed(np.eye(n, m, dtype=np_dt), meta))
    return t.requires_grad_(True) if requires_grad else t


# ---------------------------------------------------------------------- Tensor.new_*
def _new(self: Tensor, fill: Any, size: tuple, dtype: Any, requires_grad: bool, device: Any) -> Tensor:
    device = device if device is not None else self.device
    return _filled(fill, _size(size), dtype if dtype is not None else self.dtype, requires_grad, device)


def new_tensor(
    self: Tensor, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A copy of ``data`` as a tensor of this tensor's dtype (unless ``dtype`` is given)."""
    if isinstance(data, Tensor):
        _warn_copy_construct("tensor.new_tensor(sourceTensor)")
        data = data._data
    return tensor(
        data, dtype=dtype if dtype is not None else self.dtype, device=device, requires_grad=requires_grad
    )


def new_zeros(
    self: Tensor,
    *sizes: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """Zeros of ``size`` with this tensor's dtype (unless ``dtype`` is given)."""
    check_layout("new_zeros", layout, pin_memory)
    return _new(self, 0, (_sizes("new_zeros", sizes, size),), dtype, requires_grad, device)


def new_ones(
    self: Tensor,
    *sizes: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """Ones of ``size`` with this tensor's dtype (unless ``dtype`` is given)."""
    check_layout("new_ones", layout, pin_memory)
    return _new(self, 1, (_sizes("new_ones", sizes, size),), dtype, requires_grad, device)


def new_empty(
    self: Tensor,
    *sizes: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """An uninitialised tensor of ``size`` with this tensor's dtype (unless given)."""
    check_layout("new_empty", layout, pin_memory)
    return _new(self, None, (_sizes("new_empty", sizes, size),), dtype, requires_grad, device)


def new_full(
    self: Tensor,
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """``fill_value`` everywhere in ``size``, with this tensor's dtype (unless given)."""
    check_layout("new_full", layout, pin_memory)
    return _new(self, _number(fill_value), (size,), dtype, requires_grad, device)


def new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """PyTorch's legacy constructor, still found in older programs: ``x.new()`` (empty),
    ``x.new(2, 3)`` or ``x.new(torch.Size([2, 3]))`` (uninitialised), ``x.new([1, 2])``
    (a copy of the data in this tensor's dtype), ``x.new(other)`` (``other`` itself, which
    must have this dtype). Prefer :meth:`new_empty` and :meth:`new_tensor`."""
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype != self.dtype:
            raise TypeError(f"new(): expected a tensor of dtype {self.dtype}, got one of dtype {other.dtype}")
        return other
    if not args or all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return new_empty(self, args if args else (0,), device=device)
    if len(args) == 1 and isinstance(args[0], Size):
        return new_empty(self, args[0], device=device)
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
        return new_tensor(self, args[0], device=device)
    if len(args) == 1 and is_storage(args[0]):
        return Tensor._make(storage_elements(args[0], self.dtype))  # sharing its memory
    if len(args) == 1:
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    raise TypeError(
        f"new(): expected sizes, a torch.Size, a sequence of data or a tensor, got "
        f"{', '.join(type(a).__name__ for a in args)}"
    )


for _method in (new, new_tensor, new_zeros, new_ones, new_empty, new_full):
    setattr(Tensor, _method.__name__, _method)

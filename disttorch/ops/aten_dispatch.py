"""What a wrapper subclass's ``__torch_dispatch__`` is handed, as PyTorch's dispatcher hands it.

A public call with a wrapper-subclass argument (``_make_wrapper_subclass``; see
:mod:`disttorch._function_dispatch`) reaches :func:`dispatch` with its public name. Calls
PyTorch decomposes above its Python dispatch key are decomposed the same way here (the
table :data:`_DECOMPOSE`): ``F.linear`` is ``aten.t`` then ``aten.addmm`` (or ``aten.mm``),
``reshape``/``flatten`` are ``aten.view``, ``softmax`` is ``aten._softmax``, and each
operator is named by the overload PyTorch picks (``aten.sum.dim_IntList``,
``aten.pow.Tensor_Scalar``, ``aten.gt.Scalar``) with its arguments normalised (dims as
lists, ``dtype=`` by keyword). Other calls go through as the operator of their name.

Autograd is recorded above the dispatch, as PyTorch's is: each operator call whose tensor
inputs require grad gives its outputs a node (``MmBackward0``...) whose backward is the
operator's derivative (:mod:`.aten_derivatives`), itself made of ATen calls that reach the
subclass (``aten.threshold_backward``, ``aten.t``, ``aten.mm``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import _creation, _random
from .._tensor import Tensor
from ._helpers import RETURN_TYPES
from .aten_autograd import _aten, call

__all__ = ["aten_op", "dispatch"]


#: op names whose ATen overload takes a second tensor (``aten.add.Tensor``)
_TENSOR_OVERLOADS = frozenset(
    "add sub mul div eq ne lt le gt ge pow remainder rsub add_ sub_ mul_ div_ pow_ "
    "maximum minimum atan2 fmod bitwise_and bitwise_or bitwise_xor where".split()
)
_OWN_PACKETS: dict[str, Any] = {}


def aten_op(name: str, fn: Callable) -> Any:
    """The ATen operator ``__torch_dispatch__`` is handed for the function ``name``:
    ``torch.ops.aten.<name>.Tensor`` for binary arithmetic and comparisons, else
    ``.default``. An operator ``torch.ops.aten`` cannot run yet (``aten.linear``, a
    functional's name) runs ``fn`` from then on; one that is no ATen name (``__getitem__``)
    is made apart."""
    from .op_namespace import REGISTERED, OpOverloadPacket

    aten = _aten()

    overload = "Tensor" if name in _TENSOR_OVERLOADS else "default"
    if not name.startswith("__"):
        if aten._function(name) is None:
            REGISTERED[f"aten::{name}"] = fn
        return getattr(getattr(aten, name), overload)
    if name not in _OWN_PACKETS:
        _OWN_PACKETS[name] = OpOverloadPacket("aten", name, lambda _name: fn)
    return getattr(_OWN_PACKETS[name], overload)


def dispatch(name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """The public call ``name(*args, **kwargs)`` (function or method ``fn``) made with a
    wrapper-subclass argument."""
    rule = _DECOMPOSE.get(name)
    out = None
    if rule is not None:
        try:
            out = rule(*args, **kwargs)
        except TypeError:  # not a form the table knows: the operator as called
            out = None
    if out is None:  # tuples as lists, as the operator schemas' int[] and Tensor[] arguments arrive
        args = tuple(list(a) if type(a) is tuple else a for a in args)
        kwargs = {k: list(v) if type(v) is tuple else v for k, v in kwargs.items()}
        out = call(aten_op(name, fn), *args, **kwargs)
    named = RETURN_TYPES.get(name) if type(out) is tuple else None
    return out if named is None else named(*out)  # the public function's named tuple


def _dims(dim: Any) -> list[int]:
    return [int(d) for d in dim] if isinstance(dim, (list, tuple)) else [int(dim)]


def _shape(args: tuple) -> list[int]:
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    return [int(s) for s in args]


def _linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    a = _aten()
    if input.dim() == 2 and bias is not None:
        return call(a.addmm.default, bias, input, call(a.t.default, weight))
    if input.dim() >= 2 and bias is not None:
        flat = call(a.view.default, input, [input.numel() // input.shape[-1], input.shape[-1]])
        out = call(a.addmm.default, bias, flat, call(a.t.default, weight))
        return call(a.view.default, out, [*input.shape[:-1], weight.shape[0]])
    if input.dim() >= 2:
        return _matmul(input, call(a.t.default, weight))
    return None


def _matmul(input: Tensor, other: Tensor) -> Tensor | None:
    a = _aten()
    if input.dim() == 2 and other.dim() == 2:
        return call(a.mm.default, input, other)
    if input.dim() >= 3 and other.dim() == 2:
        flat = call(a.view.default, input, [input.numel() // input.shape[-1], input.shape[-1]])
        out = call(a.mm.default, flat, other)
        return call(a._unsafe_view.default, out, [*input.shape[:-1], other.shape[-1]])
    if input.dim() == other.dim() == 3 and input.shape[0] == other.shape[0]:
        left = call(a.view.default, call(a.expand.default, input, list(input.shape)), list(input.shape))
        right = call(a.view.default, call(a.expand.default, other, list(other.shape)), list(other.shape))
        out = call(a.bmm.default, left, right)
        return call(a._unsafe_view.default, out, [*input.shape[:-1], other.shape[-1]])
    return None


def _sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    a, extra = _aten(), {} if dtype is None else {"dtype": dtype}
    if dim is None:
        return call(a.sum.default, input, **extra)
    args = (input, _dims(dim)) + ((True,) if keepdim else ())
    return call(a.sum.dim_IntList, *args, **extra)


def _mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    a, extra = _aten(), {} if dtype is None else {"dtype": dtype}
    if dim is None:
        return call(a.mean.default, input, **extra)
    return call(a.mean.dim, input, _dims(dim), *((True,) if keepdim else ()), **extra)


def _view_as(input: Tensor, shape: list[int]) -> Tensor:
    known = math.prod(s for s in shape if s != -1)
    return call(
        _aten().view.default, input, [input.numel() // max(known, 1) if s == -1 else s for s in shape]
    )


def _reshape(input: Tensor, *shape: Any) -> Tensor:
    return call(_aten().view.default, input, _shape(shape))


def _flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    n = input.dim()
    start, end = start_dim % max(n, 1), end_dim % max(n, 1)
    if n == 0 or start == end:
        return input
    return _view_as(input, [*input.shape[:start], -1, *input.shape[end + 1 :]])


def _softmax_of(op: str) -> Callable:
    def rule(input: Tensor, dim: int, dtype: Any = None, _stacklevel: int = 3) -> Tensor | None:
        if dtype is not None:
            return None
        return call(getattr(_aten(), op).default, input, dim, False)

    return rule


def _scalar_overload(op: str) -> Callable:
    """Binary ops PyTorch names ``.Scalar`` when the second operand is a number."""

    def rule(input: Tensor, other: Any) -> Tensor:
        overload = "Tensor" if isinstance(other, Tensor) else "Scalar"
        return call(getattr(getattr(_aten(), op), overload), input, other)

    return rule


def _pow(input: Any, exponent: Any) -> Tensor | None:
    if not isinstance(input, Tensor):
        return None
    overload = "Tensor_Tensor" if isinstance(exponent, Tensor) else "Tensor_Scalar"
    return call(getattr(_aten().pow, overload), input, exponent)


def _to(input: Tensor, *args: Any, **kwargs: Any) -> Tensor | None:
    """``to(dtype)``, ``to(device, dtype)``, ``to(other)``, ``to(copy=True)``: PyTorch's
    ``aten._to_copy`` with the dtype and device asked for, or the input itself."""
    from .. import _dtype, _layout
    from .._tensor import device as device_type

    dtype, device = kwargs.get("dtype"), kwargs.get("device")
    for value in args:
        if isinstance(value, _dtype.dtype):
            dtype = value
        elif isinstance(value, (str, device_type)):
            device = value
        elif isinstance(value, Tensor):
            dtype = value.dtype
    if not kwargs.get("copy") and (dtype is None or dtype == input.dtype):
        return input
    extra: dict[str, Any] = {}
    if dtype is not None or device is None:
        extra["dtype"] = input.dtype if dtype is None else dtype
    if dtype is None and device is None:
        extra["layout"] = _layout.strided
    if device is not None or dtype is None:
        extra["device"] = device_type("cpu" if device is None else device)
    return call(_aten()._to_copy.default, input, **extra)


def _cast(dtype_name: str) -> Callable:
    def rule(input: Tensor, memory_format: Any = None) -> Tensor:
        from .. import _dtype

        return _to(input, getattr(_dtype, dtype_name))

    return rule


def _var_std(op: str) -> Callable:
    def rule(
        input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None
    ) -> Tensor:
        if isinstance(dim, bool):  # var(unbiased)
            dim, unbiased = None, dim
        kwargs: dict[str, Any] = {}
        if correction is not None or unbiased is not None:
            kwargs["correction"] = correction if correction is not None else int(bool(unbiased))
        elif dim is not None:
            kwargs["correction"] = 1
        if keepdim:
            kwargs["keepdim"] = True
        args = (input,) if dim is None else (input, _dims(dim))
        return call(getattr(_aten(), op).correction, *args, **kwargs)

    return rule


def _transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return call(_aten().transpose.int, input, dim0, dim1)


def _permute(input: Tensor, *dims: Any) -> Tensor:
    return call(_aten().permute.default, input, _shape(dims))


def _expand(input: Tensor, *sizes: Any) -> Tensor:
    return call(_aten().expand.default, input, _shape(sizes))


def _squeeze(input: Tensor, dim: Any = None) -> Tensor:
    a = _aten()
    if dim is None:
        return call(a.squeeze.default, input)
    return call(a.squeeze.dims if isinstance(dim, (list, tuple)) else a.squeeze.dim, input, dim)


def _max_min(op: str) -> Callable:
    def rule(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
        packet = getattr(_aten(), op)
        if dim is None:
            return call(packet.default, input)
        if isinstance(dim, Tensor):
            return None  # torch.max(a, b): the elementwise ``maximum``
        return call(packet.dim, input, dim, *((True,) if keepdim else ()))

    return rule


def _amax_amin(op: str) -> Callable:
    def rule(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
        return call(getattr(_aten(), op).default, input, _dims(dim), *((True,) if keepdim else ()))

    return rule


def _split(input: Tensor, split_size: Any, dim: int = 0) -> Any:
    if not isinstance(split_size, int):
        return None
    return call(_aten().split.Tensor, input, split_size, dim)


def _chunk(input: Tensor, chunks: int, dim: int = 0) -> Any:
    return call(_aten().split.Tensor, input, -(-input.shape[dim] // chunks), dim)


def _masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    overload = "Tensor" if isinstance(value, Tensor) else "Scalar"
    return call(getattr(_aten().masked_fill, overload), input, mask, value)


def _fill_(input: Tensor, value: Any) -> Tensor:
    return call(getattr(_aten().fill_, "Tensor" if isinstance(value, Tensor) else "Scalar"), input, value)


def _where(condition: Tensor, input: Any = None, other: Any = None) -> Tensor | None:
    if input is None or not (isinstance(input, Tensor) or isinstance(other, Tensor)):
        return None
    like = input if isinstance(input, Tensor) else other
    input, other = (
        v if isinstance(v, Tensor) else _creation.tensor(v, dtype=like.dtype) for v in (input, other)
    )
    return call(_aten().where.self, condition, input, other)


def _like(op: str) -> Callable:
    def rule(input: Tensor, *args: Any, dtype: Any = None, memory_format: Any = None, **_: Any) -> Tensor:
        kwargs: dict[str, Any] = {} if dtype is None else {"dtype": dtype}
        kwargs["pin_memory"] = False
        if memory_format is not None:
            kwargs["memory_format"] = memory_format
        return call(getattr(_aten(), op).default, input, *args, **kwargs)

    return rule


def _random_like(op: str) -> Callable:
    """``rand_like``/``randn_like``/``randint_like``: the overload by ``low``/``high`` and
    ``generator=`` (``aten.randint_like.low_generator_dtype``), ``pin_memory=False`` added."""

    def rule(input: Tensor, *bounds: Any, generator: Any = None, dtype: Any = None, **_: Any) -> Tensor:
        name = "low_dtype" if len(bounds) == 2 else "default"
        if generator is not None:
            name = {"default": "generator", "low_dtype": "low_generator_dtype"}[name]
        kwargs: dict[str, Any] = {} if generator is None else {"generator": generator}
        if dtype is not None:
            kwargs["dtype"] = dtype
        aten_op(op, getattr(_random, op))  # the operator runs the public function
        return call(getattr(getattr(_aten(), op), name), input, *bounds, **kwargs, pin_memory=False)

    return rule


def _unique2(input: Tensor, *flags: Any, dim: Any = None) -> tuple:
    """``aten._unique2``: the distinct values, inverse and counts (those two empty when not
    asked for, as PyTorch's; ``aten.unique_dim`` gives them always)."""
    from .._creation import empty
    from .comparison import unique

    sorted_, return_inverse, return_counts = ([*flags] + [True, False, False][len(flags) :])[:3]
    values, inverse, counts = unique(input, sorted_, True, True, dim=dim)
    if dim is None:
        inverse = inverse if return_inverse else empty(0, dtype=inverse.dtype)
        counts = counts if return_counts else empty(0, dtype=counts.dtype)
    return values, inverse, counts


def _unique_dim(input: Tensor, dim: int, *flags: Any) -> tuple:
    return _unique2(input, *flags, dim=dim)


def _unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: Any = None,
) -> Any:
    flags = [sorted, return_inverse, return_counts]
    while flags and flags[-1] == [True, False, False][len(flags) - 1]:
        flags.pop()  # PyTorch passes the flags up to the last one that is not its default
    if dim is None:
        out = call(aten_op("_unique2", _unique2), input, *flags)
    else:
        out = call(aten_op("unique_dim", _unique_dim), input, dim, *flags)
    kept = [out[0]] + [t for t, asked in zip(out[1:], (return_inverse, return_counts)) if asked]
    return kept[0] if len(kept) == 1 else tuple(kept)


def _nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Any = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor | None:
    if size_average is not None or reduce is not None or input.dim() > 2:
        return None
    out = call(_aten().nll_loss_forward.default, input, target, weight, _REDUCTION[reduction], ignore_index)
    return out[0]


def _cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Any = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor | None:
    if label_smoothing or target.dtype.is_floating_point or input.dim() > 2:
        return None
    log_p = call(_aten()._log_softmax.default, input, 1 if input.dim() == 2 else 0, False)
    return _nll_loss(log_p, target, weight, size_average, ignore_index, reduce, reduction)


_REDUCTION = {"none": 0, "mean": 1, "sum": 2}


def _new(op: str) -> Callable:
    def rule(input: Tensor, *size: Any, dtype: Any = None, **_: Any) -> Tensor:
        kwargs: dict[str, Any] = {} if dtype is None else {"dtype": dtype}
        return call(getattr(_aten(), op).default, input, _shape(size), **kwargs, pin_memory=False)

    return rule


def _new_full(input: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, **_: Any) -> Tensor:
    kwargs: dict[str, Any] = {} if dtype is None else {"dtype": dtype}
    return call(_aten().new_full.default, input, _shape((size,)), fill_value, **kwargs, pin_memory=False)


def _flip(input: Tensor, *dims: Any) -> Tensor:
    return call(_aten().flip.default, input, _shape(dims))


def _sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: Any = None) -> Any:
    a = _aten()
    if stable is not None:
        kwargs: dict[str, Any] = {"stable": stable}
        if dim != -1:
            kwargs["dim"] = dim
        if descending:
            kwargs["descending"] = True
        return call(a.sort.stable, input, **kwargs)
    args = (dim, True) if descending else (dim,) if dim != -1 else ()
    return call(a.sort.default, input, *args)


def _argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    return _sort(input, dim, descending, stable=True if stable else None)[1]


def _unbind(input: Tensor, dim: int = 0) -> Any:
    return call(_aten().unbind.int, input, *((dim,) if dim else ()))


def _narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor | None:
    if isinstance(start, Tensor):
        return None
    start = start % input.shape[dim] if start < 0 else start
    return call(_aten().slice.Tensor, input, dim, start, start + length)


def _repeat(input: Tensor, *sizes: Any) -> Tensor:
    return call(_aten().repeat.default, input, _shape(sizes))


def _roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    return call(_aten().roll.default, input, _dims(shifts), *(() if dims is None else (_dims(dims),)))


def _all_any(op: str) -> Callable:
    def rule(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        packet = getattr(_aten(), op)
        if dim is None:
            return call(packet.default, input)
        overload = packet.dims if isinstance(dim, (list, tuple)) else packet.dim
        return call(overload, input, dim, *((True,) if keepdim else ()))

    return rule


def _type(input: Tensor, dtype: Any = None, non_blocking: bool = False, **_: Any) -> Any:
    if dtype is None or isinstance(dtype, str):
        return None
    return _to(input, dtype)


def _movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    n = input.dim()
    order: list[Any] = [None] * n
    for src, dst in zip(_dims(source), _dims(destination)):
        order[dst % n] = src % n
    rest = iter(d for d in range(n) if d not in order)
    return call(_aten().permute.default, input, [next(rest) if d is None else d for d in order])


def _unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    dim %= input.dim()
    return _view_as(input, [*input.shape[:dim], *sizes, *input.shape[dim + 1 :]])


def _view(input: Tensor, *shape: Any, dtype: Any = None) -> Tensor:
    from .. import _dtype

    if dtype is None and len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        dtype = shape[0]
    if dtype is not None:  # then the detach PyTorch's autograd kernel makes of the dtype view
        return call(_aten().detach.default, call(_aten().view.dtype, input, dtype))
    return call(_aten().view.default, input, _shape(shape))


def _tolist(input: Tensor) -> Any:
    if type(input) is Tensor:
        return None  # (under a dispatch mode)
    raise RuntimeError(f".tolist() is not supported for tensor subclasses, got {type(input).__name__}")


def _clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    a = _aten()
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return call(a.clamp.Tensor, input, min, max)
    return call(a.clamp.default, input, min) if max is None else call(a.clamp.default, input, min, max)


def _loss(op: str) -> Callable:
    """Losses whose functional form PyTorch hands on as ``aten.<op>(input, target[, reduction])``."""

    def rule(
        input: Tensor,
        target: Tensor,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        **_: Any,
    ) -> Tensor | None:
        extra_given = any(v is not None for v in _.values())  # (a weight: the functional's own form)
        if size_average is not None or reduce is not None or extra_given or input.shape != target.shape:
            return None
        extra = () if reduction == "mean" else (_REDUCTION[reduction],)
        return call(getattr(_aten(), op).default, input, target, *extra)

    return rule


def _layer_norm(
    input: Tensor, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5
) -> Tensor:
    return call(_aten().native_layer_norm.default, input, _dims(normalized_shape), weight, bias, eps)[0]


def _norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    if p not in ("fro", 2, 2.0) or dim is not None or keepdim or dtype is not None:
        return None
    return call(_aten().linalg_vector_norm.default, input)


def _unary(op: str) -> Callable:
    """Activations whose functional form takes ``inplace`` (and more) PyTorch drops."""

    def rule(input: Tensor, inplace: bool = False) -> Tensor | None:
        return None if inplace else call(getattr(_aten(), op).default, input)

    return rule


def _gelu(input: Tensor, approximate: str = "none") -> Tensor:
    a = _aten()
    if approximate == "none":
        return call(a.gelu.default, input)
    return call(a.gelu.default, input, approximate=approximate)


def _identity_when(test: Callable) -> Callable:
    """Calls that return their input unchanged (PyTorch hands nothing to the subclass)."""

    def rule(input: Tensor, *args: Any, **kwargs: Any) -> Tensor | None:
        return input if test(input, *args, **kwargs) else None

    return rule


def _dropout_off(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> bool:
    return not training or p == 0


def _rsub(input: Tensor, other: Any) -> Tensor:
    return call(_aten().rsub.Scalar if not isinstance(other, Tensor) else _aten().rsub.Tensor, input, other)


def _rtruediv(input: Tensor, other: Any) -> Tensor | None:
    if isinstance(other, Tensor):
        return None
    a = _aten()
    return call(a.mul.Tensor, call(a.reciprocal.default, input), other)


def _embedding(input: Tensor, weight: Tensor, padding_idx: Any = None, max_norm: Any = None, **_: Any) -> Any:
    if padding_idx is not None or max_norm is not None:
        return None
    return call(_aten().embedding.default, weight, input)


#: public name -> the ATen calls PyTorch's dispatcher makes of it (None: the call as made)
_DECOMPOSE: dict[str, Callable] = {
    "linear": _linear,
    "matmul": _matmul,
    "sum": _sum,
    "mean": _mean,
    "reshape": _reshape,
    "view": _view,
    "view_as": lambda input, other: call(_aten().view.default, input, list(other.shape)),
    "expand_as": lambda input, other: call(_aten().expand.default, input, list(other.shape)),
    "data": lambda input: call(_aten().detach.default, input),
    "cpu": _identity_when(lambda input, memory_format=None: True),
    "T": lambda input: call(_aten().permute.default, input, list(range(input.dim()))[::-1]),
    "mT": lambda input: call(_aten().transpose.int, input, -2, -1),
    "flip": _flip,
    "sort": _sort,
    "argsort": _argsort,
    "unbind": _unbind,
    "narrow": _narrow,
    "repeat": _repeat,
    "roll": _roll,
    "all": _all_any("all"),
    "any": _all_any("any"),
    "type": _type,
    "movedim": _movedim,
    "moveaxis": _movedim,
    "unflatten": _unflatten,
    "tolist": _tolist,
    "new_full": _new_full,
    "empty_like": _like("empty_like"),
    "full_like": _like("full_like"),
    "new_tensor": lambda input, data, *, dtype=None, **_: _creation.tensor(data, dtype=dtype or input.dtype),
    "long": _cast("int64"),
    "int": _cast("int32"),
    "short": _cast("int16"),
    "bool": _cast("bool"),
    "byte": _cast("uint8"),
    "char": _cast("int8"),
    "flatten": _flatten,
    "softmax": _softmax_of("_softmax"),
    "log_softmax": _softmax_of("_log_softmax"),
    "pow": _pow,
    "to": _to,
    "type_as": lambda input, other: _to(input, other.dtype),
    "float": _cast("float32"),
    "double": _cast("float64"),
    "half": _cast("float16"),
    "bfloat16": _cast("bfloat16"),
    "var": _var_std("var"),
    "std": _var_std("std"),
    "transpose": _transpose,
    "permute": _permute,
    "expand": _expand,
    "squeeze": _squeeze,
    "max": _max_min("max"),
    "min": _max_min("min"),
    "amax": _amax_amin("amax"),
    "amin": _amax_amin("amin"),
    "split": _split,
    "chunk": _chunk,
    "masked_fill": _masked_fill,
    "fill_": _fill_,
    "where": _where,
    "layer_norm": _layer_norm,
    "norm": _norm,
    "relu": _unary("relu"),
    "silu": _unary("silu"),
    "gelu": _gelu,
    "contiguous": _identity_when(lambda input, memory_format=None: True),
    "dropout": _identity_when(_dropout_off),
    "__neg__": lambda input: call(_aten().neg.default, input),
    "__rsub__": _rsub,
    "__radd__": lambda input, other: call(_aten().add.Tensor, input, other),
    "__rmul__": lambda input, other: call(_aten().mul.Tensor, input, other),
    "__rtruediv__": _rtruediv,
    "embedding": _embedding,
    "ones_like": _like("ones_like"),
    "zeros_like": _like("zeros_like"),
    "rand_like": _random_like("rand_like"),
    "randn_like": _random_like("randn_like"),
    "randint_like": _random_like("randint_like"),
    "unique": _unique,
    "nll_loss": _nll_loss,
    "new_zeros": _new("new_zeros"),
    "new_ones": _new("new_ones"),
    "new_empty": _new("new_empty"),
    "clamp": _clamp,
    "mse_loss": _loss("mse_loss"),
    "l1_loss": _loss("l1_loss"),
    "cross_entropy": _cross_entropy,
    **{op: _scalar_overload(op) for op in "eq ne lt le gt ge".split()},
}

"""``out=``: the result written into a tensor the caller gives, for the top-level functions
that take an ``out`` argument in PyTorch (``torch.add(a, b, out=c)``).

One wrapper serves them all (``accept_out``, applied where the ops are exported): the
function computes its result as usual, then the result is copied into ``out`` under
PyTorch's rules: the result's dtype must be castable to ``out``'s (no float into an integer
tensor, nothing but bool into bool), an ``out`` of another shape is resized (with PyTorch's
deprecation warning when it held elements), and the function returns ``out``. Functions with
several results take a tuple of tensors. The namespaces ``linalg``, ``special`` and ``fft``
give it to every function that declares an ``out`` parameter (``accept_declared_out``). Factories (``zeros``, ``arange``, ...) without a
``dtype`` make ``out``'s dtype. As in PyTorch, ``out=`` refuses inputs that require grad
while grad mode is on.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from .. import _native_warnings
from .._dtype import c_type_name, dtype, scalar_type_name
from .._tensor import Tensor
from ..autograd import grad_mode
from .dtype_rules import check_cast
from .memory_overlap import refuse_out_overlap
from .tensor_attributes import resize_

__all__ = ["OUT_FUNCTIONS", "accept_out", "accept_declared_out"]

#: the top-level functions PyTorch gives an ``out`` argument (checked against PyTorch 2.13)
OUT_FUNCTIONS = frozenset(
    """
    abs acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax angle any
    arange argmax argmin asin asinh atan atan2 atanh baddbmm bernoulli bitwise_and
    bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat
    ceil chain_matmul cholesky cholesky_inverse cholesky_solve clamp clamp_max clamp_min clip
    column_stack complex
    concat concatenate conj_physical copysign cos cosh cross cummax cummin cumprod cumsum deg2rad
    diag diff digamma div divide dot dstack empty eq erf erfc erfinv exp exp2 expm1 eye fix
    float_power floor floor_divide fmax fmin fmod frac frexp full gather gcd ge geqrf ger greater
    greater_equal gt hamming_window heaviside histc hstack hypot i0 igamma igammac index_add
    index_select inner inverse isin isneginf isposinf kron kthvalue lcm ldexp le lerp less less_equal
    lgamma linspace log log10 log1p log2 logaddexp logaddexp2 logcumsumexp logical_and
    logical_not logical_or logical_xor logit logspace logsumexp lt lu_solve lu_unpack
    masked_select matmul matrix_power max maximum mean median min minimum mm mode msort mul
    multinomial multiply mv mvlgamma nan_to_num nanmean narrow_copy nanquantile nansum ne neg negative
    nextafter nonzero norm normal not_equal ones ormqr outer polar polygamma pow prod quantile
    rad2deg rand randint randn randperm range reciprocal remainder renorm round row_stack rsqrt
    scatter scatter_add searchsorted sgn sigmoid sign signbit sin sinc sinh softmax sort sqrt
    square stack std sub subtract sum svd take take_along_dim tan tanh tensordot topk
    triangular_solve tril triu trunc var vdot vstack where xlogy zeros
    """.split()
)

#: factories whose dtype, when not given, is ``out``'s
_FACTORIES = frozenset(
    "arange empty eye full linspace logspace ones rand randint randn randperm range zeros".split()
)


#: functions whose ``out=`` overload needs ``dim`` (``torch.sum(x, out=o)`` is PyTorch's TypeError)
_OUT_NEEDS_DIM = {
    **dict.fromkeys(
        ("sum", "prod"),
        "{name}() received an invalid combination of arguments - got (Tensor, out=Tensor): its out= form "
        "takes a dim, {name}(input, dim, keepdim=False, *, dtype=None, out=None)",
    ),
    **dict.fromkeys(("median", "nanmedian"), '{name}() missing 1 required positional arguments: "dim"'),
}

#: reductions that compute in ``out``'s dtype when no ``dtype`` is given (the input cast first)
_OUT_DTYPE_REDUCTIONS = frozenset("sum prod cumsum cumprod".split())

_GENERIC = "Expected out tensor to have dtype {want}, but got {have} instead"

#: functions whose ``out`` must have the result's dtype exactly, with PyTorch's message
#: (``want``/``have``: C type names, ``Want``/``Have``: scalar type names); a tuple gives one
#: message per output of a function with several
_EXACT_DTYPE = {
    **dict.fromkeys(
        """
        addmm addmv aminmax argmax argmin baddbmm bmm cross diag gather index_add inverse isin
        matmul matrix_power max min mm msort mv norm renorm scatter softmax sort take_along_dim
        topk tril triu linalg_vector_norm
        """.split(),
        _GENERIC,
    ),
    **{
        f"linalg_{name}": f"linalg.{name} expected out tensor dtype {{Want}} but got: {{Have}}"
        for name in ("norm", "matrix_norm")
    },
    # the unary ops without type promotion, and clamp (TensorIterator's same-dtype check)
    **dict.fromkeys(
        """
        abs absolute bitwise_not ceil clamp clamp_max clamp_min clip conj_physical fix floor frac
        lerp neg negative round sgn sign trunc
        """.split(),
        "Found dtype {Have} but expected {Want}",
    ),
    **dict.fromkeys(
        ("amax", "amin"),
        "Expected the dtype for input and out to match, but got {Want} for input's dtype and {Have} for out's dtype.",
    ),
    "addbmm": "self and mat2 must have the same dtype, but got {Have} and {Want}",
    "masked_select": "masked_select(): self and result must have the same scalar type",
    "index_select": "index_select(): self and result must have the same scalar type",
    "nonzero": "nonzero: Expected out tensor to have scalar type Long but got scalar type{Have}",
    "quantile": "quantile() out tensor must be same dtype as the input tensor",
    "nanquantile": "quantile() out tensor must be same dtype as the input tensor",
    **dict.fromkeys(
        ("tensordot", "inner"),
        "tensordot: Expected the output tensor to have dtype {Want}, but got an output tensor with dtype {Have}",
    ),
    "chain_matmul": "multi_dot(): expected out tensor to have dtype {want} but got {have}",
    **dict.fromkeys(("logcumsumexp", "cummax", "cummin"), "expected scalar_type {Want} but found {Have}"),
    "where": "Expected out type to be {Want} but got {Have}",
    "kthvalue": "output values must be of same type as input",
    **dict.fromkeys(("dot", "vdot"), "result dtype {Have} does not match input dtype {Want}"),
    **dict.fromkeys(
        ("searchsorted", "bucketize"),
        "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) "
        "depending on whether out_int32 flag is True, but we got output tensor's dtype {Have} and "
        "out_int32 flag is {int32}",
    ),
    "nan_to_num": "nan_to_num: dtype of out: {Have} should be same as input: {Want}",
    "histc": "torch.histogram: input tensor and hist tensor should have the same dtype, but got input {want} and hist {have}",
    "take": "take(): self and out expected to have the same dtype, but got self.dtype = {Want} and out.dtype = {Have}",
    "narrow_copy": "Expected self.dtype() == output.dtype() to be true, but got false.  (Could this error message "
    "be improved?  If so, please report an enhancement request to PyTorch.)",
    "float_power": "the output given to float_power has dtype {Have} but the operation's result requires dtype {Want}",
    "heaviside": "heaviside is not yet implemented for tensors with different dtypes.",
    "median": (
        "Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; but type "
        "{HaveT} does not equal {WantT} (while checking arguments for median)",
        "Expected tensor for argument #1 'indices' to have scalar type Long; but got {HaveT} instead "
        "(while checking arguments for median)",
    ),
    "mode": (
        "expected scalar type '{Want}' but got '{Have}' for values output",
        "expected scalar type '{Want}' but got '{Have}' for indices output",
    ),
    "frexp": (
        "torch.frexp() expects mantissa to have dtype {want} but got {have}",
        "torch.frexp() expects exponent to have int dtype but got {have}",
    ),
}

#: reductions whose ``out`` takes any dtype the result casts to when they give one result
#: (``torch.max(x, out=o)``) and exactly the result's when they give values and indices
_EXACT_WITH_INDICES = frozenset(("max", "min"))


def _tensor_at(args: tuple, kwargs: dict, *places: tuple[int, str]) -> bool:
    return any(isinstance(args[i] if i < len(args) else kwargs.get(k), Tensor) for i, k in places)


#: functions of ``_EXACT_DTYPE`` whose other overload casts into ``out`` (``clamp`` with tensor
#: bounds, ``lerp`` with a number for weight): the test that the exact one is called
_EXACT_WHEN = {
    **dict.fromkeys(("clamp", "clip"), lambda a, k: not _tensor_at(a, k, (1, "min"), (2, "max"))),
    "clamp_min": lambda a, k: not _tensor_at(a, k, (1, "min")),
    "clamp_max": lambda a, k: not _tensor_at(a, k, (1, "max")),
    "lerp": lambda a, k: _tensor_at(a, k, (2, "weight")),
}

#: functions that refuse an ``out`` the result cannot be cast to with an error of their own
_CAST_ERROR = {
    **dict.fromkeys(
        "cat concat concatenate stack hstack vstack dstack column_stack row_stack".split(),
        (TypeError, "torch.cat(): input types can't be cast to the desired output type {Have}"),
    ),
    **dict.fromkeys(
        _EXACT_WITH_INDICES,
        (
            RuntimeError,
            "Expected canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType(out.dtype())) to be "
            "true, but got false.  (Could this error message be improved?  If so, please report an "
            "enhancement request to PyTorch.)",
        ),
    ),
}

#: functions whose ``out`` must be bool, with each one's message (``all``/``any``: or uint8)
_BOOL_OUT = {
    "all": "all only supports bool tensor for result, got: {}",
    "any": "any only supports bool tensor for result, got: {}",
    "isposinf": "isposinf does not support non-boolean outputs.",
    "isneginf": "isneginf does not support non-boolean outputs.",
    "signbit": "signbit does not support non-boolean outputs.",
}
_BYTE_TOO = frozenset(("all", "any"))

#: functions whose ``out=`` form takes tensors only where others take numbers too, by the
#: positions of those arguments (``torch.where(c, x, 0.0, out=o)`` is refused)
_TENSORS_ONLY = {"where": ("condition", "input", "other")}


#: the scalar types with a legacy tensor type of their own in PyTorch's messages
_LEGACY = frozenset("Float Double Half Byte Char Short Int Long".split())


def _type_name(dtype: np.dtype) -> str:
    """The tensor type PyTorch's argument checks name (``torch.FloatTensor``, ``CPUBoolType``)."""
    name = scalar_type_name(dtype)
    return f"torch.{name}Tensor" if name in _LEGACY else f"CPU{name}Type"


def _check_dtype(result: Tensor, out: Tensor, name: str | None, which: int | None) -> None:
    """PyTorch's rule for the dtype of ``out``: the same as the result's, bool, or (for the
    elementwise ops) one the result can be cast to; ``which``: the output's place among
    several (None for a function with one result)."""
    have, want = out._data.dtype, result._data.dtype
    if name in _BOOL_OUT:
        if have != np.bool_ and not (name in _BYTE_TOO and have == np.uint8):
            raise RuntimeError(_BOOL_OUT[name].format(scalar_type_name(have)))
    elif name in _EXACT_DTYPE and (which is not None or name not in _EXACT_WITH_INDICES):
        if have != want:
            message = _EXACT_DTYPE[name]
            if isinstance(message, tuple):
                message = message[which or 0]
            names = {"want": c_type_name(want), "have": c_type_name(have), "int32": want == np.int32}
            names |= {"Want": scalar_type_name(want), "Have": scalar_type_name(have)}
            names |= {"WantT": _type_name(want), "HaveT": _type_name(have)}
            raise RuntimeError(message.format(**names))
    elif name in _CAST_ERROR:
        try:
            check_cast(want, have)
        except RuntimeError:
            error, message = _CAST_ERROR[name]
            raise error(message.format(Have=scalar_type_name(have))) from None
    else:
        check_cast(want, have)


def _check_tensors_only(name: str, args: tuple, kwargs: dict) -> None:
    """PyTorch's ``TypeError`` for a number where the ``out=`` form takes only tensors."""
    for position, param in enumerate(_TENSORS_ONLY[name]):
        value = args[position] if position < len(args) else kwargs.get(param)
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(
                f"{name}(): argument '{param}' (position {position + 1}) must be Tensor, not {type(value).__name__}"
            )


def _write(result: Tensor, out: Any, name: str, rule: str | None, which: int | None = None) -> Tensor:
    """Check ``out`` under ``rule`` (the function's name, or None: any dtype the result casts
    to) and write ``result`` into it."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    _check_dtype(result, out, rule, which)
    if tuple(out.shape) != tuple(result.shape):
        if out.numel():
            _native_warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                f"which does not match the required output shape {list(result.shape)}. This behavior is "
                "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                "elements with t.resize_(0). (Triggered internally at "
                "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)"
            )
        resize_(out, tuple(result.shape))
    with grad_mode.no_grad():
        out.copy_(result)
    return out


def accept_out(fn: Callable, name: str, declared: bool = False) -> Callable:
    """``fn`` with PyTorch's ``out=`` keyword (see the module docstring); a ``declared``
    ``out`` parameter of ``fn`` receives it too (to check it before computing)."""

    @functools.wraps(fn)
    def with_out(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        if name in _OUT_NEEDS_DIM and len(args) < 2 and "dim" not in kwargs:
            raise TypeError(_OUT_NEEDS_DIM[name].format(name=name))
        if name in _TENSORS_ONLY:
            _check_tensors_only(name, args, kwargs)
        rule = name if name not in _EXACT_WHEN or _EXACT_WHEN[name](args, kwargs) else None
        if (name in _FACTORIES or name in _OUT_DTYPE_REDUCTIONS) and isinstance(out, Tensor):
            if kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype
            elif name in _FACTORIES and isinstance(kwargs["dtype"], dtype) and kwargs["dtype"] != out.dtype:
                raise RuntimeError(
                    f"dtype {scalar_type_name(kwargs['dtype'].numpy)} does not match dtype of out "
                    f"parameter ({scalar_type_name(out._data.dtype)})"
                )
        refuse_out_overlap(name, out, args, kwargs)
        result = fn(*args, out=out, **kwargs) if declared else fn(*args, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        if grad_mode.is_grad_enabled() and any(r.requires_grad for r in results):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                "but one of the arguments requires grad."
            )
        if not isinstance(result, tuple):
            return _write(result, out, name, rule)
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors")
        written = [_write(r, o, name, rule, which) for which, (r, o) in enumerate(zip(result, out))]
        return type(result)(*written) if hasattr(result, "_fields") else tuple(written)

    return with_out


def accept_declared_out(namespace: dict, prefix: str) -> None:
    """Give PyTorch's ``out=`` to every public function of ``namespace`` (a module's globals)
    that declares an ``out`` parameter; ``prefix`` names them in errors (``linalg_inv()``)."""
    for name in namespace.get("__all__", ()):
        fn = namespace.get(name)
        if callable(fn) and not isinstance(fn, type) and "out" in inspect.signature(fn).parameters:
            namespace[name] = accept_out(fn, prefix + name, declared=True)

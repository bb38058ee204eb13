"""Data types: ``disttorch.float32`` and friends, and PyTorch's type-promotion rules.

A :class:`dtype` wraps a NumPy dtype. ``bfloat16`` and the float8 types wrap ml_dtypes'
NumPy types (an optional dependency, imported the first time one is used; NumPy gives them
the kind ``'V'``, so "is floating" checks accept the kinds in :data:`FLOAT_KINDS`).
Promotion follows PyTorch for the common cases: bool < integers < floating point <
complex (float64 with complex64 gives complex128: the complex type keeps the wider float); a
Python scalar never upcasts a tensor of its own category (``float32_tensor * 2.5`` stays
float32), and an integer tensor combined with a Python float becomes the default
floating dtype (float32); bfloat16 with float16 gives float32.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from ._public_name import package_name

__all__ = [
    "dtype",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "complex64",
    "complex128",
    "complex32",
    "chalf",
    "quint8",
    "qint8",
    "qint32",
    "cfloat",
    "cdouble",
    "half",
    "float",
    "double",
    "short",
    "int",
    "long",
    "get_default_dtype",
    "set_default_dtype",
    "to_numpy",
    "from_numpy",
    "result_type",
    "promote_types",
    "FLOAT_KINDS",
]

FLOAT_KINDS = "fV"  # NumPy kinds of floating tensors: 'f', and 'V' for ml_dtypes' bfloat16
# ml_dtypes' bfloat16 NumPy dtype once loaded (None before): ops check it to compute in float32
bf16_numpy: list = [None]


class dtype:
    """A tensor element type, e.g. ``disttorch.float32``."""

    __slots__ = ("name", "numpy", "is_floating_point", "is_signed", "itemsize", "_kind")

    def __init__(self, name: str, np_dtype: np.dtype, kind: int) -> None:
        self.name = name
        self.numpy = np.dtype(np_dtype)
        self.is_floating_point = kind == 2
        self.is_signed = self.numpy.kind in "ifc"
        self.itemsize = self.numpy.itemsize
        self._kind = kind  # 0 bool, 1 integer, 2 floating, 3 complex, 4 quantized

    def __repr__(self) -> str:
        return f"{package_name()}.{self.name}"

    def __reduce__(self) -> str:
        """Pickles as the global ``torch.float32`` (``disttorch.float32``), as PyTorch's does."""
        return self.name

    @property
    def is_complex(self) -> bool:
        """True for ``complex64`` and ``complex128``."""
        return self._kind == 3

    def to_real(self) -> "dtype":
        """The real dtype of a complex one (``complex64`` -> ``float32``); others unchanged."""
        return _REAL_OF.get(self.name, self)

    def to_complex(self) -> "dtype":
        """The complex dtype of a floating one (``float32`` -> ``complex64``, ``float16`` ->
        ``complex32``, which names a dtype but holds no tensors here); complex ones unchanged.
        Raises for other dtypes."""
        if self._kind == 3:
            return self
        if self.name not in _COMPLEX_OF:
            raise RuntimeError(
                f"Unknown Complex ScalarType for {self.scalar_name} (disttorch has "
                "complex64 and complex128, of float32 and float64)"
            )
        return _NAMES[_COMPLEX_OF[self.name]]

    @property
    def scalar_name(self) -> str:
        """PyTorch's scalar-type name, as its messages print it (``Float``, ``Long``...)."""
        return scalar_type_name(self.numpy)

    @property
    def c_name(self) -> str:
        """The C type name PyTorch's kernel messages print (``float``, ``c10::Half``...)."""
        return c_type_name(self.numpy)


class _MlDtype(dtype):
    """A dtype NumPy lacks (``bfloat16``, the float8 types): its NumPy dtype comes from
    ml_dtypes, loaded the first time one of them is used."""

    __slots__ = ()

    def __init__(self, name: str, signed: builtins.bool = True) -> None:
        self.name, self.is_floating_point, self.is_signed, self._kind = name, True, signed, 2
        self.itemsize = 2 if name == "bfloat16" else 1

    @property
    def numpy(self) -> np.dtype:  # type: ignore[override]
        npd = _ML_NUMPY.get(self.name)
        return npd if npd is not None else _load_ml_dtypes()[self.name]


class _TableNamedDtype(dtype):
    """A dtype without a NumPy element type of its own, named by ``_TYPE_NAMES``."""

    __slots__ = ()

    @property
    def scalar_name(self) -> str:
        return _TYPE_NAMES[self.name][0]

    @property
    def c_name(self) -> str:
        return _TYPE_NAMES[self.name][1]


class _NoArrayDtype(_TableNamedDtype):
    """A PyTorch dtype NumPy has no element type for (``complex32``, PyTorch's ComplexHalf):
    it is named, compared, converted (``to_real``/``to_complex``) and promoted, but a tensor
    of it is refused, with this error, the moment its NumPy type is asked for."""

    __slots__ = ()

    def __init__(self, name: str, itemsize: int, kind: int, names: tuple) -> None:
        self.name, self.is_floating_point, self.is_signed, self._kind = name, False, True, kind
        self.itemsize = itemsize
        _TYPE_NAMES[name] = names

    @property
    def numpy(self) -> np.dtype:  # type: ignore[override]
        raise NotImplementedError(
            f"disttorch has no {self.name} ({self.scalar_name}) tensors: NumPy has no element type "
            "for it (PyTorch's CPU build itself only creates, copies and adds them); use complex64 "
            "(torch.cfloat) instead"
        )


# the ml_dtypes NumPy dtypes by name, once loaded (empty before)
_ML_NUMPY: dict = {}


def _load_ml_dtypes() -> dict:
    """Import ml_dtypes and register its types (a clear error naming the pip command)."""
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError(
            "disttorch.bfloat16 and the float8 dtypes need the ml_dtypes package (NumPy's "
            "bfloat16 and float8): pip install 'disttorch[bfloat16]' (or pip install ml_dtypes)"
        ) from None
    for d in _ML_DTYPES:
        npd = np.dtype(getattr(ml_dtypes, d.name))
        _ML_NUMPY[d.name] = npd
        _FROM_NUMPY[npd] = d
    bf16_numpy[0] = _ML_NUMPY["bfloat16"]
    return _ML_NUMPY


class _QDtype(_TableNamedDtype):
    """A quantized element type (``quint8``, ``qint8``, ``qint32``): a quantized tensor keeps
    its integer representation in ``numpy`` (uint8, int8, int32) next to a scale and zero
    point; no NumPy array has this dtype itself, so :func:`from_numpy` never answers it."""

    __slots__ = ()

    def __init__(self, name: str, np_dtype: type) -> None:
        self.name, self.numpy, self.is_floating_point = name, np.dtype(np_dtype), False
        self.itemsize, self._kind = self.numpy.itemsize, 4

    @property
    def is_signed(self) -> builtins.bool:  # type: ignore[override]
        raise RuntimeError("isSignedType not supported for quantized types")


#: quantized dtypes: an integer representation with a scale and zero point (PyTorch's
#: quantized tensors, made by ``quantize_per_tensor`` and ``quantize_per_channel``)
quint8 = _QDtype("quint8", np.uint8)
qint8 = _QDtype("qint8", np.int8)
qint32 = _QDtype("qint32", np.int32)
QUANTIZED = (quint8, qint8, qint32)

bfloat16 = _MlDtype("bfloat16")
#: 8-bit floats: stored, created and converted (as PyTorch's CPU build, which has no
#: arithmetic kernels for them); promotion with another dtype raises as in PyTorch
float8_e4m3fn = _MlDtype("float8_e4m3fn")
float8_e4m3fnuz = _MlDtype("float8_e4m3fnuz")
float8_e5m2 = _MlDtype("float8_e5m2")
float8_e5m2fnuz = _MlDtype("float8_e5m2fnuz")
float8_e8m0fnu = _MlDtype("float8_e8m0fnu", signed=False)
#: the dtypes :func:`convert` converts into itself (PyTorch's rules, not ml_dtypes')
OWN_CONVERSION = (float8_e4m3fn, float8_e8m0fnu)
_ML_DTYPES = (bfloat16, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu)
float16 = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
uint8 = dtype("uint8", np.uint8, 1)
#: the wide unsigned dtypes: stored and converted, but, as in PyTorch, not promoted with others
uint16 = dtype("uint16", np.uint16, 1)
uint32 = dtype("uint32", np.uint32, 1)
uint64 = dtype("uint64", np.uint64, 1)
bool = dtype("bool", np.bool_, 0)  # noqa: A001 - PyTorch's name
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)
cfloat, cdouble = complex64, complex128
half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001

_ALL = (
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    bool,
    complex64,
    complex128,
)
_WIDE_UNSIGNED = (np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64))
_FROM_NUMPY = {d.numpy: d for d in _ALL}
_NAMES = {d.name: d for d in _ALL}
_NAMES.update((d.name, d) for d in _ML_DTYPES)
_NAMES.update((d.name, d) for d in QUANTIZED)
_default = [float32]
_REAL_OF = {"complex64": float32, "complex128": float64}
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128", "bfloat16": "complex64"}


def _by_name(name: str) -> dtype:
    """The dtype called ``name`` (checkpoints name dtypes so)."""
    return _NAMES[name]


#: The one table of PyTorch's names for each dtype: (scalar type, C type).
_TYPE_NAMES = {
    "float16": ("Half", "c10::Half"),
    "float32": ("Float", "float"),
    "float64": ("Double", "double"),
    "int8": ("Char", "signed char"),
    "int16": ("Short", "short int"),
    "int32": ("Int", "int"),
    "int64": ("Long", "long int"),
    "uint8": ("Byte", "unsigned char"),
    "uint16": ("UInt16", "uint16_t"),
    "uint32": ("UInt32", "uint32_t"),
    "uint64": ("UInt64", "uint64_t"),
    "bool": ("Bool", "bool"),
    "bfloat16": ("BFloat16", "c10::BFloat16"),
    "float8_e4m3fn": ("Float8_e4m3fn", "c10::Float8_e4m3fn"),
    "float8_e4m3fnuz": ("Float8_e4m3fnuz", "c10::Float8_e4m3fnuz"),
    "float8_e5m2": ("Float8_e5m2", "c10::Float8_e5m2"),
    "float8_e5m2fnuz": ("Float8_e5m2fnuz", "c10::Float8_e5m2fnuz"),
    "float8_e8m0fnu": ("Float8_e8m0fnu", "c10::Float8_e8m0fnu"),
    "complex64": ("ComplexFloat", "c10::complex<float>"),
    "complex128": ("ComplexDouble", "c10::complex<double>"),
    "quint8": ("QUInt8", "c10::quint8"),
    "qint8": ("QInt8", "c10::qint8"),
    "qint32": ("QInt32", "c10::qint32"),
}

complex32 = chalf = _NoArrayDtype("complex32", 4, 3, ("ComplexHalf", "c10::complex<c10::Half>"))
_NAMES["complex32"] = complex32
_REAL_OF["complex32"] = float16
_COMPLEX_OF["float16"] = "complex32"


def scalar_type_name(dt: np.dtype) -> str:
    """PyTorch's scalar-type name of a NumPy dtype (``Float``, ``Long``, ``Bool``...)."""
    return _TYPE_NAMES.get(dt.name, (dt.name,))[0]


def by_scalar_type_name(name: str) -> dtype | None:
    """The dtype whose PyTorch scalar-type name is ``name`` (``Float`` -> float32), or None."""
    for np_name, (scalar, _) in _TYPE_NAMES.items():
        if scalar == name and np_name in _NAMES:
            return _NAMES[np_name]
    return None


def c_type_name(dt: np.dtype) -> str:
    """The C type name PyTorch's kernel messages print for a NumPy dtype (``float``...)."""
    return _TYPE_NAMES.get(dt.name, (dt.name, dt.name))[1]


#: each integer and 16/32-bit float dtype's (lowest, largest) value, as PyTorch's overflow
#: check reads them (bfloat16's, loaded with ml_dtypes, is _BF16_MAX)
_LIMITS = {
    **{np.dtype(t): (np.iinfo(t).min, np.iinfo(t).max) for t in (np.int8, np.int16, np.int32, np.int64)},
    **{np.dtype(t): (0, np.iinfo(t).max) for t in (np.uint8, np.uint16, np.uint32, np.uint64)},
    np.dtype(np.float16): (-65504.0, 65504.0),
    np.dtype(np.float32): (-3.4028234663852886e38, 3.4028234663852886e38),
}
_BF16_MAX = 3.3895313892515355e38
#: PyTorch's C names of the integer types in its overflow message
_INT_C_NAMES = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t", "uint8": "uint8_t"}


def checked_scalar(value: Any, rt: np.dtype, type_name: str | None = None) -> Any:
    """A Python number as PyTorch converts it into dtype ``rt`` for ``fill_``, ``full``,
    ``masked_fill`` and ``t[i] = value``: RuntimeError where it overflows the type (a float
    past the type's range, NaN into integers, a complex with an imaginary part into a real
    type; a negative int into uint8 wraps while its magnitude fits), else the value.
    ``type_name``: the type's name in the message (default: its C name, as ``fill_`` says)."""
    kind = rt.kind
    check_python_int(value)
    if value.__class__ is builtins.bool or kind == "b":
        return value
    if not isinstance(value, (builtins.int, builtins.float, builtins.complex)):
        return value
    if kind == "c":  # each part as into the float type of the parts
        value, part = builtins.complex(value), np.dtype(np.float32 if rt.itemsize == 8 else np.float64)
        try:
            return builtins.complex(checked_scalar(value.real, part), checked_scalar(value.imag, part))
        except RuntimeError:
            raise _overflow(rt, type_name) from None
    if isinstance(value, builtins.complex):
        if value.imag != 0:
            raise _overflow(rt, type_name)
        value = value.real
    limits = _LIMITS.get(rt)
    if limits is None:
        if kind != "V" or rt != bf16_numpy[0]:
            return value  # float64, float8: no check
        limits = (-_BF16_MAX, _BF16_MAX)
    lo, hi = limits
    if kind in "iu":
        if isinstance(value, builtins.float):
            if not lo <= value <= hi:  # (NaN too)
                raise _overflow(rt, type_name)
            return builtins.int(value)
        if value > hi or value < (-hi if kind == "u" else lo):
            raise _overflow(rt, type_name)
        return value if value >= 0 else np.asarray(value, dtype=np.int64).astype(rt)[()]
    if lo <= value <= hi or value != value or math.isinf(value):
        return value
    raise _overflow(rt, type_name)


def _overflow(rt: np.dtype, type_name: str | None = None) -> RuntimeError:
    name = type_name or _INT_C_NAMES.get(rt.name) or c_type_name(rt)
    return RuntimeError(f"value cannot be converted to type {name} without overflow")


def get_default_dtype() -> dtype:
    """The floating dtype used for Python floats and ``disttorch.tensor([1.5])``."""
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float32 or float64)."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def to_numpy(d: dtype | np.dtype | type | None) -> np.dtype | None:
    """The NumPy dtype of ``d`` (a disttorch dtype, NumPy dtype or Python type)."""
    if d is None:
        return None
    if isinstance(d, dtype):
        return d.numpy
    if d is builtins.float:
        return _default[0].numpy
    if d is builtins.int:
        return np.dtype(np.int64)
    return np.dtype(d)


def from_numpy(np_dtype: np.dtype) -> dtype:
    """The disttorch dtype of a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        if np.dtype(np_dtype).name in _NAMES and not _ML_NUMPY:
            _load_ml_dtypes()
            return from_numpy(np_dtype)
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only "
            "supported types are: float64, float32, float16, bfloat16, float8 (e4m3fn, e4m3fnuz, "
            "e5m2, e5m2fnuz, e8m0fnu), complex64, "
            "complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool."
        ) from None


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both ``type1`` and ``type2`` convert to without losing category."""
    if type1 is complex32 or type2 is complex32:  # (no NumPy type to promote with)
        other = type2 if type1 is complex32 else type1
        if other is complex32 or other is float16 or other._kind < 2:
            return complex32
        return promote_types(complex64, other)
    return from_numpy(_promote(type1.numpy, type2.numpy)) if type1 is not type2 else type1


def _promote(da: np.dtype, db: np.dtype) -> np.dtype:
    """Two tensors' dtypes: the higher category wins as is (int64 + float32 is float32);
    within a category, the wider type."""
    if da != db and (da in _WIDE_UNSIGNED or db in _WIDE_UNSIGNED):
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
            f"{scalar_type_name(da)} and {scalar_type_name(db)}"
        )
    if da != db and (_is_float8(da) or _is_float8(db)):
        raise RuntimeError(
            "Promotion for Float8 Types is not supported, attempted to promote "
            f"{scalar_type_name(da)} and {scalar_type_name(db)}"
        )
    ka, kb = _kind_of(da), _kind_of(db)
    if ka != kb:
        if min(ka, kb) == 2 and max(ka, kb) == 3:  # complex keeps the wider float's precision
            return _complex_np(
                max(da.itemsize // (2 if ka == 3 else 1), db.itemsize // (2 if kb == 3 else 1))
            )
        return da if ka > kb else db
    if ka == 2 and bf16_numpy[0] is not None and bf16_numpy[0] in (da, db):
        other = db if da == bf16_numpy[0] else da
        # PyTorch: bfloat16 with float16 is float32; with float32/float64, the wider one
        return other if other.itemsize > 2 else (da if da == db else np.dtype(np.float32))
    return np.promote_types(da, db)


def convert(x: np.ndarray, target: dtype) -> np.ndarray:
    """``x`` converted to ``target``, as PyTorch converts where ml_dtypes differs: into
    ``float8_e4m3fn`` (no infinity) values past +-448, infinities included, saturate to
    +-448; ``float8_e8m0fnu`` (a bare exponent) takes the magnitude, and zero becomes its
    smallest value, 2**-127."""
    if target in OWN_CONVERSION and x.dtype.kind in "fiuV":
        x = x.astype(np.float64)  # exact for every source but huge integers, which saturate
        if target is float8_e4m3fn:
            x = np.clip(x, -448.0, 448.0)
        else:
            x = np.where(x == 0, 2.0**-127, np.abs(x))
    return x.astype(target.numpy)


def _is_float8(dt: np.dtype) -> builtins.bool:
    return dt.name.startswith("float8")


def python_scalar(x):
    """A NumPy scalar operand as PyTorch's argument parser reads it: an integer as a Python
    int, anything else as a Python float (``np.bool_`` too: ``int_tensor + np.True_`` is
    float32), a ``complex128`` as a complex, ``complex64`` by its real part; other values
    pass through."""
    if not isinstance(x, np.generic):
        return x
    if isinstance(x, (builtins.float, builtins.complex)):  # float64, complex128: Python's own
        return builtins.float(x) if isinstance(x, builtins.float) else builtins.complex(x)
    if isinstance(x, np.integer):
        return builtins.int(x)
    if isinstance(x, np.complexfloating):
        return builtins.float(x.real)
    return builtins.float(x) if isinstance(x, (np.floating, np.bool_)) else x


def check_python_int(v) -> None:
    """PyTorch's refusal of a Python int it cannot read as an int64 nor as a uint64 (an
    operand, a fill value): ``OverflowError``, as its argument parser raises."""
    if type(v) is builtins.int and not -(2**63) <= v < 2**64:
        raise OverflowError("int too big to convert" if v > 0 else "can't convert negative int to unsigned")


def result_type(a, b) -> np.dtype:
    """NumPy dtype of a binary op's result under PyTorch's rules.

    ``a`` and ``b`` are NumPy arrays or Python scalars (bool, int, float); an int past what
    PyTorch reads raises its ``OverflowError``.
    """
    a_arr = isinstance(a, np.ndarray)
    b_arr = isinstance(b, np.ndarray)
    check_python_int(a)
    check_python_int(b)
    if a_arr and b_arr:
        da, db = a.dtype, b.dtype
        if da is db or da == db:
            return da
        if a.ndim == 0 and b.ndim != 0:
            return _scalar_like(db, da)
        if b.ndim == 0 and a.ndim != 0:
            return _scalar_like(da, db)
        return _promote(da, db)
    if a_arr:
        return _scalar_like(a.dtype, b)
    if b_arr:
        return _scalar_like(b.dtype, a)
    return np.result_type(a, b)


def arrays_result_type(arrays: list) -> np.dtype:
    """The result dtype of an op on several tensors' arrays: dimensioned ones promote among
    themselves, zero-dim ones count only when of a higher category (PyTorch's rule)."""
    dimmed = [x.dtype for x in arrays if x.ndim]
    rt = dimmed[0] if dimmed else arrays[0].dtype
    for d in dimmed[1:] if dimmed else [x.dtype for x in arrays[1:]]:
        rt = _promote(rt, d)
    if dimmed:
        for x in arrays:
            if not x.ndim:
                rt = _scalar_like(rt, x.dtype)
    return rt


def _kind_of(x) -> int:
    if isinstance(x, np.dtype):
        return 0 if x.kind == "b" else (2 if x.kind in FLOAT_KINDS else (3 if x.kind == "c" else 1))
    if isinstance(x, (np.bool_, builtins.bool)):
        return 0
    if isinstance(x, (builtins.int, np.integer)):
        return 1
    if isinstance(x, (builtins.complex, np.complexfloating)):
        return 3
    return 2


def _complex_np(float_itemsize: builtins.int) -> np.dtype:
    """complex64 for floats of up to 4 bytes (no half-precision complex here), else complex128."""
    return np.dtype(np.complex128 if float_itemsize > 4 else np.complex64)


def default_complex() -> np.dtype:
    """The complex NumPy dtype of the default float dtype (``torch.tensor(1j)``'s dtype)."""
    return _complex_np(_default[0].itemsize)


def _scalar_like(tensor_dtype: np.dtype, other) -> np.dtype:
    """A tensor combined with a scalar (Python number or 0-dim tensor) of another category."""
    kt, ko = _kind_of(tensor_dtype), _kind_of(other)
    if ko <= kt:
        return tensor_dtype
    if ko == 3:  # a complex scalar: a floating tensor's complex type, else the scalar's (default)
        if kt == 2:
            return _complex_np(tensor_dtype.itemsize)
        return other if isinstance(other, np.dtype) else default_complex()
    if ko == 2:
        return other if isinstance(other, np.dtype) else _default[0].numpy
    return np.dtype(np.int64) if not isinstance(other, np.dtype) else other

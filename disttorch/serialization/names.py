"""PyTorch's element-type and storage names, and the NumPy dtypes disttorch keeps them in.

A file written by ``torch.save`` names each storage's element type (``torch.FloatStorage``,
or ``torch.storage.UntypedStorage`` plus a dtype such as ``torch.uint16``). ``numpy_dtype``
turns such a name into a NumPy dtype; ``storage_dtype`` gives the dtype a loaded storage is
kept in, which is the same dtype when disttorch has it, else a lossless wider one
(uint16 -> int32, uint32 -> int64; bfloat16 and float8 -> float32 when the tree has no
``disttorch.bfloat16``), or an error naming the type.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype

# torch dtype name -> NumPy dtype name (ml_dtypes' names for the ones NumPy lacks)
TORCH_DTYPES = {
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "float16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "int64": "int64",
    "long": "int64",
    "int32": "int32",
    "int": "int32",
    "int16": "int16",
    "short": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
    "complex64": "complex64",
    "cfloat": "complex64",
    "complex128": "complex128",
    "cdouble": "complex128",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
    "float8_e4m3fnuz": "float8_e4m3fnuz",
    "float8_e5m2fnuz": "float8_e5m2fnuz",
}
# the typed storage classes PyTorch names in its files -> NumPy dtype name
STORAGES = {
    "FloatStorage": "float32",
    "DoubleStorage": "float64",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}
STORAGE_OF = {v: k for k, v in STORAGES.items()}
# quantized tensors' storages: their integer representation's NumPy dtype, by quantized dtype
QUANTIZED_STORAGES = {"QInt8Storage": "int8", "QUInt8Storage": "uint8", "QInt32Storage": "int32"}
QUANTIZED_STORAGE_OF = {"qint8": "QInt8Storage", "quint8": "QUInt8Storage", "qint32": "QInt32Storage"}
# NumPy dtype name -> torch's canonical dtype name
TORCH_NAME_OF = {
    "float32": "float32",
    "float64": "float64",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
    "complex64": "complex64",
    "complex128": "complex128",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
    "float8_e4m3fnuz": "float8_e4m3fnuz",
    "float8_e5m2fnuz": "float8_e5m2fnuz",
}
_WIDER = {"uint16": "int32", "uint32": "int64", "uint64": "int64"}


class ForeignDtype:
    """A torch dtype disttorch has no ``dtype`` object for (e.g. ``torch.uint16``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def dtype_object(name: str) -> object:
    """The disttorch dtype named ``name`` (torch's spelling), or a ``ForeignDtype``."""
    np_name = TORCH_DTYPES[name]
    try:
        return _dtype.from_numpy(numpy_dtype(np_name))
    except (TypeError, ValueError):
        return ForeignDtype(np_name)


def numpy_dtype(np_name: str) -> np.dtype:
    """The NumPy dtype named ``np_name``; bfloat16 and float8 types come from ml_dtypes."""
    try:
        return np.dtype(np_name)
    except TypeError:
        pass
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError(
            f"reading {np_name} tensors needs the ml_dtypes package: pip install ml_dtypes"
        ) from None
    return np.dtype(getattr(ml_dtypes, np_name))


def storage_dtype(np_name: str) -> np.dtype:
    """The dtype disttorch keeps a loaded ``np_name`` storage in (see the module header)."""
    dt = numpy_dtype(np_name)
    if _has(dt):
        return dt
    if np_name in _WIDER:
        return np.dtype(_WIDER[np_name])
    if np_name == "bfloat16" or np_name.startswith("float8"):
        return np.dtype(np.float32)
    raise TypeError(
        f"disttorch has no {np_name} dtype, so a tensor stored as torch.{np_name} "
        "cannot be loaded; convert it in PyTorch first to a dtype disttorch has "
        "(e.g. torch.view_as_real(t) for a complex tensor)"
    )


def convert(arr: np.ndarray, np_name: str) -> np.ndarray:
    """``arr`` (raw ``np_name`` elements) in ``storage_dtype(np_name)``, copied only if needed."""
    target = storage_dtype(np_name)
    if arr.dtype == target:
        return arr
    if np_name == "uint64" and arr.size and int(arr.max()) >= 2**63:
        raise TypeError(
            "a torch.uint64 tensor holds values above 2**63 - 1, which disttorch's "
            "int64 cannot represent; convert it in PyTorch first"
        )
    return arr.astype(target)


def _has(dt: np.dtype) -> bool:
    try:
        _dtype.from_numpy(dt)
        return True
    except (TypeError, ValueError, KeyError):
        return False


#: PyTorch's C namespaces that pickles name for functions written in C++ (``F.gelu`` pickles as
#: ``torch._C._nn.gelu``, ``torch.special.erf`` as ``torch._C._special.special_erf``): the
#: Python module that exports each, and the prefix the C name adds
C_FUNCTION_HOMES = {
    "torch._C._nn": ("torch.nn.functional", ""),
    "torch._C._special": ("torch.special", "special_"),
    "torch._C._fft": ("torch.fft", "fft_"),
    "torch._C._linalg": ("torch.linalg", "linalg_"),
}

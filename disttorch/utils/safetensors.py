"""safetensors files: ``save_file``/``load_file``/``save``/``load``, the names and behaviour
of ``safetensors.torch``, through the ``safetensors`` package (``pip install safetensors``).

A safetensors file is a JSON header plus raw little-endian tensor bytes: it holds only
named tensors (and string metadata), so loading one can never run code. bfloat16 tensors
are written as ``BF16``; on load they become ``disttorch.bfloat16`` when the tree has it,
else float32. As in ``safetensors.torch``, tensors must be contiguous and must not share
memory (save a clone, or the state dict of a model without tied weights).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .._atomic_file import atomic_write
from .._tensor import Tensor
from ..serialization import names

__all__ = ["load", "load_file", "save", "save_file"]

# safetensors dtype codes -> NumPy dtype names (ml_dtypes' for BF16 and F8)
_CODES = {
    "F64": "float64",
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "I64": "int64",
    "I32": "int32",
    "I16": "int16",
    "I8": "int8",
    "U8": "uint8",
    "BOOL": "bool",
    "U16": "uint16",
    "U32": "uint32",
    "U64": "uint64",
    "C64": "complex64",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
}


def _package() -> Any:
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise ImportError(
            "disttorch.utils.safetensors needs the safetensors package: "
            "pip install 'disttorch[safetensors]' (or pip install safetensors)"
        ) from None
    return safetensors


def _arrays(tensors: dict) -> dict:
    """The arrays to write, checked as ``safetensors.torch`` checks them."""
    if not isinstance(tensors, dict):
        raise TypeError(f"expected a dict of str -> Tensor, got {type(tensors).__name__}")
    arrays = {}
    for key, t in tensors.items():
        if not isinstance(key, str):
            raise TypeError(f"tensor names must be str, got {key!r}")
        if not isinstance(t, Tensor):
            raise ValueError(f"Key `{key}` is invalid, expected disttorch.Tensor but received {type(t)}")  # noqa: TRY004 - safetensors.torch raises ValueError
        if not t._data.flags.c_contiguous:
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{key}` which is not "
                "allowed. It either means you are trying to save tensors which are "
                "reference of each other in which case it's recommended to save only the "
                "full tensors, and reslice at load time, or simply call `.contiguous()` "
                "on your tensor to pack it before saving."
            )
        arrays[key] = t._data
    keys = [k for k, a in arrays.items() if a.nbytes]
    shared = [
        (a, b) for i, a in enumerate(keys) for b in keys[i + 1 :] if np.shares_memory(arrays[a], arrays[b])
    ]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and "
            f"potential differences when loading them again: {shared}. Save a clone of "
            "one of them (tensor.clone()) or keep only one."
        )
    return arrays


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors bytes of ``tensors`` (names to contiguous tensors) and ``metadata``."""
    return _package().numpy.save(_arrays(tensors), metadata=metadata)


def save_file(
    tensors: dict[str, Tensor], filename: str | os.PathLike, metadata: dict[str, str] | None = None
) -> None:
    """Write ``tensors`` (and string ``metadata``) to ``filename`` in safetensors format.

    The write is atomic (temporary file, ``fsync``, rename) and follows the umask.
    """
    data = save(tensors, metadata)
    atomic_write(os.fspath(filename), lambda out: out.write(data))


def load(data: bytes) -> dict[str, Tensor]:
    """The tensors in the safetensors bytes ``data``."""
    pkg = _package()
    try:
        records = pkg.deserialize(bytes(data))
    except pkg.SafetensorError as exc:
        raise RuntimeError(f"not a valid safetensors file: {exc}") from None
    out = {}
    for key, rec in records:
        code = rec["dtype"]
        if code not in _CODES:
            raise TypeError(f"tensor {key!r} has safetensors dtype {code}, which disttorch cannot load")
        raw = np.frombuffer(rec["data"], dtype=names.numpy_dtype(_CODES[code])).reshape(rec["shape"])
        arr = names.convert(raw, _CODES[code])
        out[key] = Tensor._make(arr if arr.flags.writeable else arr.copy())
    return out


def load_file(filename: str | os.PathLike, device: Any = "cpu") -> dict[str, Tensor]:
    """The tensors in the safetensors file ``filename`` (on the CPU, the only device)."""
    from .._tensor import _check_device

    _check_device(device)
    path = os.fspath(filename)
    with open(path, "rb") as f:
        data = f.read()
    try:
        return load(data)
    except RuntimeError as exc:
        raise RuntimeError(f"{path}: {exc}") from None

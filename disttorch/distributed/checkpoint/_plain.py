"""How a checkpoint's metadata (JSON) keeps the plain (non-tensor) values of a state dict.

PyTorch pickles them; a disttorch checkpoint runs no code when loaded, so each value is kept as
JSON, what JSON lacks under a one-key tag: ``{"bytes": base64}`` (``bytes``; with ``"io"``: an
``io.BytesIO``, ``"mutable"``: a ``bytearray``), ``{"tuple": [...]}``, ``{"set": [...]}``
(``"frozen"``: a ``frozenset``), ``{"dict": [[key, value], ...]}`` (keys of any kept type, order
kept), ``{"numpy": [dtype, base64, shape]}`` (an array, its dtype as NumPy's ``.npy`` files
describe it, so structured ones keep their fields; ``shape`` ``null``: a NumPy scalar) and
``{"tensor": [dtype name, base64, shape]}`` (with ``"requires_grad"``: a tensor inside a value
kept whole, a tuple say, as PyTorch pickles it there). A tag with
other fields or of another form is refused on load. Inside a kept value every
dict is tagged, so a tag is never a value's own dict. Numbers, strings, ``None`` and lists are
JSON's own. Anything else (an arbitrary object) is refused at the save, naming it: a tuple
comes back a tuple (``random.setstate`` takes it) and NumPy's random state saves, as with PyTorch.
"""

from __future__ import annotations

import base64
import binascii
import io
from typing import Any

import numpy as np

from ..._dtype import _by_name, from_numpy, to_numpy
from ..._tensor import Tensor

__all__ = ["plain_from_json", "plain_to_json"]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def plain_to_json(value: Any, key: str = "") -> Any:
    """``value`` as the metadata keeps it; ``TypeError`` naming ``key`` for a value of no kept type."""
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        array = np.asarray(value)
        if array.dtype.hasobject:
            raise TypeError(
                f"dcp.save: '{key}' is a NumPy array of Python objects, which a checkpoint cannot keep"
            )
        shape = list(array.shape) if isinstance(value, np.ndarray) else None
        descr = np.lib.format.dtype_to_descr(array.dtype)
        return {"numpy": [descr, _b64(np.ascontiguousarray(array).tobytes()), shape]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Tensor):
        data = np.ascontiguousarray(value._data)
        stored = {"tensor": [from_numpy(data.dtype).name, _b64(data.tobytes()), list(data.shape)]}
        return {**stored, "requires_grad": True} if value.requires_grad else stored
    if isinstance(value, io.BytesIO):
        return {"bytes": _b64(value.getvalue()), "io": True}
    if isinstance(value, bytearray):
        return {"bytes": _b64(bytes(value)), "mutable": True}
    if isinstance(value, bytes):
        return {"bytes": _b64(value)}
    if isinstance(value, list):
        return [plain_to_json(v, key) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [plain_to_json(v, key) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"set": [plain_to_json(v, key) for v in value], "frozen": isinstance(value, frozenset)}
    if isinstance(value, dict):
        return {"dict": [[plain_to_json(k, key), plain_to_json(v, key)] for k, v in value.items()]}
    raise TypeError(
        f"dcp.save: '{key}' holds a value of type {type(value).__name__}, which a checkpoint cannot keep: it keeps "
        "tensors, numbers, strings, None, bytes, lists, tuples, sets, dicts and NumPy arrays (nothing is pickled, so "
        "loading one runs no code); save the object's state in those"
    )


def plain_from_json(stored: Any, key: str = "") -> Any:
    """The value :func:`plain_to_json` kept. Raises ``ValueError`` naming ``key`` on a malformed tag."""
    try:
        return _decode(stored)
    except (binascii.Error, TypeError, ValueError, KeyError, IndexError, RecursionError) as exc:
        raise ValueError(
            f"a checkpoint's plain value '{key}' is malformed: {type(exc).__name__}: {exc}"
        ) from None


#: each tag's optional flags (booleans)
_FLAGS = {
    "bytes": ("io", "mutable"),
    "tuple": (),
    "set": ("frozen",),
    "dict": (),
    "numpy": (),
    "tensor": ("requires_grad",),
}


def _tag(stored: dict) -> str:
    """The one tag of ``stored``, its fields checked."""
    tags = [name for name in _FLAGS if name in stored]
    if len(tags) != 1:
        raise ValueError(f"an object with no known tag, or several: {sorted(stored)[:3]}")
    tag = tags[0]
    extra = set(stored) - {tag, *_FLAGS[tag]}
    if extra or not all(isinstance(stored.get(flag, False), bool) for flag in _FLAGS[tag]):
        raise ValueError(f"a {tag!r} tag with other fields, or a flag not true or false: {sorted(stored)}")
    if tag != "bytes" and not isinstance(stored[tag], list):
        raise ValueError(f"a {tag!r} tag holding {type(stored[tag]).__name__}, not a list")
    return tag


def _decode(stored: Any) -> Any:
    if isinstance(stored, list):
        return [_decode(v) for v in stored]
    if not isinstance(stored, dict):
        return stored
    tag = _tag(stored)
    if tag == "bytes":
        data = base64.b64decode(stored["bytes"], validate=True)
        return io.BytesIO(data) if stored.get("io") else bytearray(data) if stored.get("mutable") else data
    if tag == "tuple":
        return tuple(_decode(v) for v in stored["tuple"])
    if tag == "set":
        return (frozenset if stored.get("frozen") else set)(_decode(v) for v in stored["set"])
    if tag == "dict":
        return {_decode(k): _decode(v) for k, v in stored["dict"]}
    if tag == "tensor":
        name, data, shape = stored["tensor"]
        if shape is None:
            raise ValueError("a tensor's shape must be a list of sizes, got null")
        tensor = Tensor._make(_array(to_numpy(_by_name(name)), data, shape))
        return tensor.requires_grad_() if stored.get("requires_grad") else tensor
    descr, data, shape = stored["numpy"]
    dtype = np.lib.format.descr_to_dtype(descr)
    if dtype.hasobject:
        raise ValueError("a NumPy array of Python objects")
    array = _array(dtype, data, shape)
    return array if shape is not None else array.reshape(())[()]


def _array(dtype: np.dtype, data: str, shape: Any) -> np.ndarray:
    """The array of ``dtype`` whose bytes ``data`` (base64) holds, of ``shape`` (``None``: flat)."""
    if shape is not None and not (
        isinstance(shape, list)
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)
    ):
        raise ValueError(f"an array's shape must be a list of sizes, got {shape!r}")
    raw = base64.b64decode(data, validate=True)
    array = np.frombuffer(raw, dtype=dtype).copy()  # (a size the bytes do not hold raises)
    return array.reshape(shape) if shape is not None else array

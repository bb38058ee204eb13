"""The unpickler behind ``disttorch.load``: PyTorch's global names, resolved to disttorch's.

With ``weights_only=True`` a pickle may name only what PyTorch's weights-only loader
admits (containers, numbers, strings, ``torch.Size``/``device``/dtypes, storages and the
tensor-rebuild functions) plus the globals the user allowed with ``add_safe_globals`` or
``safe_globals``; any other name raises ``pickle.UnpicklingError`` before anything is
imported or called. A name under ``torch.`` resolves to the same path under
``disttorch.`` (``torch.nn.modules.linear.Linear`` -> ``disttorch.nn.modules.linear.Linear``,
falling back to the nearest parent package that exports the name).
"""

from __future__ import annotations

import _codecs
import _compat_pickle
import collections
import importlib
import operator
import pickle
import pickletools
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dtype, _qscheme
from .._public_name import package_name
from .._qtensor import QuantizedTensor
from .._tensor import Size, Tensor, device
from . import names

_user_safe: list = []  # what add_safe_globals registered, in order


class Storage:
    """A loaded storage: a flat array of ``np_name`` elements (or raw bytes when untyped)."""

    __slots__ = ("_views", "location", "np_name", "raw")

    def __init__(self, raw: np.ndarray, np_name: str | None, location: str) -> None:
        self.raw, self.np_name, self.location = raw, np_name, location
        self._views: dict = {}

    def elements(self, np_name: str | None = None) -> np.ndarray:
        """This storage as a flat array of ``np_name`` elements in disttorch's dtype for them
        (converted once per storage and dtype, so every view of it shares that memory)."""
        np_name = np_name or self.np_name
        if np_name is None:
            raise pickle.UnpicklingError("a tensor refers to an untyped storage without a dtype")
        if np_name not in self._views:
            raw = self.raw if self.np_name == np_name else self.raw.view(np.uint8)
            dt = names.numpy_dtype(np_name)
            if raw.dtype != dt:
                if raw.nbytes % dt.itemsize:
                    raise pickle.UnpicklingError(
                        f"a storage of {raw.nbytes} bytes cannot hold "
                        f"{np_name} elements of {dt.itemsize} bytes"
                    )
                raw = raw.view(dt)
            self._views[np_name] = names.convert(raw, np_name)
        return self._views[np_name]

    def cpu(self) -> Storage:
        """The storage itself (for ``map_location=lambda storage, loc: storage.cpu()``)."""
        return self


class StorageType:
    """What a file's ``torch.FloatStorage`` (or ``torch.storage.UntypedStorage``) resolves to."""

    def __init__(self, np_name: str | None) -> None:
        self.np_name = np_name

    def __repr__(self) -> str:
        return f"StorageType({self.np_name})"


def _view(storage: Storage, np_name: str | None, offset: int, size: tuple, stride: tuple) -> np.ndarray:
    """The strided view a rebuilt tensor shows of its storage, checked against its bounds."""
    if not isinstance(storage, Storage):
        raise pickle.UnpicklingError(f"expected a storage to rebuild a tensor, got {type(storage).__name__}")
    flat = storage.elements(np_name)
    try:  # integers only: int() would turn a size of 2.5 or "3" into a shape
        size, stride = tuple(operator.index(s) for s in size), tuple(operator.index(s) for s in stride)
        offset = operator.index(offset)
    except TypeError:
        raise pickle.UnpicklingError(
            f"invalid tensor geometry: size {size!r}, stride {stride!r}, offset {offset!r} "
            "(sizes, strides and the offset must be integers)"
        ) from None
    if len(size) != len(stride) or offset < 0 or min(size + stride, default=0) < 0:
        raise pickle.UnpicklingError(
            f"invalid tensor geometry: size {size}, stride {stride}, offset {offset}"
        )
    if 0 in size:
        return np.empty(size, dtype=flat.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    if last >= flat.size:
        raise pickle.UnpicklingError(
            f"a tensor of size {size} (stride {stride}, offset {offset}) "
            f"lies outside its storage of {flat.size} elements: the file "
            "is corrupt"
        )
    item = flat.dtype.itemsize
    try:
        return np.lib.stride_tricks.as_strided(flat[offset:], size, tuple(s * item for s in stride))
    except (ValueError, OverflowError) as exc:  # more elements or bytes than NumPy can index
        raise pickle.UnpicklingError(
            f"invalid tensor geometry: size {size}, stride {stride}, offset {offset} ({exc})"
        ) from None


def _make_tensor(arr: np.ndarray, requires_grad: bool) -> Tensor:
    if not isinstance(requires_grad, bool):  # PyTorch's check: "yes" or 1 is no flag
        raise RuntimeError("requires_grad must be a bool")
    t = Tensor._make(arr)
    t._rg = requires_grad
    return t


def rebuild_tensor(storage: Storage, storage_offset: int, size: tuple, stride: tuple) -> Tensor:
    return _make_tensor(_view(storage, None, storage_offset, size, stride), False)


def rebuild_tensor_v2(
    storage: Storage,
    storage_offset: int,
    size: tuple,
    stride: tuple,
    requires_grad: bool,
    backward_hooks: Any,
    metadata: Any = None,
) -> Tensor:
    return _make_tensor(_view(storage, None, storage_offset, size, stride), requires_grad)


def rebuild_tensor_v3(
    storage: Storage,
    storage_offset: int,
    size: tuple,
    stride: tuple,
    requires_grad: bool,
    backward_hooks: Any,
    dtype: Any,
    metadata: Any = None,
) -> Tensor:
    np_name = dtype.numpy.name if isinstance(dtype, _dtype.dtype) else getattr(dtype, "name", None)
    if np_name not in names.TORCH_NAME_OF:
        raise pickle.UnpicklingError(f"unknown tensor dtype {dtype!r}")
    return _make_tensor(_view(storage, np_name, storage_offset, size, stride), requires_grad)


def rebuild_qtensor(
    storage: Storage,
    storage_offset: int,
    size: tuple,
    stride: tuple,
    quantizer_params: tuple,
    requires_grad: bool,
    backward_hooks: Any,
) -> Tensor:
    """A quantized tensor: its integer storage and ``(qscheme, scale(s), zero point(s)[, axis])``
    (float zero points under ``per_channel_affine``: the float-qparams scheme, as PyTorch)."""
    arr = _view(storage, None, storage_offset, size, stride)
    qdtype = {"int8": _dtype.qint8, "uint8": _dtype.quint8, "int32": _dtype.qint32}.get(arr.dtype.name)
    scheme = quantizer_params[0] if quantizer_params else None
    if qdtype is None or scheme not in (_qscheme.per_tensor_affine, _qscheme.per_channel_affine):
        raise pickle.UnpicklingError(
            f"a quantized tensor of storage {arr.dtype} and scheme {scheme!r}: disttorch reads "
            "qint8/quint8/qint32 tensors quantized per_tensor_affine or per_channel_affine"
        )
    if scheme is _qscheme.per_tensor_affine:
        _, scale, zero_point = quantizer_params
        return QuantizedTensor._build(arr, qdtype, scheme, float(scale), int(zero_point))
    _, scales, zero_points, axis = quantizer_params
    if zero_points._data.dtype.kind == "f":  # per_channel_affine_float_qparams (embedding weights)
        scales, zero_points = (np.asarray(t._data, dtype=np.float32) for t in (scales, zero_points))
        scheme = _qscheme.per_channel_affine_float_qparams
        return QuantizedTensor._build(arr, qdtype, scheme, scales, zero_points, int(axis))
    scales = np.asarray(scales._data, dtype=np.float64)
    zero_points = np.asarray(zero_points._data, dtype=np.int64)
    return QuantizedTensor._build(arr, qdtype, scheme, scales, zero_points, int(axis))


def rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any = None) -> Any:
    from ..nn.parameter import Parameter

    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"a parameter's data must be a tensor, got {type(data).__name__}")
    if not isinstance(requires_grad, bool):
        raise TypeError(
            f"_make_subclass(): argument 'require_grad' (position 3) must be bool, "
            f"not {type(requires_grad).__name__}"
        )
    param = Parameter(data, requires_grad)
    _set_state(param, state)
    return param


def rebuild_from_type_v2(func: Callable, new_type: Any, args: tuple, state: Any) -> Any:
    ret = func(*args)
    if new_type is not Tensor and not isinstance(ret, new_type):
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
            raise pickle.UnpicklingError(f"cannot rebuild a tensor as {new_type!r}")
        ret = ret.as_subclass(new_type)
    _set_state(ret, state)
    return ret


def rebuild_device_tensor_from_cpu_tensor(
    data: Tensor, dtype: Any, device: Any, requires_grad: bool
) -> Tensor:
    return _make_tensor(data._data, requires_grad)


def _set_state(obj: Any, state: Any) -> None:
    """Apply a tensor's Python attributes (a dict, or ``(dict, slots)``) saved with it."""
    if isinstance(state, tuple) and len(state) == 2:
        for part in state:
            _set_state(obj, part)
        return
    if isinstance(state, dict):
        for k, v in state.items():
            if not isinstance(k, str) or k.startswith("__"):
                raise pickle.UnpicklingError(f"a tensor's saved attribute has an invalid name: {k!r:.60}")
            if isinstance(getattr(type(obj), k, None), types.MemberDescriptorType):
                raise pickle.UnpicklingError(
                    f"a tensor's saved attribute {k!r} would overwrite its internal state (a slot of "
                    f"{type(obj).__name__}); no PyTorch file holds one: the file is corrupt or crafted"
                )
            setattr(obj, k, v)


def _unsupported(what: str) -> Callable:
    def refuse(*args: Any) -> Any:
        raise pickle.UnpicklingError(
            f"the file holds {what}, which disttorch does not support "
            "(only dense CPU tensors); convert it in PyTorch first "
            "(e.g. tensor.to_dense() / tensor.dequantize())"
        )

    return refuse


def _bytearray(*args: Any) -> bytearray:
    """``bytearray`` for a pickle: from bytes only, never ``bytearray(n)`` (n zero bytes)."""
    if args and not isinstance(args[0], (bytes, bytearray, str)):
        raise pickle.UnpicklingError("bytearray in a pickle must be built from bytes")
    return bytearray(*args)


def _size(items: Any = ()) -> Size:
    """``torch.Size`` for a pickle: of integers only, refused with PyTorch's ``TypeError``."""
    values = tuple(items)
    for i, value in enumerate(values):
        if not isinstance(value, int):
            raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(value).__name__}')")
    return Size(int(value) for value in values)


def _layout(name: Any = "strided") -> str:
    return f"torch.{name}" if isinstance(name, str) else "torch.strided"


def _builtin_globals() -> dict:
    """PyTorch's weights-only allow-list, as disttorch objects."""
    table: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.Size": _size,
        "torch.Tensor": Tensor,
        "torch._tensor.Tensor": Tensor,
        "torch.device": device,
        "_codecs.encode": _codecs.encode,
        "builtins.bytearray": _bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch.serialization._get_layout": _layout,
        "torch._utils._rebuild_tensor": rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild_parameter,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor": rebuild_device_tensor_from_cpu_tensor,
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
        "torch._utils._rebuild_qtensor": rebuild_qtensor,
        "torch._utils._rebuild_sparse_tensor": _unsupported("a sparse tensor"),
        "torch._utils._rebuild_meta_tensor_no_storage": _unsupported("a meta tensor"),
        "torch._utils._rebuild_nested_tensor": _unsupported("a nested tensor"),
        "torch._utils._rebuild_wrapper_subclass": _unsupported("a tensor subclass"),
        "torch._utils._rebuild_device_tensor_from_numpy": _unsupported("a device tensor"),
        "torch.storage.UntypedStorage": StorageType(None),
        "torch.UntypedStorage": StorageType(None),
    }
    for storage, np_name in names.STORAGES.items():
        table[f"torch.{storage}"] = StorageType(np_name)
    for name in names.TORCH_DTYPES:
        table[f"torch.{name}"] = _LazyDtype(name)
    for storage, np_name in names.QUANTIZED_STORAGES.items():
        table[f"torch.{storage}"] = StorageType(np_name)
    for qdtype in _dtype.QUANTIZED:
        table[f"torch.{qdtype.name}"] = qdtype
    for scheme in (_qscheme.per_tensor_affine, _qscheme.per_channel_affine):
        table[f"torch.{scheme.name}"] = scheme
    return table


class _LazyDtype:
    """A dtype entry of the allow-list, resolved when a file names it (bf16 may arrive later)."""

    def __init__(self, name: str) -> None:
        self.name = name


_BUILTIN = _builtin_globals()


def qualified_names(obj: Any) -> list[str]:
    """The names a pickle may use for ``obj``: its own and, for disttorch's, torch's."""
    if isinstance(obj, tuple):
        return [obj[1]]
    name = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', getattr(obj, '__name__', ''))}"
    out = [name]
    if name.startswith("disttorch."):
        out.append("torch." + name[len("disttorch.") :])
    return out


def _user_safe_lookup(full: str) -> Any:
    for entry in reversed(_user_safe):
        if full in qualified_names(entry):
            return entry[0] if isinstance(entry, tuple) else entry
    return None


def python2_name(module: str, name: str) -> tuple[str, str]:
    """Python 3's name for a global a protocol-2 pickle names as Python 2 did (``__builtin__.set``)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _get_attr_path(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def resolve(module: str, name: str) -> Any:
    """Import ``module.name``, mapping ``torch...`` to ``disttorch...`` (nearest parent
    package that exports ``name`` when the exact module does not exist here)."""
    if module in names.C_FUNCTION_HOMES:
        module, prefix = names.C_FUNCTION_HOMES[module]
        name = name.removeprefix(prefix)
    if module != "torch" and not module.startswith("torch."):
        mod = importlib.import_module(module)
        return _get_attr_path(mod, name)
    parts = ["disttorch"] + module.split(".")[1:]
    for end in range(len(parts), 0, -1):
        path = ".".join(parts[:end])
        try:
            mod = importlib.import_module(path)
            return _get_attr_path(mod, name)
        except (ImportError, AttributeError):
            continue
    raise pickle.UnpicklingError(f"the file needs {module}.{name}, which disttorch does not provide")


_MEMO_PUTS = frozenset(("PUT", "BINPUT", "LONG_BINPUT"))


def check_memo_indices(file: Any) -> None:
    """Read one pickle from ``file`` opcode by opcode (nothing is built) and refuse a memo
    index beyond the number of opcodes before it.

    A pickler numbers its memo entries 0, 1, 2, ..., so a real pickle's indices stay below
    its opcode count. CPython's unpickler sizes its memo table by the largest index it meets
    and fills it: an 8-byte pickle storing at index 2**27 would make it allocate and write
    2 GiB. Bounding the indices keeps a load's memory proportional to the file.

    Raises:
        pickle.UnpicklingError: an index out of bounds, or a pickle that cannot be read.
    """
    try:
        for count, (opcode, arg, _) in enumerate(pickletools.genops(file)):
            if opcode.name in _MEMO_PUTS and not 0 <= arg <= count:
                raise pickle.UnpicklingError(
                    f"the pickle stores memo entry {arg} after only {count} opcodes; a pickler "
                    "numbers its entries from 0, so the file was not written by one"
                )
    except (ValueError, EOFError) as exc:  # genops' own complaints: a truncated or bad opcode
        raise pickle.UnpicklingError(f"the pickle is malformed: {exc}") from None


_STRING_OPS = frozenset(
    ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING", "BINSTRING")
)


def globals_named(file: Any) -> set[str]:
    """The ``module.name`` of every global one pickle in ``file`` names, read opcode by opcode
    (nothing is built or imported): ``GLOBAL``'s argument, and for ``STACK_GLOBAL`` the two
    strings pushed before it (how protocol 4+ names them)."""
    found: set[str] = set()
    strings: list[str] = []
    try:
        for opcode, arg, _ in pickletools.genops(file):
            if opcode.name == "GLOBAL":
                module, name = python2_name(*arg.split(" ", 1))
                found.add(f"{module}.{name}")
            elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                found.add(f"{strings[-2]}.{strings[-1]}")
            elif opcode.name in _STRING_OPS:
                strings = [*strings[-1:], str(arg)]
    except (ValueError, EOFError) as exc:
        raise pickle.UnpicklingError(f"the pickle is malformed: {exc}") from None
    return found


def is_allowed_global(full: str) -> bool:
    """Whether a ``weights_only`` load admits the global ``full`` by name: PyTorch's allow-list
    or one added with ``add_safe_globals``."""
    return full in _BUILTIN or _user_safe_lookup(full) is not None


_DTENSOR_GLOBALS = {
    f"torch.distributed.tensor.{name}"
    for name in (
        "_api._rebuild_dtensor",
        "DTensor",
        "placement_types.Partial",
        "placement_types.Replicate",
        "placement_types.Shard",
        "placement_types._StridedShard",
    )
} | {"torch.distributed.device_mesh.DeviceMesh"}


def weights_only_failure(full: str) -> str:
    """PyTorch's message for a ``weights_only`` load that met the global ``full``, which is
    neither on its allow-list nor allowed by the user (bold escapes included)."""
    torch = package_name()
    if full in _DTENSOR_GLOBALS:  # not imported yet (else allowed), as PyTorch words it
        return (
            f"Weights only load failed. ``{torch}.distributed.tensor`` must be imported to load DTensors\n In "
            "PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from "
            "`False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely "
            "succeed, but it can result in arbitrary code execution. Do it only if you got the file from "
            "a trusted source.\n"
        )
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two options, "
        "\x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In "
        "PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
        "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
        "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
        "file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please "
        "check the recommended steps in the following error message.\n\tWeightsUnpickler error: "
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`{torch}.serialization.add_safe_globals([{full}])` or the "
        f"`{torch}.serialization.safe_globals([{full}])` context manager to allowlist this global "
        "if you trust this class/function.\n\nCheck the documentation of torch.load to learn more "
        "about types accepted by default with weights_only "
        "https://pytorch.org/docs/stable/generated/torch.load.html."
    )


class _Resolving:
    """Resolves globals as the module header says; storages come from ``persistent_load``."""

    def __init__(
        self,
        file: Any,
        persistent_load: Callable | None,
        weights_only: bool,
        extra_globals: dict | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(file, **kwargs)
        self._file = file
        self._persistent = persistent_load
        self.weights_only = weights_only
        self.extra = extra_globals or {}

    def load(self) -> Any:
        """Unpickle one object, after :func:`check_memo_indices` has read the same pickle."""
        start = self._file.tell()
        check_memo_indices(self._file)
        self._file.seek(start)
        return super().load()

    def persistent_load(self, pid: Any) -> Any:
        if self._persistent is None:
            raise pickle.UnpicklingError("the pickle refers to external data it does not contain")
        return self._persistent(pid)

    def find_class(self, module: str, name: str) -> Any:
        module, name = python2_name(module, name)
        full = f"{module}.{name}"
        found = self.extra.get(full, _BUILTIN.get(full))
        if found is not None:
            if isinstance(found, _LazyDtype):
                return names.dtype_object(found.name)
            return found
        user = _user_safe_lookup(full)
        if user is not None:
            return user
        if self.weights_only:
            if full in _DTENSOR_GLOBALS and "disttorch.distributed.tensor" in sys.modules:
                return resolve(module, name)  # allowed once the package is imported, as in PyTorch
            mapped = "disttorch" + module[5:] if module == "torch" or module.startswith("torch.") else module
            if mapped.split(".")[0] == "disttorch" or mapped in sys.modules:
                try:
                    obj = resolve(module, name)
                except (ImportError, AttributeError, pickle.UnpicklingError):
                    obj = None
                if obj is not None and any(obj is (e[0] if isinstance(e, tuple) else e) for e in _user_safe):
                    return obj
            raise pickle.UnpicklingError(weights_only_failure(full))
        try:
            return resolve(module, name)
        except (ImportError, AttributeError) as exc:
            raise pickle.UnpicklingError(f"the file needs {full}, which cannot be found: {exc}") from None


class _FullUnpickler(_Resolving, pickle.Unpickler):
    """``weights_only=False``: any global, and BUILD as Python's unpickler does it."""


def _allowed_types(extra: dict) -> tuple:
    """The classes a ``weights_only`` pickle may BUILD instances of: the allow-list's, the
    reader's own extra globals' and the user's."""
    found = [e[0] if isinstance(e, tuple) else e for e in _user_safe]
    found += [v for v in (*_BUILTIN.values(), *extra.values()) if isinstance(v, type)]
    found.append(Size)  # its global is _size, which checks the items
    if "disttorch.distributed.tensor" in sys.modules:  # a DTensor's placements
        found += [resolve(*full.rsplit(".", 1)) for full in _DTENSOR_GLOBALS]
    return tuple(t for t in found if isinstance(t, type))


class _WeightsOnlyUnpickler(_Resolving, pickle._Unpickler):
    """``weights_only=True``: the pure-Python unpickler, whose BUILD (setting a built object's
    state) is restricted as PyTorch's weights-only unpickler restricts it."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def load_build(self) -> None:
        state, inst = self.stack.pop(), self.stack[-1]
        kind = type(inst)
        if kind is Tensor:  # PyTorch calls the legacy ``set_(*state)``, which disttorch lacks
            raise pickle.UnpicklingError(
                "the pickle sets a tensor's state with BUILD (PyTorch's legacy tensor format), "
                "which disttorch does not read"
            )
        if kind is collections.OrderedDict:  # attributes from a dict only, never (dict, slots)
            inst.__dict__.update(state)
        elif isinstance(inst, (Tensor, *_allowed_types(self.extra))):
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None:
                setstate(state)
                return
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                inst.__dict__.update(state)
            for k, v in (slots or {}).items():
                setattr(inst, k, v)
        else:
            raise pickle.UnpicklingError(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                f"via `add_safe_globals`, but got {kind}"
            )

    dispatch[pickle.BUILD[0]] = load_build


def Unpickler(  # noqa: N802 (a class to its callers: the two kinds share one constructor)
    file: Any,
    persistent_load: Callable | None,
    weights_only: bool,
    extra_globals: dict | None = None,
    **kwargs: Any,
) -> _Resolving:
    """The unpickler for ``weights_only`` or a full load of the pickle in ``file``."""
    kind = _WeightsOnlyUnpickler if weights_only else _FullUnpickler
    return kind(file, persistent_load, weights_only, extra_globals, **kwargs)


def place(storage: Storage, location: str, map_location: Any) -> Storage:
    """Apply ``map_location`` to a storage saved on ``location``; disttorch keeps every
    storage on the CPU and refuses, as PyTorch's CPU build does, to place one elsewhere."""
    if callable(map_location) and not isinstance(map_location, (str, device)):
        result = map_location(storage, location)
        if result is not None:
            if not isinstance(result, Storage):
                raise TypeError(
                    f"map_location returned {type(result).__name__}, expected the storage "
                    "it was given (or None)"
                )
            return result
        target = location
    elif isinstance(map_location, dict):
        target = str(map_location.get(location, location))
    elif map_location is None:
        target = location
    elif isinstance(map_location, (str, device)):
        target = str(map_location)
    else:
        raise TypeError(
            f"map_location must be a str, device, dict or callable, got {type(map_location).__name__}"
        )
    kind = target.split(":")[0]
    if kind == "cuda":  # PyTorch's CPU build's words
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
            "If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU."
        )
    if kind != "cpu":
        raise RuntimeError(
            f"Attempting to deserialize object on a {kind.upper()} device "
            f"({target!r}) but disttorch computes on the CPU only. Use "
            "disttorch.load with map_location=disttorch.device('cpu') or "
            "map_location='cpu' to map your storages to the CPU."
        )
    storage.location = "cpu"
    return storage

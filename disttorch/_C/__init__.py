"""``torch._C``: the few names of PyTorch's C extension that libraries call directly.

PyTorch's ``torch._C`` is its compiled core; disttorch has none, so this package holds only
the names libraries reach for, each answering as the CPU build does: usage logging (off
unless asked for, so it does nothing), the current accelerator and default device (the
CPU), ``Generator``, the ``__torch_function__`` opt-out and ``_nn._parse_to`` (how
``Tensor.to`` reads its arguments), the distributed errors (``_DistStoreError`` & co,
which are ``torch.distributed``'s ``DistStoreError`` & co), ``_LinAlgError`` (which is
``torch.linalg.LinAlgError``), ``_distributed_c10d`` (the C10d classes: process groups,
stores, DDP's ``Reducer``), ``PyTorchFileReader``/``PyTorchFileWriter`` (zip checkpoints
record by record) and TorchScript's IR types (``Graph``, ``Value``...: names for annotations).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._random import Generator
from .._tensor import Tensor, device
from .._torch_function import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_dispatch_impl,
    _disabled_torch_function_impl,
    _is_torch_function_enabled,
)
from .._torch_function import has_torch_function as _has_torch_function
from .._torch_function import has_torch_function_unary as _has_torch_function_unary
from .._torch_function import has_torch_function_variadic as _has_torch_function_variadic
from . import _nn
from ._jit_ir import Block, Graph, Node, Value

#: the metaclass of ``Tensor`` (PyTorch's is a C type; disttorch's Tensor is a plain class)
_TensorMeta = type(Tensor)

__all__ = [
    "Block",
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "Generator",
    "Graph",
    "Node",
    "Value",
    "_TensorMeta",
    "_disabled_torch_dispatch_impl",
    "_disabled_torch_function_impl",
    "_get_accelerator",
    "_get_privateuse1_backend_name",
    "_get_default_device",
    "_has_torch_function",
    "_has_torch_function_unary",
    "_has_torch_function_variadic",
    "_is_torch_function_enabled",
    "_log_api_usage_once",
    "_nn",
]


def _log_api_usage_once(event: str) -> None:
    """Record that an API was used (PyTorch logs only to a handler set in C++; none here)."""


def _get_accelerator(check: bool = False) -> device:
    """The current accelerator: ``device('cpu')``, as on a build without GPUs."""
    return device("cpu")


def _get_privateuse1_backend_name() -> str:
    """The name of the out-of-tree device backend: ``'privateuseone'`` (none is registered)."""
    return "privateuseone"


def _get_default_device() -> str:
    """The device new tensors go to by default: ``'cpu'``."""
    return "cpu"


#: ``torch._C._DistStoreError`` & co: the classes ``torch.distributed`` exports without the underscore
_DIST_ERRORS = ("_DistError", "_DistStoreError", "_DistNetworkError", "_DistBackendError")


def __getattr__(name: str) -> Any:
    if name == "_distributed_c10d":
        import importlib

        return importlib.import_module(f"{__name__}._distributed_c10d")
    if name in _DIST_ERRORS:
        from ..distributed.base import errors

        return getattr(errors, name[1:])
    if name in ("PyTorchFileReader", "PyTorchFileWriter"):  # zip checkpoints record by record
        from ..serialization import file_reader, file_writer

        return getattr(file_reader if name.endswith("Reader") else file_writer, name)
    if name == "_LinAlgError":  # (``torch.linalg.LinAlgError``)
        from ..ops.linalg_decomp import LinAlgError

        return LinAlgError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

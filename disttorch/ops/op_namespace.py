"""``torch.ops.<namespace>.<op>.<overload>``: PyTorch's registry of operators by name.

PyTorch registers every ATen operator under ``torch.ops.aten`` (``torch.ops.aten.add.Tensor``)
and libraries name operators this way, mostly as keys of their own dispatch tables
(PyG's ``Index``/``EdgeIndex`` list the ``aten`` ops they override). Here ``torch.ops.aten``
names every operator: a packet (``aten.add``) and its overloads (``aten.add.Tensor``) are
stable, hashable objects, and calling one runs disttorch's op of that name (the Tensor
method, or the function of an op family) with the arguments given. An ATen operator that
disttorch has no op for (``aten._sparse_addmm``) can be named but raises
``NotImplementedError`` when called. An operator is resolved on its first call, whatever has
been imported before: a Tensor method, an op family's function, an ATen step registered here
(:data:`REGISTERED`, also by modules that load later), or the function of its name in ``torch``
or ``torch.nn.functional`` (``aten._grouped_mm``, ``aten.conv2d``). Other namespaces hold operators of C++ extensions,
which cannot load here: their ops raise ``AttributeError`` as when the extension is absent,
unless ``torch.library`` registered them by name (:data:`REGISTERED`). The profiler's range
operators (``torch.ops.profiler._record_function_enter``/``_exit``, which code traced through
``record_function`` calls) are registered from the start.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable
from typing import Any

from .._tensor import Tensor
from .._torch_function import handle_torch_function, has_torch_function

__all__ = ["OpNamespace", "OpOverload", "OpOverloadPacket", "REGISTERED"]


def _enter_range(name: str, args: str | None = None) -> Any:
    from ..autograd.profiler import enter_range  # (the profiler loads when first used)

    return enter_range(name, args)


def _exit_range(handle: Any) -> None:
    from ..autograd.profiler import exit_range

    exit_range(handle)


def _aten_slice(
    input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    """``aten::slice``: ``input[start:end:step]`` along ``dim`` (a view)."""
    return input[(slice(None),) * (dim % max(input.dim(), 1)) + (slice(start, end, step),)]


def _aten_index(input: Tensor, indices: list) -> Tensor:
    """``aten::index``: ``input`` indexed by one tensor (or None, all) per leading dim."""
    return input[tuple(slice(None) if i is None else i for i in indices)]


#: operators registered by ``torch.library`` (and the profiler's, and ATen's indexing
#: steps that disttorch has no Tensor method for) under their qualified name ``"ns::op"``
REGISTERED: dict[str, Callable] = {
    "aten::slice": _aten_slice,
    "aten::index": _aten_index,
    "profiler::_record_function_enter": _enter_range,
    "profiler::_record_function_enter_new": _enter_range,
    "profiler::_record_function_exit": _exit_range,
}


class OpOverload:
    """One overload of an operator (``aten.add.Tensor``); calling it runs the op."""

    def __init__(self, packet: OpOverloadPacket, overload: str) -> None:
        self._packet, self._overloadname = packet, overload
        self.__name__ = f"{packet._name}.{overload}"

    def name(self) -> str:
        return f"{self._packet._namespace}::{self._packet._name}" + (
            "" if self._overloadname == "default" else f".{self._overloadname}"
        )

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        return self._packet

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._packet(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self._packet._namespace}.{self._packet._name}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"{self._packet._namespace}.{self._packet._name}.{self._overloadname}"


class OpOverloadPacket:
    """An operator with all its overloads (``aten.add``); ``.Tensor``, ``.default``, ...
    give one overload, and calling the packet runs the op."""

    def __init__(self, namespace: str, name: str, resolve: Callable[[str], Callable | None]) -> None:
        self._namespace, self._name, self._resolve = namespace, name, resolve
        self._overloads: dict[str, OpOverload] = {}
        self.__name__ = name

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        if overload not in self._overloads:
            self._overloads[overload] = OpOverload(self, overload)
        return self._overloads[overload]

    @property
    def _qualified_op_name(self) -> str:
        return f"{self._namespace}::{self._name}"

    def overloads(self) -> list[str]:
        """The overloads named so far."""
        return list(self._overloads)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        foreign = [
            a for a in (*args, *kwargs.values()) if not isinstance(a, Tensor) and has_torch_function((a,))
        ]
        if foreign:  # an fx proxy: the call is recorded, as PyTorch's operators dispatch it
            return handle_torch_function(self, foreign, *args, **kwargs)
        fn = self._resolve(self._name)
        if fn is None:
            raise NotImplementedError(
                f"{self._namespace}::{self._name} has no disttorch implementation (the operator can be "
                "named, e.g. as a dispatch-table key, but not run)"
            )
        out = fn(*args, **kwargs)
        if type(out) is not tuple and isinstance(out, tuple):
            return tuple(out)  # an operator returns a plain tuple (``torch.sort``'s is named)
        return out

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._namespace}.{self._name}')>"

    def __str__(self) -> str:
        return f"{self._namespace}.{self._name}"


class OpNamespace(types.ModuleType):
    """``torch.ops.<namespace>``: its operators by name (cached, so each is one object)."""

    def __init__(
        self,
        name: str,
        families: Iterable[types.ModuleType] = (),
        fallback: Callable[[str], Callable | None] | None = None,
    ) -> None:
        super().__init__(f"torch.ops.{name}")
        self.name = name
        self._families = list(families)
        self._fallback = fallback  # the operator of a name nothing above has: from a higher layer
        self._packets: dict[str, OpOverloadPacket] = {}

    def _function(self, op: str) -> Callable | None:
        if f"{self.name}::{op}" in REGISTERED:
            return REGISTERED[f"{self.name}::{op}"]
        method = getattr(Tensor, op, None)
        if callable(method):
            return method
        for family in self._families:
            fn = getattr(family, op, None)
            if callable(fn) and not isinstance(fn, type):
                return fn
        return None if self._fallback is None else self._fallback(op)

    def __getattr__(self, op: str) -> OpOverloadPacket:
        if op.startswith("__") or not (self._families or f"{self.name}::{op}" in REGISTERED):
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op}'")
        if op not in self._packets:
            self._packets[op] = OpOverloadPacket(self.name, op, self._function)
        return self._packets[op]

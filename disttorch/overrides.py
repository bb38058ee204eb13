"""``torch.overrides``: the helpers of the ``__torch_function__`` protocol for types that
stand in for tensors. ``has_torch_function`` finds arguments whose type defines
``__torch_function__``; ``handle_torch_function`` dispatches a call to them, in PyTorch's
order (subclasses before their bases, otherwise left to right). disttorch's functions and
Tensor methods call the protocol once a program has such a type (see
``disttorch._function_dispatch``); a library's functions can, with these helpers.
``TorchFunctionMode`` does see the calls user code makes while it is entered.
"""

from __future__ import annotations

import functools
import inspect
import threading
import types
from collections.abc import Callable, Iterable
from typing import Any

from ._public_name import defined_in
from ._tensor import Tensor
from ._torch_function import (
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)

__all__ = [
    "TorchFunctionMode",
    "get_default_nowrap_functions",
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
]


def is_tensor_like(inp: Any) -> bool:
    """True for a Tensor or an object whose type defines ``__torch_function__``."""
    return isinstance(inp, Tensor) or hasattr(type(inp), "__torch_function__")


def get_default_nowrap_functions() -> set[Callable]:
    """The reads ``Tensor.__torch_function__`` returns as they are, never as the subclass:
    ``_base``, ``grad`` and ``_grad``."""
    return {Tensor._base.__get__, Tensor.grad.__get__, Tensor._grad.__get__}


def get_ignored_functions() -> set[Callable]:
    """Public functions that cannot be overridden: none are listed here."""
    return set()


def get_overridable_functions() -> dict[Any, list[Callable]]:
    """The public functions of ``torch`` (this package) and the methods of ``Tensor``."""
    import disttorch

    funcs = [
        getattr(disttorch, n)
        for n in dir(disttorch)
        if not n.startswith("_")
        and callable(getattr(disttorch, n))
        and not isinstance(getattr(disttorch, n), type)
    ]
    methods = [
        getattr(Tensor, n) for n in dir(Tensor) if not n.startswith("_") and callable(getattr(Tensor, n))
    ]
    return {disttorch: funcs, Tensor: methods}


def get_testing_overrides() -> dict[Callable, Callable]:
    """Dummy overrides for testing: none are provided."""
    return {}


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether ``func`` is a method or property of ``Tensor``."""
    name = getattr(func, "__name__", None)
    return name is not None and getattr(Tensor, name, None) is func


class _ModeStack(threading.local):
    """The function modes entered in this thread, innermost last (PyTorch's are per thread too)."""

    def __init__(self) -> None:
        self.modes: list[TorchFunctionMode] = []


_STACK = _ModeStack()

# Tensor's own operators and protocols that dispatch (its public methods all do)
_TENSOR_DUNDERS = tuple(
    f"__{name}__"
    for name in (
        "add radd iadd sub rsub isub mul rmul imul matmul rmatmul imatmul truediv rtruediv itruediv "
        "floordiv rfloordiv ifloordiv mod rmod imod pow rpow ipow neg pos abs invert and rand iand "
        "or ror ior xor rxor ixor lshift rlshift ilshift rshift rrshift irshift eq ne lt le gt ge "
        "getitem setitem len iter reversed contains bool float int index complex"
    ).split()
)
# the namespaces whose functions dispatch (``torch.add``, ``F.relu``, ``nn.init.normal_``...)
_NAMESPACES = ("", ".nn.functional", ".nn.init", ".linalg", ".fft", ".special")


class _Patches:
    """While any thread has a mode entered, every dispatching function is replaced, where
    user code finds it (a namespace's attribute, a ``Tensor`` method), by a wrapper that
    hands the call to the thread's innermost mode. With no mode entered the originals are
    back, so ordinary runs pay nothing for the protocol."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entered = 0  # modes entered, all threads together
        # (owner, name, original, wrapper), found and wrapped once: entering is then only setattr
        self.swaps: list[tuple[Any, str, Any, Any]] | None = None

    def _find(self) -> list[tuple[Any, str, Any, Any]]:
        swaps, wrappers = [], {}
        for owner, name, bound, function in _dispatching_places():  # one wrapper per function
            wrapper = wrappers.setdefault(id(function), _dispatching(function, name))
            swaps.append(
                (owner, name, bound, staticmethod(wrapper) if isinstance(bound, staticmethod) else wrapper)
            )
        return swaps

    def enter(self) -> None:
        with self.lock:
            self.entered += 1
            if self.entered == 1:
                if self.swaps is None:
                    self.swaps = self._find()
                for owner, name, _, wrapper in self.swaps:
                    setattr(owner, name, wrapper)

    def exit(self) -> None:
        with self.lock:
            self.entered -= 1
            if self.entered == 0:
                for owner, name, original, _ in self.swaps:
                    setattr(owner, name, original)


_PATCHES = _Patches()


def _dispatching_places() -> Iterable[tuple[Any, str, Any, Callable]]:
    """(owner, name, what is bound there, the public function a mode sees called) for every
    function a mode sees: the namespaces' public functions, the same functions where the
    layers of ``nn`` bind them (``nn.Linear`` calls ``linear`` by name, a convolution keeps
    ``staticmethod(conv2d)``, its constructor calls ``empty``, and PyTorch's mode sees those
    calls; a layer may bind the function a public one wraps, such as a factory's form
    without ``out=``: the mode is then handed the public one), and Tensor's methods."""
    import importlib
    import sys

    public: dict[int, Callable] = {}  # id of a public function, or of one it wraps -> it
    for suffix in _NAMESPACES:
        module = importlib.import_module(__package__ + suffix)
        for name, value in list(vars(module).items()):
            if not name.startswith("_") and isinstance(value, types.FunctionType):
                inner = value
                while inner is not None:
                    public.setdefault(id(inner), value)
                    inner = getattr(inner, "__wrapped__", None)
                yield module, name, value, value
    layers = [m for n, m in list(sys.modules.items()) if n.startswith(__package__ + ".nn.") and m is not None]
    for module in layers:
        for name, value in list(vars(module).items()):
            if id(value) in public and isinstance(value, types.FunctionType):
                yield module, name, value, public[id(value)]
            elif isinstance(value, type) and defined_in(value, module.__name__):
                for attr, kept in list(vars(value).items()):  # ``_conv = staticmethod(conv2d)``
                    if isinstance(kept, staticmethod) and id(kept.__func__) in public:
                        yield value, attr, kept, public[id(kept.__func__)]
    for name in dir(Tensor):
        if name.startswith("_") and name not in _TENSOR_DUNDERS:
            continue
        value = inspect.getattr_static(Tensor, name)
        if isinstance(value, types.FunctionType):
            yield Tensor, name, value, value


def _dispatching(original: Callable, name: str) -> Callable:
    """``original``, handing each call to the innermost mode of the calling thread. That mode
    is taken off the stack while it handles the call, so the ``func(*args)`` it makes reaches
    the next mode out, or ``original`` itself, whose own inner calls then dispatch nowhere."""

    @functools.wraps(original)
    def public(*args: Any, **kwargs: Any) -> Any:
        modes = _STACK.modes
        if not modes:
            return original(*args, **kwargs)
        mode = modes.pop()
        try:
            return mode.__torch_function__(public, (), args, kwargs)
        finally:
            modes.append(mode)

    public.__name__ = name  # an operator bound from a lambda is still ``__add__``
    return public


class TorchFunctionMode:
    """A context manager whose ``__torch_function__(func, types, args, kwargs)`` is called for
    every torch function, ``torch.nn.functional``/``nn.init``/``linalg``/``fft``/``special``
    function and ``Tensor`` method or operator that user code calls inside it, in this
    thread; ``func`` is the function called (``func is torch.Tensor.__getitem__`` holds), and
    calling it inside the handler goes on to the next mode out, as in PyTorch.

    Differences from PyTorch: a function imported by name outside ``torch.nn`` before the
    mode was entered (``from torch import add``) and property reads (``x.shape``) do not
    dispatch, and an op's own inner calls never do (PyTorch's run in C++).
    """

    inner: TorchFunctionMode | None = None

    def __init__(self) -> None:
        pass

    def __torch_function__(
        self, func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        return func(*args, **(kwargs or {}))

    def __enter__(self) -> TorchFunctionMode:
        _PATCHES.enter()
        _STACK.modes.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        modes = _STACK.modes
        if self in modes:
            modes.remove(self)
            _PATCHES.exit()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        """Make a mode and enter it."""
        return cls(*args, **kwargs).__enter__()


def _get_current_function_mode_stack() -> list[TorchFunctionMode]:
    """The modes entered in this thread, innermost last."""
    return list(_STACK.modes)

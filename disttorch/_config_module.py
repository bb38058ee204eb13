"""Settings modules as PyTorch's (``torch._dynamo.config``, ``torch._inductor.config``):
``patch(...)`` changes settings for a ``with`` block or a decorated function's calls,
``get_config_copy()`` gives them as a dict, and an alias (``cache_size_limit``) reads and
writes the setting it stands for. As in PyTorch, a setting set or patched holds in the
thread (the ``contextvars`` context) that set it; other threads read their own, the
default until they set it (the settings of a namespace, ``triton.cudagraphs``, are the
process's). A name the module lacks is kept when set or patched (PyTorch raises for names it
does not have, but it has many more settings than are listed here); reading one raises
PyTorch's ``AttributeError``."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping
from contextvars import ContextVar
from types import FunctionType, MappingProxyType, ModuleType
from typing import Any

from ._public_name import package_name

__all__ = ["install_config_module"]

_UNSET = object()
_NONE_SET: Mapping[str, Any] = MappingProxyType({})  # (a context that set no setting)


class _ConfigModule(ModuleType):
    _settings: set[str]
    _aliases: dict[str, str]
    _defaults: dict[str, Any]
    _overrides: ContextVar[Mapping[str, Any]]  # set in this context (a dict never changed in place)

    def _missing(self, name: str) -> AttributeError:
        return AttributeError(f"{package_name()}.{self.__name__.partition('.')[2]}.{name} does not exist")

    def __getattr__(self, name: str) -> Any:  # (only for names the module's dict lacks: the settings)
        cls = type(self)
        name = cls._aliases.get(name, name)
        value = cls._overrides.get().get(name, _UNSET)
        if value is _UNSET:
            value = cls._defaults.get(name, _UNSET)
        if value is _UNSET:
            raise self._missing(name)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        name = cls._aliases.get(name, name)
        if name.startswith("_"):
            super().__setattr__(name, value)
            return
        cls._settings.add(name)
        cls._overrides.set({**cls._overrides.get(), name: value})

    def __delattr__(self, name: str) -> None:
        cls = type(self)
        name = cls._aliases.get(name, name)
        overrides = cls._overrides.get()
        if name.startswith("_") or name not in overrides:
            super().__delattr__(name)
            return
        cls._overrides.set({k: v for k, v in overrides.items() if k != name})

    def _resolve(self, dotted: str) -> tuple[Any, str]:
        """The object holding setting ``dotted`` (``"triton.cudagraphs"``) and its last name."""
        *path, last = dotted.split(".")
        owner: Any = self
        for part in path:
            owner = getattr(owner, part)
        return owner, type(self)._aliases.get(last, last) if owner is self else last

    def patch(self, arg1: str | dict | None = None, arg2: Any = None, **kwargs: Any) -> Any:
        """Settings changed while a ``with`` block, a decorated function's call or a decorated
        ``TestCase``'s tests run (see :class:`_Patch`):
        ``patch("name", value)``, ``patch({"name": value})`` or ``patch(name=value)``."""
        # PyTorch's rules and errors (a value of None reads as no value)
        if arg1 is None and arg2 is not None:
            raise AssertionError(
                "second positional argument is only valid when first argument is a key string"
            )
        if arg2 is not None and not isinstance(arg1, str):
            raise AssertionError("first argument must be a string when passing 2 positional args to patch")
        if arg1 is not None and arg2 is None and not isinstance(arg1, dict):
            raise AssertionError(
                "first argument must be a dict when passing a single positional arg to patch"
            )
        if arg1 is not None and kwargs:
            raise AssertionError("cannot pass both positional and keyword arguments to patch")
        changes = kwargs if arg1 is None else {arg1: arg2} if arg2 is not None else arg1
        return _Patch([(*self._resolve(name), value) for name, value in changes.items()])

    def get_config_copy(self) -> dict[str, Any]:
        """The settings in this thread (aliases left out), by name."""
        own = {**type(self)._defaults, **type(self)._overrides.get()}
        return {name: own[name] for name in sorted(type(self)._settings) if name in own}


class _Patch(contextlib.ContextDecorator):
    """Settings changed while a ``with`` block or a decorated function's call runs, or, on a
    ``unittest.TestCase`` class, from its ``setUpClass`` to its ``tearDownClass`` (as PyTorch's
    ``patch``); one object may be entered again, nested or after it was left."""

    def __init__(self, targets: list[tuple[Any, str, Any]]) -> None:
        self._targets = targets
        #: per entry not yet left in this context: the values the entry replaced
        self._before: ContextVar[tuple[list[tuple[Any, str, Any]], ...]] = ContextVar("before", default=())

    def __enter__(self) -> None:
        before = [(owner, name, getattr(owner, name, _UNSET)) for owner, name, _ in self._targets]
        self._before.set((*self._before.get(), before))
        for owner, name, value in self._targets:
            setattr(owner, name, value)

    def __exit__(self, *exc_info: Any) -> None:
        *rest, last = self._before.get()
        self._before.set(tuple(rest))
        for owner, name, value in reversed(last):
            if value is _UNSET:
                delattr(owner, name)
            else:
                setattr(owner, name, value)

    def __call__(self, func: Any) -> Any:
        unittest = sys.modules.get("unittest")  # (a TestCase means unittest is imported)
        if not (isinstance(func, type) and unittest is not None and issubclass(func, unittest.TestCase)):
            return super().__call__(func)
        patch = self

        class _Patched(func):  # type: ignore[misc, valid-type]
            @classmethod
            def setUpClass(cls) -> None:
                patch.__enter__()
                try:
                    super().setUpClass()
                except Exception:
                    patch.__exit__(None, None, None)
                    raise

            @classmethod
            def tearDownClass(cls) -> None:
                try:
                    super().tearDownClass()
                finally:
                    patch.__exit__(None, None, None)

        _Patched.__name__, _Patched.__qualname__ = func.__name__, func.__qualname__
        _Patched.__module__ = func.__module__
        return _Patched


def install_config_module(name: str, aliases: dict[str, str] | None = None) -> None:
    """Make module ``name`` a settings module: its settings are its public attributes now
    (not modules, classes or functions), their values the defaults; ``aliases`` maps names
    to the settings they stand for."""
    module = sys.modules[name]
    defaults = {
        key: value
        for key, value in vars(module).items()
        if not key.startswith("_") and not isinstance(value, (ModuleType, type, FunctionType))
    }
    for key in defaults:
        delattr(module, key)  # (read through ``__getattr__``: this thread's value, else the default)
    module.__class__ = type(
        "ConfigModule",
        (_ConfigModule,),
        {
            "_settings": set(defaults),
            "_aliases": dict(aliases or {}),
            "_defaults": defaults,
            "_overrides": ContextVar(f"{name}.overrides", default=_NONE_SET),
        },
    )

"""Settings modules as PyTorch's (``torch._dynamo.config``, ``torch._inductor.config``):
``patch(...)`` changes settings for a ``with`` block or a decorated function's calls,
``get_config_copy()`` gives them as a dict, and an alias (``cache_size_limit``) reads and
writes the setting it stands for. A name the module lacks is kept when set or patched (PyTorch
raises for names it does not have, but it has many more settings than are listed here);
reading one raises PyTorch's ``AttributeError``."""

from __future__ import annotations

import contextlib
import sys
from types import FunctionType, ModuleType
from typing import Any

from ._public_name import package_name

__all__ = ["install_config_module"]

_UNSET = object()


class _ConfigModule(ModuleType):
    _settings: set[str]
    _aliases: dict[str, str]

    def _missing(self, name: str) -> AttributeError:
        return AttributeError(f"{package_name()}.{self.__name__.partition('.')[2]}.{name} does not exist")

    def __getattr__(self, name: str) -> Any:  # (only for names the module lacks)
        target = type(self)._aliases.get(name) if name in type(self)._aliases else None
        if target is None:
            raise self._missing(name)
        return getattr(self, target)

    def __setattr__(self, name: str, value: Any) -> None:
        name = type(self)._aliases.get(name, name)
        if not name.startswith("_"):
            type(self)._settings.add(name)
        super().__setattr__(name, value)

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
        """The settings (aliases left out), by name."""
        own = vars(self)
        return {name: own[name] for name in sorted(type(self)._settings) if name in own}


class _Patch(contextlib.ContextDecorator):
    """Settings changed while a ``with`` block or a decorated function's call runs, or, on a
    ``unittest.TestCase`` class, from its ``setUpClass`` to its ``tearDownClass`` (as PyTorch's
    ``patch``); one object may be entered again, nested or after it was left."""

    def __init__(self, targets: list[tuple[Any, str, Any]]) -> None:
        self._targets = targets
        self._before: list[list[tuple[Any, str, Any]]] = []  # per entry not yet left

    def __enter__(self) -> None:
        self._before.append([(owner, name, getattr(owner, name, _UNSET)) for owner, name, _ in self._targets])
        for owner, name, value in self._targets:
            setattr(owner, name, value)

    def __exit__(self, *exc_info: Any) -> None:
        for owner, name, value in reversed(self._before.pop()):
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
    (not modules, classes or functions); ``aliases`` maps names to the settings they stand for."""
    module = sys.modules[name]
    settings = {
        key
        for key, value in vars(module).items()
        if not key.startswith("_") and not isinstance(value, (ModuleType, type, FunctionType))
    }
    module.__class__ = type(
        "ConfigModule", (_ConfigModule,), {"_settings": settings, "_aliases": dict(aliases or {})}
    )

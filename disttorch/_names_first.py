"""A package's names from one module, loaded on first use or before a submodule needs them.

``disttorch`` takes its names from ``_facade`` and ``disttorch.distributed`` from ``_api``.
Importing either package runs only its ``__init__``; the names load on first use (the
package's ``__getattr__`` calls :meth:`NamesFirst.load`) or, with a :class:`NamesFirst` on
``sys.meta_path``, just before the first import of a submodule that needs them, so the
submodules load in the order an eager package would give::

    import disttorch.nn           # NamesFirst.find_spec("disttorch.nn"): load _facade,
                                  # then the import system finds and runs nn as usual
    from disttorch._tensor import Tensor
                                  # _facade imported _tensor itself: hand that module over
                                  # (_Loaded) rather than run its file a second time

Standard library only: the launcher imports the packages without NumPy.
"""

import copy
import importlib
import importlib.abc
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from types import ModuleType


class NamesFirst:
    """A finder for ``sys.meta_path`` that loads ``module`` (copying its public names into
    the package's ``names``) before the first import of a submodule that ``needs_names``;
    it finds nothing itself, unless loading imported the very submodule asked for."""

    def __init__(
        self,
        names: dict,
        module: str,
        needs_names: Callable[[list[str]], bool],
        loading: Callable[[], AbstractContextManager] = nullcontext,
    ) -> None:
        """``names``: the package's ``globals()``; ``module``: the module holding the names;
        ``needs_names(parts)``: whether submodule ``<package>.<parts joined by dots>`` needs
        them; ``loading``: a context the import runs in."""
        self._names, self._module, self._needs_names, self._loading = names, module, needs_names, loading
        self._prefix = f"{names['__name__']}."

    def find_spec(self, name: str, path: object = None, target: object = None):
        """Load the names before ``name`` if it needs them (see the class)."""
        if not name.startswith(self._prefix) or not self._needs_names(name[len(self._prefix) :].split(".")):
            return None
        self.load()
        module = sys.modules.get(name)
        if getattr(module, "__spec__", None) is None:
            return None
        # the import system looked in sys.modules before asking: it would run the file again
        spec = copy.copy(module.__spec__)
        spec.loader = _Loaded(module)
        module.__spec__ = spec  # (what the import system loads from, once found)
        return spec

    def load(self) -> ModuleType:
        """The module holding the names, imported on the first call; its public names become
        the package's. While it runs, the thread running it gets it as it stands (the names
        so far) and any other thread waits for it to finish (the import lock)."""
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass  # removed already
        with self._loading():
            module = importlib.import_module(self._module)
        if not getattr(module.__spec__, "_initializing", False):
            for name, value in vars(module).items():
                if not name.startswith("__"):
                    self._names.setdefault(name, value)
        return module

    def install(self) -> "NamesFirst":
        """Put this finder first on ``sys.meta_path``; returns it."""
        sys.meta_path.insert(0, self)
        return self


class _Loaded(importlib.abc.Loader):
    """The loader of a submodule that is loaded already: hands it back as it is, then gives
    it back its own spec (the import system set the copy it was handed)."""

    def __init__(self, module: ModuleType) -> None:
        self._module, self._spec = module, module.__spec__

    def create_module(self, spec: object) -> ModuleType:
        return self._module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._spec

"""The ``import torch`` -> ``disttorch`` meta-path finder, standalone on purpose.

This file imports nothing from disttorch, so the ``.pth`` hook and the ``sitecustomize``
of :mod:`disttorch.as_torch` can load it by path at interpreter start-up without
importing NumPy or disttorch: disttorch is imported only when a program imports
``torch``. ``import torch.x`` returns the module ``disttorch.x`` itself (one module object
under two names, so ``sys.modules["torch"] is disttorch``); a ``torch.x`` with no
``disttorch.x`` raises ``ModuleNotFoundError: No module named 'torch.x'``.

Libraries ask who ``torch`` is before they use it (transformers, accelerate): under the alias
``torch.__version__`` and ``importlib.metadata.version("torch")`` answer the PyTorch release
whose API disttorch follows, with disttorch's own version as the local label
(``2.13.0+disttorch.0.1.0``). Without the alias nothing answers for ``torch``, so a real
PyTorch installed alongside is never shadowed. ``torchvision[.x]`` is ``disttorch.vision[.x]``
and answers as torchvision 0.28 (the release paired with PyTorch 2.13) the same way.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.metadata
import importlib.util
import os
import pathlib
import sys

ENV = "DISTTORCH_AS_TORCH"
_MARK = "_disttorch_as_torch_alias"
#: the PyTorch release whose API disttorch follows (the oracle its tests compare with)
PYTORCH_API_VERSION = "2.13.0"
_LABEL = "+disttorch."
#: the torchvision release paired with :data:`PYTORCH_API_VERSION` (``disttorch.vision`` follows it)
TORCHVISION_API_VERSION = "0.28.0"


def alias_version(own: str, api: str = PYTORCH_API_VERSION) -> str:
    """``torch.__version__`` under the alias, from disttorch's version ``own``:
    ``"2.13.0+disttorch.0.1.0"`` (``torchvision.__version__`` with ``api``
    :data:`TORCHVISION_API_VERSION`)."""
    return api + _LABEL + own.split(_LABEL)[-1]


def _disttorch() -> object:
    return sys.modules.get("disttorch") or importlib.import_module("disttorch")


#: the distributions the alias stands in for: name -> (the release it answers, its product name)
_DISTRIBUTIONS = {
    "torch": (PYTORCH_API_VERSION, "PyTorch"),
    "torchvision": (TORCHVISION_API_VERSION, "torchvision"),
}


class TorchDistribution(importlib.metadata.Distribution):
    """The ``torch`` (or ``torchvision``) distribution under the alias: its metadata names
    disttorch's files and the version :func:`alias_version` gives (nothing to install, so no
    ``RECORD``)."""

    def __init__(self, name: str = "torch") -> None:
        self._name = name

    def read_text(self, filename: str) -> str | None:
        if filename not in ("METADATA", "PKG-INFO"):
            return None
        api, product = _DISTRIBUTIONS[self._name]
        version = alias_version(str(_disttorch().__version__), api)
        return (
            f"Metadata-Version: 2.1\nName: {self._name}\n"
            f"Version: {version}\n"
            f"Summary: disttorch {version.split(_LABEL)[-1]} standing in for {product} "
            f"{api} (the 'import torch' alias)\n"
        )

    def locate_file(self, path: str | os.PathLike[str]) -> pathlib.Path:
        return pathlib.Path(_disttorch().__file__).parent.parent / path


def requested(environ: os._Environ[str] | dict[str, str] | None = None) -> bool:
    """True when ``DISTTORCH_AS_TORCH`` asks for the alias (set, and not ``0``/``false``/``no``/``off``)."""
    value = (os.environ if environ is None else environ).get(ENV, "").strip().lower()
    return value not in ("", "0", "false", "no", "off")


#: PyTorch's older homes of modules that moved, which it still imports from: ``torch.nn.x``
#: holds what ``torch.ao.nn.x`` does (the quantized and fused modules)
_MOVED = {f"torch.nn.{name}": f"torch.ao.nn.{name}" for name in ("quantized", "qat", "intrinsic")}


def _real_name(name: str) -> str | None:
    """The disttorch module the alias gives for ``name``: ``torch[.x]`` is ``disttorch[.x]``
    (a module PyTorch moved, at its new home), ``functorch[.x]`` (PyTorch's package merged
    into ``torch.func``) ``disttorch._functorch[.x]``, ``torchvision[.x]``
    ``disttorch.vision[.x]``; None for other names."""
    if name == "torch" or name.startswith("torch."):
        for old, new in _MOVED.items():
            if name == old or name.startswith(old + "."):
                name = new + name[len(old) :]
        return "disttorch" + name[5:]
    if name == "functorch" or name.startswith("functorch."):
        return "disttorch._functorch" + name[9:]
    if name == "torchvision" or name.startswith("torchvision."):
        return "disttorch.vision" + name[11:]
    return None


class TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Meta-path finder and loader mapping ``torch[.x]`` to the module ``disttorch[.x]``."""

    _disttorch_as_torch_alias = True

    def find_spec(self, name, path=None, target=None):
        if name.startswith("disttorch."):
            return self._publishing_spec(name, path, target)
        real = _real_name(name)
        if real is None:
            return None
        try:
            found = importlib.util.find_spec(real)
        except ModuleNotFoundError:
            return None
        if found is None:
            return None
        return importlib.util.spec_from_loader(
            name, self, is_package=found.submodule_search_locations is not None
        )

    def _publishing_spec(self, name, path, target):
        """The spec the other finders give ``disttorch.x``, its loader wrapped so the module's
        classes get their ``torch.`` paths once it has run (see :class:`_PublishingLoader`)."""
        for finder in sys.meta_path:
            find = None if getattr(finder, _MARK, False) else getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                if hasattr(spec.loader, "exec_module"):
                    spec.loader = _PublishingLoader(spec.loader)
                return spec
        return None

    def find_distributions(self, context=None):
        """``importlib.metadata`` finds the ``torch`` and ``torchvision`` distributions here
        (see the header)."""
        name = getattr(context, "name", None)
        for known in _DISTRIBUTIONS:
            if name is None or name.lower() == known:
                yield TorchDistribution(known)

    def create_module(self, spec):
        module = importlib.import_module(_real_name(spec.name))
        if spec.name == "torch":
            # PyTorch's functions always hand foreign arguments to __torch_function__;
            # disttorch's do once torch.fx is imported, which swaps them for twins. Under
            # the alias that happens now, before a library keeps ``torch.lt`` anywhere
            # (``{"min": torch.lt}``), so ``f is torch.lt`` holds for the whole program.
            importlib.import_module("disttorch.fx")
        if spec.name == "torch":
            from disttorch._public_name import publish_loaded

            publish_loaded()  # type(x) prints <class 'torch.Tensor'>, Linear's module torch.nn...
        if spec.name == "torch" and _LABEL not in str(module.__version__):
            from disttorch.torch_version import TorchVersion

            module.__version__ = TorchVersion(alias_version(module.__version__))
        spec.loader_state = module.__spec__  # the import system overwrites __spec__; put it back
        return module

    def get_code(self, fullname):
        """``python -m torch.x`` (runpy asks the loader for code to run as ``__main__``):
        the code of ``disttorch.x``."""
        real = importlib.util.find_spec(_real_name(fullname))
        return real.loader.get_code(real.name)

    def exec_module(self, module):
        """Nothing to run (the disttorch module ran when imported); keep its own ``__spec__``."""
        spec = module.__spec__
        if spec is not None and spec.loader_state is not None:
            module.__spec__ = spec.loader_state


class _PublishingLoader:
    """A ``disttorch.x`` module's own loader, which after running the module hands it to
    ``disttorch._public_name.publish`` while ``torch`` is disttorch (modules imported before
    that are published all at once when ``torch`` is first imported)."""

    def __init__(self, loader) -> None:
        self._loader = loader

    def __getattr__(self, name):  # get_source, get_code, get_resource_reader, ...
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        if sys.modules.get("torch") is sys.modules.get("disttorch") is not None:
            from disttorch._public_name import publish

            publish(module)


def installed() -> bool:
    """Whether the alias is on this interpreter's ``sys.meta_path``."""
    return any(getattr(f, _MARK, False) for f in sys.meta_path)


def install() -> None:
    """Put the alias first on ``sys.meta_path`` (idempotent).

    A real PyTorch imported before this call stays what ``torch`` names in this process,
    so that case is an error rather than a silent mix of two libraries.
    """
    if installed():
        return
    loaded = sys.modules.get("torch")
    if loaded is not None and getattr(loaded, "__name__", "") != "disttorch":
        raise ImportError(
            "the disttorch 'import torch' alias cannot be installed: a real PyTorch "
            f"({getattr(loaded, '__file__', '?')}) is already imported in this process"
        )
    sys.meta_path.insert(0, TorchAlias())

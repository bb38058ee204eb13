"""The package name reprs print: ``torch`` while disttorch stands in for PyTorch (the
``import torch`` alias, ``disttorch.as_torch``), ``disttorch`` otherwise. Under the alias a
program that prints ``x.dtype`` or ``x.shape``, or edits ``str(dtype)`` (``.replace("torch.",
"")``, as accelerate and transformers do), sees what it would see with PyTorch."""

from __future__ import annotations

import importlib
import sys
from types import FunctionType, ModuleType

__all__ = [
    "defined_in",
    "is_disttorch_class",
    "name_top_level_classes",
    "package_name",
    "private_module",
    "public_module",
    "publish",
    "publish_loaded",
]


def package_name() -> str:
    """``"torch"`` when ``sys.modules["torch"]`` is disttorch, else ``"disttorch"``."""
    return "torch" if sys.modules.get("torch") is sys.modules.get("disttorch") else "disttorch"


#: the classes PyTorch defines in ``torch`` itself (``type(x)`` prints ``<class 'torch.Tensor'>``)
TOP_LEVEL_CLASSES = ("Tensor", "Size", "device", "dtype")


def name_top_level_classes(package: str) -> None:
    """Make ``package`` (``"disttorch"``, or ``"torch"`` when the alias comes on) the
    ``__module__`` of :data:`TOP_LEVEL_CLASSES`, so their reprs name the package as PyTorch's
    do, not disttorch's private module."""
    top = sys.modules["disttorch"]
    for name in TOP_LEVEL_CLASSES:
        getattr(top, name).__module__ = package
    kinds = top.dtype.__subclasses__()  # float8 and quantized dtypes pickle as torch.<name>
    while kinds:  # (and the subclasses of those)
        kind = kinds.pop()
        kind.__module__ = package
        kinds += kind.__subclasses__()


#: private disttorch modules -> the module where PyTorch defines (and disttorch re-exports)
#: their classes: ``nn.CELU`` prints ``torch.nn.modules.activation.CELU`` under the alias
PYTORCH_HOMES = {
    "disttorch._layout": "disttorch",
    "disttorch._memory_format": "disttorch",
    "disttorch._qscheme": "disttorch",
    "disttorch._streams": "disttorch",
    "disttorch._type_info": "disttorch",
    "disttorch._random": "disttorch._C",
    "disttorch._storage": "disttorch.storage",
    "disttorch.autograd.function": "disttorch.autograd.graph",
    "disttorch.ao.quantization.histogram_observer": "disttorch.ao.quantization.observer",
    "disttorch.nn.modules.activation_extra": "disttorch.nn.modules.activation",
    "disttorch.nn.modules.attention": "disttorch.nn.modules.activation",
    "disttorch.nn.modules.loss_extra": "disttorch.nn.modules.loss",
    "disttorch.nn.modules.sync_batchnorm": "disttorch.nn.modules.batchnorm",
    "disttorch.optim.adafactor": "disttorch.optim",
    "disttorch.optim.muon": "disttorch.optim",
    "disttorch.distributed.base.errors": "disttorch.distributed",
    "disttorch.distributed.engine.process_group": "disttorch.distributed.distributed_c10d",
    "disttorch.distributed.engine.work": "disttorch.distributed.distributed_c10d",
    "disttorch.distributed.groups": "disttorch.distributed.distributed_c10d",
    "disttorch.distributed.p2p": "disttorch.distributed.distributed_c10d",
    "disttorch.distributed.reduce_ops": "disttorch.distributed.distributed_c10d",
    "disttorch.distributed.store.base": "disttorch.distributed.distributed_c10d",
    "disttorch.distributed.store.prefix_store": "disttorch.distributed.distributed_c10d",
}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def public_module(name: str) -> str:
    """``disttorch.x`` as PyTorch names it: ``torch.x``, and ``disttorch.vision.x``
    ``torchvision.x`` (other names unchanged)."""
    if _within(name, "disttorch.vision"):
        return "torchvision" + name[16:]
    return "torch" + name[9:] if _within(name, "disttorch") else name


def private_module(name: str) -> str:
    """The disttorch module a published name stands for: ``torch.x`` -> ``disttorch.x``,
    ``torchvision.x`` -> ``disttorch.vision.x``."""
    if _within(name, "torchvision"):
        return "disttorch.vision" + name[11:]
    return "disttorch" + name[5:] if _within(name, "torch") else name


def is_disttorch_class(cls: type) -> bool:
    """Whether disttorch defines ``cls``: its module is ``disttorch.x``, or ``torch.x`` once the
    alias published it (a user's subclass, PyTorch's own classes without the alias: no)."""
    top = cls.__module__.split(".", 1)[0]
    alias = sys.modules.get("torch") is sys.modules.get("disttorch")
    return top == "disttorch" or (top in ("torch", "torchvision") and alias)


def defined_in(cls: type, module_name: str) -> bool:
    """Whether ``cls`` was defined in the disttorch module ``module_name``, published or not."""
    return private_module(cls.__module__) == module_name


def publish(module: ModuleType) -> None:
    """Under the alias, give the classes of the disttorch module ``module`` PyTorch's paths, so
    ``type(model.fc)`` prints ``<class 'torch.nn.modules.linear.Linear'>`` and pickles name
    ``torch.`` paths (and the functions defined elsewhere and homed here, such as the public
    functions' dispatching twins: ``F.relu`` pickles as ``torch.nn.functional.relu``, and the
    functions of its ``__all__``: ``nn.init.kaiming_uniform_.__module__`` is
    ``"torch.nn.init"``, which lit-llama's init-skipping mode looks for); and register ``module`` under its ``torch.`` name too (``inspect`` and
    ``typing`` look a class's module up in ``sys.modules``). A class moves to its
    :data:`PYTORCH_HOMES` module when that module holds it (checked from either side, as
    either may finish loading first)."""
    name = module.__name__
    exported = set(getattr(module, "__all__", ()))
    for key, value in list(vars(module).items()):
        if (
            isinstance(value, FunctionType)
            and value.__module__ == name
            and (value.__globals__["__name__"] != name or key in exported)
        ):  # given this home (F.relu's twin) or a public function of it (nn.init.kaiming_uniform_,
            value.__module__ = public_module(name)  # which modes recognise by its module): torch.nn...
        if not isinstance(value, type):
            continue
        home = private_module(value.__module__)
        if home == name:
            target = PYTORCH_HOMES.get(name)
            holder = sys.modules.get(target) if target else None
            value.__module__ = public_module(target if getattr(holder, key, None) is value else name)
        elif PYTORCH_HOMES.get(home) == name:
            value.__module__ = public_module(name)
        elif home.startswith("disttorch.") and home not in sys.modules:  # homed by its own body in a
            value.__module__ = public_module(home)  # module not loaded yet (the compiler's errors)
    sys.modules.setdefault(public_module(name), module)
    if type(module) is ModuleType:
        module.__class__ = PublishedModule


class PublishedModule(ModuleType):
    """A disttorch module under the alias. It pickles by its ``torch.`` name, as an installed
    PyTorch's modules do: ``dill`` (``datasets``' fingerprints of a ``map`` function that
    uses ``torch``) pickles a module outside the interpreter's prefix and ``site-packages``,
    such as an editable install's, by value (its whole namespace) unless the module says
    how. With dill loaded the reduction is dill's own for an installed module, so a
    function's fingerprint is the one it has under PyTorch; plain ``pickle`` gets
    ``importlib.import_module`` (PyTorch's modules do not pickle there)."""

    def __reduce__(self) -> tuple:
        dill = sys.modules.get("dill._dill")
        importer = getattr(dill, "_import_module", None) or importlib.import_module
        return importer, (public_module(self.__name__),)


#: small namespaces of classes made elsewhere (``torch._C.Generator``, ``torch.return_types.max``,
#: ``torch.storage.UntypedStorage``), imported with the alias so that those classes have their
#: PyTorch paths before anyone asks
NAMESPACES = ("disttorch._C", "disttorch.return_types", "disttorch.storage")


def publish_loaded() -> None:
    """:func:`publish` every disttorch module imported so far (when the alias comes on)."""
    for name in NAMESPACES:
        importlib.import_module(name)
    for name, module in list(sys.modules.items()):
        if module is not None and (name == "disttorch" or name.startswith("disttorch.")):
            publish(module)
    name_top_level_classes("torch")  # the dtype subclasses (float8, quantized) too

"""disttorch: a PyTorch-shaped deep-learning stack on NumPy, with data-parallel training
across processes and machines over ZeroMQ.

``import disttorch as torch`` gives tensors with autograd (this package), ``nn``,
``optim``, ``utils.data`` and ``distributed``; ``disttorch-launch`` starts the ranks.

Importing the package runs only this file. Its names (``disttorch.Tensor``, ``disttorch.add``,
...) are defined by ``_facade`` on the first use of one of them (``__getattr__``), or before the
first import of a submodule that needs tensors (``_names_first``), so every submodule loads in
the same order as ever, while a program that needs only the standard-library modules
(``_STDLIB_ONLY``: the launcher's; ``distributed`` and its stores) starts without NumPy. Subpackages (``nn``, ``optim``,
``distributed``, ...) are imported on first use.
"""

import importlib as _importlib
import sys as _sys

from . import _names_first, _public_name
from .kernels.jit import fork_waits as _fork_waits  # (standard library only)

__version__ = "0.1.0"

#: submodules that import only the standard library: importing them defines no tensor names
#: (``as_torch``: the alias and the script runner every launched rank starts with)
_STDLIB_ONLY = frozenset(
    {
        "launcher",
        "as_torch",
        "_public_name",
        "_names_first",
        "_faults",
        "_error_file",
        "_fd_limit",
        "_mp_temp_dir",
    }
)

_LAZY = (
    "nn",
    "types",
    "optim",
    "utils",
    "distributed",
    "datasets",
    "viz",
    "cuda",
    "accelerator",
    "backends",
    "mps",
    "xpu",
    "mtia",
    "types",
    "version",
    "multiprocessing",
    "jit",
    "onnx",
    "testing",
    "as_torch",
    "distributions",
    "cpu",
    "profiler",
    "sparse",
    "linalg",
    "special",
    "fft",
    "func",
    "functional",
    "random",
    "overrides",
    "futures",
    "masked",
    "nested",
    "signal",
    "hub",
    "library",
    "export",
    "fx",
    "compiler",
    "return_types",
    "torch_version",
    "quasirandom",
    "_C",
    "_utils",
    "_tensor_str",
    "__config__",
    "storage",
    "_dynamo",
    "_inductor",
    "ao",
    "quantization",
    "numa",
)
#: other lazily resolved names: ``torch.<name>`` -> (module, attribute)
_LAZY_ATTRS = {
    "compile": ("compiler", "compile"),
    "ModuleDict": ("nn", "ModuleDict"),
    "ParameterDict": ("nn", "ParameterDict"),
    "GradScaler": ("amp", "GradScaler"),
    "vmap": ("func", "vmap"),
    "windows": ("signal", "windows"),
    "get_device_module": ("accelerator", "get_device_module"),
    "PyTorchFileReader": ("serialization.file_reader", "PyTorchFileReader"),
    "PyTorchFileWriter": ("serialization.file_writer", "PyTorchFileWriter"),
    "ScriptModule": ("jit", "ScriptModule"),
    "ScriptFunction": ("jit", "ScriptFunction"),
    "_standard_gamma": ("distributions.gamma", "_standard_gamma"),
    "_sample_dirichlet": ("distributions.dirichlet", "_sample_dirichlet"),
    "_segment_reduce": ("ops.segments", "_segment_reduce"),
    "_grouped_mm": ("ops.grouped_mm", "_grouped_mm"),
    "_softmax_backward_data": ("ops.softmax", "_softmax_backward_data"),
    "_convert_indices_from_coo_to_csr": ("ops.segments", "_convert_indices_from_coo_to_csr"),
    "_convert_indices_from_csr_to_coo": ("ops.segments", "_convert_indices_from_csr_to_coo"),
    "cond": ("_higher_order_ops", "cond"),
    "while_loop": ("_higher_order_ops", "while_loop"),
    "Future": ("futures", "Future"),
    "fork": ("jit", "fork"),
    "wait": ("jit", "wait"),
    **{name: ("_sym", name) for name in ("SymInt", "SymFloat", "SymBool", "sym_int", "sym_float")},
    **{name: ("_sym", name) for name in ("sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt", "sym_sum")},
    **{name: ("_build_info", name) for name in ("has_mkl", "has_openmp", "has_lapack", "has_spectral")},
    "compiled_with_cxx11_abi": ("_build_info", "compiled_with_cxx11_abi"),
}

#: PyTorch's deprecated build flags (``torch.has_mps``...): each warns and answers as the
#: function it names (module under the package, function)
_DEPRECATED_FLAGS = {
    "has_mps": ("backends.mps", "is_built"),
    "has_cuda": ("backends.cuda", "is_built"),
    "has_cudnn": ("backends.cudnn", "is_available"),
    "has_mkldnn": ("backends.mkldnn", "is_available"),
}


def _needs_no_tensors(parts: list[str]) -> bool:
    """Whether submodule ``disttorch.<parts>`` is one of :data:`_STDLIB_ONLY`, or
    ``distributed`` (whose ``__init__`` loads its floors on first use) or one of its
    light submodules (``distributed.LIGHT_SUBMODULES``: the stores, for the launcher)."""
    if parts[0] in _STDLIB_ONLY:
        return True
    if parts[0] != "distributed":
        return False
    if len(parts) == 1:
        return True
    light = getattr(_sys.modules.get(f"{__name__}.distributed"), "LIGHT_SUBMODULES", ())
    return parts[1] in light


_FACADE = _names_first.NamesFirst(
    globals(), f"{__name__}._facade", lambda parts: not _needs_no_tensors(parts), _fork_waits
).install()
_load_facade = _FACADE.load


def __getattr__(name: str):
    """The facade's names (loaded on first use, see the header); subpackages (``nn``,
    ``optim``, ``utils``, ``distributed``, ...) are imported on first use."""
    if (name in _STDLIB_ONLY and name not in _LAZY) or (
        name.startswith("__") and name != "__all__" and name not in _LAZY
    ):
        raise AttributeError(f"module '{_public_name.package_name()}' has no attribute '{name}'")
    if name == "torch":  # ``torch.torch is torch`` in PyTorch (transformers' UVDoc annotates with it)
        return _sys.modules[__name__]
    facade = _load_facade()
    if name in vars(facade):  # a name asked for while the facade runs (or just loaded)
        return vars(facade)[name]
    if name == "__all__" or getattr(facade.__spec__, "_initializing", False):
        # ``from disttorch import *`` takes the loaded names; while the facade runs, a name it
        # has not defined yet is missing (``from . import ops`` then imports the submodule)
        raise AttributeError(f"module '{_public_name.package_name()}' has no attribute '{name}'")
    if name in _DEPRECATED_FLAGS:
        import warnings

        module, function = _DEPRECATED_FLAGS[name]
        warnings.warn(
            f"'{name}' is deprecated, please use '{_public_name.package_name()}.{module}.{function}()'",
            stacklevel=2,
        )
        return getattr(_importlib.import_module(f".{module}", __name__), function)()

    if name in _LAZY:  # (a fork waits for a first import on another thread)
        with _fork_waits():
            return _importlib.import_module(f".{name}", __name__)
    if name in _LAZY_ATTRS:
        module, attr = _LAZY_ATTRS[name]
        with _fork_waits():
            return getattr(_importlib.import_module(f".{module}", __name__), attr)
    if name.startswith("_foreach_"):  # torch._foreach_add_(params, ...): ops over tensor lists
        from .ops import foreach

        if hasattr(foreach, name):
            return getattr(foreach, name)
    if name.endswith("_copy") and not name.startswith("_"):  # torch.expand_copy: a view's copy
        from .ops import view_copies

        try:
            return view_copies.resolve(name)
        except AttributeError:
            pass
    if not name.startswith("_"):  # torch.conv2d, torch.layer_norm, ...: nn.functional's ops
        from .nn.functional import torch_aliases

        try:
            return torch_aliases.resolve(name)
        except AttributeError:
            pass
    raise AttributeError(f"module '{_public_name.package_name()}' has no attribute '{name}'")


def __dir__() -> list:
    """Every name of the package, the subpackages not imported yet included."""
    _load_facade()
    return sorted({*globals(), *_LAZY, *_LAZY_ATTRS})

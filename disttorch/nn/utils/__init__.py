"""``disttorch.nn.utils``: gradient clipping, parameter/vector conversion, weight and
spectral normalisation, parametrizations, conv/linear + batch-norm fusion, ``skip_init``,
``stateless.functional_call``, the memory-format helpers and ``rnn`` (packed sequences).

``clip_grad``, ``convert_parameters`` and ``rnn`` load with the package: the layers use
them (``nn.LSTM`` takes a ``PackedSequence``). The tools that work on whole modules
(fusion, normalisation, parametrizations, ...) sit above ``nn.modules`` and load on first
use (PEP 562), so the layers below never import them.
"""
import importlib

from . import clip_grad, convert_parameters, rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

#: Names that load their module on first use: name -> submodule.
_ON_FIRST_USE = {
    "fuse_conv_bn_eval": "fusion", "fuse_conv_bn_weights": "fusion", "fuse_linear_bn_eval": "fusion",
    "fuse_linear_bn_weights": "fusion", "skip_init": "init",
    "convert_conv2d_weight_memory_format": "memory_format", "convert_conv3d_weight_memory_format": "memory_format",
    "spectral_norm": "spectral_norm", "remove_spectral_norm": "spectral_norm",
    "weight_norm": "weight_norm", "remove_weight_norm": "weight_norm",
}
_SUBMODULES = ("fusion", "init", "memory_format", "parametrizations", "parametrize", "stateless")

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", *_ON_FIRST_USE, *_SUBMODULES, "clip_grad",
           "convert_parameters", "rnn"]


def __getattr__(name: str):
    """The module-level tools on first use (PEP 562)."""
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _ON_FIRST_USE:
        value = getattr(importlib.import_module(f".{_ON_FIRST_USE[name]}", __name__), name)
        # ``weight_norm``/``spectral_norm`` name both a function and its module: importing the
        # module binds the module here, so bind the function over it, as PyTorch's package does.
        globals()[name] = value
        return value
    raise AttributeError(f"module 'disttorch.nn.utils' has no attribute '{name}'")

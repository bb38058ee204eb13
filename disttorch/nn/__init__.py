"""Neural-network building blocks: ``Module`` and layers, ``functional``, ``init``, ``utils``.

``parallel`` (DistributedDataParallel) sits above both ``nn`` and ``distributed`` and is
imported on first use, so ``import disttorch.nn`` does not load the distributed stack.
"""

from . import attention, common_types, functional, grad, init, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = [
    "Parameter",
    "Buffer",
    "UninitializedParameter",
    "UninitializedBuffer",
    "DataParallel",
    "functional",
    "init",
    "parallel",
    "utils",
    *_modules_all,
]


def __getattr__(name: str):
    """``nn.parallel`` and ``nn.DataParallel`` on first use (PEP 562), and PyTorch's older
    names of ``ao.nn``'s quantized and fused modules (``nn.quantized``, ``nn.qat``,
    ``nn.intrinsic``)."""
    import importlib

    if name in ("parallel", "DataParallel"):
        parallel = importlib.import_module(".parallel", __name__)
        return parallel if name == "parallel" else parallel.DataParallel
    if name in ("quantized", "qat", "intrinsic"):
        return importlib.import_module(f"disttorch.ao.nn.{name}")
    raise AttributeError(f"module 'disttorch.nn' has no attribute '{name}'")

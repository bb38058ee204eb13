"""Neural-network building blocks: ``Module`` and layers, ``functional``, ``init``, ``utils``."""
from . import common_types, functional, grad, init, parallel, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .parallel import DataParallel

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "DataParallel", "functional",
           "init", "parallel", "utils", *_modules_all]

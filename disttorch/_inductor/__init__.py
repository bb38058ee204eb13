"""``torch._inductor``: the name space of PyTorch's compiler back end. Programs import its
``config`` to tune compilation (``config.coordinate_descent_tuning = True``); with no compiler
here the settings are only kept."""

from . import config

__all__ = ["config"]

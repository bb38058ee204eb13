"""``disttorch.nn.functional``: stateless versions of the layers, one family per file."""

from . import _aten_ops  # noqa: F401  (registers the ATen operators that are functionals)
from .activation import *  # noqa: F401,F403
from .activation_extra import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .ctc import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .embedding_bags import *  # noqa: F401,F403
from .im2col import *  # noqa: F401,F403
from .interpolation import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .loss_extra import *  # noqa: F401,F403
from .norm_extra import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .normalize import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .pooling_extra import *  # noqa: F401,F403
from .sampling_grid import *  # noqa: F401,F403
from .shuffle import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403


def __getattr__(name: str):
    """``nn.functional.grad`` is the ``nn.grad`` module, as in PyTorch (on first use: it
    builds on this package)."""
    if name == "grad":
        import importlib

        return importlib.import_module("..grad", __name__)
    raise AttributeError(f"module 'disttorch.nn.functional' has no attribute '{name}'")

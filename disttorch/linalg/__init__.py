"""``disttorch.linalg``: PyTorch's ``torch.linalg`` on NumPy/LAPACK.

The functions are an op family, ``disttorch/ops/linalg_functions.py`` (see its docstring for
what is supported and how it differs from PyTorch); this package is their public namespace.
"""

from ..ops.linalg_functions import *  # noqa: F401,F403
from ..ops.linalg_functions import __all__  # noqa: F401
from ..ops.out_arg import accept_declared_out as _accept_declared_out

_accept_declared_out(globals(), "linalg_")  # out= writes into the given tensor, as PyTorch

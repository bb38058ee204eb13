"""``torch.linalg``: the public namespace.

The functions are op families like the others (``ops/linalg_api.py`` for the public
functions, ``ops/linalg_decomp.py`` for the decompositions' Functions with their backward
formulas, ``kernels/lu.py`` for the NumPy LU); this package is where users find them.
"""

from ..ops.linalg_api import *  # noqa: F401,F403
from ..ops.linalg_api import __all__  # noqa: F401

"""``torch.utils.benchmark``: time Python statements as PyTorch's benchmark utilities do.

:class:`Timer` runs a statement with ``timeit`` under a fixed thread count and returns a
:class:`Measurement` (per-run times, median, IQR, PyTorch's repr); :class:`Compare` lays
several out in one table; :class:`Fuzzer` draws random inputs as PyTorch's does. Only the Python language is timed (``Language.CPP`` and Callgrind
need a C++ toolchain and raise).
"""

from .common import Measurement, TaskSpec, select_unit, trim_sigfig, unit_to_english
from .compare import Compare
from .fuzzer import FuzzedParameter, FuzzedTensor, Fuzzer, ParameterAlias
from .timer import Language, Timer

__all__ = [
    "Compare",
    "FuzzedParameter",
    "FuzzedTensor",
    "Fuzzer",
    "Language",
    "Measurement",
    "ParameterAlias",
    "TaskSpec",
    "Timer",
    "select_unit",
    "trim_sigfig",
    "unit_to_english",
]
